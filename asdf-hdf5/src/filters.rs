//! HDF5 filters other writers use, decoded for hdf5-reader (registered with its
//! [`FilterRegistry`], each told the most bytes its output may hold): h5py's LZF (32000),
//! and hdf5plugin's Blosc (32001: one Blosc1 chunk, through asdf-blosc2), Bitshuffle
//! (32008: alone, or with LZ4 or Zstd inside) and Zstd (32015). The HDF5 LZ4 filter (32004)
//! is hdf5-reader's own. Every length read from a chunk is checked against the chunk and
//! the limit before a buffer is sized by it.

use hdf5_reader::error::{Error, Result};
use hdf5_reader::messages::filter_pipeline::FilterDescription;
use hdf5_reader::FilterRegistry;

/// h5py's LZF filter.
pub(crate) const LZF: u16 = 32000;
/// hdf5plugin's Blosc filter (Blosc1 chunks).
pub(crate) const BLOSC: u16 = 32001;
/// The HDF Group's LZ4 filter (decoded by hdf5-reader).
pub(crate) const LZ4: u16 = 32004;
/// Bitshuffle (hdf5plugin, h5py's bitshuffle package).
pub(crate) const BITSHUFFLE: u16 = 32008;
/// hdf5plugin's Zstd filter (one Zstandard frame a chunk).
pub(crate) const ZSTD: u16 = 32015;

/// hdf5-reader's registry with these filters added.
pub(crate) fn registry() -> FilterRegistry {
    let mut r = FilterRegistry::new();
    r.register_bounded(LZF, Box::new(|f, data, _, limit| lzf(f, data, limit)));
    r.register_bounded(BLOSC, Box::new(|_, data, _, limit| blosc(data, limit)));
    r.register_bounded(BITSHUFFLE, Box::new(bitshuffle));
    r.register_bounded(ZSTD, Box::new(|_, data, _, limit| zstd(data, limit)));
    r
}

fn bad(filter: &str, what: impl std::fmt::Display) -> Error {
    Error::DecompressionError(format!("{filter}: {what}"))
}

/// LZF (liblzf's format, no header): a run of literals (`ctrl < 32`: `ctrl + 1` bytes
/// follow) or a back reference (length `ctrl >> 5` plus 2, 7 meaning a length byte
/// follows; offset from the high five bits of `ctrl` and the next byte). h5py gives the
/// chunk's decoded size as the third parameter; it and `limit` bound the output.
fn lzf(f: &FilterDescription, data: &[u8], limit: usize) -> Result<Vec<u8>> {
    let declared = f.client_data.get(2).map(|&n| n as usize).filter(|&n| n > 0);
    let max = declared.map_or(limit, |n| n.min(limit));
    lzf_decode(data, max)
}

pub(crate) fn lzf_decode(data: &[u8], max: usize) -> Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(max.min(data.len().saturating_mul(4)));
    let mut i = 0;
    while i < data.len() {
        let ctrl = usize::from(data[i]);
        i += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let lit = data.get(i..i + n).ok_or_else(|| {
                bad(
                    "LZF",
                    format!("literal run of {n} bytes at {i} past the end"),
                )
            })?;
            if out.len() + n > max {
                return Err(bad("LZF", format!("output longer than {max} bytes")));
            }
            out.extend_from_slice(lit);
            i += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(
                    *data
                        .get(i)
                        .ok_or_else(|| bad("LZF", "back reference length past the end"))?,
                );
                i += 1;
            }
            len += 2;
            let low = usize::from(
                *data
                    .get(i)
                    .ok_or_else(|| bad("LZF", "back reference offset past the end"))?,
            );
            i += 1;
            let back = ((ctrl & 0x1f) << 8) + low + 1;
            let Some(start) = out.len().checked_sub(back) else {
                return Err(bad(
                    "LZF",
                    format!("back reference {back} bytes before the start at {i}"),
                ));
            };
            if out.len() + len > max {
                return Err(bad("LZF", format!("output longer than {max} bytes")));
            }
            // byte by byte: the reference may overlap what it writes
            for k in 0..len {
                let b = out[start + k];
                out.push(b);
            }
        }
    }
    Ok(out)
}

/// hdf5plugin's Blosc filter: the chunk is one Blosc1 chunk (its header gives its sizes).
fn blosc(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    asdf_blosc2::blosc1::decode(data, limit).map_err(|e| bad("Blosc", e))
}

/// hdf5plugin's Zstd filter: one Zstandard frame, decoded to at most `limit` bytes.
fn zstd(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    zstd_decode(data, limit, "Zstd")
}

fn zstd_decode(data: &[u8], limit: usize, filter: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut dec = zstd::stream::read::Decoder::new(data).map_err(|e| bad(filter, e))?;
    let mut out = Vec::new();
    // one byte past the limit tells an over-long frame from one of exactly the limit
    (&mut dec)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| bad(filter, e))?;
    if out.len() > limit {
        return Err(bad(filter, format!("output longer than {limit} bytes")));
    }
    Ok(out)
}

/// Elements of a bitshuffle block are a multiple of this.
const BSHUF_MULT: usize = 8;

