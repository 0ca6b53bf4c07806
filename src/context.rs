//! What every stage job may read while a campaign runs: the plan, the
//! cache, the compiler and the support tools (compiled on first use, so
//! `plan` and `status` never compile anything), the host fingerprint and
//! the progress display.

use std::sync::OnceLock;

use anyhow::{anyhow, Result};

use crate::cache::Cache;
use crate::plan::Plan;
use crate::progress::Progress;
use crate::support::{self, Support};
use crate::toolchain::Compiler;

pub struct Cx<'a> {
    pub plan: &'a Plan,
    pub cache: Cache,
    pub compiler: Compiler,
    support: OnceLock<Result<Support, String>>,
    /// Host fingerprint for measurement keys (set before measuring).
    pub host_fingerprint: Option<String>,
    /// Measure again even when a stored measurement is fresh.
    pub remeasure: bool,
    /// Measure only the deferred instances (`--deferred-only`): the others
    /// keep their stored measurements and are never measured.
    pub deferred_only: bool,
    /// Measure the deferred instances on this CPU, beside the others'
    /// shards (`--deferred-cpu`), instead of after them.
    pub deferred_cpu: Option<usize>,
    pub progress: Progress,
}

impl<'a> Cx<'a> {
    pub fn new(plan: &'a Plan, compiler: Compiler, remeasure: bool, quiet: bool) -> Cx<'a> {
        Cx {
            plan,
            cache: Cache::new(&plan.cache_dir),
            compiler,
            support: OnceLock::new(),
            host_fingerprint: None,
            remeasure,
            deferred_only: false,
            deferred_cpu: None,
            progress: Progress::new(quiet),
        }
    }

    /// The support tools, written out and compiled on first use.
    pub fn support(&self) -> Result<&Support> {
        self.support
            .get_or_init(|| {
                Support::prepare(&self.cache, &self.compiler).map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(|e| anyhow!("{e}"))
    }

    /// The version of the embedded support code (no compilation needed).
    pub fn support_version(&self) -> String {
        support::version()
    }

    /// What the build helpers need.
    pub fn build_env(&self) -> Result<crate::toolchain::BuildEnv<'_>> {
        Ok(crate::toolchain::BuildEnv {
            compiler: &self.compiler,
            support: self.support()?,
            cache: &self.cache,
            project_root: &self.plan.project_root,
        })
    }
}
