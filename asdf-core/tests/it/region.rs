//! Region reads (`dyn_region`, `region`, `read_region_into`, `masked_region`) against whole
//! reads sliced: for every codec, datatypes of both byte orders, views (offset, strides,
//! negative strides, overlapping rows), 0-d and empty arrays, external blocks, inline arrays,
//! masked arrays, the python-written fixtures, and random selections (negative steps,
//! indices, `...`); every selection error, typed and naming path, axis and bound; the
//! checksum policy (a verified region read hashes the whole block first); multi-piece `lz4`
//! and `bsc2` blocks.
//!
//! The expected values never go through the region code: the whole array is read
//! (`dyn_array`, `array::<T>`), numpy's indexing rules are written out below
//! ([`numpy_plan`]: the positions of each axis) and applied with ndarray's `select`.

use crate::common;

use asdf_core::array::{ByteOrder, DType, DynArray, Field, ScalarType, SelectionError, Storage};
use asdf_core::convert::Masked;
use asdf_core::write::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Error, Node, SelItem, Selection, Value};
use ndarray::{ArrayD, Axis, IxDyn};

// ---------------------------------------------------------------------------
// expected values: numpy's rules, applied with ndarray
// ---------------------------------------------------------------------------

/// One axis of numpy's result: the positions taken, and whether the axis stays (a slice)
/// or goes (an index).
type Plan = Vec<(Vec<usize>, bool)>;

/// The positions of `range(len)[start:stop:step]` (python's rules: a negative bound counts
/// from the end, bounds are clipped, a negative step walks down from the end).
fn slice_positions(start: Option<i64>, stop: Option<i64>, step: i64, len: usize) -> Vec<usize> {
    let n = len as i64;
    let norm = |v: i64| if v < 0 { v + n } else { v };
    let mut out = Vec::new();
    if step > 0 {
        let lo = start.map_or(0, |s| norm(s).clamp(0, n));
        let hi = stop.map_or(n, |s| norm(s).clamp(0, n));
        let mut p = lo;
        while p < hi {
            out.push(p as usize);
            match p.checked_add(step) {
                Some(q) => p = q,
                None => break,
            }
        }
    } else {
        let hi = start.map_or(n - 1, |s| norm(s).clamp(-1, n - 1));
        let lo = stop.map_or(-1, |s| norm(s).clamp(-1, n - 1));
        let mut p = hi;
        while p > lo {
            out.push(p as usize);
            match p.checked_add(step) {
                Some(q) => p = q,
                None => break,
            }
        }
    }
    out
}

/// What numpy does with `items` on an array of `shape`: the plan, or the error it raises
/// (in numpy's order: a second `...`, too many indices, then the first bad item).
fn numpy_plan(items: &[SelItem], shape: &[usize]) -> Result<Plan, SelectionError> {
    let ellipses = items.iter().filter(|i| **i == SelItem::Ellipsis).count();
    if ellipses > 1 {
        return Err(SelectionError::MultipleEllipsis);
    }
    let given = items.len() - ellipses;
    if given > shape.len() {
        return Err(SelectionError::TooManyIndices {
            given,
            ndim: shape.len(),
        });
    }
    let mut plan: Plan = Vec::new();
    for item in items {
        let axis = plan.len();
        match *item {
            SelItem::Ellipsis => {
                for _ in 0..shape.len() - given {
                    let len = shape[plan.len()];
                    plan.push(((0..len).collect(), true));
                }
            }
            SelItem::Index(i) => {
                let len = shape[axis] as i64;
                let p = if i < 0 { i + len } else { i };
                if !(0..len).contains(&p) {
                    return Err(SelectionError::OutOfBounds {
                        axis,
                        index: i,
                        len: shape[axis],
                    });
                }
                plan.push((vec![p as usize], false));
            }
            SelItem::Slice { start, stop, step } => {
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(SelectionError::ZeroStep { axis });
                }
                plan.push((slice_positions(start, stop, step, shape[axis]), true));
            }
        }
    }
    while plan.len() < shape.len() {
        let len = shape[plan.len()];
        plan.push(((0..len).collect(), true));
    }
    Ok(plan)
}

/// `a` indexed by `plan`, with ndarray alone.
fn take<T: Clone>(a: &ArrayD<T>, plan: &Plan) -> ArrayD<T> {
    let Some((first, _)) = plan.first() else {
        return a.clone();
    };
    let mut v = a.select(Axis(0), first);
    for (k, (pos, _)) in plan.iter().enumerate().skip(1) {
        v = v.select(Axis(k), pos);
    }
    for k in (0..plan.len()).rev() {
        if !plan[k].1 {
            v = v.index_axis_move(Axis(k), 0);
        }
    }
    v
}

/// A dynamic array indexed by `plan`: its elements' indices selected with [`take`], then
/// their bytes gathered.
fn take_dyn(a: &DynArray, plan: &Plan) -> DynArray {
    let n = a.element_count();
    let idx = ArrayD::from_shape_vec(IxDyn(&a.shape), (0..n).collect::<Vec<usize>>()).unwrap();
    let sel = take(&idx, plan);
    let item = a.dtype.itemsize();
    let data = sel
        .iter()
        .flat_map(|&i| a.data[i * item..(i + 1) * item].iter().copied())
        .collect();
    DynArray {
        dtype: a.dtype.clone(),
        shape: sel.shape().to_vec(),
        data,
    }
}

