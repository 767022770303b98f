/*
 * module.c: fastcpu._core, how Python sees the timing core. Arguments are
 * checked here (again: fastcpu's Python layer checks first, with friendlier
 * messages), arrays are numpy arrays created here and filled with the GIL
 * released. How they are filled (what is paired with what, warm-up, chunks
 * short enough for Ctrl-C, the PMU counter's retries) is harness.c's; what
 * can run here is features.c's. This file parses, calls and converts.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastcpu.h"

#if !defined(__x86_64__) || !defined(__linux__)
#error "fastcpu times x86-64 instructions under Linux; this platform is neither"
#endif

#define FC_RUNS_MAX 100000000L   /* 10^8 runs: 1.7 GB of arrays */
#define FC_UNROLL_MAX 65536L

/* getcpu_node() hands out one (cpu, node) tuple per CPU, built on first
 * use: a tuple is immutable, and building one per call would double the
 * cost of the call. */
#define FC_PAIRS 4096 /* the CPUs that cpu | node << 12 can name */

/* The names bench_result() sets (a BenchResult's fields, in the order of
 * BenchResult.from_arrays()) and reads, interned once. */
enum name_id {
    N_METHOD, N_RUNS, N_SERIALIZE, N_UNROLL, N_CPU, N_RAW, N_EMPTY, N_MIGRATED, N_BEST,
    N_MEDIAN, N_TSC_HZ, N_CYCLES_PER_TICK, N_TSC_STEP_TICKS, N_COUNTER, N_HARNESS_BIAS,
    N_HARNESS_BIAS_CI95, N_CYCLES_PER_TICK_CI95, N_CAVEATS,
    N_FIELDS,
    N_BIAS_TICKS = N_FIELDS, N_CI95_TICKS, N_TSC,
    N_NAMES
};

static const char *const name_text[N_NAMES] = {
    [N_METHOD] = "method", [N_RUNS] = "runs", [N_SERIALIZE] = "serialize",
    [N_UNROLL] = "unroll", [N_CPU] = "cpu", [N_RAW] = "raw", [N_EMPTY] = "empty",
    [N_MIGRATED] = "migrated", [N_BEST] = "best", [N_MEDIAN] = "median",
    [N_TSC_HZ] = "tsc_hz", [N_CYCLES_PER_TICK] = "cycles_per_tick",
    [N_TSC_STEP_TICKS] = "tsc_step_ticks", [N_COUNTER] = "counter",
    [N_HARNESS_BIAS] = "harness_bias_core_cycles",
    [N_HARNESS_BIAS_CI95] = "harness_bias_ci95_core_cycles",
    [N_CYCLES_PER_TICK_CI95] = "cycles_per_tick_ci95", [N_CAVEATS] = "caveats",
    [N_BIAS_TICKS] = "bias_ticks", [N_CI95_TICKS] = "ci95_ticks", [N_TSC] = "tsc",
};

typedef struct {
    PyObject *error;       /* fastcpu.Error, a RuntimeError */
    PyObject *unsupported; /* fastcpu.Unsupported, an Error */
    PyObject *names[N_NAMES];
    PyObject *pairs[FC_PAIRS];
} core_state;

static inline core_state *get_state(PyObject *module)
{
    return (core_state *)PyModule_GetState(module);
}

static int parse_serialize(const char *name, enum fc_serialize *out)
{
    for (int i = 0; i < FC_SER_COUNT; i++) {
        if (strcmp(name, fc_serialize_names[i]) == 0) {
            *out = (enum fc_serialize)i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "unknown serialize mode '%s': use 'lfence', 'cpuid' or 'rdtscp'", name);
    return -1;
}

static int check_counts(Py_ssize_t runs, long unroll)
{
    if (runs < 1 || runs > FC_RUNS_MAX) {
        PyErr_Format(PyExc_ValueError, "runs must be between 1 and %ld, not %zd",
                     FC_RUNS_MAX, runs);
        return -1;
    }
    if (unroll < 1 || unroll > FC_UNROLL_MAX) {
        PyErr_Format(PyExc_ValueError, "unroll must be between 1 and %ld, not %ld",
                     FC_UNROLL_MAX, unroll);
        return -1;
    }
    return 0;
}

/* An int argument within low..high, or -1 with ValueError/TypeError set:
 * never wrapped round (the "I" and "K" formats would take -1 as 2^32 - 1). */
static int parse_bounded(PyObject *obj, const char *name, long low, long high, long *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long v = PyLong_AsLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < low || v > high) {
        PyErr_Format(PyExc_ValueError, "%s must be between %ld and %ld, not %R", name, low,
                     high, obj);
        return -1;
    }
    *out = v;
    return 0;
}

/* A user function's address: an int in 1..2^64-1 that lies in an
 * executable mapping of this process (/proc/self/maps), or -1 with
 * ValueError/TypeError/OSError set. The mapping could still go away before
 * the call (another thread unloading its library): that is the caller's
 * to avoid. */
static int parse_user_address(PyObject *obj, uintptr_t *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "a function address must be an int, not %s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    unsigned long long address = PyLong_AsUnsignedLongLong(obj);
    if (address == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
        address = 0; /* negative or too large: refused below */
    }
    if (address == 0) {
        PyErr_Format(PyExc_ValueError, "a function address must be in 1..2**64-1, not %R", obj);
        return -1;
    }
    int found;
    Py_BEGIN_ALLOW_THREADS
    found = fc_address_executable((uintptr_t)address);
    Py_END_ALLOW_THREADS
    if (found < 0) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, "/proc/self/maps");
        return -1;
    }
    if (!found) {
        char hex[24];
        snprintf(hex, sizeof hex, "0x%llx", address);
        PyErr_Format(PyExc_ValueError,
                     "address %s is not in an executable mapping of this process "
                     "(/proc/self/maps): pass the address of a C function, not of data",
                     hex);
        return -1;
    }
    *out = (uintptr_t)address;
    return 0;
}

/* Unsupported unless this process can time anything (harness.c). */
static int check_timer(core_state *st)
{
    const char *why = fc_timer_unavailable();
    if (why) {
        PyErr_SetString(st->unsupported, why);
        return -1;
    }
    return 0;
}

static const struct fc_method *lookup(core_state *st, const char *name)
{
    const struct fc_method *m = fc_method_find(name);
    if (!m) {
        PyErr_Format(PyExc_ValueError, "unknown method %s", name);
        return NULL;
    }
    /* the first call may fork a probe child and wait for it */
    const char *why;
    Py_BEGIN_ALLOW_THREADS
    why = fc_method_unavailable(m);
    Py_END_ALLOW_THREADS
    if (why) {
        PyErr_Format(st->unsupported, "%s: %s", m->name, why);
        return NULL;
    }
    return m;
}

/* counter='tsc' (the default) or 'pmu': the core-cycle counter via rdpmc,
 * opened for this thread here. */
static int parse_clock(core_state *st, const char *clock, struct fc_pair *pair)
{
    if (strcmp(clock, "tsc") == 0)
        return 0;
    if (strcmp(clock, "pmu") != 0) {
        PyErr_Format(PyExc_ValueError, "unknown counter '%s': use 'tsc' or 'pmu'", clock);
        return -1;
    }
    if (pair->serialize == FC_SER_RDTSCP) {
        PyErr_SetString(PyExc_ValueError,
                        "serialize='rdtscp' reads the TSC: with counter='pmu' use "
                        "'lfence' or 'cpuid'");
        return -1;
    }
    enum fc_pmu_scope scope;
    const char *why;
    if (fc_pmu_open(&scope, &why) < 0) {
        PyErr_Format(st->unsupported, "counter='pmu': %s", why);
        return -1;
    }
    pair->pmu = true;
    return 0;
}

/* Three arrays of `runs` values, created together. */
struct run_arrays {
    PyArrayObject *raw, *empty, *migrated;
};

static void drop_arrays(struct run_arrays *a)
{
    Py_CLEAR(a->raw);
    Py_CLEAR(a->empty);
    Py_CLEAR(a->migrated);
}

/* Time `pair` for `runs` runs into new arrays (harness.c's session); 0, or
 * -1 with an exception set (the arrays dropped). The GIL is released for
 * each chunk and signals looked for after it, so Ctrl-C waits for a chunk
 * and one run at most. */
