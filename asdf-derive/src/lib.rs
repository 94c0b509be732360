//! `#[derive(AsdfType)]` for asdf-core (being written; see the typed-layer issue).

use proc_macro::TokenStream;

/// Derives `asdf_core::convert::ToAsdf` and `asdf_core::convert::FromAsdf`.
#[proc_macro_derive(AsdfType, attributes(asdf))]
pub fn derive_asdf_type(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
