//! `asdf_rs.preview(...)`: images and plots from asdf-preview, the renderer of `asdftool
//! preview` (docs/preview.md); arrays' `_repr_png_` is in `array.rs`.

use std::sync::Arc;

use asdf_core::AsdfFile;
use asdf_preview::{Colormap, Format, Interval, PreviewOptions, Stretch};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::AsdfError;
use crate::file::PyAsdfFile;

/// The PNG (or SVG) bytes of the array at `path` of `source` (an open `AsdfFile`, or a path
/// or URL opened for this call): a 2-D array (or the plane `slice` of a larger one) as an
/// image with zscale limits (astropy's `ZScaleInterval`) by default, row 0 at the bottom,
/// NaN, infinite and masked pixels in the colour map's bad colour, at most `max_size` pixels
/// a side; a 1-D array as a line plot; a record array as a plot of column `y` against `x`.
/// `path` is a JSON pointer (`/sci`) or a key of the root (`sci`); by default the first array
/// of two or more dimensions, else the first array. Errors: `AsdfError` for what cannot be
/// drawn, `ValueError` for unknown options.
#[pyfunction]
#[pyo3(signature = (source, path = None, *, interval = "zscale", percent = None, stretch = "linear", cmap = "grey", slice = None, max_size = 1024, x = None, y = None, format = "png"))]
#[allow(clippy::too_many_arguments)]
pub fn preview<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    path: Option<String>,
    interval: &str,
    percent: Option<f64>,
    stretch: &str,
    cmap: &str,
    slice: Option<Vec<usize>>,
    max_size: usize,
    x: Option<String>,
    y: Option<String>,
    format: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut opts = PreviewOptions::default();
    opts.interval = match (percent, interval) {
        (Some(p), _) if p > 0.0 && p <= 100.0 => Interval::Percent(p),
        (Some(p), _) => {
            return Err(PyValueError::new_err(format!(
                "percent={p}: give a percentage above 0, at most 100"
            )))
        }
        (None, "zscale") => Interval::default(),
        (None, "minmax") => Interval::MinMax,
        (None, other) => {
            return Err(PyValueError::new_err(format!(
                "interval={other:?}: choose \"zscale\" or \"minmax\" (or give percent=)"
            )))
        }
    };
    opts.stretch = match stretch {
        "linear" => Stretch::Linear,
        "asinh" => Stretch::Asinh,
        "log" => Stretch::Log,
        "sqrt" => Stretch::Sqrt,
        other => {
            return Err(PyValueError::new_err(format!(
                "stretch={other:?}: choose linear, asinh, log or sqrt"
            )))
        }
    };
    opts.colormap = Colormap::from_name(cmap).ok_or_else(|| {
        PyValueError::new_err(format!(
            "cmap={cmap:?}: choose one of {}",
            Colormap::NAMES.join(", ")
        ))
    })?;
    if max_size == 0 {
        return Err(PyValueError::new_err("max_size=0: give at least 1 pixel"));
    }
    opts.max_size = max_size;
    opts.slice = slice.unwrap_or_default();
    opts.x = x;
    opts.y = y;
    let format = match format {
        "png" => Format::Png,
        "svg" => Format::Svg,
        other => {
            return Err(PyValueError::new_err(format!(
                "format={other:?}: choose \"png\" or \"svg\""
            )))
        }
    };
    let file: Arc<AsdfFile> = match source.cast::<PyAsdfFile>() {
        Ok(f) => f.get().file()?,
        Err(_) => crate::file::open(py, source, "r", false, false, true, None)?.file()?,
    };
    let path = match path {
        Some(p) => p,
        None => asdf_preview::default_array(&file)
            .ok_or_else(|| AsdfError::new_err("no array in the file to preview"))?,
    };
    let bytes = py
        .detach(|| asdf_preview::render_array(&file, &path, &opts, format))
        .map_err(|e| AsdfError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &bytes))
}
