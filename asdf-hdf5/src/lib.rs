//! HDF5 ↔ ASDF conversion without a C library, over the pure-Rust `hdf5-reader` and
//! `hdf5-writer` crates.
//!
//! HDF5 → ASDF ([`to_asdf`], [`read_dataset`]): groups become mappings and datasets
//! `core/ndarray` nodes at the same key paths, so `af["group"]["dataset"]` in python asdf is the
//! dataset's array; everything HDF5 says about them that an ASDF array cannot (attributes,
//! chunk shapes, filters, enum names, scalar datatypes) is kept under the root key `_hdf5`. The
//! mapping is written down in `docs/hdf5.md`.
//!
//! ASDF → HDF5 ([`from_asdf`], [`from_asdf_with`]): arrays become datasets at their key paths,
//! `$ref`s soft and external links, the rest of the tree attributes of their group. A masked
//! array's mask becomes a companion dataset named in the data's `_asdf_mask` attribute (a
//! mask number its `_asdf_mask_value` attribute), which the way back makes a mask again.
//!
//! Datasets larger than memory convert band by band both ways (whole chunk rows along axis 0,
//! read and written while the other file is written), so memory holds a few bands whatever
//! their size: see [`ToAsdfOptions::band_min_bytes`] and [`FromAsdfOptions::band_min_bytes`].

#![forbid(unsafe_code)]

mod band;
mod datatype;
mod filters;
mod from_asdf;
mod names;
mod to_asdf;

/// The progress callback of [`ToAsdfOptions::progress`] and [`FromAsdfOptions::progress`]:
/// asdf-rs's one progress type, `asdf_core::Progress`.
pub use asdf_core::Progress;
pub use from_asdf::{from_asdf, from_asdf_with, FromAsdfOptions, FromAsdfSummary};
/// An open HDF5 file (hdf5-reader's type), as [`open`] gives it to [`read_dataset`].
pub use hdf5_reader::Hdf5File;
pub use names::META_KEY;
pub use to_asdf::{open, read_dataset, to_asdf, to_asdf_bytes, ToAsdfOptions, ToAsdfSummary};

/// What went wrong converting between HDF5 and ASDF; each names the file and the object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Hdf5Error {
    /// The HDF5 reader refused the file or an object in it.
    #[error("{path}: {message}")]
    Read {
        /// The HDF5 object path (`/` for the file itself).
        path: String,
        /// What the reader said.
        message: String,
    },
    /// An HDF5 datatype that has no ASDF equivalent yet (HDF5 1.12's references into
    /// another file, opaque data or bitfields inside compounds that hold references or
    /// sequences):
    /// the object is left out and listed unless [`ToAsdfOptions::strict`].
    #[error("{path}: HDF5 datatype {what} has no ASDF equivalent")]
    Unsupported {
        /// The HDF5 object path (with `@name` for an attribute).
        path: String,
        /// The datatype, described.
        what: String,
    },
    /// A filter of a dataset's pipeline that asdf-rs cannot decode.
    #[error("{path}: {what} cannot be decoded")]
    Filter {
        /// The HDF5 object path.
        path: String,
        /// The filter, described (`HDF5 filter 307 (bzip2)`).
        what: String,
    },
    /// A tree that the conversion cannot express.
    #[error("{path}: {message}")]
    Tree {
        /// Tree path in the ASDF file.
        path: String,
        /// Why.
        message: String,
    },
    /// Reading the ASDF file failed.
    #[error("{0}")]
    Asdf(#[from] asdf_core::Error),
    /// Writing the ASDF file failed.
    #[error("cannot write the ASDF file: {0}")]
    AsdfWrite(#[from] asdf_core::write::WriteError),
    /// Writing the HDF5 file failed.
    #[error("cannot write the HDF5 file: {0}")]
    Hdf5Write(String),
    /// The operating system failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Result with [`Hdf5Error`].
pub type Result<T, E = Hdf5Error> = std::result::Result<T, E>;
