//! Canonical serialization of array values (docs/canonical.md, `sha256`) and its SHA-256.
//!
//! Elements in C order, each little-endian; every NaN becomes the positive quiet NaN of its
//! width; bool bytes become 0/1; ascii bytes as stored; ucs4 code units little-endian;
//! records field by field without padding. Output is produced in chunks so hashing a large
//! array never builds a second full copy.

use sha2::{Digest, Sha256};

use super::{ByteOrder, DType, DynArray, ScalarType};

/// How to encode a run of stored bytes canonically.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// Copy this many bytes unchanged.
    Raw(usize),
    /// Reverse each `width`-byte unit, `units` times.
    Swap { width: usize, units: usize },
    /// IEEE floats of `width` bytes (2, 4, 8) stored big- or little-endian, `units` times.
    Float {
        width: usize,
        big: bool,
        units: usize,
    },
    /// Bool bytes, `units` times.
    Bool(usize),
    /// A subarray field: `ops` repeated `count` times.
    Repeat { count: usize, ops: Vec<Op> },
}

impl Op {
    fn src_len(&self) -> usize {
        match self {
            Op::Raw(n) | Op::Bool(n) => *n,
            Op::Swap { width, units } | Op::Float { width, units, .. } => {
                width.saturating_mul(*units)
            }
            Op::Repeat { count, ops } => ops
                .iter()
                .fold(0usize, |a, o| a.saturating_add(o.src_len()))
                .saturating_mul(*count),
        }
    }
}

fn push(ops: &mut Vec<Op>, op: Op) {
    if let (Some(Op::Raw(prev)), Op::Raw(n)) = (ops.last_mut(), &op) {
        *prev = prev.saturating_add(*n);
        return;
    }
    if matches!(op, Op::Raw(0)) {
        return;
    }
    ops.push(op);
}

fn plan(dtype: &DType, ops: &mut Vec<Op>) {
    match dtype {
        DType::Scalar { ty, byteorder } => {
            let big = *byteorder == ByteOrder::Big;
            let op = match ty {
                ScalarType::Int8 | ScalarType::UInt8 => Op::Raw(1),
                ScalarType::Ascii(n) => Op::Raw(*n),
                ScalarType::Bool8 => Op::Bool(1),
                ScalarType::Int16
                | ScalarType::UInt16
                | ScalarType::Int32
                | ScalarType::UInt32
                | ScalarType::Int64
                | ScalarType::UInt64 => {
                    if big {
                        Op::Swap {
                            width: ty.itemsize(),
                            units: 1,
                        }
                    } else {
                        Op::Raw(ty.itemsize())
                    }
                }
                ScalarType::Ucs4(n) => {
                    if big {
                        Op::Swap {
                            width: 4,
                            units: *n,
                        }
                    } else {
                        Op::Raw(n.saturating_mul(4))
                    }
                }
                ScalarType::Float16 => Op::Float {
                    width: 2,
                    big,
                    units: 1,
                },
                ScalarType::Float32 => Op::Float {
                    width: 4,
                    big,
                    units: 1,
                },
                ScalarType::Float64 => Op::Float {
                    width: 8,
                    big,
                    units: 1,
                },
                ScalarType::Complex64 => Op::Float {
                    width: 4,
                    big,
                    units: 2,
                },
                ScalarType::Complex128 => Op::Float {
                    width: 8,
                    big,
                    units: 2,
                },
            };
            push(ops, op);
        }
        DType::Record(fields) => {
            for f in fields {
                let mut sub = Vec::new();
                plan(&f.dtype, &mut sub);
                let count = f.count();
                match sub.as_slice() {
                    [] => {}
                    _ if count == 1 => {
                        for op in sub {
                            push(ops, op);
                        }
                    }
                    [Op::Raw(n)] => push(ops, Op::Raw(n.saturating_mul(count))),
                    [Op::Bool(n)] => push(ops, Op::Bool(n.saturating_mul(count))),
                    [Op::Swap { width, units }] => push(
                        ops,
                        Op::Swap {
                            width: *width,
                            units: units.saturating_mul(count),
                        },
                    ),
                    [Op::Float { width, big, units }] => push(
                        ops,
                        Op::Float {
                            width: *width,
                            big: *big,
                            units: units.saturating_mul(count),
                        },
                    ),
                    _ => push(ops, Op::Repeat { count, ops: sub }),
                }
            }
        }
    }
}

