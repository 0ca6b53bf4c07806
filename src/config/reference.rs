//! The configuration reference in `docs/src/configuration/` against the
//! schema structs: every key a file accepts is documented under the heading
//! of its table, and no documented key is one the file would refuse.
//!
//! The keys come from serde itself: a tracing deserializer hands every
//! struct a value for each of its fields, so `deserialize_struct` sees the
//! field names (after renames) at every depth, the way the real
//! deserializer does.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::de::value::{BorrowedStrDeserializer, Error, StrDeserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

/// Table path (dotted, `""` for the file's top level) → its keys.
type Keys = BTreeMap<String, BTreeSet<String>>;

/// The name serde_spanned gives its wrapper, whose value is its third field.
const SPANNED: &str = "$__serde_spanned_private_Spanned";
/// An open map's key as the reference writes it.
const ANY_NAME: &str = "<name>";

struct Tracer<'k> {
    path: String,
    keys: &'k RefCell<Keys>,
}

impl<'k> Tracer<'k> {
    fn child(&self, key: &str) -> Tracer<'k> {
        let path = if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        };
        Tracer {
            path,
            keys: self.keys,
        }
    }

    fn same(&self) -> Tracer<'k> {
        Tracer {
            path: self.path.clone(),
            keys: self.keys,
        }
    }

    fn record(&self, key: &str) {
        self.keys
            .borrow_mut()
            .entry(self.path.clone())
            .or_default()
            .insert(key.to_string());
    }
}

impl<'de> de::Deserializer<'de> for Tracer<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_i64(1)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(true)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f64(1.0)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("x")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("x")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_some(self)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self)
    }
    /// An array of tables documents its keys under the array's own path.
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_seq(One(Some(self)))
    }
    /// An open map: one entry, written `<name>`.
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        self.record(ANY_NAME);
        let value = self.child(ANY_NAME);
        v.visit_map(Fields {
            keys: vec![ANY_NAME],
            values: vec![value],
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        if name == SPANNED {
            // Start and end are numbers; the value is at this same path.
            let (start, end) = (self.same(), self.same());
            return v.visit_map(Fields {
                keys: fields.to_vec(),
                values: vec![start, end, self],
            });
        }
        fields.iter().for_each(|f| self.record(f));
        let values = fields.iter().map(|f| self.child(f)).collect();
        v.visit_map(Fields {
            keys: fields.to_vec(),
            values,
        })
    }
    /// The first variant stands for all (variants are values, not keys).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        let first: StrDeserializer<Error> = variants[0].into_deserializer();
        v.visit_enum(first)
    }

    forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u128 f32 char bytes byte_buf unit
        unit_struct tuple tuple_struct identifier ignored_any
    }
}

/// A sequence of one element.
struct One<'k>(Option<Tracer<'k>>);

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.take().map(|t| seed.deserialize(t)).transpose()
    }
}

/// A struct's (or open map's) entries, each value a tracer at its path.
struct Fields<'k> {
    keys: Vec<&'static str>,
    values: Vec<Tracer<'k>>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.keys.is_empty() {
            return Ok(None);
        }
        // Borrowed: serde_spanned's field visitor takes only borrowed keys.
        let key = BorrowedStrDeserializer::<Error>::new(self.keys.remove(0));
        seed.deserialize(key).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(self.values.remove(0))
    }
}

/// Every table of `T` with its keys.
fn traced<T: de::DeserializeOwned>() -> Keys {
    let keys = RefCell::new(Keys::new());
    let root = Tracer {
        path: String::new(),
        keys: &keys,
    };
    if let Err(e) = T::deserialize(root) {
        panic!("tracing {}: {e}", std::any::type_name::<T>());
    }
    keys.into_inner()
}

/// The tables of a reference page: headings ``### `[path]` `` and table
/// rows whose first cell is `` `key` ``.
fn documented(page: &str) -> Keys {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/src/configuration")
        .join(page);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let mut keys = Keys::new();
    let mut table: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("### `[") {
            let path = h
                .strip_suffix("]`")
                .unwrap_or_else(|| panic!("{page}:{}: a table heading is ### `[path]`", n + 1));
            keys.entry(path.to_string()).or_default();
            table = Some(path.to_string());
        } else if let Some(row) = line.strip_prefix("| `") {
            let key = row.split('`').next().unwrap_or_default();
            let t = table
                .as_ref()
                .unwrap_or_else(|| panic!("{page}:{}: `{key}` is under no table", n + 1));
            let fresh = keys.entry(t.clone()).or_default().insert(key.to_string());
            assert!(fresh, "{page}:{}: `{key}` documented twice in [{t}]", n + 1);
        }
    }
    keys
}

fn assert_documented<T: de::DeserializeOwned>(page: &str) {
    let schema = traced::<T>();
    let docs = documented(page);
    let mut problems = Vec::new();
    for (table, keys) in &schema {
        let doc = docs.get(table);
        for k in keys {
            if !doc.is_some_and(|d| d.contains(k)) {
                problems.push(format!("[{table}] `{k}` is accepted but not documented"));
            }
        }
    }
    for (table, keys) in &docs {
        for k in keys {
            if !schema.get(table).is_some_and(|s| s.contains(k)) {
                problems.push(format!("[{table}] `{k}` is documented but not accepted"));
            }
        }
    }
    assert!(problems.is_empty(), "{page}:\n{}", problems.join("\n"));
}

#[test]
fn the_algorithm_reference_documents_every_key() {
    assert_documented::<super::algorithm::RawAlgorithm>("algorithm.md");
}

#[test]
fn the_component_reference_documents_every_key() {
    assert_documented::<super::algorithm::RawComponent>("component.md");
}

#[test]
fn the_campaign_reference_documents_every_key() {
    assert_documented::<super::campaign::RawCampaign>("campaign.md");
}

#[test]
fn the_systems_reference_documents_every_key() {
    assert_documented::<super::systems::RawSystems>("systems.md");
}

#[test]
fn a_key_missing_from_the_reference_is_named() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    struct Toy {
        a_key: Option<u32>,
        inner: Vec<Inner>,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        b: toml::Spanned<String>,
    }
    let keys = traced::<Toy>();
    assert_eq!(keys[""], BTreeSet::from(["a-key".into(), "inner".into()]));
    assert_eq!(keys["inner"], BTreeSet::from(["b".into()]));
}
