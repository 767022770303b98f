/*
 * glue_bench.c: the one way Python measures. measure() times a target (a
 * catalog row by name, or a user function by address) against the empty
 * sequence (bench) or 2k copies against k (bench_diff), on the TSC between
 * brackets of add chains or on the PMU counter, and returns plain numpy
 * arrays and figures; fastcpu/ builds every result from them
 * (BenchResult.from_arrays, DiffResult.from_arrays). Arguments are checked
 * here again (fastcpu's Python layer checks first, with friendlier
 * messages); the arrays are created here and filled with the GIL released.
 * How they are filled (what is paired with what, warm-up, chunks short
 * enough for Ctrl-C, the PMU counter's retries) is harness.c's.
 */
#include <math.h>
#include <string.h>

#include "glue.h"

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
    char hex[24];
    snprintf(hex, sizeof hex, "0x%llx", address); /* PyErr_Format knows no %llx before 3.12 */
    if (found == FC_ADDRESS_VSYSCALL) {
        PyErr_Format(PyExc_ValueError,
                     "address %s is in the [vsyscall] page, which the kernel emulates at a "
                     "few fixed entry points: it holds no function to call",
                     hex);
        return -1;
    }
    if (!found) {
        PyErr_Format(PyExc_ValueError,
                     "address %s is not in an executable mapping of this process "
                     "(/proc/self/maps): pass the address of a C function, not of data",
                     hex);
        return -1;
    }
    *out = (uintptr_t)address;
    return 0;
}


/* counter='tsc' (the default) or 'pmu': the core-cycle counter via rdpmc,
 * opened for this thread here. */
