//! Images: one pass over the plane (limits' statistics and block averages), zscale's samples,
//! stretch and colour map as a palette, PNG and SVG output.
//!
//! The plane is read in bands ([`Plane`]) by as many threads as the machine has (planes of a
//! million pixels or more), never copied whole. The limits are those of the plane as read
//! (every value, or every n-th row and column of a plane read strided), as astropy's
//! intervals see the whole image, not those of the reduced image. Images are 8-bit paletted
//! PNGs: 256 levels of the stretched colour map, or 255 and the bad colour when the image has
//! bad pixels.

use std::ops::Range;

use std::io::Write;

use base64::Engine;

use crate::interval::percentiles;
use crate::scan::{in_parallel, split, workers, Band, Plane};
use crate::{Format, Interval, PreviewError, PreviewOptions, ZScale};

/// An image of a plane: its size after reduction, its limits, and what drawing it needs.
pub(crate) struct Image<'a> {
    plane: Plane<'a>,
    /// The block size of the reduction (1: the plane at its own size).
    factor: usize,
    width: usize,
    height: usize,
    /// Good (finite, unmasked) values in each row of the plane.
    row_good: Vec<u32>,
    /// Block averages (`factor > 1`), NaN for a block without a good value; row 0 first.
    reduced: Vec<f64>,
    /// The limits of the interval (`None`: no good value).
    pub(crate) limits: Option<(f64, f64)>,
    /// One band buffer a thread, kept from pass to pass (their pages are not faulted in
    /// again).
    bands: std::sync::Mutex<Vec<Band>>,
}

/// What one part of the pass over the plane found (besides its block averages).
struct Part {
    row_good: Vec<u32>,
    lo: f64,
    hi: f64,
    values: Vec<f64>,
}

/// What the pass keeps besides the row counts and block averages.
#[derive(Clone, Copy)]
struct Want {
    min_max: bool,
    values: bool,
}

