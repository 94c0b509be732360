//! The tagged tree: [`Node`], its [`Value`], and the style hints kept for round trips.
//!
//! A `Node` is a cheap, thread-safe reference-counted handle to immutable node data.
//! Cloning a node clones the handle, so a YAML alias and its anchor are the *same* node:
//! [`Node::ptr_eq`] tells shared identity apart from equal content. The parser also shares
//! the plain scalars it builds (no tag, no anchor) between occurrences of the same text, such
//! as a key repeated in every record of a catalog; scalars without an anchor name are
//! written in full at each occurrence, so this sharing never shows in written files.

use std::fmt;
use std::sync::Arc;

use super::pointer::{split_pointer, unescape_segment};
use super::shared::{Arena, Shared};

/// Full tag URI of the YAML 1.1 core types (`!!str` etc.).
pub const YAML_TAG_PREFIX: &str = "tag:yaml.org,2002:";
/// Prefix of the ASDF standard's tags (`!` handle in ASDF files).
pub const ASDF_TAG_PREFIX: &str = "tag:stsci.edu:asdf/";

/// An exact integer of any size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Integer {
    /// Fits in an `i128`.
    Small(i128),
    /// Larger: the decimal digits with an optional leading `-`, no leading zeros.
    Big(String),
}

/// Largest integer python asdf 6 writes as a plain literal (`2**63 - 1`); larger ones need
/// `core/integer`.
pub const MAX_LITERAL_INT: i128 = (1 << 63) - 1;
/// Smallest integer python asdf 6 writes as a plain literal (`-(2**63 - 2)`); it refuses to
/// write literals beyond these bounds and warns when it reads them.
pub const MIN_LITERAL_INT: i128 = -((1 << 63) - 2);

impl Integer {
    /// The value as `i64`, when it fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Integer::Small(v) => i64::try_from(*v).ok(),
            Integer::Big(_) => None,
        }
    }
    /// The value as `u64`, when it fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Integer::Small(v) => u64::try_from(*v).ok(),
            Integer::Big(_) => None,
        }
    }
    /// The value as `i128`, when it fits.
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            Integer::Small(v) => Some(*v),
            Integer::Big(_) => None,
        }
    }
}

impl fmt::Display for Integer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Integer::Small(v) => write!(f, "{v}"),
            Integer::Big(s) => f.write_str(s),
        }
    }
}

/// How a scalar was written in YAML (kept so a writer can reproduce it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScalarStyle {
    /// No preference / plain.
    #[default]
    Plain,
    /// `'single quoted'`
    SingleQuoted,
    /// `"double quoted"`
    DoubleQuoted,
    /// `|` literal block
    Literal,
    /// `>` folded block
    Folded,
}

/// How a sequence or mapping was written in YAML.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CollectionStyle {
    /// No preference / block style.
    #[default]
    Block,
    /// `[a, b]` / `{a: b}`
    Flow,
}

/// Style hints of a node; they never change its meaning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Style {
    /// No hint.
    #[default]
    Any,
    /// Scalar style.
    Scalar(ScalarStyle),
    /// Collection style.
    Collection(CollectionStyle),
}

/// A YAML 1.1 timestamp, kept as written.
///
/// `text` is the scalar as it appeared; the parsed fields allow conversion to UTC.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// The scalar text exactly as written.
    pub text: String,
    /// Year.
    pub year: i32,
    /// Month 1–12.
    pub month: u8,
    /// Day 1–31.
    pub day: u8,
    /// Time of day, absent for a date-only timestamp.
    pub time: Option<TimeOfDay>,
}

/// The time part of a [`Timestamp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeOfDay {
    /// Hour 0–23.
    pub hour: u8,
    /// Minute 0–59.
    pub minute: u8,
    /// Second 0–60.
    pub second: u8,
    /// Fraction of a second in nanoseconds.
    pub nanosecond: u32,
    /// Offset from UTC in seconds (east positive); `None` means none was written (UTC).
    pub utc_offset_seconds: Option<i32>,
}

/// The content of a node.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`, `~`, empty.
    Null,
    /// `true` / `false` (YAML 1.1 also `yes`/`no`/`on`/`off`).
    Bool(bool),
    /// An exact integer.
    Int(Integer),
    /// A float (`.nan`, `.inf` included).
    Float(f64),
    /// A string. Also the text of every scalar carrying a non-YAML tag.
    Str(String),
    /// A timestamp (boxed: it is rare, and keeps every node small).
    Timestamp(Box<Timestamp>),
    /// Decoded `!!binary` bytes.
    Binary(Vec<u8>),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order. Keys may be any node.
    Map(Vec<(Node, Node)>),
    /// An alias to an enclosing node that was still being built (a recursive structure,
    /// `&a [*a]`), by anchor name. The shared, immutable tree cannot hold the cycle itself;
    /// the enclosing node carries the anchor in [`NodeData::anchor`].
    Recursive(String),
}

