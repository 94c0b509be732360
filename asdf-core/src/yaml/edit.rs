//! Editing a [`Node`] tree: by JSON pointer (get_mut, set, insert, remove) and building
//! trees in code ([`tree!`](crate::tree), `From` conversions).
//!
//! Nodes are shared, immutable handles, so an edit is copy on write: each node on the path
//! to the edited place is changed in place when this tree holds the only handle to it, and
//! copied (a shallow copy: its children stay shared) when another handle exists. Other
//! handles to a copied node, including a YAML alias of it elsewhere in the same tree, keep
//! seeing the old content: an edit changes the one place its path names.
//!
//! Paths are JSON pointers as in [`Node::pointer`]: `""` is the root, `/a/b/0` a key or an
//! index at each step, `~1` and `~0` escape `/` and `~` in keys. A sequence index may be
//! negative (counted from the end) and, where a new item may go, `-` names the end.

use super::node::{Integer, Node, NodeData, Value};
use super::pointer::{join_segments, split_pointer, unescape_segment};
use super::shared::Shared;

/// Why an edit of a tree could not be made. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// A step of the path names nothing: no such key, an index past the end, or a scalar
    /// where a mapping or sequence was needed.
    #[error("tree path {path:?}: nothing at {at:?} ({why})")]
    NotFound {
        /// The whole path of the edit.
        path: String,
        /// The part of the path that was found, then the step that was not.
        at: String,
        /// What was there instead.
        why: String,
    },
    /// `insert` of a key that a mapping already has.
    #[error("tree path {path:?}: the mapping already has key {key:?}")]
    KeyExists {
        /// The whole path of the edit.
        path: String,
        /// The key.
        key: String,
    },
    /// The edit names the root, which cannot be inserted or removed (set it instead).
    #[error("tree path {path:?}: the root cannot be {what}")]
    Root {
        /// The path (`""` or `"/"`).
        path: String,
        /// What was asked.
        what: &'static str,
    },
}

impl Node {
    /// The node's data for changing it: in place when this is the only handle to the node,
    /// else a shallow copy that replaces it in `self`. Other handles to a copied node (a YAML
    /// alias of it elsewhere in the tree, a clone held outside) keep the old content.
    pub fn data_mut(&mut self) -> &mut NodeData {
        if Shared::get_mut(&mut self.0).is_none() {
            *self = Node(Shared::new(NodeData::clone(&self.0)));
        }
        Shared::get_mut(&mut self.0).expect("a fresh node has one handle")
    }

    /// The node's value for changing it (see [`Node::data_mut`]).
    pub fn value_mut(&mut self) -> &mut Value {
        &mut self.data_mut().value
    }

    /// The node at `path`, for changing it (copy on write along the path). `None` when the
    /// path names nothing.
    ///
    /// ```
    /// use asdf_core::{tree, Node};
    /// let mut t = tree!({"meta": {"telescope": "JWST"}});
    /// *t.get_mut("/meta/telescope").unwrap() = Node::str("Roman");
    /// assert_eq!(t.pointer("/meta/telescope").and_then(Node::as_str), Some("Roman"));
    /// ```
    pub fn get_mut(&mut self, path: &str) -> Option<&mut Node> {
        let mut cur = self;
        for raw in split_pointer(path) {
            let seg = unescape_segment(raw);
            cur = child_mut(cur, &seg)?;
        }
        Some(cur)
    }

    /// Puts `value` at `path`: replaces the node there, adds a key to a mapping, or appends
    /// to a sequence (index `-` or the sequence's length). The parent must exist (see
    /// [`Node::set_creating`]). Returns the node replaced, if any. `""` replaces the root.
    ///
    /// ```
    /// use asdf_core::{tree, Node};
    /// let mut t = tree!({"a": [1, 2]});
    /// t.set("/b", Node::from("new"))?;
    /// t.set("/a/-", Node::from(3))?;
    /// let old = t.set("/a/0", Node::from(10))?;
    /// assert_eq!(old.and_then(|n| n.as_i64()), Some(1));
    /// assert_eq!(t, tree!({"a": [10, 2, 3], "b": "new"}));
    /// # Ok::<(), asdf_core::yaml::EditError>(())
    /// ```
    pub fn set(&mut self, path: &str, value: impl Into<Node>) -> Result<Option<Node>, EditError> {
        self.put(path, value.into(), Put::Set, false)
    }

