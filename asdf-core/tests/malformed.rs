//! Hostile inputs: asdf-core must return errors, never panic, never abort (stack overflow,
//! allocation failure) and never try to allocate what a file merely claims.
//!
//! Every input goes through `AsdfFile::from_bytes` and then `canonical::to_json`, which forces
//! every block, array, mask and alias to be read. A panic fails the test.

mod common;

use std::path::PathBuf;

use asdf_core::{canonical, AsdfFile};
use proptest::prelude::*;

/// Opens and reads everything. `Ok` only if both steps succeed.
fn read_all(bytes: Vec<u8>) -> Result<String, String> {
    let file = AsdfFile::from_bytes(bytes).map_err(|e| format!("open: {e}"))?;
    canonical::to_json(&file).map_err(|e| format!("read: {e}"))
}

/// The input must be rejected with an error (at open or at read).
#[track_caller]
fn assert_error(what: &str, bytes: Vec<u8>) {
    if let Ok(json) = read_all(bytes) {
        let head: String = json.chars().take(300).collect();
        panic!("{what}: expected an error, got canonical JSON {head}");
    }
}

// ---------------------------------------------------------------------------
// building hostile files
// ---------------------------------------------------------------------------

const HEADER: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

fn tree(body: &str) -> Vec<u8> {
    format!("{HEADER}{body}...\n").into_bytes()
}

/// A 48-byte block header (big-endian fields) followed by `data`.
fn block_with(
    flags: u32,
    compression: &[u8; 4],
    allocated: u64,
    used: u64,
    data_size: u64,
    data: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"\xd3BLK");
    out.extend_from_slice(&48u16.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(compression);
    out.extend_from_slice(&allocated.to_be_bytes());
    out.extend_from_slice(&used.to_be_bytes());
    out.extend_from_slice(&data_size.to_be_bytes());
    out.extend_from_slice(&[0u8; 16]); // no checksum
    out.extend_from_slice(data);
    out
}

fn raw_block(data: &[u8]) -> Vec<u8> {
    let n = data.len() as u64;
    block_with(0, b"\0\0\0\0", n, n, n, data)
}

const FOUR_I32: &[u8] = b"\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00";

fn nd(extra: &str) -> String {
    format!("a: !core/ndarray-1.1.0\n  source: 0\n  datatype: int32\n  byteorder: little\n{extra}")
}

fn with_block(body: &str, block: &[u8]) -> Vec<u8> {
    let mut f = tree(body);
    f.extend_from_slice(block);
    f
}

// ---------------------------------------------------------------------------
// specific hostile inputs
// ---------------------------------------------------------------------------

#[test]
fn sane_baseline_builder() {
    // The builders above make a readable file when nothing is wrong; if this fails once the
    // library works, the hostile variants below would be testing the wrong thing.
    let ok = with_block(&nd("  shape: [4]\n"), &raw_block(FOUR_I32));
    if let Err(e) = read_all(ok) {
        eprintln!("baseline file not readable yet: {e}");
    }
}

#[test]
fn block_claiming_2_pow_60_bytes() {
    let huge = 1u64 << 60;
    let body = nd("  shape: [4]\n");
    assert_error(
        "used_size 2^60",
        with_block(
            &body,
            &block_with(0, b"\0\0\0\0", huge, huge, huge, FOUR_I32),
        ),
    );
    assert_error(
        "allocated 2^60",
        with_block(&body, &block_with(0, b"\0\0\0\0", huge, 16, 16, FOUR_I32)),
    );
    // compressed block whose declared data_size is huge: must not pre-allocate it
    let zlib_small = b"\x78\x9c\x63\x64\x00\x00\x00\x02\x00\x02"; // not checked to be valid
    let n = zlib_small.len() as u64;
    assert_error(
        "zlib data_size 2^60",
        with_block(&body, &block_with(0, b"zlib", n, n, huge, zlib_small)),
    );
    assert_error(
        "u64::MAX sizes",
        with_block(
            &body,
            &block_with(0, b"\0\0\0\0", u64::MAX, u64::MAX, u64::MAX, FOUR_I32),
        ),
    );
    // lz4 chunk claiming a 2^31-byte uncompressed chunk
    let mut lz4 = Vec::new();
    lz4.extend_from_slice(&8u32.to_be_bytes());
    lz4.extend_from_slice(&0x8000_0000u32.to_le_bytes());
    lz4.extend_from_slice(b"\x40\x01\x02\x03");
    let n = lz4.len() as u64;
    assert_error(
        "lz4 chunk 2^31",
        with_block(&body, &block_with(0, b"lz4\0", n, n, 16, &lz4)),
    );
}

