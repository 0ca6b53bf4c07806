//! A relocatable object as the survey's reachability sees it: sections,
//! relocations resolved to places or global names, functions and globals.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::decode::{code_regions, decode_refs, is_mapping_symbol, isa, Isa};
use super::read;
use anyhow::{Context, Result};
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationKind, RelocationTarget, SectionKind, SymbolKind,
};

/// What a relocation points at: a place in a section of the same object
/// (a local or section symbol plus addend) or a global symbol, to be
/// resolved by name at link time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RelocTarget {
    Local { section: usize, offset: u64 },
    Global(String),
}

/// A relocation at `offset` in its section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reloc {
    pub offset: u64,
    pub target: RelocTarget,
}

/// One section of a relocatable object as a reachability analysis sees it.
#[derive(Clone, Debug, Default)]
pub(crate) struct RelSection {
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
    pub(crate) fn symbol_at(&self, offset: u64) -> Option<&str> {
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
pub(crate) struct GlobalDef {
    pub name: String,
    pub section: usize,
    pub address: u64,
    pub weak: bool,
}

/// Sections (by section index) and global definitions of a relocatable
/// object; `keep_data` selects, by section name, whose contents are read.
pub(crate) fn read_relocatable(
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
