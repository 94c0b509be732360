//! The check that schemas cannot make: each ndarray that takes its data from a block of the
//! file fits in that block ([`validate_array_blocks`]).
//!
//! A schema sees `source: 1, shape: [1000], datatype: float64` and finds nothing wrong even
//! when block 1 holds 16 bytes; python asdf opens such a file without complaint and fails
//! only when the array is read. [`AsdfFile::validate`](crate::AsdfFile::validate) and
//! `asdftool validate` report it, naming the tree path and the block.
//!
//! The size of a block is its header's `data_size`, the decoded size, which the reader
//! holds every block to (a codec whose output differs fails the read), so compressed blocks
//! are not decompressed here. Only the blocks of an ASDF 0.1.0 file that use a legacy
//! layout (an encoding chain, whose decoded size is not in the header) are decoded.

use super::{bundled, ValidationError, ValidationErrors};
use crate::array::{bind, ArrayError, ArraySource, NdArrayMeta};
use crate::AsdfFile;

/// The `keyword` of the problems found: the array's `source`, whose block is too small.
const KEYWORD: &str = "source";

/// Checks every ndarray of `file` whose data is in a block of the file: the block exists,
/// and its (decoded) size holds every byte the array's `offset`, `shape`, `strides` and
/// `datatype` address, and the node describes an array the reader can read. Arrays with
/// inline data, in another file or in a FITS HDU are not checked. One problem per array,
/// in tree order; the block data is not read (see the module documentation for the one
/// exception).
///
/// ```
/// use asdf_core::{schema, AsdfFile};
/// // A 2x3 float64 array (48 bytes) over a block of 8 bytes.
/// let mut bytes = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
///     --- !core/asdf-1.1.0\na: !core/ndarray-1.1.0 {source: 0, datatype: float64, \
///     byteorder: little, shape: [2, 3]}\n...\n".to_vec();
/// bytes.extend_from_slice(b"\xd3BLK\x00\x30");
/// bytes.extend_from_slice(&[0; 4]); // flags
/// bytes.extend_from_slice(&[0; 4]); // compression
/// for _ in 0..3 {
///     bytes.extend_from_slice(&8u64.to_be_bytes()); // allocated, used, data sizes
/// }
/// bytes.extend_from_slice(&[0; 16]); // no checksum
/// bytes.extend_from_slice(&[0; 8]);
/// let file = AsdfFile::from_bytes(bytes)?;
/// let errors = schema::validate_array_blocks(&file).unwrap_err();
/// assert_eq!(
///     errors.lines(),
///     ["/a: source: block 0 holds 8 bytes, the array needs 48 (offset, shape, strides and datatype)"]
/// );
/// # Ok::<(), asdf_core::Error>(())
/// ```
pub fn validate_array_blocks(file: &AsdfFile) -> Result<(), ValidationErrors> {
    let standard = file.standard_version();
    let mut errors = Vec::new();
    for (path, node) in file.arrays() {
        let problem = match NdArrayMeta::from_node(&node, &path) {
            Ok(meta) => {
                let ArraySource::Block(source) = meta.source else {
                    continue;
                };
                match block_len(file, source) {
                    Err(message) => Some(message),
                    Ok((index, len)) => match bind::layout(&meta, len, &path) {
                        Ok(_) => None,
                        Err(e) => Some(describe(index, len, &path, &e)),
                    },
                }
            }
            // A descriptor of block data that does not describe an array (strides that do
            // not match the shape, a datatype the reader does not know, ...): it cannot be
            // read either. (A schema may report the same node for its own reasons.)
            Err(e) if node.get("source").is_some_and(|s| s.as_i64().is_some()) => {
                let text = e.to_string();
                let prefix = format!("{path}: ");
                Some(format!(
                    "the array cannot be read: {}",
                    text.strip_prefix(&prefix).unwrap_or(&text)
                ))
            }
            Err(_) => None,
        };
        if let Some(message) = problem {
            let schema = node
                .tag()
                .and_then(|t| bundled::schema_for_tag(standard.as_str(), t))
                .unwrap_or_default();
            errors.push(ValidationError {
                path: if path.is_empty() { "/".into() } else { path },
                keyword: KEYWORD.into(),
                message,
                schema: schema.into(),
            });
        }
    }
    ValidationErrors { errors }.into_result()
}

/// The block `source` names (negative counts from the end) and its decoded size, or what
/// stops it from being known.
fn block_len(file: &AsdfFile, source: i64) -> Result<(usize, usize), String> {
    let count = file.block_count();
    let index = if source < 0 {
        i64::try_from(count)
            .ok()
            .and_then(|c| c.checked_add(source))
    } else {
        Some(source)
    }
    .and_then(|i| usize::try_from(i).ok())
    .filter(|&i| i < count)
    .ok_or_else(|| {
        format!(
            "block {source} does not exist (the file has {count} block{})",
            if count == 1 { "" } else { "s" }
        )
    })?;
    if file.layout().legacy_block(index).is_some() {
        // An ASDF 0.1.0 layout: the decoded size is known only by decoding.
        return file
            .block_data(index)
            .map(|d| (index, d.len()))
            .map_err(|e| format!("block {index} cannot be decoded: {e}"));
    }
    let headers = file
        .try_blocks()
        .map_err(|e| format!("the block headers cannot be read: {e}"))?;
    let header = headers
        .get(index)
        .ok_or_else(|| format!("the header of block {index} cannot be read"))?;
    let len = usize::try_from(header.data_size).map_err(|_| {
        format!(
            "block {index} holds {} bytes, more than this machine can address",
            header.data_size
        )
    })?;
    Ok((index, len))
}

