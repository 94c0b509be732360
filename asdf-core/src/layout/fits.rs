//! The structure of a FITS file, as far as ASDF in FITS needs it: HDUs (headers of
//! 80-character cards in 2880-byte records, then data padded to 2880 bytes), their keywords,
//! and where each HDU's data lies. No data is read here.
//!
//! Our own small reader rather than a FITS crate: ASDF in FITS needs only header cards and
//! the byte range of each HDU's data (images and binary tables are then bound as arrays by
//! the file layer, lazily, from the same positional reads as ASDF blocks); the reader must
//! take hostile input (every size checked against the file) and be fuzzed with the rest.
//! See `docs/asdf-in-fits.md`.

use std::fmt;

use super::ReadAt;

/// FITS record size: headers and data are padded to a multiple of it.
pub const RECORD: u64 = 2880;
/// One header card.
pub const CARD: usize = 80;

/// Whether `head` (the first bytes of a file) starts like a FITS file: a `SIMPLE` card
/// whose value is `T`.
pub fn is_fits(head: &[u8]) -> bool {
    head.len() >= 30
        && head.starts_with(b"SIMPLE  =")
        && head[10..30].iter().filter(|b| **b != b' ').eq(b"T".iter())
}

/// Limits for walking a FITS file.
#[derive(Clone, Copy, Debug)]
pub struct FitsLimits {
    /// Most header records (2880 bytes, 36 cards) in one header.
    pub max_header_records: u64,
    /// Most HDUs in a file.
    pub max_hdus: usize,
}

impl Default for FitsLimits {
    fn default() -> Self {
        FitsLimits {
            max_header_records: 100_000,
            max_hdus: 100_000,
        }
    }
}

/// A malformed or unsupported FITS structure; every variant names the HDU and byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FitsError {
    /// The file does not start with `SIMPLE = T`.
    #[error("not a FITS file (no `SIMPLE = T` card at byte 0)")]
    NotFits,
    /// The file ends inside a header or before the end of an HDU's data.
    #[error("HDU {hdu} at byte {offset}: the file ends inside its {what} ({file_len} bytes, {needed} needed)")]
    Truncated {
        /// HDU number (0 is the primary HDU).
        hdu: usize,
        /// Byte offset of the HDU's header.
        offset: u64,
        /// `header` or `data`.
        what: &'static str,
        /// Bytes needed up to the end of what is missing.
        needed: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A header with more records than `FitsLimits::max_header_records`, or a file with
    /// more HDUs than `FitsLimits::max_hdus`.
    #[error("HDU {hdu} at byte {offset}: {what} exceeds the limit of {limit}")]
    Limit {
        /// HDU number.
        hdu: usize,
        /// Byte offset of the HDU's header.
        offset: u64,
        /// What is too large.
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// A required keyword is missing or its value is unusable.
    #[error("HDU {hdu} at byte {offset}: keyword {keyword}: {message}")]
    Keyword {
        /// HDU number.
        hdu: usize,
        /// Byte offset of the card (or of the header when the keyword is missing).
        offset: u64,
        /// The keyword.
        keyword: String,
        /// What is wrong.
        message: String,
    },
    /// The file has no extension named `ASDF` holding an ASDF tree.
    #[error("no ASDF extension (an HDU with EXTNAME = 'ASDF') among its {hdus} HDUs")]
    NoAsdfExtension {
        /// How many HDUs the file has.
        hdus: usize,
    },
    /// An ndarray `source: "fits:..."` names no HDU of the file.
    #[error("source {uri:?} names no HDU of the file ({hdus} HDUs)")]
    NoSuchHdu {
        /// The source as written.
        uri: String,
        /// How many HDUs the file has.
        hdus: usize,
    },
    /// An ndarray `source: "fits:..."` in a file that is not a FITS file.
    #[error("source {uri:?} refers to a FITS HDU, but the file is not a FITS file")]
    NotInFits {
        /// The source as written.
        uri: String,
    },
    /// The HDU cannot be read as an array.
    #[error("HDU {hdu} ({name}) at byte {offset}: {what}")]
    Unsupported {
        /// HDU number.
        hdu: usize,
        /// Its `EXTNAME`.
        name: String,
        /// Byte offset of its header.
        offset: u64,
        /// What cannot be read.
        what: String,
    },
    /// The data size the header declares overflows.
    #[error("HDU {hdu} at byte {offset}: its declared data size overflows")]
    SizeOverflow {
        /// HDU number.
        hdu: usize,
        /// Byte offset of the HDU's header.
        offset: u64,
    },
}

/// A keyword's value, as written in its card.
#[derive(Clone, Debug, PartialEq)]
pub enum CardValue {
    /// A quoted string (quotes undone, trailing spaces removed).
    Str(String),
    /// `T` or `F`.
    Bool(bool),
    /// An integer (wide enough for `BZERO = 9223372036854775808`).
    Int(i128),
    /// A real number (`D` exponents accepted).
    Float(f64),
    /// Anything else (complex numbers, malformed values), as written.
    Other(String),
    /// No value (`KEY =` with nothing after it).
    Undefined,
}

impl CardValue {
    /// The value as a number, when it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            CardValue::Int(i) => Some(*i as f64),
            CardValue::Float(f) => Some(*f),
            _ => None,
        }
    }
    /// The value as an integer, when it is one.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            CardValue::Int(i) => Some(*i),
            _ => None,
        }
    }
    /// The value as a string, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            CardValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for CardValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CardValue::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            CardValue::Bool(b) => f.write_str(if *b { "T" } else { "F" }),
            CardValue::Int(i) => write!(f, "{i}"),
            CardValue::Float(x) => write!(f, "{x:?}"),
            CardValue::Other(s) => f.write_str(s),
            CardValue::Undefined => Ok(()),
        }
    }
}

