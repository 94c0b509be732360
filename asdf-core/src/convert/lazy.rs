//! [`LazyArray`]: an array field that is read from its file only when asked.

use std::marker::PhantomData;

use ndarray::{Array, Dimension};

use super::{
    ArrayLoader, ConvertError, ConvertErrorKind, FromAsdf, FromContext, ToAsdf, ToContext,
};
use crate::array::{DType, DynArray, Element, NdArrayMeta};
use crate::yaml::Node;

/// An ndarray that a typed value refers to without loading it: reading the value keeps the
/// ndarray node (its datatype and shape are at hand), and [`LazyArray::load`] reads the
/// data from the file when the program needs it. Writing the value with a writer made by
/// `Writer::from_file` copies the data from that file.
///
/// ```no_run
/// use asdf_core::{AsdfFile, AsdfType};
/// use asdf_core::convert::LazyArray;
///
/// #[derive(AsdfType)]
/// struct Product {
///     sci: LazyArray<f32, ndarray::Ix2>,
/// }
///
/// let file = AsdfFile::open("big.asdf")?;
/// let p: Product = file.read_as("/")?;          // no block read yet
/// println!("{:?}", p.sci.shape());               // from the tree
/// let sci = p.sci.load(&file)?;                  // now the block is read
/// # Ok::<(), asdf_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LazyArray<T, D> {
    node: Node,
    path: String,
    _marker: PhantomData<fn() -> (T, D)>,
}

impl<T: Element, D: Dimension> LazyArray<T, D> {
    /// The ndarray node.
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The tree path the array was read from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The shape written in the tree (`None` for a streamed array, whose first axis
    /// depends on the file's length, or inline data without a shape).
    pub fn shape(&self) -> Option<Vec<usize>> {
        let meta = NdArrayMeta::from_node(&self.node, &self.path).ok()?;
        meta.fixed_shape()?
            .into_iter()
            .map(|d| usize::try_from(d).ok())
            .collect()
    }

    /// The datatype written in the tree.
    pub fn dtype(&self) -> Option<DType> {
        NdArrayMeta::from_node(&self.node, &self.path).ok()?.dtype
    }

    /// Reads the array from `file` (the file the value was read from).
    pub fn load(&self, file: &dyn ArrayLoader) -> crate::Result<Array<T, D>> {
        let dynamic: DynArray = file.load_array(&self.node, &self.path)?;
        let array = dynamic.to_array::<T>()?;
        let ndim = array.ndim();
        array.into_dimensionality::<D>().map_err(|_| {
            crate::Error::Typed(ConvertError::new(
                self.path.clone(),
                ConvertErrorKind::Expected {
                    expected: format!("an array of {} dimensions", D::NDIM.unwrap_or(ndim)),
                    found: format!("{ndim} dimensions"),
                },
            ))
        })
    }
}

impl<T: Element, D: Dimension> FromAsdf for LazyArray<T, D> {
    fn accepts_tag(tag: Option<&str>) -> bool {
        tag.is_some_and(|t| t.starts_with("tag:stsci.edu:asdf/core/ndarray-"))
    }

    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        if !Self::accepts_tag(node.tag()) {
            return Err(ctx.error(ConvertErrorKind::Expected {
                expected: "an ndarray".into(),
                found: super::describe(node),
            }));
        }
        // the descriptor is checked now, the data later
        let path = ctx.path();
        let meta = NdArrayMeta::from_node(node, &path)
            .map_err(|e| ctx.error(ConvertErrorKind::Array(Box::new(e))))?;
        if let Some(dt) = &meta.dtype {
            if !matches!(dt, DType::Scalar { ty, .. } if *ty == T::SCALAR) {
                return Err(ctx.error(ConvertErrorKind::Expected {
                    expected: format!("a {} array", T::SCALAR.name()),
                    found: format!("{} data", dt.name()),
                }));
            }
        }
        if let (Some(shape), Some(nd)) = (&meta.shape, D::NDIM) {
            if shape.len() != nd {
                return Err(ctx.error(ConvertErrorKind::Expected {
                    expected: format!("an array of {nd} dimensions"),
                    found: format!("{} dimensions", shape.len()),
                }));
            }
        }
        Ok(LazyArray {
            node: node.clone(),
            path,
            _marker: PhantomData,
        })
    }
}

impl<T: Element, D: Dimension> ToAsdf for LazyArray<T, D> {
    fn to_asdf<'a>(&'a self, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(self.node.clone())
    }
}
