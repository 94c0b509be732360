//! Checking schema files: [`check_schemas`] over a folder, as python asdf's schema tests
//! (the pytest plugin) check a folder of schemas and the examples written inside them.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use super::{
    bundled, check_schema, register_schema, validate_against, validate_tagged, SchemaError,
    ValidationErrors, DEFAULT_STANDARD,
};
use crate::yaml::{parse, Node, YamlLimits};

/// The metaschema of a schema without `$schema` (python asdf's default too).
const DEFAULT_METASCHEMA: &str = bundled::YAML_SCHEMA_DRAFT01;

/// What [`check_schemas`] found: the files checked, the examples validated and every
/// problem. Displays one line per problem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaCheck {
    /// Every schema file checked (`.yaml` and `.yml` files under the folder), sorted.
    pub files: Vec<PathBuf>,
    /// How many examples were validated.
    pub examples: usize,
    /// Every problem, by file, schema problems before example problems.
    pub problems: Vec<SchemaProblem>,
}

impl SchemaCheck {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The problems of one file.
    pub fn problems_of<'a>(&'a self, file: &'a Path) -> impl Iterator<Item = &'a SchemaProblem> {
        self.problems.iter().filter(move |p| p.file == file)
    }
}

impl fmt::Display for SchemaCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

/// One problem of a schema file: of the schema itself (`example` is `None`; `path` points
/// into the schema) or of one of its examples (`path` points into the example).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaProblem {
    /// The schema file.
    pub file: PathBuf,
    /// The index of the example in the schema's `examples` list (from 0, as python's
    /// `test_example_N`), or `None` for a problem of the schema itself.
    pub example: Option<usize>,
    /// The example's description (empty for a problem of the schema itself).
    pub description: String,
    /// JSON pointer of the offending node: in the schema, or in the example.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file.display())?;
        if let Some(i) = self.example {
            write!(f, "example {i}")?;
            if !self.description.is_empty() {
                write!(f, " ({})", self.description.trim())?;
            }
            f.write_str(": ")?;
        }
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Checks every YAML schema under `dir` (`.yaml`/`.yml`, subfolders included):
///
/// 1. it parses, and its root is a mapping;
/// 2. it validates against its metaschema (`$schema`; YAML Schema draft-01 when absent;
///    bundled metaschemas or the JSON Schema draft 4 metaschema), and every `default` of the
///    root schema or of a subschema right below it (`properties/x`, `items`, `allOf/0`, ...)
///    validates against the schema holding it (as python's `asdf.schema.check_schema`, which
///    checks no deeper: the standard's icrs_coord-1.1.0 has a `wrap_angle` default of the
///    wrong type two levels down);
/// 3. its `$ref`s resolve: to bundled schemas, registered ones, or schemas of the folder
///    (all of which are registered, process-wide, under their `id`, before any is checked);
/// 4. every example of its top-level `examples` list validates against it. An example is
///    `[description, YAML text]` or `[description, "asdf-standard-X.Y.Z", YAML text, ...]`
///    (python asdf's convention); the text is read as an ASDF tree with `!` standing for
///    `tag:stsci.edu:asdf/`, and its tagged nodes are validated against the schemas their
///    tags have in that standard version (default [`DEFAULT_STANDARD`]), as when a file is
///    read. `examples` lists inside sub-schemas are not checked.
///
/// `Err` only when the folder cannot be listed; every problem of the files is in the
/// returned [`SchemaCheck`], one per line.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("asdf-check-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// std::fs::write(
///     dir.join("point-1.0.0.yaml"),
///     "id: asdf://example.org/schemas/doc-point-1.0.0\n\
///      type: object\n\
///      properties: {x: {type: number}}\n\
///      examples:\n  - [A point, '{x: 1}']\n  - [Not a point, '{x: one}']\n",
/// )?;
/// let report = asdf_core::schema::check_schemas(&dir)?;
/// assert_eq!(report.examples, 2);
/// let line = report.to_string();
/// assert!(line.ends_with("point-1.0.0.yaml: example 1 (Not a point): /x: type: expected number, found string \"one\""), "{line}");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_schemas(dir: impl AsRef<Path>) -> Result<SchemaCheck, SchemaError> {
    let dir = dir.as_ref();
    let files = schema_files(dir)?;
    let mut report = SchemaCheck {
        files: files.clone(),
        ..SchemaCheck::default()
    };
    // Parse and register every file first, so `$ref`s between them resolve.
    let mut parsed: Vec<(PathBuf, String, Node)> = Vec::new();
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    for file in files {
        let schema_problem = |path: &str, message: String| SchemaProblem {
            file: file.clone(),
            example: None,
            description: String::new(),
            path: path.to_string(),
            message,
        };
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                report
                    .problems
                    .push(schema_problem("/", format!("cannot read: {e}")));
                continue;
            }
        };
        let root = match parse(text.as_bytes(), &YamlLimits::default()) {
            Ok(doc) => doc.root,
            Err(e) => {
                report
                    .problems
                    .push(schema_problem("/", format!("invalid yaml: {e}")));
                continue;
            }
        };
        if root.as_map().is_none() {
            report.problems.push(schema_problem(
                "/",
                "expected a schema mapping, found another kind of node".into(),
            ));
            continue;
        }
        let uri = match root
            .get("id")
            .or_else(|| root.get("$id"))
            .and_then(Node::as_str)
        {
            Some(id) => id.to_string(),
            None => file_uri(&file),
        };
        if let Some(first) = ids.get(&uri) {
            report.problems.push(schema_problem(
                "/id",
                format!("id {uri} is also the id of {}", first.display()),
            ));
            continue;
        }
        if let Err(e) = register_schema(&uri, &text) {
            report.problems.push(schema_problem("/", e.to_string()));
            continue;
        }
        ids.insert(uri.clone(), file.clone());
        parsed.push((file, uri, root));
    }
    for (file, uri, root) in &parsed {
        check_one(file, uri, root, &mut report);
    }
    report
        .problems
        .sort_by(|a, b| (&a.file, a.example).cmp(&(&b.file, b.example)));
    Ok(report)
}

