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
use std::ops::Range;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde_spanned::__unstable as spanned;

use super::tree::{Entry, Node, Val};

mod error;
mod stand_in;

use error::{describe, quoted, At, DeError, Kind};
use stand_in::StandIn;

/// A schema problem: what, where (byte span, `0..0` for the whole file) and
/// the fix.
#[derive(Debug, Clone)]
pub(super) struct Issue {
    pub message: String,
    pub span: Range<usize>,
    pub help: String,
}

/// The result of deserializing: the value when the only problems (if any)
/// were unknown keys, which are skipped.
pub(super) struct Outcome<T> {
    pub value: Option<T>,
    pub issues: Vec<Issue>,
}

/// More passes than any hand-written file has wrong values.
const MAX_PASSES: usize = 64;

pub(super) fn from_tree<T: DeserializeOwned>(tree: &Node) -> Outcome<T> {
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
                let issue = e.issue();
                let seen = errors
                    .iter()
                    .any(|i| i.span == issue.span && i.message == issue.message);
                if !seen {
                    errors.push(issue);
                }
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
            Val::Str(s) => v.visit_borrowed_str(s),
            // No setting is a date: a date is never taken for a string.
            Val::Datetime(_) => Err(de::Error::invalid_type(
                de::Unexpected::Other("a date-time"),
                &v,
            )),
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
pub(super) struct SpannedMap<D> {
    span: Range<usize>,
    value: Option<D>,
    step: usize,
}

impl<D> SpannedMap<D> {
    pub(super) fn new(span: Range<usize>, value: D) -> Self {
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
