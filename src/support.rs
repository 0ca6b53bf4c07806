//! The C support code embedded in the binary (adapters, KAT runner, timing
//! driver, DRBG, profiling wrappers), written out and compiled by pqbench
//! itself with the campaign's compiler, so the tools and the instances share
//! one compiler identity.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};

use crate::cache::Cache;
use crate::fsutil;
use crate::records::toolchain::Compiler;

macro_rules! support_files {
    ($($name:literal),* $(,)?) => {
        /// Every support file: (name, contents).
        pub const FILES: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("support/c/", $name)))),*
        ];
    };
}

support_files!(
    "pqb_entry.h",
    "pqb_kinds.h",
    "pqb_kinds.c",
    "pqb_seal.h",
    "aes256.h",
    "aes256.c",
    "ctr_drbg.h",
    "ctr_drbg.c",
    "drbg_tool.c",
    "adapter_ngcc.c",
    "adapter_nist.h",
    "adapter_nist.c",
    "adapter_nist_api.c",
    "kat_runner.h",
    "kat_runner.c",
    "kat_out.c",
    "kat_guard.c",
    "kat_sign.c",
    "kat_kem.c",
    "kat_formats.c",
    "counter.h",
    "counter.c",
    "driver.h",
    "driver.c",
    "driver_heap.c",
    "driver_out.c",
    "driver_ops.c",
    "driver_load.c",
    "driver_time.c",
    "driver_memory.c",
    "prof_wrap.h",
    "prof_runtime.c",
    "valgrind_hooks.h",
    "driver_vg.c",
    "ct_hooks.c",
    "adapter_ngcc_kinds.c",
    "adapter_kex_passes.c",
    "kat_kex.c",
    "kat_hash.c",
    "pqb_iccs.h",
    "iccs_crypthash.c",
    "driver_ext.h",
    "driver_kex.c",
    "driver_hash.c",
    "driver_inputs.c",
    "driver_trip.c",
    "driver_leak.c",
    "driver_settings.c",
    "driver_pool.c",
    "driver_keys.c",
);

/// sha256 over every support file: part of every build and measurement key.
pub(crate) fn version() -> String {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            let mut all = Vec::new();
            for (name, text) in FILES {
                all.extend_from_slice(name.as_bytes());
                all.push(0);
                all.extend_from_slice(text.as_bytes());
                all.push(0);
            }
            fsutil::sha256_hex(&all)
        })
        .clone()
}

/// The translation units of `pqb-kat`.
const KAT_RUNNER_SOURCES: &[&str] = &[
    "kat_runner.c",
    "kat_out.c",
    "kat_guard.c",
    "kat_sign.c",
    "kat_kem.c",
    "kat_kex.c",
    "kat_hash.c",
    "kat_formats.c",
    "pqb_kinds.c",
    "aes256.c",
    "ctr_drbg.c",
];

/// The translation units of `pqb-driver`: the dispatch (`driver.c`), its
/// shared parts and one file per mode or kind of operation (`driver.h`
/// says what they share).
const DRIVER_SOURCES: &[&str] = &[
    "driver.c",
    "driver_out.c",
    "driver_heap.c",
    "driver_ops.c",
    "driver_load.c",
    "driver_settings.c",
    "driver_inputs.c",
    "driver_time.c",
    "driver_memory.c",
    "driver_vg.c",
    "driver_hash.c",
    "driver_kex.c",
    "driver_trip.c",
    "driver_leak.c",
    "driver_pool.c",
    "driver_keys.c",
    "counter.c",
    "pqb_kinds.c",
];

/// One part of the support code that a stage's results depend on: the
/// sources it compiles and, through their `#include "…"` lines, what they
/// read. A stage keys its results by its parts' versions alone, so editing
/// the hash KAT runner does not re-time every signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// What an instance library links in: the adapters and their DRBG.
    Adapters,
    /// `pqb-kat`.
    KatRunner,
    /// `pqb-driver` (timing, memory, count and ct modes).
    Driver,
    /// The profiling runtime linked into profiled libraries.
    ProfileRuntime,
    /// The Valgrind hooks of the ct stage.
    CtHooks,
}

