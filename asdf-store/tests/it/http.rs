//! Reading ASDF files over HTTP from a loopback server (tests/support): transfer bounds,
//! block data only when read, and faults.

use std::sync::Arc;
use std::time::Duration;

use asdf_core::file::ReadAt;
use asdf_core::tree;
use asdf_core::write::{WriteOptions, Writer};
use asdf_store::{StoreError, StoreOptions, StoreReader};

use crate::support::{self, Fault, Server};

fn opts() -> StoreOptions {
    StoreOptions::new()
        .max_retries(2)
        .timeout(Duration::from_secs(10))
}

/// A small file with two arrays.
fn small_file() -> (Vec<u8>, ndarray::Array1<f64>, ndarray::Array2<i32>) {
    let a = ndarray::Array1::from_iter((0..1000).map(f64::from));
    let b = ndarray::Array2::from_shape_fn((300, 200), |(i, j)| (i * 1000 + j) as i32);
    let mut w = Writer::new(WriteOptions::default());
    let na = w.add_array(&a);
    let nb = w.add_array(&b);
    let root = tree!({"a": na, "b": nb, "meta": {"telescope": "JWST"}});
    (w.write_to_vec(&root).unwrap(), a, b)
}

/// A file whose one block is `size` bytes of zeros (a sparse file, nothing written), with a
/// block index: header, tree, the block header, data, index.
fn sparse_big_block_file(size: u64) -> (tempfile_path::TempPath, u64) {
    let tree = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         big: !core/ndarray-1.0.0 {{source: 0, datatype: uint8, byteorder: little, shape: [{size}]}}\n...\n"
    );
    let mut head = tree.into_bytes();
    let tree_end = head.len() as u64;
    let block_at = head.len() as u64;
    head.extend_from_slice(b"\xd3BLK");
    head.extend_from_slice(&48u16.to_be_bytes());
    head.extend_from_slice(&0u32.to_be_bytes()); // flags
    head.extend_from_slice(&[0; 4]); // compression
    for _ in 0..3 {
        head.extend_from_slice(&size.to_be_bytes()); // allocated, used, data size
    }
    head.extend_from_slice(&[0; 16]); // no checksum
    let data_at = head.len() as u64;
    let index = format!("#ASDF BLOCK INDEX\n%YAML 1.1\n--- [{block_at}]\n...\n");
    let path = tempfile_path::TempPath::new("big");
    let f = std::fs::File::create(&path.0).unwrap();
    use std::os::unix::fs::FileExt;
    f.write_all_at(&head, 0).unwrap();
    f.write_all_at(index.as_bytes(), data_at + size).unwrap();
    (path, tree_end)
}

