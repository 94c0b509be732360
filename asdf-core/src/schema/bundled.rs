//! The schemas bundled with the library (embedded from `schemas/`), and which schema each tag
//! of each ASDF Standard version uses.

/// The text (YAML) of the bundled schema with this id, e.g.
/// `http://stsci.edu/schemas/asdf/core/ndarray-1.1.0`.
pub fn schema_text(_id: &str) -> Option<&'static str> {
    None
}

/// The id of the schema that validates nodes carrying `tag` under ASDF Standard `standard`
/// (e.g. `"1.6.0"`); `None` when the standard has no schema for the tag.
pub fn schema_for_tag(_standard: &str, _tag: &str) -> Option<&'static str> {
    None
}
