//! YAML 1.1 scalar resolution exactly as PyYAML's `SafeLoader` does it (python asdf's loader
//! derives from it): the implicit resolvers of `yaml/resolver.py` and the constructors of
//! `SafeConstructor` (`construct_yaml_int`, `_float`, `_bool`, `_timestamp`, `_binary`).
//!
//! Implicit resolution picks the candidate types by the first character, as PyYAML does,
//! then matches hand-written equivalents of its regular expressions (no regex engine).

use super::bigint::{decimal_integer, parse_radix, BigUint, MAX_DIGITS};
use super::node::{Integer, Value};
use super::timestamp;

/// A scalar matched a YAML type (implicitly or by an explicit `!!` tag) but its value cannot
/// be constructed, e.g. `2001-02-30`, `0x_`, `!!int abc`, bad base64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConstructError {
    /// Short name of the YAML type (`int`, `float`, `bool`, `timestamp`, `binary`).
    pub(crate) kind: &'static str,
}

const fn err(kind: &'static str) -> ConstructError {
    ConstructError { kind }
}

/// The YAML 1.1 core scalar types an explicit tag can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoreScalar {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Binary,
    Timestamp,
}

impl CoreScalar {
    /// The type for a `tag:yaml.org,2002:` suffix, if it is a scalar type we construct.
    pub(crate) fn from_suffix(suffix: &str) -> Option<Self> {
        Some(match suffix {
            "str" => Self::Str,
            "int" => Self::Int,
            "float" => Self::Float,
            "bool" => Self::Bool,
            "null" => Self::Null,
            "binary" => Self::Binary,
            "timestamp" => Self::Timestamp,
            _ => return None,
        })
    }
}

/// Implicit resolution of a plain scalar (YAML 1.1, PyYAML `SafeLoader`).
///
/// Booleans (`yes`/`no`/`true`/`false`/`on`/`off` in three casings), nulls (`~`, `null`,
/// `Null`, `NULL`, empty), integers (binary `0b`, octal `017`, decimal, hex `0x`, base 60
/// `190:20:30`, `_` separators), floats (a dot is required, `1e3` is a string; `.inf`,
/// `.nan`, base 60), timestamps; everything else is a string.
///
/// A scalar that has the shape of a type but whose value cannot be constructed (`2001-02-30`,
/// `0x_`) is returned as a string here; [`parse`](super::parse) reports it as
/// [`YamlError::InvalidScalar`](super::YamlError::InvalidScalar), as PyYAML raises.
///
/// ```
/// use asdf_core::yaml::{resolve_plain, Integer, Value};
/// assert_eq!(resolve_plain("0x1F"), Value::Int(Integer::Small(31)));
/// assert_eq!(resolve_plain("yes"), Value::Bool(true));
/// assert_eq!(resolve_plain("1e3"), Value::Str("1e3".into()));
/// ```
pub fn resolve_plain(text: &str) -> Value {
    match classify(text) {
        Ok(Some(v)) => v,
        Ok(None) | Err(_) => Value::Str(text.to_string()),
    }
}

/// Like [`resolve_plain`], taking the string by value (no copy when it stays a string) and
/// reporting scalars that cannot be constructed.
/// On failure the text is handed back.
pub(crate) fn resolve_plain_owned(text: String) -> Result<Value, (ConstructError, String)> {
    match classify(&text) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Ok(Value::Str(text)),
        Err(e) => Err((e, text)),
    }
}

/// `Ok(None)` means "a string".
pub(crate) fn classify(text: &str) -> Result<Option<Value>, ConstructError> {
    let b = text.as_bytes();
    let Some(&first) = b.first() else {
        return Ok(Some(Value::Null));
    };
    match first {
        b'~' => Ok((b.len() == 1).then_some(Value::Null)),
        b'n' | b'N' => Ok(match text {
            "null" | "Null" | "NULL" => Some(Value::Null),
            "no" | "No" | "NO" => Some(Value::Bool(false)),
            _ => None,
        }),
        b'y' | b'Y' => Ok(matches!(text, "yes" | "Yes" | "YES").then_some(Value::Bool(true))),
        b't' | b'T' => Ok(matches!(text, "true" | "True" | "TRUE").then_some(Value::Bool(true))),
        b'f' | b'F' => {
            Ok(matches!(text, "false" | "False" | "FALSE").then_some(Value::Bool(false)))
        }
        b'o' | b'O' => Ok(match text {
            "on" | "On" | "ON" => Some(Value::Bool(true)),
            "off" | "Off" | "OFF" => Some(Value::Bool(false)),
            _ => None,
        }),
        b'0'..=b'9' | b'-' | b'+' | b'.' => classify_number(text),
        _ => Ok(None),
    }
}

