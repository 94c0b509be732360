//! # asdf-core
//!
//! Read and write ASDF (Advanced Scientific Data Format) files exactly as the standard and its real
//! writers produce them: the `#ASDF` header, the YAML 1.1 tree with `%TAG` handles, tags,
//! anchors and aliases, binary blocks (six codecs, MD5 checksums, streamed last block, block
//! index), external (exploded) blocks, and arrays bound to [`ndarray`].
//!
//! The modules a user sees:
//!
//! | module | owns |
//! |---|---|
//! | [`file`](mod@file) | [`AsdfFile`]: open (lazy, optional mmap), typed access, `$ref` resolution, the file's layout (header, block headers, FITS HDUs) |
//! | [`write`](mod@write) | [`write::Writer`]: emit the tree and blocks, storage modes and compression, atomic writes, update |
//! | [`yaml`] | the tagged tree [`Node`], [`Value`], [`Integer`], YAML 1.1 scalar resolution, parsing, tree edits |
//! | [`array`](mod@array) | ndarray descriptors, datatypes, selections, binding to [`ndarray`] |
//! | [`schema`] | bundled schemas, tag → schema per standard version, validation, writing hints |
//! | [`convert`] | [`ToAsdf`]/[`FromAsdf`] (and `#[derive(AsdfType)]`): typed values ↔ nodes, [`convert::LazyArray`] |
//! | [`serde_node`] | serde `Serializer`/`Deserializer` over [`Node`], [`serde_node::Serde`] |
//! | `testing` | round-trip and schema assertions for users' tests (feature `testing`) |
//!
//! and at the root [`Error`] (with [`LayoutError`] and [`CodecError`], the errors of a file's
//! bytes), and [`Progress`].
//!
//! ```no_run
//! use asdf_core::AsdfFile;
//! let file = AsdfFile::open("example.asdf")?;
//! let data = file.array::<f64>("/data")?;
//! println!("{:?}", data.shape());
//! # Ok::<(), asdf_core::Error>(())
//! ```
//!
//! One call each for the common case: [`write()`], [`write_at`], [`read`], [`update_at`].
//!
//! Typed values: derive [`AsdfType`](derive@AsdfType) on a struct, write it with
//! [`write::Writer::add_value`], read it with [`AsdfFile::read_as`].
//!
//! ## Conventions of the API
//!
//! - **Absent or wrong.** A lookup that only asks whether something is there returns
//!   `Option`: [`Node::get`] (one key of a mapping), [`Node::pointer`] and [`AsdfFile::get`]
//!   (a JSON pointer; `get` on a file takes a path, on a node one key). Access that must
//!   succeed returns `Result`, and the [`Error`] names the tree path and why:
//!   [`AsdfFile::node`] (the `Result` form of [`AsdfFile::get`]), [`AsdfFile::array`],
//!   [`AsdfFile::read_as`].
//! - **Standard versions.** One type, [`StandardVersion`], for the version a file states
//!   ([`AsdfFile::standard_version`]) and the version a writer writes
//!   ([`WriteOptions::standard`]). A file may state a version this library does not know
//!   (a later standard): it is kept as its text, [`StandardVersion::known`] says so, and
//!   the writer refuses it.
//! - **Enums that will grow** (errors, datatypes, array sources, codecs, options) are
//!   `#[non_exhaustive]`: match them with a `_` arm.
//! - **What is not API.** The byte-level plumbing the other crates of asdf-rs share (block
//!   headers and the block index as bytes, codecs by label, MD5, the canonical JSON form,
//!   binding block bytes to arrays) is private; those crates reach it through the module
//!   `unstable`, which exists only with the cargo feature `unstable-internals` and has no
//!   semver guarantee: it may change in any release.
//!
//! ```
//! use asdf_core::{tree, AsdfFile, StandardVersion, WriteOptions, Writer};
//!
//! let root = tree!({"meta": {"telescope": "JWST"}});
//! // a tree you hold: `Option`
//! assert_eq!(root.pointer("/meta/telescope").and_then(|n| n.as_str()), Some("JWST"));
//! assert!(root.get("exposure").is_none());
//!
//! // a file: `Result`, and the error names the path
//! let options = WriteOptions::default().standard(StandardVersion::V1_5_0);
//! let file = AsdfFile::from_bytes(Writer::new(options).write_to_vec(&root)?)?;
//! assert_eq!(file.node("/meta/telescope")?.as_str(), Some("JWST"));
//! let err = file.node("/meta/exposure").unwrap_err();
//! assert!(err.to_string().contains("/meta/exposure"), "{err}");
//!
//! // the version a file states, of the type the writer takes
//! assert_eq!(file.standard_version(), StandardVersion::V1_5_0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod array;
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unused_imports))]
mod canonical;
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unused_imports))]
mod checksum;
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unused_imports))]
mod codec;
pub mod convert;
mod easy;
mod error;
pub mod file;
mod floats;
#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code, unused_imports))]
mod layout;
mod mem;
mod progress;
pub mod schema;
pub mod serde_node;
#[cfg(feature = "testing")]
pub mod testing;
mod version;
pub mod write;
pub mod yaml;

