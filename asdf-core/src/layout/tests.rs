use super::*;

const TREE: &[u8] = b"%YAML 1.1\n--- {a: 1}\n...\n";

fn lim() -> LayoutLimits {
    LayoutLimits::default()
}

fn hdr(
    offset: u64,
    header_size: u16,
    flags: u32,
    comp: &[u8; 4],
    alloc: u64,
    used: u64,
    data: u64,
) -> BlockHeader {
    BlockHeader {
        index: 0,
        offset,
        header_size,
        flags,
        compression: *comp,
        allocated_size: alloc,
        used_size: used,
        data_size: data,
        checksum: [0; 16],
    }
}

/// Append an uncompressed block with `payload` and `pad` padding bytes; returns its offset.
fn push_block(file: &mut Vec<u8>, payload: &[u8], pad: u64, header_size: u16) -> u64 {
    let off = file.len() as u64;
    let n = payload.len() as u64;
    file.extend(encode_block_header(&hdr(
        off,
        header_size,
        0,
        &[0; 4],
        n + pad,
        n,
        n,
    )));
    file.extend_from_slice(payload);
    file.resize(file.len() + pad as usize, 0xEE);
    off
}

#[test]
fn block_header_literal_round_trip() {
    let bytes: [u8; 54] = [
        0xd3, b'B', b'L', b'K', 0x00, 0x30, // magic, header_size 48
        0x00, 0x00, 0x00, 0x00, // flags
        b'z', b'l', b'i', b'b', // compression
        0, 0, 0, 0, 0, 0, 0, 0x20, // allocated 32
        0, 0, 0, 0, 0, 0, 0, 0x10, // used 16
        0, 0, 0, 0, 0, 0, 0, 0x40, // data 64
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // md5
    ];
    let h = parse_block_header(&bytes, 100).unwrap();
    assert_eq!(h.offset, 100);
    assert_eq!(h.header_size, 48);
    assert_eq!(h.compression_label(), Some(*b"zlib"));
    assert_eq!((h.allocated_size, h.used_size, h.data_size), (32, 16, 64));
    assert!(h.has_checksum());
    assert!(!h.is_streamed());
    assert_eq!(h.data_offset(), 154);
    assert_eq!(encode_block_header(&h), bytes.to_vec());

    // Too short, bad magic, small header_size.
    assert_eq!(
        parse_block_header(&bytes[..30], 7),
        Err(LayoutError::BlockHeaderTooShort {
            index: 0,
            offset: 7,
            needed: 54,
            available: 30
        })
    );
    assert_eq!(
        parse_block_header(&bytes[..3], 7),
        Err(LayoutError::BlockHeaderTooShort {
            index: 0,
            offset: 7,
            needed: 6,
            available: 3
        })
    );
    assert_eq!(
        parse_block_header(b"XBLK\0\x30", 9),
        Err(LayoutError::BadBlockMagic { offset: 9 })
    );
    let mut small = bytes;
    small[5] = 0x2f;
    assert_eq!(
        parse_block_header(&small, 0),
        Err(LayoutError::HeaderSizeTooSmall {
            index: 0,
            offset: 0,
            header_size: 47
        })
    );
}

#[test]
fn encode_header_honours_header_size() {
    let h = hdr(0, 64, 1, b"lz4\0", 0, 0, 0);
    let e = encode_block_header(&h);
    assert_eq!(e.len(), 70);
    assert_eq!(&e[4..6], &[0, 64]);
    assert!(e[54..].iter().all(|&b| b == 0));
    assert_eq!(parse_block_header(&e, 0).unwrap(), h);
}

#[test]
fn tree_only_unix() {
    let mut f = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n# another comment\n".to_vec();
    let start = f.len() as u64;
    f.extend_from_slice(TREE);
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree, TREE);
    assert_eq!(l.header.asdf_version.as_deref(), Some("1.0.0"));
    assert_eq!(l.header.standard_version.as_deref(), Some("1.6.0"));
    assert_eq!(
        l.header.comments,
        vec!["#ASDF_STANDARD 1.6.0", "# another comment"]
    );
    assert_eq!(l.tree, Some((start, start + TREE.len() as u64)));
    assert!(l.blocks.is_empty());
    assert_eq!(l.block_index, None);
}

