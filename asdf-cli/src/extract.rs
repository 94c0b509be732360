//! `asdftool extract FILE PATH -o OUT`: one node of the tree on its own: an array as a numpy
//! `.npy` file, or any subtree (arrays included) as a new ASDF file.

use std::path::Path;

use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::Node;

use crate::tree::{lookup, parse_path, pointer};

/// Extracts the node at `at` (a JSON pointer, or python's `a.b[0]` form) to `output`.
pub fn run(
    access: &crate::Access,
    input: &Path,
    at: &str,
    output: &Path,
) -> Result<String, String> {
    let ext = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if ext != "npy" && ext != "asdf" {
        return Err(format!(
            "{}: choose an output ending in .npy (one array) or .asdf (any subtree)",
            output.display()
        ));
    }
    if crate::convert::same_file(input, output) {
        return Err(format!(
            "{}: the output would replace the input; choose another output path",
            output.display()
        ));
    }
    let file = access.open(input)?;
    let _p = crate::progress::Progress::spinner(
        crate::progress::largest(&[input]),
        format!("extracting {at} to {}", output.display()),
    );
    let segs = parse_path(at);
    let here = pointer(&segs);
    let node = lookup(file.tree(), &segs)
        .ok_or_else(|| format!("{}: no node at {at:?}", input.display()))?
        .clone();
    if ext == "npy" {
        if !node.is_ndarray() {
            return Err(format!(
                "{}: {here} is not an array (an .asdf output takes any subtree)",
                input.display()
            ));
        }
        let arr = file
            .dyn_array_of(&node, &here)
            .map_err(|e| format!("{}: {}", input.display(), crate::chain(&e)))?;
        let bytes = npy(&arr.dtype.to_numpy_str(), &arr.shape, &arr.data);
        crate::blosc2::write_atomic(output, &bytes)
            .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
        return Ok(format!(
            "wrote {} ({} {:?}, {} bytes)\n",
            output.display(),
            arr.dtype.name(),
            arr.shape,
            bytes.len()
        ));
    }
    // an ASDF file whose root is the subtree (a mapping), else a mapping holding it
    let root = if node.as_map().is_some() && !node.is_ndarray() {
        Node::map(
            node.as_map()
                .unwrap_or_default()
                .iter()
                .map(|(k, v)| (crate::tree::key_text(k), v.clone())),
        )
    } else {
        let name = segs.last().cloned().unwrap_or_else(|| "data".to_string());
        let name = if name.parse::<i64>().is_ok() {
            "data".to_string()
        } else {
            name
        };
        Node::map([(name, node)])
    };
    let (_bar, feed) = crate::progress::Progress::fed(
        crate::progress::largest(&[input]),
        format!("writing {}", output.display()),
    );
    let mut opts = WriteOptions::new().compression(CompressionChoice::Input);
    if let Some(f) = feed {
        opts = opts.progress(f);
    }
    let writer = Writer::from_file(&file, opts);
    let summary = writer
        .write_to_path(&root, output)
        .map_err(|e| format!("{}: {}", output.display(), crate::chain(&e)))?;
    Ok(format!(
        "wrote {} ({} bytes, {} blocks)\n",
        output.display(),
        summary.len,
        summary.block_offsets.len()
    ))
}

/// A numpy `.npy` file (format 1.0, or 2.0 for a header over 64 KiB).
pub fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let descr = if descr.starts_with('[') {
        descr.to_string()
    } else {
        format!("'{descr}'")
    };
    let mut header = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    let v1 = header.len() + 11 <= 65535;
    let fixed = if v1 { 10 } else { 12 };
    let total = (fixed + header.len() + 1).div_ceil(64) * 64;
    while fixed + header.len() + 1 < total {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(total + data.len());
    out.extend_from_slice(b"\x93NUMPY");
    if v1 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn npy_header_is_aligned() {
        let b = super::npy("<f8", &[3], &[0; 24]);
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let h = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
        assert!(h.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
        assert!(h.ends_with('\n'));
        assert_eq!(b.len(), 10 + hlen + 24);
    }
}
