use asdf_core::{AsdfType, Node};

struct NotAsdf;

#[derive(AsdfType)]
struct A {
    a: NotAsdf,
    #[asdf(extra)]
    rest: Node,
}

fn main() {}
