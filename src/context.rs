//! What every stage job may read while a campaign runs: the plan, the
//! cache, the compiler and the support tools (compiled on first use, so
//! `plan` and `status` never compile anything; they may run the
//! preprocessor to list a build's dependencies), the host fingerprint and
//! the progress display.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

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
    support_sources: OnceLock<Result<std::path::PathBuf, String>>,
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
    /// A build's key may be learnt by compiling (`run`): a unit with no
    /// remembered dependency list is compiled once, its object kept for the
    /// build, instead of being listed by the preprocessor first and
    /// compiled afterwards. `plan` and `status` never compile.
    pub compiles_to_key: bool,
    /// Values a stage derives from files once per command and reads
    /// several times (a build's manifest, for its stage, the KAT's key
    /// and the lock), by the name the stage gives them.
    memo: Mutex<HashMap<String, Arc<dyn Any + Send + Sync>>>,
}

impl<'a> Cx<'a> {
    /// The campaign's flag profiles as `inst` is built with them here: the
    /// implementation's own flags in the submitter profile, and
    /// `-march=native` as the build host resolves it.
    pub(crate) fn profiles_for(
        &self,
        inst: &crate::plan::Instance,
    ) -> Vec<crate::plan::FlagProfile> {
        let mut profiles = self.plan.profiles_for(inst);
        for p in &mut profiles {
            self.resolve_native(p);
        }
        profiles
    }

    /// The profile `name` as `inst` is built with it here.
    pub(crate) fn profile_for(
        &self,
        inst: &crate::plan::Instance,
        name: &str,
    ) -> Option<crate::plan::FlagProfile> {
        let mut p = self.plan.profile_for(inst, name)?;
        self.resolve_native(&mut p);
        Some(p)
    }

    fn resolve_native(&self, p: &mut crate::plan::FlagProfile) {
        if let Some(native) = self
            .compiler
            .native_flags
            .as_ref()
            .filter(|n| !n.is_empty())
        {
            p.cflags = crate::toolchain::native::substitute(&p.cflags, native);
        }
    }

    pub fn new(plan: &'a Plan, compiler: Compiler, remeasure: bool, quiet: bool) -> Cx<'a> {
        Cx {
            plan,
            cache: Cache::new(&plan.cache_dir),
            compiler,
            support: OnceLock::new(),
            support_sources: OnceLock::new(),
            host_fingerprint: None,
            remeasure,
            deferred_only: false,
            deferred_cpu: None,
            progress: Progress::new(quiet),
            compiles_to_key: false,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// `compute()` the first time `name` is asked for in this command, the
    /// same value afterwards (an error is not kept: it is computed again).
    pub(crate) fn memo<T: Clone + Send + Sync + 'static>(
        &self,
        name: String,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let known = self.memo.lock().ok().and_then(|m| m.get(&name).cloned());
        if let Some(v) = known.and_then(|v| v.downcast_ref::<T>().cloned()) {
            return Ok(v);
        }
        let v = compute()?;
        if let Ok(mut m) = self.memo.lock() {
            m.insert(name, Arc::new(v.clone()));
        }
        Ok(v)
    }

    /// The support tools, written out and compiled on first use.
    pub(crate) fn support(&self) -> Result<&Support> {
        self.support
            .get_or_init(|| {
                Support::prepare(&self.cache, &self.compiler).map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(|e| anyhow!("{e}"))
    }

    /// The support sources written out, nothing compiled (the adapters'
    /// include directory, for listing a build's dependencies).
    pub(crate) fn support_sources(&self) -> Result<&std::path::Path> {
        self.support_sources
            .get_or_init(|| {
                Support::sources(&self.cache, &self.compiler).map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map(|p| p.as_path())
            .map_err(|e| anyhow!("{e}"))
    }

    /// The version of the embedded support code (no compilation needed).
    pub(crate) fn support_version(&self) -> String {
        support::version()
    }

    /// The sandbox spec of a submission job running `program` (a support
    /// tool) in `job_dir`: directly, or under the system's emulator with its
    /// own copy of the tool (the job's uid may not reach the cache).
    pub(crate) fn submission_spec(
        &self,
        program: &std::path::Path,
        args: Vec<String>,
        job_dir: &std::path::Path,
    ) -> Result<crate::sandbox::Spec> {
        use anyhow::Context;
        let crate::plan::Runner::Emulator { command } = &self.plan.system_spec.runner else {
            return Ok(crate::sandbox::Spec::submission(program, args, job_dir));
        };
        let (emulator, options) = command.split_first().context("empty emulator command")?;
        let emulator = crate::toolchain::which(emulator).with_context(|| {
            format!(
                "the emulator `{emulator}` of system {} is not installed (e.g. apt-get install qemu-user)",
                self.plan.system
            )
        })?;
        let name = program.file_name().context("tool without a file name")?;
        let local = job_dir.join(name);
        std::fs::copy(program, &local)
            .with_context(|| format!("copying {} into the job directory", program.display()))?;
        let mut full: Vec<String> = options.to_vec();
        full.push(format!("./{}", name.to_string_lossy()));
        full.extend(args);
        Ok(crate::sandbox::Spec::submission(&emulator, full, job_dir))
    }

    /// Whether programs of this system run under an emulator (functional
    /// checks only: nothing is timed).
    pub(crate) fn emulated(&self) -> bool {
        self.plan.system_spec.emulated()
    }

    /// What the build helpers need.
    pub(crate) fn build_env(&self) -> Result<crate::toolchain::BuildEnv<'_>> {
        Ok(crate::toolchain::BuildEnv {
            compiler: &self.compiler,
            support_dir: self.support_sources()?,
            cache: &self.cache,
            project_root: &self.plan.project_root,
        })
    }
}
