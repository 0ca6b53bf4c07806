//! ELF facts read with the `object` crate, never by running binutils, so the
//! figures do not depend on which tools the host has installed.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use iced_x86::{Decoder, DecoderOptions, OpKind};
use object::elf::{FileHeader32, FileHeader64, PT_LOAD};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{
    Architecture, Endianness, FileKind, Object, ObjectKind, ObjectSection, ObjectSymbol,
    RelocationKind, RelocationTarget, SectionKind, SymbolKind,
};

fn read(path: &Path) -> Result<Vec<u8>> {
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
pub fn load_segment_bytes(path: &Path) -> Result<u64> {
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
pub fn defined_symbols(path: &Path) -> Result<Vec<String>> {
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
pub fn undefined_symbols(path: &Path) -> Result<Vec<String>> {
    symbols_where(path, |s| s.is_undefined() && s.is_global())
}

/// What a relocation points at: a place in a section of the same object
/// (a local or section symbol plus addend) or a global symbol, to be
/// resolved by name at link time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelocTarget {
    Local { section: usize, offset: u64 },
    Global(String),
}

/// A relocation at `offset` in its section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub offset: u64,
    pub target: RelocTarget,
}

/// One section of a relocatable object as a reachability analysis sees it.
#[derive(Clone, Debug, Default)]
pub struct RelSection {
    pub name: String,
    pub is_text: bool,
    pub size: u64,
    /// Contents, kept only for sections the caller asked for.
    pub data: Vec<u8>,
    /// Sorted by offset.
    pub relocations: Vec<Reloc>,
    /// Defined function/data symbols with a size: (name, offset, size).
    pub symbols: Vec<(String, u64, u64)>,
    /// Code only: the functions (and the code between them) the section is
    /// cut into, as (start, end); see [`code_regions`].
    pub regions: Vec<(u64, u64)>,
    /// Code only: (from, to) offsets of direct branches, calls and
    /// PC-relative address computations that the assembler resolved inside
    /// the section, so that no relocation records them; sorted.
    pub local_refs: Vec<(u64, u64)>,
}

impl RelSection {
    /// The smallest sized symbol covering `offset`, naming what a match in
    /// the section's bytes belongs to.
    pub fn symbol_at(&self, offset: u64) -> Option<&str> {
        let covering = self
            .symbols
            .iter()
            .filter(|(_, a, z)| (*a..a + z).contains(&offset));
        covering
            .min_by_key(|(_, _, z)| *z)
            .map(|(n, _, _)| n.as_str())
    }
}

/// A global (or weak) symbol definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalDef {
    pub name: String,
    pub section: usize,
    pub address: u64,
    pub weak: bool,
}

/// Instruction sets whose direct branches pqbench decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    X86 { bitness: u32 },
    Aarch64,
}

fn isa(arch: Architecture) -> Option<Isa> {
    match arch {
        Architecture::X86_64 | Architecture::X86_64_X32 => Some(Isa::X86 { bitness: 64 }),
        Architecture::I386 => Some(Isa::X86 { bitness: 32 }),
        Architecture::Aarch64 => Some(Isa::Aarch64),
        _ => None,
    }
}

/// The pieces a code section is cut into: each function symbol's range
/// (to the next function symbol when its size is 0, as hand-written
/// assembly without `.size` leaves it), then the code no function covers
/// (padding, code before the first symbol), each gap a piece of its own.
/// `functions` are (address, size). Aliases give one piece.
pub fn code_regions(size: u64, functions: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut starts: Vec<u64> = functions.iter().map(|f| f.0).collect();
    starts.sort_unstable();
    let next_start = |a: u64| {
        let i = starts.partition_point(|&s| s <= a);
        starts.get(i).copied().unwrap_or(size)
    };
    let end = |&(a, z): &(u64, u64)| match z {
        0 => (a, next_start(a)),
        z => (a, (a + z).min(size)),
    };
    let mut regions: Vec<(u64, u64)> = functions.iter().map(end).collect();
    regions.sort_unstable();
    regions.dedup();
    let mut gaps = Vec::new();
    let mut covered = 0;
    for &(a, z) in &regions {
        if a > covered {
            gaps.push((covered, a));
        }
        covered = covered.max(z);
    }
    if covered < size {
        gaps.push((covered, size));
    }
    regions.extend(gaps);
    regions.retain(|(a, z)| a < z);
    regions.sort_unstable();
    regions
}

