//! Writing ASDF files: [`Writer`] turns a tree of [`Node`]s plus registered arrays into a
//! file that python asdf 6.0.0 opens without warnings and that [`AsdfFile`] reads back
//! identically.
//!
//! ```
//! use asdf_core::write::{Writer, WriteOptions};
//! use asdf_core::{Node, Value};
//! let data = ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]);
//! let mut writer = Writer::new(WriteOptions::default());
//! let node = writer.add_array(&data);
//! let root = Node::new(Value::Map(vec![(Node::str("data"), node)]));
//! let bytes = writer.write_to_vec(&root)?;
//! let file = asdf_core::AsdfFile::from_bytes(bytes).unwrap();
//! assert_eq!(file.array::<f64>("/data").unwrap(), data.into_dyn());
//! # Ok::<(), asdf_core::write::WriteError>(())
//! ```
//!
//! The file is laid out as `#ASDF 1.0.0`, `#ASDF_STANDARD x.y.z`, the YAML tree (root tagged
//! with the standard's `core/asdf` tag, `asdf_library` and `history` first), one block per
//! distinct array (data aligned to [`WriteOptions::align`] by enlarging the block header,
//! MD5 over the stored bytes), then the block index.
//!
//! What python asdf 6.0.0 needs, and how the writer provides it:
//! - tags per standard version, from `asdf_standard`'s `core-1.x.0` manifests: root
//!   `core/asdf-1.0.0` and no extension history before 1.2.0, `core/asdf-1.1.0` after;
//!   `ndarray-1.0.0` before 1.6.0, `ndarray-1.1.0` in 1.6.0, `ndarray-1.2.0` in 1.7.0 (the
//!   unstable `core-1.7.0` manifest; python asdf reads it with `ASDF_UNSTABLE_CORE_SCHEMAS=1`);
//! - `history.extensions` holds a `core/extension_metadata-1.0.0` entry for
//!   `asdf://asdf-format.org/core/extensions/core-1.x.0` (python matches installed extensions
//!   by URI, so no "extension not installed" warning; the `software` is this library, which
//!   python does not compare with its own version);
//! - inline data: complex numbers as `!core/complex-1.0.0 (re+imj)`; 0-d arrays, records with
//!   subarray or nested fields, and records whose shape has an axis as long as the number of
//!   fields cannot be read back inline by python, so those go to a block even when inline
//!   storage is asked for.
//!
//! Uncompressed blocks are streamed from the caller's buffer: for large ones the MD5 is
//! computed on another thread while the bytes are written, and patched into the header
//! afterwards (hence `Write + Seek`). Compressed blocks are encoded in parallel (rayon); a
//! large `lz4` block is compressed chunk by chunk on several threads while the finished
//! chunks are written and hashed. Writing to a path asks the kernel to write back the data
//! as it goes, so that the closing fsync is short.

mod add_value;
// used only through `unstable` (feature `unstable-internals`) in part
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code))]
pub(crate) mod atomic;
mod file_writer;
mod jobs;
pub(crate) mod nodes;
mod pieces;
mod platform;
mod portable;
mod prepare;
mod update;
mod zarr;

#[cfg(test)]
mod test_sink {
    use std::io::{Seek, SeekFrom, Write};

    /// A sink that fails every write once `budget` bytes are written (failure injection).
    pub(super) struct Failing<W> {
        pub(super) inner: W,
        pub(super) budget: usize,
    }

    impl<W: Write> Write for Failing<W> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.budget == 0 {
                return Err(std::io::Error::other("injected failure"));
            }
            let n = buf.len().min(self.budget);
            let n = self.inner.write(buf.get(..n).unwrap_or_default())?;
            self.budget -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.inner.flush()
        }
    }

    impl<W: Seek> Seek for Failing<W> {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(pos)
        }
    }
}

use std::collections::HashMap;
use std::io::{Cursor, Seek, Write};
use std::path::{Path, PathBuf};

use crate::array::DType;
use crate::codec::CodecError;
use crate::yaml::{EmitError, Node, Value};
use crate::AsdfFile;