impl<'a> Image<'a> {
    /// The image of `plane` reduced by block averaging to at most `max_size` pixels a side,
    /// with the limits of `opts.interval` over the plane's good values.
    pub(crate) fn new(plane: Plane<'a>, opts: &PreviewOptions) -> Result<Image<'a>, PreviewError> {
        let (rows, cols) = (plane.rows, plane.cols);
        let factor = rows.max(cols).div_ceil(opts.max_size.max(1)).max(1);
        let (width, height) = if factor > 1 {
            (cols.div_ceil(factor), rows.div_ceil(factor))
        } else {
            (cols, rows)
        };
        let want = Want {
            min_max: opts.interval == Interval::MinMax,
            values: matches!(opts.interval, Interval::Percent(_)),
        };
        // the block averages, each part of the plane writing its own block rows
        let blocks = if factor > 1 { width * height } else { 0 };
        let mut reduced = vec![0.0f64; blocks];
        let mut items = Vec::new();
        let threads = workers(rows * cols);
        let mut bands: Vec<Band> = (0..threads).map(|_| Band::default()).collect();
        {
            let mut rest = &mut reduced[..];
            let mut free = bands.iter_mut();
            for (p, band) in split(rows, threads, factor).into_iter().zip(&mut free) {
                let n = if factor > 1 {
                    (p.end.div_ceil(factor) - p.start / factor) * width
                } else {
                    0
                };
                let (mine, next) = std::mem::take(&mut rest).split_at_mut(n);
                rest = next;
                items.push((p, mine, band));
            }
        }
        let parts = in_parallel(items, |(r, mine, band)| {
            scan(&plane, r, factor, want, mine, band)
        })?;
        let mut row_good = Vec::with_capacity(rows);
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut values = Vec::new();
        for p in parts {
            row_good.extend(p.row_good);
            lo = lo.min(p.lo);
            hi = hi.max(p.hi);
            if values.is_empty() {
                values = p.values;
            } else {
                values.extend(p.values);
            }
        }
        let good: u64 = row_good.iter().map(|g| u64::from(*g)).sum();
        let mut image = Image {
            plane,
            factor,
            width,
            height,
            row_good,
            reduced,
            limits: None,
            bands: std::sync::Mutex::new(bands),
        };
        if good > 0 {
            image.limits = match opts.interval {
                Interval::MinMax => Some((lo, hi)),
                Interval::Percent(p) => Some(percentiles(&mut values, p)),
                Interval::ZScale(z) => z.limits_of_samples(image.zscale_samples(&z)?),
            };
        }
        Ok(image)
    }

    /// zscale's samples, as astropy takes them from the good values in C order: every
    /// `stride`-th one, at most `n_samples`. Only the rows holding one are read again.
    fn zscale_samples(&self, z: &ZScale) -> Result<Vec<f64>, PreviewError> {
        let good: usize = self.row_good.iter().map(|g| *g as usize).sum();
        if good == 0 {
            return Ok(Vec::new());
        }
        let stride = z.stride(good);
        let count = z.n_samples.max(1).min(good.div_ceil(stride));
        // (row, k): the k-th good value of the row
        let mut wanted: Vec<(usize, usize)> = Vec::with_capacity(count);
        let (mut next, mut before) = (0usize, 0usize);
        for (r, g) in self.row_good.iter().enumerate() {
            let g = *g as usize;
            while wanted.len() < count && next < before + g {
                wanted.push((r, next - before));
                next += stride;
            }
            if wanted.len() == count {
                break;
            }
            before += g;
        }
        let mut bands = self.take_bands();
        let parts = split(wanted.len(), bands.len(), 1);
        let items: Vec<_> = parts.into_iter().zip(bands.iter_mut()).collect();
        let cols = self.plane.cols;
        let found = in_parallel(items, |(part, band)| {
            let mut out = Vec::with_capacity(part.len());
            let mut row_read = None;
            for &(r, k) in &wanted[part] {
                let v = if self.row_good[r] as usize == cols {
                    // a row without bad values: the element itself
                    row_read = None;
                    self.plane.value_at(r, k, band)?
                } else {
                    if row_read != Some(r) {
                        self.plane.read_band(r..r + 1, band)?;
                        row_read = Some(r);
                    }
                    let mut good = band.values.iter().copied().filter(|v| !v.is_nan());
                    good.nth(k).unwrap_or(f64::NAN)
                };
                out.push(v);
            }
            Ok(out)
        });
        self.put_bands(bands);
        Ok(found?.into_iter().flatten().collect())
    }

    fn take_bands(&self) -> Vec<Band> {
        let mut bands = match self.bands.lock() {
            Ok(mut b) => std::mem::take(&mut *b),
            Err(_) => Vec::new(),
        };
        if bands.is_empty() {
            bands.push(Band::default());
        }
        bands
    }

    fn put_bands(&self, bands: Vec<Band>) {
        if let Ok(mut b) = self.bands.lock() {
            *b = bands;
        }
    }

    /// Whether the image has a bad pixel (NaN, infinite or masked; a block of them).
    fn has_bad(&self) -> bool {
        if self.factor > 1 {
            self.reduced.iter().any(|v| v.is_nan())
        } else {
            self.row_good.iter().any(|g| *g as usize != self.plane.cols)
        }
    }

    /// The palette indices of the image's pixels, top row first (the array's row 0 at the
    /// bottom), and the palette.
    pub(crate) fn indices(
        &self,
        opts: &PreviewOptions,
    ) -> Result<(Vec<u8>, Vec<[u8; 3]>), PreviewError> {
        let colours = Colours::new(opts, self.limits, self.has_bad());
        let (w, h) = (self.width, self.height);
        let mut idx = vec![0u8; w * h];
        let threads = workers(self.plane.rows * self.plane.cols);
        if self.factor > 1 {
            // image row y is reduced row h - 1 - y
            let parts = split(h, threads, 1);
            let mut slices = Vec::with_capacity(parts.len());
            let mut rest = &mut idx[..];
            for p in &parts {
                let (a, b) = rest.split_at_mut(p.len() * w);
                slices.push((p.clone(), a));
                rest = b;
            }
            in_parallel(slices, |(ys, out): (Range<usize>, &mut [u8])| {
                for (y, row) in ys.zip(out.chunks_exact_mut(w)) {
                    let src = &self.reduced[(h - 1 - y) * w..(h - y) * w];
                    colours.map(src, row);
                }
                Ok(())
            })?;
        } else {
            // plane rows a..b are image rows h - b .. h - a: the parts from the last rows
            let mut bands = self.take_bands();
            let parts = split(h, bands.len(), 1);
            let mut slices = Vec::with_capacity(parts.len());
            let mut rest = &mut idx[..];
            for (p, band) in parts.iter().rev().zip(bands.iter_mut()) {
                let (a, b) = rest.split_at_mut(p.len() * w);
                slices.push((p.clone(), a, band));
                rest = b;
            }
            let band = self.plane.band_rows(1);
            let done = in_parallel(
                slices,
                |(rows, out, buf): (Range<usize>, &mut [u8], &mut Band)| {
                    let mut start = rows.start;
                    while start < rows.end {
                        let end = (start + band).min(rows.end);
                        self.plane.read_band(start..end, buf)?;
                        for (r, src) in (start..end).zip(buf.values.chunks_exact(w)) {
                            // plane row r is image row h - 1 - r, at (rows.end - 1 - r) here
                            let at = (rows.end - 1 - r) * w;
                            colours.map(src, &mut out[at..at + w]);
                        }
                        start = end;
                    }
                    Ok(())
                },
            );
            self.put_bands(bands);
            done?;
        }
        Ok((idx, colours.palette))
    }

    /// Writes the PNG, or an SVG document holding the PNG, to `out`; returns how many bytes.
    pub(crate) fn write_to(
        &self,
        opts: &PreviewOptions,
        format: Format,
        out: &mut dyn Write,
    ) -> Result<u64, PreviewError> {
        let (idx, palette) = self.indices(opts)?;
        let (w, h) = (self.width as u32, self.height as u32);
        match format {
            Format::Png => {
                let mut counted = Counted { out, n: 0 };
                write_indexed(&mut counted, &idx, w, h, &palette)?;
                Ok(counted.n)
            }
            Format::Svg => {
                let mut png = Vec::new();
                write_indexed(&mut png, &idx, w, h, &palette)?;
                let data = base64::engine::general_purpose::STANDARD.encode(&png);
                let svg = format!(
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
                     <image width=\"{w}\" height=\"{h}\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{data}\"/></svg>\n"
                );
                out.write_all(svg.as_bytes()).map_err(PreviewError::Write)?;
                Ok(svg.len() as u64)
            }
        }
    }
}

/// A writer counting the bytes written through it.
struct Counted<'a> {
    out: &'a mut dyn Write,
    n: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// One part of the pass over the plane: plane rows `rows` (starting at a multiple of
/// `factor`) in bands, writing the averages of its block rows to `reduced`.
fn scan(
    plane: &Plane,
    rows: Range<usize>,
    factor: usize,
    want: Want,
    reduced: &mut [f64],
    buf: &mut Band,
) -> Result<Part, PreviewError> {
    let cols = plane.cols;
    let width = if factor > 1 { cols.div_ceil(factor) } else { 0 };
    let mut part = Part {
        row_good: Vec::with_capacity(rows.len()),
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
        values: Vec::new(),
    };
    let band = plane.band_rows(factor);
    // the column sums and counts of the rows of the current block row
    let (mut col_sums, mut col_counts) = if factor > 1 {
        (vec![0.0; cols], vec![0u32; cols])
    } else {
        (Vec::new(), Vec::new())
    };
    let mut start = rows.start;
    while start < rows.end {
        let end = (start + band).min(rows.end);
        plane.read_band(start..end, buf)?;
        for (r, row) in (start..end).zip(buf.values.chunks_exact(cols)) {
            let good = if factor > 1 {
                add_row(row, &mut col_sums, &mut col_counts)
            } else {
                row.iter().map(|v| u32::from(!v.is_nan())).sum()
            };
            part.row_good.push(good);
            if factor > 1 && ((r + 1) % factor == 0 || r + 1 == rows.end) {
                // the last row of a block row: the columns summed into blocks
                let at = (r / factor - rows.start / factor) * width;
                block_averages(&col_sums, &col_counts, factor, &mut reduced[at..at + width]);
                col_sums.fill(0.0);
                col_counts.fill(0);
            }
            if want.min_max {
                for &v in row {
                    // NaN leaves them as they are
                    part.lo = part.lo.min(v);
                    part.hi = part.hi.max(v);
                }
            }
            if want.values {
                part.values
                    .extend(row.iter().copied().filter(|v| !v.is_nan()));
            }
        }
        start = end;
    }
    Ok(part)
}

/// Adds the good values of `row` to the column sums and counts; returns how many there are.
fn add_row(row: &[f64], sums: &mut [f64], counts: &mut [u32]) -> u32 {
    let mut good = 0u32;
    for ((s, n), &v) in sums.iter_mut().zip(counts.iter_mut()).zip(row) {
        let ok = !v.is_nan();
        *s += if ok { v } else { 0.0 };
        *n += u32::from(ok);
        good += u32::from(ok);
    }
    good
}

/// The averages of the good values of blocks of `factor` columns from their column sums and
/// counts (NaN for a block without one) into `out`.
fn block_averages(col_sums: &[f64], col_counts: &[u32], factor: usize, out: &mut [f64]) {
    let blocks = col_sums.chunks(factor).zip(col_counts.chunks(factor));
    for (o, (cs, cn)) in out.iter_mut().zip(blocks) {
        let n: u32 = cn.iter().sum();
        *o = if n == 0 {
            f64::NAN
        } else {
            cs.iter().sum::<f64>() / f64::from(n)
        };
    }
}

/// Values between the limits scaled to this many levels before the stretch is looked up.
const LEVELS: usize = 1 << 14;

/// From values to palette indices: the limits, the stretch as a table of [`LEVELS`] entries,
/// the palette.
pub(crate) struct Colours {
    lo: f64,
    scale: f64,
    lut: Box<[u8; LEVELS]>,
    bad: u8,
    pub(crate) palette: Vec<[u8; 3]>,
}

impl Colours {
    /// The palette of `opts`' colour map: 256 levels, or 255 and the bad colour last when
    /// `has_bad`; levels are even steps of the stretched value.
    pub(crate) fn new(opts: &PreviewOptions, limits: Option<(f64, f64)>, has_bad: bool) -> Colours {
        let map = opts.colormap;
        let n = if has_bad { 255 } else { 256 };
        let top = (n - 1) as f64;
        let mut palette: Vec<[u8; 3]> = (0..n).map(|k| map.color(k as f64 / top)).collect();
        if has_bad {
            palette.push(map.bad());
        }
        let mut lut = Box::new([0u8; LEVELS]);
        for (i, l) in lut.iter_mut().enumerate() {
            let y = opts.stretch.apply(i as f64 / (LEVELS - 1) as f64);
            *l = (y * top).round().clamp(0.0, top) as u8;
        }
        let (lo, hi) = limits.unwrap_or((0.0, 1.0));
        let span = hi - lo;
        let scale = if span > 0.0 && span.is_finite() {
            (LEVELS - 1) as f64 / span
        } else {
            0.0
        };
        Colours {
            lo,
            scale,
            lut,
            bad: if has_bad { 255 } else { 0 },
            palette,
        }
    }

