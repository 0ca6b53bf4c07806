//! The published schema: every type a dataset's files hold, one module per
//! file or record folder (`campaign`, `operation`, `count`, `ct`, `scan`,
//! …), the names of those files and folders (`layout`) and the dataset as
//! a whole, loaded (`dataset`). This module itself holds `build.json`'s
//! types (per instance: variant, flag profile and fallback, KAT status,
//! library path and sha256, ELF load bytes, KAT log and its sha256). Paths
//! inside records are relative to the dataset, so a published dataset
//! carries no machine paths.

use serde::{Deserialize, Serialize};

pub mod analysis;
pub mod campaign;
pub mod count;
pub(crate) mod counter;
pub mod ct;
pub mod dataset;
pub(crate) mod diff;
pub mod differential;
pub(crate) mod evidence;
pub mod folder;
pub(crate) mod host;
pub mod kat;
pub(crate) mod kinds;
pub(crate) mod layout;
pub mod leak;
pub mod lock;
pub mod measure;
pub mod operation;
pub mod process;
pub mod scan;
pub mod settings;
pub(crate) mod system;
#[cfg(test)]
pub(crate) mod testutil;
pub(crate) mod toolchain;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    pub algorithm: String,
    pub label: String,
    pub implementation: String,
    pub kind: kinds::Kind,
    pub api: kinds::ApiFamily,
    /// The flag profile whose library later stages use.
    pub profile: Option<String>,
    /// Every profile tried, with its build and KAT outcome.
    pub attempts: Vec<AttemptRecord>,
    pub kat_status: kat::KatStatus,
    pub kat_detail: Option<String>,
    pub library: Option<String>,
    pub library_sha256: Option<String>,
    pub load_bytes: Option<u64>,
    pub kat_log: Option<String>,
    pub kat_log_sha256: Option<String>,
    pub kat_records: u32,
    pub defines: Vec<String>,
    pub sources: Vec<String>,
    /// Where the KAT reference came from: `submitted`, `published`
    /// (a metadata digest), `blessed` (pqbench's own earlier output) or
    /// `built-in` (the ICCS baseline's self-check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_reference: Option<String>,
    /// The records that reference's digest covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kat_reference_records: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub profile: String,
    pub built: bool,
    pub kat_status: Option<kat::KatStatus>,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildJson {
    pub campaign: String,
    pub system: String,
    pub written: String,
    pub compiler: toolchain::Compiler,
    pub support_version: String,
    pub flag_profiles: Vec<settings::FlagProfile>,
    pub instances: Vec<BuildRecord>,
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SS`.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc_from_unix(secs)
}

/// Current UTC time with milliseconds, `YYYY-MM-DDTHH:MM:SS.mmm`: the
/// order of measurements taken within one second.
pub(crate) fn utc_now_millis() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}.{:03}",
        utc_from_unix(now.as_secs() as i64),
        now.subsec_millis()
    )
}

pub(crate) fn utc_from_unix(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (proleptic Gregorian), valid for any day count here.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formatting_matches_known_instants() {
        assert_eq!(super::utc_from_unix(0), "1970-01-01T00:00:00");
        assert_eq!(super::utc_from_unix(1_758_794_541), "2025-09-25T10:02:21");
        assert_eq!(super::utc_from_unix(951_782_400), "2000-02-29T00:00:00");
    }
}
