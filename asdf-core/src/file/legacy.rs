//! ASDF 0.1.0 files: the tree mapped to the current types, and the draft's encoding chains.
//!
//! A file headed `#ASDF 0.1.0` carries its version in the `%TAG` prefix
//! (`tag:stsci.edu:asdf/0.1.0/` + `core/ndarray`) and names an ndarray's datatype `dtype`.
//! [`upgrade_tree`] maps every such tag to the ASDF Standard 1.0.0 tag of the same name
//! (`tag:stsci.edu:asdf/core/ndarray-1.0.0`) and renames `dtype` to `datatype` in ndarray
//! nodes, so the rest of the library reads these files as 1.0.0 files.
//!
//! Blocks of the 36-byte draft layout with the ENCODED flag start with a YAML encoding chain
//! (`--- [[tile, {shape: [32, 32]}], zlib]` ... `...`); [`decode_chain`] undoes it: `zlib`
//! (through the codec layer), `tile` and `quantize` as the draft spec text defines them.

use std::io::Read;

use crate::array::ByteOrder;
use crate::codec::{self, CodecError, Compression};
use crate::yaml::{self, Document, Node, NodeData, Value, YamlLimits};

/// The `%TAG` prefix of ASDF 0.1.0 tags.
pub const LEGACY_TAG_PREFIX: &str = "tag:stsci.edu:asdf/0.1.0/";

/// The current tag for a 0.1.0 tag (`…/0.1.0/core/ndarray` → `…/core/ndarray-1.0.0`);
/// other tags unchanged.
pub fn map_tag(tag: &str) -> Option<String> {
    let name = tag.strip_prefix(LEGACY_TAG_PREFIX)?;
    Some(format!("tag:stsci.edu:asdf/{name}-1.0.0"))
}

/// Maps a 0.1.0 tree to the current types (see the module documentation). Shared nodes
/// stay shared.
pub(crate) fn upgrade_tree(doc: &mut Document) {
    for (_, prefix) in &mut doc.tag_directives {
        if prefix == LEGACY_TAG_PREFIX {
            *prefix = "tag:stsci.edu:asdf/".to_string();
        }
    }
    let mut memo = std::collections::HashMap::new();
    doc.root = upgrade(&doc.root, &mut memo);
}

fn upgrade(node: &Node, memo: &mut std::collections::HashMap<usize, Node>) -> Node {
    if let Some(n) = memo.get(&node.id()) {
        return n.clone();
    }
    let tag = node
        .tag()
        .map(|t| map_tag(t).unwrap_or_else(|| t.to_string()));
    let is_ndarray = tag
        .as_deref()
        .is_some_and(|t| t.starts_with("tag:stsci.edu:asdf/core/ndarray-"));
    let value = match node.value() {
        Value::Seq(items) => Value::Seq(items.iter().map(|n| upgrade(n, memo)).collect()),
        Value::Map(entries) => {
            let has_datatype = entries.iter().any(|(k, _)| k.as_str() == Some("datatype"));
            Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let k = if is_ndarray && !has_datatype && k.as_str() == Some("dtype") {
                            Node::from(NodeData {
                                tag: k.data().tag.clone(),
                                value: Value::Str("datatype".into()),
                                style: k.style(),
                                anchor: None,
                            })
                        } else {
                            upgrade(k, memo)
                        };
                        (k, upgrade(v, memo))
                    })
                    .collect(),
            )
        }
        _ if tag.as_deref() == node.tag() => {
            // a scalar with no legacy tag: the same node
            memo.insert(node.id(), node.clone());
            return node.clone();
        }
        v => v.clone(),
    };
    let d = node.data();
    let out = Node::from(NodeData {
        tag: tag.map(Into::into),
        value,
        style: d.style,
        anchor: d.anchor.clone(),
    });
    memo.insert(node.id(), out.clone());
    out
}

