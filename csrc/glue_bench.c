/*
 * glue_bench.c: the one way Python times a target. time_runs() times one (a
 * catalog row by name, or a user function by address) against the empty
 * sequence (bench) or 2k copies against k (bench_diff), on the TSC with
 * ruler points between stretches of runs or on the PMU counter, and returns plain numpy
 * arrays and figures; fastcpu/ builds every result from them
 * (BenchResult.from_arrays, DiffResult.from_arrays). Arguments are checked
 * here again (fastcpu's Python layer checks first, with friendlier
 * messages); the arrays are created here and filled with the GIL released.
 * How they are filled (what is paired with what, warm-up, chunks short
 * enough for Ctrl-C, the PMU counter's retries) is harness.c's.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "glue.h"
#include "machine.h"
#include "estimate.h"
#include "harness.h"
#include "pmu.h"
#include "userguard.h"

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
 * executable mapping of this process (/proc/self/maps; without /proc, in a
 * loaded object's code), or -1 with ValueError/TypeError/Unsupported set. The mapping could still go away before
 * the call (another thread unloading its library): that is the caller's
 * to avoid. */
static int parse_user_address(core_state *st, PyObject *obj, uintptr_t *out)
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
    char hex[24];
    snprintf(hex, sizeof hex, "0x%llx", address); /* PyErr_Format knows no %llx before 3.12 */
    if (found < 0) {
        int err = errno;
        PyErr_Format(st->unsupported,
                     "address %s is in no loaded object's code (the program, its libraries, the "
                     "vDSO), and /proc/self/maps, which lists the rest of this process's "
                     "executable memory, cannot be read (%s): mount /proc, or pass the address "
                     "of a function in a loaded library",
                     hex, strerror(err));
        return -1;
    }
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

/* A step that failed, as an exception: a user function that broke the
 * calling convention, forked or crashed is fastcpu.Error, one that outlived
 * the timeout TimeoutError, Ctrl-C KeyboardInterrupt (Python's handler has
 * seen it), ruler points that could not grow MemoryError. */
