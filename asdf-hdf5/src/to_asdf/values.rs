//! Values of the HDF5 datatypes that have no array form but a tree form (docs/hdf5.md):
//! dataset region references, and references, variable-length strings and sequences inside
//! compounds, arrays and sequences (as netCDF's dimension scales hold them). Each element
//! becomes a YAML node: a record a mapping of its fields, an object reference a `$ref`, a
//! region reference the `$ref` of its dataset with the selection, a sequence of numbers (or
//! an array member of numbers) a 1-D (or n-D) inline array, any other sequence a list,
//! numbers and strings scalars.
//!
//! Everything read from the file is checked before it is used: each element's bytes against
//! the datatype's size, each sequence's bytes (resolved through the global heap) against
//! what is left of [`ToAsdfOptions::max_dataset_bytes`], each selection's counts against its
//! bytes, and the nodes made against [`MAX_NODES`].

use asdf_core::array::{DType, DynArray, Storage};
use asdf_core::write::ArrayOptions;
use asdf_core::{Node, Value};
use hdf5_reader::group::Group;
use hdf5_reader::{ByteOrder as H5Order, Datatype, ReferenceType, StringPadding, StringSize};

use super::{nest_nodes, read_err, sequence_plan, Walk};
use crate::datatype;
use crate::{Hdf5Error, Result};

/// Most nodes one dataset or attribute becomes in the tree form.
pub(super) const MAX_NODES: usize = 1 << 20;

/// What one dataset's or attribute's values may still take.
pub(super) struct Budget {
    /// Nodes still allowed.
    nodes: usize,
    /// Bytes of sequences (and strings) resolved through the global heap still allowed.
    heap_bytes: u64,
}

impl Budget {
    pub(super) fn new(max_bytes: u64) -> Self {
        Budget {
            nodes: MAX_NODES,
            heap_bytes: max_bytes,
        }
    }
}

/// Whether a datatype that neither the array form nor the forms of whole datasets
/// (object references, sequences of numbers, variable-length strings) take has the tree
/// form: a reference, a variable-length sequence or string anywhere in it.
pub(super) fn holds_nodes(dt: &Datatype) -> bool {
    holds_nodes_at(dt, 0)
}

fn holds_nodes_at(dt: &Datatype, depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match dt {
        Datatype::Reference { .. } | Datatype::VarLen { .. } => true,
        Datatype::String {
            size: StringSize::Variable,
            ..
        } => true,
        Datatype::Compound { fields, .. } => fields
            .iter()
            .any(|f| holds_nodes_at(&f.datatype, depth + 1)),
        Datatype::Array { base, .. } => holds_nodes_at(base, depth + 1),
        _ => false,
    }
}

/// The HDF5 description of a datatype that has no tree form (for [`Hdf5Error::Unsupported`]).
fn unsupported(path: &str, dt: &Datatype) -> Hdf5Error {
    Hdf5Error::Unsupported {
        path: path.to_string(),
        what: datatype::describe(dt),
    }
}

