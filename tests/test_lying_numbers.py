"""Argument checks that trust the argument (issue 28, item 11): an int (or
float) subclass whose comparisons always say yes, or always no, must not
pass a range check. Every integer and number parameter of every public
function is fed such a value out of its range and must be refused with a
ValueError, at once; the sweep below fails when a public function gains a
numeric parameter no row covers.

The calls run in a child process with an alarm per call and a timeout on the
whole: before the fix selftest(rounds=...) measured on and on."""

import inspect
import json
import subprocess
import sys
import textwrap

import fastcpu
from fastcpu import noise, plot

#: (name, call): each call gets a lying number out of its parameter's range
#: as LIAR and must raise ValueError. `res` is a small Results, `r` one of its
#: BenchResults, `model` a NoiseModel, `code` a CodeBlock.
CASES = {
    "bench.runs": "fastcpu.bench('empty', LIAR(0))",
    "bench.unroll": "fastcpu.bench('empty', 10, unroll=LIAR(0))",
    "bench.cpu": "fastcpu.bench('empty', 10, cpu=LIAR(-1))",
    "bench.method": "fastcpu.bench(LIAR(0), 10)",
    "bench_diff.runs": "fastcpu.bench_diff('empty', LIAR(0))",
    "bench_diff.k": "fastcpu.bench_diff('empty', 10, k=LIAR(1))",
    "bench_diff.cpu": "fastcpu.bench_diff('empty', 10, cpu=LIAR(-1))",
    "bench.timeout": "fastcpu.bench(fastcpu._core.user_empty(), 10, timeout=LIAR(0))",
    "bench_diff.timeout": "fastcpu.bench_diff(fastcpu._core.user_empty(), 10, timeout=LIAR(0))",
    "measure.runs": "fastcpu.measure(LIAR(0), ['empty'])",
    "measure.unroll": "fastcpu.measure(10, ['empty'], unroll=LIAR(0))",
    "measure.cpu": "fastcpu.measure(10, ['empty'], cpu=LIAR(-1))",
    "selftest.runs": "fastcpu.selftest(runs=LIAR(0), rounds=1)",
    "selftest.rounds": "fastcpu.selftest(runs=10, rounds=LIAR(10**9))",
    "selftest.cpu": "fastcpu.selftest(runs=10, rounds=1, cpu=LIAR(-1))",
    "check.cpus": "fastcpu.check(['empty'], cpus=[LIAR(-1)])",
    "compare.confidence": "fastcpu.compare(res, confidence=LIAR(2))",
    "BenchResult.from_arrays.unroll": "fastcpu.BenchResult.from_arrays(method='m', serialize='lfence', "
        "unroll=LIAR(0), cpu=None, raw=[5], empty=[1], migrated=[False], clock=res.clock)",
    "BenchResult.from_arrays.cpu": "fastcpu.BenchResult.from_arrays(method='m', serialize='lfence', "
        "unroll=1, cpu=LIAR(-1), raw=[5], empty=[1], migrated=[False], clock=res.clock)",
    "BenchResult.with_harness_bias.bias_core_cycles": "r.with_harness_bias(LIAR(10**7), 0.0)",
    "BenchResult.with_harness_bias.ci95_core_cycles": "r.with_harness_bias(0.0, LIAR(-1))",
    "BenchResult.with_harness_correction.bias_core_cycles": "r.with_harness_correction(LIAR(10**7), 0.0, 0.0, ())",
    "BenchResult.with_harness_correction.ci95_core_cycles": "r.with_harness_correction(0.0, LIAR(-1), 0.0, ())",
    "BenchResult.with_harness_correction.resolution_core_cycles":
        "r.with_harness_correction(0.0, 0.0, LIAR(-1), ())",
    "Clock.tsc_hz": "fastcpu.Clock(LIAR(0), 1.0, 1.0)",
    "Clock.tsc_step_ticks": "fastcpu.Clock(1e9, LIAR(0), 1.0)",
    "Clock.cycles_per_tick": "fastcpu.Clock(1e9, 1.0, LIAR(-1))",
    "Clock.tsc_read_spacing_ticks": "fastcpu.Clock(1e9, 1.0, 1.0, LIAR(-1))",
    "CodeBlock.hex_lines.width": "code.hex_lines(LIAR(0))",
    "plot.counts.tail": "plot.counts(r, tail=LIAR(2))",
    "plot.distributions.ncols": "plot.distributions(res, ncols=LIAR(0))",
    "plot.distributions.tail": "plot.distributions(res, tail=LIAR(2))",
    "plot.ecdf.upto": "plot.ecdf(res, upto=LIAR(2))",
    "plot.ecdf_groups.upto": "plot.ecdf_groups(res, upto=LIAR(2))",
    "plot.ecdf_groups.ncols": "plot.ecdf_groups(res, ncols=LIAR(0))",
    "plot.ecdf_machines.upto": "plot.ecdf_machines([res], r.method, upto=LIAR(2))",
    "plot.machines.ncols": "plot.machines([res], ncols=LIAR(0))",
    "NoiseModel.step_ticks": "noise.NoiseModel(step_ticks=LIAR(0))",
    "NoiseModel.overhead_ticks": "noise.NoiseModel(overhead_ticks=LIAR(-1))",
    "NoiseModel.jitter_ticks": "noise.NoiseModel(jitter_ticks=LIAR(-1))",
    "NoiseModel.interrupt_rate": "noise.NoiseModel(interrupt_rate=LIAR(2))",
    "NoiseModel.interrupt_ticks": "noise.NoiseModel(interrupt_ticks=LIAR(-1))",
    "NoiseModel.shadow_ticks": "noise.NoiseModel(shadow_ticks=LIAR(-1))",
    "NoiseModel.durations.work_ticks": "model.simulate(LIAR(-1), 10)",
    "NoiseModel.durations.runs": "model.durations(1.0, LIAR(0), numpy.random.default_rng(0))",
    "NoiseModel.simulate.true_ticks": "model.simulate(LIAR(-1), 10)",
    "NoiseModel.simulate.runs": "model.simulate(1.0, LIAR(0))",
    "NoiseModel.simulate.unroll": "model.simulate(1.0, 10, unroll=LIAR(0))",
    "NoiseModel.simulate.seed": "model.simulate(1.0, 10, seed=LIAR(-1))",
    "noise.recovery.true_ticks": "noise.recovery(model, [LIAR(-1)], runs=10)",
    "noise.recovery.runs": "noise.recovery(model, [1.0], runs=LIAR(0))",
    "noise.recovery.unroll": "noise.recovery(model, [1.0], runs=10, unroll=LIAR(0))",
    "noise.recovery.seed": "noise.recovery(model, [1.0], runs=10, seed=LIAR(-1))",
    "noise.p4_held_out.runs": "noise.p4_held_out(model, runs=LIAR(0))",
    "noise.p4_held_out.seed": "noise.p4_held_out(model, runs=10, seed=LIAR(-1))",
    "noise.shadow_verdict.single": "noise.shadow_verdict((LIAR(2), 1.0), (0.0, 1.0))",
    "noise.shadow_verdict.back_to_back": "noise.shadow_verdict((0.0, 1.0), (LIAR(2), 1.0))",
    "P4Figure.core_cycles": "noise.P4Figure('x', LIAR(-1), 0.0, 1.0, 's')",
    "P4Figure.seed_low_core_cycles": "noise.P4Figure('x', 1.0, LIAR(-1), 1.0, 's')",
    "P4Figure.seed_high_core_cycles": "noise.P4Figure('x', 1.0, 0.0, LIAR(-1), 's')",
}

