//! What a run publishes, assembled by the stages themselves: each stage
//! writes its own record files and fills its part of the dataset's shared
//! files (`build.json`, `sizes.json`, `survey.json`), through the hooks of
//! [`Stage`](super::Stage). The engine walks the registry; it names no
//! stage and no record beyond the shared files of the layout.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::context::Cx;
use crate::fsutil;
use crate::records::analysis::{SizesJson, SurveyJson};
use crate::records::BuildRecord;

/// The evidence of a run being assembled.
pub struct Publication<'a> {
    pub cx: &'a Cx<'a>,
    /// `build.json`'s instances, in plan order; the last one is the
    /// instance being published.
    pub instances: Vec<BuildRecord>,
    /// `sizes.json`, when a stage that fills it runs in the campaign.
    pub sizes: Option<SizesJson>,
    /// `survey.json`, likewise.
    pub survey: Option<SurveyJson>,
}

impl<'a> Publication<'a> {
    pub fn new(cx: &'a Cx<'a>) -> Publication<'a> {
        Publication {
            cx,
            instances: Vec::new(),
            sizes: None,
            survey: None,
        }
    }

    /// The build record of the instance being published.
    pub fn build(&mut self) -> Result<&mut BuildRecord> {
        self.instances
            .last_mut()
            .context("a stage published before any instance")
    }

    /// Where `rel` (a dataset path from `records::layout`) lives in this
    /// run's dataset.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.cx.plan.output_dir.join(rel)
    }

    /// Writes one record file of the dataset (atomically; unchanged bytes
    /// are left alone).
    pub fn write<T: Serialize>(&self, rel: &str, value: &T) -> Result<()> {
        fsutil::write_json(&self.path(rel), value)
    }
}
