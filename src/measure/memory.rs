//! What the memory stage found for one instance: the static size and, per
//! operation, the process proxies beside the operation's own stack and heap.

use serde::{Deserialize, Serialize};

use super::driver::ProcessRecord;
use crate::records::operation::MemoryFigures;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct OpMemory {
    pub op: String,
    /// The figures as the time stage's record publishes them; their
    /// `load_bytes` (the instance's) and `measured_by` (a lender's) are
    /// filled in there.
    #[serde(flatten)]
    pub figures: MemoryFigures,
    /// How far down the painted stack the kernel mapped pages for the
    /// operation (its page table, read through pagemap): what repainting
    /// the stack cannot undo. None without pagemap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_pages_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MemoryOutput {
    /// Σ MemSiz over the library's PT_LOAD segments.
    pub load_bytes: Option<u64>,
    pub ops: Vec<OpMemory>,
}

/// How far below the kernel's high-water mark an honest peak may lie, in
/// KiB: the driver reads VmHWM before it writes its results and exits, and
/// the kernel keeps RSS in per-CPU counters that it folds in batches (up to
/// 128 pages on a 64-CPU host), so the two readings of one process differ
/// by a few hundred KiB either way. On the demo the kernel's figure was 4 to
/// 152 KiB *below* the driver's in every process.
const SLACK_KIB: u64 = 512;

/// How far the job's copy of the launcher may have grown past the
/// measured copy's high-water mark before its exec, in KiB. The two copies
/// take the same path (the copy's exec fails at once) and read equal here;
/// the allowance is [`SLACK_KIB`]'s, for the same batched page counters.
const LAUNCHER_SLACK_KIB: u64 = SLACK_KIB;

/// How far the kernel's page view of the stack may reach below the lowest
/// byte that differs from the paint, in bytes: a read fault on the painted
/// stack (a private mapping of a memfd) maps up to the kernel's fault-around
/// window of 64 KiB, and the lowest touched page may hold its first
/// written byte anywhere.
const STACK_SLACK_BYTES: u64 = (64 + 4) << 10;

/// The kernel's figure of the stack when it disagrees with the paint, or
/// None: the lowest stack page the kernel mapped for the operation lies
/// further below the top than the lowest byte that no longer holds this
/// process's paint byte, by more than [`STACK_SLACK_BYTES`]. A library that
/// repaints the stack it used does that; so does honest code whose
/// compiler probes every page of a large frame (`-fstack-clash-protection`
/// writes each page without changing it). So it is no verdict: the pages
/// show the kernel's figure, with the painted one beside it.
pub(crate) fn stack_by_pages(stack_bytes: Option<u64>, pages_bytes: Option<u64>) -> Option<u64> {
    let (stack, pages) = (stack_bytes?, pages_bytes?);
    (pages > stack + STACK_SLACK_BYTES).then_some(pages)
}

/// `stack_by_pages` from the driver's `memory` line of `process`.
pub(crate) fn stack_pages_of(stack_bytes: Option<u64>, process: &ProcessRecord) -> Option<u64> {
    let pages = process
        .line("memory")
        .and_then(|l| l.u64("stack_pages_bytes"));
    stack_by_pages(stack_bytes, pages)
}

/// What the record says of a disagreement between the two stack views.
pub(crate) fn stack_note(stack: u64, pages: u64) -> String {
    format!(
        "the kernel mapped {pages} bytes of stack for the call, but only {stack} of them differ \
         from the paint (a repainted stack, or a compiler's stack probes): the kernel's figure stands"
    )
}

/// What memory faulted in during a call may hold beyond its stack (whose
/// pages fault once each, written first), twice its malloc peak (a heap
/// page first read maps the zero page and faults again when written) and
/// the library's image (each page of its code and data faults at most
/// once): glibc's and the loader's own first touches, and stack pages read
/// before they are written, in bytes. On the 141 operations of PQClean's 47
/// x86-64 instances the faults took at most 0.59 of the bound.
const FAULT_SLACK_BYTES: u64 = 64 << 10;