static void step_error(core_state *st, enum fc_step step, const char *why, double timeout_s)
{
    switch (step) {
    case FC_STEP_UNSUPPORTED:
        PyErr_SetString(st->unsupported, why);
        break;
    case FC_STEP_NO_MEMORY:
        PyErr_NoMemory();
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

/* Time `pair` for `runs` runs into new arrays (harness.c's session), with
 * ruler points between stretches of runs when `rulers` is not NULL (then
 * *points is an (n, 4) array of them); a user function under userabi.c's
 * guard, within `timeout_s` (0: none). 0, or -1 with an exception set (the
 * arrays dropped). The GIL is released for each chunk and signals looked
 * for after it, so Ctrl-C waits for a chunk and one run at most. */
static int time_pair(core_state *st, const struct fc_pair *pair, Py_ssize_t runs,
                     const struct fc_ruler_args *rulers, double timeout_s,
                     struct run_arrays *out, PyArrayObject **points)
{
    npy_intp dims[1] = {runs};
    struct fc_session session = {0};
    out->raw = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT64);
    out->empty = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_UINT64);
    out->migrated = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (!out->raw || !out->empty || !out->migrated)
        goto fail;
    struct fc_run_buffers bufs = {PyArray_DATA(out->raw), PyArray_DATA(out->empty),
                                  PyArray_DATA(out->migrated)};
    fc_session_init(&session, pair, bufs, (size_t)runs, rulers);
    enum fc_step step;
    bool user = pair->user_method != NULL;
    if (user) {
        /* Whether this thread runs Python inside the function (a ctypes
         * callback), for the guard's signal handlers: PyGILState_Ensure
         * counts itself in this thread's gilstate_counter, above what it is
         * now, until the callback returns, whether it holds the GIL or has
         * released it (time.sleep). The guard reads the counter itself: a
         * plain int, no call back into the glue. */
        PyThreadState *t = PyGILState_GetThisThreadState();
        fc_user_begin(timeout_s, t ? &t->gilstate_counter : NULL,
                      PyThreadState_Get()->gilstate_counter);
    }
    do {
        Py_BEGIN_ALLOW_THREADS
        step = user ? fc_user_step(&session) : fc_session_step(&session);
        Py_END_ALLOW_THREADS
        if (step != FC_STEP_MORE && step != FC_STEP_DONE) {
            step_error(st, step, session.why, timeout_s);
            goto fail;
        }
        if (PyErr_CheckSignals() < 0)
            goto fail;
        if (user && step != FC_STEP_DONE && fc_user_timed_out()) {
            step_error(st, FC_STEP_TIMED_OUT, "", timeout_s);
            goto fail;
        }
    } while (step != FC_STEP_DONE);
    if (session.rulers) {
        npy_intp pdims[2] = {(npy_intp)session.n_points, 4};
        *points = (PyArrayObject *)PyArray_SimpleNew(2, pdims, NPY_FLOAT64);
        if (!*points)
            goto fail;
        memcpy(PyArray_DATA(*points), session.points, session.n_points * sizeof *session.points);
    }
    fc_session_free(&session);
    return 0;

fail:
    fc_session_free(&session);
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
        if (parse_user_address(st, target, &address) < 0)
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

/* What one measurement gave: the arrays, best and median per copy (TSC
 * ticks, or core cycles on the PMU; bench()'s pairs only), and with rulers
 * their points and what they say. */
struct timed_runs {
    struct run_arrays a;
    double best, median;
    bool estimated; /* estimate and paired set (estimate.c took the runs) */
    struct fc_estimate estimate, paired;
    PyArrayObject *points;
    struct fc_conversion conversion;
};

/* An fc_estimate as Python reads it: (ticks, ci95_ticks, estimator, runs_used), the
 * arguments of fastcpu.results.estimate.Estimate; NULL with an exception set. */
static PyObject *estimate_tuple(const struct fc_estimate *e)
{
    return Py_BuildValue("(dd" "s" "n)", e->ticks, e->ci95_ticks,
                         e->estimator == FC_ESTIMATOR_MEDIAN ? "median" : "paired_mean",
                         (Py_ssize_t)e->runs_used);
}

/* What to time: `target` against the empty sequence, `copies` copies a
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

/* Time `pair` for `runs` runs, with ruler points between stretches when
 * `rulers` is not NULL, and best and median in the same GIL release as the
 * last chunk's, and with them the recommended estimate at a clock step of
 * `estimate_step` counts (estimate.c; NaN: not asked for); then what the
 * points say (conversion.c). 0, or -1 with an exception set. */
static int time_and_convert(core_state *st, const struct fc_pair *pair, Py_ssize_t runs,
                            const struct fc_ruler_args *rulers, double tolerance,
                            double resolution, bool best_median, double estimate_step,
                            double timeout_s, struct timed_runs *out)
{
    out->points = NULL;
    if (time_pair(st, pair, runs, rulers, timeout_s, &out->a, &out->points) < 0)
        return -1;
    struct fc_run_buffers bufs = {PyArray_DATA(out->a.raw), PyArray_DATA(out->a.empty), NULL};
    out->best = out->median = NAN;
    out->estimated = false;
    const bool *migrated = PyArray_DATA(out->a.migrated);
    const struct fc_ruler_point *p = out->points ? PyArray_DATA(out->points) : NULL;
    size_t n = out->points ? (size_t)PyArray_DIM(out->points, 0) : 0;
    Py_BEGIN_ALLOW_THREADS
    struct fc_best_median all;
    if (best_median && estimate_step == estimate_step) /* best and median from the estimate's passes */
        out->estimated = fc_recommend(bufs.raw, bufs.empty, migrated, (size_t)runs, estimate_step,
                                      pair->method_copies, &out->estimate, &out->paired, &all) == 0;
    if (out->estimated) {
        out->best = all.best;
        out->median = all.median;
    } else if (best_median) {
        fc_best_median(&bufs, (size_t)runs, pair->method_copies, &out->best, &out->median);
    }
    double agree_tol = 3 * resolution > FC_RULERS_AGREE ? 3 * resolution : FC_RULERS_AGREE;
    /* the runs show where in its stretch a hop fell */
    struct fc_run_ticks ticks = {bufs.raw, bufs.empty, (size_t)runs};
    fc_convert(p, n, agree_tol, tolerance, resolution, &ticks, &out->conversion);
    Py_END_ALLOW_THREADS
    return 0;
}

/* The rulers' arguments (a tuple: add_blocks, imul_blocks, add_fixed_cycles,
 * imul_fixed_cycles, spacing_ticks, tolerance, resolution) checked into
 * *r; 0, or -1 with ValueError/TypeError. */
static int parse_rulers(PyObject *obj, struct fc_ruler_args *r, double *tolerance,
                        double *resolution)
{
    PyObject *add_obj, *imul_obj, *spacing_obj;
    double add_fixed, imul_fixed;
    long add_blocks, imul_blocks, spacing;
    if (!PyTuple_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "rulers must be a tuple or None, not %s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (!PyArg_ParseTuple(obj, "OOddOdd:rulers", &add_obj, &imul_obj, &add_fixed, &imul_fixed,
                          &spacing_obj, tolerance, resolution) ||
        fc_glue_bounded(add_obj, "add_blocks", 1, FC_RULER_POINT_BLOCKS_MAX, &add_blocks) < 0 ||
        fc_glue_bounded(imul_obj, "imul_blocks", 1, FC_RULER_POINT_BLOCKS_MAX, &imul_blocks) < 0 ||
        fc_glue_bounded(spacing_obj, "spacing_ticks", 1, LONG_MAX, &spacing) < 0)
        return -1;
    if (!(add_fixed >= 0 && add_fixed < 1e6) || !(imul_fixed >= 0 && imul_fixed < 1e6)) {
        fc_glue_value_error("the rulers' fixed cost must be in [0, 1e6) core cycles",
                            add_fixed >= 0 && add_fixed < 1e6 ? imul_fixed : add_fixed);
        return -1;
    }
    if (!(*tolerance >= 0 && *tolerance < 1)) {
        fc_glue_value_error("tolerance must be a fraction in [0, 1)", *tolerance);
        return -1;
    }
    if (!(*resolution >= 0 && *resolution < 1)) {
        fc_glue_value_error("resolution must be a fraction in [0, 1)", *resolution);
        return -1;
    }
    *r = (struct fc_ruler_args){(uint32_t)add_blocks, (uint32_t)imul_blocks, add_fixed,
                                imul_fixed, (uint64_t)spacing};
    return 0;
}

