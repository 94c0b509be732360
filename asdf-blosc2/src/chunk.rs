//! Blosc2 chunks: a 16- or 32-byte header, then block starts and each block's compressed
//! streams (or, for special chunks, nothing but the header and maybe one value).

use crate::error::{slice, Error};
use crate::filters::{self, backward};

/// Bytes of the Blosc1 header; the Blosc2 extended header is twice that.
pub const MIN_HEADER: usize = 16;
/// Bytes of the extended (Blosc2) header.
pub const EXTENDED_HEADER: usize = 32;

const FLAG_SHUFFLE: u8 = 0x01;
const FLAG_MEMCPYED: u8 = 0x02;
const FLAG_BITSHUFFLE: u8 = 0x04;
const FLAG_DELTA: u8 = 0x08;
const FLAG_DONT_SPLIT: u8 = 0x10;
/// Bit 0 of the secondary Blosc2 flags: the chunk's blocks have variable lengths.
const FLAG2_VL_BLOCKS: u8 = 0x01;

/// Codec numbers of the chunk header's format field (flags bits 5 to 7).
pub(crate) const BLOSCLZ: u8 = 0;
pub(crate) const LZ4: u8 = 1;
pub(crate) const ZLIB: u8 = 3;
pub(crate) const ZSTD: u8 = 4;
const UDCODEC: u8 = 6;

/// What a chunk holds as a whole, when it holds no blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Special {
    /// Ordinary blocks.
    None,
    /// All zero bytes.
    Zeros,
    /// All NaN (float32 or float64, by the type size).
    Nan,
    /// One value (stored after the header) repeated.
    Value,
    /// Not initialised: read as zero bytes here.
    Uninit,
}

/// A parsed chunk header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Format version.
    pub version: u8,
    /// The raw flags byte.
    pub flags: u8,
    /// Item size in bytes (for shuffle and the other filters).
    pub typesize: usize,
    /// Decoded size.
    pub nbytes: usize,
    /// Block size (after clamping to `nbytes`); in a chunk of variable-length blocks
    /// ([`ChunkHeader::vl_blocks`]), the number of blocks.
    pub blocksize: usize,
    /// Stored size, header included.
    pub cbytes: usize,
    /// The six filter slots, applied in increasing order when compressing.
    pub filters: [u8; 6],
    /// Each filter's meta byte.
    pub filters_meta: [u8; 6],
    /// The codec number (format field).
    pub codec: u8,
    /// The user-defined codec id (when `codec` is 6).
    pub udcodec: u8,
    /// The header's length: 16 or 32.
    pub header_len: usize,
    /// Whole-chunk special value.
    pub special: Special,
    /// Blosc2 flags byte (extended header only).
    pub blosc2_flags: u8,
    /// Secondary Blosc2 flags byte (extended header only).
    pub blosc2_flags2: u8,
}

