//! Rust types with `#[derive(AsdfType)]` generated from ASDF schemas (the ASDF Standard's
//! metaschema keywords and JSON Schema draft 4), for `build.rs` scripts and for
//! `asdftool codegen`.
//!
//! ```
//! use asdf_codegen::{generate, Options, SchemaSource};
//!
//! let schema = SchemaSource::new(
//!     "frame.yaml",
//!     "%YAML 1.1\n---\n\
//!      id: asdf://example.org/schemas/frame-1.0.0\n\
//!      tag: asdf://example.org/tags/frame-1.0.0\n\
//!      title: One frame\n\
//!      type: object\n\
//!      properties:\n  exposure: {type: number}\n  target: {type: string}\n\
//!      required: [exposure]\n",
//! );
//! let out = generate(&[schema], &Options::default())?;
//! assert!(out.code.contains("pub struct Frame {"));
//! assert!(out.code.contains("pub exposure: f64,"));
//! assert!(out.code.contains("pub target: Option<String>,"));
//! assert!(out.warnings.is_empty());
//! # Ok::<(), asdf_codegen::CodegenError>(())
//! ```
//!
//! In a `build.rs`, read the schemas with [`collect_sources`], write `out.code` to
//! `OUT_DIR` and `include!` it. The generated code names `asdf_core`, `ndarray` (arrays),
//! `num_complex` (complex numbers) and `half` (float16 arrays): the crate that compiles it
//! depends on those it uses.
//!
//! The mapping from schema keywords to Rust is the table of `docs/codegen.md`; everything
//! the generator cannot map becomes an `asdf_core::Node` and a [`Warning`] naming it.

#![forbid(unsafe_code)]

mod emit;
mod names;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use asdf_core::yaml::{parse, YamlError, YamlLimits};
use asdf_core::Node;

use emit::{Field, Item, Kind, TagAttr, Variant};
use names::{camel, major_pattern, path_segments, snake, split_version, unique, version_key};

/// One schema (or manifest) document: where it came from, for messages, and its YAML text.
#[derive(Debug, Clone)]
pub struct SchemaSource {
    /// A file path or another label naming the document in warnings.
    pub origin: String,
    /// The YAML text.
    pub text: String,
}

impl SchemaSource {
    /// A document from its text.
    pub fn new(origin: impl Into<String>, text: impl Into<String>) -> Self {
        SchemaSource {
            origin: origin.into(),
            text: text.into(),
        }
    }
}

/// What to generate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every version of each schema, each version in its own module (`v2_2_0::WfiImage`),
    /// instead of the newest version of each.
    pub all_versions: bool,
    /// Arrays as `asdf_core::convert::LazyArray` (read on demand) instead of `ndarray`
    /// arrays.
    pub lazy_arrays: bool,
}

/// Something the generator could not map faithfully: the schema, the place in it, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The schema's id (or its origin when it has none).
    pub schema: String,
    /// A JSON pointer into the schema (`/properties/meta`), empty for the whole schema.
    pub path: String,
    /// What was not mapped and what was generated instead.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}: {}", self.schema, self.path, self.message)
    }
}

/// The generated code and what it left out.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Rust source, rustfmt-clean.
    pub code: String,
    /// One per schema or property that was not mapped faithfully.
    pub warnings: Vec<Warning>,
    /// How many schema documents were turned into a top-level type.
    pub schemas: usize,
    /// How many manifests (tag to schema maps) were read.
    pub manifests: usize,
}

/// Why nothing could be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// A schema file or folder could not be read.
    #[error("{}: cannot read", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A document is not YAML.
    #[error("{origin}: not a yaml document")]
    Yaml {
        /// The document's origin.
        origin: String,
        /// The parser's error.
        #[source]
        source: YamlError,
    },
    /// Two documents declare the same id.
    #[error("{origin}: id {id} is also declared by {other}")]
    DuplicateId {
        /// The id.
        id: String,
        /// The second document.
        origin: String,
        /// The first one.
        other: String,
    },
    /// No schema among the documents.
    #[error("no schema among the documents given")]
    NoSchemas,
}

/// Reads `paths`: each file as one document, each folder's `.yaml`/`.yml` files (recursively),
/// in path order.
pub fn collect_sources(paths: &[PathBuf]) -> Result<Vec<SchemaSource>, CodegenError> {
    fn walk(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), CodegenError> {
        let io = |source| CodegenError::Io {
            path: path.to_path_buf(),
            source,
        };
        if path.is_dir() {
            let mut entries = Vec::new();
            for entry in std::fs::read_dir(path).map_err(io)? {
                entries.push(entry.map_err(io)?.path());
            }
            entries.sort();
            for entry in entries {
                let yaml = entry.extension().is_some_and(|e| e == "yaml" || e == "yml");
                if entry.is_dir() || yaml {
                    walk(&entry, files)?;
                }
            }
        } else {
            files.push(path.to_path_buf());
        }
        Ok(())
    }
    let mut files = Vec::new();
    for p in paths {
        walk(p, &mut files)?;
    }
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| CodegenError::Io {
                path: path.clone(),
                source,
            })?;
            Ok(SchemaSource::new(path.display().to_string(), text))
        })
        .collect()
}

/// A schema document.
struct Doc {
    id: String,
    root: Node,
    /// The id without its version.
    family: String,
    version: Option<String>,
    /// The tag of its instances (the schema's own `tag` or a manifest's).
    tag: Option<String>,
}

/// The standard's namespaces: tags and schema ids of the ASDF Standard.
const STD_TAG: &str = "tag:stsci.edu:asdf/";
const STD_ID: &str = "http://stsci.edu/schemas/asdf/";

/// An object schema merged into a struct, with the document and the pointer it is at.
struct Part {
    node: Node,
    doc: usize,
    ptr: String,
}

/// A mapped schema: the Rust type and what it said about it.
#[derive(Debug, Clone)]
struct Mapped {
    ty: String,
    /// `null` is one of its values (`anyOf: [.., {type: "null"}]`, `type: [x, "null"]`).
    nullable: bool,
    /// The type reads only tagged nodes (a tagged struct, an array), so it can be an enum
    /// variant before others.
    tagged: bool,
    /// A remark for the field's documentation (why it is a `Node`, what it holds).
    note: Option<String>,
}

