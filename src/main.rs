//! The `pqbench` command line: parse the arguments (`cli::args`), run the
//! command (`cli::commands`), print its report (`cli::output`), and map an
//! error to its exit code (`error::Error::exit_code`).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // pqbench re-executes itself as the launcher of every sandboxed job.
    if let Some(code) = pqbench::sandbox::jail_entry() {
        std::process::exit(code);
    }
    // And stands in for the compilers of a submission's build it observes.
    if let Some(code) = pqbench::import::record_entry() {
        std::process::exit(code);
    }
    // A file-size limit must end in a clear error of ours, not SIGXFSZ.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = cli::args::Cli::parse();
    let code = match cli::args::dispatch(&cli) {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` prints the whole cause chain: "reading X: No such file".
            eprintln!("error: {e:#}");
            e.exit_code()
        }
    };
    ExitCode::from(code as u8)
}