    /// As [`Node::set`], creating missing mappings along the path (`mkdir -p`). A missing
    /// step under a sequence, or a scalar in the way, is still an error.
    ///
    /// ```
    /// use asdf_core::{tree, Node};
    /// let mut t = tree!({});
    /// t.set_creating("/meta/instrument/name", Node::from("NIRCAM"))?;
    /// assert_eq!(t, tree!({"meta": {"instrument": {"name": "NIRCAM"}}}));
    /// # Ok::<(), asdf_core::yaml::EditError>(())
    /// ```
    pub fn set_creating(
        &mut self,
        path: &str,
        value: impl Into<Node>,
    ) -> Result<Option<Node>, EditError> {
        self.put(path, value.into(), Put::Set, true)
    }

    /// Inserts `value` at `path`: into a sequence before the item at that index (`-` or the
    /// length appends), or as a new key of a mapping (an existing key is an error: use
    /// [`Node::set`] to replace).
    ///
    /// ```
    /// use asdf_core::{tree, Node};
    /// let mut t = tree!({"steps": ["flat", "dark"]});
    /// t.insert("/steps/0", Node::from("bias"))?;
    /// assert_eq!(t, tree!({"steps": ["bias", "flat", "dark"]}));
    /// assert!(t.insert("/steps", Node::from(1)).is_err());
    /// # Ok::<(), asdf_core::yaml::EditError>(())
    /// ```
    pub fn insert(&mut self, path: &str, value: impl Into<Node>) -> Result<(), EditError> {
        self.put(path, value.into(), Put::Insert, false).map(|_| ())
    }

    /// Removes the node at `path` from its mapping or sequence and returns it.
    ///
    /// ```
    /// use asdf_core::{tree, Node};
    /// let mut t = tree!({"a": 1, "b": [true, false]});
    /// assert_eq!(t.remove("/b/0")?.as_bool(), Some(true));
    /// t.remove("/a")?;
    /// assert_eq!(t, tree!({"b": [false]}));
    /// # Ok::<(), asdf_core::yaml::EditError>(())
    /// ```
    pub fn remove(&mut self, path: &str) -> Result<Node, EditError> {
        let segs: Vec<String> = split_pointer(path)
            .map(|s| unescape_segment(s).into_owned())
            .collect();
        let Some((last, parents)) = segs.split_last() else {
            return Err(EditError::Root {
                path: path.into(),
                what: "removed",
            });
        };
        let parent = self.walk_mut(path, parents, false)?;
        let at = || join_segments(&segs);
        match parent.value_mut() {
            Value::Map(entries) => match find_key(entries, last) {
                Some(i) => Ok(entries.remove(i).1),
                None => Err(not_found(path, at(), "no such key")),
            },
            Value::Seq(items) => match index(last, items.len(), false) {
                Some(i) => Ok(items.remove(i)),
                None => Err(not_found(path, at(), index_why(last, items.len()))),
            },
            other => Err(not_found(path, at(), kind(other))),
        }
    }

    fn put(
        &mut self,
        path: &str,
        value: Node,
        how: Put,
        create: bool,
    ) -> Result<Option<Node>, EditError> {
        let segs: Vec<String> = split_pointer(path)
            .map(|s| unescape_segment(s).into_owned())
            .collect();
        let Some((last, parents)) = segs.split_last() else {
            return match how {
                Put::Set => Ok(Some(std::mem::replace(self, value))),
                Put::Insert => Err(EditError::Root {
                    path: path.into(),
                    what: "inserted",
                }),
            };
        };
        let parent = self.walk_mut(path, parents, create)?;
        let at = || join_segments(&segs);
        match parent.value_mut() {
            Value::Map(entries) => match (find_key(entries, last), how) {
                (Some(_), Put::Insert) => Err(EditError::KeyExists {
                    path: path.into(),
                    key: last.clone(),
                }),
                (Some(i), Put::Set) => Ok(Some(std::mem::replace(&mut entries[i].1, value))),
                (None, _) => {
                    entries.push((Node::str(last.as_str()), value));
                    Ok(None)
                }
            },
            Value::Seq(items) => {
                let len = items.len();
                match (index(last, len, true), how) {
                    (Some(i), Put::Set) if i < len => {
                        Ok(Some(std::mem::replace(&mut items[i], value)))
                    }
                    (Some(i), _) => {
                        items.insert(i, value);
                        Ok(None)
                    }
                    (None, _) => Err(not_found(path, at(), index_why(last, len))),
                }
            }
            other => Err(not_found(path, at(), kind(other))),
        }
    }

