//! What `-march=native` stands for on the build host. A profile naming it
//! is built with the resolved flags instead, so the build key, the lock and
//! the method page name the CPU the code was made for, and a cache shared
//! by hosts of different CPUs never hands one host's objects to another.

use std::path::Path;
use std::process::Command;

/// The flags naming the host CPU (`-march=native`, `-mcpu=native`,
/// `-mtune=native`).
fn is_native(flag: &str) -> bool {
    ["-march=native", "-mcpu=native", "-mtune=native"].contains(&flag)
}

/// Whether any of `flags` names the host CPU.
pub(crate) fn wanted<'a>(mut flags: impl Iterator<Item = &'a String>) -> bool {
    flags.any(|f| is_native(f))
}

/// What the compiler at `path` makes of `-march=native` here: gcc's
/// expansion (the CPU, each feature on or off, cache sizes, tuning), or
/// clang's target CPU. None when it cannot tell (a cross compiler).
pub(crate) fn resolve(path: &Path) -> Option<Vec<String>> {
    let out = Command::new(path)
        .args([
            "-march=native",
            "-###",
            "-x",
            "c",
            "-c",
            "/dev/null",
            "-o",
            "/dev/null",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let flags = from_driver_listing(&text)?;
    (!flags.iter().any(|f| is_native(f))).then_some(flags)
}

/// The host-CPU flags of a `-###` listing: gcc's `cc1` line, or clang's
/// `-target-cpu`.
fn from_driver_listing(text: &str) -> Option<Vec<String>> {
    for line in text.lines() {
        let words: Vec<String> = line
            .split_whitespace()
            .map(|w| w.trim_matches('"').to_string())
            .collect();
        let Some(program) = words.first() else {
            continue;
        };
        if program.ends_with("/cc1") || program == "cc1" {
            return Some(gcc_flags(&words[1..]));
        }
        if let Some(at) = words.iter().position(|w| w == "-target-cpu") {
            return words.get(at + 1).map(|cpu| vec![format!("-march={cpu}")]);
        }
    }
    None
}

/// The target flags of a cc1 command line: `-m…` and `--param` pairs.
fn gcc_flags(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = words.iter();
    while let Some(w) = words.next() {
        if w.starts_with("-m") {
            out.push(w.clone());
        } else if w == "--param" {
            if let Some(v) = words.next() {
                out.push(format!("--param={v}"));
            }
        }
    }
    out
}

/// `flags` with the host-CPU flags replaced by what they stand for.
pub(crate) fn substitute(flags: &[String], native: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for f in flags {
        if f == "-march=native" || f == "-mcpu=native" {
            out.extend(native.iter().cloned());
        } else if f != "-mtune=native" {
            out.push(f.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gccs_expansion_and_clangs_cpu_are_read() {
        let gcc = " /usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet /dev/null \"-march=cooperlake\" -mmmx -mno-sse4a --param \"l1-cache-size=48\" \"-mtune=generic\" -quiet -dumpbase null -o /tmp/x.s\n";
        assert_eq!(
            from_driver_listing(gcc).unwrap(),
            [
                "-march=cooperlake",
                "-mmmx",
                "-mno-sse4a",
                "--param=l1-cache-size=48",
                "-mtune=generic"
            ]
        );
        let clang = " \"/usr/lib/llvm-14/bin/clang\" \"-cc1\" \"-triple\" \"x86_64-pc-linux-gnu\" \"-target-cpu\" \"icelake-client\" \"-target-feature\" \"+avx2\"\n";
        assert_eq!(
            from_driver_listing(clang).unwrap(),
            ["-march=icelake-client"]
        );
        assert_eq!(from_driver_listing("no compiler here\n"), None);
    }

    #[test]
    fn the_host_cpu_flags_are_replaced_in_place() {
        let flags: Vec<String> = ["-O3", "-march=native", "-mtune=native", "-fPIC"]
            .map(String::from)
            .to_vec();
        let native = ["-march=x", "-mavx2"].map(String::from);
        assert_eq!(
            substitute(&flags, &native),
            ["-O3", "-march=x", "-mavx2", "-fPIC"]
        );
        assert!(wanted(flags.iter()));
        assert!(!wanted(native.iter()));
    }
}
