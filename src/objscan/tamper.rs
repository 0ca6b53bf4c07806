//! The static scan of an instance's own code for what could reach outside
//! the operation being measured: code run at load or unload
//! (constructors, destructors, IFUNC resolvers), references to the libc
//! functions that touch descriptors, memory protection, processes, threads
//! or the dynamic linker, raw system call instructions, `/proc/` paths in
//! data, and Valgrind client requests.
//!
//! Objects are read as relocatable files, so each finding is named by the
//! function or data object it sits in; the linked library adds what only
//! linking shows (its imports and IFUNC symbols). What is scanned is what
//! the submission compiled: code made at run time, or a function reached
//! through a computed pointer without its name ever appearing, is not seen
//! here (the exec seal refuses the former).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind, Register};
use object::{Architecture, Object, ObjectSymbol, SymbolFlags};

use crate::elf::{LinkGraph, RelSection, RelocTarget};
pub(crate) use crate::records::scan::{Finding, FindingClass};

/// The libc functions whose mere reference is a finding: descriptors
/// (the result channel is one), memory protection and mappings, process
/// control, threads, processes, the dynamic linker and sockets (a unix
/// socket reaches a host daemon by path).
pub(crate) const WATCHED_CALLS: [&str; 35] = [
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "fcntl64",
    "pipe",
    "pipe2",
    "prctl",
    "ptrace",
    "mprotect",
    "pkey_mprotect",
    "mmap",
    "mmap64",
    "dlopen",
    "dlmopen",
    "dlsym",
    "dlvsym",
    "pthread_create",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "posix_spawn",
    "system",
    "syscall",
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "sendto",
    "sendmsg",
];

/// Mappings are findings only when they may be executable: a constant
/// protection argument without `PROT_EXEC` maps data.
const EXEC_CHECKED: [&str; 2] = ["mmap", "mmap64"];
const PROT_EXEC: u64 = 4;

/// What the file a finding was found in is called for the library.
pub(crate) const LIBRARY: &str = "library";

/// `STT_GNU_IFUNC`.
const STT_GNU_IFUNC: u8 = 10;

/// Every finding in `objects` (relocatable files), each named by the
/// matching entry of `names` (the source file).
pub(crate) fn scan_objects(objects: &[PathBuf], names: &[String]) -> Result<Vec<Finding>> {
    let graph = LinkGraph::load(objects, |_| true)?;
    let mut found = BTreeSet::new();
    for (oi, secs) in graph.objects.iter().enumerate() {
        let file = names.get(oi).cloned().unwrap_or_else(|| oi.to_string());
        let data = std::fs::read(&objects[oi])
            .with_context(|| format!("cannot read {}", objects[oi].display()))?;
        let obj = object::File::parse(&*data)
            .with_context(|| format!("{}: not a readable object file", objects[oi].display()))?;
        let mut add = |class, detail: &str, symbol: Option<String>| {
            found.insert(Finding {
                class,
                detail: detail.to_string(),
                symbol,
                file: file.clone(),
                allowed: None,
            });
        };
        for (class, detail, symbol) in ifuncs(&obj) {
            add(class, &detail, symbol);
        }
        let arch = obj.architecture();
        let refs = text_refs(secs);
        for (&index, s) in secs {
            for (class, detail, symbol) in section_findings(secs, (index, s), arch, &refs) {
                add(class, &detail, symbol);
            }
        }
    }
    for r in super::client_requests(objects)? {
        let file = names.get(r.object).cloned().unwrap_or_default();
        found.insert(Finding {
            class: FindingClass::ClientRequest,
            detail: "Valgrind client request".into(),
            symbol: r.symbol,
            file,
            allowed: None,
        });
    }
    Ok(found.into_iter().collect())
}

type Found = (FindingClass, String, Option<String>);

/// The class of an array of pointers the loader calls.
fn table_class(section: &str) -> Option<(FindingClass, &'static str)> {
    let is = |base: &str| section == base || section.starts_with(&format!("{base}."));
    match () {
        _ if is(".init_array") => Some((FindingClass::Constructor, ".init_array")),
        _ if is(".preinit_array") => Some((FindingClass::Constructor, ".preinit_array")),
        _ if is(".ctors") => Some((FindingClass::Constructor, ".ctors")),
        _ if is(".fini_array") => Some((FindingClass::Destructor, ".fini_array")),
        _ if is(".dtors") => Some((FindingClass::Destructor, ".dtors")),
        _ => None,
    }
}

