//! The other files a file refers to (external array sources, `$ref`s to other files):
//! opened once each, through the [`ExternalPolicy`](super::ExternalPolicy)'s confinement or
//! an [`ExternalOpener`], and kept for the file's life.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::AsdfFile;
use crate::layout::ReadAt;
use crate::{Error, Result};

/// Opens the other files that a file refers to (external array sources, `$ref`s to other
/// files) when the file was opened from a source that is not a local path
/// ([`OpenOptions::open_source_with`](crate::file::OpenOptions::open_source_with)), such as an object in a store. The opener decides
/// which references it admits (its own confinement rule); the [`ExternalPolicy`](crate::file::ExternalPolicy) of the open
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

impl AsdfFile {
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
        // `External` names the file: not once more by `Error::File`
        let opened = options.open(&full).map_err(|e| Error::External {
            file: full.clone(),
            source: Box::new(e.into_without_file()),
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
                path: path.into(),
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
                path: path.into(),
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
}