/// Whether the bytes are all in `[0-9_]`.
fn digits_us(b: &[u8]) -> bool {
    b.iter().all(|&c| c.is_ascii_digit() || c == b'_')
}

/// `(?::[0-5]?[0-9])+` — returns whether `b` (starting with ':') is one or more such groups.
fn sexagesimal_tail(b: &[u8]) -> bool {
    if b.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] != b':' {
            return false;
        }
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        match &b[start..i] {
            [d] if d.is_ascii_digit() => {}
            [a, _] if (b'0'..=b'5').contains(a) => {}
            _ => return false,
        }
    }
    true
}

fn classify_number(text: &str) -> Result<Option<Value>, ConstructError> {
    let b = text.as_bytes();
    let (negative, body) = match b {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, b),
    };
    let signed = body.len() != b.len();
    let Some(&c0) = body.first() else {
        return Ok(None);
    };

    if c0 == b'.' {
        // `[-+]?\.(inf|Inf|INF)`, `\.(nan|NaN|NAN)` (no sign), `\.[0-9][0-9_]*(exp)?` (no sign).
        let rest = &body[1..];
        if matches!(rest, b"inf" | b"Inf" | b"INF") {
            return Ok(Some(Value::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })));
        }
        if signed {
            return Ok(None);
        }
        if matches!(rest, b"nan" | b"NaN" | b"NAN") {
            return Ok(Some(Value::Float(f64::NAN)));
        }
        if rest.first().is_some_and(u8::is_ascii_digit) {
            let mant_end = rest
                .iter()
                .position(|&c| !(c.is_ascii_digit() || c == b'_'))
                .unwrap_or(rest.len());
            if is_exponent(&rest[mant_end..]) {
                return float_from_text(text).map(Some);
            }
        }
        return Ok(None);
    }
    if !c0.is_ascii_digit() {
        return Ok(None);
    }

    // Timestamps start with four digits and a '-' (never signed); nothing else does.
    if !signed && b.len() >= 8 && b[4] == b'-' && b[..4].iter().all(u8::is_ascii_digit) {
        return match timestamp::parse_implicit(text) {
            None => Ok(None),
            Some(Ok(ts)) => Ok(Some(Value::Timestamp(Box::new(ts)))),
            Some(Err(_)) => Err(err("timestamp")),
        };
    }

    // Leading run of [0-9_].
    let run = body
        .iter()
        .position(|&c| !(c.is_ascii_digit() || c == b'_'))
        .unwrap_or(body.len());
    let rest = &body[run..];

    if rest.is_empty() {
        // Decimal `0|[1-9][0-9_]*` or octal `0[0-7_]+`.
        if c0 != b'0' {
            return int_decimal(negative, body).map(Some);
        }
        if body.len() == 1 {
            return Ok(Some(Value::Int(Integer::Small(0))));
        }
        if body
            .iter()
            .all(|&c| (b'0'..=b'7').contains(&c) || c == b'_')
        {
            return int_radix(negative, &body[1..], 8).map(Some);
        }
        return Ok(None);
    }
    match rest[0] {
        b'.' => {
            // `[0-9][0-9_]*\.[0-9_]*(exp)?`
            let frac = &rest[1..];
            let frac_end = frac
                .iter()
                .position(|&c| !(c.is_ascii_digit() || c == b'_'))
                .unwrap_or(frac.len());
            if is_exponent(&frac[frac_end..]) {
                return float_from_text(text).map(Some);
            }
            Ok(None)
        }
        b'b' if run == 1 && c0 == b'0' => {
            let digits = &rest[1..];
            if !digits.is_empty() && digits.iter().all(|&c| matches!(c, b'0' | b'1' | b'_')) {
                return int_radix(negative, digits, 2).map(Some);
            }
            Ok(None)
        }
        b'x' if run == 1 && c0 == b'0' => {
            let digits = &rest[1..];
            if !digits.is_empty() && digits.iter().all(|&c| c.is_ascii_hexdigit() || c == b'_') {
                return int_radix(negative, digits, 16).map(Some);
            }
            Ok(None)
        }
        b':' => {
            // Int: `[1-9][0-9_]*(:[0-5]?[0-9])+`;
            // float: `[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`.
            if sexagesimal_tail(rest) {
                if c0 == b'0' {
                    return Ok(None);
                }
                return sexagesimal_int(negative, body).map(Some);
            }
            if let Some(dot) = rest.iter().position(|&c| c == b'.') {
                if sexagesimal_tail(&rest[..dot]) && digits_us(&rest[dot + 1..]) {
                    return sexagesimal_float(negative, body).map(Some);
                }
            }
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// `(?:[eE][-+][0-9]+)?` covering the whole slice.
fn is_exponent(b: &[u8]) -> bool {
    match b {
        [] => true,
        [b'e' | b'E', b'-' | b'+', digits @ ..] => {
            !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

fn strip_underscores(b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if b.contains(&b'_') {
        std::borrow::Cow::Owned(b.iter().copied().filter(|&c| c != b'_').collect())
    } else {
        std::borrow::Cow::Borrowed(b)
    }
}

fn int_decimal(negative: bool, body: &[u8]) -> Result<Value, ConstructError> {
    let digits = strip_underscores(body);
    decimal_integer(negative, &digits)
        .map(Value::Int)
        .ok_or(err("int"))
}

fn int_radix(negative: bool, digits: &[u8], radix: u32) -> Result<Value, ConstructError> {
    let digits = strip_underscores(digits);
    if digits.is_empty() && radix == 8 {
        // `0_`: Python returns 0 for the text "0" after removing underscores.
        return Ok(Value::Int(Integer::Small(0)));
    }
    parse_radix(&digits, radix)
        .map(|n| Value::Int(n.into_integer(negative)))
        .ok_or(err("int"))
}

/// Base-60 integer from `[0-9_]+(:[0-9]+)+` (validated by the caller or permissive for `!!int`):
/// parts are decimal, the last is the ones.
fn sexagesimal_int(negative: bool, body: &[u8]) -> Result<Value, ConstructError> {
    if body.len() > MAX_DIGITS {
        return Err(err("int"));
    }
    let mut total = BigUint::default();
    for part in body.split(|&c| c == b':') {
        let digits = strip_underscores(part);
        let d = parse_radix(&digits, 10).ok_or(err("int"))?;
        total.mul_add(60, 0);
        total.add(&d);
    }
    Ok(Value::Int(total.into_integer(negative)))
}

/// Base-60 float: each part read as a float, summed from the last with weights 60ⁿ.
fn sexagesimal_float(negative: bool, body: &[u8]) -> Result<Value, ConstructError> {
    let text = std::str::from_utf8(body).map_err(|_| err("float"))?;
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    let v = sexagesimal_float_parts(&cleaned, py_float).ok_or(err("float"))?;
    Ok(Value::Float(if negative { -v } else { v }))
}

fn sexagesimal_float_parts(text: &str, part: impl Fn(&str) -> Option<f64>) -> Option<f64> {
    let mut value = 0.0f64;
    let mut base: u128 = 1;
    let mut base_f = 1.0f64;
    for p in text.rsplit(':') {
        let d = part(p)?;
        value += d * base_f;
        match base.checked_mul(60) {
            Some(b) => {
                base = b;
                base_f = b as f64;
            }
            None => base_f *= 60.0,
        }
    }
    Some(value)
}

fn float_from_text(text: &str) -> Result<Value, ConstructError> {
    let cleaned = strip_underscores(text.as_bytes());
    std::str::from_utf8(&cleaned)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map(Value::Float)
        .ok_or(err("float"))
}

/// Python's `float(s)`: surrounding whitespace allowed, `inf`/`infinity`/`nan` any case.
fn py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() || t.contains('_') {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Python's `int(s, radix)` on a string without `_`: whitespace, a sign, and the matching
/// `0b`/`0o`/`0x` prefix are allowed.
fn py_int(s: &str, radix: u32) -> Option<Integer> {
    let t = s.trim().as_bytes();
    let (negative, t) = match t {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, t),
    };
    let t = match (radix, t) {
        (2, [b'0', b'b' | b'B', rest @ ..])
        | (8, [b'0', b'o' | b'O', rest @ ..])
        | (16, [b'0', b'x' | b'X', rest @ ..]) => rest,
        _ => t,
    };
    if radix == 10 {
        return decimal_integer(negative, t);
    }
    parse_radix(t, radix).map(|n| n.into_integer(negative))
}

fn negate(i: Integer) -> Integer {
    match i {
        Integer::Small(v) => match v.checked_neg() {
            Some(n) => Integer::Small(n),
            None => Integer::Big("170141183460469231731687303715884105728".into()),
        },
        Integer::Big(s) => match s.strip_prefix('-') {
            Some(p) => Integer::Big(p.to_string()),
            None => Integer::Big(format!("-{s}")),
        },
    }
}

/// PyYAML `construct_yaml_int` on any text (for `!!int`).
fn construct_int(text: &str) -> Option<Integer> {
    let value: String = text.chars().filter(|&c| c != '_').collect();
    let first = value.chars().next()?;
    let negative = first == '-';
    let v = if first == '-' || first == '+' {
        &value[1..]
    } else {
        &value[..]
    };
    let magnitude = if v == "0" {
        Integer::Small(0)
    } else if let Some(d) = v.strip_prefix("0b") {
        py_int(d, 2)?
    } else if let Some(d) = v.strip_prefix("0x") {
        py_int(d, 16)?
    } else if v.starts_with('0') {
        py_int(v, 8)?
    } else if v.contains(':') {
        if v.len() > MAX_DIGITS {
            return None;
        }
        if v.split(':').all(|p| {
            let p = p.trim().as_bytes();
            !p.is_empty() && p.iter().all(u8::is_ascii_digit)
        }) {
            let body: Vec<u8> = v.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
            match sexagesimal_int(false, &body).ok()? {
                Value::Int(i) => i,
                _ => return None,
            }
        } else {
            // Parts may carry their own sign in Python: exact within i128, refused beyond.
            let mut total: i128 = 0;
            for part in v.split(':') {
                let p = py_int(part, 10)?.as_i128()?;
                total = total.checked_mul(60)?.checked_add(p)?;
            }
            Integer::Small(total)
        }
    } else {
        // Empty after the sign: Python raises IndexError.
        if v.is_empty() {
            return None;
        }
        py_int(v, 10)?
    };
    Some(if negative {
        negate(magnitude)
    } else {
        magnitude
    })
}

/// PyYAML `construct_yaml_float` on any text (for `!!float`).
fn construct_float(text: &str) -> Option<f64> {
    let value: String = text
        .chars()
        .filter(|&c| c != '_')
        .collect::<String>()
        .to_lowercase();
    let first = value.chars().next()?;
    let sign = if first == '-' { -1.0 } else { 1.0 };
    let v = if first == '-' || first == '+' {
        &value[1..]
    } else {
        &value[..]
    };
    if v == ".inf" {
        return Some(sign * f64::INFINITY);
    }
    if v == ".nan" {
        return Some(f64::NAN);
    }
    if v.contains(':') {
        return sexagesimal_float_parts(v, py_float).map(|x| sign * x);
    }
    py_float(v).map(|x| sign * x)
}

/// PyYAML `construct_yaml_bool` (for `!!bool`).
fn construct_bool(text: &str) -> Option<bool> {
    match text.to_lowercase().as_str() {
        "yes" | "true" | "on" => Some(true),
        "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// Constructs a scalar explicitly tagged with a YAML core scalar type. On failure the text is
/// handed back.
pub(crate) fn construct_core(
    kind: CoreScalar,
    text: String,
) -> Result<Value, (ConstructError, String)> {
    let built = match kind {
        CoreScalar::Str => return Ok(Value::Str(text)),
        CoreScalar::Null => Ok(Value::Null),
        CoreScalar::Bool => construct_bool(&text).map(Value::Bool).ok_or(err("bool")),
        CoreScalar::Int => construct_int(&text).map(Value::Int).ok_or(err("int")),
        CoreScalar::Float => construct_float(&text).map(Value::Float).ok_or(err("float")),
        CoreScalar::Binary => super::base64::decode(&text)
            .map(Value::Binary)
            .ok_or(err("binary")),
        CoreScalar::Timestamp => timestamp::parse_explicit(&text)
            .map(|ts| Value::Timestamp(Box::new(ts)))
            .map_err(|_| err("timestamp")),
    };
    built.map_err(|e| (e, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i128) -> Value {
        Value::Int(Integer::Small(v))
    }
    fn s(t: &str) -> Value {
        Value::Str(t.into())
    }
    fn f(text: &str) -> f64 {
        match resolve_plain(text) {
            Value::Float(x) => x,
            other => panic!("{text} resolved to {other:?}"),
        }
    }

    #[test]
    fn bools_and_nulls() {
        for t in [
            "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
        ] {
            assert_eq!(resolve_plain(t), Value::Bool(true), "{t}");
        }
        for t in [
            "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
        ] {
            assert_eq!(resolve_plain(t), Value::Bool(false), "{t}");
        }
        for t in ["yES", "y", "n", "oN", "tRUE", "nO"] {
            assert_eq!(resolve_plain(t), s(t), "{t}");
        }
        for t in ["~", "null", "Null", "NULL", ""] {
            assert_eq!(resolve_plain(t), Value::Null, "{t}");
        }
        for t in ["nULL", "~~", "none", "None"] {
            assert_eq!(resolve_plain(t), s(t), "{t}");
        }
    }

    #[test]
    fn integers() {
        let cases: &[(&str, i128)] = &[
            ("0", 0),
            ("-0", 0),
            ("+0", 0),
            ("00", 0),
            ("0_", 0),
            ("017", 15),
            ("-017", -15),
            ("0777_", 511),
            ("0x1F", 31),
            ("-0x1F", -31),
            ("0x_1_f", 31),
            ("0b101", 5),
            ("-0b1_01", -5),
            ("1_000", 1000),
            ("1__2", 12),
            ("0_1", 1),
            ("+1", 1),
            ("190:20:30", 685_230),
            ("12:30", 750),
            ("-12:30", -750),
            ("1:0:0", 3600),
            (
                "123456789012345678901234567890",
                123_456_789_012_345_678_901_234_567_890,
            ),
        ];
        for &(t, v) in cases {
            assert_eq!(resolve_plain(t), int(v), "{t}");
        }
        assert_eq!(
            resolve_plain("0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
            Value::Int(Integer::Big(
                "340282366920938463463374607431768211455".into()
            ))
        );
        assert_eq!(
            resolve_plain("-1234567890123456789012345678901234567890"),
            Value::Int(Integer::Big(
                "-1234567890123456789012345678901234567890".into()
            ))
        );
        assert_eq!(
            resolve_plain("18446744073709551615"),
            int(18_446_744_073_709_551_615)
        );
        for t in [
            "08", "0b", "0x", "0o17", "0B1", "0X1", "1:60", "0:30", "_1", "+_1", "1e3", "1-2",
            "1:2:", "12:3a", "--1", "0b2", "0xg",
        ] {
            assert_eq!(resolve_plain(t), s(t), "{t}");
        }
        // Shapes that match but cannot be built: PyYAML raises.
        assert_eq!(
            resolve_plain_owned("0x_".into()),
            Err((ConstructError { kind: "int" }, "0x_".to_string()))
        );
        assert_eq!(
            resolve_plain_owned("0b__".into()).unwrap_err().0,
            ConstructError { kind: "int" }
        );
    }

    #[test]
    fn floats() {
        assert_eq!(f("1.0e+3"), 1000.0);
        assert_eq!(f("1.0E-3"), 0.001);
        assert_eq!(f("1.e+3"), 1000.0);
        assert_eq!(f("1."), 1.0);
        assert_eq!(f("0."), 0.0);
        assert_eq!(f(".5"), 0.5);
        assert_eq!(f("1.5_"), 1.5);
        assert_eq!(f("1_0.2_5"), 10.25);
        assert_eq!(f("-1.5"), -1.5);
        assert!(f("-0.0").is_sign_negative());
        assert_eq!(f("0.1"), 0.1);
        assert_eq!(f("3.141592653589793238462643383279"), std::f64::consts::PI);
        assert_eq!(f(".inf"), f64::INFINITY);
        assert_eq!(f("+.Inf"), f64::INFINITY);
        assert_eq!(f("-.INF"), f64::NEG_INFINITY);
        assert!(f(".nan").is_nan());
        assert!(f(".NaN").is_nan());
        assert!(f(".NAN").is_nan());
        assert_eq!(f("1:2.3"), 62.3);
        assert_eq!(f("-1:0.5"), -60.5);
        assert_eq!(f("190:20:30.15"), 685_230.15);
        assert_eq!(f("1.0e-400"), 0.0);
        assert_eq!(f("1.0e+400"), f64::INFINITY);
        assert_eq!(f("1234.5e-3"), 1.2345);
        for t in [
            "1e3", "1.0e3", "1.0e+3.", "+.5", "-.5", "._5", ".iNF", "-.nan", "+.nan", ".", "-.",
            "1.0e+", "1.0e+3a", "inf", "nan", "1.2.3", "0:30.5x",
        ] {
            assert_eq!(resolve_plain(t), s(t), "{t}");
        }
    }

    #[test]
    fn timestamps_resolve() {
        match resolve_plain("2001-12-14t21:59:43.10-05:00") {
            Value::Timestamp(ts) => {
                assert_eq!(ts.year, 2001);
                let t = ts.time.unwrap();
                assert_eq!(t.nanosecond, 100_000_000);
                assert_eq!(t.utc_offset_seconds, Some(-5 * 3600));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(resolve_plain("2002-12-14"), Value::Timestamp(_)));
        assert_eq!(resolve_plain("2001-1-1"), s("2001-1-1"));
        assert_eq!(
            resolve_plain_owned("2001-02-30".into()).unwrap_err().0,
            ConstructError { kind: "timestamp" }
        );
    }

    #[test]
    fn explicit_constructors() {
        use CoreScalar::*;
        let c = |k, t: &str| construct_core(k, t.to_string()).map_err(|(e, _)| e);
        assert_eq!(c(Str, "5"), Ok(s("5")));
        assert_eq!(c(Int, "7"), Ok(int(7)));
        assert_eq!(c(Int, " 12 "), Ok(int(12)));
        assert_eq!(c(Int, "0o17"), Ok(int(15)));
        assert_eq!(c(Int, "--5"), Ok(int(5)));
        assert_eq!(c(Int, "1:-5"), Ok(int(55)));
        assert_eq!(c(Int, "-1:60"), Ok(int(-120)));
        assert_eq!(
            c(
                Int,
                "1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20:21:22:23:24:25"
            ),
            Ok(Value::Int(Integer::Big(
                "4900365647215691130594656707842573972996265".into()
            )))
        );
        assert_eq!(c(Int, "0x_"), Err(err("int")));
        assert_eq!(c(Int, "abc"), Err(err("int")));
        assert_eq!(c(Int, ""), Err(err("int")));
        assert_eq!(c(Int, "-"), Err(err("int")));
        assert_eq!(c(Int, "0B1"), Err(err("int")));
        assert_eq!(c(Float, "1"), Ok(Value::Float(1.0)));
        assert_eq!(c(Float, "1e3"), Ok(Value::Float(1000.0)));
        assert_eq!(c(Float, " 1.5 "), Ok(Value::Float(1.5)));
        assert_eq!(c(Float, "infinity"), Ok(Value::Float(f64::INFINITY)));
        assert_eq!(c(Float, "1:2"), Ok(Value::Float(62.0)));
        assert_eq!(c(Float, ". inf"), Err(err("float")));
        assert_eq!(c(Bool, "YES"), Ok(Value::Bool(true)));
        assert_eq!(c(Bool, "oFf"), Ok(Value::Bool(false)));
        assert_eq!(c(Bool, "abc"), Err(err("bool")));
        assert_eq!(c(Null, "abc"), Ok(Value::Null));
        assert!(matches!(c(Timestamp, "2001-1-1"), Ok(Value::Timestamp(_))));
        assert_eq!(c(Timestamp, "2001"), Err(err("timestamp")));
    }
}
