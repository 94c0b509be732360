//! Line and scatter plots with axes, ticks and labels: SVG as vectors and text, PNG drawn
//! here with an 8x8 bitmap font.

use std::fmt::Write as _;

use crate::image::encode_png;
use crate::{Format, PreviewError};

/// The points of a plot (NaN `y`: a gap in the line).
pub(crate) struct Series {
    pub(crate) x: Vec<f64>,
    pub(crate) y: Vec<f64>,
}

/// A plot of one series.
pub(crate) struct Plot {
    pub(crate) title: String,
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    pub(crate) series: Series,
    /// Width and height in pixels.
    pub(crate) size: (u32, u32),
}

const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 44.0;
/// matplotlib's first colour (`C0`).
const LINE: [u8; 3] = [31, 119, 180];

/// Where the data go: the plot area in pixels and the data ranges.
struct Frame {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    xr: (f64, f64),
    yr: (f64, f64),
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        self.x0 + (x - self.xr.0) / (self.xr.1 - self.xr.0) * self.w
    }
    fn py(&self, y: f64) -> f64 {
        self.y0 + self.h - (y - self.yr.0) / (self.yr.1 - self.yr.0) * self.h
    }
}

/// The finite range of `v`, widened when it is one value; `(0, 1)` for none.
fn range(v: &[f64]) -> (f64, f64) {
    let (lo, hi) = v
        .iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    if lo == hi {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - d, hi + d);
    }
    let pad = (hi - lo) * 0.04;
    (lo - pad, hi + pad)
}