    /// The node at `segs` (a prefix of `path`), made changeable; with `create`, missing keys
    /// of mappings become empty mappings.
    fn walk_mut(
        &mut self,
        path: &str,
        segs: &[String],
        create: bool,
    ) -> Result<&mut Node, EditError> {
        let mut cur = self;
        for (k, seg) in segs.iter().enumerate() {
            let at = || join_segments(&segs[..=k]);
            if create {
                if let Value::Map(entries) = cur.value_mut() {
                    if find_key(entries, seg).is_none() {
                        entries.push((Node::str(seg.as_str()), Node::new(Value::Map(Vec::new()))));
                    }
                }
            }
            let why = match cur.value() {
                Value::Map(_) => "no such key".to_string(),
                Value::Seq(items) => index_why(seg, items.len()),
                other => kind(other),
            };
            cur = child_mut(cur, seg).ok_or_else(|| not_found(path, at(), why))?;
        }
        Ok(cur)
    }
}

#[derive(Clone, Copy)]
enum Put {
    Set,
    Insert,
}

/// The child `seg` of `node` (a key of a mapping, an index of a sequence), changeable.
fn child_mut<'n>(node: &'n mut Node, seg: &str) -> Option<&'n mut Node> {
    match node.value() {
        Value::Map(entries) => {
            let i = find_key(entries, seg)?;
            match node.value_mut() {
                Value::Map(entries) => Some(&mut entries[i].1),
                _ => None,
            }
        }
        Value::Seq(items) => {
            let i = index(seg, items.len(), false)?;
            match node.value_mut() {
                Value::Seq(items) => items.get_mut(i),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The entry of an untagged string key `key` (as [`Node::get`] finds it).
fn find_key(entries: &[(Node, Node)], key: &str) -> Option<usize> {
    entries
        .iter()
        .position(|(k, _)| k.as_str() == Some(key) && k.tag().is_none())
}

/// A sequence index: a number (negative from the end) below `len`, or with `end` also
/// `len` itself and `-`.
fn index(seg: &str, len: usize, end: bool) -> Option<usize> {
    if seg == "-" {
        return end.then_some(len);
    }
    let i: i64 = seg.parse().ok()?;
    let len_i = i64::try_from(len).ok()?;
    let i = if i < 0 { len_i + i } else { i };
    let limit = if end { len_i } else { len_i - 1 };
    (0..=limit).contains(&i).then_some(i as usize)
}

fn index_why(seg: &str, len: usize) -> String {
    if seg.parse::<i64>().is_ok() || seg == "-" {
        format!("a sequence of {len} items")
    } else {
        "a sequence, and this is not an index".into()
    }
}

fn kind(v: &Value) -> String {
    format!("{} is there", v.kind_name())
}

fn not_found(path: &str, at: String, why: impl Into<String>) -> EditError {
    EditError::NotFound {
        path: path.into(),
        at,
        why: why.into(),
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Self {
        Node::str(s)
    }
}

impl From<String> for Node {
    fn from(s: String) -> Self {
        Node::str(s)
    }
}

impl From<bool> for Node {
    fn from(b: bool) -> Self {
        Node::new(Value::Bool(b))
    }
}

impl From<f64> for Node {
    fn from(x: f64) -> Self {
        Node::new(Value::Float(x))
    }
}

impl From<f32> for Node {
    fn from(x: f32) -> Self {
        Node::new(Value::Float(f64::from(x)))
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Node {
            fn from(v: $t) -> Self {
                Node::new(Value::Int(Integer::Small(i128::from(v))))
            }
        }
    )*};
}
from_int!(i8, i16, i32, i64, u8, u16, u32, u64, i128);

impl From<usize> for Node {
    fn from(v: usize) -> Self {
        Node::new(Value::Int(Integer::Small(v as i128)))
    }
}

impl From<()> for Node {
    /// `null`.
    fn from(_: ()) -> Self {
        Node::new(Value::Null)
    }
}

impl<T: Into<Node>> From<Option<T>> for Node {
    /// The value, or `null`.
    fn from(v: Option<T>) -> Self {
        v.map_or_else(|| Node::new(Value::Null), Into::into)
    }
}

impl<T: Into<Node>> From<Vec<T>> for Node {
    /// A sequence.
    fn from(items: Vec<T>) -> Self {
        Node::new(Value::Seq(items.into_iter().map(Into::into).collect()))
    }
}

impl From<&Node> for Node {
    /// Another handle to the same node.
    fn from(n: &Node) -> Self {
        n.clone()
    }
}

/// Builds a [`Node`] tree in JSON-like syntax: `{"key": value, ...}` for mappings (keys in
/// order: string literals, or any expression in parentheses that makes a `String`),
/// `[a, b, ...]` for sequences, `null`, and any other expression converted with
/// `Node::from` (strings, numbers, booleans, `Option`s, `Vec`s, and `Node`s themselves, such
/// as the handle [`Writer::add_array`] returns). A very large literal tree may need a higher
/// `#![recursion_limit]`, as `serde_json::json!` does.
///
/// [`Writer::add_array`]: crate::write::Writer::add_array
///
/// ```
/// use asdf_core::{tree, Node};
/// let exposure = 12.5;
/// let t = tree!({
///     "name": "NGC 1300",
///     "exposure": exposure,
///     "filters": ["F150W", "F444W"],
///     "meta": {"reduced": true, "note": null, "count": -3},
/// });
/// assert_eq!(t.pointer("/filters/1").and_then(Node::as_str), Some("F444W"));
/// assert_eq!(t.pointer("/meta/count").and_then(Node::as_i64), Some(-3));
/// assert!(t.pointer("/meta/note").unwrap().is_null());
/// ```
#[macro_export]
macro_rules! tree {
    // mappings: entries munched one at a time, each value up to the next top-level comma
    (@map [$($done:tt)*]) => {
        $crate::Node::new($crate::Value::Map(::std::vec![$($done)*]))
    };
    // (a value of one token tree, the common case, takes one step)
    (@map [$($done:tt)*] $key:tt : $v:tt $(, $($rest:tt)*)?) => {
        $crate::tree!(@map [$($done)* (
            $crate::Node::str(::std::string::String::from($key)),
            $crate::tree!($v)
        ),] $($($rest)*)?)
    };
    (@map [$($done:tt)*] $key:tt : $($rest:tt)*) => {
        $crate::tree!(@value [$($done)*] ($key) [] $($rest)*)
    };
    (@value [$($done:tt)*] ($key:tt) [$($v:tt)+] , $($rest:tt)*) => {
        $crate::tree!(@map [$($done)* (
            $crate::Node::str(::std::string::String::from($key)),
            $crate::tree!($($v)+)
        ),] $($rest)*)
    };
    (@value [$($done:tt)*] ($key:tt) [$($v:tt)+]) => {
        $crate::tree!(@map [$($done)* (
            $crate::Node::str(::std::string::String::from($key)),
            $crate::tree!($($v)+)
        ),])
    };
    (@value [$($done:tt)*] ($key:tt) [$($v:tt)*] $next:tt $($rest:tt)*) => {
        $crate::tree!(@value [$($done)*] ($key) [$($v)* $next] $($rest)*)
    };
    // sequences: items munched one at a time, each up to the next top-level comma
    (@seq [$($done:tt)*]) => {
        $crate::Node::new($crate::Value::Seq(::std::vec![$($done)*]))
    };
    (@seq [$($done:tt)*] $v:tt $(, $($rest:tt)*)?) => {
        $crate::tree!(@seq [$($done)* $crate::tree!($v),] $($($rest)*)?)
    };
    (@seq [$($done:tt)*] $($rest:tt)+) => {
        $crate::tree!(@item [$($done)*] [] $($rest)+)
    };
    (@item [$($done:tt)*] [$($v:tt)+] , $($rest:tt)*) => {
        $crate::tree!(@seq [$($done)* $crate::tree!($($v)+),] $($rest)*)
    };
    (@item [$($done:tt)*] [$($v:tt)+]) => {
        $crate::tree!(@seq [$($done)* $crate::tree!($($v)+),])
    };
    (@item [$($done:tt)*] [$($v:tt)*] $next:tt $($rest:tt)*) => {
        $crate::tree!(@item [$($done)*] [$($v)* $next] $($rest)*)
    };
    (null) => {
        $crate::Node::new($crate::Value::Null)
    };
    ({ $($body:tt)* }) => {
        $crate::tree!(@map [] $($body)*)
    };
    ([ $($body:tt)* ]) => {
        $crate::tree!(@seq [] $($body)*)
    };
    ($other:expr) => {
        $crate::Node::from($other)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_change_only_the_named_place_and_keep_shared_copies() {
        let shared = tree!({"x": 1});
        let mut t = tree!({"a": (&shared), "b": (&shared)});
        t.set("/a/x", 2).unwrap();
        assert_eq!(t.pointer("/a/x").and_then(Node::as_i64), Some(2));
        // the alias elsewhere and the outside handle still see the old content
        assert_eq!(t.pointer("/b/x").and_then(Node::as_i64), Some(1));
        assert_eq!(shared.pointer("/x").and_then(Node::as_i64), Some(1));
    }

    #[test]
    fn a_node_held_once_is_changed_in_place() {
        let mut t = tree!({"a": {"b": [1, 2, 3]}});
        let before = t.pointer("/a/b").unwrap().id();
        t.set("/a/b/1", 20).unwrap();
        assert_eq!(t.pointer("/a/b").unwrap().id(), before, "no copy was made");
        assert_eq!(t, tree!({"a": {"b": [1, 20, 3]}}));
    }

    #[test]
    fn tags_anchors_and_styles_of_edited_ancestors_are_kept() {
        let inner = Node::tagged("tag:example.org/thing-1.0.0", Value::Map(vec![]));
        let mut t = tree!({"thing": inner});
        t.set("/thing/v", 1).unwrap();
        assert_eq!(
            t.pointer("/thing").unwrap().tag(),
            Some("tag:example.org/thing-1.0.0")
        );
    }

    #[test]
    fn errors_name_the_step_that_failed() {
        let mut t = tree!({"a": {"b": [1]}, "s": "text"});
        let e = t.set("/a/c/d", 1).unwrap_err();
        assert_eq!(
            e,
            EditError::NotFound {
                path: "/a/c/d".into(),
                at: "/a/c".into(),
                why: "no such key".into()
            }
        );
        assert!(e.to_string().contains("/a/c"), "{e}");
        let e = t.set("/a/b/5", 1).unwrap_err();
        assert!(
            matches!(&e, EditError::NotFound { at, why, .. }
            if at == "/a/b/5" && why == "a sequence of 1 items"),
            "{e:?}"
        );
        let e = t.set_creating("/s/x", 1).unwrap_err();
        assert!(matches!(&e, EditError::NotFound { why, .. } if why == "a string is there"));
        assert!(matches!(t.remove(""), Err(EditError::Root { .. })));
        assert!(matches!(
            t.insert("/a", 1),
            Err(EditError::KeyExists { .. })
        ));
        // nothing changed by the failed edits
        assert_eq!(t, tree!({"a": {"b": [1]}, "s": "text"}));
    }

    #[test]
    fn sequence_indices_negative_and_end() {
        let mut t = tree!([1, 2, 3]);
        t.set("/-1", 30).unwrap();
        t.insert("/-", 4).unwrap();
        t.insert("/0", 0).unwrap();
        assert_eq!(t.remove("/-2").unwrap().as_i64(), Some(30));
        assert_eq!(t, tree!([0, 1, 2, 4]));
        assert!(t.remove("/-").is_err());
        assert!(t.set("/x", 1).is_err());
    }

    #[test]
    fn escaped_keys_and_set_creating() {
        let mut t = tree!({});
        t.set_creating("/a~1b/c~0d", "v").unwrap();
        assert_eq!(
            t.get("a/b")
                .and_then(|n| n.get("c~d"))
                .and_then(Node::as_str),
            Some("v")
        );
        let mut s = tree!({"seq": []});
        // creating does not make a missing item of a sequence
        assert!(s.set_creating("/seq/0/x", 1).is_err());
    }

    #[test]
    fn the_macro_takes_expressions_nested_collections_and_trailing_commas() {
        let n = 4;
        let t = tree!({
            "neg": -1,
            "sum": n + 1,
            "s": format!("{n}"),
            "nested": [[1, 2], {"k": [true, false,],},],
            "opt": Some(2.5),
            "none": (None::<i32>),
        });
        assert_eq!(t.pointer("/neg").and_then(Node::as_i64), Some(-1));
        assert_eq!(t.pointer("/sum").and_then(Node::as_i64), Some(5));
        assert_eq!(t.pointer("/s").and_then(Node::as_str), Some("4"));
        assert_eq!(
            t.pointer("/nested/1/k/1").and_then(Node::as_bool),
            Some(false)
        );
        assert_eq!(t.pointer("/opt").and_then(Node::as_f64), Some(2.5));
        assert!(t.pointer("/none").unwrap().is_null());
        assert_eq!(tree!([]), Node::seq([]));
        assert_eq!(tree!({}), Node::new(Value::Map(vec![])));
    }
}