/// Encodes `src` (exactly `op.src_len()` bytes, or a whole number of units for flat ops)
/// onto `out`.
fn apply(op: &Op, src: &[u8], out: &mut Vec<u8>) {
    match op {
        Op::Raw(_) => out.extend_from_slice(src),
        Op::Bool(_) => out.extend(src.iter().map(|&b| u8::from(b != 0))),
        Op::Swap { width, .. } => {
            for unit in src.chunks_exact(*width) {
                out.extend(unit.iter().rev());
            }
        }
        Op::Float { width, big, .. } => match (width, big) {
            (2, false) => floats::<2, _>(src, out, u16::from_le_bytes, is_nan16, 0x7E00u16),
            (2, true) => floats::<2, _>(src, out, u16::from_be_bytes, is_nan16, 0x7E00u16),
            (4, false) => floats::<4, _>(src, out, u32::from_le_bytes, is_nan32, 0x7FC0_0000u32),
            (4, true) => floats::<4, _>(src, out, u32::from_be_bytes, is_nan32, 0x7FC0_0000u32),
            (8, false) => floats::<8, _>(
                src,
                out,
                u64::from_le_bytes,
                is_nan64,
                0x7FF8_0000_0000_0000u64,
            ),
            _ => floats::<8, _>(
                src,
                out,
                u64::from_be_bytes,
                is_nan64,
                0x7FF8_0000_0000_0000u64,
            ),
        },
        Op::Repeat { count, ops } => {
            let mut rest = src;
            for _ in 0..*count {
                for o in ops {
                    let n = o.src_len().min(rest.len());
                    let (head, tail) = rest.split_at(n);
                    apply(o, head, out);
                    rest = tail;
                }
            }
        }
    }
}

fn is_nan16(b: u16) -> bool {
    b & 0x7C00 == 0x7C00 && b & 0x03FF != 0
}
fn is_nan32(b: u32) -> bool {
    b & 0x7F80_0000 == 0x7F80_0000 && b & 0x007F_FFFF != 0
}
fn is_nan64(b: u64) -> bool {
    b & 0x7FF0_0000_0000_0000 == 0x7FF0_0000_0000_0000 && b & 0x000F_FFFF_FFFF_FFFF != 0
}

