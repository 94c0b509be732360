//! Colour maps and stretches: a value in 0..1 to a colour.

use crate::{Colormap, Stretch};

impl Stretch {
    /// The stretch of `x` in 0..1, as `astropy.visualization`'s stretch classes with their
    /// default parameters compute it.
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Stretch::Linear => x,
            Stretch::Sqrt => x.sqrt(),
            Stretch::Log => {
                let a = 1000.0_f64;
                (a * x + 1.0).ln() / (a + 1.0).ln()
            }
            Stretch::Asinh => {
                let a = 0.1_f64;
                (x / a).asinh() / (1.0 / a).asinh()
            }
        }
    }
}

/// R's `viridisLite::viridis(9)`: matplotlib's viridis at 0, 1/8, ..., 1.
const VIRIDIS: [[u8; 3]; 9] = [
    [0x44, 0x01, 0x54],
    [0x47, 0x2D, 0x7B],
    [0x3B, 0x52, 0x8B],
    [0x2C, 0x72, 0x8E],
    [0x21, 0x90, 0x8C],
    [0x27, 0xAD, 0x81],
    [0x5D, 0xC8, 0x63],
    [0xAA, 0xDC, 0x32],
    [0xFD, 0xE7, 0x25],
];

/// R's `viridisLite::inferno(10)`: matplotlib's inferno at 0, 1/9, ..., 1.
const INFERNO: [[u8; 3]; 10] = [
    [0x00, 0x00, 0x04],
    [0x1B, 0x0C, 0x42],
    [0x4B, 0x0C, 0x6B],
    [0x78, 0x1C, 0x6D],
    [0xA5, 0x2C, 0x60],
    [0xCF, 0x44, 0x46],
    [0xED, 0x69, 0x25],
    [0xFB, 0x9A, 0x06],
    [0xF7, 0xD0, 0x3C],
    [0xFC, 0xFF, 0xA4],
];

/// Linear interpolation in a table of evenly spaced colours.
fn from_table(table: &[[u8; 3]], x: f64) -> [u8; 3] {
    let last = table.len() - 1;
    let pos = x * last as f64;
    let i = (pos.floor() as usize).min(last - 1);
    let t = pos - i as f64;
    let mut out = [0u8; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let a = f64::from(table[i][c]);
        let b = f64::from(table[i + 1][c]);
        *o = (a + (b - a) * t).round().clamp(0.0, 255.0) as u8;
    }
    out
}

/// Piecewise-linear channel through `(x, y)` points sorted by `x`.
fn ramp(points: &[(f64, f64)], x: f64) -> u8 {
    let mut y = points[points.len() - 1].1;
    for w in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x <= x1 {
            y = if x1 > x0 {
                y0 + (y1 - y0) * (x - x0) / (x1 - x0)
            } else {
                y1
            };
            break;
        }
    }
    (y * 255.0).round().clamp(0.0, 255.0) as u8
}

impl Colormap {
    /// The colour of `x` in 0..1 (clamped).
    pub fn color(self, x: f64) -> [u8; 3] {
        let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        match self {
            Colormap::Grey => {
                let v = (x * 255.0).round() as u8;
                [v, v, v]
            }
            Colormap::Viridis => from_table(&VIRIDIS, x),
            Colormap::Inferno => from_table(&INFERNO, x),
            // ds9's heat
            Colormap::Heat => [
                ramp(&[(0.0, 0.0), (0.34, 1.0), (1.0, 1.0)], x),
                ramp(&[(0.0, 0.0), (1.0, 1.0)], x),
                ramp(&[(0.0, 0.0), (0.65, 0.0), (0.98, 1.0), (1.0, 1.0)], x),
            ],
            Colormap::Cool => [
                (x * 255.0).round() as u8,
                ((1.0 - x) * 255.0).round() as u8,
                255,
            ],
        }
    }

    /// The colour of NaN, infinite and masked pixels: one the map never gives.
    pub fn bad(self) -> [u8; 3] {
        match self {
            Colormap::Grey | Colormap::Viridis => [255, 0, 0],
            Colormap::Inferno | Colormap::Heat => [0, 255, 255],
            Colormap::Cool => [0, 0, 0],
        }
    }

    /// The map named `name` (`grey`/`gray`, `viridis`, `inferno`, `heat`, `cool`).
    pub fn from_name(name: &str) -> Option<Colormap> {
        Some(match name.to_ascii_lowercase().as_str() {
            "grey" | "gray" | "greys" | "grays" => Colormap::Grey,
            "viridis" => Colormap::Viridis,
            "inferno" => Colormap::Inferno,
            "heat" => Colormap::Heat,
            "cool" => Colormap::Cool,
            _ => return None,
        })
    }

    /// The names [`Colormap::from_name`] takes (one per map).
    pub const NAMES: [&'static str; 5] = ["grey", "viridis", "inferno", "heat", "cool"];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_are_astropys() {
        // astropy: LogStretch()(0.5) = log(501)/log(1001); AsinhStretch()(0.5) = asinh(5)/asinh(10)
        assert!((Stretch::Log.apply(0.5) - 501f64.ln() / 1001f64.ln()).abs() < 1e-15);
        assert!((Stretch::Asinh.apply(0.5) - 5f64.asinh() / 10f64.asinh()).abs() < 1e-15);
        assert_eq!(Stretch::Sqrt.apply(0.25), 0.5);
        for s in [Stretch::Linear, Stretch::Sqrt, Stretch::Log, Stretch::Asinh] {
            assert!(s.apply(0.0).abs() < 1e-15 && (s.apply(1.0) - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn bad_colours_are_not_in_the_maps() {
        for name in Colormap::NAMES {
            let map = Colormap::from_name(name).expect("a map");
            let bad = map.bad();
            assert!(
                (0..=1000).all(|i| map.color(i as f64 / 1000.0) != bad),
                "{name}"
            );
        }
        assert_eq!(Colormap::Viridis.color(0.0), [0x44, 0x01, 0x54]);
        assert_eq!(Colormap::Viridis.color(1.0), [0xFD, 0xE7, 0x25]);
    }
}
