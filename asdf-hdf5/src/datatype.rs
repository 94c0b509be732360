//! HDF5 datatypes ↔ ASDF datatypes, and how HDF5 element bytes become packed ASDF ones.

use asdf_core::array::{ByteOrder, DType, Field, ScalarType};
use hdf5_reader::{ByteOrder as H5Order, Datatype, StringEncoding, StringPadding, StringSize};

/// How the bytes of one HDF5 element become the bytes of one ASDF element: the ASDF datatype
/// and the pieces of the HDF5 element copied, in order, to make it (HDF5 compounds may hold
/// padding; ASDF records are packed).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub dtype: DType,
    /// Extra dimensions an array datatype adds to the dataset's shape.
    pub inner_shape: Vec<usize>,
    /// Size of one HDF5 element.
    pub src_size: usize,
    /// (offset in the HDF5 element, length), copied one after the other.
    pub pieces: Vec<(usize, usize)>,
    /// Enum member names and values, when the datatype is an enum (bool enums excluded).
    pub enum_members: Option<Vec<(String, i128)>>,
    /// The tag of an opaque datatype (h5py's `NUMPY:<M8[ns]`), kept beside the bytes.
    pub opaque_tag: Option<String>,
}

impl Plan {
    /// Whether the HDF5 bytes are already the ASDF bytes.
    pub fn is_identity(&self) -> bool {
        self.pieces.len() == 1 && self.pieces[0] == (0, self.src_size)
    }

    /// Converts `count` HDF5 elements.
    pub fn convert(&self, src: Vec<u8>) -> Vec<u8> {
        if self.is_identity() {
            return src;
        }
        let out_size: usize = self.pieces.iter().map(|p| p.1).sum();
        let n = src.len().checked_div(self.src_size).unwrap_or(0);
        let mut out = Vec::with_capacity(n * out_size);
        for e in src.chunks_exact(self.src_size.max(1)) {
            for &(off, len) in &self.pieces {
                out.extend_from_slice(&e[off..off + len]);
            }
        }
        out
    }
}

impl Plan {
    /// The plan of a fixed-length string datatype (or an array datatype of them) in the
    /// bytes form (docs/hdf5.md): `uint8` with an inner axis of the string's size, the
    /// same bytes; `None` for other plans.
    pub fn as_string_bytes(&self) -> Option<Plan> {
        let DType::Scalar {
            ty: ScalarType::Ascii(n),
            ..
        } = self.dtype
        else {
            return None;
        };
        let mut p = self.clone();
        p.dtype = scalar(ScalarType::UInt8, ByteOrder::Little);
        p.inner_shape.push(n);
        Some(p)
    }
}

/// A fixed-length string datatype (or an array datatype of them): its size, character set
/// and padding; `None` for other datatypes.
pub(crate) fn fixed_string(dt: &Datatype) -> Option<(u32, StringEncoding, StringPadding)> {
    match dt {
        Datatype::String {
            size: StringSize::Fixed(n),
            encoding,
            padding,
        } => Some((*n, *encoding, *padding)),
        Datatype::Array { base, .. } => match base.as_ref() {
            Datatype::String {
                size: StringSize::Fixed(n),
                encoding,
                padding,
            } => Some((*n, *encoding, *padding)),
            _ => None,
        },
        _ => None,
    }
}

/// The names of a string's character set and padding as `_hdf5/string_bytes` records them.
pub(crate) fn string_names(
    encoding: StringEncoding,
    padding: StringPadding,
) -> (&'static str, &'static str) {
    (
        match encoding {
            StringEncoding::Utf8 => "utf-8",
            _ => "ascii",
        },
        match padding {
            StringPadding::NullTerminate => "nullterm",
            StringPadding::SpacePad => "spacepad",
            _ => "nullpad",
        },
    )
}

