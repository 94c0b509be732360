//! `asdf_rs.write` (python dicts, lists, scalars and numpy arrays to a file) and
//! `asdf_rs.convert` (a file rewritten, e.g. with another compression).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use asdf_core::array::DType;
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, StandardVersion, Storage, WriteArray};
use asdf_core::yaml::{CollectionStyle, Integer, NodeData, Style, TimeOfDay, Timestamp};
use asdf_core::{AsdfFile, Node, Value, WriteOptions, Writer};
use numpy::{PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyComplex, PyDate, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString,
    PyTuple,
};

use crate::array::NDArray;
use crate::errors::{to_py, write_to_py};
use crate::tree::Tagged;

/// The tag of the stand-ins for arrays while the tree is built (replaced before writing;
/// not a URI any file may hold, it has no scheme).
const SLOT_TAG: &str = "asdf-rs array slot";

/// Write options from the keyword arguments of `write` and `convert`.
fn options(
    compression: Option<&str>,
    compression_level: Option<i32>,
    validate: bool,
    checksums: bool,
    standard: Option<&str>,
    inline_threshold: Option<usize>,
    keep_codecs: bool,
) -> PyResult<WriteOptions> {
    let choice = match compression {
        None if keep_codecs => CompressionChoice::Input,
        None => CompressionChoice::None,
        Some(label) => {
            let mut bytes = [0u8; 4];
            if label.len() > 4 || label.is_empty() {
                return Err(unknown_codec(label));
            }
            bytes[..label.len()].copy_from_slice(label.as_bytes());
            match Compression::from_label(&bytes) {
                Ok(Some(c)) => CompressionChoice::Codec(c),
                _ => return Err(unknown_codec(label)),
            }
        }
    };
    let mut opts = WriteOptions::default()
        .compression(choice)
        .compression_level(compression_level)
        .validate(validate)
        .checksums(checksums);
    if let Some(v) = standard {
        let v = StandardVersion::parse(v)
            .ok()
            .filter(StandardVersion::known)
            .ok_or_else(|| PyValueError::new_err(format!("unknown ASDF Standard version {v:?}")))?;
        opts = opts.standard(v);
    }
    if let Some(n) = inline_threshold {
        opts = opts.storage(Storage::InlineUpTo(n));
    }
    Ok(opts)
}

fn unknown_codec(label: &str) -> PyErr {
    PyValueError::new_err(format!(
        "unknown compression {label:?} (expected one of zlib, bzp2, lz4, zstd, lz4f, blsc)"
    ))
}

