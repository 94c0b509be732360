//! ASDF in FITS (JWST products): the tree is the ASDF file stored as the data of the
//! extension named `ASDF` (a one-row binary table with one `nB` column, as stdatamodels
//! writes, or a `uint8` image, as older writers did); arrays whose `source` is
//! `fits:EXTNAME,EXTVER` or `fits:INDEX` are the data of that HDU.
//!
//! An HDU is read as astropy reads it (`hdulist[...].data`), which is what stdatamodels and
//! python asdf hand their users: images with `BSCALE`/`BZERO` applied (`BZERO = 2^(n-1)` with
//! `BSCALE = 1` gives unsigned integers, `BZERO = -128` on bytes gives `int8`; any other
//! scaling, or a `BLANK`, gives `float32` for 8- and 16-bit data and `float64` for wider, with
//! blanks as NaN), binary tables as records field by field (`TZERO`/`TSCAL` likewise, scaled
//! columns as `float64`, logical columns as `bool8`, bit columns as arrays of `bool8`,
//! character columns as `ascii`). The tree's own `datatype` and `shape` are not consulted, as
//! python does not consult them either. See `docs/asdf-in-fits.md`.

use std::sync::Arc;

use crate::array::{ByteOrder, DType, DynArray, Field, ScalarType};
use crate::layout::fits::{self, CardValue, FitsError, FitsLimits, Hdu, HduKind};
use crate::layout::ReadAt;

/// The HDUs of an opened FITS file and the file they are read from.
pub(crate) struct Container {
    pub(crate) hdus: Vec<Hdu>,
    file: Arc<dyn ReadAt>,
}

/// Whether the source starts like a FITS file.
pub(crate) fn sniff(src: &dyn ReadAt) -> bool {
    let mut head = [0u8; 30];
    src.len() >= 30 && src.read_exact_at(&mut head, 0).is_ok() && fits::is_fits(&head)
}

/// Walks the HDUs and reads the ASDF extension's bytes.
pub(crate) fn open(file: Arc<dyn ReadAt>) -> Result<(Container, Vec<u8>), FitsError> {
    let hdus = fits::read_fits(&*file, &FitsLimits::default())?;
    let asdf = hdus
        .iter()
        .find(|h| h.name == "ASDF" && h.index > 0)
        .ok_or(FitsError::NoAsdfExtension { hdus: hdus.len() })?;
    let bytes = read_data(&*file, asdf)?;
    Ok((Container { hdus, file }, bytes))
}

/// The main data of an HDU (its size was checked against the file when it was walked).
fn read_data(file: &dyn ReadAt, hdu: &Hdu) -> Result<Vec<u8>, FitsError> {
    let truncated = || FitsError::Truncated {
        hdu: hdu.index,
        offset: hdu.header_offset,
        what: "data",
        needed: hdu.data_offset.saturating_add(hdu.data_len),
        file_len: file.len(),
    };
    let len = usize::try_from(hdu.data_len).map_err(|_| truncated())?;
    if hdu.data_offset.saturating_add(hdu.data_len) > file.len() {
        return Err(truncated());
    }
    let mut buf = crate::mem::zeroed_bytes(len).ok_or_else(truncated)?;
    file.read_exact_at(&mut buf, hdu.data_offset)
        .map_err(|_| truncated())?;
    Ok(buf)
}

impl Container {
    /// The HDU a `fits:` source names: `fits:NAME,VER` (name matched without case, as
    /// astropy does) or `fits:INDEX` (0 is the primary HDU).
    pub(crate) fn find(&self, uri: &str) -> Result<&Hdu, FitsError> {
        let missing = || FitsError::NoSuchHdu {
            uri: uri.to_string(),
            hdus: self.hdus.len(),
        };
        let rest = uri.strip_prefix("fits:").ok_or_else(missing)?;
        match parse_source(rest).ok_or_else(missing)? {
            (Some(name), ver) => {
                let key = name.trim().to_uppercase();
                self.hdus
                    .iter()
                    .find(|h| {
                        (h.name == key || (key == "PRIMARY" && h.index == 0)) && h.ver as u64 == ver
                    })
                    .ok_or_else(missing)
            }
            (None, index) => usize::try_from(index)
                .ok()
                .and_then(|i| self.hdus.get(i))
                .ok_or_else(missing),
        }
    }

    /// Where the ASDF extension's bytes (the ASDF file the tree and blocks are read from)
    /// begin in the FITS file.
    pub(crate) fn asdf_offset(&self) -> Option<u64> {
        self.hdus
            .iter()
            .find(|h| h.name == "ASDF" && h.index > 0)
            .map(|h| h.data_offset)
    }

