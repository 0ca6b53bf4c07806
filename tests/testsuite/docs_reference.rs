//! The configuration reference (`docs/src/configuration/`) against the code
//! that reads the files: every key a file accepts is documented under the
//! heading of its table, and nothing documented there is refused.
//!
//! The keys come from serde itself, never from a list: a tracing
//! `serde::Deserializer` is handed to each file's raw struct
//! (`RawAlgorithm`, `RawComponent`, `RawCampaign`, `RawSystems`). Every
//! `deserialize_struct` call gives it the struct's field names (after
//! renames), and it answers with one value per field, so it reaches every
//! nested struct, array of tables and open map; `deserialize_enum` gives it
//! the values an enum-valued key accepts. Adding a field to a raw struct
//! without documenting it fails here.
//!
//! How the reference pages are read (the layout `index.md` describes):
//! - a table is a heading ``### `[path]` ``: `[]` for the top level, a dotted
//!   path for nested tables, an array of tables by its path without the
//!   double brackets, an open map's entries as `<name>`
//!   (`[flag-profile.<name>]`);
//! - a documented key is a row, under such a heading, whose first cell is
//!   `` `key` ``; each table must list exactly the keys its struct has, and
//!   each heading must be a table of the file;
//! - for an enum-valued key, the backticked words of the row's type cell are
//!   exactly the values the enum accepts;
//! - a reference in running text anywhere in the book, `` `[table]` ``,
//!   `` `[[table]]` `` or `` `[table] key` ``, must name a table (and key) of
//!   some configuration file;
//! - `kat-manifest.md` is no TOML: its modes (the nested bullets of
//!   `## Lines`), provenances (the bullets of `## Provenance`) and statuses
//!   (the rows of `## KAT statuses`) are exactly the variants of `Mode`,
//!   `Provenance` and `KatStatus`, each of which the manifest, provenance or
//!   status parser accepts.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pqbench::config::{algorithm, campaign, systems};
use pqbench::kat::manifest::{self, Mode};
use pqbench::kat::provenance::Provenance;
use pqbench::records::kat::KatStatus;
use serde::de::value::{BorrowedStrDeserializer, Error, StrDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_spanned::__unstable as spanned;

use crate::common;

/// An open map's key as the reference writes it.
const ANY_NAME: &str = "<name>";

/// What a file accepts, as traced from its struct.
#[derive(Debug, Default)]
struct Schema {
    /// Table path (dotted, `""` for the top level) → its keys.
    tables: BTreeMap<String, BTreeSet<String>>,
    /// Path of an enum-valued key (`""` for an enum traced alone) → the
    /// values it accepts.
    enums: BTreeMap<String, Vec<String>>,
}

struct Tracer<'s> {
    path: String,
    schema: &'s RefCell<Schema>,
}

impl<'s> Tracer<'s> {
    fn at(&self, path: String) -> Tracer<'s> {
        Tracer {
            path,
            schema: self.schema,
        }
    }

    fn child(&self, key: &str) -> Tracer<'s> {
        match self.path.as_str() {
            "" => self.at(key.to_string()),
            p => self.at(format!("{p}.{key}")),
        }
    }

    fn record(&self, keys: &[&str]) {
        let mut schema = self.schema.borrow_mut();
        let table = schema.tables.entry(self.path.clone()).or_default();
        table.extend(keys.iter().map(|k| k.to_string()));
    }
}

impl<'de> de::Deserializer<'de> for Tracer<'_> {
    type Error = Error;

    /// Hand-written `Deserialize`s (define values) take any scalar.
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_i64(1)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(true)
    }
    /// 1 is in range for every count, index and CPU number.
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
    /// An array (of tables) has its element's keys under its own path.
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_seq(One(Some(self)))
    }
    /// An open map: one entry, written `<name>`.
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        self.record(&[ANY_NAME]);
        let value = self.child(ANY_NAME);
        v.visit_map(Fields(vec![(ANY_NAME, value)]))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        if spanned::is_spanned(name, fields) {
            // Start and end are numbers; the value is the key's own.
            let entries = fields
                .iter()
                .map(|&f| (f, self.at(self.path.clone())))
                .collect();
            return v.visit_map(Fields(entries));
        }
        self.record(fields);
        let entries = fields.iter().map(|&f| (f, self.child(f))).collect();
        v.visit_map(Fields(entries))
    }
    /// Variants are values, not keys: recorded, and the first stands for all.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        let values = variants.iter().map(|s| s.to_string()).collect();
        self.schema.borrow_mut().enums.insert(self.path, values);
        let first: StrDeserializer<Error> = variants[0].into_deserializer();
        v.visit_enum(first)
    }

    forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u128 f32 char bytes byte_buf unit
        unit_struct tuple tuple_struct identifier ignored_any
    }
}

