/*
 * glue_clock.c: the raw readings behind fastcpu.clock() (counter reads, TSC
 * and ns pairs, the ruler chains) and the conversion's arithmetic
 * (conversion.c), for fastcpu/_clock.py and fastcpu/_conversion.py.
 */
#include <math.h>
#include <string.h>

#include "glue.h"
#include "clock.h"

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
"TSC ticks for `blocks` (1 to 2**20) blocks of RULER_BLOCK dependent instructions\n"
"(IMUL_RULER_BLOCK imuls), fenced: `ruler` 'add' (register-register adds, 1 core\n"
"cycle each), 'imul' (64-bit imuls, 3 core cycles each) or 'immediate_add' (add $1, which some\n"
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

/* An (n, 4) float64 array of ruler points (run, tsc, add, imul) into a
 * C array of n points (PyMem_Free it); -1 with an exception set. */
static int parse_points(PyObject *obj, struct fc_ruler_point **out, size_t *n)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_FLOAT64, 2, 2,
                                                         NPY_ARRAY_CARRAY_RO);
    if (!a)
        return -1;
    if (PyArray_DIM(a, 1) != 4) {
        PyErr_Format(PyExc_ValueError,
                     "points must be an (n, 4) array of (run, tsc, add, imul), not (%zd, %zd)",
                     (Py_ssize_t)PyArray_DIM(a, 0), (Py_ssize_t)PyArray_DIM(a, 1));
        Py_DECREF(a);
        return -1;
    }
    *n = (size_t)PyArray_DIM(a, 0);
    const double *v = PyArray_DATA(a);
    for (size_t i = 0; i < *n * 4; i++) {
        /* runs and ticks count up from 0; the rulers are rates */
        bool ok = isfinite(v[i]) && (i % 4 < 2 ? v[i] >= 0 : v[i] > 0);
        if (!ok || (i % 4 == 0 && i >= 4 && v[i] < v[i - 4])) {
            PyErr_Format(PyExc_ValueError,
                         "points[%zu] must hold runs in order from 0, ticks >= 0 and positive "
                         "finite core cycles per tick", i / 4);
            Py_DECREF(a);
            return -1;
        }
    }
    *out = PyMem_Malloc((*n ? *n : 1) * sizeof **out);
    if (!*out) {
        Py_DECREF(a);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(*out, v, *n * sizeof **out);
    Py_DECREF(a);
    return 0;
}

static PyStructSequence_Field conversion_fields[] = {
    {"cycles_per_tick", "converting the runs stretch by stretch (NaN: no point's rulers agree)"},
    {"ci95", "its 95% half-width, core cycles per tick"},
    {"points", "ruler points timed"},
    {"disturbed", "points whose add and imul rulers disagreed (left out)"},
    {"hops", "stretches between two undisturbed points at different levels, both rulers moved alike"},
    {"hop_runs", "runs in those stretches"},
    {"add_mean", "the add ruler's mean over the undisturbed points"},
    {"imul_mean", "the imul ruler's"},
    {"levels", "the levels seen, core cycles per tick, lowest first (a tuple)"},
    {"level_points", "how many undisturbed points read each level (a tuple)"},
    {"level_min", "the lowest undisturbed point (NaN: none)"},
    {"level_max", "the highest undisturbed point (NaN: none)"},
    {"span_ticks", "TSC ticks from the first point to the last"},
    {"hops_located", "of the hops: those whose place in their stretch the runs showed"},
    {"slowdowns", "level changes whose rulers moved apart or whose body held (other work, not the clock)"},
    {NULL, NULL},
};

PyStructSequence_Desc fc_conversion_desc = {
    "fastcpu._core.Conversion",
    "What a measurement's ruler points say (convert(), TimedRuns.conversion).",
    conversion_fields,
    15,
};

/* Set item `i` of `record` to `value` (a new reference, NULL on failure:
 * then -1 and the record dropped). */
static int set_item(PyObject *record, Py_ssize_t i, PyObject *value)
{
    if (!value) {
        Py_DECREF(record);
        return -1;
    }
    PyStructSequence_SetItem(record, i, value);
    return 0;
}

