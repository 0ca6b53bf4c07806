//! The counters `pqb-driver` can time calls with (`counter.c`), and what
//! each one's figures mean. Whatever depends on which counter ran reads
//! this table, never the counter's name; a name the driver never reports
//! (a record from elsewhere, or edited) gets the `UNKNOWN` row, whose
//! meaning is stated here rather than left to each reader's default.

/// One counter and its capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counter {
    /// The name the driver reports (`meta counter=…`) and records keep.
    pub name: &'static str,
    /// Counts the core's own clock cycles. Otherwise its "cycles" are
    /// reference ticks at a constant rate (the TSC, the generic timer, a
    /// clock in nanoseconds), which the pages say.
    pub core_cycles: bool,
    /// Counts user-mode cycles of this thread only: it stops while the
    /// thread is off the CPU or in the kernel, so a trial's cycles over
    /// its seconds fall below the rate when the thread lost the CPU, and
    /// it leaves out kernel time the task-clock witness includes.
    pub user_only: bool,
}

const fn counter(name: &'static str, core_cycles: bool, user_only: bool) -> Counter {
    Counter {
        name,
        core_cycles,
        user_only,
    }
}

/// Every counter of `counter.c`, in its order of preference.
pub(crate) const COUNTERS: [Counter; 5] = [
    counter("perf-user-cycles", true, true),
    counter("tsc", false, false),
    counter("cntvct", false, false),
    counter("clock", false, false),
    counter("none", false, false),
];

/// A name no driver reports: read as a reference counter that keeps
/// counting (the stricter witness share, the pages' note that no hardware
/// cycle counter was used).
pub(crate) const UNKNOWN: Counter = counter("unknown", false, false);

/// The row of `name`; None when no counter was recorded.
pub(crate) fn of(name: Option<&str>) -> Option<Counter> {
    let name = name?;
    Some(
        COUNTERS
            .iter()
            .copied()
            .find(|c| c.name == name)
            .unwrap_or(UNKNOWN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_the_driver_names_has_its_row() {
        let c = include_str!("../support/c/counter.c");
        let named: Vec<&str> = c
            .lines()
            .filter_map(|l| l.trim().strip_prefix("c->name = \""))
            .filter_map(|l| l.split('"').next())
            .collect();
        assert_eq!(named.len(), COUNTERS.len(), "{named:?}");
        for n in named {
            assert_eq!(of(Some(n)).unwrap().name, n);
        }
        assert_eq!(of(Some("rdpmc")), Some(UNKNOWN));
        assert_eq!(of(None), None);
        let core: Vec<&str> = COUNTERS
            .iter()
            .filter(|c| c.core_cycles)
            .map(|c| c.name)
            .collect();
        assert_eq!(core, ["perf-user-cycles"]);
    }
}
