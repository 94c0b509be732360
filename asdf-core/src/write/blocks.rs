//! Writing the header, the tree and the blocks.

use std::io::{Seek, SeekFrom, Write};

use md5::{Digest, Md5};
use rayon::prelude::*;

use super::prepare::{BlockJob, Plan};
use super::{WriteError, WriteOptions};
use crate::codec;
use crate::layout::{encode_block_header, encode_block_index, BlockHeader, FLAG_STREAMED};
use crate::yaml::{emit, EmitOptions};

/// Uncompressed blocks at least this large are hashed on another thread while written.
const OVERLAP_MIN: usize = 4 << 20;
/// Byte position of the checksum inside a block header (after the magic).
const CHECKSUM_POS: u64 = 4 + 2 + 4 + 4 + 8 + 8 + 8;
/// Standard block header size.
const HEADER_SIZE: u64 = 48;

fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data).into()
}

/// The `header_size` that puts the data of a block whose header starts at `pos` on an
/// `align` boundary.
pub(crate) fn aligned_header_size(pos: u64, align: usize) -> u16 {
    let align = align.clamp(1, 4096) as u64;
    let data = pos + 6 + HEADER_SIZE;
    let pad = (align - data % align) % align;
    // at most 48 + 4095, within u16
    (HEADER_SIZE + pad) as u16
}

/// The text before the first block: `#ASDF` lines and the YAML document.
pub(crate) fn head_text(opts: &WriteOptions, plan: &Plan<'_>) -> Result<String, WriteError> {
    let eo = EmitOptions {
        tag_handles: plan.tag_handles.clone(),
        ..EmitOptions::default()
    };
    let yaml = emit(&plan.root, &eo)?;
    Ok(format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD {}\n{yaml}",
        opts.standard.as_str()
    ))
}

/// Writes the whole file; returns its length and the block offsets.
pub(crate) fn write_file<W: Write + Seek>(
    opts: &WriteOptions,
    plan: &Plan<'_>,
    w: &mut W,
) -> Result<(u64, Vec<u64>), WriteError> {
    let head = head_text(opts, plan)?;
    w.write_all(head.as_bytes())?;
    let mut start = head.len() as u64;
    if opts.pad_tree > 0 && (plan.streamed || !plan.blocks.is_empty()) {
        write_zeros(w, opts.pad_tree as u64)?;
        start += opts.pad_tree as u64;
    }
    let (mut offsets, mut len) = write_blocks(opts, &plan.blocks, w, start)?;
    if plan.streamed {
        let hs = aligned_header_size(len, opts.align);
        let header = BlockHeader {
            index: offsets.len(),
            offset: len,
            header_size: hs,
            flags: FLAG_STREAMED,
            compression: [0; 4],
            allocated_size: 0,
            used_size: 0,
            data_size: 0,
            checksum: [0; 16],
        };
        let bytes = encode_block_header(&header);
        w.write_all(&bytes)?;
        offsets.push(len);
        len += bytes.len() as u64;
    } else if !offsets.is_empty() && opts.block_index {
        let idx = encode_block_index(&offsets);
        w.write_all(&idx)?;
        len += idx.len() as u64;
    }
    Ok((len, offsets))
}

fn allocated(used: u64, pad: f64) -> u64 {
    if pad.is_finite() && pad > 0.0 {
        used.saturating_add((used as f64 * pad).ceil() as u64)
    } else {
        used
    }
}

