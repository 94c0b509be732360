//! Code generation of `#[derive(AsdfType)]`.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, Member, Type};

use crate::attr::{self, names, DefaultAttr, Errors, Place};

/// Expands the derive for `input`.
pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let gen = Gen;
    let (to_body, from_body, extra_to, extra_from, all_fields) = match &input.data {
        Data::Struct(s) => {
            let c = attr::container(&input.attrs, Place::Struct, &mut errors);
            let body = body(&s.fields, &mut errors);
            errors.finish()?;
            let (to, from, to_items, from_items) = gen.strukt(&c, &body);
            (to, from, to_items, from_items, body.fields)
        }
        Data::Enum(e) => {
            let c = attr::container(&input.attrs, Place::Enum, &mut errors);
            if let Some(t) = &c.tag {
                errors.push(
                    t.span,
                    "an enum has no tag of its own: put `tag` on its struct-like variants, or tag the variants' inner types",
                );
            }
            if let Some(t) = &c.tag_pattern {
                errors.push(
                    t.span,
                    "an enum has no tag of its own: put `tag_pattern` on its variants",
                );
            }
            if e.variants.is_empty() {
                errors.push(
                    input.ident.span(),
                    "#[derive(AsdfType)] needs at least one enum variant",
                );
            }
            let mut variants = Vec::new();
            for v in &e.variants {
                let va = attr::container(&v.attrs, Place::Variant, &mut errors);
                let b = body(&v.fields, &mut errors);
                check_variant(v, &va, &b, &mut errors);
                variants.push(Variant {
                    ident: &v.ident,
                    attrs: va,
                    body: b,
                });
            }
            // two unit variants written as the same string
            let mut seen: Vec<String> = Vec::new();
            for v in &variants {
                if matches!(v.body.shape, Shape::Unit) {
                    let name = v.unit_name();
                    if seen.contains(&name) {
                        errors.push(
                            v.attrs.rename.as_ref().map_or(v.ident.span(), |r| r.span),
                            format!("two variants are written as the string `{name}`"),
                        );
                    }
                    seen.push(name);
                }
            }
            errors.finish()?;
            let (to, from, accepts) = gen.enumeration(&input.ident, &c, &variants);
            let fields = variants.into_iter().flat_map(|v| v.body.fields).collect();
            (to, from, quote!(), accepts, fields)
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "#[derive(AsdfType)] does not support unions; use a struct or an enum",
            ))
        }
    };

    let ident = &input.ident;
    let to_generics = with_bounds(
        &input.generics,
        &all_fields,
        |f| f.attrs.skip.is_none() && f.attrs.extra.is_none() && f.attrs.with.is_none(),
        &quote!(::asdf_core::convert::ToAsdf),
        &[],
    );
    let default_tys: Vec<&Type> = all_fields
        .iter()
        .filter(|f| {
            f.attrs.skip.is_some() && f.attrs.default.is_none()
                || matches!(f.attrs.default, Some((DefaultAttr::Trait, _)))
        })
        .map(|f| f.ty)
        .collect();
    let from_generics = with_bounds(
        &input.generics,
        &all_fields,
        |f| f.attrs.skip.is_none() && f.attrs.extra.is_none() && f.attrs.with.is_none(),
        &quote!(::asdf_core::convert::FromAsdf),
        &default_tys,
    );
    let (to_impl, to_ty, to_where) = to_generics.split_for_impl();
    let (from_impl, from_ty, from_where) = from_generics.split_for_impl();
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #to_impl ::asdf_core::convert::ToAsdf for #ident #to_ty #to_where {
                #extra_to

                fn to_asdf<'__asdf_a>(
                    &'__asdf_a self,
                    __asdf_ctx: &mut ::asdf_core::convert::ToContext<'_, '__asdf_a>,
                ) -> ::std::result::Result<::asdf_core::Node, ::asdf_core::convert::ConvertError> {
                    #to_body
                }
            }

            #[automatically_derived]
            impl #from_impl ::asdf_core::convert::FromAsdf for #ident #from_ty #from_where {
                #extra_from

                fn from_asdf(
                    __asdf_node: &::asdf_core::Node,
                    __asdf_ctx: &mut ::asdf_core::convert::FromContext<'_>,
                ) -> ::std::result::Result<Self, ::asdf_core::convert::ConvertError> {
                    #from_body
                }
            }
        };
    })
}

/// The shape of a struct or variant.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `{ a: T }`
    Named,
    /// `(T, U)`
    Tuple,
    /// no fields
    Unit,
}

/// A field and what its attributes say.
struct Field<'a> {
    member: Member,
    binding: Ident,
    ty: &'a Type,
    attrs: attr::Field,
    key: String,
}

struct Body<'a> {
    shape: Shape,
    fields: Vec<Field<'a>>,
}

impl Body<'_> {
    fn has_rest(&self) -> bool {
        self.fields
            .iter()
            .any(|f| f.attrs.flatten.is_some() || f.attrs.extra.is_some())
    }
}

