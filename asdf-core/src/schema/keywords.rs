//! The ASDF schema keywords: `tag`, `ndim`, `max_ndim`, `datatype` (with `exact_datatype`).
//!
//! Semantics follow python asdf 6.0.0:
//! - `tag`: the node's tag matches the pattern
//!   ([`tag_matches`](crate::convert::tag_matches): `*` any run of characters but `/`, `**`
//!   any run). An untagged node has its YAML core tag
//!   (`tag:yaml.org,2002:str`, `…:map`, …).
//! - `ndim`, `max_ndim`, `datatype` apply only to `core/ndarray-*` nodes (python registers
//!   them for that tag pattern only); on other nodes they always pass. The dimension count is
//!   the length of `shape`, else that of the inline data; the datatype is the node's
//!   `datatype`, else the one inferred from its inline data.
//! - `datatype`: equal datatypes pass; with `exact_datatype: true` nothing else does;
//!   otherwise the node's datatype must cast safely to the schema's (numpy's `safe` casting
//!   rules; records field by field, names ignored).

use jsonschema::paths::Location;
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Value as JsonValue};

use super::instance::{to_json, AsdfJson, NodeRef};
use crate::array::{from_inline, ByteOrder, DType, NdArrayMeta, ScalarType};
use crate::yaml::{Integer, Node, Value};

/// Prefix of the ndarray tags the array keywords apply to (`tag:stsci.edu:asdf/core/ndarray-*`).
const NDARRAY_TAG_PREFIX: &str = "tag:stsci.edu:asdf/core/ndarray-";

/// Whether `tag` matches `pattern`: `*` matches any run of characters except `/`, `**` any
/// run; without `*` the two must be equal. Public as
/// [`convert::tag_matches`](crate::convert::tag_matches), the one name of this pattern
/// dialect; it lives here because the schema layer, below `convert`, uses it too.
pub(crate) fn tag_matches(pattern: &str, tag: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == tag;
    }
    glob(pattern.as_bytes(), tag.as_bytes())
}

/// Iterative glob matching with backtracking to the last star (linear-ish, no recursion).
fn glob(p: &[u8], s: &[u8]) -> bool {
    // Tokens: literal byte, single star (no '/'), double star (anything).
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(u8),
        Star,
        DStar,
    }
    let mut toks = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'*' {
            if p.get(i + 1) == Some(&b'*') {
                toks.push(Tok::DStar);
                i += 2;
            } else {
                toks.push(Tok::Star);
                i += 1;
            }
        } else {
            toks.push(Tok::Lit(p[i]));
            i += 1;
        }
    }
    // Dynamic programming over (token, position): small inputs, no exponential blowup.
    let n = s.len();
    let mut cur = vec![false; n + 1];
    cur[0] = true;
    for tok in &toks {
        let mut next = vec![false; n + 1];
        match tok {
            Tok::Lit(c) => {
                for j in 0..n {
                    if cur[j] && s[j] == *c {
                        next[j + 1] = true;
                    }
                }
            }
            Tok::Star | Tok::DStar => {
                let mut reach = false;
                for j in 0..=n {
                    if cur[j] {
                        reach = true;
                    }
                    next[j] = reach;
                    if j < n && *tok == Tok::Star && s[j] == b'/' {
                        reach = false;
                    }
                }
            }
        }
        cur = next;
    }
    cur[n]
}

/// The tag a node carries, or the YAML core tag of its kind when it has none.
pub fn effective_tag(node: &Node) -> String {
    if let Some(t) = node.tag() {
        return t.to_string();
    }
    let kind = match node.value() {
        Value::Null | Value::Recursive(_) => "null",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::Timestamp(_) => "timestamp",
        Value::Binary(_) => "binary",
        Value::Seq(_) => "seq",
        Value::Map(_) => "map",
    };
    format!("{}{kind}", crate::yaml::YAML_TAG_PREFIX)
}

fn custom(message: String) -> ValidationError<'static> {
    ValidationError::custom(message)
}

/// `tag: PATTERN`.
pub struct TagKeyword {
    pattern: String,
}

