//! Helpers for users' own tests (feature `testing`, meant for `[dev-dependencies]`): round
//! trips of typed values through files in memory, schema assertions, and checks of schema
//! files with their examples.
//!
//! ```toml
//! [dev-dependencies]
//! asdfrs-core = { version = "0.1", features = ["testing"] }
//! ```
//!
//! Everything works with `#[derive(AsdfType)]` types, serde types wrapped in
//! [`Serde`](crate::serde_node::Serde), plain [`Node`]s, and any other [`ToAsdf`]/[`FromAsdf`]
//! type. The `assert_*` functions panic with a message that reads on its own: tree paths,
//! one problem per line, arrays summarised (datatype, shape, how many elements differ and
//! the first one).
//!
//! | helper | checks |
//! |---|---|
//! | [`assert_round_trip`] | written and read back (every array storage that works in memory, and a codec) it is equal |
//! | [`round_trip`] | the value read back, for comparisons of your own |
//! | [`assert_valid`], [`assert_valid_file`] | no schema problem (bundled schemas by tag, registered schemas) |
//! | [`assert_schema_rejects`] | a schema problem whose text contains a fragment |
//! | [`check_schemas`], [`assert_schemas_valid`] | schema files: metaschema, `$ref`s, defaults, examples |
//!
//! A user's test file (`tests/observation.rs`):
//!
//! ```
//! use asdf_core::testing::{assert_round_trip, assert_schema_rejects, assert_valid};
//! use asdf_core::AsdfType;
//! use ndarray::{arr2, Array2};
//!
//! #[derive(AsdfType, Debug, Clone, PartialEq)]
//! #[asdf(tag = "asdf://example.org/tags/frame-1.0.0")]
//! struct Frame {
//!     exposure: f64,
//!     #[asdf(compression = "zlib")]
//!     pixels: Array2<f32>,
//! }
//!
//! fn register() {
//!     asdf_core::schema::register_schema(
//!         "asdf://example.org/schemas/frame-1.0.0",
//!         "type: object\n\
//!          properties:\n  exposure: {type: number, minimum: 0}\n\
//!          required: [exposure, pixels]\n",
//!     )
//!     .unwrap();
//!     asdf_core::schema::register_tag(
//!         "asdf://example.org/tags/frame-1.0.0",
//!         "asdf://example.org/schemas/frame-1.0.0",
//!     );
//! }
//!
//! // #[test]
//! fn frame_round_trips() {
//!     register();
//!     let frame = Frame { exposure: 30.0, pixels: arr2(&[[1.0, 2.0], [3.0, 4.0]]) };
//!     assert_round_trip(&frame);
//!     assert_valid(&frame);
//! }
//!
//! // #[test]
//! fn negative_exposure_is_refused() {
//!     register();
//!     let frame = Frame { exposure: -1.0, pixels: arr2(&[[1.0]]) };
//!     assert_schema_rejects(&frame, "/exposure: minimum");
//! }
//! # frame_round_trips();
//! # negative_exposure_is_refused();
//! ```

use std::fmt::{self, Debug};
use std::path::Path;

use crate::array::{CompressionChoice, Storage};
use crate::codec::Compression;
use crate::convert::{self, FromAsdf, ToAsdf};
use crate::write::{StandardVersion, WriteOptions, Writer};
use crate::yaml::{Node, Value};
use crate::{display_chain, schema, AsdfFile};

pub use crate::schema::{check_schemas, SchemaCheck, SchemaProblem};

/// The key the value is written under in the files of a round trip (`/value`).
const KEY: &str = "value";

/// How [`assert_round_trip`] writes: which array storages, which codec for the blocks,
/// which ASDF Standard version. Start from [`RoundTrip::new`] and chain.
///
/// ```
/// use asdf_core::array::Storage;
/// use asdf_core::write::Compression;
/// use asdf_core::testing::RoundTrip;
/// let data = ndarray::arr1(&[1u16, 2, 3]);
/// RoundTrip::new()
///     .compression(Compression::Zstd)
///     .storages([Storage::Internal])
///     .assert(&data);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RoundTrip {
    storages: Vec<Storage>,
    compression: Compression,
    standard: StandardVersion,
}

impl Default for RoundTrip {
    fn default() -> Self {
        Self::new()
    }
}

impl RoundTrip {
    /// Internal blocks uncompressed, internal blocks compressed with zlib, and inline arrays
    /// (external files need a path, so they are not written in memory), under ASDF Standard
    /// 1.6.0.
    pub fn new() -> Self {
        RoundTrip {
            storages: vec![Storage::Internal, Storage::Inline],
            compression: Compression::Zlib,
            standard: StandardVersion::default(),
        }
    }

