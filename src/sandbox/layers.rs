//! Which isolation layers a job gets on this machine, and why not when one
//! is missing. Each layer is set up by the launcher and reported; a layer
//! the kernel or machine does not offer degrades the isolation, it never
//! stops a run.

use std::sync::OnceLock;
use std::time::Duration;

use super::layer_name as name;
use super::{Limits, Spec};

pub use crate::records::host::Layer;

impl Layer {
    pub(crate) fn on(name: &str, detail: impl Into<String>) -> Layer {
        Layer {
            name: name.to_string(),
            active: true,
            detail: detail.into(),
        }
    }

    pub(crate) fn off(name: &str, detail: impl Into<String>) -> Layer {
        Layer {
            name: name.to_string(),
            active: false,
            detail: detail.into(),
        }
    }
}

pub use crate::records::host::LayerReport;

/// The layers a submission process gets here, found by starting the
/// launcher once in probe mode (it sets every layer up, reports, and runs
/// nothing). Probed once per pqbench process.
pub fn layers() -> LayerReport {
    static PROBED: OnceLock<LayerReport> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

fn probe() -> LayerReport {
    let failed = |why: String| LayerReport {
        layers: vec![Layer::off(name::LAUNCHER, why)],
    };
    let dir = match crate::fsutil::scratch::folder("probe-") {
        Ok(d) => d,
        Err(e) => return failed(format!("no scratch directory for the probe: {e}")),
    };
    // The probe runs nothing; the program only has to exist.
    let mut spec = Spec::submission("/bin/sh", Vec::new(), dir.path());
    spec.timeout = Duration::from_secs(20);
    spec.limits = Limits::from_plan(&crate::plan::Limits {
        memory_mib: 4096,
        cpu_seconds: 3600,
        file_mib: 1024,
    });
    match super::spawn::probe(&spec) {
        Ok(layers) => LayerReport { layers },
        Err(e) => failed(format!("probe failed: {e}")),
    }
}