#[test]
fn the_expected_values_follow_numpy() {
    // numpy's answers, written by hand: range(10)[...]
    type Case = (Option<i64>, Option<i64>, i64, &'static [usize]);
    let cases: &[Case] = &[
        (Some(2), Some(5), 1, &[2, 3, 4]),
        (None, None, 3, &[0, 3, 6, 9]),
        (None, None, -4, &[9, 5, 1]),
        (Some(-3), None, 1, &[7, 8, 9]),
        (Some(8), Some(2), -2, &[8, 6, 4]),
        (Some(-1), Some(-11), -3, &[9, 6, 3, 0]),
        (Some(20), Some(-20), -5, &[9, 4]),
        (Some(5), Some(2), 1, &[]),
        (None, Some(-100), -1, &[9, 8, 7, 6, 5, 4, 3, 2, 1, 0]),
        (None, Some(-10), -1, &[9, 8, 7, 6, 5, 4, 3, 2, 1]),
    ];
    for (start, stop, step, want) in cases {
        assert_eq!(
            slice_positions(*start, *stop, *step, 10),
            *want,
            "{start:?}:{stop:?}:{step}"
        );
    }
    // a[1, ::-1] of arange(6).reshape(2, 3) is [5, 4, 3]
    let a = ArrayD::from_shape_vec(IxDyn(&[2, 3]), (0..6).collect::<Vec<i32>>()).unwrap();
    let plan = numpy_plan(&sel("1, ::-1").items, &[2, 3]).unwrap();
    assert_eq!(take(&a, &plan).into_raw_vec_and_offset().0, vec![5, 4, 3]);
    let plan = numpy_plan(&sel("..., 2").items, &[2, 3]).unwrap();
    assert_eq!(take(&a, &plan).into_raw_vec_and_offset().0, vec![2, 5]);
}

// ---------------------------------------------------------------------------
// checks
// ---------------------------------------------------------------------------

/// One file opened twice: region reads go to `part`, the whole reads that give the expected
/// values to `whole`, so no region is served from a block a whole read put in the cache.
struct Two {
    part: AsdfFile,
    whole: AsdfFile,
}

impl Two {
    fn bytes(bytes: Vec<u8>) -> Result<Two, Error> {
        Ok(Two {
            part: AsdfFile::from_bytes(bytes.clone())?,
            whole: AsdfFile::from_bytes(bytes)?,
        })
    }

    fn open(path: impl AsRef<std::path::Path>) -> Result<Two, Error> {
        Ok(Two {
            part: AsdfFile::open(&path)?,
            whole: AsdfFile::open(&path)?,
        })
    }
}

fn sel(text: &str) -> Selection {
    Selection::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Where two dynamic arrays first differ, for a failure message that fits on a screen.
fn differ(got: &DynArray, want: &DynArray) -> Option<String> {
    if got.dtype != want.dtype || got.shape != want.shape {
        return Some(format!(
            "got {} {:?}, want {} {:?}",
            got.dtype.name(),
            got.shape,
            want.dtype.name(),
            want.shape
        ));
    }
    if got.data != want.data {
        let at = got
            .data
            .iter()
            .zip(&want.data)
            .position(|(a, b)| a != b)
            .unwrap_or(got.data.len().min(want.data.len()));
        return Some(format!(
            "data differs from byte {at} (of {} got, {} wanted)",
            got.data.len(),
            want.data.len()
        ));
    }
    None
}

/// Whether the writer wrote `a` as `whole` was read: the same numpy datatype (a byte
/// order of one-byte types is no matter), shape and bytes.
fn as_written(whole: &DynArray, a: &DynArray) -> bool {
    whole.dtype.to_numpy_str() == a.dtype.to_numpy_str()
        && whole.shape == a.shape
        && whole.data == a.data
}

/// `dyn_region(path, s)` equals the whole array `whole` indexed as numpy would, or fails
/// with the error numpy would raise, typed, naming `path`.
#[track_caller]
fn check_dyn(file: &AsdfFile, path: &str, whole: &DynArray, s: &Selection) {
    let got = file.dyn_region(path, s);
    match numpy_plan(&s.items, &whole.shape) {
        Ok(plan) => {
            let want = take_dyn(whole, &plan);
            let got = got.unwrap_or_else(|e| panic!("{path}[{s}] of {:?}: {e}", whole.shape));
            if let Some(d) = differ(&got, &want) {
                panic!("{path}[{s}] of {:?}: {d}", whole.shape);
            }
        }
        Err(want) => match got {
            Err(Error::Selection { path: p, source }) => {
                assert_eq!(p, path, "[{s}]");
                assert_eq!(source, want, "{path}[{s}] of {:?}", whole.shape);
            }
            other => panic!(
                "{path}[{s}] of {:?}: expected {want:?}, got {:?}",
                whole.shape,
                other.map(|a| a.shape)
            ),
        },
    }
}

/// `region::<T>` and `read_region_into::<T>` equal `array::<T>` indexed as numpy would.
#[track_caller]
fn check_typed<T>(two: &Two, path: &str, s: &Selection)
where
    T: asdf_core::array::Element + Clone + PartialEq + std::fmt::Debug + Default,
{
    let whole = two.whole.array::<T>(path).unwrap();
    let file = &two.part;
    let Ok(plan) = numpy_plan(&s.items, whole.shape()) else {
        assert!(
            matches!(file.region::<T>(path, s), Err(Error::Selection { .. })),
            "{path}[{s}]"
        );
        return;
    };
    let want = take(&whole, &plan);
    let got = file
        .region::<T>(path, s)
        .unwrap_or_else(|e| panic!("{path}[{s}]: {e}"));
    assert_eq!(got, want, "{path}[{s}]");
    let mut buf = vec![T::default(); want.len()];
    let shape = file
        .read_region_into::<T>(path, s, &mut buf)
        .unwrap_or_else(|e| panic!("read_region_into {path}[{s}]: {e}"));
    assert_eq!(shape, want.shape(), "read_region_into {path}[{s}]");
    assert_eq!(
        buf,
        want.iter().cloned().collect::<Vec<T>>(),
        "read_region_into {path}[{s}]"
    );
}

/// Selections every array of at least this many dimensions is checked with.
const FIXED: &[(usize, &str)] = &[
    (0, ""),
    (0, "..."),
    (1, ":"),
    (1, "::-1"),
    (1, "1:-1:2"),
    (1, "-1"),
    (1, "0"),
    (1, "..., -2"),
    (1, "5:2"),
    (1, "-100:100"),
    (2, "1:3, ::-2"),
    (2, "::2, 1"),
    (2, "-1, ..."),
    (2, "..., 1:2"),
    (3, "1, ..., 2"),
    (3, "::-3, 1:4, ::-1"),
    (3, ":, 2, ::2"),
    (3, "2:0:-1, ..., 3:"),
];

/// A small deterministic generator (splitmix64), so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// A value in `lo..=hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A random selection for an array of `shape`: indices (either sign), slices with bounds
/// inside and outside the axis, steps of both signs and beyond the axis, `...` anywhere;
/// now and then an out-of-range index, a zero step, a second `...` or one item too many.
fn random_selection(rng: &mut Rng, shape: &[usize]) -> Selection {
    let nd = shape.len();
    let n_items = rng.below(nd as u64 + 1) as usize;
    let ellipsis_at = rng
        .chance(35)
        .then(|| rng.below(n_items as u64 + 1) as usize);
    let mut items = Vec::new();
    for k in 0..n_items {
        if ellipsis_at == Some(k) {
            items.push(SelItem::Ellipsis);
        }
        // the axis this item lands on
        let axis = match ellipsis_at {
            Some(e) if k >= e => nd - (n_items - k),
            _ => k,
        };
        let len = shape[axis] as i64;
        if rng.chance(25) {
            let i = if len > 0 && !rng.chance(8) {
                rng.between(-len, len - 1)
            } else {
                // out of range (either side)
                if rng.chance(50) {
                    len + rng.between(0, 3)
                } else {
                    -len - 1 - rng.between(0, 3)
                }
            };
            items.push(SelItem::Index(i));
            continue;
        }
        let bound = |rng: &mut Rng| {
            (!rng.chance(30)).then(|| {
                if rng.chance(10) {
                    // far outside the axis
                    rng.between(-1 << 40, 1 << 40)
                } else {
                    rng.between(-len - 2, len + 2)
                }
            })
        };
        let start = bound(rng);
        let stop = bound(rng);
        let step = if rng.chance(40) {
            None
        } else {
            Some(match rng.below(12) {
                0 => 0,
                1 => i64::MAX,
                2 => i64::MIN + 1,
                3 => len.max(1) + 1,
                _ => {
                    let m = rng.between(1, 4);
                    if rng.chance(50) {
                        m
                    } else {
                        -m
                    }
                }
            })
        };
        // a zero step is rare enough: most draws of 0 become 1
        let step = match step {
            Some(0) if !rng.chance(30) => Some(1),
            s => s,
        };
        items.push(SelItem::Slice { start, stop, step });
    }
    if ellipsis_at == Some(n_items) {
        items.push(SelItem::Ellipsis);
    }
    if rng.chance(3) {
        items.push(SelItem::Ellipsis);
    }
    if rng.chance(3) {
        items.push(SelItem::ALL);
    }
    Selection::new(items)
}

/// Checks `dyn_region` on the array at `path` (read whole as `whole`) with the fixed
/// selections that fit its rank and `random` random ones.
fn check_many(file: &AsdfFile, path: &str, whole: &DynArray, rng: &mut Rng, random: usize) {
    for (min_nd, text) in FIXED {
        if whole.shape.len() >= *min_nd {
            check_dyn(file, path, whole, &sel(text));
        }
    }
    for _ in 0..random {
        let s = random_selection(rng, &whole.shape);
        check_dyn(file, path, whole, &s);
    }
}

// ---------------------------------------------------------------------------
// arrays of every datatype, written with every codec
// ---------------------------------------------------------------------------

fn scalar(ty: ScalarType, order: ByteOrder) -> DType {
    DType::scalar(ty, order)
}

/// Bytes of `n` elements, element `i` from `f(i)` in the given order.
fn elems<const N: usize>(n: usize, order: ByteOrder, f: impl Fn(usize) -> [u8; N]) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            let mut b = f(i);
            if order == ByteOrder::Big {
                b.reverse();
            }
            b
        })
        .collect()
}

