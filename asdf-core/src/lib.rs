//! # asdf-core
//!
//! Read and write ASDF (Advanced Scientific Data Format) files exactly as the standard and its real
//! writers produce them: the `#ASDF` header, the YAML 1.1 tree with `%TAG` handles, tags,
//! anchors and aliases, binary blocks (six codecs, MD5 checksums, streamed last block, block
//! index), external (exploded) blocks, and arrays bound to [`ndarray`].
//!
//! The crate is layered bottom up; each module uses only the modules listed before it:
//!
//! | module | owns |
//! |---|---|
//! | [`layout`] | header and comment lines, locating the tree, block headers, block index |
//! | [`codec`] | decompression/compression by 4-byte label |
//! | [`yaml`] | the tagged tree [`Node`], YAML 1.1 scalar resolution, parsing |
//! | [`array`](mod@array) | ndarray descriptors, datatypes, inline data, binding to `ndarray` |
//! | [`schema`] | bundled schemas, tag → schema per standard version, validation, writing hints |
//! | [`convert`] | [`ToAsdf`]/[`FromAsdf`] (and `#[derive(AsdfType)]`): typed values ↔ nodes |
//! | [`serde_node`] | serde `Serializer`/`Deserializer` over [`Node`], [`serde_node::Serde`] |
//! | [`file`](mod@file) | [`AsdfFile`]: open (lazy, optional mmap), typed access, `$ref` resolution |
//! | [`write`](mod@write) | [`write::Writer`]: emit the tree and blocks, storage modes, atomic writes, update |
//! | [`canonical`] | the `asdf-canonical/1` JSON form of a file's content |
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

pub mod array;
pub mod canonical;
pub mod checksum;
pub mod codec;
pub mod convert;
mod easy;
mod error;
pub mod file;
pub mod layout;
mod mem;
mod progress;
pub mod schema;
pub mod serde_node;
#[cfg(feature = "testing")]
pub mod testing;
pub mod write;
pub mod yaml;

/// `#[derive(AsdfType)]`: implements [`ToAsdf`] and [`FromAsdf`] for a struct or enum.
#[cfg(feature = "derive")]
pub use asdf_derive::AsdfType;
pub use convert::{AsdfType, FromAsdf, ToAsdf};
pub use easy::{read, update_at, write, write_at};
pub use error::{display_chain, Error, Result};
pub use file::{
    AsdfFile, ExternalOpenError, ExternalOpener, ExternalPolicy, ExternalSource, OpenOptions,
};
pub use progress::Progress;
pub use write::{WriteError, WriteOptions, Writer};
pub use yaml::{Integer, Node, Value};