#[test]
fn bad_block_headers() {
    let body = nd("  shape: [4]\n");
    let mut small = raw_block(FOUR_I32);
    small[4..6].copy_from_slice(&0u16.to_be_bytes());
    assert_error("header_size 0", with_block(&body, &small));
    let mut big = raw_block(FOUR_I32);
    big[4..6].copy_from_slice(&u16::MAX.to_be_bytes());
    assert_error(
        "header_size 65535 beyond end of file",
        with_block(&body, &big),
    );
    assert_error(
        "unknown compression",
        with_block(&body, &block_with(0, b"abcd", 16, 16, 16, FOUR_I32)),
    );
    assert_error(
        "corrupt zlib",
        with_block(&body, &block_with(0, b"zlib", 16, 16, 16, FOUR_I32)),
    );
    assert_error(
        "corrupt bzp2",
        with_block(&body, &block_with(0, b"bzp2", 16, 16, 16, FOUR_I32)),
    );
    assert_error(
        "corrupt zstd",
        with_block(&body, &block_with(0, b"zstd", 16, 16, 16, FOUR_I32)),
    );
    assert_error(
        "corrupt lz4f",
        with_block(&body, &block_with(0, b"lz4f", 16, 16, 16, FOUR_I32)),
    );
    assert_error(
        "corrupt blsc",
        with_block(&body, &block_with(0, b"blsc", 16, 16, 16, FOUR_I32)),
    );
    assert_error(
        "used > allocated",
        with_block(&body, &block_with(0, b"\0\0\0\0", 8, 16, 16, FOUR_I32)),
    );
    assert_error(
        "truncated header",
        with_block(&body, &raw_block(FOUR_I32)[..30]),
    );
    // a valid zlib stream of 16 bytes but a data_size that disagrees
    let z = zlib_of_four_i32();
    let n = z.len() as u64;
    assert_error(
        "data_size mismatch",
        with_block(&body, &block_with(0, b"zlib", n, n, 1000, &z)),
    );
}