/// ARM mapping symbols (`$x`, `$d`, `$x.42`) mark code and data; they name
/// no function.
fn is_mapping_symbol(name: &str) -> bool {
    name.starts_with('$')
}

/// Direct branch, call and PC-relative address targets in `code` (the
/// bytes of `region`), as (instruction offset, instruction length, target).
fn decode_refs(
    isa: Isa,
    code: &[u8],
    region: (u64, u64),
    data_from: &[(u64, bool)],
) -> Vec<[u64; 3]> {
    let (start, end) = region;
    let Some(bytes) = code.get(start as usize..end as usize) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match isa {
        Isa::X86 { bitness } => {
            let mut d = Decoder::with_ip(bitness, bytes, start, DecoderOptions::NONE);
            while d.can_decode() {
                let ins = d.decode();
                let branch = matches!(
                    ins.op0_kind(),
                    OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
                );
                let target = match () {
                    _ if ins.is_invalid() => None,
                    _ if branch => Some(ins.near_branch_target()),
                    _ if ins.is_ip_rel_memory_operand() => Some(ins.ip_rel_memory_address()),
                    _ => None,
                };
                out.extend(target.map(|t| [ins.ip(), ins.len() as u64, t]));
            }
        }
        Isa::Aarch64 => {
            // Literal data in code sits between `$d` and the next `$x`.
            let is_data = |at: u64| {
                let last = data_from.iter().take_while(|(o, _)| *o <= at).last();
                last.is_some_and(|(_, data)| *data)
            };
            let sext = |v: u32, bits: u32| i64::from((v << (32 - bits)) as i32 >> (32 - bits));
            for (i, w) in bytes.chunks_exact(4).enumerate() {
                let at = start + 4 * i as u64;
                let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                let delta = match w {
                    _ if is_data(at) => None,
                    // B, BL
                    _ if w & 0x7c00_0000 == 0x1400_0000 => Some(sext(w & 0x03ff_ffff, 26) * 4),
                    // B.cond; CBZ/CBNZ
                    _ if w & 0xff00_0010 == 0x5400_0000 || w & 0x7e00_0000 == 0x3400_0000 => {
                        Some(sext((w >> 5) & 0x7_ffff, 19) * 4)
                    }
                    // TBZ/TBNZ
                    _ if w & 0x7e00_0000 == 0x3600_0000 => Some(sext((w >> 5) & 0x3fff, 14) * 4),
                    // ADR: an address taken
                    _ if w & 0x9f00_0000 == 0x1000_0000 => {
                        Some(sext(((w >> 5) & 0x7_ffff) << 2 | (w >> 29) & 3, 21))
                    }
                    _ => None,
                };
                out.extend(delta.map(|d| [at, 4, at.wrapping_add_signed(d)]));
            }
        }
    }
    out
}

/// Sections (by section index) and global definitions of a relocatable
/// object; `keep_data` selects, by section name, whose contents are read.
pub fn read_relocatable(
    path: &Path,
    keep_data: impl Fn(&str) -> bool,
) -> Result<(BTreeMap<usize, RelSection>, Vec<GlobalDef>)> {
    let data = read(path)?;
    let file = object::File::parse(&*data)
        .with_context(|| format!("{}: not a readable object file", path.display()))?;
    let isa = isa(file.architecture());
    let mut sections = BTreeMap::new();
    let mut contents = HashMap::new();
    for s in file.sections() {
        let bytes = s.data().unwrap_or_default();
        let relocations = section_relocations(&file, &s, bytes, isa);
        let name = s.name().unwrap_or("").to_string();
        let is_text = s.kind() == SectionKind::Text;
        if is_text {
            contents.insert(s.index().0, bytes);
        }
        let sec = RelSection {
            data: if keep_data(&name) {
                bytes.to_vec()
            } else {
                Vec::new()
            },
            is_text,
            size: s.size(),
            name,
            relocations,
            ..RelSection::default()
        };
        sections.insert(s.index().0, sec);
    }
    let symbols = read_symbols(&file, &mut sections);
    cut_functions(
        &mut sections,
        isa,
        symbols.functions,
        symbols.mapping,
        &contents,
    );
    Ok((sections, symbols.globals))
}

