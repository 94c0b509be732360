//! From a tree path to PNG or SVG bytes: finding the array, reading the plane (by region,
//! strided when that saves bytes), and handing it to the image or plot drawer.

use asdf_core::array::{DType, Dim, DynArray, NdArrayMeta};
use asdf_core::{AsdfFile, Node, SelItem, Selection, Value};

use crate::image::Image;
use crate::plot::{Plot, Series};
use crate::scan::{convert, numeric, read, Plane};
use crate::{Format, PreviewError, PreviewOptions};

/// The PNG or SVG bytes of the array at `path` (a JSON pointer such as `/sci` or
/// `/data/0`; a path without the leading `/` is taken as one below the root): an image of a
/// 2-D array (or of the plane `opts.slice` of a larger one), a line plot of a 1-D array, a
/// plot of two columns of a 1-D record array (table).
///
/// A quantity (`value` and `unit`) or a column (`data` and `unit`) at the path draws its
/// array, labelled with its unit. Errors are one line naming the path: nothing there, not an
/// array, a datatype that cannot be drawn (strings, complex numbers), options that do not fit
/// the array, or the library's error reading it.
pub fn render_array(
    file: &AsdfFile,
    path: &str,
    opts: &PreviewOptions,
    format: Format,
) -> Result<Vec<u8>, PreviewError> {
    let mut out = Vec::new();
    draw(file, path, opts, format)?.write_to(&mut out)?;
    Ok(out)
}

/// A drawing of an array, read and measured, ready to be written: [`draw`] does all that can
/// fail for the array (finding it, reading it, its limits), [`Drawing::write_to`] writes the
/// PNG or SVG, an image's PNG encoded as it is written rather than held whole in memory.
pub struct Drawing<'a> {
    inner: Drawn<'a>,
}

enum Drawn<'a> {
    Image(Box<Image<'a>>, PreviewOptions, Format),
    Bytes(Vec<u8>),
}

impl Drawing<'_> {
    /// Writes the PNG or SVG bytes to `out`; returns how many. Errors: [`PreviewError::Write`]
    /// when `out` fails, and those of reading the plane again for an image at full size.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> Result<u64, PreviewError> {
        match &self.inner {
            Drawn::Image(image, opts, format) => image.write_to(opts, *format, out),
            Drawn::Bytes(b) => {
                out.write_all(b).map_err(PreviewError::Write)?;
                Ok(b.len() as u64)
            }
        }
    }
}

/// The drawing of the array at `path`, as [`render_array`] draws it, to be written with
/// [`Drawing::write_to`]; errors as [`render_array`]'s.
pub fn draw<'a>(
    file: &'a AsdfFile,
    path: &str,
    opts: &PreviewOptions,
    format: Format,
) -> Result<Drawing<'a>, PreviewError> {
    let bytes = |b: Result<Vec<u8>, PreviewError>| {
        b.map(|b| Drawing {
            inner: Drawn::Bytes(b),
        })
    };
    let found = locate(file, path)?;
    if found.record {
        return bytes(table(
            file,
            &found.target,
            found.shape.as_deref(),
            opts,
            format,
        ));
    }
    let (target, shape, ndim) = (found.target, found.shape, found.ndim);
    match ndim {
        0 => Err(PreviewError::NotDrawable {
            path: target.path.clone(),
            what: "a 0-dimensional array".into(),
        }),
        1 => {
            no_slice(&target.path, opts, 1)?;
            let arr = read(file, &target.node, &target.path, &Selection::all())?;
            let values = to_f64(&arr, &target.path)?;
            let mask = read_mask(file, &target, &Selection::all(), values.len())?;
            let by_value = mask_value(&target.node);
            let y: Vec<f64> = values
                .iter()
                .zip(&mask)
                .map(|(v, m)| {
                    if *m || by_value == Some(*v) {
                        f64::NAN
                    } else {
                        *v
                    }
                })
                .collect();
            let x: Vec<f64> = (0..y.len()).map(|i| i as f64).collect();
            let plot = Plot {
                title: target.path.clone(),
                x_label: "index".into(),
                y_label: value_label(&arr.dtype, target.unit.as_deref()),
                series: Series { x, y },
                size: opts.plot_size,
            };
            bytes(plot.render(format))
        }
        _ => {
            let image = Image::new(plane(file, &target, shape.as_deref(), ndim, opts)?, opts)?;
            Ok(Drawing {
                inner: Drawn::Image(Box::new(image), opts.clone(), format),
            })
        }
    }
}