#[test]
fn crlf_file_with_block() {
    let mut f =
        b"#ASDF 1.0.0\r\n#ASDF_STANDARD 1.6.0\r\n%YAML 1.1\r\n--- {a: 1}\r\n...\r\n".to_vec();
    let tree_end = f.len();
    let off = push_block(&mut f, b"abcd", 0, 48);
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree, b"%YAML 1.1\r\n--- {a: 1}\r\n...\r\n");
    assert_eq!(l.tree.unwrap().1, tree_end as u64);
    assert_eq!(l.header.standard_version.as_deref(), Some("1.6.0"));
    assert_eq!(l.header.comments, vec!["#ASDF_STANDARD 1.6.0"]);
    assert_eq!(l.blocks.len(), 1);
    assert_eq!(l.blocks[0].offset, off);
    assert_eq!(read_stored(&f, &l.blocks[0]).unwrap(), b"abcd");
}

#[test]
fn tree_end_marker_at_eof_and_not_inside_lines() {
    // `...` inside a line or followed by more text is not the end.
    let f = b"#ASDF 1.0.0\n%YAML 1.1\n---\na: 'x\n...y'\nb: ...\n...".to_vec();
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree, &f[12..]);
    assert_eq!(l.tree, Some((12, f.len() as u64)));
}

#[test]
fn unused_space_and_padded_blocks() {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    f.extend_from_slice(&[b' '; 300]);
    f.extend_from_slice(&[0; 50]);
    let b0 = push_block(&mut f, b"0123456789", 22, 48);
    let b1 = push_block(&mut f, b"xyz", 0, 48);
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree, TREE);
    assert_eq!(l.blocks.len(), 2);
    assert_eq!(l.blocks[0].offset, b0);
    assert_eq!(l.blocks[0].allocated_size, 32);
    assert_eq!(l.blocks[0].used_size, 10);
    assert_eq!(l.blocks[1].offset, b1);
    assert_eq!(l.blocks[1].index, 1);
    assert_eq!(read_stored(&f, &l.blocks[1]).unwrap(), b"xyz");
    let mut buf = [0u8; 10];
    read_stored_into(&f, &l.blocks[0], &mut buf).unwrap();
    assert_eq!(&buf, b"0123456789");
    let mut wrong = [0u8; 3];
    assert_eq!(
        read_stored_into(&f, &l.blocks[0], &mut wrong),
        Err(LayoutError::BufferSize {
            offset: b0,
            expected: 10,
            actual: 3
        })
    );
}

#[test]
fn header_size_64_skips_extra_bytes() {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    let off = push_block(&mut f, b"data", 0, 64);
    push_block(&mut f, b"more", 0, 48);
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.blocks[0].header_size, 64);
    assert_eq!(l.blocks[0].data_offset(), off + 70);
    assert_eq!(read_stored(&f, &l.blocks[0]).unwrap(), b"data");
    assert_eq!(read_stored(&f, &l.blocks[1]).unwrap(), b"more");
}

fn three_blocks() -> (Vec<u8>, Vec<u64>) {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    let offs = vec![
        push_block(&mut f, b"aaaa", 4, 48),
        push_block(&mut f, b"bb", 0, 48),
        push_block(&mut f, b"c", 0, 48),
    ];
    (f, offs)
}

#[test]
fn valid_index_is_used_and_zero_padding_after_it() {
    let (mut f, offs) = three_blocks();
    let index_at = f.len() as u64;
    f.extend(encode_block_index(&offs));
    f.extend_from_slice(&[0; 100]);
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.block_index, Some(index_at));
    assert_eq!(l.blocks.iter().map(|b| b.offset).collect::<Vec<_>>(), offs);
    assert_eq!(read_stored(&f, &l.blocks[2]).unwrap(), b"c");

    // The flow form with CRLF and trailing whitespace is accepted too.
    let (mut f, offs) = three_blocks();
    f.extend_from_slice(
        format!(
            "#ASDF BLOCK INDEX\r\n%YAML 1.1\r\n--- [{}, {}, {}]\r\n...\r\n  \n",
            offs[0], offs[1], offs[2]
        )
        .as_bytes(),
    );
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert!(l.block_index.is_some());
    assert_eq!(l.blocks.len(), 3);
}

