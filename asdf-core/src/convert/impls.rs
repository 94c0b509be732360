//! [`ToAsdf`](super::ToAsdf) and [`FromAsdf`](super::FromAsdf) for std types, `ndarray`
//! arrays, complex numbers and [`Node`].

use crate::array::{self, DynArray, NdArrayMeta};
use crate::yaml::Node;

/// The inline ndarray node of `a` (used without a writer).
pub(super) fn inline_array_node(_a: &DynArray) -> crate::Result<Node> {
    Err(crate::Error::NoSuchPath {
        path: "inline arrays without a writer are not written yet".into(),
    })
}

/// Reads an inline ndarray node (used without a file).
pub(super) fn inline_array(node: &Node, path: &str) -> crate::Result<DynArray> {
    let meta = NdArrayMeta::from_node(node, path)?;
    Ok(array::from_inline(&meta, path)?)
}
