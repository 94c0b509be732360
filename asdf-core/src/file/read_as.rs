//! Typed reading: [`AsdfFile::read_as`] and the [`ArrayLoader`] behind it.

use super::AsdfFile;
use crate::array::DynArray;
use crate::convert::{ArrayLoader, ConvertErrorKind, FromAsdf, FromContext};
use crate::yaml::Node;
use crate::Result;

impl ArrayLoader for AsdfFile {
    fn load_array(&self, node: &Node, path: &str) -> Result<DynArray> {
        self.dyn_array_of(node, path)
    }
}

impl AsdfFile {
    /// Converts the node at tree path `path` (a JSON pointer; `/` or `""` for the root)
    /// into a `T`. Arrays inside are loaded from the file as the conversion reaches them;
    /// blocks of arrays that `T` does not model are not read.
    ///
    /// ```no_run
    /// use asdf_core::AsdfFile;
    /// let file = AsdfFile::open("observation.asdf")?;
    /// let exposure: f64 = file.read_as("/meta/exposure_time")?;
    /// let sci: ndarray::Array2<f32> = file.read_as("/sci")?;
    /// # Ok::<(), asdf_core::Error>(())
    /// ```
    pub fn read_as<T: FromAsdf>(&self, path: &str) -> Result<T> {
        let node = if path.is_empty() || path == "/" {
            self.tree()
        } else {
            self.node(path)?
        };
        let mut ctx = FromContext::new(self, path);
        T::from_asdf(node, &mut ctx).map_err(|e| {
            // a failed load: the file's own error, where it happened
            match (&e.kind, ctx.take_load_error(&e.path)) {
                (ConvertErrorKind::Load(_), Some(source)) => crate::Error::Load {
                    path: e.path,
                    source: Box::new(source),
                },
                _ => crate::Error::Typed(e),
            }
        })
    }
}