PyDoc_STRVAR(time_runs_doc,
"time_runs($module, target, /, runs, serialize, copies, diff, counter, rulers, timeout=0,\n"
"          estimate_step=None)\n--\n\n"
"The one measurement. `target` is a catalog row's name, or the int address\n"
"of a user function `unsigned fn(void)` (timed through an indirect call\n"
"against an empty function called the same way; it must lie in an\n"
"executable mapping of this process). diff false: `runs` runs of `copies`\n"
"copies against the empty sequence (bench); diff true: `runs` interleaved\n"
"pairs of 2k against k copies, k = `copies` >= 2 (bench_diff). `counter`\n"
"'tsc' or 'pmu' (the core-cycle counter via rdpmc, opened here).\n\n"
"`rulers` (the TSC only; None: none) is (add_blocks, imul_blocks,\n"
"add_fixed_cycles, imul_fixed_cycles, spacing_ticks, tolerance,\n"
"resolution): a ruler point (an add chain and an imul chain) before the\n"
"first run, after every spacing_ticks of runs and after the last, and\n"
"the runs converted stretch by stretch (as convert()).\n\n"
"A user function is checked after each call for what the calling\n"
"convention says it must preserve (callee-saved registers, rsp, DF, MXCSR,\n"
"the x87 control word; restored, and fastcpu.Error names what it broke), its\n"
"forked copies end at once, and a fault in it raises fastcpu.Error; `timeout`\n"
"seconds (0, the default: none) bound the measurement (TimeoutError),\n"
"abandoning a call that will not return, as Ctrl-C does after 0.5 s.\n\n"
"Returns a TimedRuns record: a, b (uint64 arrays per run: raw and empty;\n"
"for diff, long and short; TSC ticks or PMU core cycles, harness\n"
"included; read-only), migrated (bool per run), best and median per copy above the\n"
"empty sequence (NaN for diff), points (the (n, 4) ruler points, or\n"
"None) and conversion (convert()'s Conversion record, or None without\n"
"rulers).\n\n"
"estimate_step (bench only; None: not asked for): the counter's step in\n"
"counts (tsc_step_ticks on the TSC, 1 on the PMU): the record's estimate\n"
"is then (ticks, ci95_ticks, estimator, runs_used), what\n"
"fastcpu.results.estimate.recommend() gives for these runs at that step\n"
"(csrc/estimate.c), or None where it leaves them to Python (more than\n"
"2**18 runs, or a count of 2**61 or more); its paired_mean likewise\n"
"paired_mean()'s (ticks, ci95_ticks, 'paired_mean', runs_used).\n"
"Raises fastcpu.Unsupported when the target or the counter cannot run here.");

