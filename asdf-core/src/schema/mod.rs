//! Schemas: the bundled ASDF schemas (`asdf-core/schemas/`, embedded), the tag → schema
//! lookup per standard version, and validation of tagged trees with the ASDF keywords.
//!
//! Validation runs the [jsonschema] crate in Draft 4 mode directly over the tagged tree: the
//! tree is the validator's instance representation (no conversion), so the ASDF keywords
//! see each node's tag:
//!
//! - `tag`: the node's tag matches a pattern (`*` within a segment, `**` across; see
//!   [`convert::tag_matches`](crate::convert::tag_matches)); untagged nodes have their YAML
//!   core tag (`tag:yaml.org,2002:map`, …).
//! - `ndim`, `max_ndim`: dimensions of a `core/ndarray-*` node (its `shape`, else its inline
//!   data).
//! - `datatype` (with `exact_datatype`): the node's datatype equals the schema's, or (unless
//!   exact) casts to it safely by numpy's rules; records field by field.
//! - `propertyOrder`, `flowStyle`, `style` are writer hints and never fail.
//!
//! [`validate_tree`] checks a whole tree as python asdf does: the root against the
//! `core/asdf` schema of the file's ASDF Standard version, and every tagged node against the
//! schema its tag maps to in that version (and against user schemas registered for its tag
//! with [`register_tag`]). Tags without a schema are not errors. A mapping holding `$ref` (a
//! JSON reference to another file) is not validated, since its content is elsewhere.
//!
//! [`validate_for_write`] adds python asdf's write-time checks (integer literals within 64
//! bits, plain mapping keys from standard 1.6.0). [`AsdfFile::validate`](crate::AsdfFile::validate)
//! and `OpenOptions::validate` validate a file's tree; the writer validates the final tree
//! before writing unless `WriteOptions::validate(false)`. [`validate_array_blocks`] checks
//! what no schema can: that each array fits in its block ([`AsdfFile::validate`](crate::AsdfFile::validate) includes it;
//! `OpenOptions::validate`, which gives python asdf's verdict, does not).
//!
//! `$ref`s inside schemas resolve against the schema's `id` to bundled schemas and schemas
//! registered with [`register_schema`]; nothing is fetched from the network or read from
//! disk.
//!
//! ```
//! use asdf_core::schema::{register_schema, validate_against};
//! use asdf_core::Node;
//!
//! register_schema(
//!     "asdf://example.org/schemas/point-1.0.0",
//!     "type: object\nproperties:\n  x: {type: number}\nrequired: [x]\n",
//! )?;
//! let good = Node::map([("x", Node::int(3))]);
//! assert!(validate_against("asdf://example.org/schemas/point-1.0.0", &good).is_ok());
//! let bad = Node::map([("x", Node::str("three"))]);
//! let errors = validate_against("asdf://example.org/schemas/point-1.0.0", &bad).unwrap_err();
//! assert_eq!(errors.to_string(), "/x: type: expected number, found string \"three\"");
//! # Ok::<(), asdf_core::schema::SchemaError>(())
//! ```

mod arrays;
pub mod bundled;
mod check;
mod defaults;
mod hints;
mod instance;
mod keywords;
mod registry;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value as JsonValue;

pub use arrays::validate_array_blocks;
pub use check::{check_schemas, SchemaCheck, SchemaProblem};
pub use defaults::{fill_defaults, fills_defaults, FILL_DEFAULTS_MAX};
pub use hints::apply_style_hints;
pub(crate) use hints::apply_style_hints_except;
pub(crate) use keywords::tag_matches;
pub use keywords::{can_cast_scalar, effective_tag};

use crate::yaml::Node;

/// The ASDF Standard version assumed when a file has no `#ASDF_STANDARD` line.
pub const DEFAULT_STANDARD: &str = "1.6.0";

/// A schema that cannot be used: unparsable, not found, or not a valid schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema text is not valid YAML.
    #[error("schema {uri}: invalid yaml: {message}")]
    Yaml {
        /// The schema's URI.
        uri: String,
        /// What the YAML parser reported.
        message: String,
    },
    /// No bundled or registered schema has this URI.
    #[error("unknown schema {uri}")]
    NotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The schema does not compile (bad keyword value, unresolvable `$ref`, …).
    #[error("schema {uri}: {message}")]
    Invalid {
        /// The schema's URI.
        uri: String,
        /// What is wrong.
        message: String,
    },
    /// A schema file could not be read.
    #[error("cannot read schema file {path}: {message}")]
    Io {
        /// The file path.
        path: String,
        /// The I/O error.
        message: String,
    },
}