#: Numeric parameters that take any value (no range to lie past), or that a
#: record type holds as given (the types fastcpu builds and returns), and why.
EXEMPT = {
    "Clock.ticks_to_ns.ticks": "a conversion: any count converts",
    "Clock.ticks_to_core_cycles.ticks": "a conversion: any count converts",
    "BenchResult.ticks_to_ns.ticks": "a conversion: any count converts",
    "BenchResult.ticks_to_core_cycles.ticks": "a conversion: any count converts",
    "DiffResult.ticks_to_ns.ticks": "a conversion: any count converts",
    "DiffResult.ticks_to_core_cycles.ticks": "a conversion: any count converts",
    "selftest.progress": "a callback, not a number",
}

#: Where public functions and methods taking numbers live.
SURFACES = [("", fastcpu, fastcpu.__all__), ("plot.", plot, plot.__all__), ("noise.", noise, noise.__all__)]
CLASSES_CHECKED = {"BenchResult", "DiffResult", "Clock", "NoiseModel", "P4Figure"}


def _numeric_parameters():
    """Every int or float parameter of every public function, and of the
    constructors and methods of the classes whose values are checked."""
    found = set()
    for prefix, mod, names in SURFACES:
        for name in names:
            obj = getattr(mod, name)
            targets = []
            if inspect.isfunction(obj):
                targets.append((f"{prefix}{name}", obj))
            elif inspect.isclass(obj) and name in CLASSES_CHECKED:
                targets.append((name, obj))
                targets += [(f"{name}.{m}", getattr(obj, m)) for m, v in vars(obj).items()
                            if not m.startswith("_") and (inspect.isfunction(v) or isinstance(v, classmethod))]
                targets += [(f"{name}.{m}", getattr(obj, m)) for m in ("ticks_to_ns", "ticks_to_core_cycles")
                            if hasattr(obj, m)]
            for where, f in targets:
                for p in inspect.signature(f).parameters.values():
                    ann = str(p.annotation)
                    if "int" in ann or "float" in ann:
                        found.add(f"{where}.{p.name}".replace("noise.NoiseModel", "NoiseModel")
                                  .replace("noise.P4Figure", "P4Figure"))
    return found


