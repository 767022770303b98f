/*
 * glue_clock.c: the raw readings behind fastcpu.clock() (counter reads, TSC
 * and ns pairs, the ruler chains) and the brackets' arithmetic
 * (bracket.c), for fastcpu/_clock.py and fastcpu/_bracket.py.
 */
#include <math.h>
#include <string.h>

#include "glue.h"

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
        fc_glue_bounded(count_obj, "count", 2, 1L << 20, &count) < 0 ||
        fc_glue_check_timer(get_state(module)) < 0)
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
    if (fc_glue_check_timer(get_state(module)) < 0)
        return NULL;
    uint64_t ns, tsc;
    fc_tsc_ns_pair(&ns, &tsc);
    return Py_BuildValue("KK", (unsigned long long)ns, (unsigned long long)tsc);
}

PyDoc_STRVAR(ruler_ticks_doc,
"ruler_ticks($module, ruler, blocks, /)\n--\n\n"
"TSC ticks for `blocks` (1 to 2**20) blocks of RULER_BLOCK dependent instructions,\n"
"fenced: `ruler` 'add' (register-register adds, 1 core cycle each), 'imul'\n"
"(64-bit imuls, 3 core cycles each) or 'immediate_add' (add $1, which some\n"
"cores fold at rename: a fact about the core, not a ruler).");

static PyObject *core_ruler_ticks(PyObject *module, PyObject *args)
{
    const char *name;
    PyObject *blocks_obj;
    long blocks;
    if (!PyArg_ParseTuple(args, "sO:ruler_ticks", &name, &blocks_obj) ||
        fc_glue_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0 ||
        fc_glue_check_timer(get_state(module)) < 0)
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
"A short warm-up chain, then `count` chains of `blocks` x RULER_BLOCK dependent\n"
"register-register adds,\n"
"in one call: a tuple of their `count` TSC tick counts (bench()'s brackets).");

static PyObject *core_add_chain_samples(PyObject *module, PyObject *args)
{
    /* bounded like ruler_ticks: "I" would wrap -1 into 2**32 - 1 blocks,
     * minutes of adds with the GIL released */
    PyObject *blocks_obj, *count_obj;
    long blocks, count;
    if (!PyArg_ParseTuple(args, "OO:add_chain_samples", &blocks_obj, &count_obj) ||
        fc_glue_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0 ||
        fc_glue_bounded(count_obj, "count", 1, FC_BRACKET_CHAINS_MAX, &count) < 0 ||
        fc_glue_check_timer(get_state(module)) < 0)
        return NULL;
    uint64_t ticks[FC_BRACKET_CHAINS_MAX];
    Py_BEGIN_ALLOW_THREADS
    fc_add_chain_samples((uint32_t)blocks, (uint32_t)count, ticks);
    Py_END_ALLOW_THREADS
    return fc_glue_ticks_tuple(ticks, count);
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
        fc_glue_value_error("tolerance must be a fraction in [0, 1)", tol);
        return NULL;
    }
    if (!(resolution >= 0 && resolution < 1)) {
        fc_glue_value_error("resolution must be a fraction in [0, 1)", resolution);
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
"Forget this thread's brackets: the next measure() with brackets times both.");

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
        fc_glue_bounded(blocks_obj, "blocks", 1, FC_CHAIN_BLOCKS_MAX, &blocks) < 0)
        return NULL;
    if (!(cpt > 0 && isfinite(cpt))) {
        fc_glue_value_error("cycles_per_tick must be finite and > 0", cpt);
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

PyMethodDef fc_glue_clock_functions[] = {
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