PyObject *fc_glue_conversion(core_state *st, const struct fc_conversion *c)
{
    /* a record, not a dict: bench() reads it on every call, right after its
     * runs, and a dict of 13 keys made from C strings cost about 1 us a
     * call; the levels and their points as two tuples, lowest first, as a
     * result's ClockMotion keeps them */
    PyObject *record = PyStructSequence_New((PyTypeObject *)st->conversion_type);
    if (!record)
        return NULL;
    PyObject *levels = PyTuple_New(c->levels), *counts = PyTuple_New(c->levels);
    if (!levels || !counts) {
        Py_XDECREF(levels);
        Py_XDECREF(counts);
        Py_DECREF(record);
        return NULL;
    }
    for (uint32_t k = 0; k < c->levels; k++) {
        PyObject *v = PyFloat_FromDouble(c->level[k]);
        PyObject *n = PyLong_FromUnsignedLong(c->level_points[k]);
        if (!v || !n) {
            Py_XDECREF(v);
            Py_XDECREF(n);
            Py_DECREF(levels);
            Py_DECREF(counts);
            Py_DECREF(record);
            return NULL;
        }
        PyTuple_SET_ITEM(levels, k, v);
        PyTuple_SET_ITEM(counts, k, n);
    }
    bool seen = c->points > c->disturbed;
    PyStructSequence_SetItem(record, 8, levels);
    PyStructSequence_SetItem(record, 9, counts);
    /* hop_runs is a count of runs (a sum of whole numbers kept as a double) */
    if (set_item(record, 0, PyFloat_FromDouble(c->cycles_per_tick)) < 0 ||
        set_item(record, 1, PyFloat_FromDouble(c->ci95)) < 0 ||
        set_item(record, 2, PyLong_FromUnsignedLong(c->points)) < 0 ||
        set_item(record, 3, PyLong_FromUnsignedLong(c->disturbed)) < 0 ||
        set_item(record, 4, PyLong_FromUnsignedLong(c->hops)) < 0 ||
        set_item(record, 5, PyLong_FromUnsignedLongLong((unsigned long long)c->hop_runs)) < 0 ||
        set_item(record, 6, PyFloat_FromDouble(c->add_mean)) < 0 ||
        set_item(record, 7, PyFloat_FromDouble(c->imul_mean)) < 0 ||
        set_item(record, 10, PyFloat_FromDouble(seen ? c->level_min : NAN)) < 0 ||
        set_item(record, 11, PyFloat_FromDouble(seen ? c->level_max : NAN)) < 0 ||
        set_item(record, 12, PyFloat_FromDouble(c->span_ticks)) < 0 ||
        set_item(record, 13, PyLong_FromUnsignedLong(c->hops_located)) < 0 ||
        set_item(record, 14, PyLong_FromUnsignedLong(c->slowdowns)) < 0)
        return NULL;
    return record;
}

PyDoc_STRVAR(convert_doc,
"convert($module, points, tolerance, resolution, a=None, b=None, /)\n--\n\n"
"What a measurement's ruler points say (the arithmetic time_runs() applies to\n"
"its own): `points` an (n, 4) array of (runs recorded before the point, TSC\n"
"ticks since the start, add ruler and imul ruler in core cycles per tick),\n"
"in the order taken; `tolerance` the fraction within which two points'\n"
"levels agree (a point's two rulers agree within 3 x resolution, at least\n"
"RULERS_AGREE); `resolution` one counter step over the shorter ruler's ticks. A\n"
"Conversion record: cycles_per_tick (converting the runs stretch by stretch; NaN when\n"
"no point's rulers agree), ci95, points, disturbed, hops, hop_runs,\n"
"add_mean, imul_mean, levels (core cycles per tick, lowest first),\n"
"level_points (the points at each), level_min, level_max, span_ticks (TSC\n"
"ticks from the first point to the last), hops_located (the hops whose\n"
"place the runs showed), slowdowns (level changes whose two rulers moved\n"
"apart or whose body held: other work, not the clock alone; not hops).\n"
"`a` and `b` (optional, together): both sides' ticks of each run\n"
"(uint64), at least as many as the last point's runs; a stretch a hop fell\n"
"into is then converted apart at the hop its body's ticks show.");

/* Both sides' run ticks for convert(): two 1-d uint64 arrays of one length,
 * covering the points' runs (*a and *b new references, or both NULL where
 * neither was given); -1 with an exception set. */
static int parse_run_ticks(PyObject *a_obj, PyObject *b_obj, const struct fc_ruler_point *p,
                           size_t n, PyArrayObject **a, PyArrayObject **b)
{
    *a = *b = NULL;
    if (a_obj == Py_None && b_obj == Py_None)
        return 0;
    if (a_obj == Py_None || b_obj == Py_None) {
        PyErr_SetString(PyExc_TypeError, "give both sides' run ticks, a and b, or neither");
        return -1;
    }
    *a = (PyArrayObject *)PyArray_FROMANY(a_obj, NPY_UINT64, 0, 0, NPY_ARRAY_CARRAY_RO);
    *b = *a ? (PyArrayObject *)PyArray_FROMANY(b_obj, NPY_UINT64, 0, 0, NPY_ARRAY_CARRAY_RO) : NULL;
    if (!*a || !*b)
        goto fail;
    if (PyArray_NDIM(*a) != 1 || PyArray_NDIM(*b) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "a and b must be 1-d arrays of each run's ticks, not %d-d and %d-d",
                     PyArray_NDIM(*a), PyArray_NDIM(*b));
        goto fail;
    }
    npy_intp runs = PyArray_DIM(*a, 0);
    if (PyArray_DIM(*b, 0) != runs) {
        PyErr_Format(PyExc_ValueError, "a and b must hold the same runs, not %zd and %zd",
                     (Py_ssize_t)runs, (Py_ssize_t)PyArray_DIM(*b, 0));
        goto fail;
    }
    if (n && p[n - 1].run > (double)runs) {
        PyErr_Format(PyExc_ValueError,
                     "the points count %.0f runs, but a and b hold %zd: give every run's ticks",
                     p[n - 1].run, (Py_ssize_t)runs);
        goto fail;
    }
    return 0;
