//! Typed writing: [`Writer::add_value`] and the [`ArraySink`] behind it.

use super::Writer;
use crate::array::{ArrayOptions, WriteArray};
use crate::convert::{ArraySink, ConvertError, ToAsdf, ToContext};
use crate::yaml::Node;
use crate::StandardVersion;

impl<'a> ArraySink<'a> for Writer<'a> {
    fn add_array(&mut self, array: WriteArray<'a>, opts: ArrayOptions) -> Node {
        self.add_array_with(array, opts)
    }

    fn add_masked_array(
        &mut self,
        array: WriteArray<'a>,
        mask: WriteArray<'a>,
        opts: ArrayOptions,
    ) -> Node {
        Writer::add_masked_array(self, array, mask, opts)
    }

    fn standard(&self) -> StandardVersion {
        self.options().standard_version().clone()
    }
}

impl<'a> Writer<'a> {
    /// Converts `value` into a node to place in the tree; its arrays become blocks (or
    /// inline data, or external files) as the writer's options and the value's own array
    /// options say. Array data is borrowed from `value`, not copied.
    ///
    /// ```
    /// use asdf_core::{write::{Writer, WriteOptions}, Node};
    /// let data = ndarray::arr1(&[1.0f64, 2.0, 3.0]);
    /// let mut w = Writer::new(WriteOptions::default());
    /// let node = w.add_value(&data)?;
    /// let bytes = w.write_to_vec(&Node::map([("data", node)]))?;
    /// let file = asdf_core::AsdfFile::from_bytes(bytes)?;
    /// let back: ndarray::Array1<f64> = file.read_as("/data")?;
    /// assert_eq!(back, data);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_value<T: ToAsdf + ?Sized>(&mut self, value: &'a T) -> Result<Node, ConvertError> {
        let mut ctx = ToContext::new(self);
        value.to_asdf(&mut ctx)
    }
}
