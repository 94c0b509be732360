//! HDF5 → ASDF.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use asdf_core::array::{ArrayOptions, DType, DynArray, ScalarType, Storage};
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{Node, Progress, Value};
use hdf5_reader::group::{Group, LinkKind};
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::{Attribute, Dataset, Datatype, Hdf5File, ReferenceType, StringSize};

use crate::datatype::{self, Plan};

mod values;
use crate::filters;
use crate::names::{MASK_ATTR, MASK_VALUE_ATTR, META_KEY};
use crate::{Hdf5Error, Result};

/// HDF5 filter ids with names (as the HDF5 library names them).
const FILTER_NAMES: [(u16, &str); 13] = [
    (1, "deflate"),
    (2, "shuffle"),
    (3, "fletcher32"),
    (4, "szip"),
    (5, "nbit"),
    (6, "scaleoffset"),
    (307, "bzip2"),
    (32000, "lzf"),
    (32001, "blosc"),
    (32004, "lz4"),
    (32008, "bitshuffle"),
    (32015, "zstd"),
    (32017, "sz"),
];

/// The filters asdf-rs decodes (hdf5-reader's built-in ones and those asdf-hdf5 registers
/// with it); a dataset filtered by another is left out ([`ToAsdfOptions::strict`]).
const DECODED: [u16; 11] = [
    1,
    2,
    3,
    4,
    5,
    6,
    filters::LZF,
    filters::BLOSC,
    filters::LZ4,
    filters::BITSHUFFLE,
    filters::ZSTD,
];

/// Bytes of one band of rows read at a time from a dataset converted band by band (whole
/// chunk rows; at least one).
const BAND_BYTES: u64 = 8 << 20;

/// One filter of a dataset's pipeline: id, name, parameters.
type Filter = (u16, String, Vec<u32>);

/// Options of [`to_asdf`].
#[derive(Clone)]
pub struct ToAsdfOptions {
    /// Largest dataset converted, in bytes once read (default 1 TiB): HDF5 declares sizes
    /// that chunks never written fill in, so a small file can declare a huge dataset. A
    /// larger one is an error naming it, before anything is allocated.
    pub max_dataset_bytes: u64,
    /// Compression of every array's block; `None`: `zlib` for datasets that were deflated,
    /// none for the others.
    pub compression: Option<CompressionChoice>,
    /// Told after each dataset is read, and after each band of a dataset read band by band,
    /// `(done, total)`: the bytes of array data read so far, of those of the datasets met so
    /// far (all of them once the file is walked, before the large ones are read band by band;
    /// so the total can grow). For a progress display (`asdftool convert` shows one). Bands
    /// are read while the ASDF file is written, on the writer's reading thread.
    pub progress: Option<Progress>,
    /// Datasets of at least this many bytes (default 32 MiB) are not read whole: they are
    /// read band by band (whole chunk rows along axis 0, about 8 MiB a band) while the ASDF
    /// file is written, and compressed as a stream, so memory holds a few bands whatever the
    /// dataset's size ([`Writer::add_array_pieces`]).
    pub band_min_bytes: u64,
    /// With `false` (the default) a dataset or attribute whose datatype or filter has no
    /// ASDF form yet is left out, listed under `_hdf5/left_out` with why, and in
    /// [`ToAsdfSummary::left_out`], and the rest of the file converts; with `true` it is the
    /// error ([`Hdf5Error::Unsupported`], [`Hdf5Error::Filter`]). A file that cannot be read
    /// is an error either way.
    pub strict: bool,
    /// The ASDF Standard version written (`None`, the default: the writer's default,
    /// [`StandardVersion::default`](asdf_core::StandardVersion::default)).
    pub standard: Option<asdf_core::StandardVersion>,
}

impl Default for ToAsdfOptions {
    fn default() -> Self {
        ToAsdfOptions {
            max_dataset_bytes: 1 << 40,
            compression: None,
            progress: None,
            band_min_bytes: 32 << 20,
            strict: false,
            standard: None,
        }
    }
}

impl std::fmt::Debug for ToAsdfOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToAsdfOptions")
            .field("max_dataset_bytes", &self.max_dataset_bytes)
            .field("compression", &self.compression)
            .field("progress", &self.progress.is_some())
            .field("band_min_bytes", &self.band_min_bytes)
            .field("strict", &self.strict)
            .field("standard", &self.standard)
            .finish()
    }
}

/// What [`to_asdf`] wrote.
#[derive(Clone, Debug)]
pub struct ToAsdfSummary {
    /// Bytes written.
    pub len: u64,
    /// Groups converted (the root included).
    pub groups: usize,
    /// Datasets converted.
    pub datasets: usize,
    /// Attributes kept.
    pub attributes: usize,
    /// Datasets and attributes (`PATH@NAME`) left out, with why (none with
    /// [`ToAsdfOptions::strict`]); also under `_hdf5/left_out` in the file.
    pub left_out: Vec<(String, String)>,
}

fn read_err(path: &str, e: impl std::fmt::Display) -> Hdf5Error {
    Hdf5Error::Read {
        path: path.to_string(),
        message: e.to_string(),
    }
}

/// Opens an HDF5 file for [`read_dataset`], with the filters this crate decodes registered
/// (deflate, shuffle, Fletcher-32 and the plugins listed in the crate's README).
///
/// ```no_run
/// let file = asdf_hdf5::open(std::path::Path::new("run.h5"))?;
/// let image = asdf_hdf5::read_dataset(&file, "/entry/image")?;
/// println!("{:?} {:?}", image.dtype, image.shape);
/// # Ok::<(), asdf_hdf5::Hdf5Error>(())
/// ```
pub fn open(input: &Path) -> Result<Hdf5File> {
    Hdf5File::open_with_options(input, open_options())
        .map_err(|e| read_err(&input.display().to_string(), e))
}

/// hdf5-reader's options: its defaults, with the filters of [`filters`] registered.
fn open_options() -> hdf5_reader::OpenOptions {
    hdf5_reader::OpenOptions::default().with_filter_registry(filters::registry())
}

/// One HDF5 dataset as an ASDF array: numbers, records (packed), fixed-length strings as
/// `ascii`, complex compounds as complex numbers, bool enums as `bool8`, other enums as their
/// integers. Variable-length strings and the datatypes ASDF has no form for are
/// [`Hdf5Error::Unsupported`].
pub fn read_dataset(file: &Hdf5File, path: &str) -> Result<DynArray> {
    let ds = file.dataset(path).map_err(|e| read_err(path, e))?;
    let plan = datatype::plan(ds.dtype()).map_err(|what| Hdf5Error::Unsupported {
        path: path.to_string(),
        what,
    })?;
    dataset_array(&ds, &plan, path, ToAsdfOptions::default().max_dataset_bytes)
}

/// The bytes a dataset declares (variable-length elements counted as their references),
/// checked against the limit before anything is allocated for it.
fn declared_len(ds: &Dataset, path: &str, max: u64) -> Result<u64> {
    let len = ds.raw_byte_len().map_err(|e| read_err(path, e))? as u64;
    if len > max {
        return Err(read_err(
            path,
            format!("the dataset holds {len} bytes, more than the limit of {max}"),
        ));
    }
    Ok(len)
}