/// One header card with a value (commentary cards such as `COMMENT` and `HISTORY` are kept
/// with `CardValue::Undefined` and their text as the comment).
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    /// The keyword, trailing spaces removed.
    pub keyword: String,
    /// Its value.
    pub value: CardValue,
    /// The comment after `/` (or a commentary card's text), trimmed.
    pub comment: String,
    /// Byte offset of the card in the file.
    pub offset: u64,
}

/// What kind of HDU.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HduKind {
    /// The primary HDU (an image, possibly empty).
    Primary,
    /// `XTENSION = 'IMAGE'`.
    Image,
    /// `XTENSION = 'BINTABLE'`.
    BinTable,
    /// `XTENSION = 'TABLE'` (ASCII table).
    AsciiTable,
    /// Any other extension, by its name.
    Other(String),
}

impl fmt::Display for HduKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HduKind::Primary => f.write_str("primary"),
            HduKind::Image => f.write_str("image"),
            HduKind::BinTable => f.write_str("binary table"),
            HduKind::AsciiTable => f.write_str("ascii table"),
            HduKind::Other(s) => write!(f, "extension {s}"),
        }
    }
}

/// One header-data unit: its header cards and where its data lies.
#[derive(Clone, Debug)]
pub struct Hdu {
    /// Position in the file (0 is the primary HDU).
    pub index: usize,
    /// What kind of HDU.
    pub kind: HduKind,
    /// Byte offset of the header.
    pub header_offset: u64,
    /// Byte offset of the data (the header's end, a multiple of 2880).
    pub data_offset: u64,
    /// Bytes of the main data: `|BITPIX|/8 × GCOUNT × NAXIS1 × … × NAXISn` (0 when
    /// `NAXIS = 0`), without the heap.
    pub data_len: u64,
    /// Bytes of the heap after the main data (`PCOUNT`, for binary tables).
    pub heap_len: u64,
    /// `BITPIX`.
    pub bitpix: i64,
    /// `NAXIS1` … `NAXISn`, in FITS order (fastest-varying first).
    pub axes: Vec<u64>,
    /// `EXTNAME`, upper-cased and trimmed (`PRIMARY` for the primary HDU without one).
    pub name: String,
    /// `EXTVER` (1 when absent).
    pub ver: i64,
    /// Every card of the header, in order (without `END`).
    pub cards: Vec<Card>,
}

impl Hdu {
    /// The first card with `keyword`.
    pub fn card(&self, keyword: &str) -> Option<&Card> {
        self.cards.iter().find(|c| c.keyword == keyword)
    }
    /// The value of the first card with `keyword`.
    pub fn value(&self, keyword: &str) -> Option<&CardValue> {
        self.card(keyword).map(|c| &c.value)
    }
    /// The numpy-order shape of the data (the axes reversed).
    pub fn shape(&self) -> Vec<u64> {
        self.axes.iter().rev().copied().collect()
    }
    /// The end of the HDU's data, padding excluded.
    pub fn data_end(&self) -> u64 {
        self.data_offset + self.data_len + self.heap_len
    }
}