def test_every_numeric_parameter_has_a_row():
    found = _numeric_parameters()
    # a constructor of a checked class lists its fields; rows name them by field
    for cls in ("BenchResult", "DiffResult"):
        found = {f for f in found if not (f.startswith(f"{cls}.") and f.count(".") == 1)}
    # from_arrays's figures are checked with item 4's fields
    covered = set(CASES) | set(EXEMPT) | {
        f for f in found if f.startswith("BenchResult.from_arrays.") or f.startswith("DiffResult.from_arrays.")}
    missing = sorted(found - covered)
    assert not missing, f"numeric parameters no row feeds a lying number: {missing}"


CHILD = textwrap.dedent(r'''
    import json, signal, sys, warnings
    import numpy
    import matplotlib
    matplotlib.use("Agg")
    import fastcpu
    from fastcpu import noise, plot
    from fastcpu.instrument.show import CodeBlock

    class Yes(int):
        """An int whose every comparison says yes."""
        def _yes(self, other):
            return True
        __lt__ = __le__ = __gt__ = __ge__ = __eq__ = _yes
        def __ne__(self, other):
            return True
        __hash__ = int.__hash__

    class No(int):
        """An int whose every comparison says no."""
        def _no(self, other):
            return False
        __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _no
        __hash__ = int.__hash__

    warnings.simplefilter("ignore")
    model = noise.NoiseModel(step_ticks=2.0)
    r = model.simulate(40.0, 200, seed=1)
    res = fastcpu.Results({r.method: r}, {}, fastcpu.Clock(r.tsc_hz, r.tsc_step_ticks, r.cycles_per_tick),
                          r.serialize, "2026-01-01T00:00:00Z", label="x")
    code = CodeBlock("f", 0x1000, 0x1000, b"\x90" * 8, None)

    def timeout(*_):
        raise TimeoutError("ran past its alarm")

    signal.signal(signal.SIGALRM, timeout)
    out = {}
    for name, call in json.loads(sys.argv[1]).items():
        for LIAR in (Yes, No):
            signal.alarm(20)
            try:
                eval(call)
                got = "returned"
            except BaseException as exc:
                got = f"{type(exc).__name__}: {str(exc)[:200]}"
            finally:
                signal.alarm(0)
            out[f"{name} ({LIAR.__name__})"] = got
    print(json.dumps(out))
''')


def test_lying_numbers_are_refused():
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(CASES)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    wrong = {k: v for k, v in got.items() if not v.startswith("ValueError")}
    assert not wrong, "a lying number was not refused with ValueError:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(wrong.items()))