pub use crate::array::{ArrayOptions, Compression, CompressionChoice, Storage, WriteArray};
pub use pieces::ArrayPieces;
pub use portable::WriteWarning;
pub use update::{recover, update, update_reporting, update_with, UpdateKind, UpdateMode};
pub use zarr::{BloscCname, BloscShuffle, ZarrCompressor};

pub use crate::version::{ParseStandardVersionError, StandardVersion};

/// Options of a [`Writer`]; start from [`WriteOptions::default`] and chain.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteOptions {
    standard: StandardVersion,
    compression: CompressionChoice,
    compression_level: Option<i32>,
    checksums: bool,
    block_index: bool,
    pad_blocks: f64,
    pad_tree: usize,
    storage: Storage,
    align: usize,
    validate: bool,
    portable: bool,
    progress: Option<crate::Progress>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            standard: StandardVersion::default(),
            compression: CompressionChoice::None,
            compression_level: None,
            checksums: true,
            block_index: true,
            pad_blocks: 0.0,
            pad_tree: 0,
            storage: Storage::Input,
            align: 64,
            validate: true,
            portable: false,
            progress: None,
        }
    }
}

impl WriteOptions {
    /// Default options: standard 1.6.0, no compression, checksums, block index, each array
    /// where it is ([`Storage::Input`]: new arrays in blocks), block data aligned to 64
    /// bytes.
    pub fn new() -> Self {
        Self::default()
    }
    /// Validate the tree being written against the schemas of its standard version (default
    /// `true`): the final tree (with the array descriptors, `asdf_library` and `history`) is
    /// checked before any byte is written, and a tree that does not validate fails with
    /// [`WriteError::Invalid`] listing every problem. See
    /// [`schema::validate_tree`](crate::schema::validate_tree). Python asdf's extra write
    /// checks (integer literals within 64 bits, plain mapping keys) are applied too, as
    /// [`schema::validate_for_write`](crate::schema::validate_for_write) applies them.
    pub fn validate(mut self, on: bool) -> Self {
        self.validate = on;
        self
    }
    /// Report how far the blocks are written, for a progress bar: `progress` is called
    /// with `(done, total)` in bytes of the blocks' data (their decoded sizes), every few
    /// MiB of a large block (the compressed part of a `zlib`, `bzp2` or `blsc` block
    /// counts when it is written, after its compression), from the writing thread.
    pub fn progress(mut self, progress: crate::Progress) -> Self {
        self.progress = Some(progress);
        self
    }
    /// The standard version (selects tags). Only a version this library knows
    /// ([`StandardVersion::known`]) can be written: writing with another fails with
    /// [`WriteError::UnknownStandard`].
    pub fn standard(mut self, v: StandardVersion) -> Self {
        self.standard = v;
        self
    }
    /// Default compression of every block.
    pub fn compression(mut self, c: CompressionChoice) -> Self {
        self.compression = c;
        self
    }
    /// Refuse to write a block that python asdf 6.0.0 cannot read without a plugin (default
    /// `false`). Python asdf reads `zlib`, `bzp2` and `lz4` blocks by itself; `zstd`, `lz4f`
    /// and `blsc` need the asdf-compression plugin, `bls2` its development version, and no
    /// python plugin is known for `bsc2` or ASDF.jl's `xz`. With `portable(true)` such a
    /// write fails with [`WriteError::NotPortable`] naming the block and codec before any
    /// byte is written; without it the write goes ahead and its [`WriteSummary::warnings`]
    /// holds one [`WriteWarning::NotPortable`] per such codec.
    ///
    /// ```
    /// use asdf_core::write::{Compression, CompressionChoice, WriteError, WriteOptions, Writer};
    /// let xz = WriteOptions::default().compression(CompressionChoice::Codec(Compression::Xz));
    /// let mut w = Writer::new(xz.clone().portable(true));
    /// let a = w.add_array(ndarray::arr1(&[1.0f64, 2.0]));
    /// let root = asdf_core::tree!({"a": a});
    /// assert!(matches!(w.write_to_vec(&root), Err(WriteError::NotPortable { .. })));
    /// let mut w = Writer::new(xz);
    /// let a = w.add_array(ndarray::arr1(&[1.0f64, 2.0]));
    /// let summary = w.write_to(&asdf_core::tree!({"a": a}), std::io::Cursor::new(Vec::new()))?;
    /// assert_eq!(summary.warnings.len(), 1);
    /// # Ok::<(), WriteError>(())
    /// ```
    pub fn portable(mut self, on: bool) -> Self {
        self.portable = on;
        self
    }
    /// Codec level (zlib 0–9, default 6; bzp2 1–9, default 9; zstd, default 3; blsc 0–9,
    /// default 9; xz 0–9, default 6; lz4 and lz4f ignore it); `None` for each codec's default.
    pub fn compression_level(mut self, level: Option<i32>) -> Self {
        self.compression_level = level;
        self
    }
    /// Write MD5 checksums (default) or zeros.
    pub fn checksums(mut self, on: bool) -> Self {
        self.checksums = on;
        self
    }
    /// Write the block index after the last block (default on).
    pub fn block_index(mut self, on: bool) -> Self {
        self.block_index = on;
        self
    }
    /// Extra space allocated after each block's data, as a fraction of its stored size, so
    /// later edits fit in place (default 0). Negative or non-finite values count as 0.
    pub fn pad_blocks(mut self, fraction: f64) -> Self {
        self.pad_blocks = fraction;
        self
    }
    /// Spare bytes (zeros) left between the tree and the first block, so that a larger tree
    /// fits in place on a later [`update_with`] in [`UpdateMode::InPlace`] (default 0; only
    /// written when there are blocks).
    pub fn pad_tree(mut self, bytes: usize) -> Self {
        self.pad_tree = bytes;
        self
    }
    /// Default storage of every array (default [`Storage::Input`]: arrays of a tree read
    /// from a file stay where they are, new ones go to blocks).
    pub fn storage(mut self, s: Storage) -> Self {
        self.storage = s;
        self
    }
    /// Alignment of block data in the file, in bytes (default 64; 0 or 1 for none, at most
    /// 4096).
    pub fn align(mut self, align: usize) -> Self {
        self.align = align.min(4096);
        self
    }
    /// The chosen standard version.
    pub fn standard_version(&self) -> &StandardVersion {
        &self.standard
    }
}

