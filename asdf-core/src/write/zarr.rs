//! Writing arrays the asdf-zarr way ([`Writer::add_zarr_array`]): a node tagged
//! `asdf://asdf-format.org/zarr/tags/zarr-1.0.0` with the zarr v2 metadata (`.zarray`), one
//! block per chunk holding the chunk's zarr-encoded bytes, and `chunk_block_map`, the index of
//! a block holding an int32 array (little-endian) shaped like the chunk grid whose entries are
//! the chunks' block indices: what python asdf with asdf-zarr 0.0.4 reads as a `zarr.Array`.
//! Rewriting a file ([`Writer::from_file`]) keeps the asdf-zarr arrays it holds, chunk blocks
//! and map renumbered.

use super::jobs::{BlockData, BlockJob};
use super::nodes::{flow, int, map};
use super::{WriteError, Writer};
use crate::array::{DType, ScalarType, WriteArray};
use crate::codec::{self, Compression};
use crate::file::ZARR_TAG;
use crate::yaml::{Node, Value};
use crate::AsdfFile;

/// The compressor of the chunks of an array written with [`Writer::add_zarr_array`], as
/// numcodecs names it (the chunk blocks themselves are stored uncompressed: the compression
/// is zarr's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ZarrCompressor {
    /// Chunks stored as they are (`compressor: null`).
    #[default]
    None,
    /// numcodecs `zlib` (a zlib stream), level 0 to 9.
    Zlib {
        /// Compression level.
        level: u32,
    },
    /// numcodecs `zstd` (a zstd frame).
    Zstd {
        /// Compression level.
        level: i32,
    },
    /// numcodecs `bz2` (a bzip2 stream), level 1 to 9.
    Bz2 {
        /// Compression level.
        level: u32,
    },
    /// numcodecs `lz4` (the decoded size as a little-endian u32, then one lz4 block).
    Lz4 {
        /// numcodecs' acceleration, recorded in the metadata (our encoder has one speed).
        acceleration: i32,
    },
    /// numcodecs `gzip` (a gzip stream, no file name, time stamp 0), level 0 to 9.
    Gzip {
        /// Compression level.
        level: u32,
    },
    /// numcodecs `blosc`: one Blosc1 chunk (asdf-blosc2's encoder; cargo feature `blosc2`),
    /// the item size the datatype's; `blocksize` 0 (the encoder chooses), as numcodecs
    /// writes it by default. [`ZarrCompressor::ZARR_DEFAULT`] is zarr's default compressor.
    Blosc {
        /// The codec inside Blosc (numcodecs' `cname`).
        cname: BloscCname,
        /// Compression level, 0 to 9 (0 stores the data as it is).
        clevel: u8,
        /// The shuffle filter (numcodecs' `shuffle`: 0, 1, 2).
        shuffle: BloscShuffle,
    },
}

/// The codec inside a numcodecs `blosc` chunk ([`ZarrCompressor::Blosc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BloscCname {
    /// `blosclz`.
    Blosclz,
    /// `lz4` (zarr's default).
    Lz4,
    /// `lz4hc`.
    Lz4hc,
    /// `zlib`.
    Zlib,
    /// `zstd`.
    Zstd,
}

impl BloscCname {
    fn name(self) -> &'static str {
        match self {
            BloscCname::Blosclz => "blosclz",
            BloscCname::Lz4 => "lz4",
            BloscCname::Lz4hc => "lz4hc",
            BloscCname::Zlib => "zlib",
            BloscCname::Zstd => "zstd",
        }
    }
}

/// The shuffle filter of a numcodecs `blosc` chunk ([`ZarrCompressor::Blosc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BloscShuffle {
    /// None (numcodecs' 0).
    None,
    /// Byte shuffle (1, zarr's default).
    Byte,
    /// Bit shuffle (2).
    Bit,
}