/// The problem of an array that does not fit in block `index` of `len` bytes.
fn describe(index: usize, len: usize, path: &str, e: &ArrayError) -> String {
    match e {
        ArrayError::OutOfBounds { needed_end, .. } => format!(
            "block {index} holds {len} bytes, the array needs {needed_end} \
             (offset, shape, strides and datatype)"
        ),
        ArrayError::BeforeStart { start, .. } => {
            format!("the array's strides address byte {start} of block {index}, before its start")
        }
        // Other descriptions that cannot be read over this block (a streamed shape that is
        // not whole rows, strides that do not match the shape, sizes that overflow): the
        // error names the path already, so only its cause is kept.
        other => {
            let text = other.to_string();
            let prefix = format!("{path}: ");
            let cause = text.strip_prefix(&prefix).unwrap_or(&text);
            format!("block {index} ({len} bytes): {cause}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{WriteOptions, Writer};
    use crate::Node;

    /// A file with `arrays` written by our writer (so its blocks are exactly the arrays'
    /// bytes), then the tree text replaced by `tree`.
    fn file_with(tree_yaml: &str, block_bytes: &[usize]) -> AsdfFile {
        let mut bytes = format!(
            "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree_yaml}\n...\n"
        )
        .into_bytes();
        for &n in block_bytes {
            bytes.extend_from_slice(b"\xd3BLK\x00\x30");
            bytes.extend_from_slice(&[0; 8]);
            for _ in 0..3 {
                bytes.extend_from_slice(&(n as u64).to_be_bytes());
            }
            bytes.extend_from_slice(&[0; 16]);
            bytes.extend(std::iter::repeat_n(7u8, n));
        }
        AsdfFile::from_bytes(bytes).expect("opens")
    }

    fn lines(f: &AsdfFile) -> Vec<String> {
        validate_array_blocks(f)
            .err()
            .map(|e| e.lines())
            .unwrap_or_default()
    }

    #[test]
    fn arrays_that_fit_pass() {
        let f = file_with(
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int16, byteorder: big, shape: [2, 3]}\n\
             b: !core/ndarray-1.1.0 {source: -1, datatype: int8, byteorder: big, shape: [4], offset: 2, strides: [2]}\n\
             c: !core/ndarray-1.1.0 {source: 1, datatype: int8, byteorder: big, shape: ['*', 5]}\n\
             d: !core/ndarray-1.1.0 [1, 2, 3]\n\
             e: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [0]}",
            &[12, 10],
        );
        assert_eq!(lines(&f), Vec::<String>::new());
    }

    #[test]
    fn each_array_too_big_for_its_block_is_named() {
        let f = file_with(
            "a: !core/ndarray-1.1.0 {source: 0, datatype: int16, byteorder: big, shape: [2, 4]}\n\
             ok: !core/ndarray-1.1.0 {source: 0, datatype: int16, byteorder: big, shape: [2, 3]}\n\
             nest: {b: !core/ndarray-1.1.0 {source: 1, datatype: int8, byteorder: big, shape: [4], offset: 8}}\n\
             s: !core/ndarray-1.1.0 {source: 1, datatype: int8, byteorder: big, shape: [3], strides: [5]}\n\
             neg: !core/ndarray-1.1.0 {source: 1, datatype: int8, byteorder: big, shape: [3], strides: [-1]}\n\
             gone: !core/ndarray-1.1.0 {source: 2, datatype: int8, byteorder: big, shape: [1]}\n\
             rows: !core/ndarray-1.1.0 {source: 1, datatype: int8, byteorder: big, shape: ['*', 3], offset: 12}\n\
             bad: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: big, shape: [3], strides: [1, 1]}",
            &[12, 10],
        );
        assert_eq!(
            lines(&f),
            [
                "/a: source: block 0 holds 12 bytes, the array needs 16 (offset, shape, strides and datatype)",
                "/nest/b: source: block 1 holds 10 bytes, the array needs 12 (offset, shape, strides and datatype)",
                "/s: source: block 1 holds 10 bytes, the array needs 11 (offset, shape, strides and datatype)",
                "/neg: source: the array's strides address byte -2 of block 1, before its start",
                "/gone: source: block 2 does not exist (the file has 2 blocks)",
                "/rows: source: block 1 holds 10 bytes, the array needs 12 (offset, shape, strides and datatype)",
                "/bad: source: the array cannot be read: bad `strides`: 2 strides for 1 dimensions",
            ]
        );
        // The schema named is the ndarray tag's under the file's standard.
        let errors = validate_array_blocks(&f).unwrap_err();
        assert_eq!(
            errors.errors()[0].schema,
            "http://stsci.edu/schemas/asdf/core/ndarray-1.1.0"
        );
    }

    #[test]
    fn a_written_file_passes() {
        let mut w = Writer::new(WriteOptions::default());
        let arr = ndarray::Array2::<f64>::zeros((3, 4)).into_dyn();
        let node = w.add_array(arr);
        let bytes = w.write_to_vec(&Node::map([("x", node)])).expect("writes");
        let f = AsdfFile::from_bytes(bytes).expect("opens");
        assert_eq!(validate_array_blocks(&f), Ok(()));
    }
}
