//! Schema defaults filled into trees read under ASDF Standard 1.5.0 and earlier, as python
//! asdf does (`legacy_fill_schema_defaults`, on by default in asdf 6.0.0).
//!
//! Python asdf runs its validator over the tagged tree with only three keywords active
//! (`properties`, `allOf`, `items`), before it validates or converts anything; this module
//! walks the tree the same way, in the same order:
//!
//! - every node of the tree is visited (mapping values and sequence items, not keys),
//!   starting with an empty schema; a node visited with an empty schema passes it on to
//!   its children;
//! - a tagged node whose tag has a schema under the file's standard version is also
//!   visited with that schema (before the schema it was reached with);
//! - with a non-empty schema, its keywords apply in the schema's order: `properties`, on a
//!   mapping, first adds every listed property that is missing and whose subschema has a
//!   `default` (appended, in the order the schema lists them), then visits each property the
//!   mapping has with its subschema; `allOf` visits the node with each subschema; `items`, on
//!   a sequence, visits each item with the item schema (or item by item with a list of
//!   schemas). Nothing else is followed: not `$ref`, `anyOf`, `oneOf`,
//!   `additionalProperties`, `patternProperties`, `definitions`;
//! - a mapping holding a `$ref` key (a JSON reference) is left alone, content and all;
//! - each (node, schema) pair is visited once (an aliased node is one node).
//!
//! A default whose place does not apply (the node is not a mapping, the item not a
//! sequence) is skipped, never an error. The default is the schema's value as written
//! (for example the string `deg`, not a `unit` tag). Filled mappings are rebuilt with the
//! added entries at the end; an aliased mapping stays one node, shared by its aliases.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::bundled;
use crate::yaml::{parse, Node, NodeData, Value, YamlLimits};

/// The last ASDF Standard version whose files get schema defaults filled in.
pub const FILL_DEFAULTS_MAX: &str = "1.5.0";

/// Whether python asdf fills schema defaults into files of ASDF Standard `standard`: a known
/// version up to [`FILL_DEFAULTS_MAX`] (`1.0.0` to `1.5.0`).
///
/// ```
/// use asdf_core::schema::fills_defaults;
/// assert!(fills_defaults("1.1.0"));
/// assert!(!fills_defaults("1.6.0"));
/// ```
pub fn fills_defaults(standard: &str) -> bool {
    let all = bundled::standards();
    let last = all.iter().position(|s| *s == FILL_DEFAULTS_MAX);
    last.is_some_and(|last| all[..=last].contains(&standard))
}

/// `root` with the defaults of the standard's schemas filled in, as python asdf fills them
/// when it reads a file of ASDF Standard `standard` (see the module documentation); `root`
/// itself (the same handle) when the standard fills nothing or nothing is missing.
///
/// ```
/// use asdf_core::schema::fill_defaults;
/// use asdf_core::{Node, Value};
///
/// let coord = Node::tagged(
///     "tag:stsci.edu:asdf/wcs/icrs_coord-1.1.0",
///     Node::map([
///         ("ra", Node::map([("value", Node::int(10))])),
///         ("dec", Node::map([("value", Node::int(20))])),
///     ])
///     .value()
///     .clone(),
/// );
/// let tree = Node::map([("coord", coord)]);
/// let filled = fill_defaults(&tree, "1.1.0");
/// assert_eq!(filled.pointer("/coord/ra/unit").and_then(Node::as_str), Some("deg"));
/// assert_eq!(filled.pointer("/coord/ra/wrap_angle").and_then(Node::as_str), Some("360 deg"));
/// // ASDF Standard 1.6.0 fills nothing.
/// assert!(fill_defaults(&tree, "1.6.0").ptr_eq(&tree));
/// ```
pub fn fill_defaults(root: &Node, standard: &str) -> Node {
    if !fills_defaults(standard) {
        return root.clone();
    }
    let fills = plan(root, standard);
    if fills.is_empty() {
        return root.clone();
    }
    on_stack_for(root, || {
        let mut memo = HashMap::new();
        rebuild(root, &fills, &mut memo).unwrap_or_else(|| root.clone())
    })
    .unwrap_or_else(|| root.clone())
}