/// How many bytes the kernel faulted in for the call beyond what its
/// stack, its malloc peak and the library's image (`load_bytes`) explain,
/// or None: read from the driver's `memory` line of `process`, whose
/// `faults` are the kernel's count of minor page faults during the call
/// alone (after glibc handed its free heap pages back, so that reused heap
/// faults too). The malloc count misses memory taken around malloc:
/// glibc's internal entry points, an allocator of the library's own over
/// `mmap` or `brk`. None when a figure is missing or the heap was not
/// counted.
pub(crate) fn faults_beyond(
    load_bytes: Option<u64>,
    stack_bytes: Option<u64>,
    heap_peak_bytes: Option<u64>,
    process: &ProcessRecord,
) -> Option<u64> {
    let line = process.line("memory")?;
    let page = line.u64("page_bytes").filter(|p| *p > 0)?;
    let faulted = line.u64("faults")?.checked_mul(page)?;
    let stack = stack_bytes?.max(line.u64("stack_pages_bytes").unwrap_or(0));
    let round = |b: u64| b.div_ceil(page).saturating_mul(page);
    let explained =
        round(stack) + 2 * round(heap_peak_bytes?) + round(load_bytes?) + FAULT_SLACK_BYTES;
    (faulted > explained).then(|| faulted - explained)
}

/// What the record says of memory the kernel saw and malloc did not.
pub(crate) fn faults_note(beyond: u64) -> String {
    format!(
        "the kernel faulted in {beyond} bytes for the call beyond what its stack, its malloc peak \
         and the library's image explain, in two processes: memory taken around malloc \
         (an allocator of its own over mmap or brk, or glibc's internal entry points)"
    )
}

/// Why the peak RSS the driver reported cannot be true, or None: the
/// kernel's high-water mark of the same process (wait4's `ru_maxrss`, read
/// by the launcher, which the library cannot reach) may exceed the claim by
/// at most [`SLACK_KIB`] and a sixteenth. Memory a library moves out of the
/// measured process, into a child it waits for, lands in the kernel's
/// figure too (`ru_maxrss` covers reaped children). A kernel figure within
/// [`LAUNCHER_SLACK_KIB`] of the launcher's own share (the high-water mark
/// the job's forked copy of the launcher had at exec, which the kernel
/// carries across exec) may be that share alone and bounds nothing: a
/// small driver under a larger launcher (under an unoptimised pqbench the
/// kernel read 2.3 to 2.8 MiB over honest peaks of 1.6 to 1.8 MiB).
pub(crate) fn below_kernel(peak_rss_kib: Option<u64>, process: &ProcessRecord) -> Option<String> {
    let peak = peak_rss_kib?;
    let witness = &process.sandbox.cpu_witness;
    if witness.missing.as_deref() == Some(crate::records::process::WITHOUT_LAUNCHER) {
        return None;
    }
    let rusage = process.sandbox.rusage.as_ref()?;
    let kernel = rusage.max_rss_kib;
    if let Some(own) = rusage.launcher_rss_kib {
        if kernel <= own + LAUNCHER_SLACK_KIB {
            return None;
        }
    }
    let floor = kernel.saturating_sub(SLACK_KIB + kernel / 16);
    (peak < floor).then(|| {
        format!(
            "the driver reported a peak RSS of {peak} KiB, but the kernel's high-water mark \
             of the process (wait4 ru_maxrss) is {kernel} KiB"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::process::{Outcome, ProcessFacts, Rusage};

    /// A memory process whose kernel figure is `kernel` KiB, and the
    /// launcher's share `launcher`.
    fn measured(kernel: u64, launcher: Option<u64>) -> ProcessRecord {
        ProcessRecord {
            command: vec!["--mode".into(), "memory".into()],
            cpu: None,
            outcome: Outcome::Exited(0),
            wall_seconds: 0.1,
            lines: Vec::new(),
            stderr_tail: String::new(),
            sandbox: ProcessFacts {
                rusage: Some(Rusage {
                    user_seconds: 0.0,
                    system_seconds: 0.0,
                    max_rss_kib: kernel,
                    launcher_rss_kib: launcher,
                }),
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_kernel_figure_the_launcher_explains_bounds_nothing() {
        // An unoptimised launcher's 2,296 KiB over an honest 1,624.
        assert_eq!(below_kernel(Some(1624), &measured(2296, Some(2296))), None);
        // Within the allowance above the launcher's share: still its own.
        assert_eq!(below_kernel(Some(1624), &measured(2700, Some(2296))), None);
        // Without the launcher's share (a record made before), the same
        // kernel figure convicts, as it did.
        assert!(below_kernel(Some(1624), &measured(2296, None)).is_some());
        // Beyond the launcher's share the job reached it: memory kept out
        // of the claim is caught.
        let why = below_kernel(Some(1624), &measured(4096, Some(1684))).unwrap();
        assert!(
            why.contains("1624 KiB") && why.contains("4096 KiB"),
            "{why}"
        );
        // Within the slack of the claim: honest.
        assert_eq!(below_kernel(Some(1624), &measured(2200, Some(1684))), None);
    }
}
