use asdf_core::AsdfType;

#[derive(AsdfType)]
#[asdf(tag = "asdf://example.org/tags/a-1.0.0", tag_pattern = "asdf://example.org/tags/a-2.*")]
struct A {}

#[derive(AsdfType)]
#[asdf(tag_pattern = "asdf://example.org/tags/b-1.*")]
struct B {}

#[derive(AsdfType)]
#[asdf(tag = "asdf://example.org/tags/c-1.0.0", tag_pattern = "asdf://example.org/*/c-1.0.0")]
struct C {}

#[derive(AsdfType)]
#[asdf(tag = "asdf://example.org/tags/d-1.*")]
struct D {}

#[derive(AsdfType)]
#[asdf(tag = "", schema = "")]
struct F {}

fn main() {}