/// zlib (stored, no compression) of FOUR_I32, assembled by hand.
fn zlib_of_four_i32() -> Vec<u8> {
    let mut z = vec![0x78, 0x01, 0x01, 16, 0, !16u8, 0xff];
    z.extend_from_slice(FOUR_I32);
    let (mut a, mut b) = (1u32, 0u32);
    for &x in FOUR_I32 {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    z
}

#[test]
fn bad_shapes_strides_offsets() {
    let block = raw_block(FOUR_I32);
    for (what, extra) in [
        ("negative shape", "  shape: [-1]\n"),
        ("negative shape 2-d", "  shape: [2, -2]\n"),
        ("huge shape", "  shape: [1099511627776, 1099511627776]\n"),
        (
            "overflowing shape",
            "  shape: [4611686018427387904, 4611686018427387904, 4]\n",
        ),
        (
            "beyond-u64 shape",
            "  shape: [123456789012345678901234567890]\n",
        ),
        ("shape bigger than block", "  shape: [5]\n"),
        ("shape not a list", "  shape: 4\n"),
        ("shape of strings", "  shape: [a, b]\n"),
        ("strides out of bounds", "  shape: [4]\n  strides: [4096]\n"),
        (
            "huge strides",
            "  shape: [2]\n  strides: [9223372036854775807]\n",
        ),
        (
            "negative strides before start",
            "  shape: [4]\n  strides: [-4]\n",
        ),
        (
            "strides length mismatch",
            "  shape: [4]\n  strides: [4, 4]\n",
        ),
        ("offset beyond block", "  shape: [4]\n  offset: 1000\n"),
        (
            "offset plus shape beyond block",
            "  shape: [4]\n  offset: 4\n",
        ),
        ("negative offset", "  shape: [4]\n  offset: -4\n"),
        (
            "huge offset",
            "  shape: [1]\n  offset: 18446744073709551615\n",
        ),
        (
            "offset with negative stride overflow",
            "  shape: [3]\n  offset: 12\n  strides: [-9223372036854775808]\n",
        ),
    ] {
        assert_error(what, with_block(&nd(extra), &block));
    }
    for (what, body) in [
        ("source index too large", "a: !core/ndarray-1.1.0\n  source: 99\n  datatype: int32\n  byteorder: little\n  shape: [4]\n"),
        ("source index too negative", "a: !core/ndarray-1.1.0\n  source: -5\n  datatype: int32\n  byteorder: little\n  shape: [4]\n"),
        ("unknown datatype", "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: float128\n  byteorder: little\n  shape: [2]\n"),
        ("huge ascii width", "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: [ascii, 4611686018427387904]\n  byteorder: little\n  shape: [1]\n"),
        ("huge ucs4 width", "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: [ucs4, 4611686018427387904]\n  byteorder: little\n  shape: [1]\n"),
        ("bad byteorder", "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: int32\n  byteorder: middle\n  shape: [4]\n"),
        ("struct field huge subarray", "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: [{name: x, datatype: int8, shape: [4294967296, 4294967296]}]\n  byteorder: little\n  shape: [1]\n"),
        ("mask of wrong shape", "a: !core/ndarray-1.1.0\n  source: 0\n  datatype: int32\n  byteorder: little\n  shape: [4]\n  mask: !core/ndarray-1.1.0\n    source: 0\n    datatype: bool8\n    byteorder: little\n    shape: [17]\n"),
    ] {
        assert_error(what, with_block(body, &block));
    }
}

#[test]
fn bad_inline_arrays() {
    for (what, body) in [
        ("ragged", "a: !core/ndarray-1.1.0 [[1, 2], [3]]\n"),
        ("shape disagrees", "a: !core/ndarray-1.1.0\n  data: [1, 2, 3]\n  datatype: int32\n  shape: [4]\n"),
        ("string for int", "a: !core/ndarray-1.1.0\n  data: [x, y]\n  datatype: int32\n"),
        ("value out of range", "a: !core/ndarray-1.1.0\n  data: [300]\n  datatype: uint8\n"),
        ("non-ascii in ascii", "a: !core/ndarray-1.1.0\n  data: [\"\u{e9}\"]\n  datatype: [ascii, 4]\n"),
        ("both data and source", "a: !core/ndarray-1.1.0\n  data: [1]\n  source: 0\n  datatype: int32\n  byteorder: little\n  shape: [1]\n"),
        ("ndarray is a scalar", "a: !core/ndarray-1.1.0 42\n"),
    ] {
        assert_error(what, tree(body));
    }
}

#[test]
fn deep_nesting() {
    // unterminated: a parse error, reached without recursion 100k deep
    let mut f = tree("");
    f.truncate(f.len() - 4);
    f.extend(vec![b'['; 100_000]);
    f.extend_from_slice(b"\n...\n");
    assert_error("100k unterminated [", f);

    // balanced: either a depth-limit error or a correct read, never a stack overflow
    let mut f = tree("");
    f.truncate(f.len() - 4);
    f.extend_from_slice(b"deep: ");
    f.extend(vec![b'['; 100_000]);
    f.extend(vec![b']'; 100_000]);
    f.extend_from_slice(b"\n...\n");
    let _ = read_all(f);

    // deep block-style mappings
    let mut body = String::new();
    for i in 0..2_000 {
        body.push_str(&" ".repeat(i));
        body.push_str("k:\n");
    }
    let _ = read_all(tree(&body));

    // deep flow mappings and tags
    let mut f = tree("");
    f.truncate(f.len() - 4);
    f.extend_from_slice(b"deep: ");
    for _ in 0..50_000 {
        f.extend_from_slice(b"!x {a: ");
    }
    f.extend(vec![b'}'; 50_000]);
    f.extend_from_slice(b"\n...\n");
    let _ = read_all(f);
}

#[test]
fn billion_laughs() {
    let mut body = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..=9 {
        let prev = format!("*l{}", i - 1);
        let items = [prev.as_str(); 10].join(", ");
        body.push_str(&format!("l{i}: &l{i} [{items}]\n"));
    }
    assert_error("billion laughs", tree(&body));

    // the same with mappings and an ndarray at the bottom
    let mut body = String::from("m0: &m0 {a: !core/ndarray-1.1.0 [1, 2, 3], b: x}\n");
    for i in 1..=12 {
        let p = format!("*m{}", i - 1);
        body.push_str(&format!(
            "m{i}: &m{i} {{a: {p}, b: {p}, c: {p}, d: {p}, e: {p}, f: {p}}}\n"
        ));
    }
    assert_error("billion laughs with maps", tree(&body));
}

#[test]
fn recursive_aliases_do_not_hang() {
    // legal YAML (PyYAML builds recursive objects); canonical form is {"$recursive": true}
    let _ = read_all(tree("a: &a [1, *a]\n"));
    let _ = read_all(tree("m: &m {self: *m, n: 1}\n"));
    let _ = read_all(tree("t: &t !custom-1.0.0 {me: *t}\n"));
    // an alias inside an ndarray pointing at itself
    let _ = read_all(tree(
        "a: &x !core/ndarray-1.1.0 {data: *x, datatype: int8}\n",
    ));
    let _ = read_all(tree("a: &x !core/ndarray-1.1.0 {data: [1], mask: *x}\n"));
    // undefined alias: a parse error
    assert_error("undefined alias", tree("a: *nope\n"));
}

#[test]
fn garbage_after_header() {
    assert_error(
        "binary garbage after #ASDF",
        b"#ASDF 1.0.0\n\xff\xfe\x00\x01garbage\x80\x81".to_vec(),
    );
    assert_error(
        "invalid utf-8 in tree",
        tree("a: \"\u{1}\"\n")
            .into_iter()
            .map(|b| if b == 1 { 0xff } else { b })
            .collect(),
    );
    assert_error(
        "not a version",
        b"#ASDF x.y.z\n%YAML 1.1\n--- {}\n...\n".to_vec(),
    );
    assert_error("#ASDF without newline", b"#ASDF".to_vec());
    assert_error("empty file", Vec::new());
    assert_error("unclosed flow", tree("a: {b: [1, 2\n"));
    assert_error("tab indentation", tree("a:\n\t- 1\n"));
    assert_error(
        "two documents",
        b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n--- {b: 2}\n...\n".to_vec(),
    );
    assert_error(
        "bad %TAG",
        b"#ASDF 1.0.0\n%YAML 1.1\n%TAG !x\n--- {a: 1}\n...\n".to_vec(),
    );
    assert_error("undefined tag handle", tree("a: !undefined!thing 1\n"));

    // not necessarily errors (a lenient reader may accept them), but never a panic
    let mut f = tree("a: 1\n");
    f.extend_from_slice(b"\xd3BLK\x00");
    let _ = read_all(f);
    let _ = read_all(with_block(&nd("  shape: ['*']\n"), &raw_block(FOUR_I32)));
    let _ = read_all(tree(
        "a: !core/ndarray-1.1.0\n  data: [abcdef]\n  datatype: [ascii, 2]\n",
    ));
    let _ = read_all(b"%YAML 1.1\n--- {a: 1}\n".to_vec());
    // no `%YAML 1.1` line (python asdf refuses: "invalid content between header and tree")
    let _ = read_all(
        b"#ASDF 1.0.0\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\na: 1\n...\n".to_vec(),
    );
    // no `...` end marker (python asdf refuses: "end of YAML marker not found")
    let _ = read_all(b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1, 2]}\n".to_vec());
    let _ = read_all(tree("").into_iter().take(60).collect());
}