/// Arrays of many datatypes and both byte orders, with their names.
fn arrays() -> Vec<(&'static str, DynArray)> {
    use ByteOrder::{Big, Little};
    let shape = vec![9, 7, 5];
    let n = 9 * 7 * 5;
    let f4 = |o| elems(n, o, |i| (i as f32 * 0.5 - 40.0).to_le_bytes());
    let f8 = |o| elems(n, o, |i| (i as f64 * -1.25 + 3.0).to_le_bytes());
    let i2 = |o| elems(n, o, |i| ((i as i16).wrapping_mul(-377)).to_le_bytes());
    let c16 = |o: ByteOrder| -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                let (mut re, mut im) =
                    ((i as f64).to_le_bytes(), (-(i as f64) / 4.0).to_le_bytes());
                if o == Big {
                    re.reverse();
                    im.reverse();
                }
                re.into_iter().chain(im)
            })
            .collect()
    };
    let ucs4 = |o| {
        (0..n * 3)
            .flat_map(|i| {
                let c = ['a', 'Z', 'é', '☃', '\u{1F600}'][i % 5] as u32;
                if o == Big {
                    c.to_be_bytes()
                } else {
                    c.to_le_bytes()
                }
            })
            .collect::<Vec<u8>>()
    };
    let record = DType::Record(vec![
        Field {
            name: "id".into(),
            dtype: scalar(ScalarType::Int32, Big),
            shape: vec![],
        },
        Field {
            name: "x".into(),
            dtype: scalar(ScalarType::Float64, Little),
            shape: vec![],
        },
        Field {
            name: "tag".into(),
            dtype: scalar(ScalarType::Ascii(3), Big),
            shape: vec![],
        },
        Field {
            name: "v".into(),
            dtype: scalar(ScalarType::Int16, Little),
            shape: vec![2],
        },
    ]);
    let rec: Vec<u8> = (0..n)
        .flat_map(|i| {
            let mut r = Vec::new();
            r.extend_from_slice(&(i as i32 * 7 - 100).to_be_bytes());
            r.extend_from_slice(&(i as f64 / 3.0).to_le_bytes());
            r.extend_from_slice(&[b'a' + (i % 26) as u8, b'0' + (i % 10) as u8, 0]);
            r.extend_from_slice(&(i as i16).to_le_bytes());
            r.extend_from_slice(&(-(i as i16)).to_le_bytes());
            r
        })
        .collect();
    let d = |dtype: DType, data: Vec<u8>| DynArray {
        dtype,
        shape: shape.clone(),
        data,
    };
    vec![
        ("f4_le", d(scalar(ScalarType::Float32, Little), f4(Little))),
        ("f4_be", d(scalar(ScalarType::Float32, Big), f4(Big))),
        ("f8_le", d(scalar(ScalarType::Float64, Little), f8(Little))),
        ("f8_be", d(scalar(ScalarType::Float64, Big), f8(Big))),
        ("i2_le", d(scalar(ScalarType::Int16, Little), i2(Little))),
        ("i2_be", d(scalar(ScalarType::Int16, Big), i2(Big))),
        (
            "u1",
            d(
                scalar(ScalarType::UInt8, Little),
                (0..n).map(|i| (i * 37 % 256) as u8).collect(),
            ),
        ),
        (
            "bool",
            d(
                scalar(ScalarType::Bool8, Little),
                (0..n).map(|i| u8::from(i % 3 == 0 || i % 7 == 2)).collect(),
            ),
        ),
        (
            "c16_le",
            d(scalar(ScalarType::Complex128, Little), c16(Little)),
        ),
        ("c16_be", d(scalar(ScalarType::Complex128, Big), c16(Big))),
        ("record", d(record, rec)),
        (
            "ascii",
            d(
                scalar(ScalarType::Ascii(5), Big),
                (0..n * 5)
                    .map(|i| if i % 5 == 4 { 0 } else { b'a' + (i % 23) as u8 })
                    .collect(),
            ),
        ),
        (
            "ucs4_le",
            d(scalar(ScalarType::Ucs4(3), Little), ucs4(Little)),
        ),
        ("ucs4_be", d(scalar(ScalarType::Ucs4(3), Big), ucs4(Big))),
        // other shapes: one long axis, a matrix, 0-d, empty
        (
            "long",
            DynArray {
                dtype: scalar(ScalarType::Int32, Little),
                shape: vec![5000],
                data: elems(5000, Little, |i| (i as i32 * 3 - 7).to_le_bytes()),
            },
        ),
        (
            "matrix_be",
            DynArray {
                dtype: scalar(ScalarType::UInt16, Big),
                shape: vec![37, 41],
                data: elems(37 * 41, Big, |i| (i as u16).wrapping_mul(31).to_le_bytes()),
            },
        ),
        (
            "zero_d",
            DynArray {
                dtype: scalar(ScalarType::Float64, Big),
                shape: vec![],
                data: 2.5f64.to_be_bytes().to_vec(),
            },
        ),
        (
            "empty",
            DynArray {
                dtype: scalar(ScalarType::Int16, Little),
                shape: vec![4, 0, 3],
                data: vec![],
            },
        ),
        (
            "empty_1d",
            DynArray {
                dtype: scalar(ScalarType::Float32, Big),
                shape: vec![0],
                data: vec![],
            },
        ),
    ]
}

/// Every codec (and none).
fn codecs() -> Vec<Option<Compression>> {
    std::iter::once(None)
        .chain(Compression::ALL.into_iter().map(Some))
        .collect()
}

fn codec_name(c: Option<Compression>) -> String {
    c.map_or("none".to_string(), |c| {
        String::from_utf8_lossy(&c.label())
            .trim_end_matches('\0')
            .to_string()
    })
}

/// A file holding `arrays` under their names, each in its own block with codec `c`.
fn write_arrays(arrays: &[(&str, DynArray)], c: Option<Compression>) -> Vec<u8> {
    let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
    let mut w = Writer::new(WriteOptions::default());
    let mut entries = Vec::new();
    for (name, a) in arrays {
        let node = w.add_array_with(
            a,
            ArrayOptions {
                compression: Some(choice),
                storage: None,
            },
        );
        entries.push((name.to_string(), node));
    }
    w.write_to_vec(&Node::map(entries)).unwrap()
}

#[test]
fn every_codec_datatype_and_byte_order_reads_regions_as_the_whole_sliced() {
    let arrays = arrays();
    let mut rng = Rng(27);
    for c in codecs() {
        let file = Two::bytes(write_arrays(&arrays, c)).unwrap();
        let label = c.map_or(*b"\0\0\0\0", |c| c.label());
        assert!(file.part.blocks().iter().all(|b| b.compression == label));
        for (name, a) in &arrays {
            let path = format!("/{name}");
            let whole = file.whole.dyn_array(&path).unwrap();
            // the writer wrote what we gave it: the expected values rest on `a` too
            assert!(as_written(&whole, a), "{} {name}", codec_name(c));
            check_many(&file.part, &path, &whole, &mut rng, 60);
        }
        // the typed reads, the caller's buffer
        let mut typed = Rng(5);
        for text in FIXED.iter().map(|(_, t)| *t) {
            let s = sel(text);
            check_typed::<f32>(&file, "/f4_le", &s);
            check_typed::<f32>(&file, "/f4_be", &s);
            check_typed::<f64>(&file, "/f8_be", &s);
            check_typed::<i16>(&file, "/i2_be", &s);
            check_typed::<u8>(&file, "/u1", &s);
            check_typed::<bool>(&file, "/bool", &s);
            check_typed::<num_complex::Complex<f64>>(&file, "/c16_be", &s);
            check_typed::<num_complex::Complex<f64>>(&file, "/c16_le", &s);
        }
        for _ in 0..20 {
            let s = random_selection(&mut typed, &[37, 41]);
            check_typed::<u16>(&file, "/matrix_be", &s);
            let s = random_selection(&mut typed, &[5000]);
            check_typed::<i32>(&file, "/long", &s);
        }
        check_typed::<f64>(&file, "/zero_d", &sel("..."));
        check_typed::<i16>(&file, "/empty", &sel("1:3, :, -1"));
    }
}

// ---------------------------------------------------------------------------
// views
// ---------------------------------------------------------------------------

/// Views sharing one block (made by the writer): offsets, transposes, negative strides in
/// one and two axes, overlapping rows (a sliding window), a column; every codec.
#[test]
fn views_with_offsets_and_negative_strides_read_regions_as_the_whole_sliced() {
    let base = DynArray {
        dtype: scalar(ScalarType::Int32, ByteOrder::Big),
        shape: vec![12, 20],
        data: elems(240, ByteOrder::Big, |i| {
            (i as i32 * 11 - 1000).to_le_bytes()
        }),
    };
    // (name, offset, shape, strides) in bytes over the base's 960 bytes
    let views: &[(&str, u64, &[usize], &[i64])] = &[
        ("sub", 8, &[5, 6], &[80, 4]),
        ("reversed", 956, &[240], &[-4]),
        ("transposed", 0, &[20, 12], &[4, 80]),
        ("both_reversed", (11 * 20 + 19) * 4, &[6, 7], &[-160, -12]),
        ("mixed", 19 * 4, &[12, 10], &[80, -8]),
        ("window", 4, &[10, 5], &[4, 4]),
        ("column", 12, &[12], &[80]),
        ("empty_view", 40, &[0, 3], &[80, 4]),
    ];
    let mut rng = Rng(99);
    for c in codecs() {
        let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let mut w = Writer::new(WriteOptions::default());
        let b = w.add_array_with(
            &base,
            ArrayOptions {
                compression: Some(choice),
                storage: None,
            },
        );
        let mut entries = vec![("base".to_string(), b.clone())];
        for (name, offset, shape, strides) in views {
            let v = w
                .add_view(&b, *offset, shape, strides)
                .unwrap_or_else(|| panic!("{name} fits the base"));
            entries.push((name.to_string(), v));
        }
        let file = Two::bytes(w.write_to_vec(&Node::map(entries)).unwrap()).unwrap();
        assert_eq!(file.part.blocks().len(), 1, "one shared block");
        for (name, offset, shape, strides) in views {
            let path = format!("/{name}");
            let whole = file.whole.dyn_array(&path).unwrap();
            // the view is what numpy makes of these offset and strides
            let want: Vec<u8> = view_elements(*offset, shape, strides)
                .flat_map(|o| base.data[o..o + 4].iter().copied())
                .collect();
            assert_eq!(whole.data, want, "{} {name}", codec_name(c));
            check_many(&file.part, &path, &whole, &mut rng, 40);
            for (_, text) in FIXED {
                check_typed::<i32>(&file, &path, &sel(text));
            }
        }
    }
}

