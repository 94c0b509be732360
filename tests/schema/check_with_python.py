#!/usr/bin/env python3
"""Check the schema test cases and the bundled schemas against python asdf (the oracle).

Run from the repository root with the oracle's python (asdf 6.0.0, asdf-standard 1.x); it sets
ASDF_UNSTABLE_CORE_SCHEMAS=1 itself, so that python asdf knows standard 1.7.0:

    .venv-oracle/bin/python tests/schema/check_with_python.py   # from the repository root

Exit status 0 when every check agrees, 1 otherwise; a summary is printed either way
(`-v` also prints each case with python's first error message).

Test files (`tests/schema/*.yaml`, one per bundled schema, named by the last part of its id, plus `keywords-*.yaml` for the ASDF
keywords) hold one mapping:

    schema: <schema id, or an inline schema mapping>
    standard: "1.6.0"        # the ASDF Standard version whose tag map applies
    valid: [instances]
    invalid: [instances]

An instance is VALID when it satisfies `schema` and every tagged node in it satisfies the
schema its tag has under `standard` (tags the standard does not define are not checked).
That is how python asdf validates a file: `asdf.schema.validate(instance, ctx, schema=S)` for
the named schema plus `asdf.schema.validate(instance, ctx)` for the tag-driven walk, with
`ctx = asdf.AsdfFile(version=standard)`. Only `ValidationError` counts as "invalid"; any other
exception is a broken case and fails the check.

Checks:
1. official: every `valid` case passes and every `invalid` case fails with the OFFICIAL schemas
   (those shipped in asdf_standard) -- this is the ground truth of the cases;
2. ours: the same verdicts with OUR schemas from `asdf-core/schemas/` registered in their place;
3. metaschema: each of our schemas passes `asdf.schema.check_schema` (but the two that need a
   schema the standard does not hold, which fail as the official ones do);
4. structure: each of our schemas equals the official one once titles, descriptions, examples
   and comments are dropped, except for the complex-number pattern (written differently and
   compared by matching many strings);
5. tag map: `asdf-core/schemas/versions.yaml` equals, for each standard version, which tags of the
   bundled schemas python asdf's extension manager handles and with which schema.
"""

import copy
import os
import random
import re
import sys
import warnings
from pathlib import Path

# ASDF Standard 1.7.0 (ndarray-1.2.0, integer-1.2.0) is in asdf_standard's "unstable"
# resources, which python asdf registers only with this set before it is imported.
os.environ["ASDF_UNSTABLE_CORE_SCHEMAS"] = "1"
warnings.filterwarnings("ignore", message=".*ASDF_UNSTABLE_CORE_SCHEMAS.*")

import asdf  # noqa: E402 (after the environment variable)
import asdf.schema
import asdf.yamlutil
import yaml
from asdf.exceptions import ValidationError

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "schema"
SCHEMAS = ROOT / "asdf-core" / "schemas"
STSCI = "http://stsci.edu/schemas/"
CORE = STSCI + "asdf/core/"
VERBOSE = "-v" in sys.argv[1:]


def load_yaml(path):
    # AsdfLoader keeps tags (TaggedDict/TaggedList/TaggedString), as python asdf reads a tree.
    with open(path, "rb") as f:
        return yaml.load(f, Loader=asdf.yamlutil.AsdfLoader)  # noqa: S506 (SafeLoader subclass)


def our_schema_texts():
    """{id: text} for every YAML file under asdf-core/schemas/stsci.edu."""
    out = {}
    for path in sorted((SCHEMAS / "stsci.edu").rglob("*.yaml")):
        rel = path.relative_to(SCHEMAS / "stsci.edu").with_suffix("")
        out[STSCI + rel.as_posix()] = path.read_text()
    return out


def clear_schema_caches():
    asdf.schema._load_schema_cached.cache_clear()
    asdf.schema._load_schema.cache_clear()


def verdict(instance, schema, standard):
    """'valid', 'invalid: <message>' or 'error: <exception>'."""
    ctx = asdf.AsdfFile(version=standard)
    if isinstance(schema, str):
        schema = asdf.schema.load_schema(schema)
    else:
        schema = copy.deepcopy(schema)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asdf.schema.validate(instance, ctx=ctx, schema=schema)
            asdf.schema.validate(instance, ctx=ctx)
    except ValidationError as e:
        return "invalid: " + str(e).split("\n")[0][:160]
    except Exception as e:  # noqa: BLE001 (a broken case is reported, not raised)
        return f"error: {type(e).__name__}: {e}"[:200]
    return "valid"


def run_cases(label):
    """Checks every case file; returns (cases run, list of failures)."""
    failures, count = [], 0
    for path in sorted(CASES.glob("*.yaml")):
        doc = load_yaml(path)
        schema, standard = doc["schema"], doc["standard"]
        for expected in ("valid", "invalid"):
            cases = doc.get(expected) or []
            for i, instance in enumerate(cases):
                count += 1
                got = verdict(instance, schema, standard)
                ok = got.split(":")[0] == expected
                if VERBOSE:
                    print(f"  [{label}] {path.name} {expected}[{i}]: {got}")
                if not ok:
                    failures.append(f"[{label}] {path.name} {expected}[{i}]: expected {expected}, got {got}")
    return count, failures


def check_counts():
    """Each bundled schema has a case file with >= 3 valid and >= 4 invalid cases."""
    problems = []
    for sid in our_schema_texts():
        name = sid.rsplit("/", 1)[-1]
        path = CASES / f"{name}.yaml"
        if not path.exists():
            problems.append(f"no case file for {sid}")
            continue
        doc = load_yaml(path)
        if doc.get("schema") != sid:
            problems.append(f"{path.name}: schema is {doc.get('schema')!r}, expected {sid}")
        if len(doc.get("valid") or []) < 3 or len(doc.get("invalid") or []) < 4:
            problems.append(f"{path.name}: fewer than 3 valid or 4 invalid cases")
    return problems