impl Walk<'_, '_> {
    /// The elements of a dataset or attribute (`raw`, C order) of a datatype with the tree
    /// form, nested by `shape` (the node itself for shape `[]`).
    pub(super) fn value_nodes(
        &mut self,
        dt: &Datatype,
        raw: &[u8],
        shape: &[usize],
        path: &str,
    ) -> Result<Node> {
        let size = datatype::size_of(dt);
        let count = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| read_err(path, "its shape overflows"))?;
        if size == 0 || count.checked_mul(size) != Some(raw.len()) {
            return Err(read_err(
                path,
                format!(
                    "its data holds {} bytes, not {count} elements of {size}",
                    raw.len()
                ),
            ));
        }
        let root = self.file.root_group().map_err(|e| read_err(path, e))?;
        let mut budget = Budget::new(self.opts.max_dataset_bytes);
        let mut nodes = Vec::new();
        for e in raw.chunks_exact(size) {
            nodes.push(self.value(dt, e, &root, &mut budget, path, 0)?);
        }
        Ok(nest_nodes(nodes, shape))
    }

    /// One element of `dt` (its bytes, exactly its size) as a node.
    fn value(
        &mut self,
        dt: &Datatype,
        b: &[u8],
        root: &Group,
        budget: &mut Budget,
        path: &str,
        depth: usize,
    ) -> Result<Node> {
        if depth > 64 {
            return Err(unsupported(path, dt));
        }
        budget.nodes = budget
            .nodes
            .checked_sub(1)
            .ok_or_else(|| read_err(path, format!("it holds more than {MAX_NODES} values")))?;
        Ok(match dt {
            Datatype::FixedPoint {
                size,
                signed,
                byte_order,
            } if (1..=16).contains(size) => Node::int(int_value(b, *signed, byte_order)),
            Datatype::FloatingPoint { size, byte_order } => {
                let mut x = b.to_vec();
                if matches!(byte_order, H5Order::BigEndian) {
                    x.reverse();
                }
                let f = match *size {
                    8 => f64::from_le_bytes(x[..8].try_into().expect("8 bytes")),
                    4 => f64::from(f32::from_le_bytes(x[..4].try_into().expect("4 bytes"))),
                    2 => f16_to_f64(u16::from_le_bytes([x[0], x[1]])),
                    _ => return Err(unsupported(path, dt)),
                };
                Node::new(Value::Float(f))
            }
            Datatype::Enum { base, members } => {
                let v = datatype::enum_value(base, b);
                let is_bool = members.len() == 2
                    && members.iter().any(|m| m.name == "FALSE")
                    && members.iter().any(|m| m.name == "TRUE")
                    && matches!(**base, Datatype::FixedPoint { size: 1, .. });
                if is_bool && (v == 0 || v == 1) {
                    Node::new(Value::Bool(v == 1))
                } else {
                    Node::int(v)
                }
            }
            Datatype::String {
                size: StringSize::Fixed(_),
                padding,
                ..
            } => {
                let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                let mut s = &b[..end];
                if *padding == StringPadding::SpacePad {
                    while let [rest @ .., b' '] = s {
                        s = rest;
                    }
                }
                self.text(s)
            }
            Datatype::String { .. }
            | Datatype::VarLen {
                kind: hdf5_reader::VarLenKind::String,
                ..
            } => {
                let bytes = self.heap_bytes(root, b, 1, budget, path)?;
                let end = bytes.iter().position(|&x| x == 0).unwrap_or(bytes.len());
                self.text(&bytes[..end])
            }
            Datatype::VarLen { base, .. } => {
                let base_size = datatype::size_of(base);
                if base_size == 0 || base_size == usize::MAX {
                    return Err(unsupported(path, dt));
                }
                let bytes = self.heap_bytes(root, b, base_size, budget, path)?;
                match sequence_plan(base) {
                    // numbers: a 1-D inline array, as sequences in whole datasets are
                    Ok(plan) => self.inline(
                        plan.dtype.clone(),
                        vec![bytes.len() / base_size],
                        plan.convert(bytes),
                    ),
                    Err(_) => {
                        let mut items = Vec::new();
                        for e in bytes.chunks_exact(base_size) {
                            items.push(self.value(base, e, root, budget, path, depth + 1)?);
                        }
                        Node::seq(items)
                    }
                }
            }
            Datatype::Compound { fields, .. } => {
                let mut entries = Vec::with_capacity(fields.len());
                for f in fields {
                    let fsize = datatype::size_of(&f.datatype);
                    let start = f.byte_offset as usize;
                    let fb = start
                        .checked_add(fsize)
                        .and_then(|end| b.get(start..end))
                        .ok_or_else(|| {
                            read_err(path, format!("field {:?} lies outside its record", f.name))
                        })?;
                    let v = self.value(&f.datatype, fb, root, budget, path, depth + 1)?;
                    entries.push((Node::str(f.name.as_str()), v));
                }
                Node::new(Value::Map(entries))
            }
            Datatype::Array { base, dims } => match datatype::plan(dt) {
                // numbers: an inline array of the member's shape
                Ok(plan) if !holds_nodes(base) && plan.opaque_tag.is_none() => self.inline(
                    plan.dtype.clone(),
                    plan.inner_shape.clone(),
                    plan.convert(b.to_vec()),
                ),
                _ => {
                    let base_size = datatype::size_of(base);
                    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
                    if base_size == 0 || base_size == usize::MAX {
                        return Err(unsupported(path, dt));
                    }
                    let mut items = Vec::new();
                    for e in b.chunks_exact(base_size) {
                        items.push(self.value(base, e, root, budget, path, depth + 1)?);
                    }
                    nest_nodes(items, &shape)
                }
            },
            // HDF5 1.12's references (`H5R_ref_t`, datatype version 4), which hdf5-reader
            // reads as references of this size: read as the old ones are
            Datatype::Reference { size, .. }
                if usize::from(*size) == usize::from(root.offset_size()) + 10 =>
            {
                self.large_ref(b, root, path)?
            }
            // old-style references (an address; a global-heap ID)
            Datatype::Reference {
                ref_type: ReferenceType::Object,
                size,
            } if *size == root.offset_size() => self.object_ref(b),
            Datatype::Reference {
                ref_type: ReferenceType::DatasetRegion,
                size,
            } if usize::from(*size) == usize::from(root.offset_size()) + 4 => {
                self.region_ref(b, root, path)?
            }
            _ => return Err(unsupported(path, dt)),
        })
    }

    /// A string's bytes as a YAML string, or, when they are not UTF-8, as a 1-D inline
    /// `uint8` array of them (no text holds them).
    fn text(&mut self, b: &[u8]) -> Node {
        match std::str::from_utf8(b) {
            Ok(s) => Node::str(s),
            Err(_) => self.inline(
                DType::scalar(
                    asdf_core::array::ScalarType::UInt8,
                    asdf_core::array::ByteOrder::Little,
                ),
                vec![b.len()],
                b.to_vec(),
            ),
        }
    }

    /// A 1-D (or n-D) inline array node.
    fn inline(&mut self, dtype: DType, shape: Vec<usize>, data: Vec<u8>) -> Node {
        self.writer.add_array_with(
            DynArray { dtype, shape, data },
            ArrayOptions {
                compression: None,
                storage: Some(Storage::Inline),
            },
        )
    }

    /// The bytes a variable-length element (`count`, heap ID) names, `unit` bytes an item,
    /// within the budget.
    fn heap_bytes(
        &self,
        root: &Group,
        reference: &[u8],
        unit: usize,
        budget: &mut Budget,
        path: &str,
    ) -> Result<Vec<u8>> {
        let bytes = root
            .resolve_vlen_reference_bytes(reference, unit)
            .map_err(|e| read_err(path, e))?;
        budget.heap_bytes = budget
            .heap_bytes
            .checked_sub(bytes.len() as u64)
            .ok_or_else(|| {
                read_err(
                    path,
                    format!(
                        "its sequences hold more than the limit of {} bytes",
                        self.opts.max_dataset_bytes
                    ),
                )
            })?;
        Ok(bytes)
    }

    /// An HDF5 1.12 reference (`H5R_ref_t` as libhdf5 stores it: offset size + 10 bytes):
    /// its kind (2 an object, 3 a region, 4 an attribute; 0 for a null reference) and flags
    /// (1: in another file), then an object's encoding inline (its token: size, address),
    /// any other as its size and the global-heap ID of its encoding (the token, then a
    /// region's selection size, rank and serialized selection, or an attribute's name
    /// length (u16) and name). An object becomes its `$ref` and a region the old form
    /// ([`Walk::region_ref`]); an attribute a `$ref` to its node under `_hdf5/attrs`;
    /// `null` for a null reference. A reference into another file has no form.
    fn large_ref(&mut self, b: &[u8], root: &Group, path: &str) -> Result<Node> {
        let n = usize::from(root.offset_size());
        let bad = |why: &str| read_err(path, format!("HDF5 1.12 reference: {why}"));
        let (Some(&kind), Some(&flags)) = (b.first(), b.get(1)) else {
            return Err(bad("shorter than its header"));
        };
        if kind == 0 {
            return Ok(Node::new(Value::Null));
        }
        if flags & 1 != 0 {
            return Err(Hdf5Error::Unsupported {
                path: path.to_string(),
                what: "HDF5 1.12 reference into another file".into(),
            });
        }
        let encoding = if kind == 2 {
            b[2..].to_vec()
        } else {
            let (Some(size), Some(heap_id)) = (b.get(2..6), b.get(6..6 + n + 4)) else {
                return Err(bad("shorter than a size and a heap ID"));
            };
            let size = u32::from_le_bytes(size.try_into().expect("4 bytes")) as usize;
            let object = root
                .global_heap_object(heap_id)
                .map_err(|e| read_err(path, e))?;
            if object.is_empty() {
                return Ok(Node::new(Value::Null));
            }
            match object.get(..size) {
                Some(e) => e.to_vec(),
                None => return Err(bad("its encoding is shorter than it says")),
            }
        };
        // the token: its size, then the object's address
        let token = match encoding.first() {
            Some(&t) if usize::from(t) == n => encoding.get(1..1 + n),
            _ => None,
        };
        let Some(token) = token else {
            return Err(bad("its object token is not an address of the file's size"));
        };
        let rest = &encoding[1 + n..];
        let object = self.object_ref(token);
        match kind {
            2 => Ok(object),
            3 => {
                // selection size and extent rank (u32 each), then the selection
                let size = rest
                    .get(..4)
                    .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")) as usize);
                let Some(selection) = size.and_then(|s| rest.get(8..8usize.checked_add(s)?)) else {
                    return Err(bad("its selection is shorter than it says"));
                };
                let mut entries = vec![(Node::str("dataset"), object)];
                entries.extend(
                    selection_entries(selection)
                        .map_err(|m| read_err(path, format!("region reference: {m}")))?,
                );
                Ok(Node::new(Value::Map(entries)))
            }
            4 => {
                let len = rest
                    .get(..2)
                    .map(|l| usize::from(u16::from_le_bytes(l.try_into().expect("2 bytes"))));
                let Some(name) = len.and_then(|l| rest.get(2..2 + l)) else {
                    return Err(bad("its attribute name is shorter than it says"));
                };
                let Some(owner) = self.object_path(token) else {
                    return Ok(Node::new(Value::Null));
                };
                let esc = asdf_core::unstable::escape_pointer_segment;
                let owner = if owner.is_empty() { "/" } else { &owner };
                let name = String::from_utf8_lossy(name);
                Ok(Node::new(Value::Map(vec![(
                    Node::str("$ref"),
                    Node::str(format!(
                        "#/{}/attrs/{}/{}",
                        crate::META_KEY,
                        esc(owner),
                        esc(&name)
                    )),
                )])))
            }
            other => Err(Hdf5Error::Unsupported {
                path: path.to_string(),
                what: format!("HDF5 1.12 reference of kind {other}"),
            }),
        }
    }

    /// An old-style dataset region reference (a global-heap ID): `null` for a null
    /// reference, else `{dataset: {$ref: ...}, selection: KIND, ...}` (docs/hdf5.md).
    fn region_ref(&mut self, b: &[u8], root: &Group, path: &str) -> Result<Node> {
        let object = root.global_heap_object(b).map_err(|e| read_err(path, e))?;
        if object.is_empty() {
            return Ok(Node::new(Value::Null));
        }
        let n = usize::from(root.offset_size());
        let (address, selection) = (object.get(..n), object.get(n..));
        let (Some(address), Some(selection)) = (address, selection) else {
            return Err(read_err(path, "a region reference shorter than an address"));
        };
        let mut entries = vec![(Node::str("dataset"), self.object_ref(address))];
        entries.extend(
            selection_entries(selection)
                .map_err(|m| read_err(path, format!("region reference: {m}")))?,
        );
        Ok(Node::new(Value::Map(entries)))
    }
}

