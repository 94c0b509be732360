//! Selections of part of an array, with numpy's meaning: per axis an index (the axis is
//! dropped) or a slice `start:stop:step` (negative indices count from the end, a negative
//! step walks backwards), and at most one `...` standing for every axis not named.
//!
//! A [`Selection`] is checked against an array's shape by [`Selection::resolve`] before
//! anything is read or allocated: an index outside the axis, a zero step, more indices than
//! axes or a second `...` is a [`SelectionError`] naming the axis and the bound.
//!
//! ```
//! use asdf_core::Selection;
//! let sel: Selection = "100:228, ::-2, 3".parse()?;
//! let axes = sel.resolve(&[1000, 10, 5])?;
//! assert_eq!((axes[0].start, axes[0].count, axes[0].step), (100, 128, 1));
//! assert_eq!((axes[1].start, axes[1].count, axes[1].step), (9, 5, -2));
//! assert!(!axes[2].keep); // an index drops its axis
//! assert_eq!(sel.shape(&[1000, 10, 5])?, vec![128, 5]);
//! # Ok::<(), asdf_core::array::SelectionError>(())
//! ```

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// One item of a selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelItem {
    /// One position of the axis (negative counts from the end); the axis is dropped.
    Index(i64),
    /// `start:stop:step`, each optional, with python's defaults and clipping.
    Slice {
        /// First position (default: the start, or the end for a negative step).
        start: Option<i64>,
        /// Position before which to stop (default: past the end, or before the start).
        stop: Option<i64>,
        /// Step, not zero (default 1).
        step: Option<i64>,
    },
    /// `...`: as many whole axes as the other items leave (at most one per selection).
    Ellipsis,
}

impl SelItem {
    /// The whole axis (`:`).
    pub const ALL: SelItem = SelItem::Slice {
        start: None,
        stop: None,
        step: None,
    };

    /// `start:stop` (step 1).
    pub fn range(r: Range<i64>) -> SelItem {
        SelItem::Slice {
            start: Some(r.start),
            stop: Some(r.end),
            step: None,
        }
    }

    /// `start:stop:step`, each optional.
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> SelItem {
        SelItem::Slice { start, stop, step }
    }

    /// One position.
    pub fn index(i: i64) -> SelItem {
        SelItem::Index(i)
    }
}

impl From<Range<i64>> for SelItem {
    fn from(r: Range<i64>) -> SelItem {
        SelItem::range(r)
    }
}

impl From<i64> for SelItem {
    fn from(i: i64) -> SelItem {
        SelItem::Index(i)
    }
}

/// A selection of part of an array: items for the leading axes (axes not named are taken
/// whole), as numpy indexes with integers, slices and `...`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Selection {
    /// The items, in axis order.
    pub items: Vec<SelItem>,
}

/// One axis of a resolved selection: `count` positions from `start`, `step` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisRange {
    /// The first position (meaningful when `count > 0`).
    pub start: usize,
    /// How many positions.
    pub count: usize,
    /// The distance between positions (negative: backwards; never 0).
    pub step: isize,
    /// `false` when an index selected the position: the axis is not in the result.
    pub keep: bool,
}

impl AxisRange {
    /// The whole axis of length `len`.
    pub fn whole(len: usize) -> AxisRange {
        AxisRange {
            start: 0,
            count: len,
            step: 1,
            keep: true,
        }
    }

    /// Whether this is the whole axis of length `len`, in order.
    pub fn is_whole(&self, len: usize) -> bool {
        self.keep
            && self.count == len
            && (self.step == 1 || len <= 1)
            && (len == 0 || self.start == 0)
    }
}

/// A selection that cannot be parsed or does not fit the array.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// The text is not numpy's slice syntax.
    #[error("cannot parse selection {text:?} at character {at}: {message}")]
    Syntax {
        /// The whole text.
        text: String,
        /// Character position of the problem.
        at: usize,
        /// What was wrong.
        message: String,
    },
    /// More indices and slices than the array has axes.
    #[error("{given} indices for an array of {ndim} dimensions")]
    TooManyIndices {
        /// Items other than `...`.
        given: usize,
        /// The array's number of axes.
        ndim: usize,
    },
    /// `...` more than once.
    #[error("an index can only have a single ellipsis ('...')")]
    MultipleEllipsis,
    /// An index outside its axis.
    #[error("index {index} is out of bounds for axis {axis} with size {len}")]
    OutOfBounds {
        /// The axis (0-based).
        axis: usize,
        /// The index given.
        index: i64,
        /// The axis' length.
        len: usize,
    },
    /// A zero step.
    #[error("slice step cannot be zero (axis {axis})")]
    ZeroStep {
        /// The axis (0-based).
        axis: usize,
    },
    /// A caller's buffer does not hold the selection's elements.
    #[error("buffer of {given} elements for a selection of {needed}")]
    BufferSize {
        /// Elements in the buffer.
        given: usize,
        /// Elements selected.
        needed: usize,
    },
}