static char *time_runs_keywords[] = {"", "runs", "serialize", "copies", "diff", "counter", "rulers",
                                   "timeout", "estimate_step", NULL};

static PyObject *core_time_runs(PyObject *module, PyObject *args, PyObject *kwargs)
{
    PyObject *target, *rulers_obj = NULL, *step_obj = Py_None;
    const char *ser_name = NULL, *counter = NULL;
    Py_ssize_t runs = -1;
    long copies = LONG_MIN;
    int diff = -1;
    double tolerance = 0, resolution = 0, timeout_s = 0, estimate_step = NAN;
    core_state *st = get_state(module);
    struct fc_ruler_args rulers;
    bool with_rulers;
    struct fc_pair pair;
    struct timed_runs r;
    /* by position too: bench() calls it so, sparing a keyword dict and its matching */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|nslpsOdO:time_runs", time_runs_keywords,
                                     &target, &runs, &ser_name, &copies, &diff, &counter,
                                     &rulers_obj, &timeout_s, &step_obj))
        return NULL;
    if (runs == -1 || !ser_name || copies == LONG_MIN || diff == -1 || !counter || !rulers_obj) {
        PyErr_SetString(PyExc_TypeError, "time_runs() takes runs, serialize, copies, diff, "
                                         "counter and rulers (and timeout, estimate_step)");
        return NULL;
    }
    if (!(timeout_s >= 0 && timeout_s <= FC_USER_TIMEOUT_MAX)) {
        fc_glue_value_error("timeout must be a number of seconds from 0 (none) to 1e6",
                            timeout_s);
        return NULL;
    }
    if (step_obj != Py_None) {
        estimate_step = PyFloat_AsDouble(step_obj);
        if (estimate_step == -1.0 && PyErr_Occurred())
            return NULL;
        if (!(estimate_step > 0 && estimate_step < 1e9)) {
            fc_glue_value_error("estimate_step must be the counter's step in counts, above 0 "
                                "and below 1e9 (or None)", estimate_step);
            return NULL;
        }
    }
    with_rulers = rulers_obj != Py_None;
    if (with_rulers) {
        if (strcmp(counter, "tsc") != 0) {
            PyErr_SetString(PyExc_ValueError, "rulers time the TSC: with counter='pmu' "
                                              "pass rulers=None");
            return NULL;
        }
        if (parse_rulers(rulers_obj, &rulers, &tolerance, &resolution) < 0)
            return NULL;
    }
    if (build_pair(st, target, runs, ser_name, copies, diff, counter, &pair) < 0 ||
        time_and_convert(st, &pair, runs, with_rulers ? &rulers : NULL, tolerance, resolution,
                         !diff, estimate_step, timeout_s, &r) < 0)
        return NULL;
    PyObject *conversion = Py_None;
    Py_INCREF(Py_None);
    if (with_rulers) {
        Py_DECREF(Py_None);
        conversion = fc_glue_conversion(st, &r.conversion);
        if (!conversion) {
            drop_arrays(&r.a);
            Py_XDECREF(r.points);
            return NULL;
        }
    }
    PyObject *record = PyStructSequence_New((PyTypeObject *)st->timed_runs_type);
    if (!record) {
        drop_arrays(&r.a);
        Py_XDECREF(r.points);
        Py_DECREF(conversion);
        return NULL;
    }
    PyObject *points = r.points ? (PyObject *)r.points : Py_NewRef(Py_None);
    PyObject *estimate = r.estimated ? estimate_tuple(&r.estimate) : Py_NewRef(Py_None);
    PyObject *paired = r.estimated ? estimate_tuple(&r.paired) : Py_NewRef(Py_None);
    /* the runs are a result's from here on: read-only as made, so that
     * Python keeps them without views */
    PyArray_CLEARFLAGS(r.a.raw, NPY_ARRAY_WRITEABLE);
    PyArray_CLEARFLAGS(r.a.empty, NPY_ARRAY_WRITEABLE);
    PyArray_CLEARFLAGS(r.a.migrated, NPY_ARRAY_WRITEABLE);
    PyObject *items[] = {(PyObject *)r.a.raw, (PyObject *)r.a.empty, (PyObject *)r.a.migrated,
                         PyFloat_FromDouble(r.best), PyFloat_FromDouble(r.median), points,
                         conversion, estimate, paired};
    for (Py_ssize_t i = 0; i < (Py_ssize_t)(sizeof items / sizeof items[0]); i++) {
        if (!items[i]) { /* a float could not be made: the record drops what it holds */
            for (Py_ssize_t k = i + 1; k < (Py_ssize_t)(sizeof items / sizeof items[0]); k++)
                Py_XDECREF(items[k]);
            Py_DECREF(record);
            return NULL;
        }
        PyStructSequence_SetItem(record, i, items[i]);
    }
    return record;
}

