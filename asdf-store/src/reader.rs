//! [`StoreReader`]: positional reads of one object, by range requests.

use std::collections::HashMap;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt};

use crate::{runtime, url_store, StoreError, StoreOptions};

/// Page size of the small-read cache.
const PAGE: u64 = 64 << 10;
/// Reads up to this size go through the page cache; larger ones straight to the caller.
const SMALL: usize = 256 << 10;

/// What a reader has fetched so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Range (and metadata) requests sent, retries included.
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
}

/// One object of a store, read by range requests: a
/// [`ReadAt`](asdf_core::file::ReadAt) for [`asdf_core::OpenOptions::open_source`].
///
/// The object's size and version (ETag, else last-modified) are pinned by [`Self::open`]; a
/// later response for another version fails the read with [`StoreError::Changed`].
pub struct StoreReader {
    store: Arc<dyn ObjectStore>,
    path: Path,
    meta: ObjectMeta,
    opts: StoreOptions,
    cache: Mutex<PageCache>,
    blocks: Mutex<BlockCache>,
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for StoreReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreReader")
            .field("path", &self.path.as_ref())
            .field("size", &self.meta.size)
            .field("e_tag", &self.meta.e_tag)
            .finish_non_exhaustive()
    }
}

/// Pages of the object, least recently used evicted first.
#[derive(Default)]
struct PageCache {
    pages: HashMap<u64, (Bytes, u64)>,
    clock: u64,
}

impl PageCache {
    fn get(&mut self, page: u64) -> Option<Bytes> {
        self.clock += 1;
        let clock = self.clock;
        self.pages.get_mut(&page).map(|(b, used)| {
            *used = clock;
            b.clone()
        })
    }

    fn put(&mut self, page: u64, bytes: Bytes, cap: usize) {
        if cap == 0 {
            return;
        }
        while self.pages.len() >= cap {
            let oldest = self
                .pages
                .iter()
                .min_by_key(|(_, (_, u))| *u)
                .map(|(k, _)| *k);
            match oldest {
                Some(k) => self.pages.remove(&k),
                None => break,
            };
        }
        self.clock += 1;
        self.pages.insert(page, (bytes, self.clock));
    }
}

/// Recent large reads (block data), whole, least recently used evicted first, up to a total
/// size: reading an array twice fetches its block once.
#[derive(Default)]
struct BlockCache {
    entries: Vec<(u64, Arc<Vec<u8>>)>,
    bytes: usize,
}

impl BlockCache {
    /// Copies `offset..offset + buf.len()` into `buf` from an entry that holds all of it (a
    /// region of a block read before); whether one did.
    fn copy_covered(&mut self, buf: &mut [u8], offset: u64) -> bool {
        let found = self.entries.iter().position(|(o, b)| {
            offset >= *o && (offset - *o).saturating_add(buf.len() as u64) <= b.len() as u64
        });
        let Some(i) = found else {
            return false;
        };
        let e = self.entries.remove(i);
        let copied = usize::try_from(offset - e.0)
            .ok()
            .and_then(|a| e.1.get(a..a.checked_add(buf.len())?))
            .map(|src| buf.copy_from_slice(src))
            .is_some();
        self.entries.push(e);
        copied
    }

    fn put(&mut self, offset: u64, data: Arc<Vec<u8>>, cap: usize) {
        if data.len() > cap {
            return;
        }
        while self.bytes + data.len() > cap && !self.entries.is_empty() {
            let (_, old) = self.entries.remove(0);
            self.bytes -= old.len();
        }
        self.bytes += data.len();
        self.entries.push((offset, data));
    }
}

impl StoreReader {
    /// Opens the object at `url` (one request for its first 64 KiB, whose answer pins its
    /// size and version).
    pub fn open(url: &str, opts: &StoreOptions) -> Result<Self, StoreError> {
        let (store, path) = url_store::store_for(url, opts)?;
        Self::from_store(store, path, opts)
    }

