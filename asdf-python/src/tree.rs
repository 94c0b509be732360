//! The tree of an opened file as python objects: mappings as `dict`, sequences as `list`,
//! scalars as `str`/`int`/`float`/`bool`/`None`, timestamps as `datetime`, `!!binary` as
//! `bytes`, `core/complex` as `complex`, `core/integer` as `int`, ndarrays as lazy
//! [`NDArray`] objects, and every other tagged node as [`Tagged`].

use std::collections::HashMap;
use std::sync::Arc;

use asdf_core::{AsdfFile, Node, Value};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::array::NDArray;

/// A tagged node that has no python type of its own: its tag (the full URI) and its value
/// (a `dict`, `list` or scalar). Written back with the same tag.
#[pyclass(frozen, module = "asdf_rs")]
pub struct Tagged {
    /// The tag, a full URI such as `tag:stsci.edu:asdf/core/constant-1.0.0`.
    #[pyo3(get)]
    pub tag: String,
    /// The value under the tag.
    #[pyo3(get)]
    pub value: Py<PyAny>,
}

#[pymethods]
impl Tagged {
    #[new]
    fn new(tag: String, value: Py<PyAny>) -> Self {
        Tagged { tag, value }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Tagged({:?}, {})",
            self.tag,
            self.value.bind(py).repr()?.to_str()?
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<Tagged>() {
            Ok(o) => {
                let o = o.get();
                Ok(o.tag == self.tag && self.value.bind(py).eq(o.value.bind(py))?)
            }
            Err(_) => Ok(false),
        }
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.value.bind(py).get_item(key)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.value.bind(py).len()
    }
}

use crate::scalar::{self, ASDF_CORE};

/// Core tags whose python asdf objects are `dict` subclasses: read as plain dicts.
const DICT_TAGS: [&str; 5] = [
    "asdf-",
    "software-",
    "history_entry-",
    "extension_metadata-",
    "subclass_metadata-",
];

/// One segment of the path from the root to the node being converted.
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
    /// A key that is not a string: no JSON pointer reaches below it.
    Opaque,
}

/// The python classes a tree for python asdf's converters is built with (`asdf_rs.converters`):
/// every tagged node except arrays keeps its tag, as python asdf's `TaggedDict`, `TaggedList`
/// or `TaggedString` (a tagged scalar of another type stays a [`Tagged`]), and each array is
/// handed to `array` (its wrapper).
pub(crate) struct TagClasses<'py> {
    pub(crate) dict: Bound<'py, PyAny>,
    pub(crate) list: Bound<'py, PyAny>,
    pub(crate) string: Bound<'py, PyAny>,
    pub(crate) array: Bound<'py, PyAny>,
}

/// Converts a file's tree (or part of it) to python objects.
pub(crate) struct ToPy<'py, 'a> {
    py: Python<'py>,
    file: Arc<AsdfFile>,
    mapped: bool,
    /// Anchored collections by node identity: an alias gives the same python object.
    shared: HashMap<usize, Bound<'py, PyAny>>,
    /// Anchored collections by anchor name, for recursive aliases.
    by_anchor: HashMap<String, Bound<'py, PyAny>>,
    path: Vec<Seg<'a>>,
    /// Where the file was opened from, given to its arrays.
    origin: Option<Arc<crate::array::Origin>>,
    /// Set: tags kept for python asdf's converters (see [`TagClasses`]).
    tagged: Option<TagClasses<'py>>,
}

impl<'py, 'a> ToPy<'py, 'a> {
    pub(crate) fn new(py: Python<'py>, file: Arc<AsdfFile>, mapped: bool) -> Self {
        ToPy {
            py,
            file,
            mapped,
            shared: HashMap::new(),
            by_anchor: HashMap::new(),
            path: Vec::new(),
            origin: None,
            tagged: None,
        }
    }

    /// Tags are kept, as python asdf's tagged classes, for its converters.
    pub(crate) fn with_tag_classes(mut self, classes: TagClasses<'py>) -> Self {
        self.tagged = Some(classes);
        self
    }

    /// Arrays made will know where their file was opened from.
    pub(crate) fn with_origin(mut self, origin: Option<Arc<crate::array::Origin>>) -> Self {
        self.origin = origin;
        self
    }

    /// Starts the path below the root (for a node found by `search`).
    pub(crate) fn with_pointer(mut self, pointer: &'a str) -> Self {
        for seg in pointer.split('/').skip(1) {
            self.path.push(Seg::Key(seg));
        }
        self
    }

    /// The JSON pointer of the node being converted, when one reaches it.
    fn pointer(&self) -> Option<String> {
        let mut out = String::new();
        for seg in &self.path {
            out.push('/');
            match seg {
                Seg::Key(k) => out.push_str(k),
                Seg::Index(i) => out.push_str(&i.to_string()),
                Seg::Opaque => return None,
            }
        }
        Some(out)
    }

