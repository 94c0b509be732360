//! `asdf_rs._decode`: one block's (or piece's) stored bytes decoded by asdf-core's codecs,
//! for the numcodecs codecs of `asdf_rs.codecs` (zarr reading `asdftool references`).

use std::str::FromStr;

use asdf_core::codec::Compression;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Decodes `data` stored with the codec named `label` (`zlib`, `bzp2`, `lz4` in python
/// asdf's framing, `zstd`, `lz4f`, `blsc`, `bsc2` (a Blosc2 frame), `bls2` (one Blosc2
/// chunk)) into exactly `size` bytes; `AsdfError` when the bytes are corrupt or decode to
/// another size. The GIL is released while decoding.
#[pyfunction]
#[pyo3(name = "_decode")]
pub fn decode<'py>(
    py: Python<'py>,
    label: &str,
    data: &[u8],
    size: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let codec = Compression::from_str(label)
        .map_err(|e| PyValueError::new_err(format!("{label:?}: {e}")))?;
    let decoded = py
        .detach(|| asdf_core::internals::decode(codec, data, size))
        .map_err(|e| crate::errors::AsdfError::new_err(format!("{label}: {e}")))?;
    Ok(PyBytes::new(py, &decoded))
}
