//! ASDF → HDF5: arrays become datasets at their key paths (with the chunk shape and filters
//! that `_hdf5` recorded, or chunked and deflated when the ASDF block was compressed); the
//! attributes `_hdf5` recorded come back with their datatypes; other scalars become
//! attributes of their group, and subtrees HDF5 cannot hold become YAML-text attributes.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use asdf_core::array::{ArraySource, DType, DynArray, NdArrayMeta, ScalarType};
use asdf_core::unstable::AtomicFile;
use asdf_core::yaml::EmitOptions;
use asdf_core::{AsdfFile, Node, Progress, Value};
use hdf5_writer::{
    AttributeBuilder, DatasetBuilder, Datatype, EnumMember, FilterDescription, Hdf5Builder,
    Hdf5Writer, WriteOptions,
};

use crate::band;
use crate::datatype::to_hdf5;
use crate::names::{MASK_ATTR, MASK_VALUE_ATTR, META_KEY};
use crate::{Hdf5Error, Result};

/// What [`from_asdf`] wrote.
#[derive(Clone, Debug)]
pub struct FromAsdfSummary {
    /// Bytes written.
    pub len: u64,
    /// Datasets written.
    pub datasets: usize,
    /// Attributes written.
    pub attributes: usize,
    /// Soft and external links written (from `$ref`s).
    pub links: usize,
    /// What has no HDF5 form on the way back yet and was not written, by path (an HDF5
    /// path, `PATH@NAME` for an attribute) with why: arrays inside records or lists (such
    /// as a variable-length sequence field of a compound), which would otherwise be lost in
    /// YAML text (unless [`FromAsdfOptions::strict`], which makes the first one the error).
    pub left_out: Vec<(String, String)>,
}

/// Keys of the root that describe the ASDF file itself, not data.
const ASDF_KEYS: [&str; 2] = ["asdf_library", "history"];

/// Chunks of about this many bytes when an array gets no recorded chunk shape.
const CHUNK_BYTES: usize = 1 << 20;

fn tree_err(path: &str, message: impl Into<String>) -> Hdf5Error {
    Hdf5Error::Tree {
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        message: message.into(),
    }
}

fn write_err(e: impl std::fmt::Display) -> Hdf5Error {
    Hdf5Error::Hdf5Write(e.to_string())
}

/// Options of [`from_asdf_with`].
#[derive(Clone)]
pub struct FromAsdfOptions {
    /// Told after each array is read, and as the bands of an array read band by band are
    /// written, `(done, total)`: the bytes of array data read so far, of those of the arrays
    /// met so far (so the total can grow). For a progress display (`asdftool convert` shows
    /// one).
    pub progress: Option<Progress>,
    /// Arrays of at least this many bytes (default 32 MiB) are not read whole: when their
    /// block is in the file, its bytes are decoded (any codec, the Blosc ones a block at a
    /// time) and the array's view of them (offset, strides, any axis order) gathered in
    /// C order 2 MiB at a time while the HDF5 file is written, one row of chunks at a time
    /// (a contiguous dataset in 8 MiB pieces), so memory holds a few pieces whatever the
    /// array's size. A view of a compressed block that is not in C order is decoded into a
    /// spill file beside the output first (`docs/hdf5.md`).
    pub band_min_bytes: u64,
    /// Verify the MD5 of every block read (default off, as `AsdfFile::options`): a block
    /// read whole is checked as asdf-core checks it; a block read band by band is hashed as
    /// its bytes are read and checked before its last band is written. A mismatch fails the
    /// conversion with `asdf_core::Error::Checksum` and leaves no output file.
    pub verify_checksums: bool,
    /// What has no HDF5 form on the way back yet (arrays inside records or lists) is, with
    /// `false` (the default), left out and listed in [`FromAsdfSummary::left_out`] while the
    /// rest of the file is written; with `true` it is the error ([`Hdf5Error::Tree`]) and
    /// nothing is written.
    pub strict: bool,
}

impl Default for FromAsdfOptions {
    fn default() -> Self {
        FromAsdfOptions {
            progress: None,
            band_min_bytes: 32 << 20,
            verify_checksums: false,
            strict: false,
        }
    }
}

impl std::fmt::Debug for FromAsdfOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FromAsdfOptions")
            .field("progress", &self.progress.is_some())
            .field("band_min_bytes", &self.band_min_bytes)
            .field("verify_checksums", &self.verify_checksums)
            .field("strict", &self.strict)
            .finish()
    }
}

/// Converts the ASDF file at `input` into the HDF5 file at `output` (written to a temporary
/// file beside it, then renamed), with the default [`FromAsdfOptions`].
pub fn from_asdf(input: &Path, output: &Path) -> Result<FromAsdfSummary> {
    from_asdf_with(input, output, &FromAsdfOptions::default())
}

/// As [`from_asdf`], with options.
pub fn from_asdf_with(
    input: &Path,
    output: &Path,
    opts: &FromAsdfOptions,
) -> Result<FromAsdfSummary> {
    let file = AsdfFile::options()
        .verify_checksums(opts.verify_checksums)
        .open(input)?;
    let meta = file.get(&format!("/{META_KEY}")).cloned();
    let dir = output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let slot = band::ErrorSlot::default();
    let mut walk = Walk {
        spill_dir: dir.to_path_buf(),
        slot: Arc::clone(&slot),
        file: &file,
        meta: meta.as_ref(),
        builder: Hdf5Builder::new(),
        summary: FromAsdfSummary {
            len: 0,
            datasets: 0,
            attributes: 0,
            links: 0,
            left_out: Vec::new(),
        },
        opts,
        bytes_read: Arc::new(AtomicU64::new(0)),
        total: Arc::new(AtomicU64::new(0)),
    };
    walk.group(file.tree(), "")?;
    let Walk {
        builder,
        mut summary,
        ..
    } = walk;
    let plan = builder.into_plan().map_err(write_err)?;
    let io = |e: std::io::Error| Hdf5Error::Io {
        path: output.display().to_string(),
        source: e,
    };
    // a temporary file beside the output, synced and renamed over it with the folder synced
    // (`AtomicFile`); removed on any error, so the output is the old file or the new one
    let mut out = AtomicFile::create(output).map_err(io)?;
    let result = Hdf5Writer::new(
        std::io::BufWriter::new(out.file_mut()),
        WriteOptions::default(),
    )
    .finish(plan)
    .map_err(write_err)
    .and_then(|w| w.into_inner().map(drop).map_err(|e| io(e.into_error())));
    if let Err(e) = result {
        drop(out);
        // a typed error met inside a band stream (a checksum mismatch) rather than the
        // writer's text of it
        if let Some(typed) = slot.lock().ok().and_then(|mut s| s.take()) {
            return Err(typed.into());
        }
        return Err(e);
    }
    out.commit().map_err(io)?;
    summary.len = std::fs::metadata(output).map_err(io)?.len();
    Ok(summary)
}