    /// The image a `fits:` source names as it lies in the file, when astropy reads it as
    /// stored (big-endian, no `BSCALE`/`BZERO`/`BLANK`): its data offset, its bytes, its
    /// datatype and shape (C order), for chunk manifests. `Unsupported` for scaled images,
    /// whose values astropy computes, and for tables.
    pub(crate) fn raw_image(&self, uri: &str) -> Result<(u64, u64, DType, Vec<usize>), FitsError> {
        let hdu = self.find(uri)?;
        let unsupported = |what: String| FitsError::Unsupported {
            hdu: hdu.index,
            name: hdu.name.clone(),
            offset: hdu.header_offset,
            what,
        };
        if !matches!(hdu.kind, HduKind::Primary | HduKind::Image) || hdu.axes.is_empty() {
            return Err(unsupported(
                "only the data of an image lies in the file as it is read".into(),
            ));
        }
        let plan = image_plan(hdu);
        let elements = hdu.axes.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if elements.and_then(|n| n.checked_mul(plan.raw.size() as u64)) != Some(hdu.data_len) {
            return Err(unsupported(
                "its data is not one image (GCOUNT other than 1, or random groups)".into(),
            ));
        }
        if !matches!(plan.scaling, Scaling::Raw) {
            return Err(unsupported(
                "its values are computed from the stored ones (BSCALE, BZERO or BLANK)".into(),
            ));
        }
        let shape = hdu
            .shape()
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| unsupported("an axis longer than this machine's memory".into()))?;
        Ok((hdu.data_offset, hdu.data_len, scalar(plan.out.ty()), shape))
    }

    /// The image a `fits:` source names when astropy computes its values from the stored
    /// ones (`BSCALE`, `BZERO`, `BLANK`): where its data lies and its scaling; `None` for an
    /// image read as stored. `Unsupported` for tables and data that is not one image.
    pub(crate) fn scaled_image(&self, uri: &str) -> Result<Option<ScaledImage>, FitsError> {
        let hdu = self.find(uri)?;
        let unsupported = |what: String| FitsError::Unsupported {
            hdu: hdu.index,
            name: hdu.name.clone(),
            offset: hdu.header_offset,
            what,
        };
        if !matches!(hdu.kind, HduKind::Primary | HduKind::Image) || hdu.axes.is_empty() {
            return Err(unsupported("it is no image".into()));
        }
        let plan = image_plan(hdu);
        if matches!(plan.scaling, Scaling::Raw) {
            return Ok(None);
        }
        let elements = hdu.axes.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if elements.and_then(|n| n.checked_mul(plan.raw.size() as u64)) != Some(hdu.data_len) {
            return Err(unsupported(
                "its data is not one image (GCOUNT other than 1, or random groups)".into(),
            ));
        }
        let shape = hdu
            .shape()
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| unsupported("an axis longer than this machine's memory".into()))?;
        let zero_card = hdu.value("BZERO");
        Ok(Some(ScaledImage {
            offset: hdu.data_offset,
            length: hdu.data_len,
            dtype: scalar(plan.out.ty()),
            shape,
            scaling: FitsScaling {
                bitpix: hdu.bitpix,
                bscale: number(hdu, "BSCALE").unwrap_or(1.0),
                bzero: zero_card.and_then(CardValue::as_f64).unwrap_or(0.0),
                bzero_int: zero_card.and_then(CardValue::as_int),
                blank: hdu.value("BLANK").and_then(CardValue::as_int),
            },
        }))
    }

    /// The binary table a `fits:` source names: where its rows lie and the cards that
    /// describe its columns. `Unsupported` for any other HDU and tables astropy does not
    /// read as records (variable-length columns).
    pub(crate) fn table(&self, uri: &str) -> Result<FitsTable, FitsError> {
        let hdu = self.find(uri)?;
        let unsupported = |what: String| FitsError::Unsupported {
            hdu: hdu.index,
            name: hdu.name.clone(),
            offset: hdu.header_offset,
            what,
        };
        if !matches!(hdu.kind, HduKind::BinTable) {
            return Err(unsupported("it is no binary table".into()));
        }
        let table = Table::describe(hdu).map_err(unsupported)?;
        let rows = hdu.axes.get(1).copied().unwrap_or(0);
        let width = hdu.axes.first().copied().unwrap_or(0);
        if rows.checked_mul(width) != Some(hdu.data_len) {
            return Err(unsupported("its data is not NAXIS1 × NAXIS2 bytes".into()));
        }
        Ok(FitsTable {
            offset: hdu.data_offset,
            length: hdu.data_len,
            dtype: DType::Record(table.fields()),
            rows: usize::try_from(rows)
                .map_err(|_| unsupported("more rows than this machine's memory".into()))?,
            cards: hdu
                .cards
                .iter()
                .filter(|c| table_keyword(&c.keyword))
                .map(|c| (c.keyword.clone(), c.value.clone()))
                .collect(),
        })
    }

    /// The array of the HDU a `fits:` source names, as astropy reads it. `max_bytes` bounds
    /// the array's size in memory.
    pub(crate) fn array(&self, uri: &str, max_bytes: u64) -> Result<DynArray, FitsError> {
        let hdu = self.find(uri)?;
        let unsupported = |what: String| FitsError::Unsupported {
            hdu: hdu.index,
            name: hdu.name.clone(),
            offset: hdu.header_offset,
            what,
        };
        match hdu.kind {
            HduKind::Primary | HduKind::Image => {
                if hdu.axes.is_empty() {
                    return Err(unsupported("it has no data (NAXIS = 0)".into()));
                }
                let elements = hdu.axes.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
                let plan = image_plan(hdu);
                if elements.and_then(|n| n.checked_mul(plan.raw.size() as u64))
                    != Some(hdu.data_len)
                {
                    return Err(unsupported(
                        "its data is not one image (GCOUNT other than 1, or random groups)".into(),
                    ));
                }
                let out_bytes = hdu.data_len / plan.raw.size() as u64 * plan.out.size() as u64;
                check_size(out_bytes, max_bytes, &unsupported)?;
                let raw = read_data(&*self.file, hdu)?;
                let data = plan.apply(raw);
                Ok(DynArray {
                    dtype: scalar(plan.out.ty()),
                    shape: hdu.shape().iter().map(|&d| d as usize).collect(),
                    data,
                })
            }
            HduKind::BinTable => {
                let table = Table::describe(hdu).map_err(unsupported)?;
                let rows = hdu.axes.get(1).copied().unwrap_or(0);
                let out_bytes = rows.saturating_mul(table.out_width as u64);
                check_size(out_bytes, max_bytes, &unsupported)?;
                let raw = read_data(&*self.file, hdu)?;
                let data = table.convert(&raw, rows as usize);
                Ok(DynArray {
                    dtype: DType::Record(table.fields()),
                    shape: vec![rows as usize],
                    data,
                })
            }
            ref other => Err(unsupported(format!(
                "a {other} HDU cannot be read as an array"
            ))),
        }
    }
}

