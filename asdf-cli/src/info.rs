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
    let mut lines = Vec::new();
    outline(&file, file.tree(), "root", "", "", true, &mut lines, 0);
    let total = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if max_rows > 0 && i >= max_rows {
            let _ = writeln!(out, "... ({} more lines)", total - max_rows);
            break;
        }
        out.push_str(line);
        out.push('\n');
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

#[allow(clippy::too_many_arguments)]
fn outline(
    file: &AsdfFile,
    node: &Node,
    name: &str,
    path: &str,
    prefix: &str,
    last: bool,
    lines: &mut Vec<String>,
    depth: usize,
) {
    let branch = if depth == 0 {
        ""
    } else if last {
        "└─"
    } else {
        "├─"
    };
    let mut line = format!("{prefix}{branch}{name}");
    if let Some(tag) = node.tag() {
        let _ = write!(line, " !{}", short_tag(tag));
    }
    if node.is_ndarray() {
        let _ = write!(line, " {}", array_summary(file, node, path));
        lines.push(line);
        return;
    }
    let child_prefix = if depth == 0 {
        String::new()
    } else {
        format!("{prefix}{}", if last { "  " } else { "│ " })
    };
    match node.value() {
        Value::Seq(items) => {
            let _ = write!(line, " (sequence, {} items)", items.len());
            lines.push(line);
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}/{i}");
                outline(
                    file,
                    item,
                    &format!("[{i}]"),
                    &p,
                    &child_prefix,
                    i + 1 == items.len(),
                    lines,
                    depth + 1,
                );
            }
        }
        Value::Map(entries) => {
            let _ = write!(line, " (mapping, {} keys)", entries.len());
            lines.push(line);
            for (i, (k, v)) in entries.iter().enumerate() {
                let key = match k.value() {
                    Value::Str(s) => s.clone(),
                    other => scalar_text(other),
                };
                let p = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
                outline(
                    file,
                    v,
                    &key,
                    &p,
                    &child_prefix,
                    i + 1 == entries.len(),
                    lines,
                    depth + 1,
                );
            }
        }
        other => {
            let _ = write!(line, ": {}", scalar_text(other));
            lines.push(line);
        }
    }
}

fn scalar_text(v: &Value) -> String {
    let s = match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Str(s) => format!("{s:?}"),
        Value::Timestamp(t) => t.text.clone(),
        Value::Binary(b) => format!("<{} bytes>", b.len()),
        Value::Seq(s) => format!("[{} items]", s.len()),
        Value::Map(m) => format!("{{{} keys}}", m.len()),
        Value::Recursive(name) => format!("*{name} (recursive)"),
    };
    if s.chars().count() > MAX_SCALAR {
        let cut: String = s.chars().take(MAX_SCALAR).collect();
        format!("{cut}…")
    } else {
        s
    }
}

fn array_summary(file: &AsdfFile, node: &Node, path: &str) -> String {
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