struct Variant<'a> {
    ident: &'a Ident,
    attrs: attr::Container,
    body: Body<'a>,
}

impl Variant<'_> {
    fn unit_name(&self) -> String {
        self.attrs
            .rename
            .as_ref()
            .map_or_else(|| self.ident.to_string(), |r| r.value.clone())
    }
}

/// Parses the fields of a struct or variant and checks their attributes.
fn body<'a>(fields: &'a Fields, errors: &mut Errors) -> Body<'a> {
    let shape = match fields {
        Fields::Named(_) => Shape::Named,
        Fields::Unnamed(_) => Shape::Tuple,
        Fields::Unit => Shape::Unit,
    };
    let mut out = Vec::new();
    let mut extra: Option<Span> = None;
    let mut flatten: Option<Span> = None;
    let mut keys: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let a = attr::field(&f.attrs, errors);
        let (member, key) = match &f.ident {
            Some(id) => {
                let name = id.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
                (
                    Member::Named(id.clone()),
                    a.rename.as_ref().map_or(name, |r| r.value.clone()),
                )
            }
            None => (Member::Unnamed(syn::Index::from(i)), String::new()),
        };
        if shape == Shape::Tuple {
            let only_named = [
                (names::RENAME, a.rename.as_ref().map(|r| r.span)),
                (names::SKIP, a.skip),
                (names::DEFAULT, a.default.as_ref().map(|d| d.1)),
                (names::FLATTEN, a.flatten),
                (names::EXTRA, a.extra),
                (names::KEEP_NULL, a.keep_null),
            ];
            for (name, span) in only_named {
                if let Some(s) = span {
                    errors.push(
                        s,
                        format!("`{name}` is only allowed on named fields (tuple fields are written as a sequence)"),
                    );
                }
            }
        } else {
            if let Some(s) = a.extra {
                if extra.is_some() {
                    errors.push(s, "only one field can be `extra`");
                }
                extra = Some(s);
            }
            if let Some(s) = a.flatten {
                flatten.get_or_insert(s);
            }
            if a.skip.is_none() && a.flatten.is_none() && a.extra.is_none() {
                if keys.contains(&key) {
                    let span = a.rename.as_ref().map_or(f.span(), |r| r.span);
                    errors.push(
                        span,
                        format!("two fields are written under the key `{key}`"),
                    );
                }
                keys.push(key.clone());
            }
        }
        if let Some(c) = a.compression.as_ref().filter(|c| c.value == "input") {
            if let Some(name) = owned_array(&f.ty) {
                errors.push(
                    c.span,
                    format!(
                        "`compression = \"input\"` cannot apply to `{name}`: an owned array read \
                         from a file does not remember its codec. Name the codec \
                         (`compression = \"lz4\"`), or use `asdf_core::convert::LazyArray`, which \
                         keeps its block and codec when written with `Writer::from_file`"
                    ),
                );
            }
        }
        out.push(Field {
            member,
            binding: format_ident!("__asdf_f{}", i),
            ty: &f.ty,
            attrs: a,
            key,
        });
    }
    if let (Some(e), Some(_)) = (extra, flatten) {
        errors.push(
            e,
            "`extra` cannot be used together with `flatten` fields (the keys a flattened field reads are not known)",
        );
    }
    Body { shape, fields: out }
}

/// The name of the owned ndarray type `ty` is or wraps (`Array2<f32>`, `Option<ArrayD<T>>`,
/// `Vec<Array1<u8>>`), if it is one: such a field cannot keep the codec it was read with.
fn owned_array(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else {
        return None;
    };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    let owned = matches!(
        name.as_str(),
        "Array"
            | "Array0"
            | "Array1"
            | "Array2"
            | "Array3"
            | "Array4"
            | "Array5"
            | "Array6"
            | "ArrayD"
    );
    if owned {
        return Some(name);
    }
    if matches!(name.as_str(), "Option" | "Vec" | "Box") {
        if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
            for arg in &args.args {
                if let syn::GenericArgument::Type(inner) = arg {
                    if let Some(n) = owned_array(inner) {
                        return Some(format!("{name}<{n}<..>>"));
                    }
                }
            }
        }
    }
    None
}

fn check_variant(v: &syn::Variant, a: &attr::Container, b: &Body<'_>, errors: &mut Errors) {
    let newtype = b.shape == Shape::Tuple && b.fields.len() == 1;
    match b.shape {
        Shape::Unit => {
            for (name, s) in [
                (names::TAG, &a.tag),
                (names::TAG_PATTERN, &a.tag_pattern),
                (names::SCHEMA, &a.schema),
            ] {
                if let Some(s) = s {
                    errors.push(
                        s.span,
                        format!(
                            "unit variants are written as plain strings; `{name}` is not allowed"
                        ),
                    );
                }
            }
        }
        _ => {
            if let Some(r) = &a.rename {
                errors.push(
                    r.span,
                    "`rename` is only allowed on unit variants (other variants are chosen by tag)",
                );
            }
            if !newtype && a.tag.is_none() {
                errors.push(
                    v.ident.span(),
                    format!(
                        "variant `{}` needs #[asdf(tag = \"...\")]: struct and tuple variants are chosen by tag on read",
                        v.ident
                    ),
                );
            }
        }
    }
}