impl Mapped {
    fn plain(ty: impl Into<String>) -> Self {
        Mapped {
            ty: ty.into(),
            nullable: false,
            tagged: false,
            note: None,
        }
    }

    fn node(note: impl Into<String>) -> Self {
        Mapped {
            note: Some(note.into()),
            ..Mapped::plain(NODE)
        }
    }
}

const NODE: &str = "asdf_core::Node";

/// Generates the types of `sources` (schemas, and ASDF manifests mapping tags to schemas).
pub fn generate(sources: &[SchemaSource], opts: &Options) -> Result<Generated, CodegenError> {
    let mut g = Gen::load(sources, opts)?;
    g.run();
    Ok(g.finish())
}

struct Gen<'o> {
    opts: &'o Options,
    docs: Vec<Doc>,
    by_id: HashMap<String, usize>,
    /// exact tag -> document
    by_tag: HashMap<String, usize>,
    /// The documents generated, in order.
    chosen: Vec<usize>,
    /// family -> the generated document of that family (newest), default mode
    newest: HashMap<String, usize>,
    /// family -> type name
    names: HashMap<String, String>,
    /// module -> items
    modules: BTreeMap<String, Vec<Item>>,
    taken: HashMap<String, HashSet<String>>,
    /// (document, pointer) -> the type of a definition reached by `$ref`
    defs: HashMap<(usize, String), Mapped>,
    /// (document, pointer) of a property -> the struct or enum made for it, shared
    shared: HashMap<(usize, String), (String, Mapped)>,
    /// the properties being mapped, against schemas that contain themselves
    in_progress: HashSet<(usize, String)>,
    warnings: Vec<Warning>,
    manifests: usize,
    /// Warnings on the document being mapped go under this id.
    current: usize,
}

impl<'o> Gen<'o> {
    fn load(sources: &[SchemaSource], opts: &'o Options) -> Result<Self, CodegenError> {
        let mut g = Gen {
            opts,
            docs: Vec::new(),
            by_id: HashMap::new(),
            by_tag: HashMap::new(),
            chosen: Vec::new(),
            newest: HashMap::new(),
            names: HashMap::new(),
            modules: BTreeMap::new(),
            taken: HashMap::new(),
            defs: HashMap::new(),
            shared: HashMap::new(),
            in_progress: HashSet::new(),
            warnings: Vec::new(),
            manifests: 0,
            current: 0,
        };
        let mut origins: HashMap<String, String> = HashMap::new();
        let mut manifest_tags: Vec<(String, String)> = Vec::new();
        for src in sources {
            // schemas nest little; a lower depth bounds the generator's recursion
            let limits = YamlLimits {
                max_depth: 128,
                ..YamlLimits::default()
            };
            let doc = parse(src.text.as_bytes(), &limits).map_err(|source| CodegenError::Yaml {
                origin: src.origin.clone(),
                source,
            })?;
            let root = doc.root;
            if root.as_map().is_none() {
                g.warn_at(&src.origin, "", "not a mapping: not a schema, left out");
                continue;
            }
            if let Some(tags) = root.get("tags").and_then(Node::as_seq) {
                g.manifests += 1;
                for t in tags {
                    let tag = t.get("tag_uri").and_then(Node::as_str);
                    let schema = t.get("schema_uri").and_then(Node::as_str);
                    if let (Some(tag), Some(schema)) = (tag, schema) {
                        manifest_tags.push((schema.to_string(), tag.to_string()));
                    }
                }
                continue;
            }
            let id = match root.get("id").and_then(Node::as_str) {
                Some(id) => id.to_string(),
                None => {
                    let stem = Path::new(&src.origin)
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_else(|| src.origin.clone());
                    g.warn_at(&src.origin, "", "no id: named from its file name");
                    stem
                }
            };
            if let Some(other) = origins.get(&id) {
                return Err(CodegenError::DuplicateId {
                    id,
                    origin: src.origin.clone(),
                    other: other.clone(),
                });
            }
            origins.insert(id.clone(), src.origin.clone());
            let (family, version) = split_version(&id);
            // a schema's own `tag` keyword names the tag of its instances
            let tag = root
                .get("tag")
                .and_then(Node::as_str)
                .filter(|t| !t.contains('*'))
                .map(str::to_string);
            g.by_id.insert(id.clone(), g.docs.len());
            g.docs.push(Doc {
                family: family.to_string(),
                version: version.map(str::to_string),
                id,
                root,
                tag,
            });
        }
        for (schema, tag) in manifest_tags {
            if let Some(&i) = g.by_id.get(&schema) {
                g.docs[i].tag.get_or_insert(tag);
            }
        }
        for (i, d) in g.docs.iter().enumerate() {
            if let Some(t) = &d.tag {
                g.by_tag.insert(t.clone(), i);
            }
        }
        if g.docs.is_empty() {
            return Err(CodegenError::NoSchemas);
        }
        Ok(g)
    }