/// One validation problem: where in the tree, which keyword, what was expected and found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationError {
    /// JSON pointer of the offending node from the root of what was validated (`/` for the
    /// root itself).
    pub path: String,
    /// The schema keyword that failed (`type`, `required`, `tag`, `datatype`, …).
    pub keyword: String,
    /// What was expected and what was found.
    pub message: String,
    /// The URI of the schema being applied when the problem was found.
    pub schema: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.path, self.keyword, self.message)
    }
}

/// Every problem found by a validation, in tree order. Displays one line per problem.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationErrors {
    errors: Vec<ValidationError>,
}

impl ValidationErrors {
    /// The problems.
    pub fn errors(&self) -> &[ValidationError] {
        &self.errors
    }
    /// Iterates over the problems.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.errors.iter()
    }
    /// Number of problems.
    pub fn len(&self) -> usize {
        self.errors.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
    /// The problems, owned.
    pub fn into_vec(self) -> Vec<ValidationError> {
        self.errors
    }
    /// One line per problem.
    pub fn lines(&self) -> Vec<String> {
        self.errors.iter().map(ToString::to_string).collect()
    }
    /// These problems, then those of `other`.
    pub(crate) fn join(mut self, other: ValidationErrors) -> ValidationErrors {
        self.errors.extend(other.errors);
        self
    }
    fn into_result(self) -> Result<(), ValidationErrors> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

/// Registers a user schema (YAML text) under `uri`, process-wide. It is also known by its
/// `id` when it declares one. `$ref`s in it resolve against its `id` (else `uri`). A schema
/// registered again replaces the earlier one.
///
/// A schema whose top level has a `tag` (a tag, or a pattern ending in `*`) is also bound
/// to it, as [`register_tag`] binds: every node with that tag is validated against it.
pub fn register_schema(uri: &str, yaml: &str) -> Result<(), SchemaError> {
    let json = registry::register(uri, yaml)?;
    bind_own_tag(&json, uri);
    Ok(())
}

/// Sets the process-wide schema source: a function asked for the YAML text of a schema URI
/// (without fragment) that is neither registered nor bundled, when a `$ref` or a
/// [`register_tag`] binding first needs it. It answers `None` when it does not have it (asked
/// once per URI). What it gives is parsed and kept as a registered schema would be; its
/// top-level `tag`, unlike [`register_schema`]'s, binds nothing (bind with [`register_tag`]).
/// It replaces an earlier source; already compiled schemas are dropped.
///
/// So a large schema set (python asdf's installed extensions, a directory of schemas) costs
/// only what a validation uses. The function runs without any registry lock held, on the
/// thread validating, and may be called from several threads at once (schemas a tree needs
/// are compiled in parallel, so two threads may each ask for a schema they both refer to,
/// the first time); a panic in it counts as `None`.
///
/// ```
/// use asdf_core::schema::{register_tag, set_schema_source, validate_tree};
/// # use asdf_core::schema::clear_schema_source;
/// use asdf_core::Node;
///
/// set_schema_source(|uri: &str| {
///     (uri == "asdf://example.org/schemas/dog-1.0.0")
///         .then(|| "type: object\nrequired: [name]\n".to_string())
/// });
/// register_tag("asdf://example.org/tags/dog-1.0.0", "asdf://example.org/schemas/dog-1.0.0");
/// let age = Node::map([("age", Node::int(3))]);
/// let dog = Node::map([(
///     "dog",
///     Node::tagged("asdf://example.org/tags/dog-1.0.0", age.value().clone()),
/// )]);
/// let errors = validate_tree(&dog, "1.6.0").unwrap_err();
/// assert!(errors.to_string().contains("name"), "{errors}");
/// # clear_schema_source();
/// ```
pub fn set_schema_source<F>(source: F)
where
    F: Fn(&str) -> Option<String> + Send + Sync + 'static,
{
    registry::set_source(Some(std::sync::Arc::new(source)))
}

/// Removes the schema source set by [`set_schema_source`] (what it gave stays registered).
pub fn clear_schema_source() {
    registry::set_source(None)
}

/// Binds the schema's top-level `tag` to it (by its `id` when it has one, as a
/// [`register_tag`] call naming the id would: the pair is kept once), when it has a tag.
fn bind_own_tag(json: &JsonValue, uri: &str) {
    if let Some(tag) = json.get("tag").and_then(JsonValue::as_str) {
        let id = json.get("id").or_else(|| json.get("$id"));
        registry::register_tag(tag, id.and_then(JsonValue::as_str).unwrap_or(uri));
    }
}

/// Registers a YAML schema file (given explicitly by path) and returns the URI it is known
/// by: its `id`, else the file's `file://` URI. Its top-level `tag`, if any, is bound to it
/// (as in [`register_schema`]).
pub fn register_schema_file(path: impl AsRef<Path>) -> Result<String, SchemaError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| SchemaError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let file_uri = format!("file://{}", abs.display());
    let json = registry::schema_json(&file_uri, &text)?;
    let uri = json
        .get("id")
        .or_else(|| json.get("$id"))
        .and_then(JsonValue::as_str)
        .map_or(file_uri, str::to_string);
    let json = registry::register(&uri, &text)?;
    bind_own_tag(&json, &uri);
    Ok(uri)
}

