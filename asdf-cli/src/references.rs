//! `asdftool references FILE... -o refs.json [--stack NAME]`: a kerchunk reference set
//! (version 1 JSON, `{"version": 1, "refs": {...}}`, what fsspec's `ReferenceFileSystem`
//! reads) that shows the file as a zarr (format 2) hierarchy, its chunks read from the ASDF
//! file where they lie.
//!
//! - Every array of the tree is a zarr array at its tree path (`a/b/sci`: the JSON pointer
//!   without its leading `/`, keys escaped as in JSON pointers), with `.zarray` and an empty
//!   `.zattrs`; every mapping (and every sequence holding more than scalars) on the way is a
//!   group (`.zgroup`), whose `.zattrs` hold its scalar values and lists of scalars (a float
//!   that JSON cannot hold as its text: `"nan"`, `"inf"`, `"-inf"`).
//! - An array whose manifest pieces form a regular grid (`Manifest::zarr_chunks`, slabs of
//!   equal rows for uncompressed blocks) has one chunk per piece, `[url, offset, length]`:
//!   `url` is FILE as given on the command line (an external block file: its path beside
//!   FILE). fsspec reads a relative path from the reader's working directory, so give FILE
//!   as an absolute path (or a URL) when the references will be read elsewhere.
//! - Other arrays — views with an offset or strides into their block, arrays sharing a
//!   compressed block, inline arrays, FITS data — are inlined: their C-order bytes as one
//!   `base64:` chunk, `compressor` null.
//! - `compressor`: none: null; `zlib`: `zlib`; `bzp2`: `bz2`; `zstd`: `zstd`; `blsc`:
//!   `blosc` (one Blosc1 chunk, or each chunk of abacusutils' pieces when they are whole
//!   chunks; pieces with a short last one are the whole block, `asdf_block`); python asdf's
//!   `lz4` sub-blocks: `lz4` (numcodecs). Codecs numcodecs lacks use
//!   the ids `asdf_lz4f` (lz4 frames), `asdf_blosc2` (Blosc2 chunks of `bls2` and `bsc2`
//!   blocks) and `asdf_lz4` (an `lz4` block whose last sub-block is short), which
//!   `import asdf_rs.codecs` registers with numcodecs; they take `nbytes`, the decoded
//!   size of a whole chunk, and pad a short last piece to it, as zarr's format 2 wants.
//!   An uncompressed array whose first axis has no divisor that makes slabs of about the
//!   same size has a short last slab: `asdf_pad` pads it.
//!   An array that is its whole block but whose pieces form no grid of whole rows (`lz4`
//!   sub-blocks or `bsc2` chunks that end inside a row) is one chunk, the whole stored
//!   block, with the id `asdf_block` (`{"codec": "lz4", "nbytes": N}`).
//! - `dtype` with its byte order (`<f4`, `>i2`, records as numpy's list form),
//!   `fill_value` null, `order` `C`, `filters` null, `zarr_format` 2.
//! - An asdf-zarr array (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`) is a zarr array
//!   already: its own `.zarray` (compressor, datatype, order, fill value; a `null` fill value
//!   given as 0, what asdf-rs reads) and one reference per chunk written, the stored bytes
//!   of the block the chunk map names; chunks never written have none (zarr reads the fill
//!   value). When a chunk's block is compressed as a block too (two decoders; asdf-zarr does
//!   not write such files) the array is inlined, as views are. One whose compressor or
//!   filters asdf-rs does not read (numcodecs' `lzma`, `delta`, ...) is passed through: its
//!   `.zarray` as the file states it, `filters` included, and its chunks referenced, for a
//!   reader that has those codecs; one that can be neither passed through nor read is left
//!   out with one warning line naming it, and the rest is written.
//!
//! With `--stack NAME` the arrays of each path of the first file, which every file must
//! have with the same shape, datatype, chunks and compressor, are stacked along a new
//! first axis (chunk keys get a leading file index); the groups and attributes are the
//! first file's, and the root group's attribute NAME lists the files in order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use asdf_core::array::DType;
use asdf_core::write::Compression;
use asdf_core::{
    AsdfFile, Manifest, ManifestOptions, Node, PieceCodec, PieceSource, Value, WholeBlock,
};
use base64::Engine as _;
use serde_json::{json, Value as Json};