/// A temporary file removed on drop (in the system's temporary folder).
mod tempfile_path {
    pub struct TempPath(pub std::path::PathBuf);
    impl TempPath {
        pub fn new(tag: &str) -> Self {
            let n = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            TempPath(
                std::env::temp_dir()
                    .join(format!("asdf-store-{tag}-{}-{n}.asdf", std::process::id())),
            )
        }
    }
    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[test]
fn reads_arrays_over_http() {
    let (bytes, a, b) = small_file();
    let server = Server::start();
    server.put("data/small.asdf", Arc::new(bytes));
    let file =
        asdf_store::open_url_with(&server.url("data/small.asdf"), &opts(), &Default::default())
            .unwrap();
    assert_eq!(file.node("/meta/telescope").unwrap().as_str(), Some("JWST"));
    assert_eq!(file.array::<f64>("/a").unwrap(), a.into_dyn());
    assert_eq!(file.array::<i32>("/b").unwrap(), b.into_dyn());
}

#[test]
fn missing_object_is_a_typed_error() {
    let server = Server::start();
    let err = StoreReader::open(&server.url("nope.asdf"), &opts()).unwrap_err();
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
}

#[test]
fn info_of_a_1_gib_block_transfers_the_tree_plus_at_most_256_kib() {
    let (path, tree_end) = sparse_big_block_file(1 << 30);
    let server = Server::start();
    server.put("big.asdf", Arc::new(std::fs::File::open(&path.0).unwrap()));
    let reader = Arc::new(StoreReader::open(&server.url("big.asdf"), &opts()).unwrap());
    let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
    assert_eq!(file.blocks().len(), 1);
    assert_eq!(file.blocks()[0].used_size, 1 << 30);
    assert!(file.layout().block_index.is_some());
    let sent = server.sent();
    assert!(
        sent <= tree_end + (256 << 10),
        "sent {sent} bytes for a tree ending at {tree_end}"
    );
    assert_eq!(reader.stats().bytes, sent);
}

#[test]
fn a_large_block_comes_in_parallel_parts_once() {
    // 40 MiB of data in 8 MiB parts, 4 at a time.
    let n = 5 << 20;
    let a = ndarray::Array1::from_iter((0..n).map(|i| i as f64));
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array(&a);
    let bytes = w.write_to_vec(&tree!({"a": node})).unwrap();
    let server = Server::start();
    server.put("large.asdf", Arc::new(bytes));
    let o = opts().concurrency(4);
    let reader = Arc::new(StoreReader::open(&server.url("large.asdf"), &o).unwrap());
    let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
    let opened = server.sent();
    assert!(opened < 256 << 10, "open sent {opened}");
    let gets = server.gets();
    let got = file.array::<f64>("/a").unwrap();
    assert_eq!(got, a.clone().into_dyn());
    let block = (n * 8) as u64;
    let after = server.sent() - opened;
    assert!(
        (block..block + (256 << 10)).contains(&after),
        "reading the array sent {after} for a block of {block}"
    );
    assert!(server.gets() - gets >= 5, "parts: {}", server.gets() - gets);
    // The block is cached: a second read sends nothing.
    let sent = server.sent();
    assert_eq!(file.array::<f64>("/a").unwrap(), a.into_dyn());
    assert_eq!(server.sent(), sent);
}

#[test]
fn server_errors_and_resets_are_retried_a_bounded_number_of_times() {
    let (bytes, a, _) = small_file();
    let server = Server::start();
    server.put("f.asdf", Arc::new(bytes));
    let reader = StoreReader::open(&server.url("f.asdf"), &opts()).unwrap();
    server.fault(Fault::Status500);
    server.fault(Fault::Reset);
    let file = asdf_store::open_reader(Arc::new(reader), &Default::default()).unwrap();
    assert_eq!(file.array::<f64>("/a").unwrap(), a.into_dyn());

    // More faults than retries: a typed error, not a hang or a panic.
    let reader = StoreReader::open(&server.url("f.asdf"), &opts()).unwrap();
    for _ in 0..10 {
        server.fault(Fault::Status500);
    }
    let mut buf = [0u8; 16];
    // Past the first 64 KiB, which the open fetched.
    assert!(reader.meta().size > 1 << 17);
    let err = reader.read_at(&mut buf, 1 << 17).unwrap_err();
    assert!(matches!(err, StoreError::Store { .. }), "{err:?}");
}

#[test]
fn truncated_bodies_are_retried_then_a_typed_error() {
    let (bytes, _, _) = small_file();
    let len = bytes.len();
    let server = Server::start();
    server.put("f.asdf", Arc::new(bytes.clone()));
    let reader = StoreReader::open(&server.url("f.asdf"), &opts()).unwrap();
    server.fault(Fault::Truncate(100));
    let mut buf = vec![0u8; len];
    reader.read_at(&mut buf, 0).unwrap();
    assert_eq!(buf, bytes);

    let reader = StoreReader::open(&server.url("f.asdf"), &opts()).unwrap();
    for _ in 0..10 {
        server.fault(Fault::Truncate(100));
    }
    let err = reader.read_at(&mut buf, 0).unwrap_err();
    assert!(
        matches!(err, StoreError::ShortBody { .. } | StoreError::Store { .. }),
        "{err:?}"
    );
}

#[test]
fn an_object_replaced_mid_read_is_an_error_never_a_mixed_file() {
    // `/b` of 2.4 MB is beyond what opening the file fetched.
    let bytes = {
        let a = ndarray::Array1::from_iter((0..1000).map(f64::from));
        let b = ndarray::Array2::from_shape_fn((300, 2000), |(i, j)| (i * 1000 + j) as i32);
        let mut w = Writer::new(WriteOptions::default());
        let na = w.add_array(&a);
        let nb = w.add_array(&b);
        w.write_to_vec(&tree!({"a": na, "b": nb})).unwrap()
    };
    let (other, _, _) = {
        let c = ndarray::Array1::from_iter((0..1000).map(|i| f64::from(i) * 2.0));
        let mut w = Writer::new(WriteOptions::default());
        let nc = w.add_array(&c);
        let d = ndarray::Array2::<i32>::zeros((300, 2000));
        let nd = w.add_array(&d);
        (w.write_to_vec(&tree!({"a": nc, "b": nd})).unwrap(), (), ())
    };
    let other: Arc<dyn ReadAt> = Arc::new(other);

    // A server that honours If-Match answers 412.
    let server = Server::start();
    server.put("f.asdf", Arc::new(bytes.clone()));
    let file =
        asdf_store::open_url_with(&server.url("f.asdf"), &opts(), &Default::default()).unwrap();
    server.fault(Fault::Replace(other.clone()));
    // (`/a` came with the first 64 KiB page already; `/b` needs more requests)
    let err = file.array::<i32>("/b").unwrap_err().to_string();
    assert!(err.contains("changed"), "{err}");

    // One that ignores it: the ETag of the answer differs from the one pinned at open.
    let server = Server::start();
    server.put("f.asdf", Arc::new(bytes));
    let file =
        asdf_store::open_url_with(&server.url("f.asdf"), &opts(), &Default::default()).unwrap();
    server.fault(Fault::ReplaceIgnoringIfMatch(other));
    let err = file.array::<i32>("/b").unwrap_err().to_string();
    assert!(err.contains("changed"), "{err}");
}

#[test]
fn reads_past_the_end_are_typed_errors() {
    let (bytes, _, _) = small_file();
    let len = bytes.len() as u64;
    let server = Server::start();
    server.put("f.asdf", Arc::new(bytes));
    let reader = StoreReader::open(&server.url("f.asdf"), &opts()).unwrap();
    let mut buf = [0u8; 8];
    assert!(matches!(
        reader.read_at(&mut buf, len - 4),
        Err(StoreError::OutOfRange { .. })
    ));
    assert!(matches!(
        reader.read_at(&mut buf, u64::MAX - 2),
        Err(StoreError::OutOfRange { .. })
    ));
}

#[test]
fn relative_references_resolve_in_the_same_store_under_the_prefix() {
    let ext = {
        let a = ndarray::Array1::from(vec![1.0f64, 2.0, 3.0]);
        let mut w = Writer::new(WriteOptions::default());
        let n = w.add_array(&a);
        w.write_to_vec(&tree!({"a": n})).unwrap()
    };
    let server = Server::start();
    server.put("d/run/main.asdf", Arc::new(support::referring("ext.asdf")));
    server.put(
        "d/run/sub.asdf",
        Arc::new(support::referring("deeper/ext.asdf")),
    );
    server.put(
        "d/run/up.asdf",
        Arc::new(support::referring("../secret.asdf")),
    );
    server.put(
        "d/run/abs.asdf",
        Arc::new(support::referring("\"file:///etc/passwd\"")),
    );
    server.put("d/run/ext.asdf", Arc::new(ext.clone()));
    server.put("d/run/deeper/ext.asdf", Arc::new(ext.clone()));
    server.put("d/secret.asdf", Arc::new(ext));
    let open = |name: &str, o: &StoreOptions| {
        asdf_store::open_url_with(&server.url(name), o, &Default::default()).unwrap()
    };
    let want = ndarray::arr1(&[1.0f64, 2.0, 3.0]).into_dyn();
    assert_eq!(
        open("d/run/main.asdf", &opts()).array::<f64>("/a").unwrap(),
        want
    );
    assert_eq!(
        open("d/run/sub.asdf", &opts()).array::<f64>("/a").unwrap(),
        want
    );
    // Above the prefix of the file opened: refused, unless allowed.
    let err = open("d/run/up.asdf", &opts())
        .array::<f64>("/a")
        .unwrap_err();
    assert!(
        matches!(err, asdf_core::Error::ExternalRefused { .. }),
        "{err:?}"
    );
    let allowed = opts().allow_escape(true);
    assert_eq!(
        open("d/run/up.asdf", &allowed).array::<f64>("/a").unwrap(),
        want
    );
    // A local file is never opened from a remote one.
    let err = open("d/run/abs.asdf", &allowed)
        .array::<f64>("/a")
        .unwrap_err();
    assert!(
        matches!(err, asdf_core::Error::ExternalRefused { .. }),
        "{err:?}"
    );
}

#[test]
fn one_array_of_ten_thousand_blocks_costs_its_block_plus_at_most_256_kib() {
    let arrays: Vec<_> = (0..10_000)
        .map(|i| ndarray::Array1::<f64>::from_elem(100, f64::from(i)))
        .collect();
    let mut w = Writer::new(WriteOptions::default());
    let nodes: Vec<(asdf_core::Node, asdf_core::Node)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (asdf_core::Node::from(format!("a{i}")), w.add_array(a)))
        .collect();
    let bytes = w
        .write_to_vec(&asdf_core::Node::from(asdf_core::Value::Map(nodes)))
        .unwrap();
    let size = bytes.len() as u64;
    let server = Server::start();
    server.put("many.asdf", Arc::new(bytes));
    let file =
        asdf_store::open_url_with(&server.url("many.asdf"), &opts(), &Default::default()).unwrap();
    assert_eq!(file.block_count(), 10_000);
    assert!(file.layout().block_index.is_some());
    // The block headers are not fetched at open: the tree, the index at the end and the
    // first and last headers (in pages of 64 KiB).
    let tree_end = file.layout().tree.unwrap().1;
    let opened = server.sent();
    let index = size - file.layout().block_index.unwrap();
    assert!(
        opened <= tree_end + index + (256 << 10),
        "open sent {opened} bytes of {size} (tree ends at {tree_end}, index {index} bytes)"
    );
    let got = file.array::<f64>("/a5000").unwrap();
    assert_eq!(got, ndarray::Array1::from_elem(100, 5000.0).into_dyn());
    let more = server.sent() - opened;
    // Its header and data: one page.
    assert!(more <= 800 + (256 << 10), "one array sent {more} bytes");
    let last = file.array::<f64>("/a9999").unwrap();
    assert_eq!(last, ndarray::Array1::from_elem(100, 9999.0).into_dyn());
    // Every header when asked for all of them, through large reads, not one per header.
    let gets = server.gets();
    assert_eq!(file.blocks().len(), 10_000);
    assert!(server.gets() - gets <= 20, "{} GETs", server.gets() - gets);
    assert_eq!(file.blocks()[5000].used_size, 800);
    assert!(more <= 800 + (256 << 10), "one array sent {more} bytes");
}

