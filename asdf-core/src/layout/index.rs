//! The block index at the end of a file: finding it, parsing it by hand, writing it.

use super::{LayoutError, ReadAt, BLOCK_INDEX_HEADER};

/// First tail read when looking for the index.
const TAIL_CHUNK: u64 = 64 << 10;

/// Encode a block index exactly as python asdf writes it:
/// `#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 664\n...\n`.
pub fn encode_block_index(offsets: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + offsets.len() * 12);
    out.extend_from_slice(BLOCK_INDEX_HEADER);
    out.extend_from_slice(b"\n%YAML 1.1\n---\n");
    for o in offsets {
        out.extend_from_slice(b"- ");
        out.extend_from_slice(o.to_string().as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"...\n");
    out
}

/// Bytes that may appear in a block index text.
fn index_char(b: u8) -> bool {
    b.is_ascii_digit()
        || b.is_ascii_whitespace()
        || b.is_ascii_uppercase()
        || matches!(
            b,
            b'-' | b',' | b'[' | b']' | b'.' | b'%' | b'#' | b'_' | b'+' | 0
        )
}

/// Find the block index by reading backwards from the end of the file, not before `min`.
/// Returns its offset and the bytes after the `#ASDF BLOCK INDEX` marker. Reading backwards
/// continues only while the bytes read can belong to an index, so a file without one costs
/// one small read.
pub(crate) fn find_index(
    src: &dyn ReadAt,
    file_len: u64,
    min: u64,
    max_bytes: u64,
) -> Result<Option<(u64, Vec<u8>)>, LayoutError> {
    if file_len <= min {
        return Ok(None);
    }
    let mut start = file_len.saturating_sub(TAIL_CHUNK).max(min);
    let mut buf = read_range(src, start, file_len)?;
    let mut checked_from = buf.len();
    loop {
        if let Some(p) = rfind(&buf, BLOCK_INDEX_HEADER) {
            let text = buf.split_off(p + BLOCK_INDEX_HEADER.len());
            return Ok(Some((start + p as u64, text)));
        }
        // Only the newly read bytes (plus the marker's length of overlap) need checking.
        let fresh = buf
            .get(
                ..checked_from
                    .saturating_add(BLOCK_INDEX_HEADER.len())
                    .min(buf.len()),
            )
            .unwrap_or_default();
        if start <= min || !fresh.iter().all(|&b| index_char(b)) {
            return Ok(None);
        }
        if file_len - start >= max_bytes {
            return Ok(None);
        }
        let new_start = start
            .saturating_sub((file_len - start).max(TAIL_CHUNK))
            .max(min);
        let mut more = read_range(src, new_start, start)?;
        checked_from = more.len();
        more.extend_from_slice(&buf);
        buf = more;
        start = new_start;
    }
}

fn read_range(src: &dyn ReadAt, start: u64, end: u64) -> Result<Vec<u8>, LayoutError> {
    let n = usize::try_from(end.saturating_sub(start)).map_err(|_| {
        LayoutError::TooLargeForPlatform {
            offset: start,
            size: end.saturating_sub(start),
        }
    })?;
    let mut v = vec![0u8; n];
    src.read_exact_at(&mut v, start)
        .map_err(|e| LayoutError::io(start, &e))?;
    Ok(v)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut end = hay.len();
    while let Some(i) = hay.get(..end)?.iter().rposition(|&b| b == first) {
        if hay.get(i + 1..i + needle.len()) == Some(rest) {
            return Some(i);
        }
        end = i;
    }
    None
}

fn parse_int(text: &[u8]) -> Option<u64> {
    let t = text.trim_ascii();
    let t = t.strip_prefix(b"+").unwrap_or(t);
    if t.is_empty() {
        return None;
    }
    t.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit()
            .then_some(())
            .and_then(|()| acc.checked_mul(10)?.checked_add(u64::from(b - b'0')))
    })
}