struct Walk<'f> {
    file: &'f AsdfFile,
    meta: Option<&'f Node>,
    builder: Hdf5Builder,
    summary: FromAsdfSummary,
    opts: &'f FromAsdfOptions,
    /// Bytes of array data read so far (bands are read while the file is written).
    bytes_read: Arc<AtomicU64>,
    /// Bytes of array data of the arrays met so far.
    total: Arc<AtomicU64>,
    /// Where spill files go (the output's folder).
    spill_dir: std::path::PathBuf,
    /// A typed error met inside a band stream.
    slot: band::ErrorSlot,
}

/// An array's bytes: read whole, or a stream read while the HDF5 file is written.
enum ArrayData {
    Bytes(Vec<u8>),
    Stream(Box<dyn Read + Send>),
}

/// `_hdf5/<section>/<hdf5 path>`.
fn hint<'n>(meta: Option<&'n Node>, section: &str, hpath: &str) -> Option<&'n Node> {
    meta?.get(section)?.get(hpath)
}

fn int_list(node: &Node) -> Option<Vec<i128>> {
    node.as_seq()?
        .iter()
        .map(|n| n.as_int()?.as_i128())
        .collect()
}

impl Walk<'_> {
    fn group(&mut self, node: &Node, path: &str) -> Result<()> {
        let Some(entries) = node.as_map() else {
            return Err(tree_err(path, "the root of the tree is not a mapping"));
        };
        let hpath = if path.is_empty() { "/" } else { path };
        if !path.is_empty() {
            // made even when nothing ends up in it
            self.builder = std::mem::take(&mut self.builder).group(path.trim_start_matches('/'));
        }
        let recorded = hint(self.meta, "attrs", hpath).and_then(Node::as_map);
        // the members' names, which a mask's companion dataset must not take
        let mut taken: std::collections::HashSet<String> = entries
            .iter()
            .filter_map(|(k, _)| k.as_str().map(str::to_string))
            .collect();
        for (k, v) in entries {
            let Some(name) = k.as_str() else {
                return Err(tree_err(path, "a mapping key that is not a string"));
            };
            if path.is_empty() && (ASDF_KEYS.contains(&name) || name == META_KEY) {
                continue;
            }
            let p = format!("{path}/{name}");
            if self.vlen_string_bytes(&p)? {
                // left out, listed
            } else if let Some((base, shape, values)) = self.sequences(v, &p)? {
                // variable-length sequences (h5py's vlen_dtype): a dataset of them again
                self.sequence_dataset(base, shape, values, &p)?;
            } else if v.is_ndarray() {
                let array_mask = match v.get("mask") {
                    Some(m) => m.is_ndarray(),
                    None => inline_nulls(v, &p)?.is_some(),
                };
                let companion = array_mask.then(|| {
                    let c = companion_name(name, &taken);
                    taken.insert(c.clone());
                    c
                });
                self.dataset(v, &p, companion.as_deref())?;
            } else if let Some(dt) = hint(self.meta, "scalar_datasets", &p).and_then(Node::as_str) {
                self.scalar_dataset(v, dt, &p)?;
            } else if let Some(shape) = hint(self.meta, "string_datasets", &p).and_then(int_list) {
                self.string_dataset(v, &shape, &p)?;
            } else if let Some(target) = ref_target(v) {
                self.link(&p, target)?;
            } else if v.as_map().is_some() && v.tag().is_none() {
                self.group(v, &p)?;
            } else if recorded.is_some_and(|r| r.iter().any(|(k, _)| k.as_str() == Some(name))) {
                // also recorded as an attribute: written from the record below
            } else if let Some(attr) = self.attribute(name, v, &p)? {
                self.group_attribute(path, attr);
            }
        }
        for (k, v) in recorded.unwrap_or_default() {
            let name = k.as_str().unwrap_or_default();
            if let Some(attr) = self.attribute(name, v, &format!("{hpath}@{name}"))? {
                self.group_attribute(path, attr);
            }
        }
        Ok(())
    }

    /// The variable-length sequences at `hpath` (a dataset, or `PATH@NAME` an attribute),
    /// when `_hdf5` recorded them (`sequence_datasets`, or `value_datasets` for sequences of
    /// records) and the node is their form (docs/hdf5.md): nested sequences of the recorded
    /// shape of 1-D arrays of one datatype, in a block or inline. Their HDF5 base datatype,
    /// shape and each sequence's bytes; `None` for a node of another form. A node recorded
    /// as sequences that does not fit the shape, or arrays of more than one datatype, is an
    /// error naming it.
    #[allow(clippy::type_complexity)]
    fn sequences(
        &self,
        node: &Node,
        hpath: &str,
    ) -> Result<Option<(Datatype, Vec<u64>, Vec<Vec<u8>>)>> {
        let recorded = hint(self.meta, "sequence_datasets", hpath);
        let Some(shape) = recorded
            .or_else(|| hint(self.meta, "value_datasets", hpath))
            .and_then(int_list)
        else {
            return Ok(None);
        };
        let bad = |why: &str| {
            tree_err(
                hpath,
                format!("recorded as variable-length sequences, {why}"),
            )
        };
        let shape: Vec<u64> = shape
            .iter()
            .map(|&d| u64::try_from(d).map_err(|_| bad("of a negative shape")))
            .collect::<Result<_>>()?;
        let mut leaves = Vec::new();
        if !leaves_by_shape(node, &shape, &mut leaves) {
            if recorded.is_some() {
                return Err(bad(&format!("but not nested lists of shape {shape:?}")));
            }
            // the tree form of something else (records, references)
            return Ok(None);
        }
        if recorded.is_none() && !leaves.iter().all(|l| l.is_ndarray()) {
            return Ok(None);
        }
        // the base datatype as the original had it (inline arrays lose its byte order)
        let recorded_base = hint(self.meta, "sequence_datatypes", hpath)
            .and_then(Node::as_str)
            .and_then(DType::from_numpy_str)
            // of a size HDF5 can hold (sizes saturate: a huge one is refused here)
            .filter(|d| (1..=u32::MAX as usize).contains(&d.itemsize()));
        let mut dtype = recorded_base;
        let mut values = Vec::with_capacity(leaves.len());
        for (i, leaf) in leaves.iter().enumerate() {
            let at = format!("{hpath}/{i}");
            if !leaf.is_ndarray() || leaf.get("mask").is_some() {
                return Err(bad(&format!(
                    "but element {i} is not an array without a mask"
                )));
            }
            let mut a = self.file.dyn_array_of(leaf, &at)?;
            if a.shape.len() != 1 {
                return Err(bad(&format!(
                    "but element {i} is an array of shape {:?}, not one dimension",
                    a.shape
                )));
            }
            let little = |d: &DType| d.with_byteorder(asdf_core::array::ByteOrder::Little);
            match &dtype {
                Some(d) if *d != a.dtype && little(d) == little(&a.dtype) => {
                    reorder(&mut a.data, &a.dtype, d);
                }
                Some(d) if *d != a.dtype => {
                    return Err(bad(&format!(
                        "but element {i} is {}, not {}",
                        a.dtype.to_numpy_str(),
                        d.to_numpy_str()
                    )))
                }
                Some(_) => {}
                None => dtype = Some(a.dtype),
            }
            self.report(a.data.len() as u64);
            values.push(a.data);
        }
        let Some(dtype) = dtype else {
            return Err(bad("with no element and no recorded datatype"));
        };
        let base = to_hdf5(&dtype).map_err(|what| Hdf5Error::Unsupported {
            path: hpath.to_string(),
            what,
        })?;
        Ok(Some((base, shape, values)))
    }

    /// A dataset of variable-length sequences ([`Walk::sequences`]), with its recorded
    /// attributes.
    fn sequence_dataset(
        &mut self,
        base: Datatype,
        shape: Vec<u64>,
        values: Vec<Vec<u8>>,
        hpath: &str,
    ) -> Result<()> {
        let mut ds =
            DatasetBuilder::vlen_sequence_data(hpath.trim_start_matches('/'), base, shape, values)
                .map_err(|e| write_err(format!("{hpath}: {e}")))?;
        ds = self.dataset_attributes(ds, hpath)?;
        self.summary.datasets += 1;
        self.builder = std::mem::take(&mut self.builder).dataset(ds);
        Ok(())
    }

    /// What has no HDF5 form on the way back: listed in [`FromAsdfSummary::left_out`] (the
    /// error with [`FromAsdfOptions::strict`]).
    fn leave_out(&mut self, path: &str, why: String) -> Result<()> {
        if self.opts.strict {
            return Err(tree_err(path, why));
        }
        self.summary.left_out.push((path.to_string(), why));
        Ok(())
    }

    /// A `$ref` as an HDF5 link: `#/path` (a path in this file) a soft link, to the path
    /// `_hdf5/soft_links` recorded when the original was relative; `file#/path` (or a bare
    /// file) an external link to that file's object.
    fn link(&mut self, path: &str, target: &str) -> Result<()> {
        let name = path.trim_start_matches('/');
        let absolute = |p: &str| {
            if p.is_empty() {
                "/".to_string()
            } else {
                p.to_string()
            }
        };
        let b = std::mem::take(&mut self.builder);
        self.builder = match target.split_once('#') {
            Some(("", local)) => {
                let recorded = hint(self.meta, "soft_links", path).and_then(Node::as_str);
                b.soft_link(
                    name,
                    recorded.map_or_else(|| absolute(local), str::to_string),
                )
            }
            Some((file, object)) => b.external_link(name, file, absolute(object)),
            None => b.external_link(name, target, "/"),
        };
        self.summary.links += 1;
        Ok(())
    }

    fn group_attribute(&mut self, path: &str, attr: AttributeBuilder) {
        self.summary.attributes += 1;
        let b = std::mem::take(&mut self.builder);
        self.builder = if path.is_empty() {
            b.attribute(attr)
        } else {
            b.group_attribute(path.trim_start_matches('/'), attr)
        };
    }

    /// Whether `_hdf5/string_bytes` records variable-length strings at `hpath` whose bytes
    /// are not UTF-8 (the bytes form, docs/hdf5.md), which hdf5-writer cannot write (its
    /// strings are Rust's, UTF-8): left out, listed ([`Walk::leave_out`]).
    fn vlen_string_bytes(&mut self, hpath: &str) -> Result<bool> {
        let variable = hint(self.meta, "string_bytes", hpath)
            .and_then(|r| r.get("size"))
            .and_then(Node::as_str)
            == Some("variable");
        if variable {
            self.leave_out(
                hpath,
                "variable-length strings whose bytes are not UTF-8 have no HDF5 form on the \
                 way back yet (hdf5-writer writes UTF-8 text)"
                    .into(),
            )?;
        }
        Ok(variable)
    }

    /// Fixed-length strings in the bytes form (docs/hdf5.md) at `hpath` (a dataset, or
    /// `PATH@NAME` an attribute), when `_hdf5/string_bytes` records them: the string
    /// datatype recorded (size, character set, padding) and the shape without the bytes'
    /// axis; `None` when none is recorded. A recorded array that is not `uint8` with the
    /// string's size as its last axis, or a record naming no datatype, is an error naming it.
    fn string_bytes(
        &self,
        hpath: &str,
        dtype: &DType,
        shape: &[usize],
    ) -> Result<Option<(Datatype, Vec<usize>)>> {
        let Some(record) = hint(self.meta, "string_bytes", hpath) else {
            return Ok(None);
        };
        let text = |k: &str| record.get(k).and_then(Node::as_str);
        let datatype = record
            .get("size")
            .and_then(|n| n.as_int()?.as_i128())
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| n > 0)
            .and_then(|n| {
                Some((
                    n,
                    super::datatype::string_datatype(n, text("cset")?, text("padding")?)?,
                ))
            });
        let Some((size, datatype)) = datatype else {
            return Err(tree_err(
                hpath,
                "its _hdf5/string_bytes record does not name a string datatype (size, cset \
                 ascii or utf-8, padding nullterm, nullpad or spacepad)",
            ));
        };
        let bytes = matches!(
            dtype,
            DType::Scalar {
                ty: ScalarType::UInt8,
                ..
            }
        );
        match shape.split_last() {
            Some((&n, rest)) if bytes && n == size as usize => Ok(Some((datatype, rest.to_vec()))),
            _ => Err(tree_err(
                hpath,
                format!(
                    "recorded as strings of {size} bytes, but it is {} of shape {shape:?}, not \
                     uint8 with a last axis of {size}",
                    dtype.name()
                ),
            )),
        }
    }

    /// The HDF5 datatype of an array at `hpath`: an enum when `_hdf5` recorded one.
    fn datatype(&self, dtype: &DType, hpath: &str) -> Result<Datatype> {
        let base = to_hdf5(dtype).map_err(|what| Hdf5Error::Unsupported {
            path: hpath.to_string(),
            what,
        })?;
        let Some(members) = hint(self.meta, "enums", hpath).and_then(Node::as_map) else {
            return Ok(base);
        };
        let size = dtype.itemsize();
        let big = matches!(
            dtype,
            DType::Scalar {
                byteorder: asdf_core::array::ByteOrder::Big,
                ..
            }
        );
        let members = members
            .iter()
            .map(|(k, v)| {
                let value = v.as_int().and_then(|i| i.as_i128()).unwrap_or(0);
                let mut bytes = value.to_le_bytes()[..size].to_vec();
                if big {
                    bytes.reverse();
                }
                EnumMember {
                    name: k.as_str().unwrap_or_default().to_string(),
                    value: bytes,
                }
            })
            .collect();
        Ok(Datatype::Enum {
            base: Box::new(base),
            members,
        })
    }

    /// The attribute of a masked array's dataset that names its mask (docs/hdf5.md): an array
    /// mask is written as the companion dataset `companion` beside it, named in
    /// [`MASK_ATTR`]; a number as [`MASK_VALUE_ATTR`].
    fn mask_attribute(
        &mut self,
        node: &Node,
        hpath: &str,
        companion: Option<&str>,
    ) -> Result<Option<AttributeBuilder>> {
        // `null`s in inline data are a mask array too (written beside, as an explicit one)
        let nulls = node.get("mask").is_none() && inline_nulls(node, hpath)?.is_some();
        let Some(mask) = node.get("mask").or(nulls.then_some(node)) else {
            return Ok(None);
        };
        let recorded = hint(self.meta, "attrs", hpath).and_then(Node::as_map);
        if recorded.is_some_and(|r| {
            r.iter()
                .any(|(k, _)| matches!(k.as_str(), Some(MASK_ATTR | MASK_VALUE_ATTR)))
        }) {
            return Err(tree_err(
                hpath,
                format!("a masked array with a recorded attribute named {MASK_ATTR} or {MASK_VALUE_ATTR}, the names that keep its mask"),
            ));
        }
        let at = format!("{hpath}/mask");
        let w = |e: hdf5_writer::Error| write_err(format!("{at}: {e}"));
        self.summary.attributes += 1;
        if mask.is_ndarray() {
            let name = companion.ok_or_else(|| tree_err(&at, "no name for the mask's dataset"))?;
            return AttributeBuilder::vlen_string(MASK_ATTR, name)
                .map(Some)
                .map_err(w);
        }
        match mask.value() {
            Value::Int(i) if mask.tag().is_none() => {
                let x = i
                    .as_i128()
                    .and_then(|x| i64::try_from(x).ok())
                    .ok_or_else(|| tree_err(&at, "a mask value outside int64"))?;
                AttributeBuilder::scalar(MASK_VALUE_ATTR, x)
                    .map(Some)
                    .map_err(w)
            }
            Value::Float(f) if mask.tag().is_none() => {
                AttributeBuilder::scalar(MASK_VALUE_ATTR, *f)
                    .map(Some)
                    .map_err(w)
            }
            _ => Err(tree_err(
                &at,
                "a mask that is neither an array nor a number",
            )),
        }
    }

    fn dataset(&mut self, node: &Node, hpath: &str, companion: Option<&str>) -> Result<()> {
        let mask_attr = self.mask_attribute(node, hpath, companion)?;
        let compressed = self.was_compressed(node, hpath);
        let (dtype, shape, mut data) = match self.band_stream(node, hpath)? {
            Some(s) => s,
            None => {
                let array = self.file.dyn_array_of(node, hpath)?;
                self.report(array.data.len() as u64);
                (array.dtype, array.shape, ArrayData::Bytes(array.data))
            }
        };
        let (mut datatype, shape) = match self.string_bytes(hpath, &dtype, &shape)? {
            Some(s) => s,
            None => (self.datatype(&dtype, hpath)?, shape),
        };
        let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
        if let (Some(layout), ArrayData::Bytes(bytes)) =
            (hint(self.meta, "compound_layouts", hpath), &mut data)
        {
            *bytes =
                pad_compound(&mut datatype, layout, std::mem::take(bytes)).ok_or_else(|| {
                    tree_err(
                        hpath,
                        "its recorded compound layout does not fit its datatype",
                    )
                })?;
        }
        let itemsize = super::datatype::size_of(&datatype);
        let fill = match hint(self.meta, "fill_values", hpath) {
            Some(v) => Some(self.fill_bytes(v, &dtype, hpath)?),
            None => None,
        };
        let ds = DatasetBuilder::new(hpath.trim_start_matches('/'), datatype, shape.clone());
        let mut ds = match data {
            ArrayData::Bytes(b) => ds.raw_data(b),
            ArrayData::Stream(r) => ds.raw_data_reader(r),
        };
        if let Some(f) = fill {
            ds = ds.fill_value(f);
        }
        if let Some(max) = hint(self.meta, "maxshapes", hpath).and_then(Node::as_seq) {
            let dims: Vec<u64> = max
                .iter()
                .map(|d| match d.as_int().and_then(|i| i.as_i128()) {
                    Some(v) => u64::try_from(v).unwrap_or(hdf5_writer::UNLIMITED),
                    None => hdf5_writer::UNLIMITED,
                })
                .collect();
            if dims.len() == shape.len() {
                ds = ds.max_shape(dims);
            }
        }
        let chunks = hint(self.meta, "chunks", hpath).and_then(int_list);
        let filters: Vec<FilterDescription> = hint(self.meta, "filters", hpath)
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(|f| {
                let id = f.get("id")?.as_int()?.as_i128()?;
                let params = f.get("params").and_then(int_list).unwrap_or_default();
                Some(FilterDescription {
                    id: u16::try_from(id).ok()?,
                    name: None,
                    client_data: params.iter().map(|&p| p as u32).collect(),
                })
            })
            // the writer knows deflate, shuffle and fletcher32
            .filter(|f| matches!(f.id, 1..=3))
            .collect();
        let empty = shape.contains(&0);
        // a recorded chunk shape is a hint from the file: one whose chunks would exceed what
        // HDF5 can index (4 GiB) is not followed
        let chunks = chunks.filter(|c| {
            c.iter()
                .try_fold(itemsize as u128, |a, &d| {
                    u128::try_from(d)
                        .ok()
                        .filter(|&d| d > 0)
                        .and_then(|d| a.checked_mul(d))
                })
                .is_some_and(|b| b < 1 << 32)
        });
        match chunks {
            Some(c) if !empty && c.len() == shape.len() => {
                ds = ds.chunked(c.iter().map(|&d| d as u64).collect::<Vec<u64>>());
                for f in filters {
                    ds = ds.filter(f);
                }
            }
            None if compressed && !empty && !shape.is_empty() => {
                ds = ds
                    .chunked(auto_chunks(&shape, itemsize))
                    .filter(FilterDescription {
                        id: 1,
                        name: None,
                        client_data: vec![4],
                    });
            }
            _ => {}
        }
        ds = self.dataset_attributes(ds, hpath)?;
        if let Some(a) = mask_attr {
            ds = ds.attribute(a);
        }
        self.summary.datasets += 1;
        self.builder = std::mem::take(&mut self.builder).dataset(ds);
        // an array mask: the companion dataset beside the data, read whole or band by band
        // as any array (its own mask, if any, is not followed)
        if let (Some(mask), Some(name)) = (node.get("mask").filter(|m| m.is_ndarray()), companion) {
            let parent = &hpath[..hpath.rfind('/').unwrap_or(0)];
            let mpath = format!("{parent}/{name}");
            let data_shape = NdArrayMeta::from_node(node, hpath)
                .ok()
                .and_then(|m| m.fixed_shape());
            let mask_shape = NdArrayMeta::from_node(mask, &mpath)
                .ok()
                .and_then(|m| m.fixed_shape());
            if data_shape != mask_shape {
                return Err(tree_err(
                    &format!("{hpath}/mask"),
                    format!("a mask of shape {mask_shape:?}, not the data's {data_shape:?}"),
                ));
            }
            let bare = strip_mask(mask);
            self.dataset(&bare, &mpath, None)?;
        } else if let (Some((shape, bytes)), Some(name)) = (inline_nulls(node, hpath)?, companion) {
            // `null`s in inline data: a mask array of their places
            let parent = &hpath[..hpath.rfind('/').unwrap_or(0)];
            let mpath = format!("{parent}/{name}");
            let bool8 = DType::Scalar {
                ty: ScalarType::Bool8,
                byteorder: asdf_core::array::ByteOrder::Little,
            };
            let ds = DatasetBuilder::new(
                mpath.trim_start_matches('/'),
                self.datatype(&bool8, &mpath)?,
                shape,
            )
            .raw_data(bytes);
            self.summary.datasets += 1;
            self.builder = std::mem::take(&mut self.builder).dataset(ds);
        }
        Ok(())
    }

    /// Reports the bytes of one more array read whole.
    fn report(&self, len: u64) {
        let bytes = self.bytes_read.fetch_add(len, Ordering::Relaxed) + len;
        let total = self.total.fetch_add(len, Ordering::Relaxed) + len;
        if let Some(report) = &self.opts.progress {
            report.report(bytes, total);
        }
    }

    /// An array of at least [`FromAsdfOptions::band_min_bytes`] whose block is in the file:
    /// its datatype, shape and a reader of its bytes (in C order, in its byte order),
    /// gathered from the block a piece at a time whatever its codec, offset and strides
    /// (`band.rs`). `None` for the others, which are read whole.
    fn band_stream(
        &self,
        node: &Node,
        hpath: &str,
    ) -> Result<Option<(DType, Vec<usize>, ArrayData)>> {
        let Ok(meta) = NdArrayMeta::from_node(node, hpath) else {
            return Ok(None);
        };
        let (ArraySource::Block(_), Some(path), None) =
            (&meta.source, self.file.path(), self.file.fits_hdus())
        else {
            return Ok(None);
        };
        // a padded compound is spread over its layout whole
        if meta.is_streamed() || hint(self.meta, "compound_layouts", hpath).is_some() {
            return Ok(None);
        }
        let Some(header) = meta
            .block_index(self.file.blocks().len())
            .and_then(|i| self.file.blocks().get(i))
        else {
            return Ok(None);
        };
        // a block of an ASDF 0.1.0 file may carry an encoding chain: read whole
        if self.file.layout().legacy_block(header.index).is_some() {
            return Ok(None);
        }
        let dtype = meta
            .dtype
            .clone()
            .unwrap_or_else(|| DType::scalar(ScalarType::Float64, meta.byteorder));
        let Some(shape) = meta.fixed_shape() else {
            return Ok(None);
        };
        let itemsize = dtype.itemsize() as u64;
        let Some(len) = shape.iter().try_fold(itemsize, |a, &d| a.checked_mul(d)) else {
            return Ok(None);
        };
        if shape.is_empty() || len < self.opts.band_min_bytes || itemsize == 0 {
            return Ok(None);
        }
        let strides = match &meta.strides {
            Some(s) if s.len() == shape.len() => s.clone(),
            Some(_) => return Ok(None),
            None => {
                let mut c = vec![0i64; shape.len()];
                let mut acc = itemsize as i128;
                for (st, &d) in c.iter_mut().zip(&shape).rev() {
                    *st = i64::try_from(acc).unwrap_or(i64::MAX);
                    acc *= i128::from(d);
                }
                c
            }
        };
        let view = band::View {
            itemsize,
            shape: shape.clone(),
            offset: meta.offset,
            strides,
        };
        // a view reaching outside its block is the whole read's error to report
        match view.span() {
            Some((lo, hi)) if lo >= 0 && hi <= i128::from(header.data_size) => {}
            _ => return Ok(None),
        }
        let Ok(shape) = shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<usize>, _>>()
        else {
            return Ok(None);
        };
        let compression = match header
            .compression_label()
            .map(|l| asdf_core::write::Compression::from_label(&l))
        {
            None => None,
            Some(Ok(c)) => c,
            Some(Err(_)) => return Ok(None),
        };
        if compression.is_none() && header.used_size < header.data_size {
            return Ok(None);
        }
        let io = |e: std::io::Error| Hdf5Error::Io {
            path: path.display().to_string(),
            source: e,
        };
        let file = Arc::new(std::fs::File::open(path).map_err(io)?);
        let spec = band::BlockSpec {
            file,
            header: header.clone(),
            compression,
            verify: self.opts.verify_checksums,
            spill_dir: self.spill_dir.clone(),
            slot: Arc::clone(&self.slot),
        };
        let Some(reader) = band::ViewReader::new(spec, view) else {
            return Ok(None);
        };
        self.total.fetch_add(len, Ordering::Relaxed);
        let counted = Counted {
            inner: Box::new(reader),
            bytes: Arc::clone(&self.bytes_read),
            total: Arc::clone(&self.total),
            since: 0,
            progress: self.opts.progress.clone(),
        };
        Ok(Some((dtype, shape, ArrayData::Stream(Box::new(counted)))))
    }

    /// The bytes of a recorded fill value in the dataset's datatype.
    fn fill_bytes(&self, v: &Node, dtype: &DType, hpath: &str) -> Result<Vec<u8>> {
        if v.is_ndarray() {
            return Ok(self.file.dyn_array_of(v, hpath)?.data);
        }
        let bad = || tree_err(hpath, "its recorded fill value does not fit its datatype");
        let DType::Scalar { ty, byteorder } = dtype else {
            return Err(bad());
        };
        let mut a = scalar_array(v, &ty.name()).ok_or_else(bad)?;
        if *byteorder == asdf_core::array::ByteOrder::Big {
            a.data.reverse();
        }
        Ok(a.data)
    }

    fn was_compressed(&self, node: &Node, hpath: &str) -> bool {
        let Ok(meta) = NdArrayMeta::from_node(node, hpath) else {
            return false;
        };
        let ArraySource::Block(_) = meta.source else {
            return false;
        };
        meta.block_index(self.file.blocks().len())
            .and_then(|i| self.file.blocks().get(i))
            .is_some_and(|b| b.compression_label().is_some())
    }

    fn string_dataset(&mut self, node: &Node, shape: &[i128], hpath: &str) -> Result<()> {
        let mut strings = Vec::new();
        flatten_strings(node, &mut strings).ok_or_else(|| {
            tree_err(hpath, "a string dataset holds something other than strings")
        })?;
        let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
        let mut ds =
            DatasetBuilder::vlen_string_data(hpath.trim_start_matches('/'), shape, &strings)
                .map_err(|e| write_err(format!("{hpath}: {e}")))?;
        ds = self.dataset_attributes(ds, hpath)?;
        self.summary.datasets += 1;
        self.builder = std::mem::take(&mut self.builder).dataset(ds);
        Ok(())
    }

    fn dataset_attributes(
        &mut self,
        mut ds: DatasetBuilder,
        hpath: &str,
    ) -> Result<DatasetBuilder> {
        for (k, v) in hint(self.meta, "attrs", hpath)
            .and_then(Node::as_map)
            .unwrap_or_default()
        {
            let name = k.as_str().unwrap_or_default();
            if let Some(a) = self.attribute(name, v, &format!("{hpath}@{name}"))? {
                ds = ds.attribute(a);
                self.summary.attributes += 1;
            }
        }
        Ok(ds)
    }

    fn scalar_dataset(&mut self, node: &Node, dtype: &str, hpath: &str) -> Result<()> {
        let array = scalar_array(node, dtype)
            .ok_or_else(|| tree_err(hpath, format!("{node:?} is not a {dtype} scalar")))?;
        let datatype = self.datatype(&array.dtype, hpath)?;
        let mut ds =
            DatasetBuilder::new(hpath.trim_start_matches('/'), datatype, Vec::<u64>::new())
                .raw_data(array.data);
        ds = self.dataset_attributes(ds, hpath)?;
        self.summary.datasets += 1;
        self.builder = std::mem::take(&mut self.builder).dataset(ds);
        Ok(())
    }

    /// An attribute from a tree value: numbers as int64/float64, booleans as h5py's bool enum,
    /// strings as variable-length strings, arrays with their datatypes, variable-length
    /// sequences as such, anything else without arrays as its YAML text. A value holding
    /// arrays that has no HDF5 form (arrays inside records or lists) is left out
    /// ([`Walk::leave_out`]): `None`.
    fn attribute(&mut self, name: &str, v: &Node, at: &str) -> Result<Option<AttributeBuilder>> {
        let w = |e: hdf5_writer::Error| write_err(format!("{at}: {e}"));
        if self.vlen_string_bytes(at)? {
            return Ok(None);
        }
        if let Some((base, shape, values)) = self.sequences(v, at)? {
            return AttributeBuilder::vlen_sequences_shaped(name, base, shape, values)
                .map(Some)
                .map_err(w);
        }
        if !v.is_ndarray() && holds_array(v) {
            // its YAML text would keep a block's number, not its values
            self.leave_out(
                at,
                "arrays inside records or lists (such as a variable-length sequence field of \
                 a compound) have no HDF5 form on the way back yet"
                    .into(),
            )?;
            return Ok(None);
        }
        self.attribute_of(name, v, at).map(Some)
    }

    /// [`Walk::attribute`] of a value that is not sequences and holds no array but itself.
    fn attribute_of(&self, name: &str, v: &Node, at: &str) -> Result<AttributeBuilder> {
        let w = |e: hdf5_writer::Error| write_err(format!("{at}: {e}"));
        if v.is_ndarray() {
            let array = self.file.dyn_array_of(v, at)?;
            let (datatype, shape) = match self.string_bytes(at, &array.dtype, &array.shape)? {
                Some(s) => s,
                None => (
                    to_hdf5(&array.dtype).map_err(|what| Hdf5Error::Unsupported {
                        path: at.to_string(),
                        what,
                    })?,
                    array.shape.clone(),
                ),
            };
            let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            return Ok(AttributeBuilder::new(name, datatype, shape, array.data));
        }
        if v.tag().is_none() {
            match v.value() {
                Value::Int(i) => {
                    if let Some(x) = i.as_i128().and_then(|x| i64::try_from(x).ok()) {
                        return AttributeBuilder::scalar(name, x).map_err(w);
                    }
                }
                Value::Float(f) => return AttributeBuilder::scalar(name, *f).map_err(w),
                Value::Bool(b) => {
                    let dt = to_hdf5(&DType::Scalar {
                        ty: ScalarType::Bool8,
                        byteorder: asdf_core::array::ByteOrder::Little,
                    })
                    .map_err(|e| write_err(format!("{at}: {e}")))?;
                    return Ok(AttributeBuilder::new(
                        name,
                        dt,
                        Vec::new(),
                        vec![u8::from(*b)],
                    ));
                }
                Value::Str(s) if !s.contains('\0') => {
                    return AttributeBuilder::vlen_string(name, s).map_err(w)
                }
                Value::Seq(items) if !items.is_empty() => {
                    let strings: Option<Vec<&str>> = items.iter().map(Node::as_str).collect();
                    if let Some(strings) = strings.filter(|s| s.iter().all(|x| !x.contains('\0'))) {
                        return AttributeBuilder::vlen_strings(name, &strings).map_err(w);
                    }
                }
                _ => {}
            }
        }
        // the tree form of netCDF's dimension scales (docs/hdf5.md), written back as HDF5
        // references when every one names a dataset or group the way back writes:
        // sequences of object references (`DIMENSION_LIST`) and records of an object
        // reference and a dimension (`REFERENCE_LIST`)
        if let (None, Value::Seq(items)) = (v.tag(), v.value()) {
            let lists: Option<Vec<Vec<String>>> = items
                .iter()
                .map(|l| match (l.tag(), l.value()) {
                    (None, Value::Seq(refs)) => refs.iter().map(|r| self.object_path(r)).collect(),
                    _ => None,
                })
                .collect();
            if let Some(lists) = lists.filter(|l| !l.is_empty()) {
                return Ok(AttributeBuilder::vlen_object_references(name, lists));
            }
            let entries: Option<Vec<(String, u32)>> = items
                .iter()
                .map(|e| match e.as_map() {
                    Some([(k1, target), (k2, dim)])
                        if e.tag().is_none()
                            && k1.as_str() == Some("dataset")
                            && k2.as_str() == Some("dimension") =>
                    {
                        let dim = dim.as_int()?.as_i128()?;
                        Some((self.object_path(target)?, u32::try_from(dim).ok()?))
                    }
                    _ => None,
                })
                .collect();
            if let Some(entries) = entries.filter(|e| !e.is_empty()) {
                return Ok(AttributeBuilder::object_reference_list(name, entries));
            }
        }
        // anything else: its YAML text, so that nothing is lost
        let text = asdf_core::yaml::emit(v, &EmitOptions::default())
            .map_err(|e| tree_err(at, format!("cannot write as YAML text: {e}")))?;
        AttributeBuilder::vlen_strings(name, &[text.trim_end()]).map_err(w)
    }
}

