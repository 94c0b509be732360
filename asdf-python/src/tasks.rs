//! What the tasks of `asdf_rs.dask` (and `asdf_rs.virtualizarr`) call in the process that
//! runs them, a dask worker maybe: the files are opened there, once per process, and
//! regions read with the GIL released.
//!
//! A task carries only a small description (the file's path or URL, the array's tree path,
//! the region as slices, the store options); [`read_region`] opens the file on first use
//! and keeps it in a per-process cache keyed by that description (a local file also by its
//! identity: device, inode, size and modification time, so a file replaced under the same
//! name is opened again), so the tasks of one array share one opened file, its block
//! headers, piece indexes and (for URLs) its page cache.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use asdf_core::AsdfFile;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::array::NDArray;
use crate::errors::{io_error, to_py};

/// Files kept open by one process; the oldest is closed beyond this.
const CACHED_FILES: usize = 64;

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    source: String,
    options: Vec<(String, String)>,
    /// Device, inode, size, modification time (ns) of a local file.
    identity: Option<(u64, u64, u64, i128)>,
}

struct Cache {
    files: HashMap<Key, (Arc<AsdfFile>, bool, u64)>,
    tick: u64,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(Cache {
            files: HashMap::new(),
            tick: 0,
        })
    })
}

fn identity(path: &std::path::Path) -> std::io::Result<(u64, u64, u64, i128)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)?;
    Ok((
        m.dev(),
        m.ino(),
        m.size(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

/// The opened file for `source` (a path or URL) and store `options`, from this process's
/// cache or opened now (without the GIL); whether it is memory-mapped.
fn opened(
    py: Python<'_>,
    source: &str,
    options: Option<HashMap<String, String>>,
) -> PyResult<(Arc<AsdfFile>, bool)> {
    let url = asdf_store::is_url(source);
    let mut options: Vec<(String, String)> = options.unwrap_or_default().into_iter().collect();
    options.sort();
    if !url && !options.is_empty() {
        return Err(PyValueError::new_err(
            "storage_options apply to URLs, not to local paths",
        ));
    }
    let identity = if url {
        None
    } else {
        let path = PathBuf::from(source);
        Some(identity(&path).map_err(|e| io_error(e.kind(), format!("{}: {e}", path.display())))?)
    };
    let key = Key {
        source: source.to_string(),
        options,
        identity,
    };
    {
        let mut c = cache().lock().map_err(|_| poisoned())?;
        c.tick += 1;
        let tick = c.tick;
        if let Some((file, mapped, used)) = c.files.get_mut(&key) {
            *used = tick;
            return Ok((file.clone(), *mapped));
        }
    }
    let opts = AsdfFile::options();
    let (file, mapped) = if url {
        let mut store = asdf_store::StoreOptions::default();
        for (k, v) in &key.options {
            store = store.option(k.clone(), v.clone());
        }
        let url = key.source.clone();
        let file = py
            .detach(move || asdf_store::open_url_with(&url, &store, &opts))
            .map_err(|e| match e {
                asdf_store::StoreError::Asdf(inner) => to_py(inner),
                other => io_error(std::io::ErrorKind::Other, asdf_core::display_chain(&other)),
            })?;
        (file, false)
    } else {
        let path = PathBuf::from(&key.source);
        let file = py
            .detach(move || opts.mmap(true).open(&path))
            .map_err(to_py)?;
        (file, true)
    };
    let file = Arc::new(file);
    let mut c = cache().lock().map_err(|_| poisoned())?;
    c.tick += 1;
    let tick = c.tick;
    if c.files.len() >= CACHED_FILES {
        if let Some(oldest) = c
            .files
            .iter()
            .min_by_key(|(_, (_, _, used))| *used)
            .map(|(k, _)| k.clone())
        {
            c.files.remove(&oldest);
        }
    }
    // another thread may have opened it meanwhile: keep the first
    let entry = c.files.entry(key).or_insert((file, mapped, tick));
    Ok((entry.0.clone(), entry.1))
}

fn poisoned() -> PyErr {
    crate::errors::AsdfError::new_err("the cache of opened files is poisoned")
}

/// The array at `array_path` (a JSON pointer, `/sci`) of the file at `source`, opened
/// through this process's cache.
fn array_of<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    options: Option<HashMap<String, String>>,
) -> PyResult<Bound<'py, NDArray>> {
    let (file, mapped) = opened(py, source, options)?;
    let node = file
        .get(array_path)
        .cloned()
        .ok_or_else(|| PyKeyError::new_err(format!("{source}: no node at {array_path}")))?;
    if !node.is_ndarray() && !asdf_core::file::is_zarr(&node) {
        return Err(PyValueError::new_err(format!(
            "{source}: {array_path} is not an ndarray"
        )));
    }
    Bound::new(
        py,
        NDArray::new(file, mapped, node, Some(array_path.to_string())),
    )
}

/// `asdf_rs._array(source, array_path, storage_options=None)`: the `NDArray` at
/// `array_path` of the file at `source` (a path or URL), the file opened once per process
/// and kept.
#[pyfunction]
#[pyo3(name = "_array", signature = (source, array_path, storage_options = None))]
pub fn array<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<Bound<'py, NDArray>> {
    array_of(py, source, array_path, storage_options)
}