/// An integer of 1 to 16 bytes.
fn int_value(b: &[u8], signed: bool, order: &H5Order) -> i128 {
    let mut x = b.to_vec();
    if matches!(order, H5Order::BigEndian) {
        x.reverse();
    }
    let mut v: u128 = 0;
    for (i, byte) in x.iter().enumerate().take(16) {
        v |= u128::from(*byte) << (8 * i);
    }
    let bits = 8 * x.len().min(16);
    if signed && bits > 0 && bits < 128 && (v >> (bits - 1)) & 1 == 1 {
        (v as i128) - (1i128 << bits)
    } else {
        v as i128
    }
}

/// An IEEE half-precision float, exactly.
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Reads little-endian unsigned integers of a serialized selection, each checked.
struct Reader<'a> {
    b: &'a [u8],
}

impl Reader<'_> {
    fn uint(&mut self, n: usize) -> std::result::Result<u64, String> {
        if !matches!(n, 1 | 2 | 4 | 8) || self.b.len() < n {
            return Err("the selection ends early".into());
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        let mut x = [0u8; 8];
        x[..n].copy_from_slice(head);
        Ok(u64::from_le_bytes(x))
    }

    /// A count of items of `item` bytes each that the rest must hold.
    fn count(&mut self, n: usize, item: usize) -> std::result::Result<usize, String> {
        let c = self.uint(n)?;
        usize::try_from(c)
            .ok()
            .filter(|&c| c.checked_mul(item).is_some_and(|b| b <= self.b.len()))
            .ok_or_else(|| format!("{c} items do not fit in its {} bytes", self.b.len()))
    }

    fn ints(&mut self, count: usize, n: usize) -> std::result::Result<Node, String> {
        let mut out = Vec::with_capacity(count.min(self.b.len()));
        for _ in 0..count {
            out.push(Node::int(i128::from(self.uint(n)?)));
        }
        Ok(Node::seq(out))
    }
}