/// Errors of writing. The message is one line naming what and where (tree path, block),
/// its cause included; `{:?}` is the derived form (see [`crate::Error`]).
///
/// The write layer is above the read layer: a `WriteError` may hold the reader's
/// [`crate::Error`] (reading the source file, [`WriteError::Read`] and
/// [`WriteError::Source`]), and a [`crate::Error`] never holds a `WriteError`. Every function
/// that writes returns this type, the one-call [`write`](crate::write()),
/// [`write_at`](crate::write_at) and [`update_at`](crate::update_at) included.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The operating system failed a write.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The tree cannot be written as YAML.
    #[error("cannot emit the tree: {0}")]
    Emit(#[from] EmitError),
    /// A block failed to compress.
    #[error("block {block}: cannot compress with {codec}: {source}")]
    Codec {
        /// Index of the block.
        block: usize,
        /// The codec.
        codec: Compression,
        /// What the codec said.
        #[source]
        source: CodecError,
    },
    /// The tree is not what a file can hold (a root that is not a mapping, an ndarray
    /// without data, ...).
    #[error("{path}: {message}")]
    BadTree {
        /// Tree path of the offending node.
        path: crate::yaml::TreePath,
        /// What is wrong.
        message: String,
    },
    /// Reading the file being updated failed ([`update_at`](crate::update_at),
    /// [`update`]: opening it, or finishing an interrupted update). The reader's error,
    /// which names the file.
    #[error(transparent)]
    Read(Box<crate::Error>),
    /// A value did not convert to a tree ([`Writer::add_value`], the one-call
    /// [`write`](crate::write()), [`write_at`](crate::write_at), [`update_at`](crate::update_at)).
    #[error(transparent)]
    Convert(#[from] crate::convert::ConvertError),
    /// Placing a value in the tree named a place that is not there
    /// ([`update_at`](crate::update_at) through a scalar).
    #[error(transparent)]
    Edit(#[from] crate::yaml::EditError),
    /// Reading array data from the source file failed.
    #[error("{path}: cannot read array data from the source file: {source}")]
    Source {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// What went wrong.
        #[source]
        source: Box<crate::Error>,
    },
    /// The file is ASDF in FITS, which this library reads but does not update; convert it to
    /// a plain ASDF file (`asdftool convert x.fits y.asdf`) and update that.
    #[error("{}: ASDF in FITS is read-only here; convert it to a plain ASDF file to update it", path.display())]
    ReadOnlyFormat {
        /// The file.
        path: std::path::PathBuf,
    },
    /// An `ascii` array to be written inline holds a string with a byte above 0x7F: inline
    /// data is text, and neither asdf-rs nor python asdf reads such text back as `ascii`.
    /// An array given inline storage explicitly ([`Storage::Inline`]) is refused; one
    /// inlined by size ([`Storage::InlineUpTo`]) goes to a block instead. Store such
    /// bytes as `uint8` (or in a block).
    #[error("{path}: element {element} of an ascii array written inline holds {what}, which is not ascii (store such bytes as uint8, or in a block)")]
    NotAscii {
        /// Tree path of the ndarray.
        path: crate::yaml::TreePath,
        /// C-order index of the element (a record counts as one).
        element: usize,
        /// The first character or byte that is not ASCII (`'×'`, `byte 0xd7`).
        what: String,
    },
    /// External storage needs the path of the main file.
    #[error("external storage needs a file path (use write_to_path)")]
    ExternalNeedsPath,
    /// A size does not fit the format's fields.
    #[error("{what} too large for the format")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
    },
    /// The tree does not validate against its schemas (one line per problem); see
    /// [`WriteOptions::validate`].
    #[error("the tree does not validate:\n{0}")]
    Invalid(crate::schema::ValidationErrors),
    /// The standard version asked for ([`WriteOptions::standard`]) is not one this library
    /// knows how to write ([`StandardVersion::known`]).
    #[error("cannot write ASDF Standard {0}: the versions written are 1.0.0 to 1.7.0")]
    UnknownStandard(StandardVersion),
    /// With [`WriteOptions::portable`]: a block's codec is one python asdf 6.0.0 reads only
    /// with a plugin (or not at all).
    #[error("{block}: python asdf 6.0.0 reads {codec} blocks only with {needs}; choose zlib, bzp2 or lz4, or write without WriteOptions::portable")]
    NotPortable {
        /// The block: `block N` of the main file, or an external file's block.
        block: String,
        /// Its codec.
        codec: Compression,
        /// What python asdf needs to read it.
        needs: &'static str,
    },
}

impl From<crate::Error> for WriteError {
    fn from(e: crate::Error) -> Self {
        WriteError::Read(Box::new(e))
    }
}

/// The validation hook of [`WriteOptions::validate`], run on the final tree before any byte
/// is written.
pub(crate) fn validate_written(
    opts: &WriteOptions,
    root: &Node,
    skip: &crate::schema::NodeIds,
) -> Result<(), WriteError> {
    if !opts.validate {
        return Ok(());
    }
    crate::schema::validate_for_write_except(root, opts.standard.as_str(), skip)
        .map_err(WriteError::Invalid)
}

/// A registered array.
struct Registered<'a> {
    array: WriteArray<'a>,
    mask: Option<WriteArray<'a>>,
    opts: ArrayOptions,
}

