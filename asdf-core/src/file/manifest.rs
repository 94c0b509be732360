//! Chunk manifests: where each independently readable piece of an array lies.
//!
//! [`AsdfFile::manifest`] lists, for one array, the pieces that can be read and decoded on
//! their own: which file holds each (this file, or the external block file its `source` URI
//! names), the byte range in that file, the codec, the range of the decoded block it yields
//! and, when that is a box, the region of the array it holds. It reads block headers and
//! (for `lz4` and `bsc2` blocks) the small indexes inside the stored bytes, never the data.
//!
//! | block | pieces |
//! |---|---|
//! | uncompressed | slabs of whole rows along the first axis, about [`ManifestOptions::slab_bytes`] each |
//! | `lz4` (python asdf) | each 4 MiB sub-block, without its 4-byte big-endian length: a numcodecs `lz4` buffer |
//! | `bsc2` | each Blosc2 chunk of the frame |
//! | `bls2` | the one Blosc2 chunk |
//! | `zlib`, `bzp2`, `zstd`, `lz4f`, `blsc` | the whole block |
//! | inline data | one piece with [`PieceSource::Inline`] and no byte range |
//! | a `fits:` image of an ASDF-in-FITS file | its data, raw big-endian (scaled images: [`AsdfFile::fits_scaled_image`]) |
//! | an asdf-zarr array ([`ZARR_TAG`](super::ZARR_TAG)) | each chunk: the block the chunk map names, encoded by the array's zarr compressor ([`Manifest::zarr`]); a chunk never written is a [`PieceSource::Repeat`] of the fill value |
//!
//! An asdf-zarr chunk is one piece when its block is stored uncompressed (as asdf-zarr
//! writes them): its stored bytes are the compressor's output, which numcodecs decodes.
//! A chunk block that the ASDF file compresses too would need two decoders, one after the
//! other: the manifest of such an array is [`Error::Unsupported`] (the array still reads,
//! and `asdftool references` inlines it).
//!
//! In an ASDF-in-FITS file, the blocks lie in the data of the `ASDF` extension: their
//! pieces' offsets are in the FITS file ([`AsdfFile::asdf_offset`] is where that data
//! begins).
//!
//! ```
//! use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
//! use asdf_core::{AsdfFile, ManifestOptions, PieceCodec};
//! let image = ndarray::Array2::<f32>::zeros((64, 32)); // 8 KiB, rows of 128 bytes
//! let mut w = Writer::new(WriteOptions::default().compression(CompressionChoice::None));
//! let root = asdf_core::tree!({"sci": w.add_array(&image)});
//! let file = AsdfFile::from_bytes(w.write_to_vec(&root)?)?;
//! let m = file.manifest("/sci", &ManifestOptions::default().slab_bytes(1024))?;
//! assert_eq!(m.pieces.len(), 8); // 8 rows of 128 bytes per slab
//! assert_eq!(m.pieces[1].region, Some(vec![8..16, 0..32]));
//! assert_eq!(m.pieces[1].codec, PieceCodec::None);
//! assert_eq!(m.zarr_chunks(), Some(vec![8, 32]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;

use super::zarr::{ChunkCodec, ZarrChunking, ZarrError, ZarrMeta};
use super::AsdfFile;
use crate::array::{self, ArraySource, DType, NdArrayMeta};
use crate::codec::Compression;
use crate::file::blocks::{BlockPiece, PieceKind};
use crate::{Error, Result};

/// Options of [`AsdfFile::manifest`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManifestOptions {
    /// Bytes of one slab of an uncompressed block (default 8 MiB): slabs are whole rows
    /// along the first axis, at least one row.
    pub slab_bytes: u64,
    /// Cut uncompressed blocks into slabs of equal rows where the first axis allows: the
    /// largest divisor of its length between half and all of the rows that fit in
    /// `slab_bytes`, so that no slab is shorter than the others (default `false`); without
    /// such a divisor, as without this option. Zarr's version 2 format wants every chunk
    /// whole, the last one included: `asdftool references` asks for this.
    pub equal_slabs: bool,
}

impl Default for ManifestOptions {
    fn default() -> Self {
        ManifestOptions {
            slab_bytes: 8 << 20,
            equal_slabs: false,
        }
    }
}

impl ManifestOptions {
    /// Default options: slabs of about 8 MiB, the last one as long as what remains.
    pub fn new() -> Self {
        Self::default()
    }
    /// Bytes of one slab of an uncompressed block (whole rows, at least one).
    pub fn slab_bytes(mut self, n: u64) -> Self {
        self.slab_bytes = n;
        self
    }
    /// Slabs of equal rows (see [`ManifestOptions::equal_slabs`](struct@ManifestOptions)).
    pub fn equal_slabs(mut self, on: bool) -> Self {
        self.equal_slabs = on;
        self
    }
}