/// The fixed-length string datatype of `size` bytes a `_hdf5/string_bytes` record names
/// (character set and padding by [`string_names`]' names); `None` for a name it does not
/// give.
pub(crate) fn string_datatype(size: u32, cset: &str, padding: &str) -> Option<Datatype> {
    Some(Datatype::String {
        size: StringSize::Fixed(size),
        encoding: match cset {
            "ascii" => StringEncoding::Ascii,
            "utf-8" => StringEncoding::Utf8,
            _ => return None,
        },
        padding: match padding {
            "nullterm" => StringPadding::NullTerminate,
            "nullpad" => StringPadding::NullPad,
            "spacepad" => StringPadding::SpacePad,
            _ => return None,
        },
    })
}

fn order(o: &H5Order) -> ByteOrder {
    match o {
        H5Order::BigEndian => ByteOrder::Big,
        _ => ByteOrder::Little,
    }
}

fn scalar(ty: ScalarType, byteorder: ByteOrder) -> DType {
    DType::Scalar { ty, byteorder }
}

fn int_of(size: u8, signed: bool) -> Option<ScalarType> {
    Some(match (size, signed) {
        (1, true) => ScalarType::Int8,
        (2, true) => ScalarType::Int16,
        (4, true) => ScalarType::Int32,
        (8, true) => ScalarType::Int64,
        (1, false) => ScalarType::UInt8,
        (2, false) => ScalarType::UInt16,
        (4, false) => ScalarType::UInt32,
        (8, false) => ScalarType::UInt64,
        _ => return None,
    })
}

/// A short description of an HDF5 datatype, for errors.
pub(crate) fn describe(dt: &Datatype) -> String {
    match dt {
        Datatype::FixedPoint { size, signed, .. } => {
            format!(
                "{}int{}",
                if *signed { "" } else { "u" },
                u32::from(*size) * 8
            )
        }
        Datatype::FloatingPoint { size, .. } => format!("float{}", u32::from(*size) * 8),
        Datatype::String { size, .. } => format!("string ({size:?})"),
        Datatype::Compound { .. } => "compound".into(),
        Datatype::Array { .. } => "array".into(),
        Datatype::Enum { .. } => "enum".into(),
        Datatype::VarLen { .. } => "variable-length sequence".into(),
        Datatype::Opaque { tag, .. } => format!("opaque ({tag:?})"),
        Datatype::Reference { .. } => "reference".into(),
        Datatype::Bitfield { .. } => "bitfield".into(),
    }
}

/// The plan for a dataset's or attribute's datatype; `Err` describes what has no ASDF form.
pub(crate) fn plan(dt: &Datatype) -> Result<Plan, String> {
    let mut pieces = Vec::new();
    let (dtype, inner_shape) = match dt {
        // an array datatype at the top adds its dimensions to the shape, as h5py reads it
        Datatype::Array { base, dims } => {
            let base_plan = plan(base)?;
            let count = element_count(dims)?;
            if count.saturating_mul(base_plan.pieces.len()) > MAX_PIECES {
                return Err(format!("{} of {count} elements", describe(dt)));
            }
            for i in 0..count {
                for &(o, l) in &base_plan.pieces {
                    pieces.push((i * base_plan.src_size + o, l));
                }
            }
            let mut shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            shape.extend(base_plan.inner_shape);
            (base_plan.dtype, shape)
        }
        // opaque: numpy's datetime64 and timedelta64 (h5py tags them `NUMPY:<M8[ns]`) as
        // their int64 counts in the tag's byte order (the unit in the tag), anything else as
        // its bytes (an inner axis of the element's size)
        Datatype::Opaque { size, tag } => {
            let size = *size as usize;
            pieces.push((0, size));
            match numpy_time(tag) {
                Some(byteorder) if size == 8 => (scalar(ScalarType::Int64, byteorder), Vec::new()),
                // HDF5's time class (H5T_UNIX_D32 / D64: seconds since 1970), which
                // hdf5-reader gives as opaque data tagged with its byte order
                None if (tag == "HDF5_TIME" || tag == "HDF5_TIME:BE") && matches!(size, 4 | 8) => {
                    let order = if tag == "HDF5_TIME" {
                        ByteOrder::Little
                    } else {
                        ByteOrder::Big
                    };
                    let ty = if size == 4 {
                        ScalarType::Int32
                    } else {
                        ScalarType::Int64
                    };
                    (scalar(ty, order), Vec::new())
                }
                _ => (scalar(ScalarType::UInt8, ByteOrder::Little), vec![size]),
            }
        }
        _ => (element(dt, 0, &mut pieces)?, Vec::new()),
    };
    let enum_members = match dt {
        Datatype::Enum { base, members } if !is_bool_enum(base, members) => Some(
            members
                .iter()
                .map(|m| (m.name.clone(), enum_value(base, &m.value)))
                .collect(),
        ),
        _ => None,
    };
    let src_size = size_of(dt);
    // a compound member (or array element) beyond the element is a malformed file
    if pieces
        .iter()
        .any(|&(o, l)| o.checked_add(l).is_none_or(|end| end > src_size))
        || src_size == 0
    {
        return Err(format!(
            "{} whose members lie beyond its {src_size} bytes",
            describe(dt)
        ));
    }
    Ok(Plan {
        dtype,
        inner_shape,
        src_size,
        pieces: merge(pieces),
        enum_members,
        opaque_tag: match dt {
            Datatype::Opaque { tag, .. } => Some(tag.clone()),
            _ => None,
        },
    })
}

