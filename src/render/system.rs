//! Per-system pages: the summary (one table and chart per kind) and the
//! method page, generated from `campaign.json` and `build.json` so it always
//! describes the run it sits beside.

use crate::format;
use crate::kinds::{Kind, Summary};
use crate::measure::timing::LOST_CPU_SHARE;
use crate::records::campaign::{AlgorithmInfo, CampaignRecord};
use crate::records::kat::KatStatus as Status;
use crate::records::measure::OpStatus;
use crate::records::operation::OperationRecord;

use super::chart;
use super::model::*;
use super::presenters::{self, Presenters};
use super::rows::{disturbance, issues_for, DISTURBED_MEAN_OVER_MEDIAN};
use super::{crumb, Systems};
use crate::records::dataset::Dataset;

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub(crate) fn summary(ds: &Dataset, systems: &Systems, stages: Presenters) -> SummaryPage {
    let system = ds.system().to_string();
    let mut tables: Vec<SummaryTable> = Kind::ALL
        .into_iter()
        .filter_map(|kind| kind_table(ds, kind, &system, stages))
        .collect();
    tables.extend(super::kinds::summary_tables(ds, &system, stages));
    SummaryPage {
        functional_only: functional_only(ds),
        unfixed: unfixed(ds),
        share_classes: share_classes(ds),
        crumb: crumb(systems, &system, Some("summary"), |o| {
            Some(format!("../{o}/summary"))
        }),
        title: format!("Performance summary — system {system}"),
        method: Link::page(format!("{system} method"), "method"),
        system,
        tables,
    }
}