/// The findings of one section of an object.
fn section_findings(
    secs: &std::collections::BTreeMap<usize, RelSection>,
    (index, s): (usize, &RelSection),
    arch: Architecture,
    refs: &HashMap<usize, Vec<(u64, String)>>,
) -> Vec<Found> {
    let mut out = Vec::new();
    if let Some((class, table)) = table_class(&s.name) {
        for r in &s.relocations {
            let symbol = match &r.target {
                RelocTarget::Global(n) => Some(n.clone()),
                RelocTarget::Local { section, offset } => secs
                    .get(section)
                    .and_then(|t| t.symbol_at(*offset))
                    .map(str::to_string),
            };
            out.push((class, table.to_string(), symbol));
        }
        return out;
    }
    if s.name.starts_with(".debug") || s.name.starts_with(".rela") || s.name.starts_with(".rel.") {
        return out;
    }
    for r in &s.relocations {
        let RelocTarget::Global(name) = &r.target else {
            continue;
        };
        let Some(watched) = WATCHED_CALLS.iter().find(|w| **w == name) else {
            continue;
        };
        if s.is_text && EXEC_CHECKED.contains(watched) && !maybe_exec(s, arch, r.offset) {
            continue;
        }
        let symbol = s.symbol_at(r.offset).map(str::to_string);
        out.push((FindingClass::Call, watched.to_string(), symbol));
    }
    if s.is_text {
        for at in syscalls(s, arch) {
            let symbol = s.symbol_at(at.0).map(str::to_string);
            out.push((FindingClass::Syscall, at.1.to_string(), symbol));
        }
    } else {
        out.extend(data_strings(index, s, refs));
    }
    out
}

/// For every section, the places in it that code refers to, with the
/// function referring: a string literal has no symbol of its own, so the
/// function using it names it.
fn text_refs(
    secs: &std::collections::BTreeMap<usize, RelSection>,
) -> HashMap<usize, Vec<(u64, String)>> {
    let mut refs: HashMap<usize, Vec<(u64, String)>> = HashMap::new();
    for s in secs.values().filter(|s| s.is_text) {
        for r in &s.relocations {
            if let (RelocTarget::Local { section, offset }, Some(f)) =
                (&r.target, s.symbol_at(r.offset))
            {
                refs.entry(*section)
                    .or_default()
                    .push((*offset, f.to_string()));
            }
        }
    }
    refs
}

/// Strings of a data section that name what a library would read behind
/// the harness's back: `/proc/` paths, and what tells it runs under
/// Valgrind (a library that behaves only there makes the count and ct
/// figures its own word).
const DATA_NEEDLES: [(&[u8], FindingClass); 5] = [
    (b"/proc/", FindingClass::ProcPath),
    (b"LD_PRELOAD", FindingClass::EnvProbe),
    (b"vgpreload", FindingClass::EnvProbe),
    (b"valgrind", FindingClass::EnvProbe),
    (b"VALGRIND", FindingClass::EnvProbe),
];

/// The strings of `DATA_NEEDLES` in a data section, each named by the data
/// object holding it, else by the function referring to the string; one
/// finding per string and class.
fn data_strings(
    index: usize,
    s: &RelSection,
    refs: &HashMap<usize, Vec<(u64, String)>>,
) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for (needle, class) in DATA_NEEDLES {
        for found in strings_with(index, s, refs, needle, class) {
            if !out.iter().any(|o| o.0 == found.0 && o.1 == found.1) {
                out.push(found);
            }
        }
    }
    out
}

/// The zero-terminated strings of `s` holding `needle`.
fn strings_with(
    index: usize,
    s: &RelSection,
    refs: &HashMap<usize, Vec<(u64, String)>>,
    needle: &[u8],
    class: FindingClass,
) -> Vec<Found> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = super::find(&s.data, needle, from) {
        let start = s.data[..at]
            .iter()
            .rposition(|b| *b == 0)
            .map_or(0, |z| z + 1);
        let end = s.data[at..]
            .iter()
            .position(|b| *b == 0)
            .map_or(s.data.len(), |z| at + z);
        let text = String::from_utf8_lossy(&s.data[start..end]).into_owned();
        let symbol = s.symbol_at(at as u64).map(str::to_string).or_else(|| {
            refs.get(&index)?
                .iter()
                .find(|(o, _)| (start as u64..=at as u64).contains(o))
                .map(|(_, f)| f.clone())
        });
        out.push((class, text, symbol));
        from = end.max(at + 1);
    }
    out
}

