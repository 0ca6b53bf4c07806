//! The measuring host as recorded: its checks, its environment and the
//! isolation layers submission processes got on it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostCheck {
    pub cpu: usize,
    pub governor: Option<String>,
    /// Some(true) when turbo/boost is on.
    pub turbo: Option<bool>,
    /// Online SMT siblings of the measuring CPU.
    pub smt_siblings_online: Vec<usize>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub perf_event_paranoid: Option<i32>,
    pub cpu_allowed: bool,
    /// Every problem found, in words; empty means "host ready".
    pub problems: Vec<String>,
}

/// The environment recorded at the start and end of a campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub cpu_model: String,
    pub cpus_online: usize,
    pub max_mhz: Option<f64>,
    pub memory_mib: u64,
    pub os: String,
    pub kernel: String,
    pub virtualization: Option<String>,
    pub load_averages: [f64; 3],
    pub utc: String,
}

/// The layers a submission job gets on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerReport {
    pub layers: Vec<Layer>,
}

/// One isolation layer: whether it is active for the job, and what it does
/// or why it is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    pub name: String,
    pub active: bool,
    pub detail: String,
}