/// The summary table and chart of a kind summarised by operation
/// (signatures, KEMs; none without instances of the kind).
fn kind_table(ds: &Dataset, kind: Kind, system: &str, stages: Presenters) -> Option<SummaryTable> {
    let Summary::Operations { heading, sizes } = kind.def().summary() else {
        // Their own sections: see `render::kinds`.
        return None;
    };
    let ops = kind.operations();
    let mut rows = Vec::new();
    let mut bars = Vec::new();
    // Instances never built here (another architecture's code, a CPU
    // feature the host lacks) have no figure: named once, under the table.
    let mut not_built = Vec::new();
    for a in ds.campaign.algorithms.iter().filter(|a| a.kind == kind) {
        for label in &a.labels {
            let build = ds.build_record(&a.id, label);
            if build.is_some_and(|b| b.kat_status == Status::Skipped) {
                not_built.push(format!("`{}/{label}`", a.id));
                continue;
            }
            let mut row = summary_row(ds, a, label, sizes, &mut bars);
            row.stage_cells = presenters::cells(stages, ds, &a.id, label, kind.operations());
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let note = (!not_built.is_empty()).then(|| {
        format!(
            "Not built on system {system} (written for another architecture, or needing a CPU feature it lacks; each algorithm's page says which): {}.",
            not_built.join(", ")
        )
    });
    Some(SummaryTable {
        stage_columns: presenters::settle_columns(stages, &mut rows),
        has_matrix: !ds.campaign.matrix.is_empty(),
        kind: kind.as_str().into(),
        heading: heading.into(),
        ops: ops.iter().map(|o| o.to_string()).collect(),
        size_columns: sizes.iter().map(|s| s.to_string()).collect(),
        rows,
        chart_svg: chart::svg(
            &format!("{heading} on {system}"),
            chart::HEADLINE,
            ops,
            &bars,
        ),
        chart_file: format!("summary-{}.svg", kind.as_str()),
        note,
    })
}

/// One instance's row; its timed operations add their bars to `bars`.
fn summary_row(
    ds: &Dataset,
    a: &AlgorithmInfo,
    label: &str,
    sizes: &[&str],
    bars: &mut Vec<chart::Bar>,
) -> SummaryRow {
    let ops = a.kind.operations();
    let mut notes = instance_notes(ds, a, label);
    // A suspicious instance's figures stay in its row, flagged, but its
    // bars leave the chart: the chart is the summary's comparison.
    let mut left_out = Vec::new();
    let chart = match ds.suspicious(&a.id, label) {
        true => &mut left_out,
        false => bars,
    };
    let cells = op_cells(ds, a, label, &mut notes, chart);
    let mut lenders: Vec<&str> = ops
        .iter()
        .filter_map(|op| ds.record(&a.id, label, op)?.measured_by.as_deref())
        .collect();
    lenders.dedup();
    for by in lenders {
        notes.push(format!("taken from campaign {by}"));
    }
    SummaryRow {
        algorithm: Link::page(a.id.clone(), a.id.clone()),
        name: a.name.clone(),
        label: label.to_string(),
        ops: cells,
        sizes: size_cells(ds, a, label, sizes),
        notes: notes.join("; "),
        stage_cells: Vec::new(),
        best: super::matrix::best(ds, a, label),
    }
}

/// What the notes column says before any operation: a failed KAT, a known
/// issue measured anyway, preliminary figures.
fn instance_notes(ds: &Dataset, a: &AlgorithmInfo, label: &str) -> Vec<String> {
    let mut notes = Vec::new();
    let build = ds.build_record(&a.id, label);
    if build.is_none_or(|b| b.kat_status != Status::Pass) {
        notes.push(format!("KAT {}", super::rows::kat_status_text(build)));
    }
    if issues_for(a, label).iter().any(|k| k.action == "measure") {
        notes.push("⚠ known issue".to_string());
    }
    if ds.suspicious(&a.id, label) {
        notes.push(format!("{}; left out of the chart", super::SUSPICIOUS_NOTE));
    }
    if ds
        .campaign
        .preliminary
        .contains(&format!("{}/{label}", a.id))
    {
        notes.push("preliminary (not yet measured by this run)".to_string());
    }
    notes
}

/// The mean-cycles cell of each operation (with the helper share when
/// profiled); untimed and disturbed operations are noted in `notes`.
fn op_cells(
    ds: &Dataset,
    a: &AlgorithmInfo,
    label: &str,
    notes: &mut Vec<String>,
    bars: &mut Vec<chart::Bar>,
) -> Vec<String> {
    let ops = a.kind.operations();
    let mut cells = Vec::new();
    let mut disturbed: Vec<String> = Vec::new();
    let mut unwitnessed: Vec<String> = Vec::new();
    for op in ops {
        let cell = match ds.record(&a.id, label, op) {
            None => "–".to_string(),
            Some(r) => match &r.statistics {
                None => {
                    notes.push(format!("{op} {}", r.status));
                    r.status.to_string()
                }
                Some(s) => {
                    if disturbance(r).is_some() {
                        disturbed.push(op.to_string());
                    }
                    // Figures the witness could not judge stay in the row,
                    // flagged, but not in the chart's comparison.
                    let mut left_out = Vec::new();
                    let bars = match r.status == OpStatus::Unwitnessed {
                        true => {
                            unwitnessed.push(op.to_string());
                            &mut left_out
                        }
                        false => &mut *bars,
                    };
                    bars.push(chart::Bar::of(
                        chart::HEADLINE,
                        format!("{label} {op}"),
                        s,
                        ops.iter().position(|o| o == op).unwrap_or(0),
                    ));
                    match ds.profile(&a.id, label, op).filter(|p| p.status.is_ok()) {
                        Some(p) => format!(
                            "{} ({})",
                            format::cycles(chart::HEADLINE.of(s).0),
                            format::percent(p.hash_share)
                        ),
                        None => format::cycles(chart::HEADLINE.of(s).0),
                    }
                }
            },
        };
        cells.push(cell);
    }
    if !disturbed.is_empty() {
        notes.push(format!("⚠ disturbed: {}", disturbed.join(", ")));
    }
    if !unwitnessed.is_empty() {
        notes.push(format!(
            "⚠ unwitnessed: {} (the CPU witness could not judge its claims; left out of the chart)",
            unwitnessed.join(", ")
        ));
    }
    cells
}

/// The size columns of one instance (`–` where `sizes.json` has no figure).
fn size_cells(ds: &Dataset, a: &AlgorithmInfo, label: &str, sizes: &[&str]) -> Vec<String> {
    let size_row = ds.sizes.as_ref().and_then(|s| {
        s.instances
            .iter()
            .find(|r| r.algorithm == a.id && r.label == label)
    });
    sizes
        .iter()
        .map(|c| {
            size_row
                .and_then(|r| r.figures.get(*c))
                .and_then(|f| f.shown)
                .map_or("–".to_string(), |v| v.to_string())
        })
        .collect()
}

/// The helper classes whose share the parentheses hold: every class but
/// the DRNG's; none when nothing was profiled (no cell has parentheses).
fn share_classes(ds: &Dataset) -> String {
    if ds
        .folder::<crate::records::analysis::ProfileRecord>()
        .is_empty()
    {
        return String::new();
    }
    let mut share_classes: Vec<String> = Vec::new();
    for a in &ds.campaign.algorithms {
        for c in a.helper_classes().into_iter().filter(|c| !c.name.is_drng()) {
            if !share_classes.contains(&c.title) {
                share_classes.push(c.title);
            }
        }
    }
    share_classes.join(", ")
}

/// For the first lines of a natively measured system's pages: the host was
/// not fixed, and what that means for its figures.
pub(crate) fn unfixed(ds: &Dataset) -> Option<String> {
    if functional_only(ds).is_some() {
        return None;
    }
    let mut problems: Vec<&str> = Vec::new();
    for p in ds.campaign.host_checks.iter().flat_map(|h| &h.problems) {
        if !problems.contains(&p.as_str()) {
            problems.push(p);
        }
    }
    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "Measured on a host that was not fixed ({}): figures vary between runs with frequency scaling and load; compare them as ratios within this system, not with other hosts.",
        problems.join("; ")
    ))
}

