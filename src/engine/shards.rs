//! Which measuring CPU each instance gets and in which pass it is
//! measured: whole algorithms stay on one CPU; the plan's deferred
//! instances go after every other one, or to a CPU of their own.

use std::collections::BTreeMap;

use crate::context::Cx;
use crate::plan::{Instance, Plan};

/// The measuring CPU of each instance (by plan order): whole algorithms
/// stay on one CPU, the largest algorithms first onto the least loaded one;
/// with `deferred_cpu`, the plan's deferred instances all go there.
pub fn cpu_assignment(
    plan: &Plan,
    cpus: &[usize],
    deferred_cpu: Option<usize>,
) -> Vec<Option<usize>> {
    let own_cpu = |i: &Instance| deferred_cpu.is_some() && plan.is_deferred(i);
    let (apart, shared): (Vec<usize>, Vec<usize>) =
        (0..plan.instances.len()).partition(|&i| own_cpu(&plan.instances[i]));
    let insts: Vec<Instance> = shared.iter().map(|&i| plan.instances[i].clone()).collect();
    let shards = shard_by_algorithm(&insts, cpus.len().max(1));
    let mut out = vec![None; plan.instances.len()];
    for (k, members) in shards.iter().enumerate() {
        for &j in members {
            out[shared[j]] = cpus.get(k).copied();
        }
    }
    for i in apart {
        out[i] = deferred_cpu;
    }
    out
}

/// The order instances go through the measuring stages: every instance
/// at once, or, when the plan defers some and they get no CPU of their own,
/// every other instance first and the deferred ones after them.
pub(super) fn passes(cx: &Cx) -> Vec<Vec<usize>> {
    let plan = cx.plan;
    let (deferred, others): (Vec<usize>, Vec<usize>) =
        (0..plan.instances.len()).partition(|&i| plan.is_deferred(&plan.instances[i]));
    if deferred.is_empty() || cx.deferred_cpu.is_some() || cx.deferred_only {
        return vec![(0..plan.instances.len()).collect()];
    }
    vec![others, deferred]
}

/// Splits instance indices into `n` shards, whole algorithms at a time.
pub(crate) fn shard_by_algorithm(instances: &[Instance], n: usize) -> Vec<Vec<usize>> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, inst) in instances.iter().enumerate() {
        groups.entry(inst.algorithm.as_str()).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    let mut shards = vec![Vec::new(); n.max(1)];
    for g in groups {
        let target = shards
            .iter_mut()
            .min_by_key(|s| s.len())
            .expect("at least one shard");
        target.extend(g);
    }
    for s in &mut shards {
        s.sort();
    }
    shards
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ApiFamily, Binding, Kind};

    fn inst(alg: &str, label: &str) -> Instance {
        Instance {
            algorithm: alg.into(),
            label: label.into(),
            implementation: "reference".into(),
            kind: Kind::Sign,
            api: ApiFamily::Ngcc,
            sources: vec![],
            include_dirs: vec![],
            defines: vec![],
            binding: Binding::Ngcc { headers: vec![] },
            cpu_features: vec![],
            libraries: vec![],
            arch: vec![],
            submitter_cflags: None,
            kat_records: 10,
            cmake: None,
            spec: Default::default(),
        }
    }

    #[test]
    fn shards_keep_algorithms_together_and_balance_load() {
        let insts = vec![
            inst("a", "1"),
            inst("a", "2"),
            inst("a", "3"),
            inst("b", "1"),
            inst("c", "1"),
            inst("c", "2"),
        ];
        let shards = shard_by_algorithm(&insts, 2);
        assert_eq!(shards.len(), 2);
        let all: Vec<usize> = shards.iter().flatten().copied().collect();
        assert_eq!(all.len(), 6, "every instance in exactly one shard");
        for alg in ["a", "b", "c"] {
            let homes: Vec<usize> = (0..2)
                .filter(|&s| shards[s].iter().any(|&i| insts[i].algorithm == alg))
                .collect();
            assert_eq!(homes.len(), 1, "{alg} split across shards");
        }
        assert_eq!(shards.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 3]);
        assert_eq!(
            shard_by_algorithm(&insts, 1),
            vec![(0..6).collect::<Vec<_>>()]
        );
    }
}