    fn warn_at(&mut self, schema: &str, path: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            schema: schema.to_string(),
            path: path.to_string(),
            message: message.into(),
        });
    }

    fn warn(&mut self, path: &str, message: impl Into<String>) {
        let id = self.docs[self.current].id.clone();
        self.warn_at(&id, path, message);
    }

    fn module_of(&self, doc: usize) -> String {
        if !self.opts.all_versions {
            return String::new();
        }
        match &self.docs[doc].version {
            Some(v) => format!("v{}", v.replace('.', "_")),
            None => "unversioned".to_string(),
        }
    }

    /// The path of a type defined in `doc`'s module, seen from the current document.
    fn type_path(&self, doc: usize, name: &str) -> String {
        let here = self.module_of(self.current);
        let there = self.module_of(doc);
        if here == there {
            name.to_string()
        } else {
            format!("super::{there}::{name}")
        }
    }

    fn choose(&mut self) {
        let mut families: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, d) in self.docs.iter().enumerate() {
            families.entry(d.family.clone()).or_default().push(i);
        }
        for (family, mut members) in families {
            members.sort_by_key(|&i| version_key(self.docs[i].version.as_deref()));
            let newest = *members.last().unwrap_or(&0);
            self.newest.insert(family, newest);
            if self.opts.all_versions {
                self.chosen.extend(members);
            } else {
                self.chosen.push(newest);
            }
        }
        // names: the id's last segment; families sharing it take the segments before it
        // until they differ
        let families: Vec<String> = self.newest.keys().cloned().collect();
        let mut depth: HashMap<String, usize> = families.iter().map(|f| (f.clone(), 1)).collect();
        let name_of = |f: &str, k: usize| {
            let segs: Vec<&str> = path_segments(f)
                .into_iter()
                .filter(|s| *s != "schemas")
                .collect();
            let from = segs.len().saturating_sub(k);
            // JWST's ids end in `.schema` (`.../image.schema`)
            let joined = segs[from..].join("_");
            camel(joined.strip_suffix(".schema").unwrap_or(&joined))
        };
        for _ in 0..8 {
            let mut count: HashMap<String, usize> = HashMap::new();
            for f in &families {
                *count.entry(name_of(f, depth[f])).or_default() += 1;
            }
            // of the families sharing a name, the one with the shortest path keeps it
            // (when it alone is shortest); the others take more of their path
            let mut shortest: HashMap<String, (usize, usize)> = HashMap::new();
            for f in &families {
                let n = name_of(f, depth[f]);
                if count[&n] > 1 {
                    let len = path_segments(f).len();
                    let e = shortest.entry(n).or_insert((usize::MAX, 0));
                    if len < e.0 {
                        *e = (len, 1);
                    } else if len == e.0 {
                        e.1 += 1;
                    }
                }
            }
            let mut again = false;
            for f in &families {
                let n = name_of(f, depth[f]);
                if count[&n] > 1 {
                    let (len, how_many) = shortest[&n];
                    if how_many == 1 && path_segments(f).len() == len {
                        continue;
                    }
                    *depth.get_mut(f).unwrap_or(&mut 0) += 1;
                    again = true;
                }
            }
            if !again {
                break;
            }
        }
        let mut all = HashSet::new();
        for f in &families {
            let name = unique(name_of(f, depth[f]), &mut all);
            self.names.insert(f.clone(), name);
        }
        for &i in &self.chosen.clone() {
            let module = self.module_of(i);
            let name = self.names[&self.docs[i].family].clone();
            self.taken.entry(module).or_default().insert(name);
        }
    }

    fn run(&mut self) {
        self.choose();
        for i in self.chosen.clone() {
            self.current = i;
            self.top_level(i);
        }
    }

    fn push(&mut self, item: Item) {
        let module = self.module_of(self.current);
        self.modules.entry(module).or_default().push(item);
    }

    /// A fresh name for a nested type in the current module.
    fn fresh(&mut self, name: String) -> String {
        let module = self.module_of(self.current);
        unique(name, self.taken.entry(module).or_default())
    }

    fn top_level(&mut self, i: usize) {
        let doc = &self.docs[i];
        let name = self.names[&doc.family].clone();
        // the root's own `tag` keyword is the tag of the instances (taken above), not a
        // reference to a type
        let root = match doc.root.as_map() {
            Some(m) if doc.root.get("tag").is_some() => Node::new(asdf_core::Value::Map(
                m.iter()
                    .filter(|(k, _)| k.as_str() != Some("tag"))
                    .cloned()
                    .collect(),
            )),
            _ => doc.root.clone(),
        };
        let id = doc.id.clone();
        let tag = doc.tag.clone().map(|t| TagAttr {
            pattern: major_pattern(&t).filter(|p| p != &t),
            tag: t,
        });
        let mut docs = doc_lines(&root);
        if !docs.is_empty() {
            docs.push(String::new());
        }
        docs.push(format!("Generated from `{id}`."));
        if let Some(t) = &tag {
            docs.push(format!("Tag `{}`.", t.tag));
        }
        let mapped = if is_object(&root) {
            self.object(&root, "", name.clone(), true, Vec::new())
        } else {
            // the schema's own name is free for the type mapping it defines (an enum, a
            // struct merged from `allOf`)
            let module = self.module_of(i);
            self.taken.entry(module.clone()).or_default().remove(&name);
            let m = self.map(&root, "", &name);
            self.taken.entry(module).or_default().insert(name.clone());
            m
        };
        let module = self.module_of(i);
        let found = self
            .modules
            .get(&module)
            .and_then(|items| items.iter().rposition(|it| it.name == mapped.ty));
        match found {
            Some(at) => {
                let item = &mut self.modules.get_mut(&module).expect("found above")[at];
                match &mut item.kind {
                    Kind::Struct { tag: t, .. } => {
                        *t = tag;
                        item.docs = docs;
                    }
                    _ if tag.is_some() => {
                        // an enum under the schema's name: the tagged schema wraps it
                        let inner = format!("{name}Value");
                        item.name = inner.clone();
                        self.taken.entry(module).or_default().insert(inner.clone());
                        self.push(Item {
                            name,
                            docs,
                            kind: Kind::Newtype { tag, ty: inner },
                        });
                    }
                    _ => item.docs = docs,
                }
            }
            None => {
                let kind = match tag {
                    Some(tag) => Kind::Newtype {
                        tag: Some(tag),
                        ty: mapped.ty,
                    },
                    None => Kind::Alias { ty: mapped.ty },
                };
                let mut docs = docs;
                if let Some(n) = mapped.note {
                    docs.push(String::new());
                    docs.push(n);
                }
                self.push(Item { name, docs, kind });
            }
        }
    }

    /// Resolves a `$ref` seen in the current document: (document, JSON pointer), or the
    /// absolute URI when no document has it.
    fn resolve(&self, reference: &str) -> Result<(usize, String), String> {
        self.resolve_in(self.current, reference)
    }

    /// Resolves a `$ref` seen in the document `doc`.
    fn resolve_in(&self, doc: usize, reference: &str) -> Result<(usize, String), String> {
        let (uri, pointer) = reference.split_once('#').unwrap_or((reference, ""));
        let base = &self.docs[doc].id;
        let abs = if uri.is_empty() {
            base.clone()
        } else {
            join_uri(base, uri)
        };
        match self.by_id.get(&abs) {
            Some(&d) => Ok((d, pointer.to_string())),
            None => Err(abs),
        }
    }

    /// The type of the document `d` from the current one: in the default mode an older
    /// version stands for its family's newest (a warning says so).
    fn doc_type(&mut self, d: usize, path: &str) -> Mapped {
        let target = if self.opts.all_versions {
            d
        } else {
            let newest = self.newest[&self.docs[d].family];
            if newest != d {
                let msg = format!(
                    "refers to {}: mapped to the newest version, {}",
                    self.docs[d].id, self.docs[newest].id
                );
                self.warn(path, msg);
            }
            newest
        };
        let name = self.names[&self.docs[target].family].clone();
        Mapped {
            ty: self.type_path(target, &name),
            nullable: false,
            tagged: self.docs[target].tag.is_some() && is_object(&self.docs[target].root),
            note: None,
        }
    }

    /// The type a tag's instances map to.
    fn tag_type(&mut self, schema: &Node, tag: &str, path: &str) -> Mapped {
        if let Some(kind) = std_kind(tag) {
            return self.std_type(schema, &kind, path);
        }
        if tag.starts_with("tag:stsci.edu:gwcs/") {
            return Mapped::node(format!("A gwcs object (`{tag}`): kept as its tree."));
        }
        let found = if let Some(prefix) = tag.strip_suffix('*') {
            let mut best: Option<usize> = None;
            for (t, &d) in &self.by_tag {
                if t.starts_with(prefix) && !t[prefix.len()..].contains('/') {
                    let newer = best.is_none_or(|b| {
                        version_key(self.docs[d].version.as_deref())
                            > version_key(self.docs[b].version.as_deref())
                    });
                    if newer {
                        best = Some(d);
                    }
                }
            }
            best
        } else {
            self.by_tag.get(tag).copied()
        };
        match found {
            Some(d) => {
                let mut m = self.doc_type(d, path);
                m.tagged = true;
                m
            }
            None => {
                self.warn(
                    path,
                    format!("tag {tag}: no schema given for it, kept as Node"),
                );
                Mapped::node(format!(
                    "Tag `{tag}`: no schema given for it, kept as its tree."
                ))
            }
        }
    }

    /// The ASDF Standard's types: arrays and complex numbers typed, the rest as `Node`.
    fn std_type(&mut self, schema: &Node, kind: &str, path: &str) -> Mapped {
        match kind {
            "core/ndarray" => self.array(schema, path),
            "core/complex" => Mapped::plain("num_complex::Complex<f64>"),
            _ => Mapped::node(format!(
                "An ASDF `{kind}` (asdf-core has no typed form for it): kept as its tree."
            )),
        }
    }

    fn array(&mut self, schema: &Node, path: &str) -> Mapped {
        let datatype = schema.get("datatype");
        let elem = match datatype {
            None => None,
            Some(dt) => match dt.as_str() {
                Some(name) => element_type(name),
                None => match dt.as_seq() {
                    Some([kind, _len]) if matches!(kind.as_str(), Some("ascii" | "ucs4")) => {
                        Some("String")
                    }
                    _ => None,
                },
            },
        };
        let ndim = schema
            .get("ndim")
            .and_then(Node::as_i64)
            .filter(|n| (0..=6).contains(n));
        let Some(elem) = elem else {
            if let Some(dt) = datatype {
                let what = dt
                    .as_str()
                    .map_or_else(|| "a record".to_string(), |s| format!("`{s}`"));
                return Mapped {
                    tagged: true,
                    ..Mapped::plain("asdf_core::array::DynArray")
                }
                .with_note(format!(
                    "Datatype {what}: no ndarray element type, read as a DynArray."
                ))
                .warned(
                    self,
                    path,
                    "an ndarray of a datatype with no element type: DynArray",
                );
            }
            return Mapped {
                tagged: true,
                ..Mapped::plain("asdf_core::array::DynArray")
            };
        };
        let dim = match ndim {
            Some(n) => format!("Ix{n}"),
            None => "IxDyn".to_string(),
        };
        let ty = if self.opts.lazy_arrays && elem != "String" {
            format!("asdf_core::convert::LazyArray<{elem}, ndarray::{dim}>")
        } else {
            match ndim {
                Some(n) => format!("ndarray::Array{n}<{elem}>"),
                None => format!("ndarray::ArrayD<{elem}>"),
            }
        };
        Mapped {
            tagged: true,
            ..Mapped::plain(ty)
        }
    }

    /// Maps a schema (a property, an item, a branch) to a Rust type; `name` names the type
    /// defined for it when it is an object or an enum.
    fn map(&mut self, schema: &Node, path: &str, name: &str) -> Mapped {
        if schema.as_map().is_none() {
            if schema.as_bool() == Some(false) {
                self.warn(path, "the schema `false` accepts nothing: kept as Node");
            }
            return Mapped::plain(NODE);
        }
        if let Some(r) = schema.get("$ref").and_then(Node::as_str) {
            return self.reference(schema, r, path, name);
        }
        if let Some(tag) = schema.get("tag").and_then(Node::as_str) {
            return self.tag_type(schema, tag, path);
        }
        if schema.get("datatype").is_some() || schema.get("ndim").is_some() {
            return self.array(schema, path);
        }
        if let Some(branches) = schema.get("allOf").and_then(Node::as_seq) {
            return self.all_of(schema, branches, path, name);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = schema.get(key).and_then(Node::as_seq) {
                return self.any_of(branches, &format!("{path}/{key}"), name);
            }
        }
        if let Some(values) = schema.get("enum").and_then(Node::as_seq) {
            return self.enumeration(schema, values, path, name);
        }
        match schema.get("type") {
            Some(t) if t.as_str().is_some() => {
                let t = t.as_str().unwrap_or_default();
                self.typed(schema, t, path, name)
            }
            Some(t) => {
                let kinds: Vec<&str> = t
                    .as_seq()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(Node::as_str)
                    .collect();
                let nullable = kinds.contains(&"null");
                let rest: Vec<&str> = kinds.into_iter().filter(|k| *k != "null").collect();
                let mut m = match rest.as_slice() {
                    [one] => self.typed(schema, one, path, name),
                    [] => Mapped::plain(NODE),
                    _ => {
                        self.warn(path, format!("type {rest:?}: untagged alternatives cannot be told apart by a derive, kept as Node"));
                        Mapped::node(format!("One of the types {}: kept as its tree (untagged alternatives cannot be told apart).", rest.join(", ")))
                    }
                };
                m.nullable |= nullable;
                m
            }
            None if schema.get("properties").is_some() => {
                self.object(schema, path, name.to_string(), false, Vec::new())
            }
            None => {
                let unknown: Vec<&str> = schema
                    .as_map()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|(k, _)| k.as_str())
                    .filter(|k| CONSTRAINTS.contains(k))
                    .collect();
                if !unknown.is_empty() {
                    self.warn(
                        path,
                        format!("{}: not mapped, kept as Node", unknown.join(", ")),
                    );
                    return Mapped::node(format!(
                        "Constrained by {}: kept as its tree.",
                        unknown.join(", ")
                    ));
                }
                Mapped::plain(NODE)
            }
        }
    }

    fn reference(&mut self, schema: &Node, r: &str, path: &str, name: &str) -> Mapped {
        match self.resolve(r) {
            Ok((d, pointer)) if pointer.is_empty() || pointer == "/" => self.doc_type(d, path),
            Ok((d, pointer)) => {
                if let Some(m) = self.defs.get(&(d, pointer.clone())) {
                    return m.clone();
                }
                let Some(target) = self.docs[d].root.pointer(&pointer).cloned() else {
                    self.warn(path, format!("$ref {r}: no such place, kept as Node"));
                    return Mapped::node(format!("`$ref: {r}` points nowhere: kept as its tree."));
                };
                let last = pointer.rsplit('/').next().unwrap_or_default();
                let owner = self.names[&self.docs[d].family].clone();
                let def_name = format!("{owner}{}", camel(last));
                // a placeholder first: a definition that refers to itself ends here
                self.defs
                    .insert((d, pointer.clone()), Mapped::plain(def_name.clone()));
                let saved = self.current;
                self.current = d;
                let m = self.map(&target, &pointer, &def_name);
                self.current = saved;
                let m = Mapped {
                    ty: if m.ty == def_name {
                        self.type_path(d, &def_name)
                    } else {
                        m.ty
                    },
                    ..m
                };
                self.defs.insert((d, pointer), m.clone());
                m
            }
            Err(abs) => {
                if let Some(kind) = std_kind(&abs) {
                    return self.std_type(schema, &kind, path);
                }
                let _ = name;
                self.warn(path, format!("$ref {abs}: schema not given, kept as Node"));
                Mapped::node(format!(
                    "`$ref: {abs}`: that schema was not given, kept as its tree."
                ))
            }
        }
    }

    fn typed(&mut self, schema: &Node, t: &str, path: &str, name: &str) -> Mapped {
        match t {
            "string" => Mapped::plain("String"),
            "integer" => Mapped::plain("i64"),
            "number" => Mapped::plain("f64"),
            "boolean" => Mapped::plain("bool"),
            "null" => Mapped {
                nullable: true,
                ..Mapped::node("Always null.")
            },
            "array" => match schema.get("items") {
                Some(items) if items.as_seq().is_some() => {
                    self.warn(path, "array of positional items: kept as a list of Node");
                    Mapped::plain(format!("Vec<{NODE}>"))
                        .with_note("Positional items: each kept as its tree.".to_string())
                }
                Some(items) => {
                    let m = self.map(items, &format!("{path}/items"), &format!("{name}Item"));
                    let inner = if m.nullable {
                        format!("Option<{}>", m.ty)
                    } else {
                        m.ty
                    };
                    Mapped {
                        note: m.note,
                        ..Mapped::plain(format!("Vec<{inner}>"))
                    }
                }
                None => Mapped::plain(format!("Vec<{NODE}>")),
            },
            "object" => {
                if schema.get("properties").is_some() {
                    return self.object(schema, path, name.to_string(), false, Vec::new());
                }
                match schema.get("additionalProperties") {
                    Some(a) if a.as_map().is_some_and(|m| !m.is_empty()) => {
                        let m = self.map(
                            a,
                            &format!("{path}/additionalProperties"),
                            &format!("{name}Value"),
                        );
                        let inner = if m.nullable {
                            format!("Option<{}>", m.ty)
                        } else {
                            m.ty
                        };
                        Mapped {
                            note: m.note,
                            ..Mapped::plain(format!("asdf_core::convert::OrderedMap<{inner}>"))
                        }
                    }
                    _ => Mapped::plain(NODE).with_note("Any mapping.".to_string()),
                }
            }
            other => {
                self.warn(path, format!("type {other}: unknown, kept as Node"));
                Mapped::node(format!("Type `{other}`: unknown, kept as its tree."))
            }
        }
    }

    fn enumeration(&mut self, schema: &Node, values: &[Node], path: &str, name: &str) -> Mapped {
        let nullable = values.iter().any(Node::is_null);
        let values: Vec<&Node> = values.iter().filter(|v| !v.is_null()).collect();
        let strings: Option<Vec<&str>> = values.iter().map(|v| v.as_str()).collect();
        match strings {
            Some(strings) if !strings.is_empty() => {
                let type_name = self.fresh(name.to_string());
                let mut taken = HashSet::new();
                let mut variants = Vec::new();
                let mut seen = HashSet::new();
                for s in strings {
                    if !seen.insert(s) {
                        continue;
                    }
                    let v = unique(camel(s), &mut taken);
                    variants.push(Variant {
                        rename: (v != s).then(|| s.to_string()),
                        name: v,
                        ty: None,
                    });
                }
                self.push(Item {
                    name: type_name.clone(),
                    docs: doc_lines(schema),
                    kind: Kind::Enum { variants },
                });
                Mapped {
                    nullable,
                    ..Mapped::plain(type_name)
                }
            }
            _ => {
                let ty = schema.get("type").and_then(Node::as_str).unwrap_or("");
                let mut m = if ty.is_empty() {
                    let all_int = values.iter().all(|v| v.as_int().is_some());
                    let all_bool = values.iter().all(|v| v.as_bool().is_some());
                    if all_int && !values.is_empty() {
                        Mapped::plain("i64")
                    } else if all_bool && !values.is_empty() {
                        Mapped::plain("bool")
                    } else {
                        self.warn(path, "enum of mixed values: kept as Node");
                        Mapped::node("One of a fixed set of values: kept as its tree.")
                    }
                } else {
                    self.typed(schema, ty, path, name)
                };
                m.nullable |= nullable;
                m
            }
        }
    }

    fn any_of(&mut self, branches: &[Node], path: &str, name: &str) -> Mapped {
        let is_null = |b: &Node| b.get("type").and_then(Node::as_str) == Some("null");
        let nullable = branches.iter().any(is_null);
        let rest: Vec<(usize, &Node)> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| !is_null(b))
            .collect();
        if let [(i, only)] = rest.as_slice() {
            let mut m = self.map(only, &format!("{path}/{i}"), name);
            m.nullable |= nullable;
            return m;
        }
        if rest.is_empty() {
            return Mapped {
                nullable,
                ..Mapped::plain(NODE)
            };
        }
        let mut mapped = Vec::new();
        let warnings_before = self.warnings.len();
        for (i, b) in &rest {
            mapped.push(self.map(b, &format!("{path}/{i}"), &format!("{name}{i}")));
        }
        let untagged = mapped.iter().filter(|m| !m.tagged).count();
        let distinct: HashSet<&str> = mapped.iter().map(|m| m.ty.as_str()).collect();
        if untagged <= 1 && distinct.len() == mapped.len() {
            let type_name = self.fresh(name.to_string());
            let mut taken = HashSet::new();
            let mut variants: Vec<Variant> = mapped
                .iter()
                .map(|m| {
                    let base = m.ty.rsplit("::").next().unwrap_or(&m.ty);
                    let base = base.split('<').next().unwrap_or(base);
                    Variant {
                        name: unique(camel(base), &mut taken),
                        rename: None,
                        ty: Some(if m.nullable {
                            format!("Option<{}>", m.ty)
                        } else {
                            m.ty.clone()
                        }),
                    }
                })
                .collect();
            // the variant reading any tag goes last
            let order: Vec<bool> = mapped.iter().map(|m| !m.tagged).collect();
            let mut paired: Vec<(bool, Variant)> =
                order.into_iter().zip(variants.drain(..)).collect();
            paired.sort_by_key(|(untagged, _)| *untagged);
            self.push(Item {
                name: type_name.clone(),
                docs: vec![
                    "One of the alternatives of the schema, told apart by their tags.".to_string(),
                ],
                kind: Kind::Enum {
                    variants: paired.into_iter().map(|(_, v)| v).collect(),
                },
            });
            return Mapped {
                nullable,
                ..Mapped::plain(type_name)
            };
        }
        // the branches' own types are not used: drop what they defined and said
        self.warnings.truncate(warnings_before);
        self.warn(path, "alternatives not told apart by tags: kept as Node");
        Mapped {
            nullable,
            ..Mapped::node(format!(
                "One of {} alternatives that are not told apart by their tags: kept as its tree.",
                mapped.len()
            ))
        }
    }

    /// `allOf`: objects merged into one struct; otherwise the one branch that gives a type.
    fn all_of(&mut self, schema: &Node, branches: &[Node], path: &str, name: &str) -> Mapped {
        let mut parts: Vec<Part> = Vec::new();
        let mut leftovers: Vec<(String, Node)> = Vec::new();
        let here = self.current;
        self.flatten(schema, here, path, path, 0, &mut parts, &mut leftovers);
        if !path.is_empty() && parts.iter().any(|p| p.doc == here && p.ptr.is_empty()) {
            // the schema merges its own root into one of its properties: no finite struct
            self.warn(path, "contains itself: kept as Node");
            return Mapped::node("Contains itself (a recursive schema): kept as its tree.");
        }
        let _ = branches;
        if !parts.is_empty() && leftovers.is_empty() {
            let null = Node::new(asdf_core::Value::Null);
            return self.object(&null, path, name.to_string(), false, parts);
        }
        if parts.is_empty() && leftovers.len() == 1 {
            let (p, b) = leftovers.remove(0);
            return self.map(&b, &p, name);
        }
        if parts.is_empty() && leftovers.is_empty() {
            return Mapped::plain(NODE);
        }
        self.warn(
            &format!("{path}/allOf"),
            "branches of different kinds cannot be merged: kept as Node",
        );
        Mapped::node("All of several schemas that are not all objects: kept as its tree.")
    }

    /// Collects the object schemas an `allOf` (and the `allOf`s of the schemas its `$ref`s
    /// name) merges into `parts`, each with the document and the pointer it is at, and the
    /// branches giving another type into `leftovers`.
    #[allow(clippy::too_many_arguments)]
    fn flatten(
        &self,
        schema: &Node,
        doc: usize,
        ptr: &str,
        path: &str,
        depth: usize,
        parts: &mut Vec<Part>,
        leftovers: &mut Vec<(String, Node)>,
    ) {
        if depth > 16 {
            leftovers.push((path.to_string(), schema.clone()));
            return;
        }
        let (target, doc, ptr) = match self.deref_in(doc, schema) {
            Some((node, d, p)) => (node, d, p),
            None => (schema.clone(), doc, ptr.to_string()),
        };
        let Some(branches) = target.get("allOf").and_then(Node::as_seq) else {
            if is_object(&target) {
                parts.push(Part {
                    node: target,
                    doc,
                    ptr,
                });
            } else if gives_type(&target) {
                leftovers.push((path.to_string(), schema.clone()));
            }
            return;
        };
        // the schema's own keywords beside its allOf
        if let Some(m) = target.as_map() {
            let rest: Vec<(Node, Node)> = m
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), Some("allOf" | "$ref")))
                .cloned()
                .collect();
            let own = Node::new(asdf_core::Value::Map(rest));
            if is_object(&own) {
                parts.push(Part {
                    node: own,
                    doc,
                    ptr: ptr.clone(),
                });
            }
        }
        for (i, b) in branches.iter().enumerate() {
            let p = format!("{ptr}/allOf/{i}");
            let shown = format!("{path}/allOf/{i}");
            self.flatten(b, doc, &p, &shown, depth + 1, parts, leftovers);
        }
    }

    /// A `$ref` (seen in `doc`) replaced by the schema it names, with its document and
    /// pointer, when given and an object or an `allOf`, for merging.
    fn deref_in(&self, doc: usize, b: &Node) -> Option<(Node, usize, String)> {
        let r = b.get("$ref").and_then(Node::as_str)?;
        let (d, pointer) = self.resolve_in(doc, r).ok()?;
        let root = &self.docs[d].root;
        let t = if pointer.is_empty() {
            Some(root)
        } else {
            root.pointer(&pointer)
        }?;
        (is_object(t) || t.get("allOf").is_some()).then(|| (t.clone(), d, pointer))
    }

    /// Maps the property schema at `ptr` of document `doc` once: a struct or enum made for
    /// it is shared by every struct merging it (`allOf` of a `$ref`), named from its own
    /// document (`CoreMeta`, not `ImageMeta` and `FlatMeta`).
    fn shared_map(&mut self, prop: &Node, doc: usize, ptr: &str, hint: &str) -> Mapped {
        let key = (doc, ptr.to_string());
        if let Some((name, m)) = self.shared.get(&key) {
            return Mapped {
                ty: self.type_path(doc, name),
                ..m.clone()
            };
        }
        if !self.in_progress.insert(key.clone()) {
            // a schema holding itself (a tree of nodes) would need a Box
            let saved = std::mem::replace(&mut self.current, doc);
            self.warn(ptr, "contains itself: kept as Node");
            self.current = saved;
            return Mapped::node("Contains itself (a recursive schema): kept as its tree.");
        }
        let saved = self.current;
        let module = self.module_of(doc);
        let before = self.modules.get(&module).map_or(0, Vec::len);
        let warned = self.warnings.len();
        self.current = doc;
        let m = self.map(prop, ptr, hint);
        self.current = saved;
        self.in_progress.remove(&key);
        let made = self
            .modules
            .get(&module)
            .is_some_and(|items| items[before..].iter().any(|it| it.name == m.ty));
        if made {
            self.shared.insert(key, (m.ty.clone(), m.clone()));
            return Mapped {
                ty: self.type_path(doc, &m.ty),
                ..m
            };
        }
        if doc == saved || module == self.module_of(saved) {
            return m;
        }
        // a type spelled for another module: map it again here
        self.warnings.truncate(warned);
        self.map(prop, ptr, hint)
    }

    /// A struct for an object schema (and the `extra` parts merged into it by `allOf`).
    fn object(
        &mut self,
        schema: &Node,
        path: &str,
        name: String,
        top: bool,
        mut parts: Vec<Part>,
    ) -> Mapped {
        if parts.is_empty() {
            parts.push(Part {
                node: schema.clone(),
                doc: self.current,
                ptr: path.to_string(),
            });
        }
        let type_name = if top { name } else { self.fresh(name) };
        let mut keys: Vec<(String, Node, usize, String, bool)> = Vec::new();
        let mut required: HashSet<String> = HashSet::new();
        let mut closed = false;
        for part in &parts {
            // a part at the root of another document (reached by `$ref`) shares the types
            // of its properties with that document's own type
            let root_level = part.doc != self.current
                && part
                    .ptr
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .chunks(2)
                    .all(|c| c.len() == 2 && c[0] == "allOf");
            let base = &part.ptr;
            let parts_doc = part.doc;
            let part = &part.node;
            if let Some(props) = part.get("properties").and_then(Node::as_map) {
                for (k, v) in props {
                    let Some(k) = k.as_str() else { continue };
                    if let Some(existing) = keys.iter_mut().find(|(key, ..)| key == k) {
                        // both apply: keep the one saying more about the type
                        if !gives_type(&existing.1) && gives_type(v) {
                            existing.1 = v.clone();
                        }
                        continue;
                    }
                    keys.push((
                        k.to_string(),
                        v.clone(),
                        parts_doc,
                        format!(
                            "{base}/properties/{}",
                            k.replace('~', "~0").replace('/', "~1")
                        ),
                        root_level,
                    ));
                }
            }
            if let Some(req) = part.get("required").and_then(Node::as_seq) {
                required.extend(req.iter().filter_map(Node::as_str).map(str::to_string));
            }
            if part.get("additionalProperties").and_then(Node::as_bool) == Some(false) {
                closed = true;
            }
        }
        let mut taken: HashSet<String> = HashSet::new();
        let mut fields = Vec::new();
        for (key, prop, pdoc, ppath, root_level) in keys {
            let ident = unique(snake(&key), &mut taken);
            let m = if root_level {
                let owner = self.names[&self.docs[pdoc].family].clone();
                self.shared_map(&prop, pdoc, &ppath, &format!("{owner}{}", camel(&key)))
            } else if pdoc == self.current {
                self.shared_map(&prop, pdoc, &ppath, &format!("{type_name}{}", camel(&key)))
            } else {
                self.map(&prop, &ppath, &format!("{type_name}{}", camel(&key)))
            };
            let is_required = required.contains(&key);
            // a struct holding itself directly needs a Box
            let m = if m.ty == type_name {
                Mapped {
                    ty: format!("Box<{}>", m.ty),
                    ..m
                }
            } else {
                m
            };
            let (ty, keep_null) = match (is_required, m.nullable) {
                (true, false) => (m.ty.clone(), false),
                (true, true) => (format!("Option<{}>", m.ty), true),
                (false, _) => (format!("Option<{}>", m.ty), false),
            };
            let mut docs = doc_lines(&prop);
            if let Some(n) = &m.note {
                if !docs.is_empty() {
                    docs.push(String::new());
                }
                docs.push(n.clone());
            }
            fields.push(Field {
                rename: (ident != key).then(|| key.clone()),
                ident,
                docs,
                ty,
                keep_null,
            });
        }
        let extra = (!closed).then(|| unique("extra".to_string(), &mut taken));
        let mut docs = doc_lines(schema);
        if docs.is_empty() && !top {
            docs.push(format!(
                "The object at `{}` of `{}`.",
                if path.is_empty() { "/" } else { path },
                self.docs[self.current].id
            ));
        }
        self.push(Item {
            name: type_name.clone(),
            docs,
            kind: Kind::Struct {
                tag: None,
                fields,
                extra,
            },
        });
        Mapped::plain(type_name)
    }

    fn finish(self) -> Generated {
        let mut code = String::new();
        code.push_str("// @generated by asdf-codegen (asdfrs-codegen): do not edit by hand.\n");
        let mut first = true;
        let ind = if self.opts.all_versions { "    " } else { "" };
        for (module, items) in &self.modules {
            if !module.is_empty() {
                code.push('\n');
                code.push_str(&format!("pub mod {module} {{\n"));
                first = true;
            }
            for item in items {
                if !first || module.is_empty() {
                    code.push('\n');
                }
                first = false;
                emit::item(&mut code, ind, item);
            }
            if !module.is_empty() {
                code.push_str("}\n");
            }
        }
        Generated {
            code,
            warnings: self.warnings,
            schemas: self.chosen.len(),
            manifests: self.manifests,
        }
    }
}

