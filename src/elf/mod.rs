//! ELF facts read with the `object` crate, never by running binutils, so the
//! figures do not depend on which tools the host has installed.
//!
//! This file: load sizes and symbol lists of built libraries. The
//! survey's reachability lives beside it: `relocatable` reads an object's
//! sections, relocations and functions, `decode` finds the branches the
//! assembler resolved without a relocation, `graph` links the objects.

mod decode;
mod graph;
mod relocatable;

pub(crate) use graph::{LinkGraph, Node};
pub(crate) use relocatable::{RelSection, RelocTarget};

use std::path::Path;

use anyhow::{bail, Context, Result};
use object::elf::{FileHeader32, FileHeader64, PT_LOAD};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{Endianness, FileKind, Object, ObjectKind, ObjectSymbol, SymbolKind};

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn load_sum<H: FileHeader<Endian = Endianness>>(data: &[u8], path: &Path) -> Result<u64> {
    let header =
        H::parse(data).with_context(|| format!("{}: malformed ELF header", path.display()))?;
    let endian = header
        .endian()
        .with_context(|| format!("{}: unsupported ELF byte order", path.display()))?;
    let phdrs = header
        .program_headers(endian, data)
        .with_context(|| format!("{}: malformed program headers", path.display()))?;
    Ok(phdrs
        .iter()
        .filter(|ph| ph.p_type(endian) == PT_LOAD)
        .map(|ph| ph.p_memsz(endian).into())
        .sum())
}

/// Static memory proxy of a library: Σ `p_memsz` over its `PT_LOAD`
/// segments (32- or 64-bit, either byte order).
pub(crate) fn load_segment_bytes(path: &Path) -> Result<u64> {
    let data = read(path)?;
    match FileKind::parse(&*data) {
        Ok(FileKind::Elf32) => load_sum::<FileHeader32<Endianness>>(&data, path),
        Ok(FileKind::Elf64) => load_sum::<FileHeader64<Endianness>>(&data, path),
        _ => bail!("{} is not an ELF file", path.display()),
    }
}

