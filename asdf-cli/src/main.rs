//! `asdftool`: inspect ASDF files.
fn main() {}
