//! The tagged tree as a jsonschema instance: [`AsdfJson`] implements the crate's `Json`
//! representation over [`Node`], so validation reads the tree in place (no conversion to
//! `serde_json::Value`) and the ASDF keywords see each node's tag.
//!
//! Mapping: null, bool, integers (any size) and floats, strings (timestamps and `!!binary`
//! read as strings, tagged scalars as their text), sequences as arrays, mappings as objects.
//! Object members are looked up by untagged string keys; other keys show as their text when
//! members are listed. A recursive alias (`Value::Recursive`) reads as null.

use std::borrow::Cow;

use jsonschema::json::{Array, Json, JsonNumber, Node as JsonNode, NodeIdentity, Object};
use jsonschema::JsonType;
use serde_json::Value as JsonValue;

use crate::yaml::{Integer, Node, Value};

/// The tagged tree as a jsonschema instance representation.
pub struct AsdfJson;

/// A borrowed tree node seen by the validator.
#[derive(Clone, Copy)]
pub struct NodeRef<'a>(pub &'a Node);

impl<'a> NodeRef<'a> {
    /// The node.
    pub fn node(&self) -> &'a Node {
        self.0
    }
}

impl Json for AsdfJson {
    type Node<'a> = NodeRef<'a>;
    type PreparedKey = String;
    type StringBuffer = StrBuf;
    const KEYS_PER_LOOKUP: usize = 0;

    fn prepare_key(key: &str) -> String {
        key.to_string()
    }

    fn with_string_node<T>(
        buffer: &mut StrBuf,
        string: &str,
        f: impl FnOnce(NodeRef<'_>) -> T,
    ) -> T {
        buffer.0 = Node::str(string);
        f(NodeRef(&buffer.0))
    }
}

/// Scratch node for validating property names.
pub struct StrBuf(Node);

impl Default for StrBuf {
    fn default() -> Self {
        StrBuf(Node::new(Value::Null))
    }
}

/// A number of the tree.
#[derive(Clone, Debug)]
pub enum Num {
    /// An integer that fits `i128`.
    Int(i128),
    /// A larger integer as decimal digits.
    Big(String),
    /// A float.
    Float(f64),
}

impl JsonNumber for Num {
    fn as_u64(&self) -> Option<u64> {
        match self {
            Num::Int(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    }
    fn as_i64(&self) -> Option<i64> {
        match self {
            Num::Int(v) => i64::try_from(*v).ok(),
            _ => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        match self {
            Num::Int(v) => Some(*v as f64),
            Num::Big(s) => s.parse().ok(),
            Num::Float(f) => Some(*f),
        }
    }
    fn as_str(&self) -> Cow<'_, str> {
        match self {
            Num::Int(v) => Cow::Owned(v.to_string()),
            Num::Big(s) => Cow::Borrowed(s),
            Num::Float(f) => Cow::Owned(crate::floats::json_number(*f)),
        }
    }
    fn to_number(&self) -> Cow<'_, serde_json::Number> {
        Cow::Owned(to_number(self))
    }
    fn is_integer(&self) -> bool {
        matches!(self, Num::Int(_) | Num::Big(_))
    }
    fn is_written_as_integer(&self) -> bool {
        matches!(self, Num::Int(_) | Num::Big(_))
    }
}

fn to_number(n: &Num) -> serde_json::Number {
    match n {
        Num::Int(v) => {
            if let Ok(i) = i64::try_from(*v) {
                serde_json::Number::from(i)
            } else if let Ok(u) = u64::try_from(*v) {
                serde_json::Number::from(u)
            } else {
                float_number(*v as f64)
            }
        }
        Num::Big(s) => float_number(s.parse().unwrap_or(0.0)),
        Num::Float(f) => float_number(*f),
    }
}

/// A JSON number for a float; NaN and infinities (which JSON cannot hold) become 0.
fn float_number(f: f64) -> serde_json::Number {
    serde_json::Number::from_f64(f).unwrap_or_else(|| serde_json::Number::from(0))
}

/// The text a mapping key shows as in member listings and paths.
pub fn key_text(k: &Node) -> Cow<'_, str> {
    match k.value() {
        Value::Str(s) => Cow::Borrowed(s.as_str()),
        Value::Int(i) => Cow::Owned(i.to_string()),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Null => Cow::Borrowed("null"),
        Value::Float(f) => Cow::Owned(crate::floats::python_repr(*f)),
        Value::Timestamp(t) => Cow::Borrowed(t.text.as_str()),
        other => Cow::Owned(format!("{other:?}")),
    }
}

/// The tree as a `serde_json::Value` (tags dropped; cold paths: error messages, `enum`).
pub fn to_json(node: &Node) -> JsonValue {
    to_json_depth(node, 0)
}

fn to_json_depth(node: &Node, depth: usize) -> JsonValue {
    if depth > 256 {
        return JsonValue::Null;
    }
    match node.value() {
        Value::Null | Value::Recursive(_) => JsonValue::Null,
        Value::Bool(b) => JsonValue::Bool(*b),
        Value::Int(Integer::Small(v)) => JsonValue::Number(to_number(&Num::Int(*v))),
        Value::Int(Integer::Big(s)) => JsonValue::Number(to_number(&Num::Big(s.clone()))),
        Value::Float(f) => JsonValue::Number(float_number(*f)),
        Value::Str(s) => JsonValue::String(s.clone()),
        Value::Timestamp(t) => JsonValue::String(t.text.clone()),
        Value::Binary(b) => JsonValue::String(String::from_utf8_lossy(b).into_owned()),
        Value::Seq(items) => {
            JsonValue::Array(items.iter().map(|i| to_json_depth(i, depth + 1)).collect())
        }
        Value::Map(entries) => JsonValue::Object(
            entries
                .iter()
                .map(|(k, v)| (key_text(k).into_owned(), to_json_depth(v, depth + 1)))
                .collect(),
        ),
    }
}

/// Writes the compact JSON text of `to_json(node)` to `out`, with mapping members in tree
/// order whatever serde_json's map type; stops early (leaving the text unfinished) once `out`
/// holds `stop` bytes or more. serde_json writes it ([`TreeOrder`] hands it the members in
/// tree order), into a writer that refuses more once `stop` bytes are there.
pub fn write_json(node: &Node, out: &mut String, stop: usize) {
    let mut w = Capped {
        out: Vec::new(),
        stop: stop.saturating_sub(out.len()),
    };
    // an error is the cap reached: the text so far is what was asked for
    let _ = serde_json::to_writer(&mut w, &TreeOrder(node, 0));
    out.push_str(&String::from_utf8_lossy(&w.out));
}

/// A node serialized as [`to_json`] makes it, mappings in tree order.
struct TreeOrder<'a>(&'a Node, usize);