use crate::tree::key_text;
use asdf_core::unstable::escape_pointer_segment;

/// One array as a zarr array: metadata and chunk references.
struct ZArray {
    /// The tree path (`/a/sci`).
    tree_path: String,
    shape: Vec<usize>,
    chunks: Vec<usize>,
    dtype: Json,
    compressor: Json,
    /// `filters` (null but for asdf-zarr arrays passed through).
    filters: Json,
    /// `fill_value` (null but for asdf-zarr arrays).
    fill_value: Json,
    /// `order`: `C`, or `F` for an asdf-zarr array stored so.
    order: &'static str,
    /// Each chunk's grid index and reference (`[url, offset, length]` or `"base64:..."`).
    refs: Vec<(Vec<usize>, Json)>,
}

impl ZArray {
    /// The `.zarray` document.
    fn zarray(&self) -> Json {
        json!({
            "chunks": self.chunks,
            "compressor": self.compressor,
            "dtype": self.dtype,
            "fill_value": self.fill_value,
            "filters": self.filters,
            "order": self.order,
            "shape": self.shape,
            "zarr_format": 2,
        })
    }
}

/// Writes the references of `inputs` to `output`.
pub fn run(
    access: &crate::Access,
    inputs: &[PathBuf],
    output: &Path,
    stack: Option<&str>,
    slab_bytes: Option<u64>,
) -> Result<String, String> {
    if inputs.len() > 1 && stack.is_none() {
        return Err(
            "several files are stacked: give --stack NAME (the name of the new axis)".into(),
        );
    }
    for input in inputs {
        if crate::output::same_file(input, output) {
            return Err(format!(
                "{}: the output would replace an input; choose another output path",
                output.display()
            ));
        }
    }
    let mut opts = ManifestOptions::default().equal_slabs(true);
    if let Some(n) = slab_bytes {
        if n == 0 {
            return Err("--slab-bytes must be at least 1".to_string());
        }
        opts = opts.slab_bytes(n);
    }
    let mut refs: BTreeMap<String, Json> = BTreeMap::new();
    let first = access.open(&inputs[0])?;
    groups(first.tree(), "", &mut refs)?;
    let arrays = arrays_of(&first, &inputs[0], None, &opts)?;
    let (mut chunk_refs, mut inlined) = (0usize, 0usize);
    let mut count = |z: &ZArray| {
        for (_, r) in &z.refs {
            if r.is_string() {
                inlined += 1;
            } else {
                chunk_refs += 1;
            }
        }
    };
    match stack {
        None => {
            for z in &arrays {
                count(z);
                put_array(&mut refs, z);
            }
        }
        Some(name) => {
            let mut stacked: Vec<ZArray> = arrays
                .iter()
                .map(|z| ZArray {
                    tree_path: z.tree_path.clone(),
                    shape: [inputs.len()].into_iter().chain(z.shape.clone()).collect(),
                    chunks: [1].into_iter().chain(z.chunks.clone()).collect(),
                    dtype: z.dtype.clone(),
                    compressor: z.compressor.clone(),
                    filters: z.filters.clone(),
                    fill_value: z.fill_value.clone(),
                    order: z.order,
                    refs: Vec::new(),
                })
                .collect();
            let lead = |k: usize, z: &ZArray| -> Vec<(Vec<usize>, Json)> {
                z.refs
                    .iter()
                    .map(|(idx, r)| ([k].into_iter().chain(idx.clone()).collect(), r.clone()))
                    .collect()
            };
            for (s, z) in stacked.iter_mut().zip(&arrays) {
                s.refs.extend(lead(0, z));
            }
            for (k, input) in inputs.iter().enumerate().skip(1) {
                let file = access.open(input)?;
                let theirs = arrays_of(&file, input, Some(&arrays), &opts)?;
                for ((s, ours), z) in stacked.iter_mut().zip(&arrays).zip(&theirs) {
                    agree(ours, z, &inputs[0], input)?;
                    s.refs.extend(lead(k, z));
                }
                crate::exit_soon(file);
            }
            for z in &stacked {
                count(z);
                put_array(&mut refs, z);
            }
            // the files along the new axis, in the root group's attributes
            let mut attrs: serde_json::Map<String, Json> = refs
                .get(".zattrs")
                .and_then(Json::as_str)
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_default();
            attrs.insert(
                name.to_string(),
                json!(inputs
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()),
            );
            refs.insert(
                ".zattrs".into(),
                Json::String(Json::Object(attrs).to_string()),
            );
        }
    }
    crate::exit_soon(first);
    let doc = json!({"version": 1, "refs": refs});
    let text = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
    asdf_core::unstable::write_atomically(output, |f| std::io::Write::write_all(f, &text))
        .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
    Ok(format!(
        "wrote {} ({} arrays: {chunk_refs} chunks referenced, {inlined} inlined)\n",
        output.display(),
        arrays.len(),
    ))
}