/// Symbols of interest: a shared library's interface is its dynamic symbol
/// table (`.symtab` may be stripped and also lists hidden symbols), while a
/// relocatable object only has `.symtab`.
fn symbols_where(path: &Path, keep: impl Fn(&object::Symbol) -> bool) -> Result<Vec<String>> {
    let data = read(path)?;
    let file = object::File::parse(&*data)
        .with_context(|| format!("{}: not a readable object file", path.display()))?;
    let use_dynamic = file.kind() == ObjectKind::Dynamic && file.dynamic_symbols().next().is_some();
    let symbols: Vec<object::Symbol> = if use_dynamic {
        file.dynamic_symbols().collect()
    } else {
        file.symbols().collect()
    };
    let mut names: Vec<String> = symbols
        .iter()
        .filter(|s| keep(s))
        .filter_map(|s| s.name().ok())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Global (including weak) defined function and data symbols, sorted.
pub(crate) fn defined_symbols(path: &Path) -> Result<Vec<String>> {
    symbols_where(path, |s| {
        !s.is_undefined()
            && s.is_global()
            && matches!(
                s.kind(),
                SymbolKind::Text | SymbolKind::Data | SymbolKind::Tls
            )
    })
}

/// Symbols the file needs from elsewhere, sorted.
pub(crate) fn undefined_symbols(path: &Path) -> Result<Vec<String>> {
    symbols_where(path, |s| s.is_undefined() && s.is_global())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::process::Command;

    /// A fresh scratch directory for one test (shared with other modules'
    /// tests that compile C fixtures), removed when dropped, also when the
    /// test fails.
    pub(crate) struct Scratch(tempfile::TempDir);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            self.0.path()
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            self.0.path()
        }
    }

    pub(crate) fn scratch(tag: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("pqbench-{tag}-"))
            .tempdir()
            .unwrap();
        Scratch(dir)
    }

    pub(crate) fn gcc(args: &[&str], dir: &Path) {
        let out = Command::new("gcc")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("gcc is needed to run this test");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "gcc {args:?}: {err}");
    }

    const LIB_C: &str = r#"
        #include <string.h>
        extern int helper_from_elsewhere(int);
        const unsigned char table[4096] = {1, 2, 3};
        int counter = 7;
        static char scratch[65536];
        static int local_fn(int x) { return x * 3; }
        int api_entry(int x) {
            memset(scratch, x, sizeof scratch);
            return local_fn(x) + table[x & 7] + helper_from_elsewhere(x) + counter;
        }
        __attribute__((weak)) int weak_entry(void) { return 1; }
        __attribute__((visibility("hidden"))) int hidden_fn(void) { return 2; }
    "#;

    /// Σ MemSiz of LOAD lines in `readelf -lW`: the oracle is binutils.
    fn readelf_load_sum(path: &Path) -> u64 {
        let out = Command::new("readelf")
            .arg("-lW")
            .arg(path)
            .output()
            .expect("readelf is needed to run this test");
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let sum: u64 = text
            .lines()
            .map(str::split_whitespace)
            .filter_map(|mut f| {
                // Type Offset VirtAddr PhysAddr FileSiz MemSiz Flg Align
                if f.next()? != "LOAD" {
                    return None;
                }
                let memsz = f.nth(4)?;
                u64::from_str_radix(memsz.trim_start_matches("0x"), 16).ok()
            })
            .sum();
        assert!(sum > 0, "no LOAD segment parsed from:\n{text}");
        sum
    }

    #[test]
    fn load_bytes_match_readelf() {
        let dir = scratch("load");
        std::fs::write(dir.join("lib.c"), LIB_C).unwrap();
        gcc(&["-shared", "-fPIC", "-O2", "-o", "libt.so", "lib.c"], &dir);
        let lib = dir.join("libt.so");
        let ours = load_segment_bytes(&lib).unwrap();
        assert_eq!(ours, readelf_load_sum(&lib));
        // The 64 KiB .bss must be counted: MemSiz, not FileSiz.
        assert!(ours > 65536 + 4096);

        // 32-bit output when the toolchain has multilib support.
        let out32 = Command::new("gcc")
            .args(["-m32", "-shared", "-fPIC", "-o", "libt32.so", "lib.c"])
            .current_dir(&dir)
            .output();
        if matches!(out32, Ok(ref o) if o.status.success()) {
            let lib32 = dir.join("libt32.so");
            assert_eq!(
                load_segment_bytes(&lib32).unwrap(),
                readelf_load_sum(&lib32)
            );
        }
    }

    #[test]
    fn symbols_of_library_and_object() {
        let dir = scratch("syms");
        std::fs::write(dir.join("lib.c"), LIB_C).unwrap();
        gcc(&["-shared", "-fPIC", "-O2", "-o", "libt.so", "lib.c"], &dir);
        gcc(&["-c", "-fPIC", "-O2", "-o", "lib.o", "lib.c"], &dir);

        let so_defs = defined_symbols(&dir.join("libt.so")).unwrap();
        for want in ["api_entry", "counter", "table", "weak_entry"] {
            assert!(so_defs.contains(&want.to_string()), "{so_defs:?}");
        }
        for absent in ["local_fn", "scratch", "hidden_fn", "memset"] {
            assert!(!so_defs.contains(&absent.to_string()), "{so_defs:?}");
        }
        let so_undef = undefined_symbols(&dir.join("libt.so")).unwrap();
        for want in ["helper_from_elsewhere", "memset"] {
            assert!(so_undef.contains(&want.to_string()), "{so_undef:?}");
        }

        let o_defs = defined_symbols(&dir.join("lib.o")).unwrap();
        // In a relocatable object hidden symbols are still global definitions.
        for want in ["api_entry", "counter", "table", "weak_entry", "hidden_fn"] {
            assert!(o_defs.contains(&want.to_string()), "{o_defs:?}");
        }
        assert!(!o_defs.iter().any(|s| s == "local_fn" || s == "scratch"));
        let o_undef = undefined_symbols(&dir.join("lib.o")).unwrap();
        assert!(o_undef.contains(&"helper_from_elsewhere".to_string()));
        assert!(!o_undef.contains(&"api_entry".to_string()));
    }

    /// A minimal ELF image with only a header and program headers, laid out
    /// by hand from the ELF specification, for the classes and byte orders
    /// the local toolchain cannot produce.
    fn synthetic_elf(is64: bool, big: bool, phdrs: &[(u32, u64)]) -> Vec<u8> {
        fn put(out: &mut Vec<u8>, v: u64, width: usize, big: bool) {
            let bytes = v.to_le_bytes();
            let mut field = bytes[..width].to_vec();
            if big {
                field.reverse();
            }
            out.extend_from_slice(&field);
        }
        let word = if is64 { 8 } else { 4 };
        let (ehsize, phentsize) = if is64 { (64, 56) } else { (52, 32) };
        let mut e = vec![0x7f, b'E', b'L', b'F', if is64 { 2 } else { 1 }];
        e.push(if big { 2 } else { 1 });
        e.push(1);
        e.resize(16, 0);
        put(&mut e, 3, 2, big); // ET_DYN
        put(&mut e, if big { 20 } else { 3 }, 2, big); // EM_PPC / EM_386
        put(&mut e, 1, 4, big);
        put(&mut e, 0, word, big); // entry
        put(&mut e, ehsize, word, big); // phoff
        put(&mut e, 0, word, big); // shoff
        put(&mut e, 0, 4, big);
        put(&mut e, ehsize, 2, big);
        put(&mut e, phentsize, 2, big);
        put(&mut e, phdrs.len() as u64, 2, big);
        put(&mut e, 0, 2, big);
        put(&mut e, 0, 2, big);
        put(&mut e, 0, 2, big);
        assert_eq!(e.len() as u64, ehsize);
        for &(ptype, memsz) in phdrs {
            put(&mut e, u64::from(ptype), 4, big);
            if is64 {
                put(&mut e, 5, 4, big); // flags
                for v in [0, 0x1000, 0x1000, memsz / 2, memsz, 0x1000] {
                    put(&mut e, v, 8, big);
                }
            } else {
                for v in [0, 0x1000, 0x1000, memsz / 2, memsz, 5, 0x1000] {
                    put(&mut e, v, 4, big);
                }
            }
        }
        e
    }

    #[test]
    fn every_class_and_byte_order() {
        let dir = scratch("synth");
        let phdrs = [
            (PT_LOAD, 0x1234),
            (2 /* PT_DYNAMIC */, 0x999),
            (PT_LOAD, 0x10_0000),
        ];
        for is64 in [false, true] {
            for big in [false, true] {
                let p = dir.join(format!("s{is64}{big}.so"));
                std::fs::write(&p, synthetic_elf(is64, big, &phdrs)).unwrap();
                assert_eq!(
                    load_segment_bytes(&p).unwrap(),
                    0x1234 + 0x10_0000,
                    "64-bit {is64}, big-endian {big}"
                );
                if !big && !is64 {
                    assert_eq!(readelf_load_sum(&p), 0x1234 + 0x10_0000);
                }
            }
        }
    }

    #[test]
    fn code_regions_cut_functions_aliases_labels_and_gaps() {
        // Padding before 0x10; `f` and its alias; a label of size 0 running
        // to the next symbol; `g` sized, and an unsized alias of `g` running
        // to the section's end; nothing past it.
        let symbols = [(0x10, 6), (0x10, 6), (0x20, 0), (0x40, 0x10), (0x40, 0)];
        let want = [
            (0, 0x10),
            (0x10, 0x16),
            (0x16, 0x20),
            (0x20, 0x40),
            (0x40, 0x50),
            (0x40, 0x60),
        ];
        assert_eq!(decode::code_regions(0x60, &symbols), want);
        assert_eq!(decode::code_regions(0x60, &[]), [(0, 0x60)]);
        assert_eq!(decode::code_regions(0, &[(0, 0)]), []);
    }

    #[test]
    fn not_elf_is_an_error() {
        let dir = scratch("bad");
        let p = dir.join("junk.so");
        std::fs::write(&p, b"definitely not an ELF file").unwrap();
        let err = load_segment_bytes(&p).unwrap_err().to_string();
        assert!(err.contains("not an ELF file"), "{err}");
        assert!(load_segment_bytes(&dir.join("missing.so")).is_err());
        assert!(defined_symbols(&p).is_err());
    }
}