/// The limits `(vmin, vmax)` an image of the array at `path` is drawn with: the interval of
/// `opts` over the finite, unmasked values of the plane drawn, in C order as astropy's
/// intervals take them from the whole image (before block averaging to `opts.max_size`; of
/// every n-th row and column when a plane over `opts.stride_above_bytes` is read strided);
/// `None` when the plane has no such value. Errors as [`render_array`]'s,
/// and an array of fewer than 2 dimensions is [`PreviewError::NotDrawable`].
pub fn image_limits(
    file: &AsdfFile,
    path: &str,
    opts: &PreviewOptions,
) -> Result<Option<(f64, f64)>, PreviewError> {
    let Found {
        target,
        shape,
        ndim,
        record,
    } = locate(file, path)?;
    if record || ndim < 2 {
        let what = if record {
            "a record array as an image".to_string()
        } else {
            format!("a {ndim}-dimensional array as an image")
        };
        return Err(PreviewError::NotDrawable {
            path: target.path,
            what,
        });
    }
    Ok(Image::new(plane(file, &target, shape.as_deref(), ndim, opts)?, opts)?.limits)
}

/// The plane of an array of 2 or more dimensions that `opts` chooses (`--slice`, strided
/// reading of large planes).
fn plane<'a>(
    file: &'a AsdfFile,
    target: &Target,
    shape: Option<&[usize]>,
    ndim: usize,
    opts: &PreviewOptions,
) -> Result<Plane<'a>, PreviewError> {
    let lead = lead_items(target, shape, ndim, opts)?;
    let step = stride_step(target, shape, ndim, opts);
    Plane::open(file, &target.node, &target.path, lead, step, shape)
}

/// An array found at a path.
struct Found {
    target: Target,
    /// Its shape, when the descriptor states every dimension.
    shape: Option<Vec<usize>>,
    ndim: usize,
    /// Whether its datatype is a record.
    record: bool,
}

/// The array at `path` (a JSON pointer; without the leading `/`, one below the root).
fn locate(file: &AsdfFile, path: &str) -> Result<Found, PreviewError> {
    let path = if path.is_empty() || path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    let target = find(file, &path)?;
    let meta = if asdf_core::file::is_zarr(&target.node) {
        None
    } else {
        Some(
            NdArrayMeta::from_node(&target.node, &target.path).map_err(|e| PreviewError::Read {
                path: target.path.clone(),
                source: Box::new(e.into()),
            })?,
        )
    };
    let record = matches!(
        meta.as_ref().and_then(|m| m.dtype.as_ref()),
        Some(DType::Record(_))
    );
    let shape = fixed_shape(meta.as_ref());
    let ndim = match &shape {
        Some(s) => s.len(),
        None => zarr_ndim(&target.node).unwrap_or(0),
    };
    Ok(Found {
        target,
        shape,
        ndim,
        record,
    })
}

/// The shape of a descriptor whose dimensions are all fixed.
fn fixed_shape(meta: Option<&NdArrayMeta>) -> Option<Vec<usize>> {
    meta.and_then(|m| {
        m.shape.as_ref().and_then(|dims| {
            dims.iter()
                .map(|d| match d {
                    Dim::Fixed(n) => usize::try_from(*n).ok(),
                    _ => None,
                })
                .collect()
        })
    })
}

/// The array to draw: its node, path and unit.
struct Target {
    node: Node,
    path: String,
    unit: Option<String>,
}

/// The array at `path`, or in the quantity / column there.
fn find(file: &AsdfFile, path: &str) -> Result<Target, PreviewError> {
    let node = file
        .get(path)
        .ok_or_else(|| PreviewError::NoNode { path: shown(path) })?;
    let is_array = |n: &Node| n.is_ndarray() || asdf_core::file::is_zarr(n);
    if is_array(node) {
        // the unit of the quantity or column the array is the `value` or `data` of
        let unit = path.rsplit_once('/').and_then(|(parent, last)| {
            (last == "value" || last == "data")
                .then(|| file.get(parent).and_then(unit_of))
                .flatten()
        });
        return Ok(Target {
            node: node.clone(),
            path: shown(path),
            unit,
        });
    }
    for key in ["value", "data"] {
        if let Some(inner) = node.get(key).filter(|n| is_array(n)) {
            return Ok(Target {
                node: inner.clone(),
                path: format!("{}/{key}", path),
                unit: unit_of(node),
            });
        }
    }
    Err(PreviewError::NotAnArray {
        path: shown(path),
        what: asdf_core::yaml::describe(node),
    })
}

/// A path as messages show it (`/` for the root).
fn shown(path: &str) -> String {
    if path.is_empty() {
        "/".into()
    } else {
        path.into()
    }
}