    pub(crate) fn convert(&mut self, node: &'a Node) -> PyResult<Bound<'py, PyAny>> {
        let anchored = node.anchor().is_some();
        if anchored {
            if let Some(obj) = self.shared.get(&node.id()) {
                return Ok(obj.clone());
            }
        }
        let obj = match node.tag() {
            None => self.untagged(node)?,
            Some(tag) => self.tagged(node, tag)?,
        };
        if anchored {
            self.shared.insert(node.id(), obj.clone());
        }
        Ok(obj)
    }

    fn tagged(&mut self, node: &'a Node, tag: &str) -> PyResult<Bound<'py, PyAny>> {
        if asdf_core::file::is_zarr(node) {
            // an asdf-zarr array reads as an ndarray does
            return self.ndarray(node);
        }
        if self.tagged.is_some() {
            return self.kept_tag(node, tag);
        }
        if let Some(name) = tag.strip_prefix(ASDF_CORE) {
            if name.starts_with("ndarray-") {
                return self.ndarray(node);
            }
            if DICT_TAGS.iter().any(|p| name.starts_with(p)) {
                return self.untagged(node);
            }
            if let Some(v) =
                scalar::core_scalar(self.py, &self.file, node, name, || self.pointer())?
            {
                return Ok(v);
            }
        }
        let value = self.untagged(node)?;
        Ok(Bound::new(
            self.py,
            Tagged {
                tag: tag.to_string(),
                value: value.unbind(),
            },
        )?
        .into_any())
    }

    /// A tagged node as python asdf's loader gives it to its converters (arrays wrapped).
    fn kept_tag(&mut self, node: &'a Node, tag: &str) -> PyResult<Bound<'py, PyAny>> {
        if tag
            .strip_prefix(ASDF_CORE)
            .is_some_and(|n| n.starts_with("ndarray-"))
        {
            return self.ndarray(node);
        }
        let value = self.untagged(node)?;
        if let Some(classes) = &self.tagged {
            if value.is_instance_of::<PyDict>() {
                return classes.dict.call1((value, tag));
            }
            if value.is_instance_of::<PyList>() {
                return classes.list.call1((value, tag));
            }
            if value.is_instance_of::<PyString>() {
                let s = classes.string.call1((value,))?;
                s.setattr("_tag", tag)?;
                return Ok(s);
            }
        }
        Ok(Bound::new(
            self.py,
            Tagged {
                tag: tag.to_string(),
                value: value.unbind(),
            },
        )?
        .into_any())
    }

    fn ndarray(&mut self, node: &'a Node) -> PyResult<Bound<'py, PyAny>> {
        let pointer = self.pointer();
        let array = NDArray::new(self.file.clone(), self.mapped, node.clone(), pointer)
            .with_origin(self.origin.clone());
        let array = Bound::new(self.py, array)?.into_any();
        match &self.tagged {
            Some(classes) => classes.array.call1((array,)),
            None => Ok(array),
        }
    }

    fn untagged(&mut self, node: &'a Node) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match node.value() {
            Value::Seq(items) => {
                let list = PyList::empty(py);
                if let Some(a) = node.anchor() {
                    self.by_anchor
                        .insert(a.to_string(), list.clone().into_any());
                    self.shared.insert(node.id(), list.clone().into_any());
                }
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    let v = self.convert(item);
                    self.path.pop();
                    list.append(v?)?;
                }
                list.into_any()
            }
            Value::Map(entries) => {
                let dict = PyDict::new(py);
                if let Some(a) = node.anchor() {
                    self.by_anchor
                        .insert(a.to_string(), dict.clone().into_any());
                    self.shared.insert(node.id(), dict.clone().into_any());
                }
                for (k, v) in entries {
                    let key = self.key(k)?;
                    self.path.push(match k.value() {
                        Value::Str(s) if !s.contains(['/', '~']) => Seg::Key(s),
                        _ => Seg::Opaque,
                    });
                    let v = self.convert(v);
                    self.path.pop();
                    dict.set_item(key, v?)?;
                }
                dict.into_any()
            }
            Value::Recursive(name) => match self.by_anchor.get(name) {
                Some(obj) => obj.clone(),
                None => {
                    return Err(crate::errors::AsdfError::new_err(format!(
                        "alias *{name} names no anchor being built"
                    )))
                }
            },
            value => scalar::plain(py, value)?,
        })
    }

    fn key(&mut self, k: &'a Node) -> PyResult<Bound<'py, PyAny>> {
        let key = match (k.tag(), k.value()) {
            (None, Value::Str(s)) => return Ok(PyString::new(self.py, s).into_any()),
            _ => self.convert(k)?,
        };
        // lists and dicts as keys: python's YAML loader refuses them too
        if key.hash().is_err() {
            return Err(PyTypeError::new_err(format!(
                "mapping key {} is not hashable",
                key.repr()?
            )));
        }
        Ok(key)
    }
}