    /// The codec of the compressed internal round trip (default zlib).
    pub fn compression(mut self, codec: Compression) -> Self {
        self.compression = codec;
        self
    }

    /// The array storages to write with (default internal and inline).
    /// [`Storage::External`] is skipped: it needs a file path.
    pub fn storages(mut self, storages: impl IntoIterator<Item = Storage>) -> Self {
        self.storages = storages.into_iter().collect();
        self
    }

    /// The ASDF Standard version written (default 1.6.0).
    pub fn standard(mut self, version: StandardVersion) -> Self {
        self.standard = version;
        self
    }

    /// The (storage, compression) pairs written, in order.
    fn plan(&self) -> Vec<(Storage, CompressionChoice)> {
        let mut out = Vec::new();
        for s in &self.storages {
            match s {
                Storage::External => {}
                Storage::Internal | Storage::Input => {
                    out.push((*s, CompressionChoice::None));
                    out.push((*s, CompressionChoice::Codec(self.compression)));
                }
                other => out.push((*other, CompressionChoice::None)),
            }
        }
        out
    }

    /// Writes `value` with each setting in memory and reads it back; the first failure.
    pub fn run<T: ToAsdf + FromAsdf>(&self, value: &T) -> Result<Vec<T>, RoundTripError> {
        self.plan()
            .into_iter()
            .map(|(storage, compression)| {
                write_and_read(value, storage, compression, &self.standard)
            })
            .collect()
    }

    /// Writes `value` with each setting, reads it back, and panics with a readable diff
    /// (tree paths, arrays summarised) when what is read differs from `value`, or when a
    /// step fails.
    #[track_caller]
    pub fn assert<T: ToAsdf + FromAsdf + PartialEq + Debug>(&self, value: &T) {
        for (storage, compression) in self.plan() {
            let setting = Setting {
                storage,
                compression,
                standard: self.standard.clone(),
            };
            let back = match write_and_read(value, storage, compression, &self.standard) {
                Ok(back) => back,
                Err(e) => panic!("assert_round_trip: {e}"),
            };
            if back != *value {
                let mut msg = format!(
                    "assert_round_trip: the value read back differs from the value written ({setting}):"
                );
                for line in differences(value, &back) {
                    msg.push_str("\n  ");
                    msg.push_str(&line);
                }
                panic!("{msg}");
            }
        }
    }
}

/// How a round trip wrote.
#[derive(Clone, Debug, PartialEq)]
struct Setting {
    storage: Storage,
    compression: CompressionChoice,
    standard: StandardVersion,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let storage = match self.storage {
            Storage::Internal | Storage::Input => "internal blocks".to_string(),
            Storage::Inline => "inline arrays".to_string(),
            Storage::InlineUpTo(n) => format!("inline arrays up to {n} elements"),
            Storage::External => "external files".to_string(),
        };
        let codec = match self.compression {
            CompressionChoice::Codec(c) => format!(", {} compression", c.name()),
            _ if matches!(self.storage, Storage::Internal | Storage::Input) => {
                ", uncompressed".to_string()
            }
            _ => String::new(),
        };
        write!(f, "{storage}{codec}, ASDF Standard {}", self.standard)
    }
}

/// A round trip that could not be completed: which setting, which step, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundTripError {
    setting: String,
    step: &'static str,
    message: String,
}

impl RoundTripError {
    /// The step that failed: `converting the value`, `writing`, `opening the written file`
    /// or `reading the value back`.
    pub fn step(&self) -> &str {
        self.step
    }
    /// What went wrong (the error and its causes).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RoundTripError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "round trip with {}: {} failed: {}",
            self.setting, self.step, self.message
        )
    }
}

impl std::error::Error for RoundTripError {}

/// Writes `value` under `/value` of a file in memory and reads it back as `T`.
fn write_and_read<T: ToAsdf + FromAsdf>(
    value: &T,
    storage: Storage,
    compression: CompressionChoice,
    standard: &StandardVersion,
) -> Result<T, RoundTripError> {
    let setting = Setting {
        storage,
        compression,
        standard: standard.clone(),
    };
    let fail = |step: &'static str, e: &(dyn std::error::Error + 'static)| RoundTripError {
        setting: setting.to_string(),
        step,
        message: display_chain(e),
    };
    let opts = WriteOptions::default()
        .storage(storage)
        .compression(compression)
        .standard(standard.clone());
    let mut writer = Writer::new(opts);
    let node = writer
        .add_value(value)
        .map_err(|e| fail("converting the value", &e))?;
    let bytes = writer
        .write_to_vec(&Node::map([(KEY, node)]))
        .map_err(|e| fail("writing", &e))?;
    let file = AsdfFile::from_bytes(bytes).map_err(|e| fail("opening the written file", &e))?;
    file.read_as::<T>(&format!("/{KEY}"))
        .map_err(|e| fail("reading the value back", &e))
}