impl Selection {
    /// The whole array.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// A selection of these items.
    pub fn new(items: impl IntoIterator<Item = SelItem>) -> Selection {
        Selection {
            items: items.into_iter().collect(),
        }
    }

    /// Parses numpy's syntax: items separated by commas, each an integer, a slice
    /// `start:stop:step` (each part optional) or `...`; spaces anywhere between tokens; an
    /// empty text is the whole array. Brackets around the whole (`[1:2, 3]`) are accepted.
    pub fn parse(text: &str) -> Result<Selection, SelectionError> {
        let err = |at: usize, message: &str| SelectionError::Syntax {
            text: text.to_string(),
            at,
            message: message.to_string(),
        };
        let trimmed = text.trim();
        let lead = text.len() - text.trim_start().len();
        let (body, base) = match trimmed.strip_prefix('[') {
            Some(rest) => match rest.strip_suffix(']') {
                Some(inner) => (inner, lead + 1),
                None => return Err(err(text.len(), "an opening '[' without its ']'")),
            },
            None => (trimmed, lead),
        };
        let mut items = Vec::new();
        if body.trim().is_empty() {
            return Ok(Selection { items });
        }
        let mut pos = base;
        let parts: Vec<&str> = body.split(',').collect();
        let last = parts.len() - 1;
        for (k, part) in parts.iter().enumerate() {
            let at = pos + (part.len() - part.trim_start().len());
            let p = part.trim();
            if p.is_empty() {
                // numpy accepts one trailing comma (`1,`)
                if k == last && k > 0 {
                    break;
                }
                return Err(err(at, "an empty item between commas"));
            }
            if p == "..." || p == "Ellipsis" {
                items.push(SelItem::Ellipsis);
            } else if p.contains(':') {
                let fields: Vec<&str> = p.split(':').collect();
                if fields.len() > 3 {
                    return Err(err(at, "a slice has at most two ':'"));
                }
                let mut vals = [None; 3];
                let mut fpos = at;
                for (i, f) in fields.iter().enumerate() {
                    let t = f.trim();
                    if !t.is_empty() {
                        let v = parse_int(t).ok_or_else(|| {
                            err(fpos + (f.len() - f.trim_start().len()), "not an integer")
                        })?;
                        vals[i] = Some(v);
                    }
                    fpos += f.len() + 1;
                }
                items.push(SelItem::Slice {
                    start: vals[0],
                    stop: vals[1],
                    step: vals[2],
                });
            } else {
                let v = parse_int(p).ok_or_else(|| err(at, "not an integer, slice or '...'"))?;
                items.push(SelItem::Index(v));
            }
            pos += part.len() + 1;
        }
        if items.iter().filter(|i| **i == SelItem::Ellipsis).count() > 1 {
            return Err(SelectionError::MultipleEllipsis);
        }
        Ok(Selection { items })
    }