/// Builds an ASDF file from a tree and arrays; see the [module documentation](self).
pub struct Writer<'a> {
    opts: WriteOptions,
    source: Option<&'a AsdfFile>,
    arrays: Vec<Registered<'a>>,
    /// Placeholder node id → index in `arrays`; the placeholders are kept alive in
    /// `placeholders` so their ids stay unique.
    by_id: HashMap<usize, usize>,
    placeholders: Vec<Node>,
    history: Vec<Node>,
    stream: Option<StreamSpec>,
    ndarray_tag: String,
    /// View placeholder id → view.
    views: HashMap<usize, ViewSpec>,
    /// Arrays added by pieces, and their placeholder ids → index.
    pieces: Vec<pieces::PieceSpec>,
    piece_ids: HashMap<usize, usize>,
    /// Array placeholder id → its `mask` value ([`Writer::set_mask`]).
    masks: HashMap<usize, Node>,
    /// Arrays written the asdf-zarr way ([`Writer::add_zarr_array`]), by placeholder id.
    zarr: HashMap<usize, zarr::ZarrSpec>,
}

/// A view sharing the block of a registered array.
pub(crate) struct ViewSpec {
    pub base: Node,
    pub offset: u64,
    pub shape: Vec<usize>,
    pub strides: Vec<i64>,
}

