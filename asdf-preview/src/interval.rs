//! The limits of an image: zscale (IRAF's algorithm as astropy's `ZScaleInterval` implements
//! it), min/max and central percentiles of the finite values.

use crate::{Interval, ZScale};

impl Interval {
    /// The display limits `(vmin, vmax)` of `values` (the finite, unmasked pixel values in C
    /// order, as astropy's intervals see them after dropping NaN, infinities and masked
    /// pixels). `None` when there are no values.
    pub fn limits(&self, values: &[f64]) -> Option<(f64, f64)> {
        if values.is_empty() {
            return None;
        }
        match self {
            Interval::ZScale(z) => z.limits(values),
            Interval::MinMax => {
                let (lo, hi) = values
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                        (lo.min(v), hi.max(v))
                    });
                Some((lo, hi))
            }
            Interval::Percent(p) => {
                let mut v = values.to_vec();
                Some(percentiles(&mut v, *p))
            }
        }
    }
}

/// The limits of astropy's `PercentileInterval(p)` of non-empty `values` (reordered):
/// numpy's percentiles `(100 - p) / 2` and `100 - (100 - p) / 2`.
pub(crate) fn percentiles(values: &mut [f64], p: f64) -> (f64, f64) {
    let p = p.clamp(0.0, 100.0);
    let lower = (100.0 - p) * 0.5;
    (percentile(values, lower), percentile(values, 100.0 - lower))
}

/// numpy's `percentile` (method `linear`) of non-empty values (reordered: the two values
/// it lies between are selected, not the whole sorted).
fn percentile(values: &mut [f64], q: f64) -> f64 {
    let n = values.len();
    let pos = q / 100.0 * (n - 1) as f64;
    let below = (pos.floor() as usize).min(n - 1);
    let above = (below + 1).min(n - 1);
    let frac = pos - below as f64;
    let (_, a, rest) = values.select_nth_unstable_by(below, f64::total_cmp);
    let a = *a;
    let b = if above > below {
        rest.iter().copied().min_by(f64::total_cmp).unwrap_or(a)
    } else {
        a
    };
    // numpy's lerp: a + (b - a) * t, from the other end when t >= 0.5
    if frac >= 0.5 {
        b - (b - a) * (1.0 - frac)
    } else {
        a + (b - a) * frac
    }
}

impl ZScale {
    /// The zscale limits of `values` (finite values in C order), step for step as astropy's
    /// `ZScaleInterval.get_limits`: every `stride`-th value sampled (at most `n_samples`),
    /// sorted; a line fitted to the sorted samples with iterative k-sigma rejection (the
    /// rejected set grown by a window of 1% of the samples); limits `median ∓` the slope
    /// over `contrast`, within the samples' range. `None` for no values.
    pub fn limits(&self, values: &[f64]) -> Option<(f64, f64)> {
        let stride = self.stride(values.len());
        let samples: Vec<f64> = values
            .iter()
            .step_by(stride)
            .take(self.n_samples.max(1))
            .copied()
            .collect();
        self.limits_of_samples(samples)
    }

    /// astropy's sampling stride for `n` finite values: `int(max(1, n / n_samples))`.
    pub(crate) fn stride(&self, n: usize) -> usize {
        ((n as f64 / self.n_samples.max(1) as f64).max(1.0)) as usize
    }

    /// The limits from the samples [`ZScale::limits`] takes (every `stride`-th finite
    /// value, at most `n_samples`, in any order). `None` for no samples.
    pub(crate) fn limits_of_samples(&self, mut samples: Vec<f64>) -> Option<(f64, f64)> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_by(f64::total_cmp);
        let npix = samples.len();
        let mut vmin = samples[0];
        let mut vmax = samples[npix - 1];

        let minpix = self
            .min_npixels
            .max((npix as f64 * self.max_reject) as usize);
        let mut ngoodpix = npix;
        let mut last_ngoodpix = npix + 1;
        let mut badpix = vec![false; npix];
        let ngrow = ((npix as f64 * 0.01) as usize).max(1);
        let mut slope = None;

        for _ in 0..self.max_iterations {
            if ngoodpix >= last_ngoodpix || ngoodpix < minpix {
                break;
            }
            let Some((s, intercept)) = fit_line(&samples, &badpix) else {
                break;
            };
            slope = Some(s);
            // the residuals of the good samples and their (population) standard deviation
            let flat: Vec<f64> = samples
                .iter()
                .enumerate()
                .map(|(i, &y)| y - (s * i as f64 + intercept))
                .collect();
            let threshold = self.krej * std_of_good(&flat, &badpix);
            for (bad, &f) in badpix.iter_mut().zip(&flat) {
                if f < -threshold || f > threshold {
                    *bad = true;
                }
            }
            badpix = grow(&badpix, ngrow);
            last_ngoodpix = ngoodpix;
            ngoodpix = badpix.iter().filter(|b| !**b).count();
        }