/// Every bundled schema, parsed as a YAML tree (so defaults keep their YAML types), by id.
fn schema_trees() -> &'static HashMap<&'static str, Node> {
    static TREES: OnceLock<HashMap<&'static str, Node>> = OnceLock::new();
    TREES.get_or_init(|| {
        bundled::all()
            .filter_map(|(id, text)| {
                let doc = parse(text.as_bytes(), &YamlLimits::default()).ok()?;
                Some((id, doc.root))
            })
            .collect()
    })
}

/// The empty schema the walk starts with.
fn empty_schema() -> &'static Node {
    static EMPTY: OnceLock<Node> = OnceLock::new();
    EMPTY.get_or_init(|| Node::new(Value::Map(Vec::new())))
}

/// Entries added to each mapping (by node id), in the order python adds them: the property
/// name and the schema's `default` node.
type Fills = HashMap<usize, Vec<(&'static str, &'static Node)>>;

/// One step of the walk. The walk is an explicit stack, so the depth of a tree cannot
/// exhaust the thread's stack; tasks are pushed in reverse so they run in python's order.
/// Schemas are parts of the static schema trees, and so are the defaults filled in.
enum Task<'a> {
    /// Visit a node with a schema.
    Visit(&'a Node, &'static Node),
    /// Fill the missing defaults of a `properties` mapping into a mapping node.
    Fill(&'a Node, &'static Node),
    /// Visit one property of a mapping node with its subschema, if the node has it (by then).
    Property(&'a Node, &'static str, &'static Node),
}

/// The value of `key` in mapping `node`: its own entry, else one filled in so far.
fn member<'a>(node: &'a Node, key: &str, fills: &Fills) -> Option<&'a Node> {
    let own = node
        .as_map()
        .unwrap_or_default()
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v);
    own.or_else(|| {
        fills
            .get(&node.id())
            .and_then(|f| f.iter().find(|(k, _)| *k == key).map(|(_, v)| *v))
    })
}

/// Runs the walk and returns what it fills.
fn plan(root: &Node, standard: &str) -> Fills {
    let schemas = schema_trees();
    let tag_schema = |tag: &str| -> Option<&'static Node> {
        bundled::schema_for_tag(standard, tag).and_then(|id| schemas.get(id))
    };
    let mut fills: Fills = HashMap::new();
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut stack: Vec<Task<'_>> = vec![Task::Visit(root, empty_schema())];
    while let Some(task) = stack.pop() {
        match task {
            Task::Visit(node, schema) => {
                // Scalars hold nothing to fill, and visiting them changes nothing.
                if !matches!(node.value(), Value::Map(_) | Value::Seq(_))
                    || !seen.insert((node.id(), schema.id()))
                    || node.get("$ref").is_some()
                {
                    continue;
                }
                let mut next: Vec<Task<'_>> = Vec::new();
                if let Some(own) = node.tag().and_then(tag_schema) {
                    if !own.ptr_eq(schema) {
                        next.push(Task::Visit(node, own));
                    }
                }
                match schema.as_map() {
                    Some(keywords) if !keywords.is_empty() => {
                        for (k, v) in keywords {
                            keyword(node, k.as_str(), v, &mut next);
                        }
                    }
                    // The empty schema: every value (those filled in so far included) and
                    // every item, with the same schema.
                    Some(_) => match node.value() {
                        Value::Map(entries) => {
                            next.extend(entries.iter().map(|(_, v)| Task::Visit(v, schema)));
                            let added = fills.get(&node.id()).map(Vec::as_slice);
                            next.extend(
                                added
                                    .unwrap_or_default()
                                    .iter()
                                    .map(|(_, v)| Task::Visit(v, schema)),
                            );
                        }
                        Value::Seq(items) => {
                            next.extend(items.iter().map(|i| Task::Visit(i, schema)));
                        }
                        _ => {}
                    },
                    None => {}
                }
                stack.extend(next.into_iter().rev());
            }
            Task::Fill(node, props) => {
                for (name, sub) in props.as_map().unwrap_or_default() {
                    let (Some(name), Some(default)) = (name.as_str(), sub.get("default")) else {
                        continue;
                    };
                    if member(node, name, &fills).is_none() {
                        fills.entry(node.id()).or_default().push((name, default));
                    }
                }
            }
            Task::Property(node, name, sub) => {
                if let Some(value) = member(node, name, &fills) {
                    stack.push(Task::Visit(value, sub));
                }
            }
        }
    }
    fills
}

