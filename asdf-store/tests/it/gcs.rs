//! Reading and multipart writing of `gs://` URLs against `moto_server` on loopback, spoken to
//! through the XML API of Google Cloud Storage.
//!
//! There is no Google Cloud Storage emulator this project can install (docs/remote.md, "`gs://`
//! against a server"). But the XML API of GCS is S3's path-style API under other names, and
//! it is the only API `object_store` 0.14's GCS client uses: `GET`/`HEAD
//! {base}/{bucket}/{object}` with `Range` and `If-Match`, plain `PUT`, and the multipart
//! `POST ?uploads`, `PUT ?partNumber=&uploadId=`, `POST ?uploadId=` (`CompleteMultipartUpload`),
//! `DELETE ?uploadId=`; it reads ETag, Last-Modified and Content-Range from the answers and
//! the same XML bodies as S3's. `moto_server` (tests/support/moto.rs, pinned in
//! tests/oracle-requirements.txt) answers these requests as S3 does; it ignores the bearer
//! token, and a request without any `Authorization` it treats as anonymous (403 on a private
//! object), so the token is sent. What this leaves untested: GCS's own answers (its
//! `x-goog-generation` header, which `object_store` reads when present and moto never sends)
//! and OAuth; the requests, URLs, paths and the code of asdf-store are the ones used against
//! Google.
//!
//! The store is reached the way a user points `gs://` at another endpoint: the options
//! `google_base_url` and `google_bearer_token` (or a service-account key with
//! `"gcs_base_url"` and `"disable_oauth": true`, which is how `object_store`'s own tests reach
//! fake-gcs-server).

use std::time::Duration;

use asdf_core::tree;
use asdf_core::write::{WriteOptions, Writer};
use asdf_store::{StoreError, StoreOptions};
use object_store::gcp::{GoogleCloudStorage, GoogleCloudStorageBuilder};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use crate::support::moto::{raw, raw_body, start_moto};
use crate::{regions, support, uploads};