impl Mapped {
    fn with_note(mut self, note: String) -> Self {
        self.note = Some(note);
        self
    }

    fn warned(self, g: &mut Gen<'_>, path: &str, message: &str) -> Self {
        g.warn(path, message);
        self
    }
}

/// Keywords that constrain a value without giving its type: a schema made only of them and
/// annotations is kept as a `Node` with a warning.
const CONSTRAINTS: &[&str] = &[
    "not",
    "patternProperties",
    "dependencies",
    "items",
    "minItems",
    "maxItems",
];

/// An object schema: `type: object` with properties, or properties alone.
fn is_object(schema: &Node) -> bool {
    schema.get("properties").is_some()
        && matches!(
            schema.get("type").and_then(Node::as_str),
            None | Some("object")
        )
        && schema.get("tag").is_none()
}

/// Whether a schema says anything about its value's type.
fn gives_type(schema: &Node) -> bool {
    [
        "type",
        "$ref",
        "tag",
        "properties",
        "enum",
        "anyOf",
        "oneOf",
        "allOf",
        "datatype",
        "ndim",
    ]
    .iter()
    .any(|k| schema.get(k).is_some())
}

/// `title` and `description`, as doc lines.
fn doc_lines(schema: &Node) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(t) = schema.get("title").and_then(Node::as_str) {
        lines.extend(t.lines().map(str::to_string));
    }
    if let Some(d) = schema.get("description").and_then(Node::as_str) {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(d.lines().map(str::to_string));
    }
    lines
}

