//! The branches, calls and address computations the assembler resolved
//! inside a code section (no relocation records them), decoded from the
//! instructions, and the function pieces a code section is cut into.

use iced_x86::{Decoder, DecoderOptions, OpKind};
use object::Architecture;

/// Instruction sets whose direct branches pqbench decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Isa {
    X86 { bitness: u32 },
    Aarch64,
}

pub(super) fn isa(arch: Architecture) -> Option<Isa> {
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
pub(crate) fn code_regions(size: u64, functions: &[(u64, u64)]) -> Vec<(u64, u64)> {
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
pub(super) fn is_mapping_symbol(name: &str) -> bool {
    name.starts_with('$')
}

/// Direct branch, call and PC-relative address targets in `code` (the
/// bytes of `region`), as (instruction offset, instruction length, target).
pub(super) fn decode_refs(
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