/// The file that holds a [`Piece`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PieceSource {
    /// The ASDF file the manifest was made of.
    File,
    /// The external block file named by the ndarray's `source` URI (as written in the tree,
    /// relative to the file's folder); offsets are in that file.
    External(String),
    /// The tree itself (inline data): no byte range.
    Inline,
    /// No file: the piece's decoded bytes are this pattern repeated (a special chunk of a
    /// Blosc2 frame, such as a chunk of zeros); no byte range.
    Repeat(Vec<u8>),
}

/// How the bytes of a [`Piece`] are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PieceCodec {
    /// Raw bytes.
    None,
    /// A zlib stream (`zlib` block).
    Zlib,
    /// A bzip2 stream (`bzp2` block).
    Bzp2,
    /// A zstd frame (`zstd` block).
    Zstd,
    /// An lz4 frame (`lz4f` block).
    Lz4f,
    /// A c-blosc1 chunk (`blsc` block).
    Blsc,
    /// One sub-block of python asdf's `lz4` framing: a 4-byte little-endian decoded size,
    /// then a raw lz4 block (numcodecs' `lz4` buffer).
    Lz4Block,
    /// One Blosc2 chunk (a `bls2` block, or a chunk of a `bsc2` frame).
    Blosc2Chunk,
    /// A whole Blosc2 frame (a `bsc2` block read as one piece).
    Blosc2Frame,
    /// An xz stream (`xz` block, ASDF.jl).
    Xz,
    /// A gzip stream (an asdf-zarr chunk of numcodecs' `gzip`).
    Gzip,
}

impl PieceCodec {
    /// A short name: `none`, `zlib`, `bzp2`, `zstd`, `lz4f`, `blsc`, `lz4-block`,
    /// `blosc2-chunk`, `blosc2-frame`, `xz`, `gzip`.
    pub fn name(self) -> &'static str {
        match self {
            PieceCodec::None => "none",
            PieceCodec::Zlib => "zlib",
            PieceCodec::Bzp2 => "bzp2",
            PieceCodec::Zstd => "zstd",
            PieceCodec::Lz4f => "lz4f",
            PieceCodec::Blsc => "blsc",
            PieceCodec::Lz4Block => "lz4-block",
            PieceCodec::Blosc2Chunk => "blosc2-chunk",
            PieceCodec::Blosc2Frame => "blosc2-frame",
            PieceCodec::Xz => "xz",
            PieceCodec::Gzip => "gzip",
        }
    }
}

impl std::fmt::Display for PieceCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One independently readable piece of an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The file holding it.
    pub source: PieceSource,
    /// Absolute byte offset in that file (0 for inline data).
    pub offset: u64,
    /// Bytes to read from `offset` (0 for inline data).
    pub length: u64,
    /// How those bytes are encoded.
    pub codec: PieceCodec,
    /// The bytes of the decoded block this piece yields (for inline data: of the array's
    /// C-order bytes).
    pub decoded: Range<u64>,
    /// The region of the array it holds, one range per axis, when it is a box (a 0-d array:
    /// an empty list); `None` when the piece holds part of a row, or elements of a view
    /// (offset and strides) that are no box.
    pub region: Option<Vec<Range<usize>>>,
}

/// The whole stored block an array reads, as one piece ([`Manifest::block`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WholeBlock {
    /// The file holding it.
    pub source: PieceSource,
    /// Absolute byte offset of its stored bytes in that file.
    pub offset: u64,
    /// Its stored bytes.
    pub length: u64,
    /// Its codec (`None`: uncompressed).
    pub compression: Option<Compression>,
    /// Its decoded bytes.
    pub data_size: u64,
}

/// An array of a block of an ASDF 0.1.0 encoding chain ([`AsdfFile::legacy_chain`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LegacyChain {
    /// Absolute byte offset of the block's stored bytes (its chain, then its data).
    pub offset: u64,
    /// Bytes stored.
    pub length: u64,
    /// Bytes the chain decodes to (`memory_size`).
    pub data_size: u64,
    /// The byte order of the floats a `quantize` step produces.
    pub byte_order: crate::array::ByteOrder,
    /// The array's datatype.
    pub dtype: DType,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The byte of its first element in the decoded block.
    pub start: u64,
    /// Its byte strides in the decoded block.
    pub strides: Vec<i64>,
    /// Whether it is C-contiguous.
    pub contiguous: bool,
}