/// About `target` round tick values (1, 2 or 5 times a power of ten) within `r`, and the
/// step between them.
pub(crate) fn ticks(r: (f64, f64), target: usize) -> (Vec<f64>, f64) {
    let span = r.1 - r.0;
    if !(span.is_finite() && span > 0.0) {
        return (vec![r.0], 1.0);
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (r.0 / step).ceil() as i64;
    let last = (r.1 / step).floor() as i64;
    let out = (first..=last).take(50).map(|k| k as f64 * step).collect();
    (out, step)
}

/// A tick label: as few decimals as the step needs, exponents for very large or small.
pub(crate) fn tick_text(v: f64, step: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e6).contains(&a) {
        return format!("{v:.2e}");
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let s = format!("{v:.decimals$}");
    if s == "-0" || s.starts_with("-0.") && s.trim_start_matches("-0.").chars().all(|c| c == '0') {
        s[1..].to_string()
    } else {
        s
    }
}

impl Plot {
    fn frame(&self) -> Frame {
        let (w, h) = (
            f64::from(self.size.0.max(200)),
            f64::from(self.size.1.max(150)),
        );
        Frame {
            x0: LEFT,
            y0: TOP,
            w: w - LEFT - RIGHT,
            h: h - TOP - BOTTOM,
            xr: range(&self.series.x),
            yr: range(&self.series.y),
        }
    }

    /// Whether `x` never decreases (a line); else the points are a scatter.
    fn is_line(&self) -> bool {
        self.series
            .x
            .windows(2)
            .all(|w| w[1] >= w[0] || w[1].is_nan() || w[0].is_nan())
    }

    /// The runs of points to join, each in pixels, thinned to the min and max of each pixel
    /// column when there are many more points than columns.
    fn runs(&self, f: &Frame) -> Vec<Vec<(f64, f64)>> {
        let mut runs = Vec::new();
        let mut cur: Vec<(f64, f64)> = Vec::new();
        // per pixel column: (column, min y, max y) of the run so far
        let thin = self.series.x.len() > 4 * f.w as usize;
        let mut col: Option<(i64, f64, f64)> = None;
        let flush = |cur: &mut Vec<(f64, f64)>, col: &mut Option<(i64, f64, f64)>| {
            if let Some((c, lo, hi)) = col.take() {
                cur.push((c as f64, lo));
                if hi != lo {
                    cur.push((c as f64, hi));
                }
            }
        };
        for (&x, &y) in self.series.x.iter().zip(&self.series.y) {
            if !(x.is_finite() && y.is_finite()) {
                flush(&mut cur, &mut col);
                if !cur.is_empty() {
                    runs.push(std::mem::take(&mut cur));
                }
                continue;
            }
            let (px, py) = (f.px(x), f.py(y));
            if thin {
                let c = px.round() as i64;
                match &mut col {
                    Some((cc, lo, hi)) if *cc == c => {
                        *lo = lo.min(py);
                        *hi = hi.max(py);
                    }
                    _ => {
                        flush(&mut cur, &mut col);
                        col = Some((c, py, py));
                    }
                }
            } else {
                cur.push((px, py));
            }
        }
        flush(&mut cur, &mut col);
        if !cur.is_empty() {
            runs.push(cur);
        }
        runs
    }

    pub(crate) fn render(&self, format: Format) -> Result<Vec<u8>, PreviewError> {
        match format {
            Format::Svg => Ok(self.svg().into_bytes()),
            Format::Png => {
                let mut c = Canvas::new(self.size.0.max(200), self.size.1.max(150));
                self.draw(&mut c);
                encode_png(&c.rgb, c.w, c.h)
            }
        }
    }

    fn svg(&self) -> String {
        let f = self.frame();
        let (w, h) = (f.x0 + f.w + RIGHT, f.y0 + f.h + BOTTOM);
        let mut s = String::new();
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        );
        let (xt, xs) = ticks(f.xr, 6);
        let (yt, ys) = ticks(f.yr, 5);
        for &t in &xt {
            let x = f.px(t);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.2}\" y1=\"{:.2}\" x2=\"{x:.2}\" y2=\"{:.2}\" stroke=\"#ddd\"/>\
                 <text x=\"{x:.2}\" y=\"{:.2}\" text-anchor=\"middle\">{}</text>",
                f.y0,
                f.y0 + f.h,
                f.y0 + f.h + 16.0,
                esc(&tick_text(t, xs))
            );
        }
        for &t in &yt {
            let y = f.py(t);
            let _ = writeln!(
                s,
                "<line x1=\"{:.2}\" y1=\"{y:.2}\" x2=\"{:.2}\" y2=\"{y:.2}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"end\">{}</text>",
                f.x0,
                f.x0 + f.w,
                f.x0 - 6.0,
                y + 4.0,
                esc(&tick_text(t, ys))
            );
        }
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"none\" stroke=\"black\"/>",
            f.x0, f.y0, f.w, f.h
        );
        let color = format!("#{:02x}{:02x}{:02x}", LINE[0], LINE[1], LINE[2]);
        if self.is_line() {
            for run in self.runs(&f) {
                let pts: Vec<String> = run.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
                let _ = writeln!(
                    s,
                    "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.2\" points=\"{}\"/>",
                    pts.join(" ")
                );
            }
        } else {
            for (&x, &y) in self.series.x.iter().zip(&self.series.y) {
                if x.is_finite() && y.is_finite() {
                    let _ = writeln!(
                        s,
                        "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"2\" fill=\"{color}\"/>",
                        f.px(x),
                        f.py(y)
                    );
                }
            }
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.2}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n\
             <text x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"middle\">{}</text>\n\
             <text transform=\"translate(16 {:.2}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n</svg>",
            f.x0 + f.w / 2.0,
            esc(&self.title),
            f.x0 + f.w / 2.0,
            h - 8.0,
            esc(&self.x_label),
            f.y0 + f.h / 2.0,
            esc(&self.y_label)
        );
        s
    }

    fn draw(&self, c: &mut Canvas) {
        let f = self.frame();
        let grid = [221, 221, 221];
        let black = [0, 0, 0];
        let (xt, xs) = ticks(f.xr, 6);
        let (yt, ys) = ticks(f.yr, 5);
        for &t in &xt {
            let x = f.px(t);
            c.line((x, f.y0), (x, f.y0 + f.h), grid);
            let text = tick_text(t, xs);
            c.text(&text, x - 4.0 * text.len() as f64, f.y0 + f.h + 6.0, black);
        }
        for &t in &yt {
            let y = f.py(t);
            c.line((f.x0, y), (f.x0 + f.w, y), grid);
            let text = tick_text(t, ys);
            c.text(&text, f.x0 - 6.0 - 8.0 * text.len() as f64, y - 4.0, black);
        }
        let (x1, y1) = (f.x0 + f.w, f.y0 + f.h);
        c.line((f.x0, f.y0), (x1, f.y0), black);
        c.line((f.x0, y1), (x1, y1), black);
        c.line((f.x0, f.y0), (f.x0, y1), black);
        c.line((x1, f.y0), (x1, y1), black);
        if self.is_line() {
            for run in self.runs(&f) {
                if run.len() == 1 {
                    c.dot(run[0], LINE);
                }
                for w in run.windows(2) {
                    c.line(w[0], w[1], LINE);
                }
            }
        } else {
            for (&x, &y) in self.series.x.iter().zip(&self.series.y) {
                if x.is_finite() && y.is_finite() {
                    c.dot((f.px(x), f.py(y)), LINE);
                }
            }
        }
        let mid = f.x0 + f.w / 2.0;
        c.text(&self.title, mid - 4.0 * self.title.len() as f64, 8.0, black);
        c.text(
            &self.x_label,
            mid - 4.0 * self.x_label.len() as f64,
            y1 + 24.0,
            black,
        );
        let ymid = f.y0 + f.h / 2.0 + 4.0 * self.y_label.len() as f64;
        c.text_up(&self.y_label, 6.0, ymid, black);
    }
}