/// A sequence of one element.
struct One<'s>(Option<Tracer<'s>>);

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
struct Fields<'s>(Vec<(&'static str, Tracer<'s>)>);

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, _)) = self.0.first() else {
            return Ok(None);
        };
        // Borrowed: serde_spanned's field visitor takes only borrowed keys.
        seed.deserialize(BorrowedStrDeserializer::<Error>::new(key))
            .map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(self.0.remove(0).1)
    }
}

/// Everything `T` accepts.
fn traced<T: DeserializeOwned>() -> Schema {
    let schema = RefCell::new(Schema::default());
    let root = Tracer {
        path: String::new(),
        schema: &schema,
    };
    if let Err(e) = T::deserialize(root) {
        panic!("tracing {}: {e}", std::any::type_name::<T>());
    }
    schema.into_inner()
}

/// The values an enum accepts.
fn variants<T: DeserializeOwned>() -> Vec<String> {
    let mut schema = traced::<T>();
    schema.enums.remove("").expect("an enum")
}

/// A documented key: its line and type cell.
struct Row {
    line: usize,
    kind: String,
}

/// A documented table: its heading's line and rows.
struct Table {
    line: usize,
    rows: BTreeMap<String, Row>,
}

/// The words of a cell written `` `like this` ``.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The tables of a reference page (see the module comment).
fn documented(page: &str, text: &str) -> Result<BTreeMap<String, Table>, Vec<String>> {
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if let Some(h) = line.strip_prefix("### `[") {
            let Some(path) = h.strip_suffix("]`") else {
                problems.push(format!("{page}:{n}: a table heading is ### `[path]`"));
                continue;
            };
            if tables.contains_key(path) {
                problems.push(format!("{page}:{n}: [{path}] has two headings"));
            }
            tables.insert(
                path.to_string(),
                Table {
                    line: n,
                    rows: BTreeMap::new(),
                },
            );
            current = Some(path.to_string());
        } else if line.starts_with('#') {
            current = None;
        } else if line.starts_with("| `") {
            let cells: Vec<&str> = line.split(" | ").collect();
            let key = backticked(cells[0]).first().copied().unwrap_or_default();
            let Some(table) = current.as_ref().and_then(|t| tables.get_mut(t)) else {
                problems.push(format!("{page}:{n}: `{key}` is under no table heading"));
                continue;
            };
            let row = Row {
                line: n,
                kind: cells.get(1).copied().unwrap_or_default().to_string(),
            };
            if table.rows.insert(key.to_string(), row).is_some() {
                problems.push(format!("{page}:{n}: `{key}` is documented twice"));
            }
        }
    }
    if problems.is_empty() {
        Ok(tables)
    } else {
        Err(problems)
    }
}