/// Writes `value` to a file in memory (internal blocks, uncompressed, ASDF Standard 1.6.0),
/// reads it back and returns what was read, for comparisons of your own.
///
/// ```
/// let back = asdf_core::testing::round_trip(&vec![1.5f64, f64::NAN])?;
/// assert_eq!(back[0], 1.5);
/// assert!(back[1].is_nan());
/// # Ok::<(), asdf_core::testing::RoundTripError>(())
/// ```
pub fn round_trip<T: ToAsdf + FromAsdf>(value: &T) -> Result<T, RoundTripError> {
    write_and_read(
        value,
        Storage::Internal,
        CompressionChoice::None,
        &StandardVersion::default(),
    )
}

/// Writes `value` in memory with every array storage that works there (internal blocks,
/// uncompressed and zlib-compressed, and inline arrays), reads it back each time, and
/// panics when what is read differs, with the tree paths that differ (arrays summarised:
/// datatype, shape, how many elements differ, the first one). [`RoundTrip`] chooses the
/// codec, storages and standard version.
///
/// ```
/// use asdf_core::serde_node::Serde;
/// use std::collections::BTreeMap;
/// asdf_core::testing::assert_round_trip(&Serde(BTreeMap::from([("a".to_string(), 1u8)])));
/// asdf_core::testing::assert_round_trip(&ndarray::arr2(&[[1.0f32, 2.0], [3.0, 4.0]]));
/// ```
#[track_caller]
pub fn assert_round_trip<T: ToAsdf + FromAsdf + PartialEq + Debug>(value: &T) {
    RoundTrip::new().assert(value)
}

/// Every schema problem of `value` as it would be written (ASDF Standard 1.6.0), one line
/// each: the schema of a `#[asdf(schema)]` type, the bundled schema of each tagged node
/// (by tag), and schemas registered for its tags with
/// [`register_tag`](crate::schema::register_tag). Paths are relative to the value. A value
/// that cannot be converted or written gives one line saying why.
pub fn validation_problems<T: ToAsdf + ?Sized>(value: &T) -> Vec<String> {
    let standard = StandardVersion::default();
    let mut writer = Writer::new(
        WriteOptions::default()
            .validate(false)
            .standard(standard.clone()),
    );
    let node = match writer.add_value(value) {
        Ok(n) => n,
        Err(e) => return convert_error_lines(&e),
    };
    let written = writer
        .write_to_vec(&Node::map([(KEY, node)]))
        .map_err(|e| format!("the value cannot be written: {}", display_chain(&e)))
        .and_then(|bytes| {
            AsdfFile::options()
                .validate(false)
                .open_bytes(bytes, ".")
                .map_err(|e| format!("the written file cannot be read: {}", display_chain(&e)))
        });
    let file = match written {
        Ok(f) => f,
        Err(line) => return vec![line],
    };
    let Some(node) = file.get(&format!("/{KEY}")) else {
        return vec![format!("the written file has no /{KEY}")];
    };
    match schema::validate_tagged(node, standard.as_str()) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.lines(),
    }
}

/// A conversion error as lines: a schema error becomes one line per problem (its tree path
/// already from the root of the value).
fn convert_error_lines(e: &convert::ConvertError) -> Vec<String> {
    match &e.kind {
        convert::ConvertErrorKind::Schema { schema, problems } => problems
            .iter()
            .map(|line| format!("{line} (schema {schema})"))
            .collect(),
        _ => vec![format!("the value cannot be converted: {e}")],
    }
}

/// Panics, listing every problem on its own line, unless `value` validates (see
/// [`validation_problems`]).
///
/// ```
/// use asdf_core::Node;
/// asdf_core::testing::assert_valid(&Node::map([("x", Node::int(1))]));
/// ```
#[track_caller]
pub fn assert_valid<T: ToAsdf + ?Sized>(value: &T) {
    let problems = validation_problems(value);
    if !problems.is_empty() {
        panic!(
            "assert_valid: {} schema problem{}:\n  {}",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("\n  ")
        );
    }
}