static int measure_pair(core_state *st, const struct fc_pair *pair, Py_ssize_t runs,
                        struct run_arrays *out)
{
    npy_intp dims[1] = {runs};
    out->raw = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT64);
    out->empty = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT64);
    out->migrated = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (!out->raw || !out->empty || !out->migrated)
        goto fail;
    struct fc_run_buffers bufs = {PyArray_DATA(out->raw), PyArray_DATA(out->empty),
                                  PyArray_DATA(out->migrated)};
    struct fc_session session;
    fc_session_init(&session, pair, bufs, (size_t)runs);
    enum fc_step step;
    do {
        Py_BEGIN_ALLOW_THREADS
        step = fc_session_step(&session);
        Py_END_ALLOW_THREADS
        if (step == FC_STEP_UNSUPPORTED || step == FC_STEP_FAILED) {
            PyErr_SetString(step == FC_STEP_UNSUPPORTED ? st->unsupported : st->error,
                            session.why);
            goto fail;
        }
        if (PyErr_CheckSignals() < 0)
            goto fail;
    } while (step != FC_STEP_DONE);
    return 0;

fail:
    drop_arrays(out);
    return -1;
}

/* What to time: a catalog row (`*m`, found and available) for a str, or a
 * user function (`*user`) for an int address; -1 with an exception set. */
static int parse_target(core_state *st, PyObject *target, const struct fc_method **m,
                        fc_user_fn *user)
{
    *m = NULL;
    *user = NULL;
    if (PyUnicode_Check(target)) {
        const char *name = PyUnicode_AsUTF8(target);
        return name && (*m = lookup(st, name)) ? 0 : -1;
    }
    if (PyLong_Check(target)) {
        uintptr_t address;
        if (parse_user_address(target, &address) < 0)
            return -1;
        *user = (fc_user_fn)address;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "method must be a str or an int address, not %s",
                 Py_TYPE(target)->tp_name);
    return -1;
}

/* The pair could not be built (harness.c said why): Unsupported. */
static int pair_refused(core_state *st, const struct fc_method *m, const char *why)
{
    if (!why)
        return 0;
    PyErr_Format(st->unsupported, "%s %s", m->name, why);
    return -1;
}

PyDoc_STRVAR(bench_doc,
"bench($module, method, runs, serialize, unroll, counter='tsc', /)\n--\n\n"
"Time `runs` runs of a built-in method (its name) against the empty\n"
"sequence, or of a user function `unsigned fn(void)` (its int address)\n"
"against an empty function called the same way (an indirect call).\n\n"
"Returns (raw, empty, migrated, best, median): two uint64 arrays of TSC\n"
"ticks per run (harness included), a bool array of migrations, and\n"
"min(raw) - min(empty) and median(raw) - median(empty) per copy, in TSC\n"
"ticks. With counter='pmu' every figure is in core cycles of the PMU\n"
"counter instead. Raises fastcpu.Unsupported when the method (or the\n"
"clock) cannot run here; ValueError unless an address lies in an\n"
"executable mapping of this process.");

/* Chains a bracket may time: bounded so that a wrong argument cannot spin
 * for minutes with the GIL released. */
#define FC_CHAIN_BLOCKS_MAX (1L << 20)

static PyObject *ticks_tuple(const uint64_t *ticks, long count)
{
    PyObject *out = PyTuple_New((Py_ssize_t)count);
    if (!out)
        return NULL;
    for (long i = 0; i < count; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(ticks[i]);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, v);
    }
    return out;
}

/* How bench_bracketed() times its brackets (0 chains: bench(), none). */
struct bracket_args {
    uint32_t blocks, chains;
    double fixed_ticks, tolerance, resolution;
};

/* What one measurement gave: the arrays, best and median per copy (TSC
 * ticks, or core cycles on the PMU; bench()'s pairs only), and with brackets
 * the core cycles per tick at the moment and its 95% half-width. */
struct measured {
    struct run_arrays a;
    double best, median, cycles_per_tick, ci95;
};

/* What to measure: `target` against the empty sequence, `copies` copies a
 * run (bench()), or 2k copies against k (bench_diff(), `copies` = k); the
 * counter `clock`. 0, or -1 with an exception set. */
static int build_pair(core_state *st, PyObject *target, Py_ssize_t runs, const char *ser_name,
                      long copies, bool diff, const char *clock, struct fc_pair *pair)
{
    const struct fc_method *m;
    fc_user_fn user;
    *pair = (struct fc_pair){0};
    if (check_counts(runs, diff ? 1 : copies) < 0 || parse_serialize(ser_name, &pair->serialize) < 0)
        return -1;
    /* k = 1 would time the short side without the loop the long side runs:
     * the harness would no longer cancel */
    if (diff && (copies < 2 || copies > FC_UNROLL_MAX / 2)) {
        PyErr_Format(PyExc_ValueError, "k must be between 2 and %ld, not %ld",
                     FC_UNROLL_MAX / 2, copies);
        return -1;
    }
    if (check_timer(st) < 0 || parse_target(st, target, &m, &user) < 0 ||
        parse_clock(st, clock, pair) < 0)
        return -1;
    const char *why = diff ? fc_pair_diff(pair, m, user, (uint32_t)copies)
                           : fc_pair_against_empty(pair, m, user, (uint32_t)copies);
    return pair_refused(st, m, why);
}

/* Time `pair` for `runs` runs, between brackets when `br` has chains: the
 * opening one (the last closing one when it is recent, else timed now), the
 * runs, the closing one straight after them in the same GIL release as best
 * and median, and the core cycles per tick from both, held against this
 * thread's recent brackets (bracket.c). 0, or -1 with an exception set. */
static int measure(core_state *st, const struct fc_pair *pair, Py_ssize_t runs,
                   const struct bracket_args *br, bool best_median, struct measured *out)
{
    double recent[FC_BRACKET_SAMPLES_MAX], before[FC_BRACKET_CHAINS_MAX],
        after[FC_BRACKET_CHAINS_MAX];
    size_t n_recent = 0;
    uint32_t n_before = 0;
    if (br->chains) {
        uint64_t now = fc_monotonic_ns();
        int cpu = fc_current_cpu();
        n_recent = fc_bracket_recent(now, cpu, recent);
        n_before = fc_bracket_reusable(now, cpu, before);
        if (!n_before) {
            Py_BEGIN_ALLOW_THREADS
            fc_bracket_chains(br->blocks, br->chains, br->fixed_ticks, before);
            Py_END_ALLOW_THREADS
            n_before = br->chains;
            fc_bracket_remember(before, n_before, fc_monotonic_ns(), fc_current_cpu(), false);
        }
    }
    if (measure_pair(st, pair, runs, &out->a) < 0)
        return -1;
    struct fc_run_buffers bufs = {PyArray_DATA(out->a.raw), PyArray_DATA(out->a.empty), NULL};
    out->best = out->median = out->cycles_per_tick = out->ci95 = NAN;
    Py_BEGIN_ALLOW_THREADS
    if (br->chains)
        fc_bracket_chains(br->blocks, br->chains, br->fixed_ticks, after);
    if (best_median)
        fc_best_median(&bufs, (size_t)runs, pair->method_copies, &out->best, &out->median);
    Py_END_ALLOW_THREADS
    if (br->chains) {
        fc_bracket_remember(after, br->chains, fc_monotonic_ns(), fc_current_cpu(), true);
        fc_bracket_figure(before, n_before, after, br->chains, recent, n_recent, br->tolerance,
                          br->resolution, &out->cycles_per_tick, &out->ci95);
    }
    return 0;
}

/* bench()'s measurement of `target`, `unroll` copies a run against the
 * empty sequence. */
static int measure_bench(PyObject *module, PyObject *target, Py_ssize_t runs,
                         const char *ser_name, long unroll, const char *clock,
                         const struct bracket_args *br, struct measured *out)
{
    core_state *st = get_state(module);
    struct fc_pair pair;
    if (build_pair(st, target, runs, ser_name, unroll, false, clock, &pair) < 0)
        return -1;
    return measure(st, &pair, runs, br, true, out);
}

static PyObject *core_bench(PyObject *module, PyObject *args)
{
    PyObject *target;
    const char *ser_name, *clock = "tsc";
    Py_ssize_t runs;
    long unroll;
    if (!PyArg_ParseTuple(args, "Onsl|s:bench", &target, &runs, &ser_name, &unroll, &clock))
        return NULL;
    const struct bracket_args none = {0};
    struct measured r;
    if (measure_bench(module, target, runs, ser_name, unroll, clock, &none, &r) < 0)
        return NULL;
    return Py_BuildValue("NNNdd", r.a.raw, r.a.empty, r.a.migrated, r.best, r.median);
}