impl ChunkHeader {
    /// Reads and checks the header at the start of `src`.
    pub fn parse(src: &[u8]) -> Result<ChunkHeader, Error> {
        let h = slice(src, 0, MIN_HEADER as u64, "chunk header")?;
        let le = |at: usize| i32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let (version, flags, typesize) = (h[0], h[2], usize::from(h[3]));
        let (nbytes, blocksize, cbytes) = (le(4), le(8), le(12));
        if typesize == 0 {
            return Err(Error::malformed("typesize", 3, "zero"));
        }
        let nbytes = usize::try_from(nbytes)
            .map_err(|_| Error::malformed("nbytes", 4, format!("negative ({nbytes})")))?;
        if blocksize <= 0 {
            return Err(Error::malformed(
                "blocksize",
                8,
                format!("not positive ({blocksize})"),
            ));
        }
        let cbytes_u = usize::try_from(cbytes).ok().filter(|&c| c >= MIN_HEADER);
        let Some(cbytes) = cbytes_u else {
            return Err(Error::malformed(
                "cbytes",
                12,
                format!("{cbytes} is less than the header"),
            ));
        };
        let extended = flags & FLAG_SHUFFLE != 0 && flags & FLAG_BITSHUFFLE != 0;
        let mut hdr = ChunkHeader {
            version,
            flags,
            typesize,
            nbytes,
            blocksize: blocksize as usize,
            cbytes,
            filters: [0; 6],
            filters_meta: [0; 6],
            codec: flags >> 5,
            udcodec: 0,
            header_len: MIN_HEADER,
            special: Special::None,
            blosc2_flags: 0,
            blosc2_flags2: 0,
        };
        if extended {
            if cbytes < EXTENDED_HEADER {
                return Err(Error::malformed(
                    "cbytes",
                    12,
                    format!("{cbytes} is less than the extended header"),
                ));
            }
            let x = slice(src, 0, EXTENDED_HEADER as u64, "extended chunk header")?;
            hdr.header_len = EXTENDED_HEADER;
            hdr.filters.copy_from_slice(&x[16..22]);
            hdr.udcodec = x[22];
            hdr.filters_meta.copy_from_slice(&x[24..30]);
            hdr.blosc2_flags2 = x[30];
            hdr.blosc2_flags = x[31];
            if version == 3 {
                // the alpha format left the sixth slot uninitialised
                hdr.filters[5] = 0;
                hdr.filters_meta[5] = 0;
            }
            hdr.special = match (hdr.blosc2_flags >> 4) & 7 {
                0 => Special::None,
                1 => Special::Zeros,
                2 => Special::Nan,
                3 => Special::Value,
                4 => Special::Uninit,
                s => {
                    return Err(Error::malformed(
                        "special value kind",
                        31,
                        format!("reserved kind {s}"),
                    ))
                }
            };
        } else {
            if flags & FLAG_SHUFFLE != 0 {
                hdr.filters[5] = filters::SHUFFLE;
            } else if flags & FLAG_BITSHUFFLE != 0 {
                hdr.filters[5] = filters::BITSHUFFLE;
            }
            if flags & FLAG_DELTA != 0 {
                hdr.filters[4] = filters::DELTA;
            }
        }
        if hdr.vl_blocks() {
            // as C-Blosc2 3.x: such a chunk is neither special nor stored
            if hdr.special != Special::None {
                return Err(Error::malformed(
                    "special value kind",
                    31,
                    "a chunk of variable-length blocks cannot be special",
                ));
            }
            if hdr.memcpyed() {
                return Err(Error::malformed(
                    "flags",
                    2,
                    "a chunk of variable-length blocks cannot be stored as it is",
                ));
            }
        } else if hdr.blocksize > hdr.nbytes && hdr.nbytes > 0 {
            hdr.blocksize = hdr.nbytes;
        }
        Ok(hdr)
    }

    /// Whether the chunk's blocks have variable lengths (C-Blosc2 3.x's VL blocks, as
    /// `blosc2_vlcompress` and python-blosc2's `BatchArray` write them): `blocksize` then
    /// holds the number of blocks, and each block is one stream that starts with its
    /// decoded length.
    pub fn vl_blocks(&self) -> bool {
        self.blosc2_flags2 & FLAG2_VL_BLOCKS != 0
    }

    /// Whether the blocks are stored as they are (no codec).
    pub fn memcpyed(&self) -> bool {
        self.flags & FLAG_MEMCPYED != 0
    }

    fn codec_name(&self) -> &'static str {
        match self.codec {
            BLOSCLZ => "blosclz",
            LZ4 => "lz4",
            ZLIB => "zlib",
            ZSTD => "zstd",
            _ => "user-defined",
        }
    }
}

/// Decodes the chunk at the start of `src` (which may go on past the chunk); `limit` bounds
/// the decoded size the header may declare (the caller knows what to expect: a frame's chunk
/// size, an ASDF block's data size).
pub fn decode(src: &[u8], limit: usize) -> Result<Vec<u8>, Error> {
    let hdr = ChunkHeader::parse(src)?;
    let mut out = Vec::new();
    decode_into(&hdr, src, limit, &mut out)?;
    Ok(out)
}

/// As [`decode`], into `out` (cleared first), with the header already parsed.
pub fn decode_into(
    hdr: &ChunkHeader,
    src: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    out.clear();
    if hdr.nbytes > limit {
        return Err(Error::TooLarge {
            what: "chunk",
            size: hdr.nbytes as u64,
            limit: limit as u64,
        });
    }
    // checked before the buffer is sized by the header
    check(hdr, src)?;
    out.resize(hdr.nbytes, 0);
    decode_to_slice(hdr, src, out)
}

/// Checks what can be checked of a chunk without decoding it.
fn check(hdr: &ChunkHeader, src: &[u8]) -> Result<(), Error> {
    slice(src, 0, hdr.cbytes as u64, "chunk")?;
    Ok(())
}