impl BloscShuffle {
    fn number(self) -> i128 {
        match self {
            BloscShuffle::None => 0,
            BloscShuffle::Byte => 1,
            BloscShuffle::Bit => 2,
        }
    }
}

impl ZarrCompressor {
    /// zarr's default compressor, which python asdf-zarr writes when given none:
    /// `Blosc(cname="lz4", clevel=5, shuffle=SHUFFLE, blocksize=0)`.
    pub const ZARR_DEFAULT: ZarrCompressor = ZarrCompressor::Blosc {
        cname: BloscCname::Lz4,
        clevel: 5,
        shuffle: BloscShuffle::Byte,
    };

    fn config(self) -> Node {
        let entries = match self {
            ZarrCompressor::None => return Node::new(Value::Null),
            ZarrCompressor::Zlib { level } => {
                vec![("id", Node::str("zlib")), ("level", int(level.into()))]
            }
            ZarrCompressor::Zstd { level } => {
                vec![("id", Node::str("zstd")), ("level", int(level.into()))]
            }
            ZarrCompressor::Bz2 { level } => {
                vec![("id", Node::str("bz2")), ("level", int(level.into()))]
            }
            ZarrCompressor::Lz4 { acceleration } => vec![
                ("acceleration", int(acceleration.into())),
                ("id", Node::str("lz4")),
            ],
            ZarrCompressor::Gzip { level } => {
                vec![("id", Node::str("gzip")), ("level", int(level.into()))]
            }
            ZarrCompressor::Blosc {
                cname,
                clevel,
                shuffle,
            } => vec![
                ("blocksize", int(0)),
                ("clevel", int(clevel.min(9).into())),
                ("cname", Node::str(cname.name())),
                ("id", Node::str("blosc")),
                ("shuffle", int(shuffle.number())),
            ],
        };
        flow(None, map(entries))
    }

    /// One chunk (of items of `item` bytes) encoded.
    fn encode(self, chunk: Vec<u8>, item: usize) -> Result<Vec<u8>, WriteError> {
        let err = |codec, source| WriteError::Codec {
            block: 0,
            codec,
            source,
        };
        match self {
            ZarrCompressor::None => Ok(chunk),
            ZarrCompressor::Zlib { level } => {
                let level = level.min(9) as i32;
                codec::encode(Compression::Zlib, &chunk, Some(level))
                    .map_err(|e| err(Compression::Zlib, e))
            }
            ZarrCompressor::Zstd { level } => {
                // one frame with its content size, as numcodecs writes it
                zstd::bulk::compress(&chunk, level).map_err(WriteError::Io)
            }
            ZarrCompressor::Bz2 { level } => {
                let level = level.clamp(1, 9) as i32;
                codec::encode(Compression::Bzp2, &chunk, Some(level))
                    .map_err(|e| err(Compression::Bzp2, e))
            }
            ZarrCompressor::Lz4 { .. } => {
                if u32::try_from(chunk.len()).is_err() {
                    return Err(WriteError::TooLarge {
                        what: "lz4 zarr chunk",
                    });
                }
                Ok(lz4_flex::block::compress_prepend_size(&chunk))
            }
            ZarrCompressor::Gzip { level } => {
                use std::io::Write;
                let mut enc = flate2::GzBuilder::new().mtime(0).write(
                    Vec::with_capacity(chunk.len() / 2 + 64),
                    flate2::Compression::new(level.min(9)),
                );
                enc.write_all(&chunk).map_err(WriteError::Io)?;
                enc.finish().map_err(WriteError::Io)
            }
            ZarrCompressor::Blosc {
                cname,
                clevel,
                shuffle,
            } => blosc_chunk(&chunk, item, cname, clevel, shuffle),
        }
    }
}