/// Makes nodes whose tag matches `tag_pattern` (see
/// [`convert::tag_matches`](crate::convert::tag_matches)) validate against the
/// schema `schema_uri` too, process-wide, in [`validate_tree`].
pub fn register_tag(tag_pattern: &str, schema_uri: &str) {
    registry::register_tag(tag_pattern, schema_uri)
}

/// Checks that a schema is known and compiles.
pub fn check_schema(uri: &str) -> Result<(), SchemaError> {
    registry::validator(uri).map(|_| ())
}

/// Validates `node` against the schema `uri` (registered or bundled). Error paths are
/// relative to `node`. An unknown or broken schema is reported as one error with keyword
/// `$schema`. A fragment selects a part of a schema (`URI#/definitions/x`), and
/// [`bundled::JSON_SCHEMA_DRAFT4`] names the JSON Schema draft 4 metaschema.
pub fn validate_against(uri: &str, node: &Node) -> Result<(), ValidationErrors> {
    with_stack(node, || {
        let mut out = Collector::default();
        out.apply(uri, node, "");
        out.finish().into_result()
    })
}

/// Validates a whole tree for ASDF Standard `standard` (`"1.6.0"`; see
/// [`DEFAULT_STANDARD`]): the root against the standard's `core/asdf` schema, every tagged
/// node against its tag's schema and against user schemas registered for its tag.
pub fn validate_tree(root: &Node, standard: &str) -> Result<(), ValidationErrors> {
    with_stack(root, || {
        let mut out = Collector::default();
        out.whole_tree(root, standard, &NodeIds::default());
        out.finish().into_result()
    })
}

/// Validates every tagged node of `root` (the root included) against the schema its tag
/// maps to under ASDF Standard `standard` and against user schemas registered for its tag;
/// unlike [`validate_tree`], an untagged root is not checked against `core/asdf`.
pub fn validate_tagged(root: &Node, standard: &str) -> Result<(), ValidationErrors> {
    with_stack(root, || {
        let mut out = Collector::default();
        out.tagged(root, standard, &NodeIds::default());
        out.finish().into_result()
    })
}

pub use crate::yaml::{MAX_LITERAL_INT, MIN_LITERAL_INT};

/// What python asdf checks before writing a tree: [`validate_tree`], plus integer literals
/// within [`MIN_LITERAL_INT`]..=[`MAX_LITERAL_INT`] (values and mapping keys), and, from
/// standard 1.6.0 on, mapping keys that are untagged strings, integers or booleans. (Python
/// asdf only warns about the last two when reading, so [`validate_tree`] leaves them out.)
pub fn validate_for_write(root: &Node, standard: &str) -> Result<(), ValidationErrors> {
    validate_for_write_except(root, standard, &NodeIds::default())
}

