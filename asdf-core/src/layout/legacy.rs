//! Block headers of ASDF 0.1.0 files written before the 48-byte header of 1.x.
//!
//! Three layouts are known, told apart by `header_size` (the bytes after the magic and the
//! size field); every field is big-endian:
//!
//! | `header_size` | written | fields |
//! |---|---|---|
//! | 44 | 2014 | flags (4), allocated (8), used (8), checksum (8), encoding (16) |
//! | 36 | January 2015, the draft spec text | flags (4), allocated (8), used (8), memory (8), checksum (8) |
//! | 40 | early 2015 | flags (4), compression (4), allocated (8), used (8), data (8), checksum (8) |
//!
//! Flag 0x1 is STREAMED in all three; the 36-byte draft adds ENCODED (0x2): the block data then
//! starts with a YAML encoding chain ended by `...` (decoded by the file layer). The 8-byte
//! checksums cannot be MD5 digests and are kept but never verified. Only files headed
//! `#ASDF 0.1.0` are read this way; a `header_size` of 48 or more is always the 1.x layout.

use super::{BlockHeader, LayoutError, BLOCK_MAGIC};

/// Flag bit of the draft (36-byte) layout: the block data starts with an encoding chain.
pub const FLAG_ENCODED: u32 = 0x2;

/// Which legacy block-header layout a block uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LegacyLayout {
    /// 44 bytes (2014): checksum and a 16-byte encoding field, no decoded size.
    Header44,
    /// 36 bytes (January 2015, the draft spec): `memory_size` and the ENCODED flag.
    Draft36,
    /// 40 bytes (early 2015): a 4-byte compression label (`zlib`, `bzp2`).
    Header40,
}

impl LegacyLayout {
    /// The layout a 0.1.0 file's `header_size` names, if it is a legacy one.
    pub fn from_header_size(header_size: u16) -> Option<LegacyLayout> {
        match header_size {
            44 => Some(LegacyLayout::Header44),
            36 => Some(LegacyLayout::Draft36),
            40 => Some(LegacyLayout::Header40),
            _ => None,
        }
    }

    /// The `header_size` of the layout.
    pub fn header_size(self) -> u16 {
        match self {
            LegacyLayout::Header44 => 44,
            LegacyLayout::Draft36 => 36,
            LegacyLayout::Header40 => 40,
        }
    }
}

/// What a legacy block header holds beyond the common [`BlockHeader`] fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacyBlock {
    /// The layout.
    pub layout: LegacyLayout,
    /// The 8-byte checksum field as stored (never verified: it cannot be an MD5 digest).
    pub checksum: [u8; 8],
    /// The 16-byte encoding field of the 44-byte layout (zeros for none; zeros elsewhere).
    pub encoding: [u8; 16],
}

impl LegacyBlock {
    /// Whether the block data starts with a YAML encoding chain (draft ENCODED flag).
    pub fn has_chain(&self, header: &BlockHeader) -> bool {
        self.layout == LegacyLayout::Draft36 && header.flags & FLAG_ENCODED != 0
    }

    /// The encoding field of the 44-byte layout as text (NULs trimmed), when it is set.
    pub fn encoding_name(&self) -> Option<String> {
        if self.encoding == [0; 16] {
            return None;
        }
        let end = self.encoding.iter().position(|&b| b == 0).unwrap_or(16);
        Some(String::from_utf8_lossy(&self.encoding[..end]).into_owned())
    }
}

fn be_u64(f: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = f.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_be_bytes(b)
}

fn array<const N: usize>(f: &[u8], at: usize) -> [u8; N] {
    let mut b = [0u8; N];
    if let Some(s) = f.get(at..at + N) {
        b.copy_from_slice(s);
    }
    b
}

/// Parse a legacy block header from `bytes`, which start at the block magic found at file
/// offset `offset`. A `header_size` of 48 or more is [`LayoutError::NotLegacyHeaderSize`]
/// (it is the 1.x layout: `parse_block_header`); sizes are as stored (`index` 0).
///
/// ```
/// use asdf_core::unstable::parse_legacy_block_header;
/// use asdf_core::unstable::layout::LegacyLayout;
/// let mut b = vec![0xd3, b'B', b'L', b'K', 0, 40, 0, 0, 0, 0];
/// b.extend_from_slice(b"zlib");
/// for v in [16u64, 16, 64, 0] {
///     b.extend_from_slice(&v.to_be_bytes());
/// }
/// let (h, legacy) = parse_legacy_block_header(&b, 0)?;
/// assert_eq!(legacy.layout, LegacyLayout::Header40);
/// assert_eq!((&h.compression, h.used_size, h.data_size), (b"zlib", 16, 64));
/// # Ok::<(), asdf_core::unstable::layout::LayoutError>(())
/// ```
pub fn parse_legacy_block_header(
    bytes: &[u8],
    offset: u64,
) -> Result<(BlockHeader, LegacyBlock), LayoutError> {
    parse_legacy_at(bytes, offset, 0)
}