/// Checks that `theirs` (of `file`) stacks on `ours` (of the first file).
fn agree(ours: &ZArray, theirs: &ZArray, first: &Path, file: &Path) -> Result<(), String> {
    let what = if ours.shape != theirs.shape {
        format!(
            "shape {:?}, the first file's {:?}",
            theirs.shape, ours.shape
        )
    } else if ours.dtype != theirs.dtype {
        format!("datatype {}, the first file's {}", theirs.dtype, ours.dtype)
    } else if ours.chunks != theirs.chunks {
        format!(
            "chunks {:?}, the first file's {:?}",
            theirs.chunks, ours.chunks
        )
    } else if (&ours.compressor, &ours.filters) != (&theirs.compressor, &theirs.filters) {
        format!(
            "compressor {} and filters {}, the first file's {} and {}",
            theirs.compressor, theirs.filters, ours.compressor, ours.filters
        )
    } else if (ours.order, &ours.fill_value) != (theirs.order, &theirs.fill_value) {
        format!(
            "order {} and fill value {}, the first file's {} and {}",
            theirs.order, theirs.fill_value, ours.order, ours.fill_value
        )
    } else {
        return Ok(());
    };
    Err(format!(
        "{}: {} does not stack on {}'s: {what}",
        file.display(),
        ours.tree_path,
        first.display()
    ))
}

/// The zarr arrays of `file`: every array, or (stacking) those at the paths of `like`.
fn arrays_of(
    file: &AsdfFile,
    input: &Path,
    like: Option<&[ZArray]>,
    opts: &ManifestOptions,
) -> Result<Vec<ZArray>, String> {
    let paths: Vec<String> = match like {
        None => crate::tree::array_paths(file, input, None)?,
        Some(like) => like.iter().map(|z| z.tree_path.clone()).collect(),
    };
    let url = input.to_string_lossy().into_owned();
    let mut out = Vec::with_capacity(paths.len());
    for p in &paths {
        if like.is_some() && !file.get(p).is_some_and(is_array) {
            return Err(format!(
                "{}: no array at {p}, which the first file has",
                input.display()
            ));
        }
        match zarr_array(file, p, &url, opts) {
            Ok(z) => out.push(z),
            // an asdf-zarr array that can be neither passed through nor read (a codec
            // asdf-rs lacks, its chunks in compressed blocks): left out with one line, the
            // rest written (stacked files must all hold it)
            Err(e) if like.is_none() && file.get(p).is_some_and(asdf_core::file::is_zarr) => {
                eprintln!(
                    "asdftool: warning: {}: {p} left out: {}",
                    input.display(),
                    crate::chain(&e)
                );
            }
            Err(e) => return Err(format!("{}: {}", input.display(), crate::chain(&e))),
        }
    }
    Ok(out)
}

