//! Relative references (external array sources, `$ref`s) of a file in a store: opened from the
//! same store, confined to the folder (prefix) of the file first opened.

use std::sync::Arc;

use asdf_core::{ExternalOpenError, ExternalOpener, ExternalSource};
use object_store::path::Path;
use object_store::ObjectStore;

use crate::{StoreError, StoreOptions, StoreReader};

/// Opens the references of one file: `dir` is that file's folder, `root` the folder that
/// references may not leave (unless [`StoreOptions::allow_escape`]).
pub(crate) struct StoreOpener {
    pub store: Arc<dyn ObjectStore>,
    /// `scheme://authority` of the store, for names in messages.
    pub base: String,
    pub root: Vec<String>,
    pub dir: Vec<String>,
    pub opts: StoreOptions,
}

/// The folder of an object path, as segments.
pub(crate) fn folder_of(path: &Path) -> Vec<String> {
    let mut parts: Vec<String> = path.parts().map(|p| p.as_ref().to_string()).collect();
    parts.pop();
    parts
}

/// `uri` resolved against `dir`: segments of the object's path, or why it is refused.
fn resolve(
    dir: &[String],
    root: &[String],
    uri: &str,
    allow_escape: bool,
) -> Result<Vec<String>, String> {
    if uri.contains("://") || uri.starts_with('/') || uri.contains(':') {
        return Err("only relative references within the same store are followed".into());
    }
    if uri.contains('?') || uri.contains('\\') {
        return Err("a query or backslash in a relative reference".into());
    }
    let mut out: Vec<String> = dir.to_vec();
    for seg in uri.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if out.pop().is_none() {
                    return Err("it leads above the store's root".into());
                }
            }
            s => out.push(percent_decode(s)?),
        }
    }
    if out.is_empty() {
        return Err("it names no object".into());
    }
    if !allow_escape && !out.starts_with(root) {
        return Err(format!(
            "it leads outside the prefix {:?} of the file first opened",
            root.join("/")
        ));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape in {s:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    let text = String::from_utf8(out).map_err(|_| format!("{s:?} is not UTF-8"))?;
    if text.contains('/') || text == ".." || text == "." {
        return Err(format!(
            "{s:?} decodes to a path separator or a dot segment"
        ));
    }
    Ok(text)
}

impl ExternalOpener for StoreOpener {
    fn open(&self, uri: &str) -> Result<ExternalSource, ExternalOpenError> {
        let segs = resolve(&self.dir, &self.root, uri, self.opts.allow_escape)
            .map_err(ExternalOpenError::Refused)?;
        let path = Path::from_iter(segs.iter().map(String::as_str));
        let name = format!("{}/{}", self.base, path);
        let reader = StoreReader::from_store(self.store.clone(), path.clone(), &self.opts)
            .map_err(|e| {
                let kind = match &e {
                    StoreError::Store {
                        source: object_store::Error::NotFound { .. },
                        ..
                    } => std::io::ErrorKind::NotFound,
                    _ => std::io::ErrorKind::Other,
                };
                ExternalOpenError::Io(std::io::Error::new(kind, e))
            })?;
        Ok(ExternalSource {
            name,
            source: Arc::new(reader),
            opener: Arc::new(StoreOpener {
                store: self.store.clone(),
                base: self.base.clone(),
                root: self.root.clone(),
                dir: folder_of(&path),
                opts: self.opts.clone(),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn confinement() {
        let root = v(&["data", "run1"]);
        let ok = |u: &str| resolve(&root, &root, u, false);
        assert_eq!(ok("a.asdf").unwrap(), v(&["data", "run1", "a.asdf"]));
        assert_eq!(
            ok("./sub/../b.asdf").unwrap(),
            v(&["data", "run1", "b.asdf"])
        );
        assert_eq!(ok("x%20y.asdf").unwrap(), v(&["data", "run1", "x y.asdf"]));
        // each refusal for its own reason (a refusal for another reason would hide a rule
        // that no longer holds)
        let outside = "it leads outside the prefix \"data/run1\" of the file first opened";
        let other_store = "only relative references within the same store are followed";
        for (uri, why) in [
            ("../other/a.asdf", outside),
            ("..", outside),
            ("../../../../a.asdf", "it leads above the store's root"),
            ("/etc/passwd", other_store),
            ("file:///etc/passwd", other_store),
            ("s3://other/a.asdf", other_store),
            ("c:a.asdf", other_store),
            ("a.asdf?x=1", "a query or backslash in a relative reference"),
            (
                "sub\\a.asdf",
                "a query or backslash in a relative reference",
            ),
            (
                "%2e%2e/a.asdf",
                "\"%2e%2e\" decodes to a path separator or a dot segment",
            ),
            (
                "a%2fb",
                "\"a%2fb\" decodes to a path separator or a dot segment",
            ),
            ("%zz", "bad percent escape in \"%zz\""),
            ("x%2", "bad percent escape in \"x%2\""),
            ("%ff.asdf", "\"%ff.asdf\" is not UTF-8"),
        ] {
            assert_eq!(ok(uri), Err(why.to_string()), "{uri:?}");
        }
        assert_eq!(
            resolve(&root, &root, "../other/a.asdf", true).unwrap(),
            v(&["data", "other", "a.asdf"])
        );
        assert_eq!(
            resolve(&[], &[], "./", false),
            Err("it names no object".to_string())
        );
        assert_eq!(
            resolve(&root, &root, "../../../a.asdf", true),
            Err("it leads above the store's root".to_string())
        );
    }

    /// The opener hands a refusal to asdf-core as `Refused` with the reason (not as an I/O
    /// error, which reads as a missing file), before asking the store for anything.
    #[test]
    fn the_opener_refuses_before_reading() {
        let store = Arc::new(object_store::memory::InMemory::new());
        let opener = StoreOpener {
            store: store.clone(),
            base: "memory://".into(),
            root: v(&["data", "run1"]),
            dir: v(&["data", "run1"]),
            opts: StoreOptions::default(),
        };
        // the object outside the prefix exists: only the confinement refuses it
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(store.put(
            &Path::from("data/other/a.asdf"),
            b"#ASDF 1.0.0\n".to_vec().into(),
        ))
        .unwrap();
        match opener.open("../other/a.asdf") {
            Err(ExternalOpenError::Refused(why)) => assert_eq!(
                why,
                "it leads outside the prefix \"data/run1\" of the file first opened"
            ),
            Err(e) => panic!("not a refusal: {e:?}"),
            Ok(s) => panic!("opened {}", s.name),
        }
        // a missing object inside the prefix is not a refusal: an I/O error, NotFound
        match opener.open("missing.asdf") {
            Err(ExternalOpenError::Io(e)) => {
                assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}")
            }
            Err(e) => panic!("not an I/O error: {e:?}"),
            Ok(s) => panic!("opened {}", s.name),
        }
    }
}