/// Panics unless `value` has a schema problem whose line contains `fragment` (such as
/// `"/exposure: minimum"` or `"expected property telescope"`); the message lists the
/// problems found.
///
/// ```
/// use asdf_core::Node;
/// use asdf_core::Value;
/// let bad = Node::tagged(
///     "tag:stsci.edu:asdf/core/complex-1.0.0",
///     Value::Str("one plus i".into()),
/// );
/// asdf_core::testing::assert_schema_rejects(&bad, "pattern");
/// ```
#[track_caller]
pub fn assert_schema_rejects<T: ToAsdf + ?Sized>(value: &T, fragment: &str) {
    let problems = validation_problems(value);
    if problems.is_empty() {
        panic!("assert_schema_rejects: the value validates, expected a problem containing {fragment:?}");
    }
    if !problems.iter().any(|p| p.contains(fragment)) {
        panic!(
            "assert_schema_rejects: no problem contains {fragment:?}; found:\n  {}",
            problems.join("\n  ")
        );
    }
}

/// Opens the file at `path` and panics, listing every problem on its own line, unless its
/// tree validates (the standard's schemas by tag and the root's `core/asdf`, plus
/// registered schemas for their tags).
#[track_caller]
pub fn assert_valid_file(path: impl AsRef<Path>) {
    let path = path.as_ref();
    let file = match AsdfFile::options().validate(false).open(path) {
        Ok(f) => f,
        Err(e) => panic!(
            "assert_valid_file: {} cannot be opened: {}",
            path.display(),
            display_chain(&e)
        ),
    };
    if let Err(errors) = file.validate() {
        panic!(
            "assert_valid_file: {}: {} schema problem{}:\n  {}",
            path.display(),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            errors.lines().join("\n  ")
        );
    }
}

/// Panics, listing every problem (file, example, tree path) on its own line, unless every
/// schema file under `dir` passes [`check_schemas`].
#[track_caller]
pub fn assert_schemas_valid(dir: impl AsRef<Path>) {
    let dir = dir.as_ref();
    match check_schemas(dir) {
        Err(e) => panic!("assert_schemas_valid: {e}"),
        Ok(report) if !report.is_ok() => panic!(
            "assert_schemas_valid: {} problem{} in the schemas of {}:\n  {}",
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" },
            dir.display(),
            report.to_string().replace('\n', "\n  ")
        ),
        Ok(_) => {}
    }
}

/// The differences between two values as lines `PATH: wrote X, read Y`, comparing the
/// trees they convert to (arrays inline); when the trees are equal (a NaN, or a
/// `PartialEq` that compares what is not written) or cannot be built, a line saying so
/// and both values.
fn differences<T: ToAsdf + Debug>(wrote: &T, read: &T) -> Vec<String> {
    let mut out = Vec::new();
    match (convert::to_node(wrote), convert::to_node(read)) {
        (Ok(a), Ok(b)) => {
            diff_nodes(&a, &b, "", &mut out);
            if !out.is_empty() {
                return out;
            }
            out.push(
                "/: the trees are equal but the values are not (a NaN, or a PartialEq comparing what is not written)"
                    .into(),
            );
        }
        (Err(e), _) | (_, Err(e)) => {
            out.push(format!("/: the trees cannot be compared: {e}"));
        }
    }
    let debug = |v: &T| short(&format!("{v:?}").replace('\n', " "), 400);
    out.push(format!("wrote: {}", debug(wrote)));
    out.push(format!("read:  {}", debug(read)));
    out
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

fn path_or_root(path: &str) -> &str {
    if path.is_empty() {
        "/"
    } else {
        path
    }
}

/// A short rendering of a node: scalars as they are, collections by size.
fn show(node: &Node) -> String {
    let tag = node.tag().map(|t| format!("!<{t}> ")).unwrap_or_default();
    let body = match node.value() {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => crate::floats::python_repr(*f),
        Value::Str(s) => short(&format!("{s:?}"), 80),
        Value::Timestamp(t) => format!("{t:?}"),
        Value::Binary(b) => format!("{} bytes of binary", b.len()),
        Value::Seq(items) => format!("a sequence of {} items", items.len()),
        Value::Map(entries) => format!("a mapping of {} entries", entries.len()),
        Value::Recursive(a) => format!("*{a}"),
    };
    format!("{tag}{body}")
}

fn is_ndarray(node: &Node) -> bool {
    node.tag()
        .is_some_and(|t| t.starts_with("tag:stsci.edu:asdf/core/ndarray-"))
}

/// Equal nodes, a NaN equal to a NaN.
fn same(a: &Node, b: &Node) -> bool {
    match (a.value(), b.value()) {
        (Value::Float(x), Value::Float(y)) if x.is_nan() && y.is_nan() => a.tag() == b.tag(),
        _ => a == b,
    }
}

fn diff_nodes(a: &Node, b: &Node, path: &str, out: &mut Vec<String>) {
    if same(a, b) {
        return;
    }
    let here = path_or_root(path);
    if a.tag() != b.tag() {
        out.push(format!(
            "{here}: tag: wrote {}, read {}",
            a.tag().unwrap_or("(none)"),
            b.tag().unwrap_or("(none)")
        ));
        return;
    }
    if is_ndarray(a) {
        out.push(format!("{here}: {}", array_summary(a, b)));
        return;
    }
    match (a.value(), b.value()) {
        (Value::Map(x), Value::Map(y)) => {
            let key = |k: &Node| match k.as_str() {
                Some(s) => crate::yaml::pointer::escape_segment(s).into_owned(),
                None => show(k),
            };
            for (k, va) in x {
                match y.iter().find(|(kb, _)| kb == k) {
                    Some((_, vb)) => diff_nodes(va, vb, &format!("{path}/{}", key(k)), out),
                    None => out.push(format!(
                        "{path}/{}: wrote {}, read nothing (key missing)",
                        key(k),
                        show(va)
                    )),
                }
            }
            for (k, vb) in y {
                if !x.iter().any(|(ka, _)| ka == k) {
                    out.push(format!(
                        "{path}/{}: wrote nothing, read {}",
                        key(k),
                        show(vb)
                    ));
                }
            }
        }
        (Value::Seq(x), Value::Seq(y)) => {
            if x.len() != y.len() {
                out.push(format!("{here}: wrote {} items, read {}", x.len(), y.len()));
            }
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_nodes(va, vb, &format!("{path}/{i}"), out);
            }
        }
        _ => out.push(format!("{here}: wrote {}, read {}", show(a), show(b))),
    }
}