/// The zarr array of the ndarray at `path`: its pieces as chunks when they form a regular
/// grid that numcodecs (or `asdf_rs.codecs`) reads, else its bytes inlined.
fn zarr_array(
    file: &AsdfFile,
    path: &str,
    url: &str,
    opts: &ManifestOptions,
) -> Result<ZArray, asdf_core::Error> {
    let chunked = match file.manifest(path, opts) {
        Ok(m) if m.zarr().is_some() => zarr_chunks(&m, url),
        Ok(m) => chunked(&m, url),
        // FITS data and other sources without a manifest are inlined
        Err(asdf_core::Error::Unsupported { .. }) => None,
        // an asdf-zarr array whose compressor or filters asdf-rs does not read: its
        // `.zarray` and chunks passed through, for a reader that has those codecs
        Err(e @ asdf_core::Error::Zarr { .. }) => {
            return file
                .node(path)
                .ok()
                .and_then(|n| zarr_passthrough(file, n, path, url))
                .ok_or(e);
        }
        Err(e) => return Err(e),
    };
    if let Some(z) = chunked {
        return Ok(z);
    }
    let a = file.dyn_array(path)?;
    let chunks: Vec<usize> = a.shape.iter().map(|&n| n.max(1)).collect();
    let refs = if a.element_count() == 0 {
        Vec::new()
    } else {
        vec![(vec![0; a.shape.len()], base64_ref(&a.data))]
    };
    Ok(ZArray {
        tree_path: path.to_string(),
        shape: a.shape.clone(),
        chunks,
        dtype: zarr_dtype(&a.dtype),
        compressor: Json::Null,
        filters: Json::Null,
        fill_value: Json::Null,
        order: "C",
        refs,
    })
}

/// Whether a node is an array: an ndarray or an asdf-zarr array.
fn is_array(node: &Node) -> bool {
    node.is_ndarray() || asdf_core::file::is_zarr(node)
}

/// The zarr array of an asdf-zarr array: its own `.zarray` (compressor, datatype, order and
/// fill value as the file states them, which numcodecs reads: asdf-zarr wrote them with it)
/// and one reference per chunk written, to the chunk's stored bytes in its block; chunks
/// never written have no reference, so zarr reads them as the fill value (a `null` one is
/// given as 0, which is what asdf-rs reads there).
fn zarr_chunks(m: &Manifest, url: &str) -> Option<ZArray> {
    let z = m.zarr()?;
    let field = |key: &str| z.zarray.get(key).map(node_json).unwrap_or(Json::Null);
    let fill_value = match field("fill_value") {
        Json::Null if matches!(m.dtype.to_numpy_str().as_str(), "|b1") => json!(false),
        Json::Null => json!(0),
        v => v,
    };
    let mut refs = Vec::with_capacity(m.pieces.len());
    for p in &m.pieces {
        let region = p.region.as_ref()?;
        let idx: Vec<usize> = region
            .iter()
            .zip(&z.chunks)
            .map(|(r, &c)| r.start / c.max(1))
            .collect();
        match &p.source {
            PieceSource::File => refs.push((idx, json!([url, p.offset, p.length]))),
            PieceSource::Repeat(_) => {}
            _ => return None,
        }
    }
    Some(ZArray {
        tree_path: m.path.clone(),
        shape: m.shape.clone(),
        chunks: z.chunks.clone(),
        dtype: field("dtype"),
        compressor: field("compressor"),
        filters: Json::Null,
        fill_value,
        order: if z.fortran { "F" } else { "C" },
        refs,
    })
}

/// Most chunks of an asdf-zarr array passed through (a bound on what a chunk map makes us
/// hold).
const MAX_PASSED_CHUNKS: u64 = 1 << 24;

