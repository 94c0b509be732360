//! Arrays of an opened file as lazy objects that become numpy arrays on access.
//!
//! An uncompressed, aligned, native-endian block of a memory-mapped file becomes a read-only
//! numpy array viewing the map (no copy); its `base` is a [`MappedData`] that holds the file,
//! so the map lives while any view of it does. Otherwise the array is read (and decoded)
//! once into memory that numpy owns: numeric native-endian arrays straight into the array's
//! allocation, any other datatype (big-endian, strings, records) in the file's byte order,
//! as python asdf gives them.

use std::sync::{Arc, OnceLock};

use asdf_core::array::{ArraySource, ByteOrder, DType, Element, NdArrayMeta, ScalarType};
use asdf_core::{AsdfFile, Node, SelItem, Selection};
use numpy::{PyArray1, ToPyArray};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PySlice, PyString, PyTuple};

use crate::errors::{to_py, AsdfError};

/// An ndarray of a file, read on first access: `numpy.asarray(a)` (or `a.read()`,
/// `a[...]`) gives the numpy array (a `numpy.ma.MaskedArray` when the ndarray has a mask).
/// `shape`, `dtype` and `ndim` come from the tree without reading the data.
#[pyclass(frozen, module = "asdf_rs")]
pub struct NDArray {
    file: Arc<AsdfFile>,
    /// Whether the file is memory-mapped.
    mapped: bool,
    node: Node,
    /// The JSON pointer of the node in the file's tree, when one reaches it.
    pointer: Option<String>,
    /// Where the file was opened from (for `to_dask`, whose workers open it again).
    origin: Option<Arc<Origin>>,
    data: OnceLock<Py<PyAny>>,
}

/// What `asdf_rs.open` was given: a URL, or a local path made absolute, and the storage
/// options of a URL.
#[derive(Debug)]
pub(crate) struct Origin {
    pub(crate) source: String,
    pub(crate) storage_options: Option<std::collections::HashMap<String, String>>,
}

impl NDArray {
    pub(crate) fn new(
        file: Arc<AsdfFile>,
        mapped: bool,
        node: Node,
        pointer: Option<String>,
    ) -> Self {
        NDArray {
            file,
            mapped,
            node,
            pointer,
            origin: None,
            data: OnceLock::new(),
        }
    }

    /// The array of a file opened from `origin`.
    pub(crate) fn with_origin(mut self, origin: Option<Arc<Origin>>) -> Self {
        self.origin = origin;
        self
    }

    fn where_(&self) -> &str {
        self.pointer.as_deref().unwrap_or("")
    }

    fn meta(&self) -> PyResult<NdArrayMeta> {
        NdArrayMeta::from_node(&self.node, self.where_()).map_err(|e| to_py(e.into()))
    }

    /// The datatype and shape of an asdf-zarr array (`asdf://asdf-format.org/zarr/tags/
    /// zarr-1.0.0`, read through the same calls as ndarrays; no mask), from its metadata;
    /// `None` for an ndarray.
    fn zarr(&self) -> PyResult<Option<(DType, Vec<usize>)>> {
        if !asdf_core::file::is_zarr(&self.node) {
            return Ok(None);
        }
        self.file
            .zarr_info(&self.node, self.where_())
            .map(Some)
            .map_err(to_py)
    }

    /// The shape when the tree states it (not for a streamed array).
    fn fixed_shape(&self) -> PyResult<Option<Vec<u64>>> {
        match self.zarr()? {
            Some((_, shape)) => Ok(Some(shape.into_iter().map(|n| n as u64).collect())),
            None => Ok(self.meta()?.fixed_shape()),
        }
    }

    /// The array's datatype as the file states it (float64 when it states none).
    fn dtype_of(meta: &NdArrayMeta) -> DType {
        meta.dtype.clone().unwrap_or(DType::Scalar {
            ty: ScalarType::Float64,
            byteorder: meta.byteorder,
        })
    }

