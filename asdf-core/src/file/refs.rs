//! `$ref` resolution (JSON pointers within the file and into other files) and relative URIs.

use std::sync::Arc;

use super::AsdfFile;
use crate::{Error, Node, Result};

/// Where a `$ref` leads.
#[derive(Clone, Debug)]
pub struct RefTarget {
    /// The file holding the target: `None` for the referring file itself.
    pub file: Option<Arc<AsdfFile>>,
    /// The target node.
    pub node: Node,
    /// The target's JSON-pointer path inside its file.
    pub path: String,
}

/// Most `$ref` hops followed before giving up (guards against reference cycles).
const MAX_HOPS: usize = 64;

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
pub(super) fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The `$ref` string of a `{$ref: ...}` mapping.
pub(crate) fn ref_uri(node: &Node) -> Option<&str> {
    node.get("$ref")?.as_str()
}

pub(super) fn resolve(file: &AsdfFile, node: &Node, path: &str) -> Result<RefTarget> {
    let mut current_file: Option<Arc<AsdfFile>> = None;
    let mut current = node.clone();
    let mut current_path = path.to_string();
    for _ in 0..MAX_HOPS {
        let Some(uri) = ref_uri(&current) else {
            return Ok(RefTarget {
                file: current_file,
                node: current,
                path: current_path,
            });
        };
        let uri = uri.to_string();
        let err = |reason: &str| Error::Reference {
            path: current_path.as_str().into(),
            reference: uri.clone(),
            reason: reason.to_string(),
        };
        let (doc, fragment) = match uri.split_once('#') {
            Some((d, f)) => (d, f),
            None => (uri.as_str(), ""),
        };
        let pointer = percent_decode(fragment).ok_or_else(|| err("bad percent-encoding"))?;
        if !doc.is_empty() {
            let holder = current_file.as_deref().unwrap_or(file);
            current_file = Some(holder.external_file(&uri, &current_path)?);
        }
        let holder = current_file.as_deref().unwrap_or(file);
        let target = holder
            .tree()
            .pointer(&pointer)
            .ok_or_else(|| err("no node at that pointer"))?
            .clone();
        current = target;
        current_path = pointer;
    }
    Err(Error::Reference {
        path: path.into(),
        reference: ref_uri(node).unwrap_or_default().to_string(),
        reason: format!("more than {MAX_HOPS} hops (a reference cycle?)"),
    })
}
