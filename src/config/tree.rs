//! The parsed TOML as a small tree in which every key and value keeps its
//! byte span: the schema deserializer (`de`) walks it, and checks made after
//! deserializing (ranges across keys, define names) point back into the text
//! through `Node::find`.
//!
//! The tree is built from `toml_edit`'s immutable document, the same parser
//! `toml` uses, because that is what keeps spans.

use std::ops::Range;

use toml_edit::{ImDocument, Item, Key, Value};

/// One value and where it is in the text.
#[derive(Debug, Clone)]
pub struct Node {
    pub span: Range<usize>,
    pub val: Val,
}

#[derive(Debug, Clone)]
pub enum Val {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Kept as text: no setting is a date.
    Datetime(String),
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

/// A key of a table, with its own span (where unknown keys point).
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: String,
    pub key_span: Range<usize>,
    pub node: Node,
}

/// One step of a path into the tree: a key, or an index into an array
/// (arrays of tables included).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl From<&'static str> for Step<'static> {
    fn from(k: &'static str) -> Self {
        Step::Key(k)
    }
}

impl Node {
    /// Parses `text`; a syntax error comes back as toml_edit reported it.
    pub fn parse(text: &str) -> Result<Node, toml_edit::TomlError> {
        let doc = ImDocument::parse(text)?;
        // The top level has no text of its own: its problems name the file.
        let mut root = table_node(doc.as_table(), 0..0);
        root.span = 0..0;
        Ok(root)
    }

    /// The value at `path`, if present.
    pub(crate) fn find(&self, path: &[Step]) -> Option<&Node> {
        self.find_entry(path).map(|(_, n)| n)
    }

    /// The span of the key at the end of `path` (the value's span when the
    /// path ends in an index), for errors about the key rather than its value.
    pub(crate) fn key_span(&self, path: &[Step]) -> Option<Range<usize>> {
        match self.find_entry(path)? {
            (Some(e), _) => Some(e.key_span.clone()),
            (None, n) => Some(n.span.clone()),
        }
    }

    fn find_entry(&self, path: &[Step]) -> Option<(Option<&Entry>, &Node)> {
        let mut entry = None;
        let mut node = self;
        for step in path {
            match (step, &node.val) {
                (Step::Key(k), Val::Table(entries)) => {
                    let e = entries.iter().find(|e| e.key == *k)?;
                    entry = Some(e);
                    node = &e.node;
                }
                (Step::Index(i), Val::Array(items)) => {
                    entry = None;
                    node = items.get(*i)?;
                }
                _ => return None,
            }
        }
        Some((entry, node))
    }

    /// The node's identity within one tree, stable across deserializing
    /// passes over it.
    pub(super) fn id(&self) -> usize {
        self as *const Node as usize
    }
}

fn table_node(t: &toml_edit::Table, fallback: Range<usize>) -> Node {
    let span = t.span().unwrap_or(fallback);
    let entries = t
        .iter()
        .map(|(k, item)| {
            let key_span = key_span(t.key(k), &span);
            let node = item_node(item, key_span.clone());
            Entry {
                key: k.to_string(),
                key_span,
                node,
            }
        })
        .collect();
    Node {
        span,
        val: Val::Table(entries),
    }
}

fn key_span(key: Option<&Key>, fallback: &Range<usize>) -> Range<usize> {
    key.and_then(Key::span).unwrap_or_else(|| fallback.clone())
}

/// `fallback` is the key's span: implicit tables (`[a.b]` without `[a]`)
/// have no text of their own.
fn item_node(item: &Item, fallback: Range<usize>) -> Node {
    match item {
        Item::Value(v) => value_node(v, fallback),
        Item::Table(t) => table_node(t, fallback),
        Item::ArrayOfTables(a) => {
            let span = a.span().unwrap_or_else(|| fallback.clone());
            let items = a.iter().map(|t| table_node(t, span.clone())).collect();
            Node {
                span,
                val: Val::Array(items),
            }
        }
        // Iteration skips empty items; kept total for the compiler.
        Item::None => Node {
            span: fallback,
            val: Val::Table(Vec::new()),
        },
    }
}

fn value_node(v: &Value, fallback: Range<usize>) -> Node {
    let span = v.span().unwrap_or(fallback);
    let val = match v {
        Value::String(s) => Val::Str(s.value().clone()),
        Value::Integer(i) => Val::Int(*i.value()),
        Value::Float(f) => Val::Float(*f.value()),
        Value::Boolean(b) => Val::Bool(*b.value()),
        Value::Datetime(d) => Val::Datetime(d.value().to_string()),
        Value::Array(a) => Val::Array(a.iter().map(|x| value_node(x, span.clone())).collect()),
        Value::InlineTable(t) => Val::Table(
            t.iter()
                .map(|(k, x)| {
                    let key_span = key_span(t.key(k), &span);
                    Entry {
                        key: k.to_string(),
                        node: value_node(x, key_span.clone()),
                        key_span,
                    }
                })
                .collect(),
        ),
    };
    Node { span, val }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_keep_their_spans() {
        let text = "a = 1\n[t]\nb = \"x\"\n[[arr]]\nc = [1, 2]\nd = { e = true }\n";
        let n = Node::parse(text).unwrap();
        let b = n.find(&[Step::Key("t"), Step::Key("b")]).unwrap();
        assert_eq!(&text[b.span.clone()], "\"x\"");
        let c1 = n
            .find(&[
                Step::Key("arr"),
                Step::Index(0),
                Step::Key("c"),
                Step::Index(1),
            ])
            .unwrap();
        assert_eq!(&text[c1.span.clone()], "2");
        let e = n
            .key_span(&[
                Step::Key("arr"),
                Step::Index(0),
                Step::Key("d"),
                Step::Key("e"),
            ])
            .unwrap();
        assert_eq!(&text[e], "e");
        assert!(n.find(&[Step::Key("nope")]).is_none());
    }
}
