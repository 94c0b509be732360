//! What the `s3://` and `gs://` tests share about uploads that fail: an array whose source
//! fails midway, and the check that a failed upload left nothing behind. Included beside
//! `support` by asdf-store's test program (`tests/it/main.rs`, `#[path]`), not by `support`
//! itself, so its other users (asdftool's tests) do not need asdf-store.

use asdf_core::write::Writer;
use asdf_core::Node;
use asdf_store::{StoreError, StoreOptions};

use crate::support::moto::raw_body;

/// Adds to `w` a 64 MiB `uint8` array that comes in pieces of 1 MiB, whose source fails at
/// piece `fail_after + 1` (0: at once); returns its node.
pub fn failing_array(w: &mut Writer<'_>, fail_after: u32) -> Node {
    let dtype = asdf_core::array::DType::scalar(
        asdf_core::array::ScalarType::UInt8,
        asdf_core::array::ByteOrder::Little,
    );
    let mut n = 0u32;
    w.add_array_pieces(dtype, &[64 << 20], Default::default(), move || {
        n += 1;
        if n > fail_after {
            return Err(std::io::Error::other("the source of the pieces failed"));
        }
        Ok(Some(vec![n as u8; 1 << 20]))
    })
}

/// The write failed because of the array's source.
pub fn assert_source_failed(err: &StoreError) {
    assert!(
        matches!(err, StoreError::Write(_)) && err.to_string().contains("pieces failed"),
        "{err:?}"
    );
}

/// No multipart upload is left in `bucket` of the moto server on `port`, and `url` holds
/// exactly `old`.
pub fn assert_no_upload_and_old_object(
    port: u16,
    bucket: &str,
    url: &str,
    o: &StoreOptions,
    old: &[u8],
) {
    let uploads = raw_body(port, &format!("/{bucket}?uploads"));
    assert!(uploads.contains("ListMultipartUploadsResult"), "{uploads}");
    assert!(!uploads.contains("<Upload>"), "{uploads}");
    let reader = asdf_store::StoreReader::open(url, o).unwrap();
    assert_eq!(reader.meta().size, old.len() as u64);
    let mut got = vec![0u8; old.len()];
    reader.read_at(&mut got, 0).unwrap();
    assert_eq!(got, old);
}
