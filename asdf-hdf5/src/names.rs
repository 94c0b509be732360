//! The names both directions of the conversion agree on: the ASDF key that keeps what HDF5
//! says beyond the arrays, and the HDF5 attributes that keep a masked array's mask.

/// The root key under which what HDF5 says beyond the arrays is kept.
pub const META_KEY: &str = "_hdf5";

/// The attribute of a masked array's dataset naming the companion dataset (in the same
/// group) that holds its mask array.
pub(crate) const MASK_ATTR: &str = "_asdf_mask";

/// The attribute of a masked array's dataset holding its mask number (elements equal to it
/// are masked).
pub(crate) const MASK_VALUE_ATTR: &str = "_asdf_mask_value";