/// Bitshuffle (bshuf's HDF5 filter). Parameters: `[2]` the element size, `[3]` the block
/// size in elements (0: the default), `[4]` the compression inside (0 none, 2 LZ4, 3
/// Zstd). Compressed chunks start with the decoded size (u64 BE) and the block size in
/// bytes (u32 BE), and each block is its compressed size (u32 BE) and the compressed
/// bit-transposed block. Blocks are whole multiples of 8 elements; what is left past the
/// last multiple of 8 is stored as it is at the end.
fn bitshuffle(f: &FilterDescription, data: &[u8], es: usize, limit: usize) -> Result<Vec<u8>> {
    let p = &f.client_data;
    let es = match p.get(2) {
        Some(&n) if n > 0 => n as usize,
        _ => es,
    };
    if es == 0 {
        return Err(bad("Bitshuffle", "element size 0"));
    }
    let compression = p.get(4).copied().unwrap_or(0);
    let (size, block_bytes, body) = if compression == 0 {
        let block = match p.get(3) {
            Some(&n) if n > 0 => n as usize,
            _ => default_block(es),
        };
        (data.len(), block.saturating_mul(es), data)
    } else {
        let head = data
            .get(..12)
            .ok_or_else(|| bad("Bitshuffle", "chunk shorter than its 12-byte header"))?;
        let size = u64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
        let size = usize::try_from(size)
            .ok()
            .filter(|&s| s <= limit)
            .ok_or_else(|| {
                bad(
                    "Bitshuffle",
                    format!("declared size {size} over the limit of {limit}"),
                )
            })?;
        let block = u32::from_be_bytes(head[8..12].try_into().expect("4 bytes")) as usize;
        (size, block, &data[12..])
    };
    if size > limit {
        return Err(bad(
            "Bitshuffle",
            format!("{size} bytes over the limit of {limit}"),
        ));
    }
    if size % es != 0 {
        return Err(bad(
            "Bitshuffle",
            format!("{size} bytes are no whole {es}-byte elements"),
        ));
    }
    if block_bytes == 0 || block_bytes % (es * BSHUF_MULT) != 0 {
        return Err(bad(
            "Bitshuffle",
            format!("block of {block_bytes} bytes is no multiple of 8 {es}-byte elements"),
        ));
    }
    let n = size / es;
    let block = block_bytes / es;
    let mut out = vec![0u8; size];
    let mut pos = 0; // in body
    let mut done = 0; // elements
    let tail = n % BSHUF_MULT;
    while done < n - tail {
        let count = block.min(n - tail - done);
        let bytes = count * es;
        let shuffled: std::borrow::Cow<[u8]> = match compression {
            0 => {
                let b = body
                    .get(pos..pos + bytes)
                    .ok_or_else(|| bad("Bitshuffle", "chunk shorter than its elements"))?;
                pos += bytes;
                b.into()
            }
            2 | 3 => {
                let len = body.get(pos..pos + 4).ok_or_else(|| {
                    bad("Bitshuffle", format!("block header at {pos} past the end"))
                })?;
                let len = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
                pos += 4;
                let c = body.get(pos..).and_then(|r| r.get(..len)).ok_or_else(|| {
                    bad("Bitshuffle", format!("block of {len} bytes past the end"))
                })?;
                pos += len;
                let d = if compression == 2 {
                    lz4_flex::block::decompress(c, bytes).map_err(|e| bad("Bitshuffle LZ4", e))?
                } else {
                    zstd_decode(c, bytes, "Bitshuffle Zstd")?
                };
                if d.len() != bytes {
                    return Err(bad(
                        "Bitshuffle",
                        format!("block decoded to {} bytes, not {bytes}", d.len()),
                    ));
                }
                d.into()
            }
            c => return Err(bad("Bitshuffle", format!("compression {c} is not known"))),
        };
        bit_untranspose(&shuffled, es, &mut out[done * es..done * es + bytes]);
        done += count;
    }
    // the elements past the last multiple of 8, as they are
    let rest = tail * es;
    let t = body
        .get(pos..pos + rest)
        .ok_or_else(|| bad("Bitshuffle", "chunk shorter than its last elements"))?;
    out[done * es..].copy_from_slice(t);
    Ok(out)
}

/// bshuf's default block: 8 KiB of elements, a multiple of 8, at least 128.
fn default_block(es: usize) -> usize {
    (8192 / es / BSHUF_MULT * BSHUF_MULT).max(128)
}

/// Undoes bshuf's bit transpose of `count` elements (a multiple of 8) of `es` bytes: the
/// input is `es * 8` rows of `count / 8` bytes, row `8b + i` holding bit `i` of byte `b`
/// of each element (element `j` at bit `j % 8` of byte `j / 8`).
fn bit_untranspose(src: &[u8], es: usize, dst: &mut [u8]) {
    let count = dst.len() / es;
    let row = count / BSHUF_MULT;
    dst.fill(0);
    for b in 0..es {
        for i in 0..8 {
            let r = &src[(b * 8 + i) * row..(b * 8 + i + 1) * row];
            for (jb, &byte) in r.iter().enumerate() {
                if byte == 0 {
                    continue;
                }
                for k in 0..8 {
                    let bit = (byte >> k) & 1;
                    dst[(jb * 8 + k) * es + b] |= bit << i;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lzf_literals_and_overlapping_references() {
        // "abcabcabcab": 3 literals, then a reference 3 back of length 8
        let data = [2, b'a', b'b', b'c', (6 << 5) as u8, 2];
        assert_eq!(lzf_decode(&data, 100).unwrap(), b"abcabcabcab");
        // longer than the limit, a reference before the start, truncated input
        assert!(lzf_decode(&data, 10).is_err());
        assert!(lzf_decode(&[(1 << 5) as u8, 0], 100).is_err());
        assert!(lzf_decode(&[5, b'a'], 100).is_err());
    }

    #[test]
    fn bit_transpose_of_a_known_pattern() {
        // 8 one-byte elements 0..8: bit i of element j is row i, bit j
        let mut src = vec![0u8; 8];
        for j in 0..8u8 {
            for (i, row) in src.iter_mut().enumerate() {
                *row |= ((j >> i) & 1) << j;
            }
        }
        let mut dst = vec![0u8; 8];
        bit_untranspose(&src, 1, &mut dst);
        assert_eq!(dst, (0..8).collect::<Vec<u8>>());
    }
}