fn check_size(
    bytes: u64,
    max: u64,
    unsupported: &dyn Fn(String) -> FitsError,
) -> Result<(), FitsError> {
    if bytes > max || usize::try_from(bytes).is_err() {
        return Err(unsupported(format!(
            "its array of {bytes} bytes exceeds the limit of {max} bytes"
        )));
    }
    Ok(())
}

fn scalar(ty: ScalarType) -> DType {
    DType::Scalar {
        ty,
        byteorder: ByteOrder::Big,
    }
}

/// `fits:` source text after the prefix, as stdatamodels matches it
/// (`((?P<name>[ -~]+),)?(?P<ver>[0-9]+)`, anchored at the start only): the name is
/// everything up to the last comma that is followed by a digit.
fn parse_source(rest: &str) -> Option<(Option<&str>, u64)> {
    let digits = |s: &str| -> Option<u64> {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        // more digits than fit: no HDU can have such a number
        Some(s[..n].parse::<u64>().unwrap_or(u64::MAX))
    };
    let printable = |s: &str| !s.is_empty() && s.bytes().all(|b| (b' '..=b'~').contains(&b));
    for (i, _) in rest.rmatch_indices(',') {
        let (name, after) = (&rest[..i], &rest[i + 1..]);
        if printable(name) {
            if let Some(v) = digits(after) {
                return Some((Some(name), v));
            }
        }
    }
    digits(rest).map(|i| (None, i))
}

/// A numeric element kind: what the stored values are and what they become.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    U8,
    I8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    C64,
    C128,
}

impl Num {
    fn size(self) -> usize {
        match self {
            Num::U8 | Num::I8 => 1,
            Num::I16 | Num::U16 => 2,
            Num::I32 | Num::U32 | Num::F32 => 4,
            Num::I64 | Num::U64 | Num::F64 | Num::C64 => 8,
            Num::C128 => 16,
        }
    }
    fn ty(self) -> ScalarType {
        match self {
            Num::U8 => ScalarType::UInt8,
            Num::I8 => ScalarType::Int8,
            Num::I16 => ScalarType::Int16,
            Num::U16 => ScalarType::UInt16,
            Num::I32 => ScalarType::Int32,
            Num::U32 => ScalarType::UInt32,
            Num::I64 => ScalarType::Int64,
            Num::U64 => ScalarType::UInt64,
            Num::F32 => ScalarType::Float32,
            Num::F64 => ScalarType::Float64,
            Num::C64 => ScalarType::Complex64,
            Num::C128 => ScalarType::Complex128,
        }
    }
    /// A stored big-endian integer or real as `f64` (integers wider than 53 bits round as a
    /// C cast does).
    fn read_f64(self, b: &[u8]) -> f64 {
        match self {
            Num::U8 => b[0] as f64,
            Num::I8 => b[0] as i8 as f64,
            Num::I16 => i16::from_be_bytes([b[0], b[1]]) as f64,
            Num::U16 => u16::from_be_bytes([b[0], b[1]]) as f64,
            Num::I32 => i32::from_be_bytes(b[..4].try_into().unwrap_or_default()) as f64,
            Num::U32 => u32::from_be_bytes(b[..4].try_into().unwrap_or_default()) as f64,
            Num::F32 => f32::from_be_bytes(b[..4].try_into().unwrap_or_default()) as f64,
            Num::I64 => i64::from_be_bytes(b[..8].try_into().unwrap_or_default()) as f64,
            Num::U64 => u64::from_be_bytes(b[..8].try_into().unwrap_or_default()) as f64,
            Num::F64 => f64::from_be_bytes(b[..8].try_into().unwrap_or_default()),
            Num::C64 | Num::C128 => f64::NAN, // never scaled (refused before)
        }
    }
    /// A stored integer as `i128`, for comparing with `BLANK`.
    fn read_int(self, b: &[u8]) -> Option<i128> {
        Some(match self {
            Num::U8 => b[0] as i128,
            Num::I16 => i16::from_be_bytes([b[0], b[1]]) as i128,
            Num::I32 => i32::from_be_bytes(b[..4].try_into().ok()?) as i128,
            Num::I64 => i64::from_be_bytes(b[..8].try_into().ok()?) as i128,
            _ => return None,
        })
    }
}