impl Value {
    /// What kind of value this is, for messages: `a mapping`, `an integer`, `null`, ...
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Timestamp(_) => "a timestamp",
            Value::Binary(_) => "binary data",
            Value::Seq(_) => "a sequence",
            Value::Map(_) => "a mapping",
            Value::Recursive(_) => "a recursive alias",
        }
    }
}

/// What a node holds, for error messages ("expected ..., found {}"): `null`, `boolean
/// true`, `integer 3`, `float 1.0` (python's `repr`), `string "x"` (quoted as Rust's `{:?}`,
/// cut after 37 characters with `...`), `timestamp 2020-01-01 00:00:00`, `date 2020-01-01`,
/// `binary data (3 bytes)`, `a sequence of 2 items`, `a mapping of 2 keys`, `a recursive
/// alias *a`; then ` tagged <tag>` when the node has a tag. The one describer of nodes for
/// messages (schema validation, datatypes and array descriptors, the typed layer and the
/// derive).
///
/// ```
/// use asdf_core::{tree, yaml::describe, Node, Value};
/// assert_eq!(describe(&Node::new(Value::Float(1.0))), "float 1.0");
/// assert_eq!(describe(&tree!({"a": 1, "b": 2})), "a mapping of 2 keys");
/// assert_eq!(describe(&Node::str("x")), "string \"x\"");
/// ```
pub fn describe(node: &Node) -> String {
    let kind = match node.value() {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Int(i) => format!("integer {i}"),
        Value::Float(f) => format!("float {}", crate::floats::python_repr(*f)),
        Value::Str(s) => {
            let q = format!("{s:?}");
            if q.chars().count() > 40 {
                let cut: String = q.chars().take(37).collect();
                format!("string {cut}...")
            } else {
                format!("string {q}")
            }
        }
        Value::Timestamp(t) if t.time.is_some() => format!("timestamp {}", t.text),
        Value::Timestamp(t) => format!("date {}", t.text),
        Value::Binary(b) => format!("binary data ({} bytes)", b.len()),
        Value::Seq(s) => format!("a sequence of {} items", s.len()),
        Value::Map(m) => format!("a mapping of {} keys", m.len()),
        Value::Recursive(a) => format!("a recursive alias *{a}"),
    };
    match node.tag() {
        Some(t) => format!("{kind} tagged {t}"),
        None => kind,
    }
}

/// The data behind a [`Node`] handle.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeData {
    /// Full tag URI after `%TAG` expansion, if the node has one that is not a YAML core tag
    /// (`!!str`, `!!int`, … only select the type and are not kept here). Shared: the parser
    /// keeps one copy of each tag per document.
    pub tag: Option<Arc<str>>,
    /// The value.
    pub value: Value,
    /// Style hint.
    pub style: Style,
    /// Anchor name as written, if any (boxed: anchors are rare, and a thin pointer keeps
    /// every node at 64 bytes).
    pub anchor: Option<Box<String>>,
}

/// A node of the tagged tree: a shared, immutable handle.
#[derive(Clone)]
pub struct Node(pub(super) Shared<NodeData>);

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(tag) = &self.0.tag {
            write!(f, "!<{tag}> ")?;
        }
        fmt::Debug::fmt(&self.0.value, f)
    }
}

/// Content equality (tags and values; styles and anchors are ignored).
impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        Shared::ptr_eq(&self.0, &other.0)
            || (self.0.tag == other.0.tag && self.0.value == other.0.value)
    }
}

impl From<NodeData> for Node {
    fn from(d: NodeData) -> Self {
        Node(Shared::new(d))
    }
}

impl From<Value> for Node {
    fn from(v: Value) -> Self {
        Node::new(v)
    }
}

impl Node {
    /// An untagged node with no style hint.
    pub fn new(value: Value) -> Self {
        Node(Shared::new(NodeData {
            tag: None,
            value,
            style: Style::Any,
            anchor: None,
        }))
    }

    /// A tagged node.
    pub fn tagged(tag: impl Into<Arc<str>>, value: Value) -> Self {
        Node(Shared::new(NodeData {
            tag: Some(tag.into()),
            value,
            style: Style::Any,
            anchor: None,
        }))
    }

