"""Write the facts about data/'s result files that README.md and data/README.md
state, from the files themselves, never by hand.

    python docs/facts.py           # rewrite every facts block
    python docs/facts.py --check   # exit 1 if one differs from what the files say

A facts block (``<!-- facts: NAME begin ... -->``, docs/blocks.py) is one of
BLOCKS below: the hosts table, how the files were measured, their clocks, their
format and sizes, and whether any came from bare metal. Each is computed from
``fastcpu.load()`` of every ``data/*.json*`` file (and the raw JSON for the
format version), so a file added or replaced changes them here and nowhere by
hand. tests/test_figures.py runs --check.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blocks  # noqa: E402
from answer import _HYPERVISORS, _UARCH, host_name  # noqa: E402

import fastcpu  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "data/README.md", "docs/files.md"]
#: The microarchitecture behind a guest's CPUID family and model, where the
#: project knows it; a guest sees the hypervisor's CPU model, no more.
UARCH = {**{k: v for k, v in _UARCH.items()},
         ("GenuineIntel", 6, 207): "Emerald Rapids (Raptor Cove cores)",
         ("GenuineIntel", 6, 167): "a server core of the Sapphire Rapids generation or later (the hypervisor's CPU model)"}


def files(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / "data").iterdir() if p.name.endswith((".json", ".json.gz")))


def _doc(path: Path) -> dict:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)


def _hv(m: dict) -> str:
    vendor = (m.get("hypervisor") or "").strip()
    return _HYPERVISORS.get(vendor, vendor) if vendor else ""


def guests(paths: list[Path]) -> str:
    loaded = [fastcpu.load(p).machine for p in paths]
    kinds = sorted({_hv(m) for m in loaded})
    cpus = {(m["vendor"], m["family"], m["model"], m["stepping"]) for m in loaded}
    if kinds == [""]:
        where = "on bare metal"
    elif "" in kinds:
        where = "some on bare metal, the others in " + ", ".join(k for k in kinds if k) + " guests"
    elif len(kinds) == 1:
        where = f"inside a {kinds[0]} guest; none comes from bare metal"
    else:
        where = "inside virtual machines (" + ", ".join(kinds) + "); none comes from bare metal"
    return (f"Every result file in data/ ({len(paths)} files, {len(cpus)} host CPUs by vendor, family, model and "
            f"stepping) was measured {where}.")


def hosts(paths: list[Path]) -> str:
    lines = ["| file | label | vendor | family / model / stepping | microarchitecture | hypervisor | vCPUs | kernel "
             "| glibc | fastcpu | runs per method | measured (UTC) |",
             "| --- | --- | --- | --- | --- | --- | ---: | --- | --- | --- | ---: | --- |"]
    for p in paths:
        res = fastcpu.load(p)
        m = res.machine
        runs = sorted({r.runs for r in res.values()})
        cpus = sorted({r.cpu for r in res.values() if r.cpu is not None})
        extra = [f"{len(res)} methods"]
        if cpus:
            extra.append("pinned to CPU " + ", ".join(map(str, cpus)))
        else:
            extra.append("unpinned")
        if res.back_to_back:
            extra.append("both questions")
        if any(n.startswith("Re-derived") for n in res.notes):
            extra.append("core cycles re-derived")
        uarch = UARCH.get((m["vendor"], m["family"], m["model"]), "")
        kernel = str(m.get("kernel") or "").split("-")[0]
        online = len(m.get("online_cpus") or [])
        lines.append(
            f"| `{p.name}` | {res.name} | {m['vendor']} | {m['family']} / {m['model']} / {m['stepping']} | {uarch} "
            f"| {_hv(m) or 'bare metal'} | {online} | {kernel} | {m.get('glibc')} | {_doc(p).get('fastcpu_version')} "
            f"| {' / '.join(f'{n:,}' for n in runs)} ({'; '.join(extra)}) | {res.date[:16].replace('T', ' ')} |")
    return "\n".join(lines)


def clocks(paths: list[Path]) -> str:
    lines = ["| file | TSC, MHz | counter step, TSC ticks | core cycles per TSC tick at first use | self-test |",
             "| --- | ---: | ---: | ---: | --- |"]
    for p in paths:
        res = fastcpu.load(p)
        clk = res.clock
        st = res.selftest
        verdict = "none stored" if st is None else ("PASS" if st.passed else "FAIL")
        if any(n.startswith("Re-derived") for n in res.notes):
            verdict += " (re-derived file: no correction)"
        lines.append(f"| {p.name} | {clk.tsc_hz / 1e6:.2f} | {clk.tsc_step_ticks:.4g} | {clk.cycles_per_tick:.3f} "
                     f"| {verdict} |")
    return "\n".join(lines)


def format_list(paths: list[Path]) -> str:
    lines = []
    for p in paths:
        doc = _doc(p)
        res = fastcpu.load(p)
        crc = any("crc32" in r["raw"] for r in doc["results"])
        rederived = any(n.startswith("Re-derived") for n in doc.get("notes", []))
        words = [f"version {doc['version']}", "verified" if res.verified else "not verified (no checksum)",
                 "with array CRC-32s" if crc else "without array CRC-32s"]
        words.append("re-derived by `data/rederive_intel.py` (raw ticks unchanged)" if rederived
                     else f"as first written by fastcpu {doc.get('fastcpu_version')}")
        if p.name.endswith(".gz"):
            words.append("gzipped")
        lines.append(f"- `{p.name}`: {', '.join(words)}")
    return "\n".join(lines) + "\n"


def sizes(paths: list[Path]) -> str:
    """File sizes by how many methods each holds, for files of 10,000 runs."""
    one: dict[int, list[float]] = {}
    both: dict[int, list[float]] = {}
    for p in paths:
        res = fastcpu.load(p)
        if {r.runs for r in res.values()} != {10_000}:
            continue
        mb = len(gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()) / 1e6
        (both if res.back_to_back else one).setdefault(len(res), []).append(mb)

    def rng(v: list[float]) -> str:
        return f"{min(v):.1f} MB" if f"{min(v):.1f}" == f"{max(v):.1f}" else f"{min(v):.1f}-{max(v):.1f} MB"

    parts = [f"{rng(v)} for {n} methods" for n, v in sorted(one.items())]
    text = "10,000 runs of every method: " + ", ".join(parts)
    if both:
        text += "; with both questions, " + ", ".join(f"{rng(v)} for {n} methods" for n, v in sorted(both.items()))
    return text + " (uncompressed JSON)."


BLOCKS = {"guests": guests, "hosts": hosts, "clocks": clocks, "format": format_list, "sizes": sizes}


def render(name: str, root: Path = ROOT) -> str:
    return BLOCKS[name](files(root))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a facts block differs from the files")
    args = p.parse_args(argv)
    return blocks.run([ROOT / page for page in PAGES], "facts", render, args.check, "facts.py")


if __name__ == "__main__":
    sys.exit(main())
