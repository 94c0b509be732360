//! One-line summaries of arrays, block compression labels and tags: what `info`, `search`
//! and `diff` print alike. A shared module: it imports no command module.

use std::fmt::Write;

use asdf_core::array::{ArraySource, Dim, NdArrayMeta};
use asdf_core::{AsdfFile, Node};

/// An array's one-line summary from its descriptor (datatype, shape, where its data is):
/// `info`'s outline and `search`'s matches.
pub fn array_summary(file: &AsdfFile, node: &Node, path: &str) -> String {
    if asdf_core::file::is_zarr(node) {
        return zarr_summary(file, node, path);
    }
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

/// Whether a node is an array: an ndarray or an asdf-zarr array.
pub fn is_array(node: &Node) -> bool {
    node.is_ndarray() || asdf_core::file::is_zarr(node)
}

/// An asdf-zarr array's summary from its metadata (no block read): `float64 (5, 7), zarr
/// chunks (2, 3) (6 blocks at most), compressor zlib, chunk map block 6`.
fn zarr_summary(file: &AsdfFile, node: &Node, path: &str) -> String {
    let (dtype, shape) = match file.zarr_info(node, path) {
        Ok(x) => x,
        Err(e) => return format!("(unreadable asdf-zarr array: {})", crate::chain(&e)),
    };
    let Ok(z) = file.zarr_chunking(node, path) else {
        return format!("{dtype} {}, asdf-zarr", tuple(&shape));
    };
    let count: usize = z.grid.iter().product();
    let mut s = format!(
        "{dtype} {}, asdf-zarr chunks {} ({count} chunk{}), compressor {}",
        tuple(&shape),
        tuple(&z.chunks),
        if count == 1 { "" } else { "s" },
        z.compressor.unwrap_or("none"),
    );
    if z.fortran {
        s.push_str(", order F");
    }
    if let Some(b) = node.get("chunk_block_map").and_then(Node::as_i64) {
        let _ = write!(s, ", chunk map block {b}");
    }
    s
}

/// `(5, 7)`, as ndarray shapes are shown.
fn tuple(dims: &[usize]) -> String {
    let parts: Vec<String> = dims.iter().map(usize::to_string).collect();
    format!("({})", parts.join(", "))
}

/// A compression label as text (`lz4 ` is stored with a trailing space).
pub fn label_text(label: Option<[u8; 4]>) -> String {
    match label {
        Some(l) => String::from_utf8_lossy(&l)
            .trim_end_matches(['\0', ' '])
            .to_string(),
        None => "none".to_string(),
    }
}

/// A tag without the prefix of the standard's own tags (`tag:stsci.edu:asdf/`).
pub fn short_tag(tag: &str) -> &str {
    tag.strip_prefix("tag:stsci.edu:asdf/").unwrap_or(tag)
}