/// Decodes the chunk into `out`, whose length must be the chunk's decoded size.
pub fn decode_to_slice(hdr: &ChunkHeader, src: &[u8], out: &mut [u8]) -> Result<(), Error> {
    decode_to_slice_with(hdr, src, out, false)
}

/// As [`decode_to_slice`]; `parallel`: independent blocks are decoded on rayon's threads.
pub(crate) fn decode_to_slice_with(
    hdr: &ChunkHeader,
    src: &[u8],
    out: &mut [u8],
    parallel: bool,
) -> Result<(), Error> {
    if out.len() != hdr.nbytes {
        return Err(Error::malformed(
            "nbytes",
            4,
            format!(
                "the chunk holds {} bytes, {} expected",
                hdr.nbytes,
                out.len()
            ),
        ));
    }
    let src = slice(src, 0, hdr.cbytes as u64, "chunk")?;
    if hdr.blosc2_flags & 0x08 != 0 && hdr.special == Special::None {
        return Err(Error::Unsupported {
            what: "lazy chunk",
            offset: 31,
        });
    }
    let ts = hdr.typesize;
    match hdr.special {
        Special::None => {}
        Special::Zeros | Special::Uninit => {
            out.fill(0);
            return Ok(());
        }
        Special::Nan => {
            let one: &[u8] = match ts {
                4 => &[0, 0, 0xc0, 0x7f],
                8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
                _ => {
                    return Err(Error::malformed(
                        "typesize",
                        3,
                        format!("a NaN chunk needs 4 or 8, not {ts}"),
                    ))
                }
            };
            if hdr.nbytes % ts != 0 {
                return Err(Error::malformed("nbytes", 4, "not a multiple of typesize"));
            }
            for item in out.chunks_exact_mut(ts) {
                item.copy_from_slice(one);
            }
            return Ok(());
        }
        Special::Value => {
            let vs = hdr.cbytes - hdr.header_len;
            if vs == 0 || hdr.nbytes % vs != 0 {
                return Err(Error::malformed(
                    "special value",
                    hdr.header_len as u64,
                    format!("{vs} bytes do not divide the {} decoded bytes", hdr.nbytes),
                ));
            }
            let v = &src[hdr.header_len..];
            for item in out.chunks_exact_mut(vs) {
                item.copy_from_slice(v);
            }
            return Ok(());
        }
    }
    if hdr.memcpyed() {
        if hdr.cbytes != hdr.nbytes + hdr.header_len {
            return Err(Error::malformed(
                "cbytes",
                12,
                format!(
                    "a stored chunk of {} bytes must take {} bytes",
                    hdr.nbytes,
                    hdr.nbytes + hdr.header_len
                ),
            ));
        }
        out.copy_from_slice(&src[hdr.header_len..]);
        return Ok(());
    }
    if hdr.nbytes == 0 {
        return Ok(());
    }
    if hdr.blosc2_flags & 0x01 != 0 {
        return Err(Error::Unsupported {
            what: "dictionary compression",
            offset: 31,
        });
    }
    check_codec_and_filters(hdr)?;
    if hdr.vl_blocks() {
        return decode_vl(hdr, src, out, parallel);
    }
    // the common pipelines: none (the streams decode straight into the output), and a byte
    // shuffle alone, in any slot (python-blosc2 2.x on puts it in the first, 1.x in the
    // last), unshuffled straight into the output; truncation has nothing to undo
    let mut shuffles = hdr
        .filters
        .iter()
        .zip(&hdr.filters_meta)
        .filter(|(&f, _)| f != filters::NOFILTER && f != filters::TRUNC_PREC);
    let direct = match (shuffles.next(), shuffles.next()) {
        (None, _) => Direct::Streams,
        (Some((&filters::SHUFFLE, &m)), None) => Direct::Unshuffle(match m {
            0 => hdr.typesize,
            m => usize::from(m),
        }),
        _ => Direct::No,
    };
    let bs = hdr.blocksize;
    if parallel && !hdr.filters.contains(&filters::DELTA) && hdr.nbytes > bs {
        // independent blocks (no delta filter refers to the first): one task each
        use rayon::prelude::*;
        return out.par_chunks_mut(bs).enumerate().try_for_each(|(j, dst)| {
            with_scratch(|scratch| decode_block_to(hdr, src, j, direct, None, dst, scratch))
        });
    }
    with_scratch(|scratch| {
        let nblocks = hdr.nbytes.div_ceil(bs);
        for j in 0..nblocks {
            let (first, rest) = out.split_at_mut(j.min(1) * bs);
            let offset = j * bs - first.len();
            let bsize = block_len(hdr, j);
            let dst = &mut rest[offset..offset + bsize];
            let dref = if j == 0 { None } else { Some(&first[..]) };
            decode_block_to(hdr, src, j, direct, dref, dst, scratch)?;
        }
        Ok(())
    })
}

