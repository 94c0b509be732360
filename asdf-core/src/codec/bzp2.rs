//! `bzp2`: bzip2 stream(s) (python asdf writes one `bz2.compress` stream per block).
//!
//! Python asdf's reader (`bz2.BZ2Decompressor`) stops at the end of the first stream, so a
//! block must be one stream. Large blocks are still compressed and decoded on every core,
//! as lbzip2 does, using the fact that the blocks of a bzip2 stream are independent:
//!
//! - writing: the data is cut into pieces small enough to make exactly one bzip2 block each
//!   (bzip2's first run-length stage grows data by at most 5/4), each piece is compressed
//!   on the rayon pool as its own stream, and the blocks are spliced bit by bit into one
//!   stream whose end carries the combined CRC. A piece that made more than one block (it
//!   cannot) sends the whole block back to the single-threaded encoder.
//! - reading: the 48-bit block magic is searched at every bit position, each candidate
//!   block is wrapped as a stream of its own (header, the block's bits, end marker with the
//!   block's CRC) and decoded in parallel. Each piece must decode as exactly one block that
//!   ends at the next candidate, every CRC must hold, the stream's combined CRC must match
//!   and the sizes must add up; anything else (a magic inside compressed data, several
//!   streams, corruption) falls back to the ordinary single-threaded decoder, which is what
//!   decides the result or the error.

use std::io::Read;

use bzip2::bufread::MultiBzDecoder;
use rayon::prelude::*;

use super::CodecError;

/// Start of every bzip2 block.
const BLOCK_MAGIC: u64 = 0x3141_5926_5359;
/// Start of the end-of-stream marker.
const END_MAGIC: u64 = 0x1772_4538_5090;
/// Blocks of at least this size are compressed and decoded in pieces on every core.
const PARALLEL_MIN: usize = 2 << 20;

pub(super) fn reader(stored: &[u8]) -> MultiBzDecoder<&[u8]> {
    MultiBzDecoder::new(stored)
}

fn encode_err(message: String) -> CodecError {
    CodecError::Encode {
        codec: "bzp2",
        message,
    }
}

fn encode_serial(data: &[u8], level: u32) -> Result<Vec<u8>, CodecError> {
    let mut enc = bzip2::bufread::BzEncoder::new(data, bzip2::Compression::new(level));
    let mut out = Vec::with_capacity(data.len() / 4 + 64);
    enc.read_to_end(&mut out)
        .map_err(|e| encode_err(e.to_string()))?;
    Ok(out)
}

pub(super) fn encode(data: &[u8], level: Option<i32>) -> Result<Vec<u8>, CodecError> {
    let level = level.map_or(9, |l| l.clamp(1, 9) as u32);
    if data.len() < PARALLEL_MIN || rayon::current_num_threads() < 2 {
        return encode_serial(data, level);
    }
    // bzip2 ends a block at 100,000 × level − 19 bytes after its first run-length stage,
    // which makes at most 5 bytes of 4: a piece of 4/5 of that (less a margin) is one block.
    let piece = (100_000 * level as usize - 19 - 8) * 4 / 5;
    let streams: Vec<Vec<u8>> = data
        .par_chunks(piece)
        .map(|p| encode_serial(p, level))
        .collect::<Result<_, _>>()?;
    match splice(&streams, level) {
        Some(out) => Ok(out),
        None => encode_serial(data, level),
    }
}

/// One stream made of the single blocks of `streams` (each a one-block stream), or `None`
/// when one of them is not a one-block stream.
fn splice(streams: &[Vec<u8>], level: u32) -> Option<Vec<u8>> {
    let total: usize = streams.iter().map(Vec::len).sum();
    let mut w = BitWriter::with_capacity(total);
    w.put_bytes(&[b'B', b'Z', b'h', b'0' + level as u8]);
    let mut combined = 0u32;
    for s in streams {
        let (crc, end) = one_block(s)?;
        w.put_bits_of(s, 32, end - 32);
        combined = combined.rotate_left(1) ^ crc;
    }
    w.put(END_MAGIC, 48);
    w.put(u64::from(combined), 32);
    Some(w.finish())
}

/// For a stream holding exactly one block: its CRC and the bit where the block ends.
fn one_block(s: &[u8]) -> Option<(u32, u64)> {
    if s.len() < 4 + 6 + 4 + 10 || get_bits(s, 32, 48)? != BLOCK_MAGIC {
        return None;
    }
    let crc = get_bits(s, 80, 32)? as u32;
    let bits = s.len() as u64 * 8;
    for pad in 0..8u64 {
        let end = bits - pad - 80;
        if get_bits(s, end, 48)? == END_MAGIC
            && get_bits(s, end + 48, 32)? as u32 == crc
            && (pad == 0 || get_bits(s, bits - pad, pad as u32)? == 0)
        {
            return Some((crc, end));
        }
    }
    None
}

