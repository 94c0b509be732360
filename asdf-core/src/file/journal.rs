//! The journal of an interrupted in-place update (written by `write::update`): the file's old
//! head (everything before the first block), saved beside it as `.NAME.asdf-journal` before
//! the head is overwritten. While a journal exists, readers see the old head, so an update
//! interrupted at any point still opens, with the old content.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::layout::ReadAt;

/// Where the journal of an in-place update of `path` lives.
pub fn journal_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new(""));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.asdf-journal"))
}

/// The journaled old head of `path`, if an update of it was interrupted. A journal longer
/// than the file is not one of ours and is ignored.
pub(super) fn read_journal(path: &Path, file_len: u64) -> Option<Vec<u8>> {
    let head = std::fs::read(journal_path(path)).ok()?;
    (head.len() as u64 <= file_len).then_some(head)
}

/// A file seen with its first bytes replaced by a journaled head.
pub(super) struct Overlay {
    pub head: Vec<u8>,
    pub rest: Arc<dyn ReadAt>,
}

impl ReadAt for Overlay {
    fn len(&self) -> u64 {
        self.rest.len()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let head_len = self.head.len() as u64;
        let mut done = 0usize;
        if offset < head_len {
            let start = offset as usize;
            let n = buf.len().min(self.head.len() - start);
            buf[..n].copy_from_slice(&self.head[start..start + n]);
            done = n;
        }
        if done < buf.len() {
            self.rest
                .read_exact_at(&mut buf[done..], offset + done as u64)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_reads_the_head_then_the_rest() {
        let rest: Arc<dyn ReadAt> = Arc::new(b"0123456789".to_vec());
        let o = Overlay {
            head: b"abc".to_vec(),
            rest,
        };
        let mut buf = [0u8; 6];
        o.read_exact_at(&mut buf, 1).unwrap();
        assert_eq!(&buf, b"bc3456");
        let mut tail = [0u8; 2];
        o.read_exact_at(&mut tail, 8).unwrap();
        assert_eq!(&tail, b"89");
        assert_eq!(o.len(), 10);
        assert!(o.read_exact_at(&mut [0u8; 4], 8).is_err());
    }
}