/// The relocations of one section, sorted by offset, each resolved to a
/// global name or a place in a section.
fn section_relocations<'d>(
    file: &object::File<'d>,
    s: &object::Section<'d, '_>,
    bytes: &[u8],
    isa: Option<Isa>,
) -> Vec<Reloc> {
    let mut relocations = Vec::new();
    for (offset, r) in s.relocations() {
        // The place a section-relative or local-symbol relocation names:
        // the symbol plus the addend (read from the section for REL
        // formats), plus, for x86 PC-relative fields, the field's width
        // (the addend counts from the field, the CPU from the next
        // instruction: `call .text+0x90-4` calls 0x90).
        let implicit = || {
            let at = bytes.get(offset as usize..offset as usize + 4)?;
            Some(i64::from(i32::from_le_bytes(at.try_into().ok()?)))
        };
        let addend = match r.has_implicit_addend() && r.size() == 32 {
            true => implicit().unwrap_or(0),
            false => r.addend(),
        };
        let pc_relative = matches!(
            r.kind(),
            RelocationKind::Relative | RelocationKind::PltRelative
        );
        let bias = match isa {
            Some(Isa::X86 { .. }) if pc_relative => i64::from(r.size() / 8),
            _ => 0,
        };
        let RelocationTarget::Symbol(si) = r.target() else {
            if let RelocationTarget::Section(i) = r.target() {
                let at = addend.wrapping_add(bias) as u64;
                let target = RelocTarget::Local {
                    section: i.0,
                    offset: at,
                };
                relocations.push(Reloc { offset, target });
            }
            continue;
        };
        let Ok(sym) = file.symbol_by_index(si) else {
            continue;
        };
        let name = sym.name().unwrap_or("");
        let target = match sym.section_index() {
            _ if sym.is_global() && !name.is_empty() => RelocTarget::Global(name.to_string()),
            Some(i) => {
                let at = (sym.address() as i64)
                    .wrapping_add(addend)
                    .wrapping_add(bias);
                RelocTarget::Local {
                    section: i.0,
                    offset: at as u64,
                }
            }
            None => continue,
        };
        relocations.push(Reloc { offset, target });
    }
    relocations.sort_by_key(|r| r.offset);
    relocations
}

/// What the symbol table says of an object: its global definitions, the
/// functions of each code section (address, size) and the AArch64 mapping
/// symbols (`$d` data, `$x` code); each section's sized symbols are added
/// to it.
struct Symbols {
    globals: Vec<GlobalDef>,
    functions: HashMap<usize, Vec<(u64, u64)>>,
    mapping: HashMap<usize, Vec<(u64, bool)>>,
}

fn read_symbols(file: &object::File, sections: &mut BTreeMap<usize, RelSection>) -> Symbols {
    let mut globals = Vec::new();
    let mut functions: HashMap<usize, Vec<(u64, u64)>> = HashMap::new();
    let mut mapping: HashMap<usize, Vec<(u64, bool)>> = HashMap::new();
    for sym in file.symbols() {
        let (Some(i), Ok(name)) = (sym.section_index(), sym.name()) else {
            continue;
        };
        let Some(sec) = sections.get_mut(&i.0) else {
            continue;
        };
        if matches!(sym.kind(), SymbolKind::Text | SymbolKind::Data) && sym.size() > 0 {
            let entry = (name.to_string(), sym.address(), sym.size());
            sec.symbols.push(entry);
        }
        // Functions, and global labels of assembly that gave them no type.
        let global_label = sym.kind() == SymbolKind::Unknown && sym.is_global();
        let function = sym.kind() == SymbolKind::Text || global_label;
        if sec.is_text && function && !name.is_empty() && !is_mapping_symbol(name) {
            functions
                .entry(i.0)
                .or_default()
                .push((sym.address(), sym.size()));
        }
        if sec.is_text && (name.starts_with("$d") || name.starts_with("$x")) {
            let data = name.starts_with("$d");
            mapping.entry(i.0).or_default().push((sym.address(), data));
        }
        if sym.is_global() && !name.is_empty() {
            let (name, section, weak) = (name.to_string(), i.0, sym.is_weak());
            globals.push(GlobalDef {
                name,
                section,
                address: sym.address(),
                weak,
            });
        }
    }
    Symbols {
        globals,
        functions,
        mapping,
    }
}

