//! Chunked arrays stored the asdf-zarr way: a node tagged
//! `asdf://asdf-format.org/zarr/tags/zarr-1.0.0` that holds the zarr v2 array metadata
//! (`.zarray`: `shape`, `chunks`, `dtype`, `order`, `compressor`, `filters`, `fill_value`) and
//! `chunk_block_map`, the index of a block holding an int32 array shaped like the chunk grid:
//! each entry is the index of the block that holds that chunk's zarr-encoded bytes, or -1 for
//! a chunk never written (read as `fill_value`). This is what the `asdf-zarr` package (0.0.4)
//! writes for zarr arrays kept inside the ASDF file.
//!
//! Such nodes read through the same calls as ndarrays ([`AsdfFile::array`],
//! [`AsdfFile::dyn_array`], [`AsdfFile::region`], [`AsdfFile::read_region_into`]); a region
//! read decodes only the chunks the selection touches. Every metadata field, the chunk map's
//! size and every entry, and every chunk's size are checked before use; what is wrong is a
//! [`ZarrError`] inside [`Error::Zarr`], which names the tree path. Chunk compressors read:
//! numcodecs' `zlib`, `gzip`, `bz2`, `zstd`, `lz4` and `blosc`; zarr filters are not read.
//! The asdf-zarr form that refers to a zarr store outside the file (`store:` with a
//! `type_string`) is refused ([`ZarrError::ExternalStore`]).

use std::io::Read;

use rayon::prelude::*;

pub use super::zarr_error::ZarrError;
use super::AsdfFile;
use crate::array::{self, AxisRange, DType, DynArray, Element, ScalarType, Selection};
use crate::codec::{self, CodecError, Compression};
use crate::error::{Error, Result};
use crate::yaml::{Node, Value};

/// The tag of chunked arrays stored the asdf-zarr way, as asdf-zarr 0.0.4 writes it.
///
/// Such a node holds the zarr v2 metadata (`.zarray`) and `chunk_block_map`, the index of a
/// block holding an int32 array shaped like the chunk grid whose entries are the blocks of
/// the chunks' zarr-encoded bytes (-1: never written, read as `fill_value`). It reads as an
/// array through [`AsdfFile::array`], [`AsdfFile::dyn_array`], [`AsdfFile::array_view`]
/// (a copy), [`AsdfFile::read_as`] and the region reads ([`AsdfFile::region`],
/// [`AsdfFile::dyn_region`], [`AsdfFile::read_region_into`]), which decode only the chunks
/// the selection touches; [`Writer::add_zarr_array`](crate::write::Writer::add_zarr_array)
/// writes one. Chunk compressors read: numcodecs' `zlib`, `gzip`, `bz2`, `zstd`, `lz4` and
/// `blosc`; a zarr filter, another compressor, or chunks kept in a zarr store outside the
/// file are a [`ZarrError`] (in [`Error::Zarr`], with the tree path), as is a metadata
/// field, chunk map entry or chunk size that does not hold. No schema is checked: asdf-zarr
/// ships none for the tag.
///
/// ```no_run
/// use asdf_core::{AsdfFile, Selection};
/// let file = AsdfFile::open("chunked.asdf")?;
/// assert!(asdf_core::file::is_zarr(file.node("/cube")?));
/// let plane = file.region::<f32>("/cube", &"3".parse::<Selection>().expect("a selection"))?;
/// # Ok::<(), asdf_core::Error>(())
/// ```
pub const ZARR_TAG: &str = "asdf://asdf-format.org/zarr/tags/zarr-1.0.0";

/// Tags read as asdf-zarr arrays: `zarr-1.*`.
const ZARR_TAG_PREFIX: &str = "asdf://asdf-format.org/zarr/tags/zarr-1.";

/// Chunks decoded at once by a region read, per rayon thread.
const CHUNKS_PER_THREAD: usize = 4;