/// The tasks of one schema keyword applied to `node` (only the three python follows).
fn keyword<'a>(node: &'a Node, name: Option<&str>, value: &'static Node, next: &mut Vec<Task<'a>>) {
    match name {
        Some("properties") if node.as_map().is_some() => {
            let Some(props) = value.as_map() else { return };
            next.push(Task::Fill(node, value));
            for (prop, sub) in props {
                if let Some(prop) = prop.as_str() {
                    next.push(Task::Property(node, prop, sub));
                }
            }
        }
        Some("allOf") => {
            next.extend(
                value
                    .as_seq()
                    .unwrap_or_default()
                    .iter()
                    .map(|s| Task::Visit(node, s)),
            );
        }
        Some("items") => {
            let items = node.as_seq().unwrap_or_default();
            if value.as_map().is_some() {
                next.extend(items.iter().map(|i| Task::Visit(i, value)));
            } else if let Some(each) = value.as_seq() {
                next.extend(items.iter().zip(each).map(|(i, s)| Task::Visit(i, s)));
            }
        }
        _ => {}
    }
}

/// `node` with its fills and those of its descendants applied, or `None` when nothing in
/// it changes. `memo` keeps one rebuilt node per original, so aliases stay shared.
fn rebuild(node: &Node, fills: &Fills, memo: &mut HashMap<usize, Option<Node>>) -> Option<Node> {
    if !matches!(node.value(), Value::Map(_) | Value::Seq(_)) {
        return None;
    }
    if let Some(done) = memo.get(&node.id()) {
        return done.clone();
    }
    let value = match node.value() {
        Value::Seq(items) => {
            let new: Vec<Option<Node>> = items.iter().map(|i| rebuild(i, fills, memo)).collect();
            new.iter().any(Option::is_some).then(|| {
                Value::Seq(
                    items
                        .iter()
                        .zip(new)
                        .map(|(old, new)| new.unwrap_or_else(|| old.clone()))
                        .collect(),
                )
            })
        }
        Value::Map(entries) => {
            let new: Vec<Option<Node>> = entries
                .iter()
                .map(|(_, v)| rebuild(v, fills, memo))
                .collect();
            let added = fills.get(&node.id());
            (added.is_some() || new.iter().any(Option::is_some)).then(|| {
                let mut out: Vec<(Node, Node)> = entries
                    .iter()
                    .zip(new)
                    .map(|((k, old), new)| (k.clone(), new.unwrap_or_else(|| old.clone())))
                    .collect();
                for (k, v) in added.map(Vec::as_slice).unwrap_or_default() {
                    out.push((Node::str(*k), (*v).clone()));
                }
                Value::Map(out)
            })
        }
        _ => None,
    };
    let out = value.map(|value| {
        let d = node.data();
        Node::from(NodeData {
            tag: d.tag.clone(),
            value,
            style: d.style,
            anchor: d.anchor.clone(),
        })
    });
    memo.insert(node.id(), out.clone());
    out
}

