//! The file API: [`AsdfFile`] and [`OpenOptions`].
//!
//! Opening reads the header, the YAML tree and the block headers — never block data. Block
//! data is read (and decoded, and checksum-verified when asked) the first time an array
//! needs it, then cached. With [`OpenOptions::mmap`] uncompressed blocks are served straight
//! from the memory map.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use memmap2::Mmap;
use ndarray::{ArrayD, ArrayViewD, CowArray, IxDyn};
use rayon::prelude::*;

use crate::array::{self, ArraySource, DynArray, Element, NdArrayMeta};
use crate::layout;
use crate::yaml::{self, Document, Node, Value, YamlLimits};
use crate::{Error, Result, StandardVersion};

pub(crate) mod blocks;
use blocks::BlockBytes;
mod confine;
mod direct_read;
// used only through `unstable` (feature `unstable-internals`) in part
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code))]
pub(crate) mod fits;
mod journal;
pub(crate) mod legacy;
pub mod manifest;
mod read_as;
mod refs;
mod region;
mod verify;

pub use crate::layout::fits::{Card, CardValue, FitsError, Hdu, HduKind};
pub use crate::layout::{
    BlockHeader, Header, Layout, LayoutLimits, LegacyBlock, LegacyLayout, ReadAt,
};
pub use fits::{FitsScaling, FitsTable, ScaledImage};
pub use journal::journal_path;
pub use legacy::LegacyEncodingError;
pub use manifest::{
    LegacyChain, Manifest, ManifestOptions, Piece, PieceCodec, PieceSource, WholeBlock,
};

pub use confine::ExternalPolicy;
pub use refs::RefTarget;

use confine::Confinement;

/// Options for opening a file; start from [`AsdfFile::options`].
///
/// ```no_run
/// use asdf_core::AsdfFile;
/// let file = AsdfFile::options().mmap(true).verify_checksums(true).open("big.asdf")?;
/// # Ok::<(), asdf_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions {
    mmap: bool,
    verify_checksums: bool,
    lazy: bool,
    max_block_bytes: u64,
    yaml_limits: YamlLimits,
    layout_limits: LayoutLimits,
    validate: bool,
    fill_defaults: bool,
    external: ExternalPolicy,
    lazy_block_headers: bool,
}

/// Opens the other files that a file refers to (external array sources, `$ref`s to other
/// files) when the file was opened from a source that is not a local path
/// ([`OpenOptions::open_source_with`]), such as an object in a store. The opener decides
/// which references it admits (its own confinement rule); the [`ExternalPolicy`] of the open
/// options does not apply to such a file.
pub trait ExternalOpener: Send + Sync {
    /// The file that `uri` (as written in the referring file's tree, relative to it) names.
    fn open(&self, uri: &str) -> std::result::Result<ExternalSource, ExternalOpenError>;
}

/// A file found by an [`ExternalOpener`].
pub struct ExternalSource {
    /// Its name, for messages (a URL, say).
    pub name: String,
    /// Its bytes.
    pub source: Arc<dyn ReadAt>,
    /// The opener of the references it makes in turn.
    pub opener: Arc<dyn ExternalOpener>,
}

/// Why an [`ExternalOpener`] did not open a file.
#[derive(Debug)]
#[non_exhaustive]
pub enum ExternalOpenError {
    /// The reference is not admitted (it leads outside what the opener allows); the reason.
    Refused(String),
    /// The file could not be opened.
    Io(std::io::Error),
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            mmap: false,
            verify_checksums: false,
            lazy: true,
            max_block_bytes: 1 << 40,
            yaml_limits: YamlLimits::default(),
            layout_limits: LayoutLimits::default(),
            validate: false,
            fill_defaults: true,
            external: ExternalPolicy::SameFolder,
            lazy_block_headers: false,
        }
    }
}