/// How an asdf-zarr array is chunked, from its metadata (checked, as for a read):
/// [`AsdfFile::zarr_chunking`], and [`Manifest::zarr`](super::Manifest::zarr) for the
/// manifest of such an array, whose pieces are its chunks.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ZarrChunking {
    /// The chunk shape (`.zarray/chunks`). Chunks at the array's far edges are stored whole,
    /// as zarr stores them: their elements past the edge are padding.
    pub chunks: Vec<usize>,
    /// Chunks along each axis.
    pub grid: Vec<usize>,
    /// Elements stored in Fortran order inside each chunk (`order: F`).
    pub fortran: bool,
    /// The chunk compressor's numcodecs id (`zlib`, `gzip`, `bz2`, `zstd`, `lz4`, `blosc`),
    /// `None` for none.
    pub compressor: Option<&'static str>,
    /// One element of `fill_value` in the datatype's bytes (zeros for `null`): what the
    /// chunks never written hold.
    pub fill: Vec<u8>,
    /// The `.zarray` mapping as the tree holds it (for writers of zarr metadata).
    pub zarray: Node,
}

/// Whether `node` is an asdf-zarr array (tag `asdf://asdf-format.org/zarr/tags/zarr-1.*`).
pub fn is_zarr(node: &Node) -> bool {
    node.tag().is_some_and(|t| t.starts_with(ZARR_TAG_PREFIX))
}

/// A chunk compressor, by numcodecs id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChunkCodec {
    Zlib,
    Gzip,
    Bz2,
    Zstd,
    Lz4,
    Blosc,
}

impl ChunkCodec {
    fn from_id(id: &str) -> Option<ChunkCodec> {
        Some(match id {
            "zlib" => ChunkCodec::Zlib,
            "gzip" => ChunkCodec::Gzip,
            "bz2" => ChunkCodec::Bz2,
            "zstd" => ChunkCodec::Zstd,
            "lz4" => ChunkCodec::Lz4,
            "blosc" => ChunkCodec::Blosc,
            _ => return None,
        })
    }

    pub(crate) fn id(self) -> &'static str {
        match self {
            ChunkCodec::Zlib => "zlib",
            ChunkCodec::Gzip => "gzip",
            ChunkCodec::Bz2 => "bz2",
            ChunkCodec::Zstd => "zstd",
            ChunkCodec::Lz4 => "lz4",
            ChunkCodec::Blosc => "blosc",
        }
    }

    /// Decodes one chunk's stored bytes into `out`, which must come out exactly full.
    fn decode_into(self, stored: &[u8], out: &mut [u8]) -> std::result::Result<(), CodecError> {
        match self {
            ChunkCodec::Zlib => codec::decode_into(Compression::Zlib, stored, out),
            ChunkCodec::Bz2 => codec::decode_into(Compression::Bzp2, stored, out),
            ChunkCodec::Zstd => codec::decode_into(Compression::Zstd, stored, out),
            ChunkCodec::Blosc => codec::decode_into(Compression::Blsc, stored, out),
            ChunkCodec::Gzip => {
                let corrupt = |e: std::io::Error| CodecError::Corrupt {
                    codec: "gzip",
                    message: e.to_string(),
                };
                let mut dec = flate2::read::MultiGzDecoder::new(stored);
                let mut filled = 0;
                while filled < out.len() {
                    match dec.read(&mut out[filled..]).map_err(corrupt)? {
                        0 => {
                            return Err(CodecError::SizeMismatch {
                                expected: out.len() as u64,
                                actual: filled as u64,
                            })
                        }
                        n => filled += n,
                    }
                }
                let mut extra = [0u8; 1];
                if dec.read(&mut extra).map_err(corrupt)? != 0 {
                    return Err(CodecError::ExcessData {
                        expected: out.len() as u64,
                    });
                }
                Ok(())
            }
            ChunkCodec::Lz4 => {
                // numcodecs' LZ4: the decoded size as a little-endian u32, then one lz4 block
                let (head, block) = stored.split_at(stored.len().min(4));
                let declared = match head {
                    [a, b, c, d] => u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
                    _ => {
                        return Err(CodecError::Corrupt {
                            codec: "lz4",
                            message: format!("{} bytes hold no size prefix", stored.len()),
                        })
                    }
                };
                if declared != out.len() as u64 {
                    return Err(CodecError::SizeMismatch {
                        expected: out.len() as u64,
                        actual: declared,
                    });
                }
                let n = lz4_flex::block::decompress_into(block, out).map_err(|e| {
                    CodecError::Corrupt {
                        codec: "lz4",
                        message: e.to_string(),
                    }
                })?;
                if n != out.len() {
                    return Err(CodecError::SizeMismatch {
                        expected: out.len() as u64,
                        actual: n as u64,
                    });
                }
                Ok(())
            }
        }
    }
}