/// Ids of nodes ([`Node::id`]), hashed cheaply.
pub(crate) type NodeIds = HashSet<usize, crate::yaml::hash::FastBuild>;

/// [`validate_for_write`] without checking the tagged nodes in `skip` against their schemas:
/// the writer passes the ndarray nodes it built itself from arrays (valid by construction,
/// and checked against python asdf's validation by the test suite).
pub(crate) fn validate_for_write_except(
    root: &Node,
    standard: &str,
    skip: &NodeIds,
) -> Result<(), ValidationErrors> {
    with_stack(root, || write_checks(root, standard, skip))
}

fn write_checks(root: &Node, standard: &str, skip: &NodeIds) -> Result<(), ValidationErrors> {
    let mut out = Collector::default();
    out.whole_tree(root, standard, skip);
    let restricted_keys = version_at_least(standard, (1, 6, 0));
    let out_of_range = |v: &crate::yaml::Value| match v {
        crate::yaml::Value::Int(crate::yaml::Integer::Small(i)) => {
            !(MIN_LITERAL_INT..=MAX_LITERAL_INT).contains(i)
        }
        crate::yaml::Value::Int(crate::yaml::Integer::Big(_)) => true,
        _ => false,
    };
    let range = format!(
        "an integer from {MIN_LITERAL_INT} to {MAX_LITERAL_INT} (larger ones need core/integer)"
    );
    let bad_key = |k: &Node| {
        out_of_range(k.value())
            || (restricted_keys
                && (k.tag().is_some()
                    || !matches!(
                        k.value(),
                        crate::yaml::Value::Str(_)
                            | crate::yaml::Value::Int(_)
                            | crate::yaml::Value::Bool(_)
                    )))
    };
    // a first pass without paths: trees almost always pass, and paths cost a string each
    let mut clean = true;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if out_of_range(n.value()) {
            clean = false;
            break;
        }
        match n.value() {
            crate::yaml::Value::Seq(items) => stack.extend(items.iter()),
            crate::yaml::Value::Map(entries) => {
                if entries.iter().any(|(k, _)| bad_key(k)) {
                    clean = false;
                    break;
                }
                stack.extend(entries.iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
    if clean {
        return out.finish().into_result();
    }
    root.walk(|path, node| {
        if out_of_range(node.value()) {
            out.push(
                path.to_string(),
                "integer".into(),
                format!("expected {range}, found {}", crate::yaml::describe(node)),
                "",
            );
        }
        if let Some(entries) = node.as_map() {
            for (k, _) in entries {
                if out_of_range(k.value()) {
                    out.push(
                        path.to_string(),
                        "key".into(),
                        format!("expected {range}, found key {}", crate::yaml::describe(k)),
                        "",
                    );
                }
                let plain = matches!(
                    k.value(),
                    crate::yaml::Value::Str(_)
                        | crate::yaml::Value::Int(_)
                        | crate::yaml::Value::Bool(_)
                );
                if restricted_keys && (k.tag().is_some() || !plain) {
                    out.push(
                        path.to_string(),
                        "key".into(),
                        format!(
                            "expected a string, integer or boolean key, found {}",
                            crate::yaml::describe(k)
                        ),
                        "",
                    );
                }
            }
        }
    });
    out.finish().into_result()
}

/// Nesting depth from which validation runs on a thread with a stack sized for the tree
/// (the validator recurses a few frames per level).
const SHALLOW: usize = 48;
/// Stack bytes reserved per level of nesting on that thread (virtual; touched as used).
const STACK_PER_LEVEL: usize = 96 * 1024;

/// Whether `node` nests deeper than `limit` levels (iterative; shared nodes are visited
/// at each place they occur, as the validation walk visits them).
fn deeper_than(node: &Node, limit: usize) -> bool {
    let mut stack = vec![(node, 0usize)];
    while let Some((n, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match n.value() {
            crate::yaml::Value::Seq(items) => stack.extend(items.iter().map(|c| (c, d + 1))),
            crate::yaml::Value::Map(entries) => {
                stack.extend(entries.iter().map(|(_, v)| (v, d + 1)))
            }
            _ => {}
        }
    }
    false
}

/// Runs `f` here for shallow trees, else on a scoped thread whose stack fits the depth, so
/// the recursive validator cannot overflow the caller's stack.
fn with_stack(
    node: &Node,
    f: impl FnOnce() -> Result<(), ValidationErrors> + Send,
) -> Result<(), ValidationErrors> {
    if !deeper_than(node, SHALLOW) {
        return f();
    }
    let mut depth = SHALLOW;
    while deeper_than(node, depth) && depth < usize::MAX / 4 / STACK_PER_LEVEL {
        depth *= 2;
    }
    let size = (depth + 64).saturating_mul(STACK_PER_LEVEL);
    let too_deep = || {
        let mut out = Collector::default();
        out.push(
            String::new(),
            "depth".into(),
            format!(
                "expected a tree the validator can descend, found one deeper than {depth} levels"
            ),
            "",
        );
        out.finish().into_result()
    };
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .stack_size(size)
            .spawn_scoped(scope, f)
        {
            Ok(handle) => handle.join().unwrap_or_else(|_| too_deep()),
            Err(_) => too_deep(),
        }
    })
}

/// Whether a version string `a.b.c` is at least `min` (unparsable: no).
fn version_at_least(v: &str, min: (u32, u32, u32)) -> bool {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Some(a)), Some(Some(b)), Some(Some(c))) => (a, b, c) >= min,
        _ => false,
    }
}

