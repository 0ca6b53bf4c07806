//! `reuse-measurements-from`: a campaign may take another campaign's
//! measurements, explicitly and only on the same system. Measurements
//! otherwise belong to the campaign that made them (their manifests name
//! it), so one campaign's `--remeasure` never changes another's figures.

use toml::Spanned;

use super::names::{self, NAME_RULE};
use super::problems::Problems;
use super::project::Project;
use crate::config::campaign::RawCampaign;
use crate::config::{self, Loaded};

/// The campaign named by `reuse-measurements-from`, checked: a campaign
/// name, not this campaign, a campaign that exists and runs on `system`.
pub(super) fn reuse_from(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    campaign: &str,
    system: &str,
    p: &mut Problems,
) -> Option<String> {
    let from: &Spanned<String> = raw.value.reuse_measurements_from.as_ref()?;
    let name = from.get_ref();
    if let Err(why) = names::check_name(name) {
        p.push(
            raw.error_at(from, format!("campaign name `{name}` {why}"))
                .help(NAME_RULE),
        );
        return None;
    }
    if name == campaign {
        p.push(
            raw.error_at(from, "a campaign cannot take measurements from itself")
                .help("name another campaign, or remove `reuse-measurements-from`"),
        );
        return None;
    }
    let file = project.campaign_file(name);
    if !file.is_file() {
        p.push(
            raw.error_at(from, format!("no campaign named `{name}`"))
                .help(format!("create campaigns/{name}.toml or fix the name")),
        );
        return None;
    }
    let mut theirs = Vec::new();
    let Some(other) = config::read::<RawCampaign>(&file, &mut theirs) else {
        p.push(
            raw.error_at(from, format!("campaign `{name}` cannot be read"))
                .help(format!("run `pqbench plan {name}` to see its problems")),
        );
        return None;
    };
    let their_system = other.value.system.get_ref();
    if their_system != system {
        p.push(
            raw.error_at(
                from,
                format!(
                    "campaign `{name}` runs on system `{their_system}`, this one on `{system}`"
                ),
            )
            .help("measurements are shared only between campaigns of one system"),
        );
        return None;
    }
    Some(name.clone())
}