impl Walk<'_> {
    /// The HDF5 path (relative to the root) of the object a `{$ref: "#/a/b"}` names, when
    /// the tree holds there an array or a group that the way back writes as a dataset or
    /// group (reached through mappings only, outside `_hdf5` and python asdf's keys);
    /// `None` for anything else (the root, a scalar, another file).
    fn object_path(&self, v: &Node) -> Option<String> {
        let local = ref_target(v)?.strip_prefix('#')?.strip_prefix('/')?;
        let mut names = Vec::new();
        let mut node = self.file.tree();
        for part in local.split('/') {
            let name = part.replace("~1", "/").replace("~0", "~");
            if name.is_empty()
                || name.contains('/')
                || (names.is_empty() && (ASDF_KEYS.contains(&name.as_str()) || name == META_KEY))
                || (!names.is_empty() && (node.tag().is_some() || ref_target(node).is_some()))
            {
                return None;
            }
            node = node
                .as_map()?
                .iter()
                .find(|(k, _)| k.as_str() == Some(name.as_str()))
                .map(|(_, n)| n)?;
            names.push(name);
        }
        let group = node.as_map().is_some() && node.tag().is_none() && ref_target(node).is_none();
        (node.is_ndarray() || group).then(|| names.join("/"))
    }
}

/// The nodes at the leaves of nested sequences of `shape` (the node itself for `[]`), in C
/// order, pushed to `out`; `false` when the node is not of that shape.
fn leaves_by_shape<'n>(node: &'n Node, shape: &[u64], out: &mut Vec<&'n Node>) -> bool {
    let Some((&first, rest)) = shape.split_first() else {
        out.push(node);
        return true;
    };
    match (node.tag(), node.value()) {
        (None, Value::Seq(items)) if items.len() as u64 == first => {
            items.iter().all(|n| leaves_by_shape(n, rest, out))
        }
        _ => false,
    }
}

