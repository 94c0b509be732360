//! Turning the caller's tree into the tree written: placeholders and read ndarray nodes
//! become descriptors with block numbers or inline data; the root gets its tag,
//! `asdf_library` and `history`.

use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

use super::jobs::{BlockData, BlockJob, CopyRange};
use super::nodes::{
    self, byteorder_of, datatype_node, int, nested, shape_node, word, NDARRAY_KEYS,
};
use super::{CompressionChoice, Storage, WriteError, Writer};
use crate::array::to_node::{
    first_non_ascii, first_non_ascii_inline, inline_literals_ok, inline_readable,
};
use crate::array::{ArraySource, DType, NdArrayMeta};
use crate::codec::Compression;
use crate::schema::NodeIds;
use crate::yaml::hash::FastBuild;
use crate::yaml::{Node, NodeData, TreePath, Value};
use crate::AsdfFile;

/// The prepared tree and the blocks it refers to.
pub(crate) struct Plan<'w> {
    pub root: Node,
    pub tag_handles: Vec<(String, String)>,
    pub blocks: Vec<BlockJob<'w>>,
    /// External files: (relative name, block).
    pub externals: Vec<(String, BlockJob<'w>)>,
    /// Whether the tree holds the streamed array (its block header ends the file).
    pub streamed: bool,
    /// What other readers may not follow ([`super::portable`]).
    pub warnings: Vec<super::WriteWarning>,
}

struct Prep<'w, 'a> {
    writer: &'w Writer<'a>,
    source: Option<&'w AsdfFile>,
    memo: HashMap<usize, Node, FastBuild>,
    source_blocks: HashMap<(usize, Option<Compression>), usize>,
    blocks: Vec<BlockJob<'w>>,
    externals: Vec<(String, BlockJob<'w>)>,
    /// File stem of the main file, for external names.
    stem: Option<String>,
    ndarray_tag: String,
    /// The `core/integer` tag of the standard written: a `core/integer` node of another
    /// version (a tree read from a 1.7.0 file written as 1.6.0, or the reverse) takes it.
    integer_tag: String,
    streamed: bool,
    /// The source file opened again to copy stored block bytes.
    source_handle: Option<Arc<File>>,
    /// The ndarray nodes built here from registered arrays: already in the schema's order and
    /// style, and valid by construction, so hints and validation pass over them.
    generated: NodeIds,
}

fn key_is(k: &Node, name: &str) -> bool {
    k.tag().is_none() && k.as_str() == Some(name)
}

fn with_value(node: &Node, value: Value) -> Node {
    let d = node.data();
    Node::from(NodeData {
        tag: d.tag.clone(),
        value,
        style: d.style,
        anchor: None,
    })
}

fn with_tag(node: &Node, tag: String, value: Value) -> Node {
    let d = node.data();
    Node::from(NodeData {
        tag: Some(tag.into()),
        value,
        style: d.style,
        anchor: None,
    })
}

fn bad(path: &TreePath, message: impl Into<String>) -> WriteError {
    WriteError::BadTree {
        path: path.clone(),
        message: message.into(),
    }
}

fn source_err(path: &TreePath, e: crate::Error) -> WriteError {
    WriteError::Source {
        path: path.clone(),
        source: Box::new(e),
    }
}

/// Prepares `root` for writing. `stem` is the main file's stem when writing to a path
/// (needed by external storage).
pub(crate) fn plan<'w>(
    writer: &'w Writer<'_>,
    root: &Node,
    stem: Option<&str>,
) -> Result<Plan<'w>, WriteError> {
    if !writer.opts.standard.known() {
        return Err(WriteError::UnknownStandard(writer.opts.standard.clone()));
    }
    let mut p = Prep {
        writer,
        source: writer.source,
        memo: HashMap::default(),
        source_blocks: HashMap::new(),
        blocks: Vec::new(),
        externals: Vec::new(),
        stem: stem.map(str::to_string),
        ndarray_tag: writer.opts.standard.ndarray_tag(),
        integer_tag: format!(
            "{}core/integer-{}",
            super::nodes::ASDF,
            writer.opts.standard.array_tag_version()
        ),
        streamed: false,
        source_handle: None,
        generated: NodeIds::default(),
    };
    let root = p.root(root)?;
    // the writing hints of the tags' schemas: propertyOrder, flowStyle, style
    let root =
        crate::schema::apply_style_hints_except(&root, writer.opts.standard.as_str(), &p.generated);
    let mut tag_handles = vec![("!".to_string(), nodes::ASDF.to_string())];
    if let Some(f) = writer.source {
        for (h, prefix) in &f.document().tag_directives {
            if !tag_handles.iter().any(|(eh, _)| eh == h) && h != "!!" {
                tag_handles.push((h.clone(), prefix.clone()));
            }
        }
    }
    super::validate_written(&writer.opts, &root, &p.generated)?;
    let warnings = super::portable::check(writer.opts.portable, &p.blocks, &p.externals)?;
    Ok(Plan {
        root,
        tag_handles,
        blocks: p.blocks,
        externals: p.externals,
        streamed: p.streamed,
        warnings,
    })
}