#[test]
fn stale_indexes_fall_back_to_walking() {
    let (base, offs) = three_blocks();
    let cases: Vec<Vec<u64>> = vec![
        vec![offs[0] + 1, offs[1] + 1, offs[2] + 1], // tree edited: everything shifted
        vec![offs[0], offs[1] + 3, offs[2]],         // not at block magic
        vec![offs[0], offs[1]],                      // count mismatch (missing last)
        vec![offs[0], offs[2]],                      // missing a middle block
        vec![offs[0], offs[2], offs[1]],             // not increasing
        vec![offs[0], offs[0], offs[1], offs[2]],    // duplicate
        vec![offs[0], offs[0] + 60, offs[1], offs[2]], // overlapping
        vec![offs[1], offs[2]],                      // first offset not the first block
        vec![],                                      // empty
    ];
    for (i, offsets) in cases.into_iter().enumerate() {
        let mut f = base.clone();
        f.extend(encode_block_index(&offsets));
        let (l, _) = read_layout(&f, &lim()).unwrap();
        assert_eq!(l.block_index, None, "case {i}");
        assert_eq!(
            l.blocks.iter().map(|b| b.offset).collect::<Vec<_>>(),
            offs,
            "case {i}"
        );
    }
    // An unparsable index.
    let mut f = base.clone();
    f.extend_from_slice(b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- one\n...\n");
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.block_index, None);
    assert_eq!(l.blocks.len(), 3);
}

#[test]
fn streamed_block_runs_to_eof() {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    push_block(&mut f, b"first", 0, 48);
    let s = f.len() as u64;
    f.extend(encode_block_header(&hdr(
        s,
        48,
        FLAG_STREAMED,
        &[0; 4],
        0,
        0,
        0,
    )));
    f.extend_from_slice(&[9u8; 40]);
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.blocks.len(), 2);
    let b = &l.blocks[1];
    assert!(b.is_streamed());
    assert_eq!((b.allocated_size, b.used_size, b.data_size), (40, 40, 40));
    assert_eq!(read_stored(&f, b).unwrap(), vec![9u8; 40]);
    // Bytes that look like another block inside the stream belong to the stream.
    let mut g = f.clone();
    g.extend(encode_block_header(&hdr(0, 48, 0, &[0; 4], 0, 0, 0)));
    let (l, _) = read_layout(&g, &lim()).unwrap();
    assert_eq!(l.blocks.len(), 2);
    assert_eq!(l.blocks[1].used_size, 40 + 54);
}

#[test]
fn no_tree_blocks_right_after_header() {
    let mut f = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n".to_vec();
    let off = push_block(&mut f, b"payload", 0, 48);
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert!(tree.is_empty());
    assert_eq!(l.tree, None);
    assert_eq!(l.blocks.len(), 1);
    assert_eq!(l.blocks[0].offset, off);
    // Header only.
    let (l, tree) = read_layout(&b"#ASDF 1.0.0\n".to_vec(), &lim()).unwrap();
    assert!(tree.is_empty() && l.tree.is_none() && l.blocks.is_empty());
    let (l, _) = read_layout(&b"#ASDF 1.0.0".to_vec(), &lim()).unwrap();
    assert_eq!(l.header.asdf_version.as_deref(), Some("1.0.0"));
}

#[test]
fn pure_yaml() {
    let f = b"%YAML 1.1\n---\nfoo: bar\n...\n".to_vec();
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.header.asdf_version, None);
    assert_eq!(tree, f);
    assert_eq!(l.tree, Some((0, f.len() as u64)));
    // Without an end marker: the whole text.
    let f = b"# a comment\nfoo: bar\nbaz: [1, 2]\n".to_vec();
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree, b"foo: bar\nbaz: [1, 2]\n");
    assert_eq!(l.header.comments, vec!["# a comment"]);
}

