//! `asdftool info`: the tree as an outline, arrays summarised from their descriptors and block
//! headers only (no block data is read).

use std::fmt::Write;
use std::path::Path;

use asdf_core::array::{ArraySource, Dim, NdArrayMeta};
use asdf_core::{AsdfFile, Node, Value};

/// Longest scalar text shown before it is cut.
const MAX_SCALAR: usize = 60;

pub fn run(
    access: &crate::Access,
    path: &Path,
    blocks: bool,
    max_rows: usize,
) -> Result<String, String> {
    let file = access.open(path)?;
    let mut out = String::new();
    let h = file.header();
    let _ = writeln!(
        out,
        "{}  (ASDF {}, standard {})",
        path.display(),
        h.asdf_version.as_deref().unwrap_or("none: plain YAML"),
        h.standard_version.as_deref().unwrap_or("unknown")
    );
    let mut o = Outline {
        file: &file,
        out,
        prefix: String::new(),
        path: String::new(),
        lines: 0,
        max_rows,
    };
    o.node(file.tree(), Name::Root, true, 0);
    let mut out = o.out;
    if max_rows > 0 && o.lines > max_rows {
        let _ = writeln!(out, "... ({} more lines)", o.lines - max_rows);
    }
    if let Some(hdus) = file.fits_hdus() {
        out.push_str(&crate::fits::hdu_table(hdus));
    }
    if blocks {
        let _ = writeln!(out, "\nblocks: {}", file.blocks().len());
        for b in file.blocks() {
            let comp = label_text(b.compression_label());
            let sum = if b.has_checksum() {
                b.checksum
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect::<String>()
            } else {
                "none".to_string()
            };
            // ASDF 0.1.0 layouts: which one, and how the data is encoded
            let legacy = match file.layout().legacy_block(b.index) {
                Some(lb) if lb.has_chain(b) => format!(
                    " (asdf 0.1.0 {}-byte header, data starts with an encoding chain)",
                    lb.layout.header_size()
                ),
                Some(lb) => match lb.encoding_name() {
                    Some(e) => format!(
                        " (asdf 0.1.0 {}-byte header, encoding {e:?})",
                        lb.layout.header_size()
                    ),
                    None => format!(" (asdf 0.1.0 {}-byte header)", lb.layout.header_size()),
                },
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "  [{}] offset={} header_size={} flags={:#x}{} compression={} allocated={} used={} data={} md5={}{}",
                b.index,
                b.offset,
                b.header_size,
                b.flags,
                if b.is_streamed() { " (streamed)" } else { "" },
                comp,
                b.allocated_size,
                b.used_size,
                b.data_size,
                sum,
                legacy
            );
        }
    }
    crate::exit_soon(file);
    Ok(out)
}

/// A compression label as text (`lz4 ` is stored with a trailing space).
fn label_text(label: Option<[u8; 4]>) -> String {
    match label {
        Some(l) => String::from_utf8_lossy(&l)
            .trim_end_matches(['\0', ' '])
            .to_string(),
        None => "none".to_string(),
    }
}

fn short_tag(tag: &str) -> &str {
    tag.strip_prefix("tag:stsci.edu:asdf/").unwrap_or(tag)
}

/// A node's name on its outline line.
#[derive(Clone, Copy)]
enum Name<'a> {
    Root,
    Key(&'a Node),
    Index(usize),
}

/// The outline written straight into one buffer: a line per node, the prefix of tree
/// drawing kept in one string, the node's pointer kept only for messages about arrays.
struct Outline<'a> {
    file: &'a AsdfFile,
    out: String,
    prefix: String,
    path: String,
    /// Lines of the whole outline (counted past `max_rows`, not written).
    lines: usize,
    max_rows: usize,
}

