//! Progress reports of encoding and decoding frames: one per chunk, `done` rising to the
//! total, from every decoding path (in parallel and on the calling thread alone).

use std::sync::{Arc, Mutex};

use asdf_blosc2::{b2nd_frame, b2nd_frame_with_progress, B2nd, CParams, Frame, Progress};

type Seen = Arc<Mutex<Vec<(u64, u64)>>>;

fn recorder() -> (Seen, Progress) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let progress = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
    (seen, progress)
}

/// Reports rise strictly, all with `total`, the last at `total`; their number.
fn check(seen: &Seen, total: u64) -> usize {
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert!(seen.iter().all(|&(_, t)| t == total), "{seen:?}");
    assert_eq!(seen.last(), Some(&(total, total)), "{seen:?}");
    seen.len()
}

/// A 100 x 8 array of 2-byte items, its bytes and the frame's description.
fn array(chunkshape: Vec<u64>, blockshape: Vec<u64>) -> (B2nd, Vec<u8>, CParams) {
    let nd = B2nd {
        shape: vec![100, 8],
        chunkshape,
        blockshape,
        dtype: "<u2".into(),
    };
    let data: Vec<u8> = (0..800u16).flat_map(u16::to_le_bytes).collect();
    let p = CParams {
        typesize: 2,
        ..CParams::default()
    };
    (nd, data, p)
}

fn decode_with_threads(threads: usize, f: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f);
}

#[test]
fn encoding_reports_each_chunk_up_to_the_array_size() {
    let (nd, data, p) = array(vec![16, 8], vec![4, 8]);
    let (seen, progress) = recorder();
    let with = b2nd_frame_with_progress(&nd, &data, &p, &[], &progress).unwrap();
    // 100 rows in chunks of 16: 7 chunks
    assert_eq!(check(&seen, 1600), 7);
    assert_eq!(seen.lock().unwrap()[0], (16 * 8 * 2, 1600));
    // the same frame as without progress
    assert_eq!(with, b2nd_frame(&nd, &data, &p, &[]).unwrap());
}

#[test]
fn decoding_whole_rows_reports_each_chunk_on_one_thread_and_on_several() {
    let (nd, data, p) = array(vec![16, 8], vec![4, 8]);
    let bytes = b2nd_frame(&nd, &data, &p, &[]).unwrap();
    for threads in [1, 3] {
        decode_with_threads(threads, || {
            let (seen, progress) = recorder();
            let frame = Frame::parse(&bytes).unwrap().with_progress(progress);
            assert_eq!(frame.b2nd_array(&nd).unwrap(), data);
            assert_eq!(check(&seen, 1600), 7, "{threads} threads");

            // rows 10..50 lie in chunks 0 to 3: 40 rows of 16 bytes
            let (seen, progress) = recorder();
            let frame = Frame::parse(&bytes).unwrap().with_progress(progress);
            let rows = frame.b2nd_rows(&nd, 10..50).unwrap();
            assert_eq!(rows, data[10 * 16..50 * 16]);
            assert_eq!(check(&seen, 40 * 16), 4, "{threads} threads");

            let (seen, progress) = recorder();
            let frame = Frame::parse(&bytes).unwrap().with_progress(progress);
            let all = frame.decode_all().unwrap();
            assert_eq!(all.len() as u64, frame.nbytes);
            assert_eq!(check(&seen, frame.nbytes), 7, "{threads} threads");
        });
    }
}

#[test]
fn decoding_chunks_of_partial_rows_reports_each_chunk() {
    // chunks of 16 rows by 3 columns: not whole rows, decoded chunk by chunk and scattered
    let (nd, data, p) = array(vec![16, 3], vec![4, 3]);
    let bytes = b2nd_frame(&nd, &data, &p, &[]).unwrap();
    let (seen, progress) = recorder();
    let frame = Frame::parse(&bytes).unwrap().with_progress(progress);
    assert_eq!(frame.b2nd_array(&nd).unwrap(), data);
    // 7 chunks down, 3 across
    assert_eq!(check(&seen, 1600), 21);

    let (seen, progress) = recorder();
    let frame = Frame::parse(&bytes).unwrap().with_progress(progress);
    assert_eq!(
        frame.b2nd_rows(&nd, 20..30).unwrap(),
        data[20 * 16..30 * 16]
    );
    // rows 20..30 lie in the second chunk row (16..32): 3 chunks
    assert_eq!(check(&seen, 10 * 16), 3);
}