#[test]
fn not_asdf_and_bad_headers() {
    assert_eq!(
        read_layout(&Vec::new(), &lim()),
        Err(LayoutError::NotAsdf { offset: 0 })
    );
    assert_eq!(
        read_layout(&b"\x89PNG\r\n\x1a\n\0\0\0".to_vec(), &lim()),
        Err(LayoutError::NotAsdf { offset: 0 })
    );
    assert_eq!(
        read_layout(&b"#ASDF 1.x.0\n".to_vec(), &lim()),
        Err(LayoutError::BadHeaderLine {
            offset: 0,
            line: "#ASDF 1.x.0".into()
        })
    );
    assert_eq!(
        read_layout(&b"#ASDF\n".to_vec(), &lim()),
        Err(LayoutError::BadHeaderLine {
            offset: 0,
            line: "#ASDF".into()
        })
    );
    assert_eq!(
        read_layout(&b"#ASDF 1.0.0\ngarbage\n".to_vec(), &lim()),
        Err(LayoutError::UnexpectedContent { offset: 12 })
    );
}

#[test]
fn unterminated_tree_before_blocks() {
    let mut f = b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n".to_vec();
    push_block(&mut f, b"x", 0, 48);
    assert_eq!(
        read_layout(&f, &lim()),
        Err(LayoutError::UnterminatedTree { offset: 12 })
    );
}

#[test]
fn a_headed_tree_without_end_marker_is_truncated() {
    // Cut at a line boundary: python asdf says "End of YAML marker not found".
    let f = b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\nb: [1, 2]\n".to_vec();
    assert_eq!(
        read_layout(&f, &lim()),
        Err(LayoutError::TruncatedTree {
            offset: 12,
            file_len: f.len() as u64
        })
    );
    // `..` is not the marker either.
    let f = b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: 1}\n..".to_vec();
    assert!(matches!(
        read_layout(&f, &lim()),
        Err(LayoutError::TruncatedTree { offset: 12, .. })
    ));
    // Without the header it is a plain YAML document, whose marker is optional.
    let f = b"%YAML 1.1\n--- {a: 1}\n".to_vec();
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree, f);
    assert_eq!(l.tree, Some((0, f.len() as u64)));
}

#[test]
fn tree_too_large() {
    let mut f = b"#ASDF 1.0.0\n%YAML 1.1\n---\n".to_vec();
    for _ in 0..2000 {
        f.extend_from_slice(b"key: value\n");
    }
    f.extend_from_slice(b"...\n");
    let small = LayoutLimits {
        max_tree_bytes: 1000,
        max_blocks: 10,
    };
    assert_eq!(
        read_layout(&f, &small),
        Err(LayoutError::TreeTooLarge {
            offset: 12,
            limit: 1000
        })
    );
    assert!(read_layout(&f, &lim()).is_ok());
}

#[test]
fn big_tree_read_in_chunks() {
    let mut f = b"#ASDF 1.0.0\n%YAML 1.1\n---\n".to_vec();
    for i in 0..30_000 {
        f.extend_from_slice(format!("key{i}: value\n").as_bytes());
    }
    f.extend_from_slice(b"...\n");
    let end = f.len();
    f.extend_from_slice(&[b' '; 5000]);
    push_block(&mut f, b"z", 0, 48);
    let (l, tree) = read_layout(&f, &lim()).unwrap();
    assert_eq!(tree.len(), end - 12);
    assert!(tree.ends_with(b"\n...\n"));
    assert_eq!(l.blocks.len(), 1);
}

#[test]
fn truncated_block_header() {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    let off = f.len() as u64;
    let h = encode_block_header(&hdr(0, 48, 0, &[0; 4], 4, 4, 4));
    f.extend_from_slice(&h[..30]);
    assert_eq!(
        read_layout(&f, &lim()),
        Err(LayoutError::BlockHeaderTooShort {
            index: 0,
            offset: off,
            needed: 54,
            available: 30
        })
    );
}