/// The streamed array: its placeholder, datatype and row shape.
struct StreamSpec {
    node: Node,
    dtype: DType,
    row_shape: Vec<usize>,
}

impl std::fmt::Debug for Writer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("opts", &self.opts)
            .field("arrays", &self.arrays.len())
            .finish_non_exhaustive()
    }
}

/// What a write produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteSummary {
    /// Total bytes of the main file.
    pub len: u64,
    /// Offsets of the block headers in the main file.
    pub block_offsets: Vec<u64>,
    /// External files written (with [`Storage::External`]).
    pub external_files: Vec<PathBuf>,
    /// What other readers may not follow (blocks python asdf reads only with a plugin, see
    /// [`WriteOptions::portable`]): one entry per kind, the write succeeded.
    pub warnings: Vec<WriteWarning>,
}

impl<'a> Writer<'a> {
    /// A writer with these options.
    pub fn new(opts: WriteOptions) -> Self {
        Writer {
            ndarray_tag: opts.standard.ndarray_tag(),
            opts,
            source: None,
            arrays: Vec::new(),
            by_id: HashMap::new(),
            placeholders: Vec::new(),
            history: Vec::new(),
            stream: None,
            views: HashMap::new(),
            pieces: Vec::new(),
            piece_ids: HashMap::new(),
            masks: HashMap::new(),
            zarr: HashMap::new(),
        }
    }

    /// A writer for trees read from `file`: ndarray nodes with `source: N` (and external
    /// sources) take their data from it; its `%TAG` handles are kept.
    pub fn from_file(file: &'a AsdfFile, opts: WriteOptions) -> Self {
        let mut w = Writer::new(opts);
        w.source = Some(file);
        w
    }

    /// The options.
    pub fn options(&self) -> &WriteOptions {
        &self.opts
    }

    /// Registers array data and returns the ndarray node to place in the tree (once or
    /// several times: it is written once, shared through a YAML alias).
    pub fn add_array(&mut self, array: impl Into<WriteArray<'a>>) -> Node {
        self.add_array_with(array, ArrayOptions::default())
    }

    /// As [`Writer::add_array`], with per-array options.
    pub fn add_array_with(&mut self, array: impl Into<WriteArray<'a>>, opts: ArrayOptions) -> Node {
        let array = array.into();
        // a placeholder: its identity marks the array; the descriptor written is built when
        // writing. It carries the datatype and shape already, so the tree can be validated
        // (ndim, datatype) before it is written.
        let dtype = array.dtype();
        let mut desc = vec![(nodes::word("datatype"), nodes::datatype_node(dtype, false))];
        desc.push((
            nodes::word("byteorder"),
            nodes::word(nodes::byteorder_of(dtype).as_str()),
        ));
        desc.push((nodes::word("shape"), nodes::shape_node(array.shape())));
        let node = Node::tagged(self.ndarray_tag.clone(), Value::Map(desc));
        self.by_id.insert(node.id(), self.arrays.len());
        self.placeholders.push(node.clone());
        self.arrays.push(Registered {
            array,
            mask: None,
            opts,
        });
        node
    }