/// Cuts each code section into its functions and records the references
/// the assembler resolved inside it (calls, jumps and addresses taken that
/// carry no relocation), decoded from the instructions.
fn cut_functions(
    sections: &mut BTreeMap<usize, RelSection>,
    isa: Option<Isa>,
    functions: HashMap<usize, Vec<(u64, u64)>>,
    mut mapping: HashMap<usize, Vec<(u64, bool)>>,
    contents: &HashMap<usize, &[u8]>,
) {
    for (&i, sec) in sections.iter_mut().filter(|(_, s)| s.is_text) {
        // Without a decoder for the instruction set, calls resolved inside
        // a section are invisible: the whole section is one piece.
        let Some(isa) = isa else {
            sec.regions = vec![(0, sec.size)];
            continue;
        };
        sec.regions = code_regions(sec.size, functions.get(&i).map_or(&[][..], |f| &f[..]));
        let mut marks = mapping.remove(&i).unwrap_or_default();
        marks.sort_unstable();
        let code = contents.get(&i).copied().unwrap_or_default();
        let relocated = |at: u64, len: u64| {
            let first = sec.relocations.partition_point(|r| r.offset < at);
            sec.relocations
                .get(first)
                .is_some_and(|r| r.offset < at + len)
        };
        let mut refs: Vec<(u64, u64)> = Vec::new();
        for &region in &sec.regions {
            for [at, len, to] in decode_refs(isa, code, region, &marks) {
                // A field a relocation fills holds no target yet: the
                // relocation is the edge.
                if to < sec.size && !relocated(at, len) {
                    refs.push((at, to));
                }
            }
        }
        refs.sort_unstable();
        refs.dedup();
        sec.local_refs = refs;
    }
}

/// A piece of a [`LinkGraph`]: a function's code (a region of a code
/// section) or a whole data section, as (object, section, start, end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node {
    pub object: usize,
    pub section: usize,
    pub start: u64,
    pub end: u64,
}

impl Node {
    pub fn contains(&self, object: usize, section: usize, offset: u64) -> bool {
        (self.object, self.section) == (object, section) && (self.start..self.end).contains(&offset)
    }
}

/// A symbol's place: (object, section, address).
type Place = (usize, usize, u64);

/// The function-level view of a set of relocatable objects: code sections
/// cut into functions, data sections whole, the references between them
/// (relocations, and the direct calls and jumps the assembler resolved
/// inside a section), and where each global name is defined.
pub struct LinkGraph {
    pub objects: Vec<BTreeMap<usize, RelSection>>,
    defs: HashMap<String, Vec<(Place, bool)>>,
}

impl LinkGraph {
    pub fn load(paths: &[PathBuf], keep_data: impl Fn(&str) -> bool + Copy) -> Result<LinkGraph> {
        let mut graph = LinkGraph {
            objects: Vec::new(),
            defs: HashMap::new(),
        };
        for (oi, path) in paths.iter().enumerate() {
            let (sections, globals) = read_relocatable(path, keep_data)?;
            for g in globals {
                let def = ((oi, g.section, g.address), g.weak);
                graph.defs.entry(g.name).or_default().push(def);
            }
            graph.objects.push(sections);
        }
        Ok(graph)
    }

    /// The node holding `offset` of a section: in code, the smallest region
    /// covering it (none past the end: an empty node there); data sections
    /// are whole.
    pub fn node_at(&self, object: usize, section: usize, offset: u64) -> Node {
        let node = |start, end| Node {
            object,
            section,
            start,
            end,
        };
        let Some(s) = self.objects.get(object).and_then(|o| o.get(&section)) else {
            return node(0, 0);
        };
        if !s.is_text {
            return node(0, s.size);
        }
        let covering = s.regions.iter().filter(|(a, z)| (*a..*z).contains(&offset));
        let smallest = covering.min_by_key(|(a, z)| z - a);
        smallest.map_or(node(offset, offset), |&(a, z)| node(a, z))
    }

    fn is_code(&self, n: &Node) -> bool {
        let section = self.objects.get(n.object).and_then(|o| o.get(&n.section));
        section.is_some_and(|s| s.is_text)
    }