/// `generics` with `bound` added to every type parameter that appears in a field selected
/// by `select`, and `T: Default` for every type in `default_tys` that mentions a type
/// parameter.
fn with_bounds(
    generics: &syn::Generics,
    fields: &[Field<'_>],
    select: impl Fn(&Field<'_>) -> bool,
    bound: &TokenStream,
    default_tys: &[&Type],
) -> syn::Generics {
    let mut g = generics.clone();
    let params: Vec<Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
    if params.is_empty() {
        return g;
    }
    let mentions = |ty: &Type, p: &Ident| token_mentions(ty.to_token_stream(), p);
    let mut preds: Vec<syn::WherePredicate> = Vec::new();
    for p in &params {
        if fields
            .iter()
            .filter(|f| select(f))
            .any(|f| mentions(f.ty, p))
        {
            preds.push(syn::parse_quote!(#p: #bound));
        }
    }
    for ty in default_tys {
        if params.iter().any(|p| mentions(ty, p)) {
            preds.push(syn::parse_quote!(#ty: ::std::default::Default));
        }
    }
    g.make_where_clause().predicates.extend(preds);
    g
}

fn token_mentions(ts: TokenStream, p: &Ident) -> bool {
    ts.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == *p,
        TokenTree::Group(g) => token_mentions(g.stream(), p),
        _ => false,
    })
}

fn lit(s: &str) -> syn::LitStr {
    syn::LitStr::new(s, Span::call_site())
}

/// The code generator.
struct Gen;

impl Gen {
    /// `Err(expected X, found <kind of node>)` at the current path.
    fn expected(&self, what: &str, node: &TokenStream) -> TokenStream {
        quote! {
            ::std::result::Result::Err(__asdf_ctx.error(
                ::asdf_core::convert::ConvertErrorKind::Expected {
                    expected: ::std::string::String::from(#what),
                    found: ::asdf_core::convert::describe(#node),
                },
            ))
        }
    }

    /// `ToAsdf` and `FromAsdf` bodies of a struct, and the extra items of each impl.
    fn strukt(
        &self,
        c: &attr::Container,
        body: &Body<'_>,
    ) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
        let bind: Vec<TokenStream> = body
            .fields
            .iter()
            .filter(|f| f.attrs.skip.is_none())
            .map(|f| {
                let (b, m) = (&f.binding, &f.member);
                quote!(let #b = &self.#m;)
            })
            .collect();
        let newtype = body.shape == Shape::Tuple && body.fields.len() == 1;
        let tag = c.tag.as_ref().map(|t| t.value.as_str());
        let schema = c.schema.as_ref().map(|s| s.value.as_str());
        let ctor = quote!(Self);
        let to_node = self.write_node(body, tag, schema);
        let to = quote! {
            #(#bind)*
            ::std::result::Result::Ok(#to_node)
        };
        let from_node = self.read_node(body, &ctor, tag.is_some(), schema);
        let tag_check = self.tag_check(c.pattern());
        let from = quote! {
            #tag_check
            ::std::result::Result::Ok(#from_node)
        };
        let (mut to_items, mut from_items) = (quote!(), quote!());
        match (tag, c.pattern()) {
            (Some(t), Some(p)) => {
                to_items = quote! {
                    fn tag() -> ::std::option::Option<&'static str> {
                        ::std::option::Option::Some(#t)
                    }
                };
                from_items = quote! {
                    fn accepts_tag(tag: ::std::option::Option<&str>) -> bool {
                        match tag {
                            ::std::option::Option::Some(tag) => ::asdf_core::convert::tag_matches(#p, tag),
                            ::std::option::Option::None => false,
                        }
                    }
                };
            }
            _ if newtype && body.fields[0].attrs.with.is_none() => {
                // transparent: the inner type's tag, absence and acceptance
                let f = &body.fields[0];
                let ty = f.ty;
                let b = &f.binding;
                let m = &f.member;
                to_items = quote! {
                    fn tag() -> ::std::option::Option<&'static str> {
                        <#ty as ::asdf_core::convert::ToAsdf>::tag()
                    }
                    fn is_absent(&self) -> bool {
                        let #b = &self.#m;
                        <#ty as ::asdf_core::convert::ToAsdf>::is_absent(#b)
                    }
                };
                from_items = quote! {
                    fn accepts_tag(tag: ::std::option::Option<&str>) -> bool {
                        <#ty as ::asdf_core::convert::FromAsdf>::accepts_tag(tag)
                    }
                    fn absent() -> ::std::option::Option<Self> {
                        <#ty as ::asdf_core::convert::FromAsdf>::absent().map(|#b| Self { #m: #b })
                    }
                };
            }
            _ => {}
        }
        (to, from, to_items, from_items)
    }

    /// Rejects a node whose tag `pattern` does not accept (no pattern: nothing to check).
    fn tag_check(&self, pattern: Option<&str>) -> TokenStream {
        match pattern {
            None => quote!(),
            Some(p) => quote! {
                if !<Self as ::asdf_core::convert::FromAsdf>::accepts_tag(__asdf_node.tag()) {
                    return ::std::result::Result::Err(__asdf_ctx.error(
                        ::asdf_core::convert::ConvertErrorKind::Tag {
                            expected: ::std::string::String::from(#p),
                            found: __asdf_node.tag().map(::std::string::String::from),
                        },
                    ));
                }
            },
        }
    }

    /// Wraps a conversion of `f` in `with_options` when the field sets array options.
    fn with_options(&self, f: &Field<'_>, call: TokenStream) -> TokenStream {
        let a = &f.attrs;
        if a.compression.is_none() && a.storage.is_none() {
            return call;
        }
        let compression = match a.compression.as_ref().map(|s| s.value.as_str()) {
            None => quote!(::std::option::Option::None),
            Some(name) => {
                let choice = match name {
                    "none" => quote!(::asdf_core::array::CompressionChoice::None),
                    "input" => quote!(::asdf_core::array::CompressionChoice::Input),
                    codec => {
                        let v = Ident::new(
                            match codec {
                                "zlib" => "Zlib",
                                "bzp2" => "Bzp2",
                                "lz4" => "Lz4",
                                "zstd" => "Zstd",
                                "lz4f" => "Lz4f",
                                _ => "Blsc",
                            },
                            Span::call_site(),
                        );
                        quote!(::asdf_core::array::CompressionChoice::Codec(::asdf_core::write::Compression::#v))
                    }
                };
                quote!(::std::option::Option::Some(#choice))
            }
        };
        let storage = match a.storage.as_ref().map(|s| s.value.as_str()) {
            None => quote!(::std::option::Option::None),
            Some(name) => {
                let v = Ident::new(
                    match name {
                        "inline" => "Inline",
                        "external" => "External",
                        _ => "Internal",
                    },
                    Span::call_site(),
                );
                quote!(::std::option::Option::Some(::asdf_core::array::Storage::#v))
            }
        };
        quote! {
            __asdf_ctx.with_options(
                {
                    let mut __asdf_opts = ::asdf_core::array::ArrayOptions::default();
                    __asdf_opts.compression = #compression;
                    __asdf_opts.storage = #storage;
                    __asdf_opts
                },
                |__asdf_ctx| #call,
            )
        }
    }

    /// `ToAsdf::to_asdf(binding, __asdf_ctx)` for field `f`, spanned at its type.
    fn write_call(&self, f: &Field<'_>) -> TokenStream {
        let (b, ty) = (&f.binding, f.ty);
        let call = match &f.attrs.with {
            Some((path, _)) => quote_spanned!(path.span()=> #path::to_asdf(#b, __asdf_ctx)),
            None => {
                quote_spanned!(ty.span()=> <#ty as ::asdf_core::convert::ToAsdf>::to_asdf(#b, __asdf_ctx))
            }
        };
        self.with_options(f, call)
    }

    /// An expression of type `Node` (using `?`) for the fields of `body`, each bound to
    /// its `binding` as a reference.
    fn write_node(&self, body: &Body<'_>, tag: Option<&str>, schema: Option<&str>) -> TokenStream {
        let newtype = body.shape == Shape::Tuple && body.fields.len() == 1;
        let value = |kind: TokenStream| match tag {
            Some(t) => quote!(::asdf_core::Node::tagged(#t, #kind)),
            None => quote!(::asdf_core::Node::new(#kind)),
        };
        let node = if newtype {
            let call = self.write_call(&body.fields[0]);
            match tag {
                None => quote!(#call?),
                Some(t) => quote! {{
                    let __asdf_inner = #call?;
                    let mut __asdf_data = ::std::clone::Clone::clone(__asdf_inner.data());
                    __asdf_data.tag = ::std::option::Option::Some(::std::convert::From::from(#t));
                    ::asdf_core::Node::from(__asdf_data)
                }},
            }
        } else if body.shape == Shape::Tuple {
            let items = body.fields.iter().enumerate().map(|(i, f)| {
                let call = self.write_call(f);
                quote!(__asdf_items.push(__asdf_ctx.index(#i, |__asdf_ctx| #call)?);)
            });
            let n = body.fields.len();
            let node = value(quote!(::asdf_core::Value::Seq(__asdf_items)));
            quote! {{
                let mut __asdf_items: ::std::vec::Vec<::asdf_core::Node> = ::std::vec::Vec::with_capacity(#n);
                #(#items)*
                #node
            }}
        } else {
            let mut stmts = Vec::new();
            let mut extra = quote!();
            for f in &body.fields {
                let a = &f.attrs;
                let (b, ty) = (&f.binding, f.ty);
                if a.skip.is_some() {
                    continue;
                }
                if a.extra.is_some() {
                    let b = Ident::new(&b.to_string(), ty.span());
                    extra = quote_spanned! {ty.span()=>
                        let __asdf_extra: &::asdf_core::convert::Extra = #b;
                        for (__asdf_k, __asdf_v) in __asdf_extra.0.iter() {
                            if !__asdf_entries.iter().any(|(__asdf_e, _)| __asdf_e == __asdf_k) {
                                __asdf_entries.push((
                                    ::std::clone::Clone::clone(__asdf_k),
                                    ::std::clone::Clone::clone(__asdf_v),
                                ));
                            }
                        }
                    };
                    continue;
                }
                let call = self.write_call(f);
                let absent = if a.with.is_some() {
                    quote!(false)
                } else {
                    quote_spanned!(ty.span()=> <#ty as ::asdf_core::convert::ToAsdf>::is_absent(#b))
                };
                if a.flatten.is_some() {
                    let msg = format!(
                        "a mapping from flattened field `{}`",
                        f.member.to_token_stream()
                    );
                    let err = self.expected(&msg, &quote!(&__asdf_v));
                    stmts.push(quote! {
                        if !#absent {
                            let __asdf_v = #call?;
                            match __asdf_v.as_map() {
                                ::std::option::Option::Some(__asdf_m) => {
                                    __asdf_entries.extend(__asdf_m.iter().cloned());
                                }
                                ::std::option::Option::None => {
                                    if !__asdf_v.is_null() {
                                        return #err;
                                    }
                                }
                            }
                        }
                    });
                    continue;
                }
                let key = lit(&f.key);
                let push = quote! {
                    let __asdf_v = __asdf_ctx.key(#key, |__asdf_ctx| #call)?;
                    __asdf_entries.push((::asdf_core::Node::str(#key), __asdf_v));
                };
                if a.keep_null.is_some() || a.with.is_some() {
                    stmts.push(quote!({ #push }));
                } else {
                    stmts.push(quote! {
                        if !#absent {
                            #push
                        }
                    });
                }
            }
            let node = value(quote!(::asdf_core::Value::Map(__asdf_entries)));
            let n = body.fields.len();
            quote! {{
                let mut __asdf_entries: ::std::vec::Vec<(::asdf_core::Node, ::asdf_core::Node)> =
                    ::std::vec::Vec::with_capacity(#n);
                #(#stmts)*
                #extra
                #node
            }}
        };
        match schema {
            None => node,
            Some(uri) => quote! {{
                let __asdf_node = #node;
                ::asdf_core::convert::validate_against(#uri, &__asdf_node, __asdf_ctx.tree_path())?;
                __asdf_node
            }},
        }
    }

    /// `FromAsdf::from_asdf(node, __asdf_ctx)` for field `f`, spanned at its type.
    fn read_call(&self, f: &Field<'_>, node: TokenStream) -> TokenStream {
        let ty = f.ty;
        match &f.attrs.with {
            Some((path, _)) => {
                quote_spanned!(path.span()=> #path::from_asdf(#node, __asdf_ctx))
            }
            None => {
                quote_spanned!(ty.span()=> <#ty as ::asdf_core::convert::FromAsdf>::from_asdf(#node, __asdf_ctx))
            }
        }
    }

    /// The value of a field that is skipped or whose key is missing.
    fn missing(&self, f: &Field<'_>) -> TokenStream {
        let ty = f.ty;
        match &f.attrs.default {
            Some((DefaultAttr::Path(p), _)) => quote_spanned!(p.span()=> #p()),
            Some((DefaultAttr::Trait, _)) => {
                quote_spanned!(ty.span()=> <#ty as ::std::default::Default>::default())
            }
            None if f.attrs.skip.is_some() => {
                quote_spanned!(ty.span()=> <#ty as ::std::default::Default>::default())
            }
            None if f.attrs.with.is_some() => {
                let key = lit(&f.key);
                quote! {
                    return ::std::result::Result::Err(__asdf_ctx.error(
                        ::asdf_core::convert::ConvertErrorKind::MissingKey(
                            ::std::string::String::from(#key),
                        ),
                    ))
                }
            }
            None => {
                let key = lit(&f.key);
                quote_spanned! {ty.span()=>
                    match <#ty as ::asdf_core::convert::FromAsdf>::absent() {
                        ::std::option::Option::Some(__asdf_a) => __asdf_a,
                        ::std::option::Option::None => {
                            return ::std::result::Result::Err(__asdf_ctx.error(
                                ::asdf_core::convert::ConvertErrorKind::MissingKey(
                                    ::std::string::String::from(#key),
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }

    /// An expression of type `Self` (using `?` and `return`) built from `__asdf_node`,
    /// whose tag was checked already. `tagged`: the node carries the type's own tag (a
    /// newtype strips it before reading the inner value).
    fn read_node(
        &self,
        body: &Body<'_>,
        ctor: &TokenStream,
        tagged: bool,
        schema: Option<&str>,
    ) -> TokenStream {
        let check = match schema {
            None => quote!(),
            Some(uri) => quote! {
                ::asdf_core::convert::validate_against(#uri, __asdf_node, __asdf_ctx.tree_path())?;
            },
        };
        let newtype = body.shape == Shape::Tuple && body.fields.len() == 1;
        let inner = if newtype {
            let f = &body.fields[0];
            let (b, m) = (&f.binding, &f.member);
            if tagged {
                // A tagged scalar read from a file is a string (YAML resolves only untagged
                // plain scalars); if the inner type does not take the string, the plain
                // text is resolved as if untagged (`!<tag> 1.5` is the float 1.5).
                let call = self.read_call(f, quote!(&__asdf_untagged));
                let retry = self.read_call(f, quote!(&::asdf_core::Node::from(__asdf_data)));
                quote! {
                    let mut __asdf_data = ::std::clone::Clone::clone(__asdf_node.data());
                    __asdf_data.tag = ::std::option::Option::None;
                    let __asdf_untagged = ::asdf_core::Node::from(__asdf_data);
                    let #b = match #call {
                        ::std::result::Result::Ok(__asdf_v) => __asdf_v,
                        ::std::result::Result::Err(__asdf_e) => match (__asdf_untagged.value(), __asdf_untagged.style()) {
                            (
                                ::asdf_core::Value::Str(__asdf_s),
                                ::asdf_core::yaml::Style::Scalar(::asdf_core::yaml::ScalarStyle::Plain),
                            ) => {
                                let mut __asdf_data = ::std::clone::Clone::clone(__asdf_untagged.data());
                                __asdf_data.value = ::asdf_core::yaml::resolve_plain(__asdf_s);
                                #retry.map_err(|_| __asdf_e)?
                            }
                            _ => return ::std::result::Result::Err(__asdf_e),
                        },
                    };
                    #ctor { #m: #b }
                }
            } else {
                let call = self.read_call(f, quote!(__asdf_node));
                quote! {
                    let #b = #call?;
                    #ctor { #m: #b }
                }
            }
        } else if body.shape == Shape::Tuple {
            let n = body.fields.len();
            let err = self.expected(&format!("a sequence of {n} items"), &quote!(__asdf_node));
            let mut lets = Vec::new();
            let mut inits = Vec::new();
            for (i, f) in body.fields.iter().enumerate() {
                let (b, m) = (&f.binding, &f.member);
                let call = self.read_call(f, quote!(&__asdf_items[#i]));
                lets.push(quote!(let #b = __asdf_ctx.index(#i, |__asdf_ctx| #call)?;));
                inits.push(quote!(#m: #b));
            }
            quote! {
                let __asdf_items = match __asdf_node.as_seq() {
                    ::std::option::Option::Some(__asdf_s) => __asdf_s,
                    ::std::option::Option::None => return #err,
                };
                if __asdf_items.len() != #n {
                    return ::std::result::Result::Err(__asdf_ctx.error(
                        ::asdf_core::convert::ConvertErrorKind::Length {
                            expected: #n,
                            found: __asdf_items.len(),
                        },
                    ));
                }
                #(#lets)*
                #ctor { #(#inits),* }
            }
        } else {
            let err = self.expected("a mapping", &quote!(__asdf_node));
            let rest = body.has_rest();
            let mut slots = Vec::new();
            let mut arms = Vec::new();
            let mut lets = Vec::new();
            let mut inits = Vec::new();
            let mut flat_node = quote!();
            for f in &body.fields {
                let a = &f.attrs;
                let (b, m, ty) = (&f.binding, &f.member, f.ty);
                inits.push(quote!(#m: #b));
                if a.skip.is_some() {
                    let v = self.missing(f);
                    lets.push(quote!(let #b = #v;));
                } else if a.extra.is_some() {
                    lets.push(quote_spanned! {ty.span()=>
                        let #b: #ty = ::asdf_core::convert::Extra(__asdf_rest);
                    });
                } else if a.flatten.is_some() {
                    flat_node = quote! {
                        let __asdf_flat = ::asdf_core::Node::new(::asdf_core::Value::Map(__asdf_rest));
                    };
                    // nothing left for the field: its absent value if it has one (`None`)
                    let call = self.read_call(f, quote!(&__asdf_flat));
                    let absent = if a.with.is_some() {
                        quote!(::std::option::Option::None)
                    } else {
                        quote_spanned!(ty.span()=> <#ty as ::asdf_core::convert::FromAsdf>::absent())
                    };
                    lets.push(quote! {
                        let #b = if __asdf_flat.as_map().is_some_and(|__asdf_m| __asdf_m.is_empty()) {
                            match #absent {
                                ::std::option::Option::Some(__asdf_a) => __asdf_a,
                                ::std::option::Option::None => #call?,
                            }
                        } else {
                            #call?
                        };
                    });
                } else {
                    let slot = format_ident!("__asdf_slot_{}", b);
                    let key = lit(&f.key);
                    slots.push(quote! {
                        let mut #slot: ::std::option::Option<&::asdf_core::Node> = ::std::option::Option::None;
                    });
                    arms.push(quote! {
                        ::std::option::Option::Some(#key) => #slot = ::std::option::Option::Some(__asdf_v),
                    });
                    let call = self.read_call(f, quote!(__asdf_v));
                    let missing = self.missing(f);
                    lets.push(quote! {
                        let #b = match #slot {
                            ::std::option::Option::Some(__asdf_v) => {
                                __asdf_ctx.key(#key, |__asdf_ctx| #call)?
                            }
                            ::std::option::Option::None => #missing,
                        };
                    });
                }
            }
            let other = if rest {
                quote! {
                    _ => __asdf_rest.push((
                        ::std::clone::Clone::clone(__asdf_k),
                        ::std::clone::Clone::clone(__asdf_v),
                    )),
                }
            } else {
                quote!(_ => {})
            };
            let rest_decl = if rest {
                quote! {
                    let mut __asdf_rest: ::std::vec::Vec<(::asdf_core::Node, ::asdf_core::Node)> =
                        ::std::vec::Vec::new();
                }
            } else {
                quote!()
            };
            let scan = if arms.is_empty() && !rest {
                quote!(let _ = __asdf_map;)
            } else {
                quote! {
                    for (__asdf_k, __asdf_v) in __asdf_map.iter() {
                        match __asdf_k.as_str() {
                            #(#arms)*
                            #other
                        }
                    }
                }
            };
            quote! {
                let __asdf_map = match __asdf_node.as_map() {
                    ::std::option::Option::Some(__asdf_m) => __asdf_m,
                    ::std::option::Option::None => return #err,
                };
                #(#slots)*
                #rest_decl
                #scan
                #flat_node
                #(#lets)*
                #ctor { #(#inits),* }
            }
        };
        quote! {{
            #check
            #inner
        }}
    }

    /// `ToAsdf` and `FromAsdf` bodies of an enum, and its `accepts_tag`.
    fn enumeration(
        &self,
        ident: &Ident,
        c: &attr::Container,
        variants: &[Variant<'_>],
    ) -> (TokenStream, TokenStream, TokenStream) {
        let schema = c.schema.as_ref().map(|s| s.value.as_str());
        // write
        let arms = variants.iter().map(|v| {
            let vi = v.ident;
            let binds = v.body.fields.iter().map(|f| {
                let (b, m) = (&f.binding, &f.member);
                if f.attrs.skip.is_some() {
                    quote!(#m: _)
                } else {
                    quote!(#m: #b)
                }
            });
            let node = match v.body.shape {
                Shape::Unit => {
                    let name = lit(&v.unit_name());
                    quote!(::asdf_core::Node::str(#name))
                }
                _ => self.write_node(
                    &v.body,
                    v.attrs.tag.as_ref().map(|t| t.value.as_str()),
                    v.attrs.schema.as_ref().map(|s| s.value.as_str()),
                ),
            };
            quote!(Self::#vi { #(#binds),* } => #node,)
        });
        let to_node = quote! {
            match self {
                #(#arms)*
            }
        };
        let to = match schema {
            None => quote!(::std::result::Result::Ok(#to_node)),
            Some(uri) => quote! {
                let __asdf_node = #to_node;
                ::asdf_core::convert::validate_against(#uri, &__asdf_node, __asdf_ctx.tree_path())?;
                ::std::result::Result::Ok(__asdf_node)
            },
        };

        // read
        let units: Vec<TokenStream> = variants
            .iter()
            .filter(|v| v.body.shape == Shape::Unit)
            .map(|v| {
                let vi = v.ident;
                let name = lit(&v.unit_name());
                quote!(::std::option::Option::Some(#name) => return ::std::result::Result::Ok(Self::#vi),)
            })
            .collect();
        let unit_check = if units.is_empty() {
            quote!()
        } else {
            quote! {
                if __asdf_node.tag().is_none() {
                    match __asdf_node.as_str() {
                        #(#units)*
                        _ => {}
                    }
                }
            }
        };
        let mut accepts = Vec::new();
        if !units.is_empty() {
            accepts.push(quote!(tag.is_none()));
        }
        let mut tries = Vec::new();
        let mut fallible = false;
        for v in variants.iter().filter(|v| v.body.shape != Shape::Unit) {
            let vi = v.ident;
            let ctor = quote!(Self::#vi);
            let vschema = v.attrs.schema.as_ref().map(|s| s.value.as_str());
            match v.attrs.pattern() {
                Some(p) => {
                    accepts.push(quote! {
                        tag.is_some_and(|tag| ::asdf_core::convert::tag_matches(#p, tag))
                    });
                    let node = self.read_node(&v.body, &ctor, true, vschema);
                    tries.push(quote! {
                        if __asdf_node.tag().is_some_and(|tag| ::asdf_core::convert::tag_matches(#p, tag)) {
                            return ::std::result::Result::Ok(#node);
                        }
                    });
                }
                None => {
                    // A newtype variant chosen by its inner type's tag. It is final when
                    // the node is tagged and the inner type reads only tagged nodes;
                    // otherwise a failed conversion goes on to the next variant.
                    let ty = v.body.fields[0].ty;
                    let accept = quote_spanned!(ty.span()=> <#ty as ::asdf_core::convert::FromAsdf>::accepts_tag);
                    accepts.push(quote!(#accept(tag)));
                    let node = self.read_node(&v.body, &ctor, false, vschema);
                    fallible = true;
                    tries.push(quote! {
                        if #accept(__asdf_node.tag()) {
                            let __asdf_r = (|| -> ::std::result::Result<Self, ::asdf_core::convert::ConvertError> {
                                ::std::result::Result::Ok(#node)
                            })();
                            match __asdf_r {
                                ::std::result::Result::Ok(__asdf_v) => return ::std::result::Result::Ok(__asdf_v),
                                ::std::result::Result::Err(__asdf_e) => {
                                    if __asdf_node.tag().is_some() && !#accept(::std::option::Option::None) {
                                        return ::std::result::Result::Err(__asdf_e);
                                    }
                                    if __asdf_first.is_none() {
                                        __asdf_first = ::std::option::Option::Some(__asdf_e);
                                    }
                                }
                            }
                        }
                    });
                }
            }
        }
        let ty_name = lit(&ident.to_string());
        let check = match schema {
            None => quote!(),
            Some(uri) => quote! {
                ::asdf_core::convert::validate_against(#uri, __asdf_node, __asdf_ctx.tree_path())?;
            },
        };
        let (first_decl, first_ret) = if fallible {
            (
                quote! {
                    let mut __asdf_first: ::std::option::Option<::asdf_core::convert::ConvertError> =
                        ::std::option::Option::None;
                },
                quote! {
                    if let ::std::option::Option::Some(__asdf_e) = __asdf_first {
                        return ::std::result::Result::Err(__asdf_e);
                    }
                },
            )
        } else {
            (quote!(), quote!())
        };
        let from = quote! {
            #check
            #unit_check
            #first_decl
            #(#tries)*
            #first_ret
            ::std::result::Result::Err(__asdf_ctx.error(
                ::asdf_core::convert::ConvertErrorKind::NoVariant {
                    ty: #ty_name,
                    found: ::asdf_core::convert::describe(__asdf_node),
                },
            ))
        };
        let accepts = if accepts.is_empty() {
            quote!(false)
        } else {
            quote!(#(#accepts)||*)
        };
        let accepts_fn = quote! {
            fn accepts_tag(tag: ::std::option::Option<&str>) -> bool {
                #accepts
            }
        };
        (to, from, accepts_fn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(src: &str) -> TokenStream {
        let input: DeriveInput = syn::parse_str(src).unwrap();
        derive(&input).unwrap()
    }

    /// Every path to the runtime crate or std is absolute, so user code naming its own
    /// `asdf_core`, `std` or `Option` cannot change what the generated code means.
    fn assert_absolute(ts: TokenStream) {
        let tokens: Vec<TokenTree> = ts.into_iter().collect();
        for (i, t) in tokens.iter().enumerate() {
            match t {
                TokenTree::Ident(id) if id == "asdf_core" || id == "std" => {
                    let before: String = tokens[i.saturating_sub(2)..i]
                        .iter()
                        .map(|t| t.to_string())
                        .collect();
                    assert_eq!(before, "::", "`{id}` without a leading `::`");
                }
                TokenTree::Group(g) => assert_absolute(g.stream()),
                _ => {}
            }
        }
    }

    #[test]
    fn generated_code_sits_in_an_anonymous_const_with_absolute_paths() {
        for src in [
            r#"#[asdf(tag = "t:a-1.0.0", tag_pattern = "t:a-1.*", schema = "s:a")]
               struct A<T> { #[asdf(rename = "x", compression = "zlib")] a: T,
                             #[asdf(skip)] b: u8, #[asdf(default)] c: Option<T>,
                             #[asdf(extra)] rest: Extra }"#,
            r#"struct B(u8, #[asdf(storage = "inline")] Vec<f64>);"#,
            r#"#[asdf(tag = "t:c-1.0.0")] struct C(f64);"#,
            r#"enum D { A, #[asdf(tag = "t:b-1.0.0")] B { x: u8 }, C(Inner), #[asdf(tag = "t:d-1.0.0")] D(u8, u8) }"#,
        ] {
            let out = expand(src);
            let text = out.to_string();
            assert!(text.starts_with("# [doc (hidden)]"), "{text}");
            assert!(text.contains("const _ : () = {"), "{text}");
            assert_absolute(out);
        }
    }

    #[test]
    fn bounds_go_on_used_type_parameters_only() {
        let text = expand(
            r#"struct P<T, U, V> { a: Vec<T>, #[asdf(skip)] b: U, #[asdf(with = "m")] c: V }"#,
        )
        .to_string();
        assert!(
            text.contains("T : :: asdf_core :: convert :: ToAsdf"),
            "{text}"
        );
        assert!(
            text.contains("T : :: asdf_core :: convert :: FromAsdf"),
            "{text}"
        );
        assert!(!text.contains("U : :: asdf_core"), "{text}");
        assert!(!text.contains("V : :: asdf_core"), "{text}");
        assert!(text.contains("U : :: std :: default :: Default"), "{text}");
    }
}