#[test]
fn huge_sizes_are_typed_errors() {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    push_block(&mut f, b"ok", 0, 48);
    let off = f.len() as u64;
    let n = 1u64 << 60;
    f.extend(encode_block_header(&hdr(off, 48, 0, &[0; 4], n, n, n)));
    f.extend_from_slice(b"tiny");
    let file_len = f.len() as u64;
    assert_eq!(
        read_layout(&f, &lim()),
        Err(LayoutError::BlockOutOfBounds {
            index: 1,
            offset: off,
            end: off + 54 + n,
            file_len
        })
    );
    // Overflowing u64.
    let mut g = f[..off as usize].to_vec();
    g.extend(encode_block_header(&hdr(
        off,
        48,
        0,
        &[0; 4],
        u64::MAX,
        1,
        1,
    )));
    assert_eq!(
        read_layout(&g, &lim()),
        Err(LayoutError::BlockOutOfBounds {
            index: 1,
            offset: off,
            end: u64::MAX,
            file_len: off + 54
        })
    );
    // used > allocated, used != data without compression.
    let mut g = f[..off as usize].to_vec();
    g.extend(encode_block_header(&hdr(off, 48, 0, &[0; 4], 2, 3, 3)));
    g.extend_from_slice(b"xyz");
    assert_eq!(
        read_layout(&g, &lim()),
        Err(LayoutError::BadSizes {
            index: 1,
            offset: off,
            allocated: 2,
            used: 3,
            data: 3
        })
    );
    let mut g = f[..off as usize].to_vec();
    g.extend(encode_block_header(&hdr(off, 48, 0, &[0; 4], 3, 3, 5)));
    g.extend_from_slice(b"xyz");
    assert!(matches!(
        read_layout(&g, &lim()),
        Err(LayoutError::BadSizes { .. })
    ));
    // A compressed block may have data != used.
    let mut g = f[..off as usize].to_vec();
    g.extend(encode_block_header(&hdr(
        off,
        48,
        0,
        b"zlib",
        3,
        3,
        1 << 60,
    )));
    g.extend_from_slice(b"xyz");
    assert!(read_layout(&g, &lim()).is_ok());
    // read_stored refuses a hand-made header past the end.
    let bogus = hdr(0, 48, 0, &[0; 4], n, n, n);
    assert!(matches!(
        read_stored(&f, &bogus),
        Err(LayoutError::BlockOutOfBounds { .. })
    ));
}

#[test]
fn last_block_padding_cut_short_is_accepted() {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    let off = f.len() as u64;
    f.extend(encode_block_header(&hdr(off, 48, 0, &[0; 4], 20, 4, 4)));
    f.extend_from_slice(b"abcd");
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.blocks[0].allocated_size, 4);
    assert_eq!(read_stored(&f, &l.blocks[0]).unwrap(), b"abcd");
    // Nor when the claim could not fit in any file this size (a corrupt header).
    let mut g = b"#ASDF 1.0.0\n".to_vec();
    g.extend_from_slice(TREE);
    g.extend(encode_block_header(&hdr(
        off,
        48,
        0,
        &[0; 4],
        1 << 60,
        4,
        4,
    )));
    g.extend_from_slice(b"abcd");
    assert!(matches!(
        read_layout(&g, &lim()),
        Err(LayoutError::BlockOutOfBounds { .. })
    ));
    // But not when the used bytes are missing.
    f.truncate(f.len() - 1);
    assert_eq!(
        read_layout(&f, &lim()),
        Err(LayoutError::BlockOutOfBounds {
            index: 0,
            offset: off,
            end: off + 74,
            file_len: off + 57
        })
    );
}

#[test]
fn too_many_blocks() {
    let (f, _) = three_blocks();
    let l = LayoutLimits {
        max_tree_bytes: 1 << 20,
        max_blocks: 2,
    };
    assert!(matches!(
        read_layout(&f, &l),
        Err(LayoutError::TooManyBlocks { limit: 2, .. })
    ));
}

#[test]
fn trailing_garbage_after_blocks_is_ignored() {
    let (mut f, offs) = three_blocks();
    f.extend_from_slice(b"junk at the end");
    let (l, _) = read_layout(&f, &lim()).unwrap();
    assert_eq!(l.blocks.iter().map(|b| b.offset).collect::<Vec<_>>(), offs);
}

fn many_blocks(n: usize, with_index: bool) -> (Vec<u8>, Vec<u64>) {
    let mut f = b"#ASDF 1.0.0\n".to_vec();
    f.extend_from_slice(TREE);
    let payload = [7u8; 300];
    let offs: Vec<u64> = (0..n)
        .map(|_| push_block(&mut f, &payload, 0, 48))
        .collect();
    if with_index {
        f.extend(encode_block_index(&offs));
    }
    (f, offs)
}

#[test]
fn ten_thousand_blocks_with_and_without_index() {
    for with_index in [true, false] {
        let (f, offs) = many_blocks(10_000, with_index);
        let (l, _) = read_layout(&f, &lim()).unwrap();
        assert_eq!(l.blocks.len(), 10_000);
        assert_eq!(l.block_index.is_some(), with_index);
        assert_eq!(l.blocks[9_999].offset, offs[9_999]);
    }
}

