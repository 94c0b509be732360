//! Images: block averaging, limits, stretch and colour map, PNG and SVG output.

use base64::Engine;

use crate::{Format, PreviewError, PreviewOptions};

/// A plane of values (NaN for NaN, infinite and masked pixels after [`Image::new`]), row 0
/// first as in the array.
pub(crate) struct Image {
    values: Vec<f64>,
    width: usize,
    height: usize,
}

impl Image {
    /// An image of `values` (`height` rows of `width`); infinities become bad pixels too.
    pub(crate) fn new(mut values: Vec<f64>, width: usize, height: usize) -> Image {
        for v in &mut values {
            if !v.is_finite() {
                *v = f64::NAN;
            }
        }
        Image {
            values,
            width,
            height,
        }
    }

    /// Reduced by block averaging (of the good pixels of each block; a block without one is
    /// bad) to at most `max_size` pixels a side.
    pub(crate) fn reduced(self, max_size: usize) -> Image {
        let factor = self.width.max(self.height).div_ceil(max_size.max(1));
        if factor <= 1 {
            return self;
        }
        let (w, h) = (self.width.div_ceil(factor), self.height.div_ceil(factor));
        let mut sum = vec![0f64; w * h];
        let mut count = vec![0u32; w * h];
        for (r, row) in self.values.chunks_exact(self.width).enumerate() {
            let base = (r / factor) * w;
            for (c, v) in row.iter().enumerate() {
                if !v.is_nan() {
                    sum[base + c / factor] += v;
                    count[base + c / factor] += 1;
                }
            }
        }
        let values = sum
            .iter()
            .zip(&count)
            .map(|(s, n)| if *n == 0 { f64::NAN } else { s / f64::from(*n) })
            .collect();
        Image {
            values,
            width: w,
            height: h,
        }
    }

    /// The limits of the interval of `opts` over the good pixels (C order).
    pub(crate) fn limits(&self, opts: &PreviewOptions) -> Option<(f64, f64)> {
        let good: Vec<f64> = self
            .values
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .collect();
        opts.interval.limits(&good)
    }

    /// The image's RGB bytes, the array's row 0 at the bottom.
    pub(crate) fn rgb(&self, opts: &PreviewOptions) -> Vec<u8> {
        let (lo, hi) = self.limits(opts).unwrap_or((0.0, 1.0));
        let span = hi - lo;
        let map = opts.colormap;
        let bad = map.bad();
        // 1024 levels of the stretched colour map, looked up per pixel
        const LEVELS: usize = 1024;
        let lut: Vec<[u8; 3]> = (0..LEVELS)
            .map(|i| map.color(opts.stretch.apply(i as f64 / (LEVELS - 1) as f64)))
            .collect();
        let mut out = Vec::with_capacity(self.values.len() * 3);
        for row in self.values.chunks_exact(self.width).rev() {
            for &v in row {
                let rgb = if v.is_nan() {
                    bad
                } else {
                    let x = if span > 0.0 { (v - lo) / span } else { 0.0 };
                    let x = x.clamp(0.0, 1.0);
                    lut[(x * (LEVELS - 1) as f64).round() as usize]
                };
                out.extend_from_slice(&rgb);
            }
        }
        out
    }

    /// PNG bytes, or an SVG document holding the PNG.
    pub(crate) fn render(
        &self,
        opts: &PreviewOptions,
        format: Format,
    ) -> Result<Vec<u8>, PreviewError> {
        let png = encode_png(&self.rgb(opts), self.width as u32, self.height as u32)?;
        Ok(match format {
            Format::Png => png,
            Format::Svg => {
                let data = base64::engine::general_purpose::STANDARD.encode(&png);
                format!(
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
                     <image width=\"{w}\" height=\"{h}\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{data}\"/></svg>\n",
                    w = self.width,
                    h = self.height
                )
                .into_bytes()
            }
        })
    }
}

/// An 8-bit RGB PNG of `rgb` (`height` rows of `width` pixels, top row first).
pub(crate) fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PreviewError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc
            .write_header()
            .map_err(|e| PreviewError::Encode(e.to_string()))?;
        w.write_image_data(rgb)
            .map_err(|e| PreviewError::Encode(e.to_string()))?;
        w.finish()
            .map_err(|e| PreviewError::Encode(e.to_string()))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_average_skips_bad_pixels() {
        // 4x4 -> 2x2: blocks of 2x2
        let mut v: Vec<f64> = (0..16).map(f64::from).collect();
        v[0] = f64::NAN;
        let img = Image::new(v, 4, 4).reduced(2);
        assert_eq!((img.width, img.height), (2, 2));
        // block (0,0): 1, 4, 5 (0 is NaN)
        assert_eq!(img.values[0], (1.0 + 4.0 + 5.0) / 3.0);
        assert_eq!(img.values[3], (10.0 + 11.0 + 14.0 + 15.0) / 4.0);
        // a side not a multiple of the factor: 5 wide at most 2 -> factor 3, 2 columns
        let img = Image::new(vec![1.0; 5], 5, 1).reduced(2);
        assert_eq!((img.width, img.height), (2, 1));
    }

    #[test]
    fn row_zero_is_the_bottom_row() {
        let img = Image::new(vec![0.0, 0.0, 1.0, 1.0], 2, 2);
        let o = PreviewOptions {
            interval: crate::Interval::MinMax,
            ..PreviewOptions::default()
        };
        let rgb = img.rgb(&o);
        // first output row (top) is the array's row 1 (white), last is row 0 (black)
        assert_eq!(&rgb[..3], &[255, 255, 255]);
        assert_eq!(&rgb[6..9], &[0, 0, 0]);
    }
}