fn base(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

fn opts(port: u16) -> StoreOptions {
    StoreOptions::new()
        .option("google_base_url", base(port))
        .option("google_bearer_token", "testing")
        .max_retries(1)
        .timeout(Duration::from_secs(20))
}

/// `object_store`'s GCS client on its own, for plain `PUT`s (not through asdf-store).
fn gcs_client(port: u16, bucket: &str) -> GoogleCloudStorage {
    // reqwest's TLS takes the process's rustls provider (asdf-store builds without aws-lc):
    // asdf-store installs ring when it builds a store itself; this client is built first.
    let _ = rustls::crypto::ring::default_provider().install_default();
    GoogleCloudStorageBuilder::new()
        .with_bucket_name(bucket)
        .with_base_url(&base(port))
        .with_bearer_token("testing")
        .build()
        .unwrap()
}

/// One plain `PUT` of `bytes` at `key` by the GCS client.
fn plain_put(store: &GoogleCloudStorage, key: &str, bytes: Vec<u8>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(store.put(&Path::from(key), PutPayload::from(bytes)))
        .unwrap();
}

fn not_found(err: &StoreError) -> bool {
    matches!(
        err,
        StoreError::Store {
            source: object_store::Error::NotFound { .. },
            ..
        }
    )
}

#[test]
fn gs_write_multipart_then_read() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/gcs"), 200);
    let o = opts(moto.port);

    // 20 MiB of data: three parts of the multipart upload, sent while the file is written,
    // at most 2 in flight.
    let a = ndarray::Array1::from_iter((0..(20 << 20) / 8).map(|i| i as f64));
    let mut w = Writer::new(WriteOptions::default());
    let root = tree!({"a": w.add_array(&a), "meta": {"telescope": "Roman"}});
    let want = w.write_to_vec(&root).unwrap();
    let url = "gs://gcs/run/obs.asdf";
    let sent = asdf_store::write_to_url(&w, &root, url, &o.clone().concurrency(2)).unwrap();
    assert_eq!(sent.bytes, want.len() as u64);
    assert_eq!(sent.parts, 3);
    // The object is there under its key (moto's view, by an S3 request), as one object.
    let listing = raw_body(moto.port, "/gcs?list-type=2&prefix=run/");
    assert!(listing.contains("<Key>run/obs.asdf</Key>"), "{listing}");
    assert!(
        listing.contains(&format!("<Size>{}</Size>", want.len())),
        "{listing}"
    );

    // Byte for byte the file the writer makes in memory.
    let reader = asdf_store::StoreReader::open(url, &o).unwrap();
    assert_eq!(reader.meta().size, want.len() as u64);
    assert!(reader.meta().e_tag.is_some());
    let mut got = vec![0u8; want.len()];
    reader.read_at(&mut got, 0).unwrap();
    assert!(got == want);
    drop(got);
    let file = asdf_store::open_url_with(url, &o, &Default::default()).unwrap();
    assert_eq!(
        file.node("/meta/telescope").unwrap().as_str(),
        Some("Roman")
    );
    assert_eq!(file.array::<f64>("/a").unwrap(), a.clone().into_dyn());

    // The same through a service-account key that carries the endpoint.
    let key = format!(
        r#"{{"private_key": "unused", "private_key_id": "unused", "client_email": "unused",
            "disable_oauth": true, "gcs_base_url": "{}"}}"#,
        base(moto.port)
    );
    let by_key = StoreOptions::new()
        .option("google_service_account_key", key)
        .max_retries(1)
        .timeout(Duration::from_secs(20));
    let file = asdf_store::open_url_with(url, &by_key, &Default::default()).unwrap();
    assert_eq!(file.array::<f64>("/a").unwrap(), a.into_dyn());

    // A file put by one plain PUT (not a multipart upload) reads the same way.
    let b = ndarray::Array2::from_shape_fn((300, 200), |(i, j)| (i * 1000 + j) as i32);
    let c = ndarray::Array1::from_iter((0..1000).map(|i| i as f32 * 0.5));
    let mut w = Writer::new(WriteOptions::default());
    let root = tree!({"b": w.add_array(&b), "c": w.add_array(&c), "meta": {"n": 2}});
    let small = w.write_to_vec(&root).unwrap();
    plain_put(
        &gcs_client(moto.port, "gcs"),
        "plain/small.asdf",
        small.clone(),
    );
    let file =
        asdf_store::open_url_with("gs://gcs/plain/small.asdf", &o, &Default::default()).unwrap();
    assert_eq!(file.node("/meta/n").unwrap().as_i64(), Some(2));
    assert_eq!(file.array::<i32>("/b").unwrap(), b.into_dyn());
    assert_eq!(file.array::<f32>("/c").unwrap(), c.into_dyn());
    let reader = asdf_store::StoreReader::open("gs://gcs/plain/small.asdf", &o).unwrap();
    let mut got = vec![0u8; small.len()];
    reader.read_at(&mut got, 0).unwrap();
    assert_eq!(got, small);

    // A missing object is a typed error, so is a missing bucket.
    let err = asdf_store::open_url_with("gs://gcs/none.asdf", &o, &Default::default()).unwrap_err();
    assert!(not_found(&err), "{err:?}");
    let err =
        asdf_store::open_url_with("gs://nobucket/x.asdf", &o, &Default::default()).unwrap_err();
    assert!(not_found(&err), "{err:?}");
    // An upload into a bucket that does not exist fails and leaves nothing.
    let err = asdf_store::put_url("gs://nobucket/x.asdf", &[1, 2, 3], &o).unwrap_err();
    assert!(matches!(err, StoreError::Store { .. }), "{err:?}");
    assert_eq!(raw(moto.port, "HEAD", "/nobucket/x.asdf"), 404);
}

