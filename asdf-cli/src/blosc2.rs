//! `asdftool convert` between Blosc2 frames (`.b2nd`, `.b2frame`) and ASDF.
//!
//! `x.b2nd` → `y.asdf` (blocks `bsc2` unless `-c` says otherwise): the array at tree key
//! `data` (datatype from the `b2nd` metalayer's
//! numpy string, shape from its shape), the frame's variable-length metalayers under
//! `blosc2_vlmeta` and its other fixed metalayers under `blosc2_meta`, msgpack values as
//! YAML values (binary as `!!binary`). A plain super-chunk (`.b2frame`) has no datatype, only
//! a type size: when python-blosc2's `pack_tensor`/`save_tensor` recorded the array's numpy
//! datatype and shape (vlmeta `__pack_tensor__`) and they fit the bytes, the array has them;
//! otherwise it becomes a 1-D array of unsigned integers of its type size (1, 2, 4 or 8 bytes,
//! little-endian: an int32 frame comes across as `uint32`, the same bytes), or, for other
//! sizes, a 2-D `uint8` array of one row per item.

use std::path::Path;

use asdf_blosc2::{Frame, Meta};
use asdf_core::array::{ByteOrder, DType, ScalarType};
use asdf_core::write::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, WriteArray, WriteOptions, Writer};
use asdf_core::yaml::{Integer, Value};
use asdf_core::Node;

/// msgpack → YAML node.
fn meta_node(m: &Meta) -> Node {
    match m {
        Meta::Nil => Node::new(Value::Null),
        Meta::Boolean(b) => Node::new(Value::Bool(*b)),
        Meta::Integer(i) => match (i.as_i64(), i.as_u64()) {
            (Some(v), _) => Node::int(i128::from(v)),
            (None, Some(v)) => Node::new(Value::Int(Integer::Small(i128::from(v)))),
            _ => Node::new(Value::Null),
        },
        Meta::F32(f) => Node::new(Value::Float(f64::from(*f))),
        Meta::F64(f) => Node::new(Value::Float(*f)),
        Meta::String(s) => match s.as_str() {
            Some(t) => Node::str(t),
            None => Node::new(Value::Binary(s.as_bytes().to_vec())),
        },
        Meta::Binary(b) => Node::new(Value::Binary(b.clone())),
        Meta::Array(a) => Node::seq(a.iter().map(meta_node)),
        Meta::Map(entries) => Node::new(Value::Map(
            entries
                .iter()
                .map(|(k, v)| (meta_node(k), meta_node(v)))
                .collect(),
        )),
        Meta::Ext(ty, data) => Node::map([
            ("msgpack_ext_type", Node::int(i128::from(*ty))),
            ("data", Node::new(Value::Binary(data.clone()))),
        ]),
    }
}

fn codec_choice(codec: Option<&str>) -> Result<CompressionChoice, String> {
    match codec {
        None => Ok(CompressionChoice::Codec(Compression::Bsc2)),
        Some("none") => Ok(CompressionChoice::None),
        Some(name) => name
            .parse::<Compression>()
            .map(CompressionChoice::Codec)
            .map_err(|_| {
                format!(
                    "unknown compression {name:?} (choose zlib, bzp2, lz4, zstd, lz4f, blsc, bsc2, bls2 or none)"
                )
            }),
    }
}