/// Writes `tree` (a `dict` of dicts, lists, scalars, numpy arrays and masked arrays,
/// `datetime`s, `complex` numbers, `Tagged` values and arrays read from another file) as
/// an ASDF file at `path`, atomically (a temporary file renamed over `path`).
///
/// `compression` is a block codec label (`zlib`, `bzp2`, `lz4`, `zstd`, `lz4f`, `blsc`);
/// `inline_threshold=N` writes arrays of at most N elements as YAML lists; `validate`
/// checks the tree against the schemas first; `standard` picks the ASDF Standard version.
/// `asdf_library` and `history["extensions"]` of the tree (a tree read from a file has
/// them) are not copied: the file gets this library's own.
///
/// `extensions`: a list of the extension-metadata entries (python asdf's
/// `history.extensions` entries: mappings with `extension_class`, `extension_uri`,
/// `software`, `manifest_software`, as dicts or `Tagged` `core/extension_metadata-1.0.0`
/// values) that `history.extensions` records, before the writer's own core entry. A dict
/// entry is tagged `core/extension_metadata-1.0.0`, its `software` and `manifest_software`
/// dicts `core/software-1.0.0`, as python asdf writes them. An extension URI is recorded
/// once: a later entry with the same `extension_uri` replaces an earlier one in its place
/// (as python asdf updates an entry), and an entry for the core extension of the version
/// written gives way to the writer's own. Standards before 1.2.0 have no extension history:
/// the entries are not written there.
#[pyfunction]
#[pyo3(signature = (path, tree, *, compression = None, compression_level = None, validate = true, checksums = true, standard = None, inline_threshold = None, extensions = None))]
#[allow(clippy::too_many_arguments)]
pub fn write(
    py: Python<'_>,
    path: PathBuf,
    tree: &Bound<'_, PyAny>,
    compression: Option<&str>,
    compression_level: Option<i32>,
    validate: bool,
    checksums: bool,
    standard: Option<&str>,
    inline_threshold: Option<usize>,
    extensions: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let opts = options(
        compression,
        compression_level,
        validate,
        checksums,
        standard,
        inline_threshold,
        false,
    )?;
    if !tree.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "the tree must be a dict, not {}",
            tree.get_type().name()?
        )));
    }
    let entries = extensions.map(extension_entries).transpose()?;
    let mut tree = own_metadata_dropped(tree)?;
    let record = entries.is_some() && *opts.standard_version() >= StandardVersion::V1_2_0;
    if let Some(entries) = entries.filter(|_| record) {
        tree = with_extensions(&tree, entries)?;
    }
    let mut conv = FromPy::new(py)?;
    let mut root = conv.node(&tree).map_err(|e| e.into_py())?;
    if record {
        root = extensions_styled(&root);
    }
    // every array's bytes, borrowed from numpy for the time of the write
    let mut held = Vec::with_capacity(conv.arrays.len());
    for a in &conv.arrays {
        let data = a.bytes.readonly();
        let mask = a.mask.as_ref().map(|m| m.readonly());
        held.push((data, mask));
    }
    let mut writer = Writer::new(opts);
    let mut placeholders = Vec::with_capacity(held.len());
    for (a, (data, mask)) in conv.arrays.iter().zip(&held) {
        let array = write_array(a.dtype.clone(), a.shape.clone(), data)?;
        let node = match mask {
            Some(m) => {
                let bool_dtype = DType::from_numpy_str("|b1").unwrap_or(a.dtype.clone());
                let mask = write_array(bool_dtype, a.shape.clone(), m)?;
                writer.add_masked_array(array, mask, Default::default())
            }
            None => writer.add_array(array),
        };
        placeholders.push(node);
    }
    let root = fill_slots(&root, &placeholders, &mut HashMap::new());
    py.detach(|| writer.write_to_path(&root, &path))
        .map_err(write_to_py)?;
    Ok(())
}

/// The tree without what describes the software that wrote a file (`asdf_library`, and
/// `history`'s `extensions`), as a tree read from a file has them: the writer records its
/// own. The caller's dicts are not changed.
fn own_metadata_dropped<'py>(tree: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let dict = tree.cast::<PyDict>()?;
    let has_history_extensions = dict
        .get_item("history")?
        .and_then(|h| h.cast_into::<PyDict>().ok())
        .map(|h| h.contains("extensions"))
        .transpose()?
        .unwrap_or(false);
    if !dict.contains("asdf_library")? && !has_history_extensions {
        return Ok(tree.clone());
    }
    let copy = dict.copy()?;
    copy.del_item("asdf_library").ok();
    if has_history_extensions {
        if let Some(h) = copy.get_item("history")? {
            let h = h.cast_into::<PyDict>()?.copy()?;
            h.del_item("extensions")?;
            if h.is_empty() {
                copy.del_item("history")?;
            } else {
                copy.set_item("history", h)?;
            }
        }
    }
    Ok(copy.into_any())
}

const EXTENSION_METADATA_TAG: &str = "tag:stsci.edu:asdf/core/extension_metadata-1.0.0";
const SOFTWARE_TAG: &str = "tag:stsci.edu:asdf/core/software-1.0.0";

