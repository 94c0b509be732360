//! The schemas bundled with the library (embedded from `asdf-core/schemas/`), and which schema each tag
//! of each ASDF Standard version uses.
//!
//! The schemas are our own YAML renderings of every schema of the ASDF Standard (as the
//! `asdf_standard` python package 1.5.0 carries it): the metaschemas, core, fits, table, time,
//! transform, unit and wcs, with the standard's ids
//! (`http://stsci.edu/schemas/asdf/core/ndarray-1.1.0`). `$ref`s inside them are relative to
//! the schema's `id` (as in the standard); they all resolve to bundled schemas, except the
//! JSON Schema draft 4 metaschema ([`JSON_SCHEMA_DRAFT4`]) that the metaschemas build on, and
//! [`MISSING`], which the standard refers to but does not hold.
//!
//! The tag → schema map per standard version is the data file `asdf-core/schemas/versions.yaml`, parsed
//! once on first use.
//!
//! ```
//! use asdf_core::schema::bundled;
//! let id = bundled::schema_for_tag("1.6.0", "tag:stsci.edu:asdf/core/ndarray-1.1.0");
//! assert_eq!(id, Some("http://stsci.edu/schemas/asdf/core/ndarray-1.1.0"));
//! assert!(bundled::schema_text(id.unwrap_or_default()).is_some());
//! ```

use std::sync::OnceLock;

use crate::yaml::{parse, Node, YamlLimits};

/// Id of the JSON Schema draft 4 metaschema, which the bundled metaschemas reference but which
/// is not bundled here (JSON Schema implementations carry it).
pub const JSON_SCHEMA_DRAFT4: &str = "http://json-schema.org/draft-04/schema";

/// Schemas the standard's `wcs/step-1.1.0` and `wcs/step-1.2.0` refer to (`$ref`) but does not
/// hold (they live in the separate asdf-transform-schemas package). Validation takes each of
/// them as the empty schema, which accepts anything: python asdf, on reaching one, warns that
/// it cannot find the schema and stops checking the tagged node it was in, without an error.
pub const MISSING: &[&str] = &[
    "http://stsci.edu/schemas/asdf/transform/transform-1.1.0",
    "http://stsci.edu/schemas/asdf/transform/transform-1.2.0",
];

/// Id of the YAML Schema metaschema (draft-01), the `$schema` of every ASDF schema.
pub const YAML_SCHEMA_DRAFT01: &str = "http://stsci.edu/schemas/yaml-schema/draft-01";

/// Embeds `schemas/stsci.edu/<path>.yaml` under the id `http://stsci.edu/schemas/<path>`.
macro_rules! stsci {
    ($path:literal) => {
        (
            concat!("http://stsci.edu/schemas/", $path),
            include_str!(concat!("../../schemas/stsci.edu/", $path, ".yaml")),
        )
    };
}

