//! [`ReadAt`] implementations for files, byte buffers, memory maps and shared handles.

use std::io;
use std::sync::Arc;

use super::ReadAt;

fn out_of_range(offset: u64, want: usize, len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("read of {want} bytes at offset {offset} past the end ({len} bytes)"),
    )
}

/// Copy `buf.len()` bytes of `data` from `offset`, or fail with `UnexpectedEof`.
fn read_slice(data: &[u8], buf: &mut [u8], offset: u64) -> io::Result<()> {
    let len = data.len() as u64;
    let start = usize::try_from(offset).map_err(|_| out_of_range(offset, buf.len(), len))?;
    let end = start
        .checked_add(buf.len())
        .ok_or_else(|| out_of_range(offset, buf.len(), len))?;
    let src = data
        .get(start..end)
        .ok_or_else(|| out_of_range(offset, buf.len(), len))?;
    buf.copy_from_slice(src);
    Ok(())
}

impl ReadAt for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
        }
        #[cfg(windows)]
        {
            let mut done = 0usize;
            while done < buf.len() {
                let at = offset
                    .checked_add(done as u64)
                    .ok_or_else(|| out_of_range(offset, buf.len(), u64::MAX))?;
                let n = std::os::windows::fs::FileExt::seek_read(self, &mut buf[done..], at)?;
                if n == 0 {
                    return Err(out_of_range(offset, buf.len(), ReadAt::len(self)));
                }
                done += n;
            }
            Ok(())
        }
    }
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        read_slice(self, buf, offset)
    }
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        read_slice(self, buf, offset)
    }
}

impl ReadAt for memmap2::Mmap {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        read_slice(self, buf, offset)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for Arc<T> {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }

    fn read_ranges_at(&self, reqs: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        (**self).read_ranges_at(reqs)
    }

    fn merge_gap(&self) -> u64 {
        (**self).merge_gap()
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }

    fn read_ranges_at(&self, reqs: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        (**self).read_ranges_at(reqs)
    }

    fn merge_gap(&self) -> u64 {
        (**self).merge_gap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn check(src: &dyn ReadAt) {
        assert_eq!(src.len(), 5);
        assert!(!src.is_empty());
        let mut b = [0u8; 3];
        src.read_exact_at(&mut b, 1).unwrap();
        assert_eq!(&b, b"bcd");
        let mut b = [0u8; 3];
        let e = src.read_exact_at(&mut b, 3).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(src.read_exact_at(&mut b, u64::MAX).is_err());
    }

    #[test]
    fn every_source_reads_the_same() {
        let v: Vec<u8> = b"abcde".to_vec();
        check(&v);
        check(&v.as_slice());
        check(&Arc::new(v.clone()));
        let arc: Arc<dyn ReadAt> = Arc::new(v.clone());
        check(&arc);
        check(&&v);

        let path = std::env::temp_dir().join(format!("asdf-readat-{}", std::process::id()));
        std::fs::File::create(&path)
            .unwrap()
            .write_all(b"abcde")
            .unwrap();
        let f = std::fs::File::open(&path).unwrap();
        check(&f);
        // SAFETY: the file is private to this test and not modified while mapped.
        let m = unsafe { memmap2::Mmap::map(&f) }.unwrap();
        check(&m);
        std::fs::remove_file(&path).unwrap();
    }
}