impl Collector {
    /// The root against `core/asdf` (unless tagged), then every tagged node.
    fn whole_tree(&mut self, root: &Node, standard: &str, skip: &NodeIds) {
        if root.tag().is_none() {
            if let Some(uri) = asdf_schema(standard) {
                self.apply(uri, root, "");
            }
        }
        self.tagged(root, standard, skip);
    }

    /// Validates every tagged node (except those in `skip`) against its tag's schemas.
    ///
    /// Two passes: the distinct tags and their schema URIs first, whose validators are then
    /// compiled (those not compiled yet in the process, in parallel: compiling is most of a
    /// first validation, about 0.2 ms a schema), then the nodes are validated in tree order.
    fn tagged(&mut self, root: &Node, standard: &str, skip: &NodeIds) {
        let user_tags = registry::has_user_tags();
        // tag → indices of schema URIs (the registry lookups take a lock and hash strings; a
        // tree has few distinct tags)
        let mut uris: Vec<String> = Vec::new();
        let mut by_tag: HashMap<&str, Vec<usize>> = HashMap::new();
        let wanted = |node: &Node| {
            node.tag().is_some()
                && node.get("$ref").is_none()
                && (skip.is_empty() || !skip.contains(&node.id()))
        };
        root.walk_lazy(&mut |_, node| {
            let Some(tag) = node.tag().filter(|_| wanted(node)) else {
                return;
            };
            if by_tag.contains_key(tag) {
                return;
            }
            let mut found = Vec::new();
            if let Some(u) = bundled::schema_for_tag(standard, tag) {
                found.push(u.to_string());
            }
            if user_tags {
                found.extend(registry::user_schemas_for_tag(tag));
            }
            let idx = found
                .into_iter()
                .map(|u| match uris.iter().position(|x| *x == u) {
                    Some(k) => k,
                    None => {
                        uris.push(u);
                        uris.len() - 1
                    }
                })
                .collect();
            by_tag.insert(tag, idx);
        });
        let fresh = uris.iter().filter(|u| !registry::is_compiled(u)).count();
        let compiled: Vec<registry::Compiled> = if fresh > 1 {
            use rayon::prelude::*;
            uris.par_iter().map(|u| registry::validator(u)).collect()
        } else {
            uris.iter().map(|u| registry::validator(u)).collect()
        };
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        root.walk_lazy(&mut |path, node| {
            let Some(tag) = node.tag().filter(|_| wanted(node)) else {
                return;
            };
            let Some(idx) = by_tag.get(tag) else { return };
            for &k in idx {
                if !seen.insert((node.id(), k)) {
                    continue;
                }
                let (Some(uri), Some(validator)) = (uris.get(k), compiled.get(k)) else {
                    continue;
                };
                self.run(validator, uri, node, &|| path.pointer());
            }
        });
    }
}