    /// The node defining global `name` as a static link binds it: the
    /// referring object's own definition, else a strong one, else a weak one.
    pub fn resolve(&self, name: &str, from: Option<usize>) -> Option<Node> {
        let c = self.defs.get(name)?;
        let same_object = c.iter().find(|(d, _)| Some(d.0) == from);
        let strong = || c.iter().find(|(_, weak)| !weak);
        let &((o, s, a), _) = same_object.or_else(strong).or(c.first())?;
        Some(self.node_at(o, s, a))
    }

    /// What the code or data of `node` refers to: relocations inside it
    /// and, for code, the targets of its resolved direct branches that lie
    /// outside it. Global names for which `stop` holds are returned apart.
    fn edges<'a>(&'a self, node: Node, stop: &impl Fn(&str) -> bool) -> (Vec<Node>, Vec<&'a str>) {
        let Some(s) = self
            .objects
            .get(node.object)
            .and_then(|o| o.get(&node.section))
        else {
            return (Vec::new(), Vec::new());
        };
        let inside = |at: u64| (node.start..node.end).contains(&at);
        let first = s.relocations.partition_point(|r| r.offset < node.start);
        let relocations = s.relocations[first..]
            .iter()
            .take_while(|r| inside(r.offset));
        let (mut targets, mut stopped) = (Vec::new(), Vec::new());
        for r in relocations {
            match &r.target {
                RelocTarget::Global(g) if stop(g) => stopped.push(g.as_str()),
                RelocTarget::Global(g) => targets.extend(self.resolve(g, Some(node.object))),
                RelocTarget::Local { section, offset } => {
                    targets.push(self.node_at(node.object, *section, *offset))
                }
            }
        }
        let first = s.local_refs.partition_point(|r| r.0 < node.start);
        let refs = s.local_refs[first..].iter().take_while(|r| inside(r.0));
        let out = refs.filter(|r| !inside(r.1));
        targets.extend(out.map(|r| self.node_at(node.object, node.section, r.1)));
        (targets, stopped)
    }

    /// The nodes defining a global name for which `stop` holds, with the
    /// name: a call the assembler resolved inside a section names no
    /// symbol, yet reaches such a definition all the same.
    fn definitions(&self, stop: &impl Fn(&str) -> bool) -> HashMap<Node, &str> {
        let mut found = HashMap::new();
        for (name, defs) in self.defs.iter().filter(|(name, _)| stop(name)) {
            for &((o, s, a), _) in defs {
                found.insert(self.node_at(o, s, a), name.as_str());
            }
        }
        found
    }

    /// Nodes reachable from `root`: from code along everything its own
    /// code refers to (calls, jumps, addresses it takes, data it uses),
    /// from data only to further data. Data is read, not run: a function
    /// pointer stored in a table is no call made by the code that reads the
    /// table, and a section of data shared by several functions' tables
    /// would otherwise lend each function every other's callees. A global
    /// name for which `stop` holds is reported to `seen` with the code node
    /// referring to it (by name, or by a resolved call into its definition)
    /// and not followed; nodes defining such a name are never entered
    /// (except `root` itself).
    pub fn reach(
        &self,
        root: Node,
        stop: impl Fn(&str) -> bool,
        mut seen: impl FnMut(Node, &str),
    ) -> HashSet<Node> {
        let barrier = self.definitions(&stop);
        let mut visited = HashSet::from([root]);
        let mut queue = VecDeque::from([root]);
        while let Some(node) = queue.pop_front() {
            let code = self.is_code(&node);
            let (mut targets, stopped) = self.edges(node, &stop);
            if code {
                stopped.iter().for_each(|g| seen(node, g));
            } else {
                targets.retain(|t| !self.is_code(t));
            }
            for t in targets {
                match barrier.get(&t) {
                    Some(name) if code => seen(node, name),
                    Some(_) => {}
                    None if visited.insert(t) => queue.push_back(t),
                    None => {}
                }
            }
        }
        visited
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;

    /// A fresh scratch directory for one test (shared with other modules'
    /// tests that compile C fixtures).
    pub(crate) fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pqbench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
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
        let _ = std::fs::remove_dir_all(&dir);
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
        let _ = std::fs::remove_dir_all(&dir);
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
        let _ = std::fs::remove_dir_all(&dir);
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
        assert_eq!(code_regions(0x60, &symbols), want);
        assert_eq!(code_regions(0x60, &[]), [(0, 0x60)]);
        assert_eq!(code_regions(0, &[(0, 0)]), []);
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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