impl Outline<'_> {
    fn node(&mut self, node: &Node, name: Name<'_>, last: bool, depth: usize) {
        self.lines += 1;
        let write = self.max_rows == 0 || self.lines <= self.max_rows;
        if write {
            let out = &mut self.out;
            out.push_str(&self.prefix);
            if depth > 0 {
                out.push_str(if last { "└─" } else { "├─" });
            }
            match name {
                Name::Root => out.push_str("root"),
                Name::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
                Name::Key(k) => match k.value() {
                    Value::Str(s) => out.push_str(s),
                    other => scalar_into(out, other),
                },
            }
            if let Some(tag) = node.tag() {
                out.push_str(" !");
                out.push_str(short_tag(tag));
            }
        }
        if node.is_ndarray() {
            if write {
                let summary = array_summary(self.file, node, &self.path);
                self.out.push(' ');
                self.out.push_str(&summary);
                self.out.push('\n');
            }
            return;
        }
        let (plen, path_len) = (self.prefix.len(), self.path.len());
        if depth > 0 {
            self.prefix.push_str(if last { "  " } else { "│ " });
        }
        match node.value() {
            Value::Seq(items) => {
                if write {
                    let _ = writeln!(self.out, " (sequence, {} items)", items.len());
                }
                for (i, item) in items.iter().enumerate() {
                    let _ = write!(self.path, "/{i}");
                    self.node(item, Name::Index(i), i + 1 == items.len(), depth + 1);
                    self.path.truncate(path_len);
                }
            }
            Value::Map(entries) => {
                if write {
                    let _ = writeln!(self.out, " (mapping, {} keys)", entries.len());
                }
                for (i, (k, v)) in entries.iter().enumerate() {
                    self.path.push('/');
                    match k.value() {
                        Value::Str(s) => crate::tree::push_pointer_segment(&mut self.path, s),
                        other => {
                            let mut t = String::new();
                            scalar_into(&mut t, other);
                            crate::tree::push_pointer_segment(&mut self.path, &t);
                        }
                    }
                    self.node(v, Name::Key(k), i + 1 == entries.len(), depth + 1);
                    self.path.truncate(path_len);
                }
            }
            other => {
                if write {
                    self.out.push_str(": ");
                    scalar_into(&mut self.out, other);
                    self.out.push('\n');
                }
            }
        }
        self.prefix.truncate(plen);
    }
}

/// A scalar's text (strings quoted as Rust's `{:?}`), cut to [`MAX_SCALAR`] characters with
/// `…`, appended to `out`.
fn scalar_into(out: &mut String, v: &Value) {
    let start = out.len();
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&asdf_core::internals::python_repr(*f)),
        // printable ASCII without quotes or backslashes reads the same as `{:?}` writes it
        Value::Str(s)
            if s.bytes()
                .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\') =>
        {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        Value::Str(s) => {
            let _ = write!(out, "{s:?}");
        }
        Value::Timestamp(t) => out.push_str(&t.text),
        Value::Binary(b) => {
            let _ = write!(out, "<{} bytes>", b.len());
        }
        Value::Seq(s) => {
            let _ = write!(out, "[{} items]", s.len());
        }
        Value::Map(m) => {
            let _ = write!(out, "{{{} keys}}", m.len());
        }
        Value::Recursive(name) => {
            let _ = write!(out, "*{name} (recursive)");
        }
    }
    if out.len() - start > MAX_SCALAR {
        if let Some((cut, _)) = out[start..].char_indices().nth(MAX_SCALAR) {
            out.truncate(start + cut);
            out.push('…');
        }
    }
}

