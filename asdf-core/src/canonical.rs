//! The `asdf-canonical/1` JSON form of a file's content.