impl<'i> Keyword<'i, AsdfJson> for TagKeyword {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        let tag = effective_tag(instance.node());
        if tag_matches(&self.pattern, &tag) {
            Ok(())
        } else {
            Err(custom(format!("expected {}, found {}", self.pattern, tag)))
        }
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        match instance.node().tag() {
            Some(t) => tag_matches(&self.pattern, t),
            None => tag_matches(&self.pattern, &effective_tag(instance.node())),
        }
    }
}

/// Builds the `tag` keyword.
pub fn tag_factory<'a>(
    _parent: &'a Map<String, JsonValue>,
    value: &'a JsonValue,
    _path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i, AsdfJson>>, ValidationError<'a>> {
    match value.as_str() {
        Some(p) => Ok(Box::new(TagKeyword {
            pattern: p.to_string(),
        })),
        None => Err(ValidationError::schema("tag: the pattern must be a string")),
    }
}

/// `type`, as python asdf applies it: Draft 4 types, where YAML timestamps are no JSON
/// type except `string` under `format: date-time` (python reads them as `datetime`; a date
/// alone never passes), and `!!binary` is no JSON type.
pub struct TypeKeyword {
    /// Bit set of allowed kinds (`KIND_*`).
    allowed: u8,
    datetime_ok: bool,
    names: String,
}

const KIND_NULL: u8 = 1;
const KIND_BOOL: u8 = 2;
const KIND_INT: u8 = 4;
const KIND_NUMBER: u8 = 8;
const KIND_STRING: u8 = 16;
const KIND_ARRAY: u8 = 32;
const KIND_OBJECT: u8 = 64;

fn kind_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => KIND_NULL,
        "boolean" => KIND_BOOL,
        "integer" => KIND_INT,
        "number" => KIND_NUMBER,
        "string" => KIND_STRING,
        "array" => KIND_ARRAY,
        "object" => KIND_OBJECT,
        _ => return None,
    })
}

impl TypeKeyword {
    fn matches(&self, node: &Node) -> bool {
        let a = self.allowed;
        match node.value() {
            Value::Null | Value::Recursive(_) => a & KIND_NULL != 0,
            Value::Bool(_) => a & KIND_BOOL != 0,
            Value::Int(_) => a & (KIND_INT | KIND_NUMBER) != 0,
            Value::Float(_) => a & KIND_NUMBER != 0,
            Value::Str(_) => a & KIND_STRING != 0,
            Value::Timestamp(t) => t.time.is_some() && self.datetime_ok && a & KIND_STRING != 0,
            Value::Binary(_) => false,
            Value::Seq(_) => a & KIND_ARRAY != 0,
            Value::Map(_) => a & KIND_OBJECT != 0,
        }
    }
}

impl<'i> Keyword<'i, AsdfJson> for TypeKeyword {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        if self.matches(instance.node()) {
            Ok(())
        } else {
            Err(custom(format!(
                "expected {}, found {}",
                self.names,
                crate::yaml::describe(instance.node())
            )))
        }
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        self.matches(instance.node())
    }
}

/// Builds the `type` keyword.
pub fn type_factory<'a>(
    parent: &'a Map<String, JsonValue>,
    value: &'a JsonValue,
    _path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i, AsdfJson>>, ValidationError<'a>> {
    let names: Vec<&str> = match value {
        JsonValue::String(s) => vec![s.as_str()],
        JsonValue::Array(items) => items.iter().filter_map(JsonValue::as_str).collect(),
        _ => Vec::new(),
    };
    let mut allowed = 0;
    for n in &names {
        allowed |= kind_bit(n)
            .ok_or_else(|| ValidationError::schema(format!("type: unknown type {n:?}")))?;
    }
    if names.is_empty() {
        return Err(ValidationError::schema(
            "type: expected a type name or a list of them",
        ));
    }
    let datetime_ok = parent.get("format").and_then(JsonValue::as_str) == Some("date-time");
    Ok(Box::new(TypeKeyword {
        allowed,
        datetime_ok,
        names: names.join(" or "),
    }))
}

fn is_ndarray(node: &Node) -> bool {
    node.tag()
        .is_some_and(|t| t.starts_with(NDARRAY_TAG_PREFIX))
}

/// The inline data of an ndarray node, materialized (small by nature; bounded by the tree).
fn inline_array(node: &Node) -> Result<crate::array::DynArray, String> {
    let meta = NdArrayMeta::from_node(node, "").map_err(|e| e.to_string())?;
    let meta = NdArrayMeta {
        dtype: None,
        ..meta
    };
    from_inline(&meta, "").map_err(|e| e.to_string())
}