/// The byte offsets of a view's elements in C order.
fn view_elements(offset: u64, shape: &[usize], strides: &[i64]) -> impl Iterator<Item = usize> {
    let count: usize = shape.iter().product();
    let (shape, strides) = (shape.to_vec(), strides.to_vec());
    (0..count).map(move |mut i| {
        let mut at = offset as i64;
        for k in (0..shape.len()).rev() {
            at += (i % shape[k]) as i64 * strides[k];
            i /= shape[k];
        }
        at as usize
    })
}

const HEADER: &str =
    "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

/// A file whose tree is `yaml` (written by hand) over the blocks the writer made for
/// `arrays` (no block index, so only the blocks follow the tree).
fn hand_tree_over_blocks(
    yaml: &str,
    arrays: &[(&str, DynArray)],
    c: Option<Compression>,
) -> Vec<u8> {
    let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
    let mut w = Writer::new(
        WriteOptions::default()
            .block_index(false)
            .compression(choice),
    );
    let entries: Vec<(String, Node)> = arrays
        .iter()
        .map(|(n, a)| (n.to_string(), w.add_array(a)))
        .collect();
    let bytes = w.write_to_vec(&Node::map(entries)).unwrap();
    let end = bytes.windows(5).position(|x| x == b"\n...\n").unwrap() + 5;
    let blocks = end
        + bytes[end..]
            .windows(4)
            .position(|x| x == b"\xd3BLK")
            .unwrap();
    let mut out = format!("{HEADER}{yaml}...\n").into_bytes();
    out.extend_from_slice(&bytes[blocks..]);
    out
}

/// ndarray nodes written by hand over a block: strides that no writer here makes
/// (element strides not a multiple of the row, a negative inner stride with an offset, a
/// record array read with a stride of two records), big-endian and compressed.
#[test]
fn hand_written_views_over_a_block() {
    let base = DynArray {
        dtype: scalar(ScalarType::Int16, ByteOrder::Big),
        shape: vec![60],
        data: elems(60, ByteOrder::Big, |i| {
            (i as i16 * 101 - 3000).to_le_bytes()
        }),
    };
    let yaml = "\
base: !core/ndarray-1.1.0
  source: 0
  datatype: int16
  byteorder: big
  shape: [60]
a: !core/ndarray-1.1.0
  source: 0
  datatype: int16
  byteorder: big
  shape: [4, 3]
  offset: 6
  strides: [12, -2]
fortran: !core/ndarray-1.1.0
  source: 0
  datatype: int16
  byteorder: big
  shape: [5, 6]
  strides: [2, 10]
odd: !core/ndarray-1.1.0
  source: 0
  datatype: int16
  byteorder: big
  shape: [3, 4, 2]
  offset: 110
  strides: [-14, -26, 6]
broadcast: !core/ndarray-1.1.0
  source: 0
  datatype: int16
  byteorder: big
  shape: [4, 5]
  offset: 20
  strides: [0, 2]
unaligned: !core/ndarray-1.1.0
  source: 0
  datatype: int16
  byteorder: big
  shape: [19]
  offset: 1
  strides: [3]
pairs: !core/ndarray-1.1.0
  source: 0
  datatype: [{name: hi, datatype: int16, byteorder: big}, {name: lo, datatype: int16, byteorder: big}]
  shape: [7]
  offset: 4
  strides: [8]
";
    let views: &[(&str, u64, &[usize], &[i64])] = &[
        ("a", 6, &[4, 3], &[12, -2]),
        ("fortran", 0, &[5, 6], &[2, 10]),
        ("odd", 110, &[3, 4, 2], &[-14, -26, 6]),
        ("broadcast", 20, &[4, 5], &[0, 2]),
        ("unaligned", 1, &[19], &[3]),
    ];
    let mut rng = Rng(7);
    for c in [
        None,
        Some(Compression::Zlib),
        Some(Compression::Lz4),
        Some(Compression::Bsc2),
    ] {
        let file = Two::bytes(hand_tree_over_blocks(yaml, &[("base", base.clone())], c)).unwrap();
        for (name, offset, shape, strides) in views {
            let path = format!("/{name}");
            let whole = file.whole.dyn_array(&path).unwrap();
            let want: Vec<u8> = view_elements(*offset, shape, strides)
                .flat_map(|o| base.data[o..o + 2].iter().copied())
                .collect();
            assert_eq!(whole.data, want, "{} {name}", codec_name(c));
            check_many(&file.part, &path, &whole, &mut rng, 40);
        }
        let pairs = file.whole.dyn_array("/pairs").unwrap();
        let want: Vec<u8> = (0..7)
            .flat_map(|r| base.data[4 + 8 * r..8 + 8 * r].iter().copied())
            .collect();
        assert_eq!(pairs.data, want, "{} pairs", codec_name(c));
        check_many(&file.part, "/pairs", &pairs, &mut rng, 30);
    }
}

/// python asdf's own views (`save_base=True`): offsets, negative strides, transposes, in
/// little- and big-endian and zlib blocks.
#[test]
fn python_written_views() {
    let mut rng = Rng(11);
    for name in [
        "views_shared_base.asdf",
        "views_shared_base_bigendian.asdf",
        "views_shared_base_zlib.asdf",
        "views_default.asdf",
    ] {
        let file = Two::open(fixture(name)).unwrap();
        let paths = ndarray_paths(file.part.tree());
        assert!(paths.len() >= 3, "{name}: {paths:?}");
        for path in paths {
            let whole = file.whole.dyn_array(&path).unwrap();
            check_many(&file.part, &path, &whole, &mut rng, 40);
        }
    }
}

// ---------------------------------------------------------------------------
// external, inline, masked
// ---------------------------------------------------------------------------

fn fixture(name: &str) -> std::path::PathBuf {
    common::data_dir("fixtures").join(name)
}

