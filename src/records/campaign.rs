//! `campaign.json`: the run as a whole — system, start and end, the
//! environment at both ends, host checks, counter and planning settings.

use serde::{Deserialize, Serialize};

use crate::host::{Environment, HostCheck};
use crate::plan::{Limits, TimingSettings};
use crate::toolchain::Compiler;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignRecord {
    pub campaign: String,
    pub description: String,
    pub system: String,
    pub system_title: Option<String>,
    pub pqbench_version: String,
    pub start_utc: String,
    pub end_utc: String,
    pub environment_start: Environment,
    pub environment_end: Environment,
    pub compiler: Compiler,
    pub build_tool: String,
    pub flag_profiles: Vec<String>,
    pub cpus: Vec<usize>,
    pub host_checks: Vec<HostCheck>,
    pub host_require_fixed: bool,
    pub host_fingerprint: String,
    /// Counter named by the driver (e.g. `tsc`) and its measured rate.
    pub counter: Option<String>,
    pub counter_hz: Option<f64>,
    pub timing: TimingSettings,
    pub limits: Limits,
    pub kat_timeout_seconds: f64,
    pub profile_wraps: Vec<crate::plan::Wrap>,
    pub algorithms: Vec<String>,
}