/// Counts the reads, to check headers are read through a window.
struct Counting(Vec<u8>, std::sync::atomic::AtomicUsize);

impl ReadAt for Counting {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.0.read_exact_at(buf, offset)
    }
}

#[test]
fn few_reads_for_many_small_blocks() {
    for with_index in [true, false] {
        let (f, _) = many_blocks(10_000, with_index);
        let c = Counting(f, Default::default());
        let (l, _) = read_layout(&c, &lim()).unwrap();
        assert_eq!(l.blocks.len(), 10_000);
        let reads = c.1.load(std::sync::atomic::Ordering::Relaxed);
        assert!(reads < 20, "{reads} reads");
    }
}

/// Timing of the 10k-block open; run with `--release --features dev-tools -- --nocapture`.
#[test]
#[cfg(feature = "dev-tools")]
fn time_ten_thousand_blocks() {
    for with_index in [true, false] {
        let (f, _) = many_blocks(10_000, with_index);
        let path =
            std::env::temp_dir().join(format!("asdf-10k-{}-{with_index}", std::process::id()));
        std::fs::write(&path, &f).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let t = std::time::Instant::now();
        let mut n = 0;
        for _ in 0..100 {
            n += read_layout(&file, &lim()).unwrap().0.blocks.len();
        }
        eprintln!(
            "index={with_index}: {:?} per read_layout ({n})",
            t.elapsed() / 100
        );
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn reference_files() {
    let Some(dir) = asdf_test_data::require_dir(asdf_test_data::REFERENCE_FILES) else {
        return;
    };
    let mut count = 0;
    for ver in std::fs::read_dir(&dir).unwrap() {
        let ver = ver.unwrap().path();
        if !ver.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&ver).unwrap() {
            let p = entry.unwrap().path();
            let ext = p.extension().and_then(|e| e.to_str());
            if ext != Some("asdf") && ext != Some("yaml") {
                continue;
            }
            let file = std::fs::File::open(&p).unwrap();
            let (l, tree) =
                read_layout(&file, &lim()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p.file_name().unwrap().to_str().unwrap();
            if name != "exploded0000.asdf" {
                assert!(tree.starts_with(b"%YAML 1.1"), "{}", p.display());
                assert!(tree.ends_with(b"\n...\n"), "{}", p.display());
            }
            for b in &l.blocks {
                assert!(read_stored(&file, b).is_ok());
            }
            if ver.ends_with("1.6.0") {
                match name {
                    "stream.asdf" => {
                        let last = l.blocks.last().unwrap();
                        assert!(last.is_streamed());
                        assert!(last.used_size > 0);
                    }
                    "basic.asdf" => {
                        assert!(l.block_index.is_some());
                        assert_eq!(l.blocks.len(), 1);
                        assert_eq!(l.blocks[0].used_size, 64);
                    }
                    "compressed.asdf" => {
                        let labels: Vec<_> = l.blocks.iter().map(|b| b.compression).collect();
                        assert!(labels.contains(b"zlib") && labels.contains(b"bzp2"));
                    }
                    _ => {}
                }
                assert_eq!(l.header.asdf_version.as_deref(), Some("1.0.0"));
                assert_eq!(l.header.standard_version.as_deref(), Some("1.6.0"));
            }
            count += 1;
        }
    }
    assert_eq!(count, asdf_test_data::REFERENCE_FILE_COUNT);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn valid_file() -> Vec<u8> {
        let (mut f, offs) = three_blocks();
        f.extend(encode_block_index(&offs));
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = read_layout(&bytes, &lim());
            let mut with_header = b"#ASDF 1.0.0\n".to_vec();
            with_header.extend_from_slice(&bytes);
            let _ = read_layout(&with_header, &lim());
            let mut with_block = b"#ASDF 1.0.0\n".to_vec();
            with_block.extend_from_slice(&BLOCK_MAGIC);
            with_block.extend_from_slice(&bytes);
            if let Ok((l, _)) = read_layout(&with_block, &lim()) {
                for b in &l.blocks {
                    prop_assert!(read_stored(&with_block, b).is_ok());
                }
            }
        }

        #[test]
        fn mutated_files_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut f = valid_file();
            for (at, v) in edits {
                let i = at.index(f.len());
                f[i] = v;
            }
            let keep = f.len() - cut.index(f.len() / 4);
            f.truncate(keep);
            if let Ok((l, tree)) = read_layout(&f, &lim()) {
                if let Some((s, e)) = l.tree {
                    prop_assert_eq!(&f[s as usize..e as usize], &tree[..]);
                }
                for b in &l.blocks {
                    prop_assert!(b.end_offset() <= f.len() as u64);
                    prop_assert!(read_stored(&f, b).is_ok());
                }
            }
        }
    }
}

