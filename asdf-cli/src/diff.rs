//! `asdftool diff A B`: the semantic differences of two files' trees and array values, one
//! line per differing path.
//!
//! Follows python asdf's `asdftool diff` in what counts as a difference: leaves compare by
//! value (an integer equals the same float; tags of scalars and mappings are ignored unless
//! `--tags`), a key present in one file only is reported at its path, and two `core/ndarray`
//! nodes that differ compare their descriptors as mappings (except `source` and `data`) and
//! say whether shape, datatype or contents differ. Unlike python, two arrays holding the same
//! values are equal whatever their layout (byte order, offset, strides, inline or in a
//! block), sequences of different lengths are reported (python's `zip` drops the longer
//! one's tail), and NaN equals NaN in arrays.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;

use asdf_core::array::{ByteOrder, DType, DynArray, ScalarType};
use asdf_core::{AsdfFile, Integer, Node, Value};

use crate::summary::short_tag;
use crate::tree::{cut, key_text, pointer, scalar_text, Pattern};

/// What `diff` compares and how.
pub struct Options {
    /// Paths (and their subtrees) not compared.
    pub ignore: Vec<Pattern>,
    /// Relative tolerance of array elements: `|a - b| <= atol + rtol * |b|`.
    pub rtol: f64,
    /// Absolute tolerance of array elements.
    pub atol: f64,
    /// Also report differing tags.
    pub tags: bool,
}

/// The differences, one line each (`PATH: what`), in tree order.
pub fn run(
    access: &crate::Access,
    a: &Path,
    b: &Path,
    opts: &Options,
) -> Result<Vec<String>, String> {
    if !(opts.rtol >= 0.0 && opts.atol >= 0.0) {
        return Err("--rtol and --atol must be numbers of at least 0".into());
    }
    let fa = access.open(a)?;
    let fb = access.open(b)?;
    // the bar counts the stored bytes of the blocks both files hold
    let stored = |f: &AsdfFile| f.blocks().iter().map(|h| h.used_size).sum::<u64>();
    let progress = crate::progress::Progress::bar(
        crate::progress::largest(&[a, b]),
        stored(&fa) + stored(&fb),
        "comparing arrays",
    );
    let mut d = Differ {
        fa: &fa,
        fb: &fb,
        progress,
        opts,
        seen: HashSet::new(),
        path: Vec::new(),
        lines: Vec::new(),
    };
    d.compare(fa.tree(), fb.tree())?;
    Ok(d.lines)
}

struct Differ<'a> {
    fa: &'a AsdfFile,
    fb: &'a AsdfFile,
    progress: crate::progress::Progress,
    opts: &'a Options,
    /// Pairs of shared nodes already compared (aliases are compared once).
    seen: HashSet<(usize, usize)>,
    path: Vec<String>,
    lines: Vec<String>,
}

fn show(node: &Node) -> String {
    let text = cut(scalar_text(node.value()), 60);
    match node.tag() {
        Some(t) if !matches!(node.value(), Value::Seq(_) | Value::Map(_)) => {
            format!("!{} {text}", short_tag(t))
        }
        _ => text,
    }
}

/// Whether two scalars are the same value (numbers across int and float).
fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => match x {
            Integer::Small(i) => (*i as f64) == *y && (*y as i128) == *i,
            Integer::Big(_) => false,
        },
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.text == y.text,
        _ => a == b,
    }
}

