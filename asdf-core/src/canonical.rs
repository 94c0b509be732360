//! The `asdf-canonical/1` JSON form of a file's content.

use crate::AsdfFile;

/// The canonical JSON text (`asdf-canonical/1`) of an opened file.
pub fn to_json(_file: &AsdfFile) -> crate::Result<String> {
    Err(crate::Error::Todo)
}

/// Opens `path` and returns its canonical JSON text.
pub fn document_json(path: impl AsRef<std::path::Path>) -> crate::Result<String> {
    to_json(&AsdfFile::open(path)?)
}
