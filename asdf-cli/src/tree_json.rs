//! The tree as JSON, as `info --json` prints it and `view` serves it: each node's kind, tag,
//! value or children, arrays summarised from their descriptors (no block data read). A shared
//! module: it imports no command module.

use asdf_core::array::{ArraySource, Dim, NdArrayMeta};
use asdf_core::{AsdfFile, Node, Value};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::json;

use crate::summary::label_text;

/// Compact JSON with a space after each `,` and `:` (as python's `json.dumps`), floats as
/// asdf-core's JSON number text.
pub struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, x: f64) -> std::io::Result<()> {
        w.write_all(asdf_core::unstable::json_number(x).as_bytes())
    }
}

/// A node of the tree (at the JSON pointer held in the third field, for errors), as `info --json` shows it: `kind`, `tag`, then
/// `children` (mappings, in the file's order), `items` (sequences), `value` (scalars) or
/// the array's summary.
pub struct JsonTree<'a>(&'a AsdfFile, &'a Node, String);

impl<'a> JsonTree<'a> {
    /// The whole tree of `file`.
    pub fn root(file: &'a AsdfFile) -> JsonTree<'a> {
        JsonTree(file, file.tree(), String::new())
    }
}

impl Serialize for JsonTree<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let JsonTree(file, node, path) = self;
        let mut m = s.serialize_map(None)?;
        let kind = if node.is_ndarray() {
            "ndarray"
        } else if asdf_core::file::is_zarr(node) {
            "zarr"
        } else {
            match node.value() {
                Value::Map(_) => "mapping",
                Value::Seq(_) => "sequence",
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Int(_) => "integer",
                Value::Float(_) => "float",
                Value::Str(_) => "string",
                Value::Timestamp(_) => "timestamp",
                Value::Binary(_) => "binary",
                Value::Recursive(_) => "recursive",
            }
        };
        m.serialize_entry("kind", kind)?;
        if let Some(tag) = node.tag() {
            m.serialize_entry("tag", tag)?;
        }
        if node.is_ndarray() {
            array_fields(&mut m, file, node, path)?;
            return m.end();
        }
        if asdf_core::file::is_zarr(node) {
            zarr_fields(&mut m, file, node, path)?;
            return m.end();
        }
        match node.value() {
            Value::Map(entries) => m.serialize_entry("children", &Children(file, entries, path))?,
            Value::Seq(items) => m.serialize_entry("items", &Items(file, items, path))?,
            Value::Null => m.serialize_entry("value", &())?,
            Value::Bool(b) => m.serialize_entry("value", b)?,
            Value::Int(i) => match (i.as_i64(), i.as_u64()) {
                (Some(v), _) => m.serialize_entry("value", &v)?,
                (None, Some(v)) => m.serialize_entry("value", &v)?,
                // beyond 64 bits: the digits as a JSON number
                _ => m.serialize_entry("value", &RawNumber(i.to_string()))?,
            },
            Value::Float(f) if f.is_finite() => m.serialize_entry("value", f)?,
            Value::Float(f) => m.serialize_entry(
                "value",
                if f.is_nan() {
                    "nan"
                } else if *f > 0.0 {
                    "inf"
                } else {
                    "-inf"
                },
            )?,
            Value::Str(t) => m.serialize_entry("value", t)?,
            Value::Timestamp(t) => m.serialize_entry("value", &t.text)?,
            Value::Binary(b) => m.serialize_entry("value", &b.len())?,
            Value::Recursive(name) => m.serialize_entry("value", name)?,
        }
        m.end()
    }
}

/// Integer digits written as they are (a JSON number beyond 64 bits).
struct RawNumber(String);

impl Serialize for RawNumber {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match serde_json::value::RawValue::from_string(self.0.clone()) {
            Ok(raw) => raw.serialize(s),
            Err(_) => s.serialize_str(&self.0),
        }
    }
}

struct Children<'a>(&'a AsdfFile, &'a [(Node, Node)], &'a String);

