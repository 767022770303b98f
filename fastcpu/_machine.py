"""Facts about the machine a measurement ran on, read from CPUID, /proc and /sys.

Everything here is read-only and best effort: a fact the kernel does not
expose is ``None``, never a guess. No C core here: the analysis kit checks a
file's stored facts against :data:`FACT_KINDS` on any platform;
``_machine_info.machine_info()`` adds the C core's CPUID facts.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "affinity",
    "FACT_KINDS",
    "CPU_NUMBER_MAX",
    "fact_problem",
    "cpu_governors",
    "boost_enabled",
    "isolated_cpus",
    "possible_cpus",
    "glibc_version",
    "read_text",
    "parse_cpu_list",
    "hypervisor_flag",
    "cpuinfo_first",
]

_SYS_CPU = Path("/sys/devices/system/cpu")


def read_text(path: Path | str) -> str | None:
    """The stripped text of a /proc or /sys file, or None when it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpuinfo_first() -> dict[str, str]:
    """The first processor's block of /proc/cpuinfo as a dict."""
    info: dict[str, str] = {}
    text = read_text("/proc/cpuinfo") or ""
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            info[key.strip()] = value.strip()
    return info


def parse_cpu_list(text: str | None) -> list[int] | None:
    """Parse a kernel CPU list such as ``0-3,8,10-11``."""
    if text is None:
        return None
    cpus: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


def affinity() -> list[int] | None:
    """This thread's affinity mask, sorted; None when it cannot be read
    (sched_getaffinity denied by a seccomp filter)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except OSError:
        return None


def cpu_governors() -> dict[int, str]:
    """cpufreq scaling governor per CPU of the affinity mask (of the online
    CPUs when the mask cannot be read); empty when cpufreq is absent (as in
    most guests)."""
    out = {}
    cpus = affinity()
    if cpus is None:
        cpus = parse_cpu_list(read_text(_SYS_CPU / "online")) or []
    for cpu in cpus:
        gov = read_text(_SYS_CPU / f"cpu{cpu}" / "cpufreq" / "scaling_governor")
        if gov is not None:
            out[cpu] = gov
    return out


def boost_enabled() -> bool | None:
    """Whether turbo/boost is on (acpi-cpufreq ``boost`` or intel_pstate ``no_turbo``)."""
    boost = read_text(_SYS_CPU / "cpufreq" / "boost")
    if boost is not None:
        return boost == "1"
    no_turbo = read_text(_SYS_CPU / "intel_pstate" / "no_turbo")
    if no_turbo is not None:
        return no_turbo == "0"
    return None


def isolated_cpus() -> list[int] | None:
    """CPUs isolated from the scheduler (``isolcpus=``), or None if unreadable."""
    return parse_cpu_list(read_text(_SYS_CPU / "isolated"))


def possible_cpus() -> int | None:
    """How many CPU numbers the kernel can ever use (nr_cpu_ids), or None if unknown."""
    cpus = parse_cpu_list(read_text(_SYS_CPU / "possible"))
    return max(cpus) + 1 if cpus else None


def glibc_version() -> str | None:
    lib, version = platform.libc_ver()
    return version if lib == "glibc" and version else None


#: CPU numbers are below this (Linux allows 8,192 with MAXSMP; room to spare).
CPU_NUMBER_MAX = 1 << 22

#: What each fact machine_info() records may hold besides null (unknown), for
#: a reader of stored facts: a kind of :data:`_KINDS`. A new fact gets its
#: kind here (tests/test_hostile_files.py holds machine_info() to it).
FACT_KINDS: dict[str, str] = {
    "vendor": "text", "model_name": "text", "family": "number", "model": "number",
    "stepping": "number", "microcode": "text", "flags": "flags", "hypervisor": "text",
    "kernel": "text", "glibc": "text", "rseq_registered": "yes/no", "rseq_size": "number",
    "online_cpus": "cpus", "affinity": "cpus", "isolated_cpus": "cpus", "nohz_full": "cpus",
    "governors": "governors", "boost": "yes/no", "hostname": "text", "python": "text",
}


def _cpu_number(c: object) -> bool:
    return type(c) is int and 0 <= c < CPU_NUMBER_MAX


def _cpu_key(c: object) -> bool:
    return isinstance(c, str) and c.isdecimal() and c.isascii() and int(c) < CPU_NUMBER_MAX


#: kind -> (does a value fit it, what it must be in words)
_KINDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "text": (lambda v: isinstance(v, str), "a string"),
    "number": (lambda v: type(v) is int and 0 <= v < 1 << 32, "a whole number from 0 to 2**32 - 1"),
    "yes/no": (lambda v: isinstance(v, bool), "true or false"),
    "flags": (lambda v: isinstance(v, dict) and all(isinstance(k, str) and isinstance(f, bool)
                                                    for k, f in v.items()),
              "an object of names, each true or false"),
    "cpus": (lambda v: isinstance(v, list) and all(_cpu_number(c) for c in v),
             f"a list of CPU numbers (0 to {CPU_NUMBER_MAX - 1})"),
    "governors": (lambda v: isinstance(v, dict) and all(_cpu_key(c) and isinstance(g, str)
                                                        for c, g in v.items()),
                  "an object mapping CPU numbers (as strings) to cpufreq governor names"),
}


def fact_problem(key: str, value: object) -> str | None:
    """What stored fact `key` must be, when `value` does not fit its kind
    (None when it does, is null, or is no fact machine_info() records)."""
    kind = FACT_KINDS.get(key)
    if kind is None or value is None:
        return None
    fits, words = _KINDS[kind]
    return None if fits(value) else f"{words}, or null"


def hypervisor_flag() -> bool | None:
    """Whether the CPU says a hypervisor runs it (the ``hypervisor`` flag of
    /proc/cpuinfo, CPUID.1:ECX bit 31); None when /proc/cpuinfo has no flags."""
    flags = cpuinfo_first().get("flags")
    return None if flags is None else "hypervisor" in flags.split()