    /// Checks the selection against `shape` and gives one [`AxisRange`] per axis of the array
    /// (axes the selection does not name are whole).
    pub fn resolve(&self, shape: &[usize]) -> Result<Vec<AxisRange>, SelectionError> {
        let ellipses = self
            .items
            .iter()
            .filter(|i| **i == SelItem::Ellipsis)
            .count();
        if ellipses > 1 {
            return Err(SelectionError::MultipleEllipsis);
        }
        let given = self.items.len() - ellipses;
        if given > shape.len() {
            return Err(SelectionError::TooManyIndices {
                given,
                ndim: shape.len(),
            });
        }
        let mut out = Vec::with_capacity(shape.len());
        for item in &self.items {
            match *item {
                SelItem::Ellipsis => {
                    let fill = shape.len() - given;
                    for _ in 0..fill {
                        out.push(AxisRange::whole(shape[out.len()]));
                    }
                }
                SelItem::Index(i) => {
                    let axis = out.len();
                    let len = shape[axis];
                    let pos = if i < 0 {
                        i.checked_add(len as i64)
                    } else {
                        Some(i)
                    };
                    let pos = pos.filter(|&p| p >= 0 && (p as u64) < len as u64).ok_or(
                        SelectionError::OutOfBounds {
                            axis,
                            index: i,
                            len,
                        },
                    )?;
                    out.push(AxisRange {
                        start: pos as usize,
                        count: 1,
                        step: 1,
                        keep: false,
                    });
                }
                SelItem::Slice { start, stop, step } => {
                    let axis = out.len();
                    out.push(slice_axis(start, stop, step, shape[axis], axis)?);
                }
            }
        }
        while out.len() < shape.len() {
            out.push(AxisRange::whole(shape[out.len()]));
        }
        Ok(out)
    }

    /// The shape of the selected part of an array of `shape`.
    pub fn shape(&self, shape: &[usize]) -> Result<Vec<usize>, SelectionError> {
        Ok(self
            .resolve(shape)?
            .iter()
            .filter(|a| a.keep)
            .map(|a| a.count)
            .collect())
    }
}

/// An integer as python writes one (an optional sign, digits, `_` between digits).
fn parse_int(t: &str) -> Option<i64> {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d.trim_start()),
        None => (false, t.strip_prefix('+').unwrap_or(t).trim_start()),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let digits = digits.replace('_', "");
    let signed = if neg { format!("-{digits}") } else { digits };
    match signed.parse::<i64>() {
        Ok(v) => Some(v),
        // python's integers have no bound: beyond i64, as far as any axis reaches
        Err(e)
            if matches!(
                e.kind(),
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
            ) =>
        {
            Some(if neg { i64::MIN } else { i64::MAX })
        }
        Err(_) => None,
    }
}

/// Python's `slice.indices(len)`, then the count of positions.
fn slice_axis(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    len: usize,
    axis: usize,
) -> Result<AxisRange, SelectionError> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(SelectionError::ZeroStep { axis });
    }
    let n = len as i128;
    let clip = |v: Option<i64>, default: i128, lo: i128, hi: i128| -> i128 {
        match v {
            None => default,
            Some(v) => {
                let v = i128::from(v);
                let v = if v < 0 { v + n } else { v };
                v.clamp(lo, hi)
            }
        }
    };
    let (s, e) = if step > 0 {
        (clip(start, 0, 0, n), clip(stop, n, 0, n))
    } else {
        (clip(start, n - 1, -1, n - 1), clip(stop, -1, -1, n - 1))
    };
    let st = i128::from(step);
    let count = if step > 0 {
        if e > s {
            (e - s + st - 1) / st
        } else {
            0
        }
    } else if s > e {
        (s - e + (-st) - 1) / (-st)
    } else {
        0
    };
    // |step| beyond the axis only ever selects one position; keep it representable.
    let step = isize::try_from(step).unwrap_or(if step > 0 { isize::MAX } else { isize::MIN + 1 });
    Ok(AxisRange {
        start: if count > 0 { s as usize } else { 0 },
        count: count as usize,
        step,
        keep: true,
    })
}

impl FromStr for Selection {
    type Err = SelectionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Selection::parse(s)
    }
}

impl<const N: usize> From<[SelItem; N]> for Selection {
    fn from(items: [SelItem; N]) -> Selection {
        Selection::new(items)
    }
}

impl fmt::Display for SelItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SelItem::Index(i) => write!(f, "{i}"),
            SelItem::Ellipsis => f.write_str("..."),
            SelItem::Slice { start, stop, step } => {
                if let Some(s) = start {
                    write!(f, "{s}")?;
                }
                f.write_str(":")?;
                if let Some(s) = stop {
                    write!(f, "{s}")?;
                }
                if let Some(s) = step {
                    write!(f, ":{s}")?;
                }
                Ok(())
            }
        }
    }
}

