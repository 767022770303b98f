"""Re-derive the Intel hosts' result files from the ones fastcpu wrote there.

Two hosts, one function each: :func:`rederive` (family 6 model 207, fastcpu
0.4.0: data/'s file) and :func:`rederive_167` (family 6 model 167, fastcpu
0.6.0; see its docstring: kept in tests/data/ since data/ holds that host's
file measured with fastcpu 0.8.2).

fastcpu 0.4.0 measured every method on the Intel Xeon family 6 model 207
(Emerald Rapids) KVM guest with real raw TSC ticks, but converted them with
rulers that do not hold on that core (../shared/hosts/intel-xeon-family6-model207.md):
core cycles from a chain of ``add $1, reg``, which the core folds at rename
(0.4.0 read 5.4 core cycles per tick, each result's brackets 5-8), a counter
step of 22 ticks taken from back-to-back reads (the counter moves in 2-tick
steps), and a harness correction calibrated on those folded chains. This
script keeps the raw ticks and the machine's facts and replaces only what
rested on the wrong rulers, saying so in the file's notes:

* the clock's granularity: the lattice fit (``fastcpu.instrument.timebase.fit_granularity``)
  of that host's reads separated by varying work, and the spacing of its
  back-to-back reads beside it (both from the host's rulers file);
* its rulers: that host's register-register add, imul and immediate-add
  chains (5,000 runs each, less the empty sequence), judged by
  ``fastcpu.instrument.timebase.judge_rulers``;
* every result's core cycles per tick: the midpoint of the held-out ruler
  measured on that host just before the run (1.275) and just after it
  (1.246), half their gap as its 95% half-width (the 0.4.0 brackets timed
  folded chains);
* no harness correction (0.4.0's was calibrated against folded chains) and
  no stored self-test (its "truth" was the folded chains), with a caveat on
  every result.

Run from the repository root with the shared host files beside it:
``python data/rederive_intel.py ../shared/hosts`` (writes both files).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import numpy as np

import fastcpu
from fastcpu.instrument.timebase import RulerTiming, fit_granularity, judge_rulers, read_spacing

NAME = "intel-xeon-family6-model207-kvm-guest.json"
#: The held-out add ruler on that host just before and just after the run
#: (register-register adds, core cycles per TSC tick; the host's page).
BEFORE, AFTER = 1.275, 1.246


def rulers(npz: Path) -> tuple[float, float, fastcpu.types.Rulers]:
    """(granularity, back-to-back spacing, rulers) from the host's raw readings."""
    z = np.load(npz)
    deltas = z["read_deltas_varied"]
    reads = np.concatenate([[10**9], 10**9 + np.cumsum(deltas)]).astype(np.uint64)
    step = fit_granularity(reads[:4097])
    empty = float(np.median(z["empty"]))

    def timing(key: str, ruler: str) -> RulerTiming:
        v = z[key].astype(np.float64)
        se = 1.253 * 1.4826 * np.median(np.abs(v - np.median(v))) / math.sqrt(len(v))
        return RulerTiming(ruler, 256, float(np.median(v)) - empty,
                           math.hypot(se, step / math.sqrt(12 * len(v))), len(v), len(v))

    judged = judge_rulers(timing("add_reg_256", "add"), timing("imul_256", "imul"),
                          timing("add_imm_256", "immediate_add"))
    return step, read_spacing(z["back_to_back_reads"]), judged


def rederive(hosts: Path) -> fastcpu.Results:
    old = fastcpu.load(hosts / NAME)
    step, spacing, judged = rulers(hosts / "intel-xeon-family6-model207-rulers.npz")
    cpt, cpt_ci95 = (BEFORE + AFTER) / 2, abs(BEFORE - AFTER) / 2
    clock = fastcpu.Clock(old.clock.tsc_hz, step, cpt, spacing, judged)
    caveat = ("no harness correction: fastcpu 0.4.0 calibrated it on this host against folded "
              "immediate-add chains; core cycles re-derived from the register-register add ruler "
              "measured on the host before and after the run (the file's notes)")
    results = {
        name: dataclasses.replace(r, tsc_step_ticks=step, cycles_per_tick=cpt,
                                  cycles_per_tick_ci95=cpt_ci95, harness_bias_core_cycles=0.0,
                                  harness_bias_ci95_core_cycles=0.0, caveats=(caveat,))
        for name, r in old.results.items()
    }
    notes = (
        f"Re-derived by data/rederive_intel.py from the file fastcpu {old.fastcpu_version} wrote on "
        f"this host at {old.date}: raw TSC ticks, machine facts and dates unchanged.",
        f"Granularity {step:g} TSC ticks by the lattice fit of the host's reads (0.4.0 recorded "
        f"{old.clock.tsc_step_ticks:g}, the spacing of back-to-back reads, {spacing:g} here).",
        f"Core cycles per tick {cpt:.4f} +- {cpt_ci95:.4f} for every result: the register-register "
        f"add ruler measured on the host just before ({BEFORE}) and after ({AFTER}) the run; 0.4.0 "
        f"recorded {old.clock.cycles_per_tick:.2f} from a chain of immediate adds, which this core "
        f"folds at rename ({judged.immediate_adds_per_core_cycle:.1f} per core cycle).",
        "Harness correction and self-test removed: 0.4.0 calibrated both on the folded chains.",
    )
    return dataclasses.replace(
        old, clock=clock, results=results, selftest=None, notes=notes,
        label="Intel Xeon family 6 model 207 KVM guest, 2 vCPUs")


