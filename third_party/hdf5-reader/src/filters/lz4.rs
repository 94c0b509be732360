//! HDF5 LZ4 filter (filter ID 32004).
//!
//! On-disk format per the HDF Group's LZ4 plugin (`H5Zlz4.c`, as hdf5plugin and the HDF5
//! plugins build it):
//! - `orig_size: u64 BE` — total uncompressed size of the chunk
//! - `block_size: u32 BE` — uncompressed size of every block but the last (which holds
//!   what is left of `orig_size`)
//! - Repeated blocks:
//!   - `compressed_size: u32 BE` — compressed size of this block
//!   - `compressed_data: [u8; compressed_size]`
//!
//! When `compressed_size` equals the block's uncompressed size the block is stored
//! uncompressed. (asdf-rs patch 6: upstream read a block size before every block, which no
//! writer does, so files hdf5plugin writes failed with "LZ4: expected another byte".)

use crate::error::{Error, Result};

/// Decompress HDF5 LZ4-filtered data.
/// LZ4 cannot expand data by more than ~255x; bound the unlimited path's
/// declared output size by this multiple of the input so a crafted header
/// cannot force a huge up-front allocation.
const LZ4_MAX_EXPANSION: usize = 256;

pub fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    // Even without a caller-supplied limit, cap the declared output size by
    // what the input could plausibly expand to.
    let implicit_limit = data.len().saturating_mul(LZ4_MAX_EXPANSION);
    decompress_inner(data, Some(implicit_limit))
}

/// Decompress HDF5 LZ4-filtered data, rejecting declared output sizes above
/// `max_output_len` before allocating the output buffer.
pub fn decompress_with_limit(data: &[u8], max_output_len: usize) -> Result<Vec<u8>> {
    decompress_inner(data, Some(max_output_len))
}

fn be32(data: &[u8], pos: usize, what: &str) -> Result<usize> {
    let b = data
        .get(pos..pos.saturating_add(4))
        .ok_or_else(|| Error::DecompressionError(format!("LZ4: truncated {what} at {pos}")))?;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

fn decompress_inner(data: &[u8], max_output_len: Option<usize>) -> Result<Vec<u8>> {
    if data.len() < 12 {
        return Err(Error::DecompressionError(
            "LZ4: input too short for header".into(),
        ));
    }

    let declared_orig_size = u64::from_be_bytes([
        data[0], data[1], data[2], data[3], data[4], data[5], data[6], data[7],
    ]);
    let orig_size = usize::try_from(declared_orig_size).map_err(|_| {
        Error::DecompressionError(format!(
            "LZ4: declared output size {declared_orig_size} exceeds platform usize capacity"
        ))
    })?;
    if let Some(max_output_len) = max_output_len {
        if orig_size > max_output_len {
            return Err(Error::DecompressionError(format!(
                "LZ4: declared output size {orig_size} exceeds limit {max_output_len}"
            )));
        }
    }
    let block_size = be32(data, 8, "block size")?.min(orig_size);
    if block_size == 0 && orig_size > 0 {
        return Err(Error::DecompressionError(
            "LZ4: block size 0 for a non-empty chunk".into(),
        ));
    }

    // The output grows as blocks are decoded; reserve no more than LZ4 can expand to
    // (~255:1), so a corrupted size field cannot abort the process.
    let mut output = Vec::new();
    let capacity = orig_size.min(data.len().saturating_mul(255).saturating_add(64));
    output.try_reserve_exact(capacity).map_err(|_| {
        Error::DecompressionError(format!("LZ4: cannot allocate {capacity} output bytes"))
    })?;
    let mut pos = 12;

    while output.len() < orig_size {
        let this_block = block_size.min(orig_size - output.len());
        let compressed_size = be32(data, pos, "block header")?;
        pos += 4;
        let block = data
            .get(pos..)
            .and_then(|rest| rest.get(..compressed_size))
            .ok_or_else(|| Error::DecompressionError("LZ4: truncated block data".into()))?;

        if compressed_size == this_block {
            // Stored uncompressed
            output.extend_from_slice(block);
        } else {
            let decompressed = lz4_flex::decompress(block, this_block)
                .map_err(|e| Error::DecompressionError(format!("LZ4: {}", e)))?;
            if decompressed.len() != this_block {
                return Err(Error::DecompressionError(format!(
                    "LZ4: block decoded to {} bytes, expected {this_block}",
                    decompressed.len()
                )));
            }
            output.extend_from_slice(&decompressed);
        }
        pos += compressed_size;
    }

    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_round_trip() {
        let original = b"hello world hello world hello world!";
        let raw_compressed = lz4_flex::compress(original);

        let mut hdf5_data = Vec::new();
        hdf5_data.extend_from_slice(&(original.len() as u64).to_be_bytes());
        // block size, then the block's compressed size
        hdf5_data.extend_from_slice(&(original.len() as u32).to_be_bytes());
        hdf5_data.extend_from_slice(&(raw_compressed.len() as u32).to_be_bytes());
        hdf5_data.extend_from_slice(&raw_compressed);

        let result = decompress(&hdf5_data).unwrap();
        assert_eq!(result, original);
    }

    #[test]
    fn lz4_uncompressed_block() {
        let original = b"short";
        let mut hdf5_data = Vec::new();
        hdf5_data.extend_from_slice(&(original.len() as u64).to_be_bytes());
        // compressed_size == orig_block_size => uncompressed
        hdf5_data.extend_from_slice(&(original.len() as u32).to_be_bytes());
        hdf5_data.extend_from_slice(&(original.len() as u32).to_be_bytes());
        hdf5_data.extend_from_slice(original);

        let result = decompress(&hdf5_data).unwrap();
        assert_eq!(result, original);
    }

    #[test]
    fn lz4_too_short() {
        let data = &[0; 7];
        assert!(decompress(data).is_err());
    }

    #[test]
    fn lz4_truncated_block() {
        let mut data = vec![0, 0, 0, 0, 0, 0, 0, 10]; // orig_size = 10
        data.extend_from_slice(&10u32.to_be_bytes()); // block_size = 10
        data.extend_from_slice(&100u32.to_be_bytes()); // compressed_size = 100
        data.extend_from_slice(&[0; 5]); // only 5 bytes of "100"
        assert!(decompress(&data).is_err());
    }

    #[test]
    fn lz4_declared_size_above_limit_errors_before_allocation() {
        let mut data = (4096u64).to_be_bytes().to_vec();
        data.extend_from_slice(&4096u32.to_be_bytes());
        let err = decompress_with_limit(&data, 32).unwrap_err();
        assert!(err.to_string().contains("exceeds limit"));
    }

    #[test]
    fn lz4_blocks_share_one_block_size_and_the_last_is_short() {
        // 10 bytes in blocks of 4: 4, 4, 2, the second stored as it is
        let original = b"aaaabcdeaa";
        let mut data = Vec::new();
        data.extend_from_slice(&10u64.to_be_bytes());
        data.extend_from_slice(&4u32.to_be_bytes());
        for block in [&original[..4], &original[8..]] {
            let c = lz4_flex::compress(block);
            assert_ne!(c.len(), block.len());
            data.extend_from_slice(&(c.len() as u32).to_be_bytes());
            data.extend_from_slice(&c);
            if block.len() == 4 {
                data.extend_from_slice(&4u32.to_be_bytes());
                data.extend_from_slice(&original[4..8]);
            }
        }
        assert_eq!(decompress(&data).unwrap(), original);
        // a block that decodes short is an error
        let mut short = data.clone();
        short.truncate(short.len() - 1);
        assert!(decompress(&short).is_err());
    }
}