/// One Blosc1 chunk as numcodecs' `Blosc.encode` makes it (the item size the datatype's).
#[cfg(feature = "blosc2")]
fn blosc_chunk(
    chunk: &[u8],
    item: usize,
    cname: BloscCname,
    clevel: u8,
    shuffle: BloscShuffle,
) -> Result<Vec<u8>, WriteError> {
    use asdf_blosc2::blosc1::{Params, Shuffle};
    use asdf_blosc2::Codec;
    let p = Params {
        codec: match cname {
            BloscCname::Blosclz => Codec::Blosclz,
            BloscCname::Lz4 => Codec::Lz4,
            BloscCname::Lz4hc => Codec::Lz4hc,
            BloscCname::Zlib => Codec::Zlib,
            BloscCname::Zstd => Codec::Zstd,
        },
        clevel: clevel.min(9),
        shuffle: match shuffle {
            BloscShuffle::None => Shuffle::None,
            BloscShuffle::Byte => Shuffle::Byte,
            BloscShuffle::Bit => Shuffle::Bit,
        },
        typesize: item,
        blocksize: 0,
    };
    asdf_blosc2::blosc1::encode(chunk, &p).map_err(|e| WriteError::Codec {
        block: 0,
        codec: Compression::Blsc,
        source: crate::codec::CodecError::Encode {
            codec: "blosc",
            message: e.to_string(),
        },
    })
}

/// Without the `blosc2` feature no Blosc chunk is written.
#[cfg(not(feature = "blosc2"))]
fn blosc_chunk(
    _chunk: &[u8],
    _item: usize,
    _cname: BloscCname,
    _clevel: u8,
    _shuffle: BloscShuffle,
) -> Result<Vec<u8>, WriteError> {
    Err(WriteError::Codec {
        block: 0,
        codec: Compression::Blsc,
        source: crate::codec::CodecError::Unsupported {
            codec: "blosc",
            reason: "asdf-core was built without the `blosc2` feature".into(),
        },
    })
}

/// An array registered with [`Writer::add_zarr_array`]: its `.zarray` node and its encoded
/// chunks (grid in C order).
pub(crate) struct ZarrSpec {
    zarray: Node,
    chunks: Vec<Vec<u8>>,
}

/// zarr's default `fill_value` (0) for `dtype`, or `None` when zarr-written arrays of it are
/// not offered here.
fn default_fill(dtype: &DType) -> Option<Node> {
    let DType::Scalar { ty, .. } = dtype else {
        return None;
    };
    Some(match ty {
        ScalarType::Bool8 => Node::new(Value::Bool(false)),
        ScalarType::Float16 | ScalarType::Float32 | ScalarType::Float64 => {
            Node::new(Value::Float(0.0))
        }
        ScalarType::Complex64 | ScalarType::Complex128 => flow(
            None,
            Value::Seq(vec![
                Node::new(Value::Float(0.0)),
                Node::new(Value::Float(0.0)),
            ]),
        ),
        ScalarType::Ascii(_) | ScalarType::Ucs4(_) => return None,
        _ => int(0),
    })
}