/// Parse the YAML text after the `#ASDF BLOCK INDEX` marker: a list of integers, as a block
/// sequence (`- 664` lines) or a flow sequence (`[664, 1000]`), optionally preceded by
/// `%` directives and `---`, optionally ended by `...`, then zero bytes or whitespace.
/// `None` when the text is anything else.
pub(crate) fn parse_index(text: &[u8], max_entries: usize) -> Option<Vec<u64>> {
    // The marker must be on its own line.
    let text = text
        .strip_prefix(b"\r\n")
        .or_else(|| text.strip_prefix(b"\n"))?;
    let end = text
        .iter()
        .rposition(|&b| b != 0 && !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let text = text.get(..end)?;
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    // Directives, then `---`.
    let mut content: Vec<&[u8]> = Vec::new();
    let mut started = false;
    for line in lines.by_ref() {
        if !started {
            if line.starts_with(b"%") || line.trim_ascii().is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix(b"---") {
                if !rest.is_empty() && !rest.starts_with(b" ") && !rest.starts_with(b"\t") {
                    return None;
                }
                started = true;
                if !rest.trim_ascii().is_empty() {
                    content.push(rest);
                }
                continue;
            }
            // A bare document without `---`.
            started = true;
        }
        if line == b"..." {
            break;
        }
        content.push(line);
    }
    if !started || lines.any(|l| !l.trim_ascii().is_empty()) {
        return None;
    }
    let mut out = Vec::new();
    let is_flow = content
        .iter()
        .find(|l| !l.trim_ascii().is_empty())
        .is_some_and(|l| l.trim_ascii().starts_with(b"["));
    if is_flow {
        let joined: Vec<u8> = content.join(&b'\n');
        let body = joined.trim_ascii();
        let inner = body.strip_prefix(b"[")?.strip_suffix(b"]")?;
        if inner.trim_ascii().is_empty() {
            return Some(out);
        }
        let items: Vec<&[u8]> = inner.split(|&b| b == b',').collect();
        for (i, item) in items.iter().enumerate() {
            if item.trim_ascii().is_empty() && i + 1 == items.len() && i > 0 {
                continue;
            }
            if out.len() >= max_entries {
                return None;
            }
            out.push(parse_int(item)?);
        }
    } else {
        for line in content {
            let line = line.trim_ascii();
            if line.is_empty() {
                continue;
            }
            let item = line.strip_prefix(b"-")?;
            if !item.first().is_some_and(u8::is_ascii_whitespace) {
                return None;
            }
            if out.len() >= max_entries {
                return None;
            }
            out.push(parse_int(item)?);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_matches_python() {
        assert_eq!(
            encode_block_index(&[664, 1000]),
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 664\n- 1000\n...\n".to_vec()
        );
        assert_eq!(
            encode_block_index(&[]),
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n...\n".to_vec()
        );
    }

    #[test]
    fn parse_forms() {
        assert_eq!(
            parse_index(b"\n%YAML 1.1\n---\n- 664\n- 1000\n...\n", 10),
            Some(vec![664, 1000])
        );
        assert_eq!(
            parse_index(b"\r\n%YAML 1.1\r\n---\r\n- 664\r\n- 1000\r\n...\r\n", 10),
            Some(vec![664, 1000])
        );
        assert_eq!(
            parse_index(b"\n%YAML 1.1\n--- [2043, 16340]\n", 10),
            Some(vec![2043, 16340])
        );
        assert_eq!(
            parse_index(b"\n%YAML 1.1\n---\n[2043,\n 16340]\n...\n\0\0\0 \n\0", 10),
            Some(vec![2043, 16340])
        );
        assert_eq!(parse_index(b"\n%YAML 1.1\n--- []\n...\n", 10), Some(vec![]));
        // Garbage, wrong items, trailing content, too many entries.
        assert_eq!(parse_index(b"\n%YAML 1.1\n---\n- abc\n...\n", 10), None);
        assert_eq!(parse_index(b"\n%YAML 1.1\n---\n-664\n...\n", 10), None);
        assert_eq!(parse_index(b"\n---\n- 1\n...\n- 2\n", 10), None);
        assert_eq!(parse_index(b"\n---\n- 1\n- 2\n- 3\n", 2), None);
        assert_eq!(parse_index(b" %YAML 1.1\n---\n- 1\n", 2), None);
        assert_eq!(parse_index(b"\n---\n- 99999999999999999999999\n", 2), None);
    }

    #[test]
    fn find_in_tail() {
        let mut file = vec![7u8; 100];
        let idx = encode_block_index(&[10, 20]);
        file.extend_from_slice(&idx);
        file.extend_from_slice(&[0; 10]);
        let (off, text) = find_index(&file, file.len() as u64, 0, 1 << 20)
            .unwrap()
            .unwrap();
        assert_eq!(off, 100);
        assert_eq!(parse_index(&text, 10), Some(vec![10, 20]));
        // No index.
        let file = vec![7u8; 100_000];
        assert_eq!(find_index(&file, 100_000, 0, 1 << 20).unwrap(), None);
    }

    #[test]
    fn find_long_index_backwards() {
        let offsets: Vec<u64> = (0..20_000u64).map(|i| 1000 + i * 100).collect();
        let mut file = vec![1u8; 1000];
        let idx = encode_block_index(&offsets);
        assert!(idx.len() as u64 > TAIL_CHUNK);
        file.extend_from_slice(&idx);
        let (off, text) = find_index(&file, file.len() as u64, 0, 1 << 30)
            .unwrap()
            .unwrap();
        assert_eq!(off, 1000);
        assert_eq!(parse_index(&text, 1 << 20), Some(offsets));
    }
}
