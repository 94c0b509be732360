//! Arrays by path: owned, viewed or dynamic, through the fast paths (`direct_read`) when
//! they apply and the block cache (`blocks`) otherwise.

use ndarray::{ArrayD, ArrayViewD, CowArray, IxDyn};

use super::AsdfFile;
use crate::array::{self, ArraySource, DynArray, Element, NdArrayMeta};
use crate::layout;
use crate::yaml::Node;
use crate::{Error, Result};

impl AsdfFile {
    /// The ndarray node at `path`, checked to be one.
    pub(super) fn ndarray_node(&self, path: &str) -> Result<&Node> {
        let node = self.node(path)?;
        if !node.is_ndarray() {
            return Err(Error::NotAnArray {
                path: path.into(),
                tag: node.tag().map(str::to_string),
            });
        }
        Ok(node)
    }

    /// The array at `path` in its dynamic form (any datatype: numbers, strings, records).
    /// An asdf-zarr node (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`) reads as its whole
    /// array here and in [`AsdfFile::array`], [`AsdfFile::region`] and the other region
    /// reads (see [`ZARR_TAG`](super::ZARR_TAG)).
    pub fn dyn_array(&self, path: &str) -> Result<DynArray> {
        if let Some(z) = self.zarr_at(path)? {
            return self.zarr_dyn(&z, path, &crate::Selection::all());
        }
        let node = self.ndarray_node(path)?.clone();
        self.dyn_array_of(&node, path)
    }

    /// The dynamic array of any ndarray node of this file's tree (`path` is used in errors).
    pub fn dyn_array_of(&self, node: &Node, path: &str) -> Result<DynArray> {
        if super::is_zarr(node) {
            return self.zarr_dyn(node, path, &crate::Selection::all());
        }
        let meta = NdArrayMeta::from_node(node, path)?;
        if let Some(a) = self.fast_dyn(&meta, path, None)? {
            return Ok(a);
        }
        self.bound_dyn(&meta, path)
    }

    /// The dynamic array of `meta` through the general path: inline data, or the block
    /// (decoded once into the cache) or external file bound with offset and strides.
    pub(super) fn bound_dyn(&self, meta: &NdArrayMeta, path: &str) -> Result<DynArray> {
        match &meta.source {
            ArraySource::Inline(_) => Ok(array::from_inline(meta, path)?),
            ArraySource::Block(src) => {
                let idx = self.block_index(*src, path)?;
                let data = self.block_data(idx)?;
                Ok(array::from_block(meta, data, path)?)
            }
            ArraySource::Uri(uri) if uri.starts_with("fits:") => {
                let err = |error| Error::Fits {
                    path: path.into(),
                    error,
                };
                let Some(container) = &self.fits else {
                    return Err(err(layout::fits::FitsError::NotInFits { uri: uri.clone() }));
                };
                container
                    .array(uri, self.options.max_block_bytes)
                    .map_err(err)
            }
            ArraySource::Uri(uri) => {
                let ext = self.external_file(uri, path)?;
                let data = ext.block_data(0).map_err(|e| ext.as_external(e))?;
                Ok(array::from_block(meta, data, path)?)
            }
        }
    }

    /// The array at `path` as an owned `ndarray` array of `T`, byte order converted.
    /// A datatype other than `T`'s is an [`crate::array::ArrayError::DTypeMismatch`].
    ///
    /// ```no_run
    /// let file = asdf_core::AsdfFile::open("image.asdf")?;
    /// let img = file.array::<f32>("/sci")?;
    /// println!("{} pixels", img.len());
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn array<T: Element>(&self, path: &str) -> Result<ArrayD<T>> {
        if self.zarr_at(path)?.is_some() {
            return self
                .dyn_array(path)?
                .to_array::<T>()
                .map_err(|source| Error::Convert {
                    path: path.into(),
                    source,
                });
        }
        let node = self.ndarray_node(path)?.clone();
        if let Some(a) = self.fast_owned::<T>(&node, path)? {
            return Ok(a);
        }
        self.dyn_array_of(&node, path)?
            .to_array::<T>()
            .map_err(|source| Error::Convert {
                path: path.into(),
                source,
            })
    }

    /// The array at `path` without copying when its block's bytes can be viewed as it (see
    /// [`AsdfFile::try_view`]); otherwise an owned copy.
    pub fn array_view<T: Element>(&self, path: &str) -> Result<CowArray<'_, T, IxDyn>> {
        if self.zarr_at(path)?.is_some() {
            return Ok(CowArray::from(self.array::<T>(path)?));
        }
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        if let ArraySource::Block(src) = meta.source {
            let idx = self.block_index(src, path)?;
            let data = self.block_data(idx)?;
            if let Some(view) = array::view::<T>(&meta, data, path)? {
                return Ok(CowArray::from(view));
            }
        }
        Ok(CowArray::from(self.array::<T>(path)?))
    }

    /// A view of the array at `path` over the block's bytes as the file holds them, or
    /// `None` when making a `T` array needs a copy (byte order not native, `bool`, position
    /// or strides not aligned for `T`, inline or external data).
    ///
    /// The bytes viewed are the memory map, or the block read into memory, when the block
    /// is uncompressed; a compressed block is decoded once into the file's block cache
    /// (the decoded bytes are kept for the file's life, as for every array read) and the
    /// view borrows that cache, with no further copy.
    pub fn try_view<T: Element>(&self, path: &str) -> Result<Option<ArrayViewD<'_, T>>> {
        if self.zarr_at(path)?.is_some() {
            return Ok(None); // chunks decoded into a new array
        }
        let node = self.ndarray_node(path)?;
        let meta = NdArrayMeta::from_node(node, path)?;
        match meta.source {
            ArraySource::Block(src) => {
                let idx = self.block_index(src, path)?;
                let data = self.block_data(idx)?;
                Ok(array::view::<T>(&meta, data, path)?)
            }
            _ => Ok(None),
        }
    }
}
