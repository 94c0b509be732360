//! Writing a file to a store: one multipart upload, fed part by part while the file is
//! produced, completed only when every part is in, aborted on any failure.
//!
//! The writer of `asdf-core` seeks back to rewrite a block's header once the block is written
//! (its checksum and, for compressed or piece-by-piece blocks, its sizes are known only then).
//! [`Upload`] is the `Write + Seek` sink: it sends each part of the object as soon as it is
//! full, except the part(s) holding the header of the block being written, which it keeps
//! until the next block starts, so that the rewrite lands in memory. Memory stays at a few
//! parts: the one being filled, at most two kept, and [`StoreOptions::concurrency`] in flight.
//! Parts go up with explicit part numbers (`MultipartStore`), so a kept part may go up after
//! later ones.

use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use futures::stream::FuturesUnordered;
use futures::StreamExt;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartId, PutPayload};

use crate::{runtime, url_store, StoreError, StoreOptions};

/// Part size of uploads (S3's smallest allowed part is 5 MiB; all parts but the last have
/// this size).
pub const UPLOAD_PART: usize = 8 << 20;

/// What an upload sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UploadSummary {
    /// Bytes of the object.
    pub bytes: u64,
    /// Parts of the multipart upload.
    pub parts: usize,
    /// Most bytes held in memory at once by the upload (the part being filled, parts kept
    /// for a header rewrite, parts in flight), the writer's own buffers not counted.
    pub peak_buffered: usize,
}

type PartResult = (usize, usize, Result<PartId, object_store::Error>);

/// A multipart upload as a `Write + Seek` sink; see the module's documentation.
pub(crate) struct Upload {
    store: Arc<dyn MultipartStore>,
    path: Path,
    id: MultipartId,
    part_size: usize,
    concurrency: usize,
    /// Write position.
    pos: u64,
    /// Bytes written so far (the end of the object).
    end: u64,
    /// The part being filled: bytes `cur_start..end`.
    cur: Vec<u8>,
    cur_start: u64,
    /// Full parts kept because they hold the current block header: (part number, bytes).
    kept: Vec<(usize, Vec<u8>)>,
    /// Byte range of the last block header written.
    header: Option<std::ops::Range<u64>>,
    in_flight: FuturesUnordered<tokio::task::JoinHandle<PartResult>>,
    in_flight_bytes: usize,
    parts: Vec<Option<PartId>>,
    failed: Option<StoreError>,
    peak: usize,
}

impl Upload {
    /// Starts a multipart upload of the object at `path`.
    pub(crate) fn start(
        store: Arc<dyn MultipartStore>,
        path: Path,
        opts: &StoreOptions,
    ) -> Result<Self, StoreError> {
        Self::with_part_size(store, path, opts, UPLOAD_PART)
    }

    fn with_part_size(
        store: Arc<dyn MultipartStore>,
        path: Path,
        opts: &StoreOptions,
        part_size: usize,
    ) -> Result<Self, StoreError> {
        let id = {
            let (store, path) = (store.clone(), path.clone());
            runtime::block_on(async move {
                store
                    .create_multipart(&path)
                    .await
                    .map_err(|source| StoreError::Store {
                        path: path.to_string(),
                        source,
                    })
            })?
        };
        Ok(Upload {
            store,
            path,
            id,
            part_size: part_size.max(1),
            concurrency: opts.concurrency,
            pos: 0,
            end: 0,
            cur: Vec::new(),
            cur_start: 0,
            kept: Vec::new(),
            header: None,
            in_flight: FuturesUnordered::new(),
            in_flight_bytes: 0,
            parts: Vec::new(),
            failed: None,
            peak: 0,
        })
    }

    fn store_err(&self, source: object_store::Error) -> StoreError {
        StoreError::Store {
            path: self.path.to_string(),
            source,
        }
    }

    /// Records a failure and turns it into the writer's I/O error (the upload keeps the
    /// typed error, which [`write_to_url`] reports).
    fn fail(&mut self, e: StoreError) -> std::io::Error {
        let io = std::io::Error::other(e.to_string());
        self.failed.get_or_insert(e);
        io
    }

