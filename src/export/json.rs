//! JSON: the report value itself, pretty-printed, ending in a newline.
//! Every report type deserialises from it again.

use anyhow::{Context, Result};
use serde::Serialize;

use super::Exporter;

#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl<R: Serialize + ?Sized> Exporter<R> for Json {
    fn export(&self, report: &R) -> Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(report).context("serialising the report")?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