/// The `.yaml`/`.yml` files under `dir`, sorted.
fn schema_files(dir: &Path) -> Result<Vec<PathBuf>, SchemaError> {
    let io = |path: &Path, e: std::io::Error| SchemaError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| io(&d, e))? {
            let path = entry.map_err(|e| io(&d, e))?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn file_uri(path: &Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("file://{}", abs.display())
}

/// Checks one parsed and registered schema: metaschema, defaults, `$ref`s, examples.
fn check_one(file: &Path, uri: &str, root: &Node, report: &mut SchemaCheck) {
    let mut push = |example: Option<usize>, description: &str, path: &str, message: String| {
        report.problems.push(SchemaProblem {
            file: file.to_path_buf(),
            example,
            description: description.to_string(),
            path: path.to_string(),
            message,
        })
    };
    // 2. the metaschema
    let meta = root
        .get("$schema")
        .and_then(Node::as_str)
        .unwrap_or(DEFAULT_METASCHEMA);
    match root.get("$schema") {
        Some(m) if m.as_str().is_none() => push(
            None,
            "",
            "/$schema",
            "expected the URI of a metaschema, found another kind of node".into(),
        ),
        _ => {
            if let Err(errors) = validate_against(meta, root) {
                for e in errors.iter() {
                    push(
                        None,
                        "",
                        &e.path,
                        format!("metaschema {meta}: {}: {}", e.keyword, e.message),
                    );
                }
            }
        }
    }
    // 3. the schema compiles: every `$ref` resolves
    let compiles = match check_schema(uri) {
        Ok(()) => true,
        Err(e) => {
            let message = match e {
                SchemaError::Invalid { message, .. } => message,
                other => other.to_string(),
            };
            push(None, "", "/", format!("does not compile: {message}"));
            false
        }
    };
    if !compiles {
        return;
    }
    // 2b. defaults, each against the schema holding it: python checks those of the root and
    // of the subschemas right below it only (deeper ones are reached through the draft-04
    // metaschema, where its check does not run), so a default deeper down is not checked
    let mut positions = Vec::new();
    subschemas(root, String::new(), 0, &mut positions);
    for (pointer, schema) in positions {
        let Some(default) = schema.get("default") else {
            continue;
        };
        let part = format!("{uri}#{pointer}");
        if let Err(errors) = validate_against(&part, default) {
            let at = format!("{pointer}/default");
            for e in errors.iter() {
                let inner = if e.path == "/" { "" } else { e.path.as_str() };
                push(
                    None,
                    "",
                    &format!("{at}{inner}"),
                    format!("default: {}: {}", e.keyword, e.message),
                );
            }
        }
    }
    // 4. the examples
    let Some(examples) = root.get("examples").and_then(Node::as_seq) else {
        return;
    };
    for (i, example) in examples.iter().enumerate() {
        report_example(i, example, uri, &mut push);
        report.examples += 1;
    }
}

/// Validates example `i` of the schema `uri`, reporting through `push`.
fn report_example(
    i: usize,
    example: &Node,
    uri: &str,
    push: &mut impl FnMut(Option<usize>, &str, &str, String),
) {
    let items = example.as_seq().unwrap_or_default();
    let (description, version, text) = match items {
        [text] => ("", None, text),
        [description, text] => (description.as_str().unwrap_or_default(), None, text),
        [description, version, text, ..] => (
            description.as_str().unwrap_or_default(),
            Some(version),
            text,
        ),
        [] => {
            push(
                Some(i),
                "",
                "/",
                "expected a list [description, YAML text], found none".into(),
            );
            return;
        }
    };
    let Some(text) = text.as_str() else {
        push(
            Some(i),
            description,
            "/",
            "expected the example's YAML text as a string".into(),
        );
        return;
    };
    let standard = match version {
        None => DEFAULT_STANDARD,
        Some(v) => {
            let name = v.as_str().unwrap_or_default().to_ascii_lowercase();
            let wanted = name.strip_prefix("asdf-standard-").unwrap_or(&name);
            match bundled::standards().iter().find(|s| **s == wanted) {
                Some(s) => s,
                None => {
                    push(
                        Some(i),
                        description,
                        "/",
                        format!(
                            "unknown ASDF Standard version {:?} (expected asdf-standard-{})",
                            v.as_str().unwrap_or_default(),
                            bundled::standards().join(" | ")
                        ),
                    );
                    return;
                }
            }
        }
    };
    let doc = format!("{HEADER}{}\n...\n", text.trim());
    let tree = match parse(doc.as_bytes(), &YamlLimits::default()) {
        Ok(d) => d.root,
        Err(e) => {
            let message = example_lines(&e.to_string(), HEADER_LINES);
            push(
                Some(i),
                description,
                "/",
                format!("invalid yaml: {message}"),
            );
            return;
        }
    };
    let mut seen = BTreeSet::new();
    let mut report = |r: Result<(), ValidationErrors>| {
        for e in r.err().unwrap_or_default().iter() {
            let line = format!("{}: {}", e.keyword, e.message);
            if seen.insert((e.path.clone(), line.clone())) {
                push(Some(i), description, &e.path, line);
            }
        }
    };
    report(validate_against(uri, &tree));
    report(validate_tagged(&tree, standard));
}

/// What an example's text is read after: `!` stands for `tag:stsci.edu:asdf/`.
const HEADER: &str = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---\n";
/// The lines of [`HEADER`].
const HEADER_LINES: usize = 3;

/// A YAML error message with its `line N` counted from the example's first line (the
/// parser counted from the header's).
fn example_lines(message: &str, header: usize) -> String {
    let Some(at) = message.find("line ") else {
        return message.to_string();
    };
    let digits: String = message[at + 5..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.parse::<usize>() {
        Ok(n) if n > header => format!(
            "{}line {}{}",
            &message[..at],
            n - header,
            &message[at + 5 + digits.len()..]
        ),
        _ => message.to_string(),
    }
}

/// The sub-schema positions of `schema` as (JSON pointer, schema): the root (`depth` 0) and
/// the subschemas right below it, the ones whose defaults python checks.
fn subschemas<'a>(
    schema: &'a Node,
    pointer: String,
    depth: usize,
    out: &mut Vec<(String, &'a Node)>,
) {
    if schema.as_map().is_none() || depth > 1 {
        return;
    }
    let esc = crate::yaml::pointer::escape_segment;
    out.push((pointer.clone(), schema));
    for (key, value) in schema.as_map().unwrap_or_default() {
        let Some(key) = key.as_str() else { continue };
        let here = format!("{pointer}/{}", esc(key));
        match key {
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                for (k, v) in value.as_map().unwrap_or_default() {
                    if let Some(k) = k.as_str() {
                        subschemas(v, format!("{here}/{}", esc(k)), depth + 1, out);
                    }
                }
            }
            "items" | "allOf" | "anyOf" | "oneOf" => match value.as_seq() {
                Some(list) => {
                    for (n, v) in list.iter().enumerate() {
                        subschemas(v, format!("{here}/{n}"), depth + 1, out);
                    }
                }
                None => subschemas(value, here, depth + 1, out),
            },
            "additionalItems" | "additionalProperties" | "not" => {
                subschemas(value, here, depth + 1, out)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::example_lines;

    #[test]
    fn yaml_error_lines_count_from_the_example() {
        assert_eq!(
            example_lines("syntax error at line 5 column 1 (byte 67): x", 3),
            "syntax error at line 2 column 1 (byte 67): x"
        );
        assert_eq!(example_lines("at line 2 column 1", 3), "at line 2 column 1");
        assert_eq!(example_lines("no position", 3), "no position");
    }
}
