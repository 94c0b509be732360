//! One call for the common case: [`write`] a value or a tree to a new file, [`read`] a typed
//! value from a file, [`update_at`] one place of a file's tree and keep the rest. The
//! functions that write return a [`WriteError`] (which holds the reader's
//! [`Error`](crate::Error) when reading the file failed), [`read`] an [`Error`](crate::Error).
//!
//! These use the default options (validation on, no compression for new arrays, checksums;
//! an updated file keeps each array where it is and each block's codec). For anything else (compression, storage
//! modes, the ASDF Standard version, streaming, in-place updates), use
//! [`Writer`](crate::write::Writer), [`AsdfFile`] and [`update_with`](crate::write::update_with).
//!
//! ```no_run
//! use asdf_core::{tree, AsdfType};
//!
//! #[derive(AsdfType, Debug, PartialEq)]
//! #[asdf(tag = "asdf://example.org/tags/frame-1.0.0")]
//! struct Frame {
//!     exposure: f64,
//!     pixels: ndarray::Array2<f32>,
//! }
//!
//! let frame = Frame { exposure: 30.0, pixels: ndarray::Array2::zeros((64, 64)) };
//! asdf_core::write_at("frame.asdf", "/frame", &frame)?;        // a new file: {frame: ...}
//! let mut back: Frame = asdf_core::read("frame.asdf", "/frame")?;
//! back.exposure = 45.0;
//! asdf_core::update_at("frame.asdf", "/frame", &back)?;         // the rest of the file kept
//! asdf_core::update_at("frame.asdf", "/meta/observer", &"Vera")?; // mappings made as needed
//!
//! asdf_core::write("catalog.asdf", &tree!({"name": "M31", "count": 3}))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use crate::convert::{FromAsdf, ToAsdf};
use crate::write::{CompressionChoice, WriteError, WriteOptions, Writer};
use crate::yaml::{Node, Value};
use crate::{AsdfFile, Result};

/// Writes a new ASDF file at `path` (atomically: a temporary file, synced, renamed) whose
/// tree is `value`, which must convert to a mapping: a [`tree!`](crate::tree), a struct
/// without a tag, a map. A tagged value cannot be the root of a file: put it under a key
/// with [`write_at`].
pub fn write<T: ToAsdf + ?Sized>(path: impl AsRef<Path>, value: &T) -> Result<(), WriteError> {
    write_at(path, "", value)
}

/// Writes a new ASDF file at `path` (atomically) whose tree holds `value` at the JSON pointer
/// `pointer`, inside mappings made for it (`"/frame"` gives `{frame: value}`; `""` is
/// [`write()`]). Whatever was at `path` is replaced: to change one place of an existing file,
/// use [`update_at`].
pub fn write_at<T: ToAsdf + ?Sized>(
    path: impl AsRef<Path>,
    pointer: &str,
    value: &T,
) -> Result<(), WriteError> {
    let mut writer = Writer::new(WriteOptions::default());
    let node = writer.add_value(value)?;
    let root = if is_root(pointer) {
        as_root(node)?
    } else {
        let mut root = Node::new(Value::Map(Vec::new()));
        root.set_creating(pointer, node)?;
        root
    };
    writer.write_to_path(&root, path)?;
    Ok(())
}

/// Reads the node at the JSON pointer `pointer` (`""` or `"/"` for the whole tree) of the
/// ASDF file at `path` as a `T`, loading only the arrays `T` holds.
pub fn read<T: FromAsdf>(path: impl AsRef<Path>, pointer: &str) -> Result<T> {
    AsdfFile::open(path)?.read_as(pointer)
}

/// Puts `value` at the JSON pointer `pointer` of the existing ASDF file at `path` (replacing
/// what is there, or adding it inside mappings made as needed) and keeps everything else of
/// the file: the rest of the tree, unknown tags, each array where it is (inline data inline,
/// blocks with their codecs, external files external), history. The file
/// is rewritten beside itself and renamed over the old one, so `path` always holds the old
/// file or the new one, whole (as [`update`](crate::write::update)). `""` replaces the
/// whole tree.
pub fn update_at<T: ToAsdf + ?Sized>(
    path: impl AsRef<Path>,
    pointer: &str,
    value: &T,
) -> Result<(), WriteError> {
    let path = path.as_ref();
    // an interrupted in-place update is finished first, as every update does
    crate::write::recover(path)?;
    let file = AsdfFile::options().mmap(true).open(path)?;
    if file.fits_hdus().is_some() {
        return Err(WriteError::ReadOnlyFormat {
            path: path.to_path_buf(),
        });
    }
    let opts = WriteOptions::default()
        .standard(file_standard(&file))
        .compression(CompressionChoice::Input);
    let mut writer = Writer::from_file(&file, opts);
    let node = writer.add_value(value)?;
    let root = if is_root(pointer) {
        as_root(node)?
    } else {
        let mut root = file.tree().clone();
        root.set_creating(pointer, node)?;
        root
    };
    writer.write_to_path(&root, path)?;
    Ok(())
}

fn is_root(pointer: &str) -> bool {
    pointer.is_empty() || pointer == "/"
}

/// `node` as the root of a file: a mapping, untagged or tagged as a root.
fn as_root(node: Node) -> Result<Node, WriteError> {
    let root_tag = node
        .tag()
        .is_none_or(|t| t.starts_with("tag:stsci.edu:asdf/core/asdf-"));
    match node.value() {
        Value::Map(_) if root_tag => Ok(node),
        _ => {
            let what = match (node.tag(), node.value()) {
                (Some(tag), _) => format!("a node tagged {tag}"),
                (None, Value::Seq(_)) => "a sequence".into(),
                (None, _) => "a scalar".into(),
            };
            Err(WriteError::BadTree {
                path: "/".into(),
                message: format!(
                    "the root of an ASDF file is an untagged mapping, and this value is \
                     {what}: put it under a key (write_at(path, \"/key\", &value))"
                ),
            })
        }
    }
}

/// The ASDF Standard version the file was written under, when we can write it; else the
/// default.
fn file_standard(file: &AsdfFile) -> crate::StandardVersion {
    Some(file.standard_version())
        .filter(crate::StandardVersion::known)
        .unwrap_or_default()
}