/// `x.b2nd`/`x.b2frame` (a file, or the folder of a sparse frame) → `y.asdf`.
pub fn to_asdf(
    input: &Path,
    output: &Path,
    codec: Option<&str>,
    standard: Option<asdf_core::StandardVersion>,
    flags: crate::WriteFlags,
) -> Result<String, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", input.display());
    // a folder is a sparse frame: its index and one file per chunk
    let sparse = input.is_dir();
    let index = if sparse {
        input.join("chunks.b2frame")
    } else {
        input.to_path_buf()
    };
    let bytes = std::fs::read(&index).map_err(|e| format!("{}: {e}", index.display()))?;
    let frame = if sparse {
        Frame::parse_sparse(&bytes, input, u64::MAX)
    } else {
        Frame::parse(&bytes)
    }
    .map_err(|e| at(&e))?;
    // one bar: bytes decoded, then bytes of the blocks written
    let (bar, feed) = crate::progress::Progress::fed(
        frame.cbytes.max(crate::progress::largest(&[input])),
        format!("decoding {}", input.display()),
    );
    let frame = match &feed {
        // asdf_blosc2::Progress is asdf_core::Progress (asdf-common's)
        Some(feed) => frame.with_progress(feed.clone()),
        None => frame,
    };
    let (dtype, shape, data) = match frame.b2nd() {
        Some(nd) => {
            let nd = nd.map_err(|e| at(&e))?;
            let dtype = DType::from_numpy_str(&nd.dtype).ok_or_else(|| {
                at(&format!(
                    "numpy datatype {:?} has no ASDF datatype",
                    nd.dtype
                ))
            })?;
            if dtype.itemsize() != frame.typesize {
                // C-Blosc2's b2nd writer records "|u1" when it is given no datatype (as
                // in the inputs of its ZFP plugin's tests): say so, it is not the codec
                let unknown = if nd.dtype == "|u1" {
                    " (C-Blosc2 records \"|u1\" when it is not told the datatype: the items' type is unknown)"
                } else {
                    ""
                };
                return Err(at(&format!(
                    "datatype {:?} is {} bytes but the frame's items are {}{unknown}",
                    nd.dtype,
                    dtype.itemsize(),
                    frame.typesize
                )));
            }
            let shape = nd
                .shape
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| at(&"shape too large")))
                .collect::<Result<Vec<_>, _>>()?;
            let data = frame.b2nd_array(&nd).map_err(|e| at(&e))?;
            (dtype, shape, data)
        }
        None => {
            let data = frame.decode_all().map_err(|e| at(&e))?;
            let packed = packed_tensor(&frame, data.len());
            let ts = frame.typesize;
            let n = data.len() / ts;
            let le = ByteOrder::Little;
            match (packed, ts) {
                // python-blosc2's pack_tensor/save_tensor recorded the array's datatype and
                // shape
                (Some((dtype, shape)), _) => (dtype, shape, data),
                // bytes that are not whole items (a frame of variable-length blocks of any
                // length, as python-blosc2's BatchArray writes): the bytes as they are
                _ if data.len() % ts != 0 => {
                    (DType::scalar(ScalarType::UInt8, le), vec![data.len()], data)
                }
                (None, 1) => (DType::scalar(ScalarType::UInt8, le), vec![n], data),
                (None, 2) => (DType::scalar(ScalarType::UInt16, le), vec![n], data),
                (None, 4) => (DType::scalar(ScalarType::UInt32, le), vec![n], data),
                (None, 8) => (DType::scalar(ScalarType::UInt64, le), vec![n], data),
                (None, _) => (DType::scalar(ScalarType::UInt8, le), vec![n, ts], data),
            }
        }
    };
    let array = WriteArray::from_bytes(dtype, shape, data.into())
        .ok_or_else(|| at(&"decoded bytes do not fill the array's shape"))?;
    bar.message(format!("writing {}", output.display()));
    let mut opts = WriteOptions::new().portable(flags.portable);
    if let Some(v) = standard {
        opts = opts.standard(v);
    }
    if let Some(feed) = feed {
        opts = opts.progress(feed);
    }
    let mut w = Writer::new(opts);
    let node = w.add_array_with(
        array,
        ArrayOptions {
            compression: Some(codec_choice(codec)?),
            ..Default::default()
        },
    );
    let mut tree = vec![("data".to_string(), node)];
    let vl = frame.vlmeta().map_err(|e| at(&e))?;
    if !vl.is_empty() {
        tree.push((
            "blosc2_vlmeta".into(),
            Node::map(vl.iter().map(|(k, v)| (k.clone(), meta_node(v)))),
        ));
    }
    let mut fixed = Vec::new();
    for (name, _) in frame.metalayers.iter().filter(|(n, _)| n != "b2nd") {
        if let Some(m) = frame.meta(name) {
            fixed.push((name.clone(), meta_node(&m.map_err(|e| at(&e))?)));
        }
    }
    if !fixed.is_empty() {
        tree.push(("blosc2_meta".into(), Node::map(fixed)));
    }
    let summary = w
        .write_to_path(&Node::map(tree), output)
        .map_err(|e| crate::output::write_error(output, &e))?;
    crate::output::warn(output, &summary.warnings);
    Ok(format!(
        "wrote {} ({} bytes)\n",
        output.display(),
        summary.len
    ))
}

