#!/usr/bin/env python3
"""Sidecars for the two libasdf fixtures python asdf refuses and asdf-rs reads on purpose:
blank or whitespace-only lines between the header and the tree (python asdf: "Invalid content
between header and tree"; libasdf and asdf-rs read them, docs/canonical.md). Each expected
form is python asdf's reading of the same bytes with those lines taken out.

    .venv-oracle/bin/python tests/data/libasdf/padded_sidecars.py [--write]

Without --write, checks the committed sidecars (as .ci/run does).
"""
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "oracle"))
import canonical  # noqa: E402

PADDED = ["255-padding-after-header.asdf", "255-no-tree-padding-after-header.asdf"]
HEADER = re.compile(rb"\A((?:#[^\n]*\n)+)((?:[ \t\r]*\n)+)")


def main(argv) -> int:
    write = "--write" in argv
    bad = 0
    for name in PADDED:
        data = (HERE / name).read_bytes()
        m = HEADER.match(data)
        if m is None:
            print(f"{name}: no blank lines after the header")
            bad += 1
            continue
        stripped = m.group(1) + data[m.end():]
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / name
            p.write_bytes(stripped)
            doc = canonical.document(p)
        text = canonical.to_text(doc)
        side = HERE / name.replace(".asdf", ".expect.json")
        if write:
            side.write_text(text)
        elif side.read_text() != text:
            print(f"{side.name}: differs from python asdf's reading without the blank lines")
            bad += 1
    print(f"{len(PADDED)} padded files, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