PyDoc_STRVAR(bench_bracketed_doc,
"bench_bracketed($module, method, runs, serialize, unroll, blocks, chains,\n"
"                fixed_ticks, tolerance, resolution, /)\n--\n\n"
"bench() on the TSC between two brackets of `chains` chains of `blocks` x 100\n"
"dependent register-register adds (a short warm-up chain first), the timer's `fixed_ticks`\n"
"taken off each. The opening bracket is this thread's last closing one when\n"
"that was taken on this CPU within BRACKET_REUSE_NS, else timed now; the\n"
"closing one is timed straight after the runs. Both are kept among this\n"
"thread's recent brackets, which the figure is held against with the\n"
"disturbance tolerance `tolerance` and the chains' `resolution` (as\n"
"bracket_figure).\n\n"
"Returns (raw, empty, migrated, best, median, cycles_per_tick, ci95):\n"
"bench()'s five, then core cycles per TSC tick at the moment of the runs\n"
"and its 95% half-width.");

/* The brackets' arguments: blocks and chains in range, the fixed cost finite
 * and >= 0, the tolerance and the resolution fractions; 0, or -1 with
 * ValueError/TypeError. */
static int parse_brackets(PyObject *blocks_obj, PyObject *chains_obj, double fixed_ticks,
                          double tolerance, double resolution, struct bracket_args *br)
{
    long blocks, chains;
    if (parse_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0 ||
        parse_bounded(chains_obj, "chains", 1, FC_BRACKET_CHAINS_MAX, &chains) < 0)
        return -1;
    if (!(fixed_ticks >= 0 && isfinite(fixed_ticks))) {
        PyErr_Format(PyExc_ValueError, "fixed_ticks must be finite and >= 0, not %g",
                     fixed_ticks);
        return -1;
    }
    if (!(tolerance >= 0 && tolerance < 1)) {
        PyErr_Format(PyExc_ValueError, "tolerance must be a fraction in [0, 1), not %g",
                     tolerance);
        return -1;
    }
    if (!(resolution >= 0 && resolution < 1)) {
        PyErr_Format(PyExc_ValueError, "resolution must be a fraction in [0, 1), not %g",
                     resolution);
        return -1;
    }
    *br = (struct bracket_args){(uint32_t)blocks, (uint32_t)chains, fixed_ticks, tolerance,
                                resolution};
    return 0;
}

/* bench_bracketed() (`diff` false: `copies` is unroll) and
 * bench_diff_bracketed() (`diff`: `copies` is k): the same arguments, the
 * same brackets. */
static PyObject *bracketed_call(PyObject *module, PyObject *args, bool diff)
{
    PyObject *target, *blocks_obj, *chains_obj;
    const char *ser_name;
    Py_ssize_t runs;
    long copies;
    double fixed_ticks, tolerance, resolution;
    core_state *st = get_state(module);
    struct bracket_args br;
    struct fc_pair pair;
    struct measured r;
    if (!PyArg_ParseTuple(args, diff ? "OnslOOddd:bench_diff_bracketed" : "OnslOOddd:bench_bracketed",
                          &target, &runs, &ser_name, &copies, &blocks_obj, &chains_obj,
                          &fixed_ticks, &tolerance, &resolution) ||
        parse_brackets(blocks_obj, chains_obj, fixed_ticks, tolerance, resolution, &br) < 0 ||
        build_pair(st, target, runs, ser_name, copies, diff, "tsc", &pair) < 0 ||
        measure(st, &pair, runs, &br, !diff, &r) < 0)
        return NULL;
    if (diff)
        return Py_BuildValue("NNNdd", r.a.raw, r.a.empty, r.a.migrated, r.cycles_per_tick, r.ci95);
    return Py_BuildValue("NNNdddd", r.a.raw, r.a.empty, r.a.migrated, r.best, r.median,
                         r.cycles_per_tick, r.ci95);
}

static PyObject *core_bench_bracketed(PyObject *module, PyObject *args)
{
    return bracketed_call(module, args, false);
}

PyDoc_STRVAR(bench_result_doc,
"bench_result($module, result_type, clock, name, runs, serialize, unroll,\n"
"             blocks, chains, fixed_ticks, correction, /)\n--\n\n"
"fastcpu.bench()'s common call in one: bench_bracketed() of the method\n"
"`name` on the TSC, with the disturbance tolerance of `clock` (a\n"
"fastcpu.Clock), and the result built here: a `result_type`\n"
"(fastcpu.BenchResult) with every field BenchResult.from_arrays() sets,\n"
"cpu None. `correction` (a harness-bias Correction: bias_ticks, ci95_ticks,\n"
"cycles_per_tick) is converted at the core clock around the runs, as\n"
"Correction.core_cycles() does; None: uncorrected.\n\n"
"Returns None, measuring nothing, unless `runs` and `unroll` are ints in\n"
"range and `serialize` names a mode: bench()'s checked path then says\n"
"what is wrong.");

/* An int (not a bool, not a subclass) within low..high into *out: the
 * plain call's; anything else is left to bench()'s checks. */
static bool plain_int(PyObject *obj, long low, long high, long *out)
{
    if (!PyLong_CheckExact(obj))
        return false;
    int overflow;
    long v = PyLong_AsLongAndOverflow(obj, &overflow);
    *out = v;
    return !overflow && v >= low && v <= high;
}

/* A str naming a serialize mode: the plain call's. */
static const char *plain_mode(PyObject *obj)
{
    if (!PyUnicode_CheckExact(obj))
        return NULL;
    const char *name = PyUnicode_AsUTF8(obj);
    if (!name) {
        PyErr_Clear(); /* a lone surrogate: bench()'s check names it */
        return NULL;
    }
    for (int i = 0; i < FC_SER_COUNT; i++)
        if (strcmp(name, fc_serialize_names[i]) == 0)
            return name;
    return NULL;
}

/* obj.<name> as a double; -1 with an exception set. */
static int attr_double(PyObject *obj, PyObject *name, double *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* The result's fields, as BenchResult.from_arrays() sets them: straight into
 * the new object's __dict__ (a frozen dataclass refuses setattr). Takes the
 * arrays of `r` and the references `tsc_hz` and `step` (the clock's). */
static PyObject *result_of(core_state *st, PyObject *type, PyObject *name, long runs,
                           PyObject *serialize, long unroll, PyObject *tsc_hz, PyObject *step,
                           struct measured *r, double bias, double bias_ci95)
{
    PyObject *values[N_FIELDS] = {
        [N_METHOD] = Py_NewRef(name),
        [N_RUNS] = PyLong_FromLong(runs),
        [N_SERIALIZE] = Py_NewRef(serialize),
        [N_UNROLL] = PyLong_FromLong(unroll),
        [N_CPU] = Py_NewRef(Py_None),
        [N_RAW] = (PyObject *)r->a.raw,
        [N_EMPTY] = (PyObject *)r->a.empty,
        [N_MIGRATED] = (PyObject *)r->a.migrated,
        [N_BEST] = PyFloat_FromDouble(r->best),
        [N_MEDIAN] = PyFloat_FromDouble(r->median),
        [N_TSC_HZ] = tsc_hz,
        [N_CYCLES_PER_TICK] = PyFloat_FromDouble(r->cycles_per_tick),
        [N_TSC_STEP_TICKS] = step,
        [N_COUNTER] = Py_NewRef(st->names[N_TSC]),
        [N_HARNESS_BIAS] = PyFloat_FromDouble(bias),
        [N_HARNESS_BIAS_CI95] = PyFloat_FromDouble(bias_ci95),
        [N_CYCLES_PER_TICK_CI95] = PyFloat_FromDouble(r->ci95),
        /* the fast path serves only a trusted clock and a correction no
         * failed self-test withdrew: nothing to caveat */
        [N_CAVEATS] = PyTuple_New(0),
    };
    r->a = (struct run_arrays){0}; /* values[] holds them now */
    int rc = 0;
    for (int i = 0; i < N_FIELDS; i++)
        rc = values[i] ? rc : -1; /* out of memory */
    PyObject *no_args = rc == 0 ? PyTuple_New(0) : NULL;
    PyObject *result = no_args ? PyBaseObject_Type.tp_new((PyTypeObject *)type, no_args, NULL)
                               : NULL;
    Py_XDECREF(no_args);
    PyObject *dict = result ? PyObject_GenericGetDict(result, NULL) : NULL;
    for (int i = 0; i < N_FIELDS; i++) {
        if (dict && PyDict_SetItem(dict, st->names[i], values[i]) < 0)
            Py_CLEAR(dict);
        Py_XDECREF(values[i]);
    }
    if (!dict) {
        Py_XDECREF(result);
        return NULL;
    }
    Py_DECREF(dict);
    return result;
}

static PyObject *core_bench_result(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10) {
        PyErr_Format(PyExc_TypeError, "bench_result() takes 10 arguments (%zd given)", nargs);
        return NULL;
    }
    core_state *st = get_state(module);
    PyObject *type = args[0], *clock = args[1], *name = args[2], *correction = args[9];
    if (!PyType_Check(type) || !PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError,
                        "bench_result() takes a result type and a method's name (str)");
        return NULL;
    }
    long runs, unroll;
    const char *ser_name = plain_mode(args[4]);
    if (!plain_int(args[3], 1, FC_RUNS_MAX, &runs) ||
        !plain_int(args[5], 1, FC_UNROLL_MAX, &unroll) || !ser_name)
        Py_RETURN_NONE;
    double fixed_ticks = PyFloat_AsDouble(args[8]), clock_cpt, step, bias_ticks = 0,
           bias_ci95_ticks = 0, calibration_cpt = NAN;
    if (fixed_ticks == -1.0 && PyErr_Occurred())
        return NULL;
    /* the clock's figures the result carries, read before anything is measured */
    PyObject *tsc_hz = PyObject_GetAttr(clock, st->names[N_TSC_HZ]);
    PyObject *step_obj = tsc_hz ? PyObject_GetAttr(clock, st->names[N_TSC_STEP_TICKS]) : NULL;
    struct bracket_args br;
    struct measured r;
    if (!step_obj || ((step = PyFloat_AsDouble(step_obj)) == -1.0 && PyErr_Occurred()) ||
        attr_double(clock, st->names[N_CYCLES_PER_TICK], &clock_cpt) < 0 ||
        (correction != Py_None &&
         (attr_double(correction, st->names[N_BIAS_TICKS], &bias_ticks) < 0 ||
          attr_double(correction, st->names[N_CI95_TICKS], &bias_ci95_ticks) < 0 ||
          attr_double(correction, st->names[N_CYCLES_PER_TICK], &calibration_cpt) < 0)) ||
        parse_brackets(args[6], args[7], fixed_ticks, 0.0, 0.0, &br) < 0)
        goto fail;
    br.tolerance = fc_bracket_tolerance(step, clock_cpt, br.blocks);
    br.resolution = fc_bracket_resolution(step, clock_cpt, br.blocks); /* < tolerance / 3 */
    if (!(br.tolerance < 1)) {
        PyErr_Format(PyExc_ValueError, "the clock's step (%g TSC ticks) is too coarse for "
                     "brackets of %u blocks: tolerance %g", step, br.blocks, br.tolerance);
        goto fail;
    }
    if (measure_bench(module, name, runs, ser_name, unroll, "tsc", &br, &r) < 0)
        goto fail;
    /* Correction.core_cycles(): the clock around the runs, else the
     * calibration's own */
    double cpt = isfinite(r.cycles_per_tick) && r.cycles_per_tick > 0 ? r.cycles_per_tick
                                                                       : calibration_cpt;
    double bias = correction == Py_None ? 0.0 : bias_ticks * cpt;
    double bias_ci95 = correction == Py_None ? 0.0 : bias_ci95_ticks * cpt;
    return result_of(st, type, name, runs, args[4], unroll, tsc_hz, step_obj, &r, bias,
                     bias_ci95);

fail:
    Py_XDECREF(tsc_hz);
    Py_XDECREF(step_obj);
    return NULL;
}