/// Raw system call instructions of a code section: (offset, mnemonic).
fn syscalls(s: &RelSection, arch: Architecture) -> Vec<(u64, &'static str)> {
    let mut out = Vec::new();
    match arch {
        Architecture::X86_64 | Architecture::X86_64_X32 | Architecture::I386 => {
            let bitness = if arch == Architecture::I386 { 32 } else { 64 };
            // Decoded function by function, so data or padding between
            // functions cannot shift the decoding of the next one.
            for &(a, z) in &s.regions {
                let Some(bytes) = s.data.get(a as usize..z as usize) else {
                    continue;
                };
                let mut d = Decoder::with_ip(bitness, bytes, a, DecoderOptions::NONE);
                while d.can_decode() {
                    let ins = d.decode();
                    let what = match ins.mnemonic() {
                        Mnemonic::Syscall => "syscall",
                        Mnemonic::Sysenter => "sysenter",
                        Mnemonic::Int if ins.immediate8() == 0x80 => "int 0x80",
                        _ => continue,
                    };
                    out.push((ins.ip(), what));
                }
            }
        }
        Architecture::Aarch64 => {
            for (i, w) in s.data.chunks_exact(4).enumerate() {
                let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                // SVC #imm16
                if w & 0xffe0_001f == 0xd400_0001 {
                    out.push((4 * i as u64, "svc"));
                }
            }
        }
        _ => {}
    }
    out
}

/// Whether the mapping called at `call_at` (the relocation's offset) may
/// be executable: false only when the protection argument is set by a
/// constant without `PROT_EXEC` in the calling function before the call.
fn maybe_exec(s: &RelSection, arch: Architecture, call_at: u64) -> bool {
    let Some(&(a, _)) = s.regions.iter().find(|(a, z)| (*a..*z).contains(&call_at)) else {
        return true;
    };
    let Some(bytes) = s.data.get(a as usize..call_at as usize) else {
        return true;
    };
    let prot = match arch {
        Architecture::X86_64 => x86_prot(bytes, a),
        Architecture::Aarch64 => aarch64_prot(bytes),
        _ => None,
    };
    prot.is_none_or(|p| p & PROT_EXEC != 0)
}

/// The constant last written to the third argument register (`edx`) in
/// `code`, if that write was a constant.
fn x86_prot(code: &[u8], ip: u64) -> Option<u64> {
    let mut d = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    let mut prot = None;
    while d.can_decode() {
        let ins = d.decode();
        let writes_rdx = ins.op_count() > 0
            && ins.op0_kind() == OpKind::Register
            && matches!(
                ins.op0_register(),
                Register::EDX | Register::RDX | Register::DX | Register::DL
            );
        if !writes_rdx {
            continue;
        }
        prot = match ins.mnemonic() {
            Mnemonic::Mov
                if ins.op1_kind() != OpKind::Register && ins.op1_kind() != OpKind::Memory =>
            {
                Some(ins.immediate(1))
            }
            Mnemonic::Xor
                if ins.op1_kind() == OpKind::Register
                    && ins.op1_register() == ins.op0_register() =>
            {
                Some(0)
            }
            _ => None,
        };
    }
    prot
}

/// The same for AArch64 (`w2`/`x2`): a `movz` of a constant.
fn aarch64_prot(code: &[u8]) -> Option<u64> {
    let mut prot = None;
    for w in code.chunks_exact(4) {
        let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        if w & 0x1f != 2 {
            continue;
        }
        // MOVZ w2/x2, #imm16 (no shift); anything else writing x2 is
        // not a known constant (a data-processing write: rd in bits 0-4).
        prot = match w & 0x7fe0_0000 {
            0x5280_0000 => Some(u64::from((w >> 5) & 0xffff)),
            _ if writes_register(w) => None,
            _ => prot,
        };
    }
    prot
}

