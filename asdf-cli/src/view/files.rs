//! What `view` serves: the folder (or the one file), the files a request may name inside it,
//! and the files opened so far.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use asdf_core::AsdfFile;

use super::http::HttpError;

/// Files kept open between requests (the page asks for a file's tree, then its arrays).
const KEEP_OPEN: usize = 8;
/// Subfolders walked below the served folder when listing it.
const MAX_DEPTH: usize = 8;
/// Files listed at most (a folder with more says so).
const MAX_LISTED: usize = 5000;
/// HDF5 and Blosc2 files larger than this are not converted to be viewed (the page says to
/// convert them first).
const MAX_CONVERTED: u64 = 512 << 20;

/// The formats the page lists and opens, by extension (case-insensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Asdf,
    Fits,
    Hdf5,
    Blosc2,
}

impl Kind {
    /// The format a file name says, or `None` for files the page does not list.
    pub fn of(path: &Path) -> Option<Kind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "asdf" => Kind::Asdf,
            "fits" | "fit" | "fts" => Kind::Fits,
            "h5" | "hdf5" | "he5" | "nc" => Kind::Hdf5,
            "b2nd" | "b2frame" => Kind::Blosc2,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Asdf => "asdf",
            Kind::Fits => "fits",
            Kind::Hdf5 => "hdf5",
            Kind::Blosc2 => "blosc2",
        }
    }
}

/// A file listed for the page: its path relative to the served folder (`/`-separated), format
/// and size.
pub struct Listed {
    pub rel: String,
    pub kind: Kind,
    pub size: u64,
}

/// An opened file (for HDF5 and Blosc2, the ASDF file they were converted into).
pub struct Opened {
    pub file: AsdfFile,
    pub kind: Kind,
}

/// A temporary conversion, removed on drop: once the converted file is open (the open file
/// keeps its data readable), or when converting or opening fails.
struct Converted(PathBuf);

impl Drop for Converted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A file kept open: its path, modification time and size when opened, and the file.
type KeptOpen = (PathBuf, Option<SystemTime>, u64, Arc<Opened>);

/// What is served: a folder (every listed file inside it) or one file.
pub struct Served {
    access: crate::Access,
    /// The served folder, resolved (`..` and symbolic links).
    root: PathBuf,
    /// Serving one file: its name in `root`, the only name admitted.
    single: Option<String>,
    /// Files opened, newest last: (path, modification time, size, the file).
    open: Mutex<Vec<KeptOpen>>,
}