/// Every difference between what a file accepts and its reference page.
fn compare(schema: &Schema, page: &str, text: &str) -> Vec<String> {
    let docs = match documented(page, text) {
        Ok(d) => d,
        Err(problems) => return problems,
    };
    let mut problems = Vec::new();
    for (path, keys) in &schema.tables {
        let Some(table) = docs.get(path) else {
            problems.push(format!("{page}: [{path}] has no heading ### `[{path}]`"));
            continue;
        };
        for k in keys.iter().filter(|k| !table.rows.contains_key(*k)) {
            problems.push(format!(
                "{page}:{}: [{path}] `{k}` is accepted but not documented",
                table.line
            ));
        }
    }
    for (path, table) in &docs {
        let keys = schema.tables.get(path);
        if keys.is_none() {
            problems.push(format!(
                "{page}:{}: [{path}] is no table of this file",
                table.line
            ));
        }
        for (k, row) in &table.rows {
            if keys.is_some_and(|keys| !keys.contains(k)) {
                problems.push(format!(
                    "{page}:{}: [{path}] `{k}` is documented but not accepted",
                    row.line
                ));
            }
        }
    }
    for (key_path, values) in &schema.enums {
        let (path, key) = key_path.rsplit_once('.').unwrap_or(("", key_path));
        let Some(row) = docs.get(path).and_then(|t| t.rows.get(key)) else {
            continue; // already reported as undocumented
        };
        let written: BTreeSet<&str> = backticked(&row.kind).into_iter().collect();
        let wanted: BTreeSet<&str> = values.iter().map(String::as_str).collect();
        if written != wanted {
            problems.push(format!(
                "{page}:{}: [{path}] `{key}` takes {wanted:?}, its type cell says {written:?}",
                row.line
            ));
        }
    }
    problems
}