/// The `core/asdf` schema id of a standard version.
fn asdf_schema(standard: &str) -> Option<&'static str> {
    ["1.1.0", "1.0.0"].iter().find_map(|v| {
        bundled::schema_for_tag(standard, &format!("tag:stsci.edu:asdf/core/asdf-{v}"))
    })
}

#[derive(Default)]
struct Collector {
    errors: Vec<ValidationError>,
    lines: HashSet<(String, String, String)>,
}

impl Collector {
    fn push(&mut self, path: String, keyword: String, message: String, schema: &str) {
        let path = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        if self
            .lines
            .insert((path.clone(), keyword.clone(), message.clone()))
        {
            self.errors.push(ValidationError {
                path,
                keyword,
                message,
                schema: schema.to_string(),
            });
        }
    }

    /// Validates `node` (at tree path `base`) against schema `uri`.
    fn apply(&mut self, uri: &str, node: &Node, base: &str) {
        let validator = registry::validator(uri);
        self.run(&validator, uri, node, &|| base.to_string());
    }

    /// Validates `node` (at tree path `base`) with a compiled schema.
    /// Validates `node`; `base` gives its path (built only when there is something to report).
    fn run(
        &mut self,
        validator: &registry::Compiled,
        uri: &str,
        node: &Node,
        base: &dyn Fn() -> String,
    ) {
        let validator = match validator {
            Ok(v) => v,
            Err(e) => {
                self.push(base(), "$schema".into(), e.to_string(), uri);
                return;
            }
        };
        let inst = instance::NodeRef(node);
        if validator.is_valid(inst) {
            return;
        }
        let base = base();
        for err in validator.iter_errors(inst) {
            self.report(&err, node, &base, uri);
        }
    }

    fn report(
        &mut self,
        err: &jsonschema::ValidationError<'_>,
        node: &Node,
        base: &str,
        uri: &str,
    ) {
        // A mapping with `$ref` stands for content elsewhere: python asdf does not validate
        // it (nor anything below it), whatever the schema says.
        if under_ref(node, err.instance_path().as_str()) {
            return;
        }
        let path = format!("{base}{}", err.instance_path().as_str());
        // An alternative that failed for one specific reason says more than "none matched".
        if let ValidationErrorKind::AnyOf { context }
        | ValidationErrorKind::OneOfNotValid { context } = err.kind()
        {
            let own = err.instance_path().as_str();
            let relevant: Vec<&Vec<jsonschema::ValidationError<'static>>> = context
                .iter()
                .filter(|branch| !is_shallow_type_miss(branch, own))
                .collect();
            if let [only] = relevant.as_slice() {
                if !only.is_empty() {
                    for sub in only.iter() {
                        self.report(sub, node, base, uri);
                    }
                    return;
                }
            }
            // Several candidates: name the one that came closest.
            let (keyword, mut message) = describe(err, node);
            if let Some(hint) = closest(&relevant, node, base, 0) {
                message.push_str(&format!("; closest: {hint}"));
            }
            self.push(path, keyword, message, uri);
            return;
        }
        let (keyword, message) = describe(err, node);
        self.push(path, keyword, message, uri);
    }

    fn finish(self) -> ValidationErrors {
        ValidationErrors {
            errors: self.errors,
        }
    }
}

/// Whether the node at `pointer` below `node`, or a node on the way to it, is a mapping
/// holding `$ref`.
fn under_ref(node: &Node, pointer: &str) -> bool {
    let is_ref = |n: &Node| n.get("$ref").is_some();
    if is_ref(node) {
        return true;
    }
    let mut cur = node;
    for seg in pointer.split('/').skip(1) {
        let Some(next) = child(cur, seg) else {
            return false;
        };
        if is_ref(next) {
            return true;
        }
        cur = next;
    }
    false
}

/// The node at JSON pointer `pointer` below `node` (mapping keys matched by their text, as
/// the validator names them).
fn node_at<'a>(node: &'a Node, pointer: &str) -> Option<&'a Node> {
    pointer
        .split('/')
        .skip(1)
        .try_fold(node, |cur, seg| child(cur, seg))
}