impl OpenOptions {
    /// Default options: lazy block loading, no mmap, no checksum verification.
    pub fn new() -> Self {
        Self::default()
    }
    /// Memory-map the file; uncompressed blocks are then read without copying.
    pub fn mmap(mut self, on: bool) -> Self {
        self.mmap = on;
        self
    }
    /// Verify each block's MD5 when its data is loaded (and all of them on a non-lazy open).
    pub fn verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = on;
        self
    }
    /// Load block data on first use (default `true`). With `false`, every block is read,
    /// decoded and (when asked) verified during `open`, in parallel.
    pub fn lazy(mut self, on: bool) -> Self {
        self.lazy = on;
        self
    }
    /// Read block headers only when their blocks are used (default `false`), for sources
    /// whose reads are costly (an object in a store): when the file ends with a plausible
    /// block index whose first and last blocks agree with it, opening reads those two
    /// headers only, and each other header is read and checked against the index the first
    /// time its block is used (an [`Error::Layout`] naming the block when it disagrees).
    /// Without such an index the headers are walked at open, as usual. [`AsdfFile::blocks`]
    /// reads every header the first time it is called.
    ///
    /// ```
    /// use asdf_core::write::{WriteOptions, Writer};
    /// let a = ndarray::Array1::<f64>::from_elem(10, 1.5);
    /// let mut w = Writer::new(WriteOptions::default());
    /// let root = asdf_core::tree!({"a": w.add_array(&a), "b": w.add_array(&a)});
    /// let bytes = w.write_to_vec(&root)?;
    /// let file = asdf_core::AsdfFile::options().lazy_block_headers(true).open_bytes(bytes, ".")?;
    /// assert!(file.layout().blocks.is_empty()); // not read yet
    /// assert_eq!(file.block_count(), 2);
    /// assert_eq!(file.array::<f64>("/b")?, a.into_dyn());
    /// assert_eq!(file.blocks().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lazy_block_headers(mut self, on: bool) -> Self {
        self.lazy_block_headers = on;
        self
    }
    /// Largest decoded block accepted, in bytes (default 1 TiB).
    pub fn max_block_bytes(mut self, n: u64) -> Self {
        self.max_block_bytes = n;
        self
    }
    /// Limits for parsing the YAML tree (nesting depth, alias expansion).
    pub fn yaml_limits(mut self, limits: YamlLimits) -> Self {
        self.yaml_limits = limits;
        self
    }
    /// Limits for locating the tree and blocks.
    pub fn layout_limits(mut self, limits: LayoutLimits) -> Self {
        self.layout_limits = limits;
        self
    }

    /// Validate the tree against its schemas while opening (default `false`); a tree that
    /// does not validate fails the open with [`Error::Validation`] listing every problem.
    /// This is python asdf's verdict: unlike [`AsdfFile::validate`], it does not check that
    /// the arrays fit in their blocks.
    pub fn validate(mut self, on: bool) -> Self {
        self.validate = on;
        self
    }

    /// Fill in the `default` values of the standard's schemas for a file of ASDF Standard
    /// 1.5.0 or earlier (default `true`), as python asdf does when it reads one (its
    /// `legacy_fill_schema_defaults`): [`AsdfFile::tree`] then holds them, and so does
    /// anything written from it. See [`schema::fill_defaults`](crate::schema::fill_defaults)
    /// and `docs/schema-defaults.md`.
    ///
    /// ```
    /// let bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
    ///     --- !core/asdf-1.1.0\nt: !core/table-1.0.0 {columns: []}\n...\n";
    /// let file = asdf_core::AsdfFile::from_bytes(bytes.to_vec())?;
    /// assert!(file.get("/t/meta").is_some());
    /// let raw = asdf_core::AsdfFile::options().fill_defaults(false).open_bytes(bytes.to_vec(), ".")?;
    /// assert!(raw.get("/t/meta").is_none());
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn fill_defaults(mut self, on: bool) -> Self {
        self.fill_defaults = on;
        self
    }

    /// Which other files external array sources and `$ref`s may lead to (default
    /// [`ExternalPolicy::SameFolder`]: the folder of the file being opened and its
    /// subfolders, after `..` and symbolic links are resolved). Anything else fails with
    /// [`Error::ExternalRefused`] when the array or reference is read.
    ///
    /// ```no_run
    /// use asdf_core::{AsdfFile, ExternalPolicy};
    /// let file = AsdfFile::options()
    ///     .external_policy(ExternalPolicy::Roots(vec!["/data/archive".into()]))
    ///     .open("/data/archive/run1/obs.asdf")?;
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn external_policy(mut self, policy: ExternalPolicy) -> Self {
        self.external = policy;
        self
    }

    /// Opens the file at `path`.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<AsdfFile> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| Error::io(Some(path), e))?;
        let (source, mmap): (Arc<dyn ReadAt>, Option<Arc<Mmap>>) = if self.mmap {
            // SAFETY: the map is read-only and private to this process; like every reader of a
            // file that others may modify, we accept that a concurrent truncation by another
            // process can fault. All reads go through bounds checked against the map's length.
            let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(Some(path), e))?;
            let map = Arc::new(map);
            (map.clone() as Arc<dyn ReadAt>, Some(map))
        } else {
            (Arc::new(file), None)
        };
        // An in-place update was interrupted: read the old head it saved (see `journal`).
        let (source, mmap) = match journal::read_journal(path, source.len()) {
            Some(head) => (
                Arc::new(journal::Overlay { head, rest: source }) as Arc<dyn ReadAt>,
                None,
            ),
            None => (source, mmap),
        };
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        AsdfFile::build(source, mmap, Some(path.to_path_buf()), base, self.clone())
    }

    /// Opens a file held in memory; external blocks and `$ref`s resolve relative to
    /// `base_dir`.
    pub fn open_bytes(&self, bytes: Vec<u8>, base_dir: impl Into<PathBuf>) -> Result<AsdfFile> {
        AsdfFile::build(Arc::new(bytes), None, None, base_dir.into(), self.clone())
    }

    /// Opens a file from any positional-read source: a remote object (the `asdf-store`
    /// crate's readers), a custom cache, a part of a larger file. The tree and block
    /// headers are located with few, growing reads; block data is read when an array needs
    /// it, with one read per block (large ones straight into the array's memory), so a
    /// source whose reads are costly should split or cache them itself. External blocks and
    /// `$ref`s resolve as local files relative to `base_dir` under
    /// [`external_policy`](Self::external_policy); a source that is not a local file
    /// usually wants [`ExternalPolicy::None`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use asdf_core::{AsdfFile, ExternalPolicy, file::ReadAt};
    /// let bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n---\na: 1\n...\n".to_vec();
    /// let source: Arc<dyn ReadAt> = Arc::new(bytes);
    /// let file = AsdfFile::options()
    ///     .external_policy(ExternalPolicy::None)
    ///     .open_source(source, ".")?;
    /// assert_eq!(file.get("/a").and_then(|n| n.as_i64()), Some(1));
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn open_source(
        &self,
        source: Arc<dyn ReadAt>,
        base_dir: impl Into<PathBuf>,
    ) -> Result<AsdfFile> {
        AsdfFile::build(source, None, None, base_dir.into(), self.clone())
    }

    /// Opens a file from any positional-read source, as [`open_source`](Self::open_source)
    /// does, with the other files it refers to opened by `opener` (instead of as local files
    /// under the [`ExternalPolicy`]).
    pub fn open_source_with(
        &self,
        source: Arc<dyn ReadAt>,
        opener: Arc<dyn ExternalOpener>,
    ) -> Result<AsdfFile> {
        let mut file = AsdfFile::build(source, None, None, PathBuf::new(), self.clone())?;
        file.opener = Some(opener);
        Ok(file)
    }
}

