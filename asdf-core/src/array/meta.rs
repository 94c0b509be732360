//! The ndarray descriptor: [`NdArrayMeta`] parsed from a `core/ndarray-*` node.

use super::{ArrayError, ByteOrder, DType};
use crate::yaml::describe;
use crate::yaml::{Node, Value};

/// One entry of an ndarray `shape`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A fixed length.
    Fixed(u64),
    /// `*`: as many whole rows as the (streamed) block holds. Only the first entry.
    Streamed,
}

/// Where an ndarray's data comes from.
///
/// Non-exhaustive: new kinds of source (as `fits:` HDUs were) become new variants.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum ArraySource {
    /// `source: N`: block N of this file (negative counts from the last block).
    Block(i64),
    /// `source: "uri"`: the first block of another ASDF file (exploded form).
    Uri(String),
    /// Inline nested lists: the `data` value, or the whole node when it is a bare list.
    Inline(Node),
}

/// A parsed `core/ndarray` descriptor.
#[derive(Clone, Debug, PartialEq)]
pub struct NdArrayMeta {
    /// The data source.
    pub source: ArraySource,
    /// The `datatype`; `None` when absent (inline data then infers it; block data is
    /// `float64`, as python asdf reads it).
    pub dtype: Option<DType>,
    /// The `byteorder` of block data. Inline data and descriptors without `byteorder` use
    /// the native order, as python asdf does.
    pub byteorder: ByteOrder,
    /// The `shape`, if given.
    pub shape: Option<Vec<Dim>>,
    /// The `offset` in bytes into the block (0 when absent).
    pub offset: u64,
    /// The `strides` in bytes, if given (same length as `shape`).
    pub strides: Option<Vec<i64>>,
    /// The `mask` value, untouched (a number or another ndarray node).
    pub mask: Option<Node>,
}

fn bad(path: &str, key: &str, message: String) -> ArrayError {
    ArrayError::BadValue {
        path: path.into(),
        key: key.to_string(),
        message,
    }
}

impl NdArrayMeta {
    /// Parses an ndarray node (its tag is not checked). `path` is its tree path, used in
    /// errors.
    ///
    /// A bare sequence is inline data with an inferred datatype. A mapping must have exactly
    /// one of `source` and `data`; `datatype`, `byteorder`, `shape`, `offset`, `strides` and
    /// `mask` are optional. Unknown keys are ignored.
    pub fn from_node(node: &Node, path: &str) -> Result<Self, ArrayError> {
        match node.value() {
            Value::Seq(_) => Ok(NdArrayMeta {
                source: ArraySource::Inline(node.clone()),
                dtype: None,
                byteorder: ByteOrder::native(),
                shape: None,
                offset: 0,
                strides: None,
                mask: None,
            }),
            Value::Map(_) => Self::from_map(node, path),
            _ => Err(bad(
                path,
                "",
                format!(
                    "an ndarray must be a mapping or a list, found {}",
                    describe(node)
                ),
            )),
        }
    }