/// The byte order of h5py's tag for a numpy datetime64 or timedelta64 (`NUMPY:<M8[ns]`,
/// `NUMPY:>m8[s]`: order, kind, 8 bytes, a unit in brackets); `None` for other tags.
fn numpy_time(tag: &str) -> Option<ByteOrder> {
    let rest = tag.strip_prefix("NUMPY:")?;
    let (order, rest) = rest.split_at_checked(1)?;
    let unit = rest
        .strip_prefix("M8[")
        .or_else(|| rest.strip_prefix("m8["))?
        .strip_suffix(']')?;
    if unit.is_empty() || !unit.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    match order {
        "<" | "=" => Some(ByteOrder::Little),
        ">" => Some(ByteOrder::Big),
        _ => None,
    }
}

/// Most pieces one element is copied in (a bound on what a datatype can make us do).
const MAX_PIECES: usize = 1 << 20;

fn element_count(dims: &[u64]) -> Result<usize, String> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))
        .filter(|&n| n <= MAX_PIECES)
        .ok_or_else(|| format!("array datatype of dimensions {dims:?}"))
}

/// Adjacent pieces become one.
fn merge(pieces: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(pieces.len());
    for (o, l) in pieces {
        match out.last_mut() {
            Some(last) if last.0 + last.1 == o => last.1 += l,
            _ => out.push((o, l)),
        }
    }
    out
}

pub(crate) fn size_of(dt: &Datatype) -> usize {
    size_of_at(dt, 0)
}

fn size_of_at(dt: &Datatype, depth: usize) -> usize {
    if depth > 64 {
        return 0;
    }
    match dt {
        Datatype::FixedPoint { size, .. }
        | Datatype::FloatingPoint { size, .. }
        | Datatype::Bitfield { size, .. }
        | Datatype::Reference { size, .. } => usize::from(*size),
        Datatype::String {
            size: StringSize::Fixed(n),
            ..
        } => *n as usize,
        Datatype::String { .. } | Datatype::VarLen { .. } => 16,
        Datatype::Compound { size, .. } | Datatype::Opaque { size, .. } => *size as usize,
        Datatype::Array { base, dims } => dims
            .iter()
            .try_fold(size_of_at(base, depth + 1), |a, &d| {
                a.checked_mul(d as usize)
            })
            .unwrap_or(usize::MAX),
        Datatype::Enum { base, .. } => size_of_at(base, depth + 1),
    }
}

fn is_bool_enum(base: &Datatype, members: &[hdf5_reader::EnumMember]) -> bool {
    matches!(base, Datatype::FixedPoint { size: 1, .. })
        && members.len() == 2
        && members.iter().any(|m| m.name == "FALSE" && m.value == [0])
        && members.iter().any(|m| m.name == "TRUE" && m.value == [1])
}