/// Every bundled schema: (id, YAML text).
const SCHEMAS: &[(&str, &str)] = &[
    stsci!("yaml-schema/draft-01"),
    stsci!("asdf/asdf-schema-1.0.0"),
    stsci!("asdf/asdf-schema-1.1.0"),
    stsci!("asdf/core/asdf-1.0.0"),
    stsci!("asdf/core/asdf-1.1.0"),
    stsci!("asdf/core/column-1.0.0"),
    stsci!("asdf/core/complex-1.0.0"),
    stsci!("asdf/core/constant-1.0.0"),
    stsci!("asdf/core/datatype-1.0.0"),
    stsci!("asdf/core/extension_metadata-1.0.0"),
    stsci!("asdf/core/externalarray-1.0.0"),
    stsci!("asdf/core/history_entry-1.0.0"),
    stsci!("asdf/core/integer-1.0.0"),
    stsci!("asdf/core/integer-1.1.0"),
    stsci!("asdf/core/integer-1.2.0"),
    stsci!("asdf/core/ndarray-1.0.0"),
    stsci!("asdf/core/ndarray-1.1.0"),
    stsci!("asdf/core/ndarray-1.2.0"),
    stsci!("asdf/core/software-1.0.0"),
    stsci!("asdf/core/subclass_metadata-1.0.0"),
    stsci!("asdf/core/table-1.0.0"),
    stsci!("asdf/fits/fits-1.0.0"),
    stsci!("asdf/fits/fits-1.1.0"),
    stsci!("asdf/fits/fits-1.2.0"),
    stsci!("asdf/table/column-1.1.0"),
    stsci!("asdf/table/column-1.2.0"),
    stsci!("asdf/table/table-1.1.0"),
    stsci!("asdf/table/table-1.2.0"),
    stsci!("asdf/time/time-1.0.0"),
    stsci!("asdf/time/time-1.1.0"),
    stsci!("asdf/time/time-1.2.0"),
    stsci!("asdf/time/time-1.3.0"),
    stsci!("asdf/time/time-1.4.0"),
    stsci!("asdf/transform/domain-1.0.0"),
    stsci!("asdf/transform/transform-1.0.0"),
    stsci!("asdf/unit/defunit-1.0.0"),
    stsci!("asdf/unit/quantity-1.1.0"),
    stsci!("asdf/unit/quantity-1.2.0"),
    stsci!("asdf/unit/quantity-1.3.0"),
    stsci!("asdf/unit/unit-1.0.0"),
    stsci!("asdf/wcs/celestial_frame-1.0.0"),
    stsci!("asdf/wcs/celestial_frame-1.1.0"),
    stsci!("asdf/wcs/composite_frame-1.0.0"),
    stsci!("asdf/wcs/composite_frame-1.1.0"),
    stsci!("asdf/wcs/frame-1.0.0"),
    stsci!("asdf/wcs/frame-1.1.0"),
    stsci!("asdf/wcs/icrs_coord-1.1.0"),
    stsci!("asdf/wcs/spectral_frame-1.0.0"),
    stsci!("asdf/wcs/spectral_frame-1.1.0"),
    stsci!("asdf/wcs/step-1.0.0"),
    stsci!("asdf/wcs/step-1.1.0"),
    stsci!("asdf/wcs/step-1.2.0"),
    stsci!("asdf/wcs/wcs-1.0.0"),
    stsci!("asdf/wcs/wcs-1.1.0"),
    stsci!("asdf/wcs/wcs-1.2.0"),
];

/// The tag → schema map per standard version (`asdf-core/schemas/versions.yaml`).
const VERSIONS_YAML: &str = include_str!("../../schemas/versions.yaml");

/// The ASDF Standard versions the map covers, oldest first.
const STANDARDS: &[&str] = &[
    "1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0", "1.7.0",
];

/// The text (YAML) of the bundled schema with this id, e.g.
/// `http://stsci.edu/schemas/asdf/core/ndarray-1.1.0`. A trailing `#` (empty fragment) is
/// accepted.
pub fn schema_text(id: &str) -> Option<&'static str> {
    let id = id.strip_suffix('#').unwrap_or(id);
    SCHEMAS
        .iter()
        .find(|(key, _)| *key == id)
        .map(|(_, text)| *text)
}

/// The id of the schema that validates nodes carrying `tag` under ASDF Standard `standard`
/// (e.g. `"1.6.0"`); `None` when the standard has no schema for the tag.
pub fn schema_for_tag(standard: &str, tag: &str) -> Option<&'static str> {
    tags(standard).find(|(t, _)| *t == tag).map(|(_, id)| id)
}

/// Every (tag, schema id) pair of ASDF Standard `standard`, in tag order; empty for a standard
/// that is not in [`standards`].
pub fn tags(standard: &str) -> impl Iterator<Item = (&'static str, &'static str)> {
    let pairs: &'static [(String, &'static str)] = version_map()
        .iter()
        .find(|(s, _)| *s == standard)
        .map(|(_, pairs)| pairs.as_slice())
        .unwrap_or_default();
    pairs.iter().map(|(t, id)| (t.as_str(), *id))
}

/// Every bundled schema as (id, YAML text): the metaschemas first, then the core schemas,
/// then the others (fits, table, time, transform, unit, wcs).
pub fn all() -> impl Iterator<Item = (&'static str, &'static str)> {
    SCHEMAS.iter().copied()
}

/// The ASDF Standard versions the tag map covers (`"1.0.0"` to `"1.7.0"`), oldest first.
pub fn standards() -> &'static [&'static str] {
    STANDARDS
}

