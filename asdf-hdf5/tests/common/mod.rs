//! What the test files of asdf-hdf5 share.

use std::path::{Path, PathBuf};

/// A fresh folder under the system's temporary folder, removed with everything in it when
/// dropped (so test runs leave nothing behind, failed ones included). Derefs to its path.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `asdf-hdf5-{name}-{pid}`, emptied first.
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("asdf-hdf5-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