/// `n` (≤ 57) bits from bit `pos`, most significant first, or `None` past the end.
fn get_bits(data: &[u8], pos: u64, n: u32) -> Option<u64> {
    if n == 0 {
        return Some(0);
    }
    let end = pos.checked_add(u64::from(n))?;
    if end > data.len() as u64 * 8 || n > 57 {
        return None;
    }
    let byte = (pos / 8) as usize;
    let mut word = [0u8; 8];
    let avail = data.len() - byte;
    let take = avail.min(8);
    word[..take].copy_from_slice(&data[byte..byte + take]);
    let v = u64::from_be_bytes(word) << (pos % 8);
    Some(v >> (64 - n))
}

/// Writes bits most significant first.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn with_capacity(bytes: usize) -> Self {
        BitWriter {
            out: Vec::with_capacity(bytes + 16),
            acc: 0,
            n: 0,
        }
    }

    /// Appends the low `n` (≤ 32) bits of `v`.
    fn put(&mut self, v: u64, n: u32) {
        if n > 32 {
            self.put(v >> 32, n - 32);
            self.put(v & 0xffff_ffff, 32);
            return;
        }
        self.acc = (self.acc << n) | (v & ((1u64 << n) - 1));
        self.n += n;
        while self.n >= 8 {
            self.n -= 8;
            self.out.push((self.acc >> self.n) as u8);
        }
        self.acc &= (1u64 << self.n) - 1;
    }

    fn put_bytes(&mut self, bytes: &[u8]) {
        if self.n == 0 {
            self.out.extend_from_slice(bytes);
        } else {
            for &b in bytes {
                self.put(u64::from(b), 8);
            }
        }
    }

    /// Appends `len` bits of `data` from bit `start` (in range: the callers check).
    fn put_bits_of(&mut self, data: &[u8], start: u64, len: u64) {
        let mut pos = start;
        let end = start + len;
        if pos % 8 == 0 {
            let whole = ((end - pos) / 8) as usize;
            let b = (pos / 8) as usize;
            self.put_bytes(&data[b..b + whole]);
            pos += whole as u64 * 8;
        }
        while pos < end {
            let n = (end - pos).min(32) as u32;
            self.put(get_bits(data, pos, n).unwrap_or(0), n);
            pos += u64::from(n);
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            let pad = 8 - self.n;
            self.put(0, pad);
        }
        self.out
    }
}

/// Decodes `stored` into `out` exactly: block by block on every core when the stream's
/// blocks can be found, else with the ordinary decoder.
pub(super) fn decode_into(stored: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    if stored.len() >= PARALLEL_MIN / 8
        && rayon::current_num_threads() > 1
        && decode_parallel(stored, out).is_some()
    {
        return Ok(());
    }
    super::read_exact_into(super::Compression::Bzp2, reader(stored), out)
}