impl Differ<'_> {
    fn here(&self) -> String {
        let p = pointer(&self.path);
        if p.is_empty() {
            "/".to_string()
        } else {
            p
        }
    }

    fn report(&mut self, what: impl std::fmt::Display) {
        let line = format!("{}: {what}", self.here());
        self.lines.push(line);
    }

    fn ignored(&self) -> bool {
        self.opts.ignore.iter().any(|p| p.matches(&self.path))
    }

    fn compare(&mut self, a: &Node, b: &Node) -> Result<(), String> {
        if self.ignored() {
            return Ok(());
        }
        if !self.seen.insert((a.id(), b.id())) {
            return Ok(());
        }
        if self.opts.tags && a.tag() != b.tag() {
            let t = |n: &Node| {
                n.tag()
                    .map_or("none".to_string(), |t| format!("!{}", short_tag(t)))
            };
            self.report(format_args!("tags differ: {} vs {}", t(a), t(b)));
        }
        if a.is_ndarray() && b.is_ndarray() {
            return self.arrays(a, b);
        }
        match (a.value(), b.value()) {
            (Value::Map(ma), Value::Map(mb)) => self.mappings(ma, mb, &[]),
            (Value::Seq(sa), Value::Seq(sb)) => {
                for (i, (x, y)) in sa.iter().zip(sb).enumerate() {
                    self.path.push(i.to_string());
                    let r = self.compare(x, y);
                    self.path.pop();
                    r?;
                }
                if sa.len() != sb.len() {
                    let (n, which) = if sa.len() > sb.len() {
                        (sa.len(), "first")
                    } else {
                        (sb.len(), "second")
                    };
                    let common = sa.len().min(sb.len());
                    let items = if n - common == 1 {
                        format!("item {common} only in the {which} file")
                    } else {
                        format!("items {common}..{} only in the {which} file", n - 1)
                    };
                    self.report(format_args!(
                        "sequences of {} and {} items ({items})",
                        sa.len(),
                        sb.len()
                    ));
                }
                Ok(())
            }
            (va, vb) => {
                if !same_scalar(va, vb) {
                    let what = if std::mem::discriminant(va) == std::mem::discriminant(vb)
                        || matches!(
                            (va, vb),
                            (Value::Int(_), Value::Float(_)) | (Value::Float(_), Value::Int(_))
                        ) {
                        format!("{} != {}", show(a), show(b))
                    } else {
                        format!(
                            "{} ({}) != {} ({})",
                            show(a),
                            va.kind_name(),
                            show(b),
                            vb.kind_name()
                        )
                    };
                    self.report(what);
                }
                Ok(())
            }
        }
    }

    fn mappings(
        &mut self,
        ma: &[(Node, Node)],
        mb: &[(Node, Node)],
        skip: &[&str],
    ) -> Result<(), String> {
        let keys_b: Vec<String> = mb.iter().map(|(k, _)| key_text(k)).collect();
        let keys_a: Vec<String> = ma.iter().map(|(k, _)| key_text(k)).collect();
        // key -> its first index (a mapping of many keys stays linear)
        let mut index_b: HashMap<&str, usize> = HashMap::with_capacity(keys_b.len());
        for (j, k) in keys_b.iter().enumerate() {
            index_b.entry(k.as_str()).or_insert(j);
        }
        let in_a: HashSet<&str> = keys_a.iter().map(String::as_str).collect();
        for ((_, va), ka) in ma.iter().zip(&keys_a) {
            if skip.contains(&ka.as_str()) {
                continue;
            }
            self.path.push(ka.clone());
            let r = match index_b.get(ka.as_str()).copied() {
                Some(j) => self.compare(va, &mb[j].1),
                None => {
                    if !self.ignored() {
                        self.report("only in the first file");
                    }
                    Ok(())
                }
            };
            self.path.pop();
            r?;
        }
        for kb in &keys_b {
            if skip.contains(&kb.as_str()) || in_a.contains(kb.as_str()) {
                continue;
            }
            self.path.push(kb.clone());
            if !self.ignored() {
                self.report("only in the second file");
            }
            self.path.pop();
        }
        Ok(())
    }

    /// Two arrays: their values first (loaded from either file), then their descriptors.
    /// Arrays holding the same values (same shape, same datatype up to byte order) are
    /// equal however they are laid out: their descriptors' layout keys (`source`, `data`,
    /// `byteorder`, `offset`, `strides`, `shape`, `datatype`) are not compared, their other
    /// keys are (`mask`, and any other). Arrays that differ have every key but `source` and
    /// `data` compared, as python's diff does, and a line at the array saying whether shape,
    /// datatype or contents differ.
    fn arrays(&mut self, a: &Node, b: &Node) -> Result<(), String> {
        let here = pointer(&self.path);
        let load = |f: &AsdfFile, n: &Node, which: &str| {
            f.dyn_array_of(n, &here).map_err(|e| {
                format!(
                    "{}: {here}: cannot read the array of the {which} file: {}",
                    f.path().map_or(String::new(), |p| p.display().to_string()),
                    crate::chain(&e)
                )
            })
        };
        self.progress.message(format!("comparing {here}"));
        let xa = load(self.fa, a, "first")?;
        let xb = load(self.fb, b, "second")?;
        // stored bytes of the two arrays' blocks
        let used = |f: &AsdfFile, n: &Node| {
            n.get("source")
                .and_then(Node::as_i64)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| f.blocks().get(i))
                .map_or(0, |h| h.used_size)
        };
        self.progress.inc(used(self.fa, a) + used(self.fb, b));
        let mut kinds: Vec<String> = Vec::new();
        if xa.shape != xb.shape {
            kinds.push(format!("shape ({:?} vs {:?})", xa.shape, xb.shape));
        }
        let native = |d: &DType| d.with_byteorder(ByteOrder::Little);
        if native(&xa.dtype) != native(&xb.dtype) {
            kinds.push(format!("datatype ({} vs {})", xa.dtype, xb.dtype));
        }
        if let Some(c) = contents_differ(&xa, &xb, self.opts.rtol, self.opts.atol) {
            kinds.push(c);
        }
        let layout: &[&str] = if kinds.is_empty() {
            &[
                "source",
                "data",
                "byteorder",
                "offset",
                "strides",
                "shape",
                "datatype",
            ]
        } else {
            &["source", "data"]
        };
        if let (Some(ma), Some(mb)) = (a.as_map(), b.as_map()) {
            self.mappings(ma, mb, layout)?;
        }
        if !kinds.is_empty() {
            self.report(format_args!("arrays differ by {}", human_list(&kinds)));
        }
        Ok(())
    }
}

