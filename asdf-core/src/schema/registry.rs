//! Where schemas come from (bundled, registered by the user) and the compiled validators,
//! cached per schema URI for the life of the process.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, RwLock};

use jsonschema::{Draft, Validator};
use serde_json::Value as JsonValue;

use super::instance::{to_json, AsdfJson};
use super::{bundled, keywords, SchemaError};
use crate::yaml::{parse, YamlLimits};

/// A compiled schema, or why it could not be compiled (kept so it is not retried).
pub(crate) type Compiled = Result<Arc<Validator<AsdfJson>>, SchemaError>;

/// Where schemas that are neither registered nor bundled come from (see
/// [`set_schema_source`](super::set_schema_source)).
pub(crate) type Source = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

#[derive(Default)]
struct State {
    /// User schemas by URI (and by their `id` when it differs).
    user: HashMap<String, Arc<JsonValue>>,
    /// User tags without wildcards and the schema URIs nodes with that tag validate against,
    /// in the order they were bound.
    exact_tags: HashMap<String, Vec<String>>,
    /// User tag patterns with wildcards and their schema URIs, in the order they were bound.
    tag_patterns: Vec<(String, String)>,
    /// Every (pattern, URI) pair bound, to keep each once.
    tag_set: HashSet<(String, String)>,
    /// The schema source, asked for URIs found nowhere else.
    source: Option<Source>,
    /// URIs the source did not have (not asked again until the source changes).
    source_missed: HashSet<String>,
    /// Parsed bundled schemas by id.
    bundled: HashMap<String, Arc<JsonValue>>,
    /// Compiled validators by schema URI.
    compiled: HashMap<String, Compiled>,
}

fn state() -> &'static RwLock<State> {
    static STATE: OnceLock<RwLock<State>> = OnceLock::new();
    STATE.get_or_init(|| RwLock::new(State::default()))
}

fn read() -> std::sync::RwLockReadGuard<'static, State> {
    state().read().unwrap_or_else(|e| e.into_inner())
}

fn write() -> std::sync::RwLockWriteGuard<'static, State> {
    state().write().unwrap_or_else(|e| e.into_inner())
}

/// The URI without its fragment.
fn base(uri: &str) -> &str {
    uri.split('#').next().unwrap_or(uri)
}

/// Parses a YAML schema into JSON; `$schema` at the root is dropped (ASDF schemas name the
/// YAML-schema metaschema there; the dialect is always Draft 4 with the ASDF keywords).
pub(crate) fn schema_json(uri: &str, yaml: &str) -> Result<JsonValue, SchemaError> {
    let doc = parse(yaml.as_bytes(), &YamlLimits::default()).map_err(|e| SchemaError::Yaml {
        uri: uri.to_string(),
        message: e.to_string(),
    })?;
    let mut json = to_json(&doc.root);
    match &mut json {
        JsonValue::Object(map) => {
            // `retain` keeps the order of the other keys also with serde_json's
            // `preserve_order` (which a downstream build may enable).
            map.retain(|k, _| k != "$schema");
        }
        JsonValue::Bool(_) => {}
        _ => {
            return Err(SchemaError::Invalid {
                uri: uri.to_string(),
                message: "a schema must be a mapping".into(),
            })
        }
    }
    Ok(json)
}

/// The schema document with this URI (fragment ignored): a user schema, else a bundled one.
pub(crate) fn lookup(uri: &str) -> Result<Arc<JsonValue>, SchemaError> {
    let key = base(uri);
    {
        let st = read();
        if let Some(s) = st.user.get(key) {
            return Ok(s.clone());
        }
        if let Some(s) = st.bundled.get(key) {
            return Ok(s.clone());
        }
    }
    if let Some(text) = bundled::schema_text(key) {
        let json = Arc::new(schema_json(key, text)?);
        write().bundled.insert(key.to_string(), json.clone());
        return Ok(json);
    }
    from_source(key)
}

/// Asks the schema source for `key` (no lock is held while it runs: it may take long, and
/// may look schemas up itself); what it gives is kept as a user schema.
fn from_source(key: &str) -> Result<Arc<JsonValue>, SchemaError> {
    let not_found = || SchemaError::NotFound {
        uri: key.to_string(),
    };
    let source = {
        let st = read();
        if st.source_missed.contains(key) {
            return Err(not_found());
        }
        st.source.clone()
    };
    let Some(source) = source else {
        return Err(not_found());
    };
    let text = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| source(key)))
        .ok()
        .flatten();
    let Some(text) = text else {
        let mut st = write();
        // only if the source asked is still the one set
        if st.source.as_ref().is_some_and(|s| Arc::ptr_eq(s, &source)) {
            st.source_missed.insert(key.to_string());
        }
        return Err(not_found());
    };
    let json = with_id(key, schema_json(key, &text)?);
    insert_user(&mut write(), key, &json);
    Ok(json)
}

/// The schema with an `id` (its `uri` when it declares none), ready to be shared.
fn with_id(uri: &str, mut json: JsonValue) -> Arc<JsonValue> {
    if id_of(&json).is_none() {
        if let JsonValue::Object(map) = &mut json {
            map.insert("id".into(), JsonValue::String(uri.to_string()));
        }
    }
    Arc::new(json)
}