/// Number of dimensions of an ndarray node, as python asdf computes it.
fn ndim_of(node: &Node) -> Result<Option<usize>, String> {
    match node.value() {
        Value::Seq(_) => Ok(Some(inline_array(node)?.ndim())),
        Value::Map(_) => {
            if let Some(shape) = node.get("shape") {
                Ok(match shape.value() {
                    Value::Seq(s) => Some(s.len()),
                    Value::Str(s) => Some(s.chars().count()),
                    Value::Map(m) => Some(m.len()),
                    _ => None,
                })
            } else if node.get("data").is_some() {
                Ok(Some(inline_array(node)?.ndim()))
            } else {
                Ok(None)
            }
        }
        _ => Ok(None),
    }
}

fn show_ndim(n: Option<usize>) -> String {
    match n {
        Some(n) => n.to_string(),
        None => "no dimensions".into(),
    }
}

/// `ndim: N`.
pub struct NdimKeyword {
    ndim: u64,
    max: bool,
}

impl NdimKeyword {
    fn check(&self, node: &Node) -> Result<(), String> {
        if !is_ndarray(node) {
            return Ok(());
        }
        let n = ndim_of(node)
            .map_err(|e| format!("cannot determine the dimensions of the inline data: {e}"))?;
        let ok = match n {
            Some(n) if self.max => n as u64 <= self.ndim,
            Some(n) => n as u64 == self.ndim,
            None => false,
        };
        if ok {
            Ok(())
        } else if self.max {
            Err(format!(
                "expected at most {} dimensions, found {}",
                self.ndim,
                show_ndim(n)
            ))
        } else {
            Err(format!(
                "expected {} dimensions, found {}",
                self.ndim,
                show_ndim(n)
            ))
        }
    }
}

impl<'i> Keyword<'i, AsdfJson> for NdimKeyword {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        self.check(instance.node()).map_err(custom)
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        self.check(instance.node()).is_ok()
    }
}

fn ndim_value(name: &str, value: &JsonValue) -> Result<u64, ValidationError<'static>> {
    value
        .as_u64()
        .ok_or_else(|| ValidationError::schema(format!("{name}: must be a non-negative integer")))
}

/// Builds the `ndim` keyword.
pub fn ndim_factory<'a>(
    _parent: &'a Map<String, JsonValue>,
    value: &'a JsonValue,
    _path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i, AsdfJson>>, ValidationError<'a>> {
    Ok(Box::new(NdimKeyword {
        ndim: ndim_value("ndim", value)?,
        max: false,
    }))
}

/// Builds the `max_ndim` keyword.
pub fn max_ndim_factory<'a>(
    _parent: &'a Map<String, JsonValue>,
    value: &'a JsonValue,
    _path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i, AsdfJson>>, ValidationError<'a>> {
    Ok(Box::new(NdimKeyword {
        ndim: ndim_value("max_ndim", value)?,
        max: true,
    }))
}

/// `datatype: D` (and `exact_datatype: true` beside it).
pub struct DatatypeKeyword {
    /// The schema's datatype, with record fields reduced to the keys that matter.
    expected: JsonValue,
    /// Parsed, when the schema's datatype is one python asdf can interpret.
    parsed: Option<DType>,
    exact: bool,
}