/// The chunk at grid position `pos` of a C-order array: its elements in C order, the parts
/// beyond the array's edge zero (zarr's default fill value).
fn chunk_bytes(
    data: &[u8],
    shape: &[usize],
    chunks: &[usize],
    pos: &[usize],
    item: usize,
) -> Vec<u8> {
    let n: usize = chunks.iter().product::<usize>() * item;
    let mut out = vec![0u8; n];
    let nd = shape.len();
    if nd == 0 {
        out.copy_from_slice(&data[..item]);
        return out;
    }
    // extent of the chunk inside the array, per axis
    let origin: Vec<usize> = pos.iter().zip(chunks).map(|(&p, &c)| p * c).collect();
    let extent: Vec<usize> = (0..nd)
        .map(|d| chunks[d].min(shape[d] - origin[d]))
        .collect();
    let mut a_strides = vec![item; nd];
    let mut c_strides = vec![item; nd];
    for d in (0..nd - 1).rev() {
        a_strides[d] = a_strides[d + 1] * shape[d + 1];
        c_strides[d] = c_strides[d + 1] * chunks[d + 1];
    }
    let row = extent[nd - 1] * item;
    let mut idx = vec![0usize; nd - 1];
    loop {
        let mut src = origin[nd - 1] * item;
        let mut dst = 0;
        for d in 0..nd - 1 {
            src += (origin[d] + idx[d]) * a_strides[d];
            dst += idx[d] * c_strides[d];
        }
        out[dst..dst + row].copy_from_slice(&data[src..src + row]);
        let mut d = nd - 1;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < extent[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl<'a> Writer<'a> {
    /// Registers an array to be written the asdf-zarr way: cut into chunks of `chunks`
    /// elements per axis (the last chunk along an axis may reach past the array's edge, as in
    /// zarr), each chunk encoded by `compressor` into a block of its own, with the zarr v2
    /// metadata in the tree and a chunk-to-block map; python asdf with asdf-zarr reads it
    /// as a `zarr.Array`, and [`AsdfFile::array`](crate::AsdfFile::array) and the region
    /// reads read it as an array. Returns the node to place in the tree (tagged
    /// [`ZARR_TAG`]). The chunks are encoded now; the writer's own compression does not
    /// apply to them.
    ///
    /// Numbers and booleans only (`fill_value` 0, every chunk written). Errors
    /// ([`WriteError::BadTree`]): a 0-d array (asdf-zarr 0.0.4 cannot read one back), a
    /// chunk shape whose length is not the array's dimension count or with a zero size, a
    /// datatype other than numbers and booleans; a chunk too large for the codec.
    ///
    /// ```
    /// use asdf_core::write::{Writer, WriteOptions, ZarrCompressor};
    /// use asdf_core::{AsdfFile, Node};
    /// let image = ndarray::Array2::<f32>::from_shape_fn((100, 70), |(i, j)| (i * j) as f32);
    /// let mut writer = Writer::new(WriteOptions::default());
    /// let node = writer.add_zarr_array(&image, &[32, 32], ZarrCompressor::Zlib { level: 5 })?;
    /// let bytes = writer.write_to_vec(&Node::map([("image", node)]))?;
    /// let file = AsdfFile::from_bytes(bytes).unwrap();
    /// assert_eq!(file.array::<f32>("/image").unwrap(), image.into_dyn());
    /// // a region decodes only the chunks it touches (here one)
    /// let part = file.region::<f32>("/image", &"40:50, 0:10".parse().unwrap()).unwrap();
    /// assert_eq!(part[[9, 9]], 49.0 * 9.0);
    /// # Ok::<(), asdf_core::write::WriteError>(())
    /// ```
    pub fn add_zarr_array<'b>(
        &mut self,
        array: impl Into<WriteArray<'b>>,
        chunks: &[usize],
        compressor: ZarrCompressor,
    ) -> Result<Node, WriteError> {
        let array = array.into();
        let dtype = array.dtype().clone();
        let shape = array.shape().to_vec();
        let bad = |message: String| WriteError::BadTree {
            path: String::new().into(),
            message,
        };
        if shape.is_empty() {
            // asdf-zarr 0.0.4 cannot read a 0-d array back (numpy.nonzero of its 0-d map)
            return Err(bad(
                "a 0-d array is not written as zarr: asdf-zarr cannot read it back".into(),
            ));
        }
        if chunks.len() != shape.len() || chunks.contains(&0) {
            return Err(bad(format!(
                "zarr chunks {chunks:?} for an array of shape {shape:?}: one size of at least 1 per axis"
            )));
        }
        let fill = default_fill(&dtype).ok_or_else(|| {
            bad(format!(
                "zarr arrays of {} are not written (numbers and booleans are)",
                dtype.name()
            ))
        })?;
        let item = dtype.itemsize();
        let grid: Vec<usize> = shape
            .iter()
            .zip(chunks)
            .map(|(&s, &c)| s.div_ceil(c))
            .collect();
        let count: usize = grid.iter().product();
        let mut encoded = Vec::with_capacity(count);
        let mut pos = vec![0usize; grid.len()];
        for _ in 0..count {
            let raw = chunk_bytes(array.bytes(), &shape, chunks, &pos, item);
            encoded.push(compressor.encode(raw, item)?);
            for d in (0..grid.len()).rev() {
                pos[d] += 1;
                if pos[d] < grid[d] {
                    break;
                }
                pos[d] = 0;
            }
        }
        let numpy = dtype.to_numpy_str();
        let dims = |v: &[usize]| {
            flow(
                None,
                Value::Seq(v.iter().map(|&d| int(d as i128)).collect()),
            )
        };
        let zarray = Node::new(map(vec![
            ("chunks", dims(chunks)),
            ("compressor", compressor.config()),
            ("dtype", Node::str(numpy)),
            ("fill_value", fill),
            ("filters", Node::new(Value::Null)),
            ("order", Node::str("C")),
            ("shape", dims(&shape)),
            ("zarr_format", int(2)),
        ]));
        let node = Node::tagged(
            ZARR_TAG,
            map(vec![
                (".zarray", zarray.clone()),
                ("chunk_block_map", int(-1)),
            ]),
        );
        self.placeholders.push(node.clone());
        self.zarr.insert(
            node.id(),
            ZarrSpec {
                zarray,
                chunks: encoded,
            },
        );
        Ok(node)
    }
}

/// The node written for a registered zarr array: its chunks and map become blocks.
pub(super) fn plan_registered<'w>(spec: &'w ZarrSpec, blocks: &mut Vec<BlockJob<'w>>) -> Node {
    let mut map_bytes = Vec::with_capacity(spec.chunks.len() * 4);
    for c in &spec.chunks {
        blocks.push(BlockJob::new(BlockData::Slice(c), None));
        map_bytes.extend_from_slice(&(blocks.len() as i32 - 1).to_le_bytes());
    }
    written_node(&spec.zarray, map_bytes, blocks)
}

fn written_node(zarray: &Node, map_bytes: Vec<u8>, blocks: &mut Vec<BlockJob<'_>>) -> Node {
    let mut job = BlockJob::new(BlockData::Owned(map_bytes), None);
    job.typesize = 4;
    blocks.push(job);
    Node::tagged(
        ZARR_TAG,
        map(vec![
            (".zarray", zarray.clone()),
            ("chunk_block_map", int(blocks.len() as i128 - 1)),
        ]),
    )
}

/// The node written for an asdf-zarr node of the source file: its chunk blocks (decoded
/// bytes, stored uncompressed) and a renumbered map; the chunks are copied whatever their
/// compressor. `None` when the node refers to no block (an external store), which is
/// written as it is.
pub(super) fn plan_source<'w>(
    source: &'w AsdfFile,
    node: &Node,
    path: &str,
    blocks: &mut Vec<BlockJob<'w>>,
) -> Result<Option<Node>, WriteError> {
    if node.get("chunk_block_map").is_none() {
        return Ok(None);
    }
    let map = source
        .zarr_block_map(node, path)
        .map_err(|e| WriteError::Source {
            path: path.to_string().into(),
            source: Box::new(e),
        })?;
    let mut map_bytes = Vec::with_capacity(map.len() * 4);
    for entry in map {
        let v = match entry {
            None => -1i32,
            Some(b) => {
                let data = source.block_data(b).map_err(|e| WriteError::Source {
                    path: path.to_string().into(),
                    source: Box::new(e),
                })?;
                blocks.push(BlockJob::new(BlockData::Slice(data), None));
                i32::try_from(blocks.len() - 1).map_err(|_| WriteError::TooLarge {
                    what: "zarr chunk block index",
                })?
            }
        };
        map_bytes.extend_from_slice(&v.to_le_bytes());
    }
    let zarray = node
        .get(".zarray")
        .cloned()
        .unwrap_or_else(|| Node::new(Value::Null));
    Ok(Some(written_node(&zarray, map_bytes, blocks)))
}
