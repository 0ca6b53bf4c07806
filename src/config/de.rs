//! Deserializes the schema structs from the spanned tree and reports every
//! schema problem of a file at once.
//!
//! - Unknown keys: serde hands `deserialize_struct` the struct's field names,
//!   so a key that is not one of them is recorded (with the key's span and
//!   the allowed keys) and skipped instead of failing; one pass finds all.
//! - Wrong types and out-of-range values: serde stops at the first error, so
//!   after each one the offending value is replaced by a stand-in that
//!   deserializes as whatever is asked (a missing key gets one too) and the
//!   pass repeats, until the file deserializes or nothing new is learnt.
//!   The value is used only when nothing but unknown keys was found.
//!
//! Messages name the key and say what it wants and what it found
//! ("`trials` wants an integer ≥ 1, found a string").

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Range;

use serde::de::value::{BorrowedStrDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Expected, IntoDeserializer, Unexpected};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_spanned::__unstable as spanned;

use super::tree::{Entry, Node, Val};

/// A schema problem: what, where (byte span, `0..0` for the whole file) and
/// the fix.
#[derive(Debug, Clone)]
pub struct Issue {
    pub message: String,
    pub span: Range<usize>,
    pub help: String,
}

/// The result of deserializing: the value when the only problems (if any)
/// were unknown keys, which are skipped.
pub struct Outcome<T> {
    pub value: Option<T>,
    pub issues: Vec<Issue>,
}

/// More passes than any hand-written file has wrong values.
const MAX_PASSES: usize = 64;

pub fn from_tree<T: DeserializeOwned>(tree: &Node) -> Outcome<T> {
    let mut cx = Cx::default();
    let mut errors: Vec<Issue> = Vec::new();
    let mut value = None;
    for _ in 0..MAX_PASSES {
        match T::deserialize(De::root(tree, &cx)) {
            Ok(v) => {
                value = errors.is_empty().then_some(v);
                break;
            }
            Err(e) if e.stand_in => break,
            Err(e) => {
                errors.push(e.issue());
                let Some(at) = &e.at else { break };
                let learnt = match e.kind {
                    Kind::Missing(field) => {
                        let list = cx.inject.entry(at.node).or_default();
                        let new = !list.contains(&field);
                        list.push(field);
                        new
                    }
                    _ => cx.stand_in.insert(at.node),
                };
                if !learnt {
                    break;
                }
            }
        }
    }
    let mut issues: Vec<Issue> = cx.unknown.into_inner().into_values().collect();
    issues.extend(errors);
    issues.sort_by_key(|i| i.span.start);
    Outcome { value, issues }
}

#[derive(Default)]
struct Cx {
    /// Unknown keys by the start of their span (each pass finds them again).
    unknown: RefCell<BTreeMap<usize, Issue>>,
    /// Values already reported, deserialized as stand-ins from now on.
    stand_in: HashSet<usize>,
    /// Tables whose missing keys were reported, with those keys.
    inject: HashMap<usize, Vec<&'static str>>,
}

#[derive(Debug)]
pub struct DeError {
    kind: Kind,
    at: Option<At>,
    /// Raised while building a stand-in: a consequence of an error already
    /// reported, never shown.
    stand_in: bool,
}

#[derive(Debug, Clone)]
struct At {
    node: usize,
    span: Range<usize>,
    /// "`trials`", "an item of `sources`".
    what: String,
    /// " in [timing]", " in [[implementation]]", "" at the top level.
    place: String,
}

#[derive(Debug)]
enum Kind {
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
    fn new(kind: Kind) -> Self {
        DeError {
            kind,
            at: None,
            stand_in: false,
        }
    }

    fn stand_in(mut self) -> Self {
        self.stand_in = true;
        self
    }