fn configuration() -> PathBuf {
    common::repo().join("docs/src/configuration")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// What a campaign accepts: its own tables, and the table of each stage
/// that owns its settings (`[stage.<name>]`, or `[count]` and `[ct]`),
/// traced from the stage's settings type.
fn campaign_schema() -> Schema {
    let mut schema = traced::<campaign::RawCampaign>();
    let stages = [
        ("scan", traced::<pqbench::stages::scan::ScanSettings>()),
        ("leak", traced::<pqbench::stages::leak::LeakSettings>()),
        ("count", traced::<pqbench::stages::count::CountSettings>()),
        ("ct", traced::<pqbench::stages::ct::CtSettings>()),
    ];
    for (stage, settings) in stages {
        let table = campaign::settings_table(stage);
        let at = |p: &str| match p {
            "" => table.clone(),
            p => format!("{table}.{p}"),
        };
        for (p, keys) in settings.tables {
            schema.tables.insert(at(&p), keys);
        }
        for (p, values) in settings.enums {
            schema.enums.insert(at(&p), values);
        }
    }
    schema
}

/// Each reference page with what its file accepts.
fn pages() -> Vec<(&'static str, Schema)> {
    vec![
        ("algorithm.md", traced::<algorithm::RawAlgorithm>()),
        ("component.md", traced::<algorithm::RawComponent>()),
        ("campaign.md", campaign_schema()),
        ("systems.md", traced::<systems::RawSystems>()),
    ]
}

#[test]
fn every_key_of_every_file_is_documented_and_nothing_else() {
    let mut problems = Vec::new();
    for (page, schema) in pages() {
        assert!(
            schema.tables.get("").is_some_and(|t| !t.is_empty()),
            "{page}: tracing found no top-level key"
        );
        problems.extend(compare(&schema, page, &read(&configuration().join(page))));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Every markdown file under `dir`.
fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn references_in_the_book_name_tables_and_keys_that_exist() {
    let mut known: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, schema) in pages() {
        for (path, keys) in schema.tables {
            known.entry(path).or_default().extend(keys);
        }
    }
    let reference =
        regex::Regex::new(r"`\[\[?((?:[a-z<][a-z0-9.<>-]*)?)\]\]?(?: ([a-z0-9-]+))?`").unwrap();
    let mut files = Vec::new();
    markdown(&common::repo().join("docs/src"), &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut seen = 0;
    for file in &files {
        let text = read(file);
        let name = file.strip_prefix(common::repo()).unwrap().display();
        for (n, line) in text.lines().enumerate() {
            for c in reference.captures_iter(line) {
                seen += 1;
                let (path, key) = (&c[1], c.get(2).map(|k| k.as_str()));
                match (known.get(path), key) {
                    (None, _) => problems.push(format!("{name}:{}: no file has [{path}]", n + 1)),
                    (Some(keys), Some(k)) if !keys.contains(k) => {
                        problems.push(format!("{name}:{}: [{path}] has no key `{k}`", n + 1))
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        seen > 50,
        "only {seen} references found: is the pattern right?"
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The first backticked word of each line starting with `prefix` in the
/// section `## heading` of a page.
fn listed(text: &str, heading: &str, prefix: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("## ") {
            inside = line == format!("## {heading}");
        } else if inside && line.starts_with(prefix) {
            if let Some(word) = backticked(line).first() {
                out.insert(word.to_string());
            }
        }
    }
    out
}

#[test]
fn the_kat_manifest_page_lists_every_mode_provenance_and_status() {
    let text = read(&configuration().join("kat-manifest.md"));
    let sha = "0".repeat(64);
    let modes = variants::<Mode>();
    for m in &modes {
        let line = format!("{sha} {m} L/f.rsp\n");
        let parsed = manifest::parse(Path::new("kat.sha256"), &line);
        assert!(parsed.is_ok(), "mode {m} is refused by the manifest parser");
    }
    let provenances = variants::<Provenance>();
    for p in &provenances {
        assert!(
            Provenance::parse(p).is_some(),
            "provenance {p} is not parsed"
        );
    }
    let statuses = variants::<KatStatus>();
    for s in &statuses {
        assert!(KatStatus::parse(s).is_some(), "status {s} is not parsed");
    }
    let set = |v: Vec<String>| v.into_iter().collect::<BTreeSet<_>>();
    let page = "kat-manifest.md: documented (left) against the code (right)";
    let modes_doc = listed(&text, "Lines", "  * `");
    assert_eq!(modes_doc, set(modes), "{page}: the modes of ## Lines");
    let provenances_doc = listed(&text, "Provenance", "* `");
    assert_eq!(provenances_doc, set(provenances), "{page}: ## Provenance");
    let statuses_doc = listed(&text, "KAT statuses", "| `");
    assert_eq!(statuses_doc, set(statuses), "{page}: ## KAT statuses");
}

/// The check itself: a toy struct against a page that misses a key,
/// documents one too many, keeps a dead heading and lists an enum wrongly.
#[test]
fn a_difference_from_the_reference_is_named() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    struct Toy {
        a_key: Option<u32>,
        shade: Shade,
        inner: Vec<Inner>,
        names: BTreeMap<String, toml::Spanned<String>>,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    #[serde(rename_all = "kebab-case")]
    enum Shade {
        Light,
        Dark,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        b: toml::Spanned<String>,
        c: Option<Shade>,
    }
    let schema = traced::<Toy>();
    let set = |keys: &[&str]| keys.iter().map(|k| k.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        schema.tables[""],
        set(&["a-key", "shade", "inner", "names"])
    );
    assert_eq!(schema.tables["inner"], set(&["b", "c"]));
    assert_eq!(schema.tables["names"], set(&[ANY_NAME]));
    assert_eq!(schema.enums["inner.c"], ["light", "dark"]);

    let page = "\
### `[]`

| key | type | default | meaning |
| --- | --- | --- | --- |
| `a-key` | integer | none | a key |
| `shade` | `light` or `dark` | required | a shade |
| `inner` | array of tables | `[]` | see below |
| `names` | table | `{}` | see below |

### `[inner]`

| key | type | default | meaning |
| --- | --- | --- | --- |
| `b` | string | required | b |
| `c` | `light` | none | c |
| `d` | string | none | gone |

### `[names]`

| key | type | default | meaning |
| --- | --- | --- | --- |
| `<name>` | string | — | a name |

### `[old]`
";
    let problems = compare(&schema, "toy.md", page);
    assert_eq!(
        problems,
        [
            "toy.md:16: [inner] `d` is documented but not accepted",
            "toy.md:24: [old] is no table of this file",
            "toy.md:15: [inner] `c` takes {\"dark\", \"light\"}, its type cell says {\"light\"}",
        ]
    );
    let without_a_key = page.replace("| `a-key` | integer | none | a key |\n", "");
    assert!(
        compare(&schema, "toy.md", &without_a_key)
            .contains(&"toy.md:1: [] `a-key` is accepted but not documented".to_string()),
        "{:?}",
        compare(&schema, "toy.md", &without_a_key)
    );
}