    fn note_peak(&mut self) {
        let held = self.cur.capacity()
            + self.kept.iter().map(|(_, b)| b.capacity()).sum::<usize>()
            + self.in_flight_bytes;
        self.peak = self.peak.max(held);
    }

    /// Waits for one part in flight; records its id.
    fn wait_one(&mut self) -> Result<(), StoreError> {
        let next = runtime::block_on(async { Ok(self.in_flight.next().await) })?;
        let Some(joined) = next else {
            return Ok(());
        };
        let (idx, len, result) = joined.map_err(|e| StoreError::Store {
            path: self.path.to_string(),
            source: object_store::Error::Generic {
                store: "asdf-store",
                source: Box::new(e),
            },
        })?;
        self.in_flight_bytes -= len;
        let id = result.map_err(|e| self.store_err(e))?;
        if self.parts.len() <= idx {
            self.parts.resize(idx + 1, None);
        }
        self.parts[idx] = Some(id);
        Ok(())
    }

    /// Sends part `idx`, after waiting for a slot.
    fn send(&mut self, idx: usize, bytes: Vec<u8>) -> Result<(), StoreError> {
        while self.in_flight.len() >= self.concurrency {
            self.wait_one()?;
        }
        let (store, path, id) = (self.store.clone(), self.path.clone(), self.id.clone());
        let len = bytes.capacity();
        let payload = PutPayload::from(bytes::Bytes::from(bytes));
        let task = runtime::spawn(async move {
            let r = store.put_part(&path, &id, idx, payload).await;
            (idx, len, r)
        })?;
        self.in_flight_bytes += len;
        self.in_flight.push(task);
        self.note_peak();
        Ok(())
    }

    fn part_range(&self, idx: usize) -> std::ops::Range<u64> {
        let ps = self.part_size as u64;
        idx as u64 * ps..(idx as u64 + 1) * ps
    }

    fn overlaps_header(&self, r: &std::ops::Range<u64>) -> bool {
        self.header
            .as_ref()
            .is_some_and(|h| h.start < r.end && r.start < h.end)
    }

    /// Sends the kept parts that no longer hold the current block header.
    fn release_kept(&mut self) -> Result<(), StoreError> {
        let kept = std::mem::take(&mut self.kept);
        for (idx, bytes) in kept {
            if self.overlaps_header(&self.part_range(idx)) {
                self.kept.push((idx, bytes));
            } else {
                self.send(idx, bytes)?;
            }
        }
        Ok(())
    }

    /// Appends at the end of the object.
    fn append(&mut self, mut data: &[u8]) -> Result<(), StoreError> {
        while !data.is_empty() {
            if self.cur.capacity() == 0 {
                self.cur.reserve_exact(self.part_size);
            }
            let room = self.part_size - self.cur.len();
            let (now, rest) = data.split_at(room.min(data.len()));
            self.cur.extend_from_slice(now);
            self.end += now.len() as u64;
            data = rest;
            self.note_peak();
            if self.cur.len() == self.part_size {
                let idx = usize::try_from(self.cur_start / self.part_size as u64)
                    .map_err(|_| self.store_err(too_large()))?;
                let full = std::mem::take(&mut self.cur);
                self.cur_start = self.end;
                if self.overlaps_header(&self.part_range(idx)) {
                    self.kept.push((idx, full));
                } else {
                    self.send(idx, full)?;
                }
            }
        }
        Ok(())
    }

    /// Rewrites bytes already written: they must still be in memory.
    fn rewrite(&mut self, at: u64, data: &[u8]) -> Result<(), StoreError> {
        for (i, &b) in data.iter().enumerate() {
            let p = at + i as u64;
            let slot = if p >= self.cur_start {
                usize::try_from(p - self.cur_start)
                    .ok()
                    .and_then(|k| self.cur.get_mut(k))
            } else {
                let ps = self.part_size as u64;
                let idx = usize::try_from(p / ps).ok();
                let off = usize::try_from(p % ps).ok();
                self.kept
                    .iter_mut()
                    .find(|(k, _)| Some(*k) == idx)
                    .and_then(|(_, bytes)| bytes.get_mut(off?))
            };
            match slot {
                Some(s) => *s = b,
                None => {
                    return Err(StoreError::Rewrite {
                        path: self.path.to_string(),
                        offset: p,
                    })
                }
            }
        }
        Ok(())
    }

