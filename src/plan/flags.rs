//! Compiler flags no flag profile may hold: those that make the compiler
//! write files pqbench did not ask for, run or load a program, or take
//! its arguments or programs from somewhere else. A profile may come from
//! a submission's own build file (`submitter-cflags`), so these are
//! refused before anything is compiled. No list can name every option
//! that makes a compiler run a program: whatever gets past it runs as a
//! toolchain job, confined as submission code is (see `sandbox`).

/// Why `flag` is refused, or None when a profile may hold it.
pub(crate) fn refused(flag: &str) -> Option<&'static str> {
    if let Some(rest) = pass_through(flag) {
        return rest.split(',').find_map(refused_by_tool);
    }
    REFUSED
        .iter()
        .find(|(prefix, _)| flag.starts_with(prefix))
        .map(|(_, why)| *why)
        .or_else(|| {
            (flag.starts_with("-fopt-info") && flag.contains('='))
                .then_some("writes the optimisation report to a file")
        })
}

/// Prefixes refused, each with the reason the message gives.
const REFUSED: [(&str, &str); 30] = [
    ("-o", "chooses the output file, which pqbench names"),
    ("-save-temps", "writes intermediate files beside the build"),
    ("--save-temps", "writes intermediate files beside the build"),
    ("-fplugin", "loads a plugin into the compiler"),
    ("-fpass-plugin", "loads a plugin into the compiler"),
    (
        "-Xclang",
        "passes the next argument to the compiler proper unchecked",
    ),
    (
        "--gcc-toolchain",
        "takes the compiler's programs and libraries from another folder",
    ),
    ("-ccc-", "changes which programs the compiler driver runs"),
    ("-fuse-ld", "runs another linker"),
    ("--ld-path", "runs another linker"),
    (
        "-no-integrated-as",
        "runs an external assembler found on a path",
    ),
    (
        "-fno-integrated-as",
        "runs an external assembler found on a path",
    ),
    ("-iplugindir", "loads compiler plugins from another folder"),
    (
        "-wrapper",
        "runs the compiler's programs under another program",
    ),
    ("-specs", "reads a spec file, which can run any program"),
    ("--specs", "reads a spec file, which can run any program"),
    ("@", "reads further arguments from a file"),
    (
        "-B",
        "takes the compiler's own programs from another folder",
    ),
    ("-fdump-", "writes dump files"),
    ("-fstack-usage", "writes .su files"),
    ("-fcallgraph-info", "writes .ci files"),
    ("-aux-info", "writes prototypes to a file"),
    ("-fprofile-", "writes or reads profile files at run time"),
    ("-fauto-profile", "reads a profile file"),
    ("--coverage", "writes coverage files at run time"),
    ("-ftest-coverage", "writes coverage files"),
    (
        "-M",
        "writes a dependency list, which pqbench asks for itself",
    ),
    (
        "-X",
        "passes the next argument to a tool unchecked (write -Wl,...)",
    ),
    ("-dumpdir", "chooses where auxiliary files are written"),
    ("-dumpbase", "chooses where auxiliary files are written"),
];

/// The options of `-Wl,`, `-Wa,` and `-Wp,`, which go to the linker,
/// assembler and preprocessor.
fn pass_through(flag: &str) -> Option<&str> {
    ["-Wl,", "-Wa,", "-Wp,"]
        .iter()
        .find_map(|p| flag.strip_prefix(p))
}

/// Why an option passed through to the linker, assembler or preprocessor
/// is refused: those that write a file or load one.
fn refused_by_tool(part: &str) -> Option<&'static str> {
    const WRITE: [&str; 9] = [
        "-o",
        "--output",
        "-Map",
        "--Map",
        "--dependency-file",
        "-MD",
        "--MD",
        "-plugin",
        "--plugin",
    ];
    if part.starts_with('@') {
        return Some("reads further arguments from a file");
    }
    if WRITE.iter().any(|w| part.starts_with(w)) {
        return Some("makes the linker, assembler or preprocessor write or load a file");
    }
    // The assembler's listing: `-a`, `-al=file`, `-ahls=file`.
    (part.starts_with("-a") && part.contains('='))
        .then_some("makes the assembler write a listing file")
}

#[cfg(test)]
mod tests {
    use super::refused;

    #[test]
    fn the_escapes_are_refused_with_a_reason() {
        for f in [
            "-o",
            "-o/etc/x",
            "-save-temps=obj",
            "-fplugin=/tmp/p.so",
            "-wrapper",
            "-specs=x.specs",
            "@args.txt",
            "-B/tmp/bin",
            "-fdump-tree-all",
            "-fprofile-generate",
            "-MF",
            "-MD",
            "-Xlinker",
            "-Wl,-Map=out.map",
            "-Wl,--gc-sections,-o,/tmp/x",
            "-Wa,-adhln=list.txt",
            "-Wl,@more",
            "-fopt-info-vec=report.txt",
            "-fpass-plugin=./p.so",
            "--gcc-toolchain=./tc",
            "-ccc-install-dir",
            "-fuse-ld=./ld",
            "--ld-path=./ld",
            "-fno-integrated-as",
            "-Xclang",
        ] {
            assert!(refused(f).is_some(), "{f} should be refused");
        }
    }

    #[test]
    fn ordinary_code_generation_flags_pass() {
        for f in [
            "-O3",
            "-fomit-frame-pointer",
            "-march=native",
            "-mavx2",
            "-std=c99",
            "-funroll-loops",
            "-fopt-info-vec",
            "-Wall",
            "-Wl,--gc-sections",
            "-Wa,--noexecstack",
            "-DNDEBUG",
            "-fPIC",
            "-flto",
        ] {
            assert_eq!(refused(f), None, "{f} should pass");
        }
    }
}
