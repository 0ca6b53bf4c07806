//! The command line, as clap derive structs. Nothing here is seen by the
//! library: `commands` turns these into library calls.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "pqbench",
    version,
    about = "Build, KAT-check, measure and report public-key cryptography submissions"
)]
pub struct Cli {
    /// Project directory (holding campaigns/, algorithms/, kat/, output/).
    #[arg(short = 'C', long, global = true, default_value = ".")]
    pub root: PathBuf,
    /// Print only errors and the final summary.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Output of the commands that report: text for people, JSON for tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Output of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Md,
    Html,
    Csv,
    Json,
}

/// Output of `reproduce`: text for people, the report as Markdown, or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReproduceFormat {
    Text,
    Md,
    Json,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a campaign: build, KAT, measure, render; reuse what has not changed.
    Run {
        campaign: String,
        /// Parallel build and KAT jobs (default: the campaign's, else one per core).
        #[arg(short, long)]
        jobs: Option<usize>,
        /// Measure again even when the stored measurement is fresh.
        #[arg(long)]
        remeasure: bool,
        /// Measuring CPU (one shard).
        #[arg(long, conflicts_with = "cpus")]
        cpu: Option<usize>,
        /// Measuring CPUs, one shard each: instances of one algorithm stay on one core.
        #[arg(long, value_delimiter = ',')]
        cpus: Option<Vec<usize>>,
        /// The campaign's system to run (default: the first this host runs natively).
        #[arg(long)]
        system: Option<String>,
        /// Submit the system's Slurm job and return; a later `run` merges it.
        #[arg(long)]
        detach: bool,
        /// Run only the instances listed in FILE here, whatever executor
        /// the system names (how a shard runs where it was sent).
        #[arg(long, value_name = "FILE", hide = true)]
        local_shard: Option<PathBuf>,
        /// Measure only the campaign's deferred instances (`defer`); the
        /// others keep their stored measurements.
        #[arg(long)]
        deferred_only: bool,
        /// Measure the deferred instances on this CPU, beside the others,
        /// instead of after them.
        #[arg(long)]
        deferred_cpu: Option<usize>,
        /// Format of the final summary on stdout.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Check whether the host is fixed for measuring (governor, turbo, SMT, clock, counters).
    Host {
        #[arg(long)]
        cpu: Option<usize>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// List every instance and, per stage, `fresh` or `stale: <reason>`;
    /// with --nodes/--cores, the expected wall time on that many machines.
    Plan {
        campaign: String,
        #[arg(long)]
        system: Option<String>,
        /// Estimate the campaign on N nodes (from earlier datasets' costs).
        #[arg(long, requires = "cores")]
        nodes: Option<usize>,
        /// Measuring cores per node for the estimate.
        #[arg(long, requires = "nodes")]
        cores: Option<usize>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Print only the stale stages, with reasons.
    Status {
        campaign: String,
        #[arg(long)]
        system: Option<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Store the KAT files of the last run as the algorithms' references
    /// (for submissions without KAT files of their own).
    Bless {
        campaign: String,
        #[arg(long)]
        system: Option<String>,
        /// Digest mode of the manifest lines.
        #[arg(long, default_value = "strict", value_parser = ["strict", "nolen", "exact"])]
        mode: String,
        /// Replace references that the run did not match.
        #[arg(long)]
        force: bool,
    },
    /// Draft algorithms/<id>.toml from a submission directory or scheme
    /// metadata (.yml); also copies KAT files, writes manifests and sizes.
    Import {
        path: PathBuf,
        #[arg(long)]
        id: Option<String>,
        /// API family, when detection is not wanted.
        #[arg(long, value_parser = ["ngcc", "nist"])]
        api: Option<String>,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
        /// liboqs-style kats.json with KAT digests (metadata imports).
        #[arg(long)]
        kats: Option<PathBuf>,
        /// Size catalog to write rows into (default algorithms/sizes.csv).
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Basis of the catalog sizes.
        #[arg(long, default_value = "encoded", value_parser = ["encoded", "maximum-variable", "nominal-variable"])]
        basis: String,
    },
    /// Check an algorithm TOML (paths, sources, API symbols) without building.
    /// A relative path is taken relative to the project directory (-C).
    Validate { toml: PathBuf },
    /// Render the campaign's pages from its recorded datasets (every system).
    Render { campaign: String },
    /// Copy a run's evidence into <DIR>/data/<system>/ and render <DIR>/site/.
    Publish {
        campaign: String,
        /// Only this system (default: every system with a dataset).
        #[arg(long)]
        system: Option<String>,
        dir: PathBuf,
        /// Also copy the built libraries (lib/).
        #[arg(long)]
        with_libraries: bool,
    },
    /// Add a dataset produced elsewhere (another machine's
    /// output/<campaign>/<system>/ or a published data/<system>/) as that
    /// system of the campaign, after checking it.
    Merge {
        campaign: String,
        dir: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Recompute every statistic, share and KAT digest of a published
    /// dataset (or output/<campaign>) and regenerate its pages byte for byte.
    Check {
        dir: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Re-run a recorded run (run id, run dir or lock.json) in a fresh cache
    /// and compare everything with it; stops first if inputs changed.
    Reproduce {
        run: String,
        /// Reproduce even though inputs differ from the lock.
        #[arg(long)]
        allow_changed: bool,
        /// Noise threshold of the timing comparison (default: from the runs).
        #[arg(long)]
        threshold: Option<f64>,
        #[arg(short, long)]
        jobs: Option<usize>,
        /// Format of what is printed on stdout (`text` streams: the run and
        /// its inputs before the campaign runs, the outcome after).
        #[arg(long, value_enum, default_value = "text")]
        format: ReproduceFormat,
    },
    /// Compare the timings of two runs (run ids, run dirs or datasets).
    Compare {
        run_a: String,
        run_b: String,
        /// Relative change below which nothing is called faster or slower
        /// (default: derived from the runs' trial-to-trial dispersion).
        #[arg(long)]
        threshold: Option<f64>,
        #[arg(long, value_enum, default_value = "md")]
        format: CompareFormat,
        /// Write the report to this file instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Exit 1 when any operation is slower.
        #[arg(long)]
        fail_on_regression: bool,
    },
    /// Time rendering of a synthetic dataset of N instances (a benchmark:
    /// prints how long it took, asserts nothing).
    BenchRender {
        #[arg(long, default_value_t = 500)]
        instances: usize,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// pqbench's own steps on a machine a shard was sent to.
    #[command(hide = true)]
    Internal {
        #[command(subcommand)]
        step: Internal,
    },
}

#[derive(Subcommand)]
pub enum Internal {
    /// Builds a project from a `<sha256> <path>` list and a blob directory.
    Assemble {
        list: PathBuf,
        blobs: PathBuf,
        into: PathBuf,
    },
}