/// Whether an AArch64 instruction with rd = x2 writes it: loads and
/// data-processing instructions do; stores, branches and compares do not.
fn writes_register(w: u32) -> bool {
    let op0 = (w >> 25) & 0xf;
    let data_processing = matches!(op0, 0b1000 | 0b1001 | 0b0101 | 0b1101);
    let load = op0 & 0b0101 == 0b0100 && (w >> 22) & 1 == 1;
    data_processing || load
}

/// IFUNC symbols an object defines: (class, resolver, symbol).
fn ifuncs(obj: &object::File) -> Vec<Found> {
    let mut out = Vec::new();
    let syms: Vec<_> = obj.symbols().chain(obj.dynamic_symbols()).collect();
    for s in &syms {
        let SymbolFlags::Elf { st_info, .. } = s.flags() else {
            continue;
        };
        if st_info & 0xf != STT_GNU_IFUNC || s.is_undefined() {
            continue;
        }
        let name = s.name().unwrap_or("").to_string();
        // The resolver is the function at the IFUNC's address.
        let resolver = syms
            .iter()
            .filter(|r| r.address() == s.address() && r.section_index() == s.section_index())
            .filter(|r| matches!(r.flags(), SymbolFlags::Elf { st_info, .. } if st_info & 0xf == 2))
            .find_map(|r| r.name().ok().map(str::to_string));
        out.push((
            FindingClass::Ifunc,
            resolver.map_or("resolver".to_string(), |r| format!("resolver {r}")),
            Some(name),
        ));
    }
    out
}

/// What the linked library adds to its objects' findings: the watched
/// functions it imports (from code linked in that the objects do not
/// show) and its IFUNC symbols.
pub(crate) fn scan_library(path: &Path) -> Result<Vec<Finding>> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let obj = object::File::parse(&*data)
        .with_context(|| format!("{}: not a readable object file", path.display()))?;
    let mut found = BTreeSet::new();
    let mut add = |(class, detail, symbol): Found| {
        found.insert(Finding {
            class,
            detail,
            symbol,
            file: LIBRARY.to_string(),
            allowed: None,
        });
    };
    for s in obj.dynamic_symbols().filter(|s| s.is_undefined()) {
        let name = s.name().unwrap_or("");
        if let Some(w) = WATCHED_CALLS.iter().find(|w| **w == name) {
            add((FindingClass::Call, w.to_string(), None));
        }
    }
    ifuncs(&obj).into_iter().for_each(&mut add);
    Ok(found.into_iter().collect())
}