/// What reading stored numbers does to them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scaling {
    /// The stored bytes as they are.
    Raw,
    /// The sign bit flipped: stored signed integers with `BZERO = 2^(n-1)` read as unsigned,
    /// stored bytes with `BZERO = -128` read as `int8`.
    FlipSign,
    /// `value × scale + zero` in `f32`, each step rounded to `f32` (as numpy computes it in
    /// place on a `float32` array); stored integers equal to `blank` become NaN.
    F32 {
        scale: f64,
        zero: f64,
        blank: Option<i128>,
    },
    /// The same in `f64`.
    F64 {
        scale: f64,
        zero: f64,
        blank: Option<i128>,
    },
}

/// How an image's stored values become its array, following astropy's rules.
struct ImagePlan {
    raw: Num,
    out: Num,
    scaling: Scaling,
}

fn number(hdu: &Hdu, key: &str) -> Option<f64> {
    hdu.value(key).and_then(CardValue::as_f64)
}

/// Whether a `BZERO`/`TZERO` value is exactly `v`.
fn zero_is(value: Option<&CardValue>, v: i128) -> bool {
    match value {
        Some(CardValue::Int(i)) => *i == v,
        Some(CardValue::Float(f)) => *f == v as f64 && (f.abs() < 2f64.powi(64)),
        _ => v == 0,
    }
}

/// What an image's header says of its scaling (`BITPIX`, `BSCALE`, `BZERO`, `BLANK`), as
/// `scale_fits_image` takes it: the configuration of a codec that computes an image's
/// values from its stored bytes as astropy does.
#[derive(Clone, Debug, PartialEq)]
pub struct FitsScaling {
    /// `BITPIX`: 8, 16, 32, 64 (integers), -32, -64 (reals).
    pub bitpix: i64,
    /// `BSCALE` (1 when absent).
    pub bscale: f64,
    /// `BZERO` (0 when absent).
    pub bzero: f64,
    /// `BZERO` when the card is an integer (its exact value, `2^63` included).
    pub bzero_int: Option<i128>,
    /// `BLANK` of integer data.
    pub blank: Option<i128>,
}

/// A scaled image of an ASDF-in-FITS file ([`crate::AsdfFile::fits_scaled_image`]): where
/// its stored bytes lie, its scaling and the array astropy makes of them.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaledImage {
    /// Absolute byte offset of its data in the FITS file.
    pub offset: u64,
    /// Bytes of its stored data.
    pub length: u64,
    /// The datatype of the values astropy computes (big-endian).
    pub dtype: DType,
    /// Its shape (C order).
    pub shape: Vec<usize>,
    /// How its values are computed from the stored ones.
    pub scaling: FitsScaling,
}

/// The values astropy computes from the stored big-endian bytes `data` of an image scaled
/// by `scaling` (the same arithmetic as reading the image from its file): their datatype
/// (big-endian) and bytes. An error for a `BITPIX` FITS has not, data that is no whole
/// number of values, or a result larger than [`crate::array::MAX_EXPANDED_BYTES`].
pub fn scale_fits_image(scaling: &FitsScaling, data: &[u8]) -> Result<(DType, Vec<u8>), String> {
    if ![8, 16, 32, 64, -32, -64].contains(&scaling.bitpix) {
        return Err(format!("BITPIX {}", scaling.bitpix));
    }
    if !scaling.bscale.is_finite() || !scaling.bzero.is_finite() {
        return Err(format!(
            "BSCALE {} and BZERO {}",
            scaling.bscale, scaling.bzero
        ));
    }
    let zero_card = match scaling.bzero_int {
        Some(i) => Some(CardValue::Int(i)),
        None if scaling.bzero != 0.0 => Some(CardValue::Float(scaling.bzero)),
        None => None,
    };
    let plan = plan_of(
        scaling.bitpix,
        scaling.bscale,
        zero_card.as_ref(),
        scaling.blank,
    );
    let (raw, out) = (plan.raw.size(), plan.out.size());
    if data.len() % raw != 0 {
        return Err(format!(
            "{} bytes are no whole number of {raw}-byte values",
            data.len()
        ));
    }
    let out_bytes = (data.len() / raw) as u64 * out as u64;
    if out_bytes > crate::array::MAX_EXPANDED_BYTES && out_bytes > data.len() as u64 {
        return Err(format!(
            "{out_bytes} bytes of values, more than the limit of {}",
            crate::array::MAX_EXPANDED_BYTES
        ));
    }
    let mut buf = Vec::new();
    buf.try_reserve_exact(data.len())
        .map_err(|e| format!("{} bytes: {e}", data.len()))?;
    buf.extend_from_slice(data);
    Ok((scalar(plan.out.ty()), plan.apply(buf)))
}

