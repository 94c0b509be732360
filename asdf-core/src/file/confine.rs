//! Which other files a file may lead the reader to: external array sources and `$ref`s to
//! other documents name files by URI, and a hostile file could name `/etc/passwd` or
//! `../../secret.asdf`. [`ExternalPolicy`] decides; every other file is opened through
//! [`Confinement::check`].

use std::path::{Component, Path, PathBuf};

use crate::{Error, Result};

/// Where external array sources and `$ref`s to other files may lead (see
/// [`OpenOptions::external_policy`](super::OpenOptions::external_policy)).
///
/// Paths are compared after `..` and symbolic links are resolved, so a link inside the folder
/// that points outside it is refused like the path it points to. URLs (`http://`, `s3://`, ...)
/// are always refused: the library reads local files only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExternalPolicy {
    /// No other file is opened: every external source or `$ref` to another file fails.
    None,
    /// Files inside the folder of the file being opened, subfolders included (for a file
    /// opened from memory, inside its base directory). The default.
    #[default]
    SameFolder,
    /// Files inside any of these folders (and their subfolders).
    Roots(Vec<PathBuf>),
    /// Any local path, absolute paths and parent traversal included. Only for files you trust.
    AnyPath,
}

/// The policy with its roots resolved once, at open.
#[derive(Clone, Debug)]
pub(crate) enum Confinement {
    None,
    Roots(Vec<PathBuf>),
    AnyPath,
}

impl Confinement {
    /// Resolves `policy` for a file whose relative URIs resolve against `base_dir`.
    /// A root that cannot be resolved (missing folder) admits nothing.
    pub(crate) fn new(policy: &ExternalPolicy, base_dir: &Path) -> Confinement {
        let resolve = |dir: &Path| {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            dir.canonicalize().ok()
        };
        match policy {
            ExternalPolicy::None => Confinement::None,
            ExternalPolicy::AnyPath => Confinement::AnyPath,
            ExternalPolicy::SameFolder => {
                Confinement::Roots(resolve(base_dir).into_iter().collect())
            }
            ExternalPolicy::Roots(roots) => {
                Confinement::Roots(roots.iter().filter_map(|r| resolve(r)).collect())
            }
        }
    }

    /// The policy an external file opened under this confinement is opened with: the same
    /// roots, so a chain of references never leaves the first file's folder.
    pub(crate) fn as_policy(&self) -> ExternalPolicy {
        match self {
            Confinement::None => ExternalPolicy::None,
            Confinement::AnyPath => ExternalPolicy::AnyPath,
            Confinement::Roots(r) => ExternalPolicy::Roots(r.clone()),
        }
    }

    /// The file that `uri` (from the tree at `path`) names, relative to `base_dir`, if this
    /// confinement admits it; otherwise [`Error::ExternalRefused`].
    pub(crate) fn check(&self, base_dir: &Path, uri: &str, path: &str) -> Result<PathBuf> {
        let refuse = |reason: String| Error::ExternalRefused {
            path: path.into(),
            reference: uri.to_string(),
            reason,
        };
        let target = uri_to_path(uri).map_err(|r| refuse(r.to_string()))?;
        self.check_path(base_dir, &target, uri, path)
    }

    /// The file `target` (relative to `base_dir`) if this confinement admits it; `uri` and
    /// `path` name it in errors ([`Confinement::check`] after the URI became a path).
    fn check_path(&self, base_dir: &Path, target: &Path, uri: &str, path: &str) -> Result<PathBuf> {
        let refuse = |reason: String| Error::ExternalRefused {
            path: path.into(),
            reference: uri.to_string(),
            reason,
        };
        let roots = match self {
            Confinement::None => {
                return Err(refuse(
                    "the open options allow no other file (ExternalPolicy::None)".into(),
                ))
            }
            Confinement::AnyPath => return Ok(base_dir.join(target)),
            Confinement::Roots(roots) => roots,
        };
        if target.is_absolute() {
            return Err(refuse(
                "absolute paths are refused unless the open options allow any path".into(),
            ));
        }
        let joined = base_dir.join(target);
        let resolved = match joined.canonicalize() {
            Ok(p) => p,
            // A file that does not exist is not a way out; report it as such (after the
            // lexical check, so a missing `../x` still reads as a refusal).
            Err(e) => {
                if escapes_lexically(target) {
                    return Err(refuse("it leads outside the allowed folder".into()));
                }
                return Err(Error::External {
                    source: Box::new(Error::io(Some(&joined), e)),
                    file: joined,
                });
            }
        };
        if roots.iter().any(|r| resolved.starts_with(r)) {
            Ok(resolved)
        } else {
            Err(refuse(format!(
                "it resolves to {}, outside the allowed folder{} ({})",
                resolved.display(),
                if roots.len() == 1 { "" } else { "s" },
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }
}

/// The file `relative` names inside the folder `root` (subfolders included, after `..` and
/// symbolic links are resolved), as external array sources are confined by
/// [`ExternalPolicy::SameFolder`]: [`Error::ExternalRefused`] when it leads outside (an
/// absolute path, `..` above `root`, a link pointing out), [`Error::External`] when it does
/// not exist. `asdftool view` serves only the files this admits. (For the asdf-rs crates,
/// through `asdf_core::unstable`: without that feature nothing here calls it.)
#[cfg(any(test, feature = "unstable-internals"))]
pub fn confined_path(root: &Path, relative: &Path) -> Result<PathBuf> {
    let text = relative.to_string_lossy();
    Confinement::new(&ExternalPolicy::SameFolder, root).check_path(root, relative, &text, "")
}

/// Whether a relative path climbs above its starting folder (`..` beyond the depth reached).
fn escapes_lexically(p: &Path) -> bool {
    let mut depth = 0usize;
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if depth == 0 {
                    return true;
                }
                depth -= 1;
            }
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return true,
        }
    }
    false
}

/// The local path a URI names: relative references (`data0000.asdf`, `sub/x.asdf`), `file:`
/// URIs and absolute paths; the fragment is dropped and `%XX` decoded. URLs with any other
/// scheme are refused.
pub(crate) fn uri_to_path(uri: &str) -> std::result::Result<PathBuf, &'static str> {
    let doc = uri.split('#').next().unwrap_or("");
    let local = match doc.strip_prefix("file:") {
        // `file:///abs`, `file://localhost/abs`
        Some(rest) => match rest.strip_prefix("//") {
            Some(auth_path) => {
                let (host, p) = auth_path.split_at(auth_path.find('/').unwrap_or(auth_path.len()));
                if !(host.is_empty() || host == "localhost") {
                    return Err("file URIs naming another host are refused");
                }
                p
            }
            None => rest,
        },
        None => {
            if has_scheme(doc) {
                return Err("URLs are refused: only local files are read");
            }
            doc
        }
    };
    if local.is_empty() {
        return Err("the URI names no file");
    }
    let decoded = super::refs::percent_decode(local).ok_or("bad percent-encoding")?;
    if decoded.contains('\0') {
        return Err("the path holds a NUL byte");
    }
    Ok(PathBuf::from(decoded))
}

