//! Undoing Blosc2's filters on one block.

use crate::error::Error;

/// Filter ids of the chunk header.
pub(crate) const NOFILTER: u8 = 0;
pub(crate) const SHUFFLE: u8 = 1;
pub(crate) const BITSHUFFLE: u8 = 2;
pub(crate) const DELTA: u8 = 3;
pub(crate) const TRUNC_PREC: u8 = 4;
pub(crate) const BYTEDELTA_BUGGY: u8 = 34;
pub(crate) const BYTEDELTA: u8 = 35;

/// The name of a filter id, for errors.
pub(crate) fn filter_name(id: u8) -> &'static str {
    match id {
        NOFILTER => "none",
        SHUFFLE => "shuffle",
        BITSHUFFLE => "bitshuffle",
        DELTA => "delta",
        TRUNC_PREC => "trunc_prec",
        // C-Blosc2's registered plugins, by python-blosc2's names
        32 => "NDCELL",
        33 => "NDMEAN",
        BYTEDELTA_BUGGY => "BYTEDELTA_BUGGY",
        BYTEDELTA => "BYTEDELTA",
        36 => "INT_TRUNC",
        5..=31 => "reserved",
        37..=159 => "unregistered",
        _ => "user-defined",
    }
}

/// Byte unshuffle: the block holds byte 0 of every element, then byte 1 of every element,
/// and so on; the bytes after the last whole element are stored as they are.
pub(crate) use crate::shuffle::unshuffle;

/// Bit unshuffle: the block holds, for byte `j` and bit `k` of the element (row `j * 8 + k`),
/// a row of `n / 8` bytes with that bit of every element (element `e` in bit `e % 8` of byte
/// `e / 8`). Whole groups of 8 elements are shuffled; the rest is stored as it is (chunk
/// format 3 on; formats 1 and 2, Blosc1's, shuffled only blocks of a multiple of 8 elements).
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8], format: u8) {
    let mut n = src.len() / typesize;
    if format <= 2 && n % 8 != 0 {
        n = 0;
    }
    n -= n % 8;
    let row = n / 8;
    let body = n * typesize;
    dst[..body].fill(0);
    for j in 0..typesize {
        for k in 0..8 {
            let r = &src[(j * 8 + k) * row..(j * 8 + k + 1) * row];
            for (g, &bits) in r.iter().enumerate() {
                if bits == 0 {
                    continue;
                }
                for b in 0..8 {
                    if bits >> b & 1 != 0 {
                        dst[(g * 8 + b) * typesize + j] |= 1 << k;
                    }
                }
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Delta: the first block of a chunk is stored as each element XOR the previous one; every
/// other block as each element XOR the element at the same place of the first block
/// (`dref`, already decoded). Elements are taken 1, 2, 4 or 8 bytes wide (other sizes: 8
/// when a multiple of 8, else 1); bytes after the last whole element are left alone.
pub(crate) fn undelta(typesize: usize, buf: &mut [u8], dref: Option<&[u8]>) {
    let w = match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    };
    let n = buf.len() / w;
    match dref {
        None => {
            for i in 1..n {
                for b in 0..w {
                    buf[i * w + b] ^= buf[(i - 1) * w + b];
                }
            }
        }
        Some(r) => {
            for (x, y) in buf[..n * w].iter_mut().zip(r) {
                *x ^= *y;
            }
        }
    }
}

/// Bytedelta (filter 35): after a shuffle, each of the `typesize` byte streams holds the
/// differences of its bytes (mod 256); undone by a running sum per stream. Bytes after
/// the last whole stream are stored as they are.
pub(crate) fn unbytedelta(typesize: usize, buf: &mut [u8]) {
    let len = buf.len() / typesize;
    if len == 0 {
        return;
    }
    for stream in buf[..len * typesize].chunks_exact_mut(len) {
        let mut acc = 0u8;
        for b in stream {
            acc = acc.wrapping_add(*b);
            *b = acc;
        }
    }
}

/// Applies the backward pipeline to one decoded block (`buf`, `bsize` bytes). `dref` is the
/// chunk's decoded first block, for the delta filter of the later blocks.
pub(crate) fn backward(
    filters: &[u8; 6],
    meta: &[u8; 6],
    typesize: usize,
    format: u8,
    buf: &mut Vec<u8>,
    tmp: &mut Vec<u8>,
    dref: Option<&[u8]>,
) -> Result<(), Error> {
    for i in (0..6).rev() {
        match filters[i] {
            NOFILTER | TRUNC_PREC => {}
            SHUFFLE => {
                let ts = if meta[i] == 0 {
                    typesize
                } else {
                    usize::from(meta[i])
                };
                tmp.resize(buf.len(), 0);
                unshuffle(ts, buf, tmp);
                std::mem::swap(buf, tmp);
            }
            BITSHUFFLE => {
                tmp.resize(buf.len(), 0);
                bitunshuffle(typesize, buf, tmp, format);
                std::mem::swap(buf, tmp);
            }
            DELTA => undelta(typesize, buf, dref),
            BYTEDELTA => {
                let ts = if meta[i] == 0 {
                    typesize
                } else {
                    usize::from(meta[i])
                };
                unbytedelta(ts, buf);
            }
            id => {
                return Err(Error::UnsupportedFilter {
                    id,
                    name: filter_name(id),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshuffle_regroups_bytes_and_keeps_the_tail() {
        // elements 0x0201, 0x0403, 0x0605 stored as planes [01 03 05][02 04 06], tail 0xff
        let src = [1, 3, 5, 2, 4, 6, 0xff];
        let mut dst = [0u8; 7];
        unshuffle(2, &src, &mut dst);
        assert_eq!(dst, [1, 2, 3, 4, 5, 6, 0xff]);
    }

    #[test]
    fn bitunshuffle_of_eight_bytes() {
        // 8 one-byte elements; element e has only bit e set: row k has bit k of each element,
        // i.e. only element k's bit set
        let src: Vec<u8> = (0..8).map(|k| 1u8 << k).collect();
        let mut dst = [0u8; 8];
        bitunshuffle(1, &src, &mut dst, 5);
        let want: Vec<u8> = (0..8).map(|e| 1u8 << e).collect();
        assert_eq!(dst.to_vec(), want);
    }

    #[test]
    fn delta_of_the_first_block_is_a_running_xor() {
        let mut b = [1u8, 3, 6];
        undelta(1, &mut b, None);
        assert_eq!(b, [1, 1 ^ 3, 1 ^ 3 ^ 6]);
    }
}
