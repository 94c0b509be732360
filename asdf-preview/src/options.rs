//! What to draw and how: intervals, stretches, colour maps, output formats.

/// How pixel values map to the limits of the display.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Interval {
    /// IRAF's zscale as astropy's `ZScaleInterval` computes it.
    ZScale(ZScale),
    /// The smallest and largest finite values.
    MinMax,
    /// The central `P` percent of the finite values (astropy's `PercentileInterval(P)`).
    Percent(f64),
}

impl Default for Interval {
    fn default() -> Self {
        Interval::ZScale(ZScale::default())
    }
}

/// The parameters of zscale, astropy's `ZScaleInterval` defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZScale {
    /// Number of samples taken from the image (`n_samples`, 1000).
    pub n_samples: usize,
    /// Scaling of the fitted slope (`contrast`, 0.25).
    pub contrast: f64,
    /// Largest fraction of samples rejected (`max_reject`, 0.5).
    pub max_reject: f64,
    /// Fewest samples left after rejection (`min_npixels`, 5).
    pub min_npixels: usize,
    /// Rejection threshold in standard deviations (`krej`, 2.5).
    pub krej: f64,
    /// Most fit-and-reject rounds (`max_iterations`, 5).
    pub max_iterations: usize,
}

impl Default for ZScale {
    fn default() -> Self {
        ZScale {
            n_samples: 1000,
            contrast: 0.25,
            max_reject: 0.5,
            min_npixels: 5,
            krej: 2.5,
            max_iterations: 5,
        }
    }
}

/// How values between the limits (scaled to 0..1) become brightness, as
/// `astropy.visualization` defines its stretches with their default parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Stretch {
    /// `y = x`
    #[default]
    Linear,
    /// `y = asinh(x / a) / asinh(1 / a)`, `a = 0.1`
    Asinh,
    /// `y = log(a x + 1) / log(a + 1)`, `a = 1000`
    Log,
    /// `y = sqrt(x)`
    Sqrt,
}

/// The colours of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Colormap {
    /// Black to white; bad pixels red.
    #[default]
    Grey,
    /// matplotlib's `viridis`; bad pixels red.
    Viridis,
    /// matplotlib's `inferno`; bad pixels cyan.
    Inferno,
    /// ds9's `heat`; bad pixels cyan.
    Heat,
    /// matplotlib's `cool` (cyan to magenta); bad pixels black.
    Cool,
}

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A PNG image: 8-bit paletted for an image (256 levels of the colour map, or 255 and the
    /// bad colour when it has bad pixels), 8-bit RGB for a plot.
    Png,
    /// An SVG document (plots as vectors; images as an embedded PNG).
    Svg,
}

/// What to draw and how. Build it from [`PreviewOptions::default`] and set the fields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PreviewOptions {
    /// The limits of an image (zscale by default).
    pub interval: Interval,
    /// The stretch of an image (linear by default).
    pub stretch: Stretch,
    /// The colour map of an image (grey by default).
    pub colormap: Colormap,
    /// Leading indices of an array of more than 2 dimensions: the plane drawn (missing ones
    /// are 0, so the default is the first plane).
    pub slice: Vec<usize>,
    /// The largest side of an image in pixels (larger arrays are reduced; default 1024).
    pub max_size: usize,
    /// A record array's column for the horizontal axis (default: the row number).
    pub x: Option<String>,
    /// A record array's column for the vertical axis (default: its first numeric column).
    pub y: Option<String>,
    /// The size of a plot in pixels (default 640 by 400).
    pub plot_size: (u32, u32),
    /// Planes larger than this many bytes (in the array's datatype) that must be reduced are
    /// read strided, only every n-th row and column (region reads: an uncompressed block is
    /// read only there); smaller ones are read whole and block-averaged. Default 64 MiB.
    pub stride_above_bytes: u64,
}

impl Default for PreviewOptions {
    fn default() -> Self {
        PreviewOptions {
            interval: Interval::default(),
            stretch: Stretch::default(),
            colormap: Colormap::default(),
            slice: Vec::new(),
            max_size: 1024,
            x: None,
            y: None,
            plot_size: (640, 400),
            stride_above_bytes: 64 << 20,
        }
    }
}