    /// The numpy array, read on first use and kept.
    pub(crate) fn load<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(a) = self.data.get() {
            return Ok(a.bind(py).clone());
        }
        let a = self.read_new(py)?;
        // another thread may have read it too: keep the first
        let kept = self.data.get_or_init(|| a.unbind());
        Ok(kept.bind(py).clone())
    }

    fn read_new<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.read_part(py, None)
    }

    /// The whole array (`sel` `None`), or the part `sel` selects, read only where selected
    /// (its mask too).
    fn read_part<'py>(
        &self,
        py: Python<'py>,
        sel: Option<&Selection>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if self.zarr()?.is_some() {
            return match sel {
                Some(sel) => self.region_array(py, sel),
                None => {
                    let (file, node) = (self.file.clone(), self.node.clone());
                    let path = self.where_().to_string();
                    let dynamic = py
                        .detach(move || file.dyn_array_of(&node, &path))
                        .map_err(to_py)?;
                    dyn_to_numpy(py, dynamic)
                }
            };
        }
        let meta = self.meta()?;
        let data = match sel {
            None => self.data_array(py, &meta)?,
            Some(sel) => self.region_array(py, sel)?,
        };
        let np = py.import("numpy")?;
        let ma = np.getattr("ma")?;
        match &meta.mask {
            Some(mask) if mask.is_ndarray() => {
                let pointer = self.pointer.as_ref().map(|p| format!("{p}/mask"));
                let m = NDArray::new(self.file.clone(), self.mapped, mask.clone(), pointer)
                    .with_origin(self.origin.clone());
                let m = match sel {
                    None => m.data_array(py, &m.meta()?)?,
                    Some(sel) => m.region_array(py, sel)?,
                };
                ma.getattr("array")?.call(
                    (data,),
                    Some(&[("mask", m.call_method0("view")?)].into_py_dict(py)?),
                )
            }
            Some(mask) => {
                // a scalar: python asdf masks the elements equal to it (NaN: the NaNs)
                let value = match mask
                    .tag()
                    .and_then(|t| t.strip_prefix(crate::scalar::ASDF_CORE))
                {
                    None if mask.tag().is_none() => crate::scalar::plain(py, mask.value()).ok(),
                    Some(name) => crate::scalar::core_scalar(py, &self.file, mask, name, || {
                        self.pointer.as_ref().map(|p| format!("{p}/mask"))
                    })?,
                    None => None,
                };
                let Some(value) = value else {
                    return Err(AsdfError::new_err(format!(
                        "{}: mask: not an ndarray nor a number",
                        self.where_()
                    )));
                };
                if !np.getattr("isscalar")?.call1((&value,))?.is_truthy()? {
                    return Err(AsdfError::new_err(format!(
                        "{}: mask: not an ndarray nor a number",
                        self.where_()
                    )));
                }
                if np.getattr("isnan")?.call1((&value,))?.is_truthy()? {
                    let isnan = np.getattr("isnan")?.call1((&data,))?;
                    ma.getattr("array")?
                        .call((data,), Some(&[("mask", isnan)].into_py_dict(py)?))
                } else {
                    ma.getattr("masked_values")?.call1((data, value))
                }
            }
            None => match &meta.source {
                ArraySource::Inline(_) => {
                    let path = self.where_().to_string();
                    let nulls = asdf_core::unstable::inline_null_mask(&meta, &path)
                        .map_err(|e| to_py(e.into()))?;
                    match (nulls, sel) {
                        (Some(mask), None) => ma.getattr("array")?.call(
                            (data,),
                            Some(&[("mask", mask.to_pyarray(py))].into_py_dict(py)?),
                        ),
                        (Some(mask), Some(_)) => {
                            // inline data is in memory: select the mask as numpy does
                            let key = selection_key(py, sel)?;
                            let mask = mask.to_pyarray(py).into_any().get_item(key)?;
                            ma.getattr("array")?
                                .call((data,), Some(&[("mask", mask)].into_py_dict(py)?))
                        }
                        (None, _) => Ok(data),
                    }
                }
                _ => Ok(data),
            },
        }
    }

    /// The data without its mask.
    fn data_array<'py>(&self, py: Python<'py>, meta: &NdArrayMeta) -> PyResult<Bound<'py, PyAny>> {
        let dtype = Self::dtype_of(meta);
        // the typed paths look the node up by its pointer: only when it leads to this node
        let by_path = matches!(meta.source, ArraySource::Block(_))
            && self
                .pointer
                .as_deref()
                .and_then(|p| self.file.get(p))
                .is_some_and(|n| n.ptr_eq(&self.node));
        if by_path {
            if let DType::Scalar { ty, byteorder } = &dtype {
                if let Some(a) = self.typed(py, meta, *ty, *byteorder)? {
                    return Ok(a);
                }
            }
        }
        let file = self.file.clone();
        let node = self.node.clone();
        let path = self.where_().to_string();
        let dynamic = py
            .detach(move || file.dyn_array_of(&node, &path))
            .map_err(to_py)?;
        dyn_to_numpy(py, dynamic)
    }

    /// The part `sel` selects of the data (without its mask), read only where selected,
    /// in the file's byte order (as a whole read gives it); the GIL released meanwhile.
    fn region_array<'py>(&self, py: Python<'py>, sel: &Selection) -> PyResult<Bound<'py, PyAny>> {
        let file = self.file.clone();
        let node = self.node.clone();
        let path = self.where_().to_string();
        let sel = sel.clone();
        let dynamic = py
            .detach(move || file.dyn_region_of(&node, &path, &sel))
            .map_err(to_py)?;
        dyn_to_numpy(py, dynamic)
    }

    /// Numeric scalar datatypes: a view of the map, or one read into numpy's memory.
    fn typed<'py>(
        &self,
        py: Python<'py>,
        meta: &NdArrayMeta,
        ty: ScalarType,
        order: ByteOrder,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if ty.has_byteorder() && !order.is_native() {
            return Ok(None); // kept in the file's byte order, as python asdf gives it
        }
        let mapped = self.is_mapped_raw(meta);
        macro_rules! go {
            ($t:ty) => {
                self.typed_as::<$t>(py, mapped)
            };
        }
        match ty {
            ScalarType::Int8 => go!(i8),
            ScalarType::Int16 => go!(i16),
            ScalarType::Int32 => go!(i32),
            ScalarType::Int64 => go!(i64),
            ScalarType::UInt8 => go!(u8),
            ScalarType::UInt16 => go!(u16),
            ScalarType::UInt32 => go!(u32),
            ScalarType::UInt64 => go!(u64),
            ScalarType::Float32 => go!(f32),
            ScalarType::Float64 => go!(f64),
            ScalarType::Complex64 => go!(num_complex::Complex<f32>),
            ScalarType::Complex128 => go!(num_complex::Complex<f64>),
            // bool: the stored bytes as they are (python asdf keeps bytes other than 0
            // and 1, numpy reads them as true), through the untyped path
            _ => Ok(None),
        }
    }

    /// Whether the array's block is viewed in place: the file is mapped and the block is
    /// stored uncompressed.
    fn is_mapped_raw(&self, meta: &NdArrayMeta) -> bool {
        if !self.mapped {
            return false;
        }
        let blocks = self.file.blocks();
        meta.block_index(blocks.len())
            .and_then(|i| blocks.get(i))
            .is_some_and(|h| h.compression == [0; 4])
            && !self.file.layout().is_legacy()
    }

    fn typed_as<'py, T>(&self, py: Python<'py>, mapped: bool) -> PyResult<Option<Bound<'py, PyAny>>>
    where
        T: Element + numpy::Element + Send,
    {
        let path = self.where_().to_string();
        let file = self.file.clone();
        if mapped {
            let view = py
                .detach(|| {
                    file.try_view::<T>(&path).map(|v| {
                        v.map(|v| {
                            let size = std::mem::size_of::<T>() as isize;
                            MappedData {
                                file: file.clone(),
                                address: v.as_ptr() as usize,
                                shape: v.shape().to_vec(),
                                strides: v.strides().iter().map(|s| s * size).collect(),
                                typestr: DType::scalar(T::SCALAR, ByteOrder::native())
                                    .to_numpy_str(),
                            }
                        })
                    })
                })
                .map_err(to_py)?;
            if let Some(view) = view {
                let base = Bound::new(py, view)?;
                let arr = py.import("numpy")?.getattr("asarray")?.call1((base,))?;
                return Ok(Some(arr));
            }
        }
        let owned = py.detach(|| file.array::<T>(&path)).map_err(to_py)?;
        Ok(Some(numpy::PyArray::from_owned_array(py, owned).into_any()))
    }
}