    fn issue(&self) -> Issue {
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

fn quoted(choices: &[&str]) -> String {
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
fn plain(expected: &str) -> String {
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

fn kind_of(u: &Unexpected) -> String {
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

fn value_of(u: &Unexpected) -> String {
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

fn describe(v: &Val) -> &'static str {
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

/// The deserializer of one node; `path` is the keys leading to it and
/// `item` says it is an element of the array at that path.
#[derive(Clone)]
struct De<'a> {
    node: &'a Node,
    cx: &'a Cx,
    path: Vec<&'a str>,
    item: bool,
}

impl<'a> De<'a> {
    fn root(node: &'a Node, cx: &'a Cx) -> Self {
        De {
            node,
            cx,
            path: Vec::new(),
            item: false,
        }
    }

    fn child(&self, key: &'a str, node: &'a Node) -> Self {
        let mut path = self.path.clone();
        path.push(key);
        De {
            node,
            cx: self.cx,
            path,
            item: false,
        }
    }

    fn element(&self, node: &'a Node) -> Self {
        De {
            node,
            cx: self.cx,
            path: self.path.clone(),
            item: true,
        }
    }

    fn what(&self) -> String {
        match (self.path.last(), self.item) {
            (None, _) => "the file".into(),
            (Some(k), false) => format!("`{k}`"),
            (Some(k), true) => format!("an item of `{k}`"),
        }
    }

    /// Where a key of this node (as a table) is.
    fn place(&self) -> String {
        if self.path.is_empty() {
            return String::new();
        }
        let p = self.path.join(".");
        if self.item {
            format!(" in [[{p}]]")
        } else {
            format!(" in [{p}]")
        }
    }

    /// Positions an error at this node unless a deeper node already did.
    fn locate(&self, mut e: DeError) -> DeError {
        if e.at.is_none() {
            e.at = Some(At {
                node: self.node.id(),
                span: self.node.span.clone(),
                what: self.what(),
                place: self.place(),
            });
        }
        e
    }

    fn replaced(&self) -> bool {
        self.cx.stand_in.contains(&self.node.id())
    }

    fn stand_in(&self) -> StandIn {
        StandIn(self.node.span.clone())
    }

    fn unknown_key(&self, e: &Entry, allowed: &[&str]) {
        let issue = Issue {
            message: format!("unknown key `{}`{}", e.key, self.place()),
            span: e.key_span.clone(),
            help: format!("remove it or use one of: {}", allowed.join(", ")),
        };
        self.cx.unknown.borrow_mut().insert(e.key_span.start, issue);
    }
}

/// Methods that only need the node's own type go through
/// `deserialize_any`, unless the node was replaced by a stand-in.
macro_rules! checked {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
            if self.replaced() {
                return self.stand_in().$method(v);
            }
            self.deserialize_any(v)
        }
    )*};
}

impl<'a> de::Deserializer<'a> for De<'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        if self.replaced() {
            return self.stand_in().deserialize_any(v);
        }
        let r = match &self.node.val {
            Val::Str(s) | Val::Datetime(s) => v.visit_borrowed_str(s),
            Val::Int(i) => v.visit_i64(*i),
            Val::Float(f) => v.visit_f64(*f),
            Val::Bool(b) => v.visit_bool(*b),
            Val::Array(items) => v.visit_seq(Seq {
                items: items.iter(),
                parent: self.clone(),
            }),
            Val::Table(entries) => v.visit_map(Map::new(&self, entries, None)),
        };
        r.map_err(|e| self.locate(e))
    }

    checked! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32
        deserialize_f64 deserialize_char deserialize_str deserialize_string deserialize_bytes
        deserialize_byte_buf deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier
    }

    fn deserialize_option<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        if self.replaced() {
            return self.stand_in().deserialize_option(v);
        }
        // A key that is present is `Some`: TOML has no null.
        let located = self.clone();
        v.visit_some(self).map_err(|e| located.locate(e))
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        let located = self.clone();
        v.visit_newtype_struct(self).map_err(|e| located.locate(e))
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        if spanned::is_spanned(name, fields) {
            let span = self.node.span.clone();
            return v.visit_map(SpannedMap::new(span, self));
        }
        if self.replaced() {
            return self.stand_in().deserialize_struct(name, fields, v);
        }
        let Val::Table(entries) = &self.node.val else {
            return self.deserialize_any(v);
        };
        let r = v.visit_map(Map::new(&self, entries, Some(fields)));
        r.map_err(|e| self.locate(e))
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        if self.replaced() {
            return self.stand_in().deserialize_enum(name, variants, v);
        }
        let r = match &self.node.val {
            Val::Str(s) => v.visit_enum(BorrowedStrDeserializer::<DeError>::new(s)),
            other => Err(DeError::new(Kind::Type {
                found: describe(other).to_string(),
                wanted: format!("one of {}", quoted(variants)),
            })),
        };
        r.map_err(|e| self.locate(e))
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(v)
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }
}

struct Seq<'a> {
    items: std::slice::Iter<'a, Node>,
    parent: De<'a>,
}

impl<'a> SeqAccess<'a> for Seq<'a> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            Some(n) => seed.deserialize(self.parent.element(n)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// A table as a map; for a struct (`fields` given) unknown keys are
/// recorded and skipped, and stand-ins are added for reported missing keys.
struct Map<'a> {
    table: De<'a>,
    entries: std::slice::Iter<'a, Entry>,
    fields: Option<&'static [&'static str]>,
    injected: std::vec::IntoIter<&'static str>,
    pending: Option<Option<&'a Entry>>,
}