/// Puts `data`, elements of `from`, in the byte orders of `to`, the same datatype but for
/// them (fields of records packed, as ASDF's are).
fn reorder(data: &mut [u8], from: &DType, to: &DType) {
    let size = from.itemsize();
    if size == 0 {
        return;
    }
    for element in data.chunks_exact_mut(size) {
        match (from, to) {
            (DType::Scalar { ty, byteorder: a }, DType::Scalar { byteorder: b, .. })
                if a != b && ty.has_byteorder() =>
            {
                // complex numbers are two floats, ucs4 characters four bytes each
                let unit = match ty {
                    ScalarType::Complex64 | ScalarType::Complex128 => size / 2,
                    ScalarType::Ucs4(_) => 4,
                    _ => size,
                };
                element
                    .chunks_exact_mut(unit.max(1))
                    .for_each(<[u8]>::reverse);
            }
            (DType::Record(fa), DType::Record(fb)) => {
                let mut at = 0;
                for (x, y) in fa.iter().zip(fb) {
                    let len = x.dtype.itemsize() * x.shape.iter().product::<usize>();
                    if let Some(part) = element.get_mut(at..at + len) {
                        reorder(part, &x.dtype, &y.dtype);
                    }
                    at += len;
                }
            }
            _ => {}
        }
    }
}