/// The lazy read of a file whose index is `offsets`: the layout, and the lazy headers.
fn lazy_layout(f: &[u8]) -> (Layout, Option<blocks::LazyBlocks>) {
    let (l, _, lazy) = read_layout_lazy(&f, &lim()).unwrap();
    (l, lazy)
}

#[test]
fn lazy_headers_from_a_valid_index_read_only_what_is_used() {
    let (f, offs) = many_blocks(10_000, true);
    let eager = read_layout(&f, &lim()).unwrap().0;
    let c = Counting(f.clone(), Default::default());
    let (l, _, lazy) = read_layout_lazy(&c, &lim()).unwrap();
    let lazy = lazy.expect("a valid index is used lazily");
    assert!(l.blocks.is_empty());
    assert_eq!(l.block_index, eager.block_index);
    assert_eq!(lazy.len(), 10_000);
    // The tree, the index (two tail reads) and the first and last headers (each a header
    // and a look past its end): a few reads, not a walk over 10,000 headers.
    let at_open = c.1.load(std::sync::atomic::Ordering::Relaxed);
    assert!(at_open <= 10, "{at_open} reads at open");
    let h = lazy.header(&c, 5000).unwrap();
    assert_eq!(*h, eager.blocks[5000]);
    assert_eq!(h.offset, offs[5000]);
    let after = c.1.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        after - at_open <= 3,
        "{} reads for one header",
        after - at_open
    );
    // Read once: the second ask reads nothing.
    assert_eq!(*lazy.header(&c, 5000).unwrap(), eager.blocks[5000]);
    assert_eq!(c.1.load(std::sync::atomic::Ordering::Relaxed), after);
    for i in [0, 1, 9_998, 9_999] {
        assert_eq!(*lazy.header(&c, i).unwrap(), eager.blocks[i]);
    }
    assert!(matches!(
        lazy.header(&c, 10_000),
        Err(LayoutError::IndexMismatch { index: 10_000, .. })
    ));
    // All of them: through large windows, a few reads.
    let before = c.1.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(lazy.all(&c), (eager.blocks.clone(), None));
    let reads = c.1.load(std::sync::atomic::Ordering::Relaxed) - before;
    assert!(reads < 20, "{reads} reads for every header");
}

#[test]
fn lazy_headers_without_a_usable_index_are_located_at_open() {
    let (base, offs) = three_blocks();
    // No index: walked.
    let (l, lazy) = lazy_layout(&base);
    assert!(lazy.is_none());
    assert_eq!(l.blocks.iter().map(|b| b.offset).collect::<Vec<_>>(), offs);
    // Implausible indexes, or first or last block not as the index says: the eager path
    // (which walks, since these indexes disagree with the blocks).
    let cases: Vec<Vec<u64>> = vec![
        vec![offs[0] + 1, offs[1] + 1, offs[2] + 1], // shifted: first offset wrong
        vec![offs[0], offs[2], offs[1]],             // not increasing
        vec![offs[0], offs[0], offs[1], offs[2]],    // duplicate
        vec![offs[0], offs[0] + 10, offs[2]],        // closer than a block header
        vec![offs[1], offs[2]],                      // first offset not the first block
        vec![offs[0], offs[1]],                      // last block followed by another
        vec![offs[0], offs[1], offs[2] + 3],         // last not at block magic
        vec![offs[0], offs[1], offs[2], u64::MAX - 10], // past the index
        vec![],                                      // empty
    ];
    for (i, offsets) in cases.into_iter().enumerate() {
        let mut f = base.clone();
        f.extend(encode_block_index(&offsets));
        let (l, lazy) = lazy_layout(&f);
        assert!(lazy.is_none(), "case {i}");
        assert_eq!(l.block_index, None, "case {i}");
        assert_eq!(
            l.blocks.iter().map(|b| b.offset).collect::<Vec<_>>(),
            offs,
            "case {i}"
        );
    }
    // A valid index but a legacy (0.1.0) file: walked as legacy files are.
    let (l, lazy) = lazy_layout(b"#ASDF 0.1.0\n%YAML 1.1\n--- {a: 1}\n...\n");
    assert!(lazy.is_none() && l.blocks.is_empty());
}

