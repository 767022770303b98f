"""Facts about the machine a measurement ran on (CPUID, /proc, /sys; unknown is None) and the
stability warnings they imply for a result (:class:`Stability`)."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import estimate as _estimate

__all__ = ['affinity', 'FACT_KINDS', 'CPU_NUMBER_MAX', 'fact_problem', 'cpu_governors', 'boost_enabled', 'isolated_cpus', 'possible_cpus', 'glibc_version', 'read_text', 'parse_cpu_list', 'hypervisor_flag', 'hypervisor_vendor', 'read_hypervisor_vendor_with', 'cpuinfo_first', 'Stability', 'assess', 'machine_warnings', 'MDAPE_WARN_PERCENT', 'MIGRATED_WARN_FRACTION', 'OUTLIER_WARN_FRACTION']


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


#: Reads the hypervisor's vendor signature from CPUID leaf 0x40000000
#: (``'KVMKVMKVM'``; ``''`` or None on metal): set by the instrument room,
#: whose C core executes CPUID (:func:`read_hypervisor_vendor_with`). None
#: where no C core is built: the /proc flag alone then says ``'unknown'``.
_hypervisor_vendor: Callable[[], str | None] | None = None


def read_hypervisor_vendor_with(reader: Callable[[], str | None] | None) -> None:
    """Name this machine's hypervisor by `reader` (CPUID's vendor signature)
    where a report reads the machine now (:func:`machine_warnings` with no
    facts); ``None``: by the /proc flag alone."""
    global _hypervisor_vendor
    _hypervisor_vendor = reader


def hypervisor_vendor() -> str | None:
    """This machine's hypervisor: CPUID's vendor signature (``'KVMKVMKVM'``)
    where the C core can read it, else ``'unknown'`` when the /proc flag
    says a hypervisor runs it; None on metal (or when nothing says)."""
    if _hypervisor_vendor is not None:
        try:
            vendor = _hypervisor_vendor()
        except Exception:  # noqa: BLE001 - a report never fails for a fact: the flag still tells
            vendor = None
        if vendor:
            return vendor
    return "unknown" if hypervisor_flag() else None


#: nanobench's threshold: warn when the median absolute percentage error of
#: the raw runs reaches 5% (and exceeds one clock step's share of a run).
MDAPE_WARN_PERCENT = 5.0
#: Warn when at least 1% of the runs migrated to another CPU.
MIGRATED_WARN_FRACTION = 0.01
#: Warn when at least 5% of the runs fell outside the outlier fence.
OUTLIER_WARN_FRACTION = 0.05


@dataclass(frozen=True)
class Stability:
    """How steady one measurement was, and on what kind of machine.

    Attributes:
        mdape_percent: median absolute percentage error of the raw runs, percent.
        outlier_fraction: share of runs whose raw - empty fell outside the fence.
        migrated_fraction: share of pairs during which the CPU changed.
        machine_warnings, run_warnings: warnings about the machine; about the runs."""

    mdape_percent: float
    outlier_fraction: float
    migrated_fraction: float
    machine_warnings: tuple[str, ...]
    run_warnings: tuple[str, ...]

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every warning, the machine's first."""
        return self.machine_warnings + self.run_warnings


def _cpu_list(cpus: list[int]) -> str:
    return ", ".join(str(c) for c in cpus)


def _read_machine() -> dict[str, Any]:
    """This machine's settings from /proc and /sys (and CPUID's hypervisor vendor where the C core reads it)."""
    return {
        "governors": cpu_governors(),
        "boost": boost_enabled(),
        "hypervisor": hypervisor_vendor(),
        "isolated_cpus": isolated_cpus(),
    }


def _check_machine(machine: object) -> Mapping[str, Any]:
    """`machine` if its facts have the types machine_info() gives, else TypeError."""
    if not isinstance(machine, Mapping):
        raise TypeError(f"machine must be a dict of machine facts (machine_info()) or None, "
                        f"not {type(machine).__name__}")
    governors = machine.get("governors")
    if governors is not None and not (
        isinstance(governors, Mapping)
        and all(str(c).isdigit() and isinstance(g, str) for c, g in governors.items())
    ):
        raise TypeError("machine['governors'] must map CPU numbers to governor names, "
                        f"not {governors!r}")
    isolated = machine.get("isolated_cpus")
    if isolated is not None and not (
        isinstance(isolated, (list, tuple, set, frozenset))
        and all(isinstance(c, int) and not isinstance(c, bool) for c in isolated)
    ):
        raise TypeError(f"machine['isolated_cpus'] must be a list of CPU numbers or None, not {isolated!r}")
    return machine


