//! `asdf_rs.open` and the opened file: tree, info, validation, checksums, search.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use asdf_core::{AsdfFile, Node, Value};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::errors::{to_py, AsdfError};
use crate::tree::ToPy;

/// An opened ASDF file (from `asdf_rs.open`). Use it as a context manager; arrays read from it
/// stay usable after `close()` (each holds the file open while it lives).
#[pyclass(frozen, module = "asdf_rs", name = "AsdfFile")]
pub struct PyAsdfFile {
    inner: Mutex<Option<Arc<AsdfFile>>>,
    mapped: bool,
    /// Where it was opened from (a URL, or the local path made absolute).
    origin: Option<Arc<crate::array::Origin>>,
    tree: OnceLock<Py<PyAny>>,
}

impl PyAsdfFile {
    pub(crate) fn file(&self) -> PyResult<Arc<AsdfFile>> {
        let guard = self
            .inner
            .lock()
            .map_err(|_| AsdfError::new_err("the file's lock is poisoned"))?;
        guard
            .clone()
            .ok_or_else(|| PyValueError::new_err("I/O operation on a closed ASDF file"))
    }
}

/// Opens an ASDF file: reads its header, tree and block headers (arrays are read when
/// used). `path` is a local path or an `s3://`, `gs://`, `az://`, `http(s)://` URL (read
/// through asdf-store with range requests; `storage_options` are its store options, such as
/// `{"region": "us-east-1"}`).
///
/// `memmap=True` maps a local file, so uncompressed native-endian arrays are numpy views of
/// the map (no copy); `verify_checksums=True` checks each block's MD5 as it is read;
/// `validate=True` validates the tree against the schemas of its tags first.
#[pyfunction]
#[pyo3(signature = (path, *, mode = "r", validate = false, verify_checksums = false, memmap = true, storage_options = None))]
pub fn open(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    mode: &str,
    validate: bool,
    verify_checksums: bool,
    memmap: bool,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<PyAsdfFile> {
    if mode != "r" {
        return Err(PyValueError::new_err(format!(
            "mode {mode:?} is not supported: files open read-only (\"r\"); write a new file \
             with asdf_rs.write"
        )));
    }
    let options = AsdfFile::options()
        .verify_checksums(verify_checksums)
        .validate(validate);
    let url = path
        .cast::<PyString>()
        .ok()
        .map(|s| s.to_string())
        .filter(|s| asdf_store::is_url(s));
    let (file, mapped, origin) = match url {
        Some(url) => {
            let origin = crate::array::Origin {
                source: url.clone(),
                storage_options: storage_options.clone(),
            };
            let mut store = asdf_store::StoreOptions::default();
            for (k, v) in storage_options.unwrap_or_default() {
                store = store.option(k, v);
            }
            let file = py
                .detach(move || asdf_store::open_url_with(&url, &store, &options))
                .map_err(store_error)?;
            (file, false, Some(origin))
        }
        None => {
            if storage_options.is_some() {
                return Err(PyValueError::new_err(
                    "storage_options apply to URLs, not to local paths",
                ));
            }
            let path: PathBuf = path.extract()?;
            let origin = std::path::absolute(&path)
                .ok()
                .and_then(|p| p.to_str().map(str::to_string))
                .map(|source| crate::array::Origin {
                    source,
                    storage_options: None,
                });
            let options = options.mmap(memmap);
            let file = py.detach(move || options.open(&path)).map_err(to_py)?;
            (file, memmap, origin)
        }
    };
    Ok(PyAsdfFile {
        inner: Mutex::new(Some(Arc::new(file))),
        mapped,
        origin: origin.map(Arc::new),
        tree: OnceLock::new(),
    })
}

fn store_error(e: asdf_store::StoreError) -> PyErr {
    match e {
        asdf_store::StoreError::Asdf(inner) => to_py(inner),
        other => {
            crate::errors::io_error(std::io::ErrorKind::Other, asdf_core::display_chain(&other))
        }
    }
}

#[pymethods]
impl PyAsdfFile {
    /// The tree as python objects (built on first use, then the same object).
    #[getter]
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(t) = self.tree.get() {
            return Ok(t.bind(py).clone());
        }
        let file = self.file()?;
        let t = ToPy::new(py, file.clone(), self.mapped)
            .with_origin(self.origin.clone())
            .convert(file.tree())?;
        Ok(self.tree.get_or_init(|| t.unbind()).bind(py).clone())
    }

    /// The tree for python asdf's converters (`asdf_rs.converters`): a new tree on each call
    /// in which every tagged node but an array keeps its tag as an instance of `tagged_dict`,
    /// `tagged_list` or `tagged_string` (python asdf's `asdf.tagged` classes; a tagged scalar
    /// of another type is a `Tagged`), and each array is `array(NDArray)`.
    fn _tagged_tree<'py>(
        &self,
        py: Python<'py>,
        tagged_dict: Bound<'py, PyAny>,
        tagged_list: Bound<'py, PyAny>,
        tagged_string: Bound<'py, PyAny>,
        array: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let file = self.file()?;
        ToPy::new(py, file.clone(), self.mapped)
            .with_origin(self.origin.clone())
            .with_tag_classes(crate::tree::TagClasses {
                dict: tagged_dict,
                list: tagged_list,
                string: tagged_string,
                array,
            })
            .convert(file.tree())
    }

    /// The ASDF Standard version of the file.
    #[getter]
    fn version(&self) -> PyResult<String> {
        Ok(self.file()?.standard_version().to_string())
    }

    /// Where the file was opened from: its URL, or its local path made absolute (what
    /// `asdf_rs.to_dask` hands its workers to open it again).
    #[getter]
    fn source(&self) -> Option<String> {
        self.origin.as_ref().map(|o| o.source.clone())
    }

    /// The storage options it was opened with (URLs only), or `None`.
    #[getter]
    fn storage_options(&self) -> Option<HashMap<String, String>> {
        self.origin.as_ref().and_then(|o| o.storage_options.clone())
    }

    /// The file's path, or `None`.
    #[getter]
    fn path(&self) -> PyResult<Option<PathBuf>> {
        Ok(self.file()?.path().map(|p| p.to_path_buf()))
    }

    /// `tree[key]`.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.tree(py)?.get_item(key)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.tree(py)?.contains(key)
    }

    /// Validates the tree against the schemas of its tags (block data is not read); raises
    /// `ValidationError` listing every problem.
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        let file = self.file()?;
        py.detach(move || file.validate())
            .map_err(|e| to_py(asdf_core::Error::Validation(e)))
    }

    /// Checks every block's MD5 checksum (in parallel, without keeping the blocks); raises
    /// `ChecksumError` on the first mismatch.
    fn verify_checksums(&self, py: Python<'_>) -> PyResult<()> {
        let file = self.file()?;
        py.detach(move || file.verify_checksums()).map_err(to_py)
    }

    /// A rendering of the tree, one node a line, as python asdf's `info()` shows it: each
    /// key with its python type, scalars with their value, arrays with shape and datatype.
    /// At most `max_rows` lines (`None`: all).
    #[pyo3(signature = (max_rows = Some(200)))]
    fn info(&self, max_rows: Option<usize>) -> PyResult<String> {
        let file = self.file()?;
        let mut out = Info {
            file: file.clone(),
            lines: Vec::new(),
            max_rows: max_rows.unwrap_or(usize::MAX),
            hidden: 0,
        };
        out.node("root", file.tree(), "", true, true);
        let mut text = out.lines.join("\n");
        if out.hidden > 0 {
            text.push_str(&format!("\nSome nodes not shown ({} more).", out.hidden));
        }
        Ok(text)
    }

    /// Nodes of the tree whose key (or list index) matches the regular expression `key`
    /// (python `re.search`), whose tag matches the regular expression `tag`, and whose
    /// value equals `value` (each given condition must hold). Returns `(path, value)`
    /// pairs in document order, `path` a JSON pointer (`/meta/filter`).
    #[pyo3(signature = (key = None, *, value = None, tag = None))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        key: Option<&str>,
        value: Option<Bound<'py, PyAny>>,
        tag: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let file = self.file()?;
        let re = py.import("re")?;
        let key_re = key.map(|k| re.call_method1("compile", (k,))).transpose()?;
        let tag_re = tag.map(|t| re.call_method1("compile", (t,))).transpose()?;
        let mut s = Search {
            py,
            file: file.clone(),
            mapped: self.mapped,
            key: key_re,
            tag: tag_re,
            value,
            out: PyList::empty(py),
        };
        let mut path = String::new();
        s.walk(file.tree(), None, &mut path)?;
        Ok(s.out)
    }

    /// Releases the file (arrays already read, and lazy arrays already taken from the
    /// tree, keep it open until they are dropped).
    fn close(&self) -> PyResult<()> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| AsdfError::new_err("the file's lock is poisoned"))?;
        *guard = None;
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match self.file() {
            Ok(f) => format!(
                "<asdf_rs.AsdfFile {} (ASDF Standard {})>",
                f.path()
                    .map_or_else(|| "<memory>".into(), |p| p.display().to_string()),
                f.standard_version()
            ),
            Err(_) => "<asdf_rs.AsdfFile (closed)>".into(),
        }
    }
}

