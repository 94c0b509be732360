//! An ASDF array read as a stream of its bytes in C order, for arrays larger than memory
//! (ASDF → HDF5): the block's stored bytes are read by position from the file, decoded by
//! any codec (`asdf_core::unstable::decoder_at`), and the array's view of them (`offset`,
//! `strides`, possibly negative or in another axis order) is gathered a piece at a time.
//!
//! - Uncompressed blocks are read where each piece's elements are (nearby elements in one
//!   read), whatever the strides. A piece is 2 MiB of output (fewer bytes for items under
//!   8 bytes: at most 256 Ki elements, whose plan takes 24 bytes each).
//! - Compressed blocks are decoded in order. A view whose elements come in increasing order
//!   of position in C order (C order, with an offset or padded rows) skips forward through
//!   the decoded bytes; any other view (another axis order, negative strides) first decodes
//!   the block into a spill file beside the output (`ScratchFile`: anonymous on Linux, so
//!   nothing is left even if the process is killed; elsewhere removed when done), and is
//!   gathered from there: the disk holds the block, memory a piece.
//! - With checksums verified, the stored bytes are hashed in file order the first time they
//!   are reached (bytes skipped are hashed as they are passed, once), the decoded bytes as
//!   they are decoded (the MD5 of legacy writers); the block's MD5 is checked before the
//!   array's last bytes are handed on, and a mismatch is `asdf_core::Error::Checksum`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use asdf_core::unstable::checksum::Md5;
use asdf_core::unstable::layout::{BlockHeader, ReadAt};
use asdf_core::unstable::{ScratchFile, StoredAt};
use asdf_core::write::Compression;

/// Bytes of output gathered at a time.
const PIECE: u64 = 2 << 20;
/// Most elements in a piece (each may be a run of its own: 24 bytes of plan each).
const MAX_ITEMS: u64 = 256 << 10;
/// Bytes between two elements below which they are read in one read.
const GAP: u64 = 4 << 10;
/// Most bytes read at once.
const MAX_READ: u64 = 4 << 20;

/// Where a typed error met inside a stream is left for the conversion to return.
pub(crate) type ErrorSlot = Arc<Mutex<Option<asdf_core::Error>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The stored bytes hashed so far: a prefix.
struct Prefix {
    md5: Md5,
    to: u64,
}

/// A block's stored bytes, read by position from the file; with `hash`, each byte is
/// hashed (in file order) the first time a read reaches or passes it.
pub(crate) struct Stored {
    file: Arc<File>,
    base: u64,
    len: u64,
    hash: Option<Arc<Mutex<Prefix>>>,
}

impl Stored {
    /// Hashes the stored bytes `from..to` (`from` is where the prefix ends).
    fn hash_gap(&self, prefix: &mut Prefix, to: u64) -> io::Result<()> {
        let mut buf = vec![0u8; (to - prefix.to).min(1 << 20) as usize];
        while prefix.to < to {
            let n = (to - prefix.to).min(buf.len() as u64) as usize;
            let b = &mut buf[..n];
            self.file.read_exact_at(b, self.base + prefix.to)?;
            prefix.md5.update(&*b);
            prefix.to += n as u64;
        }
        Ok(())
    }
}

impl StoredAt for Stored {
    fn stored_len(&self) -> u64 {
        self.len
    }

    fn read_stored_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{} bytes at {offset} past the block's {} stored bytes",
                        buf.len(),
                        self.len
                    ),
                )
            })?;
        self.file.read_exact_at(buf, self.base + offset)?;
        if let Some(h) = &self.hash {
            let mut p = lock(h);
            if p.to < offset {
                self.hash_gap(&mut p, offset)?;
            }
            if p.to < end {
                let skip = (p.to - offset) as usize;
                p.md5.update(&buf[skip..]);
                p.to = end;
            }
        }
        Ok(())
    }
}

/// The decoded bytes of a compressed block, hashed as they pass when checksums are verified.
struct Decoded {
    inner: Box<dyn Read + Send>,
    md5: Option<Md5>,
    /// Decoded bytes read so far.
    pos: u64,
}

impl Decoded {
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(m) = &mut self.md5 {
            m.update(&buf[..n]);
        }
        self.pos += n as u64;
        Ok(n)
    }

    fn read_exact(&mut self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = self.read_some(buf)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            buf = &mut buf[n..];
        }
        Ok(())
    }

    /// Reads and drops `n` bytes.
    fn skip(&mut self, mut n: u64, scratch: &mut Vec<u8>) -> io::Result<()> {
        scratch.resize(1 << 20, 0);
        while n > 0 {
            let k = n.min(scratch.len() as u64) as usize;
            self.read_exact(&mut scratch[..k])?;
            n -= k as u64;
        }
        Ok(())
    }
}

