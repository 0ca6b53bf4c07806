//! Names of the isolation layers, in the order they are reported.

pub(crate) const LAUNCHER: &str = "launcher";
pub(crate) const USER_NS: &str = "user-namespace";
pub(crate) const PID_NS: &str = "pid-namespace";
pub(crate) const MOUNT_NS: &str = "mount-namespace";
pub(crate) const NET_NS: &str = "network-namespace";
pub(crate) const IPC_NS: &str = "ipc-namespace";
pub(crate) const REAPER: &str = "descendant-cleanup";
pub(crate) const RLIMITS: &str = "resource-limits";
pub(crate) const PROCESSES: &str = "process-limit";
pub(crate) const JOB_UID: &str = "job-uid";
pub(crate) const CAPABILITIES: &str = "capabilities";
pub(crate) const NO_NEW_PRIVS: &str = "no-new-privs";
pub(crate) const LANDLOCK_FS: &str = "landlock-filesystem";
pub(crate) const LANDLOCK_NET: &str = "landlock-network";
pub(crate) const LANDLOCK_SCOPE: &str = "landlock-scope";
pub(crate) const SECCOMP: &str = "seccomp";
pub(crate) const ENVIRONMENT: &str = "environment";