/// The entries of `write`'s `extensions` checked, tagged as python asdf tags them, and with
/// each extension URI once (a later entry replaces an earlier one in its place).
fn extension_entries<'py>(list: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let py = list.py();
    if !(list.is_instance_of::<PyList>() || list.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(format!(
            "extensions must be a list of extension metadata mappings, not {}",
            list.get_type().name()?
        )));
    }
    let mut out: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut by_uri: HashMap<String, usize> = HashMap::new();
    for (i, entry) in list.try_iter()?.enumerate() {
        let entry = entry?;
        let (map, tagged) = match entry.cast::<Tagged>() {
            Ok(t) => {
                let t = t.get();
                if !t
                    .tag
                    .starts_with("tag:stsci.edu:asdf/core/extension_metadata-")
                {
                    return Err(PyValueError::new_err(format!(
                        "extensions[{i}]: a value tagged {}, not core/extension_metadata",
                        t.tag
                    )));
                }
                let value = t.value.bind(py);
                let Ok(map) = value.cast::<PyDict>() else {
                    return Err(PyTypeError::new_err(format!(
                        "extensions[{i}]: a core/extension_metadata value that is a {}, not a \
                         mapping",
                        value.get_type().name()?
                    )));
                };
                (map.clone(), true)
            }
            Err(_) => match entry.cast::<PyDict>() {
                Ok(d) => (d.clone(), false),
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "extensions[{i}]: {} is not an extension metadata mapping",
                        entry.get_type().name()?
                    )))
                }
            },
        };
        let uri = match map.get_item("extension_uri")? {
            Some(u) => match u.cast::<PyString>() {
                Ok(s) => Some(s.to_str()?.to_string()),
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "extensions[{i}]: extension_uri must be a str, not {}",
                        u.get_type().name()?
                    )))
                }
            },
            None => None,
        };
        if uri.is_none() {
            // python asdf's schema requires extension_class only: an entry of an extension
            // without a URI (the legacy extensions of python asdf before 3.0) names its class
            let class = map.get_item("extension_class")?;
            if !class.is_some_and(|c| c.is_instance_of::<PyString>()) {
                return Err(PyValueError::new_err(format!(
                    "extensions[{i}]: an extension metadata mapping needs a str extension_uri \
                     (or, for a legacy extension, a str extension_class)"
                )));
            }
        }
        let entry = if tagged {
            entry
        } else {
            let copy = PyDict::new(py);
            for (k, v) in map.iter() {
                let software = k
                    .cast::<PyString>()
                    .is_ok_and(|k| matches!(k.to_str(), Ok("software" | "manifest_software")));
                if software && v.is_instance_of::<PyDict>() {
                    let plain = PyDict::new(py);
                    plain.update(v.cast::<PyDict>()?.as_mapping())?;
                    let t = Tagged {
                        tag: SOFTWARE_TAG.to_string(),
                        value: plain.into_any().unbind(),
                    };
                    copy.set_item(k, Bound::new(py, t)?)?;
                } else {
                    copy.set_item(k, v)?;
                }
            }
            let t = Tagged {
                tag: EXTENSION_METADATA_TAG.to_string(),
                value: copy.into_any().unbind(),
            };
            Bound::new(py, t)?.into_any()
        };
        match uri.and_then(|u| match by_uri.get(&u) {
            Some(&at) => Some(at),
            None => {
                by_uri.insert(u, out.len());
                None
            }
        }) {
            Some(at) => out[at] = entry,
            None => out.push(entry),
        }
    }
    PyList::new(py, out)
}

/// The tree (a dict) with `history.extensions` set to `entries`: a new root dict and
/// `history` dict, the caller's are not changed. A list `history` (the form before ASDF
/// Standard 1.2.0) becomes the mapping's `entries`.
fn with_extensions<'py>(
    tree: &Bound<'py, PyAny>,
    entries: Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = tree.py();
    let root = tree.cast::<PyDict>()?.copy()?;
    let old = root.get_item("history")?;
    let history = match &old {
        None => PyDict::new(py),
        Some(h) => {
            let h = match h.cast::<Tagged>() {
                Ok(t) => t.get().value.bind(py).clone(),
                Err(_) => h.clone(),
            };
            if let Ok(d) = h.cast::<PyDict>() {
                d.copy()?
            } else if h.is_instance_of::<PyList>() || h.is_instance_of::<PyTuple>() {
                let d = PyDict::new(py);
                d.set_item("entries", h)?;
                d
            } else {
                return Err(PyTypeError::new_err(format!(
                    "/history: a {}, not a mapping (nor a list of entries): the extensions \
                     cannot be recorded in it",
                    h.get_type().name()?
                )));
            }
        }
    };
    history.set_item("extensions", entries)?;
    root.set_item("history", history)?;
    Ok(root.into_any())
}