/// Where the decoded bytes come from.
enum Source {
    /// An uncompressed block, read by position.
    Block(Stored),
    /// A compressed block, decoded in order, read forward only.
    Forward(Decoded),
    /// A compressed block whose view is not in order: decoded into a spill file (a
    /// `ScratchFile` in `dir`: anonymous on Linux, so a killed conversion leaves nothing) on
    /// the first read, then read by position.
    Spilling {
        decoded: Decoded,
        dir: PathBuf,
        name: String,
    },
    Spilled {
        spill: ScratchFile,
        decoded_md5: Option<[u8; 16]>,
    },
    /// Between two states.
    Gone,
}

/// The check of the block's MD5 at the end.
struct Check {
    prefix: Arc<Mutex<Prefix>>,
    file: Arc<File>,
    header: BlockHeader,
    slot: ErrorSlot,
}

/// One element run of a piece: `len` bytes at decoded offset `src`, to `out` in the piece.
#[derive(Clone, Copy)]
struct Item {
    src: u64,
    out: u64,
    len: u64,
}

/// How an array addresses its block.
#[derive(Clone, Debug)]
pub(crate) struct View {
    pub itemsize: u64,
    pub shape: Vec<u64>,
    pub offset: u64,
    /// In bytes, per axis.
    pub strides: Vec<i64>,
}

impl View {
    /// The first and one-past-last decoded byte the view addresses; `None` on overflow.
    pub(crate) fn span(&self) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (
            i128::from(self.offset),
            i128::from(self.offset) + i128::from(self.itemsize),
        );
        for (&n, &st) in self.shape.iter().zip(&self.strides) {
            let span = i128::from(n.checked_sub(1)?).checked_mul(i128::from(st))?;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    /// Whether every element lies after the one before it in C order (so a decoded stream
    /// can be read forward only).
    pub(crate) fn in_order(&self) -> bool {
        let mut inner_span = 0i128;
        for (&n, &st) in self.shape.iter().zip(&self.strides).rev() {
            if n <= 1 {
                continue;
            }
            if i128::from(st) < inner_span + i128::from(self.itemsize) {
                return false;
            }
            inner_span += i128::from(st) * i128::from(n - 1);
        }
        true
    }

    fn len(&self) -> u64 {
        self.shape.iter().product::<u64>() * self.itemsize
    }
}

/// The bytes of an array in C order, gathered a piece at a time from its block.
pub(crate) struct ViewReader {
    view: View,
    source: Source,
    check: Option<Check>,
    /// Axis along which pieces are cut; axes after it are whole in every piece.
    axis: usize,
    /// Indices along `axis` per piece.
    rows: u64,
    /// Index of the next piece's first element along axes `..=axis` (the rest are 0).
    next: Vec<u64>,
    done: bool,
    piece: Vec<u8>,
    at: usize,
    items: Vec<Item>,
    scratch: Vec<u8>,
    skipbuf: Vec<u8>,
}

/// What a block is and how to read it.
pub(crate) struct BlockSpec {
    pub file: Arc<File>,
    pub header: BlockHeader,
    pub compression: Option<Compression>,
    /// Verify the block's MD5 (when it has one).
    pub verify: bool,
    /// A folder for a spill file, when one is needed.
    pub spill_dir: PathBuf,
    pub slot: ErrorSlot,
}

impl ViewReader {
    /// `None` when the block's codec cannot be read this way (Blosc2 without the feature),
    /// or the view reaches outside the block's decoded bytes (the whole read reports that).
    pub(crate) fn new(block: BlockSpec, view: View) -> Option<ViewReader> {
        let h = &block.header;
        match view.span() {
            Some((lo, hi))
                if lo >= 0
                    && hi <= i128::from(h.data_size)
                    && view.shape.len() == view.strides.len()
                    && view
                        .shape
                        .iter()
                        .try_fold(view.itemsize, |a, &d| a.checked_mul(d))
                        .is_some() => {}
            _ => return None,
        }
        let hash = (block.verify && h.has_checksum()).then(|| {
            Arc::new(Mutex::new(Prefix {
                md5: Md5::new(),
                to: 0,
            }))
        });
        let stored = Stored {
            file: Arc::clone(&block.file),
            base: h.data_offset(),
            len: h.used_size,
            hash: hash.clone(),
        };
        let source = match block.compression {
            None => Source::Block(stored),
            Some(c) => {
                let decoded = Decoded {
                    inner: asdf_core::unstable::decoder_at(c, stored, h.data_size)?,
                    md5: hash.is_some().then(Md5::new),
                    pos: 0,
                };
                if view.in_order() {
                    Source::Forward(decoded)
                } else {
                    Source::Spilling {
                        decoded,
                        dir: block.spill_dir.clone(),
                        name: format!("asdf-hdf5-block{}.spill", h.index),
                    }
                }
            }
        };
        let check = hash.map(|prefix| Check {
            prefix,
            file: Arc::clone(&block.file),
            header: h.clone(),
            slot: block.slot,
        });
        // pieces: whole rows of the first axis whose rows fit in a piece (or single indices
        // of the last axis)
        let d = view.shape.len();
        let piece = PIECE.min(MAX_ITEMS * view.itemsize);
        let mut axis = d.saturating_sub(1);
        let mut inner = view.itemsize;
        for k in (0..d).rev() {
            axis = k;
            let row = inner;
            inner = inner.saturating_mul(view.shape[k]);
            if k == 0 || inner > piece {
                let rows = (piece / row.max(1)).max(1);
                return Some(ViewReader {
                    next: vec![0; d],
                    done: view.len() == 0,
                    rows,
                    axis,
                    view,
                    source,
                    check,
                    piece: Vec::new(),
                    at: 0,
                    items: Vec::new(),
                    scratch: Vec::new(),
                    skipbuf: Vec::new(),
                });
            }
        }
        // a 0-d array: one piece of one element
        Some(ViewReader {
            next: Vec::new(),
            done: false,
            rows: 1,
            axis,
            view,
            source,
            check,
            piece: Vec::new(),
            at: 0,
            items: Vec::new(),
            scratch: Vec::new(),
            skipbuf: Vec::new(),
        })
    }