/// `asdf_rs._read_region(source, array_path, key, storage_options=None)`: the part `key`
/// (a tuple of slices and integers, numpy's meaning) selects of the array, read only where
/// selected with the GIL released, in the file's datatype and byte order; a
/// `numpy.ma.MaskedArray` for a masked array.
#[pyfunction]
#[pyo3(name = "_read_region", signature = (source, array_path, key, storage_options = None))]
pub fn read_region<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    key: &Bound<'py, PyTuple>,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<Bound<'py, PyAny>> {
    array_of(py, source, array_path, storage_options)?.call_method1("region", (key,))
}

/// `asdf_rs._manifest(source, array_path, storage_options=None, slab_bytes=8 MiB,
/// equal_slabs=False)`: the array's chunk manifest (`AsdfFile::manifest`) as a dict:
/// `shape`, `dtype` (numpy's string), `whole_block` (the array's C-order bytes are its
/// block's decoded bytes), `zarr_chunks` (the chunk shape when the pieces are a regular
/// grid, else `None`), `zarr` (for an asdf-zarr array: `chunks`, `order` (`C` or `F`),
/// `compressor` (a numcodecs id or `None`) and `fill` (one element's bytes); else `None`), `block` (`None` for inline data, else `file` (`None`: this file; an
/// external block file's URI), `offset`, `length`, `codec` (`None`: uncompressed) and
/// `data_size`) and `pieces`, each with `file` (`None`: this file; an URI: an external block
/// file; `"inline"`, `"repeat"`: no bytes to read), `offset`, `length`, `codec` (a
/// `PieceCodec` name: `none`, `zlib`, `lz4-block`, `blosc2-chunk`, ...), `decoded` (a
/// `(start, stop)` of the decoded block's bytes) and `region` (a list of `(start, stop)` per
/// axis, or `None`); `offset` and `strides` (`None`: C order) of the array in its block's
/// decoded bytes, `tree` (the byte range of the file's YAML tree from `asdf_offset`, where
/// the ASDF bytes begin: 0, or in an ASDF-in-FITS file its `ASDF` extension's data) and
/// `inline_nulls` (inline data holding `null`s, which python asdf masks) and `mask_value`
/// (a scalar `mask`, else `None`). The file opened through this process's cache.
#[pyfunction]
#[pyo3(name = "_manifest", signature = (source, array_path, storage_options = None, slab_bytes = 8 << 20, equal_slabs = false))]
pub fn manifest<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    storage_options: Option<HashMap<String, String>>,
    slab_bytes: u64,
    equal_slabs: bool,
) -> PyResult<Bound<'py, PyDict>> {
    use asdf_core::{ManifestOptions, PieceSource};
    let (file, mapped) = opened(py, source, storage_options)?;
    let path = array_path.to_string();
    let opts = ManifestOptions::default()
        .slab_bytes(slab_bytes.max(1))
        .equal_slabs(equal_slabs);
    let reader = file.clone();
    let m = py
        .detach(move || reader.manifest(&path, &opts))
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("shape", PyTuple::new(py, &m.shape)?)?;
    d.set_item("dtype", m.dtype.to_numpy_str())?;
    d.set_item("whole_block", m.is_whole_block())?;
    d.set_item("zarr_chunks", m.zarr_chunks())?;
    d.set_item("tree", file.layout().tree)?;
    d.set_item("asdf_offset", file.asdf_offset())?;
    match m.zarr() {
        // an asdf-zarr array: its chunks are the pieces, no view, no mask
        Some(z) => {
            let zd = PyDict::new(py);
            zd.set_item("chunks", PyTuple::new(py, &z.chunks)?)?;
            zd.set_item("order", if z.fortran { "F" } else { "C" })?;
            zd.set_item("compressor", z.compressor)?;
            zd.set_item("fill", PyBytes::new(py, &z.fill))?;
            d.set_item("zarr", zd)?;
            d.set_item("offset", 0)?;
            d.set_item("strides", py.None())?;
            d.set_item("inline_nulls", false)?;
            d.set_item("mask_value", py.None())?;
        }
        None => {
            d.set_item("zarr", py.None())?;
            // where the array lies in its block's decoded bytes: for views (offset, strides)
            let node = file
                .get(array_path)
                .ok_or_else(|| PyKeyError::new_err(format!("{source}: no node at {array_path}")))?;
            let meta = asdf_core::array::NdArrayMeta::from_node(node, array_path)
                .map_err(|e| crate::errors::AsdfError::new_err(format!("{source}: {e}")))?;
            d.set_item("offset", meta.offset)?;
            d.set_item("strides", meta.strides.clone())?;
            let nulls = matches!(meta.source, asdf_core::array::ArraySource::Inline(_))
                && asdf_core::unstable::inline_null_mask(&meta, array_path)
                    .map_err(|e| crate::errors::AsdfError::new_err(format!("{source}: {e}")))?
                    .is_some_and(|m| m.iter().any(|&b| b));
            d.set_item("inline_nulls", nulls)?;
            // a scalar mask (python asdf masks the elements equal to it, or the NaNs)
            match &meta.mask {
                Some(mask) if !mask.is_ndarray() => d.set_item(
                    "mask_value",
                    crate::tree::ToPy::new(py, file.clone(), mapped).convert(mask)?,
                )?,
                _ => d.set_item("mask_value", py.None())?,
            }
        }
    }
    let file_of = |s: &PieceSource| -> Option<String> {
        match s {
            PieceSource::File => None,
            PieceSource::External(uri) => Some(uri.clone()),
            PieceSource::Inline => Some("inline".into()),
            PieceSource::Repeat(_) => Some("repeat".into()),
            _ => Some("unknown".into()),
        }
    };
    match &m.block {
        None => d.set_item("block", py.None())?,
        Some(b) => {
            let bd = PyDict::new(py);
            bd.set_item("file", file_of(&b.source))?;
            bd.set_item("offset", b.offset)?;
            bd.set_item("length", b.length)?;
            bd.set_item("codec", b.compression.map(|c| c.name()))?;
            bd.set_item("data_size", b.data_size)?;
            d.set_item("block", bd)?;
        }
    }
    let pieces = PyList::empty(py);
    for p in &m.pieces {
        let pd = PyDict::new(py);
        pd.set_item("file", file_of(&p.source))?;
        pd.set_item("offset", p.offset)?;
        pd.set_item("length", p.length)?;
        pd.set_item("codec", p.codec.name())?;
        pd.set_item("decoded", (p.decoded.start, p.decoded.end))?;
        match &p.region {
            None => pd.set_item("region", py.None())?,
            Some(r) => pd.set_item(
                "region",
                r.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>(),
            )?,
        }
        if let PieceSource::Repeat(pattern) = &p.source {
            pd.set_item("pattern", PyBytes::new(py, pattern))?;
        }
        pieces.append(pd)?;
    }
    d.set_item("pieces", pieces)?;
    Ok(d)
}