/// The root with its `history.extensions` entries styled as python asdf (PyYAML) writes
/// them: the keys of each mapping sorted, a collection of scalars in flow style
/// (`software: !core/software-1.0.0 {name: asdf-astropy, version: 0.11.0}`).
fn extensions_styled(root: &Node) -> Node {
    let with_entry = |node: &Node, key: &str, f: &dyn Fn(&Node) -> Node| -> Node {
        match node.value() {
            Value::Map(entries) => {
                let new = entries
                    .iter()
                    .map(
                        |(k, v)| match k.as_str() == Some(key) && k.tag().is_none() {
                            true => (k.clone(), f(v)),
                            false => (k.clone(), v.clone()),
                        },
                    )
                    .collect();
                restyled(node, Value::Map(new), node.style())
            }
            _ => node.clone(),
        }
    };
    with_entry(root, "history", &|h| {
        with_entry(h, "extensions", &|e| match e.value() {
            Value::Seq(items) => {
                let items = items.iter().map(python_styled).collect();
                restyled(e, Value::Seq(items), e.style())
            }
            _ => e.clone(),
        })
    })
}

/// PyYAML's style of a node python asdf writes: mapping keys sorted, flow style for a
/// collection whose items are all scalars.
fn python_styled(node: &Node) -> Node {
    let value = match node.value() {
        Value::Map(entries) => {
            let mut new: Vec<(Node, Node)> = entries
                .iter()
                .map(|(k, v)| (k.clone(), python_styled(v)))
                .collect();
            new.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
            Value::Map(new)
        }
        Value::Seq(items) => Value::Seq(items.iter().map(python_styled).collect()),
        _ => return node.clone(),
    };
    let scalar = |n: &Node| !matches!(n.value(), Value::Map(_) | Value::Seq(_));
    let leaf = match &value {
        Value::Map(entries) => entries.iter().all(|(k, v)| scalar(k) && scalar(v)),
        Value::Seq(items) => items.iter().all(scalar),
        _ => false,
    };
    let style = Style::Collection(if leaf {
        CollectionStyle::Flow
    } else {
        CollectionStyle::Block
    });
    restyled(node, value, style)
}

fn restyled(old: &Node, value: Value, style: Style) -> Node {
    Node::from(NodeData {
        tag: old.data().tag.clone(),
        value,
        style,
        anchor: None,
    })
}

fn write_array<'a>(
    dtype: DType,
    shape: Vec<usize>,
    data: &'a PyReadonlyArray1<'_, u8>,
) -> PyResult<WriteArray<'a>> {
    let bytes = data
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let name = dtype.to_numpy_str();
    WriteArray::from_bytes(dtype, shape, Cow::Borrowed(bytes)).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "array of datatype {name}: its bytes do not match (a record with padding?)"
        ))
    })
}

/// Rewrites the file at `input` to `output`: same tree and arrays, with the blocks
/// re-encoded as `compression` says (`None`: each block keeps its codec).
#[pyfunction]
#[pyo3(signature = (input, output, *, compression = None, compression_level = None, validate = true, checksums = true, standard = None))]
#[allow(clippy::too_many_arguments)]
pub fn convert(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    compression: Option<&str>,
    compression_level: Option<i32>,
    validate: bool,
    checksums: bool,
    standard: Option<&str>,
) -> PyResult<()> {
    let opts = options(
        compression,
        compression_level,
        validate,
        checksums,
        standard,
        None,
        true,
    )?;
    py.detach(move || {
        let file = AsdfFile::open(&input).map_err(to_py)?;
        Writer::from_file(&file, opts)
            .write_to_path(file.tree(), &output)
            .map_err(crate::errors::write_to_py)?;
        Ok::<(), PyErr>(())
    })
}

/// An array found in the tree: its bytes as a flat `uint8` numpy array (C order), datatype,
/// shape and mask (as `uint8` bytes of a bool array).
struct ArrayIn<'py> {
    bytes: Bound<'py, numpy::PyArray1<u8>>,
    dtype: DType,
    shape: Vec<usize>,
    mask: Option<Bound<'py, numpy::PyArray1<u8>>>,
}

/// A conversion error and the tree path where it happened (segments innermost first).
struct ConvError {
    path: Vec<String>,
    err: PyErr,
    own: bool,
}