fail:
    Py_CLEAR(*a);
    Py_CLEAR(*b);
    return -1;
}

static PyObject *core_convert(PyObject *module, PyObject *args)
{
    PyObject *points_obj, *a_obj = Py_None, *b_obj = Py_None;
    double tol, resolution;
    if (!PyArg_ParseTuple(args, "Odd|OO:convert", &points_obj, &tol, &resolution, &a_obj, &b_obj))
        return NULL;
    if (!(tol >= 0 && tol < 1))
        return fc_glue_value_error("tolerance must be a fraction in [0, 1)", tol);
    if (!(resolution >= 0 && resolution < 1))
        return fc_glue_value_error("resolution must be a fraction in [0, 1)", resolution);
    struct fc_ruler_point *p;
    size_t n;
    if (parse_points(points_obj, &p, &n) < 0)
        return NULL;
    PyArrayObject *a, *b;
    if (parse_run_ticks(a_obj, b_obj, p, n, &a, &b) < 0) {
        PyMem_Free(p);
        return NULL;
    }
    struct fc_run_ticks runs = {a ? PyArray_DATA(a) : NULL, b ? PyArray_DATA(b) : NULL,
                                a ? (size_t)PyArray_DIM(a, 0) : 0};
    struct fc_conversion c;
    double agree_tol = 3 * resolution > FC_RULERS_AGREE ? 3 * resolution : FC_RULERS_AGREE;
    fc_convert(p, n, agree_tol, tol, resolution, a ? &runs : NULL, &c);
    PyMem_Free(p);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return fc_glue_conversion(get_state(module), &c);
}

PyDoc_STRVAR(ruler_resolution_doc,
"ruler_resolution($module, step_ticks, cycles_per_tick, add_blocks, imul_blocks, /)\n--\n\n"
"One step of a counter moving `step_ticks` TSC ticks at a time over the TSC\n"
"ticks of the shorter ruler chain of a ruler point (a fraction).");

static PyObject *core_ruler_resolution(PyObject *module, PyObject *args)
{
    (void)module;
    double step, cpt;
    PyObject *add_obj, *imul_obj;
    long add_blocks, imul_blocks;
    if (!PyArg_ParseTuple(args, "ddOO:ruler_resolution", &step, &cpt, &add_obj, &imul_obj) ||
        fc_glue_bounded(add_obj, "add_blocks", 1, FC_CHAIN_BLOCKS_MAX, &add_blocks) < 0 ||
        fc_glue_bounded(imul_obj, "imul_blocks", 1, FC_CHAIN_BLOCKS_MAX, &imul_blocks) < 0)
        return NULL;
    if (!(cpt > 0 && isfinite(cpt)))
        return fc_glue_value_error("cycles_per_tick must be finite and > 0", cpt);
    if (!(step >= 0 && isfinite(step)))
        return fc_glue_value_error("step_ticks must be finite and >= 0", step);
    return PyFloat_FromDouble(
        fc_ruler_resolution(step, cpt, (uint32_t)add_blocks, (uint32_t)imul_blocks));
}

PyDoc_STRVAR(ruler_tolerance_doc,
"ruler_tolerance($module, resolution, /)\n--\n\n"
"Within what fraction two ruler readings agree: three counter steps of a\n"
"chain (`resolution`, a fraction), at least 0.01.");

static PyObject *core_ruler_tolerance(PyObject *module, PyObject *arg)
{
    (void)module;
    double resolution = PyFloat_AsDouble(arg);
    if (resolution == -1.0 && PyErr_Occurred())
        return NULL;
    if (!(resolution >= 0 && resolution < 1))
        return fc_glue_value_error("resolution must be a fraction in [0, 1)", resolution);
    return PyFloat_FromDouble(fc_ruler_tolerance(resolution));
}

PyMethodDef fc_glue_clock_functions[] = {
    {"tsc_reads", core_tsc_reads, METH_VARARGS, tsc_reads_doc},
    {"tsc_ns_pair", core_tsc_ns_pair, METH_NOARGS, tsc_ns_pair_doc},
    {"ruler_ticks", core_ruler_ticks, METH_VARARGS, ruler_ticks_doc},
    {"convert", core_convert, METH_VARARGS, convert_doc},
    {"ruler_resolution", core_ruler_resolution, METH_VARARGS, ruler_resolution_doc},
    {"ruler_tolerance", core_ruler_tolerance, METH_O, ruler_tolerance_doc},
    {NULL, NULL, 0, NULL},
};