/// JSON pointers of the ndarray nodes in a tree (masks that are ndarrays included).
fn ndarray_paths(root: &Node) -> Vec<String> {
    fn walk(n: &Node, here: String, out: &mut Vec<String>, depth: usize) {
        if depth > 64 {
            return;
        }
        if n.is_ndarray() {
            out.push(here.clone());
            if let Some(m) = n.get("mask").filter(|m| m.is_ndarray()) {
                walk(m, format!("{here}/mask"), out, depth + 1);
            }
            return;
        }
        match n.value() {
            Value::Map(entries) => {
                for (k, v) in entries {
                    if let Some(k) = k.as_str() {
                        let k = asdf_core::unstable::escape_pointer_segment(k);
                        walk(v, format!("{here}/{k}"), out, depth + 1);
                    }
                }
            }
            Value::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{here}/{i}"), out, depth + 1);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(root, String::new(), &mut out, 0);
    out
}

#[test]
fn external_blocks_read_regions_from_their_own_files() {
    // python's exploded file: a = arange(10, f8), b = arange(6, >i4).reshape(2, 3)
    let file = Two::open(fixture("external.asdf")).unwrap();
    assert!(file.part.blocks().is_empty());
    let mut rng = Rng(3);
    for path in ["/a", "/b"] {
        let whole = file.whole.dyn_array(path).unwrap();
        check_many(&file.part, path, &whole, &mut rng, 60);
    }
    check_typed::<f64>(&file, "/a", &sel("::-3"));
    check_typed::<i32>(&file, "/b", &sel("-1, ::-1"));
    // ours, with every codec
    let dir = common::Scratch::new("region-external");
    let arrays: Vec<(&str, DynArray)> = arrays()
        .into_iter()
        .filter(|(n, _)| ["f8_be", "record", "ucs4_le", "matrix_be", "zero_d", "empty"].contains(n))
        .collect();
    for c in codecs() {
        let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let mut w = Writer::new(
            WriteOptions::default()
                .storage(Storage::External)
                .compression(choice),
        );
        let entries: Vec<(String, Node)> = arrays
            .iter()
            .map(|(n, a)| (n.to_string(), w.add_array(a)))
            .collect();
        let path = dir.join(format!("ext_{}.asdf", codec_name(c)));
        w.write_to_path(&Node::map(entries), &path).unwrap();
        let file = Two::open(&path).unwrap();
        assert!(
            file.part.blocks().is_empty(),
            "{}: all external",
            codec_name(c)
        );
        for (name, a) in &arrays {
            let p = format!("/{name}");
            let whole = file.whole.dyn_array(&p).unwrap();
            assert!(as_written(&whole, a), "{} {name}", codec_name(c));
            check_many(&file.part, &p, &whole, &mut rng, 30);
        }
    }
}

#[test]
fn inline_arrays_read_regions() {
    let arrays: Vec<(&str, DynArray)> = arrays()
        .into_iter()
        .filter(|(n, _)| !["zero_d", "long"].contains(n)) // 0-d cannot be inline
        .collect();
    let mut w = Writer::new(WriteOptions::default().storage(Storage::Inline));
    let entries: Vec<(String, Node)> = arrays
        .iter()
        .map(|(n, a)| (n.to_string(), w.add_array(a)))
        .collect();
    let file = Two::bytes(w.write_to_vec(&Node::map(entries)).unwrap()).unwrap();
    let inline: Vec<&str> = arrays
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| file.part.get(&format!("/{n}/source")).is_none())
        .collect();
    for n in [
        "f4_be",
        "c16_le",
        "bool",
        "ascii",
        "ucs4_be",
        "matrix_be",
        "empty",
    ] {
        assert!(inline.contains(&n), "{n} inline: {inline:?}");
    }
    let mut rng = Rng(13);
    for (name, _) in &arrays {
        let path = format!("/{name}");
        let whole = file.whole.dyn_array(&path).unwrap();
        check_many(&file.part, &path, &whole, &mut rng, 30);
    }
    for text in FIXED.iter().map(|(_, t)| *t) {
        check_typed::<f64>(&file, "/f8_le", &sel(text));
        check_typed::<bool>(&file, "/bool", &sel(text));
    }
    // python's inline forms
    for name in [
        "dtypes_inline.asdf",
        "inline_forms.asdf",
        "inline_empty.asdf",
        "dtypes_strings_inline.asdf",
        "dtypes_structured_inline.asdf",
    ] {
        let file = Two::open(fixture(name)).unwrap();
        for path in ndarray_paths(file.part.tree()) {
            let whole = file.whole.dyn_array(&path).unwrap();
            check_many(&file.part, &path, &whole, &mut rng, 20);
        }
    }
}

/// `masked_region::<T>` equals the whole masked array (`read_as::<Masked<T>>`) sliced, data
/// and mask alike.
#[track_caller]
fn check_masked<T>(two: &Two, path: &str, s: &Selection)
where
    T: asdf_core::array::Element + asdf_core::convert::MaskValue + Clone + std::fmt::Debug,
    Masked<T>: asdf_core::convert::FromAsdf,
{
    let whole: Masked<T> = two.whole.read_as(path).unwrap();
    let got = two.part.masked_region::<T>(path, s);
    match numpy_plan(&s.items, whole.data.shape()) {
        Ok(plan) => {
            let got = got.unwrap_or_else(|e| panic!("{path}[{s}]: {e}"));
            assert_eq!(got.mask, take(&whole.mask, &plan), "{path}[{s}] mask");
            // masked values may be NaN: compare their debug text
            let want = take(&whole.data, &plan);
            let text = |a: &ArrayD<T>| a.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>();
            assert_eq!(got.data.shape(), want.shape(), "{path}[{s}] data");
            assert_eq!(text(&got.data), text(&want), "{path}[{s}] data");
        }
        Err(want) => match got {
            Err(Error::Selection { path: p, source }) => {
                assert_eq!((p.to_string().as_str(), source), (path, want), "[{s}]");
            }
            other => panic!("{path}[{s}]: expected {want:?}, got {other:?}"),
        },
    }
}

#[test]
fn masked_arrays_read_masked_regions() {
    let mut rng = Rng(17);
    let mut selections = |shape: &[usize]| -> Vec<Selection> {
        FIXED
            .iter()
            .filter(|(nd, _)| *nd <= shape.len())
            .map(|(_, t)| sel(t))
            .chain((0..30).map(|_| random_selection(&mut rng, shape)))
            .collect()
    };
    // python's: mask arrays in blocks (m: f8 [4], m2: <i4 (2, 3), mask_all_false: <i2 [3]),
    // and inline
    for name in ["masked.asdf", "masked_inline.asdf"] {
        let file = Two::open(fixture(name)).unwrap();
        for s in selections(&[4]) {
            check_masked::<f64>(&file, "/m", &s);
        }
        for s in selections(&[2, 3]) {
            check_masked::<i32>(&file, "/m2", &s);
        }
        if name == "masked.asdf" {
            for s in selections(&[3]) {
                check_masked::<i16>(&file, "/mask_all_false", &s);
            }
        }
    }
    // numbers as masks: -999 in int32, NaN in float64 (hand-written)
    let file = Two::open(fixture("masked_scalar.asdf")).unwrap();
    for s in selections(&[4]) {
        check_masked::<i32>(&file, "/inline_int", &s);
    }
    for s in selections(&[2, 2]) {
        check_masked::<f64>(&file, "/inline_float", &s);
    }
    // ours: a mask array with its own codec
    let data = ndarray::Array2::from_shape_fn((16, 24), |(i, j)| (i * 24 + j) as f32 - 100.0);
    let mask = ndarray::Array2::from_shape_fn((16, 24), |(i, j)| (i * 7 + j * 3) % 5 == 0);
    for c in [None, Some(Compression::Zstd), Some(Compression::Lz4)] {
        let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_masked_array(
            &data,
            &mask,
            ArrayOptions {
                compression: Some(choice),
                storage: None,
            },
        );
        let file = Two::bytes(w.write_to_vec(&asdf_core::tree!({"m": node})).unwrap()).unwrap();
        for s in selections(&[16, 24]) {
            check_masked::<f32>(&file, "/m", &s);
        }
        // the mask itself is an array: its regions too
        let whole = file.whole.dyn_array("/m/mask").unwrap();
        check_many(&file.part, "/m/mask", &whole, &mut Rng(19), 20);
    }
}

// ---------------------------------------------------------------------------
// every python-written fixture and reference file
// ---------------------------------------------------------------------------

/// Every array of every fixture (python asdf 6.0.0: every codec, datatypes, multi-chunk lz4,
/// streams, padded blocks, no index) and of the official reference files: a region read
/// equals the whole read sliced; an array that cannot be read whole cannot be read in part.
#[test]
fn every_array_of_the_python_written_files() {
    let mut rng = Rng(2026);
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for sub in ["fixtures", asdf_test_data::REFERENCE_FILES] {
        let dir = common::data_dir(sub);
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "asdf") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for p in &files {
        let Ok(file) = Two::open(p) else {
            continue;
        };
        for path in ndarray_paths(file.part.tree()) {
            let what = format!("{} {path}", p.display());
            match file.whole.dyn_array(&path) {
                Ok(whole) => {
                    let random = if whole.element_count() > 1 << 20 {
                        6
                    } else {
                        25
                    };
                    check_many(&file.part, &path, &whole, &mut rng, random);
                    checked += 1;
                }
                Err(_) => assert!(
                    file.part.dyn_region(&path, &Selection::all()).is_err(),
                    "{what}: unreadable whole, readable in part"
                ),
            }
        }
    }
    assert!(checked > 150, "only {checked} arrays checked");
}

// ---------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------

#[test]
fn selection_errors_are_typed_and_name_path_axis_and_bound() {
    let arrays = arrays();
    let file = AsdfFile::from_bytes(write_arrays(&arrays, Some(Compression::Zlib))).unwrap();
    let err = |path: &str, s: Selection| -> (String, SelectionError, String) {
        match file.dyn_region(path, &s) {
            Err(e @ Error::Selection { .. }) => {
                let text = e.to_string();
                let Error::Selection { path, source } = e else {
                    unreachable!()
                };
                (path.to_string(), source, text)
            }
            other => panic!(
                "{path}[{s}]: expected a selection error, got {:?}",
                other.map(|a| a.shape)
            ),
        }
    };
    // /f8_le is (9, 7, 5)
    let cases: Vec<(&str, Selection, SelectionError, &[&str])> = vec![
        (
            "/f8_le",
            sel("9"),
            SelectionError::OutOfBounds {
                axis: 0,
                index: 9,
                len: 9,
            },
            &["/f8_le", "axis 0", "9"],
        ),
        (
            "/f8_le",
            sel(":, -8"),
            SelectionError::OutOfBounds {
                axis: 1,
                index: -8,
                len: 7,
            },
            &["/f8_le", "axis 1", "-8", "size 7"],
        ),
        (
            "/f8_le",
            sel("..., 5"),
            SelectionError::OutOfBounds {
                axis: 2,
                index: 5,
                len: 5,
            },
            &["axis 2", "size 5"],
        ),
        (
            "/record",
            sel("1, ::0"),
            SelectionError::ZeroStep { axis: 1 },
            &["/record", "axis 1", "step"],
        ),
        (
            "/f8_le",
            sel("0, 0, 0, 0"),
            SelectionError::TooManyIndices { given: 4, ndim: 3 },
            &["/f8_le", "4", "3"],
        ),
        (
            "/zero_d",
            sel("0"),
            SelectionError::TooManyIndices { given: 1, ndim: 0 },
            &["/zero_d"],
        ),
        (
            "/empty",
            sel(":, 0"),
            SelectionError::OutOfBounds {
                axis: 1,
                index: 0,
                len: 0,
            },
            &["/empty", "axis 1", "size 0"],
        ),
        (
            "/u1",
            Selection::new([SelItem::Ellipsis, SelItem::Index(1), SelItem::Ellipsis]),
            SelectionError::MultipleEllipsis,
            &["/u1", "ellipsis"],
        ),
        (
            "/long",
            Selection::new([SelItem::Index(i64::MIN)]),
            SelectionError::OutOfBounds {
                axis: 0,
                index: i64::MIN,
                len: 5000,
            },
            &["/long", "-9223372036854775808"],
        ),
    ];
    for (path, s, want, words) in cases {
        let (p, source, text) = err(path, s.clone());
        assert_eq!(p, path, "[{s}]");
        assert_eq!(source, want, "{path}[{s}]");
        for w in words {
            assert!(text.contains(w), "{path}[{s}]: {text:?} lacks {w:?}");
        }
        // the same error from every entry point
        assert!(matches!(
            file.region::<u8>(path, &s),
            Err(Error::Selection { .. }) | Err(Error::Convert { .. })
        ));
        let mut buf = [0u8; 1];
        assert!(file.read_region_into::<u8>(path, &s, &mut buf).is_err());
    }
    // index 0 of an axis of 4 is fine on an array with an empty axis: the result is empty
    assert_eq!(
        file.dyn_region("/empty", &sel("0")).unwrap().shape,
        vec![0, 3]
    );
    // two ellipses in text never become a selection
    assert_eq!(
        Selection::parse("..., 1, ..."),
        Err(SelectionError::MultipleEllipsis)
    );
    // a path that is not an array
    assert!(matches!(
        file.dyn_region("/nope", &sel(":")),
        Err(Error::NoSuchPath { .. })
    ));
}

#[test]
fn a_buffer_of_the_wrong_size_is_refused_naming_both_sizes() {
    let arrays = arrays();
    for c in [None, Some(Compression::Lz4)] {
        let file = AsdfFile::from_bytes(write_arrays(&arrays, c)).unwrap();
        // /f4_le[1:3, ::2] is (2, 4, 5): 40 elements
        for len in [0usize, 39, 41, 315] {
            let mut buf = vec![0f32; len];
            match file.read_region_into::<f32>("/f4_le", &sel("1:3, ::2"), &mut buf) {
                Err(Error::Selection { path, source }) => {
                    assert_eq!(path, "/f4_le");
                    assert_eq!(
                        source,
                        SelectionError::BufferSize {
                            given: len,
                            needed: 40
                        }
                    );
                }
                other => panic!("buffer of {len}: {other:?}"),
            }
            assert!(buf.iter().all(|&v| v == 0.0), "nothing written on refusal");
        }
        let mut buf = vec![0u8; 3];
        assert!(matches!(
            file.read_region_into::<u8>("/bool", &sel("0, 0"), &mut buf),
            Err(Error::Selection {
                source: SelectionError::BufferSize {
                    given: 3,
                    needed: 5
                },
                ..
            }) | Err(Error::Array(_))
        ));
        let mut buf = vec![false; 4];
        assert!(matches!(
            file.read_region_into::<bool>("/bool", &sel("0, 0"), &mut buf),
            Err(Error::Selection {
                source: SelectionError::BufferSize {
                    given: 4,
                    needed: 5
                },
                ..
            })
        ));
        // a wrong element type is a datatype error, not a size one
        let mut buf = vec![0f64; 40];
        assert!(matches!(
            file.read_region_into::<f64>("/f4_le", &sel("1:3, ::2"), &mut buf),
            Err(Error::Array(
                asdf_core::array::ArrayError::DTypeMismatch { .. }
            )) | Err(Error::Convert { .. })
        ));
    }
}

// ---------------------------------------------------------------------------
// checksums
// ---------------------------------------------------------------------------

/// A checksum covers a whole block: with verification on, a region read hashes the whole
/// block first, so damage outside the region fails the read; with it off, the region is
/// read from the bytes that hold it and the damage is never seen.
#[test]
fn a_verified_region_read_hashes_the_whole_block() {
    let img = ndarray::Array2::from_shape_fn((400, 1000), |(i, j)| ((i * 1000 + j) % 251) as u8);
    let big = ndarray::Array2::from_shape_fn((3000, 1000), |(i, j)| (i * 1000 + j) as i32);
    for (c, data, rows) in [
        (None, img.mapv(i32::from).into_dyn(), 400),
        (Some(Compression::Lz4), big.clone().into_dyn(), 3000),
        (Some(Compression::Bsc2), big.clone().into_dyn(), 3000),
    ] {
        let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_array_with(
            &data,
            ArrayOptions {
                compression: Some(choice),
                storage: None,
            },
        );
        let mut bytes = w.write_to_vec(&asdf_core::tree!({"a": node})).unwrap();
        let clean = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let b = &clean.blocks()[0];
        let last = (b.data_offset() + b.used_size - 1) as usize;
        let s = sel("0:10, 3:900:7");
        let plan = numpy_plan(&s.items, &[rows, 1000]).unwrap();
        let want = take(&data, &plan);
        // undamaged: verified and unverified reads agree
        let strict = AsdfFile::options()
            .verify_checksums(true)
            .open_bytes(bytes.clone(), ".")
            .unwrap();
        assert_eq!(
            strict.region::<i32>("/a", &s).unwrap(),
            want,
            "{}",
            codec_name(c)
        );
        // the last stored byte of the block, far from rows 0..10
        bytes[last] ^= 0x5a;
        let strict = AsdfFile::options()
            .verify_checksums(true)
            .open_bytes(bytes.clone(), ".")
            .unwrap();
        for _ in 0..2 {
            match strict.region::<i32>("/a", &s) {
                Err(Error::Checksum { block: 0, .. }) => {}
                other => panic!(
                    "{}: expected a checksum error, got {:?}",
                    codec_name(c),
                    other.map(|a| a.shape().to_vec())
                ),
            }
        }
        assert!(matches!(
            strict.dyn_region("/a", &sel("0")),
            Err(Error::Checksum { block: 0, .. })
        ));
        let lax = AsdfFile::from_bytes(bytes).unwrap();
        assert_eq!(
            lax.region::<i32>("/a", &s).unwrap(),
            want,
            "{}",
            codec_name(c)
        );
    }
}

// ---------------------------------------------------------------------------
// large blocks in several pieces
// ---------------------------------------------------------------------------

/// A 3000 × 3000 float32 image (36 MB: nine 4 MiB `lz4` sub-blocks, nine `bsc2` chunks, an
/// uncompressed block read by ranges): regions inside one piece, across piece boundaries
/// (row 349.5 is the first), backwards, strided, single columns and rows.
#[test]
fn large_multi_piece_blocks() {
    let n = 3000;
    let img = ndarray::Array2::from_shape_fn((n, n), |(i, j)| (i * n + j) as f32).into_dyn();
    let selections = [
        "100:228, 2000:2256",
        "340:360, ::100",
        "::-700, 2999",
        "-1, ...",
        "699:700, :",
        "100:2900:97, 1500:1510",
        "..., 0",
        "2999:0:-333, ::-999",
        "1048:1050, 1000:3000:500",
        "348:351",
        ":",
    ];
    for c in [Some(Compression::Lz4), Some(Compression::Bsc2), None] {
        let choice = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_array_with(
            &img,
            ArrayOptions {
                compression: Some(choice),
                storage: None,
            },
        );
        let bytes = w.write_to_vec(&asdf_core::tree!({"sci": node})).unwrap();
        let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
        if c == Some(Compression::Lz4) {
            assert_eq!(lz4_pieces(&file, &bytes), 9, "nine 4 MiB sub-blocks");
        }
        drop(bytes);
        for text in selections {
            let s = sel(text);
            let plan = numpy_plan(&s.items, &[n, n]).unwrap();
            let want = take(&img, &plan);
            let got = file
                .region::<f32>("/sci", &s)
                .unwrap_or_else(|e| panic!("{} [{text}]: {e}", codec_name(c)));
            assert!(got == want, "{} [{text}]", codec_name(c));
            let mut buf = vec![0f32; want.len()];
            file.read_region_into::<f32>("/sci", &s, &mut buf).unwrap();
            assert!(
                buf.iter().eq(want.iter()),
                "{} read_region_into [{text}]",
                codec_name(c)
            );
        }
    }
}

/// The number of python-style lz4 sub-blocks of block 0 (each a 4-byte big-endian length,
/// then that many bytes), walked here from the stored bytes.
fn lz4_pieces(file: &AsdfFile, bytes: &[u8]) -> usize {
    let b = &file.blocks()[0];
    let start = b.data_offset() as usize;
    let stored = &bytes[start..start + b.used_size as usize];
    let mut at = 0usize;
    let mut count = 0;
    while at + 4 <= stored.len() {
        let len = u32::from_be_bytes(stored[at..at + 4].try_into().unwrap()) as usize;
        at += 4 + len;
        count += 1;
    }
    assert_eq!(at as u64, b.used_size);
    count
}

// ---------------------------------------------------------------------------
// other ways of opening, several threads
// ---------------------------------------------------------------------------

/// Regions read through a memory map, and with block headers read lazily (as asdf-store
/// opens files), equal the whole reads of a plain open.
#[test]
fn mapped_and_lazy_header_files_read_the_same_regions() {
    let arrays = arrays();
    let dir = common::Scratch::new("region-open-modes");
    let mut rng = Rng(41);
    for c in codecs() {
        let path = dir.join(format!("{}.asdf", codec_name(c)));
        std::fs::write(&path, write_arrays(&arrays, c)).unwrap();
        for (mode, part) in [
            ("mmap", AsdfFile::options().mmap(true).open(&path)),
            (
                "lazy headers",
                AsdfFile::options().lazy_block_headers(true).open(&path),
            ),
            ("eager", AsdfFile::options().lazy(false).open(&path)),
        ] {
            let two = Two {
                part: part.unwrap_or_else(|e| panic!("{mode}: {e}")),
                whole: AsdfFile::open(&path).unwrap(),
            };
            for (name, _) in &arrays {
                let p = format!("/{name}");
                let whole = two.whole.dyn_array(&p).unwrap();
                check_many(&two.part, &p, &whole, &mut rng, 8);
            }
            check_typed::<f32>(&two, "/f4_be", &sel("::-2, 3, 1:"));
        }
    }
}

/// Threads reading regions of one file at once (the first reads race to index the lz4
/// sub-blocks and bsc2 chunks of the block) each get the right values.
#[test]
fn regions_read_from_several_threads_at_once() {
    // 5.5 MiB: two lz4 sub-blocks, two bsc2 chunks
    let n = 1200;
    let img = ndarray::Array2::from_shape_fn((n, n), |(i, j)| (i * n + j) as u32).into_dyn();
    for c in [Compression::Lz4, Compression::Bsc2, Compression::Zstd] {
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_array_with(
            &img,
            ArrayOptions {
                compression: Some(CompressionChoice::Codec(c)),
                storage: None,
            },
        );
        let file = AsdfFile::from_bytes(w.write_to_vec(&asdf_core::tree!({"sci": node})).unwrap())
            .unwrap();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let (file, img) = (&file, &img);
                scope.spawn(move || {
                    let mut rng = Rng(t * 1000 + 1);
                    for _ in 0..8 {
                        let s = random_selection(&mut rng, &[n, n]);
                        let Ok(plan) = numpy_plan(&s.items, &[n, n]) else {
                            assert!(file.region::<u32>("/sci", &s).is_err());
                            continue;
                        };
                        let got = file
                            .region::<u32>("/sci", &s)
                            .unwrap_or_else(|e| panic!("{c:?} thread {t} [{s}]: {e}"));
                        assert!(got == take(img, &plan), "{c:?} thread {t} [{s}]");
                    }
                });
            }
        });
    }
}