/// Per standard version, its (tag, bundled schema id) pairs.
type VersionMap = Vec<(&'static str, Vec<(String, &'static str)>)>;

/// The parsed `versions.yaml`, built once. Entries naming a standard outside [`STANDARDS`] or a
/// schema that is not bundled are dropped (the unit tests check that none are).
fn version_map() -> &'static VersionMap {
    static MAP: OnceLock<VersionMap> = OnceLock::new();
    MAP.get_or_init(|| parse_version_map(VERSIONS_YAML))
}

/// Reads `standards: {version: {tag: schema id}}`; anything malformed is skipped, never a
/// panic.
fn parse_version_map(text: &str) -> VersionMap {
    let Ok(doc) = parse(text.as_bytes(), &YamlLimits::default()) else {
        return Vec::new();
    };
    let Some(entries) = doc.root.get("standards").and_then(Node::as_map) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in entries {
        let Some(standard) = key
            .as_str()
            .and_then(|k| STANDARDS.iter().copied().find(|s| *s == k))
        else {
            continue;
        };
        let mut pairs: Vec<(String, &'static str)> = value
            .as_map()
            .unwrap_or_default()
            .iter()
            .filter_map(|(tag, id)| {
                let id = SCHEMAS.iter().find(|(k, _)| Some(*k) == id.as_str())?.0;
                Some((tag.as_str()?.to_owned(), id))
            })
            .collect();
        pairs.sort();
        out.push((standard, pairs));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: &str = "http://stsci.edu/schemas/asdf/core/";

    fn parsed(id: &str) -> Node {
        let text = schema_text(id).unwrap_or_else(|| panic!("{id} is not bundled"));
        parse(text.as_bytes(), &YamlLimits::default())
            .unwrap_or_else(|e| panic!("{id} does not parse: {e}"))
            .root
    }

    /// Resolves a `$ref` against the id of the schema holding it (RFC 3986 merge and dot
    /// segment removal, enough for the forms the schemas use): (document, fragment).
    fn resolve(base: &str, reference: &str) -> (String, String) {
        let (doc, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        if doc.is_empty() {
            return (base.to_owned(), fragment.to_owned());
        }
        if doc.contains("://") {
            return (doc.to_owned(), fragment.to_owned());
        }
        let (scheme_host, path) = base
            .split_once("://")
            .map(|(s, rest)| {
                let slash = rest.find('/').unwrap_or(rest.len());
                (format!("{s}://{}", &rest[..slash]), &rest[slash..])
            })
            .expect("absolute base");
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let mut segments: Vec<&str> = Vec::new();
        let joined = format!("{dir}{doc}");
        for seg in joined.split('/') {
            match seg {
                "." => {}
                ".." => {
                    segments.pop();
                }
                s => segments.push(s),
            }
        }
        (
            format!("{scheme_host}{}", segments.join("/")),
            fragment.to_owned(),
        )
    }

    /// Every `$ref` value in a schema, with the JSON pointer of the mapping holding it.
    fn refs(schema: &Node) -> Vec<(String, String)> {
        let mut out = Vec::new();
        schema.walk(|path, node| {
            if let Some(r) = node.get("$ref") {
                let r = r
                    .as_str()
                    .unwrap_or_else(|| panic!("non-string $ref at {path}"));
                out.push((path.to_owned(), r.to_owned()));
            }
        });
        out
    }

    #[test]
    fn resolve_handles_the_reference_forms() {
        let base = "http://stsci.edu/schemas/asdf/core/asdf-1.0.0";
        assert_eq!(
            resolve(base, "software-1.0.0"),
            (format!("{CORE}software-1.0.0"), String::new())
        );
        assert_eq!(
            resolve(base, "../fits/fits-1.0.0"),
            (
                "http://stsci.edu/schemas/asdf/fits/fits-1.0.0".into(),
                String::new()
            )
        );
        assert_eq!(
            resolve(base, "#/definitions/x"),
            (base.into(), "/definitions/x".into())
        );
        assert_eq!(
            resolve(
                base,
                "http://json-schema.org/draft-04/schema#/definitions/stringArray"
            ),
            (JSON_SCHEMA_DRAFT4.into(), "/definitions/stringArray".into())
        );
    }

    #[test]
    fn every_schema_parses_and_its_id_is_its_key() {
        assert_eq!(all().count(), 55);
        for (id, _) in all() {
            let root = parsed(id);
            assert_eq!(root.get("id").and_then(Node::as_str), Some(id), "{id}");
            assert!(root.as_map().is_some(), "{id}: root is not a mapping");
            assert!(
                root.get("title").and_then(Node::as_str).is_some(),
                "{id}: no title"
            );
        }
    }

    #[test]
    fn ids_are_unique_and_mirror_the_file_layout() {
        let mut ids: Vec<&str> = all().map(|(id, _)| id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SCHEMAS.len());
        // Every YAML file under schemas/stsci.edu is bundled, under the id its path gives.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/stsci.edu");
        let mut files = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("schemas dir") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml") {
                    let rel = path.strip_prefix(&root).expect("under root");
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    let id = format!("http://stsci.edu/schemas/{}", rel.trim_end_matches(".yaml"));
                    let text = std::fs::read_to_string(&path).expect("readable");
                    assert_eq!(schema_text(&id), Some(text.as_str()), "{id}");
                    files.push(id);
                }
            }
        }
        assert_eq!(files.len(), SCHEMAS.len(), "{files:?}");
    }

    #[test]
    fn metaschema_declarations() {
        for (id, _) in all() {
            let schema = parsed(id)
                .get("$schema")
                .and_then(Node::as_str)
                .map(str::to_owned);
            let expected = if id.starts_with("http://stsci.edu/schemas/asdf/")
                && !id.contains("/asdf-schema-")
            {
                YAML_SCHEMA_DRAFT01
            } else {
                JSON_SCHEMA_DRAFT4
            };
            assert_eq!(schema.as_deref(), Some(expected), "{id}");
        }
    }

    #[test]
    fn every_ref_resolves_to_a_bundled_schema_and_fragment() {
        let mut checked = 0;
        let mut missing = 0;
        for (id, _) in all() {
            for (path, reference) in refs(&parsed(id)) {
                let (doc, fragment) = resolve(id, &reference);
                if doc == JSON_SCHEMA_DRAFT4 {
                    assert!(
                        fragment.is_empty() || fragment == "/definitions/stringArray",
                        "{id}{path}: {reference}"
                    );
                    continue;
                }
                if MISSING.contains(&doc.as_str()) {
                    missing += 1;
                    continue;
                }
                assert!(
                    schema_text(&doc).is_some(),
                    "{id} at {path}: $ref {reference} -> {doc} is not bundled"
                );
                assert!(
                    parsed(&doc).pointer(&fragment).is_some(),
                    "{id} at {path}: $ref {reference}: no {fragment} in {doc}"
                );
                checked += 1;
            }
        }
        assert!(checked > 200, "only {checked} refs seen");
        // step-1.1.0 and step-1.2.0, one each
        assert_eq!(missing, 2);
    }

    #[test]
    fn standards_list_matches_the_data_file() {
        let doc = parse(VERSIONS_YAML.as_bytes(), &YamlLimits::default()).expect("parses");
        let keys: Vec<&str> = doc
            .root
            .get("standards")
            .and_then(Node::as_map)
            .expect("standards mapping")
            .iter()
            .map(|(k, _)| k.as_str().expect("string key"))
            .collect();
        assert_eq!(keys, standards());
        assert_eq!(version_map().len(), standards().len());
    }

    #[test]
    fn every_mapped_tag_names_a_bundled_schema() {
        let doc = parse(VERSIONS_YAML.as_bytes(), &YamlLimits::default()).expect("parses");
        let mut n = 0;
        for (standard, map) in doc
            .root
            .get("standards")
            .and_then(Node::as_map)
            .expect("map")
        {
            let standard = standard.as_str().expect("string");
            let map = map.as_map().expect("tag mapping");
            assert_eq!(
                tags(standard).count(),
                map.len(),
                "{standard}: entries dropped"
            );
            for (tag, id) in map {
                let (tag, id) = (tag.as_str().expect("tag"), id.as_str().expect("id"));
                assert!(schema_text(id).is_some(), "{standard}: {tag} -> {id}");
                assert_eq!(schema_for_tag(standard, tag), Some(id));
                n += 1;
            }
        }
        // the tags of the core manifests 1.0.0 to 1.7.0
        assert_eq!(n, 17 + 19 + 20 + 22 + 23 + 17 + 9 + 9);
    }

    #[test]
    fn tag_fields_agree_with_the_map() {
        for standard in standards() {
            for (tag, id) in tags(standard) {
                let schema = parsed(id);
                // A schema that names its tag must name this one.
                if let Some(t) = schema.get("tag") {
                    assert_eq!(t.as_str(), Some(tag), "{id} under {standard}");
                }
                // Tag and schema carry the same name and version:
                // tag:stsci.edu:asdf/core/X-V validated by http://stsci.edu/schemas/asdf/core/X-V.
                let tail = tag.strip_prefix("tag:stsci.edu:asdf/").expect("stsci tag");
                assert_eq!(
                    id,
                    format!("http://stsci.edu/schemas/asdf/{tail}"),
                    "{standard}"
                );
            }
        }
    }

    #[test]
    fn map_follows_the_standard() {
        let nd = |s| schema_for_tag(s, "tag:stsci.edu:asdf/core/ndarray-1.1.0");
        assert_eq!(
            nd("1.6.0"),
            Some("http://stsci.edu/schemas/asdf/core/ndarray-1.1.0")
        );
        assert_eq!(nd("1.5.0"), None);
        assert_eq!(
            schema_for_tag("1.5.0", "tag:stsci.edu:asdf/core/ndarray-1.0.0"),
            Some("http://stsci.edu/schemas/asdf/core/ndarray-1.0.0")
        );
        assert_eq!(
            schema_for_tag("1.6.0", "tag:stsci.edu:asdf/core/ndarray-1.0.0"),
            None
        );
        // asdf-1.1.0 arrives with standard 1.2.0, integer and externalarray with 1.3.0.
        let root = |s| schema_for_tag(s, "tag:stsci.edu:asdf/core/asdf-1.1.0");
        assert_eq!(root("1.1.0"), None);
        assert!(root("1.2.0").is_some());
        assert!(schema_for_tag("1.1.0", "tag:stsci.edu:asdf/core/asdf-1.0.0").is_some());
        let int = |s, v: &str| schema_for_tag(s, &format!("tag:stsci.edu:asdf/core/integer-{v}"));
        assert_eq!(int("1.2.0", "1.0.0"), None);
        assert!(int("1.3.0", "1.0.0").is_some());
        assert!(int("1.6.0", "1.1.0").is_some());
        assert_eq!(int("1.6.0", "1.0.0"), None);
        assert!(schema_for_tag("1.2.0", "tag:stsci.edu:asdf/core/externalarray-1.0.0").is_none());
        assert!(schema_for_tag("1.3.0", "tag:stsci.edu:asdf/core/externalarray-1.0.0").is_some());
        // 1.7.0 (python asdf's unstable core manifest): ndarray-1.2.0 and integer-1.2.0
        // replace the 1.1.0 tags, the other core tags are 1.6.0's.
        let nd12 = "tag:stsci.edu:asdf/core/ndarray-1.2.0";
        assert_eq!(
            schema_for_tag("1.7.0", nd12),
            Some("http://stsci.edu/schemas/asdf/core/ndarray-1.2.0")
        );
        assert_eq!(schema_for_tag("1.6.0", nd12), None);
        assert_eq!(nd("1.7.0"), None);
        assert!(int("1.7.0", "1.2.0").is_some());
        assert_eq!(int("1.7.0", "1.1.0"), None);
        assert_eq!(int("1.6.0", "1.2.0"), None);
        assert_eq!(
            tags("1.7.0")
                .filter(|(t, _)| !t.contains("/ndarray-") && !t.contains("/integer-"))
                .collect::<Vec<_>>(),
            tags("1.6.0")
                .filter(|(t, _)| !t.contains("/ndarray-") && !t.contains("/integer-"))
                .collect::<Vec<_>>()
        );
        // Unknown standard or tag.
        assert_eq!(
            schema_for_tag("1.8.0", "tag:stsci.edu:asdf/core/software-1.0.0"),
            None
        );
        assert_eq!(
            schema_for_tag("1.6.0", "tag:stsci.edu:asdf/core/table-1.0.0"),
            None
        );
        // The astronomy tags: in the core manifests up to 1.5.0 (wcs up to 1.4.0), in none
        // from 1.6.0 (python asdf validates them only with asdf-astropy installed).
        let icrs = "tag:stsci.edu:asdf/wcs/icrs_coord-1.1.0";
        assert_eq!(schema_for_tag("1.0.0", icrs), None);
        assert_eq!(
            schema_for_tag("1.1.0", icrs),
            Some("http://stsci.edu/schemas/asdf/wcs/icrs_coord-1.1.0")
        );
        assert!(schema_for_tag("1.4.0", icrs).is_some());
        assert_eq!(schema_for_tag("1.5.0", icrs), None);
        let unit = "tag:stsci.edu:asdf/unit/unit-1.0.0";
        assert!(schema_for_tag("1.5.0", unit).is_some());
        assert_eq!(schema_for_tag("1.6.0", unit), None);
        assert!(schema_for_tag("1.5.0", "tag:stsci.edu:asdf/core/table-1.0.0").is_some());
        assert_eq!(schema_for_tag("", ""), None);
    }

    #[test]
    fn validator_case_files_parse_and_name_bundled_schemas() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/schema");
        let mut named = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("tests/schema") {
            let path = entry.expect("dir entry").path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let text = std::fs::read(&path).expect("readable");
            let name = path.display().to_string();
            let doc = parse(&text, &YamlLimits::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .root;
            let standard = doc.get("standard").and_then(Node::as_str);
            assert!(standards().iter().any(|s| Some(*s) == standard), "{name}");
            let schema = doc.get("schema").expect("schema key");
            if let Some(id) = schema.as_str() {
                assert!(schema_text(id).is_some(), "{name}: {id} is not bundled");
                named.push(id.to_owned());
            } else {
                assert!(
                    schema.as_map().is_some(),
                    "{name}: schema is neither id nor mapping"
                );
            }
            let count = |k| doc.get(k).and_then(Node::as_seq).map_or(0, <[Node]>::len);
            assert!(count("valid") >= 3 && count("invalid") >= 4, "{name}");
        }
        named.sort();
        let mut ids: Vec<String> = all().map(|(id, _)| id.to_owned()).collect();
        ids.sort();
        assert_eq!(named, ids, "one case file per bundled schema");
    }

    #[test]
    fn every_schema_compiles() {
        // the references to MISSING schemas included (see `registry`)
        for (id, _) in all() {
            assert_eq!(crate::schema::check_schema(id), Ok(()), "{id}");
        }
    }

    #[test]
    fn lookup_by_id() {
        assert!(schema_text("http://stsci.edu/schemas/asdf/core/ndarray-1.1.0").is_some());
        assert!(schema_text("http://stsci.edu/schemas/asdf/core/ndarray-1.1.0#").is_some());
        assert!(schema_text("http://stsci.edu/schemas/asdf/core/ndarray-1.2.0").is_some());
        assert!(schema_text("http://stsci.edu/schemas/asdf/core/ndarray-1.3.0").is_none());
        assert!(schema_text(JSON_SCHEMA_DRAFT4).is_none());
        assert!(schema_text("").is_none());
    }

    #[test]
    fn malformed_version_data_gives_an_empty_map() {
        assert!(parse_version_map("standards: [").is_empty());
        assert!(parse_version_map("- 1").is_empty());
        assert!(parse_version_map("standards: 3").is_empty());
        let partial = parse_version_map(
            "standards:\n  \"1.6.0\":\n    a: http://stsci.edu/schemas/asdf/core/software-1.0.0\n    b: nowhere\n    c: [1]\n  \"9.9.9\": {}\n  \"1.5.0\": 7\n",
        );
        assert_eq!(
            partial,
            vec![
                (
                    "1.6.0",
                    vec![(
                        "a".to_owned(),
                        "http://stsci.edu/schemas/asdf/core/software-1.0.0"
                    )]
                ),
                ("1.5.0", vec![])
            ]
        );
    }
}