/// The pieces of one array ([`AsdfFile::manifest`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// Tree path of the array.
    pub path: String,
    /// Element datatype, byte order included.
    pub dtype: DType,
    /// Shape (a streamed first axis resolved to the rows its block holds).
    pub shape: Vec<usize>,
    /// The pieces, in block order.
    pub pieces: Vec<Piece>,
    /// The whole block the array reads (`None` for inline data).
    pub block: Option<WholeBlock>,
    /// Whether the pieces' decoded bytes are exactly the array's C-order bytes, piece after
    /// piece (C-contiguous at offset 0 of a block of its size, or uncompressed C-contiguous
    /// anywhere in its block, or inline).
    exact: bool,
    /// Whether the array's C-order bytes are exactly its block's decoded bytes.
    whole: bool,
    /// An asdf-zarr array's chunking.
    zarr: Option<ZarrChunking>,
}

impl Manifest {
    /// Whether the array's C-order bytes are exactly the decoded bytes of its block (the
    /// array C-contiguous at offset 0 of a block of its size): [`Manifest::block`] is then
    /// one chunk of the array's shape, whatever its pieces.
    pub fn is_whole_block(&self) -> bool {
        self.whole
    }

    /// For an asdf-zarr array, how it is chunked: its pieces are then its chunks in C order
    /// of the chunk grid, each piece's `decoded` the bytes of a whole chunk (in Fortran
    /// order inside the chunk when [`ZarrChunking::fortran`]) and its `region` the chunk's
    /// box cut at the array's edges. `None` for other arrays.
    pub fn zarr(&self) -> Option<&ZarrChunking> {
        self.zarr.as_ref()
    }

    /// Bytes of one element.
    pub fn itemsize(&self) -> usize {
        self.dtype.itemsize()
    }

    /// The chunk shape when the pieces are the chunks of a regular grid: their decoded
    /// bytes are exactly the C-order bytes of the boxes of the grid (the array C-contiguous
    /// and the block holding nothing else, or an uncompressed block), every box has the
    /// same rows along the first axis but the last (which may have fewer), and the other
    /// axes are whole. One piece gives the array's own shape. An asdf-zarr array gives its
    /// chunk shape ([`Manifest::zarr`]). `None` otherwise.
    pub fn zarr_chunks(&self) -> Option<Vec<usize>> {
        if let Some(z) = &self.zarr {
            return Some(z.chunks.clone());
        }
        if !self.exact {
            return None;
        }
        match self.pieces.as_slice() {
            [] => Some(self.shape.clone()),
            [one] => {
                let full: Vec<Range<usize>> = self.shape.iter().map(|&n| 0..n).collect();
                (one.region.as_ref() == Some(&full)).then(|| self.shape.clone())
            }
            pieces => {
                let mut rows = None;
                let mut next = 0usize;
                for (i, p) in pieces.iter().enumerate() {
                    let region = p.region.as_ref()?;
                    let (first, rest) = region.split_first()?;
                    if first.start != next
                        || rest
                            .iter()
                            .zip(&self.shape[1..])
                            .any(|(r, &n)| *r != (0..n))
                    {
                        return None;
                    }
                    let n = first.end.checked_sub(first.start)?;
                    match rows {
                        None => rows = Some(n),
                        Some(r) if n == r => {}
                        Some(r) if n < r && i + 1 == pieces.len() => {}
                        Some(_) => return None,
                    }
                    next = first.end;
                }
                let rows = rows.filter(|&r| r > 0)?;
                (next == *self.shape.first()?).then(|| {
                    let mut chunks = self.shape.clone();
                    chunks[0] = rows;
                    chunks
                })
            }
        }
    }
}

impl AsdfFile {
    /// The scaled image (`BSCALE`, `BZERO`, `BLANK`) of an ASDF-in-FITS file that the array
    /// at `path` is (`source: fits:...`), which [`AsdfFile::manifest`] refuses: where its
    /// stored bytes lie and the scaling that makes astropy's values of them
    /// (`scale_fits_image` in `asdf_core::unstable`). `None` for any other array.
    pub fn fits_scaled_image(&self, path: &str) -> Result<Option<crate::file::fits::ScaledImage>> {
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        match (&meta.source, &self.fits) {
            (ArraySource::Uri(uri), Some(container)) if uri.starts_with("fits:") => {
                container.scaled_image(uri).map_err(|error| Error::Fits {
                    path: path.to_string().into(),
                    error,
                })
            }
            _ => Ok(None),
        }
    }

    /// The binary table of an ASDF-in-FITS file that the array at `path` is (`source:
    /// fits:...`), which [`AsdfFile::manifest`] refuses: where its rows lie and the cards
    /// that describe its columns (`convert_fits_table` in `asdf_core::unstable` makes astropy's
    /// records of them). `None` for an array whose source is no `fits:` HDU; an error for a
    /// `fits:` HDU that is no table astropy reads as records.
    pub fn fits_table(&self, path: &str) -> Result<Option<crate::file::fits::FitsTable>> {
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        match (&meta.source, &self.fits) {
            (ArraySource::Uri(uri), Some(container)) if uri.starts_with("fits:") => {
                container.table(uri).map(Some).map_err(|error| Error::Fits {
                    path: path.to_string().into(),
                    error,
                })
            }
            _ => Ok(None),
        }
    }