/// `&`, `<`, `>` and `"` escaped for SVG text and attributes.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An RGB raster, white to start with.
struct Canvas {
    w: u32,
    h: u32,
    rgb: Vec<u8>,
}

impl Canvas {
    fn new(w: u32, h: u32) -> Canvas {
        Canvas {
            w,
            h,
            rgb: vec![255; w as usize * h as usize * 3],
        }
    }

    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && x < i64::from(self.w) && y < i64::from(self.h) {
            let i = (y as usize * self.w as usize + x as usize) * 3;
            self.rgb[i..i + 3].copy_from_slice(&c);
        }
    }

    /// A one-pixel line (Bresenham).
    fn line(&mut self, a: (f64, f64), b: (f64, f64), c: [u8; 3]) {
        let clampi = |v: f64| v.round().clamp(-1e6, 1e6) as i64;
        let (mut x0, mut y0, x1, y1) = (clampi(a.0), clampi(a.1), clampi(b.0), clampi(b.1));
        let dx = (x1 - x0).abs();
        let dy = -(y1 - y0).abs();
        let sx = if x0 < x1 { 1 } else { -1 };
        let sy = if y0 < y1 { 1 } else { -1 };
        let mut err = dx + dy;
        for _ in 0..=(dx - dy) {
            self.set(x0, y0, c);
            if x0 == x1 && y0 == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x0 += sx;
            }
            if e2 <= dx {
                err += dx;
                y0 += sy;
            }
        }
    }

    /// A 3x3 dot.
    fn dot(&mut self, p: (f64, f64), c: [u8; 3]) {
        let (x, y) = (p.0.round() as i64, p.1.round() as i64);
        for dy in -1..=1 {
            for dx in -1..=1 {
                self.set(x + dx, y + dy, c);
            }
        }
    }

    fn glyph(ch: char) -> [u8; 8] {
        let i = if ch.is_ascii() {
            ch as usize
        } else {
            '?' as usize
        };
        font8x8::legacy::BASIC_LEGACY[i]
    }

    /// Text left to right, its top-left corner at `(x, y)`.
    fn text(&mut self, s: &str, x: f64, y: f64, c: [u8; 3]) {
        let (x, y) = (x.round() as i64, y.round() as i64);
        for (k, ch) in s.chars().enumerate() {
            let g = Self::glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        self.set(x + 8 * k as i64 + col, y + row as i64, c);
                    }
                }
            }
        }
    }

    /// Text bottom to top (a vertical axis label), its bottom-left corner at `(x, y)`.
    fn text_up(&mut self, s: &str, x: f64, y: f64, c: [u8; 3]) {
        let (x, y) = (x.round() as i64, y.round() as i64);
        for (k, ch) in s.chars().enumerate() {
            let g = Self::glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        self.set(x + row as i64, y - 8 * k as i64 - col, c);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        let (t, s) = ticks((0.0, 10.0), 5);
        assert_eq!(s, 2.0);
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        // a span of 0.2 in about 5 steps: 0.04, rounded up to 0.05
        let (t, s) = ticks((-0.03, 0.17), 5);
        assert_eq!((t.len(), s), (4, 0.05));
        assert!((t[3] - 0.15).abs() < 1e-12);
        assert_eq!(tick_text(0.05, 0.05), "0.05");
        assert_eq!(tick_text(-0.0, 0.05), "0.00");
        assert_eq!(tick_text(2.5e7, 1e7), "2.50e7");
    }
}