/// The checked metadata of an asdf-zarr node.
#[derive(Debug)]
pub(crate) struct ZarrMeta {
    pub(crate) shape: Vec<usize>,
    pub(crate) chunks: Vec<usize>,
    pub(crate) dtype: DType,
    /// Chunks stored in Fortran order.
    pub(crate) fortran: bool,
    pub(crate) codec: Option<ChunkCodec>,
    /// One element of `fill_value`, in the datatype's byte order (zeros for `null`).
    pub(crate) fill: Vec<u8>,
    /// The block of the chunk map.
    map_block: i128,
    /// Chunks along each axis.
    pub(crate) grid: Vec<usize>,
    /// Bytes of one decoded chunk.
    pub(crate) chunk_bytes: u64,
}

fn bad(key: &str, message: impl Into<String>) -> ZarrError {
    ZarrError::BadMetadata {
        key: key.to_string(),
        message: message.into(),
    }
}

fn dims(node: Option<&Node>, key: &str, min: u64) -> std::result::Result<Vec<usize>, ZarrError> {
    let seq = node
        .and_then(Node::as_seq)
        .ok_or_else(|| bad(key, "missing or not a list"))?;
    seq.iter()
        .map(|d| {
            d.as_i64()
                .and_then(|v| u64::try_from(v).ok())
                .filter(|&v| v >= min)
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| {
                    bad(
                        key,
                        format!(
                            "{} is not an integer of at least {min}",
                            crate::yaml::describe(d)
                        ),
                    )
                })
        })
        .collect()
}

/// An integer node's value.
fn int_of(node: &Node) -> Option<i128> {
    match node.value() {
        Value::Int(i) => i.as_i128(),
        _ => None,
    }
}