    /// The block of an ASDF 0.1.0 encoding chain (the 2015 draft's ENCODED blocks) that the
    /// array at `path` reads, which [`AsdfFile::manifest`] refuses: where its stored bytes
    /// (the chain, then the encoded data) lie in this file, its decoded size, the byte order
    /// of the floats a `quantize` step makes, and where the array lies in the decoded bytes
    /// (`decode_chain` in `asdf_core::unstable` decodes the block). `None` for any other array.
    pub fn legacy_chain(&self, path: &str) -> Result<Option<LegacyChain>> {
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        let ArraySource::Block(src) = &meta.source else {
            return Ok(None);
        };
        let idx = self.block_index(*src, path)?;
        let h = self.block_header(idx)?;
        match self.layout.legacy_block(idx) {
            Some(lb) if lb.has_chain(h) => {}
            _ => return Ok(None),
        }
        let range = self.stored_range(h)?;
        let block_len = usize::try_from(h.data_size).map_err(|_| Error::Limit {
            what: "decoded block size",
            limit: usize::MAX as u64,
            found: h.data_size,
        })?;
        let l = array::bind::layout(&meta, block_len, path)?;
        Ok(Some(LegacyChain {
            offset: range.start as u64,
            length: (range.end - range.start) as u64,
            data_size: h.data_size,
            byte_order: self.legacy_byte_order(idx),
            dtype: l.dtype,
            shape: l.shape,
            start: l.start,
            strides: l.strides,
            contiguous: l.contiguous,
        }))
    }

    /// The independently readable pieces of the array at `path` (see the [module
    /// documentation](crate::file::manifest)). Reads block headers and the indexes of `lz4`
    /// and `bsc2` blocks, never array data (inline data is parsed from the tree).
    ///
    /// Errors name the tree path: not an array, a malformed descriptor or block,
    /// [`Error::Fits`] for a `fits:` HDU that is no image astropy reads as stored (scaled
    /// by `BSCALE`/`BZERO`/`BLANK`: [`AsdfFile::fits_scaled_image`]; a table) and
    /// [`Error::Unsupported`] for blocks of ASDF
    /// 0.1.0 encoding chains.
    pub fn manifest(&self, path: &str, opts: &ManifestOptions) -> Result<Manifest> {
        if let Some(node) = self.zarr_at(path)? {
            let mut m = self.zarr_manifest(&node, path)?;
            if let Some(base) = self.asdf_offset_in_fits() {
                for p in m
                    .pieces
                    .iter_mut()
                    .filter(|p| p.source == PieceSource::File)
                {
                    p.offset = p.offset.saturating_add(base);
                }
            }
            return Ok(m);
        }
        let node = self.ndarray_node(path)?;
        let unsupported = |what: &str| Error::Unsupported {
            what: format!("{path}: manifests of {what} are not supported yet"),
        };
        let meta = NdArrayMeta::from_node(node, path)?;
        let mut m = self.manifest_of(node, &meta, path, opts, &unsupported)?;
        if let (ArraySource::Block(_), Some(base)) = (&meta.source, self.asdf_offset_in_fits()) {
            // ASDF-in-FITS: the blocks lie in the ASDF extension's data
            let shift = |offset: &mut u64| *offset = offset.saturating_add(base);
            for p in m.pieces.iter_mut() {
                if p.source == PieceSource::File {
                    shift(&mut p.offset);
                }
            }
            if let Some(b) = m.block.as_mut() {
                shift(&mut b.offset);
            }
        }
        Ok(m)
    }

    /// Where the bytes of the ASDF file (its header, tree and blocks) begin in the opened
    /// file: 0, or for an ASDF-in-FITS file the data of its `ASDF` extension. The byte
    /// ranges of [`Layout`](crate::layout::Layout) are from there; those of manifests are in
    /// the opened file.
    pub fn asdf_offset(&self) -> u64 {
        self.asdf_offset_in_fits().unwrap_or(0)
    }

    fn asdf_offset_in_fits(&self) -> Option<u64> {
        self.fits.as_ref().and_then(|c| c.asdf_offset())
    }

