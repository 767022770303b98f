"""The harness correction as figures: the bias the self-test measured
(:class:`Correction`, kept in TSC ticks), what :func:`fastcpu.bench` found of
it when it measured (:class:`KnownBias`), and the correction a result is
built with (:class:`HarnessCorrection`, core cycles at the result's own
clock: :func:`correction_at`). Measuring the bias is ``_selftest``'s; this
module only converts it, so that a result can work out its own fields from
what bench() handed it (``_bench_result``) without knowing how it was
measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple


__all__ = ["CORRECTION_MAX_AGE_S", "Correction", "HarnessCorrection", "KnownBias", "NO_BIAS", "NOT_CORRECTED", "UNMEASURED",
           "bias_at", "correction_at"]

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
class Correction:
    """A measured harness bias: what bench() subtracts, and when it was
    measured.

    It is kept in TSC ticks and converted with the core clock of each
    measurement it corrects: on the AuthenticAMD family 25 model 1 (Zen 3) host the guest's core clock flips
    between about 1.25 and 1.33 core cycles per tick several times a second,
    and across such a flip the biases stayed put in ticks (user path, add
    chains: -7.49 and -7.58 ticks) while in core cycles they moved by 0.5 to
    0.9 (-9.41 and -10.06): what the harness adds is time, not work
    (docs/accuracy.md). The self-test checks the result on each host.

    Attributes:
        bias_ticks: the correction, TSC ticks per copy.
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

    @property
    def resolution_ticks(self) -> float:
        """The smallest cost the path resolves, TSC ticks: what the harness
        hides of a body (the bias where negative, with its interval) and how
        far its zero strays (with its interval); as
        ``PathCheck.resolution_core_cycles``."""
        return max(0.0, -self.bias_ticks) + self.ci95_ticks + abs(self.zero_ticks) + self.zero_ci95_ticks

    def holds_at(self, now: float) -> bool:
        """Whether this correction still applies at `now` (``time.monotonic()``)."""
        return now - self.measured_at <= CORRECTION_MAX_AGE_S

    def core_cycles(self, cycles_per_tick: float = math.nan) -> tuple[float, float]:
        """(bias, 95% half-width) in core cycles at `cycles_per_tick` (core
        cycles per TSC tick; NaN: the bias measurement's own)."""
        cpt = cycles_per_tick if math.isfinite(cycles_per_tick) and cycles_per_tick > 0 else self.cycles_per_tick
        return self.bias_ticks * cpt, self.ci95_ticks * cpt


class HarnessCorrection(NamedTuple):
    """The harness correction a single-copy result is built with (the
    self-test's bias, converted at the result's own clock:
    :func:`correction_at`), in core cycles per copy, as
    :meth:`BenchResult.with_harness_correction` takes it."""

    bias_core_cycles: float
    ci95_core_cycles: float
    #: the smallest cost the harness resolves (0: not measured)
    resolution_core_cycles: float
    #: the result's caveats with it: the runs' own, or why no correction applies
    caveats: tuple[str, ...]


class KnownBias(NamedTuple):
    """What :func:`fastcpu.bench` found of the harness bias of its path and
    mode when it measured (``_selftest.known_bias``): the correction then in
    force, and why none applies ('' when one does). Figures only: the result
    converts them at its own clock (:func:`correction_at`)."""

    #: the last bias measurement (None: none, or none asked for)
    correction: Correction | None
    #: why it is not subtracted: the last self-test failed this path and mode
    why_not: str


#: Nothing known and nothing to say: where the runs' rulers disagree, no bias is asked for.
NO_BIAS = KnownBias(None, "")


def bias_at(known: KnownBias, cycles_per_tick: float) -> tuple[float, float, float, str]:
    """(bias, its 95% half-width, the smallest cost resolved) in core cycles
    per copy, converted at `cycles_per_tick` (NaN: the bias measurement's
    own clock), and why no correction applies ('' when it does). After a
    self-test that failed the path and mode, no correction applies: (0, the
    bias's size plus its half-width, the resolution, the reason): the bias
    is not subtracted, but the interval holds it, and the resolution still
    says what the harness cannot see."""
    correction, why_not = known
    if correction is None:
        return 0.0, 0.0, 0.0, why_not
    bias, ci = correction.core_cycles(cycles_per_tick)
    # the resolution at the same clock: the measurement's, or the bias measurement's where that is unknown
    cpt = cycles_per_tick if 0 < cycles_per_tick < math.inf else correction.cycles_per_tick
    if not math.isfinite(bias + ci):
        return 0.0, 0.0, 0.0, why_not or UNMEASURED
    if why_not:  # not subtracted, but not hidden either: the interval holds the bias it did not take off
        return 0.0, abs(bias) + ci, correction.resolution_ticks * cpt, why_not
    return bias, ci, correction.resolution_ticks * cpt, ""


def correction_at(known: KnownBias, cycles_per_tick: float, caveats: tuple[str, ...]) -> HarnessCorrection:
    """The harness correction of single-copy runs on the TSC whose own clock
    reads `cycles_per_tick` (core cycles per TSC tick) with `caveats`: the
    `known` bias converted at that clock (:func:`bias_at`), and the caveats
    the result then carries. While the runs' rulers disagree (caveats, core
    cycles NaN) nothing is applied and their caveat says so; where no
    correction applies (a failed self-test, a bias that could not be
    converted) the caveat says why."""
    if caveats:
        return HarnessCorrection(0.0, 0.0, 0.0, (caveats[0] + NOT_CORRECTED,))
    bias, ci, resolution, why_not = bias_at(known, cycles_per_tick)
    return HarnessCorrection(bias, ci, resolution, (why_not,) if why_not else ())
