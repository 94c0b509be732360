//! Reading and multipart writing against an S3-compatible server on loopback: `moto_server`
//! (python `moto[server]`, pinned in tests/oracle-requirements.txt and installed by `.ci/run`
//! into `.venv-oracle`; started and stopped by tests/support/moto.rs). The test starts the
//! server and stops it; a server that cannot start fails the test. `ASDF_MOTO_SERVER` names
//! another `moto_server` program.

use std::time::Duration;

use asdf_core::tree;
use asdf_core::write::{WriteOptions, Writer};
use asdf_store::{StoreError, StoreOptions};

use crate::support::moto::{raw, start_moto};
use crate::{regions, uploads};

fn opts(port: u16) -> StoreOptions {
    StoreOptions::new()
        .option("aws_endpoint", format!("http://127.0.0.1:{port}"))
        .option("aws_region", "us-east-1")
        .option("aws_access_key_id", "testing")
        .option("aws_secret_access_key", "testing")
        .option("aws_virtual_hosted_style_request", "false")
        .max_retries(1)
        .timeout(Duration::from_secs(20))
}

#[test]
fn s3_write_multipart_then_read() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/bucket"), 200);
    let o = opts(moto.port);

    // 56 MiB of data: seven parts of the multipart upload, sent while the file is written,
    // with at most 2 in flight.
    let a = ndarray::Array1::from_iter((0..(56 << 20) / 8).map(|i| i as f64));
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array(&a);
    let root = tree!({"a": node, "meta": {"telescope": "Roman"}});
    let want = w.write_to_vec(&root).unwrap();
    let sent = asdf_store::write_to_url(
        &w,
        &root,
        "s3://bucket/run/obs.asdf",
        &o.clone().concurrency(2),
    )
    .unwrap();
    assert_eq!(sent.bytes, want.len() as u64);
    assert_eq!(sent.parts, want.len().div_ceil(asdf_store::UPLOAD_PART));
    // Never the whole file in memory: the part being filled, the part holding the block's
    // header (rewritten once the block is written) and the parts in flight.
    assert!(
        sent.peak_buffered <= 4 * asdf_store::UPLOAD_PART + 4096,
        "{} bytes held for a file of {}",
        sent.peak_buffered,
        want.len()
    );
    // The object is byte for byte the file the writer makes in memory.
    let reader = asdf_store::StoreReader::open("s3://bucket/run/obs.asdf", &o).unwrap();
    let mut got = vec![0u8; want.len()];
    reader.read_at(&mut got, 0).unwrap();
    assert!(got == want);
    drop(got);

    let file =
        asdf_store::open_url_with("s3://bucket/run/obs.asdf", &o, &Default::default()).unwrap();
    assert_eq!(
        file.node("/meta/telescope").unwrap().as_str(),
        Some("Roman")
    );
    assert_eq!(file.array::<f64>("/a").unwrap(), a.into_dyn());

    // A missing object and a missing bucket are typed errors.
    let err =
        asdf_store::open_url_with("s3://bucket/none.asdf", &o, &Default::default()).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Store {
                source: object_store::Error::NotFound { .. },
                ..
            }
        ),
        "{err:?}"
    );
    // An upload into a bucket that does not exist fails and leaves nothing.
    let err = asdf_store::put_url("s3://nobucket/x.asdf", &[1, 2, 3], &o).unwrap_err();
    assert!(matches!(err, StoreError::Store { .. }), "{err:?}");
    assert_eq!(raw(moto.port, "HEAD", "/nobucket/x.asdf"), 404);
}

#[test]
fn s3_a_write_that_fails_midway_aborts_its_upload_and_leaves_the_old_object() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/abort"), 200);
    let o = opts(moto.port);
    let url = "s3://abort/obs.asdf";
    // An object already there.
    let old = {
        let mut w = Writer::new(WriteOptions::default());
        let a = ndarray::Array1::<f64>::from_elem(10, 1.0);
        let root = tree!({"a": w.add_array(&a)});
        asdf_store::write_to_url(&w, &root, url, &o).unwrap();
        w.write_to_vec(&root).unwrap()
    };
    // A file whose array comes in pieces of 1 MiB; the 41st piece fails, once parts of
    // 8 MiB have been sent (a part is sent as soon as it is full).
    let mut w = Writer::new(WriteOptions::default());
    let node = uploads::failing_array(&mut w, 40);
    let err = asdf_store::write_to_url(&w, &tree!({"big": node}), url, &o).unwrap_err();
    uploads::assert_source_failed(&err);
    // The upload is gone and the object is the old one.
    uploads::assert_no_upload_and_old_object(moto.port, "abort", url, &o, &old);
}

#[test]
fn s3_region_reads_fetch_the_rows_or_the_lz4_sub_blocks_of_the_cutout() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/regions"), 200);
    regions::cutouts_fetch_only_their_rows_or_sub_blocks("s3://regions/", &opts(moto.port));
}