pub(crate) fn array_summary(file: &AsdfFile, node: &Node, path: &str) -> String {
    let meta = match NdArrayMeta::from_node(node, path) {
        Ok(m) => m,
        Err(e) => return format!("(invalid ndarray: {})", crate::chain(&e)),
    };
    let dtype = meta
        .dtype
        .as_ref()
        .map_or_else(|| "inferred".to_string(), |d| d.to_string());
    let shape = match &meta.shape {
        Some(dims) => {
            let parts: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => n.to_string(),
                    Dim::Streamed => "*".to_string(),
                })
                .collect();
            format!("({})", parts.join(", "))
        }
        None => "(from data)".to_string(),
    };
    let storage = match &meta.source {
        ArraySource::Inline(_) => "inline".to_string(),
        ArraySource::Uri(u) if u.starts_with("fits:") && file.fits_hdus().is_some() => {
            format!("FITS HDU {}", &u[5..])
        }
        ArraySource::Uri(u) => format!("external {u}"),
        ArraySource::Block(i) => {
            let count = file.blocks().len() as i64;
            let idx = if *i < 0 { count + i } else { *i };
            match usize::try_from(idx).ok().and_then(|k| file.blocks().get(k)) {
                Some(b) => {
                    let comp = label_text(b.compression_label());
                    let kind = if b.is_streamed() {
                        "streamed"
                    } else {
                        "internal"
                    };
                    format!("{kind} block {idx}, compression {comp}")
                }
                None => format!("block {i} (missing)"),
            }
        }
        // ArraySource is non-exhaustive: a kind of source added later
        other => format!("{other:?}"),
    };
    let mut s = format!("{dtype} {shape}, {storage}");
    if meta.offset != 0 || meta.strides.is_some() {
        let _ = write!(s, ", offset {}", meta.offset);
        if let Some(st) = &meta.strides {
            let _ = write!(s, ", strides {st:?}");
        }
    }
    if meta.mask.is_some() {
        s.push_str(", masked");
    }
    s
}

/// `info --json`: the outline as one JSON document (file, versions, the tree with each
/// array summarised from its descriptor, and with `blocks` the block headers).
pub fn run_json(access: &crate::Access, path: &Path, blocks: bool) -> Result<String, String> {
    let file = access.open(path)?;
    let h = file.header();
    let mut out = String::with_capacity(4096);
    out.push_str("{\"file\": ");
    json_str(&mut out, &path.display().to_string());
    out.push_str(", \"asdf_version\": ");
    json_opt(&mut out, h.asdf_version.as_deref());
    out.push_str(", \"standard_version\": ");
    json_opt(&mut out, h.standard_version.as_deref());
    out.push_str(",\n\"tree\": ");
    json_node(&file, file.tree(), &mut String::new(), &mut out);
    if blocks {
        out.push_str(",\n\"blocks\": [");
        for (i, b) in file.blocks().iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(
                out,
                "{{\"index\": {}, \"offset\": {}, \"header_size\": {}, \"flags\": {}, \"streamed\": {}, \"compression\": ",
                b.index,
                b.offset,
                b.header_size,
                b.flags,
                b.is_streamed()
            );
            json_str(&mut out, &label_text(b.compression_label()));
            let _ = write!(
                out,
                ", \"allocated\": {}, \"used\": {}, \"data\": {}, \"md5\": ",
                b.allocated_size, b.used_size, b.data_size
            );
            if b.has_checksum() {
                let sum: String = b.checksum.iter().map(|x| format!("{x:02x}")).collect();
                json_str(&mut out, &sum);
            } else {
                out.push_str("null");
            }
            out.push('}');
        }
        out.push(']');
    }
    out.push_str("}\n");
    crate::exit_soon(file);
    Ok(out)
}

fn json_opt(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => json_str(out, s),
        None => out.push_str("null"),
    }
}

/// `s` as a JSON string.
pub(crate) fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_head(out: &mut String, kind: &str, node: &Node) {
    out.push_str("{\"kind\": \"");
    out.push_str(kind);
    out.push('"');
    if let Some(tag) = node.tag() {
        out.push_str(", \"tag\": ");
        json_str(out, tag);
    }
}