/// Whether a node is or holds an ndarray anywhere.
fn holds_array(node: &Node) -> bool {
    node.is_ndarray()
        || match node.value() {
            Value::Seq(items) => items.iter().any(holds_array),
            Value::Map(entries) => entries.iter().any(|(_, v)| holds_array(v)),
            _ => false,
        }
}

/// A name for the companion dataset of the mask of `name` that no member of its group has:
/// `NAME.mask`, else `NAME.mask.1`, `NAME.mask.2`, ...
fn companion_name(name: &str, taken: &std::collections::HashSet<String>) -> String {
    let first = format!("{name}.mask");
    if !taken.contains(&first) {
        return first;
    }
    (1u64..)
        .map(|k| format!("{first}.{k}"))
        .find(|c| !taken.contains(c))
        .unwrap_or(first)
}

/// Where the inline data of an ndarray without `mask` holds `null`s (its implicit mask);
/// `None` when it holds none or is not inline.
/// Its shape and a `bool8` byte per element.
fn inline_nulls(node: &Node, hpath: &str) -> Result<Option<(Vec<u64>, Vec<u8>)>> {
    if node.get("mask").is_some() {
        return Ok(None);
    }
    let Ok(meta) = NdArrayMeta::from_node(node, hpath) else {
        return Ok(None);
    };
    if !matches!(meta.source, ArraySource::Inline(_)) {
        return Ok(None);
    }
    let nulls = asdf_core::unstable::inline_null_mask(&meta, hpath)
        .map_err(|e| tree_err(hpath, e.to_string()))?;
    Ok(nulls.map(|n| {
        let shape = n.shape().iter().map(|&d| d as u64).collect();
        (shape, n.iter().map(|&b| u8::from(b)).collect())
    }))
}