/// Parses one 80-byte card at file offset `offset`.
pub fn parse_card(card: &[u8], offset: u64) -> Card {
    let text: String = card
        .iter()
        .map(|&b| {
            if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '?'
            }
        })
        .collect();
    let keyword = text.get(..8).unwrap_or(&text).trim_end().to_string();
    let rest = text.get(8..).unwrap_or("");
    if !(rest.starts_with("= ") || rest == "=") {
        return Card {
            keyword,
            value: CardValue::Undefined,
            comment: rest.trim().to_string(),
            offset,
        };
    }
    let field = rest.get(2..).unwrap_or("");
    let (value, comment) = parse_value(field);
    Card {
        keyword,
        value,
        comment,
        offset,
    }
}

/// A value field (columns 11–80): the value and the comment after it.
fn parse_value(field: &str) -> (CardValue, String) {
    let trimmed = field.trim_start();
    if let Some(body) = trimmed.strip_prefix('\'') {
        // a string: '' is a quote; the closing quote is one not followed by another
        let mut s = String::new();
        let mut chars = body.char_indices().peekable();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|&(_, n)| n) == Some('\'') {
                    chars.next();
                    s.push('\'');
                } else {
                    end = Some(i + 1);
                    break;
                }
            } else {
                s.push(c);
            }
        }
        let after = end.map_or("", |e| &body[e..]);
        let comment = after
            .trim_start()
            .strip_prefix('/')
            .unwrap_or("")
            .trim()
            .to_string();
        let s = s.trim_end().to_string();
        return (CardValue::Str(s), comment);
    }
    let (token, comment) = match trimmed.find('/') {
        Some(i) => (&trimmed[..i], trimmed[i + 1..].trim().to_string()),
        None => (trimmed, String::new()),
    };
    let token = token.trim();
    let value = match token {
        "" => CardValue::Undefined,
        "T" => CardValue::Bool(true),
        "F" => CardValue::Bool(false),
        t => parse_number(t).unwrap_or_else(|| CardValue::Other(t.to_string())),
    };
    (value, comment)
}

fn parse_number(t: &str) -> Option<CardValue> {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i128>().ok().map(CardValue::Int);
    }
    let ok = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'E' | b'e' | b'D' | b'd' | b'+' | b'-'));
    if !ok || !digits.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    t.replace(['D', 'd'], "E")
        .parse::<f64>()
        .ok()
        .map(CardValue::Float)
}

/// Reads the header starting at `offset`: its cards up to `END` and the offset after its
/// last record.
fn read_header(
    src: &dyn ReadAt,
    hdu: usize,
    offset: u64,
    limits: &FitsLimits,
) -> Result<(Vec<Card>, u64), FitsError> {
    let file_len = src.len();
    let mut cards = Vec::new();
    let mut record = vec![0u8; RECORD as usize];
    let mut at = offset;
    for n in 0.. {
        if n >= limits.max_header_records {
            return Err(FitsError::Limit {
                hdu,
                offset,
                what: "header records",
                limit: limits.max_header_records,
            });
        }
        let end = at
            .checked_add(RECORD)
            .ok_or(FitsError::SizeOverflow { hdu, offset })?;
        if end > file_len {
            return Err(FitsError::Truncated {
                hdu,
                offset,
                what: "header",
                needed: end,
                file_len,
            });
        }
        src.read_exact_at(&mut record, at)
            .map_err(|_| FitsError::Truncated {
                hdu,
                offset,
                what: "header",
                needed: end,
                file_len,
            })?;
        for (i, raw) in record.chunks_exact(CARD).enumerate() {
            let card_at = at + (i * CARD) as u64;
            if raw.starts_with(b"END") && raw[3..].iter().all(|&b| b == b' ') {
                return Ok((cards, end));
            }
            cards.push(parse_card(raw, card_at));
        }
        at = end;
    }
    unreachable!("the loop returns")
}

fn keyword_error(hdu: usize, offset: u64, keyword: &str, message: impl Into<String>) -> FitsError {
    FitsError::Keyword {
        hdu,
        offset,
        keyword: keyword.to_string(),
        message: message.into(),
    }
}