#[pymethods]
impl NDArray {
    /// The shape, from the tree (a streamed array's rows are counted from its block).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match self.fixed_shape()? {
            Some(s) => PyTuple::new(py, s),
            None => self
                .load(py)?
                .getattr("shape")?
                .cast_into::<PyTuple>()
                .map_err(Into::into),
        }
    }

    /// The numpy dtype, in the file's byte order.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let dtype = match self.zarr()? {
            Some((dtype, _)) => dtype,
            None => Self::dtype_of(&self.meta()?),
        };
        let d = descr(py, &dtype)?;
        py.import("numpy")?.getattr("dtype")?.call1((d,))
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self, py: Python<'_>) -> PyResult<usize> {
        self.shape(py).map(|s| s.len())
    }

    /// The tree path (JSON pointer) of the array, or `None` when no pointer reaches it.
    #[getter]
    fn path(&self) -> Option<String> {
        self.pointer.clone()
    }

    /// The numpy array (read on first call, then the same object).
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.load(py)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut a = self.load(py)?;
        if let Some(d) = dtype {
            a = a.call_method1("astype", (d,))?;
        } else if copy == Some(true) {
            a = a.call_method0("copy")?;
        }
        Ok(a)
    }

    /// `a[key]`: numpy's indexing. Before the array is read, a key of integers, slices and
    /// `...` reads only the part it selects (`a.region(key)`); once read, or for other keys
    /// (arrays, `None`, booleans), the whole array is read and indexed.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(a) = self.data.get() {
            return a.bind(py).get_item(key);
        }
        match selection_of(key)? {
            Some(sel) => {
                let part = self.read_part(py, Some(&sel))?;
                // numpy gives a scalar for a full index: so do we
                if part.getattr("ndim")?.extract::<usize>()? == 0
                    && self.fixed_shape()?.is_some_and(|s| !s.is_empty())
                {
                    return part.call_method1("__getitem__", (PyTuple::empty(py),));
                }
                Ok(part)
            }
            None => self.load(py)?.get_item(key),
        }
    }

    /// The part of the array that `key` (integers, slices, `...`, or a tuple of them, as
    /// numpy takes them; or a string in numpy's syntax, `"100:228, ::4"`) selects, read
    /// only where selected, always as a new array (never the cached whole).
    fn region<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let sel = if let Ok(text) = key.extract::<String>() {
            Selection::parse(&text).map_err(|e| {
                pyo3::exceptions::PyValueError::new_err(format!("{}: {e}", self.where_()))
            })?
        } else {
            selection_of(key)?.ok_or_else(|| {
                pyo3::exceptions::PyTypeError::new_err(
                    "a region is selected by integers, slices and '...' (or a string of them)",
                )
            })?
        };
        self.read_part(py, Some(&sel))
    }

    /// The array as a `dask.array.Array` whose tasks read their chunk's region through
    /// asdf-rs in whichever process runs them (each opens the file again by its path or
    /// URL): `asdf_rs.dask.to_dask(source, path, chunks, storage_options)` for this array.
    #[pyo3(signature = (chunks=None, name=None))]
    fn to_dask<'py>(
        &self,
        py: Python<'py>,
        chunks: Option<Bound<'py, PyAny>>,
        name: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let origin = self.origin.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(
                "this array's file was not opened by asdf_rs.open: use asdf_rs.to_dask(path_or_url, array_path)",
            )
        })?;
        let path = self.pointer.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(
                "no tree path reaches this array: use asdf_rs.to_dask(path_or_url, array_path)",
            )
        })?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("chunks", chunks)?;
        kwargs.set_item("storage_options", origin.storage_options.clone())?;
        kwargs.set_item("name", name)?;
        py.import("asdf_rs.dask")?
            .getattr("to_dask")?
            .call((origin.source.as_str(), path.as_str()), Some(&kwargs))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let s = self.shape(py)?;
        match s.len() {
            0 => Err(pyo3::exceptions::PyTypeError::new_err(
                "len() of unsized object",
            )),
            _ => s.get_item(0)?.extract(),
        }
    }

    /// A picture for Jupyter: an image of a 2-D array (the first plane of a larger one), a
    /// line plot of a 1-D one (asdf_rs.preview with its defaults, at most 512 pixels a side),
    /// or `None` when the array cannot be drawn or its plane holds more than 2**26 elements.
    fn _repr_png_<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, pyo3::types::PyBytes>>> {
        let (Some(path), Ok(Some(shape))) = (self.pointer.as_deref(), self.fixed_shape()) else {
            return Ok(None);
        };
        Ok(repr_png(py, &self.file, path, &shape).map(|png| pyo3::types::PyBytes::new(py, &png)))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let shape = self.shape(py)?.repr()?.to_string();
        let dtype = self.dtype(py)?.str()?.to_string();
        Ok(format!(
            "<asdf_rs.NDArray {} shape={shape} dtype={dtype}>",
            self.where_()
        ))
    }
}