/// RFC 3986 scheme: a letter, then letters, digits, `+`, `-`, `.`, then `:`. A single letter
/// followed by `:` is also taken as a scheme (a Windows drive is not a relative path either).
fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_become_paths_or_are_refused() {
        assert_eq!(
            uri_to_path("data0000.asdf").unwrap(),
            Path::new("data0000.asdf")
        );
        assert_eq!(
            uri_to_path("sub/x.asdf#/a").unwrap(),
            Path::new("sub/x.asdf")
        );
        assert_eq!(
            uri_to_path("file:x%20y.asdf").unwrap(),
            Path::new("x y.asdf")
        );
        // absolute paths, in a file URI (with or without `localhost`) or bare, stay absolute
        // (the caller's policy then refuses them)
        let abs = std::env::temp_dir().join("outside.asdf");
        let text = abs.to_str().unwrap();
        assert!(abs.is_absolute());
        for uri in [
            format!("file://{text}"),
            format!("file://localhost{text}"),
            text.to_string(),
        ] {
            assert_eq!(uri_to_path(&uri).unwrap(), abs, "{uri}");
        }
        // each refused for its own reason (a refusal for another reason would hide a rule
        // that no longer holds)
        let url = "URLs are refused: only local files are read";
        for (bad, why) in [
            ("http://example.com/x.asdf", url),
            ("https://example.com/x.asdf", url),
            ("s3://bucket/key.asdf", url),
            ("c:x.asdf", url),
            (
                "file://otherhost/x.asdf",
                "file URIs naming another host are refused",
            ),
            ("", "the URI names no file"),
            ("#/frag", "the URI names no file"),
            ("file://", "the URI names no file"),
            ("x%2", "bad percent-encoding"),
            ("x%00y", "the path holds a NUL byte"),
        ] {
            assert_eq!(uri_to_path(bad), Err(why), "{bad:?}");
        }
    }

    #[test]
    fn confined_paths_stay_inside_their_folder() {
        let dir = std::env::temp_dir().join(format!("asdf-confined-{}", std::process::id()));
        let root = dir.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/in.asdf"), b"x").unwrap();
        std::fs::write(dir.join("out.asdf"), b"x").unwrap();
        let inside = confined_path(&root, Path::new("sub/../sub/in.asdf")).unwrap();
        assert_eq!(inside, root.join("sub/in.asdf").canonicalize().unwrap());
        let refused = |rel: &Path| {
            matches!(
                confined_path(&root, rel),
                Err(Error::ExternalRefused { .. })
            )
        };
        assert!(refused(Path::new("../out.asdf")));
        assert!(refused(Path::new("../missing.asdf")));
        assert!(refused(&dir.join("out.asdf")));
        assert!(matches!(
            confined_path(&root, Path::new("missing.asdf")),
            Err(Error::External { .. })
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("out.asdf"), root.join("link.asdf")).unwrap();
            assert!(refused(Path::new("link.asdf")));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lexical_escapes() {
        assert!(escapes_lexically(Path::new("../x")));
        assert!(escapes_lexically(Path::new("a/../../x")));
        assert!(escapes_lexically(&std::env::temp_dir().join("x")));
        assert!(!escapes_lexically(Path::new("a/../x")));
        assert!(!escapes_lexically(Path::new("./a/b")));
    }
}