struct Search<'py> {
    py: Python<'py>,
    file: Arc<AsdfFile>,
    mapped: bool,
    key: Option<Bound<'py, PyAny>>,
    tag: Option<Bound<'py, PyAny>>,
    value: Option<Bound<'py, PyAny>>,
    out: Bound<'py, PyList>,
}

impl<'py> Search<'py> {
    fn walk(&mut self, node: &Node, name: Option<&str>, path: &mut String) -> PyResult<()> {
        if self.matches(node, name)? {
            let v = ToPy::new(self.py, self.file.clone(), self.mapped)
                .with_pointer(path)
                .convert(node)?;
            self.out.append((path.clone(), v))?;
        }
        if is_array(node) {
            return Ok(()); // an array's descriptor is not part of the python tree
        }
        let len = path.len();
        match node.value() {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let seg = i.to_string();
                    path.push('/');
                    path.push_str(&seg);
                    self.walk(item, Some(&seg), path)?;
                    path.truncate(len);
                }
            }
            Value::Map(entries) => {
                for (k, v) in entries {
                    let seg = match k.value() {
                        Value::Str(s) => s.clone(),
                        other => scalar_text(other),
                    };
                    path.push('/');
                    asdf_core::unstable::push_pointer_segment(path, &seg);
                    self.walk(v, Some(&seg), path)?;
                    path.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn matches(&self, node: &Node, name: Option<&str>) -> PyResult<bool> {
        if self.key.is_none() && self.tag.is_none() && self.value.is_none() {
            return Ok(true);
        }
        if let Some(re) = &self.key {
            let Some(name) = name else { return Ok(false) };
            if re.call_method1("search", (name,))?.is_none() {
                return Ok(false);
            }
        }
        if let Some(re) = &self.tag {
            let Some(tag) = node.tag() else {
                return Ok(false);
            };
            if re.call_method1("search", (tag,))?.is_none() {
                return Ok(false);
            }
        }
        if let Some(want) = &self.value {
            if matches!(node.value(), Value::Seq(_) | Value::Map(_)) {
                return Ok(false);
            }
            let v = ToPy::new(self.py, self.file.clone(), self.mapped).convert(node)?;
            // numpy arrays and the like compare element-wise: only a plain True counts
            let eq = v.eq(want).unwrap_or(false);
            if !eq {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => match i {
            asdf_core::Integer::Small(i) => i.to_string(),
            asdf_core::Integer::Big(s) => s.clone(),
        },
        Value::Float(f) => asdf_core::unstable::python_repr(*f),
        Value::Str(s) => s.clone(),
        other => other.kind_name().to_string(),
    }
}

/// The `info()` rendering.
struct Info {
    /// For the datatype and shape of asdf-zarr arrays.
    file: Arc<AsdfFile>,
    lines: Vec<String>,
    max_rows: usize,
    hidden: usize,
}

impl Info {
    fn node(&mut self, name: &str, node: &Node, prefix: &str, last: bool, root: bool) {
        let type_name = python_type(node);
        let mut line = String::new();
        if !root {
            line.push_str(prefix);
            line.push_str(if last { "└─" } else { "├─" });
        }
        line.push_str(&format!("{name} ({type_name})"));
        if asdf_core::file::is_zarr(node) {
            if let Ok((dtype, shape)) = self.file.zarr_info(node, "") {
                line.push_str(&format!(": shape={shape:?}, dtype={}", dtype.name()));
            }
        } else if node.is_ndarray() {
            if let Ok(meta) = asdf_core::array::NdArrayMeta::from_node(node, "") {
                let shape = meta
                    .fixed_shape()
                    .map(|s| format!("{s:?}"))
                    .unwrap_or_else(|| "streamed".into());
                let dtype = meta.dtype.map_or_else(|| "float64".into(), |d| d.name());
                line.push_str(&format!(": shape={shape}, dtype={dtype}"));
            }
        } else {
            match node.value() {
                Value::Seq(_) | Value::Map(_) => {}
                v => {
                    let mut text = scalar_text(v);
                    if let Value::Timestamp(t) = v {
                        text = t.text.clone();
                    }
                    if text.chars().count() > 80 {
                        text = text.chars().take(77).collect::<String>() + "...";
                    }
                    line.push_str(": ");
                    line.push_str(&text);
                }
            }
        }
        if self.lines.len() >= self.max_rows {
            self.hidden += 1;
        } else {
            self.lines.push(line);
        }
        if is_array(node) {
            return;
        }
        let child_prefix = if root {
            String::new()
        } else {
            format!("{prefix}{}", if last { "  " } else { "│ " })
        };
        match node.value() {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let last = i + 1 == items.len();
                    self.node(&format!("[{i}]"), item, &child_prefix, last, false);
                }
            }
            Value::Map(entries) => {
                for (i, (k, v)) in entries.iter().enumerate() {
                    let last = i + 1 == entries.len();
                    let name = match k.value() {
                        Value::Str(s) => s.clone(),
                        other => scalar_text(other),
                    };
                    self.node(&name, v, &child_prefix, last, false);
                }
            }
            _ => {}
        }
    }
}

/// Whether a node becomes an `NDArray`: an ndarray or an asdf-zarr array.
fn is_array(node: &Node) -> bool {
    node.is_ndarray() || asdf_core::file::is_zarr(node)
}

/// The python type a node becomes in `AsdfFile.tree`.
fn python_type(node: &Node) -> String {
    if is_array(node) {
        return "NDArray".into();
    }
    if let Some(tag) = node.tag() {
        let short = tag.strip_prefix("tag:stsci.edu:asdf/").unwrap_or(tag);
        let plain = [
            "core/asdf-",
            "core/software-",
            "core/history_entry-",
            "core/extension_metadata-",
            "core/subclass_metadata-",
        ];
        if !plain.iter().any(|p| short.starts_with(p)) && !short.starts_with("core/complex-") {
            return format!("Tagged {short}");
        }
    }
    match node.value() {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) if node.tag().is_some() => "complex",
        Value::Str(_) => "str",
        Value::Timestamp(t) if t.time.is_none() => "date",
        Value::Timestamp(_) => "datetime",
        Value::Binary(_) => "bytes",
        Value::Seq(_) => "list",
        Value::Map(_) => "dict",
        Value::Recursive(_) => "alias",
    }
    .into()
}
