//! Python bindings of asdf-rs: the `asdf_rs` python package (built with maturin).
//!
//! ```python
//! import asdf_rs, numpy as np
//! with asdf_rs.open("observation.asdf") as f:
//!     sci = np.asarray(f.tree["sci"])    # a view of the memory map when the block allows
//! asdf_rs.write("out.asdf", {"sci": sci, "meta": {"exposure": 12.5}}, compression="zlib")
//! ```
//!
//! The GIL is released while files are read, decoded, verified, validated and written, so
//! several python threads can read arrays at once.

// No unsafe code of our own: the bindings use pyo3's safe API only. pyo3's macros compile
// under `forbid(unsafe_code)` (pyo3 supports and tests this, see its changelog, #4574).
#![forbid(unsafe_code)]

use pyo3::prelude::*;

mod array;
mod codecs;
mod errors;
mod file;
mod preview;
mod scalar;
mod schema;
mod tasks;
mod tree;
mod write;

pub use array::{MappedData, NDArray};
pub use file::PyAsdfFile;
pub use tree::Tagged;

/// The native module, `asdf_rs._asdf_rs` (the package `asdf_rs` re-exports it).
#[pymodule]
fn _asdf_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(file::open, m)?)?;
    m.add_function(wrap_pyfunction!(write::write, m)?)?;
    m.add_function(wrap_pyfunction!(write::convert, m)?)?;
    m.add_function(wrap_pyfunction!(preview::preview, m)?)?;
    m.add_function(wrap_pyfunction!(schema::register_schema, m)?)?;
    m.add_function(wrap_pyfunction!(schema::register_tag, m)?)?;
    m.add_function(wrap_pyfunction!(schema::set_schema_source, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::decode, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::strided, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::inline, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::swap, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::fits_scale, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::fits_table_rows, m)?)?;
    m.add_function(wrap_pyfunction!(codecs::chain, m)?)?;
    tasks::register(m)?;
    m.add_class::<file::PyAsdfFile>()?;
    m.add_class::<array::NDArray>()?;
    m.add_class::<array::MappedData>()?;
    m.add_class::<tree::Tagged>()?;
    m.add("AsdfError", py.get_type::<errors::AsdfError>())?;
    m.add("ValidationError", py.get_type::<errors::ValidationError>())?;
    m.add("ChecksumError", py.get_type::<errors::ChecksumError>())?;
    Ok(())
}
