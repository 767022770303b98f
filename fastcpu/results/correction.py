"""The harness bias as one figure: :class:`HarnessBias`, what the self-test
measured the harness to add to a single-copy estimate (kept in TSC ticks)
and whether bench() subtracts it, and :func:`applied`, the one place a
result's correction is worked out from it (or, for copies a run, from the
copy loop's own cost), in core cycles at the result's own clock. Measuring
the bias is ``instrument.bias``'s (``harness_bias()``, the one way to get
one); this module only converts it.
"""

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
    """The harness bias of one path and mode: what :func:`fastcpu.bench`
    subtracts from a single-copy estimate, when it was measured, and why it
    is not subtracted ('' when it is).

    It is kept in TSC ticks and converted with the core clock of each
    measurement it corrects (:meth:`at`): on the AuthenticAMD family 25
    model 1 (Zen 3) host the guest's core clock flips between about 1.25 and
    1.33 core cycles per tick several times a second, and across such a flip
    the biases stayed put in ticks (user path, add chains: -7.49 and -7.58
    ticks) while in core cycles they moved by 0.5 to 0.9 (-9.41 and
    -10.06): what the harness adds is time, not work (docs/accuracy.md). The
    self-test checks the result on each host.

    Attributes:
        bias_ticks: the correction, TSC ticks per copy (NaN: none of the
            bias measurement's chains could be converted).
        ci95_ticks: its 95% half-width, TSC ticks.
        op_bias_ticks: instruction -> its bias, TSC ticks.
        cycles_per_tick: the core clock during the bias measurement (median over
            its measurements), core cycles per TSC tick.
        measured_at: ``time.monotonic()`` when it was measured, seconds.
        zero_ticks: the empty sequence timed through the path as a body,
            against the empty baseline (the harness's zero), TSC ticks: the
            median over the passes; zero_ci95_ticks its 95% half-width.
        chain_bias_ticks: chain -> its own bias (estimate - truth, before
            correction), TSC ticks: the median over the passes. Where these
            spread wider than the goal allows, no one correction can hold
            every chain (the self-test says so: ``PathCheck.failures``).
            chain_bias_ci95_ticks: chain -> that median's 95% half-width,
            TSC ticks (from the passes' scatter).
        why_not: why bench() does not subtract it ('' when it does): the
            last self-test failed this path and mode. The interval then
            holds the bias it did not take off.
    """

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
        """The smallest cost the path resolves, TSC ticks: what the harness
        hides of a body (the bias where negative, with its interval) and how
        far its zero strays (with its interval); as
        ``PathCheck.resolution_core_cycles``."""
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
        """(bias, its 95% half-width, the smallest cost resolved) in core
        cycles per copy, converted at `cycles_per_tick` (NaN: the bias
        measurement's own clock), and why no correction applies ('' when it
        does). Where :attr:`why_not` says the last self-test failed: (0, the
        bias's size plus its half-width, the resolution, the reason): the
        bias is not subtracted, but the interval holds it, and the
        resolution still says what the harness cannot see."""
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
    """The correction a result is built with, in core cycles per copy at its
    own clock (`cycles_per_tick`, with `caveats`: why core cycles cannot be
    trusted, or ()): (bias, its 95% half-width, the smallest cost resolved,
    the caveats the result carries). The one place bench()'s path applies
    one (``instrument.harness.bench_result``).

    - `corrected` (single copies on the TSC, what :func:`fastcpu.bench`
      returns): `bias` converted at that clock (:meth:`HarnessBias.at`;
      None: none known, nothing applied). While the runs' rulers disagree
      (caveats, core cycles NaN) nothing is applied and their caveat says
      so; where no correction applies (a failed self-test, a bias that
      could not be converted) the caveat says why.
    - otherwise (copies a run, a PMU counter, the self-test's own
      uncorrected runs): the copy loop's cost `loop` (core cycles per copy
      and its 95% half-width; (0, 0): not measured). The empty sequence
      pays the loop too, and the body overlaps anything from none to all
      of it: the figure reads the body less 0 to L (L the loop's cost;
      latency-bound chains read about L low on the AuthenticAMD family 25
      model 17 guest). So half of L is added back, the interval carries the
      other half (with L's own half-width), and a figure within L is not
      resolved: it may be the loop alone. Nothing while the runs' rulers
      disagree.
    """
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