/// Runs `f` here for shallow trees, else on a thread whose stack fits the tree's depth (the
/// rebuild recurses once per level); `None` if no such thread can be made.
fn on_stack_for<T: Send>(node: &Node, f: impl FnOnce() -> T + Send) -> Option<T> {
    // generous for unoptimised builds; the stack is reserved, and touched only as used
    const PER_LEVEL: usize = 4096;
    if !super::deeper_than(node, super::SHALLOW) {
        return Some(f());
    }
    let mut depth = super::SHALLOW;
    while super::deeper_than(node, depth) && depth < usize::MAX / 4 / PER_LEVEL {
        depth *= 2;
    }
    let size = (depth + 64).saturating_mul(PER_LEVEL).max(1 << 20);
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(size)
            .spawn_scoped(scope, f)
            .ok()?
            .join()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse, YamlLimits};

    fn tree(body: &str) -> Node {
        let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---\n{body}\n...\n");
        parse(text.as_bytes(), &YamlLimits::default())
            .expect("parses")
            .root
    }

    #[test]
    fn which_standards_fill() {
        for s in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0"] {
            assert!(fills_defaults(s), "{s}");
        }
        for s in ["1.6.0", "1.7.0", "0.1.0", "", "1.5", "1.5.0 "] {
            assert!(!fills_defaults(s), "{s}");
        }
    }

    #[test]
    fn nested_defaults_are_appended_in_schema_order() {
        let t = tree("c: !wcs/icrs_coord-1.1.0 {dec: {value: 2}, ra: {value: 1}}");
        let filled = fill_defaults(&t, "1.1.0");
        let ra = filled.pointer("/c/ra").expect("ra");
        let keys: Vec<&str> = ra
            .as_map()
            .expect("map")
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["value", "unit", "wrap_angle"]);
        assert_eq!(
            filled.pointer("/c/dec/unit").and_then(Node::as_str),
            Some("deg")
        );
        // the input is left as it was
        assert!(t.pointer("/c/ra/unit").is_none());
        // not a tag of 1.0.0, nor of 1.5.0: nothing to fill
        assert!(fill_defaults(&t, "1.0.0").ptr_eq(&t));
        assert!(fill_defaults(&t, "1.5.0").ptr_eq(&t));
    }

    #[test]
    fn an_alias_stays_one_node() {
        let t = tree("a: &x !wcs/spectral_frame-1.1.0 {name: s}\nb: *x\nc: [*x]");
        let filled = fill_defaults(&t, "1.2.0");
        let (a, b, c) = (
            filled.get("a").expect("a"),
            filled.get("b").expect("b"),
            filled.pointer("/c/0").expect("c"),
        );
        assert!(a.ptr_eq(b) && a.ptr_eq(c));
        assert_eq!(
            a.get("reference_position").and_then(Node::as_str),
            Some("geocenter")
        );
        assert_eq!(a.anchor(), Some("x"));
    }

    #[test]
    fn present_values_win_and_refs_are_left_alone() {
        let t = tree(
            "a: !wcs/step-1.1.0 {frame: f, transform: {name: t}}\n\
             b: !wcs/step-1.1.0 {$ref: 'x.asdf#/s'}\n\
             c: !core/table-1.0.0 {columns: [], meta: {k: 1}}",
        );
        let filled = fill_defaults(&t, "1.3.0");
        assert_eq!(
            filled.pointer("/a/transform/name").and_then(Node::as_str),
            Some("t")
        );
        assert!(filled.pointer("/b/transform").is_none());
        assert_eq!(filled.pointer("/c/meta/k").and_then(Node::as_i64), Some(1));
        assert!(filled.ptr_eq(&t), "nothing was missing");
    }

    #[test]
    fn odd_shapes_are_skipped_without_panic() {
        let bodies = [
            "a: !wcs/icrs_coord-1.1.0 [1, 2]",
            "a: !wcs/icrs_coord-1.1.0 text",
            "a: !wcs/icrs_coord-1.1.0 {ra: [1], dec: 5}",
            "a: !wcs/icrs_coord-1.1.0 {1: 2, null: 3, [x]: 4}",
            "a: !fits/fits-1.0.0 [[header], 5, null, {header: []}]",
            "a: !fits/fits-1.0.0 {header: []}",
            "a: &r [*r, !core/table-1.0.0 {columns: [*r]}]",
            "a: !core/table-1.0.0 &t {columns: [], t: *t}",
            "!wcs/icrs_coord-1.1.0 {ra: {}, dec: {}}",
            "5",
            "",
        ];
        for body in bodies {
            let t = tree(body);
            for standard in bundled::standards() {
                let _ = fill_defaults(&t, standard);
            }
        }
        let fits = fill_defaults(&tree(bodies[4]), "1.0.0");
        assert!(fits.pointer("/a/3/data").is_some_and(Node::is_null));
        assert!(fits.pointer("/a/0/data").is_none());
        let root = fill_defaults(&tree(bodies[8]), "1.1.0");
        assert_eq!(root.pointer("/ra/unit").and_then(Node::as_str), Some("deg"));
    }

    #[test]
    fn deep_trees_do_not_overflow() {
        // as deep as the YAML parser allows by default (1000 levels)
        let depth = 990;
        let body = format!(
            "{}!core/table-1.0.0 {{columns: []}}{}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let limits = YamlLimits::default();
        let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---\n{body}\n...\n");
        let t = parse(text.as_bytes(), &limits).expect("parses").root;
        let filled = fill_defaults(&t, "1.5.0");
        let mut node = &filled;
        for _ in 0..depth {
            node = &node.as_seq().expect("a list")[0];
        }
        assert!(node.get("meta").is_some());
    }
}
