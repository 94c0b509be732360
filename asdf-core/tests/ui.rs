//! Compile-fail tests of `#[derive(AsdfType)]`: each `ui/*.rs` must fail to build with the
//! errors in its `.stderr` (regenerate with `TRYBUILD=overwrite`, then read them).

#[test]
fn derive_misuse_is_a_compile_error() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
