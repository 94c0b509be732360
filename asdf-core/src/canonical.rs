//! The `asdf-canonical/1` JSON form of a file's logical content (specified in the
//! repository's `docs/canonical.md`): the tree with its tags, and every ndarray as dtype, shape and
//! the SHA-256 of its values. Layout (compression, block order, inline or external storage,
//! anchors, YAML style) does not show.
//!
//! The text is written like python's `json.dumps(sort_keys=True, indent=1,
//! ensure_ascii=False)`, so diffs against the oracle's sidecars stay readable; compare
//! parsed values, not text.
//!
//! The writer is hand-written: serde_json cannot lay out the form's inline objects and lists
//! inside the indented document, and it is slower on trees of many scalars
//! (`examples/canonical_vs_serde_json.rs`: 479 ms against 578 ms for a 15 MB document).

use std::fmt::Write;

use std::cell::RefCell;

use crate::array::{DType, NdArrayMeta};
use crate::floats;
use crate::progress::Ticker;
use crate::yaml::{self, Node, Value, YAML_TAG_PREFIX};
use crate::{AsdfFile, Progress, Result};

/// The format identifier.
pub const FORMAT_ID: &str = "asdf-canonical/1";

/// The canonical JSON text of an opened file. Reads every array (and so every block the
/// tree uses).
pub fn to_json(file: &AsdfFile) -> Result<String> {
    render(file, None)
}

/// As [`to_json`], telling `progress` how far it has come: `(done, total)` in bytes of
/// array data (each array's element count times its item size), every 64 KiB or so as
/// each array is hashed once read, from the calling thread. The total is counted from the arrays' descriptors
/// before any is read; the last report is `(total, total)`.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use asdf_core::Progress;
/// let mut w = asdf_core::Writer::new(asdf_core::WriteOptions::default());
/// let a = ndarray::Array1::<f64>::zeros(100);
/// let b = ndarray::Array2::<u8>::zeros((4, 5));
/// let root = asdf_core::tree!({"a": w.add_array(&a), "b": w.add_array(&b)});
/// let file = asdf_core::AsdfFile::from_bytes(w.write_to_vec(&root)?)?;
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let s = seen.clone();
/// let progress = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
/// let json = asdf_core::unstable::canonical::to_json_with_progress(&file, &progress)?;
/// assert_eq!(json, asdf_core::unstable::canonical::to_json(&file)?);
/// assert_eq!(*seen.lock().unwrap(), [(800, 820), (820, 820)]); // 800 bytes, then 20
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_json_with_progress(file: &AsdfFile, progress: &Progress) -> Result<String> {
    render(file, Some(progress))
}

fn render(file: &AsdfFile, progress: Option<&Progress>) -> Result<String> {
    let total = match progress {
        Some(_) => array_bytes(file.tree()),
        None => 0,
    };
    let ticker = RefCell::new(Ticker::new(progress, total));
    let mut tree = String::new();
    let mut w = Writer {
        file,
        out: &mut tree,
        ticker: &ticker,
    };
    w.node(file.tree(), &mut String::new(), 1)?;
    ticker.borrow_mut().set(total);
    let h = file.header();
    let mut out = String::with_capacity(tree.len() + 128);
    out.push_str("{\n \"format\": ");
    push_str(&mut out, FORMAT_ID);
    out.push_str(",\n \"header\": {\n  \"asdf\": ");
    push_opt(&mut out, h.asdf_version.as_deref());
    out.push_str(",\n  \"standard\": ");
    push_opt(&mut out, h.standard_version.as_deref());
    out.push_str("\n },\n \"tree\": ");
    out.push_str(&tree);
    out.push_str("\n}\n");
    Ok(out)
}

/// Bytes of the data of the arrays in `root`, from their descriptors (arrays whose shape or
/// datatype is not stated, streamed ones, count 0).
fn array_bytes(root: &Node) -> u64 {
    let mut total = 0u64;
    root.walk_lazy(&mut |_, n| {
        if n.is_ndarray() {
            let Ok(meta) = NdArrayMeta::from_node(n, "") else {
                return;
            };
            let items = meta
                .fixed_shape()
                .and_then(|s| s.iter().try_fold(1u64, |a, &d| a.checked_mul(d)));
            let size = meta.dtype.as_ref().map(|d| d.itemsize() as u64);
            if let Some(bytes) = items.zip(size).and_then(|(n, s)| n.checked_mul(s)) {
                total = total.saturating_add(bytes);
            }
        }
    });
    total
}