pub(crate) fn enum_value(base: &Datatype, bytes: &[u8]) -> i128 {
    let (signed, big) = match base {
        Datatype::FixedPoint {
            signed, byte_order, ..
        } => (*signed, matches!(byte_order, H5Order::BigEndian)),
        _ => (false, false),
    };
    let mut b = bytes.to_vec();
    if big {
        b.reverse();
    }
    let mut v: u128 = 0;
    for (i, x) in b.iter().enumerate().take(16) {
        v |= u128::from(*x) << (8 * i);
    }
    let bits = 8 * b.len().min(16);
    if signed && bits > 0 && bits < 128 && v >> (bits - 1) & 1 == 1 {
        (v as i128) - (1i128 << bits)
    } else {
        v as i128
    }
}

/// One element (or compound field) at `off`: its ASDF datatype, pieces appended.
fn element(dt: &Datatype, off: usize, pieces: &mut Vec<(usize, usize)>) -> Result<DType, String> {
    Ok(match dt {
        Datatype::FixedPoint {
            size,
            signed,
            byte_order,
        } => {
            let ty = int_of(*size, *signed).ok_or_else(|| describe(dt))?;
            pieces.push((off, usize::from(*size)));
            scalar(ty, order(byte_order))
        }
        Datatype::Bitfield { size, byte_order } => {
            let ty = int_of(*size, false).ok_or_else(|| describe(dt))?;
            pieces.push((off, usize::from(*size)));
            scalar(ty, order(byte_order))
        }
        Datatype::FloatingPoint { size, byte_order } => {
            let ty = match size {
                2 => ScalarType::Float16,
                4 => ScalarType::Float32,
                8 => ScalarType::Float64,
                _ => return Err(describe(dt)),
            };
            pieces.push((off, usize::from(*size)));
            scalar(ty, order(byte_order))
        }
        Datatype::String {
            size: StringSize::Fixed(n),
            ..
        } => {
            pieces.push((off, *n as usize));
            scalar(ScalarType::Ascii(*n as usize), ByteOrder::Big)
        }
        Datatype::Enum { base, members } => {
            if is_bool_enum(base, members) {
                pieces.push((off, 1));
                scalar(ScalarType::Bool8, ByteOrder::Little)
            } else {
                element(base, off, pieces)?
            }
        }
        Datatype::Compound { fields, size } => {
            if let Some(c) = complex(fields, *size) {
                pieces.push((off, *size as usize));
                return Ok(c);
            }
            if fields.is_empty() {
                return Err("compound without members".into());
            }
            let mut out: Vec<Field> = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                // as an ASDF record names them: an empty name is `f<i>`; names are unique
                let name = if f.name.is_empty() {
                    format!("f{i}")
                } else {
                    f.name.clone()
                };
                if out.iter().any(|o| o.name == name) {
                    return Err(format!("compound with two members named {name:?}"));
                }
                let at = off + f.byte_offset as usize;
                let (dtype, shape) = match &f.datatype {
                    Datatype::Array { base, dims } => {
                        let bsize = size_of(base);
                        let count = element_count(dims)?;
                        let mut dtype = None;
                        for i in 0..count {
                            if pieces.len() > MAX_PIECES {
                                return Err(format!("{} with too many members", describe(dt)));
                            }
                            let off = i
                                .checked_mul(bsize)
                                .and_then(|x| x.checked_add(at))
                                .ok_or_else(|| describe(dt))?;
                            dtype = Some(element(base, off, pieces)?);
                        }
                        let dtype = match dtype {
                            Some(d) => d,
                            None => element(base, at, &mut Vec::new())?,
                        };
                        (dtype, dims.iter().map(|&d| d as usize).collect())
                    }
                    other => (element(other, at, pieces)?, Vec::new()),
                };
                out.push(Field { name, dtype, shape });
            }
            DType::Record(out)
        }
        other => return Err(describe(other)),
    })
}

/// h5py's complex numbers: a compound of two floats of one size named `r` and `i`.
fn complex(fields: &[hdf5_reader::CompoundField], size: u32) -> Option<DType> {
    let [re, im] = fields else { return None };
    let (
        Datatype::FloatingPoint {
            size: a,
            byte_order: oa,
        },
        Datatype::FloatingPoint {
            size: b,
            byte_order: ob,
        },
    ) = (&re.datatype, &im.datatype)
    else {
        return None;
    };
    let named = re.name == "r" && im.name == "i";
    if !named
        || a != b
        || oa != ob
        || re.byte_offset != 0
        || im.byte_offset != u32::from(*a)
        || size != 2 * u32::from(*a)
    {
        return None;
    }
    let ty = match a {
        4 => ScalarType::Complex64,
        8 => ScalarType::Complex128,
        _ => return None,
    };
    Some(scalar(ty, order(oa)))
}