/// An asdf-zarr array whose compressor or filters asdf-rs does not read, passed through as
/// zarr needs it: its `.zarray` as the file states it (compressor, filters, datatype, order
/// and fill value: a reader with those codecs decodes the chunks, as it would read
/// asdf-zarr's own) and one reference per chunk written, the stored bytes of the block the
/// chunk map names. `None` when that cannot be done as is: metadata or a chunk map that
/// does not hold, or a chunk in a compressed block (two decoders).
fn zarr_passthrough(file: &AsdfFile, node: &Node, path: &str, url: &str) -> Option<ZArray> {
    let z = node.get(".zarray")?;
    let dims = |key: &str| -> Option<Vec<usize>> {
        z.get(key)?
            .as_seq()?
            .iter()
            .map(|d| usize::try_from(d.as_int()?.as_i128()?).ok())
            .collect()
    };
    let (shape, chunks) = (dims("shape")?, dims("chunks")?);
    if chunks.len() != shape.len() || chunks.contains(&0) {
        return None;
    }
    let grid: Vec<usize> = shape
        .iter()
        .zip(&chunks)
        .map(|(&s, &c)| s.div_ceil(c))
        .collect();
    let count = grid
        .iter()
        .try_fold(1u64, |a, &g| a.checked_mul(g as u64))
        .filter(|&n| n <= MAX_PASSED_CHUNKS)?;
    let blocks = file.blocks();
    let map = usize::try_from(node.get("chunk_block_map")?.as_int()?.as_i128()?).ok()?;
    if blocks.get(map)?.data_size != count.checked_mul(4)? {
        return None;
    }
    let entries = file.block_data(map).ok()?;
    let mut refs = Vec::new();
    for (flat, b) in entries.chunks_exact(4).enumerate() {
        let block = match i32::from_le_bytes([b[0], b[1], b[2], b[3]]) {
            -1 => continue,
            v => blocks.get(usize::try_from(v).ok()?)?,
        };
        if block.compression_label().is_some() {
            return None;
        }
        let mut idx = vec![0usize; grid.len()];
        let mut rest = flat;
        for d in (0..grid.len()).rev() {
            idx[d] = rest % grid[d].max(1);
            rest /= grid[d].max(1);
        }
        let offset = file.asdf_offset().checked_add(block.data_offset())?;
        refs.push((idx, json!([url, offset, block.used_size])));
    }
    let field = |key: &str| z.get(key).map(node_json).unwrap_or(Json::Null);
    Some(ZArray {
        tree_path: path.to_string(),
        shape,
        chunks,
        dtype: field("dtype"),
        compressor: field("compressor"),
        filters: field("filters"),
        fill_value: match field("fill_value") {
            Json::Null if field("dtype") == json!("|b1") => json!(false),
            Json::Null => json!(0),
            v => v,
        },
        order: if z.get("order").and_then(Node::as_str) == Some("F") {
            "F"
        } else {
            "C"
        },
        refs,
    })
}

/// A tree node as JSON, zarr's way: non-finite floats as `"NaN"`, `"Infinity"`,
/// `"-Infinity"`.
fn node_json(node: &Node) -> Json {
    match node.value() {
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| (key_text(k), node_json(v)))
                .collect(),
        ),
        Value::Seq(items) => Json::Array(items.iter().map(node_json).collect()),
        Value::Float(f) if f.is_nan() => json!("NaN"),
        Value::Float(f) if f.is_infinite() => {
            json!(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        _ => attribute(node),
    }
}

fn base64_ref(bytes: &[u8]) -> Json {
    let mut s = String::from("base64:");
    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut s);
    Json::String(s)
}

/// The zarr array of a manifest whose pieces are the chunks of a regular grid, else of an
/// array that is its whole block (one chunk), else `None`.
fn chunked(m: &Manifest, url: &str) -> Option<ZArray> {
    grid(m, url).or_else(|| whole_block(m, url))
}

/// An array that is exactly its (compressed) block: one chunk, the whole stored block.
fn whole_block(m: &Manifest, url: &str) -> Option<ZArray> {
    let b = m.block.as_ref().filter(|_| m.is_whole_block())?;
    let at = match &b.source {
        PieceSource::File => url.to_string(),
        PieceSource::External(uri) => beside(url, uri),
        _ => return None,
    };
    let nbytes = b.data_size;
    let compressor = match b.compression? {
        Compression::Zlib => json!({"id": "zlib"}),
        Compression::Bzp2 => json!({"id": "bz2"}),
        Compression::Zstd => json!({"id": "zstd"}),
        // one Blosc1 chunk; abacusutils' pieces (`[u32 BE n][chunk]`...) are no Blosc1 chunk
        // as a whole: asdf-rs's own decoder
        Compression::Blsc if one_stored_piece(m, b) => json!({"id": "blosc"}),
        Compression::Lz4f => json!({"id": "asdf_lz4f", "nbytes": nbytes}),
        Compression::Bls2 => json!({"id": "asdf_blosc2", "nbytes": nbytes}),
        c => json!({"id": "asdf_block", "codec": c.name(), "nbytes": nbytes}),
    };
    Some(ZArray {
        tree_path: m.path.clone(),
        shape: m.shape.clone(),
        chunks: m.shape.iter().map(|&n| n.max(1)).collect(),
        dtype: zarr_dtype(&m.dtype),
        compressor,
        filters: Json::Null,
        fill_value: Json::Null,
        order: "C",
        refs: vec![(vec![0; m.shape.len()], json!([at, b.offset, b.length]))],
    })
}