/// For an emulated system's pages: why no operation has a figure.
pub(crate) fn functional_only(ds: &Dataset) -> Option<String> {
    let spec = ds.campaign.system_spec.as_ref().filter(|s| s.emulated())?;
    let emulator = match &spec.runner {
        crate::plan::Runner::Emulator { command } => command.join(" "),
        crate::plan::Runner::Native => String::new(),
    };
    Some(format!(
        "System {} is an emulated {} machine (`{emulator}` on a {} host): every instance was built with the cross compiler and checked against its known-answer tests, and every operation ran, but nothing was timed: an emulator's cycles describe the emulator, not the hardware.",
        spec.id,
        spec.arch,
        ds.campaign.environment_start.cpu_model
    ))
}

/// The sandbox layers the run had, and what they do not stop.
fn isolation_bullets(c: &CampaignRecord) -> Vec<String> {
    let mut out = Vec::new();
    match &c.isolation {
        Some(r) => {
            for l in &r.layers {
                let state = if l.active { "active" } else { "not available" };
                out.push(format!("{}: {state} ({}).", l.name, l.detail));
            }
        }
        None => out.push("The isolation layers were not recorded in this run.".into()),
    }
    out.push("Results travel from pqbench's driver on a channel of their own; what the library prints is kept only as a capped tail and never becomes a figure or a verdict.".into());
    out.push("Code inside the measured process can still disturb its own measurement. Each trial process's claimed calls, timed seconds and cycles are checked against the CPU and wall time the kernel accounted to it; a trial that cannot be true is recorded as `implausible` and its figures are not used. Lies within those bounds are not detected.".into());
    out
}

/// What pqbench's own randomness adds to a NIST-API operation.
fn drbg_bullet(d: Option<&crate::measure::drbg_cost::DrbgCost>) -> String {
    let base = "NIST-API instances draw their randomness (`randombytes`) from pqbench's AES-256 CTR_DRBG, so its cost is inside every timed call that draws; NGCC instances use the submission's own DRNG, part of the algorithm.";
    let Some(d) = d else {
        return format!("{base} Its cost was not measured in this run.");
    };
    let draw = |bytes: u64| {
        d.draw(bytes).map_or("not measured".to_string(), |c| {
            format!(
                "{} cycles ({})",
                format::cycles(c.median_cycles),
                format::duration(c.median_seconds)
            )
        })
    };
    format!(
        "{base} On this host it uses the `{}` AES: a 32-byte draw costs {}, a 64-byte draw {} (median, {} counter).",
        d.implementation,
        draw(32),
        draw(64),
        d.counter
    )
}