    /// Sends what is left, waits for every part and completes the upload.
    pub(crate) fn finish(mut self) -> Result<UploadSummary, StoreError> {
        let result = self.finish_inner();
        if result.is_err() {
            self.abort();
        }
        result
    }

    fn finish_inner(&mut self) -> Result<UploadSummary, StoreError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.header = None;
        self.release_kept()?;
        let last = std::mem::take(&mut self.cur);
        if !last.is_empty() || self.end == 0 {
            let idx = usize::try_from(self.cur_start / self.part_size as u64)
                .map_err(|_| self.store_err(too_large()))?;
            self.send(idx, last)?;
        }
        while !self.in_flight.is_empty() {
            self.wait_one()?;
        }
        let parts: Vec<PartId> = self.parts.iter().flatten().cloned().collect();
        if parts.len() != self.parts.len() {
            return Err(self.store_err(object_store::Error::Generic {
                store: "asdf-store",
                source: "a part of the upload is missing".into(),
            }));
        }
        let (store, path, id) = (self.store.clone(), self.path.clone(), self.id.clone());
        let n = parts.len();
        runtime::block_on(async move {
            store
                .complete_multipart(&path, &id, parts)
                .await
                .map_err(|source| StoreError::Store {
                    path: path.to_string(),
                    source,
                })
        })?;
        Ok(UploadSummary {
            bytes: self.end,
            parts: n,
            peak_buffered: self.peak,
        })
    }

    /// Aborts the upload: the parts sent are dropped by the store, no object appears. The
    /// first error is the one reported; an abort that fails too leaves parts that the
    /// store's lifecycle rules remove, never a visible object.
    pub(crate) fn abort(&mut self) {
        let (store, path, id) = (self.store.clone(), self.path.clone(), self.id.clone());
        let in_flight = std::mem::take(&mut self.in_flight);
        let _ = runtime::block_on(async move {
            // Parts still in flight would otherwise land after the abort.
            let _ = in_flight.collect::<Vec<_>>().await;
            let _ = store.abort_multipart(&path, &id).await;
            Ok(())
        });
    }

    /// The error kept from a failed write, if any.
    pub(crate) fn take_error(&mut self) -> Option<StoreError> {
        self.failed.take()
    }
}

/// Whether one write of the writer is a whole block header (magic, `header_size`, that many
/// bytes): the writer writes each header in one call, and may rewrite it once the block is
/// written. Only a hint for which parts to keep: a wrong guess costs memory or, were a
/// rewrite to reach a part already sent, a typed error, never a wrong object.
fn looks_like_block_header(data: &[u8]) -> bool {
    match data {
        [a, b, c, d, h0, h1, ..]
            if [*a, *b, *c, *d] == asdf_core::unstable::layout::BLOCK_MAGIC =>
        {
            let hs = u16::from_be_bytes([*h0, *h1]);
            hs >= asdf_core::unstable::layout::MIN_BLOCK_HEADER_SIZE
                && data.len() == 6 + usize::from(hs)
        }
        _ => false,
    }
}

fn too_large() -> object_store::Error {
    object_store::Error::Generic {
        store: "asdf-store",
        source: "the object has more parts than this platform can count".into(),
    }
}

