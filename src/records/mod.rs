//! Run-level records: `build.json` (per instance: variant, flag profile and
//! fallback, KAT status, library path and sha256, ELF load bytes, KAT log
//! and its sha256). Paths inside records are relative to the run directory,
//! so a published dataset carries no machine paths.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::engine::Cx;
use crate::fsutil;
use crate::stages::InstanceResults;

pub mod analysis;
pub mod campaign;
pub mod operation;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    pub algorithm: String,
    pub label: String,
    pub implementation: String,
    pub kind: String,
    pub api: String,
    /// The flag profile whose library later stages use.
    pub profile: Option<String>,
    /// Every profile tried, with its build and KAT outcome.
    pub attempts: Vec<AttemptRecord>,
    pub kat_status: String,
    pub kat_detail: Option<String>,
    pub library: Option<String>,
    pub library_sha256: Option<String>,
    pub load_bytes: Option<u64>,
    pub kat_log: Option<String>,
    pub kat_log_sha256: Option<String>,
    pub kat_records: u32,
    pub defines: Vec<String>,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub profile: String,
    pub built: bool,
    pub kat_status: Option<String>,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildJson {
    pub campaign: String,
    pub system: String,
    pub written: String,
    pub compiler: crate::toolchain::Compiler,
    pub support_version: String,
    pub flag_profiles: Vec<crate::plan::FlagProfile>,
    pub instances: Vec<BuildRecord>,
}

pub fn write_build_json(
    cx: &Cx,
    results: &BTreeMap<String, InstanceResults>,
    written: &str,
) -> Result<()> {
    let plan = cx.plan;
    let mut instances = Vec::new();
    for inst in &plan.instances {
        let r = &results[&inst.key()];
        let mut rec = BuildRecord {
            algorithm: inst.algorithm.clone(),
            label: inst.label.clone(),
            implementation: inst.implementation.clone(),
            kind: inst.kind.as_str().into(),
            api: inst.api.as_str().into(),
            profile: None,
            attempts: Vec::new(),
            kat_status: "NOT RUN".into(),
            kat_detail: None,
            library: None,
            library_sha256: None,
            load_bytes: None,
            kat_log: None,
            kat_log_sha256: None,
            kat_records: inst.kat_records,
            defines: inst.defines.clone(),
            sources: inst.sources.iter().map(|s| s.display.clone()).collect(),
        };
        if let Some(b) = &r.build {
            rec.attempts = b
                .attempts
                .iter()
                .map(|a| AttemptRecord {
                    profile: a.profile.clone(),
                    built: a.ok,
                    kat_status: None,
                    detail: (!a.ok).then(|| a.log.lines().take(3).collect::<Vec<_>>().join(" / ")),
                })
                .collect();
            if let Some(a) = b.built() {
                rec.profile = Some(a.profile.clone());
                rec.library_sha256 = a.library_sha256.clone();
                rec.load_bytes = a.load_bytes;
            }
        }
        if let Some(k) = &r.kat {
            for a in &k.attempts {
                match rec.attempts.iter_mut().find(|x| x.profile == a.profile) {
                    Some(x) => {
                        x.kat_status = Some(a.status.to_string());
                        x.detail = a.detail.clone().or(x.detail.take());
                    }
                    None => rec.attempts.push(AttemptRecord {
                        profile: a.profile.clone(),
                        built: a.library_sha256.is_some(),
                        kat_status: Some(a.status.to_string()),
                        detail: a.detail.clone(),
                    }),
                }
            }
            let f = k.final_attempt();
            rec.profile = Some(f.profile.clone());
            rec.kat_status = f.status.to_string();
            rec.kat_detail = f.detail.clone();
            rec.library_sha256 = f.library_sha256.clone();
            rec.load_bytes = f.load_bytes;
            crate::stages::kat::write_evidence(cx, inst, f)?;
            rec.kat_log = Some(format!("kat/{}/{}.log", inst.algorithm, inst.label));
            rec.kat_log_sha256 = Some(f.log_sha256.clone());
        }
        if let Some(sha) = &rec.library_sha256 {
            let rel = format!("lib/{}/{}.so", inst.algorithm, inst.label);
            let blob = cx
                .cache
                .existing_blob(sha)
                .context("library missing from the cache")?;
            let dest = plan.output_dir.join(&rel);
            if fsutil::sha256_file(&dest).ok().as_deref() != Some(sha.as_str()) {
                fsutil::copy_atomic(&blob, &dest)?;
            }
            rec.library = Some(rel);
        }
        instances.push(rec);
    }
    let json = BuildJson {
        campaign: plan.campaign.clone(),
        system: plan.system.clone(),
        written: written.to_string(),
        compiler: cx.compiler.clone(),
        support_version: cx.support.version.clone(),
        flag_profiles: plan.flag_profiles.clone(),
        instances,
    };
    fsutil::write_json(&plan.output_dir.join("build.json"), &json)
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SS`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc_from_unix(secs)
}

pub fn utc_from_unix(secs: i64) -> String {
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