NAME_167 = "intel-xeon-family6-model167-kvm-guest.json"
#: A level of the core clock: a value (core cycles per tick, to 0.001) held by
#: at least LEVEL_SHARE of the trace's samples in which the add and imul
#: rulers agree within LEVEL_AGREE (no hop inside the sample); values within
#: LEVEL_MERGE of each other are one level.
LEVEL_SHARE, LEVEL_AGREE, LEVEL_MERGE = 0.01, 0.005, 0.0025


def clock_levels(npz: Path) -> tuple[float, ...]:
    """The levels the host's core clock took in its trace (core cycles per
    TSC tick, lowest first): ``intel-xeon-family6-model167-drift.npz``,
    add and imul chains every 20 ms for 60 s."""
    z = np.load(npz)
    add, imul = z["add_cycles_per_tick"], z["imul_cycles_per_tick"]
    steady = np.round(add[np.abs(add - imul) <= LEVEL_AGREE * add], 3)
    values, counts = np.unique(steady, return_counts=True)
    held = values[counts >= LEVEL_SHARE * len(steady)]  # values the clock sat at, to 0.001
    # neighbours within LEVEL_MERGE are one level read either side of a rounding
    levels = np.split(held, np.flatnonzero(np.diff(held) > LEVEL_MERGE) + 1)
    return tuple(round(float(g.mean()), 3) for g in levels)


def rederive_167(hosts: Path) -> fastcpu.Results:
    """The family 6 model 167 host's file, its core cycles from the rulers
    recorded with each result.

    fastcpu 0.6.0 recorded, beside the raw ticks, two kinds of ruler there:
    the clock's (register-register adds and imuls, timed once at first use)
    and each result's own brackets (add chains timed just before and just
    after its runs, ``cycles_per_tick`` +- ``cycles_per_tick_ci95``). That
    host's core clock hops between 100 MHz steps every 20-200 ms
    (``intel-xeon-family6-model167.md``), so the clock's one figure is up to
    7% off for a result measured later; each result's brackets are its own.
    This keeps every result's brackets, and gives the one result measured
    without brackets of its own (a child process's, whose brackets the file
    does not hold: its figure is the clock's, +- 0) the whole span of the
    levels the host's clock took (``clock_levels``): its core cycles are
    known only that far. Raw ticks, machine facts, the self-test and dates
    are kept; no harness correction (0.6.0's self-test failed there, so none
    was applied).
    """
    old = fastcpu.load(hosts / NAME_167)
    levels = clock_levels(hosts / "intel-xeon-family6-model167-drift.npz")
    low, high = levels[0], levels[-1]
    first_use = old.clock.cycles_per_tick
    hops = (f"the host's core clock hops between {len(levels)} levels, {low:.3f} to {high:.3f} core cycles "
            "per tick, every 20-200 ms (../shared/hosts/intel-xeon-family6-model167.md)")
    results = {}
    unbracketed = []
    for name, r in old.results.items():
        caveats = tuple(r.caveats)
        if r.cycles_per_tick == first_use and r.cycles_per_tick_ci95 == 0:
            unbracketed.append(name)
            r = dataclasses.replace(r, cycles_per_tick=(low + high) / 2, cycles_per_tick_ci95=(high - low) / 2)
            caveats += (f"core cycles known only within the core clock's levels: measured in a child process "
                        f"whose brackets the file does not hold, and {hops}",)
        results[name] = dataclasses.replace(r, caveats=caveats)
    own = [r.cycles_per_tick for n, r in results.items() if n not in unbracketed]
    notes = (
        f"Re-derived by data/rederive_intel.py from the file fastcpu {old.fastcpu_version} wrote on this host at "
        f"{old.date}: raw TSC ticks, machine facts, the self-test and the dates unchanged.",
        f"Core cycles: each result converts with its own brackets, register-register add chains timed just "
        f"before and after its runs ({len(own)} results, {min(own):.3f} to {max(own):.3f} core cycles per tick). "
        f"The clock's {first_use:.3f} is its first-use ruler only: {hops}, so no one figure holds for the file.",
        f"{', '.join(unbracketed) or 'No result'} ran in a child process whose brackets the file does not hold: "
        f"its core cycles per tick are the middle of those levels, +- half their span.",
        "No harness correction: the self-test stored with the file failed on this host (its own conversion "
        "did not follow the hopping clock), so 0.6.0 applied none.",
    )
    return dataclasses.replace(old, results=results, notes=notes,
                               label="Intel Xeon family 6 model 167 KVM guest, 2 vCPUs")


#: what the script reads: the raw readings of the two Intel hosts, which this repository does not ship
INPUTS = (NAME, "intel-xeon-family6-model207-rulers.npz", NAME_167, "intel-xeon-family6-model167-drift.npz")


if __name__ == "__main__":
    hosts = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/hosts")
    missing = [name for name in INPUTS if not (hosts / name).is_file()]
    if missing:
        sys.exit(f"rederive_intel.py: {hosts} lacks {', '.join(missing)}. This script re-derives the Intel "
                 "files from raw readings that are not shipped with this repository (the hosts' own result "
                 "files and ruler traces, kept beside the development checkout); pass the folder that holds "
                 "them. The committed files in data/ and tests/data/ are its output.")
    here = Path(__file__).parent
    recorded_167 = here.parent / "tests" / "data" / "intel-xeon-family6-model167-0.6.0-rederived.json"
    for out, make in ((here / NAME, rederive), (recorded_167, rederive_167)):
        made = make(hosts)
        # a file already holding what the script makes is left as it is (its bytes, its format version)
        if not out.exists() or fastcpu.load(out) != made:
            made.save(out, overwrite=True)
            print(f"wrote {out}")