impl ConvError {
    fn ty(message: String) -> Self {
        ConvError {
            path: Vec::new(),
            err: PyTypeError::new_err(message),
            own: true,
        }
    }

    fn at(mut self, seg: impl FnOnce() -> String) -> Self {
        self.path.push(seg());
        self
    }

    fn into_py(self) -> PyErr {
        if !self.own && self.path.is_empty() {
            return self.err;
        }
        let pointer: String = self.path.iter().rev().map(|s| format!("/{s}")).collect();
        Python::attach(|py| {
            let msg = self.err.value(py).to_string();
            let text = format!("{pointer}: {msg}");
            if self.err.is_instance_of::<PyTypeError>(py) {
                PyTypeError::new_err(text)
            } else if self.err.is_instance_of::<PyValueError>(py) {
                PyValueError::new_err(text)
            } else {
                self.err
            }
        })
    }
}

impl From<PyErr> for ConvError {
    fn from(err: PyErr) -> Self {
        ConvError {
            path: Vec::new(),
            err,
            own: false,
        }
    }
}

type ConvResult<T> = Result<T, ConvError>;

struct FromPy<'py> {
    py: Python<'py>,
    np_ndarray: Bound<'py, PyAny>,
    np_masked: Bound<'py, PyAny>,
    np_generic: Bound<'py, PyAny>,
    np_ascontiguous: Bound<'py, PyAny>,
    np_getmaskarray: Bound<'py, PyAny>,
    np_getdata: Bound<'py, PyAny>,
    nomask: Bound<'py, PyAny>,
    uint8: Bound<'py, PyAny>,
    arrays: Vec<ArrayIn<'py>>,
    /// Collections (and `Tagged` collections) already converted, by python identity: written
    /// once, then aliased.
    memo: HashMap<usize, Node>,
    /// Collections being converted: one met again is a cycle.
    active: HashSet<usize>,
    /// Arrays already registered, by python identity.
    array_ids: HashMap<usize, Node>,
}