/// The datatype and shape python-blosc2's `pack_tensor` / `save_tensor` record for the plain
/// super-chunk `frame` (its variable-length metalayer `__pack_tensor__`: the tuple `(kind,
/// shape, numpy datatype)`), when they describe exactly its `len` decoded bytes.
fn packed_tensor(frame: &Frame, len: usize) -> Option<(DType, Vec<usize>)> {
    let vl = frame.vlmeta().ok()?;
    let (_, Meta::Array(parts)) = vl.iter().find(|(k, _)| k == "__pack_tensor__")? else {
        return None;
    };
    // python-blosc2 packs a tuple as a list led by the string "__tuple__"
    let items = |a: &'_ [Meta]| -> Vec<Meta> {
        match a.first() {
            Some(Meta::String(t)) if t.as_str() == Some("__tuple__") => a[1..].to_vec(),
            _ => a.to_vec(),
        }
    };
    let parts = items(parts);
    let [_, Meta::Array(dims), Meta::String(dtype)] = parts.as_slice() else {
        return None;
    };
    let dtype = DType::from_numpy_str(dtype.as_str()?)?;
    let shape = items(dims)
        .iter()
        .map(|d| match d {
            Meta::Integer(i) => i.as_u64().and_then(|v| usize::try_from(v).ok()),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()?;
    let needed = shape
        .iter()
        .try_fold(dtype.itemsize(), |acc, &d| acc.checked_mul(d))?;
    (needed == len).then_some((dtype, shape))
}

/// The JSON pointers of every ndarray in `node`.
fn ndarrays(node: &Node, path: &mut String, out: &mut Vec<String>) {
    if node.is_ndarray() {
        out.push(if path.is_empty() {
            "/".into()
        } else {
            path.clone()
        });
        return;
    }
    match node.value() {
        Value::Map(entries) => {
            for (k, v) in entries {
                let len = path.len();
                path.push('/');
                let key = k.as_str().map(str::to_string).unwrap_or_else(|| "?".into());
                asdf_core::unstable::push_pointer_segment(path, &key);
                ndarrays(v, path, out);
                path.truncate(len);
            }
        }
        Value::Seq(items) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                ndarrays(v, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// YAML node → msgpack value (for metalayers going back to Blosc2).
fn node_meta(n: &Node) -> Meta {
    match n.value() {
        Value::Null => Meta::Nil,
        Value::Bool(b) => Meta::Boolean(*b),
        Value::Int(Integer::Small(i)) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(v), _) => Meta::from(v),
            (_, Ok(v)) => Meta::from(v),
            _ => Meta::from(i.to_string()),
        },
        Value::Int(i) => Meta::from(i.to_string()),
        Value::Float(f) => Meta::F64(*f),
        Value::Str(s) => Meta::from(s.as_str()),
        Value::Binary(b) => Meta::Binary(b.clone()),
        Value::Seq(items) => Meta::Array(items.iter().map(node_meta).collect()),
        Value::Map(entries) => Meta::Map(
            entries
                .iter()
                .map(|(k, v)| (node_meta(k), node_meta(v)))
                .collect(),
        ),
        Value::Timestamp(t) => Meta::from(t.text.as_str()),
        Value::Recursive(name) => Meta::from(format!("*{name}")),
    }
}

fn msgpack(m: &Meta) -> Vec<u8> {
    let mut out = Vec::new();
    // writing into a Vec cannot fail
    let _ = rmpv::encode::write_value(&mut out, m);
    out
}

/// `y.asdf` → `z.b2nd`/`z.b2frame`: the array at `array` (a JSON pointer into the tree;
/// needed when the file has more than one), compressed with `codec` (zstd, lz4 or zlib;
/// default zstd level 5 with shuffle, as python-blosc2). A `.b2nd` keeps the shape and
/// datatype (chunks of about 4 MiB in whole rows, blocks of about 256 KiB); the tree's
/// `blosc2_vlmeta` and `blosc2_meta` mappings, when converting the array at `/data`, become
/// the frame's metalayers again. A `.b2frame` holds the bytes as a plain super-chunk.
pub fn from_asdf(
    access: &crate::Access,
    input: &Path,
    output: &Path,
    codec: Option<&str>,
    array: Option<&str>,
) -> Result<String, String> {
    use asdf_blosc2::{CParams, Codec, Filter};
    let file = access.open(input)?;
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", input.display());
    let path = match array {
        Some(p) => p.to_string(),
        None => {
            let mut found = Vec::new();
            ndarrays(file.tree(), &mut String::new(), &mut found);
            match found.len() {
                1 => found.remove(0),
                0 => return Err(at(&"the file holds no array")),
                _ => {
                    return Err(at(&format!(
                        "the file holds {} arrays ({}); choose one with --array",
                        found.len(),
                        found.join(", ")
                    )))
                }
            }
        }
    };
    // one bar: the bytes of the array read (or decoded), then the bytes encoded
    let (bar, feed) = crate::progress::Progress::fed(
        crate::progress::largest(&[input]),
        format!("reading {path} of {}", input.display()),
    );
    let a = match &feed {
        Some(p) => file.dyn_array_with_progress(&path, p),
        None => file.dyn_array(&path),
    }
    .map_err(|e| at(&format!("{path}: {}", crate::chain(&e))))?;
    bar.message(format!("encoding {}", output.display()));
    let report = |done: u64, total: u64| {
        if let Some(feed) = &feed {
            feed.report(done, total);
        }
    };
    let codec = match codec.unwrap_or("zstd") {
        "zstd" => Codec::Zstd,
        "lz4" => Codec::Lz4,
        "zlib" => Codec::Zlib,
        "blosclz" => Codec::Blosclz,
        "lz4hc" => Codec::Lz4hc,
        other => {
            return Err(format!(
            "compression {other:?} cannot be written to Blosc2 (choose zstd, lz4, lz4hc, zlib or blosclz)"
        ))
        }
    };
    let item = a.dtype.itemsize();
    let p = CParams {
        codec,
        level: 5,
        filters: if item > 1 {
            Filter::Shuffle.only()
        } else {
            Filter::None.only()
        },
        typesize: item.max(1),
        blocksize: 0,
    };
    let is_nd = output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("b2nd"));
    let mut vl = Vec::new();
    let mut fixed = Vec::new();
    if path == "/data" {
        for (key, into) in [("/blosc2_vlmeta", &mut vl), ("/blosc2_meta", &mut fixed)] {
            if let Some(Value::Map(entries)) = file.get(key).map(|n| n.value().clone()) {
                for (k, v) in entries {
                    if let Some(name) = k.as_str() {
                        into.push((name.to_string(), msgpack(&node_meta(&v))));
                    }
                }
            }
        }
    }
    let bytes = if is_nd {
        let shape: Vec<u64> = a.shape.iter().map(|&d| d as u64).collect();
        let row: u64 = shape.iter().skip(1).product::<u64>() * item as u64;
        let rows_for = |target: u64, most: u64| (target / row.max(1)).clamp(1, most.max(1));
        let (chunkshape, blockshape) = if shape.is_empty() {
            (vec![], vec![])
        } else {
            let mut c = shape.clone();
            c[0] = rows_for(4 << 20, shape[0]).min(shape[0]);
            let mut b = c.clone();
            b[0] = rows_for(256 << 10, c[0]).min(c[0]);
            (c, b)
        };
        let nd = asdf_blosc2::B2nd {
            shape,
            chunkshape,
            blockshape,
            dtype: a.dtype.to_numpy_str(),
        };
        let mut frame = match &feed {
            Some(feed) => asdf_blosc2::b2nd_frame_with_progress(&nd, &a.data, &p, &vl, feed),
            None => asdf_blosc2::b2nd_frame(&nd, &a.data, &p, &vl),
        }
        .map_err(|e| at(&e))?;
        if !fixed.is_empty() {
            // fixed metalayers besides b2nd: rewrite with them (each chunk decoded and
            // encoded again)
            bar.message(format!("adding the metalayers to {}", output.display()));
            let f = Frame::parse(&frame).map_err(|e| at(&e))?;
            let mut w = asdf_blosc2::FrameWriter::new(f.chunksize.max(1), p);
            w.metalayers = f.metalayers.clone();
            w.metalayers
                .extend(fixed.into_iter().filter(|(n, _)| n != "b2nd"));
            w.vlmetalayers = vl;
            let mut done = 0;
            for i in 0..f.nchunks {
                let chunk = f.chunk(i).map_err(|e| at(&e))?;
                w.append(&chunk).map_err(|e| at(&e))?;
                done += chunk.len() as u64;
                report(done, f.nbytes);
            }
            frame = w.finish().map_err(|e| at(&e))?;
        }
        frame
    } else {
        let chunk = ((4usize << 20) / p.typesize).max(1) * p.typesize;
        let mut w = asdf_blosc2::FrameWriter::new(chunk, p);
        w.vlmetalayers = vl;
        w.metalayers = fixed;
        let mut done = 0;
        for piece in a.data.chunks(chunk) {
            w.append(piece).map_err(|e| at(&e))?;
            done += piece.len() as u64;
            report(done, a.data.len() as u64);
        }
        w.finish().map_err(|e| at(&e))?
    };
    bar.message(format!("writing {}", output.display()));
    asdf_core::unstable::write_atomically(output, |f| {
        crate::output::write_reporting(f, &[&bytes], bytes.len() as u64, feed.as_ref())
    })
    .map_err(|e| format!("{}: {e}", output.display()))?;
    Ok(format!(
        "wrote {} ({} bytes, array {path})\n",
        output.display(),
        bytes.len()
    ))
}