impl<'w> Prep<'w, '_> {
    fn root(&mut self, root: &Node) -> Result<Node, WriteError> {
        let std = &self.writer.opts.standard;
        let entries: &[(Node, Node)] = match root.value() {
            Value::Map(m) => m,
            Value::Null => &[],
            _ => return Err(bad(&TreePath::root(), "the root must be a mapping")),
        };
        let mut out = Vec::with_capacity(entries.len() + 2);
        out.push((Node::str("asdf_library"), super::library_software()));
        let old_history = entries
            .iter()
            .find(|(k, _)| key_is(k, "history"))
            .map(|(_, v)| v);
        if let Some(h) = self.history(old_history)? {
            out.push((Node::str("history"), h));
        }
        let mut path = TreePath::root();
        for (k, v) in entries {
            if key_is(k, "asdf_library") || key_is(k, "history") {
                continue;
            }
            path.push_key(k.as_str().unwrap_or("?"));
            let nv = self.node(v, &mut path)?;
            path.pop();
            out.push((k.clone(), nv));
        }
        Ok(Node::tagged(std.root_tag(), Value::Map(out)))
    }

    fn history(&mut self, old: Option<&Node>) -> Result<Option<Node>, WriteError> {
        let std = &self.writer.opts.standard;
        let extra = &self.writer.history;
        if !std.has_extension_history() {
            // list-form history (asdf-1.0.0): keep entries, append new ones
            let mut items: Vec<Node> = match old.map(Node::value) {
                Some(Value::Seq(s)) => s.clone(),
                _ => Vec::new(),
            };
            items.extend(extra.iter().cloned());
            return Ok((!items.is_empty()).then(|| Node::new(Value::Seq(items))));
        }
        let uri = std.extension_uri();
        let mut entries: Vec<(Node, Node)> = Vec::new();
        let mut exts: Vec<Node> = Vec::new();
        let mut hist_entries: Vec<Node> = Vec::new();
        match old.map(Node::value) {
            Some(Value::Map(m)) => {
                for (k, v) in m {
                    if key_is(k, "extensions") {
                        if let Some(s) = v.as_seq() {
                            exts.extend(
                                s.iter()
                                    .filter(|e| {
                                        e.get("extension_uri").and_then(Node::as_str)
                                            != Some(uri.as_str())
                                    })
                                    .cloned(),
                            );
                        }
                    } else if key_is(k, "entries") {
                        if let Some(s) = v.as_seq() {
                            hist_entries.extend(s.iter().cloned());
                        }
                    } else {
                        entries.push((k.clone(), v.clone()));
                    }
                }
            }
            Some(Value::Seq(s)) => hist_entries.extend(s.iter().cloned()),
            _ => {}
        }
        exts.push(Node::tagged(
            format!("{}core/extension_metadata-1.0.0", nodes::ASDF),
            nodes::map(vec![
                (
                    "extension_class",
                    Node::str("asdf.extension._manifest.ManifestExtension"),
                ),
                ("extension_uri", Node::str(uri)),
                (
                    "manifest_software",
                    nodes::software(vec![
                        ("name", Node::str("asdf_standard")),
                        ("version", Node::str("1.5.0")),
                    ]),
                ),
                ("software", super::library_software()),
            ]),
        ));
        hist_entries.extend(extra.iter().cloned());
        let mut out = vec![(Node::str("extensions"), Node::new(Value::Seq(exts)))];
        if !hist_entries.is_empty() {
            out.push((Node::str("entries"), Node::new(Value::Seq(hist_entries))));
        }
        out.extend(entries);
        Ok(Some(Node::new(Value::Map(out))))
    }

    fn node(&mut self, node: &Node, path: &mut TreePath) -> Result<Node, WriteError> {
        // scalars are written as they are (placeholders are mappings)
        if !matches!(node.value(), Value::Map(_) | Value::Seq(_)) {
            return Ok(node.clone());
        }
        if let Some(n) = self.memo.get(&node.id()) {
            return Ok(n.clone());
        }
        let out = if let Some(spec) = self.writer.stream.as_ref().filter(|s| s.node.ptr_eq(node)) {
            self.streamed = true;
            let mut shape = vec![Node::str("*")];
            shape.extend(spec.row_shape.iter().map(|&d| int(d as i128)));
            Node::tagged(
                self.ndarray_tag.clone(),
                nodes::map(vec![
                    ("source", int(-1)),
                    ("datatype", datatype_node(&spec.dtype, false)),
                    ("byteorder", word(byteorder_of(&spec.dtype).as_str())),
                    ("shape", nodes::flow(None, Value::Seq(shape))),
                ]),
            )
        } else if let Some(view) = self.writer.views.get(&node.id()) {
            self.view(view, path)?
        } else if let Some(&i) = self.writer.piece_ids.get(&node.id()) {
            let n = self.pieces(i, path)?;
            let n = self.set_mask(node, n, path)?;
            self.generated.insert(n.id());
            n
        } else if let Some(&i) = self.writer.by_id.get(&node.id()) {
            let n = self.registered(i, path)?;
            let n = self.set_mask(node, n, path)?;
            self.generated.insert(n.id());
            if let Some(mask) = n.get("mask") {
                self.generated.insert(mask.id());
            }
            n
        } else if let Some(spec) = self.writer.zarr.get(&node.id()) {
            super::zarr::plan_registered(spec, &mut self.blocks)
        } else if let Some(n) = match self.source.filter(|_| crate::file::is_zarr(node)) {
            Some(src) => super::zarr::plan_source(src, node, &path.to_string(), &mut self.blocks)?,
            None => None,
        } {
            n
        } else if node.is_ndarray() {
            self.read_ndarray(node, path)?
        } else {
            match node.value() {
                Value::Seq(items) => {
                    let mut changed = false;
                    let mut out = Vec::with_capacity(items.len());
                    for (i, it) in items.iter().enumerate() {
                        path.push_index(i);
                        let n = self.node(it, path)?;
                        path.pop();
                        changed |= !n.ptr_eq(it);
                        out.push(n);
                    }
                    if changed {
                        with_value(node, Value::Seq(out))
                    } else {
                        node.clone()
                    }
                }
                Value::Map(entries) => {
                    let mut changed = false;
                    let mut out = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        path.push_key(k.as_str().unwrap_or("?"));
                        let n = self.node(v, path)?;
                        path.pop();
                        changed |= !n.ptr_eq(v);
                        out.push((k.clone(), n));
                    }
                    let out = if changed {
                        with_value(node, Value::Map(out))
                    } else {
                        node.clone()
                    };
                    self.integer_of_the_standard(out)
                }
                _ => node.clone(),
            }
        };
        self.memo.insert(node.id(), out.clone());
        Ok(out)
    }

    /// `n` with the standard's `core/integer` tag if it is a `core/integer` node of another
    /// version: the tag's versions (1.0.0 before ASDF Standard 1.6.0, 1.1.0 in 1.6.0, 1.2.0
    /// from 1.7.0) differ only in the ndarray version of their `words`, which this writer
    /// describes anew in the standard's version.
    fn integer_of_the_standard(&self, n: Node) -> Node {
        let other_version = n.tag().is_some_and(|t| {
            t != self.integer_tag
                && t.strip_prefix(super::nodes::ASDF)
                    .is_some_and(|t| t.starts_with("core/integer-"))
        });
        if other_version {
            with_tag(&n, self.integer_tag.clone(), n.value().clone())
        } else {
            n
        }
    }

    /// `n`, the node built for the array `placeholder`, with the mask [`Writer::set_mask`]
    /// gave it (after `source` or `data`, replacing any other).
    fn set_mask(
        &mut self,
        placeholder: &Node,
        n: Node,
        path: &mut TreePath,
    ) -> Result<Node, WriteError> {
        let Some(mask) = self.writer.masks.get(&placeholder.id()).cloned() else {
            return Ok(n);
        };
        path.push_key("mask");
        let m = self.node(&mask, path);
        path.pop();
        let m = m?;
        let Value::Map(entries) = n.value() else {
            return Ok(n);
        };
        let mut out = Vec::with_capacity(entries.len() + 1);
        for (k, v) in entries {
            if key_is(k, "mask") {
                continue;
            }
            out.push((k.clone(), v.clone()));
            if key_is(k, "source") || key_is(k, "data") {
                out.push((word("mask"), m.clone()));
            }
        }
        Ok(with_value(&n, Value::Map(out)))
    }

    fn compression_for(
        &self,
        choice: Option<CompressionChoice>,
        input: Option<Compression>,
    ) -> Option<Compression> {
        match choice.unwrap_or(self.writer.opts.compression) {
            CompressionChoice::None => None,
            CompressionChoice::Codec(c) => Some(c),
            CompressionChoice::Input => input,
        }
    }

    /// The storage of an array of `count` elements: the caller's `choice`, else the
    /// writer's; [`Storage::Input`] gives `input`, where the array is now ([`Storage::Internal`]
    /// for a new one).
    fn storage_for(&self, choice: Option<Storage>, count: usize, input: Storage) -> Storage {
        match choice.unwrap_or(self.writer.opts.storage) {
            Storage::InlineUpTo(n) if count <= n => Storage::Inline,
            Storage::InlineUpTo(_) => Storage::Internal,
            Storage::Input => input,
            s => s,
        }
    }

    /// Where an array of the source tree with this `source` is now, as a [`Storage`]: an
    /// external one stays external only when the file written has a path to put it beside
    /// (a `fits:` HDU of ASDF in FITS goes to a block).
    fn input_storage(&self, source: &ArraySource) -> Storage {
        match source {
            ArraySource::Inline(_) => Storage::Inline,
            ArraySource::Uri(uri) if !uri.starts_with("fits:") && self.stem.is_some() => {
                Storage::External
            }
            _ => Storage::Internal,
        }
    }

    fn registered(&mut self, i: usize, path: &TreePath) -> Result<Node, WriteError> {
        let reg = self
            .writer
            .arrays
            .get(i)
            .ok_or_else(|| bad(path, "unknown array"))?;
        let storage = self.storage_for(
            reg.opts.storage,
            reg.array.element_count(),
            Storage::Internal,
        );
        // ascii strings that are not ASCII: refused inline when this array asked for it
        // (array_node), else in a block
        let storage = match storage {
            Storage::Inline
                if reg.opts.storage != Some(Storage::Inline)
                    && first_non_ascii(reg.array.dtype(), reg.array.bytes()).is_some() =>
            {
                Storage::Internal
            }
            s => s,
        };
        let compression = self.compression_for(reg.opts.compression, None);
        let data = BlockData::Slice(reg.array.bytes());
        let dtype = reg.array.dtype().clone();
        let shape = reg.array.shape().to_vec();
        let mut extra = Vec::new();
        if let Some(mask) = &reg.mask {
            let bool8 = mask.dtype().scalar_type() == Some(crate::array::ScalarType::Bool8);
            if !bool8 || mask.shape() != shape.as_slice() {
                return Err(bad(
                    path,
                    format!(
                        "mask must be bool8 of shape {shape:?}, found {} of shape {:?}",
                        mask.dtype().name(),
                        mask.shape()
                    ),
                ));
            }
            let mask_storage =
                self.storage_for(reg.opts.storage, mask.element_count(), Storage::Internal);
            let node = self.array_node(
                mask.dtype(),
                mask.shape(),
                BlockData::Slice(mask.bytes()),
                mask_storage,
                compression,
                Vec::new(),
                path,
            )?;
            extra.push((word("mask"), node));
        }
        self.array_node(&dtype, &shape, data, storage, compression, extra, path)
    }

    /// An array added by pieces: always a block of this file.
    fn pieces(&mut self, i: usize, path: &TreePath) -> Result<Node, WriteError> {
        let spec = self
            .writer
            .pieces
            .get(i)
            .ok_or_else(|| bad(path, "unknown array"))?;
        if spec.len == u64::MAX {
            return Err(WriteError::TooLarge { what: "array" });
        }
        let compression = self.compression_for(spec.opts.compression, None);
        let mut job = BlockJob::new(BlockData::Pieces(spec), compression);
        job.typesize = spec.dtype.itemsize().max(1);
        self.blocks.push(job);
        Ok(Node::tagged(
            self.ndarray_tag.clone(),
            Value::Map(vec![
                (word("source"), int(self.blocks.len() as i128 - 1)),
                (word("datatype"), datatype_node(&spec.dtype, false)),
                (word("byteorder"), word(byteorder_of(&spec.dtype).as_str())),
                (word("shape"), shape_node(&spec.shape)),
            ]),
        ))
    }

    /// A view: the base's `source`, datatype and byte order with the view's shape, offset and
    /// strides.
    fn view(&mut self, view: &super::ViewSpec, path: &mut TreePath) -> Result<Node, WriteError> {
        let base = self.node(&view.base, path)?;
        let (Some(source), Some(datatype)) = (base.get("source"), base.get("datatype")) else {
            return Err(bad(
                path,
                "a view needs its base array stored in a block, not inline",
            ));
        };
        let mut m = vec![
            (word("source"), source.clone()),
            (word("datatype"), datatype.clone()),
        ];
        if let Some(b) = base.get("byteorder") {
            m.push((word("byteorder"), b.clone()));
        }
        m.push((word("shape"), shape_node(&view.shape)));
        m.push((word("offset"), int(i128::from(view.offset))));
        m.push((
            word("strides"),
            nodes::flow(
                None,
                Value::Seq(view.strides.iter().map(|&s| int(i128::from(s))).collect()),
            ),
        ));
        Ok(Node::tagged(self.ndarray_tag.clone(), Value::Map(m)))
    }

    /// Builds an ndarray node for C-order data; `extra` holds further keys (mask, ...).
    #[allow(clippy::too_many_arguments)]
    fn array_node(
        &mut self,
        dtype: &DType,
        shape: &[usize],
        data: BlockData<'w>,
        storage: Storage,
        compression: Option<Compression>,
        extra: Vec<(Node, Node)>,
        path: &TreePath,
    ) -> Result<Node, WriteError> {
        let storage = match storage {
            Storage::Inline | Storage::InlineUpTo(_)
                if !inline_readable(dtype, shape) || !inline_literals_ok(dtype, data.bytes()) =>
            {
                Storage::Internal
            }
            s => s,
        };
        if storage == Storage::Inline {
            if let Some((element, byte)) = first_non_ascii(dtype, data.bytes()) {
                return Err(WriteError::NotAscii {
                    path: path.clone(),
                    element,
                    what: format!("byte {byte:#04x}"),
                });
            }
        }
        let mut m: Vec<(Node, Node)> = Vec::new();
        let mask = extra.iter().find(|(k, _)| key_is(k, "mask")).cloned();
        let others = extra.into_iter().filter(|(k, _)| !key_is(k, "mask"));
        match storage {
            Storage::Inline | Storage::InlineUpTo(_) => {
                m.push((word("data"), nested(dtype, shape, data.bytes())));
                m.extend(mask);
                m.push((word("datatype"), datatype_node(dtype, true)));
                m.push((word("shape"), shape_node(shape)));
            }
            // `Input` is resolved by `storage_for`; a new array goes to a block
            Storage::Internal | Storage::External | Storage::Input => {
                let mut job = BlockJob::new(data, compression);
                job.typesize = dtype.itemsize().max(1);
                let src = if storage == Storage::External {
                    let stem = self.stem.as_deref().ok_or(WriteError::ExternalNeedsPath)?;
                    let name = format!("{stem}{:04}.asdf", self.externals.len());
                    self.externals.push((name.clone(), job));
                    Node::str(name)
                } else {
                    self.blocks.push(job);
                    int(self.blocks.len() as i128 - 1)
                };
                let _ = path;
                m.push((word("source"), src));
                m.extend(mask);
                m.push((word("datatype"), datatype_node(dtype, false)));
                m.push((word("byteorder"), word(byteorder_of(dtype).as_str())));
                m.push((word("shape"), shape_node(shape)));
            }
        }
        m.extend(others);
        Ok(Node::tagged(self.ndarray_tag.clone(), Value::Map(m)))
    }

    /// The stored bytes of block `idx` of `file`, to copy unchanged.
    fn copy_range(
        &mut self,
        file: &AsdfFile,
        idx: usize,
        path: &TreePath,
    ) -> Result<CopyRange, WriteError> {
        let io = |e: std::io::Error| {
            source_err(
                path,
                crate::Error::Io {
                    path: file.path().map(|p| p.to_path_buf()),
                    source: e,
                },
            )
        };
        if self.source_handle.is_none() {
            let p = file
                .path()
                .ok_or_else(|| bad(path, "source file has no path"))?;
            self.source_handle = Some(Arc::new(File::open(p).map_err(io)?));
        }
        let (Some(h), Some(hdr)) = (self.source_handle.as_ref(), file.blocks().get(idx)) else {
            return Err(bad(path, "source block missing"));
        };
        let file_len = h.metadata().map_err(io)?.len();
        let offset = hdr.data_offset();
        match offset.checked_add(hdr.used_size) {
            Some(end) if end <= file_len => {}
            end => {
                return Err(source_err(
                    path,
                    crate::Error::from(crate::layout::LayoutError::BlockOutOfBounds {
                        index: hdr.index,
                        offset: hdr.offset,
                        end: end.unwrap_or(u64::MAX),
                        file_len,
                    }),
                ))
            }
        }
        Ok(CopyRange {
            file: Arc::clone(h),
            offset,
            len: hdr.used_size,
            data_size: hdr.data_size,
            checksum: hdr.checksum,
            compression: hdr
                .compression_label()
                .and_then(|l| Compression::from_label(&l).ok().flatten()),
        })
    }

    /// An ndarray node of a read tree.
    fn read_ndarray(&mut self, node: &Node, path: &mut TreePath) -> Result<Node, WriteError> {
        let Value::Map(entries) = node.value() else {
            // a bare list: inline data, kept as is
            return Ok(node.clone());
        };
        let meta = NdArrayMeta::from_node(node, &path.to_string())
            .map_err(|e| source_err(path, crate::Error::from(e)))?;
        // the mask may itself be an ndarray
        let mut extra = Vec::new();
        for (k, v) in entries {
            if key_is(k, "mask") {
                path.push_key("mask");
                let nv = self.node(v, path)?;
                path.pop();
                extra.push((k.clone(), nv));
            }
        }
        let known = |k: &Node| NDARRAY_KEYS.iter().any(|n| key_is(k, n));
        let unknown: Vec<(Node, Node)> =
            entries.iter().filter(|(k, _)| !known(k)).cloned().collect();
        let count = meta
            .fixed_shape()
            .map(|s| s.iter().fold(1u64, |a, &d| a.saturating_mul(d)))
            .unwrap_or(u64::MAX);
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        let input_storage = self.input_storage(&meta.source);
        if let ArraySource::Inline(_) = meta.source {
            let storage = self.storage_for(None, count, input_storage);
            // python cannot read inline records with subarray or nested fields: those go
            // to a block when there is a source to read them from
            let readable = meta.dtype.as_ref().is_none_or(|d| inline_readable(d, &[1]));
            if (matches!(storage, Storage::Inline) && readable) || self.source.is_none() {
                // inline data of ascii strings that are not ASCII reads nowhere: refused
                if let (Some(dt), ArraySource::Inline(data)) = (&meta.dtype, &meta.source) {
                    let ndim = meta.shape.as_ref().map_or(usize::MAX, Vec::len);
                    if let Some((element, c)) = first_non_ascii_inline(dt, data, ndim) {
                        return Err(WriteError::NotAscii {
                            path: path.clone(),
                            element,
                            what: format!("{c:?}"),
                        });
                    }
                }
                // keep the inline data as written, with this version's tag
                let mut m: Vec<(Node, Node)> = Vec::new();
                for name in NDARRAY_KEYS {
                    if name == "mask" {
                        m.extend(extra.iter().cloned());
                    } else if let Some(e) = entries.iter().find(|(k, _)| key_is(k, name)) {
                        m.push(e.clone());
                    }
                }
                m.extend(unknown);
                return Ok(with_tag(node, self.ndarray_tag.clone(), Value::Map(m)));
            }
        }
        let file = self.source.ok_or_else(|| {
            bad(
                path,
                "ndarray with block data but the writer has no source file",
            )
        })?;
        let storage = self.storage_for(None, count, input_storage);
        if let (ArraySource::Block(_), Storage::Internal, false) =
            (&meta.source, storage, meta.is_streamed())
        {
            let idx = meta.block_index(file.blocks().len()).ok_or_else(|| {
                source_err(
                    path,
                    crate::Error::NoSuchBlock {
                        path: path.clone(),
                        source_index: match meta.source {
                            ArraySource::Block(i) => i,
                            _ => 0,
                        },
                        count: file.blocks().len(),
                    },
                )
            })?;
            let input = file
                .blocks()
                .get(idx)
                .and_then(|b| b.compression_label())
                .and_then(|l| Compression::from_label(&l).ok().flatten());
            let compression = self.compression_for(None, input);
            let new_idx = match self.source_blocks.get(&(idx, compression)) {
                Some(&n) => n,
                None => {
                    let mut job = match (compression, input) {
                        // the same codec: copy the stored bytes when the file can be read again
                        // (not an `lz4` block that is one lz4 frame, as ASDF.jl may write
                        // it: that is written again in python asdf's framing, which every
                        // reader of `lz4` reads)
                        (Some(c), Some(i))
                            if c == i
                                && file.blocks_in_path()
                                && !(c == Compression::Lz4
                                    && file
                                        .lz4_block_is_frame(idx)
                                        .map_err(|e| source_err(path, e))?) =>
                        {
                            let mut job = BlockJob::new(BlockData::Owned(Vec::new()), Some(c));
                            job.copy = Some(self.copy_range(file, idx, path)?);
                            job
                        }
                        _ => {
                            let data = file.block_data(idx).map_err(|e| source_err(path, e))?;
                            let mut job = BlockJob::new(BlockData::Slice(data), compression);
                            job.typesize = meta.dtype.as_ref().map_or(1, |d| d.itemsize().max(1));
                            // uncompressed and kept so: the kernel may copy it too (not a
                            // block whose stored bytes are encoded without a label, as the
                            // ASDF 0.1.0 draft's encoding chains are)
                            let stored_is_data = file
                                .blocks()
                                .get(idx)
                                .is_some_and(|b| b.used_size == data.len() as u64);
                            if compression.is_none()
                                && input.is_none()
                                && stored_is_data
                                && file.blocks_in_path()
                            {
                                job.copy = Some(self.copy_range(file, idx, path)?);
                            }
                            job
                        }
                    };
                    if compression == input {
                        job.origin = Some(idx);
                    }
                    self.blocks.push(job);
                    let n = self.blocks.len() - 1;
                    self.source_blocks.insert((idx, compression), n);
                    n
                }
            };
            let mut m: Vec<(Node, Node)> = vec![(word("source"), int(new_idx as i128))];
            for name in NDARRAY_KEYS.iter().skip(2) {
                if *name == "mask" {
                    m.extend(extra.iter().cloned());
                } else if let Some(e) = entries.iter().find(|(k, _)| key_is(k, name)) {
                    m.push(e.clone());
                }
            }
            m.extend(unknown);
            return Ok(with_tag(node, self.ndarray_tag.clone(), Value::Map(m)));
        }
        // materialize: streamed, external, or another storage
        let arr = file
            .dyn_array_of(node, &path.to_string())
            .map_err(|e| source_err(path, e))?;
        let input = match &meta.source {
            ArraySource::Block(_) => meta
                .block_index(file.blocks().len())
                .and_then(|i| file.blocks().get(i))
                .and_then(|b| b.compression_label())
                .and_then(|l| Compression::from_label(&l).ok().flatten()),
            // an external block file (opened by the read above): its block's codec, as an
            // internal block's is kept (implode, explode again)
            ArraySource::Uri(uri) if !uri.starts_with("fits:") => file
                .external_block_file(uri, &path.to_string())
                .ok()
                .and_then(|ext| ext.blocks().first().and_then(|b| b.compression_label()))
                .and_then(|l| Compression::from_label(&l).ok().flatten()),
            _ => None,
        };
        let compression = self.compression_for(None, input);
        let storage = match self.storage_for(None, arr.element_count(), input_storage) {
            // ascii strings that are not ASCII (python asdf writes such bytes in blocks)
            // stay in a block
            Storage::Inline if first_non_ascii(&arr.dtype, &arr.data).is_some() => {
                Storage::Internal
            }
            s => s,
        };
        let mut rest = extra;
        rest.extend(unknown);
        self.array_node(
            &arr.dtype,
            &arr.shape,
            BlockData::Owned(arr.data),
            storage,
            compression,
            rest,
            path,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{ByteOrder, Field, ScalarType};

    fn field(name: &str, dtype: DType, shape: Vec<usize>) -> Field {
        Field {
            name: name.into(),
            dtype,
            shape,
        }
    }

    #[test]
    fn inline_readable_follows_python() {
        let f8 = DType::scalar(ScalarType::Float64, ByteOrder::Little);
        assert!(inline_readable(&f8, &[3]));
        assert!(!inline_readable(&f8, &[]));
        let rec = DType::Record(vec![
            field("a", f8.clone(), vec![]),
            field("b", f8.clone(), vec![]),
        ]);
        assert!(inline_readable(&rec, &[3]));
        assert!(!inline_readable(&rec, &[2]));
        assert!(!inline_readable(&rec, &[3, 2]));
        let sub = DType::Record(vec![field("a", f8.clone(), vec![2])]);
        assert!(!inline_readable(&sub, &[3]));
        let nested = DType::Record(vec![field("a", rec, vec![])]);
        assert!(!inline_readable(&nested, &[3]));
    }
}
