//! `asdftool extract FILE PATH -o OUT`: one node of the tree on its own: an array as a numpy
//! `.npy` file, or any subtree (arrays included) as a new ASDF file. With `--slice SEL` (numpy's
//! slice syntax) only that region of an array is read and written.

use std::path::Path;

use asdf_core::array::{ArrayOptions, ArraySource, NdArrayMeta, SelectionError};
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, StandardVersion, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Selection};

use crate::output::write_reporting;
use crate::tree::{lookup, parse_path, pointer};

/// Extracts the node at `at` (a JSON pointer, or python's `a.b[0]` form) to `output`; with
/// `slice`, only that region of the array at `at`.
pub fn run(
    access: &crate::Access,
    input: &Path,
    at: &str,
    output: &Path,
    slice: Option<&str>,
    standard: Option<&str>,
    flags: crate::WriteFlags,
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
    // a selection that cannot be parsed is refused before the file is opened
    let selection = match slice {
        Some(text) => {
            Some(Selection::parse(text).map_err(|e| format!("--slice {text:?}: {}", syntax(&e)))?)
        }
        None => None,
    };
    let chosen = standard.map(crate::convert::standard_version).transpose()?;
    if chosen.is_some() && ext != "asdf" {
        return Err("--standard applies only when the output is ASDF".into());
    }
    if flags.portable && ext != "asdf" {
        return Err("--portable applies only when the output is ASDF".into());
    }
    if crate::output::same_file(input, output) {
        return Err(format!(
            "{}: the output would replace the input; choose another output path",
            output.display()
        ));
    }
    let file = access.open(input)?;
    let standard = crate::convert::standard_to_write(chosen, &file);
    let segs = parse_path(at);
    let here = pointer(&segs);
    let node = lookup(file.tree(), &segs)
        .ok_or_else(|| format!("{}: no node at {at:?}", input.display()))?
        .clone();
    if let (Some(sel), Some(text)) = (&selection, slice) {
        if !node.is_ndarray() {
            return Err(format!(
                "{}: --slice selects part of an array, and {here} is not one",
                input.display()
            ));
        }
        let region = Region {
            file: &file,
            input,
            path: &here,
            node: &node,
            sel,
            text,
            standard: &standard,
            portable: flags.portable,
        };
        return if ext == "npy" {
            region.to_npy(output)
        } else {
            region.to_asdf(output, segs.last())
        };
    }
    if ext == "npy" {
        if !node.is_ndarray() {
            return Err(format!(
                "{}: {here} is not an array (an .asdf output takes any subtree)",
                input.display()
            ));
        }
        // one bar: the bytes of the array read (or decoded), then the bytes written
        let (bar, feed) = crate::progress::Progress::fed(
            crate::progress::largest(&[input]),
            format!("reading {here} of {}", input.display()),
        );
        let arr = match &feed {
            Some(p) => file.dyn_array_of_with_progress(&node, &here, p),
            None => file.dyn_array_of(&node, &here),
        }
        .map_err(|e| format!("{}: {}", input.display(), crate::chain(&e)))?;
        bar.message(format!("writing {}", output.display()));
        return write_npy(output, &arr, feed.as_ref());
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
        Node::map([(key_name(segs.last()), node)])
    };
    let (_bar, feed) = crate::progress::Progress::fed(
        crate::progress::largest(&[input]),
        format!("writing {}", output.display()),
    );
    let mut opts = WriteOptions::new()
        .compression(CompressionChoice::Input)
        .standard(standard)
        .portable(flags.portable);
    if let Some(f) = feed {
        opts = opts.progress(f);
    }
    let writer = Writer::from_file(&file, opts);
    let summary = writer
        .write_to_path(&root, output)
        .map_err(|e| crate::output::write_error(output, &e))?;
    crate::output::warn(output, &summary.warnings);
    Ok(format!(
        "wrote {} ({} bytes, {} blocks)\n",
        output.display(),
        summary.len,
        summary.block_offsets.len()
    ))
}

/// The key an array or scalar extracted on its own sits under: the last segment of its
/// path, or `data` for the root or a sequence item.
fn key_name(last: Option<&String>) -> String {
    match last {
        Some(name) if name.parse::<i64>().is_err() => name.clone(),
        _ => "data".to_string(),
    }
}

/// Writes `arr` as a `.npy` file (its datatype and byte order as read), atomically.
fn write_npy(
    output: &Path,
    arr: &asdf_core::array::DynArray,
    feed: Option<&asdf_core::Progress>,
) -> Result<String, String> {
    let header = npy_header(&arr.dtype.to_numpy_str(), &arr.shape);
    let total = (header.len() + arr.data.len()) as u64;
    asdf_core::unstable::write_atomically(output, |f| {
        write_reporting(f, &[&header, &arr.data], total, feed)
    })
    .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
    Ok(format!(
        "wrote {} ({} {:?}, {total} bytes)\n",
        output.display(),
        arr.dtype.name(),
        arr.shape,
    ))
}

/// A selection's syntax error without the selection text repeated (the message names it).
fn syntax(e: &SelectionError) -> String {
    match e {
        SelectionError::Syntax { at, message, .. } => {
            format!("not numpy's slice syntax at character {at}: {message}")
        }
        other => other.to_string(),
    }
}

/// One `--slice` extraction: the region `sel` of the array at `path`.
struct Region<'a> {
    file: &'a AsdfFile,
    input: &'a Path,
    /// The array's path, as shown in messages.
    path: &'a str,
    /// Its ndarray node.
    node: &'a Node,
    sel: &'a Selection,
    /// The selection as given.
    text: &'a str,
    /// The ASDF Standard version of an `.asdf` output.
    standard: &'a StandardVersion,
    /// `--portable`: refuse codecs python asdf reads only with a plugin.
    portable: bool,
}

