//! Read ASDF files where they live: `s3://`, `gs://`, `az://`, `http://` and `https://` URLs,
//! through the [`object_store`] crate, fetching only what is touched.
//!
//! [`open_url`] opens a URL as an [`asdf_core::AsdfFile`]; the API stays synchronous, the
//! asynchronous client runs on a small runtime kept inside this crate. A [`StoreReader`] is the
//! [`ReadAt`](asdf_core::file::ReadAt) source behind it:
//!
//! - small reads (the header, the tree, block headers, the block index) go through a bounded
//!   page cache of 64 KiB pages, each missing run of pages fetched in one range request, so
//!   nothing small is fetched twice, and recent large reads are kept up to
//!   [`StoreOptions::block_cache_bytes`], so a block is fetched once;
//! - large reads (block data) are split into parts ([`StoreOptions::part_size`]) fetched in
//!   parallel ([`StoreOptions::concurrency`]) straight into the caller's buffer (the array's
//!   memory);
//! - region reads ([`asdf_core::AsdfFile::region`]) hand all their byte ranges over at once
//!   (ranges closer than [`StoreOptions::merge_gap`] merged): each is fetched as given,
//!   exactly its bytes, concurrently, large ones in parallel parts
//!   ([`StoreReader::read_ranges`]);
//! - the object's ETag (or, without one, its last-modified time) and size are pinned when it is
//!   opened: every range request is conditional on them and every response is checked, so an
//!   object replaced while it is read is [`StoreError::Changed`], never a mixed file;
//! - bodies of the wrong length are retried a bounded number of times, then
//!   [`StoreError::ShortBody`]; server errors and timeouts are retried by `object_store` with
//!   bounded backoff ([`StoreOptions::max_retries`], [`StoreOptions::timeout`]).
//!
//! Credentials, region and endpoint come from the usual environment variables (`AWS_*`,
//! `GOOGLE_*`, `AZURE_*`, as the `from_env` builders of `object_store` read them), from
//! [`StoreOptions::option`] in code (the same keys, e.g. `aws_endpoint`, `aws_region`,
//! `allow_http`), and [`StoreOptions::anonymous`] skips signing for public buckets.
//!
//! ```no_run
//! let file = asdf_store::open_url("https://example.org/data/observation.asdf")?;
//! let sci = file.array::<f32>("/sci")?;
//! # Ok::<(), asdf_store::StoreError>(())
//! ```
//!
//! External array sources and `$ref`s to other files are read from the same store, confined
//! to the folder of the file opened ([`StoreOptions::allow_escape`] lifts that); a remote
//! file never leads to a local one or to another store.

#![forbid(unsafe_code)]

mod opener;
mod reader;
mod runtime;
mod url_store;
mod write;

use std::sync::Arc;
use std::time::Duration;

pub use reader::{Stats, StoreReader};
pub use write::{put_url, write_to_url, UploadSummary, UPLOAD_PART};

/// Errors of opening and reading objects.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The text is not a URL this crate can open.
    #[error("bad url {url:?}: {reason}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An option key that the store's builder does not know.
    #[error("unknown option {key:?} for a {scheme} store")]
    BadOption {
        /// The key given.
        key: String,
        /// The URL scheme.
        scheme: String,
    },
    /// The store answered with an error (after its bounded retries).
    #[error("object store request for {path} failed")]
    Store {
        /// The object's path in the store.
        path: String,
        /// The store's error.
        #[source]
        source: object_store::Error,
    },
    /// The object changed since it was opened (ETag, last-modified or size differs).
    #[error("object {path} changed while it was being read")]
    Changed {
        /// The object's path in the store.
        path: String,
    },
    /// A response body was shorter or longer than the range asked for, after the retries.
    #[error("response for {path} at offset {offset}: {got} bytes instead of {expected}")]
    ShortBody {
        /// The object's path.
        path: String,
        /// Offset of the range asked for.
        offset: u64,
        /// Bytes asked for.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// A read past the end of the object.
    #[error("read of {len} bytes at offset {offset} is beyond the object's {size} bytes")]
    OutOfRange {
        /// Offset of the read.
        offset: u64,
        /// Bytes asked for.
        len: u64,
        /// The object's size.
        size: u64,
    },
    /// An upload's writer rewrote bytes of a part already sent (the sink keeps only the
    /// parts holding the header of the block being written).
    #[error("upload of {path}: the writer rewrote offset {offset}, in a part already sent")]
    Rewrite {
        /// The object's path.
        path: String,
        /// Offset of the rewritten byte.
        offset: u64,
    },
    /// The internal runtime could not start.
    #[error("cannot start the internal runtime")]
    Runtime(#[source] std::io::Error),
    /// Writing the ASDF file failed (before any byte was uploaded).
    #[error(transparent)]
    Write(#[from] asdf_core::write::WriteError),
    /// Reading the ASDF file failed (its layout, tree or blocks).
    #[error(transparent)]
    Asdf(#[from] asdf_core::Error),
}

/// How to reach a store and how to read from it.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    options: Vec<(String, String)>,
    anonymous: bool,
    part_size: usize,
    concurrency: usize,
    max_retries: usize,
    timeout: Duration,
    cache_pages: usize,
    block_cache_bytes: usize,
    merge_gap: u64,
    allow_escape: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            options: Vec::new(),
            anonymous: false,
            part_size: 8 << 20,
            concurrency: 8,
            max_retries: 3,
            timeout: Duration::from_secs(30),
            cache_pages: 64,
            block_cache_bytes: 256 << 20,
            merge_gap: 1 << 20,
            allow_escape: false,
        }
    }
}

