"""Keep a benchmark's printed tables as a JSON record in benchmarks/records/.

A benchmark that takes ``--record DIR`` calls :func:`start` right after
parsing its arguments. From then on what it prints still goes to the
terminal, and a copy is kept; when the process ends without an uncaught
exception, every Markdown table it printed is written to
``DIR/BENCHMARK-HOST-DATE.json``:

    {"format": "fastcpu-benchmark-record", "version": 1,
     "benchmark": "accuracy", "host": {vendor, family, model, stepping,
     model_name, hypervisor}, "fastcpu_version": "0.8.7",
     "commit": "334205a" (the checkout's, "+" where it had uncommitted changes;
     absent from records before 0.9.0's last ones, and outside a git checkout),
     "date": "2026-12-05T15:37:00Z", "argv": [...],
     "tables": [{"title": "...", "context": [...], "columns": [...], "rows": [[...], ...]}]}

A table's title is the last Markdown heading printed before it. docs/reports.py
renders the latest record of each benchmark and host into docs/accuracy.md
and docs/performance.md, so that no figure there is typed by hand.
"""

from __future__ import annotations

import atexit
import datetime as _dt
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

FORMAT = "fastcpu-benchmark-record"
VERSION = 1
HOST_KEYS = ("vendor", "family", "model", "stepping", "model_name", "hypervisor")


def host() -> dict:
    """The host as the benchmark's process sees it (a guest sees the host CPU's
    family and model, and its hypervisor's CPUID vendor)."""
    info: dict = {}
    try:  # fastcpu's own reader (CPUID's hypervisor vendor included) where the package has it
        from fastcpu.instrument.machine import machine_info

        info = machine_info()
    except Exception:  # noqa: BLE001 - fall back to /proc/cpuinfo below
        info = {}
    if not info.get("vendor"):
        info = dict(info, **_cpuinfo())
    return {k: info.get(k) for k in HOST_KEYS}


def _cpuinfo() -> dict:
    fields: dict = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return fields
    first = text.split("\n\n")[0]
    for line in first.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    out = {"vendor": fields.get("vendor_id"), "model_name": fields.get("model name")}
    for key, name in (("family", "cpu family"), ("model", "model"), ("stepping", "stepping")):
        out[key] = int(fields[name]) if fields.get(name, "").isdigit() else None
    out["hypervisor"] = "present (vendor unknown)" if "hypervisor" in fields.get("flags", "").split() else ""
    return out


def commit() -> str | None:
    """The checkout's commit, with "+" where files it tracks have uncommitted changes (None: no git
    checkout): two records of one fastcpu version can come from different code."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0 or not head.stdout.strip():
        return None
    return head.stdout.strip() + ("+" if dirty.returncode == 0 and dirty.stdout.strip() else "")


_HEADING = re.compile(r"^#{1,6}\s+(.*\S)\s*$")
_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def tables(text: str) -> list[dict]:
    """Every Markdown table in `text`: its title (the last heading before it),
    the lines printed between that heading (or the table before) and it (its
    context), its columns and its rows, cells as printed."""
    out: list[dict] = []
    title = ""
    context: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        heading = _HEADING.match(lines[i])
        if heading:
            title, context = heading[1], []
        elif lines[i].strip() and not _ROW.match(lines[i]):
            context.append(lines[i].strip())
        if _ROW.match(lines[i]) and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            columns = [c.strip() for c in _ROW.match(lines[i])[1].split("|")]
            rows = []
            i += 2
            while i < len(lines) and _ROW.match(lines[i]):
                rows.append([c.strip() for c in _ROW.match(lines[i])[1].split("|")])
                i += 1
            out.append({"title": title, "context": context, "columns": columns, "rows": rows})
            context = []
            continue
        i += 1
    return out


def make(benchmark: str, text: str, argv: list[str], *, host_facts: dict | None = None,
         version: str | None = None, date: str | None = None) -> dict:
    """The record of one run: what `benchmark` printed (`text`) and where, when
    and with which fastcpu it ran."""
    if version is None:
        import fastcpu

        version = fastcpu.__version__
    record = {"format": FORMAT, "version": VERSION, "benchmark": benchmark,
              "host": host_facts if host_facts is not None else host(), "fastcpu_version": version}
    at = commit()
    if at:
        record["commit"] = at
    return record | {
        "date": date or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "argv": list(argv), "tables": tables(text)}


def file_name(record: dict) -> str:
    h = record["host"]
    slug = re.sub(r"[^a-z0-9]+", "-", f"{h.get('vendor')} {h.get('family')} {h.get('model')} "
                                      f"{h.get('stepping')}".lower()).strip("-")
    stamp = record["date"].replace(":", "").replace("-", "")
    return f"{record['benchmark']}-{slug}-{stamp}.json"


def write(directory: str | os.PathLike, record: dict) -> Path:
    """Write `record` into `directory` (made if missing); its path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / file_name(record)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


class _Tee(io.TextIOBase):
    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, s: str) -> int:
        self.copy.write(s)
        return self.stream.write(s)

    def flush(self) -> None:
        self.stream.flush()


def start(directory: str | os.PathLike, benchmark: str) -> None:
    """Keep a copy of standard output from now on, and write the record into
    `directory` when the process ends, unless an exception ended it or it
    printed no table."""
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    failed = []
    hook = sys.excepthook

    def excepthook(*exc):
        failed.append(exc[0])
        hook(*exc)

    sys.excepthook = excepthook

    def finish() -> None:
        sys.stdout = tee.stream
        if failed:
            return
        record = make(benchmark, tee.copy.getvalue(), sys.argv)
        if not record["tables"]:
            print(f"record: {benchmark} printed no table: nothing recorded", file=sys.stderr)
            return
        print(f"record: wrote {write(directory, record)}", file=sys.stderr)

    atexit.register(finish)