/// Most dimensions of a selection (HDF5's own limit).
const MAX_RANK: u64 = 32;

/// The entries of a serialized dataspace selection (HDF5's `H5S_SELECT_SERIALIZE`,
/// versions 1 to 3): `selection: all | none | points | hyperslab | blocks` and its
/// coordinates; `Err` says why not.
fn selection_entries(b: &[u8]) -> std::result::Result<Vec<(Node, Node)>, String> {
    let mut r = Reader { b };
    let kind = r.uint(4)?;
    let version = r.uint(4)?;
    let named = |k: &str| (Node::str("selection"), Node::str(k));
    let rank = |r: &mut Reader<'_>| -> std::result::Result<usize, String> {
        let rank = r.uint(4)?;
        if rank == 0 || rank > MAX_RANK {
            return Err(format!("rank {rank}"));
        }
        Ok(rank as usize)
    };
    match (kind, version) {
        (0, _) => Ok(vec![named("none")]),
        (3, _) => Ok(vec![named("all")]),
        // points: version 1 in u32, version 2 in integers of a given size
        (1, 1 | 2) => {
            let size = if version == 1 {
                r.uint(4)?; // reserved
                r.uint(4)?; // length
                4
            } else {
                r.uint(1)? as usize
            };
            let rank = rank(&mut r)?;
            let n = r.count(if version == 1 { 4 } else { size }, rank * size)?;
            let mut points = Vec::with_capacity(n);
            for _ in 0..n {
                points.push(r.ints(rank, size)?);
            }
            Ok(vec![
                named("points"),
                (Node::str("points"), Node::seq(points)),
            ])
        }
        // hyperslabs: a list of blocks (version 1, or 3 irregular), or one regular pattern
        // (version 2, or 3 regular)
        (2, 1..=3) => {
            let (regular, size) = match version {
                1 => {
                    r.uint(4)?; // reserved
                    r.uint(4)?; // length
                    (false, 4)
                }
                2 => {
                    let flags = r.uint(1)?;
                    r.uint(4)?; // length
                    if flags & 1 == 0 {
                        return Err("an irregular hyperslab of version 2".into());
                    }
                    (true, 8)
                }
                _ => {
                    let flags = r.uint(1)?;
                    (flags & 1 == 1, r.uint(1)? as usize)
                }
            };
            let rank = rank(&mut r)?;
            if regular {
                let (mut start, mut stride, mut count, mut block) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for _ in 0..rank {
                    for list in [&mut start, &mut stride, &mut count, &mut block] {
                        list.push(Node::int(i128::from(r.uint(size)?)));
                    }
                }
                return Ok(vec![
                    named("hyperslab"),
                    (Node::str("start"), Node::seq(start)),
                    (Node::str("stride"), Node::seq(stride)),
                    (Node::str("count"), Node::seq(count)),
                    (Node::str("block"), Node::seq(block)),
                ]);
            }
            let n = r.count(size, 2 * rank * size)?;
            let mut blocks = Vec::with_capacity(n);
            for _ in 0..n {
                let start = r.ints(rank, size)?;
                let end = r.ints(rank, size)?;
                blocks.push(Node::seq([start, end]));
            }
            Ok(vec![
                named("blocks"),
                (Node::str("blocks"), Node::seq(blocks)),
            ])
        }
        _ => Err(format!("selection kind {kind} of version {version}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le32(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn ints(n: &Node) -> Vec<i128> {
        n.as_seq()
            .unwrap()
            .iter()
            .map(|x| x.as_int().and_then(|i| i.as_i128()).unwrap())
            .collect()
    }

    fn get<'a>(e: &'a [(Node, Node)], k: &str) -> &'a Node {
        &e.iter().find(|(n, _)| n.as_str() == Some(k)).unwrap().1
    }

    /// The byte layouts h5py 3.16 (HDF5 2.0) writes, read from regions.h5 and
    /// regions_latest.h5 (generate.py): version 1 (earliest format) and version 3.
    #[test]
    fn selections_of_every_kind_and_version() {
        // hyperslab v1: [1:3, 2:5] as one block, corners inclusive
        let e = selection_entries(&le32(&[2, 1, 0, 24, 2, 1, 1, 2, 2, 4])).unwrap();
        assert_eq!(get(&e, "selection").as_str(), Some("blocks"));
        let blocks = get(&e, "blocks").as_seq().unwrap();
        let b0 = blocks[0].as_seq().unwrap();
        assert_eq!((ints(&b0[0]), ints(&b0[1])), (vec![1, 2], vec![2, 4]));
        // hyperslab v3 regular, 2-byte integers: start, stride, count, block by dimension
        let mut v3 = le32(&[2, 3]);
        v3.extend([1, 2]);
        v3.extend(le32(&[2]));
        for x in [1u16, 1, 1, 2, 2, 1, 1, 3] {
            v3.extend(x.to_le_bytes());
        }
        let e = selection_entries(&v3).unwrap();
        assert_eq!(get(&e, "selection").as_str(), Some("hyperslab"));
        assert_eq!(ints(get(&e, "start")), [1, 2]);
        assert_eq!(ints(get(&e, "count")), [1, 1]);
        assert_eq!(ints(get(&e, "block")), [2, 3]);
        // points v1 and v2
        let e = selection_entries(&le32(&[1, 1, 0, 32, 2, 3, 0, 1, 3, 5, 2, 2])).unwrap();
        let pts: Vec<Vec<i128>> = get(&e, "points")
            .as_seq()
            .unwrap()
            .iter()
            .map(ints)
            .collect();
        assert_eq!(pts, [vec![0, 1], vec![3, 5], vec![2, 2]]);
        let mut p2 = le32(&[1, 2]);
        p2.push(2);
        p2.extend(le32(&[2]));
        for x in [3u16, 0, 1, 3, 5, 2, 2] {
            p2.extend(x.to_le_bytes());
        }
        let e = selection_entries(&p2).unwrap();
        let pts2: Vec<Vec<i128>> = get(&e, "points")
            .as_seq()
            .unwrap()
            .iter()
            .map(ints)
            .collect();
        assert_eq!(pts2, pts);
        // all, none
        let e = selection_entries(&le32(&[3, 1, 0, 0])).unwrap();
        assert_eq!(get(&e, "selection").as_str(), Some("all"));
        let e = selection_entries(&le32(&[0, 1, 0, 0])).unwrap();
        assert_eq!(get(&e, "selection").as_str(), Some("none"));
    }

    #[test]
    fn a_selection_declaring_more_than_it_holds_is_refused_before_allocating() {
        // 4 Gi blocks in a few bytes
        let e = selection_entries(&le32(&[2, 1, 0, 24, 2, u32::MAX, 1, 2])).unwrap_err();
        assert!(e.contains("do not fit"), "{e}");
        let e = selection_entries(&le32(&[1, 1, 0, 32, 2, u32::MAX])).unwrap_err();
        assert!(e.contains("do not fit"), "{e}");
        // cut short, a rank of 0 or too many, an unknown kind
        assert!(selection_entries(&le32(&[2, 1, 0])).is_err());
        assert!(selection_entries(&le32(&[2, 1, 0, 0, 0, 1]))
            .unwrap_err()
            .contains("rank"));
        assert!(selection_entries(&le32(&[2, 1, 0, 0, 99, 1]))
            .unwrap_err()
            .contains("rank"));
        assert!(selection_entries(&le32(&[7, 1])).is_err());
        assert!(selection_entries(&[]).is_err());
    }

    #[test]
    fn half_floats_and_integers_exactly() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0x7c00), f64::INFINITY);
        assert!(f16_to_f64(0x7e00).is_nan());
        assert_eq!(int_value(&[0xff, 0xfe], true, &H5Order::BigEndian), -2);
        assert_eq!(
            int_value(&[0xfe, 0xff], false, &H5Order::LittleEndian),
            0xfffe
        );
    }
}
