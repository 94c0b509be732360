//! The schema keywords that shape how a tree is written, not whether it is valid:
//! `propertyOrder` (key order of a mapping), `flowStyle` (`flow` or `block` for a mapping
//! or sequence) and `style` (`literal`, `folded` or `inline` for a string).
//!
//! [`apply_style_hints`] follows each tagged node's schemas (bundled for the standard
//! version, and user schemas registered for the tag) through `properties`, `items`,
//! `allOf` and `$ref`, and returns the tree with those hints applied. Branches of
//! `anyOf`/`oneOf` are not followed: which one applies is a matter of validation.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as JsonValue;

use super::{bundled, registry, NodeIds};
use crate::yaml::hash::FastBuild;
use crate::yaml::{CollectionStyle, Node, NodeData, ScalarStyle, Style, Value};

/// How deep `$ref`/`allOf` chains and nested properties are followed.
const MAX_DEPTH: usize = 64;

/// The tree with the writing hints of its tags' schemas applied; `root` itself (the same
/// node, see [`Node::ptr_eq`]) when no hint changes anything. Shared nodes stay shared.
pub fn apply_style_hints(root: &Node, standard: &str) -> Node {
    apply_style_hints_except(root, standard, &NodeIds::default())
}

/// [`apply_style_hints`], leaving the nodes in `skip` (and what is under them) as they are:
/// the writer passes the ndarray nodes it built itself, already in schema order and style.
pub(crate) fn apply_style_hints_except(root: &Node, standard: &str, skip: &NodeIds) -> Node {
    let mut w = Walker {
        standard,
        memo: HashMap::default(),
        skip,
    };
    w.walk(root, 0)
}

struct Walker<'s> {
    standard: &'s str,
    skip: &'s NodeIds,
    /// Rebuilt nodes by the id of the node they replace (keeps shared nodes shared).
    memo: HashMap<usize, Node, FastBuild>,
}

impl Walker<'_> {
    /// Applies the hints of tagged nodes at and under `node`.
    fn walk(&mut self, node: &Node, depth: usize) -> Node {
        if depth > 512 || !matches!(node.value(), Value::Map(_) | Value::Seq(_)) {
            return node.clone();
        }
        if self.skip.contains(&node.id()) {
            return node.clone();
        }
        if let Some(n) = self.memo.get(&node.id()) {
            return n.clone();
        }
        // children first (a new vector only once a child changes), then this node's schemas
        let mut out = match node.value() {
            Value::Map(entries) => {
                let mut new: Option<Vec<(Node, Node)>> = None;
                for (i, (_, v)) in entries.iter().enumerate() {
                    let w = self.walk(v, depth + 1);
                    if !w.ptr_eq(v) {
                        let n = new.get_or_insert_with(|| entries.clone());
                        if let Some(slot) = n.get_mut(i) {
                            slot.1 = w;
                        }
                    }
                }
                match new {
                    Some(n) => rebuild(node, Value::Map(n), node.style()),
                    None => node.clone(),
                }
            }
            Value::Seq(items) => {
                let mut new: Option<Vec<Node>> = None;
                for (i, v) in items.iter().enumerate() {
                    let w = self.walk(v, depth + 1);
                    if !w.ptr_eq(v) {
                        let n = new.get_or_insert_with(|| items.clone());
                        if let Some(slot) = n.get_mut(i) {
                            *slot = w;
                        }
                    }
                }
                match new {
                    Some(n) => rebuild(node, Value::Seq(n), node.style()),
                    None => node.clone(),
                }
            }
            _ => node.clone(),
        };
        if let Some(tag) = node.tag() {
            for uri in schemas_for(self.standard, tag) {
                if let Ok(schema) = registry::lookup(&uri) {
                    out = apply(&out, &schema, &schema, &uri, 0);
                }
            }
        }
        self.memo.insert(node.id(), out.clone());
        out
    }
}

fn schemas_for(standard: &str, tag: &str) -> Vec<String> {
    let mut uris: Vec<String> = bundled::schema_for_tag(standard, tag)
        .map(str::to_string)
        .into_iter()
        .collect();
    uris.extend(registry::user_schemas_for_tag(tag));
    uris
}

fn rebuild(node: &Node, value: Value, style: Style) -> Node {
    let d = node.data();
    Node::from(NodeData {
        tag: d.tag.clone(),
        value,
        style,
        anchor: d.anchor.clone(),
    })
}