/// The name of a codec of the chunk header's user-defined slot (`udcodec`): C-Blosc2's
/// registered plugins by python-blosc2's names, else what the id range is for.
pub(crate) fn plugin_codec_name(id: u8) -> &'static str {
    match id {
        32 => "NDLZ",
        33 => "ZFP_ACC",
        34 => "ZFP_PREC",
        35 => "ZFP_RATE",
        36 => "OPENHTJ2K",
        37 => "GROK",
        38 => "OPENZL",
        39 => "J2K",
        40 => "HTJ2K",
        0..=31 => "reserved",
        41..=159 => "unregistered",
        _ => "user-defined",
    }
}

/// Refuses a chunk whose codec or filters this crate does not implement (plugins, user
/// codecs and filters, reserved numbers).
fn check_codec_and_filters(hdr: &ChunkHeader) -> Result<(), Error> {
    match hdr.codec {
        BLOSCLZ | LZ4 | ZLIB | ZSTD => {}
        UDCODEC => {
            return Err(Error::UnsupportedCodec {
                id: hdr.udcodec,
                name: plugin_codec_name(hdr.udcodec),
            })
        }
        c => {
            return Err(Error::UnsupportedCodec {
                id: c,
                name: "reserved",
            })
        }
    }
    for &f in &hdr.filters {
        if !matches!(
            f,
            filters::NOFILTER
                | filters::SHUFFLE
                | filters::BITSHUFFLE
                | filters::DELTA
                | filters::TRUNC_PREC
                | filters::BYTEDELTA
        ) {
            return Err(Error::UnsupportedFilter {
                id: f,
                name: filters::filter_name(f),
            });
        }
    }
    Ok(())
}

/// One block of a chunk of variable-length blocks: where its stream lies in the chunk
/// (after the 4 bytes of its decoded length) and how many bytes it decodes to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct VlBlock {
    stream: std::ops::Range<usize>,
    len: usize,
}

/// The blocks of a chunk of variable-length blocks (C-Blosc2 3.x): after the header,
/// `blocksize` block starts (`i32`, from the start of the chunk, strictly increasing); block
/// `j` runs from its start to the next block's start (the last to the chunk's end) and is
/// one stream: its decoded length (`i32`, positive), then its compressed bytes. The decoded
/// lengths add up to the chunk's `nbytes`. Every start, end and length is checked here, as
/// C-Blosc2 checks them, before any is used. `src` is the chunk (`cbytes` long).
fn vl_layout(hdr: &ChunkHeader, src: &[u8]) -> Result<Vec<VlBlock>, Error> {
    let nblocks = hdr.blocksize;
    let starts_end = (nblocks as u64)
        .checked_mul(4)
        .and_then(|n| n.checked_add(hdr.header_len as u64))
        .filter(|&e| e <= hdr.cbytes as u64)
        .ok_or_else(|| {
            Error::malformed(
                "block count",
                8,
                format!(
                    "{nblocks} variable-length block starts do not fit a chunk of {} bytes",
                    hdr.cbytes
                ),
            )
        })? as usize;
    let starts = slice(
        src,
        hdr.header_len as u64,
        nblocks as u64 * 4,
        "block starts",
    )?;
    let start = |j: usize| {
        let b = &starts[4 * j..4 * j + 4];
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    };
    // the count is bounded by the chunk's stored length (checked above)
    let mut blocks = Vec::with_capacity(nblocks);
    let mut total = 0usize;
    let mut prev_end = starts_end;
    for j in 0..nblocks {
        let at = (hdr.header_len + 4 * j) as u64;
        let s = start(j);
        let begin = usize::try_from(s)
            .ok()
            .filter(|&b| b >= prev_end)
            .ok_or_else(|| {
                Error::malformed(
                    "block start",
                    at,
                    format!(
                        "block {j} starts at {s}, before byte {prev_end} (the end of what precedes it)"
                    ),
                )
            })?;
        let end = if j + 1 < nblocks {
            let e = start(j + 1);
            usize::try_from(e).unwrap_or(0)
        } else {
            hdr.cbytes
        };
        // a block holds its 4-byte length and at least one byte of stream
        if end > hdr.cbytes || end <= begin.saturating_add(4) {
            return Err(Error::malformed(
                "block start",
                at,
                format!(
                    "block {j} runs from byte {begin} to {end} in a chunk of {} bytes",
                    hdr.cbytes
                ),
            ));
        }
        let n = slice(src, begin as u64, 4, "block length")?;
        let n = i32::from_le_bytes([n[0], n[1], n[2], n[3]]);
        let len = usize::try_from(n).ok().filter(|&l| l > 0).ok_or_else(|| {
            Error::malformed(
                "block length",
                begin as u64,
                format!("block {j} declares {n} decoded bytes"),
            )
        })?;
        total = total
            .checked_add(len)
            .filter(|&t| t <= hdr.nbytes)
            .ok_or_else(|| {
                Error::malformed(
                    "block length",
                    begin as u64,
                    format!(
                        "blocks 0..={j} hold more than the chunk's {} bytes",
                        hdr.nbytes
                    ),
                )
            })?;
        blocks.push(VlBlock {
            stream: begin + 4..end,
            len,
        });
        prev_end = end;
    }
    if total != hdr.nbytes {
        return Err(Error::malformed(
            "nbytes",
            4,
            format!(
                "the chunk's {nblocks} variable-length blocks hold {total} bytes, its header says {}",
                hdr.nbytes
            ),
        ));
    }
    Ok(blocks)
}