/// Writes the blocks starting at byte `pos` of the file; returns their offsets and the end.
pub(crate) fn write_blocks<W: Write + Seek>(
    opts: &WriteOptions,
    jobs: &[BlockJob<'_>],
    w: &mut W,
    mut pos: u64,
) -> Result<(Vec<u64>, u64), WriteError> {
    let base = w
        .stream_position()?
        .checked_sub(pos)
        .ok_or_else(|| std::io::Error::other("sink position moved backwards while writing"))?;
    let level = opts.compression_level;
    let encoded: Vec<Option<(Vec<u8>, [u8; 16])>> = jobs
        .par_iter()
        .enumerate()
        .map(|(i, job)| match (job.compression, &job.stored) {
            (Some(_), Some((stored, _))) => {
                let sum = if opts.checksums { md5(stored) } else { [0; 16] };
                Ok(Some((Vec::new(), sum)))
            }
            (Some(c), None) => {
                let e = codec::encode(c, job.data.bytes(), level).map_err(|source| {
                    WriteError::Codec {
                        block: i,
                        codec: c,
                        source,
                    }
                })?;
                let sum = if opts.checksums { md5(&e) } else { [0; 16] };
                Ok(Some((e, sum)))
            }
            (None, _) => Ok(None),
        })
        .collect::<Result<_, WriteError>>()?;
    let mut offsets = Vec::with_capacity(jobs.len());
    for (i, (job, enc)) in jobs.iter().zip(encoded.iter()).enumerate() {
        let data = job.data.bytes();
        let (stored, data_size): (&[u8], u64) = match (&job.stored, enc) {
            (Some((s, n)), _) => (s, *n),
            (None, Some((e, _))) => (e, data.len() as u64),
            (None, None) => (data, data.len() as u64),
        };
        let used = stored.len() as u64;
        let alloc = allocated(used, opts.pad_blocks);
        let hs = aligned_header_size(pos, opts.align);
        let mut header = BlockHeader {
            index: i,
            offset: pos,
            header_size: hs,
            flags: 0,
            compression: job.compression.map_or([0; 4], |c| c.label()),
            allocated_size: alloc,
            used_size: used,
            data_size,
            checksum: [0; 16],
        };
        offsets.push(pos);
        let overlap = enc.is_none() && opts.checksums && stored.len() >= OVERLAP_MIN;
        if overlap {
            // write a header without checksum, hash on another thread while the data is
            // written, then patch the checksum in
            w.write_all(&encode_block_header(&header))?;
            let sum = std::thread::scope(|s| -> Result<[u8; 16], WriteError> {
                let h = s.spawn(|| md5(stored));
                let r = w.write_all(stored);
                let sum = h.join().unwrap_or_else(|_| md5(stored));
                r?;
                Ok(sum)
            })?;
            write_zeros(w, alloc - used)?;
            let end = w.stream_position()?;
            w.seek(SeekFrom::Start(base + pos + CHECKSUM_POS))?;
            w.write_all(&sum)?;
            w.seek(SeekFrom::Start(end))?;
        } else {
            header.checksum = match enc {
                Some((_, sum)) => *sum,
                None if opts.checksums => md5(stored),
                None => [0; 16],
            };
            w.write_all(&encode_block_header(&header))?;
            w.write_all(stored)?;
            write_zeros(w, alloc - used)?;
        }
        pos = pos
            .checked_add(6 + u64::from(hs) + alloc)
            .ok_or(WriteError::TooLarge { what: "file" })?;
    }
    Ok((offsets, pos))
}

/// Zero bytes for padding (a static: most calls write few or none).
static ZEROS: [u8; 8192] = [0; 8192];

fn write_zeros<W: Write>(w: &mut W, mut n: u64) -> std::io::Result<()> {
    while n > 0 {
        let k = n.min(ZEROS.len() as u64) as usize;
        w.write_all(ZEROS.get(..k).unwrap_or_default())?;
        n -= k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_size_aligns_data() {
        assert_eq!(aligned_header_size(0, 64), 58);
        assert_eq!((10 + 6 + u64::from(aligned_header_size(10, 64))) % 64, 0);
        assert_eq!(aligned_header_size(10, 1), 48);
        assert_eq!(aligned_header_size(10, 0), 48);
        for p in 0..200 {
            assert_eq!((p + 6 + u64::from(aligned_header_size(p, 64))) % 64, 0);
        }
    }
}