PyDoc_STRVAR(bench_address_doc,
"bench_address($module, address, runs, serialize, unroll, counter='tsc', /)\n--\n\n"
"bench() of a user function `unsigned fn(void)` at the int `address`\n"
"(kept for callers of the time when bench() took names only).");

static PyObject *core_bench_address(PyObject *module, PyObject *args)
{
    PyObject *address = PyTuple_Size(args) > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
    if (address && !PyLong_Check(address)) {
        PyErr_Format(PyExc_TypeError, "a function address must be an int, not %s",
                     Py_TYPE(address)->tp_name);
        return NULL;
    }
    return core_bench(module, args);
}

PyDoc_STRVAR(bench_diff_doc,
"bench_diff($module, method, runs, serialize, k, counter='tsc', /)\n--\n\n"
"Time `runs` interleaved pairs of runs of one sequence, 2k copies against\n"
"k copies, k >= 2 (both through the copy loop). `method` is a built-in\n"
"method's name or the address of a user function `unsigned fn(void)`.\n\n"
"Returns (long, short, migrated): uint64 arrays of TSC ticks (core cycles\n"
"with counter='pmu') per run at 2k and at k copies, and a bool array: the CPU\n"
"changed across the pair.");

static PyObject *core_bench_diff(PyObject *module, PyObject *args)
{
    PyObject *target;
    const char *ser_name, *clock = "tsc";
    Py_ssize_t runs;
    long k;
    core_state *st = get_state(module);
    struct fc_pair pair;
    struct measured r;
    const struct bracket_args none = {0};
    if (!PyArg_ParseTuple(args, "Onsl|s:bench_diff", &target, &runs, &ser_name, &k, &clock) ||
        build_pair(st, target, runs, ser_name, k, true, clock, &pair) < 0 ||
        measure(st, &pair, runs, &none, false, &r) < 0)
        return NULL;
    return Py_BuildValue("NNN", r.a.raw, r.a.empty, r.a.migrated);
}

PyDoc_STRVAR(bench_diff_bracketed_doc,
"bench_diff_bracketed($module, method, runs, serialize, k, blocks, chains,\n"
"                     fixed_ticks, tolerance, resolution, /)\n--\n\n"
"bench_diff() on the TSC between two brackets, as bench_bracketed() times\n"
"them.\n\n"
"Returns (long, short, migrated, cycles_per_tick, ci95): bench_diff()'s\n"
"three, then core cycles per TSC tick at the moment of the runs and its 95%\n"
"half-width.");

static PyObject *core_bench_diff_bracketed(PyObject *module, PyObject *args)
{
    return bracketed_call(module, args, true);
}

PyDoc_STRVAR(pmu_open_doc,
"pmu_open($module, /)\n--\n\n"
"Open this thread's core-cycle counter for counter='pmu': 'all' when it counts\n"
"user and kernel cycles, 'user' when perf_event_paranoid allowed user mode\n"
"only. Raises fastcpu.Unsupported saying why it cannot be used here.");

static PyObject *core_pmu_open(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    enum fc_pmu_scope scope;
    const char *why;
    if (fc_pmu_open(&scope, &why) < 0) {
        PyErr_Format(get_state(module)->unsupported, "counter='pmu': %s", why);
        return NULL;
    }
    return PyUnicode_FromString(scope == FC_PMU_USER_ONLY ? "user" : "all");
}

PyDoc_STRVAR(median_u64_doc,
"median_u64($module, values, /)\n--\n\n"
"The C core's median of a 1-d uint64 array (numpy's meaning), for the tests.");

static PyObject *core_median_u64(PyObject *module, PyObject *arg)
{
    (void)module;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(arg, NPY_UINT64, 1, 1,
                                                         NPY_ARRAY_CARRAY_RO);
    if (!a)
        return NULL;
    size_t n = (size_t)PyArray_SIZE(a);
    if (n == 0) {
        Py_DECREF(a);
        PyErr_SetString(PyExc_ValueError, "the median of no values is undefined");
        return NULL;
    }
    double m;
    const uint64_t *v = PyArray_DATA(a);
    Py_BEGIN_ALLOW_THREADS
    m = fc_median_u64(v, n);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    return PyFloat_FromDouble(m);
}

static const char *const encoding_names[] = {
    [FC_ENC_NONE] = "none",  [FC_ENC_CPUNODE] = "cpunode", [FC_ENC_SIDT] = "sidt",
    [FC_ENC_CPU] = "cpu",    [FC_ENC_LIMIT] = "limit",   [FC_ENC_SELECTOR] = "selector",
};

/* Whether a row can run here, then whether it reports the CPU: each NULL,
 * or why not. May fork a probe child: the GIL is released. */
static void row_verdicts(const struct fc_method *m, const char **why, const char **cpu_why)
{
    Py_BEGIN_ALLOW_THREADS
    *why = fc_method_unavailable(m);
    *cpu_why = fc_method_cpu_reason(m);
    Py_END_ALLOW_THREADS
}

/* The names of a row's needs, in FC_REQUIREMENTS order. */
static PyObject *row_needs(const struct fc_method *m)
{
    PyObject *needs = PyTuple_New(__builtin_popcount(m->needs));
    Py_ssize_t k = 0;
    for (int r = 0; needs && r < FC_REQ_COUNT; r++) {
        if (!(m->needs >> r & 1))
            continue;
        PyObject *name = PyUnicode_FromString(fc_requirements[r].name);
        if (!name) {
            Py_CLEAR(needs);
            break;
        }
        PyTuple_SET_ITEM(needs, k++, name);
    }
    return needs;
}

/* catalog() row: (name, kind, description, encoding, needs, available,
 * reason, reports_cpu, cpu_reason, chain). */
