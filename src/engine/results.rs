//! Typed result slots: what the stages so far produced for one instance,
//! looked up by stage type so a reader gets the stage's own output type.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::Stage;

type Slot = Arc<dyn Any + Send + Sync>;

/// What the stages produced for one instance (or, for campaign stages,
/// for the whole campaign).
#[derive(Clone, Default)]
pub struct Results {
    slots: BTreeMap<&'static str, Slot>,
    keys: BTreeMap<&'static str, StageKey>,
}

/// The cache key a stage's result was found or stored under, and the
/// digest of that result: what the lock file records per stage.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageKey {
    pub key: String,
    pub result_sha256: String,
    /// The campaign that made the result, when this one took it from
    /// another (`<campaign>/<system>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lent_by: Option<String>,
}

impl std::fmt::Debug for Results {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.slots.keys()).finish()
    }
}

impl Results {
    pub fn get<S: Stage>(&self) -> Option<&S::Output> {
        self.slots.get(S::NAME)?.downcast_ref()
    }

    pub(crate) fn put_slot(&mut self, stage: &'static str, slot: Slot) {
        self.slots.insert(stage, slot);
    }

    pub(crate) fn put_key(&mut self, stage: &'static str, key: StageKey) {
        self.keys.insert(stage, key);
    }

    /// Key and result digest of every stage that produced a result.
    pub(crate) fn keys(&self) -> &BTreeMap<&'static str, StageKey> {
        &self.keys
    }

    /// The campaign whose result of `stage` this run took, if it took one.
    pub(crate) fn lent_by(&self, stage: &str) -> Option<String> {
        self.keys.get(stage).and_then(|k| k.lent_by.clone())
    }
}

/// Results of every instance, by instance key (`<id>/<label>`), plus the
/// campaign stages' results.
#[derive(Clone, Debug, Default)]
pub struct AllResults {
    pub instances: BTreeMap<String, Results>,
    pub campaign: Results,
}

impl AllResults {
    /// The results of `key`; an instance nothing ran for has empty results.
    pub(crate) fn of(&self, key: &str) -> &Results {
        static EMPTY: std::sync::OnceLock<Results> = std::sync::OnceLock::new();
        self.instances
            .get(key)
            .unwrap_or_else(|| EMPTY.get_or_init(Results::default))
    }
}