    /// The element runs of the next piece, in increasing decoded offset, and the piece's
    /// length; advances to the piece after it.
    fn plan_piece(&mut self) -> u64 {
        let v = &self.view;
        let d = v.shape.len();
        let isz = v.itemsize;
        self.items.clear();
        // the box: fixed indices before `axis`, a range along it, whole axes after it
        let mut lo = vec![0u64; d];
        let mut ext = vec![1u64; d];
        for k in 0..d {
            if k < self.axis {
                lo[k] = self.next[k];
            } else if k == self.axis {
                lo[k] = self.next[k];
                ext[k] = self.rows.min(v.shape[k] - lo[k]);
            } else {
                ext[k] = v.shape[k];
            }
        }
        let mut ostride = vec![isz; d];
        for k in (0..d.saturating_sub(1)).rev() {
            ostride[k] = ostride[k + 1] * ext[k + 1];
        }
        let piece_len = if d == 0 { isz } else { ostride[0] * ext[0] };
        // axes in storage order, outermost first; each walked so its offsets increase
        let mut order: Vec<usize> = (0..d).filter(|&k| ext[k] > 1).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(v.strides[k].unsigned_abs()));
        let mut src0 = i128::from(v.offset);
        let mut out0 = 0i128;
        for k in 0..d {
            let first = if v.strides[k] < 0 && ext[k] > 1 {
                lo[k] + ext[k] - 1
            } else {
                lo[k]
            };
            src0 += i128::from(first) * i128::from(v.strides[k]);
            out0 += i128::from(first - lo[k]) * i128::from(ostride[k]);
        }
        // the innermost axis walks as one run when its elements are adjacent both ways
        let mut run = isz;
        if let Some(&k) = order.last() {
            if v.strides[k] == isz as i64 && ostride[k] == isz {
                run = isz * ext[k];
                order.pop();
            }
        }
        let steps: Vec<(i128, i128, u64)> = order
            .iter()
            .map(|&k| {
                let out = i128::from(ostride[k]);
                (
                    i128::from(v.strides[k].unsigned_abs()),
                    if v.strides[k] < 0 { -out } else { out },
                    ext[k],
                )
            })
            .collect();
        let mut count = vec![0u64; steps.len()];
        let (mut src, mut out) = (src0, out0);
        let mut sorted = true;
        loop {
            let item = Item {
                src: src as u64,
                out: out as u64,
                len: run,
            };
            match self.items.last_mut() {
                Some(last)
                    if last.src + last.len == item.src && last.out + last.len == item.out =>
                {
                    last.len += run;
                }
                Some(last) => {
                    sorted &= last.src <= item.src;
                    self.items.push(item);
                }
                None => self.items.push(item),
            }
            // odometer, innermost last
            let mut j = steps.len();
            let finished = loop {
                if j == 0 {
                    break true;
                }
                j -= 1;
                let (step, ostep, n) = steps[j];
                count[j] += 1;
                src += step;
                out += ostep;
                if count[j] < n {
                    break false;
                }
                src -= step * i128::from(n);
                out -= ostep * i128::from(n);
                count[j] = 0;
            };
            if finished {
                break;
            }
        }
        if !sorted {
            self.items.sort_by_key(|i| i.src);
        }
        // the next piece
        if d == 0 {
            self.done = true;
        } else {
            let mut k = self.axis;
            self.next[k] += ext[k];
            while self.next[k] >= v.shape[k] {
                self.next[k] = 0;
                if k == 0 {
                    self.done = true;
                    break;
                }
                k -= 1;
                self.next[k] += 1;
            }
        }
        piece_len
    }