/// numpy's text: items joined by `, ` (the whole array is the empty text).
impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, item) in self.items.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions python's `range(len)[slice]` gives, written out by hand.
    fn positions(a: &AxisRange) -> Vec<i64> {
        (0..a.count as i64)
            .map(|k| a.start as i64 + k * a.step as i64)
            .collect()
    }

    #[test]
    fn slices_follow_python() {
        let cases: &[(&str, usize, &[i64])] = &[
            ("2:5", 10, &[2, 3, 4]),
            ("::3", 10, &[0, 3, 6, 9]),
            ("::-1", 4, &[3, 2, 1, 0]),
            ("-3:", 10, &[7, 8, 9]),
            ("-100:3", 10, &[0, 1, 2]),
            ("5:2", 10, &[]),
            ("8:2:-2", 10, &[8, 6, 4]),
            (":-1:-1", 5, &[]),
            ("-1:-6:-2", 5, &[4, 2, 0]),
            ("3:100", 5, &[3, 4]),
            ("::-1", 0, &[]),
            ("::1000000000000", 7, &[0]),
        ];
        for (text, len, want) in cases {
            let sel = Selection::parse(text).unwrap();
            let axes = sel.resolve(&[*len]).unwrap();
            assert_eq!(positions(&axes[0]), *want, "{text} over {len}");
        }
    }

    #[test]
    fn indices_ellipsis_and_errors() {
        let sel = Selection::parse("-1, ..., 0").unwrap();
        let axes = sel.resolve(&[3, 4, 5, 6]).unwrap();
        assert_eq!(axes[0].start, 2);
        assert!(axes[1].is_whole(4) && axes[2].is_whole(5));
        assert_eq!((axes[3].start, axes[3].keep), (0, false));
        assert_eq!(sel.shape(&[3, 4, 5, 6]).unwrap(), vec![4, 5]);
        assert_eq!(
            Selection::parse("3").unwrap().resolve(&[3]),
            Err(SelectionError::OutOfBounds {
                axis: 0,
                index: 3,
                len: 3
            })
        );
        assert_eq!(
            Selection::parse(":, -5").unwrap().resolve(&[9, 4]),
            Err(SelectionError::OutOfBounds {
                axis: 1,
                index: -5,
                len: 4
            })
        );
        assert_eq!(
            Selection::parse("0, 0").unwrap().resolve(&[9]),
            Err(SelectionError::TooManyIndices { given: 2, ndim: 1 })
        );
        assert_eq!(
            Selection::parse("..., 1, ..."),
            Err(SelectionError::MultipleEllipsis)
        );
        assert_eq!(
            Selection::parse("::0").unwrap().resolve(&[9]),
            Err(SelectionError::ZeroStep { axis: 0 })
        );
        assert!(matches!(
            Selection::parse("1:x"),
            Err(SelectionError::Syntax { at: 2, .. })
        ));
        assert!(matches!(
            Selection::parse("1,,2"),
            Err(SelectionError::Syntax { .. })
        ));
        assert!(matches!(
            Selection::parse("1:2:3:4"),
            Err(SelectionError::Syntax { .. })
        ));
        assert_eq!(Selection::parse("").unwrap(), Selection::all());
        assert_eq!(Selection::parse("[1:2, 3]").unwrap().items.len(), 2);
        assert_eq!(
            Selection::parse("5,").unwrap().items,
            vec![SelItem::Index(5)]
        );
        // i64's bounds, and beyond them (python's integers), parse and print back
        let extreme = Selection::parse("-9223372036854775808, ::-9223372036854775808").unwrap();
        assert_eq!(Selection::parse(&extreme.to_string()).unwrap(), extreme);
        assert_eq!(
            Selection::parse("-99999999999999999999:99999999999999999999")
                .unwrap()
                .items,
            vec![SelItem::range(i64::MIN..i64::MAX)]
        );
        assert_eq!(
            Selection::parse("::-99999999999999999999")
                .unwrap()
                .resolve(&[3])
                .unwrap()[0]
                .count,
            1
        );
        // a 0-d array takes only `...` or nothing
        assert_eq!(
            Selection::parse("...").unwrap().resolve(&[]).unwrap(),
            vec![]
        );
    }

    #[test]
    fn display_reparses() {
        for text in ["100:228, 2000:2256", "::4, :", "-1", "..., 1:2:-3", ""] {
            let sel = Selection::parse(text).unwrap();
            assert_eq!(Selection::parse(&sel.to_string()).unwrap(), sel);
        }
        assert_eq!(
            Selection::from([SelItem::range(1..5), SelItem::ALL, SelItem::index(-2)]).to_string(),
            "1:5, :, -2"
        );
    }
}