/// A binary table of an ASDF-in-FITS file ([`crate::AsdfFile::fits_table`]): where its rows
/// lie, the header cards that describe its columns, and the records astropy makes of them.
#[derive(Clone, Debug, PartialEq)]
pub struct FitsTable {
    /// Absolute byte offset of its rows in the FITS file.
    pub offset: u64,
    /// Bytes of its rows (`NAXIS1 × NAXIS2`, no heap).
    pub length: u64,
    /// The records' datatype (big-endian fields).
    pub dtype: DType,
    /// Its rows.
    pub rows: usize,
    /// The cards `convert_fits_table` reads: `NAXIS1`, `TFIELDS`, and each column's
    /// `TFORMn`, `TTYPEn`, `TDIMn`, `TSCALn`, `TZEROn`.
    pub cards: Vec<(String, CardValue)>,
}

/// Most cards [`convert_fits_table`] takes (`NAXIS1`, `TFIELDS`, five per column of 999).
const MAX_TABLE_CARDS: usize = 2 + 5 * 999;

/// Whether `keyword` is one of the cards that describe a table's columns.
fn table_keyword(keyword: &str) -> bool {
    keyword == "NAXIS1"
        || keyword == "TFIELDS"
        || ["TFORM", "TTYPE", "TDIM", "TSCAL", "TZERO"]
            .iter()
            .any(|k| {
                keyword
                    .strip_prefix(k)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
}

/// The records astropy makes of the rows `data` of a binary table described by `cards`
/// (`NAXIS1`, `TFIELDS`, `TFORMn`, `TTYPEn`, `TDIMn`, `TSCALn`, `TZEROn`; others are
/// ignored): the same conversion as reading the table from its file, field by field. Their
/// datatype (big-endian fields) and bytes. An error for cards that describe no table astropy
/// reads (variable-length columns, a row width other than `NAXIS1`), data that is no whole
/// number of rows, or a result larger than [`crate::array::MAX_EXPANDED_BYTES`].
pub fn convert_fits_table(
    cards: &[(String, CardValue)],
    data: &[u8],
) -> Result<(DType, Vec<u8>), String> {
    if cards.len() > MAX_TABLE_CARDS {
        return Err(format!(
            "{} cards, more than {MAX_TABLE_CARDS}",
            cards.len()
        ));
    }
    let row_width = cards
        .iter()
        .find(|(k, _)| k == "NAXIS1")
        .and_then(|(_, v)| v.as_int())
        .and_then(|n| u64::try_from(n).ok())
        .ok_or("NAXIS1 is missing or negative")?;
    let rows = match (data.len() as u64).checked_div(row_width) {
        Some(r) if r * row_width == data.len() as u64 => r,
        None if data.is_empty() => 0,
        _ => {
            return Err(format!(
                "{} bytes are no whole number of {row_width}-byte rows",
                data.len()
            ))
        }
    };
    let hdu = Hdu {
        index: 0,
        kind: HduKind::BinTable,
        header_offset: 0,
        data_offset: 0,
        data_len: data.len() as u64,
        heap_len: 0,
        bitpix: 8,
        axes: vec![row_width, rows],
        name: String::new(),
        ver: 1,
        cards: cards
            .iter()
            .filter(|(k, _)| table_keyword(k))
            .map(|(k, v)| fits::Card {
                keyword: k.clone(),
                value: v.clone(),
                comment: String::new(),
                offset: 0,
            })
            .collect(),
    };
    let table = Table::describe(&hdu)?;
    let out_bytes = rows
        .checked_mul(table.out_width as u64)
        .filter(|&n| n <= crate::array::MAX_EXPANDED_BYTES || n <= data.len() as u64)
        .ok_or_else(|| {
            format!(
                "{rows} rows of {} bytes, more than the limit of {}",
                table.out_width,
                crate::array::MAX_EXPANDED_BYTES
            )
        })?;
    let rows = usize::try_from(rows).map_err(|_| format!("{rows} rows"))?;
    usize::try_from(out_bytes).map_err(|_| format!("{out_bytes} bytes"))?;
    Ok((DType::Record(table.fields()), table.convert(data, rows)))
}

fn image_plan(hdu: &Hdu) -> ImagePlan {
    let scale = number(hdu, "BSCALE").unwrap_or(1.0);
    let blank = hdu.value("BLANK").and_then(CardValue::as_int);
    plan_of(hdu.bitpix, scale, hdu.value("BZERO"), blank)
}

/// The scaling of an image's header keywords (`BITPIX`, `BSCALE`, `BZERO`, `BLANK`).
fn plan_of(
    bitpix: i64,
    scale: f64,
    zero_card: Option<&CardValue>,
    blank: Option<i128>,
) -> ImagePlan {
    let raw = match bitpix {
        8 => Num::U8,
        16 => Num::I16,
        32 => Num::I32,
        64 => Num::I64,
        -32 => Num::F32,
        _ => Num::F64,
    };
    let zero = zero_card.and_then(CardValue::as_f64).unwrap_or(0.0);
    let unscaled = scale == 1.0 && zero == 0.0;
    let integer = bitpix > 0;
    // astropy keeps BLANK only for integer data
    let blank = if integer { blank } else { None };
    let keep = |out| ImagePlan {
        raw,
        out,
        scaling: Scaling::Raw,
    };
    if unscaled && blank.is_none() {
        return keep(raw);
    }
    if !unscaled && scale == 1.0 && integer {
        let unsigned = match bitpix {
            8 if zero_is(zero_card, -128) => Some(Num::I8),
            16 if zero_is(zero_card, 1 << 15) => Some(Num::U16),
            32 if zero_is(zero_card, 1 << 31) => Some(Num::U32),
            64 if zero_is(zero_card, 1 << 63) => Some(Num::U64),
            _ => None,
        };
        if let Some(out) = unsigned {
            return ImagePlan {
                raw,
                out,
                scaling: Scaling::FlipSign,
            };
        }
    }
    // astropy: `if self._blank:` turns blanks into NaN, so BLANK = 0 converts but blanks none
    let blank = blank.filter(|&b| b != 0);
    match (integer, bitpix) {
        (true, 8 | 16) => ImagePlan {
            raw,
            out: Num::F32,
            scaling: Scaling::F32 { scale, zero, blank },
        },
        (true, _) => ImagePlan {
            raw,
            out: Num::F64,
            scaling: Scaling::F64 { scale, zero, blank },
        },
        (false, -32) => ImagePlan {
            raw,
            out: Num::F32,
            scaling: Scaling::F32 {
                scale,
                zero,
                blank: None,
            },
        },
        (false, _) => ImagePlan {
            raw,
            out: Num::F64,
            scaling: Scaling::F64 {
                scale,
                zero,
                blank: None,
            },
        },
    }
}

/// Applies a scaling to `n` values of `raw` kind stored at `src`, writing big-endian `out`
/// values to `dst`.
fn scale_values(raw: Num, scaling: Scaling, src: &[u8], dst: &mut [u8]) {
    match scaling {
        Scaling::Raw => dst.copy_from_slice(src),
        Scaling::FlipSign => {
            dst.copy_from_slice(src);
            flip_sign(dst, raw.size());
        }
        Scaling::F32 { scale, zero, blank } => scale_real::<f32>(raw, src, dst, scale, zero, blank),
        Scaling::F64 { scale, zero, blank } => scale_real::<f64>(raw, src, dst, scale, zero, blank),
    }
}

/// Flips the sign bit of each big-endian value of `width` bytes.
fn flip_sign(buf: &mut [u8], width: usize) {
    for v in buf.chunks_exact_mut(width) {
        v[0] ^= 0x80;
    }
}

/// `f32` or `f64`, as the scaled values are computed in.
trait Real: Copy + std::ops::Mul<Output = Self> + std::ops::Add<Output = Self> {
    const NAN: Self;
    fn from_f64(x: f64) -> Self;
    fn put_be(self, out: &mut [u8]);
}

impl Real for f32 {
    const NAN: Self = f32::NAN;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn put_be(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_be_bytes());
    }
}

impl Real for f64 {
    const NAN: Self = f64::NAN;
    fn from_f64(x: f64) -> Self {
        x
    }
    fn put_be(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_be_bytes());
    }
}