    /// Decodes the block into its spill file (once).
    fn spill(&mut self) -> io::Result<()> {
        let Source::Spilling { .. } = &self.source else {
            return Ok(());
        };
        let Source::Spilling {
            mut decoded,
            dir,
            name,
        } = std::mem::replace(&mut self.source, Source::Gone)
        else {
            return Ok(());
        };
        let spill = ScratchFile::create_in(&dir, &name)?;
        let mut w = io::BufWriter::with_capacity(1 << 20, spill.file());
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = decoded.read_some(&mut buf)?;
            if n == 0 {
                break;
            }
            w.write_all(&buf[..n])?;
        }
        w.flush()?;
        drop(w);
        self.source = Source::Spilled {
            spill,
            decoded_md5: decoded.md5.map(Md5::finalize),
        };
        Ok(())
    }

    /// Fills the next piece.
    fn fill(&mut self) -> io::Result<()> {
        self.spill()?;
        let len = self.plan_piece();
        self.piece.clear();
        self.piece.resize(len as usize, 0);
        self.at = 0;
        let mut i = 0;
        while i < self.items.len() {
            // a group of nearby runs read at once
            let start = self.items[i].src;
            let mut end = start + self.items[i].len;
            let mut j = i + 1;
            while j < self.items.len() {
                let it = self.items[j];
                let new_end = end.max(it.src + it.len);
                if it.src > end + GAP || new_end - start > MAX_READ {
                    break;
                }
                end = new_end;
                j += 1;
            }
            let mut buf = std::mem::take(&mut self.scratch);
            buf.resize((end - start) as usize, 0);
            match &mut self.source {
                Source::Block(s) => s.read_stored_at(start, &mut buf)?,
                Source::Spilled { spill, .. } => spill.file().read_exact_at(&mut buf, start)?,
                Source::Forward(d) => {
                    if start < d.pos {
                        return Err(io::Error::other("a view read out of order"));
                    }
                    d.skip(start - d.pos, &mut self.skipbuf)?;
                    d.read_exact(&mut buf)?;
                }
                Source::Spilling { .. } | Source::Gone => {
                    return Err(io::Error::other("the spill file is missing"));
                }
            }
            for it in &self.items[i..j] {
                let from = (it.src - start) as usize;
                let to = it.out as usize;
                self.piece[to..to + it.len as usize]
                    .copy_from_slice(&buf[from..from + it.len as usize]);
            }
            self.scratch = buf;
            i = j;
        }
        if self.done {
            self.verify()?;
        }
        Ok(())
    }

    /// Checks the block's MD5 once the last piece is gathered: over the stored bytes (the
    /// rest hashed now), or, for a compressed block, over the decoded bytes (legacy
    /// writers; the rest decoded now).
    fn verify(&mut self) -> io::Result<()> {
        let Some(check) = self.check.take() else {
            return Ok(());
        };
        let h = &check.header;
        let stored = {
            let mut p = lock(&check.prefix);
            let s = Stored {
                file: Arc::clone(&check.file),
                base: h.data_offset(),
                len: h.used_size,
                hash: None,
            };
            s.hash_gap(&mut p, h.used_size)?;
            std::mem::replace(&mut p.md5, Md5::new()).finalize()
        };
        if stored == h.checksum {
            return Ok(());
        }
        let decoded = match std::mem::replace(&mut self.source, Source::Gone) {
            Source::Forward(mut d) => {
                let mut scratch = Vec::new();
                let left = h.data_size.saturating_sub(d.pos);
                d.skip(left, &mut scratch)?;
                d.md5.map(Md5::finalize)
            }
            Source::Spilled { decoded_md5, .. } => decoded_md5,
            _ => None,
        };
        if decoded == Some(h.checksum) {
            return Ok(());
        }
        let e = asdf_core::Error::Checksum {
            block: h.index,
            offset: h.offset,
            expected: Md5::hex(&h.checksum),
            actual: Md5::hex(&stored),
        };
        let message = e.to_string();
        *lock(&check.slot) = Some(e);
        Err(io::Error::new(io::ErrorKind::InvalidData, message))
    }
}