impl serde::Serialize for TreeOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        let TreeOrder(node, depth) = *self;
        if depth > 256 {
            return s.serialize_unit();
        }
        match node.value() {
            Value::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&TreeOrder(item, depth + 1))?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(&key_text(k), &TreeOrder(v, depth + 1))?;
                }
                map.end()
            }
            _ => to_json_depth(node, depth).serialize(s),
        }
    }
}

/// Bytes written until `stop` are held; the write that reaches it is the last accepted.
struct Capped {
    out: Vec<u8>,
    stop: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.len() >= self.stop {
            return Err(std::io::Error::other("enough shown"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> JsonNode<'a, AsdfJson> for NodeRef<'a> {
    type Object = ObjRef<'a>;
    type Array = SeqRef<'a>;
    type Number = Num;

    fn as_object(&self) -> Option<ObjRef<'a>> {
        self.0.as_map().map(ObjRef)
    }
    fn as_array(&self) -> Option<SeqRef<'a>> {
        self.0.as_seq().map(SeqRef)
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        let node: &'a Node = self.0;
        match node.value() {
            Value::Str(s) => Some(Cow::Borrowed(s.as_str())),
            Value::Timestamp(t) => Some(Cow::Borrowed(t.text.as_str())),
            Value::Binary(b) => Some(String::from_utf8_lossy(b)),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<Num> {
        match self.0.value() {
            Value::Int(Integer::Small(v)) => Some(Num::Int(*v)),
            Value::Int(Integer::Big(s)) => Some(Num::Big(s.clone())),
            Value::Float(f) => Some(Num::Float(*f)),
            _ => None,
        }
    }
    fn is_number(&self) -> bool {
        matches!(self.0.value(), Value::Int(_) | Value::Float(_))
    }
    fn as_boolean(&self) -> Option<bool> {
        self.0.as_bool()
    }
    fn is_null(&self) -> bool {
        matches!(self.0.value(), Value::Null | Value::Recursive(_))
    }
    fn json_type(&self) -> JsonType {
        match self.0.value() {
            Value::Null | Value::Recursive(_) => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Int(_) | Value::Float(_) => JsonType::Number,
            Value::Str(_) | Value::Timestamp(_) | Value::Binary(_) => JsonType::String,
            Value::Seq(_) => JsonType::Array,
            Value::Map(_) => JsonType::Object,
        }
    }
    fn to_value(&self) -> Cow<'a, JsonValue> {
        Cow::Owned(to_json(self.0))
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(self.0.id()))
    }
}

/// A borrowed mapping.
#[derive(Clone, Copy)]
pub struct ObjRef<'a>(&'a [(Node, Node)]);

/// Iterator over a mapping's members.
pub struct Members<'a>(std::slice::Iter<'a, (Node, Node)>);

impl<'a> Iterator for Members<'a> {
    type Item = (Cow<'a, str>, NodeRef<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (key_text(k), NodeRef(v)))
    }
}

impl<'a> Object<'a, AsdfJson> for ObjRef<'a> {
    type Node = NodeRef<'a>;
    type MemberName = Cow<'a, str>;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, key: &String) -> Option<NodeRef<'a>> {
        self.0
            .iter()
            .find(|(k, _)| k.tag().is_none() && k.as_str() == Some(key.as_str()))
            .map(|(_, v)| NodeRef(v))
    }
    fn members(&self) -> Members<'a> {
        Members(self.0.iter())
    }
}

/// A borrowed sequence.
#[derive(Clone, Copy)]
pub struct SeqRef<'a>(&'a [Node]);

/// Iterator over a sequence's items.
pub struct Items<'a>(std::slice::Iter<'a, Node>);

impl<'a> Iterator for Items<'a> {
    type Item = NodeRef<'a>;
    fn next(&mut self) -> Option<NodeRef<'a>> {
        self.0.next().map(NodeRef)
    }
}

impl<'a> Array<'a, AsdfJson> for SeqRef<'a> {
    type Node = NodeRef<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }
    fn elements(&self) -> Items<'a> {
        Items(self.0.iter())
    }
}