fn dataset_array(ds: &Dataset, plan: &Plan, path: &str, max: u64) -> Result<DynArray> {
    // the size the dataset declares, checked before anything is allocated
    declared_len(ds, path, max)?;
    let mut raw = ds.read_raw_bytes().map_err(|e| read_err(path, e))?;
    // no storage allocated (a scalar dataset never written): what h5py reads, the fill
    // value, or zeros without one; its size checked against the limit first
    let elements = ds
        .shape()
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d));
    let want = elements.and_then(|n| n.checked_mul(plan.src_size as u64));
    if raw.is_empty() && want.is_some_and(|w| w > 0) {
        let want = want.unwrap_or(0);
        if want > max {
            return Err(read_err(
                path,
                format!("the dataset holds {want} bytes, more than the limit of {max}"),
            ));
        }
        raw = match ds.fill_value().and_then(|f| f.value.as_ref()) {
            Some(fill) if fill.len() == plan.src_size => fill.repeat(want as usize / fill.len()),
            _ => vec![0; want as usize],
        };
    }
    let mut shape: Vec<usize> = ds.shape().iter().map(|&d| d as usize).collect();
    shape.extend(&plan.inner_shape);
    let data = plan.convert(raw);
    // never an array its block cannot hold: the ASDF reader would refuse the file written
    let needed = shape
        .iter()
        .try_fold(plan.dtype.itemsize(), |acc, &d| acc.checked_mul(d));
    if needed != Some(data.len()) {
        return Err(read_err(
            path,
            format!(
                "the dataset's storage gives {} bytes, its shape {shape:?} and datatype need {}",
                data.len(),
                needed.map_or_else(|| "more than memory holds".to_string(), |n| n.to_string())
            ),
        ));
    }
    Ok(DynArray {
        dtype: plan.dtype.clone(),
        shape,
        data,
    })
}

/// The writer's options for `opts`: its standard version, if one is chosen.
fn write_options(opts: &ToAsdfOptions) -> WriteOptions {
    match &opts.standard {
        Some(v) => WriteOptions::new().standard(v.clone()),
        None => WriteOptions::new(),
    }
}

/// Converts the HDF5 file at `input` into the ASDF file at `output` (written atomically).
pub fn to_asdf(input: &Path, output: &Path, opts: &ToAsdfOptions) -> Result<ToAsdfSummary> {
    let file = open(input)?;
    let mut writer = Writer::new(write_options(opts));
    let (tree, mut summary) = build(&file, &mut writer, opts)?;
    summary.len = writer.write_to_path(&tree, output)?.len;
    Ok(summary)
}

/// Converts an HDF5 file held in memory into the bytes of an ASDF file.
///
/// ```no_run
/// let h5 = std::fs::read("simulation.h5")?;
/// let asdf = asdf_hdf5::to_asdf_bytes(&h5, &asdf_hdf5::ToAsdfOptions::default())?;
/// let file = asdf_core::AsdfFile::from_bytes(asdf)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_asdf_bytes(input: &[u8], opts: &ToAsdfOptions) -> Result<Vec<u8>> {
    let file =
        Hdf5File::from_bytes_with_options(input, open_options()).map_err(|e| read_err("/", e))?;
    let mut writer = Writer::new(write_options(opts));
    let (tree, _) = build(&file, &mut writer, opts)?;
    Ok(writer.write_to_vec(&tree)?)
}

/// The ASDF tree of an HDF5 file, its arrays registered with `writer`.
fn build(
    file: &Hdf5File,
    writer: &mut Writer<'_>,
    opts: &ToAsdfOptions,
) -> Result<(Node, ToAsdfSummary)> {
    let root = file.root_group().map_err(|e| read_err("/", e))?;
    let mut walk = Walk {
        file,
        writer,
        opts,
        seen: HashMap::new(),
        meta: Meta::default(),
        summary: ToAsdfSummary {
            len: 0,
            groups: 0,
            datasets: 0,
            attributes: 0,
            left_out: Vec::new(),
        },
        depth: 0,
        bytes_read: Arc::new(AtomicU64::new(0)),
        total: Arc::new(AtomicU64::new(0)),
        paths: None,
    };
    let mut tree = walk.group(&root, "")?;
    let meta = walk.meta.node();
    let summary = walk.summary.clone();
    if let Some(meta) = meta {
        let Value::Map(entries) = tree.value() else {
            unreachable!("a group is a mapping")
        };
        if entries.iter().any(|(k, _)| k.as_str() == Some(META_KEY)) {
            return Err(Hdf5Error::Tree {
                path: format!("/{META_KEY}"),
                message: format!(
                    "the root group has a member named {META_KEY}, the key that keeps HDF5 metadata"
                ),
            });
        }
        let mut entries = entries.clone();
        entries.push((Node::str(META_KEY), meta));
        tree = Node::new(Value::Map(entries));
    }
    Ok((tree, summary))
}

/// What is kept under `_hdf5`, by HDF5 path.
#[derive(Default)]
struct Meta {
    attrs: Vec<(String, Node)>,
    chunks: Vec<(String, Node)>,
    filters: Vec<(String, Node)>,
    enums: Vec<(String, Node)>,
    scalars: Vec<(String, Node)>,
    strings: Vec<(String, Node)>,
    layouts: Vec<(String, Node)>,
    fills: Vec<(String, Node)>,
    maxshapes: Vec<(String, Node)>,
    soft_links: Vec<(String, Node)>,
    /// Datasets with a null dataspace, with their datatype.
    empty: Vec<(String, Node)>,
    /// Datasets and attributes of object references, with their shape.
    references: Vec<(String, Node)>,
    /// Datasets of variable-length sequences, with their shape.
    sequences: Vec<(String, Node)>,
    /// Datasets (and attributes) of variable-length sequences, with their base datatype
    /// (numpy's spelling), which their inline arrays do not carry whole (the byte order) or
    /// at all (no element).
    sequence_bases: Vec<(String, Node)>,
    /// Datasets and attributes in the tree form (region references; references,
    /// sequences and variable-length strings inside other datatypes), with their shape.
    values: Vec<(String, Node)>,
    /// The tags of opaque datatypes, by dataset (or `PATH@NAME` attribute).
    opaque: Vec<(String, Node)>,
    /// Fixed-length strings whose bytes are not all ASCII, kept as `uint8` (the bytes
    /// form), with their size, character set and padding, by dataset (or attribute).
    string_bytes: Vec<(String, Node)>,
    /// Datasets and attributes with no ASDF form yet, with why.
    left_out: Vec<(String, Node)>,
    /// Entries, and bytes of their paths, that hard links have added so far.
    aliased: (usize, usize),
}

/// Most entries hard links may add to what is kept under `_hdf5`, and most bytes of their
/// paths: each link copies the entries under the linked object's path, copies included, so
/// links to groups that contain links to them would multiply them without end (a 16 KB
/// file grew past 3 GB).
const MAX_ALIASED: (usize, usize) = (1 << 20, 64 << 20);

impl Meta {
    /// A second path (a hard link) to the object first met at `first`: what is kept by path
    /// is kept under both. An error past [`MAX_ALIASED`].
    fn alias(&mut self, first: &str, path: &str) -> Result<()> {
        for list in [
            &mut self.attrs,
            &mut self.chunks,
            &mut self.filters,
            &mut self.enums,
            &mut self.scalars,
            &mut self.strings,
            &mut self.layouts,
            &mut self.fills,
            &mut self.maxshapes,
            &mut self.soft_links,
            &mut self.empty,
            &mut self.references,
            &mut self.sequences,
            &mut self.sequence_bases,
            &mut self.values,
            &mut self.opaque,
            &mut self.string_bytes,
            &mut self.left_out,
        ] {
            let prefix = format!("{first}/");
            let copies: Vec<(String, Node)> = list
                .iter()
                .filter_map(|(k, n)| {
                    let rest = if k == first {
                        Some("")
                    } else {
                        k.strip_prefix(&prefix).map(|_| &k[first.len()..])
                    }?;
                    Some((format!("{path}{rest}"), n.clone()))
                })
                .collect();
            self.aliased.0 = self.aliased.0.saturating_add(copies.len());
            self.aliased.1 = copies
                .iter()
                .fold(self.aliased.1, |b, (k, _)| b.saturating_add(k.len()));
            if self.aliased.0 > MAX_ALIASED.0 || self.aliased.1 > MAX_ALIASED.1 {
                return Err(Hdf5Error::Read {
                    path: path.to_string(),
                    message: format!(
                        "hard links repeat the kept attributes and properties of their \
                         objects more than {} times ({} MiB of paths): links to groups that \
                         contain links to them",
                        MAX_ALIASED.0,
                        MAX_ALIASED.1 >> 20
                    ),
                });
            }
            list.extend(copies);
        }
        Ok(())
    }