static PyObject *catalog_row(const struct fc_method *m)
{
    const char *why, *cpu_why;
    row_verdicts(m, &why, &cpu_why);
    PyObject *needs = row_needs(m);
    PyObject *chain = m->chain.op ? Py_BuildValue("(sII)", m->chain.op, m->chain.length,
                                                  m->chain.latency_cycles)
                                  : Py_NewRef(Py_None);
    if (!needs || !chain) {
        Py_XDECREF(needs);
        Py_XDECREF(chain);
        return NULL;
    }
    return Py_BuildValue("ssssNOzOzN", m->name, fc_kind_name(m->kind), m->description,
                         encoding_names[m->encoding], needs, why ? Py_False : Py_True, why,
                         cpu_why ? Py_False : Py_True, cpu_why, chain);
}

/* A list built by `item` from every row whose kind is in `kinds` (a bit
 * per enum fc_kind). */
static PyObject *rows_of(unsigned kinds, PyObject *(*item)(const struct fc_method *))
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < fc_catalog_count; i++) {
        const struct fc_method *m = &fc_catalog[i];
        if (!(kinds >> m->kind & 1))
            continue;
        PyObject *x = item(m);
        if (!x || PyList_Append(list, x) < 0)
            Py_CLEAR(list);
        Py_XDECREF(x);
    }
    return list;
}

#define KIND(k) (1u << (k))

PyDoc_STRVAR(catalog_doc,
"catalog($module, /)\n--\n\n"
"Every row of the one catalog, methods, models and calibration chains, as\n"
"(name, kind, description, encoding, needs, available, reason, reports_cpu,\n"
"cpu_reason, chain): kind 'method', 'model' or 'calibration'; needs the\n"
"names of what it requires (requirements()); reason None when available,\n"
"cpu_reason None when it reports the CPU; chain (op, length,\n"
"latency_cycles) for a calibration chain, else None. May fork once per\n"
"fault-prone method.");

static PyObject *core_catalog(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return rows_of(KIND(FC_KIND_METHOD) | KIND(FC_KIND_MODEL) | KIND(FC_KIND_CALIBRATION),
                   catalog_row);
}

static PyObject *method_item(const struct fc_method *m)
{
    const char *why, *cpu_why;
    row_verdicts(m, &why, &cpu_why);
    return Py_BuildValue("sssOzOz", m->name, m->description, encoding_names[m->encoding],
                         why ? Py_False : Py_True, why, cpu_why ? Py_False : Py_True, cpu_why);
}

PyDoc_STRVAR(methods_doc,
"methods($module, /)\n--\n\n"
"The catalog's methods and models (its rows of kind 'method' and 'model')\n"
"as (name, description, encoding, available, reason, reports_cpu,\n"
"cpu_reason); reason is None when available, cpu_reason None when it\n"
"reports the CPU. May fork once per fault-prone method.");

static PyObject *core_methods(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return rows_of(KIND(FC_KIND_METHOD) | KIND(FC_KIND_MODEL), method_item);
}

static PyObject *calibration_item(const struct fc_method *m)
{
    return Py_BuildValue("sssII", m->name, m->description, m->chain.op, m->chain.length,
                         m->chain.latency_cycles);
}

PyDoc_STRVAR(calibrations_doc,
"calibrations($module, /)\n--\n\n"
"The catalog's calibration chains as (name, description, op, length,\n"
"latency_cycles): `length` dependent `op` instructions of `latency_cycles`\n"
"core cycles each. bench() and read() accept their names.");

static PyObject *core_calibrations(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return rows_of(KIND(FC_KIND_CALIBRATION), calibration_item);
}

static PyObject *requirement_item(int r)
{
    const char *missing = fc_requirement_missing(r);
    return Py_BuildValue("sOs", fc_requirements[r].name, missing ? Py_False : Py_True,
                         fc_requirements[r].reason);
}

PyDoc_STRVAR(requirements_doc,
"requirements($module, /)\n--\n\n"
"What a catalog row may need, as (name, present here, reason given when\n"
"missing), in the order they are checked.");

static PyObject *core_requirements(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    PyObject *list = PyList_New(FC_REQ_COUNT);
    for (int r = 0; list && r < FC_REQ_COUNT; r++) {
        PyObject *x = requirement_item(r);
        if (!x)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, r, x);
    }
    return list;
}

PyDoc_STRVAR(catalog_problems_doc,
"catalog_problems($module, /)\n--\n\n"
"What is wrong with the catalog's rows, as 'name: problem' strings (a\n"
"missing kind, timer or reader, a need without a reason...); [] when\n"
"every row is whole. For the tests.");

static PyObject *core_catalog_problems(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < fc_catalog_count; i++) {
        const char *problem = fc_row_problem(&fc_catalog[i]);
        if (!problem)
            continue;
        PyObject *x = PyUnicode_FromFormat("%s: %s", fc_catalog[i].name ? fc_catalog[i].name : "?",
                                           problem);
        if (!x || PyList_Append(list, x) < 0)
            Py_CLEAR(list);
        Py_XDECREF(x);
    }
    return list;
}

PyDoc_STRVAR(user_chains_doc,
"user_chains($module, /)\n--\n\n"
"The calibration chains compiled as out-of-line functions `unsigned fn(void)`\n"
"inside the extension, for timing the user-function path: a list of (name,\n"
"op, length, latency_cycles, address); bench_address() takes the address.");

