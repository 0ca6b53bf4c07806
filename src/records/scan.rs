//! `scan/<id>/<label>.json`: what the static scan of one instance's own
//! objects and library found (stage `scan`), which findings the campaign
//! allows and why, and the status those give (which `pqbench check`
//! recomputes).

use serde::{Deserialize, Serialize};

/// What a finding is. Each class names code that could reach outside the
/// operation being measured: run before or after it, pick its own code at
/// load time, talk to the kernel or to Valgrind behind the harness's back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingClass {
    /// An entry of `.init_array`, `.preinit_array` or `.ctors` (a
    /// `constructor` attribute): code run when the library is loaded.
    Constructor,
    /// An entry of `.fini_array` or `.dtors`: code run at unload or exit.
    Destructor,
    /// An `STT_GNU_IFUNC` symbol: its resolver runs at load time.
    Ifunc,
    /// A reference to a watched libc function (`detail` names it).
    Call,
    /// A raw system call instruction (`syscall`, `sysenter`, `int 0x80`,
    /// `svc`).
    Syscall,
    /// A string naming `/proc/` in data.
    ProcPath,
    /// The Valgrind client-request instruction sequence.
    ClientRequest,
    /// A string in data that a library looks for to tell whether it runs
    /// under Valgrind: `LD_PRELOAD`, Valgrind's preload (`vgpreload`),
    /// `valgrind`.
    EnvProbe,
}

impl FindingClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingClass::Constructor => "constructor",
            FindingClass::Destructor => "destructor",
            FindingClass::Ifunc => "ifunc",
            FindingClass::Call => "call",
            FindingClass::Syscall => "syscall",
            FindingClass::ProcPath => "proc-path",
            FindingClass::ClientRequest => "client-request",
            FindingClass::EnvProbe => "env-probe",
        }
    }
}

impl std::fmt::Display for FindingClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding: its class, what it is precisely (the function called, the
/// instruction, the string), the symbol (function or data object) where
/// it sits and the file it was found in (a source's object by file name,
/// or `library`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Finding {
    pub class: FindingClass,
    pub detail: String,
    pub symbol: Option<String>,
    pub file: String,
    /// The campaign's reason when it allows the finding; None when it
    /// does not, which makes the instance suspicious.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<String>,
}

/// The scan's verdict on an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanStatus {
    /// No finding, or every finding allowed with a reason.
    Clean,
    /// A finding the campaign does not allow: the instance is measured,
    /// flagged on every page and left out of the summary's comparisons.
    Suspicious,
}

impl ScanStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ScanStatus::Clean => "clean",
            ScanStatus::Suspicious => "suspicious",
        }
    }

    /// The status `findings` give.
    pub(crate) fn of(findings: &[Finding]) -> ScanStatus {
        match findings.iter().any(|f| f.allowed.is_none()) {
            true => ScanStatus::Suspicious,
            false => ScanStatus::Clean,
        }
    }
}

impl std::fmt::Display for ScanStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanRecord {
    pub algorithm: String,
    pub label: String,
    pub status: ScanStatus,
    /// The submission's objects scanned, by source file.
    pub objects: Vec<String>,
    /// Whether the instance's library was scanned too.
    pub library: bool,
    /// Sorted.
    pub findings: Vec<Finding>,
}

impl super::folder::FolderRecord for ScanRecord {
    const DIR: &'static str = super::layout::SCAN;

    fn key(&self) -> super::folder::OpKey {
        (self.algorithm.clone(), self.label.clone(), String::new())
    }
}
