//! A system's assembler (`toolchain.assembler`): the program that
//! assembles plain assembly sources (`.s`) in the compiler's stead. Code
//! written for Apple's assembler (PQClean's AArch64 Keccak, `ld1.2d`,
//! `eor3.16b`) is rejected by GNU as and accepted by clang's integrated
//! assembler; preprocessed assembly (`.S`) stays with the compiler, whose
//! preprocessor and headers it was written for.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::version_line;
use crate::records::toolchain::Assembler;

/// Resolves the configured command. A program that is not installed is
/// recorded as such rather than refused: only an instance with `.s`
/// sources needs it, and its build then fails saying what to install.
pub(crate) fn detect(command: &[String]) -> Result<Assembler> {
    let Some(program) = command.first() else {
        bail!("toolchain.assembler names no program");
    };
    let Some(path) = super::which(program) else {
        return Ok(Assembler {
            command: command.to_vec(),
            path: None,
            version: "not installed".into(),
            binary_sha256: String::new(),
        });
    };
    let version = version_line(&path)?;
    Ok(Assembler {
        command: command.to_vec(),
        binary_sha256: crate::fsutil::sha256_file(&path)?,
        path: Some(path),
        version,
    })
}

/// Whether `source` is plain assembly, which no preprocessor reads.
pub(crate) fn plain(source: &Path) -> bool {
    source.extension().is_some_and(|e| e == "s")
}

/// The program to run and the configured arguments before the unit's own.
pub(crate) fn invocation(a: &Assembler) -> Result<(PathBuf, Vec<String>)> {
    let Some(path) = &a.path else {
        bail!(
            "the system's assembler `{}` (toolchain.assembler) is not installed: install it \
             (e.g. apt-get install clang) or remove the key from campaigns/systems.toml",
            a.command.first().map(String::as_str).unwrap_or_default()
        );
    };
    Ok((
        path.clone(),
        a.command.get(1..).unwrap_or_default().to_vec(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_assembly_goes_to_the_assembler() {
        assert!(plain(Path::new("a/f1600x2.s")));
        assert!(!plain(Path::new("a/ntt.S")));
        assert!(!plain(Path::new("a/sign.c")));
        assert!(!plain(Path::new("a/s")));
    }

    #[test]
    fn a_missing_assembler_is_recorded_and_named_when_needed() {
        let a = detect(&["pqbench-no-such-assembler".into(), "--x".into()]).unwrap();
        assert_eq!(a.path, None);
        let e = invocation(&a).unwrap_err().to_string();
        assert!(e.contains("`pqbench-no-such-assembler`"), "{e}");
        assert!(e.contains("toolchain.assembler"), "{e}");
    }
}