#[test]
fn wrong_checksum_does_not_panic() {
    // Reading everything with default options (no verification) must not panic; with
    // verification on, `tests/file_api.rs` checks that wrong checksums are typed errors.
    for name in [
        "checksum_wrong",
        "checksum_wrong_zlib",
        "checksum_legacy_zlib",
    ] {
        let path = common::data_dir("layouts").join(format!("{name}.asdf"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let _ = read_all(bytes);
    }
}

// ---------------------------------------------------------------------------
// truncation of every corpus file
// ---------------------------------------------------------------------------

fn corpus_files() -> Vec<PathBuf> {
    let mut files = common::files_with_suffix(&common::data_dir("fixtures"), &[".asdf"]);
    files.extend(common::files_with_suffix(
        &common::data_dir("layouts"),
        &[".asdf"],
    ));
    assert!(files.len() > 50, "corpus missing: {} files", files.len());
    files
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Cut points: dense near the start and around structure markers, spread elsewhere.
fn cut_points(bytes: &[u8]) -> Vec<usize> {
    let n = bytes.len();
    let mut cuts: Vec<usize> = (0..n.min(64)).collect();
    let step = (n / 48).max(1);
    cuts.extend((0..n).step_by(step));
    let mut from = 0;
    while let Some(p) = find(&bytes[from..], b"\xd3BLK") {
        let at = from + p;
        for d in [0usize, 1, 4, 5, 6, 10, 30, 53, 54, 55, 60] {
            cuts.push(at + d);
        }
        from = at + 1;
    }
    for marker in [&b"\n...\n"[..], b"#ASDF BLOCK INDEX", b"\n---", b"%TAG"] {
        if let Some(p) = find(bytes, marker) {
            cuts.extend([p, p + 1, p + 2, p + 3, p + marker.len()]);
        }
    }
    cuts.retain(|&c| c < n);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

#[test]
fn truncated_corpus_files_never_panic() {
    let mut tried = 0usize;
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if bytes.len() > 200_000 {
            continue; // the multi-MiB lz4 fixture: covered by the smaller codec files
        }
        for cut in cut_points(&bytes) {
            let _ = read_all(bytes[..cut].to_vec());
            tried += 1;
        }
    }
    assert!(tried > 1000, "only {tried} truncations tried");
}

#[test]
fn truncation_inside_first_block_is_an_error() {
    // In these python fixtures every block holds array data that the tree uses, so cutting a
    // block short must make reading everything fail.
    let mut checked = 0;
    for path in common::files_with_suffix(&common::data_dir("fixtures"), &[".asdf"]) {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if name.starts_with("stream") || name.starts_with("external") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(tree_end) = find(&bytes, b"\n...\n") else {
            continue;
        };
        let Some(rel) = find(&bytes[tree_end..], b"\xd3BLK") else {
            continue;
        };
        let at = tree_end + rel;
        let Some(used_bytes) = bytes.get(at + 6 + 4 + 4 + 8..at + 6 + 4 + 4 + 16) else {
            continue;
        };
        let used = u64::from_be_bytes(used_bytes.try_into().unwrap_or([0; 8]));
        if used < 2 {
            continue;
        }
        let data_start = at + 6 + 48;
        let half = data_start + usize::try_from(used / 2).unwrap_or(0);
        assert_error(
            &format!("{name} cut inside block data at {half}"),
            bytes[..half].to_vec(),
        );
        assert_error(
            &format!("{name} cut inside block header"),
            bytes[..at + 20].to_vec(),
        );
        checked += 1;
    }
    assert!(checked > 20, "only {checked} fixtures checked");
}

// ---------------------------------------------------------------------------
// property tests
// ---------------------------------------------------------------------------

/// Small corpus files (for mutation), loaded once.
fn small_corpus() -> &'static [Vec<u8>] {
    static CORPUS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        corpus_files()
            .into_iter()
            .filter_map(|p| std::fs::read(p).ok())
            .filter(|b| b.len() <= 16_384)
            .collect()
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize, u8),
    Overwrite(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    /// Overwrites 8 bytes with a big-endian u64 (hits block header size fields).
    PutU64(usize, u64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        3 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Overwrite(i, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, v)| Mutation::Insert(i, v)),
        1 => (any::<usize>(), 1usize..32).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => (any::<usize>(), prop_oneof![Just(u64::MAX), Just(1u64 << 60), Just(0u64), any::<u64>()])
            .prop_map(|(i, v)| Mutation::PutU64(i, v)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len();
    if n == 0 {
        return;
    }
    match m {
        Mutation::FlipBit(i, b) => bytes[i % n] ^= 1 << b,
        Mutation::Overwrite(i, v) => bytes[i % n] = *v,
        Mutation::Truncate(i) => bytes.truncate(i % n),
        Mutation::Insert(i, v) => {
            let at = i % (n + 1);
            bytes.splice(at..at, v.iter().copied());
        }
        Mutation::Delete(i, len) => {
            let at = i % n;
            let end = (at + len).min(n);
            bytes.drain(at..end);
        }
        Mutation::PutU64(i, v) => {
            if n >= 8 {
                let at = i % (n - 7);
                bytes[at..at + 8].copy_from_slice(&v.to_be_bytes());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read_all(bytes);
    }

    #[test]
    fn random_bytes_after_header_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n".to_vec();
        bytes.extend(tail);
        let _ = read_all(bytes);
    }

    #[test]
    fn random_blocks_after_tree_never_panic(
        flags in prop_oneof![Just(0u32), Just(1u32), any::<u32>()],
        label in prop_oneof![Just(*b"\0\0\0\0"), Just(*b"zlib"), Just(*b"bzp2"), Just(*b"lz4\0"),
                             Just(*b"zstd"), Just(*b"lz4f"), Just(*b"blsc")],
        alloc in prop_oneof![0u64..64, any::<u64>()],
        used in prop_oneof![0u64..64, any::<u64>()],
        size in prop_oneof![0u64..64, any::<u64>()],
        data in proptest::collection::vec(any::<u8>(), 0..64),
        shape in proptest::collection::vec(0i64..10, 0..3),
    ) {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let body = nd(&format!("  shape: [{}]\n", dims.join(", ")));
        let _ = read_all(with_block(&body, &block_with(flags, &label, alloc, used, size, &data)));
    }

    #[test]
    fn mutated_corpus_files_never_panic(
        pick in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..8),
    ) {
        let corpus = small_corpus();
        prop_assume!(!corpus.is_empty());
        let mut bytes = corpus[pick % corpus.len()].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let _ = read_all(bytes);
    }
}
