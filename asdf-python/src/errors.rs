//! asdf-core errors as python exceptions, with the one-line messages asdftool prints.

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError};
use pyo3::{create_exception, PyErr};

create_exception!(
    asdf_rs,
    AsdfError,
    pyo3::exceptions::PyException,
    "A file could not be read or written: malformed, unsupported, or over a limit."
);
create_exception!(
    asdf_rs,
    ValidationError,
    AsdfError,
    "The tree does not validate against the schemas of its tags."
);
create_exception!(
    asdf_rs,
    ChecksumError,
    AsdfError,
    "A block's MD5 checksum does not match its bytes."
);

/// The python exception for an asdf-core error: `FileNotFoundError`/`PermissionError`/
/// `OSError` for I/O, `ValidationError`, `ChecksumError`, `IndexError` for a selection that
/// does not fit an array (as numpy), else `AsdfError`. The message is
/// the error and its causes on one line, as asdftool prints it.
pub(crate) fn to_py(err: asdf_core::Error) -> PyErr {
    let message = asdf_core::display_chain(&err);
    // an error of opening a file by path is `Error::File` around the kind
    match err.without_file() {
        asdf_core::Error::Io { source, .. } => io_error(source.kind(), message),
        asdf_core::Error::Validation(_) => ValidationError::new_err(message),
        asdf_core::Error::Checksum { .. } => ChecksumError::new_err(message),
        // as numpy: an index out of bounds, too many indices
        asdf_core::Error::Selection { .. } => pyo3::exceptions::PyIndexError::new_err(message),
        _ => AsdfError::new_err(message),
    }
}

/// The python exception for a write error.
pub(crate) fn write_to_py(err: asdf_core::WriteError) -> PyErr {
    let message = asdf_core::display_chain(&err);
    match &err {
        asdf_core::WriteError::Io(e) => io_error(e.kind(), message),
        asdf_core::WriteError::Invalid(_) => ValidationError::new_err(message),
        _ => AsdfError::new_err(message),
    }
}

pub(crate) fn io_error(kind: std::io::ErrorKind, message: String) -> PyErr {
    match kind {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}