    /// The manifest of the asdf-zarr array `node`: one piece per chunk of its grid (C
    /// order), the chunk map read, no chunk.
    fn zarr_manifest(&self, node: &crate::Node, path: &str) -> Result<Manifest> {
        let meta = ZarrMeta::from_node(node).map_err(|e| Self::zarr_err(path, e))?;
        let chunking = self.zarr_chunking(node, path)?;
        let map = self.zarr_block_map(node, path)?;
        let codec = match meta.codec {
            None => PieceCodec::None,
            Some(ChunkCodec::Zlib) => PieceCodec::Zlib,
            Some(ChunkCodec::Gzip) => PieceCodec::Gzip,
            Some(ChunkCodec::Bz2) => PieceCodec::Bzp2,
            Some(ChunkCodec::Zstd) => PieceCodec::Zstd,
            // numcodecs' LZ4: the decoded size (u32 little-endian), then one lz4 block
            Some(ChunkCodec::Lz4) => PieceCodec::Lz4Block,
            Some(ChunkCodec::Blosc) => PieceCodec::Blsc,
        };
        let n = meta.grid.len();
        let mut pieces = Vec::with_capacity(map.len());
        for (flat, entry) in map.iter().enumerate() {
            // the chunk's position in the grid (C order), and its box cut at the edges
            let mut pos = vec![0usize; n];
            let mut rest = flat;
            for d in (0..n).rev() {
                let g = meta.grid[d].max(1);
                pos[d] = rest % g;
                rest /= g;
            }
            let region: Vec<Range<usize>> = (0..n)
                .map(|d| {
                    let start = pos[d].saturating_mul(meta.chunks[d]).min(meta.shape[d]);
                    start..start.saturating_add(meta.chunks[d]).min(meta.shape[d])
                })
                .collect();
            let piece = match entry {
                None => Piece {
                    source: PieceSource::Repeat(meta.fill.clone()),
                    offset: 0,
                    length: 0,
                    codec: PieceCodec::None,
                    decoded: 0..meta.chunk_bytes,
                    region: Some(region),
                },
                Some(b) => {
                    let h = self.block_header(*b)?;
                    if let Some(c) = self.compression(h)? {
                        return Err(Error::Unsupported {
                            what: format!(
                                "{path}: manifests of asdf-zarr chunks in compressed blocks are \
                                 not supported (chunk {pos:?}: block {b} is {c}, and its bytes \
                                 then {}): such a chunk needs two decoders",
                                chunking.compressor.unwrap_or("raw")
                            ),
                        });
                    }
                    if meta.codec.is_none() && h.data_size != meta.chunk_bytes {
                        return Err(Self::zarr_err(
                            path,
                            ZarrError::ChunkSize {
                                chunk: pos,
                                block: *b,
                                found: h.data_size,
                                expected: meta.chunk_bytes,
                            },
                        ));
                    }
                    let stored = self.stored_range(h)?;
                    Piece {
                        source: PieceSource::File,
                        offset: stored.start as u64,
                        length: (stored.end - stored.start) as u64,
                        codec,
                        decoded: 0..meta.chunk_bytes,
                        region: Some(region),
                    }
                }
            };
            pieces.push(piece);
        }
        Ok(Manifest {
            path: path.to_string(),
            dtype: meta.dtype,
            shape: meta.shape,
            pieces,
            block: None,
            exact: false,
            whole: false,
            zarr: Some(chunking),
        })
    }

    fn manifest_of(
        &self,
        node: &crate::Node,
        meta: &NdArrayMeta,
        path: &str,
        opts: &ManifestOptions,
        unsupported: &dyn Fn(&str) -> Error,
    ) -> Result<Manifest> {
        match &meta.source {
            ArraySource::Inline(_) => {
                let a = self.dyn_array_of(node, path)?;
                let full = a.shape.iter().map(|&n| 0..n).collect();
                Ok(Manifest {
                    path: path.to_string(),
                    dtype: a.dtype,
                    shape: a.shape,
                    pieces: vec![Piece {
                        source: PieceSource::Inline,
                        offset: 0,
                        length: 0,
                        codec: PieceCodec::None,
                        decoded: 0..a.data.len() as u64,
                        region: Some(full),
                    }],
                    block: None,
                    exact: true,
                    whole: false,
                    zarr: None,
                })
            }
            ArraySource::Block(src) => {
                let idx = self.block_index(*src, path)?;
                block_manifest(self, idx, meta, path, PieceSource::File, opts)
            }
            ArraySource::Uri(uri) if uri.starts_with("fits:") => {
                let Some(container) = &self.fits else {
                    return Err(unsupported(
                        "FITS HDUs (source fits:...) outside FITS files",
                    ));
                };
                let (offset, length, dtype, shape) =
                    container.raw_image(uri).map_err(|error| Error::Fits {
                        path: path.to_string().into(),
                        error,
                    })?;
                let full: Vec<Range<usize>> = shape.iter().map(|&n| 0..n).collect();
                Ok(Manifest {
                    path: path.to_string(),
                    dtype,
                    shape,
                    pieces: vec![Piece {
                        source: PieceSource::File,
                        offset,
                        length,
                        codec: PieceCodec::None,
                        decoded: 0..length,
                        region: Some(full),
                    }],
                    block: Some(WholeBlock {
                        source: PieceSource::File,
                        offset,
                        length,
                        compression: None,
                        data_size: length,
                    }),
                    exact: true,
                    whole: true,
                    zarr: None,
                })
            }
            ArraySource::Uri(uri) => {
                let ext = self.external_block_file(uri, path)?;
                block_manifest(
                    &ext,
                    0,
                    meta,
                    path,
                    PieceSource::External(uri.clone()),
                    opts,
                )
            }
            // a source kind added later
            #[allow(unreachable_patterns)]
            _ => Err(Error::NotAnArray {
                path: path.to_string().into(),
                tag: node.tag().map(str::to_string),
            }),
        }
    }
}