impl Part {
    /// The sources compiled for this part (their includes follow).
    fn roots(self) -> &'static [&'static str] {
        match self {
            Part::Adapters => &[
                "adapter_ngcc.c",
                "adapter_nist.c",
                "adapter_nist_api.c",
                "adapter_kex_passes.c",
                "iccs_crypthash.c",
                "aes256.c",
                "ctr_drbg.c",
            ],
            Part::KatRunner => KAT_RUNNER_SOURCES,
            Part::Driver => DRIVER_SOURCES,
            Part::ProfileRuntime => &["prof_runtime.c"],
            Part::CtHooks => &["ct_hooks.c"],
        }
    }

    /// The part's files: its roots and every support file they include,
    /// directly or not, in name order.
    fn files(self) -> std::collections::BTreeSet<&'static str> {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo: Vec<&str> = self.roots().to_vec();
        while let Some(name) = todo.pop() {
            let Some((name, text)) = FILES.iter().find(|(n, _)| *n == name) else {
                continue;
            };
            if seen.insert(*name) {
                todo.extend(local_includes(text));
            }
        }
        seen
    }

    /// sha256 over the part's files, names and contents; the files are
    /// compiled in, so it is computed once per process.
    pub(crate) fn version(self) -> String {
        static ADAPTERS: OnceLock<String> = OnceLock::new();
        static KAT_RUNNER: OnceLock<String> = OnceLock::new();
        static DRIVER: OnceLock<String> = OnceLock::new();
        static PROFILE_RUNTIME: OnceLock<String> = OnceLock::new();
        static CT_HOOKS: OnceLock<String> = OnceLock::new();
        let cell = match self {
            Part::Adapters => &ADAPTERS,
            Part::KatRunner => &KAT_RUNNER,
            Part::Driver => &DRIVER,
            Part::ProfileRuntime => &PROFILE_RUNTIME,
            Part::CtHooks => &CT_HOOKS,
        };
        cell.get_or_init(|| self.compute_version()).clone()
    }

    fn compute_version(self) -> String {
        let mut all = Vec::new();
        for name in self.files() {
            let text = FILES.iter().find(|(n, _)| *n == name).map_or("", |f| f.1);
            all.extend_from_slice(name.as_bytes());
            all.push(0);
            all.extend_from_slice(text.as_bytes());
            all.push(0);
        }
        fsutil::sha256_hex(&all)
    }
}

/// The support files named by `#include "…"` lines (system headers and
/// submission headers such as `auxfunc.h` are not support files and drop
/// out in `Part::version`).
fn local_includes(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| {
        let rest = l.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest.strip_prefix("include")?.trim_start();
        rest.strip_prefix('"')?.split('"').next()
    })
}

/// The support tree written out and the tools compiled for one compiler.
#[derive(Debug, Clone)]
pub struct Support {
    /// Directory holding the support sources (an include dir for adapters).
    pub dir: PathBuf,
    pub kat_runner: PathBuf,
    pub driver: PathBuf,
    pub version: String,
}

impl Support {
    /// Writes the sources under the cache and compiles the KAT runner and the
    /// timing driver once per (support version, compiler).
    pub fn prepare(cache: &Cache, cc: &Compiler) -> Result<Support> {
        let version = version();
        let src = Support::sources(cache, cc)?;
        let dir = src.parent().context("support directory")?.to_path_buf();
        let kat_runner = dir.join("pqb-kat");
        let driver = dir.join("pqb-driver");
        let support = Support {
            dir: src.clone(),
            kat_runner: kat_runner.clone(),
            driver: driver.clone(),
            version,
        };
        if kat_runner.is_file() && driver.is_file() && support.drbg_tool().is_file() {
            return Ok(support);
        }
        let flags = tool_flags(&src);
        let tmp = tempfile::Builder::new().prefix(".tmp-").tempdir_in(&dir)?;
        let build = |out: &str, sources: &[&str], extra: &[&str]| -> Result<()> {
            let objs: Vec<PathBuf> = sources.iter().map(|s| src.join(s)).collect();
            let mut args = flags.clone();
            args.extend(extra.iter().map(|s| s.to_string()));
            // Each link in a scratch folder of its own (its job's uid owns
            // it), outside the cache.
            let scratch = crate::toolchain::scratch()?;
            let staged = scratch.path().join(out);
            cc.link(std::slice::from_ref(&src), &objs, &staged, &args)
                .with_context(|| format!("building the support tool {out}"))?;
            // A copy of pqbench's own: the linker ran as a job uid, which
            // must not own a tool every later job runs.
            let owned = tmp.path().join(out);
            std::fs::copy(&staged, &owned)?;
            std::fs::rename(&owned, dir.join(out))?;
            Ok(())
        };
        // Independent tools, built side by side: the first stage that needs
        // them waits for the slowest, not for the three in turn.
        let tools: [(&str, &[&str], &[&str]); 3] = [
            ("pqb-kat", KAT_RUNNER_SOURCES, &["-ldl"]),
            ("pqb-driver", DRIVER_SOURCES, &["-ldl", "-rdynamic"]),
            (
                "pqb-drbg",
                &["drbg_tool.c", "aes256.c", "ctr_drbg.c", "counter.c"],
                &[],
            ),
        ];
        // Threads of their own, not rayon's: a rayon worker waiting here
        // could take another job that asks for the support tools, and
        // wait on itself.
        std::thread::scope(|scope| {
            let running: Vec<_> = tools
                .iter()
                .map(|(out, sources, extra)| scope.spawn(|| build(out, sources, extra)))
                .collect();
            running
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        Err(anyhow::anyhow!("building a support tool panicked"))
                    })
                })
                .collect::<Result<Vec<()>>>()
        })?;
        Ok(support)
    }

    /// The support sources written out (nothing compiled): the include
    /// directory of the adapters, whose arguments name it, so a build's
    /// dependencies can be listed before anything is built.
    pub(crate) fn sources(cache: &Cache, cc: &Compiler) -> Result<PathBuf> {
        let mut key = format!("{}|{}|{}", version(), cc.binary_sha256, cc.version);
        // The tools are built by toolchain jobs too: with the variables
        // the system passes them, when it names some.
        if let Some(names) = cc.environment_identity() {
            key.push('|');
            key.push_str(&names);
        }
        let key = fsutil::sha256_hex(key.as_bytes());
        let src = cache.dir().join("support").join(&key[..16]).join("src");
        for (name, text) in FILES {
            let file = src.join(name);
            if std::fs::read(&file).ok().as_deref() != Some(text.as_bytes()) {
                fsutil::write_atomic(&file, text.as_bytes())?;
            }
        }
        Ok(src)
    }

    /// `pqb-drbg`, the NIST KAT CTR_DRBG on its own (cost on this host,
    /// implementation chosen, draws for tests); beside the KAT runner, so
    /// that a `Support` built elsewhere needs no new field.
    pub fn drbg_tool(&self) -> PathBuf {
        self.kat_runner.with_file_name("pqb-drbg")
    }
}