/// Opens `path` and returns its canonical JSON text.
pub fn document_json(path: impl AsRef<std::path::Path>) -> Result<String> {
    to_json(&AsdfFile::open(path)?)
}

fn push_opt(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => push_str(out, s),
        None => out.push_str("null"),
    }
}

/// `s` as a JSON string literal, escaped as python's `json.dumps(ensure_ascii=False)` does
/// (and serde_json does): `"`, `\\` and control characters only.
fn push_str(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        // nothing to escape (the common case: no allocation)
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::Value::String(s.to_owned()).to_string());
    }
}

/// A datatype in its canonical form (docs/canonical.md): `"<f8"`, `"|u1"`, `"|S4"`, `"<U3"`,
/// or for records a list of `[name, dtype]` / `[name, dtype, shape]`.
#[doc(hidden)] // plumbing: asdf_core::unstable
pub fn dtype_json(dt: &DType) -> String {
    let mut out = String::new();
    push_dtype(&mut out, dt);
    out
}

fn push_dtype(out: &mut String, dt: &DType) {
    match dt {
        DType::Scalar { .. } => push_str(out, &dt.to_numpy_str()),
        DType::Record(fields) => {
            out.push('[');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('[');
                push_str(out, &f.name);
                out.push_str(", ");
                push_dtype(out, &f.dtype);
                if !f.shape.is_empty() {
                    out.push_str(", [");
                    for (j, d) in f.shape.iter().enumerate() {
                        if j > 0 {
                            out.push_str(", ");
                        }
                        let _ = write!(out, "{d}");
                    }
                    out.push(']');
                }
                out.push(']');
            }
            out.push(']');
        }
    }
}

struct Writer<'a, 'p> {
    file: &'a AsdfFile,
    out: &'a mut String,
    /// Bytes of array data hashed, for [`to_json_with_progress`].
    ticker: &'a RefCell<Ticker<'p>>,
}

fn indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push(' ');
    }
}

impl Writer<'_, '_> {
    /// Writes an object from already-rendered `(key, value)` pairs, sorted by key.
    fn object(&mut self, mut entries: Vec<(String, String)>, level: usize) {
        if entries.is_empty() {
            self.out.push_str("{}");
            return;
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        self.out.push('{');
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            indent(self.out, level);
            push_str(self.out, k);
            self.out.push_str(": ");
            self.out.push_str(v);
        }
        indent(self.out, level.saturating_sub(1));
        self.out.push('}');
    }

