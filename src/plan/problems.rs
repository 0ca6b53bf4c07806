//! The problems resolution finds: it goes on after each one so a user sees
//! every problem of a campaign in one run.

use std::collections::HashSet;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::config::{self, Loaded};
use crate::error::{ConfigError, Error};

/// Problems in the order found, each once (a pattern shared by several
/// parameter sets would otherwise repeat its error per set).
#[derive(Debug, Default)]
pub struct Problems {
    list: Vec<ConfigError>,
    seen: HashSet<String>,
}

impl Problems {
    pub(crate) fn push(&mut self, e: ConfigError) {
        if self.seen.insert(e.to_string()) {
            self.list.push(e);
        }
    }

    pub(crate) fn extend(&mut self, errors: impl IntoIterator<Item = ConfigError>) {
        for e in errors {
            self.push(e);
        }
    }

    /// Records `r`'s error, if any, and passes its value on.
    pub(crate) fn take<T>(&mut self, r: Result<T, ConfigError>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Reads a TOML file, recording its problems; see `config::read`.
    pub(crate) fn read<T: DeserializeOwned>(&mut self, path: &Path) -> Option<Loaded<T>> {
        let mut found = Vec::new();
        let loaded = config::read(path, &mut found);
        self.extend(found);
        loaded
    }

    pub(crate) fn into_vec(self) -> Vec<ConfigError> {
        self.list
    }

    /// `value` when nothing was found, else every problem.
    pub(crate) fn finish<T>(self, value: T) -> Result<T, Error> {
        if self.list.is_empty() {
            Ok(value)
        } else {
            Err(Error::from(self.list))
        }
    }
}

impl From<Problems> for Error {
    fn from(p: Problems) -> Error {
        Error::from(p.list)
    }
}