    fn from_map(node: &Node, path: &str) -> Result<Self, ArrayError> {
        let source =
            match (node.get("source"), node.get("data")) {
                (Some(_), Some(_)) => {
                    return Err(bad(
                        path,
                        "data",
                        "source and data may not both be given".into(),
                    ))
                }
                (None, None) => {
                    return Err(ArrayError::MissingKey {
                        path: path.into(),
                        key: "source".into(),
                    })
                }
                (Some(s), None) => match s.value() {
                    Value::Int(i) => ArraySource::Block(i.as_i64().ok_or_else(|| {
                        bad(path, "source", format!("block index {i} out of range"))
                    })?),
                    Value::Str(u) => ArraySource::Uri(u.clone()),
                    _ => {
                        return Err(bad(
                            path,
                            "source",
                            format!("expected an integer or a URI string, found {}", describe(s)),
                        ))
                    }
                },
                (None, Some(d)) => match d.value() {
                    Value::Seq(_) => ArraySource::Inline(d.clone()),
                    _ => {
                        return Err(bad(
                            path,
                            "data",
                            format!("expected a list, found {}", describe(d)),
                        ))
                    }
                },
            };
        let inline = matches!(source, ArraySource::Inline(_));
        let declared_order = match node.get("byteorder") {
            None => None,
            Some(b) => Some(b.as_str().and_then(ByteOrder::parse).ok_or_else(|| {
                bad(
                    path,
                    "byteorder",
                    format!("expected little or big, found {}", describe(b)),
                )
            })?),
        };
        // python asdf ignores `byteorder` for inline data and uses the native order.
        let byteorder = if inline {
            ByteOrder::native()
        } else {
            declared_order.unwrap_or_else(ByteOrder::native)
        };
        let dtype = match node.get("datatype") {
            None => None,
            Some(d) => Some(DType::from_node(d, byteorder, &format!("{path}/datatype"))?),
        };
        let shape = match node.get("shape") {
            None => None,
            Some(s) => Some(parse_shape(s, path)?),
        };
        let offset = match node.get("offset") {
            None => 0,
            Some(o) => o.as_int().and_then(|i| i.as_u64()).ok_or_else(|| {
                bad(
                    path,
                    "offset",
                    format!("expected a non-negative integer, found {}", describe(o)),
                )
            })?,
        };
        let strides = match node.get("strides") {
            None => None,
            Some(s) => {
                let items = s.as_seq().ok_or_else(|| {
                    bad(
                        path,
                        "strides",
                        format!("expected a list of integers, found {}", describe(s)),
                    )
                })?;
                let strides = items
                    .iter()
                    .map(|it| {
                        it.as_i64().ok_or_else(|| {
                            bad(
                                path,
                                "strides",
                                format!("expected a 64-bit integer, found {}", describe(it)),
                            )
                        })
                    })
                    .collect::<Result<Vec<i64>, _>>()?;
                if let Some(shape) = &shape {
                    if shape.len() != strides.len() {
                        return Err(bad(
                            path,
                            "strides",
                            format!("{} strides for {} dimensions", strides.len(), shape.len()),
                        ));
                    }
                }
                Some(strides)
            }
        };
        Ok(NdArrayMeta {
            source,
            dtype,
            byteorder,
            shape,
            offset,
            strides,
            mask: node.get("mask").cloned(),
        })
    }

    /// The shape when every dimension is fixed (`None` if absent or streamed).
    pub fn fixed_shape(&self) -> Option<Vec<u64>> {
        self.shape
            .as_ref()?
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Some(*n),
                Dim::Streamed => None,
            })
            .collect()
    }

    /// The block this array reads, as an index into a file of `block_count` blocks
    /// (negative sources count from the end: `-1` is the last block). `None` for URI and
    /// inline sources and for indices outside the file.
    pub fn block_index(&self, block_count: usize) -> Option<usize> {
        let ArraySource::Block(i) = self.source else {
            return None;
        };
        let n = i64::try_from(block_count).ok()?;
        let idx = if i < 0 { n.checked_add(i)? } else { i };
        usize::try_from(idx).ok().filter(|&k| k < block_count)
    }

    /// Whether the first dimension is `*`.
    pub fn is_streamed(&self) -> bool {
        matches!(self.shape.as_deref(), Some([Dim::Streamed, ..]))
    }
}