impl<'a> Map<'a> {
    fn new(table: &De<'a>, entries: &'a [Entry], fields: Option<&'static [&'static str]>) -> Self {
        let injected = match fields {
            Some(_) => table
                .cx
                .inject
                .get(&table.node.id())
                .cloned()
                .unwrap_or_default(),
            None => Vec::new(),
        };
        Map {
            table: table.clone(),
            entries: entries.iter(),
            fields,
            injected: injected.into_iter(),
            pending: None,
        }
    }
}

impl<'a> MapAccess<'a> for Map<'a> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        for e in self.entries.by_ref() {
            if let Some(fields) = self.fields {
                if !fields.contains(&e.key.as_str()) {
                    self.table.unknown_key(e, fields);
                    continue;
                }
            }
            self.pending = Some(Some(e));
            return seed
                .deserialize(BorrowedStrDeserializer::new(&e.key))
                .map(Some);
        }
        match self.injected.next() {
            Some(field) => {
                self.pending = Some(None);
                seed.deserialize(BorrowedStrDeserializer::new(field))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.pending.take() {
            Some(Some(e)) => seed.deserialize(self.table.child(&e.key, &e.node)),
            _ => seed
                .deserialize(self.table.stand_in())
                .map_err(DeError::stand_in),
        }
    }
}

/// The map `serde_spanned::Spanned` asks for: start, end, then the value.
struct SpannedMap<D> {
    span: Range<usize>,
    value: Option<D>,
    step: usize,
}

impl<D> SpannedMap<D> {
    fn new(span: Range<usize>, value: D) -> Self {
        SpannedMap {
            span,
            value: Some(value),
            step: 0,
        }
    }
}

impl<'a, D: de::Deserializer<'a, Error = DeError>> MapAccess<'a> for SpannedMap<D> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let key = match self.step {
            0 => spanned::START_FIELD,
            1 => spanned::END_FIELD,
            2 => spanned::VALUE_FIELD,
            _ => return Ok(None),
        };
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        self.step += 1;
        match self.step {
            1 => seed.deserialize(<usize as IntoDeserializer<'a, DeError>>::into_deserializer(
                self.span.start,
            )),
            2 => seed.deserialize(<usize as IntoDeserializer<'a, DeError>>::into_deserializer(
                self.span.end,
            )),
            _ => match self.value.take() {
                Some(d) => seed.deserialize(d),
                None => Err(de::Error::custom("spanned value read twice")),
            },
        }
    }
}

/// A value standing in for one already reported as wrong (or missing): it
/// deserializes as whatever is asked, so the rest of the file can still be
/// checked. Its errors are consequences and never shown.
struct StandIn(Range<usize>);

macro_rules! stand_in {
    ($($method:ident => $visit:ident($($arg:expr)?);)*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
            v.$visit($($arg)?).map_err(DeError::stand_in)
        }
    )*};
}

impl<'a> de::Deserializer<'a> for StandIn {
    type Error = DeError;

    stand_in! {
        deserialize_any => visit_bool(false);
        deserialize_bool => visit_bool(false);
        deserialize_i8 => visit_i64(1);
        deserialize_i16 => visit_i64(1);
        deserialize_i32 => visit_i64(1);
        deserialize_i64 => visit_i64(1);
        deserialize_u8 => visit_u64(1);
        deserialize_u16 => visit_u64(1);
        deserialize_u32 => visit_u64(1);
        deserialize_u64 => visit_u64(1);
        deserialize_f32 => visit_f64(1.0);
        deserialize_f64 => visit_f64(1.0);
        deserialize_char => visit_char('x');
        deserialize_str => visit_borrowed_str("");
        deserialize_string => visit_borrowed_str("");
        deserialize_identifier => visit_borrowed_str("");
        deserialize_bytes => visit_borrowed_bytes(&[]);
        deserialize_byte_buf => visit_borrowed_bytes(&[]);
        deserialize_option => visit_none();
        deserialize_unit => visit_unit();
        deserialize_ignored_any => visit_unit();
    }

    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_seq(SeqDeserializer::new(std::iter::empty::<()>()))
            .map_err(DeError::stand_in)
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_map(MapDeserializer::new(std::iter::empty::<((), ())>()))
            .map_err(DeError::stand_in)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        if spanned::is_spanned(name, fields) {
            let span = self.0.clone();
            return v.visit_map(SpannedMap::new(span, self));
        }
        self.deserialize_map(v)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        let first = variants.first().copied().unwrap_or_default();
        v.visit_enum(BorrowedStrDeserializer::<DeError>::new(first))
            .map_err(DeError::stand_in)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_newtype_struct(self).map_err(DeError::stand_in)
    }

    forward_to_deserialize_any! { <V: Visitor<'a>> unit_struct tuple tuple_struct }
}
