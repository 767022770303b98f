"""Write the benchmark reports of docs/accuracy.md and docs/performance.md from
the recorded runs in benchmarks/records/, never by hand.

    python docs/reports.py           # rewrite every report block
    python docs/reports.py --check   # exit 1 if one differs from the records

A report block names a benchmark (``<!-- report: accuracy begin ... -->``);
it holds, per host, every table of that benchmark's latest record on that
host (the host, fastcpu version, date and command named above them). A
benchmark with no record yet gets a sentence saying so, and no figure.
Records are written by ``python benchmarks/NAME.py --record benchmarks/records``
(benchmarks/record.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blocks  # noqa: E402
from answer import host_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["docs/accuracy.md", "docs/performance.md"]
_HYPERVISORS = {"KVMKVMKVM": "KVM guest", "Microsoft Hv": "Hyper-V guest", "VMwareVMware": "VMware guest",
                "XenVMMXenVMM": "Xen guest", "TCGTCGTCGTCG": "QEMU TCG guest"}


def load_records(directory: Path) -> list[dict]:
    out = []
    for path in sorted(directory.glob("*.json")):
        doc = json.loads(path.read_text())
        if doc.get("format") == "fastcpu-benchmark-record":
            out.append(dict(doc, path=path))
    return out


def host_key(host: dict) -> tuple:
    return tuple(host.get(k) for k in ("vendor", "family", "model", "stepping", "model_name"))


def latest(records: list[dict], benchmark: str) -> list[dict]:
    """The latest record of `benchmark` per host, hosts in a stable order."""
    best: dict[tuple, dict] = {}
    for r in records:
        if r["benchmark"] != benchmark:
            continue
        key = host_key(r["host"])
        if key not in best or r["date"] > best[key]["date"]:
            best[key] = r
    return [best[k] for k in sorted(best, key=lambda k: tuple(str(x) for x in k))]


def host_words(host: dict) -> str:
    hv = (host.get("hypervisor") or "").strip()
    where = _HYPERVISORS.get(hv, f"{hv} guest") if hv else "bare metal"
    return f"{host.get('vendor')} {host_name(host)}, stepping {host.get('stepping')} ({where})"


def table(t: dict) -> list[str]:
    lines = [f"| {' | '.join(t['columns'])} |", "|" + "|".join(" --- " for _ in t["columns"]) + "|"]
    lines += [f"| {' | '.join(row)} |" for row in t["rows"]]
    return lines


def render(benchmark: str, records: list[dict], records_dir: str = "benchmarks/records") -> str:
    chosen = latest(records, benchmark)
    if not chosen:
        return (f"No run of `benchmarks/{benchmark}.py` is recorded yet. Run `python benchmarks/{benchmark}.py "
                f"--record {records_dir}` on a quiet host, commit the record it writes and run "
                "`python docs/reports.py`: its tables then appear here.")
    out: list[str] = []
    for r in chosen:
        argv = " ".join(["python", "benchmarks/" + Path(r["argv"][0]).name, *r["argv"][1:]]) if r["argv"] else ""
        at = f" (commit {r['commit']})" if r.get("commit") else ""
        out += [f"**{host_words(r['host'])}**: fastcpu {r['fastcpu_version']}{at}, {r['date']}, `{argv}` "
                f"(record `{records_dir}/{r['path'].name}`).", ""]
        for t in r["tables"]:
            if t.get("title"):
                out += [f"*{t['title']}*", ""]
            if t.get("context"):
                out += [" ".join(t["context"]), ""]
            out += table(t) + [""]
    return "\n".join(out).rstrip("\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a report block differs from the records")
    p.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    args = p.parse_args(argv)
    records_dir = args.root / "benchmarks" / "records"
    records = load_records(records_dir) if records_dir.is_dir() else []
    return blocks.run([args.root / page for page in PAGES], "report", lambda name: render(name, records),
                      args.check, "reports.py")


if __name__ == "__main__":
    sys.exit(main())
