//! The tagged YAML tree: parsing YAML 1.1 into [`Node`]s with PyYAML SafeLoader resolution.
//!
//! CONTRACT (owned by the yaml helper).

mod node;

pub use node::*;

/// Errors of the YAML layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum YamlError {
    /// Placeholder until implemented.
    #[error("not implemented")]
    Todo,
}