/// An ndarray node without its `mask` key.
fn strip_mask(node: &Node) -> Node {
    match node.value() {
        Value::Map(entries) if entries.iter().any(|(k, _)| k.as_str() == Some("mask")) => {
            let kept = entries
                .iter()
                .filter(|(k, _)| k.as_str() != Some("mask"))
                .cloned()
                .collect();
            match node.tag() {
                Some(t) => Node::tagged(t.to_string(), Value::Map(kept)),
                None => Node::new(Value::Map(kept)),
            }
        }
        _ => node.clone(),
    }
}

/// The target of a `{$ref: TARGET}` mapping (a JSON reference, as HDF5 links become).
fn ref_target(v: &Node) -> Option<&str> {
    match v.as_map() {
        Some([(k, target)]) if v.tag().is_none() && k.as_str() == Some("$ref") => target.as_str(),
        _ => None,
    }
}

/// Counts the bytes read through it and reports them (at most once a MiB).
struct Counted {
    inner: Box<dyn Read + Send>,
    bytes: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
    since: u64,
    progress: Option<Progress>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let bytes = self.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        self.since += n as u64;
        if let Some(report) = &self.progress {
            if self.since >= 1 << 20 || (n == 0 && self.since > 0) {
                self.since = 0;
                report.report(bytes, self.total.load(Ordering::Relaxed));
            }
        }
        Ok(n)
    }
}

