//! `#[derive(AsdfType)]` for asdf-core: tag-aware conversion of Rust structs and enums to
//! and from ASDF trees. Use it through `asdf_core::AsdfType`; the attributes are described
//! on [`macro@AsdfType`].

#![forbid(unsafe_code)]

mod attr;
mod expand;

use proc_macro::TokenStream;

// The documentation, with its examples, is derive.md: asdf-core runs those examples as its
// doctests (this crate cannot depend on asdf-core, even for its own tests: that would build
// asdf-core and its dependency tree a second time, for the host, in every workspace build).
// (`cargo test --doc` collects a library's doctests even with `doctest = false`: under
// cfg(doctest) the text is left off here.)
#[cfg_attr(not(doctest), doc = include_str!("derive.md"))]
#[proc_macro_derive(AsdfType, attributes(asdf))]
pub fn derive_asdf_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