static PyObject *core_user_chains(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    PyObject *list = PyList_New((Py_ssize_t)fc_user_chain_count);
    if (!list)
        return NULL;
    for (size_t i = 0; i < fc_user_chain_count; i++) {
        const struct fc_user_chain *c = &fc_user_chains[i];
        PyObject *item = Py_BuildValue("ssIIK", c->name, c->op, c->length, c->latency_cycles,
                                       (unsigned long long)(uintptr_t)c->fn);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

PyDoc_STRVAR(read_doc,
"read($module, method, /)\n--\n\n"
"Run a method once: (raw register value, valid). valid is False when the\n"
"instruction reported failure (LSL with ZF clear).");

static PyObject *core_read(PyObject *module, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s:read", &name))
        return NULL;
    const struct fc_method *m = lookup(get_state(module), name);
    if (!m)
        return NULL;
    bool valid;
    uint32_t value = m->read(&valid);
    return Py_BuildValue("kO", (unsigned long)value, valid ? Py_True : Py_False);
}

/* A method that reports the CPU here, or NULL with Unsupported set. */
static const struct fc_method *lookup_cpu_source(core_state *st, const char *name)
{
    const struct fc_method *m = lookup(st, name);
    if (!m)
        return NULL;
    const char *why;
    Py_BEGIN_ALLOW_THREADS
    why = fc_method_cpu_reason(m);
    Py_END_ALLOW_THREADS
    if (why) {
        PyErr_Format(st->unsupported, "%s does not report the CPU here: %s", m->name, why);
        return NULL;
    }
    return m;
}

static PyObject *cpu_reading(bool valid, unsigned cpu, int node, uint32_t raw)
{
    if (node < 0)
        return Py_BuildValue("IOkO", cpu, Py_None, (unsigned long)raw, valid ? Py_True : Py_False);
    return Py_BuildValue("IikO", cpu, node, (unsigned long)raw, valid ? Py_True : Py_False);
}

PyDoc_STRVAR(read_cpu_doc,
"read_cpu($module, method, /)\n--\n\n"
"Run a CPU-reporting method once: (cpu, node or None, raw value, valid).\n"
"Raises fastcpu.Unsupported when it cannot run or reports no CPU here.");

static PyObject *core_read_cpu(PyObject *module, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s:read_cpu", &name))
        return NULL;
    const struct fc_method *m = lookup_cpu_source(get_state(module), name);
    if (!m)
        return NULL;
    bool valid;
    unsigned cpu;
    int node;
    uint32_t raw = fc_method_read_cpu(m, &valid, &cpu, &node);
    return cpu_reading(valid, cpu, node, raw);
}

PyDoc_STRVAR(read_in_thread_doc,
"read_in_thread($module, method, cpu, /)\n--\n\n"
"Like read_cpu(), in a new pthread created pinned to `cpu` and joined:\n"
"what a fresh thread sees. OSError when the thread cannot be created there.");

static PyObject *core_read_in_thread(PyObject *module, PyObject *args)
{
    const char *name;
    int cpu;
    if (!PyArg_ParseTuple(args, "si:read_in_thread", &name, &cpu))
        return NULL;
    /* a CPU set holds a bit per CPU up to `cpu`: bound it by the CPUs this
     * kernel may have, not by what the caller asks */
    long configured = sysconf(_SC_NPROCESSORS_CONF);
    if (configured < 1)
        configured = 1;
    if (cpu < 0 || cpu >= configured) {
        PyErr_Format(PyExc_ValueError,
                     "cpu must be between 0 and %ld (the CPUs this machine is configured "
                     "with), not %d",
                     configured - 1, cpu);
        return NULL;
    }
    const struct fc_method *m = lookup_cpu_source(get_state(module), name);
    if (!m)
        return NULL;
    bool valid = false;
    unsigned c = 0;
    int node = -1, err;
    uint32_t raw = 0;
    Py_BEGIN_ALLOW_THREADS
    err = fc_read_cpu_in_new_thread(m, cpu, &valid, &c, &node, &raw);
    Py_END_ALLOW_THREADS
    if (err) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return cpu_reading(valid, c, node, raw);
}

PyDoc_STRVAR(code_doc,
"code($module, method, /)\n--\n\n"
"Where a method's timed code is: (address of its 'lfence' timer, address of\n"
"the model function it calls or None, path of this extension, the address\n"
"it is loaded at). Symbol bounds come from the file's symbol table.");

static PyObject *core_code(PyObject *module, PyObject *args)
{
    (void)module;
    const char *name;
    if (!PyArg_ParseTuple(args, "s:code", &name))
        return NULL;
    const struct fc_method *m = fc_method_find(name);
    if (!m) {
        PyErr_Format(PyExc_ValueError, "unknown method %s", name);
        return NULL;
    }
    const void *timer = (const void *)m->timers[FC_SER_LFENCE];
    Dl_info info;
    if (!dladdr(timer, &info) || !info.dli_fname) {
        PyErr_SetString(PyExc_OSError, "dladdr found no object holding the timer");
        return NULL;
    }
    PyObject *model = m->model ? PyLong_FromVoidPtr((void *)m->model) : Py_NewRef(Py_None);
    if (!model)
        return NULL;
    return Py_BuildValue("NNsN", PyLong_FromVoidPtr((void *)timer), model, info.dli_fname,
                         PyLong_FromVoidPtr(info.dli_fbase));
}

/* The first call chooses; it pins a helper thread to every CPU, so let
 * other Python threads run meanwhile. */
static void ensure_getcpu_chosen(void)
{
    if (__builtin_expect(__atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE) ==
                             FC_GETCPU_UNCHOSEN, 0)) {
        Py_BEGIN_ALLOW_THREADS
        fc_getcpu_choose();
        Py_END_ALLOW_THREADS
    }
}

PyDoc_STRVAR(getcpu_doc,
"getcpu($module, /)\n--\n\n"
"The CPU this thread runs on now, by the fastest way proven right on\n"
"every CPU of this machine (chosen on the first call).");

/* getcpu() or getcpu_node() could not read: Unsupported with the reason
 * when no way was verified, else fastcpu.Error naming the failing call. */
static PyObject *getcpu_failed(PyObject *module, int rc, enum fc_getcpu_way way, bool node)
{
    core_state *st = get_state(module);
    if (rc == -FC_GETCPU_ENONE) {
        enum fc_getcpu_why which = way == FC_GETCPU_NONE ? (node ? FC_WHY_NODE : FC_WHY_CPU)
                                                         : FC_WHY_FALLBACK;
        PyErr_Format(st->unsupported, "%s: %s", node ? "getcpu_node()" : "getcpu()",
                     fc_getcpu_why(which));
        return NULL;
    }
    PyErr_Format(st->error, "%s: the %s failed on this call: errno %d, %s",
                 node ? "getcpu_node()" : "getcpu()",
                 way == FC_GETCPU_VDSO ? "vDSO's getcpu" : "getcpu system call", -rc,
                 strerror(-rc));
    return NULL;
}

static PyObject *core_getcpu(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    ensure_getcpu_chosen();
    int cpu = fc_getcpu_fast();
    if (__builtin_expect(cpu < 0, 0))
        return getcpu_failed(module, cpu, fc_getcpu_way, false);
    return PyLong_FromLong(cpu);
}

PyDoc_STRVAR(getcpu_node_doc,
"getcpu_node($module, /)\n--\n\n"
"(cpu, NUMA node) of this thread now, by the fastest way proven right\n"
"for both on every CPU of this machine (chosen on the first call).");

static PyObject *core_getcpu_node(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    ensure_getcpu_chosen();
    unsigned node;
    int rc = fc_getcpu_node_fast(&node);
    if (__builtin_expect(rc < 0, 0))
        return getcpu_failed(module, rc, fc_getcpu_node_way, true);
    unsigned cpu = (unsigned)rc;
    core_state *st = get_state(module);
    PyObject *pair = cpu < FC_PAIRS ? st->pairs[cpu] : NULL;
    if (__builtin_expect(pair != NULL, 1) &&
        PyLong_AsUnsignedLong(PyTuple_GET_ITEM(pair, 1)) == node)
        return Py_NewRef(pair);
    pair = Py_BuildValue("(kk)", (unsigned long)cpu, (unsigned long)node);
    if (pair && cpu < FC_PAIRS) /* the GIL is held: no other writer */
        Py_XSETREF(st->pairs[cpu], Py_NewRef(pair));
    return pair;
}

PyDoc_STRVAR(getcpu_ways_doc,
"getcpu_ways($module, /)\n--\n\n"
"The ways getcpu() chose: (for the cpu, for cpu and node, the per-call\n"
"fallback when rseq's cpu_id is negative), each 'rseq', 'rdpid', 'vdso',\n"
"'syscall', or 'none' where nothing could be verified (getcpu() and\n"
"getcpu_node() then raise fastcpu.Unsupported saying why). Chooses first\n"
"if needed.");

static PyObject *core_getcpu_ways(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    ensure_getcpu_chosen();
    return Py_BuildValue("sss", fc_getcpu_way_name(fc_getcpu_way),
                         fc_getcpu_way_name(fc_getcpu_node_way),
                         fc_getcpu_way_name(fc_getcpu_fallback_way));
}

PyDoc_STRVAR(features_doc,
"features($module, /)\n--\n\n"
"CPU and kernel features fastcpu decides availability from, as a dict.");

static int add_bool(PyObject *d, const char *key, bool value)
{
    return PyDict_SetItemString(d, key, value ? Py_True : Py_False);
}

static PyObject *core_features(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    const struct fc_features *f = fc_features();
    PyObject *d = Py_BuildValue(
        "{sOsOsOsOsOsOsOsOsOsOslsIss}", "rdtscp", f->rdtscp ? Py_True : Py_False,
        "rdpid", f->rdpid ? Py_True : Py_False, "umip", f->umip ? Py_True : Py_False,
        "fsgsbase", f->fsgsbase_cpu ? Py_True : Py_False, "fsgsbase_enabled",
        f->fsgsbase_enabled ? Py_True : Py_False, "hypervisor",
        f->hypervisor ? Py_True : Py_False, "invariant_tsc",
        f->invariant_tsc ? Py_True : Py_False, "tsc_readable",
        f->tsc_readable ? Py_True : Py_False, "rseq_registered",
        f->rseq_registered ? Py_True : Py_False, "vdso_getcpu",
        f->vdso_getcpu ? Py_True : Py_False, "rseq_offset", f->rseq_offset,
        "rseq_size", f->rseq_size, "hypervisor_vendor", f->hypervisor_vendor);
    if (!d)
        return NULL;
    /* the newer facts, added one by one to keep the format above readable */
    if (add_bool(d, "rseq_area", f->rseq_area) < 0 ||
        add_bool(d, "rseq_node_id", f->rseq_node_id) < 0 ||
        add_bool(d, "test_hooks", f->test_hooks) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    PyObject *size = PyLong_FromUnsignedLong(f->rseq_feature_size);
    if (!size || PyDict_SetItemString(d, "rseq_feature_size", size) < 0) {
        Py_XDECREF(size);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(size);
    return d;
}

PyDoc_STRVAR(current_cpu_doc,
"current_cpu($module, /)\n--\n\n"
"The CPU this thread runs on (rseq cpu_id, else sched_getcpu).");

static PyObject *core_current_cpu(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return PyLong_FromLong(fc_current_cpu());
}

PyDoc_STRVAR(tsc_reads_doc,
"tsc_reads($module, count, spaced, /)\n--\n\n"
"`count` (2 to 2**20) unfenced TSC reads as a numpy uint64 array: back to back,\n"
"or (`spaced` true) each after a pseudo-random stretch of 0 to 255 dependent\n"
"register-register adds. fastcpu.clock() fits the counter's granularity to\n"
"the spaced reads' deltas and takes the read spacing from the back-to-back\n"
"ones.");

static PyObject *core_tsc_reads(PyObject *module, PyObject *args)
{
    PyObject *count_obj;
    int spaced;
    long count;
    if (!PyArg_ParseTuple(args, "Op:tsc_reads", &count_obj, &spaced) ||
        parse_bounded(count_obj, "count", 2, 1L << 20, &count) < 0 ||
        check_timer(get_state(module)) < 0)
        return NULL;
    npy_intp dims[1] = {count};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT64);
    if (!out)
        return NULL;
    uint64_t *v = PyArray_DATA(out);
    Py_BEGIN_ALLOW_THREADS
    fc_tsc_reads(v, (size_t)count, spaced != 0);
    Py_END_ALLOW_THREADS
    return (PyObject *)out;
}

PyDoc_STRVAR(tsc_ns_pair_doc,
"tsc_ns_pair($module, /)\n--\n\n"
"(CLOCK_MONOTONIC_RAW ns, TSC ticks) read as close together as possible.");

static PyObject *core_tsc_ns_pair(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    if (check_timer(get_state(module)) < 0)
        return NULL;
    uint64_t ns, tsc;
    fc_tsc_ns_pair(&ns, &tsc);
    return Py_BuildValue("KK", (unsigned long long)ns, (unsigned long long)tsc);
}

PyDoc_STRVAR(ruler_ticks_doc,
"ruler_ticks($module, ruler, blocks, /)\n--\n\n"
"TSC ticks for `blocks` (1 to 2**20) blocks of 100 dependent instructions,\n"
"fenced: `ruler` 'add' (register-register adds, 1 core cycle each), 'imul'\n"
"(64-bit imuls, 3 core cycles each) or 'immediate_add' (add $1, which some\n"
"cores fold at rename: a fact about the core, not a ruler).");

static PyObject *core_ruler_ticks(PyObject *module, PyObject *args)
{
    const char *name;
    PyObject *blocks_obj;
    long blocks;
    if (!PyArg_ParseTuple(args, "sO:ruler_ticks", &name, &blocks_obj) ||
        parse_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0 ||
        check_timer(get_state(module)) < 0)
        return NULL;
    enum fc_ruler ruler;
    if (strcmp(name, "add") == 0)
        ruler = FC_RULER_ADD;
    else if (strcmp(name, "imul") == 0)
        ruler = FC_RULER_IMUL;
    else if (strcmp(name, "immediate_add") == 0)
        ruler = FC_RULER_IMMEDIATE_ADD;
    else
        return PyErr_Format(PyExc_ValueError,
                            "ruler must be 'add', 'imul' or 'immediate_add', not '%s'", name);
    uint64_t ticks;
    Py_BEGIN_ALLOW_THREADS
    ticks = fc_ruler_ticks(ruler, (uint32_t)blocks);
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLongLong(ticks);
}

PyDoc_STRVAR(add_chain_samples_doc,
"add_chain_samples($module, blocks, count, /)\n--\n\n"
"A short warm-up chain, then `count` chains of `blocks` x 100 dependent\n"
"register-register adds,\n"
"in one call: a tuple of their `count` TSC tick counts (bench()'s brackets).");

static PyObject *core_add_chain_samples(PyObject *module, PyObject *args)
{
    /* bounded like ruler_ticks: "I" would wrap -1 into 2**32 - 1 blocks,
     * minutes of adds with the GIL released */
    PyObject *blocks_obj, *count_obj;
    long blocks, count;
    if (!PyArg_ParseTuple(args, "OO:add_chain_samples", &blocks_obj, &count_obj) ||
        parse_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0 ||
        parse_bounded(count_obj, "count", 1, FC_BRACKET_CHAINS_MAX, &count) < 0 ||
        check_timer(get_state(module)) < 0)
        return NULL;
    uint64_t ticks[FC_BRACKET_CHAINS_MAX];
    Py_BEGIN_ALLOW_THREADS
    fc_add_chain_samples((uint32_t)blocks, (uint32_t)count, ticks);
    Py_END_ALLOW_THREADS
    return ticks_tuple(ticks, count);
}

/* A sequence of 0 .. FC_BRACKET_SAMPLES_MAX floats (at least `low`) into
 * out[], its length into *n; -1 with TypeError/ValueError set. */
static int parse_samples(PyObject *obj, const char *name, Py_ssize_t low, double *out,
                         size_t *n)
{
    PyObject *seq = PySequence_Fast(obj, "");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of floats, not %s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len < low || len > FC_BRACKET_SAMPLES_MAX) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd to %d samples, not %zd", name, low,
                     FC_BRACKET_SAMPLES_MAX, len);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        double v = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (!(v > 0) || !isfinite(v)) { /* a rate of core cycles per tick */
            PyErr_Format(PyExc_ValueError, "%s must hold positive finite samples, not %R",
                         name, PySequence_Fast_GET_ITEM(seq, i));
            Py_DECREF(seq);
            return -1;
        }
        out[i] = v;
    }
    *n = (size_t)len;
    Py_DECREF(seq);
    return 0;
}

