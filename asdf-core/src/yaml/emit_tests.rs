use super::*;
use crate::yaml::{parse, YamlLimits};

fn back(text: &str) -> Node {
    parse(text.as_bytes(), &YamlLimits::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .root
}

#[test]
fn smoke() {
    let root = Node::new(Value::Map(vec![(Node::str("a"), Node::str("yes"))]));
    let t = emit(&root, &EmitOptions::default()).unwrap();
    assert_eq!(back(&t), root);
}