trait ToLe<const N: usize> {
    fn to_le(self) -> [u8; N];
}
impl ToLe<2> for u16 {
    fn to_le(self) -> [u8; 2] {
        self.to_le_bytes()
    }
}
impl ToLe<4> for u32 {
    fn to_le(self) -> [u8; 4] {
        self.to_le_bytes()
    }
}
impl ToLe<8> for u64 {
    fn to_le(self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

#[inline]
fn floats<const N: usize, U: ToLe<N> + Copy>(
    src: &[u8],
    out: &mut Vec<u8>,
    read: fn([u8; N]) -> U,
    is_nan: fn(U) -> bool,
    nan: U,
) {
    out.reserve(src.len());
    for c in src.chunks_exact(N) {
        let v = read(c.try_into().unwrap_or([0; N]));
        let v = if is_nan(v) { nan } else { v };
        out.extend_from_slice(&v.to_le());
    }
}

/// Bytes handed to the sink at a time.
const CHUNK: usize = 1 << 16;

impl DynArray {
    /// Feeds the canonical serialization to `sink` in chunks of at most about 64 KiB.
    pub fn canonical_chunks(&self, mut sink: impl FnMut(&[u8])) {
        self.canonical_chunks_counted(|c, _| sink(c));
    }

    /// As [`canonical_chunks`](Self::canonical_chunks), telling `sink` with each chunk how
    /// many bytes of `data` the chunks so far came from.
    fn canonical_chunks_counted(&self, mut sink: impl FnMut(&[u8], usize)) {
        let mut ops = Vec::new();
        plan(&self.dtype, &mut ops);
        let item = self.dtype.itemsize();
        let data = &self.data[..self.data.len() - self.data.len() % item.max(1)];
        match ops.as_slice() {
            [] => {}
            [Op::Raw(_)] => {
                let mut read = 0;
                for c in data.chunks(CHUNK) {
                    read += c.len();
                    sink(c, read);
                }
            }
            [op] if !matches!(op, Op::Repeat { .. }) => {
                // flat scalar ops work on any whole number of elements at once
                let step = (CHUNK / item.max(1)).max(1) * item.max(1);
                let mut buf = Vec::with_capacity(step);
                let mut read = 0;
                for c in data.chunks(step) {
                    buf.clear();
                    apply(op, c, &mut buf);
                    read += c.len();
                    sink(&buf, read);
                }
            }
            _ => {
                let mut buf = Vec::with_capacity(CHUNK + item.min(CHUNK));
                let mut read = 0;
                for elem in data.chunks_exact(item.max(1)) {
                    read += elem.len();
                    let mut rest = elem;
                    for o in &ops {
                        let n = o.src_len().min(rest.len());
                        let (head, tail) = rest.split_at(n);
                        apply(o, head, &mut buf);
                        rest = tail;
                    }
                    if buf.len() >= CHUNK {
                        sink(&buf, read);
                        buf.clear();
                    }
                }
                if !buf.is_empty() {
                    sink(&buf, read);
                }
            }
        }
    }

    /// The canonical serialization of the values (docs/canonical.md, `sha256`) as one buffer.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.data.len());
        self.canonical_chunks(|c| out.extend_from_slice(c));
        out
    }

    /// Lowercase hex SHA-256 of [`canonical_bytes`](Self::canonical_bytes), computed
    /// streaming.
    pub fn canonical_sha256_hex(&self) -> String {
        self.canonical_sha256_hex_counted(|_| {})
    }

    /// As [`canonical_sha256_hex`](Self::canonical_sha256_hex), telling `hashed` how many
    /// bytes of `data` are hashed so far, every 64 KiB or so.
    pub(crate) fn canonical_sha256_hex_counted(&self, mut hashed: impl FnMut(usize)) -> String {
        let mut h = Sha256::new();
        self.canonical_chunks_counted(|c, read| {
            h.update(c);
            hashed(read);
        });
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Field;

    fn scalar(ty: ScalarType, order: ByteOrder, data: Vec<u8>) -> DynArray {
        let n = data.len() / ty.itemsize().max(1);
        DynArray {
            dtype: DType::scalar(ty, order),
            shape: vec![n],
            data,
        }
    }

    #[test]
    fn empty_array_hashes_empty_string() {
        let a = scalar(ScalarType::Float64, ByteOrder::Big, vec![]);
        assert_eq!(
            a.canonical_sha256_hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn integers_become_little_endian() {
        let a = scalar(
            ScalarType::Int32,
            ByteOrder::Big,
            vec![0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe],
        );
        assert_eq!(
            a.canonical_bytes(),
            vec![1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]
        );
        let a = scalar(ScalarType::UInt16, ByteOrder::Little, vec![1, 2]);
        assert_eq!(a.canonical_bytes(), vec![1, 2]);
        // A big-endian int32 [1, 2, 3, 4, 5] hashes as its little-endian values:
        // hashlib.sha256(np.arange(1, 6, dtype='<i4').tobytes()).hexdigest() in python.
        let a = scalar(
            ScalarType::Int32,
            ByteOrder::Big,
            (1..=5i32).flat_map(|v| v.to_be_bytes()).collect(),
        );
        assert_eq!(
            a.canonical_sha256_hex(),
            "4f6addc9659d6fb90fe94b6688a79f2a1fa8d36ec43f8f3e1d9b6528c448a384"
        );
    }

    fn sha_hex(b: &[u8]) -> String {
        Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    }

    #[test]
    fn nans_are_canonicalized_per_width() {
        // f64: negative NaN, signalling NaN with payload, -0.0, -inf (big-endian storage)
        let vals: [u64; 4] = [
            0xFFF8_0000_0000_0000,
            0x7FF0_0000_0000_0001,
            0x8000_0000_0000_0000,
            0xFFF0_0000_0000_0000,
        ];
        let a = scalar(
            ScalarType::Float64,
            ByteOrder::Big,
            vals.iter().flat_map(|v| v.to_be_bytes()).collect(),
        );
        let want: Vec<u8> = [
            0x7FF8_0000_0000_0000u64,
            0x7FF8_0000_0000_0000,
            0x8000_0000_0000_0000,
            0xFFF0_0000_0000_0000,
        ]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
        assert_eq!(a.canonical_bytes(), want);
        // f32
        let a = scalar(
            ScalarType::Float32,
            ByteOrder::Little,
            vec![0x01, 0x00, 0x80, 0xFF, 0, 0, 0x80, 0x7F],
        );
        assert_eq!(
            a.canonical_bytes(),
            vec![0, 0, 0xC0, 0x7F, 0, 0, 0x80, 0x7F]
        );
        // f16: 0xFC01 (negative signalling NaN) and 0x7C00 (+inf)
        let a = scalar(
            ScalarType::Float16,
            ByteOrder::Big,
            vec![0xFC, 0x01, 0x7C, 0x00],
        );
        assert_eq!(a.canonical_bytes(), vec![0x00, 0x7E, 0x00, 0x7C]);
        // complex64: both parts
        let a = scalar(
            ScalarType::Complex64,
            ByteOrder::Big,
            vec![0xFF, 0xC0, 0, 1, 0x3F, 0x80, 0, 0],
        );
        assert_eq!(
            a.canonical_bytes(),
            vec![0, 0, 0xC0, 0x7F, 0, 0, 0x80, 0x3F]
        );
    }

    #[test]
    fn bools_strings() {
        let a = scalar(ScalarType::Bool8, ByteOrder::Little, vec![0, 1, 2, 255]);
        assert_eq!(a.canonical_bytes(), vec![0, 1, 1, 1]);
        let a = scalar(ScalarType::Ascii(3), ByteOrder::Big, b"ab\0xyz".to_vec());
        assert_eq!(a.canonical_bytes(), b"ab\0xyz".to_vec());
        let a = scalar(
            ScalarType::Ucs4(2),
            ByteOrder::Big,
            vec![0, 0, 0, 0x61, 0, 1, 0xF6, 0x00],
        );
        assert_eq!(a.canonical_bytes(), vec![0x61, 0, 0, 0, 0x00, 0xF6, 1, 0]);
    }

    #[test]
    fn records_with_subarrays_and_nested_fields() {
        let f = |name: &str, dtype: DType, shape: Vec<usize>| Field {
            name: name.into(),
            dtype,
            shape,
        };
        let inner = DType::Record(vec![
            f(
                "x",
                DType::scalar(ScalarType::Int16, ByteOrder::Big),
                vec![],
            ),
            f(
                "b",
                DType::scalar(ScalarType::Bool8, ByteOrder::Big),
                vec![],
            ),
        ]);
        let dt = DType::Record(vec![
            f(
                "id",
                DType::scalar(ScalarType::UInt16, ByteOrder::Big),
                vec![],
            ),
            f(
                "v",
                DType::scalar(ScalarType::Int16, ByteOrder::Little),
                vec![2],
            ),
            f("p", inner, vec![2]),
        ]);
        assert_eq!(dt.itemsize(), 2 + 4 + 6);
        let elem = vec![
            0, 1, /* v */ 2, 0, 3, 0, /* p0 */ 0, 4, 9, /* p1 */ 0, 5, 0,
        ];
        let a = DynArray {
            dtype: dt,
            shape: vec![2],
            data: [elem.clone(), elem].concat(),
        };
        let want_elem = vec![1, 0, 2, 0, 3, 0, 4, 0, 1, 5, 0, 0];
        assert_eq!(a.canonical_bytes(), [want_elem.clone(), want_elem].concat());
    }

    #[test]
    fn chunking_does_not_change_the_hash() {
        let n = 3 * CHUNK / 8 + 5;
        let data: Vec<u8> = (0..n as u64)
            .flat_map(|v| (v as f64).to_be_bytes())
            .collect();
        let a = scalar(ScalarType::Float64, ByteOrder::Big, data);
        let whole = a.canonical_bytes();
        assert_eq!(whole.len(), n * 8);
        assert_eq!(a.canonical_sha256_hex(), sha_hex(&whole));
        let mut sizes = Vec::new();
        a.canonical_chunks(|c| sizes.push(c.len()));
        assert!(sizes.len() > 1 && sizes.iter().all(|&s| s <= CHUNK));
    }
}