/// `value × scale + zero` in `T`, each step rounded to `T` (as numpy computes it in place),
/// stored integers equal to `blank` as NaN; big-endian `T` values into `dst`.
fn scale_real<T: Real>(
    raw: Num,
    src: &[u8],
    dst: &mut [u8],
    scale: f64,
    zero: f64,
    blank: Option<i128>,
) {
    let (s, z) = (T::from_f64(scale), T::from_f64(zero));
    let out = std::mem::size_of::<T>();
    for (v, o) in src.chunks_exact(raw.size()).zip(dst.chunks_exact_mut(out)) {
        let mut x = T::from_f64(raw.read_f64(v));
        if scale != 1.0 {
            x = x * s;
        }
        if zero != 0.0 {
            x = x + z;
        }
        if blank.is_some() && raw.read_int(v) == blank {
            x = T::NAN;
        }
        x.put_be(o);
    }
}

impl ImagePlan {
    fn apply(&self, raw: Vec<u8>) -> Vec<u8> {
        match self.scaling {
            Scaling::Raw => raw,
            Scaling::FlipSign => {
                let mut raw = raw;
                flip_sign(&mut raw, self.raw.size());
                raw
            }
            s => {
                let n = raw.len() / self.raw.size();
                let mut out = vec![0u8; n * self.out.size()];
                scale_values(self.raw, s, &raw, &mut out);
                out
            }
        }
    }
}

/// One binary-table column and what it becomes.
#[derive(Debug)]
struct Column {
    name: String,
    /// Offset of the column in a stored row.
    offset: usize,
    kind: ColumnKind,
    /// Element shape of the field (empty for one value).
    shape: Vec<usize>,
    /// Bytes of the field in an output row.
    out_width: usize,
}