    /// Registers an array whose bytes are produced piece by piece while the file is written,
    /// for arrays larger than memory: `dtype` and `shape` are declared now, and `pieces`
    /// yields the array's bytes in C order (in `dtype`'s byte order) when its block is
    /// written. Returns the ndarray node to place in the tree, as [`Writer::add_array`] does.
    ///
    /// The block is always stored internally (`opts.storage` is ignored). Its pieces are
    /// pulled on a thread of their own, at most two ahead of the writer, and compressed by a
    /// streaming encoder of the block's codec (`zlib`, `bzp2`, `zstd` and `lz4f` frames;
    /// `lz4` in its 4 MiB chunks), written and hashed as they come; the block header's sizes
    /// and checksum are patched in afterwards by seeking back. Memory therefore stays
    /// bounded by a few pieces whatever the array's size, except with the Blosc codecs
    /// (`blsc`, `bsc2`, `bls2`), whose pieces are gathered and compressed whole.
    ///
    /// The pieces can be consumed once: a second write of the same writer fails with
    /// [`WriteError::BadTree`]. Pieces that do not add up to exactly the declared size, or an
    /// error from `pieces`, fail the write (with [`Writer::write_to_path`], the target path
    /// is then left untouched). A shape whose byte size overflows fails with
    /// [`WriteError::TooLarge`] when written.
    ///
    /// ```
    /// use asdf_core::array::{ByteOrder, DType, ScalarType};
    /// use asdf_core::write::{Writer, WriteOptions};
    /// use asdf_core::{Node, Value};
    /// let mut writer = Writer::new(WriteOptions::default());
    /// let dtype = DType::scalar(ScalarType::UInt8, ByteOrder::Little);
    /// let mut next = 0u8;
    /// // four rows of 1000 bytes, one row at a time
    /// let node = writer.add_array_pieces(dtype, &[4, 1000], Default::default(), move || {
    ///     next += 1;
    ///     Ok((next <= 4).then(|| vec![next; 1000]))
    /// });
    /// let root = Node::new(Value::Map(vec![(Node::str("data"), node)]));
    /// let file = asdf_core::AsdfFile::from_bytes(writer.write_to_vec(&root)?).unwrap();
    /// assert_eq!(file.array::<u8>("/data").unwrap()[[3, 999]], 4);
    /// # Ok::<(), asdf_core::write::WriteError>(())
    /// ```
    pub fn add_array_pieces(
        &mut self,
        dtype: DType,
        shape: &[usize],
        opts: ArrayOptions,
        pieces: impl ArrayPieces + 'static,
    ) -> Node {
        let len = shape
            .iter()
            .try_fold(dtype.itemsize() as u64, |a, &d| a.checked_mul(d as u64))
            .unwrap_or(u64::MAX);
        let mut desc = vec![(nodes::word("datatype"), nodes::datatype_node(&dtype, false))];
        desc.push((
            nodes::word("byteorder"),
            nodes::word(nodes::byteorder_of(&dtype).as_str()),
        ));
        desc.push((nodes::word("shape"), nodes::shape_node(shape)));
        let node = Node::tagged(self.ndarray_tag.clone(), Value::Map(desc));
        self.piece_ids.insert(node.id(), self.pieces.len());
        self.placeholders.push(node.clone());
        self.pieces.push(pieces::PieceSpec {
            dtype,
            shape: shape.to_vec(),
            len,
            opts,
            source: std::sync::Mutex::new(Some(Box::new(pieces))),
        });
        node
    }

    /// A view of an array registered with [`Writer::add_array`] that shares its block
    /// (`offset` in bytes into the base array's data, `shape`, `strides` in bytes, possibly
    /// negative). The base must be stored internally or externally, not inline. Returns the
    /// view's ndarray node; `None` when `base` is not an array of this writer, the lengths of
    /// `shape` and `strides` differ, or the view reaches outside the base's bytes.
    pub fn add_view(
        &mut self,
        base: &Node,
        offset: u64,
        shape: &[usize],
        strides: &[i64],
    ) -> Option<Node> {
        let &b = self.by_id.get(&base.id())?;
        let len = self.arrays.get(b)?.array.bytes().len() as i128;
        let item = self.arrays.get(b)?.array.dtype().itemsize() as i128;
        if shape.len() != strides.len() {
            return None;
        }
        // first and one-past-last byte addressed
        let (mut lo, mut hi) = (i128::from(offset), i128::from(offset) + item);
        if shape.contains(&0) {
            hi = lo;
        } else {
            for (&n, &st) in shape.iter().zip(strides) {
                let span = (n as i128 - 1).checked_mul(i128::from(st))?;
                if span < 0 {
                    lo = lo.checked_add(span)?;
                } else {
                    hi = hi.checked_add(span)?;
                }
            }
        }
        if lo < 0 || hi > len {
            return None;
        }
        let node = Node::tagged(self.ndarray_tag.clone(), Value::Map(Vec::new()));
        self.placeholders.push(node.clone());
        self.views.insert(
            node.id(),
            ViewSpec {
                base: base.clone(),
                offset,
                shape: shape.to_vec(),
                strides: strides.to_vec(),
            },
        );
        Some(node)
    }

