//! Real executors for the executor tests, on 127.0.0.1 only: an OpenSSH
//! server with a generated host key and an authorized user key, and a
//! single-node Slurm cluster (munged, slurmctld, slurmd) with a generated
//! configuration. Each fixture lives in a temporary directory, on free
//! ports, and stops its daemons when dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Whether the fixtures can run here: root, and the daemons installed
/// (`.ci/run` installs openssh-server, slurm-wlm and munge).
pub fn available(programs: &[&str]) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        super::skip::not_applicable("the daemons' fixtures run as root only");
        return false;
    }
    super::skip::tools_or_skip(
        programs,
        "apt-get install openssh-server openssh-client slurm-wlm munge",
    )
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits for `ready` while every daemon of `children` still runs: a daemon
/// that exits has failed, however loaded the machine (no clock involved).
fn wait_until(what: &str, children: &mut [Child], mut ready: impl FnMut() -> bool) {
    while !ready() {
        for c in children.iter_mut() {
            let exited = c.try_wait().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(
                exited.is_none(),
                "{what} did not come up: a daemon exited ({exited:?})"
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn run(c: &mut Command) -> std::process::Output {
    c.output().unwrap_or_else(|e| panic!("running {c:?}: {e}"))
}

/// An sshd on 127.0.0.1 accepting the generated key for root.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    child: Child,
}

impl Sshd {
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new()
            .prefix("pqb-sshd-")
            .tempdir()
            .unwrap();
        let d = dir.path();
        for k in ["hostkey", "userkey"] {
            let out = run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(d.join(k)));
            assert!(out.status.success(), "ssh-keygen failed");
        }
        std::fs::copy(d.join("userkey.pub"), d.join("authorized_keys")).unwrap();
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {0}/hostkey\nAuthorizedKeysFile {0}/authorized_keys\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
             UsePAM no\nStrictModes no\nPidFile {0}/sshd.pid\n",
            d.display()
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        // sshd's privilege separation directory.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .arg("-D")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .arg("-E")
            .arg(d.join("log"))
            .stdin(Stdio::null())
            .spawn()
            .expect("starting sshd");
        let mut sshd = Sshd { dir, port, child };
        wait_until("sshd", std::slice::from_mut(&mut sshd.child), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        sshd
    }

    pub fn key(&self) -> PathBuf {
        self.dir.path().join("userkey")
    }

    /// A registry entry for a system whose shards run over this server.
    pub fn system(&self, id: &str, work_dir: &Path, cpus: &[usize]) -> String {
        format!(
            "[[system]]\nid = \"{id}\"\narch = \"{}\"\ncpus = {cpus:?}\n\n[system.executor]\nkind = \"ssh\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nidentity = \"{}\"\nwork-dir = \"{}\"\nssh-options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"]\n",
            std::env::consts::ARCH,
            self.port,
            self.key().display(),
            work_dir.display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A one-node Slurm cluster: munged, slurmctld and slurmd.
pub struct Slurm {
    pub dir: tempfile::TempDir,
    children: Vec<Child>,
}

impl Slurm {
    pub fn start() -> Slurm {
        let dir = tempfile::Builder::new()
            .prefix("pqb-slurm-")
            .tempdir()
            .unwrap();
        let d = dir.path();
        for sub in ["state", "spool", "log", "munge"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::fs::write(
            d.join("munge/key"),
            (0..1024).map(|i| (i * 7 % 251) as u8).collect::<Vec<u8>>(),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("munge/key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o700)).unwrap();
        let host = String::from_utf8(run(&mut Command::new("hostname")).stdout)
            .unwrap()
            .trim()
            .to_string();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (ctld, slurmd) = (free_port(), free_port());
        let conf = format!(
            "ClusterName=pqb\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n\
             SlurmctldPort={ctld}\nSlurmdPort={slurmd}\nAuthType=auth/munge\nAuthInfo=socket={0}/munge/sock\n\
             StateSaveLocation={0}/state\nSlurmdSpoolDir={0}/spool\nSlurmctldPidFile={0}/ctld.pid\n\
             SlurmdPidFile={0}/d.pid\nSlurmctldLogFile={0}/log/ctld.log\nSlurmdLogFile={0}/log/d.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/affinity\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\nMpiDefault=none\n\
             ReturnToService=2\nMinJobAge=600\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} CoresPerSocket={cpus} ThreadsPerCore=1 State=UNKNOWN\n\
             PartitionName=pqb Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            d.display()
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        let conf_env = ("SLURM_CONF", d.join("slurm.conf"));
        let m = d.join("munge");
        let munged = Command::new("munged")
            .args(["--foreground", "--force"])
            .arg(format!("--socket={}", m.join("sock").display()))
            .arg(format!("--key-file={}", m.join("key").display()))
            .arg(format!("--pid-file={}", m.join("pid").display()))
            .arg(format!("--log-file={}", m.join("log").display()))
            .arg(format!("--seed-file={}", m.join("seed").display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting munged");
        let mut s = Slurm {
            dir,
            children: vec![munged],
        };
        let sock = m.join("sock");
        wait_until("munged", &mut s.children, || sock.exists());
        for (program, args) in [("slurmctld", &["-D", "-i"][..]), ("slurmd", &["-D"][..])] {
            let child = Command::new(program)
                .args(args)
                .env(conf_env.0, &conf_env.1)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("starting {program}: {e}"));
            s.children.push(child);
        }
        wait_until("the Slurm node", &mut s.children, || {
            let out = Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env(conf_env.0, &conf_env.1)
                .output();
            out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        s
    }

    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A registry entry for a system whose shards run as a job array here.
    pub fn system(&self, id: &str, shared: &Path, shards: usize) -> String {
        format!(
            "[[system]]\nid = \"{id}\"\narch = \"{}\"\n\n[system.executor]\nkind = \"slurm\"\nshared-dir = \"{}\"\nshards = {shards}\npartition = \"pqb\"\ntime-limit = \"00:30:00\"\nenvironment = {{ SLURM_CONF = \"{}\" }}\n",
            std::env::consts::ARCH,
            shared.display(),
            self.conf().display()
        )
    }

    /// Runs a Slurm command against this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf());
        c
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