/// Why a legacy encoded block cannot be decoded; positions are bytes from the start of the
/// block data (after the block header).
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
#[non_exhaustive]
pub enum LegacyEncodingError {
    /// The YAML encoding chain at the start of the block data has no `...` end line.
    #[error("the encoding chain has no `...` end line")]
    NoChainEnd,
    /// The encoding chain is not a YAML list of names and `[name, {args}]` pairs.
    #[error("bad encoding chain: {0}")]
    BadChain(String),
    /// An encoding this library does not know (only the arrays using the block fail).
    #[error("unknown encoding {0:?}")]
    Unknown(String),
    /// An encoding's arguments are missing or wrong.
    #[error("{encoding}: bad arguments: {message}")]
    BadArgs {
        /// The encoding.
        encoding: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The encoded bytes are not valid for the encoding.
    #[error("{encoding}: corrupt data at byte {at} of its input: {message}")]
    Corrupt {
        /// The encoding.
        encoding: &'static str,
        /// Position in that step's input.
        at: u64,
        /// What is wrong.
        message: String,
    },
    /// A step's output would exceed the limit (the block's `memory_size` or the open options').
    #[error("{encoding}: output exceeds {limit} bytes")]
    TooLarge {
        /// The encoding.
        encoding: &'static str,
        /// The limit.
        limit: u64,
    },
    /// The decoded block is not `memory_size` bytes long.
    #[error("decoded {actual} bytes where the header's memory_size is {expected}")]
    SizeMismatch {
        /// `memory_size`.
        expected: u64,
        /// Decoded length.
        actual: u64,
    },
    /// The zlib step failed.
    #[error("zlib: {0}")]
    Codec(#[source] CodecError),
}

/// The end of the chain's YAML: the offset just past `\n...\n` (or `\r\n...\r\n`).
fn chain_end(data: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memmem::find(&data[from..], b"\n...").map(|i| i + from) {
        let rest = &data[i + 4..];
        if rest.starts_with(b"\n") {
            return Some(i + 5);
        }
        if rest.starts_with(b"\r\n") {
            return Some(i + 6);
        }
        from = i + 1;
    }
    None
}

enum Step {
    Zlib,
    Tile {
        shape: Vec<u64>,
        original_shape: Vec<u64>,
        item_size: u64,
    },
    Quantize {
        bits: u32,
        original_shape: Vec<u64>,
    },
}

fn shape_arg(
    args: Option<&Node>,
    key: &str,
    encoding: &'static str,
) -> Result<Vec<u64>, LegacyEncodingError> {
    let bad = |message: String| LegacyEncodingError::BadArgs { encoding, message };
    let items = args
        .and_then(|a| a.get(key))
        .and_then(Node::as_seq)
        .ok_or_else(|| bad(format!("`{key}` is not a list of integers")))?;
    items
        .iter()
        .map(|n| as_u64(n).ok_or_else(|| bad(format!("`{key}` is not a list of integers"))))
        .collect()
}

fn parse_chain(text: &[u8]) -> Result<Vec<Step>, LegacyEncodingError> {
    let limits = YamlLimits::default();
    let doc =
        yaml::parse(text, &limits).map_err(|e| LegacyEncodingError::BadChain(e.to_string()))?;
    let items = doc
        .root
        .as_seq()
        .ok_or_else(|| LegacyEncodingError::BadChain("not a list".into()))?;
    let mut steps = Vec::with_capacity(items.len().min(16));
    for item in items {
        let (name, args) = match item.value() {
            Value::Str(s) => (s.as_str(), None),
            Value::Seq(pair) if (1..=2).contains(&pair.len()) => (
                pair[0].as_str().ok_or_else(|| {
                    LegacyEncodingError::BadChain("an encoding name is not a string".into())
                })?,
                pair.get(1),
            ),
            _ => {
                return Err(LegacyEncodingError::BadChain(
                    "an entry is neither a name nor [name, args]".into(),
                ))
            }
        };
        steps.push(match name {
            "zlib" => Step::Zlib,
            "tile" => {
                let shape = shape_arg(args, "shape", "tile")?;
                let original_shape = shape_arg(args, "original_shape", "tile")?;
                let item_size = args
                    .and_then(|a| a.get("item_size"))
                    .and_then(as_u64)
                    .filter(|&s| s > 0)
                    .ok_or_else(|| LegacyEncodingError::BadArgs {
                        encoding: "tile",
                        message: "`item_size` is not a positive integer".into(),
                    })?;
                if shape.len() != original_shape.len() || shape.contains(&0) {
                    return Err(LegacyEncodingError::BadArgs {
                        encoding: "tile",
                        message:
                            "`shape` must have one positive size per dimension of `original_shape`"
                                .into(),
                    });
                }
                Step::Tile {
                    shape,
                    original_shape,
                    item_size,
                }
            }
            "quantize" => {
                let bits = args
                    .and_then(|a| a.get("dtype"))
                    .and_then(as_u64)
                    .filter(|&b| b == 32 || b == 64)
                    .ok_or_else(|| LegacyEncodingError::BadArgs {
                        encoding: "quantize",
                        message: "`dtype` must be 32 or 64".into(),
                    })?;
                Step::Quantize {
                    bits: bits as u32,
                    original_shape: shape_arg(args, "original_shape", "quantize")?,
                }
            }
            other => return Err(LegacyEncodingError::Unknown(other.to_string())),
        });
    }
    Ok(steps)
}

fn as_u64(n: &Node) -> Option<u64> {
    n.as_i64().and_then(|v| u64::try_from(v).ok())
}

fn product(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
}

/// Undo the encoding chain at the start of a draft ENCODED block's stored bytes. The result
/// must be `memory_size` bytes (at most `max`); `order` is the byte order of the floats a
/// `quantize` step produces (that of the arrays reading the block).
pub fn decode_chain(
    stored: &[u8],
    memory_size: u64,
    max: u64,
    order: ByteOrder,
) -> Result<Vec<u8>, LegacyEncodingError> {
    if memory_size > max {
        return Err(LegacyEncodingError::TooLarge {
            encoding: "chain",
            limit: max,
        });
    }
    let end = chain_end(stored).ok_or(LegacyEncodingError::NoChainEnd)?;
    let steps = parse_chain(&stored[..end])?;
    let mut data = stored[end..].to_vec();
    for (i, step) in steps.iter().enumerate().rev() {
        let last = i == 0;
        // the last step yields the block: `memory_size` bytes; others at most `max`
        let limit = if last { memory_size } else { max };
        data = match step {
            Step::Zlib if last => codec::decode(Compression::Zlib, &data, memory_size)
                .map_err(LegacyEncodingError::Codec)?,
            Step::Zlib => inflate_bounded(&data, max)?,
            Step::Tile {
                shape,
                original_shape,
                item_size,
            } => untile(&data, shape, original_shape, *item_size, limit)?,
            Step::Quantize {
                bits,
                original_shape,
            } => dequantize(&data, *bits, original_shape, limit, order)?,
        };
    }
    if data.len() as u64 != memory_size {
        return Err(LegacyEncodingError::SizeMismatch {
            expected: memory_size,
            actual: data.len() as u64,
        });
    }
    Ok(data)
}

/// A zlib stream whose decoded size is unknown (inside a chain), at most `max` bytes.
fn inflate_bounded(data: &[u8], max: u64) -> Result<Vec<u8>, LegacyEncodingError> {
    // deflate expands at most about 1032:1
    let limit = (data.len() as u64)
        .saturating_mul(1032)
        .saturating_add(64)
        .min(max);
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(data)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| {
            LegacyEncodingError::Codec(CodecError::Corrupt {
                codec: "zlib",
                message: e.to_string(),
            })
        })?;
    if out.len() as u64 > limit {
        return Err(LegacyEncodingError::TooLarge {
            encoding: "zlib",
            limit,
        });
    }
    Ok(out)
}

/// `tile`: the input holds whole tiles of `shape`, the tile grid in C order and each tile's
/// items in C order, edge tiles padded; the output is the `original_shape` array.
fn untile(
    data: &[u8],
    tile: &[u64],
    original: &[u64],
    item: u64,
    limit: u64,
) -> Result<Vec<u8>, LegacyEncodingError> {
    let too_large = || LegacyEncodingError::TooLarge {
        encoding: "tile",
        limit,
    };
    let grid: Vec<u64> = original
        .iter()
        .zip(tile)
        .map(|(&o, &t)| o.div_ceil(t))
        .collect();
    let out_len = product(original)
        .and_then(|n| n.checked_mul(item))
        .filter(|&n| n <= limit)
        .ok_or_else(too_large)?;
    let tile_items = product(tile).ok_or_else(too_large)?;
    let in_len = product(&grid)
        .and_then(|g| g.checked_mul(tile_items))
        .and_then(|n| n.checked_mul(item));
    if in_len != Some(data.len() as u64) {
        return Err(LegacyEncodingError::Corrupt {
            encoding: "tile",
            at: 0,
            message: format!(
                "{} bytes where whole tiles of {tile:?} over {original:?} (items of {item} bytes) need {}",
                data.len(),
                in_len.map_or_else(|| "more".to_string(), |n| n.to_string())
            ),
        });
    }
    if out_len == 0 {
        return Ok(Vec::new());
    }
    let item = item as usize;
    let mut out = vec![0u8; out_len as usize];
    let nd = original.len();
    // row-major strides (in items) of the output
    let mut strides = vec![1u64; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * original[d + 1];
    }
    let mut tile_idx = vec![0u64; nd];
    let mut in_tile = vec![0u64; nd];
    let mut src = 0usize;
    if nd == 0 {
        out.copy_from_slice(data);
        return Ok(out);
    }
    loop {
        // every item of this tile, C order
        in_tile.iter_mut().for_each(|x| *x = 0);
        loop {
            let mut dst = 0u64;
            let mut inside = true;
            for d in 0..nd {
                let c = tile_idx[d] * tile[d] + in_tile[d];
                if c >= original[d] {
                    inside = false;
                    break;
                }
                dst += c * strides[d];
            }
            if inside {
                let dst = dst as usize * item;
                out[dst..dst + item].copy_from_slice(&data[src..src + item]);
            }
            src += item;
            if !odometer(&mut in_tile, tile) {
                break;
            }
        }
        if !odometer(&mut tile_idx, &grid) {
            break;
        }
    }
    Ok(out)
}

/// Advance a C-order multi-index; `false` when it wraps around.
fn odometer(idx: &mut [u64], dims: &[u64]) -> bool {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < dims[d] {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// `quantize`: chunks of (bits u8, offset f64, scale f64, nvalues u64, big-endian) each
/// followed by `bits * nvalues` bits of big-endian two's-complement integers, padded to a
/// byte; `decoded = encoded * scale + offset`, as floats of `bits` (32 or 64).
fn dequantize(
    data: &[u8],
    float_bits: u32,
    original: &[u64],
    limit: u64,
    order: ByteOrder,
) -> Result<Vec<u8>, LegacyEncodingError> {
    let width = u64::from(float_bits / 8);
    let count = product(original)
        .filter(|n| n.checked_mul(width).is_some_and(|b| b <= limit))
        .ok_or(LegacyEncodingError::TooLarge {
            encoding: "quantize",
            limit,
        })?;
    let mut out = Vec::with_capacity((count * width) as usize);
    let mut pos = 0usize;
    let mut done = 0u64;
    let corrupt = |at: usize, message: String| LegacyEncodingError::Corrupt {
        encoding: "quantize",
        at: at as u64,
        message,
    };
    while pos < data.len() {
        let head = data
            .get(pos..pos + 25)
            .ok_or_else(|| corrupt(pos, "chunk header cut short".into()))?;
        let bits = u32::from(head[0]);
        let be8 = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&head[i..i + 8]);
            b
        };
        let offset = f64::from_be_bytes(be8(1));
        let scale = f64::from_be_bytes(be8(9));
        let n = u64::from_be_bytes(be8(17));
        if !(1..=64).contains(&bits) {
            return Err(corrupt(pos, format!("encoded_bits {bits} is not 1 to 64")));
        }
        if n > count - done {
            return Err(corrupt(
                pos,
                format!("{n} values where {} remain of {original:?}", count - done),
            ));
        }
        let body_len = n
            .checked_mul(u64::from(bits))
            .map(|b| b.div_ceil(8))
            .filter(|&b| b <= (data.len() - pos - 25) as u64)
            .ok_or_else(|| corrupt(pos, format!("{n} values of {bits} bits run past the data")))?;
        let body = &data[pos + 25..pos + 25 + body_len as usize];
        let mut bit = 0u64;
        for _ in 0..n {
            let mut v: u64 = 0;
            for _ in 0..bits {
                let byte = body[(bit / 8) as usize];
                v = (v << 1) | u64::from((byte >> (7 - (bit % 8))) & 1);
                bit += 1;
            }
            // sign-extend
            let encoded = if bits < 64 && (v >> (bits - 1)) & 1 == 1 {
                (v | (!0u64 << bits)) as i64
            } else {
                v as i64
            };
            let x = encoded as f64 * scale + offset;
            match (float_bits, order) {
                (32, ByteOrder::Big) => out.extend_from_slice(&(x as f32).to_be_bytes()),
                (32, ByteOrder::Little) => out.extend_from_slice(&(x as f32).to_le_bytes()),
                (_, ByteOrder::Big) => out.extend_from_slice(&x.to_be_bytes()),
                (_, ByteOrder::Little) => out.extend_from_slice(&x.to_le_bytes()),
            }
        }
        done += n;
        pos += 25 + body_len as usize;
    }
    if done != count {
        return Err(corrupt(
            data.len(),
            format!("{done} values where {original:?} needs {count}"),
        ));
    }
    Ok(out)
}