/// The findings of an instance: its objects', then those of its library
/// that the objects do not already show (an import the objects call is
/// named there, with its function).
pub(crate) fn merge(mut objects: Vec<Finding>, library: Vec<Finding>) -> Vec<Finding> {
    for f in library {
        let known = objects.iter().any(|o| {
            o.class == f.class
                && match f.class {
                    FindingClass::Ifunc => o.symbol == f.symbol,
                    _ => o.detail == f.detail,
                }
        });
        if !known {
            objects.push(f);
        }
    }
    objects.sort();
    objects
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::tests::{gcc, scratch};

    fn compile(dir: &Path, name: &str, code: &str) -> PathBuf {
        std::fs::write(dir.join(format!("{name}.c")), code).unwrap();
        gcc(&["-O2", "-fPIC", "-c", &format!("{name}.c")], dir);
        dir.join(format!("{name}.o"))
    }

    fn shown(found: &[Finding]) -> Vec<String> {
        found
            .iter()
            .map(|f| {
                let sym = f.symbol.as_deref().unwrap_or("-");
                format!("{} {} {sym}", f.class, f.detail)
            })
            .collect()
    }

    #[test]
    fn each_class_is_found_in_the_function_that_holds_it() {
        let dir = scratch("tamper-x86");
        let o = compile(
            &dir,
            "hostile",
            r#"
#include <unistd.h>
#include <sys/mman.h>
static int fds[2];
__attribute__((constructor)) static void grab(void) { pipe(fds); dup2(fds[1], 7); }
__attribute__((destructor)) static void leave(void) { close(fds[0]); }
long raw(long n) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n) : "rcx", "r11", "memory"); return r; }
const char *where(void) { return "/proc/self/mem"; }
void *data_map(void) { return mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }
void *code_map(void) { return mmap(0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }
static void impl(void) {}
static void (*pick(void))(void) { return impl; }
void chosen(void) __attribute__((ifunc("pick")));
"#,
        );
        let found = scan_objects(&[o], &["hostile.c".into()]).unwrap();
        let got = shown(&found);
        for want in [
            "constructor .init_array grab",
            "destructor .fini_array leave",
            "call pipe grab",
            "call dup2 grab",
            "syscall syscall raw",
            "proc-path /proc/self/mem where",
            "call mmap code_map",
            "ifunc resolver pick chosen",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} not in {got:?}");
        }
        // A data mapping (a constant protection without PROT_EXEC) is no
        // finding.
        assert!(!got.iter().any(|g| g.ends_with("data_map")), "{got:?}");
        assert!(found.iter().all(|f| f.file == "hostile.c"));
    }

    #[test]
    fn honest_code_has_no_finding() {
        let dir = scratch("tamper-honest");
        let o = compile(
            &dir,
            "honest",
            r#"
#include <string.h>
#include <stdlib.h>
static const unsigned char table[4] = {1, 2, 3, 4};
int sum(const unsigned char *m, size_t n) { int s = 0; for (size_t i = 0; i < n; i++) s += m[i] ^ table[i & 3]; return s; }
void *buffer(size_t n) { void *p = malloc(n); if (p) memset(p, 0, n); return p; }
const char *name(void) { return "procedure/proc"; }
"#,
        );
        let found = scan_objects(&[o], &["honest.c".into()]).unwrap();
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn aarch64_objects_are_scanned_too() {
        let cc = "aarch64-linux-gnu-gcc";
        if std::process::Command::new(cc)
            .arg("--version")
            .output()
            .is_err()
        {
            let why = format!("skipped: {cc} is not installed");
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("{why}");
            return;
        }
        let dir = scratch("tamper-a64");
        std::fs::write(
            dir.join("a.c"),
            r#"
#include <unistd.h>
long raw(long n) { register long x8 __asm__("x8") = n; register long x0 __asm__("x0"); __asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory"); return x0; }
__attribute__((constructor)) static void early(void) { int p[2]; pipe(p); }
const char *where(void) { return "/proc/self/maps"; }
"#,
        )
        .unwrap();
        let out = std::process::Command::new(cc)
            .args(["-O2", "-fPIC", "-c", "a.c"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let found = scan_objects(&[dir.join("a.o")], &["a.c".into()]).unwrap();
        let got = shown(&found);
        for want in [
            "syscall svc raw",
            "constructor .init_array early",
            "call pipe early",
            "proc-path /proc/self/maps where",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} not in {got:?}");
        }
    }

    #[test]
    fn a_library_that_looks_for_valgrind_or_a_host_socket_is_seen() {
        let dir = scratch("tamper-probe");
        let o = compile(
            &dir,
            "p",
            r#"
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
int under_tool(void) { const char *p = getenv("LD_PRELOAD"); return p && strstr(p, "vgpreload") != 0; }
int reach(void) { return socket(AF_UNIX, SOCK_STREAM, 0); }
int honest(int a) { return a + 1; }
"#,
        );
        let got = shown(&scan_objects(&[o], &["p.c".into()]).unwrap());
        for want in [
            "env-probe LD_PRELOAD under_tool",
            "env-probe vgpreload under_tool",
            "call socket reach",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} not in {got:?}");
        }
        assert!(!got.iter().any(|g| g.ends_with(" honest")), "{got:?}");
    }

    #[test]
    fn the_library_adds_its_imports_once() {
        let dir = scratch("tamper-lib");
        let o = compile(
            &dir,
            "l",
            "#include <unistd.h>\nint hide(int a) { return dup(a); }\n",
        );
        gcc(&["-shared", "-o", "l.so", "l.o"], &dir);
        let lib = scan_library(&dir.join("l.so")).unwrap();
        assert_eq!(shown(&lib), ["call dup -"]);
        let objects = scan_objects(&[o], &["l.c".into()]).unwrap();
        let all = merge(objects, lib);
        assert_eq!(shown(&all), ["call dup hide"]);
    }
}
