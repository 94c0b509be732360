//! Images and plots of ASDF arrays: what `asdftool preview`, `asdftool view` and
//! `asdf_rs.preview` draw ([docs/preview.md](https://github.com/asdf-rs/asdf-rs/blob/main/docs/preview.md)).
//!
//! A 2-D array (or one plane of an N-d array) becomes an image: limits from an
//! [`Interval`] (zscale as astropy's `ZScaleInterval` by default), a [`Stretch`] as
//! `astropy.visualization` defines them, a [`Colormap`], NaN, infinities and masked pixels in
//! the colour map's distinct `bad` colour, row 0 at the bottom (`imshow(origin="lower")`),
//! reduced to at most [`PreviewOptions::max_size`] pixels a side. A 1-D array becomes a line
//! plot, a record array (table) a plot of two columns. PNG or SVG.
//!
//! ```no_run
//! use asdf_preview::{render_array, Format, PreviewOptions};
//! let file = asdf_core::AsdfFile::open("image.asdf")?;
//! let png = render_array(&file, "/sci", &PreviewOptions::default(), Format::Png)?;
//! std::fs::write("sci.png", png)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod colormap;
mod image;
mod interval;
mod options;
mod plot;
mod render;
mod scan;

pub use options::{Colormap, Format, Interval, PreviewOptions, Stretch, ZScale};
pub use render::{default_array, draw, image_limits, render_array, Drawing};

/// Why an array cannot be drawn. Messages are one line, lowercase, naming the tree path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PreviewError {
    /// Nothing at the path.
    #[error("no node at {path}")]
    NoNode {
        /// The tree path (JSON pointer).
        path: String,
    },
    /// The node at the path is not an array.
    #[error("{path} is {what}, not an array")]
    NotAnArray {
        /// The tree path.
        path: String,
        /// What it is (`a mapping of 3 keys`, ...).
        what: String,
    },
    /// An array whose datatype or shape cannot be drawn (strings, complex numbers, 0-d, empty).
    #[error("{path}: cannot draw {what}")]
    NotDrawable {
        /// The tree path.
        path: String,
        /// What it holds.
        what: String,
    },
    /// Options that do not fit the array (a `slice` beyond its shape, an unknown column).
    #[error("{path}: {message}")]
    BadOption {
        /// The tree path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Reading the array failed.
    #[error("{path}: {source}")]
    Read {
        /// The tree path.
        path: String,
        /// The library's error (boxed: it is large).
        #[source]
        source: Box<asdf_core::Error>,
    },
    /// Encoding the PNG failed.
    #[error("cannot encode the png: {0}")]
    Encode(String),
    /// Writing the PNG or SVG failed ([`Drawing::write_to`]).
    #[error("cannot write: {0}")]
    Write(#[source] std::io::Error),
}
