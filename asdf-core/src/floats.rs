//! The text of floats: one function per purpose, each named for it. Every place that turns
//! an `f64` of a tree into text goes through one of these.
//!
//! | purpose | rule | function |
//! |---|---|---|
//! | the YAML emitter: text python asdf reads back as the same float | python's `repr` with PyYAML's changes (`.nan`, `.inf`, `1.0e+16`), a fast path for short decimals | [`push_yaml`] |
//! | shown to people (messages, `info`, diffs, search, keys in paths) and inline arrays of strings | python's `repr(float)`: `1.0`, `1e+16`, `nan`, `-inf` | [`python_repr`] |
//! | canonical JSON (docs/canonical.md; compared byte for byte with the committed sidecars) | [`json_number`] for finite values, `{"$float": "nan"}` etc. for the others | [`push_canonical_json`] |
//! | a JSON number in other JSON output (`asdftool info --json`, schema values) | Rust's shortest round-trip text, always with a `.` or an exponent (`2.0`, `1e16`, `1e-7`) | [`json_number`] |
//!
//! `repr(complex)`, built from [`push_python_repr`], is in `yaml::pytext`.

use std::fmt::Write as _;

/// The YAML emitter's rule, which python asdf reads back as the same float: python's
/// `repr(float)` with PyYAML's changes: `.nan`, `.inf`, `-.inf`, and `.0` inserted
/// before an exponent without a dot (`1.0e+16`).
pub(crate) fn push_yaml(out: &mut String, scratch: &mut String, x: f64) {
    if !push_short_float(out, x) {
        push_float_general(out, scratch, x);
    }
}

/// The common case of short decimals (`0.37`, `12.5`, `3.0`) without the general shortest-
/// digits algorithm. At `k` decimal places the decimals that read back as `x` lie in an
/// interval about `10^k · ulp(x)` wide; while that is below a quarter (and `x · 10^k` is
/// computed with an error below an eighth), at most one integer `m` qualifies and it is
/// `x · 10^k` rounded. The first `k` with `m / 10^k == x` gives the shortest digits, which
/// `repr` writes positionally at these magnitudes. Returns false to leave the rest to the
/// general path.
pub(crate) fn push_short_float(out: &mut String, x: f64) -> bool {
    const LIMIT: f64 = 1_125_899_906_842_624.0; // 2^50
    let a = x.abs();
    if !(1e-4..1e15).contains(&a) {
        return false;
    }
    let ulp = f64::from_bits(a.to_bits() + 1) - a;
    let mut p = 1.0f64;
    for k in 0..9usize {
        let t = a * p;
        if t >= LIMIT || p * ulp >= 0.25 {
            return false;
        }
        // Round half up through an integer conversion (`f64::round` is a libm call).
        let digits = (t + 0.5) as u64;
        let m = digits as f64;
        // `m` can only read back as `x` if `|m - x·10^k| ≤ 10^k·ulp(x)/2`, and `t` is within
        // `ulp(t)/2` of `x·10^k`: a cheap test (with a margin) before the division.
        let ulp_t = f64::from_bits(t.to_bits() + 1) - t;
        if (t - m).abs() <= p * ulp + ulp_t && m / p == a {
            if x < 0.0 {
                out.push('-');
            }
            let mut buf = [0u8; 20];
            let d = u64_digits(digits, &mut buf);
            if k == 0 {
                out.push_str(d);
                out.push_str(".0");
            } else if d.len() <= k {
                out.push_str("0.");
                for _ in d.len()..k {
                    out.push('0');
                }
                out.push_str(d);
            } else {
                let (int, frac) = d.split_at(d.len() - k);
                out.push_str(int);
                out.push('.');
                out.push_str(frac);
            }
            return true;
        }
        p *= 10.0;
    }
    false
}

/// [`push_yaml`] through python's `repr` ([`push_repr`]), with PyYAML's changes.
pub(crate) fn push_float_general(out: &mut String, scratch: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str(".nan");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { ".inf" } else { "-.inf" });
        return;
    }
    let start = out.len();
    push_repr(out, scratch, x, true);
    let Some(e) = out[start..].find('e').map(|i| start + i) else {
        return;
    };
    // PyYAML writes a bare exponent's mantissa with `.0` (`1e+16` -> `1.0e+16`).
    if !out[start..e].contains('.') {
        out.insert_str(e, ".0");
    }
    // `d.de-XXX` (8 characters, `-` at index 4) is taken by our resolver for a timestamp
    // and read as a string (PyYAML reads a float): `d.d0e-XXX` is the same float either way.
    let e = out[start..].find('e').map_or(out.len(), |i| start + i);
    if x > 0.0 && e - start == 3 && out[e + 1..].starts_with('-') && out.len() - e >= 5 {
        out.insert(e, '0');
    }
}