    /// Opens the object at `path` of an existing store.
    pub fn from_store(
        store: Arc<dyn ObjectStore>,
        path: Path,
        opts: &StoreOptions,
    ) -> Result<Self, StoreError> {
        // The first page, unconditional: its answer pins the object's size and version (no
        // separate metadata request); where it cannot (an empty object), a HEAD request.
        let (meta, first) = {
            let (store, path) = (store.clone(), path.clone());
            runtime::block_on(async move {
                let err = |source| StoreError::Store {
                    path: path.to_string(),
                    source,
                };
                let options = GetOptions {
                    range: Some(GetRange::Bounded(0..PAGE)),
                    ..Default::default()
                };
                match store.get_opts(&path, options).await {
                    Ok(got) => {
                        let meta = got.meta.clone();
                        let range = got.range.clone();
                        // A body cut short is not kept: the page is fetched again when read.
                        let page = got.bytes().await.ok().filter(|b| {
                            range.start == 0 && b.len() as u64 == range.end.min(meta.size)
                        });
                        Ok((meta, page))
                    }
                    Err(source @ object_store::Error::NotFound { .. }) => Err(err(source)),
                    Err(_) => Ok((store.head(&path).await.map_err(err)?, None)),
                }
            })?
        };
        let mut cache = PageCache::default();
        let mut received = 0;
        if let Some(page) = first {
            received = page.len() as u64;
            cache.put(0, page, opts.cache_pages);
        }
        Ok(StoreReader {
            store,
            path,
            meta,
            opts: opts.clone(),
            cache: Mutex::new(cache),
            blocks: Mutex::new(BlockCache::default()),
            requests: AtomicU64::new(1),
            bytes: AtomicU64::new(received),
        })
    }

