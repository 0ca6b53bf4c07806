//! What a submission is: its kind and the API family it exposes.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Sign,
    Kem,
    /// NGCC key exchange (`kex_*`), timed whole and step by step.
    Kex,
    /// NGCC hash function (`CryptHash`), timed at eight message sizes.
    Hash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApiFamily {
    Ngcc,
    Nist,
}
