//! Splitting a campaign into shards that finish together: each instance's
//! cost comes from earlier datasets (the wall time of its measuring
//! processes), an instance never measured gets a default, and instances go
//! longest first onto the least loaded shard (all operations of an
//! instance stay in one shard). Deterministic for equal inputs.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::records::operation::OperationRecord;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Shard {
    pub index: usize,
    /// Instance keys (`<id>/<label>`), in plan order.
    pub instances: Vec<String>,
    /// Σ expected seconds of its instances.
    pub cost_seconds: f64,
}

/// The campaign's dataset directories: this system's first, then the
/// others'.
fn campaign_datasets(plan: &Plan) -> Vec<std::path::PathBuf> {
    let mut dirs = vec![plan.output_dir.clone()];
    if let Some(campaign_dir) = plan.site_dir.parent() {
        dirs.extend(
            crate::records::dataset::dataset_dirs_in(campaign_dir)
                .unwrap_or_default()
                .into_iter()
                .filter(|d| d != &plan.output_dir),
        );
    }
    dirs
}

/// Seconds of the measuring processes per instance key, from the records
/// of every dataset of the campaign (this system's first); an instance no
/// dataset measured is absent.
pub(crate) fn prior_costs(plan: &Plan) -> BTreeMap<String, f64> {
    let mut costs = BTreeMap::new();
    for dir in campaign_datasets(plan) {
        for (key, secs) in dataset_costs(&dir) {
            costs.entry(key).or_insert(secs);
        }
    }
    costs
}

/// Seconds of the measuring processes of every instance of one dataset.
fn dataset_costs(dir: &Path) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    let files = crate::records::folder::json_files(&dir.join(crate::records::layout::RECORDS))
        .unwrap_or_default();
    for f in files {
        let Ok(r) = crate::fsutil::read_json::<OperationRecord>(&f) else {
            continue;
        };
        let mut secs: f64 = r.processes.iter().map(|p| p.wall_seconds).sum();
        if let Some(m) = &r.memory {
            secs += m.process.wall_seconds;
        }
        *out.entry(format!("{}/{}", r.algorithm, r.label))
            .or_insert(0.0) += secs;
    }
    out
}

/// Seconds every stage took for each instance in earlier runs of the
/// campaign, as the engine recorded them (this system's first); an
/// instance no run recorded is absent.
fn stage_times(plan: &Plan) -> BTreeMap<String, f64> {
    let dirs = campaign_datasets(plan);
    plan.instances
        .iter()
        .filter_map(|i| {
            let key = i.key();
            let secs = dirs.iter().find_map(|d| {
                let stages = crate::engine::recorded_seconds(d, &key);
                (!stages.is_empty()).then(|| stages.iter().map(|(_, s)| s).sum::<f64>())
            })?;
            Some((key, secs))
        })
        .collect()
}

/// Longest-processing-time-first over `n` shards. `items` are (key, cost)
/// in plan order; ties in cost keep plan order, ties in load the lowest
/// shard index, so the same inputs always give the same shards.
pub(crate) fn assign(items: &[(String, f64)], n: usize) -> Vec<Shard> {
    let n = n.max(1);
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| items[b].1.total_cmp(&items[a].1).then(a.cmp(&b)));
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut load = vec![0.0f64; n];
    for i in order {
        let target = (0..n)
            .min_by(|&x, &y| load[x].total_cmp(&load[y]).then(x.cmp(&y)))
            .expect("at least one shard");
        members[target].push(i);
        load[target] += items[i].1;
    }
    members
        .into_iter()
        .zip(load)
        .enumerate()
        .map(|(index, (mut m, cost_seconds))| {
            m.sort_unstable();
            Shard {
                index,
                instances: m.into_iter().map(|i| items[i].0.clone()).collect(),
                cost_seconds,
            }
        })
        .filter(|s| !s.instances.is_empty())
        .enumerate()
        .map(|(index, s)| Shard { index, ..s })
        .collect()
}