/// An integer keyword within `range`.
fn int_keyword(
    cards: &[Card],
    hdu: usize,
    header_offset: u64,
    keyword: &str,
    default: Option<i128>,
    range: std::ops::RangeInclusive<i128>,
) -> Result<i128, FitsError> {
    match cards.iter().find(|c| c.keyword == keyword) {
        None => default.ok_or_else(|| keyword_error(hdu, header_offset, keyword, "missing")),
        Some(c) => match c.value.as_int() {
            Some(v) if range.contains(&v) => Ok(v),
            Some(v) => Err(keyword_error(
                hdu,
                c.offset,
                keyword,
                format!("{v} is outside {}..={}", range.start(), range.end()),
            )),
            None => Err(keyword_error(
                hdu,
                c.offset,
                keyword,
                format!("expected an integer, found {}", c.value),
            )),
        },
    }
}

/// Walks every HDU of a FITS file: headers are read, data is skipped. Bytes after the last
/// HDU that do not start an `XTENSION` header are ignored, as astropy does.
pub fn read_fits(src: &dyn ReadAt, limits: &FitsLimits) -> Result<Vec<Hdu>, FitsError> {
    let file_len = src.len();
    let mut head = [0u8; CARD];
    if file_len < CARD as u64 || src.read_exact_at(&mut head, 0).is_err() || !is_fits(&head) {
        return Err(FitsError::NotFits);
    }
    let mut hdus = Vec::new();
    let mut offset = 0u64;
    loop {
        let index = hdus.len();
        if index >= limits.max_hdus {
            return Err(FitsError::Limit {
                hdu: index,
                offset,
                what: "number of HDUs",
                limit: limits.max_hdus as u64,
            });
        }
        let (cards, data_offset) = read_header(src, index, offset, limits)?;
        let hdu = describe(index, offset, data_offset, cards)?;
        let end = hdu
            .data_offset
            .checked_add(hdu.data_len)
            .and_then(|e| e.checked_add(hdu.heap_len))
            .ok_or(FitsError::SizeOverflow { hdu: index, offset })?;
        if end > file_len {
            return Err(FitsError::Truncated {
                hdu: index,
                offset,
                what: "data",
                needed: end,
                file_len,
            });
        }
        let padded = end
            .checked_next_multiple_of(RECORD)
            .ok_or(FitsError::SizeOverflow { hdu: index, offset })?;
        hdus.push(hdu);
        offset = padded;
        let mut next = [0u8; 9];
        // a header that starts and is cut short is an error (read_header says so); other
        // trailing bytes are not an HDU
        if offset.checked_add(9).is_none_or(|e| e > file_len)
            || src.read_exact_at(&mut next, offset).is_err()
            || &next != b"XTENSION="
        {
            return Ok(hdus);
        }
    }
}

