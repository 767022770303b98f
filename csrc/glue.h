/*
 * glue.h: what the Python glue files share (csrc/glue_*.c, module.c): the
 * module's state and the argument checks every entry point makes the same
 * way. The glue only parses, calls the C core and converts; no policy
 * lives here (fastcpu/ decides, the core measures).
 */
#ifndef FASTCPU_GLUE_H
#define FASTCPU_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
/* numpy's C API table is defined in module.c and imported there once */
#define PY_ARRAY_UNIQUE_SYMBOL fastcpu_ARRAY_API
#ifndef FASTCPU_GLUE_IMPORTS_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

/* what its own declarations name; each glue file includes the rest */
#include "catalog.h"
#include "conversion.h"

#pragma GCC visibility push(hidden)

#define FC_RUNS_MAX 100000000L /* 10^8 runs: 1.7 GB of arrays */
#define FC_UNROLL_MAX 65536L
/* Blocks a ruler chain may time: bounded so that a wrong argument
 * cannot spin for minutes with the GIL released; a ruler point's chains,
 * timed many times a measurement, far fewer. */
#define FC_CHAIN_BLOCKS_MAX (1L << 20)
#define FC_RULER_POINT_BLOCKS_MAX 64L

/* getcpu_node() hands out one (cpu, node) tuple per CPU, built on first
 * use: a tuple is immutable, and building one per call would double the
 * cost of the call. */
#define FC_PAIRS 4096 /* the CPUs that cpu | node << 12 can name */

typedef struct {
    PyObject *error;       /* fastcpu.Error, a RuntimeError */
    PyObject *unsupported; /* fastcpu.Unsupported, an Error */
    PyObject *timed_runs_type; /* fastcpu._core.TimedRuns, what time_runs() returns */
    PyObject *conversion_type; /* fastcpu._core.Conversion, what ruler points say */
    PyObject *pairs[FC_PAIRS];
} core_state;

static inline core_state *get_state(PyObject *module)
{
    return (core_state *)PyModule_GetState(module);
}

/* An int argument within low..high, or -1 with ValueError/TypeError set:
 * never wrapped round (the "I" and "K" formats would take -1 as 2^32 - 1). */
int fc_glue_bounded(PyObject *obj, const char *name, long low, long high, long *out);
/* -1 with Unsupported set unless this process can time anything (harness.c). */
int fc_glue_check_timer(core_state *st);
/* The catalog row `name`, available here; NULL with ValueError (unknown) or
 * Unsupported (not here, with the reason) set. */
const struct fc_method *fc_glue_lookup(core_state *st, const char *name);
/* ValueError "`what`, not VALUE", VALUE as C's %g writes it; NULL. */
PyObject *fc_glue_value_error(const char *what, double value);
/* What a measurement's ruler points say, as the Conversion record convert()
 * returns; NULL with an exception set. */
PyObject *fc_glue_conversion(core_state *st, const struct fc_conversion *c);

/* Each glue file's functions, registered by module.c. */
extern PyStructSequence_Desc fc_timed_runs_desc; /* glue_bench.c: time_runs()'s record */
extern PyStructSequence_Desc fc_conversion_desc; /* glue_clock.c: what ruler points say */
extern PyMethodDef fc_glue_bench_functions[];   /* glue_bench.c: time_runs, pmu_open */
extern PyMethodDef fc_glue_catalog_functions[]; /* glue_catalog.c: rows, read, code */
extern PyMethodDef fc_glue_getcpu_functions[];  /* glue_getcpu.c: getcpu, features */
extern PyMethodDef fc_glue_clock_functions[];   /* glue_clock.c: counter, rulers, conversion */

#pragma GCC visibility pop

#endif
