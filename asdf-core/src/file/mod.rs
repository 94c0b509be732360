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

use crate::layout;
use crate::yaml::{Document, Node};
use crate::{Error, Result, StandardVersion};

pub(crate) mod blocks;
use blocks::BlockBytes;
mod arrays;
pub(crate) mod confine;
mod direct_read;
mod external;
// used only through `unstable` (feature `unstable-internals`) in part
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code))]
pub(crate) mod fits;
mod journal;
pub(crate) mod legacy;
pub mod manifest;
mod open;
mod read_as;
mod refs;
mod region;
mod verify;
pub(crate) mod zarr;
pub(crate) mod zarr_error;

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
pub use external::{ExternalOpenError, ExternalOpener, ExternalSource};
pub use open::OpenOptions;
pub use refs::RefTarget;
pub use zarr::{is_zarr, ZarrChunking, ZarrError, ZARR_TAG};

use confine::Confinement;

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

    /// Every array node in the tree with its path, in document order: ndarrays and
    /// asdf-zarr arrays ([`ZARR_TAG`]), which read through the same calls.
    pub fn arrays(&self) -> Vec<(String, Node)> {
        let mut out = Vec::new();
        self.doc.root.walk_lazy(&mut |p, n| {
            if n.is_ndarray() || is_zarr(n) {
                out.push((p.pointer(), n.clone()));
            }
        });
        out
    }

    /// Follows a `$ref` mapping (`{$ref: URI}`) to its target: a JSON pointer in this file
    /// (`#/path`) or in another file (`other.asdf#/path`, relative to [`Self::base_dir`]).
    pub fn resolve_ref(&self, node: &Node, path: &str) -> Result<RefTarget> {
        refs::resolve(self, node, path)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