/// `array DTYPE [SHAPE]: N of M elements differ, first at [i, j]: wrote X, read Y` (or
/// the datatype or shape that differs) for two inline ndarray nodes.
fn array_summary(a: &Node, b: &Node) -> String {
    let field = |n: &Node, k: &str| n.get(k).map(show_flat).unwrap_or_else(|| "?".into());
    let (da, db) = (field(a, "datatype"), field(b, "datatype"));
    let (sa, sb) = (field(a, "shape"), field(b, "shape"));
    if da != db || sa != sb {
        return format!("array: wrote {da} {sa}, read {db} {sb}");
    }
    let mut ea = Vec::new();
    let mut eb = Vec::new();
    if let (Some(x), Some(y)) = (a.get("data"), b.get("data")) {
        flatten(x, &mut Vec::new(), &mut ea);
        flatten(y, &mut Vec::new(), &mut eb);
    }
    let differ: Vec<usize> = (0..ea.len().max(eb.len()))
        .filter(|&i| match (ea.get(i), eb.get(i)) {
            (Some(x), Some(y)) => !same(&x.1, &y.1),
            _ => true,
        })
        .collect();
    let Some(&first) = differ.first() else {
        return format!("array {da} {sa}: the data is equal, other fields differ");
    };
    let at = ea
        .get(first)
        .or_else(|| eb.get(first))
        .map(|e| format!("{:?}", e.0))
        .unwrap_or_default();
    let value = |v: &[(Vec<usize>, Node)]| v.get(first).map_or("nothing".into(), |e| show(&e.1));
    format!(
        "array {da} {sa}: {} of {} elements differ, first at {at}: wrote {}, read {}",
        differ.len(),
        ea.len(),
        value(&ea),
        value(&eb)
    )
}

/// A scalar or a short flow sequence (`[2, 3]`).
fn show_flat(node: &Node) -> String {
    match node.as_seq() {
        Some(items) => format!(
            "[{}]",
            items.iter().map(show_flat).collect::<Vec<_>>().join(", ")
        ),
        None => match node.as_str() {
            Some(s) => s.to_string(),
            None => show(node),
        },
    }
}

/// The leaves of nested lists with their indices (record elements, mappings, are leaves).
fn flatten(node: &Node, index: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Node)>) {
    match node.as_seq() {
        Some(items) => {
            for (i, item) in items.iter().enumerate() {
                index.push(i);
                flatten(item, index, out);
                index.pop();
            }
        }
        None => out.push((index.clone(), node.clone())),
    }
}