pub use array::{SelItem, Selection};
/// `#[derive(AsdfType)]`: implements [`ToAsdf`] and [`FromAsdf`] for a struct or enum.
#[cfg(feature = "derive")]
pub use asdf_derive::AsdfType;
/// The examples of `#[derive(AsdfType)]`'s documentation (asdf-derive's `src/derive.md`), run
/// here: asdf-derive cannot depend on this crate, even for its tests, without building this
/// crate's dependency tree a second time for the host in every workspace build.
#[cfg(all(doctest, feature = "derive"))]
#[doc = include_str!("../../asdf-derive/src/derive.md")]
pub struct DeriveDoctests;
pub use codec::CodecError;
pub use convert::{AsdfType, FromAsdf, ToAsdf};
pub use easy::{read, update_at, write, write_at};
pub use error::{display_chain, Error, Result};
pub use file::{
    AsdfFile, ExternalOpenError, ExternalOpener, ExternalPolicy, ExternalSource, OpenOptions,
};
pub use file::{
    LegacyChain, Manifest, ManifestOptions, Piece, PieceCodec, PieceSource, WholeBlock,
};
pub use layout::LayoutError;
pub use progress::Progress;
pub use write::{StandardVersion, WriteError, WriteOptions, Writer};
pub use yaml::{Integer, Node, Value};

#[cfg(feature = "unstable-internals")]
pub mod unstable {
    //! **Unstable: no semver guarantee; for the asdf-rs crates.** The plumbing the crates of
    //! asdf-rs share (asdftool, asdf-hdf5, asdf-store, asdf-python, the fuzz targets, the
    //! benches and tests): block headers and the block index as bytes, codecs by label, MD5,
    //! the `asdf-canonical/1` JSON form, block bytes bound to arrays, legacy encodings,
    //! ASDF-in-FITS tables, atomic files, JSON-pointer segments. It exists only with the
    //! cargo feature `unstable-internals` and may change in any release, patch releases
    //! included. Users of asdf-core need none of it: the public modules are the API.
    //!
    //! What a user meets of the plumbing has a public path; the modules themselves are
    //! private outside this one:
    //!
    //! ```
    //! use asdf_core::file::{BlockHeader, Hdu, Layout, ReadAt};
    //! use asdf_core::write::Compression;
    //! use asdf_core::{CodecError, LayoutError};
    //! use asdf_core::unstable::{canonical, checksum, codec, layout};
    //! ```
    //!
    //! ```compile_fail,E0603
    //! use asdf_core::codec::Compression;
    //! ```
    //!
    //! ```compile_fail,E0603
    //! use asdf_core::layout::BlockHeader;
    //! ```
    //!
    //! ```compile_fail,E0603
    //! use asdf_core::checksum::Md5;
    //! ```
    //!
    //! ```compile_fail,E0603
    //! use asdf_core::canonical::to_json;
    //! ```

    /// The `asdf-canonical/1` JSON form of a file's content.
    pub mod canonical {
        pub use crate::canonical::*;
    }
    /// MD5, as the block headers store it.
    pub mod checksum {
        pub use crate::checksum::*;
    }
    /// Decompression and compression by 4-byte label.
    pub mod codec {
        pub use crate::codec::*;
    }
    /// The bytes of a file: header and comment lines, locating the tree, block headers, the
    /// block index, ASDF in FITS, legacy (ASDF 0.1.0) layouts.
    pub mod layout {
        pub use crate::layout::*;
    }

    pub use crate::array::bind::{from_block, view};
    pub use crate::array::inline::{from_inline, inline_null_mask};
    pub use crate::array::to_node::inline_node;
    pub use crate::canonical::dtype_json;
    pub use crate::codec::stream::{decoder, decoder_at, StoredAt};
    pub use crate::codec::{decode, decode_into, encode, encode_items};
    pub use crate::file::confine::confined_path;
    pub use crate::file::fits::{
        convert_fits_table, scale_fits_image, FitsScaling, FitsTable, ScaledImage,
    };
    pub use crate::file::legacy::decode_chain;
    pub use crate::floats::{json_number, push_json_number, python_repr};
    pub use crate::layout::blocks::{
        encode_block_header, parse_block_header, read_stored, read_stored_into,
    };
    pub use crate::layout::fits::CardValue as FitsCardValue;
    pub use crate::layout::index::encode_block_index;
    pub use crate::layout::legacy::parse_legacy_block_header;
    pub use crate::layout::read_layout;
    pub use crate::write::atomic::{write_atomically, AtomicFile, ScratchFile};
    pub use crate::yaml::pointer::{
        escape_segment as escape_pointer_segment, join_segments as pointer_of_segments,
        push_segment as push_pointer_segment, unescape_segment as unescape_pointer_segment,
    };
}