/// Decodes block `j` of a chunk of variable-length blocks into `dst` (its decoded length):
/// its stream is stored as it is when it has that length, else compressed by the chunk's
/// codec; then the chunk's filters are undone on the block alone (each block is its own
/// reference for the delta filter: C-Blosc2 3.x encodes each so).
fn decode_vl_block(
    hdr: &ChunkHeader,
    src: &[u8],
    j: usize,
    b: &VlBlock,
    dst: &mut [u8],
    scratch: &mut Scratch,
) -> Result<(), Error> {
    let data = &src[b.stream.clone()];
    let filtered = hdr
        .filters
        .iter()
        .any(|&f| f != filters::NOFILTER && f != filters::TRUNC_PREC);
    let Scratch { block, tmp, dec } = scratch;
    let target: &mut [u8] = if filtered {
        block.resize(dst.len(), 0);
        block.as_mut_slice()
    } else {
        &mut *dst
    };
    if data.len() == target.len() {
        target.copy_from_slice(data);
    } else {
        dec.run(hdr.codec, data, target)
            .map_err(|detail| Error::Codec {
                block: j,
                codec: hdr.codec_name(),
                offset: b.stream.start as u64,
                detail,
            })?;
    }
    if filtered {
        backward(
            &hdr.filters,
            &hdr.filters_meta,
            hdr.typesize,
            hdr.version,
            block,
            tmp,
            None,
        )?;
        dst.copy_from_slice(block);
    }
    Ok(())
}

/// Decodes a chunk of variable-length blocks (codec and filters checked) into `out`, its
/// decoded size: the blocks one after the other, as C-Blosc2 decompresses such a chunk.
fn decode_vl(hdr: &ChunkHeader, src: &[u8], out: &mut [u8], parallel: bool) -> Result<(), Error> {
    let blocks = vl_layout(hdr, src)?;
    // the output cut at the blocks' lengths (they add up to its size: checked)
    let mut pieces = Vec::with_capacity(blocks.len());
    let mut rest = out;
    for b in &blocks {
        let (piece, tail) = rest.split_at_mut(b.len);
        pieces.push(piece);
        rest = tail;
    }
    if parallel && blocks.len() > 1 {
        use rayon::prelude::*;
        return pieces
            .into_par_iter()
            .zip(blocks.par_iter())
            .enumerate()
            .try_for_each(|(j, (dst, b))| {
                with_scratch(|scratch| decode_vl_block(hdr, src, j, b, dst, scratch))
            });
    }
    with_scratch(|scratch| {
        for (j, (dst, b)) in pieces.into_iter().zip(&blocks).enumerate() {
            decode_vl_block(hdr, src, j, b, dst, scratch)?;
        }
        Ok(())
    })
}

