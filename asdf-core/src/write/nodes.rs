//! Building tree nodes: the array node helpers of the array layer, and library metadata.

pub(crate) use crate::array::to_node::*;
use crate::yaml::Node;

/// A `core/software-1.0.0` node.
pub(crate) fn software(entries: Vec<(&str, Node)>) -> Node {
    flow(Some(&format!("{ASDF}core/software-1.0.0")), map(entries))
}
