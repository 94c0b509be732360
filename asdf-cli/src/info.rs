//! `asdftool info`: the tree as an outline, arrays summarised from their descriptors and block
//! headers only (no block data is read).

use std::fmt::Write;
use std::path::Path;

use asdf_core::file::BlockHeader;
use asdf_core::{AsdfFile, Node, Value};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::summary::{array_summary, label_text, short_tag};
use crate::tree_json::{JsonTree, Spaced};

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
        if crate::summary::is_array(node) {
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
        Value::Float(f) => out.push_str(&asdf_core::unstable::python_repr(*f)),
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

/// `info --json`: the outline as one JSON document (file, versions, the tree with each
/// array summarised from its descriptor, and with `blocks` the block headers). serde_json
/// writes it: the tree through [`JsonTree`] (mappings in the file's order), with
/// [`Spaced`]'s separators and float text.
pub fn run_json(access: &crate::Access, path: &Path, blocks: bool) -> Result<String, String> {
    let file = access.open(path)?;
    let h = file.header();
    let blocks = blocks.then(|| file.blocks());
    let doc = InfoDoc {
        file: path.display().to_string(),
        asdf_version: h.asdf_version.as_deref(),
        standard_version: h.standard_version.as_deref(),
        tree: JsonTree::root(&file),
        blocks,
    };
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    doc.serialize(&mut ser).map_err(|e| e.to_string())?;
    out.push(b'\n');
    crate::exit_soon(file);
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// The document `info --json` prints (`blocks` only when asked for).
struct InfoDoc<'a> {
    file: String,
    asdf_version: Option<&'a str>,
    standard_version: Option<&'a str>,
    tree: JsonTree<'a>,
    blocks: Option<&'a [BlockHeader]>,
}

impl Serialize for InfoDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("file", &self.file)?;
        m.serialize_entry("asdf_version", &self.asdf_version)?;
        m.serialize_entry("standard_version", &self.standard_version)?;
        m.serialize_entry("tree", &self.tree)?;
        if let Some(blocks) = self.blocks {
            let blocks: Vec<BlockJson<'_>> = blocks.iter().map(BlockJson).collect();
            m.serialize_entry("blocks", &blocks)?;
        }
        m.end()
    }
}

/// A block header as `info --json --blocks` lists it.
struct BlockJson<'a>(&'a BlockHeader);

impl Serialize for BlockJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.0;
        let mut m = s.serialize_map(Some(10))?;
        m.serialize_entry("index", &b.index)?;
        m.serialize_entry("offset", &b.offset)?;
        m.serialize_entry("header_size", &b.header_size)?;
        m.serialize_entry("flags", &b.flags)?;
        m.serialize_entry("streamed", &b.is_streamed())?;
        m.serialize_entry("compression", &label_text(b.compression_label()))?;
        m.serialize_entry("allocated", &b.allocated_size)?;
        m.serialize_entry("used", &b.used_size)?;
        m.serialize_entry("data", &b.data_size)?;
        let md5 = b.has_checksum().then(|| {
            b.checksum
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect::<String>()
        });
        m.serialize_entry("md5", &md5)?;
        m.end()
    }
}