    /// Registers a masked array: `mask` is a `bool` array of the same shape, true where
    /// `data` is missing; it is written as the ndarray's `mask` (in the same storage as
    /// the data). A mask of another datatype or shape is an error when writing.
    pub fn add_masked_array(
        &mut self,
        data: impl Into<WriteArray<'a>>,
        mask: impl Into<WriteArray<'a>>,
        opts: ArrayOptions,
    ) -> Node {
        let node = self.add_array_with(data, opts);
        if let Some(r) = self.arrays.last_mut() {
            r.mask = Some(mask.into());
        }
        node
    }

    /// Sets the `mask` of an array registered with [`Writer::add_array_with`] or
    /// [`Writer::add_array_pieces`] to any value: a number (elements equal to it are masked,
    /// as python asdf reads it) or another array node of this writer (of any datatype; the
    /// data's shape is the caller's to ensure), written with its own options. Replaces a mask
    /// set before. Returns `false`, and does nothing, when `array` is not such a node.
    ///
    /// ```
    /// use asdf_core::write::{Writer, WriteOptions};
    /// use asdf_core::{AsdfFile, Node, Value};
    /// let mut writer = Writer::new(WriteOptions::default());
    /// let data = writer.add_array(ndarray::arr1(&[1i32, -999, 3]));
    /// assert!(writer.set_mask(&data, Node::int(-999)));
    /// let root = Node::new(Value::Map(vec![(Node::str("x"), data)]));
    /// let file = AsdfFile::from_bytes(writer.write_to_vec(&root)?).unwrap();
    /// assert_eq!(file.get("/x/mask").and_then(|m| m.as_i64()), Some(-999));
    /// # Ok::<(), asdf_core::write::WriteError>(())
    /// ```
    pub fn set_mask(&mut self, array: &Node, mask: Node) -> bool {
        let id = array.id();
        if !self.by_id.contains_key(&id) && !self.piece_ids.contains_key(&id) {
            return false;
        }
        self.masks.insert(id, mask);
        true
    }

    /// Declares the streamed array (at most one per file; a second call replaces the first):
    /// rows of `row_shape` elements of `dtype`, appended after the file is written with
    /// [`Writer::write_stream`]. Returns its ndarray node (`source: -1`, `shape: ['*', ...]`)
    /// to place in the tree. The streamed block is the last block and the file gets no block
    /// index.
    pub fn stream(&mut self, dtype: DType, row_shape: &[usize]) -> Node {
        let mut shape = vec![Node::str("*")];
        shape.extend(row_shape.iter().map(|&d| nodes::int(d as i128)));
        let node = Node::tagged(
            self.opts.standard.ndarray_tag(),
            nodes::map(vec![
                ("source", nodes::int(-1)),
                ("datatype", nodes::datatype_node(&dtype, false)),
                ("shape", nodes::flow(None, Value::Seq(shape))),
            ]),
        );
        self.stream = Some(StreamSpec {
            node: node.clone(),
            dtype,
            row_shape: row_shape.to_vec(),
        });
        node
    }

    /// Writes the file (as [`Writer::write_to`]) ending with the header of the streamed
    /// block declared by [`Writer::stream`], and returns a [`StreamWriter`] to append rows.
    pub fn write_stream<W: Write + Seek>(
        &self,
        root: &Node,
        mut w: W,
    ) -> Result<StreamWriter<W>, WriteError> {
        let spec = self.stream.as_ref().ok_or_else(|| WriteError::BadTree {
            path: crate::yaml::TreePath::root(),
            message: "no streamed array declared (use Writer::stream)".into(),
        })?;
        self.write_to(root, &mut w)?;
        let row_bytes = spec
            .row_shape
            .iter()
            .try_fold(spec.dtype.itemsize(), |a, &d| a.checked_mul(d))
            .ok_or(WriteError::TooLarge { what: "row" })?;
        Ok(StreamWriter {
            w,
            row_bytes,
            rows: 0,
        })
    }

