//! `asdftool convert` between HDF5 (`.h5`, `.hdf5`, `.he5`, `.nc`) and ASDF.

use std::path::Path;

/// `x.h5` → `y.asdf`.
pub fn to_asdf(input: &Path, _output: &Path, _codec: Option<&str>) -> Result<String, String> {
    Err(format!(
        "{}: reading HDF5 is not supported yet",
        input.display()
    ))
}

/// `y.asdf` → `z.h5`.
pub fn from_asdf(
    _access: &crate::Access,
    _input: &Path,
    output: &Path,
    _codec: Option<&str>,
) -> Result<String, String> {
    Err(format!(
        "{}: writing HDF5 is not supported yet",
        output.display()
    ))
}
