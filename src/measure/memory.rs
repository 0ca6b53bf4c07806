//! What the memory stage found for one instance: the static size and, per
//! operation, the process proxies beside the operation's own stack and heap.

use serde::{Deserialize, Serialize};

use super::driver::ProcessRecord;
use super::OpStatus;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct OpMemory {
    pub op: String,
    pub status: OpStatus,
    pub detail: Option<String>,
    pub baseline_rss_kib: Option<u64>,
    pub peak_rss_kib: Option<u64>,
    pub stack_bytes: Option<u64>,
    pub heap_peak_bytes: Option<u64>,
    pub heap_allocs: Option<u64>,
    pub process: ProcessRecord,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MemoryOutput {
    /// Σ MemSiz over the library's PT_LOAD segments.
    pub load_bytes: Option<u64>,
    pub ops: Vec<OpMemory>,
}