/// Decodes the chunk of variable-length blocks at the start of `src` block by block, as
/// C-Blosc2's `blosc2_vldecompress` and python-blosc2's `vldecompress` do: one buffer per
/// block. `limit` bounds the decoded size the header may declare, as in [`decode`]. A chunk
/// whose blocks are not of variable length is an error.
///
/// ```
/// # fn main() -> Result<(), asdf_blosc2::Error> {
/// // a chunk of two blocks, "abc" and "de", each stored as it is (python-blosc2's
/// // `vlcompress([b"abc", b"de"], codec=Codec.LZ4, clevel=0)` lays it out so)
/// let mut chunk = vec![6, 1, 0x35, 1, 5, 0, 0, 0, 2, 0, 0, 0, 53, 0, 0, 0];
/// chunk.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]); // flags2: VL blocks
/// chunk.extend([40, 0, 0, 0, 47, 0, 0, 0]); // block starts
/// chunk.extend([3, 0, 0, 0, b'a', b'b', b'c', 2, 0, 0, 0, b'd', b'e']);
/// let blocks = asdf_blosc2::chunk::decode_vl_blocks(&chunk, 1 << 20)?;
/// assert_eq!(blocks, [b"abc".to_vec(), b"de".to_vec()]);
/// assert_eq!(asdf_blosc2::chunk::decode(&chunk, 1 << 20)?, b"abcde");
/// # Ok(())
/// # }
/// ```
pub fn decode_vl_blocks(src: &[u8], limit: usize) -> Result<Vec<Vec<u8>>, Error> {
    let hdr = ChunkHeader::parse(src)?;
    if !hdr.vl_blocks() {
        return Err(Error::malformed(
            "Blosc2 flags",
            30,
            "the chunk's blocks are not of variable length",
        ));
    }
    if hdr.nbytes > limit {
        return Err(Error::TooLarge {
            what: "chunk",
            size: hdr.nbytes as u64,
            limit: limit as u64,
        });
    }
    let src = slice(src, 0, hdr.cbytes as u64, "chunk")?;
    if hdr.blosc2_flags & 0x08 != 0 {
        return Err(Error::Unsupported {
            what: "lazy chunk",
            offset: 31,
        });
    }
    if hdr.blosc2_flags & 0x01 != 0 {
        return Err(Error::Unsupported {
            what: "dictionary compression",
            offset: 31,
        });
    }
    if hdr.nbytes == 0 {
        return Ok(Vec::new());
    }
    check_codec_and_filters(&hdr)?;
    let blocks = vl_layout(&hdr, src)?;
    with_scratch(|scratch| {
        blocks
            .iter()
            .enumerate()
            .map(|(j, b)| {
                let mut dst = vec![0; b.len];
                decode_vl_block(&hdr, src, j, b, &mut dst, scratch)?;
                Ok(dst)
            })
            .collect()
    })
}

/// Decodes block `j` into `dst` (its decoded size) by the pipeline `direct`; `dref` is the
/// decoded first block (for delta), `None` for block 0.
fn decode_block_to(
    hdr: &ChunkHeader,
    src: &[u8],
    j: usize,
    direct: Direct,
    dref: Option<&[u8]>,
    dst: &mut [u8],
    scratch: &mut Scratch,
) -> Result<(), Error> {
    match direct {
        Direct::Streams => decode_streams(hdr, src, j, dst, &mut scratch.dec),
        Direct::Unshuffle(ts) => {
            let Scratch { block, dec, .. } = &mut *scratch;
            // every stream fills its part of the block: no need to clear it first
            block.resize(dst.len(), 0);
            decode_streams(hdr, src, j, block, dec)?;
            filters::unshuffle(ts, block, dst);
            Ok(())
        }
        Direct::No => {
            decode_block(hdr, src, j, dref, scratch)?;
            dst.copy_from_slice(&scratch.block);
            Ok(())
        }
    }
}

/// How [`decode_to_slice`] gets each block into the output.
#[derive(Clone, Copy)]
enum Direct {
    /// No filter: the streams decode into the output.
    Streams,
    /// A byte shuffle of this many bytes alone: the streams decode into a scratch block,
    /// which is unshuffled into the output.
    Unshuffle(usize),
    /// Any other pipeline: decoded and filtered in scratch buffers, then copied.
    No,
}

