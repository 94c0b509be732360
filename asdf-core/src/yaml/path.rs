//! Tree paths: where in the tree a node is, as the errors of every layer name it (reading,
//! typed conversion, writing).

use std::fmt;

use super::pointer;

/// One step of a tree path: a mapping key or a sequence index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// A tree path: the steps from the root to a node. Displays as its JSON pointer
/// (`/meta/exposure/0`, `~` and `/` in keys escaped as RFC 6901 says; the root is `/`).
///
/// The errors that name a place in the tree carry one (the reader's
/// [`Error`](crate::Error), [`ConvertError::path`](crate::convert::ConvertError::path), the
/// writer's [`WriteError`](crate::write::WriteError)); the conversion contexts
/// ([`ToContext`](crate::convert::ToContext), [`FromContext`](crate::convert::FromContext))
/// track one while they walk a value. Also at its old place, `asdf_core::convert::TreePath`.
/// Compare it with a pointer text directly: `path == "/a/0"`.
///
/// ```
/// use asdf_core::yaml::TreePath;
/// let mut p = TreePath::root();
/// p.push_key("meta");
/// p.push_key("a/b");
/// p.push_index(0);
/// assert_eq!(p.to_string(), "/meta/a~1b/0");
/// assert_eq!(p, "/meta/a~1b/0");
/// p.pop();
/// assert_eq!(p, TreePath::parse("/meta/a~1b"));
/// assert_eq!(TreePath::root().to_string(), "/");
/// ```
///
/// Two paths are equal when their pointers are: the index `0` and the key `"0"` are the
/// same step (a parsed pointer cannot tell them apart).
#[derive(Clone, Debug, Default)]
pub struct TreePath(Vec<PathSegment>);

impl PathSegment {
    /// Whether both steps print the same (`Index(0)` and `Key("0")` do).
    fn same_step(&self, other: &PathSegment) -> bool {
        match (self, other) {
            (PathSegment::Key(a), PathSegment::Key(b)) => a == b,
            (PathSegment::Index(a), PathSegment::Index(b)) => a == b,
            (PathSegment::Key(k), PathSegment::Index(i))
            | (PathSegment::Index(i), PathSegment::Key(k)) => *k == i.to_string(),
        }
    }
}

impl PartialEq for TreePath {
    fn eq(&self, other: &TreePath) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.same_step(b))
    }
}

impl Eq for TreePath {}

/// Hashes the pointer text, as equality compares it.
impl std::hash::Hash for TreePath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.to_string().hash(state);
    }
}

impl TreePath {
    /// The root of the tree (no steps).
    pub fn root() -> Self {
        TreePath(Vec::new())
    }

    /// The path of a JSON pointer (`/a/0/b~1c`; `""` and `/` are the root; empty segments
    /// are skipped). Every step is read as a key: a pointer does not say whether `0` is an
    /// index, and both display the same.
    pub fn parse(pointer: &str) -> Self {
        TreePath(
            pointer::split_pointer(pointer)
                .map(|s| PathSegment::Key(pointer::unescape_segment(s).into_owned()))
                .collect(),
        )
    }

    /// The steps, outermost first.
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds a mapping key at the end.
    pub fn push_key(&mut self, key: &str) {
        self.0.push(PathSegment::Key(key.to_string()));
    }

    /// Adds a sequence index at the end.
    pub fn push_index(&mut self, index: usize) {
        self.0.push(PathSegment::Index(index));
    }

    /// Adds a step at the end.
    pub fn push(&mut self, segment: PathSegment) {
        self.0.push(segment);
    }

    /// Removes the last step (`None` at the root).
    pub fn pop(&mut self) -> Option<PathSegment> {
        self.0.pop()
    }

    /// This path followed by `inner` (a path relative to this one).
    pub fn join(&self, inner: &TreePath) -> TreePath {
        let mut out = self.clone();
        out.0.extend(inner.0.iter().cloned());
        out
    }

    /// Runs `f` on `owner` with `segment` added at the end of the path that `path` finds in
    /// it, and removes it again afterwards: the one path tracker of both conversion
    /// contexts.
    pub(crate) fn within<C, R>(
        owner: &mut C,
        path: fn(&mut C) -> &mut TreePath,
        segment: PathSegment,
        f: impl FnOnce(&mut C) -> R,
    ) -> R {
        path(owner).push(segment);
        let r = f(owner);
        path(owner).pop();
        r
    }
}

impl fmt::Display for TreePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("/");
        }
        let mut out = String::new();
        for s in &self.0 {
            out.push('/');
            match s {
                PathSegment::Key(k) => pointer::push_segment(&mut out, k),
                PathSegment::Index(i) => out.push_str(&i.to_string()),
            }
        }
        f.write_str(&out)
    }
}

impl From<&str> for TreePath {
    fn from(p: &str) -> Self {
        TreePath::parse(p)
    }
}

impl From<String> for TreePath {
    fn from(p: String) -> Self {
        TreePath::parse(&p)
    }
}

impl From<&String> for TreePath {
    fn from(p: &String) -> Self {
        TreePath::parse(p)
    }
}

impl From<&TreePath> for TreePath {
    fn from(p: &TreePath) -> Self {
        p.clone()
    }
}

impl From<Vec<PathSegment>> for TreePath {
    fn from(segments: Vec<PathSegment>) -> Self {
        TreePath(segments)
    }
}

/// Equal when the JSON pointers are (`/` and `""` both the root).
impl PartialEq<str> for TreePath {
    fn eq(&self, other: &str) -> bool {
        *self == TreePath::parse(other)
    }
}

impl PartialEq<&str> for TreePath {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for TreePath {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_an_escaped_json_pointer() {
        let mut p = TreePath::root();
        assert_eq!(p.to_string(), "/");
        p.push_key("a");
        p.push_key("b");
        p.push_index(2);
        assert_eq!(p.to_string(), "/a/b/2");
        p.pop();
        p.push_key("x/y~z");
        // RFC 6901: `/` as `~1`, `~` as `~0`
        assert_eq!(p.to_string(), "/a/b/x~1y~0z");
        assert_eq!(TreePath::parse("/a/b/x~1y~0z"), p);
        assert_eq!(p.segments().len(), 3);
    }

    #[test]
    fn parses_and_compares_by_pointer() {
        assert!(TreePath::parse("").is_root());
        assert!(TreePath::parse("/").is_root());
        assert_eq!(TreePath::root(), "");
        assert_eq!(TreePath::root(), "/");
        let mut p = TreePath::parse("/a");
        p.push_index(0);
        // an index and a key `0` print the same, so they compare equal to the text
        assert_eq!(p, "/a/0");
        assert_ne!(p, "/a/1");
        assert_ne!(p, "/a");
        let inner = TreePath::parse("/c/1");
        assert_eq!(p.join(&inner), "/a/0/c/1");
        assert_eq!(TreePath::root().join(&TreePath::root()), "/");
    }

    #[test]
    fn the_tracker_pops_what_it_pushed() {
        struct Owner(TreePath);
        let mut o = Owner(TreePath::parse("/base"));
        let seen = TreePath::within(
            &mut o,
            |o| &mut o.0,
            PathSegment::Key("k".into()),
            |o| TreePath::within(o, |o| &mut o.0, PathSegment::Index(3), |o| o.0.to_string()),
        );
        assert_eq!(seen, "/base/k/3");
        assert_eq!(o.0, "/base");
    }
}