/// Which instances were measured last, and which figures are preliminary.
fn deferral_bullet(c: &CampaignRecord) -> String {
    if c.deferred.is_empty() {
        return "No instance is deferred: instances are measured in plan order.".into();
    }
    let mut s = format!(
        "Deferred instances (`defer`), measured after every other instance (or on a CPU of their own): {}.",
        c.deferred.join(", ")
    );
    if !c.preliminary.is_empty() {
        s.push_str(&format!(
            " Not yet measured by this run, so preliminary on these pages: {}.",
            c.preliminary.join(", ")
        ));
    }
    s
}

/// Whose measurements the pages show.
fn sharing_bullet(c: &CampaignRecord) -> String {
    match &c.reuse_measurements_from {
        None => "Every measurement belongs to this campaign: another campaign's measurements of the same library are never taken, and `--remeasure` in another campaign changes none of these figures.".into(),
        Some(from) => format!("This campaign reuses the measurements of campaign `{from}` on this system (`reuse-measurements-from`) where that campaign holds one with the same inputs; the rows taken from it say so. A measurement this campaign made itself (when `{from}` had none, or with `--remeasure`) stays its own."),
    }
}

/// How many operations the pages flag `⚠ disturbed`, and why.
fn disturbed_bullet(ds: &Dataset) -> String {
    let timed: Vec<_> = ds
        .folder::<OperationRecord>()
        .values()
        .filter(|r| r.statistics.is_some())
        .collect();
    let flagged: Vec<_> = timed.iter().filter_map(|r| disturbance(r)).collect();
    let by_mean = flagged
        .iter()
        .filter(|d| d.mean_over_median.is_some())
        .count();
    let repeated = flagged.iter().filter(|d| d.repeated_trials > 0).count();
    format!(
        "An operation whose mean exceeds its median by more than {:.0} %, or whose trials were repeated after losing the CPU, is flagged ⚠ disturbed on its page and in the summary: {} of the {} timed operations here ({by_mean} by the mean, {repeated} with repeated trials).",
        (DISTURBED_MEAN_OVER_MEDIAN - 1.0) * 100.0,
        flagged.len(),
        timed.len(),
    )
}

pub(crate) fn method(ds: &Dataset, systems: &Systems, stages: Presenters) -> MethodPage {
    let c = &ds.campaign;
    let system = c.system.clone();
    let mut sections = vec![
        section("Measuring core and counter", core_bullets(c)),
        section("Host state", host_bullets(c)),
        section("Builds and KAT policy", build_bullets(c)),
        section("Seeding and inputs", seeding_bullets(c)),
        section("Planning", planning_bullets(c)),
        section("Statistics", statistics_bullets(ds)),
    ];
    sections.extend(presenters::method_sections(stages, ds));
    let kinds = super::kinds::method_bullets(c);
    if !kinds.is_empty() {
        sections.push(section("Key exchanges and hash functions", kinds));
    }
    let matrix = super::matrix::method_bullets(ds);
    if !matrix.is_empty() {
        sections.push(section(super::matrix::TITLE, matrix));
    }
    sections.push(section(
        "Isolation of submission code",
        isolation_bullets(c),
    ));
    MethodPage {
        crumb: crumb(systems, &system, Some("method"), |o| {
            Some(format!("../{o}/method"))
        }),
        title: format!("Measurement method — system {system}"),
        system,
        sections,
        flag_profiles: flag_rows(ds),
        limitations: limitations(ds, stages),
    }
}

fn section(title: &str, bullets: Vec<String>) -> MethodSection {
    MethodSection {
        title: title.into(),
        bullets,
    }
}

/// The measuring CPUs, the cycle counter and whose measurements these are.
fn core_bullets(c: &CampaignRecord) -> Vec<String> {
    let counter = match (&c.counter, c.counter_hz) {
        (Some(n), Some(hz)) => format!("{n} at {hz:.0} Hz, as measured by the driver"),
        (Some(n), None) => n.clone(),
        _ => "not recorded (no operation was timed)".into(),
    };
    let cpus: Vec<String> = c.cpus.iter().map(|c| c.to_string()).collect();
    vec![
        format!(
            "Measuring CPU(s): {}; never two measurements on one core.",
            cpus.join(", ")
        ),
        format!("Cycle counter: {counter}. Time: CLOCK_MONOTONIC_RAW seconds."),
        "Each trial runs in a fresh driver process pinned to the measuring CPU.".into(),
        sharing_bullet(c),
    ]
}