/// The manifest of an array whose data is block `idx` of `file`.
fn block_manifest(
    file: &AsdfFile,
    idx: usize,
    meta: &NdArrayMeta,
    path: &str,
    source: PieceSource,
    opts: &ManifestOptions,
) -> Result<Manifest> {
    let header = file.block_header(idx)?;
    let data_size = header.data_size;
    let block_len = usize::try_from(data_size).map_err(|_| Error::Limit {
        what: "decoded block size",
        limit: usize::MAX as u64,
        found: data_size,
    })?;
    let l = array::bind::layout(meta, block_len, path)?;
    let nbytes = (l.count as u64).saturating_mul(l.itemsize as u64);
    let row_bytes: u64 = l
        .shape
        .iter()
        .skip(1)
        .fold(l.itemsize as u64, |a, &d| a.saturating_mul(d as u64));
    let block_pieces = file.block_pieces(idx)?;
    let mut pieces = Vec::new();
    let exact;
    if let [BlockPiece {
        kind: PieceKind::Raw,
        stored,
        ..
    }] = &*block_pieces
    {
        // Uncompressed: slabs of whole rows of a C-contiguous array; a view is one piece
        // over the bytes it spans.
        exact = l.contiguous;
        if l.count == 0 {
            // nothing to read
        } else if l.contiguous && !l.shape.is_empty() && row_bytes > 0 {
            let n0 = l.shape[0];
            let rows = slab_rows(n0, row_bytes, opts);
            let mut r = 0usize;
            while r < n0 {
                let end = r.saturating_add(rows).min(n0);
                let d0 = l.start + r as u64 * row_bytes;
                let d1 = l.start + end as u64 * row_bytes;
                let region = std::iter::once(r..end)
                    .chain(l.shape[1..].iter().map(|&n| 0..n))
                    .collect();
                pieces.push(Piece {
                    source: source.clone(),
                    offset: stored.start + d0,
                    length: d1 - d0,
                    codec: PieceCodec::None,
                    decoded: d0..d1,
                    region: Some(region),
                });
                r = end;
            }
        } else {
            pieces.push(Piece {
                source: source.clone(),
                offset: stored.start + l.lo,
                length: l.hi - l.lo,
                codec: PieceCodec::None,
                decoded: l.lo..l.hi,
                region: l
                    .contiguous
                    .then(|| l.shape.iter().map(|&n| 0..n).collect()),
            });
        }
    } else {
        // Compressed: the block's own pieces that hold bytes of the array.
        exact = l.contiguous && l.start == 0 && nbytes == data_size;
        for bp in block_pieces.iter() {
            let (codec, piece_source) = match &bp.kind {
                PieceKind::Raw => (PieceCodec::None, source.clone()),
                PieceKind::Lz4Block => (PieceCodec::Lz4Block, source.clone()),
                PieceKind::Blosc2Chunk => (PieceCodec::Blosc2Chunk, source.clone()),
                PieceKind::Whole(c) => (whole_codec(*c), source.clone()),
                PieceKind::Repeat(pattern) => (
                    PieceCodec::Blosc2Chunk,
                    PieceSource::Repeat(pattern.clone()),
                ),
            };
            if l.count > 0 && (bp.decoded.end <= l.lo || bp.decoded.start >= l.hi) {
                continue;
            }
            let region = if l.contiguous {
                rows_region(&bp.decoded, l.start, nbytes, row_bytes, &l.shape)
            } else {
                None
            };
            let (offset, length) = match piece_source {
                PieceSource::Repeat(_) => (0, 0),
                _ => (
                    bp.stored.start,
                    bp.stored.end.saturating_sub(bp.stored.start),
                ),
            };
            pieces.push(Piece {
                source: piece_source,
                offset,
                length,
                codec,
                decoded: bp.decoded.clone(),
                region,
            });
        }
    }
    let stored = file.stored_range(header)?;
    Ok(Manifest {
        path: path.to_string(),
        dtype: l.dtype,
        shape: l.shape,
        pieces,
        block: Some(WholeBlock {
            source,
            offset: stored.start as u64,
            length: (stored.end - stored.start) as u64,
            compression: file.compression(header)?,
            data_size,
        }),
        exact,
        whole: l.contiguous && l.start == 0 && nbytes == data_size,
        zarr: None,
    })
}