// ---------------------------------------------------------------------------
// hostile descriptors
// ---------------------------------------------------------------------------

/// A 16-byte uncompressed block (int32 1, 2, 3, 4) after the hand-written `body`, without
/// a checksum.
fn over_four_ints(body: &str) -> Vec<u8> {
    let data = [1u8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0];
    let mut out = format!("{HEADER}{body}...\n").into_bytes();
    out.extend_from_slice(b"\xd3BLK");
    out.extend_from_slice(&48u16.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(b"\0\0\0\0");
    for _ in 0..3 {
        out.extend_from_slice(&(data.len() as u64).to_be_bytes());
    }
    out.extend_from_slice(&[0u8; 16]);
    out.extend_from_slice(&data);
    out
}

/// Descriptors that claim more than their block holds fail a region read as they fail the
/// whole read (the same message), even when the selection itself stays inside the block;
/// nothing is allocated for what they claim.
#[test]
fn a_region_of_a_bad_descriptor_fails_as_the_whole_read_does() {
    let cases = [
        ("  shape: [1000]\n", "0:2"),
        ("  shape: [1099511627776, 1099511627776]\n", "0:1, 0:1"),
        ("  shape: [2]\n  strides: [4611686018427387904]\n", "0"),
        ("  shape: [2]\n  offset: 9223372036854775807\n", "0"),
        ("  shape: [4]\n  offset: 4\n", "0:2"),
        ("  shape: [2, 2]\n  strides: [8, -4]\n", "0, 0"),
    ];
    for (extra, text) in cases {
        let body = format!(
            "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: int32\n  byteorder: little\n{extra}"
        );
        let two = Two::bytes(over_four_ints(&body)).unwrap();
        let whole = two.whole.dyn_array("/a").expect_err(extra);
        let part = two.part.dyn_region("/a", &sel(text)).expect_err(extra);
        assert_eq!(part.to_string(), whole.to_string(), "{extra:?} [{text}]");
        assert!(part.to_string().starts_with("/a: "), "{part}");
    }
    // and well-formed odd ones read as the whole does: a negative stride from an offset, a
    // zero stride
    for (extra, text, want) in [
        (
            "  shape: [3]\n  strides: [-4]\n  offset: 8\n",
            "::-1",
            vec![1i32, 2, 3],
        ),
        ("  shape: [4]\n  strides: [0]\n", "1:", vec![1, 1, 1]),
    ] {
        let body = format!(
            "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: int32\n  byteorder: little\n{extra}"
        );
        let two = Two::bytes(over_four_ints(&body)).unwrap();
        let whole = two.whole.dyn_array("/a").unwrap();
        check_dyn(&two.part, "/a", &whole, &sel(text));
        let got = two.part.region::<i32>("/a", &sel(text)).unwrap();
        assert_eq!(
            got.iter().copied().collect::<Vec<_>>(),
            want,
            "{extra:?} [{text}]"
        );
    }
    // an empty axis beside a huge one: an empty region of the huge shape, nothing allocated
    // for it (numpy: np.empty((0, 2**40), 'i4')[..., 5:].shape == (0, 2**40 - 5))
    let body = "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: int32\n  byteorder: little\n  shape: [0, 1099511627776]\n";
    let file = AsdfFile::from_bytes(over_four_ints(body)).unwrap();
    let got = file.dyn_region("/a", &sel("..., 5:")).unwrap();
    assert_eq!((got.shape, got.data.len()), (vec![0, (1 << 40) - 5], 0));
    let got = file.dyn_region("/a", &sel("::-1, 7")).unwrap();
    assert_eq!((got.shape, got.data.len()), (vec![0], 0));
}

/// The checksum layouts under verification: a wrong MD5 fails a region read of its block
/// (and only of its block); python's legacy (decoded bytes) and modern (stored bytes) MD5s
/// of zlib blocks, and an all-zero MD5 (none written), pass.
#[test]
fn region_reads_follow_the_checksum_policy_of_the_layouts() {
    let layout = |n: &str| common::data_dir("layouts").join(n);
    let strict = |n: &str| {
        AsdfFile::options()
            .verify_checksums(true)
            .open(layout(n))
            .unwrap()
    };
    let f = strict("checksum_wrong.asdf");
    assert!(matches!(
        f.dyn_region("/a", &sel("0")),
        Err(Error::Checksum { block: 0, .. })
    ));
    let b = AsdfFile::open(layout("checksum_wrong.asdf"))
        .unwrap()
        .dyn_array("/b")
        .unwrap();
    check_dyn(&f, "/b", &b, &sel("::-1"));
    for n in [
        "checksum_legacy_zlib.asdf",
        "checksum_modern_zlib.asdf",
        "checksum_zero.asdf",
    ] {
        let f = strict(n);
        let plain = AsdfFile::open(layout(n)).unwrap();
        for path in ndarray_paths(plain.tree()) {
            let whole = plain.dyn_array(&path).unwrap();
            check_many(&f, &path, &whole, &mut Rng(23), 10);
        }
    }
}

// ---------------------------------------------------------------------------
// only the bytes that hold the region
// ---------------------------------------------------------------------------

/// A file in memory that counts the bytes read from it.
struct Counting {
    bytes: Vec<u8>,
    read: std::sync::atomic::AtomicU64,
}

impl asdf_core::file::ReadAt for Counting {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let src = at
            .checked_add(buf.len())
            .and_then(|end| self.bytes.get(at..end))
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        self.read
            .fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// A 128 × 256 region of a 2048 × 2048 float32 image of values that do not compress (16
/// MiB; the region lies in its first quarter): an uncompressed block gives the bytes from
/// the region's first element to its last; lz4 its first 4 MiB sub-block; bsc2 its first
/// chunk; the streamed codecs stop decoding after the region. Each is bounded here with
/// room for the block's own index (lz4 length prefixes, bsc2 offsets) and read-ahead;
/// with checksum verification the whole block is read.
#[test]
fn a_region_reads_only_the_bytes_that_hold_it() {
    use std::sync::atomic::Ordering::Relaxed;
    let n = 2048;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let img = ndarray::Array2::from_shape_simple_fn((n, n), || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32
    })
    .into_dyn();
    let s = sel("100:228, 1000:1256");
    let want = take(&img, &numpy_plan(&s.items, &[n, n]).unwrap());
    for c in codecs() {
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_array_with(
            &img,
            ArrayOptions {
                compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
                storage: None,
            },
        );
        let bytes = w.write_to_vec(&asdf_core::tree!({"sci": node})).unwrap();
        for verify in [false, true] {
            let src = std::sync::Arc::new(Counting {
                bytes: bytes.clone(),
                read: 0.into(),
            });
            let file = AsdfFile::options()
                .verify_checksums(verify)
                .open_source(src.clone(), ".")
                .unwrap();
            let block = file.blocks()[0].clone();
            let stored = block.used_size;
            src.read.store(0, Relaxed);
            let got = file.region::<f32>("/sci", &s).unwrap();
            assert!(got == want, "{} values", codec_name(c));
            let read = src.read.load(Relaxed);
            let most = if verify {
                stored + (1 << 20)
            } else {
                match c {
                    // element (100, 1000) to element (227, 1255)
                    None => ((227 * 2048 + 1255) - (100 * 2048 + 1000) + 1) * 4 + (64 << 10),
                    Some(Compression::Lz4) => {
                        let at = block.data_offset() as usize;
                        let first = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
                        4 + u64::from(first) + (256 << 10)
                    }
                    // the first of four chunks, or the stream's first 16 % and a little
                    _ => stored / 4 + (512 << 10),
                }
            };
            println!(
                "{} (verify {verify}): {read} bytes read of a {stored}-byte block (at most {most})",
                codec_name(c)
            );
            assert!(
                read <= most,
                "{} (verify {verify}): {read} bytes read of a {stored}-byte block, more than {most}",
                codec_name(c)
            );
            if verify {
                assert!(
                    read >= stored,
                    "{}: the whole block is hashed",
                    codec_name(c)
                );
                // hashed once: the next region comes from the verified block, not the source
                src.read.store(0, Relaxed);
                let s2 = sel("-5:, ::-512");
                let again = file.region::<f32>("/sci", &s2).unwrap();
                assert!(again == take(&img, &numpy_plan(&s2.items, &[n, n]).unwrap()));
                assert_eq!(src.read.load(Relaxed), 0, "{}: read again", codec_name(c));
            }
        }
    }
}

/// Random views over one block: up to four axes of up to six positions, strides of either
/// sign (multiples of the item size or not, zero included) with the offset that keeps them
/// inside the block, in several codecs and datatypes; random selections of each.
#[test]
fn random_views_over_a_block() {
    let mut rng = Rng(314);
    let base: Vec<u8> = (0..600u32).map(|i| (i * 7 + i / 13) as u8).collect();
    let types = [
        ("uint8", 1usize),
        ("int16", 2),
        ("float32", 4),
        ("float64", 8),
        ("complex128", 16),
    ];
    let codecs = [
        None,
        Some(Compression::Lz4),
        Some(Compression::Zlib),
        Some(Compression::Bsc2),
    ];
    let mut made = 0;
    while made < 400 {
        let (dtype, item) = types[rng.below(types.len() as u64) as usize];
        let nd = rng.below(5) as usize;
        let shape: Vec<usize> = (0..nd).map(|_| rng.below(7) as usize).collect();
        let strides: Vec<i64> = (0..nd)
            .map(|_| {
                let unit = if rng.chance(80) { item as i64 } else { 1 };
                rng.between(-6, 6) * unit
            })
            .collect();
        // the lowest and highest byte addressed, from offset 0
        let (mut lo, mut hi) = (0i64, item as i64);
        if !shape.contains(&0) {
            for (&n, &st) in shape.iter().zip(&strides) {
                let span = (n as i64 - 1) * st;
                if span < 0 {
                    lo += span;
                } else {
                    hi += span;
                }
            }
        }
        let offset = -lo + rng.between(0, 20);
        if offset + (hi - lo) > base.len() as i64 {
            continue;
        }
        made += 1;
        let list = |v: &[String]| format!("[{}]", v.join(", "));
        let yaml = format!(
            "base: !core/ndarray-1.1.0\n  source: 0\n  datatype: uint8\n  shape: [{}]\n\
             v: !core/ndarray-1.1.0\n  source: 0\n  datatype: {dtype}\n  byteorder: {}\n  \
             shape: {}\n  offset: {offset}\n  strides: {}\n",
            base.len(),
            if rng.chance(50) { "big" } else { "little" },
            list(&shape.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
            list(&strides.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
        );
        let c = codecs[rng.below(codecs.len() as u64) as usize];
        let base_arr = DynArray {
            dtype: scalar(ScalarType::UInt8, ByteOrder::Little),
            shape: vec![base.len()],
            data: base.clone(),
        };
        let bytes = hand_tree_over_blocks(&yaml, &[("base", base_arr)], c);
        let two = Two::bytes(bytes).unwrap();
        let whole = two
            .whole
            .dyn_array("/v")
            .unwrap_or_else(|e| panic!("{yaml}: {e}"));
        // the view is what its offset and strides say
        let want: Vec<u8> = view_elements(offset as u64, &shape, &strides)
            .flat_map(|o| base[o..o + item].iter().copied())
            .collect();
        assert_eq!(whole.data, want, "{yaml}");
        for _ in 0..6 {
            let s = random_selection(&mut rng, &shape);
            check_dyn(&two.part, "/v", &whole, &s);
        }
    }
}

/// Regions of more than a million rows (the reader then reads the one range spanning them
/// and gathers in memory): a 1,100,000 × 3 uint8 array, reversed, strided, one column (the
/// expected values by ndarray's own slicing, numpy's selections translated by hand).
#[test]
fn regions_of_more_than_a_million_rows() {
    use ndarray::s;
    let rows = 1_100_000;
    let a = ndarray::Array2::from_shape_fn((rows, 3), |(i, j)| (i * 3 + j * 101 + i / 7) as u8);
    let cases: [(&str, ndarray::ArrayViewD<u8>); 4] = [
        ("..., ::-1", a.slice(s![.., ..;-1]).into_dyn()),
        ("5:-5, 1:", a.slice(s![5..rows - 5, 1..]).into_dyn()),
        ("::-1, 2", a.slice(s![..;-1, 2]).into_dyn()),
        (":, ::2", a.slice(s![.., ..;2]).into_dyn()),
    ];
    for c in [None, Some(Compression::Lz4), Some(Compression::Zstd)] {
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_array_with(
            &a,
            ArrayOptions {
                compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
                storage: None,
            },
        );
        let file =
            AsdfFile::from_bytes(w.write_to_vec(&asdf_core::tree!({"t": node})).unwrap()).unwrap();
        for (text, want) in &cases {
            let got = file.region::<u8>("/t", &sel(text)).unwrap();
            assert!(got == *want, "{} [{text}]", codec_name(c));
        }
    }
}