impl Read for ViewReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.piece.len() {
            if self.done {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = (self.piece.len() - self.at).min(buf.len());
        buf[..n].copy_from_slice(&self.piece[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C-order bytes of `view` over `data`, element by element (the definition).
    fn direct(view: &View, data: &[u8]) -> Vec<u8> {
        let n: u64 = view.shape.iter().product();
        let mut out = Vec::new();
        for flat in 0..n {
            let mut rest = flat;
            let mut at = i128::from(view.offset);
            for (k, &dim) in view.shape.iter().enumerate().rev() {
                at += i128::from(rest % dim) * i128::from(view.strides[k]);
                rest /= dim;
            }
            let at = at as usize;
            out.extend_from_slice(&data[at..at + view.itemsize as usize]);
        }
        out
    }

    /// A folder removed when dropped.
    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch_file(name: &str, data: &[u8]) -> (Dir, Arc<File>) {
        let dir =
            std::env::temp_dir().join(format!("asdf-hdf5-band-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("block");
        // the data starts 6 bytes in, after a block header's magic and size of header size 0
        let mut bytes = vec![0u8; 6];
        bytes.extend_from_slice(data);
        std::fs::write(&p, bytes).unwrap();
        (Dir(dir), Arc::new(File::open(&p).unwrap()))
    }

    fn header(stored: &[u8], data_size: u64, checksum: [u8; 16]) -> BlockHeader {
        BlockHeader {
            index: 0,
            offset: 0,
            header_size: 0,
            flags: 0,
            compression: [0; 4],
            allocated_size: stored.len() as u64,
            used_size: stored.len() as u64,
            data_size,
            checksum,
        }
    }

    #[test]
    fn every_view_gathers_as_its_definition_from_every_source() {
        // 3-d uint16, 40 x 30 x 20: views with an offset, padded rows, another axis order,
        // negative strides, and a broadcast (zero) stride
        let (n0, n1, n2) = (40u64, 30u64, 20u64);
        let data: Vec<u8> = (0..n0 * n1 * n2)
            .flat_map(|i| ((i * 7 + 3) as u16).to_le_bytes())
            .collect();
        let c = [(n1 * n2 * 2) as i64, (n2 * 2) as i64, 2];
        let views = [
            View {
                itemsize: 2,
                shape: vec![n0, n1, n2],
                offset: 0,
                strides: c.to_vec(),
            },
            View {
                itemsize: 2,
                shape: vec![n0 - 3, n1, n2],
                offset: 3 * c[0] as u64,
                strides: c.to_vec(),
            },
            View {
                itemsize: 2,
                shape: vec![n0, n1, n2 - 4],
                offset: 4,
                strides: c.to_vec(),
            },
            View {
                itemsize: 2,
                shape: vec![n2, n1, n0],
                offset: 0,
                strides: vec![c[2], c[1], c[0]],
            },
            View {
                itemsize: 2,
                shape: vec![n0, n1, n2],
                offset: data.len() as u64 - 2,
                strides: vec![-c[0], -c[1], -c[2]],
            },
            View {
                itemsize: 2,
                shape: vec![n0, 5, n2],
                offset: 0,
                strides: vec![c[0], 0, c[2]],
            },
        ];
        let (dir, file) = scratch_file("views", &data);
        let lz = asdf_core::unstable::encode(Compression::Lz4, &data, None).unwrap();
        let (dir2, lzfile) = scratch_file("views-lz4", &lz);
        for (i, view) in views.iter().enumerate() {
            let want = direct(view, &data);
            for (f, stored, c) in [(&file, &data, None), (&lzfile, &lz, Some(Compression::Lz4))] {
                let spec = BlockSpec {
                    file: Arc::clone(f),
                    header: header(stored, data.len() as u64, [0; 16]),
                    compression: c,
                    verify: false,
                    spill_dir: dir.0.clone(),
                    slot: ErrorSlot::default(),
                };
                let mut r = ViewReader::new(spec, view.clone()).unwrap();
                let mut got = Vec::new();
                r.read_to_end(&mut got).unwrap();
                assert!(got == want, "view {i} ({c:?})");
            }
        }
        // the spill files are gone
        assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 1);
        // a view reaching past the block, or before it, is not read this way
        for (offset, strides) in [(2, c.to_vec()), (0, vec![-c[0], c[1], c[2]])] {
            let spec = BlockSpec {
                file: Arc::clone(&file),
                header: header(&data, data.len() as u64, [0; 16]),
                compression: None,
                verify: false,
                spill_dir: dir.0.clone(),
                slot: ErrorSlot::default(),
            };
            let view = View {
                itemsize: 2,
                shape: vec![n0, n1, n2],
                offset,
                strides,
            };
            assert!(ViewReader::new(spec, view).is_none());
        }
        drop(dir2);
    }

    #[test]
    fn pieces_cut_along_any_axis_gather_as_the_definition() {
        // uint8 (at most 256 Ki elements a piece): 1.4 MB as 2 rows of 700,000, so pieces
        // cut along the last axis, and its transpose, cut along the first
        let (n0, n1) = (2u64, 700_000u64);
        let data: Vec<u8> = (0..n0 * n1).map(|i| (i * 31 % 251) as u8).collect();
        let views = [
            View {
                itemsize: 1,
                shape: vec![n0, n1],
                offset: 0,
                strides: vec![n1 as i64, 1],
            },
            View {
                itemsize: 1,
                shape: vec![n1, n0],
                offset: 0,
                strides: vec![1, n1 as i64],
            },
            View {
                itemsize: 1,
                shape: vec![n0, n1 - 10],
                offset: 5,
                strides: vec![n1 as i64, 1],
            },
            View {
                itemsize: 1,
                shape: vec![n1, n0],
                offset: n0 * n1 - 1,
                strides: vec![-1, -(n1 as i64)],
            },
        ];
        let (dir, file) = scratch_file("pieces", &data);
        let lz = asdf_core::unstable::encode(Compression::Lz4, &data, None).unwrap();
        let (_dir2, lzfile) = scratch_file("pieces-lz4", &lz);
        for (i, view) in views.iter().enumerate() {
            let want = direct(view, &data);
            for (f, stored, c) in [(&file, &data, None), (&lzfile, &lz, Some(Compression::Lz4))] {
                let spec = BlockSpec {
                    file: Arc::clone(f),
                    header: header(stored, data.len() as u64, [0; 16]),
                    compression: c,
                    verify: false,
                    spill_dir: dir.0.clone(),
                    slot: ErrorSlot::default(),
                };
                let mut r = ViewReader::new(spec, view.clone()).unwrap();
                assert!(r.rows < view.shape[r.axis], "view {i}: one piece");
                let mut got = Vec::new();
                r.read_to_end(&mut got).unwrap();
                assert!(got == want, "view {i} ({c:?})");
            }
        }
    }

    #[test]
    fn a_corrupt_block_is_a_checksum_error_at_its_end() {
        let data: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i / 3).to_le_bytes())
            .collect();
        let md5 = Md5::digest(&data);
        let mut bad = data.clone();
        bad[123_457] ^= 1;
        let (dir, file) = scratch_file("md5", &bad);
        let view = View {
            itemsize: 4,
            shape: vec![300_000],
            offset: 0,
            strides: vec![4],
        };
        let slot = ErrorSlot::default();
        let spec = BlockSpec {
            file,
            header: header(&bad, bad.len() as u64, md5),
            compression: None,
            verify: true,
            spill_dir: dir.0.clone(),
            slot: slot.clone(),
        };
        let mut r = ViewReader::new(spec, view).unwrap();
        let e = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(matches!(
            *lock(&slot),
            Some(asdf_core::Error::Checksum { .. })
        ));
        // the same bytes uncorrupted pass
        let (dir2, file) = scratch_file("md5-good", &data);
        let spec = BlockSpec {
            file,
            header: header(&data, data.len() as u64, md5),
            compression: None,
            verify: true,
            spill_dir: dir2.0.clone(),
            slot: ErrorSlot::default(),
        };
        let view = View {
            itemsize: 4,
            shape: vec![300_000],
            offset: 0,
            strides: vec![4],
        };
        let mut got = Vec::new();
        ViewReader::new(spec, view)
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        assert!(got == data);
        drop(dir);
    }
}