/// `a`, `a and b`, `a, b and c`.
fn human_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// One element as a number.
#[derive(Clone, Copy, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f64::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

fn bytes<const N: usize>(c: &[u8], order: ByteOrder) -> [u8; N] {
    let mut b: [u8; N] = c.try_into().unwrap_or([0; N]);
    if order == ByteOrder::Big {
        b.reverse();
    }
    b
}

/// Element `i` of a numeric array, or `None` for strings and records.
fn element(a: &DynArray, i: usize) -> Option<Num> {
    let DType::Scalar { ty, byteorder } = &a.dtype else {
        return None;
    };
    let size = ty.itemsize();
    let c = a.data.get(i * size..(i + 1) * size)?;
    let o = *byteorder;
    Some(match ty {
        ScalarType::Int8 => Num::Int(i128::from(c[0] as i8)),
        ScalarType::UInt8 => Num::Int(i128::from(c[0])),
        ScalarType::Bool8 => Num::Int(i128::from(c[0] != 0)),
        ScalarType::Int16 => Num::Int(i16::from_le_bytes(bytes(c, o)).into()),
        ScalarType::UInt16 => Num::Int(u16::from_le_bytes(bytes(c, o)).into()),
        ScalarType::Int32 => Num::Int(i32::from_le_bytes(bytes(c, o)).into()),
        ScalarType::UInt32 => Num::Int(u32::from_le_bytes(bytes(c, o)).into()),
        ScalarType::Int64 => Num::Int(i64::from_le_bytes(bytes(c, o)).into()),
        ScalarType::UInt64 => Num::Int(u64::from_le_bytes(bytes(c, o)).into()),
        ScalarType::Float16 => Num::Float(f16_to_f64(u16::from_le_bytes(bytes(c, o)))),
        ScalarType::Float32 => Num::Float(f32::from_le_bytes(bytes(c, o)).into()),
        ScalarType::Float64 => Num::Float(f64::from_le_bytes(bytes(c, o))),
        ScalarType::Complex64 => Num::Complex(
            f32::from_le_bytes(bytes(&c[..4], o)).into(),
            f32::from_le_bytes(bytes(&c[4..], o)).into(),
        ),
        ScalarType::Complex128 => Num::Complex(
            f64::from_le_bytes(bytes(&c[..8], o)),
            f64::from_le_bytes(bytes(&c[8..], o)),
        ),
        // strings, and datatypes added later (ScalarType is non-exhaustive): compared as bytes
        _ => return None,
    })
}

