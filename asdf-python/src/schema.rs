//! Schemas beyond the ASDF Standard's: `register_schema`, `register_tag` and `set_schema_source`,
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

/// Sets (or, with `None`, removes) the process-wide schema source: `source(uri)` gives the YAML
/// text (str or bytes) of a schema asdf-rs neither bundles nor has registered, or `None`; it is
/// asked once per URI, when a validation first needs that schema (the first time, possibly
/// once per thread when validators that refer to it are compiled in parallel). An exception in it is
/// reported as unraisable and counts as `None`.
#[pyfunction]
pub fn set_schema_source(source: Option<Py<PyAny>>) {
    let Some(source) = source else {
        asdf_core::schema::clear_schema_source();
        return;
    };
    asdf_core::schema::set_schema_source(move |uri: &str| {
        Python::attach(|py| {
            let text = match source.call1(py, (uri,)) {
                Ok(text) => text.into_bound(py),
                Err(e) => {
                    e.write_unraisable(py, Some(source.bind(py)));
                    return None;
                }
            };
            if text.is_none() {
                return None;
            }
            if let Ok(s) = text.extract::<String>() {
                return Some(s);
            }
            match text.extract::<Vec<u8>>().map(String::from_utf8) {
                Ok(Ok(s)) => Some(s),
                _ => {
                    let e = pyo3::exceptions::PyTypeError::new_err(format!(
                        "the schema source gave neither str nor UTF-8 bytes for {uri}"
                    ));
                    e.write_unraisable(py, Some(source.bind(py)));
                    None
                }
            }
        })
    })
}