/// The `unit` of a quantity or column (a string, or a tagged unit scalar).
fn unit_of(node: &Node) -> Option<String> {
    match node.get("unit")?.value() {
        Value::Str(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// The number of dimensions of an asdf-zarr node (`.zarray`'s `shape`).
fn zarr_ndim(node: &Node) -> Option<usize> {
    let shape = node.get(".zarray")?.get("shape")?;
    shape.as_seq().map(|s| s.len())
}

fn no_slice(path: &str, opts: &PreviewOptions, ndim: usize) -> Result<(), PreviewError> {
    if opts.slice.is_empty() {
        return Ok(());
    }
    Err(PreviewError::BadOption {
        path: path.into(),
        message: format!(
            "--slice chooses a plane of an array of 3 or more dimensions, and this one has {ndim}"
        ),
    })
}

/// Which of `n` selected elements are masked: the array's `mask` (an array: nonzero is
/// masked; a number: elements equal to it) read with the same selection.
fn read_mask(
    file: &AsdfFile,
    target: &Target,
    sel: &Selection,
    n: usize,
) -> Result<Vec<bool>, PreviewError> {
    let Some(mask) = target.node.get("mask") else {
        return Ok(vec![false; n]);
    };
    if mask.is_ndarray() {
        let mpath = format!("{}/mask", target.path);
        let m = read(file, mask, &mpath, sel)?;
        if m.element_count() != n {
            return Err(PreviewError::BadOption {
                path: target.path.clone(),
                message: format!("a mask of {} elements for {n} values", m.element_count()),
            });
        }
        let size = m.dtype.itemsize();
        return Ok(m
            .data
            .chunks_exact(size.max(1))
            .map(|c| c.iter().any(|b| *b != 0))
            .collect());
    }
    // a number compares the data: done by the caller on the values
    Ok(vec![false; n])
}

/// The masking number of an array whose `mask` is a number.
fn mask_value(node: &Node) -> Option<f64> {
    match node.get("mask")?.value() {
        Value::Int(i) => i.as_i128().map(|v| v as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// `type (unit)` for an axis label.
fn value_label(dtype: &DType, unit: Option<&str>) -> String {
    match unit {
        Some(u) => format!("{} ({u})", dtype.name()),
        None => dtype.name(),
    }
}

/// The elements of a numeric array as `f64`, in C order (infinities as NaN, as in images).
fn to_f64(arr: &DynArray, path: &str) -> Result<Vec<f64>, PreviewError> {
    let (ty, order) = numeric(&arr.dtype).ok_or_else(|| PreviewError::NotDrawable {
        path: path.into(),
        what: format!("an array of {}", arr.dtype.name()),
    })?;
    let size = ty.itemsize();
    if size == 0 || arr.data.len() != arr.element_count().saturating_mul(size) {
        return Err(PreviewError::NotDrawable {
            path: path.into(),
            what: "an array whose bytes do not match its shape".into(),
        });
    }
    let mut out = Vec::with_capacity(arr.element_count());
    convert(ty, order, &arr.data, &mut out);
    Ok(out)
}

/// The selection items of the leading axes of the plane `opts.slice` chooses.
fn lead_items(
    target: &Target,
    shape: Option<&[usize]>,
    ndim: usize,
    opts: &PreviewOptions,
) -> Result<Vec<SelItem>, PreviewError> {
    let lead = ndim - 2;
    if opts.slice.len() > lead {
        return Err(PreviewError::BadOption {
            path: target.path.clone(),
            message: if lead == 0 {
                "--slice chooses a plane of an array of 3 or more dimensions, and this one has 2"
                    .into()
            } else {
                format!(
                    "--slice takes at most {lead} indices for an array of {ndim} dimensions, not {}",
                    opts.slice.len()
                )
            },
        });
    }
    let mut items: Vec<SelItem> = Vec::with_capacity(ndim);
    for axis in 0..lead {
        let i = opts.slice.get(axis).copied().unwrap_or(0);
        if let Some(len) = shape.map(|s| s[axis]) {
            if i >= len {
                return Err(PreviewError::BadOption {
                    path: target.path.clone(),
                    message: format!("--slice index {i} is beyond axis {axis} of length {len}"),
                });
            }
        }
        let i = i64::try_from(i).map_err(|_| PreviewError::BadOption {
            path: target.path.clone(),
            message: format!("--slice index {i} is too large"),
        })?;
        items.push(SelItem::index(i));
    }
    Ok(items)
}

/// Every how many rows and columns the plane is read: 1, or the reduction factor when the
/// plane is larger than `opts.stride_above_bytes` and must be reduced (region reads: an
/// uncompressed block is read only there).
fn stride_step(
    target: &Target,
    shape: Option<&[usize]>,
    ndim: usize,
    opts: &PreviewOptions,
) -> usize {
    let Some(s) = shape else {
        return 1;
    };
    let (h, w) = (s[ndim - 2], s[ndim - 1]);
    let item = meta_itemsize(&target.node).unwrap_or(8) as u64;
    let bytes = (h as u64).saturating_mul(w as u64).saturating_mul(item);
    let factor = h.max(w).div_ceil(opts.max_size.max(1));
    if factor > 1 && bytes > opts.stride_above_bytes {
        factor
    } else {
        1
    }
}

/// The item size of an ndarray node's datatype, when it states one.
fn meta_itemsize(node: &Node) -> Option<usize> {
    let meta = NdArrayMeta::from_node(node, "").ok()?;
    meta.dtype.map(|d| d.itemsize())
}

/// A plot of two columns of a 1-D record array.
fn table(
    file: &AsdfFile,
    target: &Target,
    shape: Option<&[usize]>,
    opts: &PreviewOptions,
    format: Format,
) -> Result<Vec<u8>, PreviewError> {
    if shape.map(|s| s.len()) != Some(1) {
        return Err(PreviewError::NotDrawable {
            path: target.path.clone(),
            what: "a record array of other than one dimension".into(),
        });
    }
    no_slice(&target.path, opts, 1)?;
    let arr = read(file, &target.node, &target.path, &Selection::all())?;
    let DType::Record(fields) = &arr.dtype else {
        return Err(PreviewError::NotDrawable {
            path: target.path.clone(),
            what: format!("an array of {}", arr.dtype.name()),
        });
    };
    // each plain numeric field with its byte offset in a record
    let mut columns = Vec::new();
    let mut offset = 0usize;
    for f in fields {
        if let (Some((ty, order)), true) = (numeric(&f.dtype), f.shape.is_empty()) {
            columns.push((f.name.clone(), offset, ty, order, f.dtype.name()));
        }
        offset = offset.saturating_add(f.size());
    }
    let names = || {
        columns
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pick = |name: &str| {
        columns
            .iter()
            .position(|c| c.0 == name)
            .ok_or_else(|| PreviewError::BadOption {
                path: target.path.clone(),
                message: format!("no numeric column {name:?} (numeric columns: {})", names()),
            })
    };
    let x = opts.x.as_deref().map(pick).transpose()?;
    let y =
        match opts.y.as_deref() {
            Some(name) => pick(name)?,
            None => (0..columns.len()).find(|i| Some(*i) != x).ok_or_else(|| {
                PreviewError::NotDrawable {
                    path: target.path.clone(),
                    what: "a record array without a numeric column to plot".into(),
                }
            })?,
        };
    let record = arr.dtype.itemsize();
    let rows = arr.element_count();
    if record == 0 || arr.data.len() != rows.saturating_mul(record) {
        return Err(PreviewError::NotDrawable {
            path: target.path.clone(),
            what: "a record array whose bytes do not match its shape".into(),
        });
    }
    let column = |c: usize| -> Vec<f64> {
        let (_, off, ty, order, _) = &columns[c];
        let mut out = Vec::with_capacity(rows);
        for r in arr.data.chunks_exact(record) {
            convert(*ty, *order, &r[*off..*off + ty.itemsize()], &mut out);
        }
        out
    };
    let ys = column(y);
    let (xs, x_label) = match x {
        Some(c) => (column(c), format!("{} ({})", columns[c].0, columns[c].4)),
        None => ((0..rows).map(|i| i as f64).collect(), "row".to_string()),
    };
    let plot = Plot {
        title: target.path.clone(),
        x_label,
        y_label: format!("{} ({})", columns[y].0, columns[y].4),
        series: Series { x: xs, y: ys },
        size: opts.plot_size,
    };
    plot.render(format)
}

/// The array a preview shows when no path is given: the first array of two or more
/// dimensions, else the first array, in document order (`asdftool preview FILE`,
/// `asdf_rs.preview(source)`).
pub fn default_array(file: &AsdfFile) -> Option<String> {
    let arrays = file.arrays();
    let ndim = |n: &Node| {
        n.get("shape")
            .and_then(|s| s.as_seq().map(|s| s.len()))
            .unwrap_or(0)
    };
    arrays
        .iter()
        .find(|(_, n)| ndim(n) >= 2)
        .or_else(|| arrays.first())
        .map(|(p, _)| p.clone())
}
