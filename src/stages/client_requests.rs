//! Valgrind client requests in a submission's own objects. Valgrind obeys
//! them wherever they are, so the `count` and `ct` stages, whose figures
//! Valgrind produces, cannot stand on an instance whose code holds one: its
//! records are `suspicious`, naming where the request sits.

use anyhow::Result;

use crate::engine::Job;
use crate::stages::build::BuildStage;

/// Where the instance's own code (its sources and components, not
/// pqbench's adapter) makes a Valgrind client request, in one line; `None`
/// when it makes none.
pub(crate) fn found(job: &Job) -> Result<Option<String>> {
    let Some(build) = job.prior.get::<BuildStage>() else {
        return Ok(None);
    };
    let mut sites = Vec::new();
    for attempt in build.attempts.iter().filter(|a| a.ok) {
        let (own, paths) = attempt.own_objects(&job.cx.cache);
        for r in crate::objscan::client_requests(&paths)? {
            let source = &own[r.object].source;
            let file = source.rsplit('/').next().unwrap_or(source);
            sites.push(match r.symbol {
                Some(f) => format!("{f} ({file})"),
                None => file.to_string(),
            });
        }
    }
    sites.sort();
    sites.dedup();
    Ok((!sites.is_empty()).then(|| {
        format!(
            "Valgrind client request in {}: the submission's code can change what Valgrind reports, so no figure of Valgrind's stands for it",
            sites.join(", ")
        )
    }))
}