/// Bytes of one decoded block: owned, or a range of the memory map.
/// An opened ASDF file: its header, tree and block headers, with block data loaded on
/// demand. `AsdfFile` is `Send + Sync`; arrays may be read from several threads.
pub struct AsdfFile {
    path: Option<PathBuf>,
    base_dir: PathBuf,
    source: Arc<dyn ReadAt>,
    mmap: Option<Arc<Mmap>>,
    layout: Layout,
    /// Block headers read when first used ([`OpenOptions::lazy_block_headers`]); `layout`
    /// then has none.
    lazy_headers: Option<layout::blocks::LazyBlocks>,
    /// Every block header of a file opened with lazy headers, once [`AsdfFile::blocks`]
    /// asked for them: all of them, or those before the first that failed, and its error.
    all_headers: OnceLock<(Vec<BlockHeader>, Option<layout::LayoutError>)>,
    doc: Document,
    blocks: Vec<OnceLock<BlockBytes>>,
    /// Each block's pieces, indexed when first asked for (`blocks.rs`).
    pieces: Vec<OnceLock<std::sync::Arc<[blocks::BlockPiece]>>>,
    /// Walks of `lz4` blocks' length prefixes that stopped where a region read needed no
    /// more, by block index.
    lz4_walks: Mutex<HashMap<usize, blocks::Lz4Walk>>,
    external: Mutex<HashMap<PathBuf, Arc<AsdfFile>>>,
    confinement: Confinement,
    options: OpenOptions,
    /// ASDF in FITS: the FITS file's HDUs (`source` then holds the `ASDF` extension's bytes).
    fits: Option<fits::Container>,
    /// Opens the files this one refers to, for a file not opened from a local path.
    opener: Option<Arc<dyn ExternalOpener>>,
}