PyDoc_STRVAR(bracket_figure_doc,
"bracket_figure($module, before, after, recent, tolerance, resolution, /)\n--\n\n"
"(core cycles per TSC tick, its 95% half-width) for a measurement\n"
"bracketed by the add-chain samples `before` and `after` (core cycles per\n"
"tick, 1 to 128 each), held against `recent` (0 to 128), with the\n"
"disturbance tolerance `tolerance` and the chains' `resolution` (the\n"
"clock's step over a chain's ticks, as bracket_resolution; fractions in\n"
"[0, 1)).");

static PyObject *core_bracket_figure(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *before_obj, *after_obj, *recent_obj;
    double tol, resolution;
    if (!PyArg_ParseTuple(args, "OOOdd:bracket_figure", &before_obj, &after_obj, &recent_obj, &tol,
                          &resolution))
        return NULL;
    if (!(tol >= 0 && tol < 1)) {
        PyErr_Format(PyExc_ValueError, "tolerance must be a fraction in [0, 1), not %g", tol);
        return NULL;
    }
    if (!(resolution >= 0 && resolution < 1)) {
        PyErr_Format(PyExc_ValueError, "resolution must be a fraction in [0, 1), not %g",
                     resolution);
        return NULL;
    }
    double before[FC_BRACKET_SAMPLES_MAX], after[FC_BRACKET_SAMPLES_MAX],
        recent[FC_BRACKET_SAMPLES_MAX];
    size_t nb, na, nr;
    if (parse_samples(before_obj, "before", 1, before, &nb) < 0 ||
        parse_samples(after_obj, "after", 1, after, &na) < 0 ||
        parse_samples(recent_obj, "recent", 0, recent, &nr) < 0)
        return NULL;
    double value, ci95;
    fc_bracket_figure(before, nb, after, na, recent, nr, tol, resolution, &value, &ci95);
    return Py_BuildValue("dd", value, ci95);
}

PyDoc_STRVAR(bracket_recent_doc,
"bracket_recent($module, now_ns, cpu, /)\n--\n\n"
"The samples of this thread's brackets taken on `cpu` within\n"
"BRACKET_RECENT_NS before `now_ns` (time.monotonic_ns()), newest first.");

static PyObject *core_bracket_recent(PyObject *module, PyObject *args)
{
    (void)module;
    unsigned long long now;
    int cpu;
    if (!PyArg_ParseTuple(args, "Ki:bracket_recent", &now, &cpu))
        return NULL;
    double out[FC_BRACKET_SAMPLES_MAX];
    size_t n = fc_bracket_recent((uint64_t)now, cpu, out);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        PyObject *v = PyFloat_FromDouble(out[i]);
        if (!v) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
    }
    return t;
}

PyDoc_STRVAR(bracket_remember_doc,
"bracket_remember($module, samples, now_ns, cpu, /)\n--\n\n"
"Keep `samples` (1 to 16, core cycles per tick) among this thread's recent\n"
"brackets as an opening bracket taken at `now_ns` on `cpu` (for tests).");