/// Applies `schema` (part of the document `doc` with id `uri`) to `node`.
fn apply(node: &Node, schema: &JsonValue, doc: &Arc<JsonValue>, uri: &str, depth: usize) -> Node {
    let Some(obj) = schema.as_object() else {
        return node.clone();
    };
    if depth > MAX_DEPTH {
        return node.clone();
    }
    let mut node = node.clone();
    if let Some(r) = obj.get("$ref").and_then(JsonValue::as_str) {
        if let Some((target, tdoc, turi)) = resolve(r, doc, uri) {
            node = apply(&node, &target, &tdoc, &turi, depth + 1);
        }
    }
    if let Some(all) = obj.get("allOf").and_then(JsonValue::as_array) {
        for s in all {
            node = apply(&node, s, doc, uri, depth + 1);
        }
    }
    match node.value() {
        Value::Map(entries) => {
            let mut new: Option<Vec<(Node, Node)>> = None;
            if let Some(props) = obj.get("properties").and_then(JsonValue::as_object) {
                // look the (few) properties up in the (possibly large) mapping
                for (name, sub) in props {
                    let Some(i) = entries.iter().position(|(k, _)| k.as_str() == Some(name)) else {
                        continue;
                    };
                    let Some((_, v)) = entries.get(i) else {
                        continue;
                    };
                    let w = apply(v, sub, doc, uri, depth + 1);
                    if !w.ptr_eq(v) {
                        let n = new.get_or_insert_with(|| entries.clone());
                        if let Some(slot) = n.get_mut(i) {
                            slot.1 = w;
                        }
                    }
                }
            }
            if let Some(order) = obj.get("propertyOrder").and_then(JsonValue::as_array) {
                let current = new.as_deref().unwrap_or(entries);
                if !in_order(current, order) {
                    new = Some(reorder(current, order));
                }
            }
            let style = collection_style(obj).unwrap_or(node.style());
            if new.is_some() || style != node.style() {
                let value = new.unwrap_or_else(|| entries.clone());
                node = rebuild(&node, Value::Map(value), style);
            }
        }
        Value::Seq(items) => {
            let mut new: Option<Vec<Node>> = None;
            if let Some(sub) = obj.get("items").filter(|s| s.is_object()) {
                for (i, v) in items.iter().enumerate() {
                    let w = apply(v, sub, doc, uri, depth + 1);
                    if !w.ptr_eq(v) {
                        let n = new.get_or_insert_with(|| items.clone());
                        if let Some(slot) = n.get_mut(i) {
                            *slot = w;
                        }
                    }
                }
            }
            let style = collection_style(obj).unwrap_or(node.style());
            if new.is_some() || style != node.style() {
                let value = new.unwrap_or_else(|| items.clone());
                node = rebuild(&node, Value::Seq(value), style);
            }
        }
        Value::Str(s) => {
            let style = match obj.get("style").and_then(JsonValue::as_str) {
                Some("literal") | Some("folded") => Some(Style::Scalar(ScalarStyle::Literal)),
                Some("inline") => Some(Style::Scalar(ScalarStyle::Plain)),
                _ => None,
            };
            if let Some(style) = style.filter(|st| *st != node.style()) {
                node = rebuild(&node, Value::Str(s.clone()), style);
            }
        }
        _ => {}
    }
    node
}

fn collection_style(obj: &serde_json::Map<String, JsonValue>) -> Option<Style> {
    match obj.get("flowStyle").and_then(JsonValue::as_str) {
        Some("flow") => Some(Style::Collection(CollectionStyle::Flow)),
        Some("block") => Some(Style::Collection(CollectionStyle::Block)),
        _ => None,
    }
}

/// Whether the keys named in `order` that `entries` has come first, in that order.
fn in_order(entries: &[(Node, Node)], order: &[JsonValue]) -> bool {
    let mut next = 0usize;
    for name in order.iter().filter_map(JsonValue::as_str) {
        match entries.iter().position(|(k, _)| k.as_str() == Some(name)) {
            Some(i) if i == next => next += 1,
            Some(_) => return false,
            None => {}
        }
    }
    true
}