impl<'py> FromPy<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let np = py.import("numpy")?;
        let ma = np.getattr("ma")?;
        Ok(FromPy {
            py,
            np_ndarray: np.getattr("ndarray")?,
            np_masked: ma.getattr("MaskedArray")?,
            np_generic: np.getattr("generic")?,
            np_ascontiguous: np.getattr("ascontiguousarray")?,
            np_getmaskarray: ma.getattr("getmaskarray")?,
            np_getdata: ma.getattr("getdata")?,
            nomask: ma.getattr("nomask")?,
            uint8: np.getattr("uint8")?,
            arrays: Vec::new(),
            memo: HashMap::new(),
            active: HashSet::new(),
            array_ids: HashMap::new(),
        })
    }

    fn node(&mut self, obj: &Bound<'py, PyAny>) -> ConvResult<Node> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Node::str(s.to_str()?));
        }
        if obj.is_none() {
            return Ok(Node::new(Value::Null));
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Node::new(Value::Bool(b.is_true())));
        }
        if let Ok(i) = obj.cast::<PyInt>() {
            return Ok(Node::new(Value::Int(match i.extract::<i128>() {
                Ok(v) => Integer::Small(v),
                Err(_) => Integer::Big(i.str()?.to_string()),
            })));
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return Ok(Node::new(Value::Float(f.value())));
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return self.collection(obj, |s| {
                let mut entries = Vec::with_capacity(d.len());
                for (k, v) in d.iter() {
                    let key = s.key(&k)?;
                    let seg = || k.str().map(|s| s.to_string()).unwrap_or_default();
                    let value = s.node(&v).map_err(|e| e.at(seg))?;
                    entries.push((key, value));
                }
                Ok(Node::new(Value::Map(entries)))
            });
        }
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            return self.collection(obj, |s| {
                let mut items = Vec::new();
                for (i, item) in obj.try_iter()?.enumerate() {
                    items.push(s.node(&item?).map_err(|e| e.at(|| i.to_string()))?);
                }
                Ok(Node::new(Value::Seq(items)))
            });
        }
        if obj.is_instance(&self.np_ndarray)? {
            return self.array(obj);
        }
        if let Ok(a) = obj.cast::<NDArray>() {
            let data = a.get().load(self.py)?;
            return self.array(&data);
        }
        if let Ok(t) = obj.cast::<Tagged>() {
            let t = t.get();
            let value = t.value.bind(self.py);
            if value.is_instance_of::<PyDict>()
                || value.is_instance_of::<PyList>()
                || value.is_instance_of::<PyTuple>()
            {
                // a tagged mapping or sequence met twice is one node (an anchor and an
                // alias), as a dict or list is; tagged scalars are written at each place, as
                // PyYAML writes strings
                return self.collection(obj, |s| {
                    let inner = s.node(value)?;
                    Ok(Node::tagged(t.tag.as_str(), inner.value().clone()))
                });
            }
            let inner = self.node(value)?;
            return Ok(Node::tagged(t.tag.as_str(), inner.value().clone()));
        }
        if obj.is_instance(&self.np_generic)? {
            let item = obj.call_method0("item")?;
            if item.is_instance(&self.np_generic)? {
                return Err(ConvError::ty(format!(
                    "cannot write a numpy {} scalar",
                    obj.get_type().name()?
                )));
            }
            return self.node(&item);
        }
        if let Ok(c) = obj.cast::<PyComplex>() {
            let text = c.str()?.to_string();
            return Ok(Node::tagged(
                "tag:stsci.edu:asdf/core/complex-1.0.0",
                Value::Str(text),
            ));
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Node::new(Value::Binary(b.as_bytes().to_vec())));
        }
        if obj.is_instance_of::<PyDateTime>() {
            return Ok(Node::new(Value::Timestamp(Box::new(datetime(obj)?))));
        }
        if obj.is_instance_of::<PyDate>() {
            return Ok(Node::new(Value::Timestamp(Box::new(Timestamp {
                text: obj.call_method0("isoformat")?.extract()?,
                year: obj.getattr("year")?.extract()?,
                month: obj.getattr("month")?.extract()?,
                day: obj.getattr("day")?.extract()?,
                time: None,
            }))));
        }
        Err(ConvError::ty(format!(
            "cannot write a {} (ASDF trees hold dicts, lists, str, int, float, bool, None, \
             complex, datetime, bytes, numpy arrays and asdf_rs.Tagged)",
            obj.get_type().name()?
        )))
    }

    fn key(&mut self, k: &Bound<'py, PyAny>) -> ConvResult<Node> {
        if let Ok(s) = k.cast::<PyString>() {
            return Ok(Node::str(s.to_str()?));
        }
        if k.is_instance_of::<PyDict>() || k.is_instance_of::<PyList>() {
            return Err(ConvError::ty("a mapping key must be a scalar".into()));
        }
        self.node(k)
    }

    fn collection(
        &mut self,
        obj: &Bound<'py, PyAny>,
        build: impl FnOnce(&mut Self) -> ConvResult<Node>,
    ) -> ConvResult<Node> {
        let id = obj.as_ptr() as usize;
        if let Some(n) = self.memo.get(&id) {
            return Ok(n.clone());
        }
        if !self.active.insert(id) {
            return Err(ConvError::ty(
                "the tree contains itself (a cycle); ASDF trees are written without cycles here"
                    .into(),
            ));
        }
        let node = build(self);
        self.active.remove(&id);
        let node = node?;
        self.memo.insert(id, node.clone());
        Ok(node)
    }

    fn array(&mut self, obj: &Bound<'py, PyAny>) -> ConvResult<Node> {
        let id = obj.as_ptr() as usize;
        if let Some(n) = self.array_ids.get(&id) {
            return Ok(n.clone());
        }
        let masked = obj.is_instance(&self.np_masked)?;
        let (data, mask) = if masked {
            let mask = obj.getattr("mask")?;
            let data = self.np_getdata.call1((obj,))?;
            if mask.is(&self.nomask) {
                (data, None)
            } else {
                let m = self.np_getmaskarray.call1((obj,))?;
                (data, Some(m))
            }
        } else {
            (obj.clone(), None)
        };
        let dtype_obj = data.getattr("dtype")?;
        let text: String = if dtype_obj.getattr("names")?.is_none() {
            dtype_obj.getattr("str")?.extract()?
        } else {
            dtype_obj.getattr("descr")?.str()?.to_string()
        };
        let dtype = DType::from_numpy_str(&text)
            .ok_or_else(|| ConvError::ty(format!("numpy datatype {text} has no ASDF datatype")))?;
        let shape: Vec<usize> = data.getattr("shape")?.extract()?;
        let bytes = self.flat_bytes(&data)?;
        let mask = mask.map(|m| self.flat_bytes(&m)).transpose()?;
        let slot = self.arrays.len();
        self.arrays.push(ArrayIn {
            bytes,
            dtype,
            shape,
            mask,
        });
        let node = Node::tagged(SLOT_TAG, Value::Int(Integer::Small(slot as i128)));
        self.array_ids.insert(id, node.clone());
        Ok(node)
    }

    /// The array's bytes in C order, as a flat `uint8` array (a view when it already is
    /// C-contiguous).
    fn flat_bytes(&self, a: &Bound<'py, PyAny>) -> ConvResult<Bound<'py, numpy::PyArray1<u8>>> {
        let c = self.np_ascontiguous.call1((a,))?;
        let flat = c
            .call_method1("reshape", (-1,))?
            .call_method1("view", (&self.uint8,))?;
        let flat = flat
            .cast_into::<numpy::PyArray1<u8>>()
            .map_err(|e| ConvError::ty(e.to_string()))?;
        if !flat.is_contiguous() {
            return Err(ConvError::ty("array bytes are not contiguous".into()));
        }
        Ok(flat)
    }
}