/// An object of `len` bytes whose byte at `i` is a hash of `i` (every range distinct).
fn patterned(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

#[test]
fn read_ranges_fetches_exactly_the_ranges_concurrently() {
    let bytes = patterned(32 << 20);
    let server = Server::start();
    server.put("r.bin", Arc::new(bytes.clone()));
    let o = opts().concurrency(8).part_size(1 << 20);
    let reader = StoreReader::open(&server.url("r.bin"), &o).unwrap();
    let before = reader.stats();
    let opened = server.sent_settled(before.bytes);
    let gets = server.gets();
    // 200 rows of 1 KiB, 64 KiB apart (none in the first page, which open fetched), one range
    // straddling two pages, an empty one and one of 5 MiB (five parts of 1 MiB).
    let mut want: Vec<(u64, usize)> = (0..200u64).map(|r| ((r + 4) << 16, 1024)).collect();
    want.push(((300 << 16) - 100, 300));
    want.push((1 << 20, 0));
    want.push((20 << 20, 5 << 20));
    let mut bufs: Vec<Vec<u8>> = want.iter().map(|&(_, n)| vec![0u8; n]).collect();
    let mut reqs: Vec<(u64, &mut [u8])> = want
        .iter()
        .zip(bufs.iter_mut())
        .map(|(&(o, _), b)| (o, b.as_mut_slice()))
        .collect();
    reader.read_ranges_at(&mut reqs).unwrap();
    for (&(o, n), b) in want.iter().zip(&bufs) {
        let o = o as usize;
        assert!(b[..] == bytes[o..o + n], "range at {o}");
    }
    let total: u64 = want.iter().map(|&(_, n)| n as u64).sum();
    assert_eq!(
        server.sent_settled(opened + total) - opened,
        total,
        "exactly the bytes asked for"
    );
    assert_eq!(server.gets() - gets, 200 + 1 + 5);
    let after = reader.stats();
    assert_eq!(after.bytes - before.bytes, total);
    assert_eq!(after.requests - before.requests, 206);

    // The large range is cached: a region of it again sends nothing.
    let mut again = vec![0u8; 4096];
    reader
        .read_ranges_at(&mut [((22 << 20) + 7, again.as_mut_slice())])
        .unwrap();
    assert!(again[..] == bytes[(22 << 20) + 7..(22 << 20) + 7 + 4096]);
    assert_eq!(server.gets() - gets, 206);
    assert_eq!(reader.stats().bytes - before.bytes, total);
}

#[test]
fn read_ranges_are_served_from_cached_pages_and_blocks_without_a_request() {
    let bytes = patterned(4 << 20);
    let server = Server::start();
    server.put("r.bin", Arc::new(bytes.clone()));
    let reader = StoreReader::open(&server.url("r.bin"), &opts()).unwrap();
    // The first page came with the open; a whole read of 2 MiB at 1 MiB is kept.
    let mut whole = vec![0u8; 2 << 20];
    reader.read_at(&mut whole, 1 << 20).unwrap();
    let (gets, received) = (server.gets(), reader.stats().bytes);
    let (mut a, mut b) = (vec![0u8; 100], vec![0u8; 300 << 10]);
    reader
        .read_ranges_at(&mut [(10, a.as_mut_slice()), ((1 << 20) + 5, b.as_mut_slice())])
        .unwrap();
    assert!(a[..] == bytes[10..110]);
    assert!(b[..] == bytes[(1 << 20) + 5..(1 << 20) + 5 + (300 << 10)]);
    assert_eq!(
        (server.gets(), reader.stats().bytes),
        (gets, received),
        "nothing sent"
    );
}

#[test]
fn read_ranges_check_every_range_before_sending_anything() {
    let bytes = patterned(1 << 20);
    let server = Server::start();
    server.put("r.bin", Arc::new(bytes));
    let reader = StoreReader::open(&server.url("r.bin"), &opts()).unwrap();
    let gets = server.gets();
    let (mut a, mut b) = (vec![0u8; 10], vec![0u8; 10]);
    let err = reader
        .read_ranges(&mut [
            (1 << 19, a.as_mut_slice()),
            ((1 << 20) - 5, b.as_mut_slice()),
        ])
        .unwrap_err();
    assert!(
        matches!(err, StoreError::OutOfRange { offset, len: 10, .. } if offset == (1 << 20) - 5),
        "{err:?}"
    );
    let e = reader
        .read_ranges_at(&mut [(u64::MAX - 2, b.as_mut_slice())])
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
    assert_eq!(server.gets(), gets);
}

#[test]
fn read_ranges_retry_faults_and_fail_on_a_replaced_object() {
    let bytes = patterned(2 << 20);
    let server = Server::start();
    server.put("r.bin", Arc::new(bytes.clone()));
    let reader = StoreReader::open(&server.url("r.bin"), &opts().concurrency(2)).unwrap();
    server.fault(Fault::Status500);
    server.fault(Fault::Reset);
    server.fault(Fault::Truncate(10));
    let mut bufs = [[0u8; 500]; 6];
    let mut reqs: Vec<(u64, &mut [u8])> = bufs
        .iter_mut()
        .enumerate()
        .map(|(i, b)| (((i as u64) + 2) * 200_000, b.as_mut_slice()))
        .collect();
    reader.read_ranges_at(&mut reqs).unwrap();
    for (i, b) in bufs.iter().enumerate() {
        let o = (i + 2) * 200_000;
        assert!(b[..] == bytes[o..o + 500], "range {i}");
    }

    // More faults than retries: a typed error, not a hang.
    for _ in 0..10 {
        server.fault(Fault::Status500);
    }
    let mut b = [0u8; 64];
    let err = reader
        .read_ranges(&mut [(1_500_000, b.as_mut_slice())])
        .unwrap_err();
    assert!(matches!(err, StoreError::Store { .. }), "{err:?}");

    // Replaced since the open, by a server that honours If-Match and one that does not.
    let other: Arc<dyn ReadAt> = Arc::new(patterned(2 << 20).into_iter().rev().collect::<Vec<_>>());
    for fault in [
        Fault::Replace(other.clone()),
        Fault::ReplaceIgnoringIfMatch(other),
    ] {
        let server = Server::start();
        server.put("r.bin", Arc::new(bytes.clone()));
        let reader = StoreReader::open(&server.url("r.bin"), &opts()).unwrap();
        server.fault(fault);
        let err = reader
            .read_ranges(&mut [(1_000_000, b.as_mut_slice())])
            .unwrap_err();
        assert!(matches!(err, StoreError::Changed { .. }), "{err:?}");
    }
}

/// Side of the square float32 image of the region tests: 4096 × 4096, 64 MiB, rows of
/// 16 KiB, every value distinct (`i * N + j`, exact in float32).
const N: usize = 4096;

fn image() -> ndarray::Array2<f32> {
    ndarray::Array2::from_shape_fn((N, N), |(i, j)| (i * N + j) as f32)
}

/// The image written as `/sci`, uncompressed or in python asdf's `lz4` framing (what our
/// writer writes: independent lz4 blocks of 4 MiB of data, each behind a 4-byte big-endian
/// length).
fn image_file(a: &ndarray::Array2<f32>, lz4: bool) -> Vec<u8> {
    let mut o = WriteOptions::default();
    if lz4 {
        o = o.compression(asdf_core::array::CompressionChoice::Codec(
            asdf_core::write::Compression::Lz4,
        ));
    }
    let mut w = Writer::new(o);
    let sci = w.add_array(a);
    w.write_to_vec(&tree!({"sci": sci, "meta": {"telescope": "Roman"}}))
        .unwrap()
}

/// The 256 × 256 cutout of the region tests, as a selection and as the slice it equals.
const CUTOUT: &str = "1000:1256, 2000:2256";

fn cutout_of(a: &ndarray::Array2<f32>) -> ndarray::ArrayD<f32> {
    a.slice(ndarray::s![1000..1256, 2000..2256])
        .to_owned()
        .into_dyn()
}

#[test]
fn a_region_of_an_uncompressed_image_transfers_the_head_plus_at_most_the_rows_it_spans() {
    let a = image();
    let bytes = Arc::new(image_file(&a, false));
    let sel: asdf_core::Selection = CUTOUT.parse().unwrap();
    // The 256 rows the cutout spans, of which it needs 1 KiB each: merged into one request
    // by default, only the 1 KiB of each without a merge gap.
    let rows = 256 * (N as u64) * 4;
    for (o, most) in [(opts(), rows), (opts().merge_gap(0), 256 * 1024)] {
        let server = Server::start();
        server.put("img.asdf", bytes.clone());
        let reader = Arc::new(StoreReader::open(&server.url("img.asdf"), &o).unwrap());
        let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
        // Plus what opening reads: the head (the tree, the block header: in 64 KiB pages)
        // and the block index at the end (a page).
        let head = file.blocks()[0].data_offset();
        let got = file.region::<f32>("/sci", &sel).unwrap();
        assert_eq!(got, cutout_of(&a));
        let sent = server.sent_settled(reader.stats().bytes);
        eprintln!(
            "uncompressed cutout: sent {sent} bytes in {} requests (head {head}, rows spanned {rows})",
            reader.stats().requests
        );
        assert!(
            sent <= head + (192 << 10) + most,
            "sent {sent} bytes: head {head}, rows spanned {rows}"
        );
        assert!(sent >= 256 * 1024);
        assert_eq!(
            reader.stats().bytes,
            server.sent_settled(reader.stats().bytes)
        );
        // Into a buffer of the caller's, and a strided selection too.
        let mut buf = vec![0f32; 256 * 256];
        let shape = file
            .read_region_into::<f32>("/sci", &sel, &mut buf)
            .unwrap();
        assert_eq!(shape, vec![256, 256]);
        assert_eq!(buf, cutout_of(&a).iter().copied().collect::<Vec<_>>());
        let strided = file
            .region::<f32>("/sci", &"-1:-2000:-7, 3::100".parse().unwrap())
            .unwrap();
        let want = a.slice(ndarray::s![-1999..;-7, 3..;100]).to_owned();
        assert_eq!(strided, want.into_dyn());
    }
}

/// Stored byte ranges (file offsets, length prefix included) and decoded ranges of the
/// sub-blocks of a python-asdf `lz4` block whose data starts at `data`.
fn lz4_sub_blocks(bytes: &[u8], data: u64, stored: u64) -> Vec<(std::ops::Range<u64>, u64)> {
    let mut out = Vec::new();
    let mut pos = data;
    while pos < data + stored {
        let p = pos as usize;
        let n = u64::from(u32::from_be_bytes(bytes[p..p + 4].try_into().unwrap()));
        let decoded = u64::from(u32::from_le_bytes(bytes[p + 4..p + 8].try_into().unwrap()));
        out.push((pos..pos + 4 + n, decoded));
        pos += 4 + n;
    }
    out
}

#[test]
fn a_region_of_an_lz4_image_transfers_the_head_plus_the_sub_blocks_it_spans() {
    let a = image();
    let bytes = image_file(&a, true);
    let server = Server::start();
    server.put("img.asdf", Arc::new(bytes.clone()));
    let reader = Arc::new(StoreReader::open(&server.url("img.asdf"), &opts()).unwrap());
    let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
    let h = file.blocks()[0].clone();
    let head = h.data_offset();
    let subs = lz4_sub_blocks(&bytes, h.data_offset(), h.used_size);
    assert_eq!(subs.len(), (N * N * 4) >> 22, "4 MiB sub-blocks");
    let sel: asdf_core::Selection = CUTOUT.parse().unwrap();
    let got = file.region::<f32>("/sci", &sel).unwrap();
    assert_eq!(got, cutout_of(&a));
    // The decoded bytes the cutout spans: rows 1000..1256, which lie in two sub-blocks.
    let (lo, hi) = ((1000 * N * 4) as u64, (1256 * N * 4) as u64);
    let mut decoded = 0;
    let mut spanned = 0;
    let mut count = 0;
    for (stored, len) in &subs {
        if decoded < hi && decoded + len > lo {
            spanned += stored.end - stored.start;
            count += 1;
        }
        decoded += len;
    }
    assert_eq!(count, 2);
    // Finding them walks the length prefixes: 8 bytes per sub-block, each an exact request.
    let walk = subs.len() as u64 * 8;
    let sent = server.sent_settled(reader.stats().bytes);
    eprintln!(
        "lz4 cutout: sent {sent} bytes in {} requests (head {head}, sub-blocks spanned {spanned})",
        reader.stats().requests
    );
    // Plus what opening reads: the head and the block index at the end, in 64 KiB pages.
    assert!(
        sent <= head + (192 << 10) + walk + spanned,
        "sent {sent} bytes: head {head}, sub-blocks spanned {spanned}, {} sub-blocks",
        subs.len()
    );
    assert_eq!(
        reader.stats().bytes,
        server.sent_settled(reader.stats().bytes)
    );
    let sent = reader.stats().bytes;
    // The sub-block index is kept: a second cutout in the same sub-blocks sends nothing.
    let again = file
        .region::<f32>("/sci", &"1100:1110, 0:4096".parse().unwrap())
        .unwrap();
    assert_eq!(
        again,
        a.slice(ndarray::s![1100..1110, ..]).to_owned().into_dyn()
    );
    assert_eq!(reader.stats().bytes, sent);
}