    /// A string node.
    pub fn str(s: impl Into<String>) -> Self {
        Node::new(Value::Str(s.into()))
    }

    /// An integer node.
    pub fn int(v: i128) -> Self {
        Node::new(Value::Int(Integer::Small(v)))
    }

    /// A sequence node.
    pub fn seq(items: impl IntoIterator<Item = Node>) -> Self {
        Node::new(Value::Seq(items.into_iter().collect()))
    }

    /// A mapping node with string keys, in the given order.
    ///
    /// ```
    /// use asdf_core::Node;
    /// let m = Node::map([("a", Node::int(1)), ("b", Node::seq([Node::str("x")]))]);
    /// assert_eq!(m.pointer("/b/0").and_then(Node::as_str), Some("x"));
    /// ```
    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Node)>) -> Self {
        Node::new(Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Node::str(k), v))
                .collect(),
        ))
    }

    /// The node's data.
    pub fn data(&self) -> &NodeData {
        &self.0
    }

    /// The value.
    pub fn value(&self) -> &Value {
        &self.0.value
    }

    /// The full tag URI, if any.
    pub fn tag(&self) -> Option<&str> {
        self.0.tag.as_deref()
    }

    /// Style hint.
    pub fn style(&self) -> Style {
        self.0.style
    }

    /// Anchor name, if the node was anchored in the source.
    pub fn anchor(&self) -> Option<&str> {
        self.0.anchor.as_deref().map(String::as_str)
    }

    /// Whether two handles are the same node (shared identity, e.g. anchor and alias).
    pub fn ptr_eq(&self, other: &Node) -> bool {
        Shared::ptr_eq(&self.0, &other.0)
    }

    /// A node allocated in `arena` (the parser's slabs).
    pub(crate) fn in_arena(arena: &mut Arena<NodeData>, d: NodeData) -> Self {
        Node(arena.alloc(d))
    }

    /// Another handle to this node, counted without an atomic operation.
    ///
    /// # Safety
    /// No other thread may hold or obtain a handle to this node while the call runs (the
    /// parser's own nodes, before the tree is returned).
    pub(crate) unsafe fn clone_local(&self) -> Node {
        // SAFETY: the caller's promise is `Shared::clone_local`'s.
        Node(unsafe { Shared::clone_local(&self.0) })
    }

    /// Whether other handles to this node exist.
    pub(crate) fn is_shared(&self) -> bool {
        Shared::count(&self.0) > 1
    }

    /// A stable identity for the node while it lives (address of its data).
    pub fn id(&self) -> usize {
        Shared::as_ptr(&self.0) as usize
    }

    /// Whether the tag is an ASDF `core/ndarray-*` tag of any version.
    pub fn is_ndarray(&self) -> bool {
        self.tag()
            .is_some_and(|t| t.starts_with("tag:stsci.edu:asdf/core/ndarray-"))
    }

    /// String content, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.0.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Integer content, if this is an integer.
    pub fn as_int(&self) -> Option<&Integer> {
        match &self.0.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    /// Integer content as `i64`, if it is one and fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_int().and_then(Integer::as_i64)
    }

    /// Float content (integers are not converted).
    pub fn as_f64(&self) -> Option<f64> {
        match &self.0.value {
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Bool content.
    pub fn as_bool(&self) -> Option<bool> {
        match &self.0.value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Sequence items.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.0.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// Mapping entries in document order.
    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.0.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self.0.value, Value::Null)
    }

    /// Looks up a string key in a mapping (first match). A path (`/a/b/0`) goes through
    /// [`Node::pointer`].
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key) && k.tag().is_none())
            .map(|(_, v)| v)
    }

    /// Follows a path of mapping keys and sequence indices.
    ///
    /// The path is a JSON pointer (`/a/b/0`, `~0`/`~1` escapes); `""` or `"/"` is the node
    /// itself. A sequence index may be negative (counted from the end).
    pub fn pointer(&self, path: &str) -> Option<&Node> {
        let mut cur = self;
        for raw in split_pointer(path) {
            let seg = unescape_segment(raw);
            cur = match &cur.0.value {
                Value::Map(_) => cur.get(&seg)?,
                Value::Seq(items) => {
                    let i: i64 = seg.parse().ok()?;
                    let len = items.len() as i64;
                    let idx = if i < 0 { len + i } else { i };
                    if idx < 0 || idx >= len {
                        return None;
                    }
                    &items[idx as usize]
                }
                _ => return None,
            };
        }
        Some(cur)
    }

    /// Visits every node depth-first (pre-order) with its JSON-pointer path. Shared nodes
    /// are visited at each place they occur; recursion through an ancestor is not followed.
    pub fn walk(&self, mut f: impl FnMut(&str, &Node)) {
        let mut path = String::new();
        let mut ancestors = Vec::new();
        self.walk_inner(&mut path, &mut ancestors, &mut f);
    }

    fn walk_inner(
        &self,
        path: &mut String,
        ancestors: &mut Vec<usize>,
        f: &mut impl FnMut(&str, &Node),
    ) {
        if ancestors.contains(&self.id()) {
            return;
        }
        f(path, self);
        ancestors.push(self.id());
        let len = path.len();
        match &self.0.value {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    use fmt::Write;
                    let _ = write!(path, "/{i}");
                    item.walk_inner(path, ancestors, f);
                    path.truncate(len);
                }
            }
            Value::Map(entries) => {
                for (k, v) in entries {
                    path.push('/');
                    push_key(path, k);
                    v.walk_inner(path, ancestors, f);
                    path.truncate(len);
                }
            }
            _ => {}
        }
        ancestors.pop();
    }
}