/// `asdf_rs._clear_cache()`: closes the files this process keeps open (the next task opens
/// them again); the number closed.
#[pyfunction]
#[pyo3(name = "_clear_cache")]
pub fn clear_cache() -> PyResult<usize> {
    let mut c = cache().lock().map_err(|_| poisoned())?;
    let n = c.files.len();
    c.files.clear();
    Ok(n)
}

/// Registers the functions of this module in the native module.
/// `asdf_rs._fits_scaled(source, array_path, storage_options=None)`: for an array of an
/// ASDF-in-FITS file that is a scaled `fits:` image (`BSCALE`, `BZERO`, `BLANK`), which
/// `_manifest` refuses, a dict of where its stored bytes lie (`offset`, `length` in the
/// FITS file), the values' `dtype` (numpy's string, big-endian) and `shape`, and its
/// scaling (`bitpix`, `bscale`, `bzero`, `bzero_int`, `blank`: the configuration of the
/// `asdf_fits_scale` codec); `None` for any other array.
#[pyfunction]
#[pyo3(name = "_fits_scaled", signature = (source, array_path, storage_options = None))]
pub fn fits_scaled<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let (file, _) = opened(py, source, storage_options)?;
    let path = array_path.to_string();
    let Some(img) = py
        .detach(move || file.fits_scaled_image(&path))
        .map_err(to_py)?
    else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("offset", img.offset)?;
    d.set_item("length", img.length)?;
    d.set_item("dtype", img.dtype.to_numpy_str())?;
    d.set_item("shape", PyTuple::new(py, &img.shape)?)?;
    d.set_item("bitpix", img.scaling.bitpix)?;
    d.set_item("bscale", img.scaling.bscale)?;
    d.set_item("bzero", img.scaling.bzero)?;
    d.set_item("bzero_int", img.scaling.bzero_int)?;
    d.set_item("blank", img.scaling.blank)?;
    Ok(Some(d))
}