/// Each measuring CPU's state and problems, and whether a fixed host was
/// required.
fn host_bullets(c: &CampaignRecord) -> Vec<String> {
    let mut host = Vec::new();
    for h in &c.host_checks {
        let ghz = |khz: u64| format!("{:.2} GHz", khz as f64 / 1e6);
        let clock = match (h.min_khz, h.max_khz) {
            (Some(lo), Some(hi)) if lo == hi => format!("clock fixed at {}", ghz(lo)),
            (Some(lo), Some(hi)) => format!("clock {}–{}", ghz(lo), ghz(hi)),
            _ => "clock unknown".into(),
        };
        let smt = match h.smt_siblings_online.as_slice() {
            [] => "no SMT sibling online".to_string(),
            s => format!("SMT sibling(s) {s:?} online"),
        };
        host.push(format!(
            "CPU {}: governor {}, turbo {}, {smt}, {clock}, perf_event_paranoid {}, CPU allowed: {}",
            h.cpu,
            h.governor.as_deref().unwrap_or("unknown"),
            h.turbo.map_or("unknown", |t| if t { "on" } else { "off" }),
            h.perf_event_paranoid.map_or("unknown".into(), |p| p.to_string()),
            yes_no(h.cpu_allowed),
        ));
        host.extend(
            h.problems
                .iter()
                .map(|p| format!("Problem on CPU {}: {p}", h.cpu)),
        );
    }
    host.push(format!(
        "A fixed host was {}required for measuring.",
        if c.host_require_fixed { "" } else { "not " }
    ));
    host
}

fn build_bullets(c: &CampaignRecord) -> Vec<String> {
    let assembler = c.compiler.assembler.as_ref().map_or(String::new(), |a| {
        format!(
            " Plain assembly (.s files) is assembled by {} ({}).",
            a.command.join(" "),
            a.version
        )
    });
    let native = match c.compiler.native_flags.as_deref() {
        None => String::new(),
        Some([]) => {
            " `-march=native` could not be resolved by this compiler and was passed as written."
                .into()
        }
        Some(flags) => native_sentence(flags),
    };
    let mut bullets = vec![
        format!("Compiler: {} (target {}); build tool: {}.{assembler}{native}", c.compiler.version, c.compiler.target, c.build_tool),
        format!("Flag profiles, in order of preference: {}. An instance that does not build or pass its KAT under one profile is retried under the next.", c.flag_profiles.join(", ")),
        format!("Every library reproduces its known-answer tests before it is timed (digests in each algorithm's KAT manifest); KAT timeout {} per instance.", format::duration(c.kat_timeout_seconds)),
        "Statuses: PASS, MISMATCH, NOKAT, CRYPTOFAIL, OVERFLOW, LOADFAIL, TIMEOUT, CRASH. A known issue in the algorithm's TOML decides whether a failing instance is still timed (marked ⚠ with its cause) or excluded.".into(),
    ];
    bullets.extend(c.system_libraries.iter().map(system_library));
    bullets
}

/// A system library the instances link: part of what was measured.
fn system_library(l: &crate::records::campaign::SystemLibrary) -> String {
    let version = l
        .version
        .as_ref()
        .map_or(String::new(), |v| format!(", version {v} by its file name"));
    format!(
        "System library `-l{}` (linked by {}): `{}`{version}, sha256 `{}`. Its code runs inside the measured operations that call it.",
        l.name,
        l.algorithms.join(", "),
        l.file,
        l.sha256
    )
}

/// What `-march=native` was built as: the CPU, and how many more flags
/// (gcc's list runs to some ninety, too long for a line of the page;
/// `campaign.json` has it whole).
fn native_sentence(flags: &[String]) -> String {
    let (cpu, rest): (Vec<&String>, Vec<&String>) =
        flags.iter().partition(|f| f.starts_with("-march="));
    let cpu = cpu
        .first()
        .map_or("its CPU".to_string(), |f| format!("`{f}`"));
    match rest.len() {
        0 => format!(" `-march=native` was built as {cpu}, what it stands for on the build host."),
        n => format!(" `-march=native` was built as {cpu} and {n} more flags the compiler derives from the build host's CPU (features on or off, cache sizes, tuning), listed in full as `compiler.native_flags` in campaign.json."),
    }
}