/// `core/ndarray` for the standard's tags and schema ids (any version).
fn std_kind(uri: &str) -> Option<String> {
    let rest = uri
        .strip_prefix(STD_TAG)
        .or_else(|| uri.strip_prefix(STD_ID))?;
    let (base, _) = split_version(rest.trim_end_matches('*').trim_end_matches('.'));
    let base = base.strip_suffix("-1").unwrap_or(base);
    Some(base.to_string())
}

/// The ndarray element type of a datatype name.
fn element_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "int8" => "i8",
        "int16" => "i16",
        "int32" => "i32",
        "int64" => "i64",
        "uint8" => "u8",
        "uint16" => "u16",
        "uint32" => "u32",
        "uint64" => "u64",
        "float16" => "half::f16",
        "float32" => "f32",
        "float64" => "f64",
        "complex64" => "num_complex::Complex<f32>",
        "complex128" => "num_complex::Complex<f64>",
        "bool8" => "bool",
        _ => return None,
    })
}

/// A relative reference resolved against a base URI (RFC 3986's merge of paths, enough for
/// schema ids: `../x-1.0.0`, `x-1.0.0`, absolute URIs as they are).
fn join_uri(base: &str, reference: &str) -> String {
    if reference.contains("://") || reference.starts_with("tag:") || reference.starts_with("urn:") {
        return reference.to_string();
    }
    let (root, path) = match base.find("://") {
        Some(i) => {
            let after = i + 3;
            let slash = base[after..].find('/').map_or(base.len(), |j| after + j);
            (&base[..slash], &base[slash..])
        }
        None => ("", base),
    };
    let mut segs: Vec<&str> = if reference.starts_with('/') {
        Vec::new()
    } else {
        let mut s: Vec<&str> = path.split('/').collect();
        s.pop();
        s
    };
    for part in reference.split('/') {
        match part {
            "." => {}
            ".." => {
                if segs.len() > 1 {
                    segs.pop();
                }
            }
            p => segs.push(p),
        }
    }
    format!("{root}{}", segs.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let base = "asdf://x.org/schemas/a/b-1.0.0";
        assert_eq!(join_uri(base, "c-1.0.0"), "asdf://x.org/schemas/a/c-1.0.0");
        assert_eq!(join_uri(base, "../c-1.0.0"), "asdf://x.org/schemas/c-1.0.0");
        assert_eq!(join_uri(base, "asdf://y.org/z"), "asdf://y.org/z");
        assert_eq!(
            std_kind("tag:stsci.edu:asdf/core/ndarray-1.*").as_deref(),
            Some("core/ndarray")
        );
        assert_eq!(
            std_kind("http://stsci.edu/schemas/asdf/time/time-1.1.0").as_deref(),
            Some("time/time")
        );
        assert_eq!(std_kind("asdf://x.org/tags/a-1.0.0"), None);
    }
}