    /// The palette indices of `values` into `out`.
    pub(crate) fn map(&self, values: &[f64], out: &mut [u8]) {
        let top = (LEVELS - 1) as f64 + 0.5;
        let lut: &[u8; LEVELS] = &self.lut;
        for (o, &v) in out.iter_mut().zip(values) {
            // the nearest level, clamped (a NaN is put at 0.5 by `max`, then replaced)
            let x = ((v - self.lo) * self.scale + 0.5).max(0.5).min(top);
            let k = lut[x as usize & (LEVELS - 1)];
            *o = if v.is_nan() { self.bad } else { k };
        }
    }
}

/// An 8-bit paletted PNG of `idx` (`height` rows of `width` indices, top row first) written to
/// `out`: deflated when that pays (judged on a sample of rows), else stored.
fn write_indexed(
    out: &mut dyn Write,
    idx: &[u8],
    width: u32,
    height: u32,
    palette: &[[u8; 3]],
) -> Result<(), PreviewError> {
    let compress = worth_compressing(idx, width as usize, palette)?;
    encode_indexed(out, idx, width, height, palette, compress)
}

fn encode_indexed(
    out: &mut dyn Write,
    idx: &[u8],
    width: u32,
    height: u32,
    palette: &[[u8; 3]],
    compress: bool,
) -> Result<(), PreviewError> {
    let err = |e: png::EncodingError| match e {
        png::EncodingError::IoError(e) => PreviewError::Write(e),
        e => PreviewError::Encode(e.to_string()),
    };
    let mut enc = png::Encoder::new(out, width, height);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_palette(palette.concat());
    if compress {
        enc.set_compression(png::Compression::Fast);
    } else {
        enc.set_compression(png::Compression::NoCompression);
        enc.set_filter(png::Filter::NoFilter);
    }
    let mut w = enc.write_header().map_err(err)?;
    // rows streamed into IDAT chunks of 1 MiB as they are deflated (or stored)
    let mut s = w.stream_writer_with_size(1 << 20).map_err(err)?;
    s.write_all(idx).map_err(PreviewError::Write)?;
    s.finish().map_err(err)?;
    w.finish().map_err(err)
}

/// Whether deflate shrinks the image by a tenth or more, judged on a sample of its rows (every
/// n-th, about 64 KiB): a noisy image at full size hardly compresses, and is then stored.
fn worth_compressing(idx: &[u8], width: usize, palette: &[[u8; 3]]) -> Result<bool, PreviewError> {
    let width = width.max(1);
    let rows = idx.len() / width;
    let want = (65536 / width).clamp(1, rows.max(1));
    if rows <= want {
        return Ok(true);
    }
    let step = rows / want;
    let sample: Vec<u8> = idx
        .chunks_exact(width)
        .step_by(step)
        .flatten()
        .copied()
        .collect();
    let n = (sample.len() / width) as u32;
    let mut out = Vec::with_capacity(sample.len() + 4096);
    encode_indexed(&mut out, &sample, width as u32, n, palette, true)?;
    Ok((out.len() as f64) < 0.9 * sample.len() as f64)
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
    fn block_averages_skip_bad_pixels() {
        // two rows of 5 in blocks of 2 x 2: [1, NaN | 3, 4 | 5] over [NaN, 2 | NaN, NaN | 6]
        let mut cs = [0.0; 5];
        let mut cn = [0u32; 5];
        assert_eq!(
            add_row(&[1.0, f64::NAN, 3.0, 4.0, 5.0], &mut cs, &mut cn),
            4
        );
        assert_eq!(
            add_row(&[f64::NAN, 2.0, f64::NAN, f64::NAN, 6.0], &mut cs, &mut cn),
            2
        );
        assert_eq!(cs, [1.0, 2.0, 3.0, 4.0, 11.0]);
        assert_eq!(cn, [1, 1, 1, 1, 2]);
        let mut avg = [0.0; 3];
        block_averages(&cs, &cn, 2, &mut avg);
        assert_eq!(avg, [1.5, 3.5, 5.5]);
        // a block without a good value is NaN
        block_averages(&[0.0, 0.0, 1.0], &[0, 0, 1], 2, &mut avg[..2]);
        assert!(avg[0].is_nan() && avg[1] == 1.0);
    }

    #[test]
    fn colours_are_levels_of_the_stretched_map() {
        let o = PreviewOptions::default();
        // grey without bad pixels: 256 levels, index k is grey k
        let c = Colours::new(&o, Some((0.0, 10.0)), false);
        assert_eq!(c.palette.len(), 256);
        assert_eq!(c.palette[0], [0, 0, 0]);
        assert_eq!(c.palette[128], [128, 128, 128]);
        assert_eq!(c.palette[255], [255, 255, 255]);
        let mut out = [0u8; 5];
        c.map(&[-5.0, 0.0, 5.0, 10.0, 99.0], &mut out);
        assert_eq!(out, [0, 0, 128, 255, 255]);
        // with bad pixels: 255 levels, the bad colour last
        let c = Colours::new(&o, Some((0.0, 10.0)), true);
        assert_eq!(c.palette.len(), 256);
        assert_eq!(c.palette[255], crate::Colormap::Grey.bad());
        assert_eq!(c.palette[254], [255, 255, 255]);
        c.map(&[f64::NAN, 10.0, 0.0], &mut out[..3]);
        assert_eq!(out[..3], [255, 254, 0]);
        // equal limits: everything at the bottom of the map
        let c = Colours::new(&o, Some((3.0, 3.0)), false);
        c.map(&[3.0, 4.0], &mut out[..2]);
        assert_eq!(out[..2], [0, 0]);
        // the stretch is applied before the map's levels: log(1000 x + 1) / log(1001) of
        // x = 0.01 (164 of 16383 levels) is 0.3472..., level 89 of 255
        let o = PreviewOptions {
            stretch: crate::Stretch::Log,
            ..PreviewOptions::default()
        };
        let c = Colours::new(&o, Some((0.0, 1.0)), false);
        c.map(&[0.01], &mut out[..1]);
        assert_eq!(out[0], 89);
    }
}