    fn node(&self) -> Option<Node> {
        let map = |v: &[(String, Node)]| {
            Node::new(Value::Map(
                v.iter()
                    .map(|(k, n)| (Node::str(k.as_str()), n.clone()))
                    .collect(),
            ))
        };
        let mut out = Vec::new();
        for (key, v) in [
            ("attrs", &self.attrs),
            ("chunks", &self.chunks),
            ("filters", &self.filters),
            ("enums", &self.enums),
            ("scalar_datasets", &self.scalars),
            ("string_datasets", &self.strings),
            ("compound_layouts", &self.layouts),
            ("fill_values", &self.fills),
            ("maxshapes", &self.maxshapes),
            ("soft_links", &self.soft_links),
            ("empty_datasets", &self.empty),
            ("reference_datasets", &self.references),
            ("sequence_datasets", &self.sequences),
            ("sequence_datatypes", &self.sequence_bases),
            ("value_datasets", &self.values),
            ("opaque_tags", &self.opaque),
            ("string_bytes", &self.string_bytes),
            ("left_out", &self.left_out),
        ] {
            if !v.is_empty() {
                out.push((Node::str(key), map(v)));
            }
        }
        (!out.is_empty()).then(|| Node::new(Value::Map(out)))
    }
}

struct Walk<'w, 'a> {
    file: &'w Hdf5File,
    writer: &'w mut Writer<'a>,
    opts: &'w ToAsdfOptions,
    /// Objects already converted, by address, with their first path: hard links become one
    /// node (an anchor), and their attributes are listed under every path.
    seen: HashMap<u64, (Node, String)>,
    meta: Meta,
    summary: ToAsdfSummary,
    /// Groups being visited (a group that contains itself through a link is refused).
    depth: usize,
    /// Bytes of array data read so far (bands are read while the file is written).
    bytes_read: Arc<AtomicU64>,
    /// Bytes of array data of the datasets met so far.
    total: Arc<AtomicU64>,
    /// The path of each object reachable by links, by address (for object references),
    /// made on the first reference met.
    paths: Option<HashMap<u64, String>>,
}

/// Deepest group nesting converted (the YAML tree has a depth limit too).
const MAX_DEPTH: usize = 200;

/// A member of a group.
enum Member<'g> {
    Group(&'g Group),
    Dataset(&'g Dataset),
}

impl Member<'_> {
    fn name(&self) -> &str {
        match self {
            Member::Group(g) => g.name(),
            Member::Dataset(d) => d.name(),
        }
    }
    fn address(&self) -> u64 {
        match self {
            Member::Group(g) => g.address(),
            Member::Dataset(d) => d.address(),
        }
    }
}

fn hpath(prefix: &str, name: &str) -> String {
    format!("{prefix}/{name}")
}

impl Walk<'_, '_> {
    fn group(&mut self, g: &Group, path: &str) -> Result<Node> {
        self.summary.groups += 1;
        let at = if path.is_empty() { "/" } else { path };
        if self.depth >= MAX_DEPTH {
            return Err(read_err(
                at,
                format!("groups nested deeper than {MAX_DEPTH}"),
            ));
        }
        self.depth += 1;
        let node = self.group_members(g, path, at);
        self.depth -= 1;
        node
    }