fn seeding_bullets(c: &CampaignRecord) -> Vec<String> {
    vec![
        "The DRNG is seeded once per process with the bytes 00..2f; setup (key generation, one honest signature or encapsulation) precedes the timed calls. Where one key generation costs a trial or more (`share-keys`), one process makes a key pair and every process of the instance's later operations reads it instead.".into(),
        "Signature message: 64 bytes, msg[i] = (131·i + 64) mod 256. A failing signing call is retried inside the timed call (up to 64 attempts) and counted.".into(),
        drbg_bullet(c.drbg.as_ref()),
    ]
}

fn planning_bullets(c: &CampaignRecord) -> Vec<String> {
    let t = &c.timing;
    vec![
        format!("Trials: {} per operation, each in a fresh process, after {} (none where a call is as long as a trial: such a call is its own warm-up).", t.trials, format::counted(u64::from(t.warmup), "warm-up call", "warm-up calls")),
        format!("Iterations per trial: enough for a {} trial from a warm calibration, at least {} and at most {}; at least {} timed calls per operation where the budget of {} allows.", format::duration(t.trial_seconds), t.min_iterations, t.max_iterations, t.min_calls, format::duration(t.budget_seconds)),
        format!("A trial whose process ran on the CPU less than {share:.0} % of its wall time (or, with a cycle counter that stops while descheduled, whose cycle rate fell below {share:.0} % of the clock) lost the CPU: it is repeated (up to 3 attempts) and counted; once a trial has been kept without the CPU, the machine is taken as busy and the operation's next trials that lose it are kept at their first attempt, until one holds it again.", share = LOST_CPU_SHARE * 100.0),
        format!("Per-call samples kept: {}; process timeout {}.", yes_no(t.samples), format::duration(t.timeout_seconds)),
        deferral_bullet(c),
    ]
}

fn statistics_bullets(ds: &Dataset) -> Vec<String> {
    vec![
        "n = Σ calls; mean cycles = Σ cycles / n; mean time = Σ seconds / n; ops/s = n / Σ seconds; median trial = median of the per-trial mean times.".into(),
        format!("Median, P5/P95 (linear interpolation), CV and Tukey outliers use per-call samples when every trial kept them, else per-trial means; 95 % intervals are percentile bootstraps over {} resamples with a fixed seed, so `pqbench check` can recompute them.", crate::stats::BOOTSTRAP_RESAMPLES),
        "Charts show the median cycles per call of the tables they illustrate, with the 95 % interval of the median as the whisker.".into(),
        disturbed_bullet(ds),
    ]
}

fn flag_rows(ds: &Dataset) -> Vec<FlagRow> {
    ds.build
        .flag_profiles
        .iter()
        .map(|p| FlagRow {
            name: p.name.clone(),
            // Each implementation's own flags follow, as its TOML gives
            // them (and each instance's lock entry records the whole line).
            cflags: if p.submitter {
                format!(
                    "{} + the implementation's submitter-cflags",
                    p.cflags.join(" ")
                )
            } else {
                p.cflags.join(" ")
            },
            ldflags: p.ldflags.join(" "),
        })
        .collect()
}

/// What the figures cannot show on this host, and in general.
fn limitations(ds: &Dataset, stages: Presenters) -> Vec<String> {
    let c = &ds.campaign;
    let mut limitations = Vec::new();
    if let Some(v) = &c.environment_start.virtualization {
        limitations.push(format!("The host is a {v}: the hypervisor may steal time and hides hardware counters; figures are indicative."));
    }
    let name = c.counter.as_deref();
    if crate::records::counter::of(name).is_some_and(|k| !k.core_cycles) {
        let other = name.unwrap_or_default();
        limitations.push(format!("No hardware cycle counter was used ({other}): cycles are reference ticks at a constant rate, not core clock cycles."));
    }
    if c.host_checks.iter().any(|h| !h.fixed()) {
        limitations.push("The host was not fixed (see the problems above); timings may vary with frequency scaling.".into());
    }
    limitations.extend(presenters::limitations(stages, ds));
    limitations
}