/// The owner of a view of a memory-mapped block: numpy reads the view's address, shape,
/// strides and datatype from `__array_interface__` and keeps this object as the array's
/// `base`, and this object keeps the file (and so the map) alive.
#[pyclass(frozen, weakref, module = "asdf_rs")]
pub struct MappedData {
    file: Arc<AsdfFile>,
    /// Address of element `[0, …, 0]` in the map; asdf-core checked every addressed byte
    /// to lie in the block (`AsdfFile::try_view`), and the map lives as long as `file`.
    address: usize,
    shape: Vec<usize>,
    /// Byte strides.
    strides: Vec<isize>,
    typestr: String,
}

#[pymethods]
impl MappedData {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let _ = &self.file;
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("strides", PyTuple::new(py, &self.strides)?)?;
        d.set_item("typestr", &self.typestr)?;
        // read-only: the map is
        d.set_item("data", (self.address, true))?;
        Ok(d)
    }
}

/// numpy's datatype description of `dtype`: `'<f8'` for a scalar, `[(name, descr[, shape])]`
/// for a record.
pub(crate) fn descr<'py>(py: Python<'py>, dtype: &DType) -> PyResult<Bound<'py, PyAny>> {
    match dtype {
        DType::Record(fields) => {
            let list = PyList::empty(py);
            for f in fields {
                let name = PyString::new(py, &f.name).into_any();
                let inner = descr(py, &f.dtype)?;
                let item = if f.shape.is_empty() {
                    PyTuple::new(py, [name, inner])?
                } else {
                    let shape = PyTuple::new(py, &f.shape)?.into_any();
                    PyTuple::new(py, [name, inner, shape])?
                };
                list.append(item)?;
            }
            Ok(list.into_any())
        }
        // DType is non-exhaustive: a datatype added later, by its numpy string
        _ => Ok(PyString::new(py, &dtype.to_numpy_str()).into_any()),
    }
}