DOC_KEYS = ("title", "description", "examples")


def strip_docs(node):
    """Drops documentation (title/description strings, examples lists) at every level."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in ("title", "description") and isinstance(v, str):
                continue
            if k == "examples" and isinstance(v, list):
                continue
            out[k] = strip_docs(v)
        return out
    if isinstance(node, list):
        return [strip_docs(x) for x in node]
    return node


def official_text(sid):
    return asdf.get_config().resource_manager[sid]


def complex_patterns_agree(ours, official):
    rng = random.Random(4)
    a, b = re.compile(ours), re.compile(official)
    alphabet = list("0123456789.+-eEiIjJ() x") + ["inf", "INF", "nan", "NAN", "1", "2.5", "e1"]
    samples = ["1", "1j", "-1-1j", "(1+2i)", ".5e-3J", "nanj", "inf+infi", "1.", "1+1", "(1", ""]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(200000)]
    return all(bool(a.search(s)) == bool(b.search(s)) for s in samples)


def diff(a, b, path=""):
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'ours' if k in a else 'official'}")
            else:
                out += diff(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: list lengths {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}/{i}")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


# Differences that are intended; each is explained in asdf-core/schemas/README.md.
ALLOWED = {}


def check_structure():
    problems = []
    for sid, text in our_schema_texts().items():
        ours = strip_docs(yaml.safe_load(text))
        official = strip_docs(yaml.safe_load(official_text(sid)))
        if sid == CORE + "complex-1.0.0":
            if not complex_patterns_agree(ours.pop("pattern"), official.pop("pattern")):
                problems.append(f"{sid}: complex pattern disagrees with the official one")
        found = set(diff(ours, official))
        extra = found - ALLOWED.get(sid, set())
        missing = ALLOWED.get(sid, set()) - found
        problems += [f"{sid}{d}" for d in sorted(extra)]
        problems += [f"{sid}: expected difference not found: {d}" for d in sorted(missing)]
    return problems


# The standard's step-1.1.0 and step-1.2.0 refer to transform schemas it does not hold
# (asdf-core/schemas/README.md): checking their `default` needs them, so the check cannot run, for the
# official schemas as for ours. Each must fail in the same way for both.
UNCHECKABLE = {
    STSCI + "asdf/wcs/step-1.1.0": STSCI + "asdf/transform/transform-1.1.0",
    STSCI + "asdf/wcs/step-1.2.0": STSCI + "asdf/transform/transform-1.2.0",
}


def metaschema_problem(text):
    try:
        asdf.schema.check_schema(yaml.safe_load(text))
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0]
    return None


def check_metaschema():
    problems = []
    for sid, text in our_schema_texts().items():
        found = metaschema_problem(text)
        if sid in UNCHECKABLE:
            official = metaschema_problem(official_text(sid))
            if found is None or UNCHECKABLE[sid] not in found or found != official:
                problems.append(f"{sid}: expected the missing {UNCHECKABLE[sid]}, ours: {found}, official: {official}")
        elif found is not None:
            problems.append(f"{sid}: fails the metaschema: {found}")
    return problems


def check_tag_map():
    """versions.yaml == python's per-version handling of the tags of the bundled schemas."""
    problems = []
    ours = yaml.safe_load((SCHEMAS / "versions.yaml").read_text())["standards"]
    asdf_ids = [sid for sid in our_schema_texts() if sid.startswith(STSCI + "asdf/")]
    candidates = ["tag:stsci.edu:asdf/" + sid[len(STSCI + "asdf/") :] for sid in asdf_ids]
    python_versions = [str(v) for v in asdf.versioning.supported_versions]
    if sorted(ours) != sorted(python_versions):
        problems.append(f"standards {sorted(ours)} != python's {python_versions}")
    for standard in python_versions:
        em = asdf.AsdfFile(version=standard).extension_manager
        theirs = {}
        for tag in candidates:
            if em.handles_tag_definition(tag):
                uris = em.get_tag_definition(tag).schema_uris
                theirs[tag] = uris[0] if len(uris) == 1 else uris
        if ours.get(standard) != theirs:
            problems.append(f"{standard}: ours {ours.get(standard)} != python {theirs}")
    return problems


def main():
    sections = []

    count, failures = run_cases("official")
    sections.append(("cases, official schemas", count, failures))

    clear_schema_caches()
    with asdf.config_context() as cfg:
        texts = our_schema_texts()
        cfg.add_resource_mapping({k: v.encode() for k, v in texts.items()})
        probe = CORE + "software-1.0.0"
        if asdf.get_config().resource_manager[probe] != texts[probe].encode():
            sections.append(("cases, our schemas", 0, ["our schemas were not picked up"]))
        else:
            count, failures = run_cases("ours")
            sections.append(("cases, our schemas", count, failures))
    clear_schema_caches()

    sections.append(("case files per schema", len(our_schema_texts()), check_counts()))
    sections.append(("metaschema check of our schemas", len(our_schema_texts()), check_metaschema()))
    sections.append(("structure vs official", len(our_schema_texts()), check_structure()))
    sections.append(("tag map vs python", len(asdf.versioning.supported_versions), check_tag_map()))

    bad = 0
    for name, n, problems in sections:
        print(f"{'FAIL' if problems else 'ok  '} {name}: {n} checked, {len(problems)} problem(s)")
        for p in problems:
            print(f"     {p}")
        bad += len(problems)
    print(f"asdf {asdf.__version__}: {'all checks agree' if not bad else f'{bad} problem(s)'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
