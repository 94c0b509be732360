//! The tagged YAML tree: parsing YAML 1.1 into [`Node`]s with PyYAML SafeLoader resolution.
//!
//! [`parse`] reads the first YAML document of an ASDF tree with libyaml-safer's event parser
//! and builds the [`Node`] tree directly: `%TAG` handles expanded into full tag URIs, YAML
//! core tags (`!!str`, `!!int`, …) applied and dropped, other tags kept, anchors shared (an
//! alias is the same [`Node`]), merge keys (`<<`) flattened, plain scalars resolved by
//! [`resolve_plain`] exactly as python asdf (PyYAML `SafeLoader`) does.
//!
//! libyaml-safer reads only 10–20 MB/s, so the common subset of YAML that ASDF writers
//! produce goes through a hand-written fast path (`fast_parse.rs`) feeding the same node builder;
//! whatever it does not handle with certainty, and every error, is parsed by libyaml-safer.
//! Tests check that both paths build identical trees.
//!
//! ```
//! use asdf_core::yaml::{parse, YamlLimits};
//! let doc = parse(
//!     b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nn: 017\nok: yes\n...\n",
//!     &YamlLimits::default(),
//! )?;
//! assert_eq!(doc.root.tag(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
//! assert_eq!(doc.root.get("n").and_then(|n| n.as_i64()), Some(15));
//! assert_eq!(doc.root.get("ok").and_then(|n| n.as_bool()), Some(true));
//! # Ok::<(), asdf_core::yaml::YamlError>(())
//! ```

mod base64;
mod bigint;
mod build;
mod edit;
mod emit;
mod fast_parse;
pub(crate) mod hash;
mod keys;
mod node;
mod parse;
mod path;
pub(crate) mod pointer;
pub(crate) mod pytext;
mod resolve;
mod shared;
mod timestamp;

pub use edit::EditError;
pub use emit::{emit, EmitError, EmitOptions};
pub use node::*;
pub use parse::parse;
pub use path::{PathSegment, TreePath};
pub use resolve::resolve_plain;
pub use timestamp::timestamp_canonical;

/// Resource limits applied while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YamlLimits {
    /// Deepest nesting of sequences and mappings allowed.
    pub max_depth: usize,
    /// Budget for aliases: the sum, over every alias, of the number of nodes in the subtree it
    /// re-references (counted with nested aliases expanded). Protects against "billion
    /// laughs" documents whose expansion is exponential.
    pub max_alias_expansion: u64,
}

impl Default for YamlLimits {
    /// Depth 1000, alias expansion 10 000 000 nodes.
    fn default() -> Self {
        YamlLimits {
            max_depth: 1000,
            max_alias_expansion: 10_000_000,
        }
    }
}

/// A parsed YAML document.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The `%YAML` directive's version, if present.
    pub version: Option<(u32, u32)>,
    /// The `%TAG` directives as `(handle, prefix)`, in order.
    pub tag_directives: Vec<(String, String)>,
    /// The root node (null for an empty stream).
    pub root: Node,
}

/// Errors of the YAML layer. Lines and columns are 1-based, offsets are bytes from the start
/// of the text parsed; the errors of opening a file count from the start of the file (see
/// [`YamlError::shifted`]).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum YamlError {
    /// Malformed YAML (as libyaml reports it).
    #[error("yaml syntax error at line {line} column {column} (byte {offset}): {message}")]
    Syntax {
        /// libyaml's description of the problem.
        message: String,
        /// Line of the problem.
        line: u64,
        /// Column of the problem.
        column: u64,
        /// Byte offset of the problem.
        offset: u64,
    },
    /// The text is not valid UTF-8.
    #[error("yaml text is not valid utf-8 at byte {offset}")]
    NotUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: u64,
    },
    /// Sequences and mappings nest deeper than [`YamlLimits::max_depth`].
    #[error("yaml nesting deeper than {limit} at line {line}")]
    DepthExceeded {
        /// The limit.
        limit: usize,
        /// Line of the collection that went too deep.
        line: u64,
    },
    /// Aliases re-reference more nodes than [`YamlLimits::max_alias_expansion`].
    #[error("yaml aliases expand to more than {limit} nodes (at line {line})")]
    AliasBudgetExceeded {
        /// The limit.
        limit: u64,
        /// Line of the alias that exceeded it.
        line: u64,
    },
    /// An alias names no anchor defined before it.
    #[error("unknown yaml alias *{name} at line {line}")]
    UnknownAlias {
        /// The alias name.
        name: String,
        /// Line of the alias.
        line: u64,
    },
    /// An alias refers to a collection that contains it (a cycle, which the tree cannot
    /// hold).
    #[error("recursive yaml alias *{name} at line {line}")]
    RecursiveAlias {
        /// The alias name.
        name: String,
        /// Line of the alias.
        line: u64,
    },
    /// An anchor name is defined twice (PyYAML refuses this).
    #[error("duplicate yaml anchor &{name} at line {line}")]
    DuplicateAnchor {
        /// The anchor name.
        name: String,
        /// Line of the second definition.
        line: u64,
    },
    /// A scalar cannot be constructed as its (explicit or implicitly resolved) YAML type:
    /// `!!int abc`, bad `!!binary`, `2001-02-30`.
    #[error("invalid {tag} scalar {text:?} at line {line}")]
    InvalidScalar {
        /// Full tag of the type (`tag:yaml.org,2002:int`, …).
        tag: String,
        /// The scalar text.
        text: String,
        /// Line of the scalar.
        line: u64,
    },
    /// A YAML core tag on a node of the wrong kind or shape (`!!str [1]`, `!!map [1]`,
    /// `!!omap` that is not a sequence of one-pair mappings).
    #[error("invalid {tag} node at line {line}: {message}")]
    InvalidNode {
        /// The full tag.
        tag: String,
        /// What is wrong.
        message: String,
        /// Line of the node.
        line: u64,
    },
    /// A merge key (`<<`) whose value is not a mapping or a sequence of mappings.
    #[error("invalid merge at line {line}: expected a mapping or a sequence of mappings")]
    InvalidMerge {
        /// Line of the merge value.
        line: u64,
    },
    /// The stream holds more than one document (python asdf reads a single tree document).
    #[error("yaml stream holds more than one document (second starts at line {line})")]
    MultipleDocuments {
        /// Line where the second document starts.
        line: u64,
    },
}

impl YamlError {
    /// The same error with its positions moved for a text that starts `lines` lines and
    /// `bytes` bytes into a larger file (an ASDF file's tree follows its header lines).
    pub fn shifted(mut self, lines: u64, bytes: u64) -> YamlError {
        match &mut self {
            YamlError::Syntax { line, offset, .. } => {
                *line += lines;
                *offset += bytes;
            }
            YamlError::NotUtf8 { offset } => *offset += bytes,
            YamlError::DepthExceeded { line, .. }
            | YamlError::AliasBudgetExceeded { line, .. }
            | YamlError::UnknownAlias { line, .. }
            | YamlError::RecursiveAlias { line, .. }
            | YamlError::DuplicateAnchor { line, .. }
            | YamlError::InvalidScalar { line, .. }
            | YamlError::InvalidNode { line, .. }
            | YamlError::InvalidMerge { line }
            | YamlError::MultipleDocuments { line } => *line += lines,
        }
        self
    }
}

#[cfg(test)]
mod oracle_tests;

#[cfg(test)]
mod fast_parse_tests;