#[derive(Debug)]
enum ColumnKind {
    /// `L`: `T` is true.
    Logical { count: usize },
    /// `X`: bits, most significant first, `count` of them in `ceil(count / 8)` bytes.
    Bits { count: usize },
    /// `A`: characters, `len` per string.
    Chars { len: usize },
    /// Numbers.
    Number {
        raw: Num,
        out: Num,
        scaling: Scaling,
        count: usize,
    },
}

struct Table {
    columns: Vec<Column>,
    out_width: usize,
}

impl Table {
    fn describe(hdu: &Hdu) -> Result<Table, String> {
        let fields = hdu
            .value("TFIELDS")
            .and_then(CardValue::as_int)
            .filter(|n| (0..=999).contains(n))
            .ok_or("TFIELDS is missing or not in 0..=999")? as usize;
        let row_width = hdu.axes.first().copied().unwrap_or(0);
        let mut columns = Vec::with_capacity(fields);
        let mut offset = 0usize;
        let mut out_width = 0usize;
        for n in 1..=fields {
            let tform = hdu
                .value(&format!("TFORM{n}"))
                .and_then(CardValue::as_str)
                .ok_or_else(|| format!("TFORM{n} is missing"))?;
            let t = tform.trim();
            let split = t.bytes().take_while(u8::is_ascii_digit).count();
            let repeat = if split == 0 {
                1
            } else {
                t[..split]
                    .parse::<usize>()
                    .ok()
                    .filter(|&r| r <= 1 << 32)
                    .ok_or_else(|| format!("TFORM{n} = '{t}': repeat count too large"))?
            };
            let code = t[split..]
                .bytes()
                .next()
                .ok_or_else(|| format!("TFORM{n} = '{t}': no type"))?;
            let name = hdu
                .value(&format!("TTYPE{n}"))
                .and_then(CardValue::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| format!("col{n}"));
            let dims: Option<Vec<usize>> = hdu
                .value(&format!("TDIM{n}"))
                .and_then(CardValue::as_str)
                .and_then(parse_tdim);
            let tscal = hdu
                .value(&format!("TSCAL{n}"))
                .and_then(CardValue::as_f64)
                .unwrap_or(1.0);
            let tzero_card = hdu.value(&format!("TZERO{n}"));
            let tzero = tzero_card.and_then(CardValue::as_f64).unwrap_or(0.0);
            let scaled = tscal != 1.0 || tzero != 0.0;
            let stored = |size: usize| {
                repeat
                    .checked_mul(size)
                    .ok_or_else(|| format!("TFORM{n} = '{t}' overflows"))
            };
            let shape_of = |count: usize| -> Result<Vec<usize>, String> {
                match &dims {
                    Some(d) if d.iter().product::<usize>() == count => {
                        Ok(d.iter().rev().copied().collect())
                    }
                    Some(d) => Err(format!(
                        "TDIM{n} {d:?} does not match the repeat count {count}"
                    )),
                    None if count == 1 => Ok(Vec::new()),
                    None => Ok(vec![count]),
                }
            };
            let (kind, width, shape) = match code {
                b'L' => (ColumnKind::Logical { count: repeat }, repeat, shape_of(repeat)?),
                b'X' => (ColumnKind::Bits { count: repeat }, repeat.div_ceil(8), vec![repeat]),
                b'A' => {
                    let (len, shape) = match &dims {
                        Some(d) if d.len() >= 2 && d.iter().product::<usize>() == repeat => {
                            (d[0], d[1..].iter().rev().copied().collect())
                        }
                        _ => (repeat, Vec::new()),
                    };
                    (ColumnKind::Chars { len }, repeat, shape)
                }
                b'B' | b'I' | b'J' | b'K' | b'E' | b'D' | b'C' | b'M' => {
                    let raw = match code {
                        b'B' => Num::U8,
                        b'I' => Num::I16,
                        b'J' => Num::I32,
                        b'K' => Num::I64,
                        b'E' => Num::F32,
                        b'D' => Num::F64,
                        b'C' => Num::C64,
                        _ => Num::C128,
                    };
                    let (out, scaling) = if !scaled {
                        (raw, Scaling::Raw)
                    } else if matches!(raw, Num::C64 | Num::C128) {
                        return Err(format!("column {name}: scaled complex values (TSCAL/TZERO) are not supported"));
                    } else if tscal == 1.0
                        && match raw {
                            Num::I16 => zero_is(tzero_card, 1 << 15),
                            Num::I32 => zero_is(tzero_card, 1 << 31),
                            Num::I64 => zero_is(tzero_card, 1 << 63),
                            _ => false,
                        }
                    {
                        let out = match raw {
                            Num::I16 => Num::U16,
                            Num::I32 => Num::U32,
                            _ => Num::U64,
                        };
                        (out, Scaling::FlipSign)
                    } else {
                        (
                            Num::F64,
                            Scaling::F64 {
                                scale: tscal,
                                zero: tzero,
                                blank: None,
                            },
                        )
                    };
                    (
                        ColumnKind::Number {
                            raw,
                            out,
                            scaling,
                            count: repeat,
                        },
                        stored(raw.size())?,
                        shape_of(repeat)?,
                    )
                }
                b'P' | b'Q' => {
                    return Err(format!(
                        "column {name} ({t}) holds variable-length arrays, which an ndarray cannot express"
                    ))
                }
                other => return Err(format!("column {name}: TFORM{n} = '{t}' has unknown type {:?}", other as char)),
            };
            let out = match &kind {
                ColumnKind::Logical { count } | ColumnKind::Bits { count } => *count,
                ColumnKind::Chars { .. } => width,
                ColumnKind::Number { out, count, .. } => out.size() * count,
            };
            if repeat > 0 {
                columns.push(Column {
                    name,
                    offset,
                    kind,
                    shape,
                    out_width: out,
                });
            }
            offset = offset.checked_add(width).ok_or("row width overflows")?;
            out_width = out_width.checked_add(out).ok_or("row width overflows")?;
        }
        if offset as u64 != row_width {
            return Err(format!(
                "its columns take {offset} bytes per row, NAXIS1 says {row_width}"
            ));
        }
        Ok(Table { columns, out_width })
    }