/// A node's place in the tree during [`Node::walk_lazy`]: its JSON pointer, built only when
/// asked for (most visits never need it).
pub(crate) struct TreePath<'a> {
    segs: Vec<Seg<'a>>,
}

enum Seg<'a> {
    Key(&'a Node),
    Index(usize),
}

impl TreePath<'_> {
    /// The JSON pointer (`""` for the root, `/a/0/b` below it).
    pub(crate) fn pointer(&self) -> String {
        let mut s = String::new();
        for seg in &self.segs {
            s.push('/');
            match seg {
                Seg::Key(k) => push_key(&mut s, k),
                Seg::Index(i) => {
                    use fmt::Write;
                    let _ = write!(s, "{i}");
                }
            }
        }
        s
    }
}

impl Node {
    /// Visits every node depth-first (pre-order) like [`Node::walk`], with the path built
    /// only on demand. (A tree of reference-counted handles cannot hold a cycle, so none is
    /// checked for.)
    pub(crate) fn walk_lazy<'a>(&'a self, f: &mut impl FnMut(&TreePath<'a>, &'a Node)) {
        let mut path = TreePath { segs: Vec::new() };
        self.walk_lazy_inner(&mut path, f);
    }

    fn walk_lazy_inner<'a>(
        &'a self,
        path: &mut TreePath<'a>,
        f: &mut impl FnMut(&TreePath<'a>, &'a Node),
    ) {
        f(path, self);
        match &self.0.value {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.segs.push(Seg::Index(i));
                    item.walk_lazy_inner(path, f);
                    path.segs.pop();
                }
            }
            Value::Map(entries) => {
                for (k, v) in entries {
                    path.segs.push(Seg::Key(k));
                    v.walk_lazy_inner(path, f);
                    path.segs.pop();
                }
            }
            _ => {}
        }
    }
}

fn push_key(path: &mut String, k: &Node) {
    match k.value() {
        Value::Str(s) => super::pointer::push_segment(path, s),
        Value::Int(i) => path.push_str(&i.to_string()),
        Value::Bool(b) => path.push_str(if *b { "true" } else { "false" }),
        Value::Null => path.push_str("null"),
        other => path.push_str(&format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_follows_maps_and_sequences() {
        let leaf = Node::new(Value::Int(Integer::Small(7)));
        let seq = Node::new(Value::Seq(vec![Node::str("x"), leaf.clone()]));
        let root = Node::map(vec![("a/b", Node::map(vec![("s", seq)]))]);
        assert_eq!(root.pointer("/a~1b/s/1").unwrap().as_i64(), Some(7));
        assert_eq!(root.pointer("/a~1b/s/-2").unwrap().as_str(), Some("x"));
        assert!(root.pointer("/a~1b/s/2").is_none());
        assert!(root.pointer("/missing").is_none());
        assert!(root.pointer("").unwrap().ptr_eq(&root));
    }

    #[test]
    fn shared_nodes_keep_identity() {
        let shared = Node::str("same");
        let root = Node::new(Value::Seq(vec![shared.clone(), shared.clone()]));
        let items = root.as_seq().unwrap();
        assert!(items[0].ptr_eq(&items[1]));
        let mut paths = Vec::new();
        root.walk(|p, _| paths.push(p.to_string()));
        assert_eq!(paths, vec!["", "/0", "/1"]);
    }
}
