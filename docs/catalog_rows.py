"""Write fastcpu/catalog_rows.json: the catalogs of fastcpu 0.2.0 to 0.6.0, for
result files written before each result carried its catalog row (format
versions 1 to 3). Run once, where the C core is built, with 0.6.0's catalog:

    python docs/catalog_rows.py           # write the file
    python docs/catalog_rows.py --check   # exit 1 if the file differs from what it would write

Each row's words (kind, role, encoding, description) are the C core's
``_core.catalog()``'s; which versions had it is from the history of
csrc/sequences.c: every row of 0.6.0's catalog, the known-cost chains
included (the same names since 0.1.0's calibration chains), was in the
catalog of every version from 0.2.0 on, where ``getcpu_sidt_fp`` was the name
of ``getcpu_sidt_norz_fp`` (the name old result files carry, ``results.values.OLD_FILE_NAMES``) and
``sched_getcpu_norseq`` a method of the Python package (a catalog row since
0.6.0). A later version that changes or removes a row records its own
catalog here only if its files lack the rows (they carry them from format
version 4 on). tests/test_kit.py holds the file to the C core's catalog.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fastcpu" / "catalog_rows.json"
VERSIONS = ["0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0"]


def document() -> str:
    from fastcpu import _core

    rows = [{"name": r["name"], "kind": r["kind"], "role": r["role"], "encoding": r["encoding"],
             "description": r["description"], "versions": VERSIONS}
            for r in _core.catalog()]
    doc = {"about": "The catalogs of fastcpu 0.2.0 to 0.6.0 (written by docs/catalog_rows.py): "
                    "what a result file of format version 1 to 3 says of its methods.",
           "versions": VERSIONS, "rows": rows}
    # one row a line, so that a change shows as the rows it touches
    lines = ",\n  ".join(json.dumps(r, ensure_ascii=False) for r in rows)
    head = json.dumps({k: v for k, v in doc.items() if k != "rows"}, ensure_ascii=False)[:-1]
    return f'{head}, "rows": [\n  {lines}\n]}}\n'



if __name__ == "__main__":
    text = document()
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if OUT.read_text("utf-8") == text else 1)
    OUT.write_text(text, "utf-8")
