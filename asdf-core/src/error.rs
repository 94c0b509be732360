//! The crate's top-level error: every layer's error, plus what the file layer adds (which
//! block, which tree path, which external file).

use std::path::PathBuf;

use crate::array::ArrayError;
use crate::codec::CodecError;
use crate::layout::LayoutError;
use crate::yaml::{TreePath, YamlError};

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error of the crate, grouped by who is at fault.
///
/// Its message (`{}`) is one line that stands alone: what, where (byte offset, tree path,
/// file) and why, its causes included; `source()` still gives the cause to programs. `{:?}`
/// is the derived form (variant and fields), for programmers.
///
/// The errors are layered one way: the lower layers' errors ([`ArrayError`],
/// [`CodecError`], [`LayoutError`], [`YamlError`], ...) are held by the layers above them;
/// [`ConvertError`](crate::convert::ConvertError) (typed conversion) holds only those, and
/// this type, the reader's, holds them all. A failed array load in a typed read is
/// [`Error::Load`], not an `Error` inside a `ConvertError`. Variants that wrap an `Error` add
/// where it happened ([`Error::File`], [`Error::External`], [`Error::Load`]). Writing is
/// the layer above: [`WriteError`](crate::write::WriteError) holds this type (reading the
/// source file) and this type never holds a `WriteError`; every function that writes,
/// the one-call [`write`](crate::write()) and [`update_at`](crate::update_at) included,
/// returns a `WriteError`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system failed a read.
    #[error("i/o error on {}: {source}", path.as_ref().map_or_else(|| "<memory>".to_string(), |p| p.display().to_string()))]
    Io {
        /// The file, when known.
        path: Option<PathBuf>,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file's byte layout is malformed (header, blocks, index).
    #[error("malformed file layout: {0}")]
    Layout(#[from] LayoutError),
    /// The YAML tree is malformed or exceeds a limit.
    #[error("malformed YAML tree: {0}")]
    Yaml(#[from] YamlError),
    /// An ndarray node or its data is malformed, or the requested type does not match.
    #[error("{0}")]
    Array(#[from] ArrayError),
    /// The array at `path` cannot be converted as asked (another element type, a field
    /// it does not have, invalid characters).
    #[error("{path}: {source}")]
    Convert {
        /// Tree path of the ndarray.
        path: TreePath,
        /// Why.
        #[source]
        source: ArrayError,
    },
    /// A block failed to decompress (only this block is affected).
    #[error("block {block} at byte {offset}: cannot decode: {source}")]
    Codec {
        /// Block index in file order.
        block: usize,
        /// File offset of the block header.
        offset: u64,
        /// What the codec said.
        #[source]
        source: CodecError,
    },
    /// A block of an ASDF 0.1.0 file whose encoding (the draft's YAML encoding chain, or
    /// the 2014 encoding field) cannot be undone (only the arrays using this block fail).
    #[error("block {block} at byte {offset}: cannot undo its asdf 0.1.0 encoding: {source}")]
    LegacyEncoding {
        /// Block index in file order.
        block: usize,
        /// File offset of the block header.
        offset: u64,
        /// What is wrong.
        #[source]
        source: crate::file::legacy::LegacyEncodingError,
    },
    /// A block's stored MD5 matches neither its stored nor its decoded bytes.
    #[error(
        "block {block} at byte {offset}: checksum mismatch (stored {expected}, computed {actual})"
    )]
    Checksum {
        /// Block index in file order.
        block: usize,
        /// File offset of the block header.
        offset: u64,
        /// The MD5 in the block header, hex.
        expected: String,
        /// The MD5 computed over the stored bytes, hex.
        actual: String,
    },
    /// An ndarray names a block that the file does not have.
    #[error("{path}: source {source_index} names no block (the file has {count})")]
    NoSuchBlock {
        /// Tree path of the ndarray.
        path: TreePath,
        /// The `source` value.
        source_index: i64,
        /// Number of blocks in the file.
        count: usize,
    },
    /// A typed conversion (`FromAsdf`/`ToAsdf`) failed.
    #[error(transparent)]
    Typed(#[from] crate::convert::ConvertError),
    /// A typed read ([`AsdfFile::read_as`](crate::AsdfFile::read_as)) reached an array at
    /// `path` whose data the file failed to load.
    #[error("{path}: {}", crate::display_chain(&**source))]
    Load {
        /// Tree path of the ndarray.
        path: TreePath,
        /// The file's error.
        #[source]
        source: Box<Error>,
    },
    /// Nothing in the tree at this path.
    #[error("no node at tree path {path:?}")]
    NoSuchPath {
        /// The JSON-pointer path asked for.
        path: String,
    },
    /// A selection of part of an array does not fit it (or cannot be parsed).
    #[error("{path}: {source}")]
    Selection {
        /// Tree path of the array.
        path: TreePath,
        /// What is wrong with the selection.
        source: crate::array::SelectionError,
    },
    /// The file holds something this operation does not handle.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What is not supported.
        what: String,
    },
    /// A check inside the library failed: a bug, reported instead of a panic.
    #[error("internal error (please report): {0}")]
    Internal(String),
    /// The node at this path is not an ndarray.
    #[error("{path}: not an ndarray (tag {tag:?})")]
    NotAnArray {
        /// Tree path.
        path: TreePath,
        /// The node's tag.
        tag: Option<String>,
    },
    /// A `$ref` or external source could not be followed.
    #[error("{path}: cannot resolve reference {reference:?}: {reason}")]
    Reference {
        /// Tree path of the referring node.
        path: TreePath,
        /// The URI.
        reference: String,
        /// Why.
        reason: String,
    },
    /// An external array source or a `$ref` names a file that the open options'
    /// [`ExternalPolicy`](crate::ExternalPolicy) does not admit (outside the allowed folders,
    /// an absolute path, a URL). The file was not opened.
    #[error("{path}: refused to open {reference:?}: {reason}")]
    ExternalRefused {
        /// Tree path of the referring node.
        path: TreePath,
        /// The URI as written in the tree.
        reference: String,
        /// Why it was refused.
        reason: String,
    },
    /// Opening the file at `path` ([`OpenOptions::open`](crate::OpenOptions::open),
    /// [`AsdfFile::open`](crate::AsdfFile::open)) failed: every error of opening a file by its
    /// path is this one, naming the file, around what went wrong (its byte offsets or tree
    /// path), except [`Error::Io`], which names the file in its own `path`.
    /// [`Error::without_file`] gives the error inside.
    #[error("{}: {source}", path.display())]
    File {
        /// The file being opened, as the caller named it.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: Box<Error>,
    },
    /// An error inside an external file referred to by this one.
    #[error("in external file {}: {source}", file.display())]
    External {
        /// The external file.
        file: PathBuf,
        /// Its error.
        #[source]
        source: Box<Error>,
    },
    /// ASDF in FITS: the FITS structure is malformed, or an array whose source is a FITS HDU
    /// (`fits:SCI,1`) cannot be read. The message is one line and names the HDU and its byte
    /// offset; `path` is the tree path of the array (the root when opening failed).
    #[error("{}{error}", if path.is_root() { String::new() } else { format!("{path}: ") })]
    Fits {
        /// Tree path of the array, or the root.
        path: TreePath,
        /// What is wrong.
        error: crate::layout::fits::FitsError,
    },
    /// An asdf-zarr array (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`) whose metadata,
    /// chunk map or chunks are not what it says, or that uses what is not read here.
    #[error("{path}: {source}")]
    Zarr {
        /// Tree path of the zarr node.
        path: TreePath,
        /// What is wrong (boxed: it names chunks and codecs, and `Error` stays small).
        source: Box<crate::file::zarr_error::ZarrError>,
    },
    /// A configured limit was exceeded.
    #[error("limit exceeded: {what} is {found}, limit {limit}")]
    Limit {
        /// What was measured.
        what: &'static str,
        /// The limit.
        limit: u64,
        /// The value found.
        found: u64,
    },
    /// An edit of a tree named a place that is not there.
    #[error(transparent)]
    Edit(#[from] crate::yaml::EditError),
    /// The tree does not validate against its schemas (one line per problem). The problems are
    /// in the message, not also in `source()`, so a printed error chain lists each once.
    #[error("the tree does not validate:\n{0}")]
    Validation(crate::schema::ValidationErrors),
}

impl From<crate::schema::ValidationErrors> for Error {
    fn from(errors: crate::schema::ValidationErrors) -> Self {
        Error::Validation(errors)
    }
}

impl Error {
    pub(crate) fn io(path: Option<&std::path::Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.map(|p| p.to_path_buf()),
            source,
        }
    }

    /// An error of opening the file at `path`, naming it: an [`Error::Io`] with the path in
    /// its own field, anything else inside [`Error::File`].
    pub(crate) fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            Error::Io { path: None, source } => Error::io(Some(path), source),
            e @ (Error::Io { .. } | Error::File { .. }) => e,
            e => Error::File {
                path: path.to_path_buf(),
                source: Box::new(e),
            },
        }
    }

    /// What went wrong, without which file: the error inside an [`Error::File`], else this
    /// one. For matching on the kind of error whichever way the file was opened.
    ///
    /// ```
    /// use asdf_core::{AsdfFile, Error, LayoutError};
    /// let dir = std::env::temp_dir().join(format!("asdf-doc-without-file-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("cut.asdf");
    /// std::fs::write(&path, "#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1, 2]}\n")?;
    /// let err = AsdfFile::open(&path).unwrap_err();
    /// assert!(err.to_string().contains("cut.asdf"));
    /// assert!(matches!(
    ///     err.without_file(),
    ///     Error::Layout(LayoutError::TruncatedTree { offset: 12, .. })
    /// ));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn without_file(&self) -> &Error {
        match self {
            Error::File { source, .. } => source,
            e => e,
        }
    }

    /// [`Self::without_file`], by value.
    pub(crate) fn into_without_file(self) -> Error {
        match self {
            Error::File { source, .. } => *source,
            e => e,
        }
    }
}

/// Writes an error with all its causes on one line: `a: b: c`. A cause whose text the line
/// already holds is not repeated (the crate's errors put their cause in their own message,
/// and keep it as `source()` for programs).
pub fn display_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Node, Value};

    #[test]
    fn validation_problems_appear_once_in_a_printed_chain() {
        // core/software requires `name` and `version`: two problems
        let node = Node::tagged(
            "tag:stsci.edu:asdf/core/software-1.0.0",
            Value::Map(vec![(Node::str("author"), Node::str("me"))]),
        );
        let errors = crate::schema::validate_tree(&node, "1.6.0").unwrap_err();
        assert_eq!(errors.len(), 2, "{errors}");
        let err = Error::from(errors);
        assert!(matches!(err, Error::Validation(_)));
        let chain = display_chain(&err);
        for problem in ["name", "version"] {
            let lines = chain.lines().filter(|l| l.contains(problem)).count();
            assert_eq!(lines, 1, "{problem} in:\n{chain}");
        }
        assert!(
            chain.starts_with("the tree does not validate:\n"),
            "{chain}"
        );
    }
}