static int parse_counter(core_state *st, const char *counter, struct fc_pair *pair)
{
    if (strcmp(counter, "tsc") == 0)
        return 0;
    if (strcmp(counter, "pmu") != 0) {
        PyErr_Format(PyExc_ValueError, "unknown counter '%s': use 'tsc' or 'pmu'", counter);
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

/* Whether this thread runs Python inside the measured function (a ctypes
 * callback): PyGILState_Ensure counts itself in the thread state's
 * gilstate_counter, above what it was when the measurement began, until
 * the callback returns, whether it holds the GIL now or has released it
 * (time.sleep). Read from a signal handler: TSS and a plain load. */
static _Thread_local int gilstate_before;

static int python_running(void)
{
    PyThreadState *t = PyGILState_GetThisThreadState();
    return t && t->gilstate_counter > gilstate_before;
}

/* A step that failed, as an exception: a user function that broke the
 * calling convention, forked or crashed is fastcpu.Error, one that outlived
 * the timeout TimeoutError, Ctrl-C KeyboardInterrupt (Python's handler has
 * seen it). */
static void user_step_error(core_state *st, enum fc_step step, const char *why, double timeout_s)
{
    switch (step) {
    case FC_STEP_UNSUPPORTED:
        PyErr_SetString(st->unsupported, why);
        break;
    case FC_STEP_TIMED_OUT:
    {
        char t[32];
        snprintf(t, sizeof t, "%g", timeout_s);
        PyErr_Format(PyExc_TimeoutError, "the measurement took longer than timeout=%s s%s%s", t,
                     *why ? ": " : "", why);
    }
        break;
    case FC_STEP_INTERRUPTED:
        if (PyErr_CheckSignals() == 0)
            PyErr_SetString(PyExc_KeyboardInterrupt, why);
        break;
    default:
        PyErr_SetString(st->error, why);
    }
}

/* Time `pair` for `runs` runs into new arrays (harness.c's session); 0, or
 * -1 with an exception set (the arrays dropped). The GIL is released for
 * each chunk and signals looked for after it, so Ctrl-C waits for a chunk
 * and one run at most. */
static int measure_pair(core_state *st, const struct fc_pair *pair, Py_ssize_t runs,
                        double timeout_s, struct run_arrays *out)
{
    int outer_gilstate = gilstate_before; /* a measurement inside the function's, refused */
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
    bool user = pair->user_method != NULL;
    if (user) {
        gilstate_before = PyThreadState_Get()->gilstate_counter;
        fc_user_begin(timeout_s, python_running);
    }
    do {
        Py_BEGIN_ALLOW_THREADS
        step = user ? fc_user_step(&session, fc_session_step) : fc_session_step(&session);
        Py_END_ALLOW_THREADS
        if (step != FC_STEP_MORE && step != FC_STEP_DONE) {
            user_step_error(st, step, session.why, timeout_s);
            goto fail;
        }
        if (PyErr_CheckSignals() < 0)
            goto fail;
        if (user && step != FC_STEP_DONE && fc_user_timed_out()) {
            user_step_error(st, FC_STEP_TIMED_OUT, "", timeout_s);
            goto fail;
        }
    } while (step != FC_STEP_DONE);
    gilstate_before = outer_gilstate;
    return 0;

fail:
    gilstate_before = outer_gilstate;
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
        return name && (*m = fc_glue_lookup(st, name)) ? 0 : -1;
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

/* How measure() times its brackets (0 chains: none). */
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
 * `counter`. 0, or -1 with an exception set. */
static int build_pair(core_state *st, PyObject *target, Py_ssize_t runs, const char *ser_name,
                      long copies, bool diff, const char *counter, struct fc_pair *pair)
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
    if (fc_glue_check_timer(st) < 0 || parse_target(st, target, &m, &user) < 0 ||
        parse_counter(st, counter, pair) < 0)
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
                   const struct bracket_args *br, bool best_median, double timeout_s,
                   struct measured *out)
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
    if (measure_pair(st, pair, runs, timeout_s, &out->a) < 0)
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

/* The brackets' arguments: blocks and chains in range, the fixed cost finite
 * and >= 0, the tolerance and the resolution fractions; 0, or -1 with
 * ValueError/TypeError. */
static int parse_brackets(PyObject *blocks_obj, PyObject *chains_obj, double fixed_ticks,
                          double tolerance, double resolution, struct bracket_args *br)
{
    long blocks, chains;
    if (fc_glue_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0 ||
        fc_glue_bounded(chains_obj, "chains", 1, FC_BRACKET_CHAINS_MAX, &chains) < 0)
        return -1;
    if (!(fixed_ticks >= 0 && isfinite(fixed_ticks))) {
        fc_glue_value_error("fixed_ticks must be finite and >= 0", fixed_ticks);
        return -1;
    }
    if (!(tolerance >= 0 && tolerance < 1)) {
        fc_glue_value_error("tolerance must be a fraction in [0, 1)", tolerance);
        return -1;
    }
    if (!(resolution >= 0 && resolution < 1)) {
        fc_glue_value_error("resolution must be a fraction in [0, 1)", resolution);
        return -1;
    }
    *br = (struct bracket_args){(uint32_t)blocks, (uint32_t)chains, fixed_ticks, tolerance,
                                resolution};
    return 0;
}


PyDoc_STRVAR(measure_doc,
"measure($module, target, runs, serialize, copies, diff, counter, blocks, chains,\n"
"        fixed_ticks, tolerance, resolution, timeout=0, /)\n--\n\n"
"The one measurement. `target` is a catalog row's name, or the int address\n"
"of a user function `unsigned fn(void)` (timed through an indirect call\n"
"against an empty function called the same way; it must lie in an\n"
"executable mapping of this process). diff false: `runs` runs of `copies`\n"
"copies against the empty sequence (bench); diff true: `runs` interleaved\n"
"pairs of 2k against k copies, k = `copies` >= 2 (bench_diff). `counter`\n"
"'tsc' or 'pmu' (the core-cycle counter via rdpmc, opened here).\n\n"
"With `chains` > 0 (the TSC only), between brackets of `chains` chains of\n"
"`blocks` x RULER_BLOCK dependent register-register adds less the timer's\n"
"`fixed_ticks`: the opening one this thread's last closing one when taken\n"
"on this CPU within BRACKET_REUSE_NS, else timed now; the closing one\n"
"straight after the runs; the figure held against this thread's recent\n"
"brackets with the disturbance `tolerance` and the chains' `resolution`\n"
"(as bracket_figure). `chains` 0: no brackets.\n\n"
"Returns (a, b, migrated, best, median, cycles_per_tick, ci95): uint64\n"
"arrays per run (raw and empty; for diff, long and short), in TSC ticks or\n"
"PMU core cycles, harness included; a bool array of migrations; best and\n"
"median per copy above the empty sequence (NaN for diff); core cycles per\n"
"TSC tick at the moment and its 95% half-width (NaN without brackets).\n"
"A user function is checked after each call for what the calling\n"
"convention says it must preserve (callee-saved registers, rsp, DF, MXCSR,\n"
"the x87 control word; restored, and fastcpu.Error names what it broke), its\n"
"forked copies end at once, and a fault in it raises fastcpu.Error; `timeout`\n"
"seconds (0: none) bound the measurement (TimeoutError), abandoning a call\n"
"that will not return, as Ctrl-C does after 0.5 s.\n"
"Raises fastcpu.Unsupported when the target or the counter cannot run here.");

static PyObject *core_measure(PyObject *module, PyObject *args)
{
    PyObject *target, *blocks_obj, *chains_obj;
    const char *ser_name, *counter;
    Py_ssize_t runs;
    long copies;
    int diff;
    double fixed_ticks, tolerance, resolution, timeout_s = 0;
    core_state *st = get_state(module);
    struct bracket_args br = {0};
    struct fc_pair pair;
    struct measured r;
    if (!PyArg_ParseTuple(args, "OnslpsOOddd|d:measure", &target, &runs, &ser_name, &copies,
                          &diff, &counter, &blocks_obj, &chains_obj, &fixed_ticks, &tolerance,
                          &resolution, &timeout_s))
        return NULL;
    if (!(timeout_s >= 0 && timeout_s <= FC_USER_TIMEOUT_MAX)) {
        fc_glue_value_error("timeout must be a number of seconds from 0 (none) to 1e6",
                            timeout_s);
        return NULL;
    }
    long chains;
    if (fc_glue_bounded(chains_obj, "chains", 0, FC_BRACKET_CHAINS_MAX, &chains) < 0)
        return NULL;
    if (chains > 0) {
        if (strcmp(counter, "tsc") != 0) {
            PyErr_SetString(PyExc_ValueError, "brackets time the TSC: with counter='pmu' "
                                              "pass chains=0");
            return NULL;
        }
        if (parse_brackets(blocks_obj, chains_obj, fixed_ticks, tolerance, resolution, &br) < 0)
            return NULL;
    }
    if (build_pair(st, target, runs, ser_name, copies, diff, counter, &pair) < 0 ||
        measure(st, &pair, runs, &br, !diff, timeout_s, &r) < 0)
        return NULL;
    return Py_BuildValue("NNNdddd", r.a.raw, r.a.empty, r.a.migrated, r.best, r.median,
                         r.cycles_per_tick, r.ci95);
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

PyMethodDef fc_glue_bench_functions[] = {
    {"measure", core_measure, METH_VARARGS, measure_doc},
    {"pmu_open", core_pmu_open, METH_NOARGS, pmu_open_doc},
    {"median_u64", core_median_u64, METH_O, median_u64_doc},
    {NULL, NULL, 0, NULL},
};