    fn group_members(&mut self, g: &Group, path: &str, at: &str) -> Result<Node> {
        self.attributes(&g.attributes().map_err(|e| read_err(at, e))?, at)?;
        let (groups, datasets) = g.members().map_err(|e| read_err(at, e))?;
        let mut entries: Vec<(String, Node)> = Vec::new();
        // soft and external links as `$ref`s (the members above follow soft links that
        // resolve; those are left to the `$ref` too)
        let mut linked = std::collections::HashSet::new();
        for (name, kind) in g.links().map_err(|e| read_err(at, e))? {
            let target = match kind {
                LinkKind::Hard(_) => continue,
                LinkKind::Soft(path) => {
                    if !path.starts_with('/') {
                        // kept as written, for the way back
                        self.meta
                            .soft_links
                            .push((hpath(path_prefix(at), &name), Node::str(path.as_str())));
                    }
                    format!("#{}", absolute(&path, at))
                }
                LinkKind::External { filename, path } => format!("{filename}#{path}"),
            };
            entries.push((
                name.clone(),
                Node::new(Value::Map(vec![(Node::str("$ref"), Node::str(target))])),
            ));
            linked.insert(name);
        }
        // groups and datasets alike: an object met before (a hard link) is the same node
        // masked arrays (docs/hdf5.md): a dataset naming the companion dataset of its mask;
        // the companions are not members of their own
        let mut masks: HashMap<String, &Dataset> = HashMap::new();
        for d in &datasets {
            if self.seen.contains_key(&d.address()) || linked.contains(d.name()) {
                // a second link to a dataset already converted, mask and all, or a soft or
                // external link (a `$ref`; the dataset it names is converted where it is)
                continue;
            }
            if let Some(c) = companion(d, &datasets, &hpath(path, d.name()))? {
                masks.insert(d.name().to_string(), c);
            }
        }
        let companions: std::collections::HashSet<&str> =
            masks.values().map(|d| d.name()).collect();
        let members = groups
            .iter()
            .map(Member::Group)
            .chain(
                datasets
                    .iter()
                    .filter(|d| !companions.contains(d.name()))
                    .map(Member::Dataset),
            )
            .filter(|m| !linked.contains(m.name()));
        for m in members {
            let p = hpath(path, m.name());
            let node = match self.seen.get(&m.address()) {
                Some((n, first)) => {
                    let (n, first) = (n.clone(), first.clone());
                    self.meta.alias(&first, &p)?;
                    n
                }
                None => {
                    let n = match m {
                        Member::Group(g) => self.group(g, &p)?,
                        Member::Dataset(d) => {
                            match self.dataset(d, &p, masks.get(d.name()).copied()) {
                                Ok(n) => n,
                                Err(e) => {
                                    self.leave_out(e)?;
                                    self.summary.datasets -= 1;
                                    continue;
                                }
                            }
                        }
                    };
                    self.seen.insert(m.address(), (n.clone(), p.clone()));
                    n
                }
            };
            entries.push((m.name().to_string(), node));
        }
        // HDF5 lists members by name: keep that order for groups and datasets together
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Node::new(Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Node::str(k), v))
                .collect(),
        )))
    }

    fn dataset(&mut self, ds: &Dataset, path: &str, companion: Option<&Dataset>) -> Result<Node> {
        self.summary.datasets += 1;
        let mut attrs = ds.attributes();
        let value = mask_value(&attrs, path)?;
        // the attributes that keep the mask are not kept as attributes
        attrs.retain(|a| a.name != MASK_ATTR && a.name != MASK_VALUE_ATTR);
        self.attributes(&attrs, path)?;
        let masked = companion.is_some() || value.is_some();
        let dt = ds.dtype();
        if ds.is_null() {
            // a null dataspace (h5py's `Empty`): no element, not even a scalar's, so no
            // array: `null` in the tree and its datatype under `_hdf5/empty_datasets`
            let name = if is_vlen_string(dt) {
                "string".to_string()
            } else {
                let plan = datatype::plan(dt).map_err(|what| Hdf5Error::Unsupported {
                    path: path.to_string(),
                    what,
                })?;
                dtype_name(&plan.dtype, &plan.inner_shape)
            };
            if masked {
                return Err(read_err(
                    &format!("{path}@{MASK_ATTR}"),
                    "a mask for a dataset with a null dataspace",
                ));
            }
            self.meta
                .empty
                .push((path.to_string(), Node::str(name.as_str())));
            return Ok(Node::new(Value::Null));
        }
        if masked && (is_vlen_string(dt) || ds.shape().is_empty()) {
            return Err(read_err(
                &format!("{path}@{MASK_ATTR}"),
                "a mask for a dataset of variable-length strings or a scalar dataset",
            ));
        }
        // chunking and filters, kept as hints for the way back; a filter asdf-rs cannot
        // decode leaves the dataset out before anything of it is kept
        let (chunks, filters) = self.layout(ds, path);
        if let Some((id, name, _)) = filters.iter().find(|(id, ..)| !DECODED.contains(id)) {
            return Err(Hdf5Error::Filter {
                path: path.to_string(),
                what: format!("HDF5 filter {id} ({name})"),
            });
        }
        if let Some(size) = object_reference(dt) {
            // object references: each a `$ref` to the object's node (null for none)
            declared_len(ds, path, self.opts.max_dataset_bytes)?;
            self.check_layout(ds, path)?;
            if masked {
                return Err(read_err(
                    &format!("{path}@{MASK_ATTR}"),
                    "a mask for a dataset of object references",
                ));
            }
            let raw = ds.read_raw_bytes().map_err(|e| read_err(path, e))?;
            self.meta.references.push((
                path.to_string(),
                Node::seq(ds.shape().iter().map(|&d| Node::int(i128::from(d)))),
            ));
            return Ok(self.reference_nodes(&raw, size, &shape_of(ds.shape())));
        }
        if let Some(base_plan) = sequence_base(dt).and_then(|b| sequence_plan(b).ok()) {
            // a ragged array (h5py's vlen_dtype): a sequence (nested by shape) of 1-D arrays
            declared_len(ds, path, self.opts.max_dataset_bytes)?;
            self.check_layout(ds, path)?;
            if masked {
                return Err(read_err(
                    &format!("{path}@{MASK_ATTR}"),
                    "a mask for a dataset of variable-length sequences",
                ));
            }
            let raw = ds.read_raw_bytes().map_err(|e| read_err(path, e))?;
            let node = self.sequences(
                &raw,
                ds.vlen_reference_size(),
                &base_plan,
                &shape_of(ds.shape()),
                path,
                |r, n| ds.resolve_vlen_reference_bytes(r, n),
            )?;
            self.meta.sequences.push((
                path.to_string(),
                Node::seq(ds.shape().iter().map(|&d| Node::int(i128::from(d)))),
            ));
            return Ok(node);
        }
        if is_vlen_string(dt) {
            // its references' size and place checked before they are read
            declared_len(ds, path, self.opts.max_dataset_bytes)?;
            self.check_layout(ds, path)?;
            let strings = match ds.read_strings() {
                Ok(s) => s,
                // bytes that are not UTF-8: the bytes form, when that is why
                Err(e) => {
                    let raw = ds.read_raw_bytes().map_err(|e| read_err(path, e))?;
                    return self.vlen_string_bytes(
                        dt,
                        &raw,
                        ds.vlen_reference_size(),
                        &shape_of(ds.shape()),
                        path,
                        |r| ds.resolve_vlen_reference_bytes(r, 1),
                        e,
                    );
                }
            };
            // recorded with its shape, so that the way back makes it a dataset again
            self.meta.strings.push((
                path.to_string(),
                Node::seq(ds.shape().iter().map(|&d| Node::int(i128::from(d)))),
            ));
            return Ok(nest_strings(strings, &shape_of(ds.shape())));
        }
        if values::holds_nodes(dt) {
            // region references, and references, sequences and strings inside other
            // datatypes: the tree form
            declared_len(ds, path, self.opts.max_dataset_bytes)?;
            self.check_layout(ds, path)?;
            if masked {
                return Err(read_err(
                    &format!("{path}@{MASK_ATTR}"),
                    "a mask for a dataset of references or sequences",
                ));
            }
            let raw = ds.read_raw_bytes().map_err(|e| read_err(path, e))?;
            let node = self.value_nodes(dt, &raw, &shape_of(ds.shape()), path)?;
            self.meta.values.push((
                path.to_string(),
                Node::seq(ds.shape().iter().map(|&d| Node::int(i128::from(d)))),
            ));
            return Ok(node);
        }
        let mut plan = datatype::plan(dt).map_err(|what| Hdf5Error::Unsupported {
            path: path.to_string(),
            what,
        })?;
        // fixed-length strings whose bytes (or fill value's) are not all ASCII: the bytes
        // form, `uint8` with the string's size as an inner axis (docs/hdf5.md); the data
        // read whole here is not read again below
        let mut read = None;
        if let Some(info) = datatype::fixed_string(dt) {
            let (high, whole) = self.strings_not_ascii(ds, &plan, path)?;
            let fill_high = ds
                .fill_value()
                .and_then(|f| f.value.as_ref())
                .is_some_and(|f| !f.is_ascii());
            read = whole;
            if high || fill_high {
                plan = plan
                    .as_string_bytes()
                    .expect("a fixed-length string's plan");
                self.meta
                    .string_bytes
                    .push((path.to_string(), string_bytes_node(info)));
                if let Some(a) = &mut read {
                    a.dtype = plan.dtype.clone();
                    a.shape.push(info.0 as usize);
                }
            }
        }
        // a compound with padding (an aligned numpy dtype): its offsets and size, as ASDF
        // records are packed
        if let Datatype::Compound { size, fields } = dt {
            if !plan.is_identity() {
                self.meta.layouts.push((
                    path.to_string(),
                    Node::new(Value::Map(vec![
                        (Node::str("size"), Node::int(i128::from(*size))),
                        (
                            Node::str("offsets"),
                            Node::seq(fields.iter().map(|f| Node::int(i128::from(f.byte_offset)))),
                        ),
                    ])),
                ));
            }
        }
        if let Some(members) = &plan.enum_members {
            self.meta.enums.push((path.to_string(), enum_node(members)));
        }
        if let Some(tag) = &plan.opaque_tag {
            self.meta
                .opaque
                .push((path.to_string(), Node::str(tag.as_str())));
        }
        if let Some(c) = &chunks {
            self.meta.chunks.push((
                path.to_string(),
                Node::seq(c.iter().map(|&d| Node::int(i128::from(d)))),
            ));
        }
        let deflated = filters.iter().any(|(id, _, _)| *id == 1);
        if !filters.is_empty() {
            self.meta
                .filters
                .push((path.to_string(), filters_node(&filters)));
        }
        // a fill value other than zero, and a maximum shape other than the shape
        if let Some(fill) = ds.fill_value().and_then(|f| f.value.as_ref()) {
            if fill.len() == plan.src_size && fill.iter().any(|&b| b != 0) {
                let value = DynArray {
                    dtype: plan.dtype.clone(),
                    shape: plan.inner_shape.clone(),
                    data: plan.convert(fill.clone()),
                };
                let node = match scalar_node(&value) {
                    Some(n) => n,
                    None => self.writer.add_array_with(
                        value,
                        ArrayOptions {
                            compression: None,
                            storage: Some(Storage::Inline),
                        },
                    ),
                };
                self.meta.fills.push((path.to_string(), node));
            }
        }
        if let Some(max) = ds.max_dims() {
            if max != ds.shape() {
                let dims = max.iter().map(|&d| {
                    if d == u64::MAX {
                        Node::new(Value::Null)
                    } else {
                        Node::int(i128::from(d))
                    }
                });
                self.meta
                    .maxshapes
                    .push((path.to_string(), Node::seq(dims)));
            }
        }
        self.check_layout(ds, path)?;
        let compression = match &self.opts.compression {
            Some(c) => *c,
            None if deflated => CompressionChoice::Codec(Compression::Zlib),
            None => CompressionChoice::None,
        };
        let array_opts = ArrayOptions {
            compression: Some(compression),
            storage: Some(Storage::Internal),
        };
        let mask = match (companion, value) {
            (Some(c), _) => {
                let cpath = format!("{}/{}", path_prefix_of(path), c.name());
                let cplan = datatype::plan(c.dtype()).map_err(|what| Hdf5Error::Unsupported {
                    path: cpath.clone(),
                    what,
                })?;
                self.check_layout(c, &cpath)?;
                Some(self.array_node(c, &cplan, &cpath, array_opts)?)
            }
            (None, v) => v,
        };
        if masked {
            let node = self.array_node(ds, &plan, path, array_opts)?;
            if let Some(m) = mask {
                self.writer.set_mask(&node, m);
            }
            return Ok(node);
        }
        if let Some(node) = self.banded(ds, &plan, path, array_opts)? {
            return Ok(node);
        }
        let array = match read {
            Some(a) => a,
            None => dataset_array(ds, &plan, path, self.opts.max_dataset_bytes)?,
        };
        self.total
            .fetch_add(array.data.len() as u64, Ordering::Relaxed);
        let bytes = self
            .bytes_read
            .fetch_add(array.data.len() as u64, Ordering::Relaxed)
            + array.data.len() as u64;
        if let Some(report) = &self.opts.progress {
            report.report(bytes, self.total.load(Ordering::Relaxed));
        }
        if ds.shape().is_empty() && plan.inner_shape.is_empty() {
            if let Some(node) = scalar_node(&array) {
                // recorded, so that the way back makes it a dataset of its type again
                self.meta
                    .scalars
                    .push((path.to_string(), Node::str(array.dtype.name())));
                return Ok(node);
            }
        }
        Ok(self.writer.add_array_with(array, array_opts))
    }

    /// A dataset as an array node: band by band when large ([`Walk::banded`]), else read
    /// whole; its bytes reported to the progress callback.
    fn array_node(
        &mut self,
        ds: &Dataset,
        plan: &Plan,
        path: &str,
        opts: ArrayOptions,
    ) -> Result<Node> {
        if let Some(node) = self.banded(ds, plan, path, opts)? {
            return Ok(node);
        }
        let array = dataset_array(ds, plan, path, self.opts.max_dataset_bytes)?;
        let len = array.data.len() as u64;
        self.total.fetch_add(len, Ordering::Relaxed);
        let bytes = self.bytes_read.fetch_add(len, Ordering::Relaxed) + len;
        if let Some(report) = &self.opts.progress {
            report.report(bytes, self.total.load(Ordering::Relaxed));
        }
        Ok(self.writer.add_array_with(array, opts))
    }

    /// A dataset of at least [`BAND_MIN`] bytes, registered to be read band by band (whole
    /// chunk rows along axis 0, about [`BAND_BYTES`] each) while the ASDF file is written, so
    /// memory holds a few bands rather than the dataset. `None` for the others.
    fn banded(
        &mut self,
        ds: &Dataset,
        plan: &Plan,
        path: &str,
        opts: ArrayOptions,
    ) -> Result<Option<Node>> {
        let len = ds.raw_byte_len().map_err(|e| read_err(path, e))? as u64;
        if len == 0 || len < self.opts.band_min_bytes {
            return Ok(None);
        }
        declared_len(ds, path, self.opts.max_dataset_bytes)?;
        let dims = ds.shape().to_vec();
        let Some((&rows, rest)) = dims.split_first() else {
            return Ok(None);
        };
        if rows == 0 {
            return Ok(None);
        }
        // bytes of one row: within `len`, which is within the limit
        let row_bytes = rest
            .iter()
            .try_fold(plan.src_size as u64, |a, &d| a.checked_mul(d))
            .filter(|&b| b > 0)
            .ok_or_else(|| read_err(path, "its rows hold no bytes"))?;
        let unit = u64::from(ds.chunks().and_then(|c| c.first().copied()).unwrap_or(1)).max(1);
        let per_band = (BAND_BYTES / row_bytes.saturating_mul(unit)).max(1);
        let band_rows = unit.saturating_mul(per_band);
        let mut shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        shape.extend(&plan.inner_shape);
        self.total.fetch_add(len, Ordering::Relaxed);
        let dtype = plan.dtype.clone();
        let (ds, plan) = (ds.clone(), plan.clone());
        let (where_, progress) = (path.to_string(), self.opts.progress.clone());
        let bytes_read = Arc::clone(&self.bytes_read);
        let total = Arc::clone(&self.total);
        let mut row = 0u64;
        let pieces = move || -> std::io::Result<Option<Vec<u8>>> {
            if row >= rows {
                return Ok(None);
            }
            let n = band_rows.min(rows - row);
            let size = usize::try_from(n * row_bytes).map_err(std::io::Error::other)?;
            let mut band = vec![0u8; size];
            ds.read_raw_rows_into(row, &mut band)
                .map_err(|e| std::io::Error::other(format!("{where_}: {e}")))?;
            row += n;
            let bytes = bytes_read.fetch_add(size as u64, Ordering::Relaxed) + size as u64;
            if let Some(report) = &progress {
                report.report(bytes, total.load(Ordering::Relaxed));
            }
            Ok(Some(plan.convert(band)))
        };
        Ok(Some(
            self.writer.add_array_pieces(dtype, &shape, opts, pieces),
        ))
    }

    /// Variable-length strings that hdf5-reader would not read as text (`error`): when some
    /// string's bytes (up to a NUL) are not UTF-8, the bytes form (docs/hdf5.md): nested
    /// sequences (by shape) of 1-D inline `uint8` arrays, each string's bytes, and under
    /// `_hdf5/string_bytes/PATH` `{size: variable, cset, padding}`. Otherwise `error`, the
    /// reason being another.
    #[allow(clippy::too_many_arguments)]
    fn vlen_string_bytes(
        &mut self,
        dt: &Datatype,
        raw: &[u8],
        ref_size: usize,
        shape: &[usize],
        path: &str,
        resolve: impl Fn(&[u8]) -> hdf5_reader::error::Result<Vec<u8>>,
        error: hdf5_reader::error::Error,
    ) -> Result<Node> {
        let mut strings = Vec::new();
        let mut total: u64 = 0;
        for r in raw.chunks_exact(ref_size.max(1)) {
            let mut bytes = resolve(r).map_err(|_| read_err(path, &error))?;
            if let Some(end) = bytes.iter().position(|&b| b == 0) {
                bytes.truncate(end);
            }
            total = total.saturating_add(bytes.len() as u64);
            if total > self.opts.max_dataset_bytes {
                return Err(read_err(
                    path,
                    format!(
                        "its strings hold more than the limit of {} bytes",
                        self.opts.max_dataset_bytes
                    ),
                ));
            }
            strings.push(bytes);
        }
        if strings.iter().all(|s| std::str::from_utf8(s).is_ok()) {
            return Err(read_err(path, error));
        }
        let (encoding, padding) = match dt {
            Datatype::String {
                encoding, padding, ..
            }
            | Datatype::VarLen {
                encoding, padding, ..
            } => (*encoding, *padding),
            _ => (
                hdf5_reader::StringEncoding::Utf8,
                hdf5_reader::StringPadding::NullTerminate,
            ),
        };
        let (cset, pad) = datatype::string_names(encoding, padding);
        self.meta.string_bytes.push((
            path.to_string(),
            Node::new(Value::Map(vec![
                (Node::str("size"), Node::str("variable")),
                (Node::str("cset"), Node::str(cset)),
                (Node::str("padding"), Node::str(pad)),
            ])),
        ));
        let u8 =
            asdf_core::array::DType::scalar(ScalarType::UInt8, asdf_core::array::ByteOrder::Little);
        let arrays = strings
            .into_iter()
            .map(|bytes| {
                self.writer.add_array_with(
                    DynArray {
                        dtype: u8.clone(),
                        shape: vec![bytes.len()],
                        data: bytes,
                    },
                    ArrayOptions {
                        compression: None,
                        storage: Some(Storage::Inline),
                    },
                )
            })
            .collect();
        Ok(nest_nodes(arrays, shape))
    }

    /// Whether a dataset of fixed-length strings holds a byte that is not ASCII: read whole
    /// (and returned, for the conversion) when [`Walk::banded`] would not read it band by
    /// band, else scanned band by band (read twice, not held).
    fn strings_not_ascii(
        &mut self,
        ds: &Dataset,
        plan: &Plan,
        path: &str,
    ) -> Result<(bool, Option<DynArray>)> {
        let len = ds.raw_byte_len().map_err(|e| read_err(path, e))? as u64;
        let dims = ds.shape().to_vec();
        let banded = !(len == 0 || len < self.opts.band_min_bytes || dims.is_empty());
        if !banded {
            self.check_layout(ds, path)?;
            let array = dataset_array(ds, plan, path, self.opts.max_dataset_bytes)?;
            return Ok((!array.data.is_ascii(), Some(array)));
        }
        declared_len(ds, path, self.opts.max_dataset_bytes)?;
        self.check_layout(ds, path)?;
        let rows = dims[0];
        let row_bytes = dims[1..]
            .iter()
            .try_fold(plan.src_size as u64, |a, &d| a.checked_mul(d))
            .filter(|&b| b > 0)
            .ok_or_else(|| read_err(path, "its rows hold no bytes"))?;
        let band_rows = (BAND_BYTES / row_bytes).max(1);
        let mut row = 0u64;
        while row < rows {
            let n = band_rows.min(rows - row);
            let size = usize::try_from(n * row_bytes).map_err(|e| read_err(path, e))?;
            let mut band = vec![0u8; size];
            ds.read_raw_rows_into(row, &mut band)
                .map_err(|e| read_err(path, e))?;
            if !band.is_ascii() {
                return Ok((true, None));
            }
            row += n;
        }
        Ok((false, None))
    }

    /// A contiguous dataset's data must lie in the file, and a compact one's in its header,
    /// before its size is trusted.
    fn check_layout(&self, ds: &Dataset, path: &str) -> Result<()> {
        let Ok(header) = self.file.get_or_parse_header(ds.address()) else {
            return Ok(()); // the read reports it
        };
        let len = ds.raw_byte_len().map_err(|e| read_err(path, e))? as u64;
        let file_len = self.file.storage().len();
        for m in &header.messages {
            if let HdfMessage::DataLayout(l) = m {
                match &l.layout {
                    hdf5_reader::messages::layout::DataLayout::Contiguous { address, size }
                        if *address != u64::MAX
                            && (address.saturating_add(*size) > file_len || *size < len) =>
                    {
                        return Err(read_err(
                            path,
                            format!(
                                "its contiguous data ({size} bytes at {address}) does not hold the {len} bytes it declares within the file's {file_len}"
                            ),
                        ));
                    }
                    hdf5_reader::messages::layout::DataLayout::Compact { data }
                        if (data.len() as u64) < len =>
                    {
                        return Err(read_err(
                            path,
                            format!(
                                "its compact data has {} of the {len} bytes it declares",
                                data.len()
                            ),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Variable-length sequences (`ref_size`-byte global-heap references in `raw`, resolved
    /// by `resolve`) as nested sequences of `shape` of 1-D inline arrays of `base`, their
    /// bytes together within [`ToAsdfOptions::max_dataset_bytes`].
    fn sequences(
        &mut self,
        raw: &[u8],
        ref_size: usize,
        base: &Plan,
        shape: &[usize],
        path: &str,
        resolve: impl Fn(&[u8], usize) -> hdf5_reader::error::Result<Vec<u8>>,
    ) -> Result<Node> {
        let mut arrays = Vec::new();
        let mut total: u64 = 0;
        for r in raw.chunks_exact(ref_size.max(1)) {
            let bytes = resolve(r, base.src_size).map_err(|e| read_err(path, e))?;
            total = total.saturating_add(bytes.len() as u64);
            if total > self.opts.max_dataset_bytes {
                return Err(read_err(
                    path,
                    format!(
                        "its sequences hold more than the limit of {} bytes",
                        self.opts.max_dataset_bytes
                    ),
                ));
            }
            let n = bytes.len() / base.src_size.max(1);
            let array = DynArray {
                dtype: base.dtype.clone(),
                shape: vec![n],
                data: base.convert(bytes),
            };
            arrays.push(self.writer.add_array_with(
                array,
                ArrayOptions {
                    compression: None,
                    storage: Some(Storage::Inline),
                },
            ));
        }
        // for the way back: inline arrays hold no byte order, and none is there to hold the
        // datatype when no element is
        self.meta.sequence_bases.push((
            path.to_string(),
            Node::str(base.dtype.to_numpy_str().as_str()),
        ));
        Ok(nest_nodes(arrays, shape))
    }

    /// Object references (`size` bytes each, little-endian addresses) in C order as nested
    /// sequences of `shape`: a `$ref` to the converted node of each object, `null` for a
    /// null reference or an object no link reaches.
    fn reference_nodes(&mut self, raw: &[u8], size: usize, shape: &[usize]) -> Node {
        let refs: Vec<Node> = raw
            .chunks_exact(size.max(1))
            .map(|b| self.object_ref(b))
            .collect();
        nest_nodes(refs, shape)
    }

    /// One object reference (a little-endian address): a `$ref` to the converted node of
    /// the object, `null` for a null reference or an object no link reaches.
    fn object_ref(&mut self, b: &[u8]) -> Node {
        match self.object_path(b) {
            Some(p) => Node::new(Value::Map(vec![(
                Node::str("$ref"),
                Node::str(format!("#{}", pointer_of(&p))),
            )])),
            None => Node::new(Value::Null),
        }
    }

    /// The HDF5 path of the object at an address (little-endian; `""` for the root group),
    /// `None` for a null reference or an object no link reaches.
    fn object_path(&mut self, b: &[u8]) -> Option<String> {
        if self.paths.is_none() {
            let mut paths = HashMap::new();
            if let Ok(root) = self.file.root_group() {
                paths.insert(root.address(), String::new());
                index_paths(&root, "", 0, &mut paths);
            }
            self.paths = Some(paths);
        }
        let paths = self.paths.as_ref().expect("made above");
        let mut a = [0u8; 8];
        a[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
        paths.get(&u64::from_le_bytes(a)).cloned()
    }

    /// A dataset or attribute with no ASDF form yet, left out and listed (unless
    /// [`ToAsdfOptions::strict`]); any other error is returned as is.
    fn leave_out(&mut self, e: Hdf5Error) -> Result<()> {
        if self.opts.strict {
            return Err(e);
        }
        let (path, why) = match &e {
            Hdf5Error::Unsupported { path, what } => {
                (path, format!("HDF5 datatype {what} has no ASDF equivalent"))
            }
            Hdf5Error::Filter { path, what } => (path, format!("{what} cannot be decoded")),
            _ => return Err(e),
        };
        self.meta
            .left_out
            .push((path.clone(), Node::str(why.as_str())));
        self.summary.left_out.push((path.clone(), why));
        Ok(())
    }

    /// The chunk shape and the filters of a dataset, from its object header.
    fn layout(&self, ds: &Dataset, _path: &str) -> (Option<Vec<u32>>, Vec<Filter>) {
        let chunks = ds.chunks();
        let mut filters = Vec::new();
        if let Ok(header) = self.file.get_or_parse_header(ds.address()) {
            for m in &header.messages {
                if let HdfMessage::FilterPipeline(p) = m {
                    for f in &p.filters {
                        let name = FILTER_NAMES
                            .iter()
                            .find(|(id, _)| *id == f.id)
                            .map(|(_, n)| n.to_string())
                            .or_else(|| f.name.clone())
                            .unwrap_or_else(|| format!("filter {}", f.id));
                        filters.push((f.id, name, f.client_data.clone()));
                    }
                }
            }
        }
        (chunks, filters)
    }

    fn attributes(&mut self, attrs: &[Attribute], path: &str) -> Result<()> {
        if attrs.is_empty() {
            return Ok(());
        }
        let mut out = Vec::with_capacity(attrs.len());
        for a in attrs {
            let at = format!("{path}@{}", a.name);
            let node = if a.null {
                // a null dataspace (h5py's `Empty`): `null`, its datatype kept, as a
                // dataset's
                let name = if is_vlen_string(&a.datatype) {
                    "string".to_string()
                } else {
                    match datatype::plan(&a.datatype) {
                        Ok(plan) => dtype_name(&plan.dtype, &plan.inner_shape),
                        Err(what) => {
                            self.leave_out(Hdf5Error::Unsupported { path: at, what })?;
                            continue;
                        }
                    }
                };
                self.meta.empty.push((at.clone(), Node::str(name.as_str())));
                Node::new(Value::Null)
            } else if is_vlen_string(&a.datatype) {
                match a.read_strings() {
                    Ok(strings) => nest_strings(strings, &shape_of(&a.shape)),
                    // bytes that are not UTF-8: the bytes form, when that is why
                    Err(e) => {
                        let root = self.file.root_group().map_err(|e| read_err(&at, e))?;
                        let ref_size = 4 + usize::from(root.offset_size()) + 4;
                        // hdf5-reader gives a scalar one's bytes already resolved (when it
                        // could resolve them)
                        let resolved = a.shape.is_empty()
                            && matches!(a.datatype, Datatype::VarLen { .. })
                            && a.raw_data.len() != ref_size;
                        self.vlen_string_bytes(
                            &a.datatype,
                            &a.raw_data,
                            if resolved { a.raw_data.len() } else { ref_size },
                            &shape_of(&a.shape),
                            &at,
                            |r| {
                                if resolved {
                                    Ok(r.to_vec())
                                } else {
                                    root.resolve_vlen_reference_bytes(r, 1)
                                }
                            },
                            e,
                        )?
                    }
                }
            } else if let Some(base_plan) =
                sequence_base(&a.datatype).and_then(|b| sequence_plan(b).ok())
            {
                let root = self.file.root_group().map_err(|e| read_err(&at, e))?;
                let ref_size = 4 + usize::from(root.offset_size()) + 4;
                self.meta.sequences.push((
                    at.clone(),
                    Node::seq(a.shape.iter().map(|&d| Node::int(i128::from(d)))),
                ));
                self.sequences(
                    &a.raw_data,
                    ref_size,
                    &base_plan,
                    &shape_of(&a.shape),
                    &at,
                    |r, n| root.resolve_vlen_reference_bytes(r, n),
                )?
            } else if let Some(size) = object_reference(&a.datatype) {
                self.meta.references.push((
                    at.clone(),
                    Node::seq(a.shape.iter().map(|&d| Node::int(i128::from(d)))),
                ));
                self.reference_nodes(&a.raw_data, size, &shape_of(&a.shape))
            } else if values::holds_nodes(&a.datatype) {
                match self.value_nodes(&a.datatype, &a.raw_data, &shape_of(&a.shape), &at) {
                    Ok(n) => {
                        self.meta.values.push((
                            at.clone(),
                            Node::seq(a.shape.iter().map(|&d| Node::int(i128::from(d)))),
                        ));
                        n
                    }
                    Err(e) => {
                        self.leave_out(e)?;
                        continue;
                    }
                }
            } else {
                let mut plan = match datatype::plan(&a.datatype) {
                    Ok(p) => p,
                    Err(what) => {
                        self.leave_out(Hdf5Error::Unsupported { path: at, what })?;
                        continue;
                    }
                };
                // fixed-length strings whose bytes are not all ASCII: the bytes form
                if let Some(info) = datatype::fixed_string(&a.datatype) {
                    if !a.raw_data.is_ascii() {
                        plan = plan
                            .as_string_bytes()
                            .expect("a fixed-length string's plan");
                        self.meta
                            .string_bytes
                            .push((at.clone(), string_bytes_node(info)));
                    }
                }
                if let Some(tag) = &plan.opaque_tag {
                    self.meta.opaque.push((at.clone(), Node::str(tag.as_str())));
                }
                let mut shape = shape_of(&a.shape);
                shape.extend(&plan.inner_shape);
                let array = DynArray {
                    dtype: plan.dtype.clone(),
                    shape,
                    data: plan.convert(a.raw_data.clone()),
                };
                let count = array.element_count() * array.dtype.itemsize();
                if count != array.data.len() {
                    return Err(read_err(&at, "attribute data does not match its shape"));
                }
                // records whose strings are not all ASCII (which inline data cannot hold)
                // go to a block, bytes kept
                let storage = if array.first_non_ascii().is_some() {
                    Storage::Internal
                } else {
                    Storage::Inline
                };
                match scalar_node(&array) {
                    Some(n) if a.shape.is_empty() && default_scalar(&array.dtype) => n,
                    _ => self.writer.add_array_with(
                        array,
                        ArrayOptions {
                            compression: None,
                            storage: Some(storage),
                        },
                    ),
                }
            };
            self.summary.attributes += 1;
            out.push((Node::str(a.name.as_str()), node));
        }
        if !out.is_empty() {
            self.meta
                .attrs
                .push((path.to_string(), Node::new(Value::Map(out))));
        }
        Ok(())
    }
}

/// The companion dataset that the `_asdf_mask` attribute of `d` names (docs/hdf5.md): a
/// dataset of the same group, not `d`, of `d`'s shape, of booleans or numbers, not naming a
/// mask of its own. Anything else is an error naming the attribute.
fn companion<'d>(d: &Dataset, siblings: &'d [Dataset], at: &str) -> Result<Option<&'d Dataset>> {
    let attrs = d.attributes();
    let Some(a) = attrs.iter().find(|a| a.name == MASK_ATTR) else {
        return Ok(None);
    };
    let where_ = format!("{at}@{MASK_ATTR}");
    let bad = |m: String| read_err(&where_, m);
    let name = attr_string(a).ok_or_else(|| bad("is not a string naming a dataset".into()))?;
    if attrs.iter().any(|a| a.name == MASK_VALUE_ATTR) {
        return Err(bad(format!("and {MASK_VALUE_ATTR} both give a mask")));
    }
    if name == d.name() {
        return Err(bad("names the dataset itself as its mask".into()));
    }
    let c = siblings.iter().find(|s| s.name() == name).ok_or_else(|| {
        bad(format!(
            "names {name:?}, which is no dataset of the same group"
        ))
    })?;
    if c.shape() != d.shape() {
        return Err(bad(format!(
            "names {name:?}, of shape {:?}, not the dataset's {:?}",
            c.shape(),
            d.shape()
        )));
    }
    let numeric = datatype::plan(c.dtype()).ok().is_some_and(|p| {
        p.inner_shape.is_empty()
            && matches!(&p.dtype, DType::Scalar { ty, .. }
                if !matches!(ty, ScalarType::Ascii(_) | ScalarType::Ucs4(_)))
    });
    if !numeric {
        return Err(bad(format!(
            "names {name:?}, whose datatype is not boolean or numeric"
        )));
    }
    if c.attributes()
        .iter()
        .any(|a| a.name == MASK_ATTR || a.name == MASK_VALUE_ATTR)
    {
        return Err(bad(format!("names {name:?}, which has a mask of its own")));
    }
    Ok(Some(c))
}

/// The number of a `_asdf_mask_value` attribute: an integer or float of shape `()`.
fn mask_value(attrs: &[Attribute], at: &str) -> Result<Option<Node>> {
    let Some(a) = attrs.iter().find(|a| a.name == MASK_VALUE_ATTR) else {
        return Ok(None);
    };
    let where_ = format!("{at}@{MASK_VALUE_ATTR}");
    let not_number = || read_err(&where_, "is not a single integer or float");
    if !a.shape.is_empty() || is_vlen_string(&a.datatype) {
        return Err(not_number());
    }
    let plan = datatype::plan(&a.datatype).map_err(|_| not_number())?;
    if !plan.inner_shape.is_empty() || a.raw_data.len() != plan.src_size {
        return Err(not_number());
    }
    let array = DynArray {
        dtype: plan.dtype.clone(),
        shape: Vec::new(),
        data: plan.convert(a.raw_data.clone()),
    };
    match scalar_node(&array) {
        Some(n) if matches!(n.value(), Value::Int(_) | Value::Float(_)) => Ok(Some(n)),
        _ => Err(not_number()),
    }
}

/// A string attribute's value (variable-length, or fixed-length up to its first NUL).
fn attr_string(a: &Attribute) -> Option<String> {
    if !a.shape.is_empty() {
        return None;
    }
    if is_vlen_string(&a.datatype) {
        let mut s = a.read_strings().ok()?;
        return (s.len() == 1).then(|| s.remove(0));
    }
    if let Datatype::String { .. } = &a.datatype {
        let end = a
            .raw_data
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(a.raw_data.len());
        return String::from_utf8(a.raw_data[..end].to_vec()).ok();
    }
    None
}

/// The group part of an HDF5 path (`""` for a member of the root).
fn path_prefix_of(path: &str) -> &str {
    &path[..path.rfind('/').unwrap_or(0)]
}

/// A soft link's target as an absolute HDF5 path (a relative one is relative to its group).
fn absolute(target: &str, group: &str) -> String {
    if target.starts_with('/') {
        target.to_string()
    } else if group == "/" {
        format!("/{target}")
    } else {
        format!("{group}/{target}")
    }
}

/// The prefix [`hpath`] takes for the members of the group at `at` (`/` is the root).
fn path_prefix(at: &str) -> &str {
    if at == "/" {
        ""
    } else {
        at
    }
}

/// Most objects indexed for object references (a bound on what a file can make us hold).
const MAX_INDEXED: usize = 1 << 20;

/// The path of every object reachable from `g` by hard links (and soft links the reader
/// follows), by address, first path met kept; groups nested deeper than [`MAX_DEPTH`] and
/// objects past [`MAX_INDEXED`] are not indexed (their references become `null`).
fn index_paths(g: &Group, path: &str, depth: usize, out: &mut HashMap<u64, String>) {
    let Ok((groups, datasets)) = g.members() else {
        return;
    };
    for d in &datasets {
        if out.len() < MAX_INDEXED {
            out.entry(d.address())
                .or_insert_with(|| hpath(path, d.name()));
        }
    }
    for sub in &groups {
        if out.len() >= MAX_INDEXED || depth >= MAX_DEPTH || out.contains_key(&sub.address()) {
            continue;
        }
        let p = hpath(path, sub.name());
        out.insert(sub.address(), p.clone());
        index_paths(sub, &p, depth + 1, out);
    }
}

/// An HDF5 path (`/a/b`, `""` for the root) as a JSON pointer into the tree (`/a/b`).
fn pointer_of(path: &str) -> String {
    path.split('/')
        .skip(1)
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The size of an object reference datatype (an address of 4 or 8 bytes), `None` for any
/// other datatype (region references and HDF5 1.12's references take the tree form).
fn object_reference(dt: &Datatype) -> Option<usize> {
    match dt {
        Datatype::Reference {
            ref_type: ReferenceType::Object,
            size,
        } if matches!(*size, 4 | 8) => Some(usize::from(*size)),
        _ => None,
    }
}

fn shape_of(shape: &[u64]) -> Vec<usize> {
    shape.iter().map(|&d| d as usize).collect()
}

fn is_vlen_string(dt: &Datatype) -> bool {
    matches!(
        dt,
        Datatype::String {
            size: StringSize::Variable,
            ..
        } | Datatype::VarLen {
            kind: hdf5_reader::VarLenKind::String,
            ..
        }
    )
}

/// Strings in C order as nested sequences of `shape` (a scalar for shape `[]`).
fn nest_strings(strings: Vec<String>, shape: &[usize]) -> Node {
    fn build(it: &mut std::vec::IntoIter<String>, shape: &[usize]) -> Node {
        match shape.split_first() {
            None => Node::str(it.next().unwrap_or_default()),
            Some((&n, rest)) => Node::seq((0..n).map(|_| build(it, rest)).collect::<Vec<_>>()),
        }
    }
    build(&mut strings.into_iter(), shape)
}

/// A datatype as numpy's text (`<i4`; a record as numpy's list of fields), a subarray's
/// shape after it (`<f8[3]`).
fn dtype_name(dt: &DType, inner: &[usize]) -> String {
    if inner.is_empty() {
        return dt.to_numpy_str();
    }
    let dims: Vec<String> = inner.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", dt.to_numpy_str(), dims.join(", "))
}

/// The base datatype of a variable-length sequence (not a string).
fn sequence_base(dt: &Datatype) -> Option<&Datatype> {
    match dt {
        Datatype::VarLen {
            base,
            kind: hdf5_reader::VarLenKind::Sequence,
            ..
        } => Some(base),
        _ => None,
    }
}

/// The plan of a sequence's base datatype: one with a form of its own, not an array or
/// opaque data (`Err` describes it).
fn sequence_plan(base: &Datatype) -> std::result::Result<Plan, String> {
    let plan =
        datatype::plan(base).map_err(|what| format!("variable-length sequence of {what}"))?;
    if !plan.inner_shape.is_empty() || plan.opaque_tag.is_some() {
        return Err("variable-length sequence of arrays or opaque data".into());
    }
    Ok(plan)
}

/// Nodes in C order as nested sequences of `shape` (the node itself for shape `[]`).
fn nest_nodes(nodes: Vec<Node>, shape: &[usize]) -> Node {
    fn build(it: &mut std::vec::IntoIter<Node>, shape: &[usize]) -> Node {
        match shape.split_first() {
            None => it.next().unwrap_or_else(|| Node::new(Value::Null)),
            Some((&n, rest)) => Node::seq((0..n).map(|_| build(it, rest)).collect::<Vec<_>>()),
        }
    }
    build(&mut nodes.into_iter(), shape)
}

/// A `_hdf5/string_bytes` record: the string's size, character set and padding.
fn string_bytes_node(
    (size, encoding, padding): (u32, hdf5_reader::StringEncoding, hdf5_reader::StringPadding),
) -> Node {
    let (cset, pad) = datatype::string_names(encoding, padding);
    Node::new(Value::Map(vec![
        (Node::str("size"), Node::int(i128::from(size))),
        (Node::str("cset"), Node::str(cset)),
        (Node::str("padding"), Node::str(pad)),
    ]))
}

fn enum_node(members: &[(String, i128)]) -> Node {
    Node::new(Value::Map(
        members
            .iter()
            .map(|(n, v)| (Node::str(n.as_str()), Node::int(*v)))
            .collect(),
    ))
}

fn filters_node(filters: &[Filter]) -> Node {
    Node::seq(filters.iter().map(|(id, name, params)| {
        Node::new(Value::Map(vec![
            (Node::str("id"), Node::int(i128::from(*id))),
            (Node::str("name"), Node::str(name.as_str())),
            (
                Node::str("params"),
                Node::seq(params.iter().map(|&p| Node::int(i128::from(p)))),
            ),
        ]))
    }))
}

/// Scalars a YAML value keeps exactly without a datatype hint: int64, float64, bool.
fn default_scalar(dt: &DType) -> bool {
    matches!(
        dt,
        DType::Scalar {
            ty: ScalarType::Int64 | ScalarType::Float64 | ScalarType::Bool8,
            ..
        }
    )
}

/// A 0-d numeric, bool or string array as a YAML scalar.
fn scalar_node(a: &DynArray) -> Option<Node> {
    if a.element_count() != 1 || !a.shape.is_empty() {
        return None;
    }
    let DType::Scalar { ty, byteorder } = &a.dtype else {
        return None;
    };
    let mut b = a.data.clone();
    if *byteorder == asdf_core::array::ByteOrder::Big && !matches!(ty, ScalarType::Ascii(_)) {
        b.reverse();
    }
    let le = |n: usize| -> Option<[u8; 8]> {
        let mut x = [0u8; 8];
        x[..n].copy_from_slice(b.get(..n)?);
        Some(x)
    };
    use ScalarType as S;
    let signed = |n: usize| -> Option<i128> {
        let v = u64::from_le_bytes(le(n)?);
        let shift = 64 - 8 * n as u32;
        Some(i128::from(((v << shift) as i64) >> shift))
    };
    Some(match ty {
        S::Int8 => Node::int(signed(1)?),
        S::Int16 => Node::int(signed(2)?),
        S::Int32 => Node::int(signed(4)?),
        S::Int64 => Node::int(signed(8)?),
        S::UInt8 | S::UInt16 | S::UInt32 | S::UInt64 => {
            Node::int(i128::from(u64::from_le_bytes(le(b.len().min(8))?)))
        }
        S::Float32 => Node::new(Value::Float(f64::from(f32::from_le_bytes(
            b.get(..4)?.try_into().ok()?,
        )))),
        S::Float64 => Node::new(Value::Float(f64::from_le_bytes(
            b.get(..8)?.try_into().ok()?,
        ))),
        S::Bool8 => Node::new(Value::Bool(*b.first()? != 0)),
        S::Ascii(_) => {
            // ASCII up to NULs that end it, else no YAML string keeps it (a 0-d array does)
            let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
            if !b[..end].is_ascii() || b[end..].iter().any(|&x| x != 0) {
                return None;
            }
            Node::str(String::from_utf8_lossy(&b[..end]).into_owned())
        }
        _ => return None,
    })
}