def machine_warnings(cpu: int | None, machine: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """Warnings about the machine a measurement pinned to `cpu` (or None) ran on.

    Args:
        cpu: the CPU the measuring thread was pinned to, or None.
        machine: ``machine_info()``'s ``governors``, ``boost``, ``hypervisor``,
            ``isolated_cpus``; None reads this machine. Unknown facts draw no warning."""
    m = _read_machine() if machine is None else _check_machine(machine)
    out: list[str] = []
    governors = {int(c): g for c, g in (m.get("governors") or {}).items()}
    if cpu is not None and cpu in governors:
        governors = {cpu: governors[cpu]}
    slow = sorted(c for c, g in governors.items() if g != "performance")
    if slow:
        names = sorted({governors[c] for c in slow})
        out.append(
            f"cpufreq governor {', '.join(map(repr, names))} (not 'performance') on CPU "
            f"{_cpu_list(slow)}: the core clock can change during the measurement"
        )
    if m.get("boost"):
        out.append(
            "turbo/boost is on: the core clock follows load and temperature, so "
            "core-cycle figures drift"
        )
    hypervisor = m.get("hypervisor")
    if hypervisor is None and isinstance(m.get("flags"), Mapping) and m["flags"].get("hypervisor"):
        hypervisor = "unknown"
    if hypervisor:
        out.append(
            f"running under a hypervisor ({hypervisor}): VM exits, a coarse TSC and the "
            "host's other work add noise"
        )
    isolated = m.get("isolated_cpus")
    if cpu is None:
        out.append(
            "the measuring thread was not pinned to an isolated CPU (pass cpu=N, "
            "with N isolated by isolcpus=): the scheduler can interleave other work"
        )
    elif isolated is not None and cpu not in isolated:
        out.append(
            f"CPU {cpu} is not isolated (isolcpus=): the scheduler can run other "
            "work on it between runs"
        )
    return tuple(out)


def assess(
    raw: np.ndarray,
    empty: np.ndarray,
    migrated: np.ndarray,
    step: float,
    cpu: int | None,
    counter: str = "tsc",
    machine: Mapping[str, Any] | None = None,
    extra: list[str] | tuple[str, ...] = (),
) -> Stability:
    """The stability report of one measurement's runs; never raises for a bad measurement.

    Args:
        raw, empty, migrated: the runs in counts of the counter, and migration flags.
        step: the counter's granularity, in counts.
        cpu, counter: the pinned CPU or None; ``'tsc'``, ``'pmu'`` or ``'pmu_user'``.
        machine: ``machine_info()``-style dict, or None for this machine.
        extra: warnings about the runs their caller found."""
    runs_n = int(raw.size)
    mdape = _estimate.mdape_percent(raw)
    outliers = _estimate.outlier_fraction(raw, empty, step)
    migrations = int(np.count_nonzero(migrated))
    migrated_fraction = migrations / runs_n
    runs: list[str] = []
    # With a coarse clock a run a few steps long spreads by one step without
    # being unsteady: that is resolution (resolution_limited, the interval).
    one_step = 100.0 * step / max(_estimate.median_per_run(raw), 1.0)
    if mdape >= MDAPE_WARN_PERCENT and mdape > one_step:
        runs.append(
            f"high spread: the raw runs' median absolute percentage error is "
            f"{mdape:.1f}% (warned at {MDAPE_WARN_PERCENT:g}%)"
        )
    if migrated_fraction >= MIGRATED_WARN_FRACTION:
        runs.append(
            f"{migrations} of {runs_n} runs migrated to another CPU "
            "(pin with cpu=N)"
        )
    if outliers >= OUTLIER_WARN_FRACTION:
        runs.append(
            f"{outliers:.1%} of the runs hit an outlier (an interrupt, a trap or a "
            "migration: raw - empty far from its median)"
        )
    runs.extend(extra)
    if counter == "pmu_user":
        runs.append(
            "counter='pmu' counted user-mode cycles only (perf_event_paranoid): "
            "time spent in the kernel is missing"
        )
    return Stability(
        mdape_percent=mdape,
        outlier_fraction=outliers,
        migrated_fraction=migrated_fraction,
        machine_warnings=machine_warnings(cpu, machine),
        run_warnings=tuple(runs),
    )
