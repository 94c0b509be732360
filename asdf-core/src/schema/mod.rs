//! Schemas: the bundled ASDF schemas (`schemas/` of the repository, embedded), the tag → schema
//! lookup per standard version, and validation of tagged trees with the ASDF keywords.

pub mod bundled;