impl Serialize for Children<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Children(file, entries, path) = self;
        let mut m = s.serialize_map(Some(entries.len()))?;
        for (k, v) in entries.iter() {
            let key = crate::tree::key_text(k);
            let mut child = (*path).clone();
            child.push('/');
            crate::tree::push_pointer_segment(&mut child, &key);
            m.serialize_entry(&key, &JsonTree(file, v, child))?;
        }
        m.end()
    }
}

struct Items<'a>(&'a AsdfFile, &'a [Node], &'a String);

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Items(file, items, path) = self;
        let mut q = s.serialize_seq(Some(items.len()))?;
        for (i, item) in items.iter().enumerate() {
            q.serialize_element(&JsonTree(file, item, format!("{path}/{i}")))?;
        }
        q.end()
    }
}

/// An asdf-zarr array's fields in `info --json`: datatype, shape, `storage: "asdf-zarr"`,
/// chunks, compressor (numcodecs id or null), order and the chunk map's block.
fn zarr_fields<M: SerializeMap>(
    m: &mut M,
    file: &AsdfFile,
    node: &Node,
    path: &str,
) -> Result<(), M::Error> {
    let (dtype, shape, z) = match file
        .zarr_info(node, path)
        .and_then(|(d, s)| Ok((d, s, file.zarr_chunking(node, path)?)))
    {
        Ok(x) => x,
        Err(e) => return m.serialize_entry("error", &crate::chain(&e)),
    };
    m.serialize_entry("datatype", &dtype.to_string())?;
    m.serialize_entry("shape", &shape)?;
    m.serialize_entry("storage", "asdf-zarr")?;
    m.serialize_entry("chunks", &z.chunks)?;
    m.serialize_entry("compressor", &z.compressor)?;
    m.serialize_entry("order", if z.fortran { "F" } else { "C" })?;
    m.serialize_entry(
        "chunk_block_map",
        &node.get("chunk_block_map").and_then(Node::as_i64),
    )
}

/// An array's summary from its descriptor: datatype, shape (`"*"` for a streamed
/// dimension), where its data is, offset, strides, whether masked; or the error its
/// descriptor has.
fn array_fields<M: SerializeMap>(
    m: &mut M,
    file: &AsdfFile,
    node: &Node,
    path: &str,
) -> Result<(), M::Error> {
    let meta = match NdArrayMeta::from_node(node, path) {
        Ok(meta) => meta,
        Err(e) => return m.serialize_entry("error", &crate::chain(&e)),
    };
    m.serialize_entry("datatype", &meta.dtype.as_ref().map(|d| d.to_string()))?;
    let shape = meta.shape.as_ref().map(|dims| {
        dims.iter()
            .map(|d| match d {
                Dim::Fixed(n) => json!(n),
                Dim::Streamed => json!("*"),
            })
            .collect::<Vec<_>>()
    });
    m.serialize_entry("shape", &shape)?;
    match &meta.source {
        ArraySource::Inline(_) => m.serialize_entry("storage", "inline")?,
        ArraySource::Uri(u) => {
            m.serialize_entry("storage", "external")?;
            m.serialize_entry("source", u)?;
        }
        ArraySource::Block(i) => {
            let count = file.blocks().len() as i64;
            let idx = if *i < 0 { count + i } else { *i };
            match usize::try_from(idx).ok().and_then(|k| file.blocks().get(k)) {
                Some(b) => {
                    let storage = if b.is_streamed() {
                        "streamed"
                    } else {
                        "internal"
                    };
                    m.serialize_entry("storage", storage)?;
                    m.serialize_entry("block", &idx)?;
                    m.serialize_entry("compression", &label_text(b.compression_label()))?;
                }
                None => {
                    m.serialize_entry("storage", "missing block")?;
                    m.serialize_entry("block", i)?;
                }
            }
        }
        // ArraySource is non-exhaustive: a kind of source added later
        other => m.serialize_entry("storage", &format!("{other:?}"))?,
    }
    if meta.offset != 0 {
        m.serialize_entry("offset", &meta.offset)?;
    }
    if let Some(st) = &meta.strides {
        m.serialize_entry("strides", st)?;
    }
    if meta.mask.is_some() {
        m.serialize_entry("masked", &true)?;
    }
    Ok(())
}
