"""The stability report: why a result may be less trustworthy than it looks.

Like nanobench and pyperf, fastcpu warns and never fails. A warning comes
from the machine (a cpufreq governor other than ``performance``, turbo/boost
on, a hypervisor, a measuring thread not on an isolated CPU) or from the runs
themselves (a high spread, many migrations, many outliers). The machine's
settings are read with :mod:`fastcpu._machine`'s readers, or taken from a
``machine_info()``-style dict saved with a result measured elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _estimate
from ._machine import boost_enabled, cpu_governors, hypervisor_flag, isolated_cpus

__all__ = [
    "Stability",
    "assess",
    "machine_warnings",
    "MDAPE_WARN_PERCENT",
    "MIGRATED_WARN_FRACTION",
    "OUTLIER_WARN_FRACTION",
]

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
        mdape_percent: median absolute percentage error of the raw runs
            (nanobench's err%), in percent.
        outlier_fraction: share of runs whose paired difference (raw - empty)
            fell outside the outlier fence of :mod:`fastcpu._estimate`.
        migrated_fraction: share of pairs of runs during which the CPU changed.
        machine_warnings: warnings about the machine's settings.
        run_warnings: warnings about the runs themselves.
    """

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
    """This machine's settings, from /proc and /sys (no C core: a result looked
    at where none is built is judged too). The hypervisor's vendor is CPUID's,
    which a result file's facts hold; read here it is the flag alone."""
    return {
        "governors": cpu_governors(),
        "boost": boost_enabled(),
        "hypervisor": "unknown" if hypervisor_flag() else None,
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
    """Warnings about the machine a measurement pinned to `cpu` (or unpinned) ran on.

    Args:
        cpu: the CPU the measuring thread was pinned to, or ``None``.
        machine: a dict with ``governors`` (CPU -> governor), ``boost``,
            ``hypervisor`` (vendor or ``None``) and ``isolated_cpus``, as
            :func:`fastcpu._machine.machine_info` returns; ``None`` reads
            this machine now. Facts that are ``None`` or missing are unknown
            and draw no warning.
    """
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
    """The stability report of one measurement's runs. Never raises for a bad
    measurement: it only says what to distrust.

    Args:
        raw, empty, migrated: the runs of the method and of the empty
            sequence, in counts of the counter, and the migration flags.
        step: the counter's granularity, in the same counts.
        cpu: the CPU the thread was pinned to, or ``None``.
        counter: what counted (``'tsc'``, ``'pmu'``, ``'pmu_user'``).
        machine: the machine's settings as a ``machine_info()``-style dict,
            for runs measured elsewhere; ``None`` reads this machine.
        extra: warnings about the runs that their caller found (the result's
            own, e.g. a user function shorter than its call).

    :func:`fastcpu.stability` and ``BenchResult.stability`` call this.
    """
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