/// The HDF5 datatype of an ASDF datatype (records packed, complex numbers as h5py writes
/// them: a compound of `r` and `i`).
pub(crate) fn to_hdf5(dt: &DType) -> Result<Datatype, String> {
    let bo = |b: &ByteOrder| match b {
        ByteOrder::Big => H5Order::BigEndian,
        ByteOrder::Little => H5Order::LittleEndian,
    };
    Ok(match dt {
        DType::Scalar { ty, byteorder } => {
            let o = bo(byteorder);
            let int = |size: u8, signed: bool| Datatype::FixedPoint {
                size,
                signed,
                byte_order: o,
            };
            let float = |size: u8| Datatype::FloatingPoint {
                size,
                byte_order: o,
            };
            match ty {
                ScalarType::Int8 => int(1, true),
                ScalarType::Int16 => int(2, true),
                ScalarType::Int32 => int(4, true),
                ScalarType::Int64 => int(8, true),
                ScalarType::UInt8 => int(1, false),
                ScalarType::UInt16 => int(2, false),
                ScalarType::UInt32 => int(4, false),
                ScalarType::UInt64 => int(8, false),
                ScalarType::Float16 => float(2),
                ScalarType::Float32 => float(4),
                ScalarType::Float64 => float(8),
                ScalarType::Complex64 | ScalarType::Complex128 => {
                    let s: u8 = if *ty == ScalarType::Complex64 { 4 } else { 8 };
                    Datatype::Compound {
                        size: 2 * u32::from(s),
                        fields: vec![
                            hdf5_reader::CompoundField {
                                name: "r".into(),
                                byte_offset: 0,
                                datatype: float(s),
                            },
                            hdf5_reader::CompoundField {
                                name: "i".into(),
                                byte_offset: u32::from(s),
                                datatype: float(s),
                            },
                        ],
                    }
                }
                ScalarType::Bool8 => Datatype::Enum {
                    base: Box::new(int(1, true)),
                    members: vec![
                        hdf5_reader::EnumMember {
                            name: "FALSE".into(),
                            value: vec![0],
                        },
                        hdf5_reader::EnumMember {
                            name: "TRUE".into(),
                            value: vec![1],
                        },
                    ],
                },
                ScalarType::Ascii(n) => Datatype::String {
                    size: StringSize::Fixed(u32::try_from(*n).map_err(|_| "string too long")?),
                    encoding: hdf5_reader::StringEncoding::Ascii,
                    padding: hdf5_reader::StringPadding::NullPad,
                },
                ScalarType::Ucs4(_) => {
                    return Err("ucs4 strings (HDF5 has no UTF-32 strings)".into())
                }
                // ScalarType is non-exhaustive: a datatype added later has no mapping yet
                other => return Err(format!("datatype {other:?} has no HDF5 equivalent here")),
            }
        }
        DType::Record(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            let mut offset = 0u32;
            for f in fields {
                let base = to_hdf5(&f.dtype)?;
                let datatype = if f.shape.is_empty() {
                    base
                } else {
                    Datatype::Array {
                        base: Box::new(base),
                        dims: f.shape.iter().map(|&d| d as u64).collect(),
                    }
                };
                out.push(hdf5_reader::CompoundField {
                    name: f.name.clone(),
                    byte_offset: offset,
                    datatype,
                });
                offset += u32::try_from(f.dtype.itemsize() * f.count())
                    .map_err(|_| "record too large")?;
            }
            Datatype::Compound {
                size: offset,
                fields: out,
            }
        }
        // DType is non-exhaustive: a datatype added later has no mapping yet
        other => return Err(format!("datatype {other:?} has no HDF5 equivalent here")),
    })
}