#[test]
fn gs_a_write_that_fails_midway_aborts_its_upload_and_leaves_the_old_object() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/abort"), 200);
    let o = opts(moto.port);
    let url = "gs://abort/obs.asdf";
    // An object already there, put by asdf_store::put_url (a one-part upload).
    let old = {
        let mut w = Writer::new(WriteOptions::default());
        let a = ndarray::Array1::<f64>::from_elem(10, 1.0);
        let root = tree!({"a": w.add_array(&a)});
        w.write_to_vec(&root).unwrap()
    };
    let sent = asdf_store::put_url(url, &old, &o).unwrap();
    assert_eq!((sent.bytes, sent.parts), (old.len() as u64, 1));
    // A file whose array comes in pieces of 1 MiB; the 21st piece fails, once two parts of
    // 8 MiB have been sent (a part is sent as soon as it is full).
    let mut w = Writer::new(WriteOptions::default());
    let node = uploads::failing_array(&mut w, 20);
    let err = asdf_store::write_to_url(&w, &tree!({"big": node}), url, &o).unwrap_err();
    uploads::assert_source_failed(&err);
    // The upload is gone (the GCS client's DELETE ?uploadId=) and the object is the old one.
    uploads::assert_no_upload_and_old_object(moto.port, "abort", url, &o, &old);

    // A failed first write leaves no object at all.
    let mut w = Writer::new(WriteOptions::default());
    let node = uploads::failing_array(&mut w, 0);
    let err =
        asdf_store::write_to_url(&w, &tree!({"big": node}), "gs://abort/new.asdf", &o).unwrap_err();
    assert!(matches!(err, StoreError::Write(_)), "{err:?}");
    let err = asdf_store::StoreReader::open("gs://abort/new.asdf", &o).unwrap_err();
    assert!(not_found(&err), "{err:?}");
    let uploads = raw_body(moto.port, "/abort?uploads");
    assert!(!uploads.contains("<Upload>"), "{uploads}");
}

#[test]
fn gs_relative_references_resolve_in_the_same_bucket_under_the_prefix() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/refs"), 200);
    let o = opts(moto.port);
    let ext = {
        let a = ndarray::Array1::from(vec![1.0f64, 2.0, 3.0]);
        let mut w = Writer::new(WriteOptions::default());
        let n = w.add_array(&a);
        w.write_to_vec(&tree!({"a": n})).unwrap()
    };
    let store = gcs_client(moto.port, "refs");
    plain_put(&store, "run/main.asdf", support::referring("ext.asdf"));
    plain_put(
        &store,
        "run/sub.asdf",
        support::referring("deeper/ext.asdf"),
    );
    plain_put(&store, "run/up.asdf", support::referring("../secret.asdf"));
    plain_put(
        &store,
        "run/abs.asdf",
        support::referring("\"file:///etc/passwd\""),
    );
    plain_put(
        &store,
        "run/other.asdf",
        support::referring("\"s3://refs/run/ext.asdf\""),
    );
    plain_put(&store, "run/ext.asdf", ext.clone());
    plain_put(&store, "run/deeper/ext.asdf", ext.clone());
    plain_put(&store, "secret.asdf", ext);
    let open = |key: &str, o: &StoreOptions| {
        asdf_store::open_url_with(&format!("gs://refs/{key}"), o, &Default::default()).unwrap()
    };
    let want = ndarray::arr1(&[1.0f64, 2.0, 3.0]).into_dyn();
    assert_eq!(open("run/main.asdf", &o).array::<f64>("/a").unwrap(), want);
    assert_eq!(open("run/sub.asdf", &o).array::<f64>("/a").unwrap(), want);
    // Above the prefix of the file opened: refused, unless allowed.
    let err = open("run/up.asdf", &o).array::<f64>("/a").unwrap_err();
    assert!(
        matches!(err, asdf_core::Error::ExternalRefused { .. }),
        "{err:?}"
    );
    let allowed = o.clone().allow_escape(true);
    assert_eq!(
        open("run/up.asdf", &allowed).array::<f64>("/a").unwrap(),
        want
    );
    // Neither a local file nor another store is opened from a gs:// file.
    for key in ["run/abs.asdf", "run/other.asdf"] {
        let err = open(key, &allowed).array::<f64>("/a").unwrap_err();
        assert!(
            matches!(err, asdf_core::Error::ExternalRefused { .. }),
            "{key}: {err:?}"
        );
    }
}

#[test]
fn gs_region_reads_fetch_the_rows_or_the_lz4_sub_blocks_of_the_cutout() {
    let moto = start_moto();
    assert_eq!(raw(moto.port, "PUT", "/regions"), 200);
    regions::cutouts_fetch_only_their_rows_or_sub_blocks("gs://regions/", &opts(moto.port));
}
