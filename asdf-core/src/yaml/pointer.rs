//! JSON pointers (RFC 6901) over the tree: the one escaper of a segment (`~` → `~0`,
//! `/` → `~1`), its inverse, and the split of a pointer into segments. Every path the crates
//! print or parse (errors, `Node::pointer`, edits, the canonical form's error paths, the CLI,
//! the python module) goes through these; the sibling crates reach them through
//! `asdf_core::unstable`.

use std::borrow::Cow;

/// `seg` as a JSON-pointer segment: `~` as `~0`, `/` as `~1` (borrowed when there is
/// nothing to escape).
pub fn escape_segment(seg: &str) -> Cow<'_, str> {
    if seg.contains(['~', '/']) {
        Cow::Owned(seg.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(seg)
    }
}

/// Appends `seg`, escaped as [`escape_segment`] does, to `path` (no `/` before it).
pub fn push_segment(path: &mut String, seg: &str) {
    for c in seg.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// A segment of a JSON pointer unescaped: `~1` as `/`, then `~0` as `~` (so `~01` is `~1`).
pub fn unescape_segment(seg: &str) -> Cow<'_, str> {
    if seg.contains('~') {
        Cow::Owned(seg.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(seg)
    }
}

/// The pointer of a path given as (unescaped) segments: `/a/0/b~1c`; `""` for the root.
pub fn join_segments(segs: &[String]) -> String {
    let mut out = String::new();
    for s in segs {
        out.push('/');
        push_segment(&mut out, s);
    }
    out
}

/// The escaped segments of `path`, empty ones skipped (`""`, `"/"` and `"//"` are the root).
pub(crate) fn split_pointer(path: &str) -> impl Iterator<Item = &str> {
    let p = path.strip_prefix('/').unwrap_or(path);
    p.split('/').filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_rfc_6901_and_back() {
        // RFC 6901 section 3 and 5: "a/b" is "a~1b", "m~n" is "m~0n".
        let cases = [
            ("a/b", "a~1b"),
            ("m~n", "m~0n"),
            ("~1", "~01"),
            ("/~", "~1~0"),
            ("plain", "plain"),
            ("", ""),
        ];
        for (raw, escaped) in cases {
            assert_eq!(escape_segment(raw), escaped, "{raw}");
            let mut pushed = String::from("/x/");
            push_segment(&mut pushed, raw);
            assert_eq!(pushed, format!("/x/{escaped}"), "{raw}");
            assert_eq!(unescape_segment(escaped), raw, "{escaped}");
        }
        assert!(matches!(escape_segment("plain"), Cow::Borrowed(_)));
        let segs = ["a/b", "0", "~"].map(String::from);
        assert_eq!(join_segments(&segs), "/a~1b/0/~0");
        assert_eq!(join_segments(&[]), "");
        assert_eq!(
            split_pointer("/a~1b//0/").collect::<Vec<_>>(),
            ["a~1b", "0"]
        );
    }
}