    /// The object's metadata as seen at open.
    pub fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    /// Requests sent and bytes received so far.
    pub fn stats(&self) -> Stats {
        Stats {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }

    fn err_path(&self) -> String {
        self.path.to_string()
    }

    /// Fills `buf` with the bytes at `start..start + buf.len()` by one conditional range
    /// request, retried a bounded number of times when the body has the wrong length.
    async fn fetch_into(&self, buf: &mut [u8], start: u64) -> Result<(), StoreError> {
        let len = buf.len() as u64;
        let range = start..start + len;
        let mut attempt = 0;
        loop {
            match self.fetch_once(buf, range.clone()).await {
                Ok(()) => return Ok(()),
                Err(e @ StoreError::ShortBody { .. }) if attempt < self.opts.max_retries => {
                    let _ = e;
                    attempt += 1;
                }
                Err(StoreError::Store { source, .. })
                    if is_body_error(&source) && attempt < self.opts.max_retries =>
                {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn fetch_once(&self, buf: &mut [u8], range: Range<u64>) -> Result<(), StoreError> {
        let options = GetOptions {
            if_match: self.meta.e_tag.clone(),
            if_unmodified_since: self.meta.e_tag.is_none().then_some(self.meta.last_modified),
            range: Some(GetRange::Bounded(range.clone())),
            ..Default::default()
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        let result =
            self.store
                .get_opts(&self.path, options)
                .await
                .map_err(|source| match source {
                    object_store::Error::Precondition { .. } => StoreError::Changed {
                        path: self.err_path(),
                    },
                    source => StoreError::Store {
                        path: self.err_path(),
                        source,
                    },
                })?;
        let m = &result.meta;
        let same = m.size == self.meta.size
            && match (&m.e_tag, &self.meta.e_tag) {
                (Some(a), Some(b)) => a == b,
                (None, None) => m.last_modified == self.meta.last_modified,
                _ => false,
            };
        if !same {
            return Err(StoreError::Changed {
                path: self.err_path(),
            });
        }
        let short = |got: u64| StoreError::ShortBody {
            path: self.err_path(),
            offset: range.start,
            expected: range.end - range.start,
            got,
        };
        if result.range != range {
            return Err(short(result.range.end.saturating_sub(result.range.start)));
        }
        let mut stream = result.into_stream();
        let mut filled = 0usize;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|source| StoreError::Store {
                path: self.err_path(),
                source,
            })?;
            self.bytes.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            let end = filled.saturating_add(chunk.len());
            let Some(slot) = buf.get_mut(filled..end) else {
                return Err(short(end as u64));
            };
            slot.copy_from_slice(&chunk);
            filled = end;
        }
        if filled != buf.len() {
            return Err(short(filled as u64));
        }
        Ok(())
    }

    /// A large read: parts fetched in parallel, each into its own slice of `buf`.
    fn read_large(&self, buf: &mut [u8], offset: u64) -> Result<(), StoreError> {
        let part = self.opts.part_size;
        // Futures do nothing until polled: at most `concurrency` requests are in flight.
        let parts: Vec<_> = buf
            .chunks_mut(part)
            .enumerate()
            .map(|(i, chunk)| self.fetch_into(chunk, offset + (i * part) as u64))
            .collect();
        runtime::block_on(async {
            futures::stream::iter(parts)
                .buffer_unordered(self.opts.concurrency)
                .try_collect::<()>()
                .await
        })
    }

    /// A small read, through the page cache: each run of missing pages is one request.
    fn read_small(&self, buf: &mut [u8], offset: u64) -> Result<(), StoreError> {
        let end = offset + buf.len() as u64;
        let first = offset / PAGE;
        let last = (end - 1) / PAGE;
        let mut pages: Vec<Option<Bytes>> = {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            (first..=last).map(|p| cache.get(p)).collect()
        };
        // Fetch the span from the first to the last missing page in one request.
        let missing: Vec<u64> = (first..=last)
            .zip(&pages)
            .filter(|(_, b)| b.is_none())
            .map(|(p, _)| p)
            .collect();
        if let (Some(&lo), Some(&hi)) = (missing.first(), missing.last()) {
            let start = lo * PAGE;
            let stop = ((hi + 1) * PAGE).min(self.meta.size);
            let mut fetched = vec![0u8; usize::try_from(stop - start).unwrap_or(0)];
            runtime::block_on(self.fetch_into(&mut fetched, start))?;
            let fetched = Bytes::from(fetched);
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            for p in lo..=hi {
                let a = usize::try_from(p * PAGE - start).unwrap_or(usize::MAX);
                let b = fetched.len().min(a.saturating_add(PAGE as usize));
                let page = fetched.slice(a.min(b)..b);
                cache.put(p, page.clone(), self.opts.cache_pages);
                if let Some(slot) = pages.get_mut(usize::try_from(p - first).unwrap_or(usize::MAX))
                {
                    *slot = Some(page);
                }
            }
        }
        let mut pos = offset;
        let mut out = 0usize;
        for (p, page) in (first..=last).zip(pages) {
            let page = page.ok_or(StoreError::OutOfRange {
                offset,
                len: buf.len() as u64,
                size: self.meta.size,
            })?;
            let in_page = usize::try_from(pos - p * PAGE).unwrap_or(usize::MAX);
            let take = (buf.len() - out).min(page.len().saturating_sub(in_page));
            let (Some(dst), Some(src)) = (
                buf.get_mut(out..out + take),
                page.get(in_page..in_page + take),
            ) else {
                break;
            };
            dst.copy_from_slice(src);
            out += take;
            pos += take as u64;
        }
        if out != buf.len() {
            return Err(StoreError::OutOfRange {
                offset,
                len: buf.len() as u64,
                size: self.meta.size,
            });
        }
        Ok(())
    }

    /// Copies `offset..offset + buf.len()` from what is cached (a block read before, or pages
    /// that hold all of it); whether it was there. Sends nothing.
    fn read_cached(&self, buf: &mut [u8], offset: u64) -> bool {
        let covered = self
            .blocks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .copy_covered(buf, offset);
        if covered || buf.len() > SMALL {
            return covered;
        }
        let end = offset + buf.len() as u64;
        let (first, last) = (offset / PAGE, (end - 1) / PAGE);
        let pages: Option<Vec<Bytes>> = {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            (first..=last).map(|p| cache.get(p)).collect()
        };
        let Some(pages) = pages else {
            return false;
        };
        let mut out = 0usize;
        let mut pos = offset;
        for (p, page) in (first..=last).zip(pages) {
            let in_page = usize::try_from(pos - p * PAGE).unwrap_or(usize::MAX);
            let take = (buf.len() - out).min(page.len().saturating_sub(in_page));
            let (Some(dst), Some(src)) = (
                buf.get_mut(out..out + take),
                page.get(in_page..in_page + take),
            ) else {
                return false;
            };
            dst.copy_from_slice(src);
            out += take;
            pos += take as u64;
        }
        out == buf.len()
    }

    /// Fills each request's buffer from its offset, as
    /// [`ReadAt::read_ranges_at`](asdf_core::file::ReadAt::read_ranges_at) does, with the
    /// typed error: the requests are checked against the object's size first (nothing is sent
    /// for a bad one), then every request that the caches do not hold is fetched as given,
    /// exactly its bytes (no page rounding), concurrently ([`StoreOptions::concurrency`] in
    /// flight), requests larger than [`StoreOptions::part_size`] in parallel parts. Each
    /// request is conditional on the version pinned at open and retried as other reads are.
    /// Requests larger than 256 KiB are kept in the block cache, so a region read again (or
    /// another region of the same lz4 sub-block) is not fetched again.
    pub fn read_ranges(&self, reqs: &mut [(u64, &mut [u8])]) -> Result<(), StoreError> {
        for (offset, buf) in reqs.iter() {
            let len = buf.len() as u64;
            if offset.checked_add(len).is_none_or(|e| e > self.meta.size) {
                return Err(StoreError::OutOfRange {
                    offset: *offset,
                    len,
                    size: self.meta.size,
                });
            }
        }
        let part = self.opts.part_size;
        let mut fetched = vec![false; reqs.len()];
        let mut fetches = Vec::new();
        for ((offset, buf), fetched) in reqs.iter_mut().zip(fetched.iter_mut()) {
            if buf.is_empty() || self.read_cached(buf, *offset) {
                continue;
            }
            *fetched = true;
            let offset = *offset;
            // Futures do nothing until polled: at most `concurrency` requests are in flight.
            fetches.extend(
                buf.chunks_mut(part)
                    .enumerate()
                    .map(move |(i, chunk)| (chunk, offset + (i * part) as u64)),
            );
        }
        if !fetches.is_empty() {
            let futures: Vec<_> = fetches
                .into_iter()
                .map(|(chunk, at)| self.fetch_into(chunk, at))
                .collect();
            runtime::block_on(async {
                futures::stream::iter(futures)
                    .buffer_unordered(self.opts.concurrency)
                    .try_collect::<()>()
                    .await
            })?;
        }
        let cap = self.opts.block_cache_bytes;
        for ((offset, buf), _) in reqs.iter().zip(fetched).filter(|(_, f)| *f) {
            if buf.len() > SMALL && buf.len() <= cap {
                self.blocks.lock().unwrap_or_else(|p| p.into_inner()).put(
                    *offset,
                    Arc::new(buf.to_vec()),
                    cap,
                );
            }
        }
        Ok(())
    }

    /// Fills `buf` from `offset`, as [`ReadAt::read_exact_at`](asdf_core::file::ReadAt)
    /// does, with the typed error.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), StoreError> {
        if buf.is_empty() {
            return Ok(());
        }
        let len = buf.len() as u64;
        if offset.checked_add(len).is_none_or(|e| e > self.meta.size) {
            return Err(StoreError::OutOfRange {
                offset,
                len,
                size: self.meta.size,
            });
        }
        if buf.len() <= SMALL {
            return self.read_small(buf, offset);
        }
        let cap = self.opts.block_cache_bytes;
        let lock = || self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        if lock().copy_covered(buf, offset) {
            return Ok(());
        }
        self.read_large(buf, offset)?;
        if buf.len() <= cap {
            lock().put(offset, Arc::new(buf.to_vec()), cap);
        }
        Ok(())
    }
}

/// Errors of reading a body (a reset or truncated connection), worth another request.
fn is_body_error(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::Generic { .. })
}

impl asdf_core::file::ReadAt for StoreReader {
    fn len(&self) -> u64 {
        self.meta.size
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.read_at(buf, offset).map_err(to_io)
    }

    /// [`StoreOptions::merge_gap`].
    fn merge_gap(&self) -> u64 {
        self.opts.merge_gap
    }

    /// Concurrent range requests: see [`StoreReader::read_ranges`].
    fn read_ranges_at(&self, reqs: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        self.read_ranges(reqs).map_err(to_io)
    }
}

/// A store error as the `io::Error` of [`ReadAt`](asdf_core::file::ReadAt): a read past
/// the end is `UnexpectedEof`.
fn to_io(e: StoreError) -> io::Error {
    match e {
        StoreError::OutOfRange { .. } => io::Error::new(io::ErrorKind::UnexpectedEof, e),
        e => io::Error::other(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_cache_serves_any_range_inside_an_entry_and_nothing_else() {
        let mut c = BlockCache::default();
        let data: Vec<u8> = (0..=255).collect();
        c.put(1000, Arc::new(data.clone()), 1 << 20);
        let mut buf = [0u8; 16];
        assert!(c.copy_covered(&mut buf, 1000));
        assert_eq!(buf[..], data[..16]);
        assert!(c.copy_covered(&mut buf, 1240));
        assert_eq!(buf[..], data[240..]);
        // Past the end, before the start, overflowing: not served.
        assert!(!c.copy_covered(&mut buf, 1241));
        assert!(!c.copy_covered(&mut buf, 999));
        assert!(!c.copy_covered(&mut buf, u64::MAX - 3));
        let mut all = vec![0u8; 256];
        assert!(c.copy_covered(&mut all, 1000));
        assert_eq!(all, data);
        assert!(c.copy_covered(&mut [], 1256));
    }

    #[test]
    fn the_block_cache_keeps_at_most_its_capacity_oldest_out_first() {
        let mut c = BlockCache::default();
        for i in 0..4u64 {
            c.put(i * 100, Arc::new(vec![i as u8; 100]), 250);
        }
        assert_eq!(c.bytes, 200);
        let mut b = [0u8; 10];
        assert!(!c.copy_covered(&mut b, 0));
        assert!(!c.copy_covered(&mut b, 100));
        assert!(c.copy_covered(&mut b, 200));
        assert!(c.copy_covered(&mut b, 390));
        assert_eq!(b, [3; 10]);
        // Larger than the capacity: not kept.
        c.put(1000, Arc::new(vec![0; 251]), 250);
        assert!(!c.copy_covered(&mut b, 1000));
    }
}