    fn fields(&self) -> Vec<Field> {
        self.columns
            .iter()
            .map(|c| Field {
                name: c.name.clone(),
                dtype: match &c.kind {
                    ColumnKind::Logical { .. } | ColumnKind::Bits { .. } => {
                        scalar(ScalarType::Bool8)
                    }
                    ColumnKind::Chars { len, .. } => scalar(ScalarType::Ascii(*len)),
                    ColumnKind::Number { out, .. } => scalar(out.ty()),
                },
                shape: c.shape.clone(),
            })
            .collect()
    }

    fn convert(&self, raw: &[u8], rows: usize) -> Vec<u8> {
        let in_width = raw.len().checked_div(rows).unwrap_or(0);
        let mut out = vec![0u8; rows * self.out_width];
        for (r, row) in raw.chunks_exact(in_width.max(1)).take(rows).enumerate() {
            let mut o = &mut out[r * self.out_width..(r + 1) * self.out_width];
            for c in &self.columns {
                let (dst, rest) = std::mem::take(&mut o).split_at_mut(c.out_width);
                o = rest;
                let src = &row[c.offset..];
                match &c.kind {
                    ColumnKind::Logical { count } => {
                        for (d, s) in dst.iter_mut().zip(&src[..*count]) {
                            *d = u8::from(*s == b'T');
                        }
                    }
                    ColumnKind::Bits { count } => {
                        for (i, d) in dst.iter_mut().enumerate().take(*count) {
                            *d = (src[i / 8] >> (7 - i % 8)) & 1;
                        }
                    }
                    ColumnKind::Chars { len } => {
                        dst.copy_from_slice(&src[..dst.len()]);
                        // trailing blanks are not part of a FITS string (astropy strips them)
                        for s in dst.chunks_mut((*len).max(1)) {
                            for b in s.iter_mut().rev() {
                                if *b != b' ' && *b != 0 {
                                    break;
                                }
                                *b = 0;
                            }
                        }
                    }
                    ColumnKind::Number {
                        raw,
                        scaling,
                        count,
                        ..
                    } => scale_values(*raw, *scaling, &src[..raw.size() * count], dst),
                }
            }
        }
        out
    }
}

/// `TDIMn = '(d1,d2,...)'`.
fn parse_tdim(s: &str) -> Option<Vec<usize>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    inner
        .split(',')
        .map(|d| d.trim().parse::<usize>().ok().filter(|&d| d <= 1 << 32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_as_stdatamodels_matches_them() {
        assert_eq!(parse_source("SCI,1"), Some((Some("SCI"), 1)));
        assert_eq!(parse_source("A,B,12x"), Some((Some("A,B"), 12)));
        assert_eq!(parse_source("3"), Some((None, 3)));
        assert_eq!(parse_source("SCI"), None);
        assert_eq!(parse_source(""), None);
        assert_eq!(parse_source("SCI,x"), None);
    }

    #[test]
    fn scaling_follows_numpy_in_place_arithmetic() {
        // int16 2 with BSCALE 0.1 BZERO 1: f32(2) * f32(0.1) + f32(1)
        let mut out = [0u8; 4];
        scale_values(
            Num::I16,
            Scaling::F32 {
                scale: 0.1,
                zero: 1.0,
                blank: None,
            },
            &2i16.to_be_bytes(),
            &mut out,
        );
        assert_eq!(f32::from_be_bytes(out), 2f32 * 0.1f32 + 1f32);
        scale_values(
            Num::I16,
            Scaling::F32 {
                scale: 1.0,
                zero: 0.0,
                blank: Some(2),
            },
            &2i16.to_be_bytes(),
            &mut out,
        );
        assert!(f32::from_be_bytes(out).is_nan());
        let mut out = [0u8; 4];
        scale_values(
            Num::I32,
            Scaling::FlipSign,
            &(-5i32).to_be_bytes(),
            &mut out,
        );
        assert_eq!(u32::from_be_bytes(out), (-5i64 + (1 << 31)) as u32);
    }

    #[test]
    fn tdim_is_fortran_order() {
        assert_eq!(parse_tdim("(2,3)"), Some(vec![2, 3]));
        assert_eq!(parse_tdim("2,3"), None);
    }
}