impl StoreOptions {
    /// Defaults: signed requests with credentials from the environment, 8 MiB parts, 8
    /// parallel requests, 3 retries, a 30 s timeout per request, a 4 MiB page cache, a
    /// 256 MiB block cache, a 1 MiB merge gap.
    pub fn new() -> Self {
        Self::default()
    }
    /// A builder option by the key `object_store` gives it (`aws_endpoint`, `aws_region`,
    /// `aws_access_key_id`, `google_service_account`, `google_base_url` and
    /// `google_bearer_token` for another GCS endpoint, `azure_storage_account_name`,
    /// `allow_http`, ...); options in code win over the environment.
    pub fn option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }
    /// Unsigned requests, for public buckets (default `false`).
    pub fn anonymous(mut self, on: bool) -> Self {
        self.anonymous = on;
        self
    }
    /// Size of each range request of a large read (default 8 MiB, at least 64 KiB).
    pub fn part_size(mut self, bytes: usize) -> Self {
        self.part_size = bytes.max(64 << 10);
        self
    }
    /// Largest number of range requests in flight for one read (default 8, at least 1).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }
    /// Retries of a failed or short request (default 3).
    pub fn max_retries(mut self, n: usize) -> Self {
        self.max_retries = n;
        self
    }
    /// Timeout of each request (default 30 s).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
    /// Bytes of block data kept, so an array read twice is fetched once (default 256 MiB;
    /// a block larger than this is fetched each time it is read; 0 keeps none).
    pub fn block_cache_bytes(mut self, n: usize) -> Self {
        self.block_cache_bytes = n;
        self
    }
    /// Ranges of a region read ([`asdf_core::AsdfFile::region`]) less than this many bytes
    /// apart are fetched as one request (default 1 MiB, as `object_store` coalesces ranges:
    /// a request to an object store costs a round trip, about what a MiB takes to arrive).
    /// 0 fetches only the bytes of the selection (a request per range), for the fewest bytes
    /// transferred.
    pub fn merge_gap(mut self, bytes: u64) -> Self {
        self.merge_gap = bytes;
        self
    }
    /// Whether relative references (external array sources, `$ref`s) may leave the folder
    /// (prefix) of the file first opened, within the same store (default `false`).
    /// References to other stores, URLs and local files are never followed.
    pub fn allow_escape(mut self, on: bool) -> Self {
        self.allow_escape = on;
        self
    }
    /// Pages of 64 KiB kept for small reads (default 64, 4 MiB).
    pub fn cache_pages(mut self, n: usize) -> Self {
        self.cache_pages = n;
        self
    }
}

/// Whether `text` is a URL this crate opens (`s3://`, `gs://`, `az://`, `abfs://`,
/// `abfss://`, `http://`, `https://`).
pub fn is_url(text: &str) -> bool {
    url_store::scheme_of(text).is_some()
}

/// Opens the ASDF file at `url` with default options.
pub fn open_url(url: &str) -> Result<asdf_core::AsdfFile, StoreError> {
    open_url_with(
        url,
        &StoreOptions::default(),
        &asdf_core::AsdfFile::options(),
    )
}

/// Opens the ASDF file at `url` with `open`'s options, block headers read lazily
/// ([`asdf_core::OpenOptions::lazy_block_headers`]: with a valid block index, a block's header
/// is fetched when its block is first used). Relative references (external array
/// sources, `$ref`s to other files) are read from the same store, confined to the folder of
/// `url` unless [`StoreOptions::allow_escape`]; nothing else is followed (the options'
/// [`ExternalPolicy`](asdf_core::ExternalPolicy) does not apply).
pub fn open_url_with(
    url: &str,
    store: &StoreOptions,
    open: &asdf_core::OpenOptions,
) -> Result<asdf_core::AsdfFile, StoreError> {
    let (object_store, path) = url_store::store_for(url, store)?;
    let reader = Arc::new(StoreReader::from_store(
        object_store.clone(),
        path.clone(),
        store,
    )?);
    let folder = opener::folder_of(&path);
    let base = url_store::base_of(url);
    let opener = opener::StoreOpener {
        store: object_store,
        base,
        root: folder.clone(),
        dir: folder,
        opts: store.clone(),
    };
    let open = open.clone().lazy_block_headers(true);
    Ok(open.open_source_with(reader, Arc::new(opener))?)
}

/// Opens an ASDF file from an opened [`StoreReader`] (keep a clone of the `Arc` to read its
/// [`Stats`]). It refers to no other file ([`asdf_core::ExternalPolicy::None`]); block
/// headers are read lazily, as [`open_url_with`] reads them.
pub fn open_reader(
    reader: Arc<StoreReader>,
    open: &asdf_core::OpenOptions,
) -> Result<asdf_core::AsdfFile, StoreError> {
    let file = open
        .clone()
        .external_policy(asdf_core::ExternalPolicy::None)
        .lazy_block_headers(true)
        .open_source(reader, "")?;
    Ok(file)
}