/// Whether the manifest's one piece is the whole stored block `b`.
fn one_stored_piece(m: &Manifest, b: &WholeBlock) -> bool {
    matches!(&m.pieces[..], [p] if p.offset == b.offset && p.length == b.length)
}

/// The zarr array of a manifest whose pieces are the chunks of a regular grid.
fn grid(m: &Manifest, url: &str) -> Option<ZArray> {
    let grid = m.zarr_chunks()?;
    let chunks: Vec<usize> = grid.iter().map(|&n| n.max(1)).collect();
    let chunk_bytes = chunks
        .iter()
        .try_fold(m.itemsize() as u64, |a, &n| a.checked_mul(n as u64))?;
    let mut codecs = m.pieces.iter().map(|p| p.codec);
    let codec = codecs.next().unwrap_or(PieceCodec::None);
    if codecs.any(|c| c != codec) {
        return None;
    }
    let all_whole = m
        .pieces
        .iter()
        .all(|p| p.decoded.end.saturating_sub(p.decoded.start) == chunk_bytes);
    let padded = |id: &str| json!({"id": id, "nbytes": chunk_bytes});
    let compressor = match codec {
        PieceCodec::None if all_whole => Json::Null,
        PieceCodec::None => padded("asdf_pad"),
        PieceCodec::Zlib => json!({"id": "zlib"}),
        PieceCodec::Bzp2 => json!({"id": "bz2"}),
        PieceCodec::Zstd => json!({"id": "zstd"}),
        // numcodecs' Blosc cannot pad a short last chunk (abacusutils' 4 MiB pieces)
        PieceCodec::Blsc if all_whole => json!({"id": "blosc"}),
        PieceCodec::Lz4Block if all_whole => json!({"id": "lz4"}),
        PieceCodec::Lz4Block => padded("asdf_lz4"),
        PieceCodec::Lz4f => padded("asdf_lz4f"),
        PieceCodec::Blosc2Chunk => padded("asdf_blosc2"),
        _ => return None,
    };
    let mut refs = Vec::with_capacity(m.pieces.len());
    for p in &m.pieces {
        let region = p.region.as_ref()?;
        let idx: Vec<usize> = region
            .iter()
            .zip(&chunks)
            .map(|(r, &c)| r.start / c)
            .collect();
        let r = match &p.source {
            PieceSource::File => json!([url, p.offset, p.length]),
            PieceSource::External(uri) => json!([beside(url, uri), p.offset, p.length]),
            // a Blosc2 chunk of one repeated value: written as a Blosc2 chunk of its own
            PieceSource::Repeat(pattern) if codec == PieceCodec::Blosc2Chunk => {
                let n = usize::try_from(p.decoded.end.saturating_sub(p.decoded.start)).ok()?;
                let bytes: Vec<u8> = pattern.iter().copied().cycle().take(n).collect();
                let params = asdf_blosc2::CParams {
                    typesize: m.itemsize().clamp(1, 255),
                    ..Default::default()
                };
                base64_ref(&asdf_blosc2::encode_chunk(&bytes, &params).ok()?)
            }
            _ => return None,
        };
        refs.push((idx, r));
    }
    Some(ZArray {
        tree_path: m.path.clone(),
        shape: m.shape.clone(),
        chunks,
        dtype: zarr_dtype(&m.dtype),
        compressor,
        filters: Json::Null,
        fill_value: Json::Null,
        order: "C",
        refs,
    })
}

/// `uri` (relative to the folder of `url`) as a path or URL beside `url`.
fn beside(url: &str, uri: &str) -> String {
    if uri.contains("://") || uri.starts_with('/') {
        return uri.to_string();
    }
    if url.contains("://") {
        return match url.rfind('/') {
            Some(i) => format!("{}/{uri}", &url[..i]),
            None => uri.to_string(),
        };
    }
    match Path::new(url).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(uri).to_string_lossy().into_owned(),
        _ => uri.to_string(),
    }
}