/// Reads the structural keywords of a header.
fn describe(
    index: usize,
    offset: u64,
    data_offset: u64,
    cards: Vec<Card>,
) -> Result<Hdu, FitsError> {
    let first = cards.first();
    let kind = if index == 0 {
        HduKind::Primary
    } else {
        match first {
            Some(c) if c.keyword == "XTENSION" => match c.value.as_str().map(str::trim) {
                Some("IMAGE") => HduKind::Image,
                Some("BINTABLE") | Some("A3DTABLE") => HduKind::BinTable,
                Some("TABLE") => HduKind::AsciiTable,
                Some(other) => HduKind::Other(other.to_string()),
                None => return Err(keyword_error(index, c.offset, "XTENSION", "not a string")),
            },
            _ => {
                return Err(keyword_error(
                    index,
                    offset,
                    "XTENSION",
                    "not the first card",
                ))
            }
        }
    };
    let bitpix = int_keyword(&cards, index, offset, "BITPIX", None, -64..=64)?;
    if ![8, 16, 32, 64, -32, -64].contains(&bitpix) {
        let at = cards
            .iter()
            .find(|c| c.keyword == "BITPIX")
            .map_or(offset, |c| c.offset);
        return Err(keyword_error(
            index,
            at,
            "BITPIX",
            format!("{bitpix} is not a FITS BITPIX"),
        ));
    }
    let naxis = int_keyword(&cards, index, offset, "NAXIS", None, 0..=999)?;
    let mut axes = Vec::with_capacity(naxis as usize);
    for i in 1..=naxis {
        let key = format!("NAXIS{i}");
        axes.push(int_keyword(&cards, index, offset, &key, None, 0..=i64::MAX as i128)? as u64);
    }
    let is_ext = index > 0;
    let pcount = int_keyword(
        &cards,
        index,
        offset,
        "PCOUNT",
        Some(0),
        0..=i64::MAX as i128,
    )? as u64;
    let gcount = int_keyword(
        &cards,
        index,
        offset,
        "GCOUNT",
        Some(1),
        0..=i64::MAX as i128,
    )? as u64;
    let groups = !is_ext
        && matches!(
            cards
                .iter()
                .find(|c| c.keyword == "GROUPS")
                .map(|c| &c.value),
            Some(CardValue::Bool(true))
        )
        && axes.first() == Some(&0);
    let overflow = FitsError::SizeOverflow { hdu: index, offset };
    let elements = if axes.is_empty() {
        0
    } else {
        let dims = if groups { &axes[1..] } else { &axes[..] };
        dims.iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or(overflow)?
    };
    let width = bitpix.unsigned_abs() as u64 / 8;
    let (data_len, heap_len) = if groups {
        // random groups: GCOUNT × (PCOUNT + elements) values, no heap
        let n = elements
            .checked_add(pcount)
            .and_then(|n| n.checked_mul(gcount))
            .and_then(|n| n.checked_mul(width))
            .ok_or(FitsError::SizeOverflow { hdu: index, offset })?;
        (n, 0)
    } else {
        let main = elements
            .checked_mul(gcount)
            .and_then(|n| n.checked_mul(width))
            .ok_or(FitsError::SizeOverflow { hdu: index, offset })?;
        let heap = pcount
            .checked_mul(gcount)
            .and_then(|n| n.checked_mul(width))
            .ok_or(FitsError::SizeOverflow { hdu: index, offset })?;
        (main, heap)
    };
    let name = match cards
        .iter()
        .find(|c| c.keyword == "EXTNAME")
        .and_then(|c| c.value.as_str())
    {
        Some(n) => n.trim().to_uppercase(),
        None if index == 0 => "PRIMARY".to_string(),
        None => String::new(),
    };
    let ver = match cards
        .iter()
        .find(|c| c.keyword == "EXTVER")
        .map(|c| &c.value)
    {
        Some(CardValue::Int(v)) => i64::try_from(*v).unwrap_or(1),
        _ => 1,
    };
    Ok(Hdu {
        index,
        kind,
        header_offset: offset,
        data_offset,
        data_len,
        heap_len,
        bitpix: bitpix as i64,
        axes,
        name,
        ver,
        cards,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(text: &str) -> Vec<u8> {
        let mut c = text.as_bytes().to_vec();
        c.resize(CARD, b' ');
        c
    }

    fn header(cards: &[&str]) -> Vec<u8> {
        let mut h: Vec<u8> = cards.iter().flat_map(|c| card(c)).collect();
        h.extend(card("END"));
        h.resize(h.len().next_multiple_of(RECORD as usize), b' ');
        h
    }

    #[test]
    fn values_of_every_kind() {
        let v = |s: &str| parse_card(&card(s), 0).value;
        assert_eq!(
            v("EXTNAME = 'SCI     '           / extension name"),
            CardValue::Str("SCI".into())
        );
        assert_eq!(v("OBJECT  = 'O''Brien'"), CardValue::Str("O'Brien".into()));
        assert_eq!(v("SIMPLE  =                    T"), CardValue::Bool(true));
        assert_eq!(v("BZERO   =  9223372036854775808"), CardValue::Int(1 << 63));
        assert_eq!(
            v("BSCALE  =               1.5D-1 / scale"),
            CardValue::Float(0.15)
        );
        assert_eq!(
            v("EMPTY   =                      / nothing"),
            CardValue::Undefined
        );
        assert_eq!(
            v("CPLX    = (1.0, 2.0)"),
            CardValue::Other("(1.0, 2.0)".into())
        );
        let c = parse_card(&card("HISTORY made by hand"), 7);
        assert_eq!(
            (c.keyword.as_str(), c.value, c.comment.as_str(), c.offset),
            ("HISTORY", CardValue::Undefined, "made by hand", 7)
        );
        let c = parse_card(&card("BITPIX  =                   16 / bits"), 0);
        assert_eq!(c.comment, "bits");
    }

    #[test]
    fn walks_hdus_and_their_data_ranges() {
        let mut f = header(&["SIMPLE  = T", "BITPIX  = 8", "NAXIS   = 0", "EXTEND  = T"]);
        f.extend(header(&[
            "XTENSION= 'IMAGE   '",
            "BITPIX  = -32",
            "NAXIS   = 2",
            "NAXIS1  = 5",
            "NAXIS2  = 4",
            "PCOUNT  = 0",
            "GCOUNT  = 1",
            "EXTNAME = 'sci'",
            "EXTVER  = 2",
        ]));
        f.extend(vec![0u8; 2880]);
        f.extend(header(&[
            "XTENSION= 'BINTABLE'",
            "BITPIX  = 8",
            "NAXIS   = 2",
            "NAXIS1  = 10",
            "NAXIS2  = 3",
            "PCOUNT  = 7",
            "GCOUNT  = 1",
            "TFIELDS = 1",
            "TFORM1  = '10B'",
        ]));
        f.extend(vec![0u8; 37]); // no padding after the last HDU: tolerated
        let hdus = read_fits(&f, &FitsLimits::default()).unwrap();
        assert_eq!(hdus.len(), 3);
        assert_eq!(
            (
                hdus[0].kind.clone(),
                hdus[0].data_len,
                hdus[0].name.as_str()
            ),
            (HduKind::Primary, 0, "PRIMARY")
        );
        assert_eq!(hdus[1].kind, HduKind::Image);
        assert_eq!((hdus[1].name.as_str(), hdus[1].ver), ("SCI", 2));
        assert_eq!((hdus[1].data_offset, hdus[1].data_len), (2 * 2880, 80));
        assert_eq!(hdus[1].shape(), vec![4, 5]);
        assert_eq!(
            (hdus[2].data_offset, hdus[2].data_len, hdus[2].heap_len),
            (4 * 2880, 30, 7)
        );

        // cut inside the last data: a typed error naming the HDU
        let cut = &f[..f.len() - 1];
        match read_fits(&cut.to_vec(), &FitsLimits::default()) {
            Err(FitsError::Truncated {
                hdu: 2,
                what: "data",
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        // cut inside a header
        match read_fits(&f[..2880 + 100].to_vec(), &FitsLimits::default()) {
            Err(FitsError::Truncated {
                hdu: 1,
                what: "header",
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refuses_what_is_not_fits_or_overflows() {
        assert!(matches!(
            read_fits(&b"#ASDF 1.0.0\n".to_vec(), &FitsLimits::default()),
            Err(FitsError::NotFits)
        ));
        let f = header(&["SIMPLE  = F", "BITPIX  = 8", "NAXIS   = 0"]);
        assert!(matches!(
            read_fits(&f, &FitsLimits::default()),
            Err(FitsError::NotFits)
        ));
        let f = header(&["SIMPLE  = T", "BITPIX  = 12", "NAXIS   = 0"]);
        assert!(matches!(
            read_fits(&f, &FitsLimits::default()),
            Err(FitsError::Keyword { .. })
        ));
        let f = header(&[
            "SIMPLE  = T",
            "BITPIX  = 64",
            "NAXIS   = 3",
            "NAXIS1  = 4294967296",
            "NAXIS2  = 4294967296",
            "NAXIS3  = 4294967296",
        ]);
        assert!(matches!(
            read_fits(&f, &FitsLimits::default()),
            Err(FitsError::SizeOverflow { .. })
        ));
        let f = header(&["SIMPLE  = T", "BITPIX  = 8"]);
        match read_fits(&f, &FitsLimits::default()) {
            Err(FitsError::Keyword { keyword, .. }) => assert_eq!(keyword, "NAXIS"),
            other => panic!("{other:?}"),
        }
        // a header without END
        let mut f = card("SIMPLE  = T");
        f.resize(2880, b' ');
        let limits = FitsLimits {
            max_header_records: 1,
            max_hdus: 10,
        };
        assert!(matches!(
            read_fits(&f, &limits),
            Err(FitsError::Limit { .. })
        ));
    }
}