fn tool_flags(src: &Path) -> Vec<String> {
    // -pipe: no assembler files in the temporary directory (the KAT runner's
    // is over 100 KiB), so a small file-size limit still lets the tools build.
    [
        "-std=c99",
        "-O2",
        "-D_GNU_SOURCE",
        "-Wall",
        "-Wextra",
        "-pipe",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("-I{}", src.display())])
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARTS: [Part; 5] = [
        Part::Adapters,
        Part::KatRunner,
        Part::Driver,
        Part::ProfileRuntime,
        Part::CtHooks,
    ];

    #[test]
    fn parts_follow_includes_and_nothing_else() {
        let runner = Part::KatRunner.files();
        for f in ["kat_kex.c", "kat_hash.c", "pqb_seal.h", "aes256.h"] {
            assert!(runner.contains(f), "{f} in {runner:?}");
        }
        let driver = Part::Driver.files();
        for f in [
            "driver_kex.c",
            "driver_hash.c",
            "driver_vg.c",
            "valgrind_hooks.h",
        ] {
            assert!(driver.contains(f), "{f} in {driver:?}");
        }
        let adapters = Part::Adapters.files();
        for f in ["adapter_ngcc_kinds.c", "pqb_iccs.h", "pqb_entry.h"] {
            assert!(adapters.contains(f), "{f} in {adapters:?}");
        }
        for f in ["kat_hash.c", "driver.c", "prof_runtime.c"] {
            assert!(!adapters.contains(f), "{f} in {adapters:?}");
        }
        assert!(!driver.contains("kat_hash.c"));
    }

    /// The driver is linked with -rdynamic so the library's allocator
    /// calls bind to its accounting: anything else it exported would bind
    /// a library's own symbol of the same name (`line`, `fail`, `setup`)
    /// to the driver's. Its shared names are hidden (driver.h).
    #[test]
    fn the_driver_exports_its_allocator_and_nothing_of_its_own_helpers() {
        let dir = tempfile::tempdir().unwrap();
        let cc = Compiler::detect("gcc").unwrap();
        let support = Support::prepare(&Cache::new(dir.path()), &cc).unwrap();
        let exported = crate::elf::defined_symbols(&support.driver).unwrap();
        let allocator = [
            "aligned_alloc",
            "calloc",
            "free",
            "malloc",
            "memalign",
            "posix_memalign",
            "pvalloc",
            "realloc",
            "valloc",
        ];
        for a in allocator {
            assert!(exported.iter().any(|e| e == a), "{a} in {exported:?}");
        }
        let crt = ["main", "_start", "_init", "_fini", "_IO_stdin_used"];
        let other: Vec<&String> = exported
            .iter()
            .filter(|e| !allocator.contains(&e.as_str()) && !crt.contains(&e.as_str()))
            .filter(|e| !e.starts_with("pqb_") && !e.starts_with("__") && !e.starts_with('_'))
            .filter(|e| !["data_start", "stdout", "stderr", "stdin"].contains(&e.as_str()))
            .collect();
        assert!(other.is_empty(), "the driver exports {other:?}");
    }

    #[test]
    fn every_support_file_but_the_drbg_tool_belongs_to_a_part() {
        for (name, _) in FILES {
            let owned = PARTS.iter().any(|p| p.files().contains(name));
            assert_eq!(owned, *name != "drbg_tool.c", "{name}");
        }
        let versions: std::collections::BTreeSet<String> =
            PARTS.iter().map(|p| p.version()).collect();
        assert_eq!(versions.len(), PARTS.len());
    }
}
