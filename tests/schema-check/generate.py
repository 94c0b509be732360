#!/usr/bin/env python3
"""Python asdf's verdicts on the schema-check corpus (`tests/schema-check/corpus/*.yaml`).

    .venv-oracle/bin/python tests/schema-check/generate.py           # writes expected.json
    .venv-oracle/bin/python tests/schema-check/generate.py --check   # re-derives, compares

Run from anywhere with the oracle's python (asdf 6.0.0, pinned in tests/oracle-requirements.txt).
`expected.json` is what the Rust tests compare `check_schemas` with
(`asdf-core/tests/it/testing_helpers.rs`, `asdf-cli/tests/it/check_schemas.rs`); `--check` (run by
`.ci/run`) fails when a fresh derivation differs from the committed file.

Every corpus file's schema is registered in python asdf's resource manager under its `id`
(so `$ref`s between corpus files resolve), then, per file:

- schema verdict: "valid" when the YAML parses, `asdf.schema.check_schema` accepts it
  (its `$schema` metaschema, defaults validated against their sub-schemas) and
  `asdf.schema.load_schema(id, resolve_references=True)` resolves every `$ref`;
  otherwise "invalid";
- example verdicts (only for a valid schema; `null` otherwise): each item of the top-level
  `examples` list, `[description, text]` or `[description, "asdf-standard-X.Y.Z", text]`
  (the pytest-asdf convention), is read as an ASDF tree
  (`%TAG ! tag:stsci.edu:asdf/`, `asdf.yamlutil.load_tree`) and validated against the
  schema and, by tag, against the schemas of that standard version, as on read:
  `asdf.schema.validate(tree, ctx, schema=S, reading=True)` and
  `asdf.schema.validate(tree, ctx, reading=True)` with `ctx = asdf.AsdfFile(version=V)`,
  warnings as errors. "valid", or "invalid" on a `ValidationError` or a YAML error. Any
  other exception is a broken corpus case and fails the script.
"""

import io
import json
import sys
import warnings
from pathlib import Path

import asdf
import asdf.schema
import asdf.yamlutil
import yaml
from asdf.exceptions import ValidationError

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
EXPECTED = HERE / "expected.json"
HEADER = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---\n"
DEFAULT_STANDARD = "1.6.0"


class Broken(Exception):
    """A corpus case python asdf neither accepts nor rejects cleanly."""


def corpus():
    """[(file name, text, parsed schema or None)] in name order."""
    out = []
    for path in sorted(CORPUS.glob("*.yaml")):
        text = path.read_text()
        try:
            parsed = yaml.safe_load(text)
        except yaml.YAMLError:
            parsed = None
        out.append((path.name, text, parsed if isinstance(parsed, dict) else None))
    return out


def schema_verdict(sid, schema):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asdf.schema.check_schema(schema)
            asdf.schema.load_schema(sid, resolve_references=True)
    except Exception as e:  # noqa: BLE001 (any failure is a rejected schema)
        return "invalid", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
    return "valid", ""


def example_verdict(sid, example):
    items = list(example)
    if len(items) == 1:
        text, version = items[0], None
    elif len(items) == 2:
        text, version = items[1], None
    else:
        text, version = items[2], items[1]
    standard = DEFAULT_STANDARD if version is None else version.lower().split("asdf-standard-")[1]
    try:
        tree = asdf.yamlutil.load_tree(io.BytesIO((HEADER + text.strip() + "\n...\n").encode()))
    except yaml.YAMLError as e:
        return "invalid", f"yaml: {str(e).splitlines()[0]}"
    ctx = asdf.AsdfFile(version=standard)
    schema = asdf.schema.load_schema(sid)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asdf.schema.validate(tree, ctx=ctx, schema=schema, reading=True)
            asdf.schema.validate(tree, ctx=ctx, reading=True)
    except ValidationError as e:
        return "invalid", str(e).splitlines()[0][:200]
    except Exception as e:
        raise Broken(f"{sid}: example {items[0]!r}: {type(e).__name__}: {e}") from e
    return "valid", ""


def derive(verbose=False):
    files = corpus()
    verdicts = {}
    with asdf.config_context() as cfg:
        cfg.add_resource_mapping(
            {parsed["id"]: text.encode() for _, text, parsed in files if parsed and "id" in parsed}
        )
        for name, _text, parsed in files:
            if parsed is None:
                verdicts[name] = {"schema": "invalid", "examples": None}
                if verbose:
                    print(f"{name}: invalid (yaml)")
                continue
            sid = parsed["id"]
            verdict, why = schema_verdict(sid, parsed)
            if verbose:
                print(f"{name}: {verdict} {why}")
            examples = None
            if verdict == "valid":
                examples = []
                for example in parsed.get("examples") or []:
                    v, why = example_verdict(sid, example)
                    if verbose:
                        print(f"    {example[0]!r}: {v} {why}")
                    examples.append(v)
            verdicts[name] = {"schema": verdict, "examples": examples}
    return {
        "generator": "tests/schema-check/generate.py",
        "asdf": asdf.__version__,
        "verdicts": verdicts,
    }


def main():
    check = "--check" in sys.argv[1:]
    fresh = derive(verbose="-v" in sys.argv[1:])
    text = json.dumps(fresh, indent=2, sort_keys=True) + "\n"
    if not check:
        EXPECTED.write_text(text)
        print(f"wrote {EXPECTED.relative_to(HERE.parents[1])}: {len(fresh['verdicts'])} schema files")
        return 0
    committed = EXPECTED.read_text() if EXPECTED.exists() else ""
    if committed != text:
        print("FAIL tests/schema-check/expected.json differs from python asdf's verdicts now:")
        old = json.loads(committed)["verdicts"] if committed else {}
        for name in sorted(set(old) | set(fresh["verdicts"])):
            if old.get(name) != fresh["verdicts"].get(name):
                print(f"     {name}: committed {old.get(name)}, python {fresh['verdicts'].get(name)}")
        return 1
    n = sum(len(v["examples"] or []) for v in fresh["verdicts"].values())
    print(f"ok   schema-check corpus: {len(fresh['verdicts'])} schema files, {n} examples agree with asdf {asdf.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
