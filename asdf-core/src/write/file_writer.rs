//! Writing the header, the tree and the blocks.
//!
//! Large blocks go from their source to the sink as a pipeline, never through a copy of the
//! whole block:
//! - uncompressed: the caller's bytes are written in [`WRITE_CHUNK`] pieces while another
//!   thread computes their MD5; the checksum is patched into the header afterwards;
//! - `lz4`: worker threads compress the 4 MiB chunks in parallel; the calling thread writes
//!   each chunk, in order, as soon as it is ready and hands it to an MD5 thread; the sizes
//!   and the checksum are patched into the header at the end;
//! - `zstd` from 8 MiB (with more than one core): zstd's own worker threads compress the one
//!   frame; the calling thread writes and hashes each piece of output as it comes, and the
//!   sizes and checksum are patched in at the end.
//!
//! When the sink is a file ([`Writeback::file`]), the kernel is asked after each piece to
//! start writing it back to disk, so the fsync that ends a safe write finds little left to do
//! instead of the whole file (the kernel would otherwise hold back up to a tenth of memory).

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::checksum::Md5;
use crate::progress::Ticker;
use rayon::prelude::*;

use super::jobs::{BlockData, BlockJob, CopyRange};
use super::platform::{kernel_copy, Writeback};
use super::prepare::Plan;
use super::{WriteError, WriteOptions};
use crate::codec::{self, Compression, LZ4_CHUNK_INPUT};
use crate::layout::{encode_block_header, encode_block_index, BlockHeader, FLAG_STREAMED};
use crate::yaml::{emit, EmitOptions};

/// Uncompressed blocks at least this large are hashed on another thread while written.
const OVERLAP_MIN: usize = 4 << 20;
/// Bytes per `write` of a large block's data.
const WRITE_CHUNK: usize = 16 << 20;
/// Bytes the MD5 thread hashes between looks at the stop flag.
const HASH_CHUNK: usize = 16 << 20;
/// `lz4` blocks with at least this much input are compressed while they are written.
const LZ4_PIPE_MIN: usize = 4 * LZ4_CHUNK_INPUT;
/// Most threads compressing one `lz4` block.
const LZ4_MAX_WORKERS: usize = 8;
/// Compressed `lz4` chunks each worker may have ready ahead of the writer.
const LZ4_QUEUE: usize = 2;
/// Standard block header size.
const HEADER_SIZE: u64 = 48;

fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data)
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
    wb: &mut Writeback<'_>,
) -> Result<(u64, Vec<u64>), WriteError> {
    let head = head_text(opts, plan)?;
    w.write_all(head.as_bytes())?;
    let mut start = head.len() as u64;
    if opts.pad_tree > 0 && (plan.streamed || !plan.blocks.is_empty()) {
        write_zeros(w, opts.pad_tree as u64)?;
        start += opts.pad_tree as u64;
    }
    let (mut offsets, mut len) = write_blocks(opts, &plan.blocks, w, start, wb)?;
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

/// A block's stored bytes as far as they are known before writing starts.
enum Pre {
    /// Uncompressed: the data itself.
    Raw,
    /// Compressed here, with its checksum.
    Encoded(Vec<u8>, [u8; 16]),
    /// Stored bytes kept from the source file ([`BlockJob::copy`]).
    Copied,
    /// `lz4`, compressed while written.
    Piped,
    /// `zstd` on zstd's worker threads, written and hashed here as the output comes.
    PipedZstd,
    /// Produced piece by piece while written.
    Pieces,
}

/// Writes the blocks starting at byte `pos` of the file; returns their offsets and the end.
pub(crate) fn write_blocks<W: Write + Seek>(
    opts: &WriteOptions,
    jobs: &[BlockJob<'_>],
    w: &mut W,
    mut pos: u64,
    wb: &mut Writeback<'_>,
) -> Result<(Vec<u64>, u64), WriteError> {
    let base = w
        .stream_position()?
        .checked_sub(pos)
        .ok_or_else(|| std::io::Error::other("sink position moved backwards while writing"))?;
    let level = opts.compression_level;
    // progress counts the blocks' data (decoded) bytes
    let data_size = |job: &BlockJob<'_>| match (&job.data, &job.copy) {
        (BlockData::Pieces(spec), _) => spec.len,
        (_, Some(range)) => range.data_size,
        _ => job.data.bytes().len() as u64,
    };
    let mut ticker = Ticker::new(
        opts.progress.as_ref(),
        jobs.iter().map(data_size).fold(0u64, u64::saturating_add),
    );
    let pre: Vec<Pre> = jobs
        .par_iter()
        .enumerate()
        .map(|(i, job)| match (job.compression, &job.copy) {
            _ if matches!(job.data, BlockData::Pieces(_)) => Ok(Pre::Pieces),
            (_, Some(_)) => Ok(Pre::Copied),
            (Some(Compression::Lz4), None) if job.data.bytes().len() >= LZ4_PIPE_MIN => {
                Ok(Pre::Piped)
            }
            (Some(Compression::Zstd), None) if codec::zstd_streams(job.data.bytes().len()) => {
                Ok(Pre::PipedZstd)
            }
            (Some(c), None) => {
                let e = codec::encode_items(c, job.data.bytes(), level, job.typesize).map_err(
                    |source| WriteError::Codec {
                        block: i,
                        codec: c,
                        source,
                    },
                )?;
                let sum = if opts.checksums { md5(&e) } else { [0; 16] };
                Ok(Pre::Encoded(e, sum))
            }
            (None, _) => Ok(Pre::Raw),
        })
        .collect::<Result<_, WriteError>>()?;
    let mut offsets = Vec::with_capacity(jobs.len());
    for (i, (job, pre)) in jobs.iter().zip(pre).enumerate() {
        let data = job.data.bytes();
        // the part of this block done, `x` of `of`, moves the count within the block
        let (done0, size) = (ticker.done(), data_size(job));
        let mut step = |x: u64, of: u64| {
            let part = if of == 0 {
                size
            } else {
                (u128::from(size) * u128::from(x.min(of)) / u128::from(of)) as u64
            };
            ticker.set(done0.saturating_add(part));
        };
        let hs = aligned_header_size(pos, opts.align);
        let at = base + pos;
        let data_at = at + 6 + u64::from(hs);
        let mut header = BlockHeader {
            index: i,
            offset: pos,
            header_size: hs,
            flags: 0,
            compression: job.compression.map_or([0; 4], |c| c.label()),
            allocated_size: 0,
            used_size: 0,
            data_size: data.len() as u64,
            checksum: [0; 16],
        };
        offsets.push(pos);
        let alloc = match (pre, &job.copy) {
            (Pre::Copied, Some(range)) => {
                let used = range.len;
                let alloc = allocated(used, opts.pad_blocks);
                header.used_size = used;
                header.allocated_size = alloc;
                header.data_size = range.data_size;
                // with checksums, the stored bytes are hashed on the way: a block whose
                // checksum matches (or that had none) gets that checksum; one whose stored
                // checksum is the MD5 of its decoded data (older writers) gets the MD5 of the
                // stored bytes every reader expects; a damaged block keeps its checksum, so
                // the damage stays visible
                let hash = opts.checksums;
                w.write_all(&encode_block_header(&header))?;
                let sum = copy_stored(w, wb, range, data_at, hash, &mut step)?;
                write_zeros(w, alloc - used)?;
                if hash {
                    header.checksum = if range.checksum == [0; 16]
                        || range.checksum == sum
                        || legacy_checksum(range)
                    {
                        sum
                    } else {
                        range.checksum
                    };
                    patch_header(w, at, &header)?;
                }
                alloc
            }
            (Pre::Pieces, _) => {
                let BlockData::Pieces(spec) = &job.data else {
                    return Err(WriteError::BadTree {
                        path: crate::yaml::TreePath::root(),
                        message: "block of pieces without pieces".into(),
                    });
                };
                // sizes and checksum are known at the end: write the header then patch it
                w.write_all(&encode_block_header(&header))?;
                let stored = super::pieces::write_pieces(
                    w,
                    wb,
                    spec,
                    job.compression,
                    opts.compression_level,
                    data_at,
                    opts.checksums,
                )
                .map_err(in_block(i))?;
                let alloc = allocated(stored.used, opts.pad_blocks);
                write_zeros(w, alloc - stored.used)?;
                header.used_size = stored.used;
                header.allocated_size = alloc;
                header.data_size = spec.len;
                header.checksum = stored.checksum;
                patch_header(w, at, &header)?;
                alloc
            }
            (pre @ (Pre::Piped | Pre::PipedZstd), _) => {
                // sizes and checksum are known at the end: write the header then patch it
                w.write_all(&encode_block_header(&header))?;
                let (used, sum) = if matches!(pre, Pre::Piped) {
                    write_lz4_piped(w, wb, data, data_at, opts.checksums, &mut step)?
                } else {
                    write_zstd_piped(w, wb, data, level, data_at, opts.checksums, &mut step)
                        .map_err(in_block(i))?
                };
                let alloc = allocated(used, opts.pad_blocks);
                write_zeros(w, alloc - used)?;
                header.used_size = used;
                header.allocated_size = alloc;
                header.checksum = sum;
                patch_header(w, at, &header)?;
                alloc
            }
            (Pre::Raw, _) if data.len() >= OVERLAP_MIN => {
                let used = data.len() as u64;
                let alloc = allocated(used, opts.pad_blocks);
                header.used_size = used;
                header.allocated_size = alloc;
                // the checksum is computed while the data is written, then patched in
                w.write_all(&encode_block_header(&header))?;
                let sum = write_hashed(w, wb, data, data_at, opts.checksums, &mut step)?;
                write_zeros(w, alloc - used)?;
                if opts.checksums {
                    header.checksum = sum;
                    patch_header(w, at, &header)?;
                }
                alloc
            }
            (pre, _) => {
                let (stored, data_size, checksum): (&[u8], u64, [u8; 16]) = match &pre {
                    Pre::Encoded(e, sum) => (e, data.len() as u64, *sum),
                    _ if opts.checksums => (data, data.len() as u64, md5(data)),
                    _ => (data, data.len() as u64, [0; 16]),
                };
                let used = stored.len() as u64;
                let alloc = allocated(used, opts.pad_blocks);
                header.used_size = used;
                header.allocated_size = alloc;
                header.data_size = data_size;
                header.checksum = checksum;
                w.write_all(&encode_block_header(&header))?;
                w.write_all(stored)?;
                write_zeros(w, alloc - used)?;
                alloc
            }
        };
        let next = pos
            .checked_add(6 + u64::from(hs) + alloc)
            .ok_or(WriteError::TooLarge { what: "file" })?;
        wb.written(base + next);
        ticker.set(done0.saturating_add(size));
        pos = next;
    }
    Ok((offsets, pos))
}

/// Names block `i` in a codec error (the pipelines report block 0).
fn in_block(i: usize) -> impl Fn(WriteError) -> WriteError {
    move |e| match e {
        WriteError::Codec { codec, source, .. } => WriteError::Codec {
            block: i,
            codec,
            source,
        },
        e => e,
    }
}

/// Whether the stored checksum of `range` is the MD5 of its decoded data (as writers before
/// ASDF standard 1.x's checksum rule wrote it). Reads and decodes the block; any failure
/// counts as no.
fn legacy_checksum(range: &CopyRange) -> bool {
    let Ok(n) = usize::try_from(range.len) else {
        return false;
    };
    let mut stored = vec![0u8; n];
    if read_stored(&range.file, &mut stored, range.offset).is_err() {
        return false;
    }
    match range.compression {
        None => false,
        Some(c) => codec::decode(c, &stored, range.data_size)
            .is_ok_and(|decoded| md5(&decoded) == range.checksum),
    }
}

/// Bytes per piece when stored bytes are copied through memory.
const COPY_CHUNK: usize = 8 << 20;

/// Fills `buf` from the source file of a copied block at `offset` (the layout's positional
/// read, which the writer shares).
fn read_stored(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    crate::layout::ReadAt::read_exact_at(f, buf, offset)
}

/// Writes the stored bytes of `range` at sink position `at` (where the sink is), through the
/// kernel when the sink is a file written directly (`copy_file_range`: no copy through this
/// process, and a shared extent on file systems with reflinks), else through memory in
/// [`COPY_CHUNK`] pieces; returns their MD5 when `hash` (read from the source).
fn copy_stored<W: Write + Seek>(
    w: &mut W,
    wb: &mut Writeback<'_>,
    range: &CopyRange,
    at: u64,
    hash: bool,
    step: &mut dyn FnMut(u64, u64),
) -> Result<[u8; 16], WriteError> {
    let mut done = 0u64;
    if let Some(dst) = wb.copy_to() {
        w.flush()?;
        done = kernel_copy(&range.file, range.offset, dst, at, range.len)?;
        w.seek(SeekFrom::Start(at + done))?;
        wb.written(at + done);
    }
    let mut hasher = Md5::new();
    let mut buf = vec![
        0u8;
        usize::try_from(range.len)
            .unwrap_or(COPY_CHUNK)
            .min(COPY_CHUNK)
    ];
    if hash {
        // what the kernel copied is hashed from the source (one read, no write of ours)
        let mut h = 0u64;
        while h < done {
            let n = usize::try_from(done - h).map_or(buf.len(), |r| r.min(buf.len()));
            read_stored(&range.file, &mut buf[..n], range.offset + h)?;
            hasher.update(&buf[..n]);
            h += n as u64;
            step(h, range.len);
        }
    }
    while done < range.len {
        let n = usize::try_from(range.len - done).map_or(buf.len(), |r| r.min(buf.len()));
        read_stored(&range.file, &mut buf[..n], range.offset + done)?;
        if hash {
            hasher.update(&buf[..n]);
        }
        w.write_all(&buf[..n])?;
        done += n as u64;
        wb.written(at + done);
        step(done, range.len);
    }
    Ok(if hash { hasher.finalize() } else { [0; 16] })
}

/// Rewrites the block header at sink position `at` and returns to where the sink was.
fn patch_header<W: Write + Seek>(
    w: &mut W,
    at: u64,
    header: &BlockHeader,
) -> Result<(), WriteError> {
    let end = w.stream_position()?;
    w.seek(SeekFrom::Start(at))?;
    w.write_all(&encode_block_header(header))?;
    w.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// Writes `data` in [`WRITE_CHUNK`] pieces (the first at sink position `at`), starting the
/// writeback of each.
fn write_pieces<W: Write>(
    w: &mut W,
    wb: &mut Writeback<'_>,
    data: &[u8],
    mut at: u64,
    step: &mut dyn FnMut(u64, u64),
) -> std::io::Result<()> {
    let mut done = 0u64;
    for piece in data.chunks(WRITE_CHUNK) {
        w.write_all(piece)?;
        at += piece.len() as u64;
        wb.written(at);
        done += piece.len() as u64;
        step(done, data.len() as u64);
    }
    Ok(())
}

/// Writes `data` (from sink position `at`) while another thread computes its MD5 (when
/// `checksums`); returns the MD5 or zeros.
fn write_hashed<W: Write>(
    w: &mut W,
    wb: &mut Writeback<'_>,
    data: &[u8],
    at: u64,
    checksums: bool,
    step: &mut dyn FnMut(u64, u64),
) -> Result<[u8; 16], WriteError> {
    if !checksums {
        write_pieces(w, wb, data, at, step)?;
        return Ok([0; 16]);
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let hasher = std::thread::Builder::new()
            .name("asdf-md5".into())
            .spawn_scoped(s, || {
                let mut h = Md5::new();
                for piece in data.chunks(HASH_CHUNK) {
                    if stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    h.update(piece);
                }
                Some(h.finalize())
            });
        let Ok(hasher) = hasher else {
            // no thread to be had: one after the other
            write_pieces(w, wb, data, at, step)?;
            return Ok(md5(data));
        };
        let written = write_pieces(w, wb, data, at, step);
        if written.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let sum = hasher.join();
        written?;
        match sum {
            Ok(Some(sum)) => Ok(sum),
            _ => Ok(md5(data)),
        }
    })
}

/// Compresses `data` as `lz4` chunks on worker threads (worker `j` of `n` takes chunks `j`,
/// `j + n`, ...), writes each chunk in order as it is ready (from sink position `at`) and
/// hashes it on an MD5 thread (when `checksums`). Returns the stored size and the MD5 (or
/// zeros).
///
/// Plain threads rather than rayon's pool: the calling thread waits on them, and it may
/// itself be one of the pool's threads.
fn write_lz4_piped<W: Write>(
    w: &mut W,
    wb: &mut Writeback<'_>,
    data: &[u8],
    mut at: u64,
    checksums: bool,
    step: &mut dyn FnMut(u64, u64),
) -> Result<(u64, [u8; 16]), WriteError> {
    let chunks: Vec<&[u8]> = data.chunks(LZ4_CHUNK_INPUT).collect();
    let lanes = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, LZ4_MAX_WORKERS)
        .min(chunks.len().max(1));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // one queue per worker; a lane without a worker is compressed here
        let mut from_workers = Vec::with_capacity(lanes);
        for j in 0..lanes {
            let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(LZ4_QUEUE);
            let (chunks, stop) = (&chunks, &stop);
            let worker = std::thread::Builder::new()
                .name("asdf-lz4".into())
                .spawn_scoped(s, move || {
                    for chunk in chunks.iter().skip(j).step_by(lanes) {
                        if stop.load(Ordering::Relaxed)
                            || tx.send(codec::lz4_encode_chunk(chunk)).is_err()
                        {
                            return;
                        }
                    }
                });
            from_workers.push(worker.is_ok().then_some(rx));
        }
        let (to_hasher, from_writer) = mpsc::sync_channel::<Vec<u8>>(LZ4_QUEUE * lanes);
        let hasher = if checksums {
            std::thread::Builder::new()
                .name("asdf-md5".into())
                .spawn_scoped(s, move || {
                    let mut h = Md5::new();
                    for part in from_writer {
                        h.update(&part);
                    }
                    h.finalize()
                })
                .ok()
        } else {
            None
        };
        let to_hasher = hasher.is_some().then_some(to_hasher);
        // hashed here when the MD5 thread could not be started
        let mut local = (checksums && to_hasher.is_none()).then(Md5::new);
        let result = (|| -> Result<u64, WriteError> {
            let mut used = 0u64;
            for (k, chunk) in chunks.iter().enumerate() {
                let part = match from_workers.get(k % lanes) {
                    Some(Some(rx)) => rx
                        .recv()
                        .map_err(|_| std::io::Error::other("an lz4 compression thread failed"))?,
                    _ => codec::lz4_encode_chunk(chunk),
                };
                w.write_all(&part)?;
                used += part.len() as u64;
                at += part.len() as u64;
                wb.written(at);
                step(
                    (k * LZ4_CHUNK_INPUT + chunk.len()) as u64,
                    data.len() as u64,
                );
                if let Some(h) = &mut local {
                    h.update(&part);
                } else if let Some(tx) = &to_hasher {
                    tx.send(part)
                        .map_err(|_| std::io::Error::other("the md5 thread failed"))?;
                }
            }
            Ok(used)
        })();
        // on failure the workers stop at their next chunk
        stop.store(result.is_err(), Ordering::Relaxed);
        drop(from_workers);
        drop(to_hasher);
        let used = result?;
        let sum = match (hasher, local) {
            (Some(h), _) => h
                .join()
                .map_err(|_| std::io::Error::other("the md5 thread failed"))?,
            (None, Some(h)) => h.finalize(),
            (None, None) => [0; 16],
        };
        Ok((used, sum))
    })
}