impl std::fmt::Debug for AsdfFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsdfFile")
            .field("path", &self.path)
            .field("header", &self.layout.header)
            .field("blocks", &self.block_count())
            .finish_non_exhaustive()
    }
}

impl AsdfFile {
    /// Opens a file with default options (lazy blocks, no mmap, no checksum verification).
    ///
    /// ```no_run
    /// let file = asdf_core::AsdfFile::open("observation.asdf")?;
    /// for (path, node) in file.arrays() {
    ///     println!("{path}: {:?}", node.tag());
    /// }
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        OpenOptions::default().open(path)
    }

    /// Options for opening a file.
    pub fn options() -> OpenOptions {
        OpenOptions::default()
    }

    /// Opens a file held in memory (external blocks resolve relative to the working
    /// directory; use [`OpenOptions::open_bytes`] to choose).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        OpenOptions::default().open_bytes(bytes, ".")
    }

    fn build(
        source: Arc<dyn ReadAt>,
        mmap: Option<Arc<Mmap>>,
        path: Option<PathBuf>,
        base_dir: PathBuf,
        options: OpenOptions,
    ) -> Result<Self> {
        // ASDF in FITS: the ASDF file is the data of the `ASDF` extension
        let (source, mmap, fits) = if fits::sniff(&*source) {
            let (container, bytes) = fits::open(source).map_err(|error| Error::Fits {
                path: String::new(),
                error,
            })?;
            (Arc::new(bytes) as Arc<dyn ReadAt>, None, Some(container))
        } else {
            (source, mmap, None)
        };
        let (layout, tree_bytes, lazy_headers) = if options.lazy_block_headers {
            layout::read_layout_lazy(&*source, &options.layout_limits)?
        } else {
            let (layout, tree) = layout::read_layout(&*source, &options.layout_limits)?;
            (layout, tree, None)
        };
        let mut doc = if tree_bytes.is_empty() {
            Document {
                version: None,
                tag_directives: Vec::new(),
                root: treeless_root(&layout.header),
            }
        } else {
            yaml::parse(&tree_bytes, &options.yaml_limits).map_err(|e| {
                // Positions in the file, not in the tree text: count the header lines.
                let start = layout.tree.map_or(0, |(start, _)| start);
                let mut head = vec![0u8; usize::try_from(start).unwrap_or(0)];
                let lines = match source.read_exact_at(&mut head, 0) {
                    Ok(()) => memchr::memchr_iter(b'\n', &head).count() as u64,
                    Err(_) => 0,
                };
                e.shifted(lines, start)
            })?
        };
        if layout.is_legacy() {
            legacy::upgrade_tree(&mut doc);
        }
        if options.fill_defaults {
            // python asdf takes a file without an `#ASDF_STANDARD` line to be 1.0.0 here
            let standard = layout.header.standard_version.as_deref().unwrap_or("1.0.0");
            doc.root = crate::schema::fill_defaults(&doc.root, standard);
        }
        let count = lazy_headers
            .as_ref()
            .map_or(layout.blocks.len(), layout::blocks::LazyBlocks::len);
        let blocks = (0..count).map(|_| OnceLock::new()).collect();
        let pieces = (0..count).map(|_| OnceLock::new()).collect();
        let confinement = Confinement::new(&options.external, &base_dir);
        let file = AsdfFile {
            path,
            base_dir,
            source,
            mmap,
            layout,
            lazy_headers,
            all_headers: OnceLock::new(),
            doc,
            blocks,
            pieces,
            lz4_walks: Mutex::new(HashMap::new()),
            external: Mutex::new(HashMap::new()),
            confinement,
            options,
            fits,
            opener: None,
        };
        if file.options.validate {
            // python asdf's verdict: the schemas only (see `AsdfFile::validate`)
            crate::schema::validate_tree(file.tree(), file.standard_version().as_str())?;
        }
        if !file.options.lazy {
            (0..file.blocks.len())
                .into_par_iter()
                .try_for_each(|i| file.block_data(i).map(|_| ()))?;
        }
        Ok(file)
    }

    /// The ASDF Standard version of the file: its `#ASDF_STANDARD` line, else `1.0.0` for a
    /// file headed `#ASDF 0.1.0` (its tags are read as 1.0.0 tags), else the default
    /// ([`StandardVersion::V1_6_0`], as
    /// [`schema::DEFAULT_STANDARD`](crate::schema::DEFAULT_STANDARD)). A version this
    /// library does not know is reported as the file states it
    /// ([`StandardVersion::known`] is `false`); a line that states no version
    /// (`#ASDF_STANDARD draft`) is ignored, as python asdf ignores it.
    ///
    /// ```
    /// use asdf_core::{AsdfFile, StandardVersion};
    /// let bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n--- {}\n...\n";
    /// let file = AsdfFile::from_bytes(bytes.to_vec())?;
    /// assert_eq!(file.standard_version(), StandardVersion::V1_5_0);
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn standard_version(&self) -> StandardVersion {
        let stated = self.layout.header.standard_version.as_deref();
        match stated.map(StandardVersion::parse) {
            Some(Ok(v)) => v,
            _ if self.layout.is_legacy() => StandardVersion::V1_0_0,
            _ => StandardVersion::default(),
        }
    }

    /// Validates the tree as python asdf does on open: the root against the `core/asdf`
    /// schema of the file's standard version, every tagged node against its tag's schema
    /// (and user schemas registered for its tag); then, what python does not check, that
    /// every array whose data is in a block of this file fits in it
    /// ([`schema::validate_array_blocks`](crate::schema::validate_array_blocks): a file
    /// whose arrays cannot be read is not valid). The problems of both, schemas first.
    /// Block data is not read (but for ASDF 0.1.0 encoding chains, whose size is known only
    /// once decoded). [`OpenOptions::validate`] checks the schemas only.
    ///
    /// ```
    /// let file = asdf_core::AsdfFile::from_bytes(
    ///     b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
    ///       --- !core/asdf-1.1.0\nx: 1\n...\n".to_vec(),
    /// )?;
    /// file.validate()?;
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn validate(&self) -> std::result::Result<(), crate::schema::ValidationErrors> {
        let schemas = crate::schema::validate_tree(self.tree(), self.standard_version().as_str());
        let blocks = crate::schema::validate_array_blocks(self);
        match (schemas, blocks) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
            (Err(a), Err(b)) => Err(a.join(b)),
        }
    }

    /// The HDUs of an ASDF-in-FITS file (a JWST product), in file order; `None` for an ASDF
    /// file. The tree is that of the HDU named `ASDF`; arrays whose source is `fits:NAME,VER`
    /// or `fits:INDEX` read the named HDU's data as astropy reads it (see
    /// `docs/asdf-in-fits.md`).
    ///
    /// ```no_run
    /// let file = asdf_core::AsdfFile::open("jw01234_cal.fits")?;
    /// for hdu in file.fits_hdus().unwrap_or_default() {
    ///     println!("{} {} {:?}", hdu.index, hdu.name, hdu.shape());
    /// }
    /// let sci = file.array::<f32>("/data")?;
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn fits_hdus(&self) -> Option<&[layout::fits::Hdu]> {
        self.fits.as_ref().map(|c| &c.hdus[..])
    }

    /// Whether block data lies in the file at [`Self::path`] at the offsets the block headers
    /// give (false for a file held in memory and for ASDF in FITS).
    pub(crate) fn blocks_in_path(&self) -> bool {
        self.path.is_some() && self.fits.is_none()
    }

    /// The path the file was opened from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The directory that relative URIs (external blocks, `$ref`) resolve against.
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// The `#ASDF` header lines.
    pub fn header(&self) -> &layout::Header {
        &self.layout.header
    }

    /// The located byte layout: tree range and block headers. For a file opened with
    /// [`OpenOptions::lazy_block_headers`] whose block index was used, `blocks` is empty:
    /// [`Self::blocks`] reads them.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Number of blocks (without reading a block header that was not read yet).
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Block headers in file order. For a file opened with
    /// [`OpenOptions::lazy_block_headers`], the first call reads every header not read yet;
    /// when one of them disagrees with the block index, the headers before it
    /// ([`Self::try_blocks`] gives the error).
    pub fn blocks(&self) -> &[BlockHeader] {
        match self.try_blocks() {
            Ok(b) => b,
            Err(_) => self.all_headers.get().map_or(&[], |(b, _)| b.as_slice()),
        }
    }

    /// Block headers in file order, or the first error found reading them (only a file
    /// opened with [`OpenOptions::lazy_block_headers`] reads headers here).
    pub fn try_blocks(&self) -> Result<&[BlockHeader]> {
        let Some(lazy) = &self.lazy_headers else {
            return Ok(&self.layout.blocks);
        };
        let (all, failed) = self.all_headers.get_or_init(|| lazy.all(&*self.source));
        match failed {
            None => Ok(all),
            Some(e) => Err(e.clone().into()),
        }
    }

    /// The parsed YAML document (version, `%TAG` directives, root).
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// The root of the tree. A file with an `#ASDF` header and no tree (a header alone, or a
    /// header and blocks) has an empty `core/asdf` mapping, as python asdf reads it: tagged
    /// `core/asdf-1.0.0` when the `#ASDF_STANDARD` line says a version before 1.2.0 or is
    /// missing, `core/asdf-1.1.0` otherwise. An empty file without the header is a null node.
    ///
    /// For a file of ASDF Standard 1.5.0 or earlier (or without an `#ASDF_STANDARD` line,
    /// which python asdf takes to be 1.0.0), the tree holds the `default` values of the
    /// standard's schemas where the file leaves them out, as python asdf reads it (see
    /// [`OpenOptions::fill_defaults`]).
    pub fn tree(&self) -> &Node {
        &self.doc.root
    }

    /// The node at a JSON-pointer path (`/a/b/0`), if any: [`Node::pointer`] of the root.
    /// [`AsdfFile::node`] is the same lookup as a `Result` whose error names the path.
    pub fn get(&self, path: &str) -> Option<&Node> {
        self.doc.root.pointer(path)
    }

    /// The node at a JSON-pointer path, or [`Error::NoSuchPath`].
    pub fn node(&self, path: &str) -> Result<&Node> {
        self.get(path).ok_or_else(|| Error::NoSuchPath {
            path: path.to_string(),
        })
    }

    /// Every ndarray node in the tree with its path, in document order.
    pub fn arrays(&self) -> Vec<(String, Node)> {
        let mut out = Vec::new();
        self.doc.root.walk_lazy(&mut |p, n| {
            if n.is_ndarray() {
                out.push((p.pointer(), n.clone()));
            }
        });
        out
    }

    /// Opens (once) the external ASDF file a URI names, if the open options'
    /// [`ExternalPolicy`] admits it. It is opened with the same options, confined to the same
    /// folders as this file.
    pub(crate) fn external_file(&self, uri: &str, path: &str) -> Result<Arc<AsdfFile>> {
        if let Some(opener) = &self.opener {
            return self.external_by_opener(opener, uri, path);
        }
        let full = self.confinement.check(&self.base_dir, uri, path)?;
        if let Some(f) = self.lock_external().get(&full) {
            return Ok(f.clone());
        }
        let options = self
            .options
            .clone()
            .external_policy(self.confinement.as_policy());
        let opened = options.open(&full).map_err(|e| Error::External {
            file: full.clone(),
            source: Box::new(e),
        })?;
        let opened = Arc::new(opened);
        self.lock_external().insert(full, opened.clone());
        Ok(opened)
    }

    /// The external file a URI names, checked to hold a block (its block 0 holds the
    /// array).
    pub(crate) fn external_block_file(&self, uri: &str, path: &str) -> Result<Arc<AsdfFile>> {
        let ext = self.external_file(uri, path)?;
        if ext.block_count() == 0 {
            return Err(ext.as_external(Error::NoSuchBlock {
                path: path.to_string(),
                source_index: 0,
                count: 0,
            }));
        }
        Ok(ext)
    }

    /// An error of this file, as the external file of another one.
    pub(crate) fn as_external(&self, e: Error) -> Error {
        Error::External {
            file: self.path().map(Path::to_path_buf).unwrap_or_default(),
            source: Box::new(e),
        }
    }

    /// [`Self::external_file`] for a file opened with an [`ExternalOpener`].
    fn external_by_opener(
        &self,
        opener: &Arc<dyn ExternalOpener>,
        uri: &str,
        path: &str,
    ) -> Result<Arc<AsdfFile>> {
        let key = PathBuf::from(uri);
        if let Some(f) = self.lock_external().get(&key) {
            return Ok(f.clone());
        }
        let found = opener.open(uri).map_err(|e| match e {
            ExternalOpenError::Refused(reason) => Error::ExternalRefused {
                path: path.to_string(),
                reference: uri.to_string(),
                reason,
            },
            ExternalOpenError::Io(e) => Error::External {
                file: key.clone(),
                source: Box::new(Error::io(Some(&key), e)),
            },
        })?;
        let name = PathBuf::from(&found.name);
        let opened = self
            .options
            .open_source_with(found.source, found.opener)
            .map_err(|e| Error::External {
                file: name,
                source: Box::new(e),
            })?;
        let opened = Arc::new(opened);
        self.lock_external().insert(key, opened.clone());
        Ok(opened)
    }

    fn lock_external(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<AsdfFile>>> {
        // A poisoned cache only means another thread panicked mid-insert; the map is still
        // consistent (entries are inserted whole).
        self.external.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The ndarray node at `path`, checked to be one.
    fn ndarray_node(&self, path: &str) -> Result<&Node> {
        let node = self.node(path)?;
        if !node.is_ndarray() {
            return Err(Error::NotAnArray {
                path: path.to_string(),
                tag: node.tag().map(str::to_string),
            });
        }
        Ok(node)
    }

    /// The array at `path` in its dynamic form (any datatype: numbers, strings, records).
    pub fn dyn_array(&self, path: &str) -> Result<DynArray> {
        let node = self.ndarray_node(path)?.clone();
        self.dyn_array_of(&node, path)
    }

    /// The dynamic array of any ndarray node of this file's tree (`path` is used in errors).
    pub fn dyn_array_of(&self, node: &Node, path: &str) -> Result<DynArray> {
        let meta = NdArrayMeta::from_node(node, path)?;
        if let Some(a) = self.fast_dyn(&meta, path, None)? {
            return Ok(a);
        }
        self.bound_dyn(&meta, path)
    }

    /// The dynamic array of `meta` through the general path: inline data, or the block
    /// (decoded once into the cache) or external file bound with offset and strides.
    fn bound_dyn(&self, meta: &NdArrayMeta, path: &str) -> Result<DynArray> {
        match &meta.source {
            ArraySource::Inline(_) => Ok(array::from_inline(meta, path)?),
            ArraySource::Block(src) => {
                let idx = self.block_index(*src, path)?;
                let data = self.block_data(idx)?;
                Ok(array::from_block(meta, data, path)?)
            }
            ArraySource::Uri(uri) if uri.starts_with("fits:") => {
                let err = |error| Error::Fits {
                    path: path.to_string(),
                    error,
                };
                let Some(container) = &self.fits else {
                    return Err(err(layout::fits::FitsError::NotInFits { uri: uri.clone() }));
                };
                container
                    .array(uri, self.options.max_block_bytes)
                    .map_err(err)
            }
            ArraySource::Uri(uri) => {
                let ext = self.external_file(uri, path)?;
                let data = ext.block_data(0).map_err(|e| ext.as_external(e))?;
                Ok(array::from_block(meta, data, path)?)
            }
        }
    }

    /// The array at `path` as an owned `ndarray` array of `T`, byte order converted.
    /// A datatype other than `T`'s is an [`crate::array::ArrayError::DTypeMismatch`].
    ///
    /// ```no_run
    /// let file = asdf_core::AsdfFile::open("image.asdf")?;
    /// let img = file.array::<f32>("/sci")?;
    /// println!("{} pixels", img.len());
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn array<T: Element>(&self, path: &str) -> Result<ArrayD<T>> {
        let node = self.ndarray_node(path)?.clone();
        if let Some(a) = self.fast_owned::<T>(&node, path)? {
            return Ok(a);
        }
        self.dyn_array_of(&node, path)?
            .to_array::<T>()
            .map_err(|source| Error::Convert {
                path: path.to_string(),
                source,
            })
    }

    /// The array at `path` without copying when its block's bytes can be viewed as it (see
    /// [`AsdfFile::try_view`]); otherwise an owned copy.
    pub fn array_view<T: Element>(&self, path: &str) -> Result<CowArray<'_, T, IxDyn>> {
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        if let ArraySource::Block(src) = meta.source {
            let idx = self.block_index(src, path)?;
            let data = self.block_data(idx)?;
            if let Some(view) = array::view::<T>(&meta, data, path)? {
                return Ok(CowArray::from(view));
            }
        }
        Ok(CowArray::from(self.array::<T>(path)?))
    }

    /// A view of the array at `path` over the block's bytes as the file holds them, or
    /// `None` when making a `T` array needs a copy (byte order not native, `bool`, position
    /// or strides not aligned for `T`, inline or external data).
    ///
    /// The bytes viewed are the memory map, or the block read into memory, when the block
    /// is uncompressed; a compressed block is decoded once into the file's block cache
    /// (the decoded bytes are kept for the file's life, as for every array read) and the
    /// view borrows that cache, with no further copy.
    pub fn try_view<T: Element>(&self, path: &str) -> Result<Option<ArrayViewD<'_, T>>> {
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        match meta.source {
            ArraySource::Block(src) => {
                let idx = self.block_index(src, path)?;
                let data = self.block_data(idx)?;
                Ok(array::view::<T>(&meta, data, path)?)
            }
            _ => Ok(None),
        }
    }

    /// Follows a `$ref` mapping (`{$ref: URI}`) to its target: a JSON pointer in this file
    /// (`#/path`) or in another file (`other.asdf#/path`, relative to [`Self::base_dir`]).
    pub fn resolve_ref(&self, node: &Node, path: &str) -> Result<RefTarget> {
        refs::resolve(self, node, path)
    }
}

/// The root python asdf makes up for a file that has an `#ASDF` header but no tree.
fn treeless_root(header: &layout::Header) -> Node {
    if header.asdf_version.is_none() {
        return Node::new(Value::Null);
    }
    let before_1_2 = match header.standard_version.as_deref() {
        None => true,
        Some(v) => {
            let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(u32::MAX));
            let (major, minor) = (parts.next().unwrap_or(u32::MAX), parts.next().unwrap_or(0));
            (major, minor) < (1, 2)
        }
    };
    let version = if before_1_2 { "1.0.0" } else { "1.1.0" };
    Node::tagged(
        format!("tag:stsci.edu:asdf/core/asdf-{version}"),
        Value::Map(Vec::new()),
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