        if ngoodpix >= minpix {
            if let Some(mut s) = slope {
                if self.contrast > 0.0 {
                    s /= self.contrast;
                }
                let center = (npix - 1) / 2;
                let median = if npix % 2 == 1 {
                    samples[npix / 2]
                } else {
                    (samples[npix / 2 - 1] + samples[npix / 2]) / 2.0
                };
                vmin = vmin.max(median - (center as f64 - 1.0) * s);
                vmax = vmax.min(median + (npix - center) as f64 * s);
            }
        }
        Some((vmin, vmax))
    }
}

/// Least-squares line `y = slope * i + intercept` through the samples not marked bad (as
/// `np.polyfit(x, y, 1, w=~bad)`, whose 0/1 weights leave out the bad ones); `None` with
/// fewer than two good samples.
fn fit_line(y: &[f64], bad: &[bool]) -> Option<(f64, f64)> {
    let good = || y.iter().enumerate().filter(|(i, _)| !bad[*i]);
    let n = good().count();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let (sx, sy) = good().fold((0.0, 0.0), |(sx, sy), (i, &v)| (sx + i as f64, sy + v));
    let (mx, my) = (sx / nf, sy / nf);
    let (sxx, sxy) = good().fold((0.0, 0.0), |(sxx, sxy), (i, &v)| {
        let dx = i as f64 - mx;
        (sxx + dx * dx, sxy + dx * (v - my))
    });
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some((slope, my - slope * mx))
}

/// The population standard deviation of the values not marked bad.
fn std_of_good(flat: &[f64], bad: &[bool]) -> f64 {
    let good: Vec<f64> = flat
        .iter()
        .zip(bad)
        .filter(|(_, b)| !**b)
        .map(|(v, _)| *v)
        .collect();
    if good.is_empty() {
        return f64::NAN;
    }
    let n = good.len() as f64;
    let mean = good.iter().sum::<f64>() / n;
    (good.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt()
}

/// `np.convolve(bad, np.ones(ngrow, bool), mode="same")`: sample `i` is bad when any of
/// `i - ngrow/2 ..= i + ngrow - 1 - ngrow/2` was.
fn grow(bad: &[bool], ngrow: usize) -> Vec<bool> {
    let n = bad.len();
    let left = ngrow / 2;
    let right = ngrow - 1 - left;
    // prefix counts of bad samples
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0usize);
    for &b in bad {
        let last = *prefix.last().unwrap_or(&0);
        prefix.push(last + usize::from(b));
    }
    (0..n)
        .map(|i| {
            let lo = i.saturating_sub(left);
            let hi = (i + right).min(n - 1);
            prefix[hi + 1] > prefix[lo]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_numpys_linear_one() {
        // np.percentile([1, 2, 3, 4], [25, 50, 90]) == [1.75, 2.5, 3.7]
        // (in any order: the two values each lies between are selected)
        let mut s = [3.0, 1.0, 4.0, 2.0];
        assert!((percentile(&mut s, 25.0) - 1.75).abs() < 1e-12);
        assert!((percentile(&mut s, 50.0) - 2.5).abs() < 1e-12);
        assert!((percentile(&mut s, 90.0) - 3.7).abs() < 1e-12);
        assert_eq!(percentile(&mut [5.0], 90.0), 5.0);
        assert_eq!(percentiles(&mut [4.0, 1.0, 3.0, 2.0], 100.0), (1.0, 4.0));
    }

    #[test]
    fn grow_is_numpys_same_convolution() {
        // np.convolve([0,0,0,1,0,0,0,0], np.ones(4, bool), "same") marks indices 2..=5
        let bad = [false, false, false, true, false, false, false, false];
        let got: Vec<usize> = grow(&bad, 4)
            .iter()
            .enumerate()
            .filter(|(_, b)| **b)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(got, vec![2, 3, 4, 5]);
        // odd kernel of 3: one each side
        let got: Vec<bool> = grow(&bad, 3);
        assert_eq!(
            got,
            vec![false, false, true, true, true, false, false, false]
        );
    }

    #[test]
    fn a_line_fits_exactly() {
        let y: Vec<f64> = (0..10).map(|i| 3.0 * i as f64 + 1.0).collect();
        let (s, c) = fit_line(&y, &[false; 10]).expect("a fit");
        assert!((s - 3.0).abs() < 1e-12 && (c - 1.0).abs() < 1e-12);
    }

    #[test]
    fn minmax_and_empty() {
        assert_eq!(
            Interval::MinMax.limits(&[3.0, -1.0, 2.0]),
            Some((-1.0, 3.0))
        );
        assert_eq!(Interval::default().limits(&[]), None);
    }
}