use pyo3::types::IntoPyDict;

/// A dynamic array as a numpy array of its datatype (in its byte order), without a copy of
/// its bytes.
fn dyn_to_numpy(py: Python<'_>, dynamic: asdf_core::array::DynArray) -> PyResult<Bound<'_, PyAny>> {
    let descr = descr(py, &dynamic.dtype)?;
    let np_dtype = py.import("numpy")?.getattr("dtype")?.call1((descr,))?;
    let shape = PyTuple::new(py, &dynamic.shape)?;
    let bytes = PyArray1::<u8>::from_vec(py, dynamic.data);
    bytes
        .call_method1("view", (np_dtype,))?
        .call_method1("reshape", (shape,))
}

/// numpy's basic index (an int, a slice, `...`, or a tuple of them) as a [`Selection`];
/// `None` for anything else (fancy or boolean indexing, `None`), which numpy handles.
pub(crate) fn selection_of(key: &Bound<'_, PyAny>) -> PyResult<Option<Selection>> {
    let py = key.py();
    let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        if it.is(py.Ellipsis()) {
            out.push(SelItem::Ellipsis);
        } else if let Ok(s) = it.cast::<PySlice>() {
            let part = |name: &str| -> PyResult<Option<Option<i64>>> {
                let v = s.getattr(name)?;
                if v.is_none() {
                    return Ok(Some(None));
                }
                if v.is_instance_of::<PyBool>() {
                    return Ok(None);
                }
                Ok(v.call_method0("__index__")
                    .and_then(|i| i.extract::<i64>())
                    .ok()
                    .map(Some))
            };
            let (Some(start), Some(stop), Some(step)) =
                (part("start")?, part("stop")?, part("step")?)
            else {
                return Ok(None);
            };
            if step == Some(0) {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "slice step cannot be zero",
                ));
            }
            out.push(SelItem::Slice { start, stop, step });
        } else if it.is_instance_of::<PyBool>() || it.is_none() {
            return Ok(None);
        } else if it.hasattr("__index__")?
            && it
                .getattr("shape")
                .map_or(true, |s| s.len().is_ok_and(|n| n == 0))
        {
            match it
                .call_method0("__index__")
                .and_then(|i| i.extract::<i64>())
            {
                Ok(i) => out.push(SelItem::Index(i)),
                Err(_) => return Ok(None),
            }
        } else {
            return Ok(None);
        }
    }
    Ok(Some(Selection::new(out)))
}

