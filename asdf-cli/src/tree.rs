//! Tree paths shared by the commands: JSON pointers, patterns with `*`, key and scalar text.

use std::path::Path;

use asdf_core::{AsdfFile, Node, Value};

/// A mapping key as text (string keys as they are, other scalars as their value).
pub fn key_text(key: &Node) -> String {
    match key.value() {
        Value::Str(s) => s.clone(),
        other => scalar_text(other),
    }
}

/// A scalar's text for messages: strings quoted, collections summarised.
pub fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => asdf_core::unstable::python_repr(*f),
        Value::Str(s) => format!("{s:?}"),
        Value::Timestamp(t) => t.text.clone(),
        Value::Binary(b) => format!("<{} bytes>", b.len()),
        Value::Seq(s) => format!("[{} items]", s.len()),
        Value::Map(m) => format!("{{{} keys}}", m.len()),
        Value::Recursive(name) => format!("*{name} (recursive)"),
    }
}

/// `s` cut to at most `max` characters (with `…` when cut).
pub fn cut(s: String, max: usize) -> String {
    if s.chars().count() > max {
        let mut c: String = s.chars().take(max).collect();
        c.push('…');
        c
    } else {
        s
    }
}

// JSON pointers: asdf-core's one escaper (`~` → `~0`, `/` → `~1`) and its pointer of a
// path given as segments (`""` for the root).
pub use asdf_core::unstable::{
    pointer_of_segments as pointer, push_pointer_segment, unescape_pointer_segment,
};

/// A path as users write it: `""` for the root; a JSON pointer `/a/0/b` (`~0`, `~1`); or,
/// as python asdf's JMESPath expressions, `a.b[0].c` (`[*]` any index).
pub fn parse_path(text: &str) -> Vec<String> {
    if text.is_empty() || text == "/" {
        return Vec::new();
    }
    if let Some(rest) = text.strip_prefix('/') {
        return rest
            .split('/')
            .map(|s| unescape_pointer_segment(s).into_owned())
            .collect();
    }
    let mut segs = Vec::new();
    for part in text.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            segs.push(name.to_string());
        }
        while let Some(open) = rest.strip_prefix('[') {
            let Some(close) = open.find(']') else {
                segs.push(rest.to_string());
                break;
            };
            segs.push(open[..close].to_string());
            rest = &open[close + 1..];
        }
    }
    segs
}

/// The patterns of one `--ignore` value: a path, or python's JMESPath list of paths
/// `[asdf_library,history]` (as python's `asdftool diff -i '[asdf_library,history]'`).
pub fn patterns(text: &str) -> Vec<Pattern> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        // a list when the outer brackets pair with each other and hold more than an index
        let mut depth = 0i32;
        let mut parts = vec![String::new()];
        let mut paired = true;
        for c in inner.chars() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth < 0 {
                        paired = false;
                        break;
                    }
                }
                ',' if depth == 0 => {
                    parts.push(String::new());
                    continue;
                }
                _ => {}
            }
            if let Some(last) = parts.last_mut() {
                last.push(c);
            }
        }
        let index = inner == "*" || inner.parse::<i64>().is_ok();
        if paired && depth == 0 && !index && !inner.is_empty() {
            return parts.iter().map(|p| Pattern::new(p.trim())).collect();
        }
    }
    vec![Pattern::new(t)]
}

/// A path pattern: segments where `*` matches any key or index.
#[derive(Clone, Debug)]
pub struct Pattern(Vec<String>);

impl Pattern {
    /// Parses a pattern written as [`parse_path`] reads paths.
    pub fn new(text: &str) -> Pattern {
        Pattern(parse_path(text))
    }

    /// Whether `path` (segments) is this pattern's node.
    pub fn matches(&self, path: &[String]) -> bool {
        self.0.len() == path.len() && self.0.iter().zip(path).all(|(p, s)| p == "*" || p == s)
    }
}

/// The node at `path` (segments): mapping keys by text, sequence items by index (negative
/// from the end).
pub fn lookup<'a>(root: &'a Node, path: &[String]) -> Option<&'a Node> {
    let mut cur = root;
    for seg in path {
        cur = match cur.value() {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| key_text(k) == *seg)
                .map(|(_, v)| v)?,
            Value::Seq(items) => {
                let i: i64 = seg.parse().ok()?;
                let idx = if i < 0 { items.len() as i64 + i } else { i };
                items.get(usize::try_from(idx).ok()?)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// The tree paths of the arrays asked for: PATH's (which must be an array), or every array
/// of the file in document order.
pub fn array_paths(file: &AsdfFile, input: &Path, at: Option<&str>) -> Result<Vec<String>, String> {
    match at {
        None => Ok(file.arrays().into_iter().map(|(p, _)| p).collect()),
        Some(at) => {
            let segs = parse_path(at);
            let here = pointer(&segs);
            let node = lookup(file.tree(), &segs)
                .ok_or_else(|| format!("{}: no node at {at:?}", input.display()))?;
            if !(node.is_ndarray() || asdf_core::file::is_zarr(node)) {
                return Err(format!("{}: {here} is not an array", input.display()));
            }
            Ok(vec![here])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_both_ways() {
        assert_eq!(parse_path("/a/b~1c/0"), vec!["a", "b/c", "0"]);
        assert_eq!(
            parse_path("frames[*].reference_frame"),
            vec!["frames", "*", "reference_frame"]
        );
        assert_eq!(parse_path("asdf_library"), vec!["asdf_library"]);
        assert!(parse_path("").is_empty());
        assert_eq!(pointer(&["a/b".into(), "0".into()]), "/a~1b/0");
        let both = patterns("[asdf_library, history]");
        assert!(both[0].matches(&["asdf_library".into()]));
        assert!(both[1].matches(&["history".into()]));
        assert_eq!(patterns("frames[*].x").len(), 1);
        let two = patterns("[asdf_library,frames[*].reference_frame]");
        assert!(two[1].matches(&["frames".into(), "2".into(), "reference_frame".into()]));
        assert_eq!(patterns("[0]").len(), 1);
        let p = Pattern::new("/frames/*/reference_frame");
        assert!(p.matches(&["frames".into(), "3".into(), "reference_frame".into()]));
        assert!(!p.matches(&["frames".into(), "3".into()]));
    }
}