/// Buffers and decoders reused from block to block, and from chunk to chunk on a thread.
#[derive(Default)]
struct Scratch {
    block: Vec<u8>,
    tmp: Vec<u8>,
    dec: Decoder,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers and decoders (a fresh set if they are in
/// use). Buffers grown past 4 MiB (by a chunk with huge blocks) are not kept.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            let r = f(&mut s);
            let s = &mut *s;
            for b in [&mut s.block, &mut s.tmp] {
                if b.capacity() > 4 << 20 {
                    *b = Vec::new();
                }
            }
            r
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// The decoded size of block `j` (of a chunk with blocks).
fn block_len(hdr: &ChunkHeader, j: usize) -> usize {
    let bs = hdr.blocksize;
    let nblocks = hdr.nbytes.div_ceil(bs);
    let leftover = hdr.nbytes % bs;
    if j == nblocks - 1 && leftover > 0 {
        leftover
    } else {
        bs
    }
}

/// Decodes block `j` of a regular chunk (checked by [`decode_to_slice`]'s caller path) into
/// `scratch.block`, and undoes its filters; `dref` is the decoded first block (for delta),
/// `None` for block 0.
fn decode_block(
    hdr: &ChunkHeader,
    src: &[u8],
    j: usize,
    dref: Option<&[u8]>,
    scratch: &mut Scratch,
) -> Result<(), Error> {
    let Scratch { block, tmp, dec } = scratch;
    // every stream fills its part of the block: no need to clear it first
    block.resize(block_len(hdr, j), 0);
    decode_streams(hdr, src, j, block, dec)?;
    backward(
        &hdr.filters,
        &hdr.filters_meta,
        hdr.typesize,
        hdr.version,
        block,
        tmp,
        dref,
    )
}

/// Decodes the streams of block `j` into `block` (its decoded size, [`block_len`]), filters
/// not undone.
fn decode_streams(
    hdr: &ChunkHeader,
    src: &[u8],
    j: usize,
    block: &mut [u8],
    dec: &mut Decoder,
) -> Result<(), Error> {
    let ts = hdr.typesize;
    let bs = hdr.blocksize;
    let nblocks = hdr.nbytes.div_ceil(bs);
    let leftover = hdr.nbytes % bs;
    let starts = slice(
        src,
        hdr.header_len as u64,
        nblocks as u64 * 4,
        "block starts",
    )?;
    let dont_split = hdr.flags & FLAG_DONT_SPLIT != 0;
    let last_partial = j == nblocks - 1 && leftover > 0;
    let bsize = block.len();
    let at = hdr.header_len + 4 * j;
    let start = i32::from_le_bytes([
        starts[4 * j],
        starts[4 * j + 1],
        starts[4 * j + 2],
        starts[4 * j + 3],
    ]);
    let mut pos = match usize::try_from(start) {
        Ok(s) if s > 0 && s < hdr.cbytes => s,
        _ => {
            return Err(Error::malformed(
                "block start",
                at as u64,
                format!("{start} is outside the chunk of {} bytes", hdr.cbytes),
            ))
        }
    };
    // Blosc1 chunks (format 1 and 2) written before the split flag was not split when the
    // items were over 16 bytes or the block under 128 items: C-Blosc1 reads them so
    let blosc1_whole = hdr.version <= 2 && (ts > 16 || bs / ts < 128);
    let nstreams = if !dont_split && !last_partial && !blosc1_whole {
        ts
    } else {
        1
    };
    let neblock = bsize / nstreams;
    if neblock == 0 || neblock * nstreams != bsize {
        return Err(Error::malformed(
            "blocksize",
            8,
            format!("block of {bsize} bytes cannot be split in {nstreams} streams"),
        ));
    }
    for s in 0..nstreams {
        let dst = &mut block[s * neblock..(s + 1) * neblock];
        let cs = slice(src, pos as u64, 4, "stream size")?;
        let csize = i32::from_le_bytes([cs[0], cs[1], cs[2], cs[3]]);
        let size_at = pos;
        pos += 4;
        if csize == 0 {
            dst.fill(0);
        } else if csize < 0 {
            let token = slice(src, pos as u64, 1, "stream token")?[0];
            pos += 1;
            if token & 1 == 0 || csize < -255 {
                return Err(Error::malformed(
                    "stream size",
                    size_at as u64,
                    format!("negative size {csize} with token {token:#x}"),
                ));
            }
            dst.fill((-csize) as u8);
        } else {
            let n = csize as usize;
            let data = slice(src, pos as u64, n as u64, "compressed stream")?;
            if n == neblock {
                dst.copy_from_slice(data);
            } else {
                dec.run(hdr.codec, data, dst)
                    .map_err(|detail| Error::Codec {
                        block: j,
                        codec: hdr.codec_name(),
                        offset: pos as u64,
                        detail,
                    })?;
            }
            pos += n;
        }
    }
    Ok(())
}

/// Bytes `range` of a chunk's decoded data, decoding only the blocks that hold them (and
/// the first block, when a delta filter needs it). For the offsets index of large frames.
pub fn decode_range(
    hdr: &ChunkHeader,
    src: &[u8],
    range: std::ops::Range<usize>,
) -> Result<Vec<u8>, Error> {
    if range.start > range.end || range.end > hdr.nbytes {
        return Err(Error::malformed(
            "range",
            4,
            format!("bytes {range:?} of a chunk of {}", hdr.nbytes),
        ));
    }
    let regular = hdr.special == Special::None
        && !hdr.memcpyed()
        && hdr.blosc2_flags & 0x09 == 0
        && hdr.blosc2_flags2 & 1 == 0
        && matches!(hdr.codec, BLOSCLZ | LZ4 | ZLIB | ZSTD)
        && hdr.filters.iter().all(|&f| {
            matches!(
                f,
                filters::NOFILTER
                    | filters::SHUFFLE
                    | filters::BITSHUFFLE
                    | filters::DELTA
                    | filters::TRUNC_PREC
                    | filters::BYTEDELTA
            )
        });
    if !regular || hdr.nbytes == 0 {
        let all = decode(src, hdr.nbytes)?;
        return Ok(all[range].to_vec());
    }
    slice(src, 0, hdr.cbytes as u64, "chunk")?;
    with_scratch(|scratch| decode_range_regular(hdr, src, range, scratch))
}

/// [`decode_range`] of a chunk of blocks, with this thread's decoders.
fn decode_range_regular(
    hdr: &ChunkHeader,
    src: &[u8],
    range: std::ops::Range<usize>,
    scratch: &mut Scratch,
) -> Result<Vec<u8>, Error> {
    let bs = hdr.blocksize;
    let first = if hdr.filters.contains(&filters::DELTA) && range.start >= bs {
        decode_block(hdr, src, 0, None, scratch)?;
        Some(std::mem::take(&mut scratch.block))
    } else {
        None
    };
    let mut out = Vec::with_capacity(range.len());
    let mut block0: Option<Vec<u8>> = first;
    for j in range.start / bs..range.end.div_ceil(bs) {
        let dref = if j == 0 { None } else { block0.as_deref() };
        decode_block(hdr, src, j, dref, scratch)?;
        if j == 0 {
            block0 = Some(scratch.block.clone());
        }
        let lo = range.start.max(j * bs) - j * bs;
        let hi = range.end.min(j * bs + scratch.block.len()) - j * bs;
        out.extend_from_slice(&scratch.block[lo..hi]);
    }
    Ok(out)
}

/// The codecs' decoders, kept across streams.
#[derive(Default)]
struct Decoder {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl Decoder {
    /// Decodes `data` into exactly `dst`.
    fn run(&mut self, codec: u8, data: &[u8], dst: &mut [u8]) -> Result<(), String> {
        let n = match codec {
            BLOSCLZ => crate::blosclz::decompress(data, dst).ok_or("malformed blosclz stream")?,
            LZ4 => lz4_flex::block::decompress_into(data, dst).map_err(|e| e.to_string())?,
            ZLIB => {
                let mut d = flate2::Decompress::new(true);
                d.decompress(data, dst, flate2::FlushDecompress::Finish)
                    .map_err(|e| e.to_string())?;
                d.total_out() as usize
            }
            ZSTD => {
                if self.zstd.is_none() {
                    self.zstd = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
                }
                let z = self.zstd.as_mut().ok_or("no zstd decoder")?;
                z.decompress_to_buffer(data, dst)
                    .map_err(|e| e.to_string())?
            }
            _ => return Err("unknown codec".into()),
        };
        if n != dst.len() {
            return Err(format!("{n} bytes decoded, {} expected", dst.len()));
        }
        Ok(())
    }
}