fn id_of(json: &JsonValue) -> Option<&str> {
    json.get("id")
        .or_else(|| json.get("$id"))
        .and_then(JsonValue::as_str)
}

/// Keeps a user schema under `uri` and its `id`.
fn insert_user(st: &mut State, uri: &str, json: &Arc<JsonValue>) {
    st.user.insert(base(uri).to_string(), json.clone());
    if let Some(id) = id_of(json) {
        if base(id) != base(uri) {
            st.user.insert(base(id).to_string(), json.clone());
        }
    }
}

/// Registers a user schema under `uri` (and its `id`, when it has one that differs); returns
/// the schema as kept.
pub(crate) fn register(uri: &str, yaml: &str) -> Result<Arc<JsonValue>, SchemaError> {
    let json = with_id(uri, schema_json(uri, yaml)?);
    let mut st = write();
    insert_user(&mut st, uri, &json);
    // A compiled schema may have pulled in an earlier version through `$ref`.
    st.compiled.clear();
    Ok(json)
}

/// Sets (or, with `None`, removes) the schema source. Compiled schemas are dropped: one that
/// failed for want of a schema may compile now.
pub(crate) fn set_source(source: Option<Source>) {
    let mut st = write();
    st.source = source;
    st.source_missed.clear();
    st.compiled.clear();
}

/// Adds a user tag pattern → schema URI association.
pub(crate) fn register_tag(pattern: &str, uri: &str) {
    let mut st = write();
    if !st.tag_set.insert((pattern.to_string(), uri.to_string())) {
        return;
    }
    if pattern.contains('*') {
        st.tag_patterns.push((pattern.to_string(), uri.to_string()));
    } else {
        st.exact_tags
            .entry(pattern.to_string())
            .or_default()
            .push(uri.to_string());
    }
}

/// The user schema URIs whose tag pattern matches `tag`: those bound to the tag itself, then
/// those of matching wildcard patterns (a file's few distinct tags are looked up once per
/// validation, against thousands of bindings when python asdf's extensions are bound).
pub(crate) fn user_schemas_for_tag(tag: &str) -> Vec<String> {
    let st = read();
    let mut out = st.exact_tags.get(tag).cloned().unwrap_or_default();
    out.extend(
        st.tag_patterns
            .iter()
            .filter(|(p, _)| keywords::tag_matches(p, tag))
            .map(|(_, u)| u.clone()),
    );
    out
}

/// Whether any user tag pattern is registered.
pub(crate) fn has_user_tags() -> bool {
    !read().tag_set.is_empty()
}

/// Resolves `$ref`s: only schemas already known (bundled or registered); no network, no files.
struct Retriever;

impl jsonschema::Retrieve for Retriever {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<JsonValue, Box<dyn std::error::Error + Send + Sync>> {
        match lookup(uri.as_str()) {
            Ok(json) => Ok((*json).clone()),
            // referred to by the standard, not held by it: accept anything (see MISSING)
            Err(_) if bundled::MISSING.contains(&base(uri.as_str())) => Ok(serde_json::json!({})),
            Err(e) => Err(Box::new(e)),
        }
    }
}

/// Base URI of the one-`$ref` schema that stands for a part of a document (a URI with a
/// fragment) or for the draft-04 metaschema, which jsonschema carries itself.
const PART_BASE: &str = "urn:asdf-rs:schema-part";

fn compile(uri: &str) -> Compiled {
    let part = match uri.split_once('#') {
        Some((doc, fragment)) => !fragment.is_empty() || doc == bundled::JSON_SCHEMA_DRAFT4,
        None => uri == bundled::JSON_SCHEMA_DRAFT4,
    };
    let json = if part {
        Arc::new(serde_json::json!({ "$ref": uri }))
    } else {
        lookup(uri)?
    };
    let mut opts = jsonschema::options_for::<AsdfJson>()
        .with_draft(Draft::Draft4)
        .with_retriever(Retriever)
        .should_validate_formats(false)
        .with_keyword("type", keywords::type_factory)
        .with_keyword("tag", keywords::tag_factory)
        .with_keyword("ndim", keywords::ndim_factory)
        .with_keyword("max_ndim", keywords::max_ndim_factory)
        .with_keyword("datatype", keywords::datatype_factory);
    if part {
        opts = opts.with_base_uri(PART_BASE.to_string());
    } else if json.get("id").is_none() {
        opts = opts.with_base_uri(base(uri).to_string());
    }
    let validator = opts.build(&json).map_err(|e| SchemaError::Invalid {
        uri: uri.to_string(),
        message: e.to_string(),
    })?;
    Ok(Arc::new(validator))
}

/// Whether the schema with this URI has been compiled (or has failed to compile) already.
pub(crate) fn is_compiled(uri: &str) -> bool {
    read().compiled.contains_key(uri)
}

/// The compiled validator of the schema with this URI (compiled once, then cached).
pub(crate) fn validator(uri: &str) -> Compiled {
    if let Some(c) = read().compiled.get(uri) {
        return c.clone();
    }
    // Compile without holding the lock: `$ref` retrieval reads the registry.
    let compiled = std::panic::catch_unwind(|| compile(uri)).unwrap_or_else(|_| {
        Err(SchemaError::Invalid {
            uri: uri.to_string(),
            message: "the schema compiler failed".into(),
        })
    });
    write().compiled.insert(uri.to_string(), compiled.clone());
    compiled
}