/// The keys named in `order` first, in that order, then the others as they were.
fn reorder(entries: &[(Node, Node)], order: &[JsonValue]) -> Vec<(Node, Node)> {
    let mut out = Vec::with_capacity(entries.len());
    let mut used = vec![false; entries.len()];
    for name in order.iter().filter_map(JsonValue::as_str) {
        if let Some(i) = entries.iter().position(|(k, _)| k.as_str() == Some(name)) {
            if let (Some(slot), Some(e)) = (used.get_mut(i), entries.get(i)) {
                if !*slot {
                    *slot = true;
                    out.push(e.clone());
                }
            }
        }
    }
    for (e, u) in entries.iter().zip(&used) {
        if !u {
            out.push(e.clone());
        }
    }
    out
}

/// Resolves `$ref` `r` against the document `doc` with id `uri`: the schema it points at,
/// and the document and id it lives in.
fn resolve(
    r: &str,
    doc: &Arc<JsonValue>,
    uri: &str,
) -> Option<(JsonValue, Arc<JsonValue>, String)> {
    let (base, fragment) = match r.split_once('#') {
        Some((b, f)) => (b, f),
        None => (r, ""),
    };
    let (tdoc, turi) = if base.is_empty() {
        (doc.clone(), uri.to_string())
    } else {
        let target = join(uri, base);
        (registry::lookup(&target).ok()?, target)
    };
    let node = if fragment.is_empty() {
        (*tdoc).clone()
    } else {
        tdoc.pointer(fragment)?.clone()
    };
    Some((node, tdoc, turi))
}

/// `rel` resolved against `base` (absolute URIs as they are; relative ones replace the last
/// path segment of `base`).
fn join(base: &str, rel: &str) -> String {
    if rel.contains("://") || rel.starts_with("tag:") || rel.starts_with("urn:") {
        return rel.to_string();
    }
    match base.rfind('/') {
        Some(i) => format!("{}{}", &base[..=i], rel),
        None => rel.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: &Node) -> Vec<String> {
        n.as_map()
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn user_schema_hints_are_applied() {
        let schema = r##"
$schema: http://stsci.edu/schemas/yaml-schema/draft-01
id: asdf://example.org/schemas/hinted-1.0.0
type: object
propertyOrder: [b, a]
properties:
  a:
    flowStyle: block
  c:
    $ref: "#/definitions/notes"
  d:
    items:
      flowStyle: flow
definitions:
  notes:
    style: literal
"##;
        super::super::register_schema("asdf://example.org/schemas/hinted-1.0.0", schema).unwrap();
        super::super::register_tag(
            "asdf://example.org/tags/hinted-1.*",
            "asdf://example.org/schemas/hinted-1.0.0",
        );
        let short = Node::from(NodeData {
            tag: None,
            value: Value::Seq(vec![Node::int(1), Node::int(2)]),
            style: Style::Collection(CollectionStyle::Flow),
            anchor: None,
        });
        let inner = Node::map([("x", Node::int(1))]);
        let tagged = Node::tagged(
            "asdf://example.org/tags/hinted-1.0.0",
            Value::Map(vec![
                (Node::str("c"), Node::str("line one\nline two\n")),
                (Node::str("a"), short.clone()),
                (Node::str("d"), Node::seq([inner])),
                (Node::str("b"), Node::int(2)),
            ]),
        );
        let root = Node::map([("t", tagged.clone()), ("again", tagged)]);
        let out = apply_style_hints(&root, "1.6.0");
        let t = out.get("t").unwrap();
        assert_eq!(keys(t), ["b", "a", "c", "d"]);
        assert_eq!(
            t.get("a").unwrap().style(),
            Style::Collection(CollectionStyle::Block)
        );
        assert_eq!(
            t.get("c").unwrap().style(),
            Style::Scalar(ScalarStyle::Literal)
        );
        assert_eq!(
            t.get("d").unwrap().as_seq().unwrap()[0].style(),
            Style::Collection(CollectionStyle::Flow)
        );
        // the shared node stays shared
        assert!(out.get("again").unwrap().ptr_eq(t));
    }

    #[test]
    fn trees_without_hints_are_returned_as_they_are() {
        let root = Node::map([(
            "s",
            Node::tagged("asdf://example.org/tags/unknown-1.0.0", Value::Map(vec![])),
        )]);
        assert!(apply_style_hints(&root, "1.6.0").ptr_eq(&root));
    }
}
