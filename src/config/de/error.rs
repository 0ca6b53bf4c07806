//! Errors of the schema deserializer, and their wording: which key, what
//! it wants, what it found, and the fix.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Expected, Unexpected};

use super::Issue;
use crate::config::tree::Val;

#[derive(Debug)]
pub(crate) struct DeError {
    pub(super) kind: Kind,
    pub(super) at: Option<At>,
    /// Raised while building a stand-in: a consequence of an error already
    /// reported, never shown.
    pub(super) stand_in: bool,
}

#[derive(Debug, Clone)]
pub(super) struct At {
    pub(super) node: usize,
    pub(super) span: Range<usize>,
    /// "`trials`", "an item of `sources`".
    pub(super) what: String,
    /// " in [timing]", " in [[implementation]]", "" at the top level.
    pub(super) place: String,
}

#[derive(Debug)]
pub(super) enum Kind {
    Type {
        found: String,
        wanted: String,
    },
    Value {
        found: String,
        wanted: String,
    },
    Length {
        len: usize,
        wanted: String,
    },
    Variant {
        found: String,
        choices: &'static [&'static str],
    },
    Missing(&'static str),
    Custom(String),
}

impl DeError {
    pub(super) fn new(kind: Kind) -> Self {
        DeError {
            kind,
            at: None,
            stand_in: false,
        }
    }

    pub(super) fn stand_in(mut self) -> Self {
        self.stand_in = true;
        self
    }

    pub(super) fn issue(&self) -> Issue {
        let (what, place, span) = match &self.at {
            Some(at) => (at.what.as_str(), at.place.as_str(), at.span.clone()),
            None => ("the file", "", 0..0),
        };
        let (message, help) = match &self.kind {
            Kind::Type { found, wanted } | Kind::Value { found, wanted } => (
                format!("{what} wants {wanted}, found {found}"),
                format!("change the value to {wanted}"),
            ),
            Kind::Length { len, wanted } => (
                format!("{what} wants {wanted}, found {len} items"),
                "change the number of items".to_string(),
            ),
            Kind::Variant { found, choices } => (
                format!("{what} wants one of {}, found `{found}`", quoted(choices)),
                format!("use one of: {}", choices.join(", ")),
            ),
            Kind::Missing(field) if place.is_empty() => (
                format!("missing key `{field}`"),
                format!("add `{field} = …` at the top of the file"),
            ),
            Kind::Missing(field) => (
                format!("missing key `{field}`{place}"),
                format!("add `{field} = …` to this table"),
            ),
            Kind::Custom(msg) => (format!("{what}: {msg}"), "fix the value".to_string()),
        };
        Issue {
            message,
            span,
            help,
        }
    }
}

pub(super) fn quoted(choices: &[&str]) -> String {
    let q: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
    q.join(", ")
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.issue().message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::new(Kind::Custom(msg.to_string()))
    }
    fn invalid_type(unexp: Unexpected, exp: &dyn Expected) -> Self {
        DeError::new(Kind::Type {
            found: kind_of(&unexp),
            wanted: plain(&exp.to_string()),
        })
    }
    fn invalid_value(unexp: Unexpected, exp: &dyn Expected) -> Self {
        DeError::new(Kind::Value {
            found: value_of(&unexp),
            wanted: plain(&exp.to_string()),
        })
    }
    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        DeError::new(Kind::Length {
            len,
            wanted: plain(&exp.to_string()),
        })
    }
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        DeError::new(Kind::Variant {
            found: variant.to_string(),
            choices: expected,
        })
    }
    fn missing_field(field: &'static str) -> Self {
        DeError::new(Kind::Missing(field))
    }
    fn duplicate_field(field: &'static str) -> Self {
        DeError::new(Kind::Custom(format!("`{field}` is given twice")))
    }
}

/// What serde's "expected" texts mean in TOML words.
pub(super) fn plain(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        "a sequence" => "an array",
        "a map" => "a table",
        "a borrowed string" => "a string",
        s if s.starts_with("struct ") => "a table",
        s => s,
    }
    .to_string()
}

pub(super) fn kind_of(u: &Unexpected) -> String {
    match u {
        Unexpected::Bool(_) => "a boolean",
        Unexpected::Unsigned(_) | Unexpected::Signed(_) => "an integer",
        Unexpected::Float(_) => "a float",
        Unexpected::Char(_) | Unexpected::Str(_) => "a string",
        Unexpected::Seq => "an array",
        Unexpected::Map => "a table",
        Unexpected::Unit => "nothing",
        Unexpected::Other(s) => s,
        _ => "a value of another type",
    }
    .to_string()
}

pub(super) fn value_of(u: &Unexpected) -> String {
    match u {
        Unexpected::Unsigned(n) => format!("`{n}`"),
        Unexpected::Signed(n) => format!("`{n}`"),
        Unexpected::Float(f) if f.is_nan() => "`nan`".into(),
        Unexpected::Float(f) if f.is_infinite() => {
            format!("`{}inf`", if *f < 0.0 { "-" } else { "" })
        }
        Unexpected::Float(f) => format!("`{f}`"),
        Unexpected::Str(s) => format!("`\"{s}\"`"),
        Unexpected::Bool(b) => format!("`{b}`"),
        other => kind_of(other),
    }
}

pub(super) fn describe(v: &Val) -> &'static str {
    match v {
        Val::Str(_) => "a string",
        Val::Int(_) => "an integer",
        Val::Float(_) => "a float",
        Val::Bool(_) => "a boolean",
        Val::Datetime(_) => "a date-time",
        Val::Array(_) => "an array",
        Val::Table(_) => "a table",
    }
}
