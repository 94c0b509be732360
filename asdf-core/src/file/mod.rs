//! The file API: [`AsdfFile`].

use crate::Node;

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
    /// Opens a file held in memory (external blocks resolve relative to the working directory).
    pub fn from_bytes(_bytes: Vec<u8>) -> crate::Result<Self> {
        Err(crate::Error::Todo)
    }
    /// The root of the tree (a null node for a file without a tree).
    pub fn tree(&self) -> &Node {
        unimplemented!()
    }
    /// Reads an array.
    pub fn array<T>(&self, _path: &str) -> crate::Result<ndarray::ArrayD<T>> {
        Err(crate::Error::Todo)
    }
}