/// Compresses `data` as one `zstd` frame on zstd's worker threads and writes (from sink
/// position `at`) and hashes (when `checksums`) each piece of output here as it comes, while
/// the workers compress the rest: the frame is never held whole in memory, and its MD5 and
/// write overlap the compression instead of following it. Returns the stored size and the
/// MD5 (or zeros).
fn write_zstd_piped<W: Write>(
    w: &mut W,
    wb: &mut Writeback<'_>,
    data: &[u8],
    level: Option<i32>,
    mut at: u64,
    checksums: bool,
    step: &mut dyn FnMut(u64, u64),
) -> Result<(u64, [u8; 16]), WriteError> {
    let mut h = checksums.then(Md5::new);
    let mut sink = |piece: &[u8], consumed: u64| -> std::io::Result<()> {
        w.write_all(piece)?;
        at += piece.len() as u64;
        wb.written(at);
        step(consumed, data.len() as u64);
        if let Some(h) = &mut h {
            h.update(piece);
        }
        Ok(())
    };
    let used = codec::zstd_encode_streaming(data, level, &mut sink).map_err(|e| match e {
        codec::ZstdStreamError::Sink(e) => WriteError::from(e),
        codec::ZstdStreamError::Codec(source) => WriteError::Codec {
            block: 0,
            codec: Compression::Zstd,
            source,
        },
    })?;
    Ok((used, h.map_or([0; 16], Md5::finalize)))
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
    use crate::write::{CompressionChoice, Writer};
    use crate::{AsdfFile, Node, Value};
    use ndarray::Array1;

    /// Enough float64 values for `bytes` bytes, not all alike (so lz4 has work to do).
    fn array(bytes: usize) -> Array1<f64> {
        Array1::from_iter((0..bytes / 8).map(|i| ((i % 5000) as f64).sqrt() * 0.5))
    }

    fn write(a: &Array1<f64>, opts: WriteOptions) -> Vec<u8> {
        let mut w = Writer::new(opts);
        let n = w.add_array(a);
        let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
        w.write_to_vec(&root).unwrap()
    }

    fn lz4() -> WriteOptions {
        WriteOptions::default().compression(CompressionChoice::Codec(Compression::Lz4))
    }

    #[test]
    fn piped_lz4_block_matches_whole_encoding() {
        // 5 chunks and a bit: the pipeline with a short last chunk
        let a = array(5 * LZ4_CHUNK_INPUT + 4096);
        let raw: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(raw.len() >= LZ4_PIPE_MIN);
        let bytes = write(&a, lz4());
        let f = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let h = &f.blocks()[0];
        let expected = codec::encode(Compression::Lz4, &raw, None).unwrap();
        assert_eq!(h.used_size, expected.len() as u64);
        assert_eq!(h.allocated_size, h.used_size);
        assert_eq!(h.data_size, raw.len() as u64);
        assert_eq!(h.checksum, md5(&expected));
        let at = (h.offset + 6 + u64::from(h.header_size)) as usize;
        assert_eq!(&bytes[at..at + expected.len()], &expected[..]);
        f.verify_checksums().unwrap();
        assert_eq!(f.array::<f64>("/data").unwrap(), a.into_dyn());
    }

    #[test]
    fn piped_lz4_block_with_padding_and_without_checksum() {
        let a = array(LZ4_PIPE_MIN + 8);
        let f = AsdfFile::from_bytes(write(&a, lz4().pad_blocks(0.5).checksums(false))).unwrap();
        let h = &f.blocks()[0];
        assert_eq!(h.checksum, [0; 16]);
        assert_eq!(h.allocated_size, h.used_size + h.used_size.div_ceil(2));
        assert_eq!(f.array::<f64>("/data").unwrap(), a.into_dyn());
    }

    #[test]
    fn large_uncompressed_block_gets_its_checksum_patched_in() {
        let a = array(OVERLAP_MIN + WRITE_CHUNK + 64);
        let raw: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
        let f = AsdfFile::from_bytes(write(&a, WriteOptions::default().pad_blocks(0.1))).unwrap();
        let h = &f.blocks()[0];
        assert_eq!(h.checksum, md5(&raw));
        assert_eq!(h.used_size, raw.len() as u64);
        assert!(h.allocated_size > h.used_size);
        f.verify_checksums().unwrap();
        assert_eq!(f.array::<f64>("/data").unwrap(), a.into_dyn());
    }

    fn zstd() -> WriteOptions {
        WriteOptions::default().compression(CompressionChoice::Codec(Compression::Zstd))
    }

    #[test]
    fn piped_zstd_block_is_one_frame_with_its_size_and_the_md5_of_its_stored_bytes() {
        let a = array((9 << 20) + 24);
        let raw: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
        // the pipeline itself, on whatever cores this machine has
        let mut out = std::io::Cursor::new(Vec::new());
        let mut wb = Writeback::none();
        let (used, sum) =
            write_zstd_piped(&mut out, &mut wb, &raw, None, 0, true, &mut |_, _| ()).unwrap();
        let stored = out.into_inner();
        assert_eq!(used, stored.len() as u64);
        assert_eq!(sum, md5(&stored));
        assert_eq!(
            ::zstd::zstd_safe::find_frame_compressed_size(&stored),
            Ok(stored.len()),
            "one frame"
        );
        assert_eq!(
            ::zstd::zstd_safe::get_frame_content_size(&stored).ok(),
            Some(Some(raw.len() as u64))
        );
        assert_eq!(
            codec::decode(Compression::Zstd, &stored, raw.len() as u64).unwrap(),
            raw
        );
        // through the writer: the header's sizes and checksum are patched in
        let bytes = write(&a, zstd().pad_blocks(0.25));
        let f = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let h = &f.blocks()[0];
        assert_eq!(h.data_size, raw.len() as u64);
        assert!(h.used_size > 0 && h.used_size < raw.len() as u64 / 2);
        assert_eq!(h.allocated_size, h.used_size + h.used_size.div_ceil(4));
        let at = (h.offset + 6 + u64::from(h.header_size)) as usize;
        assert_eq!(h.checksum, md5(&bytes[at..at + h.used_size as usize]));
        f.verify_checksums().unwrap();
        assert_eq!(f.array::<f64>("/data").unwrap(), a.into_dyn());
        let plain = write(&array((9 << 20) + 24), zstd().checksums(false));
        assert_eq!(
            AsdfFile::from_bytes(plain).unwrap().blocks()[0].checksum,
            [0; 16]
        );
    }

    use crate::write::test_sink::Failing;

    #[test]
    fn failing_sink_stops_the_pipelines() {
        let a = array(LZ4_PIPE_MIN + 3 * LZ4_CHUNK_INPUT);
        for opts in [lz4(), zstd(), WriteOptions::default()] {
            let len = write(&a, opts.clone()).len();
            // in the head, in the block's first pieces, near the end
            for budget in [100, len / 3, len - 10] {
                let mut w = Writer::new(opts.clone());
                let n = w.add_array(&a);
                let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
                let sink = Failing {
                    inner: std::io::Cursor::new(Vec::new()),
                    budget,
                };
                let r = w.write_to(&root, sink);
                assert!(matches!(r, Err(WriteError::Io(_))), "budget {budget}");
            }
        }
    }

    #[test]
    fn large_blocks_written_to_a_path_read_back() {
        let dir = std::env::temp_dir().join(format!("asdf-bigblocks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let a = array(LZ4_PIPE_MIN + 100);
        let b = array(2 * crate::write::platform::WRITEBACK_MIN as usize + 8);
        for (i, opts) in [lz4(), WriteOptions::default()].into_iter().enumerate() {
            let path = dir.join(format!("f{i}.asdf"));
            let mut w = Writer::new(opts);
            let (na, nb) = (w.add_array(&a), w.add_array(&b));
            let root = Node::new(Value::Map(vec![(Node::str("a"), na), (Node::str("b"), nb)]));
            w.write_to_path(&root, &path).unwrap();
            let f = AsdfFile::open(&path).unwrap();
            f.verify_checksums().unwrap();
            assert_eq!(f.array::<f64>("/a").unwrap(), a.clone().into_dyn());
            assert_eq!(f.array::<f64>("/b").unwrap(), b.clone().into_dyn());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

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

    #[test]
    fn stored_bytes_are_copied_by_the_kernel_or_through_memory_alike() {
        let dir = std::env::temp_dir().join(format!("asdf-kcopy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src_path = dir.join("src");
        let content: Vec<u8> = (0..(3 * COPY_CHUNK + 1234))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        std::fs::write(&src_path, &content).unwrap();
        let src = std::sync::Arc::new(File::open(&src_path).unwrap());
        let range = |offset: u64, len: u64| CopyRange {
            file: std::sync::Arc::clone(&src),
            offset,
            len,
            data_size: len,
            checksum: [0; 16],
            compression: None,
        };
        let (off, len) = (1000u64, content.len() as u64 - 5000);
        let want = &content[1000..1000 + len as usize];
        for (direct, hash) in [(true, false), (true, true), (false, false), (false, true)] {
            let dst_path = dir.join(format!("dst-{direct}-{hash}"));
            let dst = File::create(&dst_path).unwrap();
            let sync = dst.try_clone().unwrap();
            let mut wb = if direct {
                Writeback::direct(&sync)
            } else {
                Writeback::file(&sync)
            };
            let mut w = std::io::BufWriter::new(dst);
            w.write_all(b"head").unwrap();
            let sum =
                copy_stored(&mut w, &mut wb, &range(off, len), 4, hash, &mut |_, _| ()).unwrap();
            w.write_all(b"tail").unwrap();
            drop(w);
            let got = std::fs::read(&dst_path).unwrap();
            assert_eq!(&got[..4], b"head");
            assert!(
                &got[4..got.len() - 4] == want,
                "direct {direct} hash {hash}"
            );
            assert_eq!(&got[got.len() - 4..], b"tail");
            assert_eq!(sum, if hash { md5(want) } else { [0; 16] });
        }
        // The kernel copies it all here (same file system); past the end it copies nothing.
        #[cfg(target_os = "linux")]
        {
            let dst = File::create(dir.join("k")).unwrap();
            assert_eq!(kernel_copy(&src, off, &dst, 0, len).unwrap(), len);
            let end = content.len() as u64;
            assert_eq!(kernel_copy(&src, end, &dst, 0, 10).unwrap(), 0);
        }
        // A source that shrank is an error, not a short block.
        let err = copy_stored(
            &mut std::io::Cursor::new(Vec::new()),
            &mut Writeback::none(),
            &range(content.len() as u64 - 10, 20),
            0,
            false,
            &mut |_, _| (),
        );
        assert!(matches!(err, Err(WriteError::Io(_))), "{err:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