static PyStructSequence_Field timed_runs_fields[] = {
    {"a", "uint64 per run: raw (bench) or long (bench_diff) counts"},
    {"b", "uint64 per run: empty (bench) or short (bench_diff) counts"},
    {"migrated", "bool per run: the thread changed CPU during the run's pair"},
    {"best", "min(a) - min(b) per copy (NaN for bench_diff)"},
    {"median", "median(a) - median(b) per copy (NaN for bench_diff)"},
    {"points", "the ruler points, an (n, 4) float64 array of (run, tsc, add, imul), or None"},
    {"conversion", "what the ruler points say (a Conversion record), or None"},
    {"estimate", "(ticks, ci95_ticks, estimator, runs_used): recommend() of the runs at "
                 "estimate_step, computed in C; or None"},
    {"paired_mean", "(ticks, ci95_ticks, 'paired_mean', runs_used): paired_mean() of the runs at "
                    "estimate_step, computed in the same pass (equal to estimate where that is "
                    "the paired mean); None where estimate is"},
    {NULL, NULL},
};

PyStructSequence_Desc fc_timed_runs_desc = {
    "fastcpu._core.TimedRuns",
    "What one time_runs() call gave: the raw arrays (read-only), best and median, the ruler "
    "points and the estimates.",
    timed_runs_fields,
    7,
};

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