/// `asdf_rs._fits_table(source, array_path, storage_options=None)`: for an array of an
/// ASDF-in-FITS file that is a `fits:` binary table, which `_manifest` refuses, a dict of
/// where its rows lie (`offset`, `length` in the FITS file), the records' `dtype` (numpy's
/// `descr` text, big-endian fields), `shape` (its rows) and `cards` (`[keyword, value]` of
/// `NAXIS1`, `TFIELDS`, `TFORMn`, `TTYPEn`, `TDIMn`, `TSCALn`, `TZEROn`: the configuration
/// of the `asdf_fits_table` codec); `None` for an array whose source is no `fits:` HDU.
/// `AsdfError` for a `fits:` HDU that is no table astropy reads as records.
#[pyfunction]
#[pyo3(name = "_fits_table", signature = (source, array_path, storage_options = None))]
pub fn fits_table<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    use asdf_core::unstable::FitsCardValue as V;
    let (file, _) = opened(py, source, storage_options)?;
    let path = array_path.to_string();
    let Some(t) = py.detach(move || file.fits_table(&path)).map_err(to_py)? else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("offset", t.offset)?;
    d.set_item("length", t.length)?;
    d.set_item("dtype", t.dtype.to_numpy_str())?;
    d.set_item("shape", PyTuple::new(py, [t.rows])?)?;
    let cards = PyList::empty(py);
    for (k, v) in &t.cards {
        let v = match v {
            V::Str(s) | V::Other(s) => s.clone().into_pyobject(py)?.into_any(),
            V::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            V::Int(i) => i.into_pyobject(py)?.into_any(),
            V::Float(f) => f.into_pyobject(py)?.into_any(),
            _ => py.None().into_bound(py),
        };
        cards.append((k, v))?;
    }
    d.set_item("cards", cards)?;
    Ok(Some(d))
}

/// `asdf_rs._legacy_chain(source, array_path, storage_options=None)`: for an array of a
/// block of an ASDF 0.1.0 encoding chain, which `_manifest` refuses, a dict of where the
/// block's stored bytes lie (`offset`, `length`), its decoded size `data_size`,
/// `byteorder` (`"<"`, `">"`: the floats of a `quantize` step), and the array's `dtype`,
/// `shape`, `start` (its first byte in the decoded block), `strides` and `contiguous`;
/// `None` for any other array.
#[pyfunction]
#[pyo3(name = "_legacy_chain", signature = (source, array_path, storage_options = None))]
pub fn legacy_chain<'py>(
    py: Python<'py>,
    source: &str,
    array_path: &str,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let (file, _) = opened(py, source, storage_options)?;
    let path = array_path.to_string();
    let Some(c) = py.detach(move || file.legacy_chain(&path)).map_err(to_py)? else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("offset", c.offset)?;
    d.set_item("length", c.length)?;
    d.set_item("data_size", c.data_size)?;
    let big = matches!(c.byte_order, asdf_core::array::ByteOrder::Big);
    d.set_item("byteorder", if big { ">" } else { "<" })?;
    d.set_item("dtype", c.dtype.to_numpy_str())?;
    d.set_item("shape", PyTuple::new(py, &c.shape)?)?;
    d.set_item("start", c.start)?;
    d.set_item("strides", c.strides.clone())?;
    d.set_item("contiguous", c.contiguous)?;
    Ok(Some(d))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(legacy_chain, m)?)?;
    m.add_function(wrap_pyfunction!(fits_table, m)?)?;
    m.add_function(wrap_pyfunction!(fits_scaled, m)?)?;
    m.add_function(wrap_pyfunction!(array, m)?)?;
    m.add_function(wrap_pyfunction!(read_region, m)?)?;
    m.add_function(wrap_pyfunction!(manifest, m)?)?;
    m.add_function(wrap_pyfunction!(clear_cache, m)?)?;
    Ok(())
}