fn json_node(file: &AsdfFile, node: &Node, path: &mut String, out: &mut String) {
    if node.is_ndarray() {
        json_head(out, "ndarray", node);
        json_array(file, node, path, out);
        out.push('}');
        return;
    }
    let len = path.len();
    match node.value() {
        Value::Map(entries) => {
            json_head(out, "mapping", node);
            out.push_str(", \"children\": {");
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let key = crate::tree::key_text(k);
                json_str(out, &key);
                out.push_str(": ");
                path.push('/');
                crate::tree::push_pointer_segment(path, &key);
                json_node(file, v, path, out);
                path.truncate(len);
            }
            out.push_str("}}");
        }
        Value::Seq(items) => {
            json_head(out, "sequence", node);
            out.push_str(", \"items\": [");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(path, "/{i}");
                json_node(file, item, path, out);
                path.truncate(len);
            }
            out.push_str("]}");
        }
        v => {
            let kind = match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Int(_) => "integer",
                Value::Float(_) => "float",
                Value::Str(_) => "string",
                Value::Timestamp(_) => "timestamp",
                Value::Binary(_) => "binary",
                Value::Recursive(_) => "recursive",
                Value::Map(_) | Value::Seq(_) => unreachable!("handled above"),
            };
            json_head(out, kind, node);
            out.push_str(", \"value\": ");
            match v {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Int(i) => {
                    let _ = write!(out, "{i}");
                }
                Value::Float(f) if f.is_finite() => asdf_core::internals::push_json_number(out, *f),
                Value::Float(f) => json_str(
                    out,
                    if f.is_nan() {
                        "nan"
                    } else if *f > 0.0 {
                        "inf"
                    } else {
                        "-inf"
                    },
                ),
                Value::Str(s) => json_str(out, s),
                Value::Timestamp(t) => json_str(out, &t.text),
                Value::Binary(b) => {
                    let _ = write!(out, "{}", b.len());
                }
                Value::Recursive(name) => json_str(out, name),
                Value::Map(_) | Value::Seq(_) => {}
            }
            out.push('}');
        }
    }
}

fn json_array(file: &AsdfFile, node: &Node, path: &str, out: &mut String) {
    let meta = match NdArrayMeta::from_node(node, path) {
        Ok(m) => m,
        Err(e) => {
            out.push_str(", \"error\": ");
            json_str(out, &crate::chain(&e));
            return;
        }
    };
    out.push_str(", \"datatype\": ");
    match &meta.dtype {
        Some(d) => json_str(out, &d.to_string()),
        None => out.push_str("null"),
    }
    out.push_str(", \"shape\": ");
    match &meta.shape {
        Some(dims) => {
            out.push('[');
            for (i, d) in dims.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match d {
                    Dim::Fixed(n) => {
                        let _ = write!(out, "{n}");
                    }
                    Dim::Streamed => out.push_str("\"*\""),
                }
            }
            out.push(']');
        }
        None => out.push_str("null"),
    }
    match &meta.source {
        ArraySource::Inline(_) => out.push_str(", \"storage\": \"inline\""),
        ArraySource::Uri(u) => {
            out.push_str(", \"storage\": \"external\", \"source\": ");
            json_str(out, u);
        }
        ArraySource::Block(i) => {
            let count = file.blocks().len() as i64;
            let idx = if *i < 0 { count + i } else { *i };
            match usize::try_from(idx).ok().and_then(|k| file.blocks().get(k)) {
                Some(b) => {
                    let _ = write!(
                        out,
                        ", \"storage\": \"{}\", \"block\": {idx}, \"compression\": ",
                        if b.is_streamed() {
                            "streamed"
                        } else {
                            "internal"
                        }
                    );
                    json_str(out, &label_text(b.compression_label()));
                }
                None => {
                    let _ = write!(out, ", \"storage\": \"missing block\", \"block\": {i}");
                }
            }
        }
        // ArraySource is non-exhaustive: a kind of source added later
        other => {
            out.push_str(", \"storage\": ");
            json_str(out, &format!("{other:?}"));
        }
    }
    if meta.offset != 0 {
        let _ = write!(out, ", \"offset\": {}", meta.offset);
    }
    if let Some(st) = &meta.strides {
        let _ = write!(out, ", \"strides\": {st:?}");
    }
    if meta.mask.is_some() {
        out.push_str(", \"masked\": true");
    }
}
