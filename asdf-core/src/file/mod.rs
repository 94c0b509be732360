//! The file API: [`AsdfFile`].

/// Options for opening a file.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {}

/// An opened ASDF file.
#[derive(Debug)]
pub struct AsdfFile {}

impl AsdfFile {
    /// Opens a file.
    pub fn open(_path: impl AsRef<std::path::Path>) -> crate::Result<Self> {
        Err(crate::Error::Todo)
    }
    /// Reads an array.
    pub fn array<T>(&self, _path: &str) -> crate::Result<ndarray::ArrayD<T>> {
        Err(crate::Error::Todo)
    }
}
