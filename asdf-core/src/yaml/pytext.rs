//! Python's text forms of complex numbers, as python asdf writes and reads them in trees:
//! `repr(complex)` and what `complex()` accepts.
//!
//! `!core/complex-1.0.0` scalars are `repr(complex)` ([`complex_repr`]) and are read back
//! with [`parse_complex`]. The text of floats, one rule per purpose, is in [`crate::floats`].

use crate::floats::push_python_repr;

/// Python's `repr(complex)`: `(1+2j)`, `(1.5-0j)`, `(nan-infj)`, and `2j` (no parentheses)
/// when the real part is `+0.0`.
pub(crate) fn complex_repr(re: f64, im: f64) -> String {
    let mut out = String::new();
    let mut scratch = String::new();
    if re == 0.0 && re.is_sign_positive() {
        push_python_repr(&mut out, &mut scratch, im, false);
        out.push('j');
        return out;
    }
    out.push('(');
    push_python_repr(&mut out, &mut scratch, re, false);
    if im.is_nan() || im.is_sign_positive() {
        out.push('+');
    }
    push_python_repr(&mut out, &mut scratch, im, false);
    out.push_str("j)");
    out
}

/// What python's `complex(s)` accepts, after python asdf's substitution of `i` (outside
/// `inf`) by `j`: `1+2j`, `(1-2j)`, `-0j`, `(nan+infj)`, `3`, `j`, `1_000j`; whitespace only
/// around the whole text and inside the parentheses' ends. `None` where python raises.
pub(crate) fn parse_complex(s: &str) -> Option<(f64, f64)> {
    let mut t = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    for (k, &c) in chars.iter().enumerate() {
        let next2: String = chars.iter().skip(k + 1).take(2).collect();
        match c {
            'i' if next2 != "nf" => t.push('j'),
            'I' if next2 != "NF" => t.push('J'),
            c => t.push(c),
        }
    }
    let mut body = t.trim();
    if let Some(inner) = body.strip_prefix('(') {
        body = inner.strip_suffix(')')?.trim();
    }
    let lower = body.to_ascii_lowercase();
    let Some(imag_part) = lower.strip_suffix('j') else {
        return Some((parse_float(&lower)?, 0.0));
    };
    // The imaginary part starts at the last sign that is not the first character and does
    // not follow an exponent's `e`.
    let bytes = imag_part.as_bytes();
    let split = (1..bytes.len())
        .rev()
        .find(|&k| matches!(bytes[k], b'+' | b'-') && bytes[k - 1] != b'e');
    let (re_s, im_s) = match split {
        Some(k) => imag_part.split_at(k),
        None => ("", imag_part),
    };
    let re = if re_s.is_empty() {
        0.0
    } else {
        parse_float(re_s)?
    };
    let im = match im_s {
        "" | "+" => 1.0,
        "-" => -1.0,
        x => parse_float(x)?,
    };
    Some((re, im))
}

/// A python float literal as `float()` reads it: Rust's syntax (which also takes `inf`,
/// `infinity`, `nan` in any case) plus underscores, each between two digits.
fn parse_float(x: &str) -> Option<f64> {
    let b = x.as_bytes();
    if b.is_empty() || b.iter().any(|c| c.is_ascii_whitespace()) {
        return None;
    }
    for (k, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = k.checked_sub(1).and_then(|j| b.get(j));
            let after = b.get(k + 1);
            if !(before.is_some_and(u8::is_ascii_digit) && after.is_some_and(u8::is_ascii_digit)) {
                return None;
            }
        }
    }
    if x.contains('_') {
        x.replace('_', "").parse().ok()
    } else {
        x.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_repr_matches_python() {
        // Expected values printed by python 3.11 (`repr(complex(re, im))`), the oracle venv.
        let cases: [(f64, f64, &str); 15] = [
            (1.0, 2.0, "(1+2j)"),
            (1.5, -0.0, "(1.5-0j)"),
            (f64::NAN, f64::NEG_INFINITY, "(nan-infj)"),
            (1e20, 1e-7, "(1e+20+1e-07j)"),
            (0.1, 3.0, "(0.1+3j)"),
            (0.0, 2.0, "2j"),
            (-0.0, 2.0, "(-0+2j)"),
            (0.0, -1.0, "-1j"),
            (0.0, 0.0, "0j"),
            (0.0, f64::NAN, "nanj"),
            (1.0, -f64::NAN, "(1+nanj)"),
            (1e16, 2.5, "(1e+16+2.5j)"),
            (
                123456789012345678.0,
                1e-5,
                "(1.2345678901234568e+17+1e-05j)",
            ),
            (-2.5e-300, 5e15, "(-2.5e-300+5000000000000000j)"),
            (f64::INFINITY, 0.0, "(inf+0j)"),
        ];
        for (re, im, want) in cases {
            assert_eq!(complex_repr(re, im), want, "({re}, {im})");
        }
    }

    #[test]
    fn parse_complex_accepts_what_python_accepts() {
        // `complex(s)` in python 3.11 after python asdf 6.0.0's `i(?!nf)` -> `j`
        // substitution (asdf/_core/_converters/complex.py): the value, or an error (None).
        let cases: [(&str, Option<(f64, f64)>); 26] = [
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("1_0", Some((10.0, 0.0))),
            ("1_0j", Some((0.0, 10.0))),
            ("(1_0+2_0j)", Some((10.0, 20.0))),
            ("1e1_0", Some((1e10, 0.0))),
            ("0x10", None),
            ("1.0_1", Some((1.01, 0.0))),
            ("+1j", Some((0.0, 1.0))),
            ("-j", Some((0.0, -1.0))),
            ("j", Some((0.0, 1.0))),
            ("1+j", Some((1.0, 1.0))),
            ("(1+2j)", Some((1.0, 2.0))),
            ("inf", Some((f64::INFINITY, 0.0))),
            ("infj", Some((0.0, f64::INFINITY))),
            (" 1+2j ", Some((1.0, 2.0))),
            ("(1 + 2j)", None),
            ("1e5", Some((1e5, 0.0))),
            (".5j", Some((0.0, 0.5))),
            ("5.j", Some((0.0, 5.0))),
            ("1E+5J", Some((0.0, 1e5))),
            // python asdf's `i` -> `j` makes it `infjnjty`, which complex() refuses
            ("infinity", None),
            ("+inf-infj", Some((f64::INFINITY, f64::NEG_INFINITY))),
            ("1_e5", None),
            ("1._5", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_complex(s), want, "{s:?}");
        }
        assert_eq!(parse_complex(" ( 1-2j ) "), Some((1.0, -2.0)));
        assert_eq!(parse_complex("1e-3-2.5e+3j"), Some((0.001, -2500.0)));
        assert_eq!(parse_complex("3"), Some((3.0, 0.0)));
        assert_eq!(parse_complex("(1+2j"), None);
        assert_eq!(parse_complex("abc"), None);
        assert_eq!(parse_complex(""), None);
        assert_eq!(
            parse_complex("-0j").map(|(a, b)| (a.to_bits(), b.to_bits())),
            Some((0, (-0.0f64).to_bits()))
        );
        let (re, im) = parse_complex("-nan+nanj").unwrap();
        assert!(re.is_nan() && im.is_nan());
        // python asdf writes `i` for `j` in old files; `inf` keeps its `i`.
        assert_eq!(parse_complex("1+2i"), Some((1.0, 2.0)));
        assert_eq!(
            parse_complex("inf-infi"),
            Some((f64::INFINITY, f64::NEG_INFINITY))
        );
    }
}
