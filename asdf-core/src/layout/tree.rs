//! The header line, comment lines, the YAML tree and the start of the first block.

use super::{Header, LayoutError, LayoutLimits, ReadAt, Window, BLOCK_MAGIC, WINDOW_BIG};

/// First read of the file head.
const FIRST_CHUNK: usize = 64 << 10;

/// What [`locate`] found.
pub(crate) struct Located {
    pub header: Header,
    pub tree: Option<(u64, u64)>,
    pub tree_bytes: Vec<u8>,
    pub first_block: Option<u64>,
}

/// The head of the file, read in growing chunks.
struct Head<'a> {
    src: &'a dyn ReadAt,
    file_len: u64,
    buf: Vec<u8>,
    /// Largest buffer length allowed (beyond it the tree is too large).
    cap: u64,
}

impl Head<'_> {
    /// Make at least `n` bytes available (fewer at the end of the file). `Ok(false)` when the
    /// cap forbids reading that far.
    fn ensure(&mut self, n: u64) -> Result<bool, LayoutError> {
        let have = self.buf.len() as u64;
        if n <= have || have >= self.file_len {
            return Ok(true);
        }
        if n > self.cap {
            return Ok(false);
        }
        let target = n
            .max(have.saturating_mul(2))
            .max(FIRST_CHUNK as u64)
            .min(self.file_len)
            .min(self.cap.max(n));
        let target = usize::try_from(target).map_err(|_| LayoutError::TooLargeForPlatform {
            offset: 0,
            size: target,
        })?;
        let old = self.buf.len();
        self.buf.resize(target, 0);
        let slot = self.buf.get_mut(old..).unwrap_or_default();
        self.src
            .read_exact_at(slot, old as u64)
            .map_err(|e| LayoutError::io(old as u64, &e))?;
        Ok(true)
    }

    fn at_eof(&self, pos: usize) -> bool {
        pos as u64 >= self.file_len
    }

    /// The line starting at `pos`: (content end without `\r?\n`, next line start). `None`
    /// when the cap is hit before the newline.
    fn line(&mut self, pos: usize) -> Result<Option<(usize, usize)>, LayoutError> {
        let mut from = pos;
        loop {
            if let Some(i) = self
                .buf
                .get(from..)
                .and_then(|s| s.iter().position(|&b| b == b'\n'))
            {
                let nl = from + i;
                let end = if nl > pos && self.buf.get(nl - 1) == Some(&b'\r') {
                    nl - 1
                } else {
                    nl
                };
                return Ok(Some((end, nl + 1)));
            }
            from = self.buf.len();
            if self.buf.len() as u64 >= self.file_len {
                let end = self.buf.len();
                let end = if end > pos && self.buf.get(end - 1) == Some(&b'\r') {
                    end - 1
                } else {
                    end
                };
                return Ok(Some((end, self.buf.len())));
            }
            if !self.ensure(self.buf.len() as u64 + 1)? {
                return Ok(None);
            }
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `major.minor.micro` with decimal numbers.
fn parse_version(text: &[u8]) -> Option<String> {
    let text = text.trim_ascii();
    let mut parts = 0;
    for part in text.split(|&b| b == b'.') {
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        parts += 1;
    }
    (parts == 3).then(|| lossy(text))
}

/// Whether the file start looks like YAML text (for files without an `#ASDF` line).
fn looks_like_text(bytes: &[u8]) -> bool {
    let sample = bytes.get(..bytes.len().min(1024)).unwrap_or(bytes);
    if sample.is_empty() || sample.starts_with(&BLOCK_MAGIC) {
        return false;
    }
    let sample = sample.strip_prefix(b"\xef\xbb\xbf").unwrap_or(sample);
    let valid = match std::str::from_utf8(sample) {
        Ok(_) => true,
        // A multi-byte character cut by the sample's end is fine.
        Err(e) => e.error_len().is_none(),
    };
    valid
        && sample
            .iter()
            .all(|&b| b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r')
}

pub(crate) fn locate(
    src: &dyn ReadAt,
    file_len: u64,
    limits: &LayoutLimits,
) -> Result<Located, LayoutError> {
    let mut head = Head {
        src,
        file_len,
        buf: Vec::new(),
        // Header and comments plus the tree, with slack for the end-marker line.
        cap: limits.max_tree_bytes.saturating_add(1 << 20),
    };
    head.ensure(FIRST_CHUNK as u64)?;
    let mut header = Header::default();
    let mut pos = 0usize;

    let is_asdf = head.buf.starts_with(b"#ASDF")
        && matches!(head.buf.get(5), None | Some(b' ' | b'\t' | b'\r' | b'\n'));
    if is_asdf {
        let Some((end, next)) = head.line(0)? else {
            return Err(LayoutError::BadHeaderLine {
                offset: 0,
                line: lossy(head.buf.get(..80).unwrap_or_default()),
            });
        };
        let line = head.buf.get(..end).unwrap_or_default();
        let version = line.get(5..).and_then(|rest| {
            (rest.first().is_some_and(|b| *b == b' ' || *b == b'\t'))
                .then(|| parse_version(rest))
                .flatten()
        });
        match version {
            Some(v) => header.asdf_version = Some(v),
            None => {
                return Err(LayoutError::BadHeaderLine {
                    offset: 0,
                    line: lossy(line.get(..80).unwrap_or(line)),
                })
            }
        }
        pos = next;
    } else if !looks_like_text(&head.buf) {
        return Err(LayoutError::NotAsdf { offset: 0 });
    }

    // Comment lines, then the tree, a block or the end of the file.
    let tree_start = loop {
        if head.at_eof(pos) {
            return Ok(Located {
                header,
                tree: None,
                tree_bytes: Vec::new(),
                first_block: None,
            });
        }
        head.ensure(pos as u64 + 4)?;
        let rest = head.buf.get(pos..).unwrap_or_default();
        if rest.starts_with(&BLOCK_MAGIC) {
            return Ok(Located {
                header,
                tree: None,
                tree_bytes: Vec::new(),
                first_block: Some(pos as u64),
            });
        }
        let Some((end, next)) = head.line(pos)? else {
            return Err(LayoutError::TreeTooLarge {
                offset: pos as u64,
                limit: limits.max_tree_bytes,
            });
        };
        let line = head.buf.get(pos..end).unwrap_or_default();
        if line.first() == Some(&b'#') {
            if header.standard_version.is_none() {
                if let Some(rest) = line.strip_prefix(b"#ASDF_STANDARD") {
                    if rest.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
                        header.standard_version = parse_version(rest);
                    }
                }
            }
            header.comments.push(lossy(line));
            pos = next;
        } else if line.trim_ascii().is_empty() {
            pos = next;
        } else if !is_asdf || line.starts_with(b"%") || line.starts_with(b"---") {
            break pos;
        } else {
            return Err(LayoutError::UnexpectedContent { offset: pos as u64 });
        }
    };

    // The tree ends after `\r?\n...\r?\n` or `\r?\n...` at the end of the file.
    let too_large = LayoutError::TreeTooLarge {
        offset: tree_start as u64,
        limit: limits.max_tree_bytes,
    };
    let max_end = (tree_start as u64).saturating_add(limits.max_tree_bytes);
    let mut search = tree_start;
    let tree_end = loop {
        let found = find_end_marker(&head.buf, search, head.buf.len() as u64 >= file_len);
        match found {
            EndSearch::Found(end) => break end,
            EndSearch::NeedMore(resume) => {
                search = resume;
                if head.buf.len() as u64 >= file_len {
                    // No marker at all: blocks after the tree make it unterminated; in a
                    // file with an `#ASDF` header it was cut short; a pure-YAML file's tree
                    // runs to the end of the file.
                    let tail = head.buf.get(tree_start..).unwrap_or_default();
                    if tail.windows(4).any(|w| w == BLOCK_MAGIC) {
                        return Err(LayoutError::UnterminatedTree {
                            offset: tree_start as u64,
                        });
                    }
                    if is_asdf {
                        return Err(LayoutError::TruncatedTree {
                            offset: tree_start as u64,
                            file_len,
                        });
                    }
                    break head.buf.len();
                }
                if head.buf.len() as u64 > max_end.saturating_add(8)
                    || !head.ensure(head.buf.len() as u64 + 1)?
                {
                    return Err(too_large);
                }
            }
        }
    };
    if (tree_end - tree_start) as u64 > limits.max_tree_bytes {
        return Err(too_large);
    }

    // The first block: the first block magic after the tree.
    let first_block = find_magic(src, file_len, &head.buf, tree_end)?;

    let mut tree_bytes = head.buf;
    tree_bytes.truncate(tree_end);
    tree_bytes.drain(..tree_start);
    Ok(Located {
        header,
        tree: Some((tree_start as u64, tree_end as u64)),
        tree_bytes,
        first_block,
    })
}

enum EndSearch {
    /// Tree end (just past the marker line).
    Found(usize),
    /// Not found in the buffer; resume searching from here once more bytes are read.
    NeedMore(usize),
}

fn find_end_marker(buf: &[u8], from: usize, at_eof: bool) -> EndSearch {
    let finder = memchr::memmem::Finder::new(b"\n...");
    let mut i = from;
    while let Some(rel) = buf.get(i..).and_then(|s| finder.find(s)) {
        let nl = i + rel;
        let after = buf.get(nl + 1..).unwrap_or_default();
        // Need up to 6 bytes after the newline to decide: "...\r\n".
        if after.len() < 6 && !at_eof {
            return EndSearch::NeedMore(nl);
        }
        let tail = after.get(3..).unwrap_or_default();
        if tail.is_empty() {
            return EndSearch::Found(nl + 4);
        }
        if tail.first() == Some(&b'\n') {
            return EndSearch::Found(nl + 5);
        }
        if tail.starts_with(b"\r\n") {
            return EndSearch::Found(nl + 6);
        }
        i = nl + 1;
    }
    // A marker that starts in the last 3 bytes is not complete yet.
    EndSearch::NeedMore(buf.len().saturating_sub(3).max(from))
}

/// Offset of the first block magic at or after `from`, using the bytes already in `head`
/// and reading the rest of the file in windows.
fn find_magic(
    src: &dyn ReadAt,
    file_len: u64,
    head: &[u8],
    from: usize,
) -> Result<Option<u64>, LayoutError> {
    let in_head = head.get(from..).unwrap_or_default();
    if let Some(i) = in_head.windows(4).position(|w| w == BLOCK_MAGIC) {
        return Ok(Some((from + i) as u64));
    }
    // Continue past the head, overlapping 3 bytes so a magic split across reads is found.
    let mut pos = (head.len() as u64)
        .max(from as u64)
        .saturating_sub(3)
        .max(from as u64);
    let mut window = Window::new(src, file_len);
    while pos.saturating_add(4) <= file_len {
        let chunk = window.get(pos, WINDOW_BIG, WINDOW_BIG)?;
        if let Some(i) = chunk.windows(4).position(|w| w == BLOCK_MAGIC) {
            return Ok(Some(pos + i as u64));
        }
        if chunk.len() < 4 {
            break;
        }
        pos += (chunk.len() - 3) as u64;
    }
    Ok(None)
}