/// Spreads packed records over the compound layout `_hdf5` recorded (field offsets and size,
/// padding zeroed), and sets that layout on the datatype.
fn pad_compound(datatype: &mut Datatype, layout: &Node, packed: Vec<u8>) -> Option<Vec<u8>> {
    let size = usize::try_from(layout.get("size")?.as_int()?.as_i128()?).ok()?;
    let offsets: Vec<usize> = int_list(layout.get("offsets")?)?
        .iter()
        .map(|&o| usize::try_from(o).ok())
        .collect::<Option<_>>()?;
    let Datatype::Compound {
        size: dsize,
        fields,
    } = datatype
    else {
        return None;
    };
    if offsets.len() != fields.len() {
        return None;
    }
    let widths: Vec<usize> = fields
        .iter()
        .map(|f| super::datatype::size_of(&f.datatype))
        .collect();
    let packed_size: usize = widths.iter().sum();
    if offsets.iter().zip(&widths).any(|(o, w)| o + w > size) || packed_size == 0 {
        return None;
    }
    let n = packed.len() / packed_size;
    let mut out = vec![0u8; n.checked_mul(size)?];
    for (e, src) in packed.chunks_exact(packed_size).enumerate() {
        let mut at = 0;
        for (o, w) in offsets.iter().zip(&widths) {
            out[e * size + o..e * size + o + w].copy_from_slice(&src[at..at + w]);
            at += w;
        }
    }
    for (f, o) in fields.iter_mut().zip(&offsets) {
        f.byte_offset = *o as u32;
    }
    *dsize = size as u32;
    Some(out)
}

