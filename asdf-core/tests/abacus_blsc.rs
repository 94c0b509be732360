//! abacusutils' `blsc` blocks (`[u32 big-endian n][Blosc1 chunk of n bytes]` per 4 MiB piece),
//! made by `tests/data/other-labels/generate_abacus.py` with python-blosc 1.11.4 framed as
//! abacusutils' `BloscCompressor` frames them: read as numpy holds the arrays (whole, as a
//! stream, by region across pieces), told apart from one plain Blosc1 chunk by their sizes,
//! and damaged framings are typed errors.

use std::io::Read;

use asdf_core::array::{ByteOrder, DType, DynArray};
use asdf_core::unstable::codec::{decode, CodecError, Compression};
use asdf_core::unstable::{decoder_at, encode};
use asdf_core::{AsdfFile, Selection};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

fn fixture() -> Option<(AsdfFile, Json, Vec<u8>)> {
    let path = asdf_test_data::require("other-labels/abacus_blsc.asdf")?;
    let side = asdf_test_data::require("other-labels/abacus_blsc.values.json")?;
    let side: Json = serde_json::from_slice(&std::fs::read(side).unwrap()).unwrap();
    let file = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    Some((file, side, std::fs::read(&path).unwrap()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn little_endian_bytes(a: &DynArray) -> Vec<u8> {
    match &a.dtype {
        DType::Scalar {
            byteorder: ByteOrder::Big,
            ..
        } => {
            let n = a.dtype.itemsize();
            a.data
                .chunks(n)
                .flat_map(|c| c.iter().rev().copied())
                .collect()
        }
        _ => a.data.clone(),
    }
}

fn stored<'a>(bytes: &'a [u8], file: &AsdfFile, block: usize) -> &'a [u8] {
    let h = &file.blocks()[block];
    &bytes[h.data_offset() as usize..][..h.used_size as usize]
}

#[test]
fn abacus_blocks_read_as_numpy_holds() {
    let Some((file, side, bytes)) = fixture() else {
        return;
    };
    file.verify_checksums().unwrap();
    let arrays = side["arrays"].as_object().unwrap();
    assert_eq!(arrays.len(), 4);
    for (key, want) in arrays {
        let got = file.dyn_array(&format!("/{key}")).unwrap();
        assert_eq!(got.dtype.to_numpy_str(), want["datatype"], "{key}");
        let shape: Vec<usize> = serde_json::from_value(want["shape"].clone()).unwrap();
        assert_eq!(got.shape, shape, "{key}");
        assert_eq!(
            hex(&Sha256::digest(little_endian_bytes(&got))),
            want["sha256_le"],
            "{key}"
        );
    }
    // the blocks are abacusutils' framing with the pieces the generator saw
    let blocks = side["blocks"].as_array().unwrap();
    assert_eq!(file.blocks().len(), blocks.len());
    for (i, want) in blocks.iter().enumerate() {
        let s = stored(&bytes, &file, i);
        let mut at = 0usize;
        let mut lengths = Vec::new();
        while at < s.len() {
            let n = u32::from_be_bytes(s[at..at + 4].try_into().unwrap()) as usize;
            lengths.push(n as u64);
            at += 4 + n;
        }
        let want: Vec<u64> = serde_json::from_value(want["pieces"].clone()).unwrap();
        assert_eq!(lengths, want, "block {i}");
    }
}

#[test]
fn streams_and_regions_cross_the_pieces() {
    let Some((file, _, bytes)) = fixture() else {
        return;
    };
    for i in 0..file.blocks().len() {
        let h = &file.blocks()[i];
        let s = stored(&bytes, &file, i);
        let whole = decode(Compression::Blsc, s, h.data_size).unwrap();
        let mut streamed = Vec::new();
        decoder_at(Compression::Blsc, s, h.data_size)
            .unwrap()
            .read_to_end(&mut streamed)
            .unwrap();
        assert!(streamed == whole, "block {i}: the stream differs");
    }
    // 4 MiB pieces of int64: element 524288 starts the second piece
    let all = file.array::<i64>("/i8_10mib").unwrap();
    let sel: Selection = "524280:524300".parse().unwrap();
    let part = file.region::<i64>("/i8_10mib", &sel).unwrap();
    assert_eq!(
        part.iter().copied().collect::<Vec<_>>(),
        all.as_slice().unwrap()[524280..524300]
    );
    // the last element, from the short third piece
    let last = file
        .region::<i64>("/i8_10mib", &"-1".parse().unwrap())
        .unwrap();
    assert_eq!(last.iter().next(), all.iter().last());
}

#[test]
fn one_piece_is_told_from_one_plain_chunk() {
    let Some((file, _, bytes)) = fixture() else {
        return;
    };
    // block 1 is one piece: its 4-byte length, then a Blosc1 chunk that is a plain `blsc`
    // block on its own; both forms decode to the same bytes
    let h = &file.blocks()[1];
    let s = stored(&bytes, &file, 1);
    assert_eq!(
        u32::from_be_bytes(s[..4].try_into().unwrap()) as usize,
        s.len() - 4
    );
    let framed = decode(Compression::Blsc, s, h.data_size).unwrap();
    let plain = decode(Compression::Blsc, &s[4..], h.data_size).unwrap();
    assert!(framed == plain);
    // and our own one-chunk blocks still read as one chunk
    let data: Vec<u8> = (0..50_000u32).flat_map(|v| (v / 7).to_le_bytes()).collect();
    let ours = encode(Compression::Blsc, &data, None).unwrap();
    assert_eq!(
        decode(Compression::Blsc, &ours, data.len() as u64).unwrap(),
        data
    );
}

#[test]
fn damaged_framings_are_typed_errors() {
    let Some((file, _, bytes)) = fixture() else {
        return;
    };
    let h = &file.blocks()[0];
    let s = stored(&bytes, &file, 0).to_vec();
    let size = h.data_size;
    let corrupt = |r: Result<Vec<u8>, CodecError>| match r {
        Err(CodecError::Corrupt { codec, message }) => {
            assert_eq!(codec, "blsc");
            message
        }
        other => panic!("{:?}", other.map(|v| v.len())),
    };
    // a piece length one byte longer: the next length lands inside a chunk
    let mut longer = s.clone();
    let n = u32::from_be_bytes(longer[..4].try_into().unwrap());
    longer[..4].copy_from_slice(&(n + 1).to_be_bytes());
    let m = corrupt(decode(Compression::Blsc, &longer, size));
    assert!(m.contains("abacusutils"), "{m}");
    // cut inside the last piece
    let m = corrupt(decode(Compression::Blsc, &s[..s.len() - 10], size));
    assert!(m.contains("ends past"), "{m}");
    // the pieces decode to other than the block's size
    let m = corrupt(decode(Compression::Blsc, &s, size + 8));
    assert!(m.contains("decode to"), "{m}");
    // the same through the streaming decoder: an error, never a panic
    for bad in [&longer[..], &s[..s.len() - 10]] {
        let mut out = Vec::new();
        let r = decoder_at(Compression::Blsc, bad, size)
            .unwrap()
            .read_to_end(&mut out);
        assert!(r.is_err());
    }
    // every cut of a one-piece block is an error or the right bytes, never a panic
    let one = stored(&bytes, &file, 1);
    let want = decode(Compression::Blsc, one, file.blocks()[1].data_size).unwrap();
    for cut in 0..one.len() {
        if let Ok(v) = decode(Compression::Blsc, &one[..cut], file.blocks()[1].data_size) {
            assert!(v == want);
        }
    }
}