impl Served {
    /// What `target` (a file or a folder) serves; an error when it is neither.
    pub fn new(access: crate::Access, target: &Path) -> Result<Served, String> {
        let resolved = target
            .canonicalize()
            .map_err(|e| format!("{}: {e}", target.display()))?;
        let (root, single) = if resolved.is_dir() {
            (resolved, None)
        } else if resolved.is_file() {
            let name = resolved
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| format!("{}: the file name is not UTF-8", target.display()))?
                .to_string();
            let parent = resolved
                .parent()
                .ok_or_else(|| format!("{}: no folder", target.display()))?
                .to_path_buf();
            (parent, Some(name))
        } else {
            return Err(format!("{}: neither a file nor a folder", target.display()));
        };
        Ok(Served {
            access,
            root,
            single,
            open: Mutex::new(Vec::new()),
        })
    }

    /// The served name for the page's title: the file's name, or the folder's.
    pub fn title(&self) -> String {
        match &self.single {
            Some(name) => name.clone(),
            None => self.root.file_name().map_or_else(
                || self.root.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        }
    }

    /// Whether one file is served (not a folder).
    pub fn is_single(&self) -> bool {
        self.single.is_some()
    }

    /// The files the page lists: the one file, or the folder's files of the known formats
    /// (subfolders to [`MAX_DEPTH`], at most [`MAX_LISTED`]; the flag says the list was cut),
    /// sorted by path.
    pub fn list(&self) -> (Vec<Listed>, bool) {
        if let Some(name) = &self.single {
            let path = self.root.join(name);
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            let kind = Kind::of(&path).unwrap_or(Kind::Asdf);
            let one = Listed {
                rel: name.clone(),
                kind,
                size,
            };
            return (vec![one], false);
        }
        let mut out = Vec::new();
        let mut cut = false;
        let mut stack = vec![(self.root.clone(), String::new(), 0usize)];
        while let Some((dir, prefix, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                let rel = format!("{prefix}{name}");
                let Ok(ft) = entry.file_type() else { continue };
                if ft.is_dir() {
                    if depth < MAX_DEPTH {
                        stack.push((entry.path(), format!("{rel}/"), depth + 1));
                    }
                    continue;
                }
                let Some(kind) = Kind::of(Path::new(&name)) else {
                    continue;
                };
                // a link is listed only when it stays inside the folder
                if ft.is_symlink() && self.resolve(&rel).is_err() {
                    continue;
                }
                if out.len() >= MAX_LISTED {
                    cut = true;
                    break;
                }
                let size = std::fs::metadata(entry.path()).map_or(0, |m| m.len());
                out.push(Listed { rel, kind, size });
            }
        }
        out.sort_by(|a, b| a.rel.cmp(&b.rel));
        (out, cut)
    }

    /// The file a request names (`rel`, relative to the served folder): 403 when it leads
    /// outside, 404 when there is no such file (or, serving one file, any other name).
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, HttpError> {
        if rel.is_empty() {
            return Err(HttpError::bad_request("no file named"));
        }
        if let Some(name) = &self.single {
            if rel != name {
                return Err(HttpError::not_found(format!(
                    "{rel:?}: only {name:?} is served"
                )));
            }
        }
        let path =
            asdf_core::unstable::confined_path(&self.root, Path::new(rel)).map_err(
                |e| match e {
                    asdf_core::Error::ExternalRefused { .. } => {
                        HttpError::forbidden(format!("{rel:?} is outside the served folder"))
                    }
                    _ => HttpError::not_found(format!("{rel:?}: no such file")),
                },
            )?;
        if !path.is_file() {
            return Err(HttpError::not_found(format!("{rel:?} is not a file")));
        }
        Ok(path)
    }

    /// The file a request names, opened (or from the files kept open, unless it changed).
    pub fn open(&self, rel: &str) -> Result<Arc<Opened>, HttpError> {
        let path = self.resolve(rel)?;
        let meta =
            std::fs::metadata(&path).map_err(|e| HttpError::not_found(format!("{rel:?}: {e}")))?;
        let (mtime, len) = (meta.modified().ok(), meta.len());
        {
            let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, _, _, f)) = open
                .iter()
                .find(|(p, t, l, _)| *p == path && *t == mtime && *l == len)
            {
                return Ok(Arc::clone(f));
            }
        }
        let kind = Kind::of(&path).unwrap_or(Kind::Asdf);
        let unreadable = |e: String| HttpError::unprocessable(format!("{rel}: {e}"));
        let file = match kind {
            Kind::Asdf | Kind::Fits => self.access.open(&path).map_err(unreadable)?,
            Kind::Hdf5 | Kind::Blosc2 => {
                if len > MAX_CONVERTED {
                    return Err(HttpError::too_large(format!(
                        "{rel}: {len} bytes; the page converts HDF5 and Blosc2 files of at most {MAX_CONVERTED} bytes (asdftool convert it to ASDF first)"
                    )));
                }
                let tmp = Converted(temporary_asdf());
                convert(kind, &path, &tmp.0).map_err(unreadable)?;
                // a converted tree has no external sources: nothing opens the path again
                let file = self.access.open(&tmp.0).map_err(unreadable)?;
                drop(tmp);
                file
            }
        };
        let opened = Arc::new(Opened { file, kind });
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(p, ..)| *p != path);
        if open.len() >= KEEP_OPEN {
            open.remove(0);
        }
        open.push((path, mtime, len, Arc::clone(&opened)));
        Ok(opened)
    }
}

/// A fresh path for a converted file in the system's temporary folder.
fn temporary_asdf() -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("asdftool-view-{}-{n}.asdf", std::process::id()))
}

/// Converts an HDF5 or Blosc2 file to ASDF at `out`, as `asdftool convert` does (datasets
/// with no ASDF form left out).
fn convert(kind: Kind, input: &Path, out: &Path) -> Result<(), String> {
    let flags = crate::WriteFlags::default();
    match kind {
        #[cfg(feature = "hdf5")]
        Kind::Hdf5 => {
            let mut left_out = Vec::new();
            crate::hdf5::to_asdf(input, out, None, false, None, flags, &mut left_out).map(|_| ())
        }
        #[cfg(not(feature = "hdf5"))]
        Kind::Hdf5 => {
            let _ = (input, out, flags);
            Err("this asdftool was built without HDF5 (feature hdf5)".into())
        }
        Kind::Blosc2 => crate::blosc2::to_asdf(input, out, None, None, flags).map(|_| ()),
        Kind::Asdf | Kind::Fits => Ok(()),
    }
}