/// Where each instance's expected cost comes from, as counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Basis {
    /// Instances costed by the stage times earlier runs recorded.
    pub stage_times: usize,
    /// Instances costed by their measuring processes' time only, scaled by
    /// `process_factor`.
    pub process_times: usize,
    /// Σ stage times over Σ process times of the instances that have both
    /// (1 when none has): what a run spends beside the measuring processes.
    pub process_factor: f64,
    /// Instances no earlier run measured, costed at the default.
    pub unknown: usize,
}

/// The plan's instances with their expected cost, and its basis.
pub fn costed(plan: &Plan, default_seconds: f64) -> (Vec<(String, f64)>, Basis) {
    let keys: Vec<String> = plan.instances.iter().map(|i| i.key()).collect();
    calibrate(
        &keys,
        &stage_times(plan),
        &prior_costs(plan),
        default_seconds,
    )
}

/// Costs each key by its recorded stage times where a run recorded them;
/// by its measuring processes' time scaled by what the stage times show a
/// run spends beside those processes; else at `default_seconds`.
fn calibrate(
    keys: &[String],
    stages: &BTreeMap<String, f64>,
    processes: &BTreeMap<String, f64>,
    default_seconds: f64,
) -> (Vec<(String, f64)>, Basis) {
    let (mut s_sum, mut p_sum) = (0.0, 0.0);
    for (k, s) in stages {
        if let Some(p) = processes.get(k).filter(|p| **p > 0.0) {
            s_sum += s;
            p_sum += p;
        }
    }
    let factor = if p_sum > 0.0 { s_sum / p_sum } else { 1.0 };
    let mut basis = Basis {
        stage_times: 0,
        process_times: 0,
        process_factor: factor,
        unknown: 0,
    };
    let items = keys
        .iter()
        .map(|k| {
            let cost = if let Some(s) = stages.get(k) {
                basis.stage_times += 1;
                *s
            } else if let Some(p) = processes.get(k) {
                basis.process_times += 1;
                p * factor
            } else {
                basis.unknown += 1;
                default_seconds
            };
            (k.clone(), cost)
        })
        .collect();
    (items, basis)
}

/// What a campaign would take on `nodes` × `cores` measuring CPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub nodes: usize,
    pub cores: usize,
    pub shards: usize,
    pub instances: usize,
    /// Where the instances' costs come from.
    pub basis: Basis,
    pub default_seconds: f64,
    /// Σ of every instance's cost: the wall time on one core.
    pub total_seconds: f64,
    /// The longest shard: the expected wall time.
    pub wall_seconds: f64,
    pub longest_instance_seconds: f64,
}

pub fn estimate(
    items: &[(String, f64)],
    basis: Basis,
    default_seconds: f64,
    nodes: usize,
    cores: usize,
) -> Estimate {
    let shards = assign(items, nodes.max(1) * cores.max(1));
    Estimate {
        nodes,
        cores,
        shards: nodes.max(1) * cores.max(1),
        instances: items.len(),
        basis,
        default_seconds,
        total_seconds: items.iter().map(|(_, c)| c).sum(),
        wall_seconds: shards.iter().map(|s| s.cost_seconds).fold(0.0, f64::max),
        longest_instance_seconds: items.iter().map(|(_, c)| *c).fold(0.0, f64::max),
    }
}

impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::progress::duration_words as d;
        write!(
            f,
            "{} instances on {} node(s) × {} core(s) = {} shards: about {} of wall time ({} on one core; the longest instance takes {})",
            self.instances,
            self.nodes,
            self.cores,
            self.shards,
            d(self.wall_seconds),
            d(self.total_seconds),
            d(self.longest_instance_seconds)
        )?;
        let b = &self.basis;
        let mut basis = Vec::new();
        if b.stage_times > 0 {
            basis.push(format!(
                "{} instance(s) from the stage times earlier runs recorded",
                b.stage_times
            ));
        }
        if b.process_times > 0 {
            basis.push(format!(
                "{} from their measuring processes' time × {:.2} (what runs spent beside those processes)",
                b.process_times, b.process_factor
            ));
        }
        if b.unknown > 0 {
            basis.push(format!(
                "{} never measured, counted at {}",
                b.unknown,
                d(self.default_seconds)
            ));
        }
        write!(f, "\nbasis: {}", basis.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(costs: &[f64]) -> Vec<(String, f64)> {
        costs
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("a/{i}"), *c))
            .collect()
    }

    #[test]
    fn longest_first_balances_and_is_deterministic() {
        let it = items(&[10.0, 9.0, 8.0, 7.0, 6.0, 5.0]);
        let s = assign(&it, 2);
        // 10+7+6 = 23 and 9+8+5 = 22: LPT's assignment.
        assert_eq!(s[0].instances, ["a/0", "a/3", "a/4"]);
        assert_eq!(s[1].instances, ["a/1", "a/2", "a/5"]);
        assert_eq!((s[0].cost_seconds, s[1].cost_seconds), (23.0, 22.0));
        assert_eq!(assign(&it, 2), s);
        // More shards than instances: no empty shard.
        assert_eq!(assign(&items(&[1.0, 2.0]), 5).len(), 2);
    }

    #[test]
    fn the_estimate_is_the_longest_shard() {
        // 4 nodes × 2 cores = 8 shards over 10 instances of 100 s and one
        // of 500 s: the 500 s instance is alone, the others fill 7 shards
        // as 2+2+1+1+1+1+... so the wall time is 500 s.
        let mut c = vec![100.0; 10];
        c.push(500.0);
        let e = estimate(&items(&c), basis(), 60.0, 4, 2);
        assert_eq!(e.shards, 8);
        assert_eq!(e.total_seconds, 1500.0);
        assert_eq!(e.wall_seconds, 500.0);
        assert_eq!(e.longest_instance_seconds, 500.0);
        // On one core it is the sum.
        assert_eq!(
            estimate(&items(&c), basis(), 60.0, 1, 1).wall_seconds,
            1500.0
        );
        // 2 cores: 500 → shard 0; five 100s fill shard 1 to 500; the other
        // five alternate, ties to the lower index: 800 and 700.
        let two = estimate(&items(&c), basis(), 60.0, 1, 2);
        assert_eq!(two.wall_seconds, 800.0);
    }

    fn basis() -> Basis {
        Basis {
            stage_times: 0,
            process_times: 0,
            process_factor: 1.0,
            unknown: 0,
        }
    }

    fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn recorded_stage_times_calibrate_the_instances_known_by_their_processes_only() {
        let keys: Vec<String> = ["a/1", "a/2", "b/1", "c/1"].map(String::from).to_vec();
        // a/1 and a/2 ran whole stages: 30 s and 50 s, of which their
        // measuring processes were 10 s and 30 s: runs spend twice the
        // processes' time. b/1 is known by its processes only (5 s); c/1
        // by nothing.
        let stages = map(&[("a/1", 30.0), ("a/2", 50.0)]);
        let processes = map(&[("a/1", 10.0), ("a/2", 30.0), ("b/1", 5.0)]);
        let (items, b) = calibrate(&keys, &stages, &processes, 60.0);
        assert_eq!(
            items.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
            [30.0, 50.0, 10.0, 60.0]
        );
        assert_eq!((b.stage_times, b.process_times, b.unknown), (2, 1, 1));
        assert_eq!(b.process_factor, 2.0);
        let e = estimate(&items, b, 60.0, 1, 2);
        let text = e.to_string();
        assert!(
            text.ends_with(
                "basis: 2 instance(s) from the stage times earlier runs recorded; \
                 1 from their measuring processes' time × 2.00 (what runs spent beside \
                 those processes); 1 never measured, counted at 60 s"
            ),
            "{text}"
        );
    }

    #[test]
    fn without_stage_times_the_processes_time_stands_as_it_is() {
        let keys: Vec<String> = vec!["a/1".into()];
        let (items, b) = calibrate(&keys, &BTreeMap::new(), &map(&[("a/1", 7.0)]), 60.0);
        assert_eq!(items[0].1, 7.0);
        assert_eq!(b.process_factor, 1.0);
    }
}