/// Python's `repr` of a finite `x`: the shortest digits that read back as `x`, positional
/// for decimal exponents -4 ..= 15, else `d.ddde±XX`. `dot0` adds `.0` to a positional
/// integer (`repr(float)` does, the parts of `repr(complex)` do not). `scratch` is reused
/// for the digits.
fn push_repr(out: &mut String, scratch: &mut String, x: f64, dot0: bool) {
    scratch.clear();
    let _ = write!(scratch, "{:e}", x.abs());
    let (mant, exp) = scratch.split_once('e').unwrap_or((scratch.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (d0, rest) = mant.split_at(1.min(mant.len()));
    let frac = rest.strip_prefix('.').unwrap_or(rest);
    if x.is_sign_negative() {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let e = exp as usize;
            out.push_str(d0);
            if frac.len() <= e {
                out.push_str(frac);
                for _ in frac.len()..e {
                    out.push('0');
                }
                if dot0 {
                    out.push_str(".0");
                }
            } else {
                out.push_str(&frac[..e]);
                out.push('.');
                out.push_str(&frac[e..]);
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(d0);
            out.push_str(frac);
        }
    } else {
        out.push_str(d0);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
    }
}

/// Python's `repr` of `x`, `nan` and `inf` included (python drops the sign of a NaN); `dot0`
/// as in [`push_repr`] (`repr(float)` has it, the parts of `repr(complex)` do not).
pub(crate) fn push_python_repr(out: &mut String, scratch: &mut String, x: f64, dot0: bool) {
    if x.is_nan() {
        out.push_str("nan");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
    } else {
        push_repr(out, scratch, x, dot0);
    }
}

/// Python's `repr(float)`: `0.1`, `1.0`, `1e+16`, `1e-05`, `-0.0`, `nan`, `inf`.
pub fn python_repr(x: f64) -> String {
    let mut out = String::new();
    push_python_repr(&mut out, &mut String::new(), x, true);
    out
}

/// The canonical JSON rule (docs/canonical.md): a finite float as [`json_number`] (`2.0`,
/// `1e16`, `-0.0`), the others as `{"$float": "nan"}`, `{"$float": "inf"}`,
/// `{"$float": "-inf"}`.
pub(crate) fn push_canonical_json(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("{\"$float\": \"nan\"}");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 {
            "{\"$float\": \"inf\"}"
        } else {
            "{\"$float\": \"-inf\"}"
        });
    } else {
        push_json_number(out, f);
    }
}

/// A finite float as a JSON number that reads back as a float: Rust's shortest round-trip
/// digits, positional from `1e-4` to below `1e16` (always with a `.`: `2.0`), else with an
/// exponent (`1e16`, `1e-7`). NaN and infinities, which JSON cannot hold, come out as `NaN`,
/// `inf` and `-inf`: callers choose what stands for them.
pub fn json_number(x: f64) -> String {
    let mut out = String::new();
    push_json_number(&mut out, x);
    out
}

/// [`json_number`] appended to `out`.
pub fn push_json_number(out: &mut String, x: f64) {
    let _ = write!(out, "{x:?}");
}

/// The decimal digits of `v`, written at the end of `buf` (20 bytes hold any `u64`): the one
/// integer-to-text loop of the float and YAML writers.
pub(crate) fn u64_digits(mut v: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_matches_python() {
        // `repr(float)` in python 3.11.
        let cases: [(f64, &str); 18] = [
            (1e300, "1e+300"),
            (123456789.0, "123456789.0"),
            (0.00012345, "0.00012345"),
            (-2.5e-5, "-2.5e-05"),
            (1.2345e20, "1.2345e+20"),
            (1.0, "1.0"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123.456, "123.456"),
            (1e22, "1e+22"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1e-7, "-1e-07"),
            (1e15, "1000000000000000.0"),
        ];
        for (x, want) in cases {
            assert_eq!(python_repr(x), want);
        }
        assert_eq!(python_repr(f64::NAN), "nan");
        assert_eq!(python_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn json_and_canonical_rules() {
        // JSON numbers as docs/canonical.md writes them (its examples: `2.0`, `1e16`, `-0.0`)
        let cases = [
            (2.0, "2.0"),
            (1e16, "1e16"),
            (-0.0, "-0.0"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-5"),
            (0.0001, "0.0001"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (x, want) in cases {
            assert_eq!(json_number(x), want);
            assert_eq!(
                json_number(x).parse::<f64>().unwrap().to_bits(),
                x.to_bits()
            );
            let mut c = String::new();
            push_canonical_json(&mut c, x);
            assert_eq!(c, want);
        }
        for (x, want) in [
            (f64::NAN, r#"{"$float": "nan"}"#),
            (f64::INFINITY, r#"{"$float": "inf"}"#),
            (f64::NEG_INFINITY, r#"{"$float": "-inf"}"#),
        ] {
            let mut c = String::new();
            push_canonical_json(&mut c, x);
            assert_eq!(c, want);
        }
    }
}