impl Write for Upload {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if let Some(e) = &self.failed {
            return Err(std::io::Error::other(e.to_string()));
        }
        let r = (|| {
            if self.pos > self.end {
                let gap = self.pos - self.end;
                let zeros = vec![0u8; usize::try_from(gap.min(1 << 20)).unwrap_or(1 << 20)];
                let mut left = gap;
                while left > 0 {
                    let n = usize::try_from(left).map_or(zeros.len(), |l| l.min(zeros.len()));
                    self.append(&zeros[..n])?;
                    left -= n as u64;
                }
            }
            if self.pos == self.end && looks_like_block_header(data) {
                // A new block: the previous block's header will not be rewritten again.
                self.header = Some(self.pos..self.pos + data.len() as u64);
                self.release_kept()?;
            }
            let inside = usize::try_from(self.end - self.pos)
                .unwrap_or(usize::MAX)
                .min(data.len());
            let (old, new) = data.split_at(inside);
            self.rewrite(self.pos, old)?;
            self.append(new)?;
            Ok(())
        })();
        match r {
            Ok(()) => {
                self.pos += data.len() as u64;
                Ok(data.len())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for Upload {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let new = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.end.checked_add_signed(d),
        };
        self.pos = new.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// Uploads `bytes` as the object at `url` (an `s3://`, `gs://` or `az://` URL) by multipart
/// upload. The object appears only when the upload completes; a failed upload is aborted,
/// so nothing is left at `url` (an existing object there stays as it was).
pub fn put_url(url: &str, bytes: &[u8], opts: &StoreOptions) -> Result<UploadSummary, StoreError> {
    let (store, path) = url_store::multipart_store_for(url, opts)?;
    let mut up = Upload::start(store, path, opts)?;
    if let Err(e) = up.write_all(bytes) {
        let err = up.take_error().unwrap_or(StoreError::Write(e.into()));
        up.abort();
        return Err(err);
    }
    up.finish()
}

/// Writes `root` with `writer` (its registered arrays) to the object at `url` (an `s3://`,
/// `gs://` or `az://` URL) by multipart upload, each part sent as soon as the writer has
/// produced it: memory holds a few parts of [`UPLOAD_PART`] bytes, not the file. The object
/// appears only when the upload completes; any failure (of the writer or of the store)
/// aborts the upload, and nothing is left at `url` (an existing object there stays as it
/// was).
///
/// ```no_run
/// use asdf_core::write::{WriteOptions, Writer};
/// let a = ndarray::Array1::<f64>::zeros(1 << 20);
/// let mut writer = Writer::new(WriteOptions::default());
/// let root = asdf_core::tree!({"a": writer.add_array(&a)});
/// let sent = asdf_store::write_to_url(&writer, &root, "s3://bucket/run1/obs.asdf", &Default::default())?;
/// println!("{} bytes in {} parts", sent.bytes, sent.parts);
/// # Ok::<(), asdf_store::StoreError>(())
/// ```
pub fn write_to_url(
    writer: &asdf_core::write::Writer<'_>,
    root: &asdf_core::Node,
    url: &str,
    opts: &StoreOptions,
) -> Result<UploadSummary, StoreError> {
    let (store, path) = url_store::multipart_store_for(url, opts)?;
    let mut up = Upload::start(store, path, opts)?;
    if let Err(e) = writer.write_to(root, &mut up) {
        // The store's own error when it caused the writer's.
        let err = up.take_error().unwrap_or(StoreError::Write(e));
        up.abort();
        return Err(err);
    }
    up.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use asdf_core::write::Compression;
    use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;

    fn stored(store: &Arc<InMemory>, path: &Path) -> Vec<u8> {
        let (store, path) = (store.clone(), path.clone());
        runtime::block_on(async move {
            Ok(store
                .get(&path)
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
                .to_vec())
        })
        .unwrap()
    }

    fn exists(store: &Arc<InMemory>, path: &Path) -> bool {
        let (store, path) = (store.clone(), path.clone());
        runtime::block_on(async move { Ok(store.head(&path).await.is_ok()) }).unwrap()
    }

    /// A writer with many small blocks, a compressed one and a large raw one, so headers
    /// (rewritten after their blocks) fall at every place relative to small parts.
    fn writer_of(arrays: &[ndarray::Array1<f64>]) -> (Writer<'_>, asdf_core::Node) {
        let mut w = Writer::new(WriteOptions::default());
        let mut items = Vec::new();
        for (i, a) in arrays.iter().enumerate() {
            let node = if i % 7 == 3 {
                let opts = ArrayOptions {
                    compression: Some(CompressionChoice::Codec(Compression::Zlib)),
                    ..Default::default()
                };
                w.add_array_with(a, opts)
            } else {
                w.add_array(a)
            };
            items.push((asdf_core::Node::from(format!("a{i}")), node));
        }
        (w, asdf_core::Node::from(asdf_core::Value::Map(items)))
    }

    #[test]
    fn parts_sent_while_writing_make_the_writers_bytes() {
        let arrays: Vec<_> = (0..60)
            .map(|i| {
                let n = if i == 30 { 20_000 } else { 10 + i * 13 };
                ndarray::Array1::from_iter((0..n).map(|k| (k * (i + 1)) as f64))
            })
            .collect();
        let (w, root) = writer_of(&arrays);
        let want = w.write_to_vec(&root).unwrap();
        let (layout, _) =
            asdf_core::unstable::read_layout(&want, &asdf_core::file::LayoutLimits::default())
                .unwrap();
        assert_eq!(layout.blocks.len(), 60);
        let header = layout
            .blocks
            .iter()
            .map(|b| 6 + usize::from(b.header_size))
            .max()
            .unwrap();
        // Part sizes from below a block header to more than the file.
        for part in [7, 54, 61, 1000, 4096, 100_003, want.len() + 1] {
            let store = Arc::new(InMemory::new());
            let path = Path::from(format!("p{part}/obs.asdf"));
            let opts = StoreOptions::new().concurrency(2);
            let mut up = Upload::with_part_size(store.clone(), path.clone(), &opts, part).unwrap();
            w.write_to(&root, &mut up).unwrap();
            let sent = up.finish().unwrap();
            assert_eq!(sent.bytes, want.len() as u64);
            assert_eq!(sent.parts, want.len().div_ceil(part));
            assert!(stored(&store, &path) == want, "part size {part}");
            // The part being filled, two in flight, and the parts that hold the current
            // block header (its bytes and up to a part on each side).
            assert!(
                sent.peak_buffered <= 5 * part + header,
                "part size {part}: {} bytes held",
                sent.peak_buffered
            );
        }
    }

    #[test]
    fn a_rewrite_of_a_part_already_sent_is_an_error_and_aborts() {
        let store = Arc::new(InMemory::new());
        let path = Path::from("x.asdf");
        let opts = StoreOptions::new();
        let mut up = Upload::with_part_size(store.clone(), path.clone(), &opts, 10).unwrap();
        up.write_all(&[1u8; 35]).unwrap();
        up.seek(SeekFrom::Start(3)).unwrap();
        let err = up.write_all(&[2u8; 2]).unwrap_err();
        assert!(err.to_string().contains("offset 3"), "{err}");
        assert!(matches!(
            up.finish(),
            Err(StoreError::Rewrite { offset: 3, .. })
        ));
        assert!(!exists(&store, &path));
    }

    #[test]
    fn seeks_past_the_end_fill_with_zeros_and_headers_are_recognised() {
        let header = asdf_core::unstable::encode_block_header(&asdf_core::file::BlockHeader {
            index: 0,
            offset: 0,
            header_size: 48,
            flags: 0,
            compression: [0; 4],
            allocated_size: 0,
            used_size: 0,
            data_size: 0,
            checksum: [0; 16],
        });
        assert!(looks_like_block_header(&header));
        assert!(!looks_like_block_header(&header[..53]));
        assert!(!looks_like_block_header(&[0xd3, b'B', b'L', b'K', 0, 10]));
        let store = Arc::new(InMemory::new());
        let path = Path::from("z.asdf");
        let mut up =
            Upload::with_part_size(store.clone(), path.clone(), &StoreOptions::new(), 8).unwrap();
        up.write_all(b"ab").unwrap();
        up.seek(SeekFrom::Current(20)).unwrap();
        up.write_all(b"cd").unwrap();
        assert_eq!(up.seek(SeekFrom::End(0)).unwrap(), 24);
        up.finish().unwrap();
        let mut want = b"ab".to_vec();
        want.resize(22, 0);
        want.extend_from_slice(b"cd");
        assert_eq!(stored(&store, &path), want);
    }
}