/// A `datetime` as a YAML timestamp, in PyYAML's text (`isoformat(' ')`).
fn datetime(obj: &Bound<'_, PyAny>) -> PyResult<Timestamp> {
    let offset = obj.call_method0("utcoffset")?;
    let utc_offset_seconds = if offset.is_none() {
        None
    } else {
        let secs: f64 = offset.call_method0("total_seconds")?.extract()?;
        Some(secs as i32)
    };
    let micro: u32 = obj.getattr("microsecond")?.extract()?;
    Ok(Timestamp {
        text: obj.call_method1("isoformat", (" ",))?.extract()?,
        year: obj.getattr("year")?.extract()?,
        month: obj.getattr("month")?.extract()?,
        day: obj.getattr("day")?.extract()?,
        time: Some(TimeOfDay {
            hour: obj.getattr("hour")?.extract()?,
            minute: obj.getattr("minute")?.extract()?,
            second: obj.getattr("second")?.extract()?,
            nanosecond: micro * 1000,
            utc_offset_seconds,
        }),
    })
}

/// The tree with each array stand-in replaced by the writer's node for it; subtrees
/// without stand-ins are kept as they are, shared subtrees stay shared.
fn fill_slots(node: &Node, placeholders: &[Node], memo: &mut HashMap<usize, Node>) -> Node {
    if node.tag() == Some(SLOT_TAG) {
        let slot = node.as_i64().and_then(|i| usize::try_from(i).ok());
        if let Some(p) = slot.and_then(|i| placeholders.get(i)) {
            return p.clone();
        }
    }
    if !matches!(node.value(), Value::Seq(_) | Value::Map(_)) {
        return node.clone();
    }
    if let Some(done) = memo.get(&node.id()) {
        return done.clone();
    }
    let out = match node.value() {
        Value::Seq(items) => {
            let new: Vec<Node> = items
                .iter()
                .map(|n| fill_slots(n, placeholders, memo))
                .collect();
            if new.iter().zip(items).all(|(a, b)| a.ptr_eq(b)) {
                node.clone()
            } else {
                rebuild(node, Value::Seq(new))
            }
        }
        Value::Map(entries) => {
            let new: Vec<(Node, Node)> = entries
                .iter()
                .map(|(k, v)| (k.clone(), fill_slots(v, placeholders, memo)))
                .collect();
            if new.iter().zip(entries).all(|(a, b)| a.1.ptr_eq(&b.1)) {
                node.clone()
            } else {
                rebuild(node, Value::Map(new))
            }
        }
        _ => node.clone(),
    };
    memo.insert(node.id(), out.clone());
    out
}

fn rebuild(old: &Node, value: Value) -> Node {
    match old.tag() {
        Some(t) => Node::tagged(t, value),
        None => Node::new(value),
    }
}
