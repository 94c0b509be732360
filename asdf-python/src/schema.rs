//! Schemas beyond the ASDF Standard's: `register_schema` and `register_tag`, process-wide, for
//! `asdf_rs.converters` to validate the tags of python asdf's installed extensions (rad,
//! asdf-astropy, the transform and WCS schemas, stdatamodels) natively.

use pyo3::prelude::*;

use crate::errors::AsdfError;

/// Registers a YAML schema under `uri` (and its `id`), process-wide; a top-level `tag` in it
/// binds the schema to that tag. A schema registered again replaces the earlier one.
#[pyfunction]
pub fn register_schema(py: Python<'_>, uri: &str, yaml: &str) -> PyResult<()> {
    py.detach(|| asdf_core::schema::register_schema(uri, yaml))
        .map_err(|e| AsdfError::new_err(format!("schema {uri}: {e}")))
}

/// Makes nodes whose tag matches `tag_pattern` validate against the schema `schema_uri` too,
/// process-wide, whenever a tree is validated.
#[pyfunction]
pub fn register_tag(tag_pattern: &str, schema_uri: &str) {
    asdf_core::schema::register_tag(tag_pattern, schema_uri)
}