/// numpy's datatype as zarr's `.zarray` holds it: `"<f4"`, or for records the list form
/// `[["a", "<i4"], ["b", "<f8", [3]]]`.
fn zarr_dtype(d: &DType) -> Json {
    match d {
        DType::Record(fields) => Json::Array(
            fields
                .iter()
                .map(|f| {
                    let mut item = vec![json!(f.name), zarr_dtype(&f.dtype)];
                    if !f.shape.is_empty() {
                        item.push(json!(f.shape));
                    }
                    Json::Array(item)
                })
                .collect(),
        ),
        _ => json!(d.to_numpy_str()),
    }
}

/// Adds an array's `.zarray`, `.zattrs` and chunk references.
fn put_array(refs: &mut BTreeMap<String, Json>, z: &ZArray) {
    let at = z.tree_path.trim_start_matches('/');
    let key = |name: &str| format!("{at}/{name}");
    refs.insert(key(".zarray"), Json::String(z.zarray().to_string()));
    refs.insert(key(".zattrs"), Json::String(json!({}).to_string()));
    for (idx, r) in &z.refs {
        let name = if idx.is_empty() {
            "0".to_string()
        } else {
            idx.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(".")
        };
        refs.insert(key(&name), r.clone());
    }
}

/// Whether a node becomes a zarr attribute (a scalar, or a list of scalars).
fn is_attribute(node: &Node) -> bool {
    match node.value() {
        Value::Map(_) => false,
        Value::Seq(items) => items
            .iter()
            .all(|i| !i.is_ndarray() && !matches!(i.value(), Value::Map(_) | Value::Seq(_))),
        _ => !node.is_ndarray(),
    }
}

/// A scalar (or a list of scalars) as a JSON attribute value.
fn attribute(node: &Node) -> Json {
    match node.value() {
        Value::Null | Value::Recursive(_) => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => match (i.as_i64(), i.as_u64()) {
            (Some(v), _) => json!(v),
            (None, Some(v)) => json!(v),
            _ => json!(i.to_string()),
        },
        Value::Float(f) if f.is_finite() => json!(f),
        Value::Float(f) if f.is_nan() => json!("nan"),
        Value::Float(f) => json!(if *f > 0.0 { "inf" } else { "-inf" }),
        Value::Str(s) => json!(s),
        Value::Timestamp(t) => json!(t.text),
        Value::Binary(b) => {
            json!(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Value::Seq(items) => Json::Array(items.iter().map(attribute).collect()),
        Value::Map(_) => Json::Null,
    }
}

/// The groups of the tree below `node` (at zarr path `at`): `.zgroup`, and `.zattrs` with
/// the scalar values; arrays are left to [`put_array`].
fn groups(node: &Node, at: &str, refs: &mut BTreeMap<String, Json>) -> Result<(), String> {
    let prefix = if at.is_empty() {
        String::new()
    } else {
        format!("{at}/")
    };
    refs.insert(
        format!("{prefix}.zgroup"),
        Json::String(json!({"zarr_format": 2}).to_string()),
    );
    let children: Vec<(String, &Node)> = match node.value() {
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| (escape_pointer_segment(&key_text(k)).into_owned(), v))
            .collect(),
        Value::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => Vec::new(),
    };
    let mut attrs = serde_json::Map::new();
    for (name, child) in children {
        if is_array(child) {
            continue;
        }
        if is_attribute(child) {
            attrs.insert(name, attribute(child));
        } else {
            groups(child, &format!("{prefix}{name}"), refs)?;
        }
    }
    refs.insert(
        format!("{prefix}.zattrs"),
        Json::String(Json::Object(attrs).to_string()),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_files_lie_beside_the_file() {
        assert_eq!(beside("dir/a.asdf", "a0000.asdf"), "dir/a0000.asdf");
        assert_eq!(beside("a.asdf", "a0000.asdf"), "a0000.asdf");
        assert_eq!(
            beside("s3://b/x/a.asdf", "a0000.asdf"),
            "s3://b/x/a0000.asdf"
        );
    }
}
