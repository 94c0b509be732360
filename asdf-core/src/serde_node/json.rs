//! [`json_to_node`]: a `serde_json::Value` as an untagged [`Node`] tree, through serde_json's
//! public API only, so the result is the same whatever serde_json features the build has.

use super::ser::int;
use crate::yaml::{Integer, Node, Value};

/// Converts a `serde_json::Value` into an untagged node tree: null, booleans and strings as
/// they are, arrays as sequences, objects as mappings with string keys (in the object's
/// order), and numbers as exact integers or floats.
///
/// Use it rather than [`to_node`](super::to_node) when serde_json may be built with its
/// `arbitrary_precision` feature (by any crate of the build): serde_json then serializes a
/// number as a private struct, which `to_node` refuses. With that feature a number keeps its
/// text, and integers of any size stay exact ([`Integer::Big`] beyond `i128`); a float
/// literal beyond `f64`'s range is an infinity. Without it, serde_json holds only `i64`,
/// `u64` and `f64` numbers, and those are converted exactly.
///
/// ```
/// use asdf_core::serde_node::json_to_node;
/// use asdf_core::Node;
/// let v = serde_json::json!({"name": "x", "n": [1, -2.5, null]});
/// let node = json_to_node(&v);
/// assert_eq!(node.get("name").and_then(Node::as_str), Some("x"));
/// assert_eq!(node.pointer("/n/0").and_then(Node::as_i64), Some(1));
/// assert_eq!(node.pointer("/n/1").and_then(Node::as_f64), Some(-2.5));
/// ```
pub fn json_to_node(value: &serde_json::Value) -> Node {
    use serde_json::Value as J;
    match value {
        J::Null => Node::new(Value::Null),
        J::Bool(b) => Node::new(Value::Bool(*b)),
        J::Number(n) => number(n),
        J::String(s) => Node::str(s.as_str()),
        J::Array(items) => Node::new(Value::Seq(items.iter().map(json_to_node).collect())),
        J::Object(members) => Node::new(Value::Map(
            members
                .iter()
                .map(|(k, v)| (Node::str(k.as_str()), json_to_node(v)))
                .collect(),
        )),
    }
}

/// The node of a JSON number.
fn number(n: &serde_json::Number) -> Node {
    if let Some(i) = n.as_i64() {
        return int(i.into());
    }
    if let Some(u) = n.as_u64() {
        return int(u.into());
    }
    if n.is_f64() {
        if let Some(f) = n.as_f64() {
            return Node::new(Value::Float(f));
        }
    }
    // Only with `arbitrary_precision`: an integer beyond 64 bits, or a float literal out of
    // `f64`'s range; `Display` gives the number's text.
    number_text(&n.to_string())
}

/// The node of a JSON number's text: an exact integer, or a float.
fn number_text(text: &str) -> Node {
    if let Ok(v) = text.parse::<i128>() {
        return int(v);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let integer = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    if integer {
        return Node::new(Value::Int(Integer::Big(text.to_string())));
    }
    Node::new(Value::Float(text.parse::<f64>().unwrap_or(f64::NAN)))
}