#[test]
fn lazy_headers_that_disagree_with_the_index_are_typed_errors_when_used() {
    // Four blocks; the index is plausible and right about the first and last.
    let mut base = b"#ASDF 1.0.0\n".to_vec();
    base.extend_from_slice(TREE);
    let offs: Vec<u64> = (0..4)
        .map(|_| push_block(&mut base, &[9u8; 100], 0, 48))
        .collect();
    let with_index = |offsets: &[u64], patch: &dyn Fn(&mut Vec<u8>)| {
        let mut f = base.clone();
        patch(&mut f);
        f.extend(encode_block_index(offsets));
        f
    };
    let eager = read_layout(&base, &lim()).unwrap().0.blocks;
    // The third offset points into block 1's data (no magic there), and the index misses
    // block 2.
    let f = with_index(&[offs[0], offs[1], offs[1] + 60, offs[3]], &|_| {});
    let lazy = lazy_layout(&f).1.unwrap();
    assert_eq!(
        lazy.header(&f, 2),
        Err(LayoutError::BadBlockMagic {
            offset: offs[1] + 60
        })
    );
    // All the headers: those before the first that disagrees, and its error.
    assert_eq!(
        lazy.all(&f),
        (
            eager[..1].to_vec(),
            Some(LayoutError::IndexMismatch {
                index: 1,
                offset: offs[1],
                reason: "the block runs past the next offset of the index"
            })
        )
    );
    // Block 1 then runs past the next offset.
    assert_eq!(
        lazy.header(&f, 1),
        Err(LayoutError::IndexMismatch {
            index: 1,
            offset: offs[1],
            reason: "the block runs past the next offset of the index"
        })
    );
    assert_eq!(*lazy.header(&f, 0).unwrap(), eager[0]);
    // The index misses block 2: block 1 is followed by a block it does not name.
    let f = with_index(&[offs[0], offs[1], offs[3]], &|_| {});
    let lazy = lazy_layout(&f).1.unwrap();
    assert_eq!(
        lazy.header(&f, 1),
        Err(LayoutError::IndexMismatch {
            index: 1,
            offset: offs[1],
            reason: "a block follows that the index does not name"
        })
    );
    // Block 2's header is corrupt (header_size 2) and claims a size past the file.
    let f = with_index(&offs, &|f| {
        let at = usize::try_from(offs[2]).unwrap();
        f[at + 4..at + 6].copy_from_slice(&2u16.to_be_bytes());
    });
    let lazy = lazy_layout(&f).1.unwrap();
    assert!(matches!(
        lazy.header(&f, 2),
        Err(LayoutError::HeaderSizeTooSmall { index: 2, .. })
    ));
    assert_eq!(*lazy.header(&f, 1).unwrap(), eager[1]);
    let f = with_index(&offs, &|f| {
        let at = usize::try_from(offs[2]).unwrap();
        f[at + 14..at + 22].copy_from_slice(&u64::MAX.to_be_bytes()); // allocated
    });
    let lazy = lazy_layout(&f).1.unwrap();
    assert!(matches!(
        lazy.header(&f, 2),
        Err(LayoutError::BadSizes { index: 2, .. } | LayoutError::BlockOutOfBounds { index: 2, .. })
    ));
    // A streamed block in the middle.
    let f = with_index(&offs, &|f| {
        let at = usize::try_from(offs[1]).unwrap();
        f[at + 6..at + 10].copy_from_slice(&FLAG_STREAMED.to_be_bytes());
    });
    let lazy = lazy_layout(&f).1.unwrap();
    assert!(matches!(
        lazy.header(&f, 1),
        Err(LayoutError::IndexMismatch { index: 1, .. })
    ));
}
