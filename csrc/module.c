/*
 * module.c: fastcpu._core, how Python sees the timing core: the module's
 * state and exceptions, its constants, and the functions of each glue file
 * (glue_bench.c: the one measurement; glue_catalog.c: the catalog and one
 * reading; glue_getcpu.c: getcpu(); glue_clock.c: the clock's readings and
 * the conversion), registered here. Multi-phase init, no global Python state.
 */
#define FASTCPU_GLUE_IMPORTS_ARRAY /* the one file that imports numpy's C API */
#include "glue.h"
#include "clock.h"
#include "fork.h"
#include "models.h"
#include "timers.h"

#if !defined(__x86_64__) || !defined(__linux__)
#error "fastcpu times x86-64 instructions under Linux; this platform is neither"
#endif

static int core_exec(PyObject *module)
{
    /* The feature cache, the verdicts and numpy's C API table are
     * process-wide, so only the main interpreter may load the module. The
     * Py_mod_multiple_interpreters slot says so from 3.12 on, but only to
     * interpreters that check it (not legacy ones), and 3.11 has no slot at
     * all. Refuse here, first: before numpy is imported into the
     * sub-interpreter (numpy then refuses the main one: "cannot load module
     * more than once per process") and before any state exists, so the
     * main interpreter can still import fastcpu afterwards. */
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_ImportError,
                        "fastcpu cannot be imported in a sub-interpreter: its C core "
                        "(fastcpu._core) keeps process-wide state and uses numpy's C API, "
                        "which are the main interpreter's; import fastcpu in the main "
                        "interpreter");
        return -1;
    }
    /* sequences.c asserts at compile time that fc_catalog[] fits
     * FC_METHODS_MAX */
    if (_import_array() < 0)
        return -1;
    fc_atfork_init();
    fc_models_init();
    core_state *st = get_state(module);
    /* fastcpu.Error and fastcpu.Unsupported are fastcpu/_base.py's classes,
     * so that the analysis kit has them where no core is built. */
    PyObject *errors = PyImport_ImportModule("fastcpu._base");
    if (!errors)
        return -1;
    st->error = PyObject_GetAttrString(errors, "Error");
    st->unsupported = st->error ? PyObject_GetAttrString(errors, "Unsupported") : NULL;
    Py_DECREF(errors);
    if (!st->unsupported || PyModule_AddObjectRef(module, "Error", st->error) < 0 ||
        PyModule_AddObjectRef(module, "Unsupported", st->unsupported) < 0)
        return -1;
    st->timed_runs_type = (PyObject *)PyStructSequence_NewType(&fc_timed_runs_desc);
    if (!st->timed_runs_type || PyModule_AddObjectRef(module, "TimedRuns", st->timed_runs_type) < 0)
        return -1;
    st->conversion_type = (PyObject *)PyStructSequence_NewType(&fc_conversion_desc);
    if (!st->conversion_type ||
        PyModule_AddObjectRef(module, "Conversion", st->conversion_type) < 0)
        return -1;
    /* every glue file's functions; none is a policy, each parses and calls */
    PyMethodDef *tables[] = {fc_glue_bench_functions, fc_glue_catalog_functions,
                             fc_glue_getcpu_functions, fc_glue_clock_functions};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (PyModule_AddFunctions(module, tables[i]) < 0)
            return -1;
    PyObject *rulers_agree = PyFloat_FromDouble(FC_RULERS_AGREE);
    if (!rulers_agree)
        return -1;
    int added = PyModule_AddObjectRef(module, "RULERS_AGREE", rulers_agree);
    Py_DECREF(rulers_agree);
    if (added < 0 ||
        PyModule_AddIntConstant(module, "RUNS_MAX", FC_RUNS_MAX) < 0 ||
        PyModule_AddIntConstant(module, "UNROLL_MAX", FC_UNROLL_MAX) < 0 ||
        PyModule_AddIntConstant(module, "LEVELS_MAX", FC_LEVELS_MAX) < 0 ||
        PyModule_AddIntConstant(module, "RULER_BLOCK", FC_RULER_BLOCK) < 0 ||
        PyModule_AddIntConstant(module, "IMUL_RULER_BLOCK", FC_IMUL_RULER_BLOCK) < 0)
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
    Py_VISIT(st->timed_runs_type);
    Py_VISIT(st->conversion_type);
    for (size_t i = 0; i < FC_PAIRS; i++)
        Py_VISIT(st->pairs[i]);
    return 0;
}

static int core_clear(PyObject *module)
{
    core_state *st = get_state(module);
    Py_CLEAR(st->error);
    Py_CLEAR(st->unsupported);
    Py_CLEAR(st->timed_runs_type);
    Py_CLEAR(st->conversion_type);
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
    .m_slots = core_slots,
    .m_traverse = core_traverse,
    .m_clear = core_clear,
    .m_free = core_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