impl Region<'_> {
    /// Reads the region of the ndarray `node` at `path` (the array itself, or its mask).
    fn read(&self, node: &Node, path: &str) -> Result<asdf_core::array::DynArray, String> {
        self.file
            .dyn_region_of(node, path, self.sel)
            .map_err(|e| match &e {
                asdf_core::Error::Selection { source, .. } => format!(
                    "{}: --slice {:?} does not fit {}{}: {source}",
                    self.input.display(),
                    self.text,
                    self.path,
                    self.shape_text(),
                ),
                _ => format!("{}: {}", self.input.display(), crate::chain(&e)),
            })
    }

    /// ` (shape (a, b))` of the array, when its descriptor states it.
    fn shape_text(&self) -> String {
        let meta = NdArrayMeta::from_node(self.node, self.path).ok();
        match meta.and_then(|m| m.shape) {
            Some(dims) => {
                let dims: Vec<String> = dims
                    .iter()
                    .map(|d| match d {
                        asdf_core::array::Dim::Fixed(n) => n.to_string(),
                        _ => "*".to_string(),
                    })
                    .collect();
                match dims.len() {
                    1 => format!(" (shape ({},))", dims[0]),
                    _ => format!(" (shape ({}))", dims.join(", ")),
                }
            }
            None => String::new(),
        }
    }

    /// The region as a `.npy` file (the data only, as for a whole array: a mask is not
    /// written).
    fn to_npy(&self, output: &Path) -> Result<String, String> {
        let arr = self.read(self.node, self.path)?;
        write_npy(output, &arr, None)
    }

    /// The region as a new ASDF file: the array under its key, in a block compressed with
    /// the codec of its block in the input (uncompressed for other sources), its mask (an
    /// array: the same region of it; a number: kept) with it.
    fn to_asdf(&self, output: &Path, last: Option<&String>) -> Result<String, String> {
        let data = self.read(self.node, self.path)?;
        let meta = NdArrayMeta::from_node(self.node, self.path)
            .map_err(|e| format!("{}: {}", self.input.display(), crate::chain(&e)))?;
        let opts = ArrayOptions {
            compression: Some(self.codec(&meta)),
            storage: None,
        };
        let mask = match &meta.mask {
            Some(m) if m.is_ndarray() => {
                Some(Mask::Array(self.read(m, &format!("{}/mask", self.path))?))
            }
            Some(m) => Some(Mask::Value(m.clone())),
            None => None,
        };
        let mut writer = Writer::new(
            WriteOptions::new()
                .standard(self.standard.clone())
                .portable(self.portable),
        );
        let array = writer.add_array_with(data, opts);
        match mask {
            Some(Mask::Array(m)) => {
                let m = writer.add_array_with(m, opts);
                writer.set_mask(&array, m);
            }
            Some(Mask::Value(v)) => {
                writer.set_mask(&array, v);
            }
            None => {}
        }
        let root = Node::map([(key_name(last), array)]);
        let summary = writer
            .write_to_path(&root, output)
            .map_err(|e| crate::output::write_error(output, &e))?;
        crate::output::warn(output, &summary.warnings);
        Ok(format!(
            "wrote {} ({} bytes, {} blocks)\n",
            output.display(),
            summary.len,
            summary.block_offsets.len()
        ))
    }

    /// The codec of the array's block in the input (none for inline and external data).
    fn codec(&self, meta: &NdArrayMeta) -> CompressionChoice {
        let ArraySource::Block(i) = meta.source else {
            return CompressionChoice::None;
        };
        let blocks = self.file.blocks();
        let idx = if i < 0 { blocks.len() as i64 + i } else { i };
        usize::try_from(idx)
            .ok()
            .and_then(|i| blocks.get(i))
            .and_then(|b| Compression::from_label(&b.compression).ok().flatten())
            .map_or(CompressionChoice::None, CompressionChoice::Codec)
    }
}

/// The mask of a region written to an ASDF file.
enum Mask {
    Array(asdf_core::array::DynArray),
    Value(Node),
}

/// The header of a numpy `.npy` file (format 1.0, or 2.0 for a header over 64 KiB): the
/// data follows it.
pub fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
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
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    if v1 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    #[test]
    fn writing_reports_bytes_written_up_to_the_total() {
        let header = super::npy_header("<u1", &[17 << 20]);
        let data: Vec<u8> = (0..17u32 << 20).map(|i| i as u8).collect();
        let total = (header.len() + data.len()) as u64;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let progress = asdf_core::Progress::new(move |d, t| s.lock().unwrap().push((d, t)));
        let mut out = Vec::new();
        crate::output::write_reporting(&mut out, &[&header, &data], total, Some(&progress))
            .unwrap();
        assert_eq!(out.len() as u64, total);
        assert_eq!(&out[..header.len()], &header[..]);
        assert!(out[header.len()..] == data[..]);
        let h = header.len() as u64;
        let mib = 1u64 << 20;
        // the header, then the data in pieces of 8 MiB
        let want: Vec<(u64, u64)> = [h, h + 8 * mib, h + 16 * mib, h + 17 * mib]
            .into_iter()
            .map(|d| (d, total))
            .collect();
        assert_eq!(*seen.lock().unwrap(), want);
    }

    #[test]
    fn npy_header_is_aligned() {
        let mut b = super::npy_header("<f8", &[3]);
        b.extend_from_slice(&[0; 24]);
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let h = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
        assert!(h.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
        assert!(h.ends_with('\n'));
        assert_eq!(b.len(), 10 + hlen + 24);
    }
}