    /// Appends a `core/history_entry-1.0.0` to the file's history: `description`, the time
    /// of writing is not recorded (no clock dependency), `software` this library.
    pub fn add_history_entry(&mut self, description: impl Into<String>) {
        self.history.push(Node::tagged(
            format!("{}core/history_entry-1.0.0", nodes::ASDF),
            nodes::map(vec![
                ("description", Node::str(description)),
                ("software", library_software()),
            ]),
        ));
    }

    /// Writes the file to `w` (from its current position). Arrays with
    /// [`Storage::External`] need [`Writer::write_to_path`].
    pub fn write_to<W: Write + Seek>(
        &self,
        root: &Node,
        mut w: W,
    ) -> Result<WriteSummary, WriteError> {
        let plan = prepare::plan(self, root, None)?;
        if !plan.externals.is_empty() {
            return Err(WriteError::ExternalNeedsPath);
        }
        let (len, block_offsets) =
            file_writer::write_file(&self.opts, &plan, &mut w, &mut platform::Writeback::none())?;
        w.flush()?;
        Ok(WriteSummary {
            len,
            block_offsets,
            external_files: Vec::new(),
            warnings: plan.warnings,
        })
    }

    /// Writes the file into memory.
    pub fn write_to_vec(&self, root: &Node) -> Result<Vec<u8>, WriteError> {
        let mut c = Cursor::new(Vec::new());
        self.write_to(root, &mut c)?;
        Ok(c.into_inner())
    }

    /// Writes the file to `path` safely: into a temporary file in the same directory,
    /// fsync, rename over `path`, fsync the directory. External files (`NAME0000.asdf`, …)
    /// are written the same way first. On error `path` is untouched.
    pub fn write_to_path(
        &self,
        root: &Node,
        path: impl AsRef<Path>,
    ) -> Result<WriteSummary, WriteError> {
        atomic::write_to_path(self, root, path.as_ref(), None)
    }
}

/// Appends rows to the streamed block of a file written by [`Writer::write_stream`].
#[derive(Debug)]
pub struct StreamWriter<W: Write> {
    w: W,
    row_bytes: usize,
    rows: u64,
}

impl<W: Write> StreamWriter<W> {
    /// Appends whole rows: `bytes` holds a multiple of the row size, elements in C order in
    /// the declared datatype's byte order.
    pub fn append_rows(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        if self.row_bytes == 0 || bytes.len() % self.row_bytes != 0 {
            return Err(WriteError::BadTree {
                path: crate::yaml::TreePath::root(),
                message: format!(
                    "{} bytes are not whole rows of {} bytes",
                    bytes.len(),
                    self.row_bytes
                ),
            });
        }
        self.w.write_all(bytes)?;
        self.rows += (bytes.len() / self.row_bytes) as u64;
        Ok(())
    }

    /// Appends the rows of an array of the streamed datatype (native byte order for
    /// `ndarray` arrays).
    pub fn append<'x>(&mut self, rows: impl Into<WriteArray<'x>>) -> Result<(), WriteError> {
        let a = rows.into();
        self.append_rows(a.bytes())
    }

    /// Rows appended so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes and returns the sink.
    pub fn finish(mut self) -> Result<W, WriteError> {
        self.w.flush()?;
        Ok(self.w)
    }
}

/// This library's `core/software-1.0.0` node.
pub(crate) fn library_software() -> Node {
    nodes::software(vec![
        ("author", Node::str("The asdf-rs developers")),
        ("homepage", Node::str("https://github.com/asdf-rs/asdf-rs")),
        ("name", Node::str("asdf-rs")),
        ("version", Node::str(env!("CARGO_PKG_VERSION"))),
    ])
}

/// A root mapping with no content (for external block files).
pub(crate) fn empty_root() -> Node {
    Node::new(Value::Map(Vec::new()))
}