    fn array(&mut self, items: Vec<String>, level: usize) {
        if items.is_empty() {
            self.out.push_str("[]");
            return;
        }
        self.out.push('[');
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            indent(self.out, level);
            self.out.push_str(v);
        }
        indent(self.out, level.saturating_sub(1));
        self.out.push(']');
    }

    /// Renders a node into a fresh string.
    fn render(&mut self, node: &Node, path: &str, level: usize) -> Result<String> {
        let mut s = String::new();
        let mut w = Writer {
            file: self.file,
            out: &mut s,
            ticker: self.ticker,
        };
        w.node(node, &mut path.to_string(), level)?;
        Ok(s)
    }

    /// Writes a node at `level`. `path` is its JSON pointer (for errors), a buffer the
    /// children's pointers are built in and taken off again.
    fn node(&mut self, node: &Node, path: &mut String, level: usize) -> Result<()> {
        if node.is_ndarray() {
            return self.ndarray(node, path, level);
        }
        match node.tag() {
            Some(t) if t == "tag:yaml.org,2002:omap" || t == "tag:yaml.org,2002:pairs" => {
                return self.omap(node, path, level, t.ends_with("omap"));
            }
            Some("tag:yaml.org,2002:set") => return self.set(node, path, level),
            Some(t) if !t.starts_with(YAML_TAG_PREFIX) => {
                // {"$tag": ..., "value": ...}: the two keys already in sorted order
                self.out.push('{');
                indent(self.out, level);
                self.out.push_str("\"$tag\": ");
                push_str(self.out, t);
                self.out.push(',');
                indent(self.out, level);
                self.out.push_str("\"value\": ");
                self.value(node, path, level + 1)?;
                indent(self.out, level.saturating_sub(1));
                self.out.push('}');
                return Ok(());
            }
            _ => {}
        }
        self.value(node, path, level)
    }

    /// Writes the node converted as if it had no tag.
    fn value(&mut self, node: &Node, path: &mut String, level: usize) -> Result<()> {
        match node.value() {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::Float(f) => floats::push_canonical_json(self.out, *f),
            Value::Str(t) => push_str(self.out, t),
            Value::Timestamp(ts) => {
                self.out.push_str("{\"$timestamp\": ");
                push_str(self.out, &yaml::timestamp_canonical(ts));
                self.out.push('}');
            }
            Value::Recursive(_) => self.out.push_str("{\"$recursive\": true}"),
            Value::Binary(b) => {
                self.out.push_str("{\"$bytes\": \"");
                for byte in b {
                    let _ = write!(self.out, "{byte:02x}");
                }
                self.out.push_str("\"}");
            }
            Value::Seq(items) => {
                if items.is_empty() {
                    self.out.push_str("[]");
                    return Ok(());
                }
                let len = path.len();
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    indent(self.out, level);
                    let _ = write!(path, "/{i}");
                    self.node(item, path, level + 1)?;
                    path.truncate(len);
                }
                indent(self.out, level.saturating_sub(1));
                self.out.push(']');
            }
            Value::Map(entries) => {
                let all_str = entries
                    .iter()
                    .all(|(k, _)| k.tag().is_none() && matches!(k.value(), Value::Str(_)));
                if all_str {
                    self.str_map(entries, path, level)?;
                } else {
                    self.any_map(entries, path, level)?;
                }
            }
        }
        Ok(())
    }

    /// A mapping with string keys: a JSON object sorted by key (`$` doubled at the start of
    /// a key); of duplicate keys the last one wins, as in a python dict. Values are written
    /// straight into the output in key order.
    fn str_map(&mut self, entries: &[(Node, Node)], path: &mut String, level: usize) -> Result<()> {
        if entries.is_empty() {
            self.out.push_str("{}");
            return Ok(());
        }
        let mut order: Vec<(std::borrow::Cow<'_, str>, &str, &Node)> = entries
            .iter()
            .map(|(k, v)| {
                let key = k.as_str().unwrap_or_default();
                let json_key = if key.starts_with('$') {
                    std::borrow::Cow::Owned(format!("${key}"))
                } else {
                    std::borrow::Cow::Borrowed(key)
                };
                (json_key, key, v)
            })
            .collect();
        // stable: of equal keys the last in the file is the last of its run
        order.sort_by(|a, b| a.0.cmp(&b.0));
        let len = path.len();
        self.out.push('{');
        let mut first = true;
        for (i, (key, raw, v)) in order.iter().enumerate() {
            if order.get(i + 1).is_some_and(|next| next.0 == *key) {
                continue; // a later duplicate wins
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            indent(self.out, level);
            push_str(self.out, key);
            self.out.push_str(": ");
            path.push('/');
            yaml::pointer::push_segment(path, raw);
            self.node(v, path, level + 1)?;
            path.truncate(len);
        }
        indent(self.out, level.saturating_sub(1));
        self.out.push('}');
        Ok(())
    }

    /// A mapping with other keys: `{"$map": [[key, value], ...]}` sorted by the keys' JSON.
    fn any_map(&mut self, entries: &[(Node, Node)], path: &str, level: usize) -> Result<()> {
        let mut pairs = Vec::with_capacity(entries.len());
        for (i, (k, v)) in entries.iter().enumerate() {
            let child = format!("{path}/{i}");
            let key = self.render(k, &child, level + 3)?;
            let val = self.render(v, &child, level + 3)?;
            pairs.push((compact_key(&key), key, val));
        }
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let items = pairs
            .into_iter()
            .map(|(_, k, v)| {
                let mut p = String::new();
                Writer {
                    file: self.file,
                    out: &mut p,
                    ticker: self.ticker,
                }
                .array(vec![k, v], level + 2);
                p
            })
            .collect();
        let mut list = String::new();
        Writer {
            file: self.file,
            out: &mut list,
            ticker: self.ticker,
        }
        .array(items, level + 1);
        self.object(vec![("$map".to_string(), list)], level);
        Ok(())
    }

    fn omap(&mut self, node: &Node, path: &str, level: usize, omap: bool) -> Result<()> {
        let mut items = Vec::new();
        if let Some(seq) = node.as_seq() {
            for (i, entry) in seq.iter().enumerate() {
                for (k, v) in entry.as_map().unwrap_or_default() {
                    let child = format!("{path}/{i}");
                    let key = self.render(k, &child, level + 3)?;
                    let val = self.render(v, &child, level + 3)?;
                    let mut p = String::new();
                    Writer {
                        file: self.file,
                        out: &mut p,
                        ticker: self.ticker,
                    }
                    .array(vec![key, val], level + 2);
                    items.push(p);
                }
            }
        }
        let mut list = String::new();
        Writer {
            file: self.file,
            out: &mut list,
            ticker: self.ticker,
        }
        .array(items, level + 1);
        if omap {
            self.object(vec![("$omap".to_string(), list)], level);
        } else {
            self.out.push_str(&list);
        }
        Ok(())
    }

    fn set(&mut self, node: &Node, path: &str, level: usize) -> Result<()> {
        let mut keys = Vec::new();
        for (i, (k, _)) in node.as_map().unwrap_or_default().iter().enumerate() {
            let key = self.render(k, &format!("{path}/{i}"), level + 2)?;
            keys.push((compact_key(&key), key));
        }
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        let mut list = String::new();
        Writer {
            file: self.file,
            out: &mut list,
            ticker: self.ticker,
        }
        .array(keys.into_iter().map(|k| k.1).collect(), level + 1);
        self.object(vec![("$set".to_string(), list)], level);
        Ok(())
    }

    fn ndarray(&mut self, node: &Node, path: &str, level: usize) -> Result<()> {
        let arr = self.file.dyn_array_of(node, path)?;
        // reported as the hashing goes, then the whole array once hashed
        let before = self.ticker.borrow().done();
        let sha256 = arr.canonical_sha256_hex_counted(|n| {
            self.ticker
                .borrow_mut()
                .set(before.saturating_add(n as u64));
        });
        let bytes = (arr.element_count() as u64).saturating_mul(arr.dtype.itemsize() as u64);
        self.ticker.borrow_mut().set(before.saturating_add(bytes));
        let mut fields = vec![
            ("dtype".to_string(), dtype_json(&arr.dtype)),
            ("sha256".to_string(), json_string(&sha256)),
        ];
        let mut shape = String::from("[");
        for (i, d) in arr.shape.iter().enumerate() {
            if i > 0 {
                shape.push_str(", ");
            }
            let _ = write!(shape, "{d}");
        }
        shape.push(']');
        fields.push(("shape".to_string(), shape));
        if let Some(mask) = node.get("mask") {
            let rendered = self.render(mask, &format!("{path}/mask"), level + 2)?;
            fields.push(("mask".to_string(), rendered));
        }
        let mut inner = String::new();
        Writer {
            file: self.file,
            out: &mut inner,
            ticker: self.ticker,
        }
        .object(fields, level + 1);
        self.object(vec![("$ndarray".to_string(), inner)], level);
        Ok(())
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_str(&mut out, s);
    out
}

/// A rendered key without layout whitespace, for ordering `$map` pairs.
fn compact_key(rendered: &str) -> String {
    let mut out = String::with_capacity(rendered.len());
    let mut in_str = false;
    let mut escaped = false;
    for c in rendered.chars() {
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if c != '\n' && c != ' ' {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_every_array_hashed_up_to_the_total() {
        use std::sync::{Arc, Mutex};
        let data = ndarray::Array1::<f32>::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let mask = ndarray::Array1::from_vec(vec![false, true, false, false, true, false]);
        let shared = ndarray::Array1::<u16>::from_elem(10, 7);
        let mut w = crate::Writer::new(crate::WriteOptions::default());
        let masked = w.add_masked_array(&data, &mask, Default::default());
        let one = w.add_array(&shared);
        // the same array twice (a YAML alias): hashed twice, counted twice
        let root = crate::tree!({"m": masked, "s": {"x": one.clone(), "y": one}});
        let file = AsdfFile::from_bytes(w.write_to_vec(&root).unwrap()).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let progress = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
        let json = to_json_with_progress(&file, &progress).unwrap();
        assert_eq!(json, to_json(&file).unwrap());
        // 6 f32, a mask of 6 bools, 2 x 10 u16
        let total = 6 * 4 + 6 + 2 * 10 * 2;
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 4, "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
        assert!(seen.iter().all(|&(_, t)| t == total), "{seen:?}");
        assert_eq!(seen.last(), Some(&(total, total)));
    }

    #[test]
    fn progress_moves_within_a_large_array() {
        use std::sync::{Arc, Mutex};
        // hashed 64 KiB at a time
        let big = ndarray::Array1::<f64>::from_shape_fn(100_000, |i| i as f64);
        let small = ndarray::Array1::<u8>::from_elem(16, 1);
        let mut w = crate::Writer::new(crate::WriteOptions::default());
        let root = crate::tree!({"a": w.add_array(&big), "b": w.add_array(&small)});
        let file = AsdfFile::from_bytes(w.write_to_vec(&root).unwrap()).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let progress = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
        to_json_with_progress(&file, &progress).unwrap();
        let total = 800_000 + 16;
        let seen = seen.lock().unwrap();
        let done: Vec<u64> = seen.iter().map(|&(d, _)| d).collect();
        // 800,000 bytes in pieces of 64 KiB: 12 whole ones and the rest; then the small one
        let mut want: Vec<u64> = (1..=12).map(|k| k * 65_536).collect();
        want.extend([800_000, total]);
        assert_eq!(done, want);
        assert!(seen.iter().all(|&(_, t)| t == total));
    }

    #[test]
    fn strings_escape_like_python_json() {
        let mut s = String::new();
        push_str(&mut s, "a\"b\\c\n\u{0}é𝄞");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0000é𝄞\"");
    }

    #[test]
    fn nested_record_dtypes() {
        use crate::array::ByteOrder;
        let node = crate::yaml::parse(
            b"%YAML 1.1\n--- [{name: id, datatype: int32, byteorder: big}, {name: x, datatype: float64}, \
              {name: name, datatype: [ascii, 4]}, {name: vec, datatype: int16, shape: [3]}, \
              {name: pos, datatype: [{name: x, datatype: float32}, {name: y, datatype: float32, byteorder: big}]}, \
              uint8]\n...\n",
            &crate::yaml::YamlLimits::default(),
        )
        .unwrap()
        .root;
        let dt = DType::from_node(&node, ByteOrder::Little, "/t/datatype").unwrap();
        // tests/oracle/canonical.py: json.dumps(dtype_text(np.dtype([('id', '>i4'), ('x', '<f8'),
        // ('name', 'S4'), ('vec', '<i2', (3,)), ('pos', [('x', '<f4'), ('y', '>f4')]), ('f5', 'u1')])))
        assert_eq!(
            dtype_json(&dt),
            r#"[["id", ">i4"], ["x", "<f8"], ["name", "|S4"], ["vec", "<i2", [3]], ["pos", [["x", "<f4"], ["y", ">f4"]]], ["f5", "|u1"]]"#
        );
    }

    #[test]
    fn record_dtypes_escape_field_names() {
        use crate::array::{ByteOrder, Field, ScalarType};
        let dt = DType::Record(vec![Field {
            name: "a\"b\\c\u{1}\u{7f}".into(),
            dtype: DType::scalar(ScalarType::Int8, ByteOrder::Little),
            shape: vec![2],
        }]);
        // python: json.dumps([['a"b\\c\x01\x7f', '|i1', [2]]], ensure_ascii=False)
        assert_eq!(
            dtype_json(&dt),
            "[[\"a\\\"b\\\\c\\u0001\u{7f}\", \"|i1\", [2]]]"
        );
    }

    #[test]
    fn floats_always_read_back_as_floats() {
        for (f, text) in [
            (2.0, "2.0"),
            (1e16, "1e16"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (f64::NAN, "{\"$float\": \"nan\"}"),
            (f64::NEG_INFINITY, "{\"$float\": \"-inf\"}"),
        ] {
            let mut s = String::new();
            floats::push_canonical_json(&mut s, f);
            assert_eq!(s, text);
        }
    }

    #[test]
    fn compact_key_drops_layout_only() {
        assert_eq!(compact_key("[\n 1,\n \"a b\"\n]"), "[1,\"a b\"]");
    }
}