/// A [`Selection`] as the python key numpy takes (a tuple of ints, slices and `...`).
fn selection_key<'py>(py: Python<'py>, sel: Option<&Selection>) -> PyResult<Bound<'py, PyAny>> {
    let mut items: Vec<Bound<'py, PyAny>> = Vec::new();
    for item in sel.map(|s| s.items.as_slice()).unwrap_or_default() {
        items.push(match *item {
            SelItem::Index(i) => i.into_pyobject(py)?.into_any(),
            SelItem::Ellipsis => py.Ellipsis().into_bound(py),
            SelItem::Slice { start, stop, step } => {
                let builtins = py.import("builtins")?;
                builtins.getattr("slice")?.call1((start, stop, step))?
            }
        });
    }
    Ok(PyTuple::new(py, items)?.into_any())
}

/// Arrays whose plane (or 1-D length) holds more elements than this show no picture in
/// Jupyter (`_repr_png_` gives `None`): drawing them would read too much for a repr.
pub(crate) const REPR_MAX_ELEMENTS: u64 = 1 << 26;

/// The largest side of the image `_repr_png_` draws.
pub(crate) const REPR_MAX_SIZE: usize = 512;

/// The PNG of an array for Jupyter, or `None` (too large, nothing drawable, any error).
fn repr_png(py: Python<'_>, file: &Arc<AsdfFile>, path: &str, shape: &[u64]) -> Option<Vec<u8>> {
    let plane: u64 = match shape.len() {
        0 => return None,
        1 => shape[0],
        n => shape[n - 2].saturating_mul(shape[n - 1]),
    };
    if plane == 0 || plane > REPR_MAX_ELEMENTS {
        return None;
    }
    let mut opts = asdf_preview::PreviewOptions::default();
    opts.max_size = REPR_MAX_SIZE;
    py.detach(|| asdf_preview::render_array(file, path, &opts, asdf_preview::Format::Png))
        .ok()
}
