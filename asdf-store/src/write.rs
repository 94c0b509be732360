//! Writing a file to a store: one multipart upload, completed only when every part is in,
//! aborted on any failure.

use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStoreExt, PutPayload};

use crate::{runtime, url_store, StoreError, StoreOptions};

/// Part size of uploads (S3's smallest allowed part is 5 MiB).
const UPLOAD_PART: usize = 8 << 20;

/// Uploads `bytes` as the object at `url` by multipart upload ([`StoreOptions::concurrency`]
/// parts in flight). The object appears only when the upload completes; a failed upload is
/// aborted, so nothing is left at `url` (an existing object there stays as it was).
pub fn put_url(url: &str, bytes: Vec<u8>, opts: &StoreOptions) -> Result<(), StoreError> {
    let (store, path) = url_store::store_for(url, opts)?;
    let bytes = bytes::Bytes::from(bytes);
    let err = |source| StoreError::Store {
        path: path.to_string(),
        source,
    };
    runtime::block_on(async {
        let mut upload = store.put_multipart(&path).await.map_err(err)?;
        let parts: Vec<_> = (0..bytes.len().max(1))
            .step_by(UPLOAD_PART)
            .map(|s| {
                upload.put_part(PutPayload::from(
                    bytes.slice(s..(s + UPLOAD_PART).min(bytes.len())),
                ))
            })
            .collect();
        let sent = futures::stream::iter(parts)
            .buffer_unordered(opts.concurrency)
            .try_collect::<()>()
            .await;
        let done = match sent {
            Ok(()) => upload.complete().await.map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = done {
            // The upload's own error is the one to report; an abort that fails too leaves
            // parts that the store's lifecycle rules remove, never a visible object.
            let _ = upload.abort().await;
            return Err(err(e));
        }
        Ok(())
    })
}

/// Writes `root` with `writer` (its registered arrays) to the object at `url`, as
/// [`put_url`] uploads it. The file is assembled in memory first.
pub fn write_to_url(
    writer: &asdf_core::write::Writer<'_>,
    root: &asdf_core::Node,
    url: &str,
    opts: &StoreOptions,
) -> Result<(), StoreError> {
    let bytes = writer.write_to_vec(root).map_err(StoreError::Write)?;
    put_url(url, bytes, opts)
}