fn flatten_strings(node: &Node, out: &mut Vec<String>) -> Option<()> {
    match node.value() {
        Value::Seq(items) => items.iter().try_for_each(|n| flatten_strings(n, out)),
        Value::Str(s) => {
            out.push(s.clone());
            Some(())
        }
        _ => None,
    }
}

/// About [`CHUNK_BYTES`] per chunk, in whole rows of the first axis.
fn auto_chunks(shape: &[u64], itemsize: usize) -> Vec<u64> {
    let row: u64 = shape[1..].iter().product::<u64>().max(1) * itemsize.max(1) as u64;
    let rows = (CHUNK_BYTES as u64 / row).clamp(1, shape[0].max(1));
    let mut out = vec![rows];
    out.extend(&shape[1..]);
    out
}

/// A YAML scalar as a 0-d array of the datatype named `dtype` (`float32`, `uint8`, ...).
fn scalar_array(node: &Node, dtype: &str) -> Option<DynArray> {
    use ScalarType as S;
    let ty = ScalarType::from_name(dtype)?;
    let data = match (ty, node.value()) {
        (S::Float16, Value::Float(_)) => return None,
        (S::Float32, Value::Float(f)) => (*f as f32).to_le_bytes().to_vec(),
        (S::Float64, Value::Float(f)) => f.to_le_bytes().to_vec(),
        (S::Bool8, Value::Bool(b)) => vec![u8::from(*b)],
        (
            S::Int8 | S::Int16 | S::Int32 | S::Int64 | S::UInt8 | S::UInt16 | S::UInt32 | S::UInt64,
            Value::Int(i),
        ) => {
            let v = i.as_i128()?;
            let size = DType::Scalar {
                ty,
                byteorder: asdf_core::array::ByteOrder::Little,
            }
            .itemsize();
            v.to_le_bytes()[..size].to_vec()
        }
        _ => return None,
    };
    Some(DynArray {
        dtype: DType::Scalar {
            ty,
            byteorder: asdf_core::array::ByteOrder::Little,
        },
        shape: Vec::new(),
        data,
    })
}