fn parse_shape(node: &Node, path: &str) -> Result<Vec<Dim>, ArrayError> {
    let items = node.as_seq().ok_or_else(|| {
        bad(
            path,
            "shape",
            format!("expected a list, found {}", describe(node)),
        )
    })?;
    let mut dims = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let dim = match it.value() {
            Value::Str(s) if s == "*" => {
                if i != 0 {
                    return Err(bad(path, "shape", "'*' may only be the first entry".into()));
                }
                Dim::Streamed
            }
            Value::Int(n) => Dim::Fixed(n.as_u64().ok_or_else(|| {
                bad(
                    path,
                    "shape",
                    format!("dimension {n} is not a non-negative 64-bit integer"),
                )
            })?),
            _ => {
                return Err(bad(
                    path,
                    "shape",
                    format!(
                        "expected a non-negative integer or '*', found {}",
                        describe(it)
                    ),
                ))
            }
        };
        dims.push(dim);
    }
    Ok(dims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::ScalarType;
    use crate::yaml::Integer;

    #[test]
    fn full_block_descriptor() {
        let node = Node::map(vec![
            ("source", Node::int(-1)),
            ("datatype", Node::str("float64")),
            ("byteorder", Node::str("big")),
            ("shape", Node::seq(vec![Node::str("*"), Node::int(8)])),
            ("offset", Node::int(16)),
            ("strides", Node::seq(vec![Node::int(64), Node::int(-8)])),
            ("mask", Node::int(-999)),
            ("extra", Node::str("ignored")),
        ]);
        let m = NdArrayMeta::from_node(&node, "/x").unwrap();
        assert_eq!(m.source, ArraySource::Block(-1));
        assert_eq!(
            m.dtype,
            Some(DType::scalar(ScalarType::Float64, ByteOrder::Big))
        );
        assert_eq!(m.byteorder, ByteOrder::Big);
        assert_eq!(m.shape, Some(vec![Dim::Streamed, Dim::Fixed(8)]));
        assert!(m.is_streamed());
        assert_eq!(m.fixed_shape(), None);
        assert_eq!(m.offset, 16);
        assert_eq!(m.strides, Some(vec![64, -8]));
        assert_eq!(m.mask, Some(Node::int(-999)));
    }

    #[test]
    fn block_index_counts_negative_from_the_end() {
        let at = |src: i128, n: usize| {
            NdArrayMeta::from_node(&Node::map(vec![("source", Node::int(src))]), "")
                .unwrap()
                .block_index(n)
        };
        assert_eq!(at(0, 3), Some(0));
        assert_eq!(at(2, 3), Some(2));
        assert_eq!(at(3, 3), None);
        assert_eq!(at(-1, 3), Some(2));
        assert_eq!(at(-3, 3), Some(0));
        assert_eq!(at(-4, 3), None);
        assert_eq!(at(i64::MIN as i128, 3), None);
        assert_eq!(at(-1, 0), None);
        let uri =
            NdArrayMeta::from_node(&Node::map(vec![("source", Node::str("x.asdf"))]), "").unwrap();
        assert_eq!(uri.block_index(3), None);
    }

    #[test]
    fn uri_and_inline_sources() {
        let m = NdArrayMeta::from_node(&Node::map(vec![("source", Node::str("ext.asdf"))]), "")
            .unwrap();
        assert_eq!(m.source, ArraySource::Uri("ext.asdf".into()));
        assert_eq!(m.dtype, None);
        assert_eq!(m.byteorder, ByteOrder::native());
        let data = Node::seq(vec![Node::int(1), Node::int(2)]);
        let m = NdArrayMeta::from_node(
            &Node::map(vec![
                ("data", data.clone()),
                ("byteorder", Node::str("big")),
                ("datatype", Node::str("int16")),
            ]),
            "",
        )
        .unwrap();
        assert_eq!(m.source, ArraySource::Inline(data.clone()));
        // inline data is native whatever `byteorder` says
        assert_eq!(m.byteorder, ByteOrder::native());
        assert_eq!(
            m.dtype,
            Some(DType::scalar(ScalarType::Int16, ByteOrder::native()))
        );
        let bare = NdArrayMeta::from_node(&data, "").unwrap();
        assert_eq!(bare.source, ArraySource::Inline(data));
        assert_eq!(bare.shape, None);
    }

    #[test]
    fn errors_name_path_and_key() {
        let err = |n: Node| NdArrayMeta::from_node(&n, "/tree/arr").unwrap_err();
        assert_eq!(
            err(Node::map(vec![("shape", Node::seq(vec![]))])),
            ArrayError::MissingKey {
                path: "/tree/arr".into(),
                key: "source".into()
            }
        );
        let key_of = |e: ArrayError| match e {
            ArrayError::BadValue { path, key, .. } => {
                assert_eq!(path, "/tree/arr");
                key
            }
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::int(0)),
                ("data", Node::seq(vec![]))
            ]))),
            "data"
        );
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::str("a")),
                ("offset", Node::int(-1))
            ]))),
            "offset"
        );
        assert_eq!(
            key_of(err(Node::map(vec![(
                "source",
                Node::new(Value::Bool(true))
            )]))),
            "source"
        );
        assert_eq!(key_of(err(Node::map(vec![("data", Node::int(5))]))), "data");
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::int(0)),
                ("byteorder", Node::str("native"))
            ]))),
            "byteorder"
        );
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::int(0)),
                ("shape", Node::seq(vec![Node::int(2), Node::str("*")]))
            ]))),
            "shape"
        );
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::int(0)),
                ("shape", Node::seq(vec![Node::int(-2)]))
            ]))),
            "shape"
        );
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::int(0)),
                ("shape", Node::seq(vec![Node::int(2)])),
                ("strides", Node::seq(vec![Node::int(2), Node::int(1)]))
            ]))),
            "strides"
        );
        assert_eq!(
            key_of(err(Node::map(vec![
                ("source", Node::int(0)),
                ("strides", Node::seq(vec![Node::new(Value::Float(1.0))]))
            ]))),
            "strides"
        );
        assert_eq!(
            key_of(err(Node::map(vec![(
                "source",
                Node::new(Value::Int(Integer::Big("99999999999999999999999".into())))
            )]))),
            "source"
        );
        assert_eq!(key_of(err(Node::str("scalar"))), "");
        assert!(matches!(
            err(Node::map(vec![("source", Node::int(0)), ("datatype", Node::str("int3"))])),
            ArrayError::UnknownDatatype { ref path, .. } if path == "/tree/arr/datatype"
        ));
    }
}