fn whole_codec(c: Compression) -> PieceCodec {
    match c {
        Compression::Zlib => PieceCodec::Zlib,
        Compression::Bzp2 => PieceCodec::Bzp2,
        Compression::Zstd => PieceCodec::Zstd,
        Compression::Lz4f => PieceCodec::Lz4f,
        Compression::Blsc => PieceCodec::Blsc,
        Compression::Lz4 => PieceCodec::Lz4Block,
        Compression::Bls2 => PieceCodec::Blosc2Chunk,
        Compression::Xz => PieceCodec::Xz,
        _ => PieceCodec::Blosc2Frame,
    }
}

/// Rows per slab of an uncompressed array with rows of `row_bytes`.
fn slab_rows(n0: usize, row_bytes: u64, opts: &ManifestOptions) -> usize {
    let fit = usize::try_from(opts.slab_bytes / row_bytes)
        .unwrap_or(usize::MAX)
        .clamp(1, n0.max(1));
    if !opts.equal_slabs {
        return fit;
    }
    // a divisor no smaller than half of what fits: never a flood of tiny slabs
    (fit.div_ceil(2)..=fit)
        .rev()
        .find(|r| n0 % r == 0)
        .unwrap_or(fit)
}

/// The region a C-contiguous array's bytes `decoded` (of its block; the array starts at
/// `start` and has `nbytes`) hold, when they are whole rows along the first axis (or the
/// whole array).
fn rows_region(
    decoded: &Range<u64>,
    start: u64,
    nbytes: u64,
    row_bytes: u64,
    shape: &[usize],
) -> Option<Vec<Range<usize>>> {
    let lo = decoded.start.checked_sub(start)?;
    let hi = decoded.end.checked_sub(start)?.min(nbytes);
    if lo == 0 && hi == nbytes {
        return Some(shape.iter().map(|&n| 0..n).collect());
    }
    if shape.is_empty() || row_bytes == 0 || lo % row_bytes != 0 || hi % row_bytes != 0 {
        return None;
    }
    let first = usize::try_from(lo / row_bytes).ok()?..usize::try_from(hi / row_bytes).ok()?;
    Some(
        std::iter::once(first)
            .chain(shape[1..].iter().map(|&n| 0..n))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_slabs_divide_the_first_axis() {
        let o = ManifestOptions::default()
            .slab_bytes(1000)
            .equal_slabs(true);
        assert_eq!(slab_rows(12, 100, &o), 6);
        assert_eq!(slab_rows(13, 100, &o), 10); // no divisor in 5..=10: 10 rows, then 3
        assert_eq!(slab_rows(5, 100, &o), 5);
        assert_eq!(slab_rows(1_000_003, 1, &o), 1000);
        let o = ManifestOptions::default().slab_bytes(10);
        assert_eq!(slab_rows(13, 100, &o), 1);
    }

    #[test]
    fn asdf_in_fits_images_and_blocks_lie_in_the_fits_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/asdf-in-fits/image_extension.fits"
        );
        let raw = std::fs::read(path).unwrap();
        let file = AsdfFile::open(path).unwrap();
        assert!(file.asdf_offset() > 0 && file.asdf_offset() % 2880 == 0);
        for name in ["/by_index", "/by_name", "/local"] {
            let m = file.manifest(name, &ManifestOptions::default()).unwrap();
            let want = file.dyn_array(name).unwrap();
            assert_eq!(m.dtype, want.dtype, "{name}");
            assert_eq!(m.zarr_chunks(), Some(want.shape.clone()), "{name}");
            let [p] = m.pieces.as_slice() else {
                panic!("{name}: {:?}", m.pieces)
            };
            assert_eq!(p.source, PieceSource::File);
            let at = p.offset as usize..(p.offset + p.length) as usize;
            assert_eq!(&raw[at], &want.data[..], "{name}: the bytes at the piece");
        }
        let scaled = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/asdf-in-fits/scaled.fits"
        );
        let file = AsdfFile::open(scaled).unwrap();
        let e = file
            .manifest("/sci", &ManifestOptions::default())
            .unwrap_err();
        assert!(e.to_string().contains("BSCALE"), "{e}");
        // every scaled image: its stored bytes through the scaling it names are the array
        // read from the file
        let raw = std::fs::read(scaled).unwrap();
        for name in [
            "sci", "var", "big", "sbyte", "offset", "fscale", "blank0", "bscaled",
        ] {
            let path = format!("/{name}");
            let img = file.fits_scaled_image(&path).unwrap().expect(name);
            let want = file.dyn_array(&path).unwrap();
            assert_eq!(
                (&img.dtype, &img.shape),
                (&want.dtype, &want.shape),
                "{name}"
            );
            let at = img.offset as usize..(img.offset + img.length) as usize;
            let (dtype, data) =
                crate::file::fits::scale_fits_image(&img.scaling, &raw[at]).unwrap();
            assert_eq!(dtype, want.dtype, "{name}");
            assert!(data == want.data, "{name}: scaled bytes differ");
        }
        let plain = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/asdf-in-fits/image_extension.fits"
        );
        let plain = AsdfFile::open(plain).unwrap();
        assert_eq!(plain.fits_scaled_image("/by_name").unwrap(), None);
        assert_eq!(plain.fits_scaled_image("/local").unwrap(), None);
        assert_eq!(plain.fits_table("/local").unwrap(), None);
        assert!(plain.fits_table("/by_name").is_err());
        // a table: its rows through the cards it names are the records read from the file
        let tables = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/asdf-in-fits/table_types.fits"
        );
        let tables_raw = std::fs::read(tables).unwrap();
        let tables = AsdfFile::open(tables).unwrap();
        let t = tables.fits_table("/table").unwrap().expect("a table");
        let want = tables.dyn_array("/table").unwrap();
        assert_eq!((&t.dtype, &[t.rows][..]), (&want.dtype, &want.shape[..]));
        let at = t.offset as usize..(t.offset + t.length) as usize;
        let (dtype, data) =
            crate::file::fits::convert_fits_table(&t.cards, &tables_raw[at.clone()]).unwrap();
        assert_eq!(dtype, want.dtype);
        assert!(data == want.data, "table rows differ");
        let short = at.start..at.end - 1;
        assert!(
            crate::file::fits::convert_fits_table(&t.cards, &tables_raw[short])
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            crate::file::fits::convert_fits_table(&t.cards[1..], &tables_raw[at])
                .unwrap_err()
                .contains("NAXIS1")
        );
        // bad configurations and bytes: errors, no panic
        let s = |bitpix, bscale, bzero| crate::file::fits::FitsScaling {
            bitpix,
            bscale,
            bzero,
            bzero_int: None,
            blank: None,
        };
        let e = |sc, data: &[u8]| crate::file::fits::scale_fits_image(&sc, data).unwrap_err();
        assert!(e(s(12, 2.0, 0.0), &[0; 4]).contains("BITPIX"));
        assert!(e(s(16, f64::NAN, 0.0), &[0; 4]).contains("BSCALE"));
        assert!(e(s(16, 1.0, f64::INFINITY), &[0; 4]).contains("BZERO"));
        assert!(e(s(32, 2.0, 0.0), &[0; 6]).contains("whole number"));
    }

    #[test]
    fn legacy_chains_decode_to_the_arrays_read() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/legacy-0.1.0/2015-01-07-b453313/compressed.asdf"
        );
        let raw = std::fs::read(path).unwrap();
        let file = AsdfFile::open(path).unwrap();
        assert!(file.manifest("/data", &ManifestOptions::default()).is_err());
        let c = file.legacy_chain("/data").unwrap().expect("a chain");
        let want = file.dyn_array("/data").unwrap();
        assert_eq!((&c.dtype, &c.shape), (&want.dtype, &want.shape));
        assert!(c.contiguous && c.start == 0);
        let at = c.offset as usize..(c.offset + c.length) as usize;
        let data = crate::file::legacy::decode_chain(&raw[at], c.data_size, 1 << 30, c.byte_order)
            .unwrap();
        assert!(data == want.data, "decoded block differs");
        let plain = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/legacy-0.1.0/2015-01-07-b453313/basic.asdf"
        );
        let plain = AsdfFile::open(plain).unwrap();
        assert_eq!(plain.legacy_chain("/data").unwrap(), None);
    }

    #[test]
    fn rows_region_only_for_whole_rows() {
        let shape = [10usize, 4];
        assert_eq!(
            rows_region(&(16..48), 0, 160, 16, &shape),
            Some(vec![1..3, 0..4])
        );
        assert_eq!(rows_region(&(16..40), 0, 160, 16, &shape), None);
        assert_eq!(
            rows_region(&(0..200), 0, 160, 16, &shape),
            Some(vec![0..10, 0..4])
        );
    }
}
