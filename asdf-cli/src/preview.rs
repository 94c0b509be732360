//! `asdftool preview FILE [PATH] -o OUT.png|OUT.svg`: an image of a 2-D array (one plane of
//! a larger one), a line plot of a 1-D array, a plot of two columns of a table, drawn by
//! asdf-preview (docs/preview.md).

use std::path::Path;

use asdf_preview::{Colormap, Format, Interval, PreviewError, PreviewOptions, Stretch};

use crate::tree::{parse_path, pointer};

/// The `--interval` choices.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalArg {
    /// IRAF's zscale, as astropy's ZScaleInterval (its defaults).
    Zscale,
    /// The smallest and largest finite values.
    Minmax,
}

/// The `--stretch` choices (astropy.visualization's, default parameters).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StretchArg {
    Linear,
    Asinh,
    Log,
    Sqrt,
}

/// What `asdftool preview` was asked for.
pub struct Request<'a> {
    pub input: &'a Path,
    pub path: Option<&'a str>,
    pub output: &'a Path,
    pub interval: IntervalArg,
    pub percent: Option<f64>,
    pub stretch: StretchArg,
    pub cmap: &'a str,
    pub slice: Option<&'a str>,
    pub max_size: usize,
    pub x: Option<String>,
    pub y: Option<String>,
}

/// Draws the array and writes the output atomically.
pub fn run(access: &crate::Access, req: &Request) -> Result<String, String> {
    let ext = req
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let format = match ext.as_str() {
        "png" => Format::Png,
        "svg" => Format::Svg,
        _ => {
            return Err(format!(
                "{}: choose an output ending in .png or .svg",
                req.output.display()
            ))
        }
    };
    let mut opts = PreviewOptions::default();
    opts.interval = match (req.percent, req.interval) {
        (Some(p), _) if p > 0.0 && p <= 100.0 => Interval::Percent(p),
        (Some(p), _) => {
            return Err(format!(
                "--percent {p}: give a percentage above 0, at most 100"
            ))
        }
        (None, IntervalArg::Zscale) => Interval::default(),
        (None, IntervalArg::Minmax) => Interval::MinMax,
    };
    opts.stretch = match req.stretch {
        StretchArg::Linear => Stretch::Linear,
        StretchArg::Asinh => Stretch::Asinh,
        StretchArg::Log => Stretch::Log,
        StretchArg::Sqrt => Stretch::Sqrt,
    };
    opts.colormap = Colormap::from_name(req.cmap).ok_or_else(|| {
        format!(
            "--cmap {:?}: not a colour map ({})",
            req.cmap,
            Colormap::NAMES.join(", ")
        )
    })?;
    if let Some(text) = req.slice {
        opts.slice = text
            .split(',')
            .map(|s| s.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                format!("--slice {text:?}: give the plane's leading indices, as 0 or 2,0")
            })?;
    }
    if req.max_size == 0 {
        return Err("--max-size 0: give at least 1 pixel".into());
    }
    opts.max_size = req.max_size;
    opts.x = req.x.clone();
    opts.y = req.y.clone();
    if crate::output::same_file(req.input, req.output) {
        return Err(format!(
            "{}: the output would replace the input; choose another output path",
            req.output.display()
        ));
    }
    let file = access.open(req.input)?;
    let here = match req.path {
        Some(p) => pointer(&parse_path(p)),
        None => asdf_preview::default_array(&file)
            .ok_or_else(|| format!("{}: no array in the file to preview", req.input.display()))?,
    };
    // everything that can fail for the array first (nothing is written then), then the
    // bytes straight into the output as they are encoded
    let drawing = asdf_preview::draw(&file, &here, &opts, format)
        .map_err(|e| format!("{}: {e}", req.input.display()))?;
    let mut written = 0u64;
    let mut failed = None;
    let result = asdf_core::unstable::write_atomically(req.output, |f| match drawing.write_to(f) {
        Ok(n) => {
            written = n;
            Ok(())
        }
        Err(PreviewError::Write(e)) => Err(e),
        Err(e) => {
            let message = e.to_string();
            failed = Some(e);
            Err(std::io::Error::other(message))
        }
    });
    if let Err(e) = result {
        return Err(match failed {
            Some(e) => format!("{}: {e}", req.input.display()),
            None => format!("{}: cannot write: {e}", req.output.display()),
        });
    }
    Ok(format!(
        "wrote {} ({} of {here}, {written} bytes)\n",
        req.output.display(),
        if format == Format::Png { "PNG" } else { "SVG" },
    ))
}