/// Every bit position where the block magic starts.
fn block_starts(stored: &[u8]) -> Vec<u64> {
    let mut found = Vec::new();
    for shift in 0..8u32 {
        // The magic placed `shift` bits into a byte: the 5 bytes it fills wholly.
        let placed = BLOCK_MAGIC << (16 - shift); // in the top 48+shift bits of 64
        let bytes = placed.to_be_bytes();
        let first_whole = usize::from(shift != 0);
        let needle = &bytes[first_whole..first_whole + 5];
        for at in memchr::memmem::find_iter(stored, needle) {
            let Some(start) =
                (at as u64 * 8).checked_sub(if shift == 0 { 0 } else { 8 - u64::from(shift) })
            else {
                continue;
            };
            if get_bits(stored, start, 48) == Some(BLOCK_MAGIC) {
                found.push(start);
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

fn decode_parallel(stored: &[u8], out: &mut [u8]) -> Option<()> {
    if stored.get(..3)? != b"BZh" || !(b'1'..=b'9').contains(stored.get(3)?) {
        return None;
    }
    let header = [b'B', b'Z', b'h', stored[3]];
    let starts = block_starts(stored);
    if starts.first() != Some(&32) || starts.len() < 2 {
        return None;
    }
    // The end marker and combined CRC, then at most 7 bits of padding.
    let bits = stored.len() as u64 * 8;
    let (end, combined) = (0..8u64).find_map(|pad| {
        let end = bits.checked_sub(pad + 80)?;
        (get_bits(stored, end, 48)? == END_MAGIC).then(|| (end, get_bits(stored, end + 48, 32)))
    })?;
    let combined = combined? as u32;
    let mut bounds: Vec<(u64, u64)> = starts.windows(2).map(|w| (w[0], w[1])).collect();
    let last = *starts.last()?;
    if last >= end {
        return None;
    }
    bounds.push((last, end));
    let mut fold = 0u32;
    let mut filled = 0usize;
    let out_len = out.len();
    // A batch of blocks at a time, so memory stays near the batch's decoded size.
    for batch in bounds.chunks(rayon::current_num_threads() * 4) {
        let decoded: Vec<(u32, Vec<u8>)> = batch
            .par_iter()
            .map(|&(s, e)| decode_block(stored, header, s, e, out_len))
            .collect::<Option<_>>()?;
        for (crc, d) in decoded {
            fold = fold.rotate_left(1) ^ crc;
            let slot = out.get_mut(filled..filled.checked_add(d.len())?)?;
            slot.copy_from_slice(&d);
            filled += d.len();
        }
    }
    (filled == out.len() && fold == combined).then_some(())
}

/// The bits `[start, end)` of `stored` decoded as a stream of that one block: its CRC and
/// bytes, or `None` unless it decodes cleanly to exactly its end.
fn decode_block(
    stored: &[u8],
    header: [u8; 4],
    start: u64,
    end: u64,
    out_len: usize,
) -> Option<(u32, Vec<u8>)> {
    let crc = get_bits(stored, start + 48, 32)? as u32;
    let len = end.checked_sub(start)?;
    let mut w = BitWriter::with_capacity((len / 8) as usize + 16);
    w.put_bytes(&header);
    w.put_bits_of(stored, start, len);
    w.put(END_MAGIC, 48);
    w.put(u64::from(crc), 32);
    let one = w.finish();
    // A block decodes to at most 100,000 × level − 19 bytes before run-length expansion;
    // the final stage expands runs up to 255 bytes: 900 kB × 64 bounds any real block.
    let limit = (100_000usize * usize::from(header[3] - b'0') * 64).min(out_len);
    let mut d = bzip2::Decompress::new(false);
    let mut buf = Vec::with_capacity(1 << 20);
    loop {
        if buf.len() == buf.capacity() {
            if buf.len() > limit {
                return None;
            }
            buf.reserve(buf.len().max(1 << 20));
        }
        let consumed = d.total_in() as usize;
        let produced = buf.len();
        let status = d.decompress_vec(one.get(consumed..)?, &mut buf).ok()?;
        match status {
            bzip2::Status::StreamEnd => {
                return (d.total_in() as usize == one.len()).then_some((crc, buf));
            }
            _ if d.total_in() as usize == consumed && buf.len() == produced => {
                return None; // no progress: truncated
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data that compresses a little (bzip2 is slow: keep it a few MiB).
    fn data(n: usize) -> Vec<u8> {
        (0..n as u32)
            .map(|i| ((i / 7).wrapping_mul(2654435761) >> 27) as u8)
            .collect()
    }

    fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        // Two threads even on a one-core machine, so the parallel paths run.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(f)
    }

    #[test]
    fn parallel_writes_one_stream_that_the_plain_decoder_reads() {
        let d = data(3 * PARALLEL_MIN + 12345);
        let stored = in_pool(|| encode(&d, None)).unwrap();
        // One stream: a single-stream decoder (python's BZ2Decompressor) reads it whole.
        let mut single = Vec::new();
        bzip2::read::BzDecoder::new(&stored[..])
            .read_to_end(&mut single)
            .unwrap();
        assert_eq!(single, d);
        assert!(block_starts(&stored).len() > 4);
        // Decoded block by block in parallel, and with the fallback.
        let mut out = vec![0u8; d.len()];
        assert!(in_pool(|| decode_parallel(&stored, &mut out)).is_some());
        assert_eq!(out, d);
        let mut out = vec![0u8; d.len()];
        in_pool(|| decode_into(&stored, &mut out)).unwrap();
        assert_eq!(out, d);
        // Level 1: pieces of 100 kB blocks.
        let stored1 = in_pool(|| encode(&d[..PARALLEL_MIN], Some(1))).unwrap();
        let mut out = vec![0u8; PARALLEL_MIN];
        assert!(in_pool(|| decode_parallel(&stored1, &mut out)).is_some());
        assert_eq!(out, d[..PARALLEL_MIN]);
    }

    #[test]
    fn a_damaged_or_odd_stream_falls_back_to_the_plain_decoder() {
        let d = data(PARALLEL_MIN + 1000);
        let stored = in_pool(|| encode(&d, Some(2))).unwrap();
        // A wrong size: neither path accepts it.
        let mut short = vec![0u8; d.len() - 1];
        assert!(in_pool(|| decode_parallel(&stored, &mut short)).is_none());
        assert!(in_pool(|| decode_into(&stored, &mut short)).is_err());
        // A flipped bit in a block: the parallel path declines, the plain decoder reports.
        let mut bad = stored.clone();
        let at = bad.len() / 2;
        bad[at] ^= 0x10;
        let mut out = vec![0u8; d.len()];
        assert!(in_pool(|| decode_parallel(&bad, &mut out)).is_none());
        assert!(in_pool(|| decode_into(&bad, &mut out)).is_err());
        // Two concatenated streams (other writers): the plain decoder reads both.
        let half = d.len() / 2;
        let mut two = encode_serial(&d[..half], 2).unwrap();
        two.extend(encode_serial(&d[half..], 2).unwrap());
        let mut out = vec![0u8; d.len()];
        in_pool(|| decode_into(&two, &mut out)).unwrap();
        assert_eq!(out, d);
        // Truncated, and garbage: errors, no panic.
        for cut in [0, 10, stored.len() / 3] {
            let mut out = vec![0u8; d.len()];
            assert!(in_pool(|| decode_into(&stored[..cut], &mut out)).is_err());
        }
        let mut out = vec![0u8; 100];
        assert!(decode_into(b"BZh9\x31\x41\x59\x26\x53\x59", &mut out).is_err());
    }
}