/// Converts a JSON value into a tree node (for parsing a schema's datatype).
fn json_to_node(v: &JsonValue, depth: usize) -> Node {
    if depth > 64 {
        return Node::new(Value::Null);
    }
    match v {
        JsonValue::Null => Node::new(Value::Null),
        JsonValue::Bool(b) => Node::new(Value::Bool(*b)),
        JsonValue::Number(n) => {
            if let Some(i) = n.as_i64() {
                Node::int(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Node::int(i128::from(u))
            } else if let Ok(i) = n.to_string().parse::<i128>() {
                Node::new(Value::Int(Integer::Small(i)))
            } else {
                Node::new(Value::Float(n.as_f64().unwrap_or(f64::NAN)))
            }
        }
        JsonValue::String(s) => Node::str(s.clone()),
        JsonValue::Array(a) => Node::seq(a.iter().map(|x| json_to_node(x, depth + 1))),
        JsonValue::Object(o) => Node::map(
            o.iter()
                .map(|(k, x)| (k.clone(), json_to_node(x, depth + 1))),
        ),
    }
}

/// Numbers compare by value (`1` equals `1.0`), everything else structurally.
fn json_eq(a: &JsonValue, b: &JsonValue) -> bool {
    match (a, b) {
        (JsonValue::Number(x), JsonValue::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        (JsonValue::Array(x), JsonValue::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (JsonValue::Object(x), JsonValue::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Shows a datatype JSON value compactly: `float64`, `[ucs4, 8]`.
fn show_json(v: &JsonValue) -> String {
    match v {
        JsonValue::String(s) => s.clone(),
        JsonValue::Array(items) => {
            let parts: Vec<String> = items.iter().map(show_json).collect();
            format!("[{}]", parts.join(", "))
        }
        JsonValue::Object(o) => {
            // A record field's keys in the order the standard writes them, then any others
            // (the same whether or not serde_json's `preserve_order` keeps the schema's order).
            const FIRST: [&str; 4] = ["name", "datatype", "byteorder", "shape"];
            let known = FIRST.iter().filter_map(|k| o.get_key_value(*k));
            let others = o.iter().filter(|(k, _)| !FIRST.contains(&k.as_str()));
            let parts: Vec<String> = known
                .chain(others)
                .map(|(k, v)| format!("{k}: {}", show_json(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// The datatype of an ndarray node, as JSON (as written, or inferred from inline data).
fn instance_datatype(node: &Node) -> Result<JsonValue, String> {
    let inferred = |node: &Node| -> Result<JsonValue, String> {
        let arr = inline_array(node).map_err(|e| format!("cannot infer the datatype: {e}"))?;
        Ok(dtype_json(&arr.dtype))
    };
    match node.value() {
        Value::Seq(_) => inferred(node),
        Value::Map(_) => {
            if let Some(dt) = node.get("datatype") {
                Ok(to_json(dt))
            } else if node.get("data").is_some() {
                inferred(node)
            } else {
                Err("expected an array, found no datatype and no data".into())
            }
        }
        _ => Err("expected an array, found no datatype and no data".into()),
    }
}

/// The ASDF datatype JSON of a parsed datatype (record fields without byte order).
fn dtype_json(dt: &DType) -> JsonValue {
    match dt {
        DType::Scalar { ty, .. } => match ty {
            ScalarType::Ascii(n) => serde_json::json!(["ascii", n]),
            ScalarType::Ucs4(n) => serde_json::json!(["ucs4", n]),
            other => JsonValue::String(other.name()),
        },
        DType::Record(fields) => JsonValue::Array(
            fields
                .iter()
                .map(|f| {
                    let mut m = Map::new();
                    m.insert("name".into(), JsonValue::String(f.name.clone()));
                    m.insert("datatype".into(), dtype_json(&f.dtype));
                    if !f.shape.is_empty() {
                        m.insert("shape".into(), serde_json::json!(f.shape));
                    }
                    JsonValue::Object(m)
                })
                .collect(),
        ),
    }
}

fn parse_dtype(v: &JsonValue) -> Option<DType> {
    DType::from_node(&json_to_node(v, 0), ByteOrder::Little, "").ok()
}

/// numpy's `can_cast(from, to, "safe")` for the ASDF scalar types.
pub fn can_cast_scalar(from: ScalarType, to: ScalarType) -> bool {
    use ScalarType as S;
    if from == to {
        return true;
    }
    // (kind, size): kind 0 bool, 1 signed, 2 unsigned, 3 float, 4 complex.
    fn numeric(t: ScalarType) -> Option<(u8, usize)> {
        Some(match t {
            S::Bool8 => (0, 1),
            S::Int8 => (1, 1),
            S::Int16 => (1, 2),
            S::Int32 => (1, 4),
            S::Int64 => (1, 8),
            S::UInt8 => (2, 1),
            S::UInt16 => (2, 2),
            S::UInt32 => (2, 4),
            S::UInt64 => (2, 8),
            S::Float16 => (3, 2),
            S::Float32 => (3, 4),
            S::Float64 => (3, 8),
            S::Complex64 => (4, 8),
            S::Complex128 => (4, 16),
            S::Ascii(_) | S::Ucs4(_) => return None,
        })
    }
    // Characters numpy needs to print any value of a numeric type.
    fn str_len(kind: u8, size: usize) -> usize {
        match (kind, size) {
            (0, _) => 5,
            (1, 1) => 4,
            (1, 2) => 6,
            (1, 4) => 11,
            (1, _) => 21,
            (2, 1) => 3,
            (2, 2) => 5,
            (2, 4) => 10,
            (2, _) => 20,
            (3, _) => 32,
            _ => 64,
        }
    }
    match (numeric(from), numeric(to)) {
        (Some((fk, fs)), Some((tk, ts))) => match (fk, tk) {
            (0, _) => true,
            (_, 0) => false,
            (1, 1) | (2, 2) | (3, 3) | (4, 4) => ts >= fs,
            (2, 1) => ts > fs,
            (1, 2) => false,
            (1 | 2, 3) => ts >= (2 * fs).min(8),
            (1 | 2, 4) => ts / 2 >= (2 * fs).min(8),
            (3, 4) => ts / 2 >= fs,
            _ => false,
        },
        (Some((fk, fs)), None) => match to {
            S::Ascii(n) | S::Ucs4(n) => n >= str_len(fk, fs),
            _ => false,
        },
        (None, Some(_)) => false,
        (None, None) => match (from, to) {
            (S::Ascii(a), S::Ascii(b)) | (S::Ascii(a), S::Ucs4(b)) | (S::Ucs4(a), S::Ucs4(b)) => {
                b >= a
            }
            _ => false,
        },
    }
}

/// Safe casting between (possibly record) datatypes, field by field.
fn can_cast(from: &DType, to: &DType) -> bool {
    match (from, to) {
        (DType::Scalar { ty: a, .. }, DType::Scalar { ty: b, .. }) => can_cast_scalar(*a, *b),
        (DType::Record(a), DType::Record(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.shape == y.shape && can_cast(&x.dtype, &y.dtype))
        }
        _ => false,
    }
}

impl DatatypeKeyword {
    fn check(&self, node: &Node) -> Result<(), String> {
        if !is_ndarray(node) {
            return Ok(());
        }
        let found = instance_datatype(node)?;
        if json_eq(&self.expected, &found) {
            return Ok(());
        }
        let want = show_json(&self.expected);
        let got = parse_dtype(&found).map_or_else(|| show_json(&found), |d| d.name());
        if self.exact {
            return Err(format!("expected exactly {want}, found {got}"));
        }
        let Some(expected) = &self.parsed else {
            return Err(format!("cannot interpret the schema's datatype {want}"));
        };
        let Some(actual) = parse_dtype(&found) else {
            return Err(format!(
                "expected {want}-compatible, found invalid datatype {got}"
            ));
        };
        match (expected, &actual) {
            (DType::Scalar { .. }, DType::Record(_)) => Err(format!(
                "expected scalar datatype {want}, found record {got}"
            )),
            (DType::Record(_), DType::Scalar { .. }) => Err(format!(
                "expected record datatype {want}, found scalar {got}"
            )),
            (DType::Record(e), DType::Record(a)) if e.len() != a.len() => Err(format!(
                "expected {} columns ({want}), found {} ({got})",
                e.len(),
                a.len()
            )),
            _ if can_cast(&actual, expected) => Ok(()),
            _ => Err(format!("expected {want}-compatible, found {got}")),
        }
    }
}

impl<'i> Keyword<'i, AsdfJson> for DatatypeKeyword {
    fn validate(&self, instance: NodeRef<'i>) -> Result<(), ValidationError<'i>> {
        self.check(instance.node()).map_err(custom)
    }
    fn is_valid(&self, instance: NodeRef<'i>) -> bool {
        self.check(instance.node()).is_ok()
    }
}

/// Builds the `datatype` keyword (reading `exact_datatype` from the same schema object).
pub fn datatype_factory<'a>(
    parent: &'a Map<String, JsonValue>,
    value: &'a JsonValue,
    _path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i, AsdfJson>>, ValidationError<'a>> {
    let exact = parent
        .get("exact_datatype")
        .and_then(JsonValue::as_bool)
        .unwrap_or(false);
    // Record fields keep only the keys that describe the data.
    let expected = match value {
        JsonValue::Array(items) if items.first().is_some_and(JsonValue::is_object) => {
            JsonValue::Array(
                items
                    .iter()
                    .map(|item| match item {
                        JsonValue::Object(o) => JsonValue::Object(
                            o.iter()
                                .filter(|(k, _)| {
                                    matches!(
                                        k.as_str(),
                                        "name" | "datatype" | "byteorder" | "shape"
                                    )
                                })
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        ),
                        other => other.clone(),
                    })
                    .collect(),
            )
        }
        other => other.clone(),
    };
    let parsed = parse_dtype(&expected);
    Ok(Box::new(DatatypeKeyword {
        expected,
        parsed,
        exact,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_pattern_wildcards() {
        assert!(tag_matches("a/b-1.*", "a/b-1.2.0"));
        assert!(!tag_matches("a/*", "a/b/c"));
        assert!(tag_matches("a/**", "a/b/c"));
        assert!(tag_matches("**", "anything/at/all"));
        assert!(tag_matches("a*c", "ac"));
        assert!(!tag_matches("a.c", "abc"));
        assert!(tag_matches("exact", "exact"));
        assert!(!tag_matches("exact", "exactly"));
        assert!(tag_matches("*-1.0.0", "x-1.0.0"));
        assert!(!tag_matches("*-1.0.0", "a/x-1.0.0"));
    }

    #[test]
    fn tag_patterns_match_as_python_asdf_uri_match() {
        // (pattern, tag, asdf.util.uri_match(pattern, tag)) from python asdf 6.0.0
        let cases = [
            ("*", "", true),
            ("**", "", true),
            ("a*", "a/", false),
            ("a**", "a/", true),
            ("***", "a/b", true),
            ("*/*", "a/b", true),
            ("*/*", "a/b/c", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "ax/bc", false),
            ("a.c", "abc", false),
            ("a+*", "aax", false),
            ("a+*", "a+x", true),
            ("(a)*", "(a)x", true),
            ("tag:[x]*", "tag:[x]y", true),
            ("x-1.*", "x-1.2.0", true),
            ("x-1.*", "x-1.2/0", false),
            ("a**z", "a/b/c/z", true),
            ("a*z", "a/z", false),
            ("\u{e9}*", "\u{e9}\u{fc}", true),
            ("", "", true),
        ];
        for (pattern, tag, want) in cases {
            assert_eq!(tag_matches(pattern, tag), want, "{pattern:?} {tag:?}");
        }
    }

    #[test]
    fn safe_casts_follow_numpy() {
        use ScalarType as S;
        // Table from numpy 2.4 `np.can_cast(a, b, "safe")`.
        assert!(can_cast_scalar(S::Int8, S::Float16));
        assert!(!can_cast_scalar(S::Int16, S::Float16));
        assert!(can_cast_scalar(S::Int32, S::Float64));
        assert!(!can_cast_scalar(S::Int32, S::Float32));
        assert!(can_cast_scalar(S::Int64, S::Float64));
        assert!(can_cast_scalar(S::UInt8, S::Int16));
        assert!(!can_cast_scalar(S::UInt8, S::Int8));
        assert!(!can_cast_scalar(S::Int8, S::UInt64));
        assert!(can_cast_scalar(S::Bool8, S::UInt8));
        assert!(!can_cast_scalar(S::UInt8, S::Bool8));
        assert!(can_cast_scalar(S::Float32, S::Complex64));
        assert!(!can_cast_scalar(S::Float64, S::Complex64));
        assert!(can_cast_scalar(S::Int16, S::Complex64));
        assert!(!can_cast_scalar(S::Int32, S::Complex64));
        assert!(!can_cast_scalar(S::Float64, S::Float32));
        assert!(can_cast_scalar(S::Ascii(3), S::Ucs4(3)));
        assert!(!can_cast_scalar(S::Ucs4(3), S::Ascii(10)));
        assert!(!can_cast_scalar(S::Ascii(4), S::Ascii(3)));
        assert!(can_cast_scalar(S::Int8, S::Ascii(4)));
        assert!(!can_cast_scalar(S::Int8, S::Ascii(3)));
        assert!(can_cast_scalar(S::UInt64, S::Ucs4(20)));
        assert!(!can_cast_scalar(S::Float16, S::Ucs4(31)));
        assert!(can_cast_scalar(S::Float16, S::Ucs4(32)));
        assert!(!can_cast_scalar(S::Ascii(1), S::Int64));
    }
}