/// Zarr's JSON text of special floats, or a number.
fn float_of(node: &Node) -> Option<f64> {
    match node.value() {
        Value::Float(f) => Some(*f),
        Value::Int(i) => i.as_i128().map(|v| v as f64),
        Value::Str(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// One element of `fill_value` as bytes of `dtype` (zarr v2's JSON encoding of it).
fn fill_bytes(node: Option<&Node>, dtype: &DType) -> std::result::Result<Vec<u8>, ZarrError> {
    let size = dtype.itemsize();
    let node = match node {
        None => return Ok(vec![0; size]),
        Some(n) if matches!(n.value(), Value::Null) => return Ok(vec![0; size]),
        Some(n) => n,
    };
    let wrong = || {
        bad(
            ".zarray/fill_value",
            format!("{} is not a {}", crate::yaml::describe(node), dtype.name()),
        )
    };
    let DType::Scalar { ty, byteorder } = dtype else {
        return Err(wrong());
    };
    let int = || int_of(node).ok_or_else(wrong);
    let le: Option<Vec<u8>> = match ty {
        ScalarType::Bool8 => match node.value() {
            Value::Bool(b) => Some(vec![u8::from(*b)]),
            _ => None,
        },
        ScalarType::Int8 => i8::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::Int16 => i16::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::Int32 => i32::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::Int64 => i64::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::UInt8 => u8::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::UInt16 => u16::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::UInt32 => u32::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::UInt64 => u64::try_from(int()?).ok().map(|v| v.to_le_bytes().to_vec()),
        ScalarType::Float16 => {
            float_of(node).map(|f| half::f16::from_f64(f).to_le_bytes().to_vec())
        }
        ScalarType::Float32 => float_of(node).map(|f| (f as f32).to_le_bytes().to_vec()),
        ScalarType::Float64 => float_of(node).map(|f| f.to_le_bytes().to_vec()),
        ScalarType::Complex64 | ScalarType::Complex128 => match node.as_seq() {
            Some([re, im]) => match (float_of(re), float_of(im)) {
                (Some(re), Some(im)) if *ty == ScalarType::Complex64 => {
                    Some([(re as f32).to_le_bytes(), (im as f32).to_le_bytes()].concat())
                }
                (Some(re), Some(im)) => Some([re.to_le_bytes(), im.to_le_bytes()].concat()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    let mut v = le.ok_or_else(wrong)?;
    if *byteorder == array::ByteOrder::Big {
        let unit = match ty {
            ScalarType::Complex64 | ScalarType::Complex128 => size / 2,
            _ => size,
        };
        for c in v.chunks_exact_mut(unit.max(1)) {
            c.reverse();
        }
    }
    Ok(v)
}

impl ZarrMeta {
    /// Reads and checks the metadata of the asdf-zarr node `node`.
    pub(crate) fn from_node(node: &Node) -> std::result::Result<ZarrMeta, ZarrError> {
        if node.as_map().is_none() {
            return Err(bad("", "the node is not a mapping"));
        }
        let Some(z) = node.get(".zarray") else {
            if let Some(store) = node.get("store") {
                let name = store
                    .get("type_string")
                    .and_then(Node::as_str)
                    .unwrap_or("unnamed");
                return Err(ZarrError::ExternalStore {
                    store: name.to_string(),
                });
            }
            return Err(bad(".zarray", "missing"));
        };
        if z.as_map().is_none() {
            return Err(bad(".zarray", "not a mapping"));
        }
        match z.get("zarr_format").and_then(Node::as_i64) {
            Some(2) => {}
            _ => return Err(bad(".zarray/zarr_format", "must be 2")),
        }
        let (shape, chunks) = shape_and_chunks(z)?;
        let dtext = z
            .get("dtype")
            .and_then(Node::as_str)
            .ok_or_else(|| bad(".zarray/dtype", "missing or not a numpy datatype string"))?;
        let dtype = DType::from_numpy_str(dtext)
            .filter(|d| d.itemsize() > 0)
            .ok_or_else(|| {
                bad(
                    ".zarray/dtype",
                    format!("{dtext:?} is not a datatype read here"),
                )
            })?;
        let fortran = match z.get("order").and_then(Node::as_str) {
            Some("C") => false,
            Some("F") => true,
            _ => return Err(bad(".zarray/order", "must be \"C\" or \"F\"")),
        };
        let codec = match z.get("compressor") {
            None => None,
            Some(c) if matches!(c.value(), Value::Null) => None,
            Some(c) => {
                let id = c
                    .get("id")
                    .and_then(Node::as_str)
                    .ok_or_else(|| bad(".zarray/compressor", "no string `id`"))?;
                Some(
                    ChunkCodec::from_id(id)
                        .ok_or_else(|| ZarrError::UnsupportedCompressor { id: id.to_string() })?,
                )
            }
        };
        match z.get("filters").map(|f| (f, f.value())) {
            None | Some((_, Value::Null)) => {}
            Some((_, Value::Seq(s))) if s.is_empty() => {}
            Some((_, Value::Seq(s))) => {
                let id = s[0].get("id").and_then(Node::as_str).unwrap_or("unnamed");
                return Err(ZarrError::UnsupportedFilter { id: id.to_string() });
            }
            Some(_) => return Err(bad(".zarray/filters", "neither null nor a list")),
        }
        let fill = fill_bytes(z.get("fill_value"), &dtype)?;
        let map_block = map_block_of(node)?;
        let grid = grid(&shape, &chunks);
        let chunk_bytes = chunks
            .iter()
            .try_fold(dtype.itemsize() as u64, |a, &c| a.checked_mul(c as u64))
            .ok_or_else(|| bad(".zarray/chunks", "a chunk's size overflows"))?;
        Ok(ZarrMeta {
            shape,
            chunks,
            dtype,
            fortran,
            codec,
            fill,
            map_block,
            grid,
            chunk_bytes,
        })
    }

    /// Byte strides of a decoded chunk, per axis.
    fn chunk_strides(&self) -> Vec<usize> {
        let n = self.chunks.len();
        let mut s = vec![0usize; n];
        let mut acc = self.dtype.itemsize();
        let axes: Vec<usize> = if self.fortran {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        for d in axes {
            s[d] = acc;
            acc *= self.chunks[d];
        }
        s
    }
}

/// Number of chunks in a grid.
fn chunk_count(grid: &[usize]) -> Option<u64> {
    grid.iter().try_fold(1u64, |a, &g| a.checked_mul(g as u64))
}

/// What the chunk map needs of an asdf-zarr node, and no more (the writer copies the chunks
/// of nodes whose compressor or datatype this library does not read): the map's block and
/// the chunk grid.
fn grid_of(node: &Node) -> std::result::Result<(i128, Vec<usize>), ZarrError> {
    let z = node
        .get(".zarray")
        .ok_or_else(|| bad(".zarray", "missing"))?;
    let (shape, chunks) = shape_and_chunks(z)?;
    Ok((map_block_of(node)?, grid(&shape, &chunks)))
}

/// `.zarray`'s shape and chunk shape: one chunk size, at least 1, per axis.
fn shape_and_chunks(z: &Node) -> std::result::Result<(Vec<usize>, Vec<usize>), ZarrError> {
    let shape = dims(z.get("shape"), ".zarray/shape", 0)?;
    let chunks = dims(z.get("chunks"), ".zarray/chunks", 1)?;
    if chunks.len() != shape.len() {
        return Err(bad(
            ".zarray/chunks",
            format!("{} chunk sizes for {} axes", chunks.len(), shape.len()),
        ));
    }
    Ok((shape, chunks))
}

/// The block holding the chunk-to-block map (`chunk_block_map`).
fn map_block_of(node: &Node) -> std::result::Result<i128, ZarrError> {
    node.get("chunk_block_map")
        .and_then(int_of)
        .ok_or_else(|| bad("chunk_block_map", "missing or not an integer block index"))
}

/// The chunk grid: how many chunks along each axis.
fn grid(shape: &[usize], chunks: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .zip(chunks)
        .map(|(&s, &c)| s.div_ceil(c))
        .collect()
}

/// The selected positions of one axis that fall in each chunk along it: (chunk index, the
/// first output position, the first position inside the chunk, how many).
struct Run {
    chunk: usize,
    out: usize,
    local: usize,
    count: usize,
}

fn runs(a: &AxisRange, chunk: usize) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for k in 0..a.count {
        let p = (a.start as isize + k as isize * a.step) as usize;
        let (c, l) = (p / chunk, p % chunk);
        match out.last_mut() {
            Some(r) if r.chunk == c => r.count += 1,
            _ => out.push(Run {
                chunk: c,
                out: k,
                local: l,
                count: 1,
            }),
        }
    }
    out
}

impl AsdfFile {
    pub(super) fn zarr_err(path: &str, source: ZarrError) -> Error {
        Error::Zarr {
            path: path.to_string().into(),
            source: Box::new(source),
        }
    }

    /// The node at `path` when it is an asdf-zarr array.
    pub(super) fn zarr_at(&self, path: &str) -> Result<Option<Node>> {
        let node = self.node(path)?;
        Ok(is_zarr(node).then(|| node.clone()))
    }

    /// The datatype and shape of the asdf-zarr array `node` ([`ZARR_TAG`]; its metadata
    /// checked, no block read); `path` names it in errors.
    pub fn zarr_info(&self, node: &Node, path: &str) -> Result<(DType, Vec<usize>)> {
        let m = ZarrMeta::from_node(node).map_err(|e| Self::zarr_err(path, e))?;
        Ok((m.dtype, m.shape))
    }

    /// How the asdf-zarr array `node` ([`ZARR_TAG`]) is chunked: its metadata checked as a
    /// read checks it, no block read; `path` names it in errors.
    pub fn zarr_chunking(&self, node: &Node, path: &str) -> Result<ZarrChunking> {
        let m = ZarrMeta::from_node(node).map_err(|e| Self::zarr_err(path, e))?;
        Ok(ZarrChunking {
            chunks: m.chunks,
            grid: m.grid,
            fortran: m.fortran,
            compressor: m.codec.map(ChunkCodec::id),
            fill: m.fill,
            zarray: node
                .get(".zarray")
                .cloned()
                .unwrap_or_else(|| Node::new(Value::Null)),
        })
    }

    /// The chunk map of the asdf-zarr node `node` (metadata checked): for each chunk of the
    /// grid (C order), its block index or `None` (the writer's copy of a read file).
    pub(crate) fn zarr_block_map(&self, node: &Node, path: &str) -> Result<Vec<Option<usize>>> {
        let (map_block, grid) = grid_of(node).map_err(|e| Self::zarr_err(path, e))?;
        self.zarr_chunk_map(map_block, &grid, path)
    }

    /// The chunk map: for each chunk of the grid (C order), its block index or `None`.
    fn zarr_chunk_map(
        &self,
        map_block: i128,
        grid: &[usize],
        path: &str,
    ) -> Result<Vec<Option<usize>>> {
        let count = self.block_count();
        let block = usize::try_from(map_block)
            .ok()
            .filter(|&b| b < count)
            .ok_or_else(|| {
                Self::zarr_err(
                    path,
                    bad(
                        "chunk_block_map",
                        format!(
                            "block {} is not one of the file's {count} blocks",
                            map_block
                        ),
                    ),
                )
            })?;
        let chunks = chunk_count(grid).ok_or_else(|| {
            Self::zarr_err(
                path,
                bad(".zarray/shape", "the chunk grid's size overflows"),
            )
        })?;
        let h = self.block_header(block)?;
        let expected = chunks.saturating_mul(4);
        if h.data_size != expected {
            return Err(Self::zarr_err(
                path,
                ZarrError::ChunkMapSize {
                    block,
                    found: h.data_size,
                    expected,
                    chunks,
                },
            ));
        }
        let bytes = self.block_data(block)?;
        let grid_pos = |flat: usize| {
            let mut pos = vec![0usize; grid.len()];
            let mut rest = flat;
            for d in (0..grid.len()).rev() {
                pos[d] = rest % grid[d].max(1);
                rest /= grid[d].max(1);
            }
            pos
        };
        bytes
            .chunks_exact(4)
            .enumerate()
            .map(|(i, b)| {
                let v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                match v {
                    -1 => Ok(None),
                    v if v >= 0 && (v as usize) < count => Ok(Some(v as usize)),
                    v => Err(Self::zarr_err(
                        path,
                        ZarrError::NoSuchChunkBlock {
                            chunk: grid_pos(i),
                            block: i64::from(v),
                            count,
                        },
                    )),
                }
            })
            .collect()
    }

    /// One chunk decoded (its block read through the block layer, then the zarr codec).
    fn zarr_chunk(
        &self,
        m: &ZarrMeta,
        chunk: &[usize],
        block: usize,
        path: &str,
    ) -> Result<Vec<u8>> {
        let h = self.block_header(block)?;
        let size_err = |found: u64| {
            Self::zarr_err(
                path,
                ZarrError::ChunkSize {
                    chunk: chunk.to_vec(),
                    block,
                    found,
                    expected: m.chunk_bytes,
                },
            )
        };
        if m.codec.is_none() && h.data_size != m.chunk_bytes {
            return Err(size_err(h.data_size));
        }
        self.check_size("zarr chunk", m.chunk_bytes.max(h.data_size))?;
        let mut stored = vec![0u8; h.data_size as usize];
        self.read_spans(block, std::slice::from_ref(&(0..h.data_size)), &mut stored)?;
        let Some(codec) = m.codec else {
            return Ok(stored);
        };
        let mut out = crate::mem::zeroed_bytes(m.chunk_bytes as usize).ok_or(Error::Limit {
            what: "zarr chunk",
            limit: usize::MAX as u64,
            found: m.chunk_bytes,
        })?;
        codec.decode_into(&stored, &mut out).map_err(|source| {
            Self::zarr_err(
                path,
                ZarrError::Codec {
                    chunk: chunk.to_vec(),
                    block,
                    compressor: codec.id().to_string(),
                    source,
                },
            )
        })?;
        Ok(out)
    }

    /// The selected elements of the asdf-zarr array `node`, in C order and the datatype's
    /// byte order, into `into` when given (its exact size), else a new buffer; only the
    /// chunks the selection touches are read and decoded.
    pub(super) fn zarr_region_bytes(
        &self,
        node: &Node,
        path: &str,
        sel: &Selection,
        into: Option<&mut [u8]>,
    ) -> Result<(DType, Vec<usize>, Vec<u8>)> {
        let m = ZarrMeta::from_node(node).map_err(|e| Self::zarr_err(path, e))?;
        let axes = sel.resolve(&m.shape).map_err(|source| Error::Selection {
            path: path.to_string().into(),
            source,
        })?;
        let item = m.dtype.itemsize();
        let count = axes
            .iter()
            .try_fold(1u64, |a, r| a.checked_mul(r.count as u64))
            .unwrap_or(u64::MAX);
        let out_shape: Vec<usize> = axes.iter().filter(|a| a.keep).map(|a| a.count).collect();
        let mut owned = Vec::new();
        let out = self.region_out(into, &mut owned, path, count, item)?;
        if count == 0 {
            return Ok((m.dtype, out_shape, owned));
        }
        let map = self.zarr_chunk_map(m.map_block, &m.grid, path)?;
        if m.fill.iter().any(|&b| b != 0) || !out.iter().all(|&b| b == 0) {
            for e in out.chunks_exact_mut(item) {
                e.copy_from_slice(&m.fill);
            }
        }
        // per axis, the selected positions grouped by chunk
        let per_axis: Vec<Vec<Run>> = axes
            .iter()
            .zip(&m.chunks)
            .map(|(a, &c)| runs(a, c))
            .collect();
        let mut out_strides = vec![0usize; axes.len()];
        let mut acc = item;
        for d in (0..axes.len()).rev() {
            out_strides[d] = acc;
            acc *= axes[d].count;
        }
        let chunk_strides = m.chunk_strides();
        // every combination of runs (one chunk each), in C order of the grid
        let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
        for runs in &per_axis {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    (0..runs.len()).map(move |i| {
                        let mut c = c.clone();
                        c.push(i);
                        c
                    })
                })
                .collect();
        }
        let batch = rayon::current_num_threads().max(1) * CHUNKS_PER_THREAD;
        for group in combos.chunks(batch) {
            let decoded: Vec<Option<(Vec<usize>, Vec<u8>)>> = group
                .par_iter()
                .map(|combo| {
                    let pos: Vec<usize> = combo
                        .iter()
                        .zip(&per_axis)
                        .map(|(&i, r)| r[i].chunk)
                        .collect();
                    let flat = pos
                        .iter()
                        .zip(&m.grid)
                        .fold(0usize, |a, (&p, &g)| a * g + p);
                    match map.get(flat).copied().flatten() {
                        None => Ok(None),
                        Some(block) => {
                            let data = self.zarr_chunk(&m, &pos, block, path)?;
                            Ok(Some((combo.clone(), data)))
                        }
                    }
                })
                .collect::<Result<_>>()?;
            for (combo, data) in decoded.into_iter().flatten() {
                let sel_runs: Vec<&Run> =
                    combo.iter().zip(&per_axis).map(|(&i, r)| &r[i]).collect();
                copy_chunk(
                    &data,
                    &sel_runs,
                    &axes,
                    &chunk_strides,
                    &out_strides,
                    item,
                    out,
                );
            }
        }
        Ok((m.dtype, out_shape, owned))
    }

    /// [`AsdfFile::read_region_into`] for an asdf-zarr array.
    pub(super) fn zarr_read_region_into<T: Element>(
        &self,
        node: &Node,
        path: &str,
        sel: &Selection,
        out: &mut [T],
    ) -> Result<Vec<usize>> {
        let (dtype, _) = self.zarr_info(node, path)?;
        let order = match &dtype {
            DType::Scalar { ty, byteorder } if *ty == T::SCALAR => *byteorder,
            other => {
                return Err(Error::Array(array::ArrayError::DTypeMismatch {
                    expected: T::SCALAR.name(),
                    found: other.name(),
                }))
            }
        };
        let Some(bytes) = T::as_bytes_mut(out) else {
            // bool: through the checks of the owned conversion
            let d = self.zarr_dyn(node, path, sel)?;
            let a = d.to_array::<T>().map_err(|source| Error::Convert {
                path: path.to_string().into(),
                source,
            })?;
            if a.len() != out.len() {
                return Err(Error::Selection {
                    path: path.to_string().into(),
                    source: array::SelectionError::BufferSize {
                        given: out.len(),
                        needed: a.len(),
                    },
                });
            }
            for (o, v) in out.iter_mut().zip(a.iter()) {
                *o = *v;
            }
            return Ok(a.shape().to_vec());
        };
        let (_, shape, _) = self.zarr_region_bytes(node, path, sel, Some(bytes))?;
        let size = std::mem::size_of::<T>();
        if T::SCALAR.has_byteorder() && !order.is_native() && size > 1 {
            let complex = matches!(T::SCALAR, ScalarType::Complex64 | ScalarType::Complex128);
            let unit = if complex { size / 2 } else { size };
            for v in bytes.chunks_exact_mut(unit) {
                v.reverse();
            }
        }
        Ok(shape)
    }

    /// The selected part of the asdf-zarr array `node` as a [`DynArray`].
    pub(super) fn zarr_dyn(&self, node: &Node, path: &str, sel: &Selection) -> Result<DynArray> {
        let (dtype, shape, data) = self.zarr_region_bytes(node, path, sel, None)?;
        Ok(DynArray { dtype, shape, data })
    }
}

/// Copies the selected elements of one decoded chunk into the output: `runs` gives, per
/// axis, the positions of the selection inside this chunk.
fn copy_chunk(
    data: &[u8],
    runs: &[&Run],
    axes: &[AxisRange],
    chunk_strides: &[usize],
    out_strides: &[usize],
    item: usize,
    out: &mut [u8],
) {
    let nd = runs.len();
    if nd == 0 {
        out[..item].copy_from_slice(&data[..item]);
        return;
    }
    // the last axis is copied as one run when both sides are contiguous along it
    let last = nd - 1;
    let contiguous = axes[last].step == 1 && chunk_strides[last] == item;
    let mut idx = vec![0usize; nd];
    loop {
        let mut src = 0usize;
        let mut dst = 0usize;
        for d in 0..last {
            let local = local_pos(runs[d], axes[d], idx[d]);
            src += local * chunk_strides[d];
            dst += (runs[d].out + idx[d]) * out_strides[d];
        }
        let r = runs[last];
        if contiguous {
            let s = src + r.local * item;
            let o = dst + r.out * item;
            let n = r.count * item;
            out[o..o + n].copy_from_slice(&data[s..s + n]);
        } else {
            for k in 0..r.count {
                let s = src + local_pos(r, axes[last], k) * chunk_strides[last];
                let o = dst + (r.out + k) * out_strides[last];
                out[o..o + item].copy_from_slice(&data[s..s + item]);
            }
        }
        // next position of the outer axes
        let mut d = last;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < runs[d].count {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// The position inside the chunk of the `k`-th selected position of a run.
fn local_pos(r: &Run, a: AxisRange, k: usize) -> usize {
    (r.local as isize + k as isize * a.step) as usize
}
