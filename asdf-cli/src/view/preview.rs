//! `/api/preview`: an image or plot of an array, drawn by asdf-preview with the options of
//! the query (each checked: unknown names and numbers out of range are a 400).

use super::files::Served;
use super::http::{pointer, HttpError, Params, Reply};

pub fn preview(served: &Served, params: &Params) -> Result<Reply, HttpError> {
    use asdf_preview::{Colormap, Format, Interval, PreviewOptions, Stretch};
    let rel = params.need("file")?;
    let path = pointer(params)?;
    let mut opts = PreviewOptions::default();
    opts.interval = match params.get("interval").unwrap_or("zscale") {
        "zscale" => Interval::default(),
        "minmax" => Interval::MinMax,
        "percent" => {
            let p = params.get("percent").unwrap_or("99.5");
            match p.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 100.0 => Interval::Percent(x),
                _ => {
                    return Err(HttpError::bad_request(format!(
                        "percent {p:?} is not a number in (0, 100]"
                    )))
                }
            }
        }
        other => {
            return Err(HttpError::bad_request(format!(
                "interval {other:?} unknown (zscale, minmax, percent)"
            )))
        }
    };
    opts.stretch = match params.get("stretch").unwrap_or("linear") {
        "linear" => Stretch::Linear,
        "asinh" => Stretch::Asinh,
        "log" => Stretch::Log,
        "sqrt" => Stretch::Sqrt,
        other => {
            return Err(HttpError::bad_request(format!(
                "stretch {other:?} unknown (linear, asinh, log, sqrt)"
            )))
        }
    };
    let cmap = params.get("cmap").unwrap_or("grey");
    opts.colormap = Colormap::from_name(cmap).ok_or_else(|| {
        HttpError::bad_request(format!(
            "colour map {cmap:?} unknown ({})",
            Colormap::NAMES.join(", ")
        ))
    })?;
    if let Some(s) = params.get("slice").filter(|s| !s.is_empty()) {
        opts.slice = s
            .split(',')
            .map(|i| i.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                HttpError::bad_request(format!("slice {s:?} is not indices separated by commas"))
            })?;
        if opts.slice.len() > 32 {
            return Err(HttpError::bad_request("slice: more than 32 indices"));
        }
    }
    if let Some(m) = params.get("max_size") {
        opts.max_size = match m.parse::<usize>() {
            Ok(n) if (16..=4096).contains(&n) => n,
            _ => {
                return Err(HttpError::bad_request(format!(
                    "max_size {m:?} is not a number of pixels from 16 to 4096"
                )))
            }
        };
    }
    let opened = served.open(rel)?;
    let png = asdf_preview::render_array(&opened.file, path, &opts, Format::Png).map_err(|e| {
        use asdf_preview::PreviewError as P;
        let status = match &e {
            P::NoNode { .. } => 404,
            P::NotAnArray { .. } | P::NotDrawable { .. } | P::BadOption { .. } => 422,
            _ => 500,
        };
        HttpError::new(status, crate::chain(&e))
    })?;
    Ok(Reply {
        content_type: "image/png",
        body: png,
    })
}