fn parts(n: Num) -> (f64, f64) {
    match n {
        Num::Int(i) => (i as f64, 0.0),
        Num::Float(f) => (f, 0.0),
        Num::Complex(r, i) => (r, i),
    }
}

/// Whether two elements agree within the tolerances (NaN equals NaN); the distance.
fn close(x: Num, y: Num, rtol: f64, atol: f64) -> (bool, f64) {
    if let (Num::Int(p), Num::Int(q)) = (x, y) {
        if rtol == 0.0 && atol == 0.0 {
            return (p == q, (p - q).unsigned_abs() as f64);
        }
    }
    let ((xr, xi), (yr, yi)) = (parts(x), parts(y));
    let nan = |r: f64, i: f64| r.is_nan() || i.is_nan();
    if nan(xr, xi) || nan(yr, yi) {
        return (nan(xr, xi) && nan(yr, yi), 0.0);
    }
    if xr == yr && xi == yi {
        return (true, 0.0); // infinities of one sign too
    }
    let dist = (xr - yr).hypot(xi - yi);
    (dist <= atol + rtol * yr.hypot(yi), dist)
}

/// `Some(description)` when the values of two arrays differ.
fn contents_differ(a: &DynArray, b: &DynArray, rtol: f64, atol: f64) -> Option<String> {
    if a.shape != b.shape {
        return Some("contents".into());
    }
    let exact = rtol == 0.0 && atol == 0.0;
    if exact && a.dtype == b.dtype && a.data == b.data {
        return None;
    }
    let n = a.element_count();
    if element(a, 0).is_none() || element(b, 0).is_none() {
        // strings and records: equal when their canonical forms are
        return if n == 0
            || (a.dtype.to_string() == b.dtype.to_string()
                && a.canonical_bytes() == b.canonical_bytes())
        {
            None
        } else {
            Some("contents".into())
        };
    }
    let mut count = 0usize;
    let mut worst = 0f64;
    let mut first = None;
    for i in 0..n {
        let (Some(x), Some(y)) = (element(a, i), element(b, i)) else {
            return Some("contents".into());
        };
        let (ok, dist) = close(x, y, rtol, atol);
        if !ok {
            count += 1;
            worst = worst.max(dist);
            first.get_or_insert(i);
        }
    }
    if count == 0 {
        return None;
    }
    let mut s = format!("contents ({count} of {n} elements");
    if let Some(i) = first {
        let _ = write!(s, ", first at flat index {i}");
    }
    if worst.is_finite() && worst > 0.0 {
        let _ = write!(s, ", largest difference {worst}");
    }
    s.push(')');
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert!(f16_to_f64(0x7e00).is_nan());
    }

    #[test]
    fn tolerances() {
        assert!(close(Num::Float(1.0), Num::Float(1.05), 0.1, 0.0).0);
        assert!(!close(Num::Float(1.0), Num::Float(1.5), 0.1, 0.0).0);
        assert!(close(Num::Float(f64::NAN), Num::Float(f64::NAN), 0.0, 0.0).0);
        assert!(close(Num::Int(3), Num::Float(3.0), 0.0, 0.0).0);
        assert_eq!(
            human_list(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
    }
}
