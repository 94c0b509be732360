//! Scalar nodes as python objects, for the tree (`tree.rs`) and for an array's scalar mask
//! (`array.rs`): `None`, `bool`, `int`, `float`, `str`, `datetime`/`date`, `bytes`, and the
//! core tags read as python numbers (`core/complex` as `complex`, `core/integer` as `int`).

use std::sync::Arc;

use asdf_core::yaml::{Integer, Timestamp};
use asdf_core::{AsdfFile, Node, Value};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyString, PyTuple};

/// The prefix of the ASDF Standard's core tags.
pub(crate) const ASDF_CORE: &str = "tag:stsci.edu:asdf/core/";

/// An untagged scalar as python's YAML loader gives it; a sequence, mapping or alias is a
/// `TypeError` (the tree converts those itself).
pub(crate) fn plain<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(Integer::Small(i)) => match i64::try_from(*i) {
            Ok(v) => v.into_pyobject(py)?.into_any(),
            Err(_) => i.into_pyobject(py)?.into_any(),
        },
        Value::Int(Integer::Big(s)) => py.import("builtins")?.getattr("int")?.call1((s,))?,
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Timestamp(t) => timestamp(py, t)?,
        Value::Binary(b) => PyBytes::new(py, b).into_any(),
        Value::Seq(_) | Value::Map(_) | Value::Recursive(_) => {
            return Err(PyTypeError::new_err(
                "a sequence or mapping is not a scalar",
            ))
        }
    })
}

/// A node under a core tag that python asdf reads as a number: `core/complex` (its text) and
/// `core/integer` (`words`, little-endian 32-bit words in an ndarray, and `sign`). `name` is
/// the tag after [`ASDF_CORE`]; `pointer` gives the node's path for a `words` read. `None` when
/// the node is neither, or not of that form (the tree keeps it as `Tagged`).
pub(crate) fn core_scalar<'py>(
    py: Python<'py>,
    file: &Arc<AsdfFile>,
    node: &Node,
    name: &str,
    pointer: impl FnOnce() -> Option<String>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if name.starts_with("complex-") {
        if let Value::Str(s) = node.value() {
            return complex(py, s).map(Some);
        }
    }
    if !name.starts_with("integer-") {
        return Ok(None);
    }
    let (Some(words), Some(sign)) = (node.get("words"), node.get("sign")) else {
        return Ok(None);
    };
    if !words.is_ndarray() {
        return Ok(None);
    }
    let file = file.clone();
    let words_node = words.clone();
    let pointer = pointer().unwrap_or_default() + "/words";
    let arr = py
        .detach(move || file.dyn_array_of(&words_node, &pointer))
        .map_err(crate::errors::to_py)?;
    let words = arr
        .to_array::<u32>()
        .map_err(|e| crate::errors::AsdfError::new_err(format!("core/integer words: {e}")))?;
    let mut hex = String::with_capacity(words.len() * 8);
    for w in words.iter().copied().collect::<Vec<u32>>().iter().rev() {
        hex.push_str(&format!("{w:08x}"));
    }
    if hex.is_empty() {
        hex.push('0');
    }
    if sign.as_str() == Some("-") {
        hex.insert(0, '-');
    }
    let int = py.import("builtins")?.getattr("int")?.call1((hex, 16))?;
    Ok(Some(int))
}

/// python's `complex()` of an ASDF complex scalar, after python asdf's `i` → `j`.
pub(crate) fn complex<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let mut s = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    for (i, ch) in text.char_indices() {
        if ch == 'i' && !bytes[i..].starts_with(b"inf") {
            s.push('j');
        } else {
            s.push(ch);
        }
    }
    py.import("builtins")?.getattr("complex")?.call1((s,))
}

/// PyYAML's timestamp: a `date` when there is no time, else a `datetime`, aware when the
/// text states an offset (microseconds, the fraction cut as PyYAML cuts it).
fn timestamp<'py>(py: Python<'py>, t: &Timestamp) -> PyResult<Bound<'py, PyAny>> {
    let dt = py.import("datetime")?;
    let Some(time) = &t.time else {
        return dt.getattr("date")?.call1((t.year, t.month, t.day));
    };
    let tz = match time.utc_offset_seconds {
        None => py.None().into_bound(py),
        Some(secs) => {
            let delta = dt
                .getattr("timedelta")?
                .call((), Some(&[("seconds", secs)].into_py_dict(py)?))?;
            dt.getattr("timezone")?.call1((delta,))?
        }
    };
    let args = PyTuple::new(
        py,
        [
            t.year.into_pyobject(py)?.into_any(),
            time_part(py, t.month)?,
            time_part(py, t.day)?,
            time_part(py, time.hour)?,
            time_part(py, time.minute)?,
            time_part(py, time.second)?,
            (time.nanosecond / 1000).into_pyobject(py)?.into_any(),
            tz,
        ],
    )?;
    dt.getattr("datetime")?.call1(args)
}

fn time_part(py: Python<'_>, v: u8) -> PyResult<Bound<'_, PyAny>> {
    Ok(v.into_pyobject(py)?.into_any())
}
