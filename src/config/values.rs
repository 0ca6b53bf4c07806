//! Settings with a range: `deserialize_with` functions for the schema
//! structs, so a value out of range is reported like a wrong type, at the
//! value, saying what the key wants ("`trials` wants an integer ≥ 1, found
//! `0`"). Checks across keys (minimum ≤ maximum) are made in `plan`.
//!
//! The bounds keep later arithmetic safe: `Duration::from_secs_f64` panics
//! on NaN, negative or huge values, limits are shifted into bytes, CPU
//! numbers index a fixed-size `cpu_set_t`, and argument indexes index the
//! profiling wrapper's six saved arguments.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, Unexpected, Visitor};

/// Longest timeout or budget: 10^7 s (about 115 days).
pub(crate) const MAX_SECONDS: f64 = 1e7;
/// Largest memory or file limit: 2^24 MiB (16 TiB), so the byte count fits.
pub(crate) const MAX_MIB: u64 = 1 << 24;
/// `cpu_set_t` holds CPUs 0..1023.
pub(crate) const MAX_CPU: u64 = 1023;
/// The profiling wrapper passes on six integer arguments (0..5).
pub(crate) const MAX_ARG_INDEX: u64 = 5;

struct Int {
    min: u64,
    max: u64,
}

impl<'de> Visitor<'de> for Int {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        // A type's own limit is no rule worth stating.
        if self.max >= u64::from(u32::MAX) {
            write!(f, "an integer ≥ {}", self.min)
        } else {
            write!(f, "an integer from {} to {}", self.min, self.max)
        }
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<u64, E> {
        if v < self.min {
            return Err(E::invalid_value(Unexpected::Unsigned(v), &self));
        }
        if v > self.max {
            // Beyond the type's own limit too: the whole range is stated.
            let range = Range(self.min, self.max);
            return Err(E::invalid_value(Unexpected::Unsigned(v), &range));
        }
        Ok(v)
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<u64, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
        }
    }
}

/// "an integer from 1 to 4294967295": what a value above the maximum is
/// told.
struct Range(u64, u64);

impl serde::de::Expected for Range {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an integer from {} to {}", self.0, self.1)
    }
}

fn int<'de, D: Deserializer<'de>>(d: D, min: u64, max: u64) -> Result<u64, D::Error> {
    d.deserialize_u64(Int { min, max })
}

/// A count that must be at least 1 (trials, records, iterations).
pub(crate) fn count_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    int(d, 1, u32::MAX.into()).map(|v| Some(v as u32))
}

/// `count_u32` for a field with a default of its own.
pub(crate) fn count_u32_or_default<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    int(d, 1, u32::MAX.into()).map(|v| v as u32)
}

/// A count that must be at least 1, 64-bit.
pub(crate) fn count_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    int(d, 1, u64::MAX).map(Some)
}

/// A memory or file-size limit in MiB.
pub(crate) fn mib<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    int(d, 1, MAX_MIB).map(Some)
}

/// The index of a C function argument the profiling wrapper reads.
pub(crate) fn arg_index<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    int(d, 0, MAX_ARG_INDEX).map(|v| Some(v as u32))
}

struct Cpu(usize);

impl<'de> Deserialize<'de> for Cpu {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        int(d, 0, MAX_CPU).map(|v| Cpu(v as usize))
    }
}

/// A list of CPU numbers.
pub(crate) fn cpus<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
    let list = Vec::<Cpu>::deserialize(d)?;
    Ok(Some(list.into_iter().map(|c| c.0).collect()))
}

struct Seconds;

impl<'de> Visitor<'de> for Seconds {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a number of seconds > 0 (at most {MAX_SECONDS:.0})")
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<f64, E> {
        // Written so that NaN fails too.
        if v > 0.0 && v <= MAX_SECONDS {
            Ok(v)
        } else {
            Err(E::invalid_value(Unexpected::Float(v), &self))
        }
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<f64, E> {
        if v > 0 && (v as f64) <= MAX_SECONDS {
            Ok(v as f64)
        } else {
            Err(E::invalid_value(Unexpected::Signed(v), &self))
        }
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<f64, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

/// A duration in seconds: finite, > 0 and at most `MAX_SECONDS`.
pub(crate) fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    d.deserialize_f64(Seconds).map(Some)
}

/// `seconds` for a field with a default of its own.
pub(crate) fn seconds_or_default<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    d.deserialize_f64(Seconds)
}