static PyObject *core_bracket_remember(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *samples_obj;
    unsigned long long now;
    int cpu;
    if (!PyArg_ParseTuple(args, "OKi:bracket_remember", &samples_obj, &now, &cpu))
        return NULL;
    double samples[FC_BRACKET_SAMPLES_MAX];
    size_t n;
    if (parse_samples(samples_obj, "samples", 1, samples, &n) < 0)
        return NULL;
    if (n > FC_BRACKET_CHAINS_MAX) {
        PyErr_Format(PyExc_ValueError, "a bracket holds 1 to %d samples, not %zu",
                     FC_BRACKET_CHAINS_MAX, n);
        return NULL;
    }
    fc_bracket_remember(samples, (uint32_t)n, (uint64_t)now, cpu, false);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(bracket_forget_doc,
"bracket_forget($module, /)\n--\n\n"
"Forget this thread's brackets: the next bench_bracketed() times both.");

static PyObject *core_bracket_forget(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    fc_bracket_forget();
    Py_RETURN_NONE;
}

PyDoc_STRVAR(bracket_tolerance_doc,
"bracket_tolerance($module, step_ticks, cycles_per_tick, blocks, /)\n--\n\n"
"How far below the fastest chain of its side a bracket sample of `blocks`\n"
"blocks may read before it counts as disturbed (a fraction): three steps\n"
"of a counter moving `step_ticks` TSC ticks at a time, at least 0.01.");

/* bracket_tolerance() and bracket_resolution(): `rule` of a clock's step,
 * core cycles per tick and a chain's blocks, checked. */
static PyObject *step_rule(PyObject *args, const char *format,
                           double (*rule)(double, double, uint32_t))
{
    double step, cpt;
    PyObject *blocks_obj;
    long blocks;
    if (!PyArg_ParseTuple(args, format, &step, &cpt, &blocks_obj) ||
        parse_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0)
        return NULL;
    if (!(cpt > 0 && isfinite(cpt))) {
        PyErr_Format(PyExc_ValueError, "cycles_per_tick must be finite and > 0, not %g", cpt);
        return NULL;
    }
    return PyFloat_FromDouble(rule(step, cpt, (uint32_t)blocks));
}

static PyObject *core_bracket_tolerance(PyObject *module, PyObject *args)
{
    (void)module;
    return step_rule(args, "ddO:bracket_tolerance", fc_bracket_tolerance);
}

PyDoc_STRVAR(bracket_resolution_doc,
"bracket_resolution($module, step_ticks, cycles_per_tick, blocks, /)\n--\n\n"
"One step of a counter moving `step_ticks` TSC ticks at a time over the\n"
"TSC ticks of a bracket chain of `blocks` blocks (a fraction).");

static PyObject *core_bracket_resolution(PyObject *module, PyObject *args)
{
    (void)module;
    return step_rule(args, "ddO:bracket_resolution", fc_bracket_resolution);
}

static PyMethodDef core_functions[] = {
    {"bench", core_bench, METH_VARARGS, bench_doc},
    {"bench_bracketed", core_bench_bracketed, METH_VARARGS, bench_bracketed_doc},
    {"bench_result", (PyCFunction)(void (*)(void))core_bench_result, METH_FASTCALL,
     bench_result_doc},
    {"bench_address", core_bench_address, METH_VARARGS, bench_address_doc},
    {"bench_diff", core_bench_diff, METH_VARARGS, bench_diff_doc},
    {"bench_diff_bracketed", core_bench_diff_bracketed, METH_VARARGS, bench_diff_bracketed_doc},
    {"methods", core_methods, METH_NOARGS, methods_doc},
    {"calibrations", core_calibrations, METH_NOARGS, calibrations_doc},
    {"catalog", core_catalog, METH_NOARGS, catalog_doc},
    {"requirements", core_requirements, METH_NOARGS, requirements_doc},
    {"catalog_problems", core_catalog_problems, METH_NOARGS, catalog_problems_doc},
    {"user_chains", core_user_chains, METH_NOARGS, user_chains_doc},
    {"pmu_open", core_pmu_open, METH_NOARGS, pmu_open_doc},
    {"median_u64", core_median_u64, METH_O, median_u64_doc},
    {"read", core_read, METH_VARARGS, read_doc},
    {"read_cpu", core_read_cpu, METH_VARARGS, read_cpu_doc},
    {"read_in_thread", core_read_in_thread, METH_VARARGS, read_in_thread_doc},
    {"code", core_code, METH_VARARGS, code_doc},
    {"getcpu", core_getcpu, METH_NOARGS, getcpu_doc},
    {"getcpu_node", core_getcpu_node, METH_NOARGS, getcpu_node_doc},
    {"getcpu_ways", core_getcpu_ways, METH_NOARGS, getcpu_ways_doc},
    {"features", core_features, METH_NOARGS, features_doc},
    {"current_cpu", core_current_cpu, METH_NOARGS, current_cpu_doc},
    {"tsc_reads", core_tsc_reads, METH_VARARGS, tsc_reads_doc},
    {"tsc_ns_pair", core_tsc_ns_pair, METH_NOARGS, tsc_ns_pair_doc},
    {"ruler_ticks", core_ruler_ticks, METH_VARARGS, ruler_ticks_doc},
    {"add_chain_samples", core_add_chain_samples, METH_VARARGS, add_chain_samples_doc},
    {"bracket_figure", core_bracket_figure, METH_VARARGS, bracket_figure_doc},
    {"bracket_recent", core_bracket_recent, METH_VARARGS, bracket_recent_doc},
    {"bracket_remember", core_bracket_remember, METH_VARARGS, bracket_remember_doc},
    {"bracket_forget", core_bracket_forget, METH_NOARGS, bracket_forget_doc},
    {"bracket_tolerance", core_bracket_tolerance, METH_VARARGS, bracket_tolerance_doc},
    {"bracket_resolution", core_bracket_resolution, METH_VARARGS, bracket_resolution_doc},
    {NULL, NULL, 0, NULL},
};

static int core_exec(PyObject *module)
{
    /* sequences.c asserts at compile time that fc_catalog[] fits
     * FC_METHODS_MAX */
    if (_import_array() < 0)
        return -1;
    fc_atfork_init();
    core_state *st = get_state(module);
    st->error = PyErr_NewExceptionWithDoc(
        "fastcpu.Error", "Base class of fastcpu's own errors.", PyExc_RuntimeError, NULL);
    if (!st->error || PyModule_AddObjectRef(module, "Error", st->error) < 0)
        return -1;
    st->unsupported = PyErr_NewExceptionWithDoc(
        "fastcpu.Unsupported",
        "This machine, kernel or libc cannot run what was asked; the message "
        "says why.",
        st->error, NULL);
    if (!st->unsupported || PyModule_AddObjectRef(module, "Unsupported", st->unsupported) < 0)
        return -1;
    for (int i = 0; i < N_NAMES; i++)
        if (!(st->names[i] = PyUnicode_InternFromString(name_text[i])))
            return -1;
    if (PyModule_AddIntConstant(module, "RUNS_MAX", FC_RUNS_MAX) < 0 ||
        PyModule_AddIntConstant(module, "UNROLL_MAX", FC_UNROLL_MAX) < 0 ||
        PyModule_AddIntConstant(module, "BRACKET_CHAINS_MAX", FC_BRACKET_CHAINS_MAX) < 0 ||
        PyModule_AddIntConstant(module, "BRACKET_RECENT", FC_BRACKET_RECENT) < 0 ||
        PyModule_AddIntConstant(module, "BRACKET_RECENT_NS", FC_BRACKET_RECENT_NS) < 0 ||
        PyModule_AddIntConstant(module, "BRACKET_REUSE_NS", FC_BRACKET_REUSE_NS) < 0)
        return -1;
    /* A sanitizer build instruments the timed code: its shape and timings
     * are not the real ones (tests of instruction shapes skip). */
#if defined(__SANITIZE_ADDRESS__)
    if (PyModule_AddIntConstant(module, "SANITIZED", 1) < 0)
        return -1;
#else
    if (PyModule_AddIntConstant(module, "SANITIZED", 0) < 0)
        return -1;
#endif
    PyObject *modes = Py_BuildValue("(sss)", fc_serialize_names[0], fc_serialize_names[1],
                                    fc_serialize_names[2]);
    int rc = modes ? PyModule_AddObjectRef(module, "SERIALIZE_MODES", modes) : -1;
    Py_XDECREF(modes);
    return rc;
}

static int core_traverse(PyObject *module, visitproc visit, void *arg)
{
    core_state *st = get_state(module);
    Py_VISIT(st->error);
    Py_VISIT(st->unsupported);
    for (size_t i = 0; i < N_NAMES; i++)
        Py_VISIT(st->names[i]);
    for (size_t i = 0; i < FC_PAIRS; i++)
        Py_VISIT(st->pairs[i]);
    return 0;
}

static int core_clear(PyObject *module)
{
    core_state *st = get_state(module);
    Py_CLEAR(st->error);
    Py_CLEAR(st->unsupported);
    for (size_t i = 0; i < N_NAMES; i++)
        Py_CLEAR(st->names[i]);
    for (size_t i = 0; i < FC_PAIRS; i++)
        Py_CLEAR(st->pairs[i]);
    return 0;
}

static void core_free(void *module) { core_clear((PyObject *)module); }

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, core_exec},
#ifdef Py_mod_multiple_interpreters
    /* The feature cache and numpy's C API table are process-wide. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL},
};

PyDoc_STRVAR(core_doc, "fastcpu's C timing core. Use the fastcpu package, not this module.");

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "fastcpu._core",
    .m_doc = core_doc,
    .m_size = sizeof(core_state),
    .m_methods = core_functions,
    .m_slots = core_slots,
    .m_traverse = core_traverse,
    .m_clear = core_clear,
    .m_free = core_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
