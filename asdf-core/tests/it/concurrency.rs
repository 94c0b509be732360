//! `AsdfFile` is `Send + Sync`: one opened file read from 8 threads at once gives what one
//! thread gives; and a reader that opens a file while another process replaces it (write
//! through a temporary file, rename) sees the old file or the new one, whole.

use std::path::Path;
use std::sync::Arc;

use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
use asdf_core::{unstable::canonical, write::Compression, AsdfFile, Node};
use ndarray::{Array1, Array2, ArrayD};

const THREADS: usize = 8;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn asdf_file_is_send_and_sync() {
    assert_send_sync::<AsdfFile>();
    assert_send_sync::<Arc<AsdfFile>>();
}

/// A file with plain, compressed and shared blocks, written with checksums.
fn write_sample(path: &Path, seed: f64) {
    let a = Array2::from_shape_fn((300, 200), |(i, j)| (i * 200 + j) as f64 + seed);
    let b = Array1::from_iter((0..50_000i32).map(|i| i % 1000));
    let c = Array1::from_iter((0..40_000).map(|i| (i as f32).sin()));
    let mut w = Writer::new(WriteOptions::default());
    let na = w.add_array(&a);
    let nb = w.add_array_with(
        &b,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zlib)),
            storage: None,
        },
    );
    let nc = w.add_array_with(
        &c,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Lz4)),
            storage: None,
        },
    );
    let root = Node::map([
        ("a", na),
        ("b", nb),
        ("c", nc),
        ("seed", Node::str(seed.to_string())),
    ]);
    w.write_to_path(&root, path).unwrap();
}

/// Everything one reader can ask of the file.
#[derive(Debug, PartialEq)]
struct Reading {
    a: ArrayD<f64>,
    a_view_sum: f64,
    b: ArrayD<i32>,
    c: ArrayD<f32>,
    canonical: String,
}

fn read_everything(f: &AsdfFile) -> Reading {
    f.verify_checksums().unwrap();
    let view = f.array_view::<f64>("/a").unwrap();
    Reading {
        a: f.array::<f64>("/a").unwrap(),
        a_view_sum: view.sum(),
        b: f.array::<i32>("/b").unwrap(),
        c: f.read_as::<ArrayD<f32>>("/c").unwrap(),
        canonical: canonical::to_json(f).unwrap(),
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("asdf-concurrency-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn eight_threads_read_one_file_as_one_thread_does() {
    let dir = scratch("threads");
    let path = dir.join("s.asdf");
    write_sample(&path, 0.5);
    let expected = read_everything(&AsdfFile::open(&path).unwrap());
    for mmap in [false, true] {
        // Fresh file each time, so the threads race to load (and verify) every block.
        let file = Arc::new(
            AsdfFile::options()
                .mmap(mmap)
                .verify_checksums(true)
                .open(&path)
                .unwrap(),
        );
        let barrier = Arc::new(std::sync::Barrier::new(THREADS));
        let readings: Vec<Reading> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|_| {
                    let file = Arc::clone(&file);
                    let barrier = Arc::clone(&barrier);
                    s.spawn(move || {
                        barrier.wait();
                        read_everything(&file)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (i, r) in readings.iter().enumerate() {
            assert_eq!(r, &expected, "thread {i}, mmap {mmap}");
        }
        // Zero-copy views from several threads point at the same memory.
        if mmap {
            let ptrs: Vec<usize> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..THREADS)
                    .map(|_| {
                        let file = Arc::clone(&file);
                        s.spawn(move || {
                            file.try_view::<f64>("/a").unwrap().unwrap().as_ptr() as usize
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(ptrs.windows(2).all(|w| w[0] == w[1]), "{ptrs:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reader_sees_the_old_or_the_new_file_while_it_is_replaced() {
    let dir = scratch("replace");
    let path = dir.join("r.asdf");
    let old_path = dir.join("old.asdf");
    let new_path = dir.join("new.asdf");
    write_sample(&old_path, 1.0);
    write_sample(&new_path, 2.0);
    let old = canonical::to_json(&AsdfFile::open(&old_path).unwrap()).unwrap();
    let new = canonical::to_json(&AsdfFile::open(&new_path).unwrap()).unwrap();
    assert_ne!(old, new);
    std::fs::copy(&old_path, &path).unwrap();

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (mut saw_old, mut saw_new) = (0usize, 0usize);
    std::thread::scope(|s| {
        // The writer: alternately writes version 2 and version 1 over the path, each time
        // through a temporary file and a rename (as every write of this library does).
        let writer = {
            let stop = Arc::clone(&stop);
            let path = path.clone();
            s.spawn(move || {
                let mut seed = 2.0;
                let mut writes = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    write_sample(&path, seed);
                    seed = 3.0 - seed;
                    writes += 1;
                }
                writes
            })
        };
        for _ in 0..200 {
            let f = AsdfFile::options()
                .verify_checksums(true)
                .open(&path)
                .unwrap();
            let c = canonical::to_json(&f).unwrap();
            if c == old {
                saw_old += 1;
            } else if c == new {
                saw_new += 1;
            } else {
                panic!("a reader saw neither the old nor the new file");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let writes = writer.join().unwrap();
        assert!(
            writes > 1,
            "the writer wrote {writes} times during the reads"
        );
    });
    assert_eq!(saw_old + saw_new, 200);
    let _ = std::fs::remove_dir_all(&dir);
}
