//! What the object-store tests share about region reads: a cutout of an uncompressed and of
//! an `lz4` image, uploaded under a prefix, read back with the bytes and requests it costs.
//! Included beside `support` by asdf-store's test program (`tests/it/main.rs`, `#[path]`), as
//! uploads.rs is, not by `support` itself.

use std::sync::Arc;

use asdf_core::tree;
use asdf_core::write::{WriteOptions, Writer};
use asdf_store::StoreOptions;

/// Uploads a 2048 × 1024 float32 image (8 MiB, rows of 4 KiB; as lz4, two sub-blocks of
/// 4 MiB) to `{prefix}raw.asdf` and `{prefix}lz4.asdf`, and reads a 64 × 64 cutout of each
/// with no merge gap: the uncompressed one costs the 64 rows' 256 bytes, a request each; the
/// lz4 one its length prefixes (8 bytes each) and the one sub-block holding the rows.
pub fn cutouts_fetch_only_their_rows_or_sub_blocks(prefix: &str, o: &StoreOptions) {
    let a = ndarray::Array2::from_shape_fn((2048, 1024), |(i, j)| (i * 1024 + j) as f32);
    let want = a.slice(ndarray::s![100..164, 10..74]).to_owned().into_dyn();
    let sel: asdf_core::Selection = "100:164, 10:74".parse().unwrap();
    for (name, codec) in [
        ("raw", asdf_core::array::CompressionChoice::None),
        (
            "lz4",
            asdf_core::array::CompressionChoice::Codec(asdf_core::write::Compression::Lz4),
        ),
    ] {
        let mut w = Writer::new(WriteOptions::default().compression(codec));
        let root = tree!({"sci": w.add_array(&a)});
        let url = format!("{prefix}{name}.asdf");
        asdf_store::put_url(&url, &w.write_to_vec(&root).unwrap(), o).unwrap();
        let reader =
            Arc::new(asdf_store::StoreReader::open(&url, &o.clone().merge_gap(0)).unwrap());
        let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
        let opened = reader.stats();
        assert_eq!(file.region::<f32>("/sci", &sel).unwrap(), want, "{url}");
        let s = reader.stats();
        let (requests, bytes) = (s.requests - opened.requests, s.bytes - opened.bytes);
        if name == "raw" {
            assert_eq!((requests, bytes), (64, 64 * 256), "{url}");
        } else {
            assert!(requests <= 3, "{url}: {requests} requests");
            assert!(bytes <= (4 << 20) + (1 << 16), "{url}: {bytes} bytes");
        }
    }
}