PyDoc_STRVAR(recommend_doc,
"recommend($module, raw, empty, migrated, step, unroll, /)\n--\n\n"
"What time_runs() computes as its record's estimate, for given runs: raw\n"
"and empty C-contiguous uint64 arrays of one length, migrated a bool array\n"
"of it or None, step the counter's step in counts (> 0), unroll the copies\n"
"per run (1 to UNROLL_MAX). (ticks, ci95_ticks, estimator, runs_used), as\n"
"fastcpu.results.estimate.recommend() gives them, with the same of\n"
"paired_mean() and (best, median) per copy of every run (time_runs()'s,\n"
"computed in the same passes), as a triple; or None where that is left to\n"
"Python (no runs, more than 2**18, a count of 2**61 or more). For the\n"
"tests, which hold it to the Python and to numpy.");

/* A C-contiguous 1-d array of `type` and `n` values (n < 0: any), or NULL
 * with TypeError/ValueError naming `what`. */
static PyArrayObject *plain_array(PyObject *obj, int type, npy_intp n, const char *what)
{
    if (!PyArray_Check(obj) || PyArray_TYPE((PyArrayObject *)obj) != type ||
        PyArray_NDIM((PyArrayObject *)obj) != 1 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous one-dimensional %s array", what,
                     type == NPY_BOOL ? "bool" : "uint64");
        return NULL;
    }
    if (n >= 0 && PyArray_DIM((PyArrayObject *)obj, 0) != n) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd values, not the %zd of raw", what,
                     (Py_ssize_t)PyArray_DIM((PyArrayObject *)obj, 0), (Py_ssize_t)n);
        return NULL;
    }
    return (PyArrayObject *)obj;
}

static PyObject *core_recommend(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *raw_obj, *empty_obj, *migrated_obj;
    double step;
    long unroll;
    if (!PyArg_ParseTuple(args, "OOOdl:recommend", &raw_obj, &empty_obj, &migrated_obj, &step,
                          &unroll))
        return NULL;
    PyArrayObject *raw = plain_array(raw_obj, NPY_UINT64, -1, "raw");
    if (!raw)
        return NULL;
    npy_intp n = PyArray_DIM(raw, 0);
    PyArrayObject *empty = plain_array(empty_obj, NPY_UINT64, n, "empty");
    PyArrayObject *migrated = migrated_obj == Py_None ? NULL
                              : plain_array(migrated_obj, NPY_BOOL, n, "migrated");
    if (!empty || (migrated_obj != Py_None && !migrated))
        return NULL;
    if (!(step > 0 && step < 1e9)) {
        fc_glue_value_error("step must be above 0 and below 1e9 counts", step);
        return NULL;
    }
    if (unroll < 1 || unroll > FC_UNROLL_MAX) {
        PyErr_Format(PyExc_ValueError, "unroll must be between 1 and %ld, not %ld", FC_UNROLL_MAX,
                     unroll);
        return NULL;
    }
    struct fc_estimate e, paired;
    struct fc_best_median all;
    int got;
    Py_BEGIN_ALLOW_THREADS /* the caller's arrays: as read-only here as numpy's own reductions */
    got = fc_recommend(PyArray_DATA(raw), PyArray_DATA(empty), migrated ? PyArray_DATA(migrated) : NULL,
                       (size_t)n, step, (uint32_t)unroll, &e, &paired, &all);
    Py_END_ALLOW_THREADS
    if (got != 0)
        Py_RETURN_NONE;
    PyObject *first = estimate_tuple(&e);
    if (!first)
        return NULL;
    PyObject *second = estimate_tuple(&paired);
    if (!second) {
        Py_DECREF(first);
        return NULL;
    }
    return Py_BuildValue("NN(dd)", first, second, all.best, all.median);
}

PyMethodDef fc_glue_bench_functions[] = {
    {"recommend", core_recommend, METH_VARARGS, recommend_doc},
    {"time_runs", (PyCFunction)(void (*)(void))core_time_runs, METH_VARARGS | METH_KEYWORDS,
     time_runs_doc},
    {"pmu_open", core_pmu_open, METH_NOARGS, pmu_open_doc},
    {NULL, NULL, 0, NULL},
};
