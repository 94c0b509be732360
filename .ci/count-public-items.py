#!/usr/bin/env python3
"""Count the public items of a library crate from rustdoc's JSON output.

The JSON comes from rustdoc (it needs nightly, or RUSTC_BOOTSTRAP=1 on stable), e.g.

    cargo +nightly rustdoc -p asdfrs-core --lib --locked -- \
        -Z unstable-options --output-format json
    python3 .ci/count-public-items.py target/doc/asdf_core.json

Add `--document-hidden-items` after `--output-format json` to also count items marked
`#[doc(hidden)]` (rustdoc drops them otherwise); `--features F` before `--` to count what a
feature adds.

What is counted: every item a user of the crate can name, walked from the crate root through
public modules and `pub use` re-exports (glob ones too), each item once however many paths
reach it: modules, functions, structs, enums, unions, traits, type aliases, constants,
statics, macros; the public methods and associated constants of inherent `impl` blocks; the
methods of public traits. Fields, enum variants and trait implementations are not counted.
Items re-exported from another crate count once each, as "external". Prints one line per
kind and the total; with `--list`, first every counted item by one path that reaches it.
"""

import json
import sys
from collections import Counter

KINDS = {
    "module",
    "function",
    "struct",
    "enum",
    "union",
    "trait",
    "trait_alias",
    "type_alias",
    "constant",
    "static",
    "macro",
    "proc_macro",
}


def kind_of(item):
    inner = item.get("inner") or {}
    return next(iter(inner), None) if isinstance(inner, dict) else inner


def is_public(item):
    return item.get("visibility") == "public"


def main(path, listing):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    index = doc["index"]
    seen = set()
    counts = Counter()
    external = set()
    names = []

    def get(item_id):
        return index.get(str(item_id))

    def visit(item_id, prefix=""):
        item = get(item_id)
        if item is None:
            external.add(item_id)
            return
        kind = kind_of(item)
        if kind == "use":
            use = item["inner"]["use"]
            target = use.get("id")
            if target is None:
                external.add(use.get("source"))
                return
            if use.get("is_glob"):
                module = get(target)
                if module is None:
                    external.add(target)
                    return
                # a glob re-exports a module's items (or an enum's variants)
                for child in (module["inner"].get("module") or {}).get("items", []):
                    visit(child, prefix)
                return
            visit(target, prefix)
            return
        if item_id in seen:
            return
        seen.add(item_id)
        if kind not in KINDS:
            return
        counts[kind] += 1
        here = f"{prefix}::{item.get('name')}" if prefix else (item.get("name") or "")
        names.append(f"{kind} {here}")
        inner = item["inner"][kind]
        if kind == "module":
            for child in inner.get("items", []):
                if is_public(get(child) or {"visibility": "public"}):
                    visit(child, here)
        elif kind in ("struct", "enum", "union"):
            for impl_id in inner.get("impls", []):
                impl = (get(impl_id) or {}).get("inner", {}).get("impl")
                if not impl or impl.get("trait") is not None:
                    continue
                if impl.get("is_synthetic") or impl.get("blanket_impl") is not None:
                    continue
                for member_id in impl.get("items", []):
                    member = get(member_id)
                    if member is None or not is_public(member) or member_id in seen:
                        continue
                    seen.add(member_id)
                    mkind = kind_of(member)
                    names.append(f"{mkind} {here}::{member.get('name')}")
                    if mkind == "function":
                        counts["method"] += 1
                    elif mkind in ("assoc_const", "constant"):
                        counts["assoc_const"] += 1
        elif kind == "trait":
            for member_id in inner.get("items", []):
                member = get(member_id)
                if member is not None and kind_of(member) == "function" and member_id not in seen:
                    seen.add(member_id)
                    names.append(f"trait_method {here}::{member.get('name')}")
                    counts["trait_method"] += 1

    visit(doc["root"])
    if listing:
        print("\n".join(names))
    counts["external"] = len(external)
    width = max(len(k) for k in counts)
    for kind in sorted(counts):
        print(f"{kind:<{width}} {counts[kind]}")
    functions = counts["function"] + counts["method"]
    print(f"{'functions+methods':<{width}} {functions}")
    print(f"{'total':<{width}} {sum(counts.values())}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--list"]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], "--list" in sys.argv[1:])