pub(crate) fn parse_legacy_at(
    bytes: &[u8],
    offset: u64,
    index: usize,
) -> Result<(BlockHeader, LegacyBlock), LayoutError> {
    let short = |needed: u64| LayoutError::BlockHeaderTooShort {
        index,
        offset,
        needed,
        available: bytes.len() as u64,
    };
    if !bytes.starts_with(&BLOCK_MAGIC) {
        return Err(if BLOCK_MAGIC.starts_with(bytes) {
            short(6)
        } else {
            LayoutError::BadBlockMagic { offset }
        });
    }
    let (Some(&h0), Some(&h1)) = (bytes.get(4), bytes.get(5)) else {
        return Err(short(6));
    };
    let header_size = u16::from_be_bytes([h0, h1]);
    let Some(layout) = LegacyLayout::from_header_size(header_size) else {
        return Err(LayoutError::NotLegacyHeaderSize {
            index,
            offset,
            header_size,
        });
    };
    let f = bytes
        .get(6..6 + usize::from(header_size))
        .ok_or_else(|| short(6 + u64::from(header_size)))?;
    let flags = u32::from_be_bytes(array(f, 0));
    let mut h = BlockHeader {
        index,
        offset,
        header_size,
        flags,
        compression: [0; 4],
        allocated_size: 0,
        used_size: 0,
        data_size: 0,
        checksum: [0; 16],
    };
    let mut legacy = LegacyBlock {
        layout,
        checksum: [0; 8],
        encoding: [0; 16],
    };
    match layout {
        LegacyLayout::Header44 => {
            h.allocated_size = be_u64(f, 4);
            h.used_size = be_u64(f, 12);
            h.data_size = h.used_size;
            legacy.checksum = array(f, 20);
            legacy.encoding = array(f, 28);
        }
        LegacyLayout::Draft36 => {
            h.allocated_size = be_u64(f, 4);
            h.used_size = be_u64(f, 12);
            h.data_size = be_u64(f, 20);
            legacy.checksum = array(f, 28);
            if flags & super::FLAG_STREAMED != 0 && flags & FLAG_ENCODED != 0 {
                return Err(LayoutError::LegacyStreamedEncoded { index, offset });
            }
        }
        LegacyLayout::Header40 => {
            h.compression = array(f, 4);
            h.allocated_size = be_u64(f, 8);
            h.used_size = be_u64(f, 16);
            h.data_size = be_u64(f, 24);
            legacy.checksum = array(f, 32);
        }
    }
    Ok((h, legacy))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(size: u16, fields: &[u8]) -> Vec<u8> {
        let mut b = BLOCK_MAGIC.to_vec();
        b.extend_from_slice(&size.to_be_bytes());
        b.extend_from_slice(fields);
        b
    }

    fn be(v: u64) -> [u8; 8] {
        v.to_be_bytes()
    }

    #[test]
    fn the_44_byte_layout_has_a_checksum_and_an_encoding_field() {
        let mut f = vec![0, 0, 0, 1];
        f.extend_from_slice(&be(80));
        f.extend_from_slice(&be(64));
        f.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        f.extend_from_slice(b"zlib\0\0\0\0\0\0\0\0\0\0\0\0");
        let (h, l) = parse_legacy_block_header(&header(44, &f), 7).unwrap();
        assert_eq!((h.offset, h.flags, h.header_size), (7, 1, 44));
        assert_eq!((h.allocated_size, h.used_size, h.data_size), (80, 64, 64));
        assert_eq!(h.compression, [0; 4]);
        assert_eq!(l.checksum, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(l.encoding_name().as_deref(), Some("zlib"));
    }

    #[test]
    fn the_36_byte_draft_has_memory_size_and_the_encoded_flag() {
        let mut f = vec![0, 0, 0, 2];
        f.extend_from_slice(&be(0xe2));
        f.extend_from_slice(&be(0xe2));
        f.extend_from_slice(&be(0x400));
        f.extend_from_slice(&be(9));
        let (h, l) = parse_legacy_block_header(&header(36, &f), 0).unwrap();
        assert_eq!(
            (h.allocated_size, h.used_size, h.data_size),
            (0xe2, 0xe2, 0x400)
        );
        assert!(l.has_chain(&h));
        assert_eq!(l.checksum, be(9));
        assert_eq!(l.encoding_name(), None);
    }

    #[test]
    fn streamed_and_encoded_together_are_refused() {
        let f = [[0, 0, 0, 3].as_slice(), &[0; 32]].concat();
        assert_eq!(
            parse_legacy_block_header(&header(36, &f), 5),
            Err(LayoutError::LegacyStreamedEncoded {
                index: 0,
                offset: 5
            })
        );
    }

    #[test]
    fn the_40_byte_layout_has_a_compression_label() {
        let mut f = vec![0, 0, 0, 0];
        f.extend_from_slice(b"bzp2");
        f.extend_from_slice(&be(30));
        f.extend_from_slice(&be(20));
        f.extend_from_slice(&be(100));
        f.extend_from_slice(&be(0));
        let (h, l) = parse_legacy_block_header(&header(40, &f), 0).unwrap();
        assert_eq!(&h.compression, b"bzp2");
        assert_eq!((h.allocated_size, h.used_size, h.data_size), (30, 20, 100));
        assert_eq!(l.layout, LegacyLayout::Header40);
    }

    #[test]
    fn other_sizes_and_short_input_are_typed_errors() {
        assert_eq!(
            parse_legacy_block_header(&header(38, &[0; 38]), 3),
            Err(LayoutError::NotLegacyHeaderSize {
                index: 0,
                offset: 3,
                header_size: 38
            })
        );
        assert_eq!(
            parse_legacy_block_header(&header(40, &[0; 20]), 3),
            Err(LayoutError::BlockHeaderTooShort {
                index: 0,
                offset: 3,
                needed: 46,
                available: 26
            })
        );
        assert_eq!(
            parse_legacy_block_header(b"\xd3BL", 3),
            Err(LayoutError::BlockHeaderTooShort {
                index: 0,
                offset: 3,
                needed: 6,
                available: 3
            })
        );
        assert_eq!(
            parse_legacy_block_header(b"XBLK\0\x28", 3),
            Err(LayoutError::BadBlockMagic { offset: 3 })
        );
    }
}