/// The member or item of `node` that the (escaped) pointer segment `seg` names.
fn child<'a>(node: &'a Node, seg: &str) -> Option<&'a Node> {
    let seg = crate::yaml::pointer::unescape_segment(seg);
    match node.value() {
        crate::yaml::Value::Map(entries) => entries
            .iter()
            .find(|(k, _)| instance::key_text(k) == *seg)
            .map(|(_, v)| v),
        crate::yaml::Value::Seq(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

/// The first problem of the failed alternative with the fewest problems (ties: the deepest
/// one), as `path: keyword: message`, descending into nested alternatives. `node` is what
/// was validated (at tree path `base`).
fn closest(
    branches: &[&Vec<jsonschema::ValidationError<'static>>],
    node: &Node,
    base: &str,
    depth: usize,
) -> Option<String> {
    let best = branches.iter().filter(|b| !b.is_empty()).min_by_key(|b| {
        let deepest = b
            .iter()
            .map(|e| e.instance_path().as_str().len())
            .max()
            .unwrap_or(0);
        (b.len(), usize::MAX - deepest)
    })?;
    let first = best.first()?;
    if depth < 8 {
        if let ValidationErrorKind::AnyOf { context }
        | ValidationErrorKind::OneOfNotValid { context } = first.kind()
        {
            let own = first.instance_path().as_str();
            let inner: Vec<&Vec<jsonschema::ValidationError<'static>>> = context
                .iter()
                .filter(|b| !is_shallow_type_miss(b, own))
                .collect();
            let inner = if inner.is_empty() {
                context.iter().collect()
            } else {
                inner
            };
            if let Some(hint) = closest(&inner, node, base, depth + 1) {
                return Some(hint);
            }
        }
    }
    let (keyword, message) = describe(first, node);
    let path = format!("{base}{}", first.instance_path().as_str());
    let path = if path.is_empty() { "/" } else { path.as_str() };
    Some(format!("{path}: {keyword}: {message}"))
}

/// Whether a failed alternative failed only because the node is of another kind (so it is
/// not the alternative the node was meant for).
fn is_shallow_type_miss(branch: &[jsonschema::ValidationError<'static>], own: &str) -> bool {
    branch.iter().any(|e| {
        e.instance_path().as_str() == own
            && match e.kind() {
                ValidationErrorKind::Type { .. } => true,
                ValidationErrorKind::Custom { keyword, .. } => {
                    keyword == "tag" || keyword == "type"
                }
                _ => false,
            }
    })
}

/// Characters of a found sequence or mapping shown in messages.
const SHOW_CHARS: usize = 40;

/// A short rendering of a found value: scalars as they are, sequences and mappings as the
/// start of their compact JSON text. `node` is the tree node the value was made from, whose
/// mapping keys are shown in tree order (a `serde_json::Map` sorts them unless serde_json's
/// `preserve_order` is on).
fn show(v: &JsonValue, node: Option<&Node>) -> String {
    let kind = match v {
        JsonValue::Null => return "null".into(),
        JsonValue::Bool(b) => return b.to_string(),
        JsonValue::Number(n) => return n.to_string(),
        JsonValue::String(_) => "string",
        JsonValue::Array(_) => "array",
        JsonValue::Object(_) => "object",
    };
    let text = match node {
        Some(node)
            if (v.is_array() && node.as_seq().is_some())
                || (v.is_object() && node.as_map().is_some()) =>
        {
            let mut text = String::new();
            // A char takes at most 4 bytes: this many bytes hold more than SHOW_CHARS chars.
            instance::write_json(node, &mut text, 4 * (SHOW_CHARS + 1));
            text
        }
        _ => v.to_string(),
    };
    if text.chars().count() <= SHOW_CHARS {
        format!("{kind} {text}")
    } else {
        let cut: String = text.chars().take(SHOW_CHARS - 3).collect();
        format!("{kind} {cut}...")
    }
}

fn show_limit(v: &JsonValue) -> String {
    match v {
        JsonValue::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn type_name(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}

/// Keyword and "expected …, found …" message of a jsonschema error raised validating `node`.
fn describe(err: &jsonschema::ValidationError<'_>, node: &Node) -> (String, String) {
    let found = show(err.instance(), node_at(node, err.instance_path().as_str()));
    let kind = err.kind();
    let (kw, msg) = match kind {
        ValidationErrorKind::Custom { keyword, message } => (keyword.as_str(), message.clone()),
        ValidationErrorKind::Type { kind } => (
            "type",
            format!("expected {}, found {found}", type_name(kind)),
        ),
        ValidationErrorKind::Required { property } => (
            "required",
            format!(
                "expected property {}, found it missing",
                show_limit(property)
            ),
        ),
        ValidationErrorKind::Enum { options } => {
            ("enum", format!("expected one of {options}, found {found}"))
        }
        ValidationErrorKind::Constant { expected_value } => {
            ("const", format!("expected {expected_value}, found {found}"))
        }
        ValidationErrorKind::AnyOf { .. } => (
            "anyOf",
            format!("expected a match with one of the alternatives, found {found}"),
        ),
        ValidationErrorKind::OneOfNotValid { .. } => (
            "oneOf",
            format!("expected a match with exactly one alternative, found none for {found}"),
        ),
        ValidationErrorKind::OneOfMultipleValid { .. } => (
            "oneOf",
            format!("expected a match with exactly one alternative, found several for {found}"),
        ),
        ValidationErrorKind::AdditionalProperties { unexpected } => (
            "additionalProperties",
            format!(
                "expected no other properties, found {}",
                unexpected.join(", ")
            ),
        ),
        ValidationErrorKind::AdditionalItems { limit } => (
            "additionalItems",
            format!("expected at most {limit} items, found {found}"),
        ),
        ValidationErrorKind::Minimum { limit } => (
            "minimum",
            format!("expected at least {limit}, found {found}"),
        ),
        ValidationErrorKind::Maximum { limit } => (
            "maximum",
            format!("expected at most {limit}, found {found}"),
        ),
        ValidationErrorKind::ExclusiveMinimum { limit } => (
            "minimum",
            format!("expected more than {limit}, found {found}"),
        ),
        ValidationErrorKind::ExclusiveMaximum { limit } => (
            "maximum",
            format!("expected less than {limit}, found {found}"),
        ),
        ValidationErrorKind::MinItems { limit } => (
            "minItems",
            format!(
                "expected at least {limit} items, found {}",
                count(err.instance())
            ),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            "maxItems",
            format!(
                "expected at most {limit} items, found {}",
                count(err.instance())
            ),
        ),
        ValidationErrorKind::MinProperties { limit } => (
            "minProperties",
            format!(
                "expected at least {limit} properties, found {}",
                count(err.instance())
            ),
        ),
        ValidationErrorKind::MaxProperties { limit } => (
            "maxProperties",
            format!(
                "expected at most {limit} properties, found {}",
                count(err.instance())
            ),
        ),
        ValidationErrorKind::MinLength { limit } => (
            "minLength",
            format!("expected at least {limit} characters, found {found}"),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            "maxLength",
            format!("expected at most {limit} characters, found {found}"),
        ),
        ValidationErrorKind::Pattern { pattern } => (
            "pattern",
            format!(
                "expected a string matching {}, found {found}",
                abbreviate(pattern)
            ),
        ),
        ValidationErrorKind::MultipleOf { .. } => ("multipleOf", format!("{err}")),
        ValidationErrorKind::Not { .. } => (
            "not",
            format!("expected no match with the negated schema, found {found}"),
        ),
        ValidationErrorKind::UniqueItems => (
            "uniqueItems",
            format!("expected unique items, found duplicates in {found}"),
        ),
        ValidationErrorKind::Format { format } => {
            ("format", format!("expected format {format}, found {found}"))
        }
        ValidationErrorKind::FalseSchema => ("false", format!("expected nothing, found {found}")),
        ValidationErrorKind::Referencing(e) => ("$ref", e.to_string()),
        other => {
            let kw = other.keyword().to_string();
            return (kw, err.to_string().replace('\n', " "));
        }
    };
    (kw.to_string(), msg.replace('\n', " "))
}

/// Long schema text (patterns) cut to one readable line.
fn abbreviate(s: &str) -> String {
    if s.chars().count() <= 60 {
        s.to_string()
    } else {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    }
}

fn count(v: &JsonValue) -> usize {
    match v {
        JsonValue::Array(a) => a.len(),
        JsonValue::Object(o) => o.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
