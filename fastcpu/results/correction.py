"""The harness bias as one figure (:class:`HarnessBias`) and :func:`applied`, the correction a result is built with.

``instrument.bias`` measures it; this module converts it (docs/timing.md, "The self-test")."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field


__all__ = ["CORRECTION_MAX_AGE_S", "HarnessBias", "NOT_CORRECTED", "UNMEASURED", "applied"]

#: bench()'s correction is measured again when it is older than this: the
#: bias follows what the host does (docs/accuracy.md).
CORRECTION_MAX_AGE_S = 30.0

#: Why bench() applies no correction where the bias measurement converted
#: none of its chains: each chain's own rulers were all disturbed, and the
#: process's first-use calibration could not tell its rulers apart either.
UNMEASURED = ("no harness correction applied: the harness bias could not be converted to core cycles "
              "(no undisturbed ruler point in its measurements, and the process's clock calibration "
              "failed); measure again on a quieter machine")

#: What a result's caveat adds while its clock's rulers disagree: there is
#: no core-cycle figure to correct, and so no correction.
NOT_CORRECTED = "; no harness correction applied"


@dataclass(frozen=True)
class HarnessBias:
    """The harness bias of one path and mode, kept in TSC ticks (what the harness adds is time, not work).

    Attributes:
        bias_ticks, ci95_ticks: the correction and its 95% half-width, TSC ticks
            per copy (NaN: no chain could be converted).
        op_bias_ticks: instruction -> its bias, TSC ticks.
        cycles_per_tick: the core clock during the measurement, core cycles per TSC tick.
        measured_at: ``time.monotonic()`` when measured, seconds.
        zero_ticks, zero_ci95_ticks: the harness's zero and its 95% half-width, TSC ticks.
        chain_bias_ticks, chain_bias_ci95_ticks: chain -> its own bias before
            correction and its 95% half-width, TSC ticks.
        why_not: why bench() does not subtract it ('' when it does)."""

    bias_ticks: float
    ci95_ticks: float
    op_bias_ticks: Mapping[str, float]
    cycles_per_tick: float
    measured_at: float
    zero_ticks: float = 0.0
    zero_ci95_ticks: float = 0.0
    chain_bias_ticks: Mapping[str, float] = field(default_factory=dict)
    chain_bias_ci95_ticks: Mapping[str, float] = field(default_factory=dict)
    why_not: str = ""

    @property
    def resolution_ticks(self) -> float:
        """The smallest cost the path resolves, TSC ticks (as ``PathCheck.resolution_core_cycles``)."""
        return max(0.0, -self.bias_ticks) + self.ci95_ticks + abs(self.zero_ticks) + self.zero_ci95_ticks

    def holds_at(self, now: float) -> bool:
        """Whether this bias still applies at `now` (``time.monotonic()``)."""
        return now - self.measured_at <= CORRECTION_MAX_AGE_S

    def core_cycles(self, cycles_per_tick: float = math.nan) -> tuple[float, float]:
        """(bias, 95% half-width) in core cycles at `cycles_per_tick` (core
        cycles per TSC tick; NaN: the bias measurement's own)."""
        cpt = cycles_per_tick if math.isfinite(cycles_per_tick) and cycles_per_tick > 0 else self.cycles_per_tick
        return self.bias_ticks * cpt, self.ci95_ticks * cpt

    def at(self, cycles_per_tick: float) -> tuple[float, float, float, str]:
        """(bias, 95% half-width, resolution) in core cycles per copy at `cycles_per_tick`, and why none applies ('' when it does).

        After a failed self-test: (0, the bias's size plus its half-width, the
        resolution, the reason)."""
        bias, ci = self.core_cycles(cycles_per_tick)
        if not math.isfinite(bias + ci):
            return 0.0, 0.0, 0.0, self.why_not or UNMEASURED
        # the resolution at the same clock: the measurement's, or the bias measurement's where that is unknown
        cpt = cycles_per_tick if 0 < cycles_per_tick < math.inf else self.cycles_per_tick
        if self.why_not:  # not subtracted, but not hidden either: the interval holds the bias it did not take off
            return 0.0, abs(bias) + ci, self.resolution_ticks * cpt, self.why_not
        return bias, ci, self.resolution_ticks * cpt, ""


def applied(bias: HarnessBias | None, loop: tuple[float, float], corrected: bool, cycles_per_tick: float,
            caveats: tuple[str, ...]) -> tuple[float, float, float, tuple[str, ...]]:
    """(bias, 95% half-width, resolution, caveats) a result is built with, core cycles per copy at `cycles_per_tick`.

    `corrected` (single copies on the TSC): `bias` converted (:meth:`HarnessBias.at`;
    None: nothing applied). Otherwise the copy loop `loop` (core cycles per copy,
    half-width): half its cost added back, half in the interval. Nothing while
    the runs' rulers disagree (`caveats`)."""
    if corrected:
        if caveats:
            return 0.0, 0.0, 0.0, (caveats[0] + NOT_CORRECTED,)
        if bias is None:
            return 0.0, 0.0, 0.0, ()
        b, ci, resolution, why_not = bias.at(cycles_per_tick)
        return b, ci, resolution, (why_not,) if why_not else ()
    cost, half = loop
    if caveats or not cost > 0:
        return 0.0, 0.0, 0.0, caveats
    return -cost / 2, cost / 2 + half, cost + half, caveats
