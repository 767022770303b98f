/*
 * glue_catalog.c: the one catalog (sequences.c) as Python sees it: its
 * rows with their verdicts on this machine, one reading of a row (read,
 * read_cpu) and where a row's timed code lies (code).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>

#include "glue.h"
#include "userchains.h"
#include "verdicts.h"

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

/* catalog() row: a dict of the row's fields and this machine's verdicts on it. */
static PyObject *catalog_row(const struct fc_method *m)
{
    const char *why, *cpu_why;
    row_verdicts(m, &why, &cpu_why);
    PyObject *needs = row_needs(m);
    PyObject *chain = m->chain.op ? Py_BuildValue("{sssIsI}", "op", m->chain.op, "length",
                                                  m->chain.length, "latency_cycles",
                                                  m->chain.latency_cycles)
                                  : Py_NewRef(Py_None);
    if (!needs || !chain) {
        Py_XDECREF(needs);
        Py_XDECREF(chain);
        return NULL;
    }
    return Py_BuildValue("{sssssssssssNsOszsOszsNszssszsOsz}", "name", m->name, "kind",
                         fc_kind_name(m->kind), "role", fc_role_name(m->role), "description",
                         m->description, "encoding", encoding_names[m->encoding], "needs", needs,
                         "available", why ? Py_False : Py_True, "reason", why, "reports_cpu",
                         cpu_why ? Py_False : Py_True, "cpu_reason", cpu_why, "chain", chain,
                         "in_child", m->in_child, "code_of", m->code_of ? m->code_of : m->name,
                         "read_failure", m->read_failure, "read_errno",
                         m->read_errno ? Py_True : Py_False, "reference", m->reference);
}

PyDoc_STRVAR(catalog_doc,
"catalog($module, /)\n--\n\n"
"Every row of the one catalog (methods, models and known-cost chains, in\n"
"catalog order) as a dict: name; kind 'method', 'model' or 'chain';\n"
"role 'cpu_source', 'library_call', 'entry_cost', 'model' or 'chain'\n"
"(where it is shown); description; encoding; needs (the names of what it\n"
"requires, requirements()); available and reason (None when available);\n"
"reports_cpu and cpu_reason (None when it reports the CPU); chain ({op,\n"
"length, latency_cycles} for a known-cost chain, else None); in_child (the\n"
"GLIBC_TUNABLES setting of the child interpreter it runs in, else None:\n"
"this process judges it unavailable), code_of (whose sequence it\n"
"times), read_failure (what a failed reading means, or None: its reader\n"
"never fails), read_errno (the reader then returns the call's errno) and\n"
"reference ('library' or 'kernel': what check() compares every row with,\n"
"else None).\n"
"May fork once per fault-prone row.");

static PyObject *core_catalog(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < fc_catalog_count; i++) {
        PyObject *x = catalog_row(&fc_catalog[i]);
        if (!x || PyList_Append(list, x) < 0)
            Py_CLEAR(list);
        Py_XDECREF(x);
    }
    return list;
}

PyDoc_STRVAR(user_chains_doc,
"user_chains($module, /)\n--\n\n"
"The known-cost chains compiled as out-of-line functions `unsigned fn(void)`\n"
"inside the extension, for timing the user-function path: a list of (name,\n"
"op, length, latency_cycles, address); time_runs() takes the address.");

PyDoc_STRVAR(user_empty_doc,
"user_empty($module, /)\n--\n\n"
"The address of a user function of no cost, shaped like the user chains: the\n"
"self-test times it as a user function to find the user path's zero.");

static PyObject *core_user_empty(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)fc_user_empty);
}

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
    const struct fc_method *m = fc_glue_lookup(get_state(module), name);
    if (!m)
        return NULL;
    bool valid;
    uint32_t value = m->read(&valid);
    return Py_BuildValue("kO", (unsigned long)value, valid ? Py_True : Py_False);
}

/* A method that reports the CPU here, or NULL with Unsupported set. */
static const struct fc_method *lookup_cpu_source(core_state *st, const char *name)
{
    const struct fc_method *m = fc_glue_lookup(st, name);
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

PyMethodDef fc_glue_catalog_functions[] = {
    {"catalog", core_catalog, METH_NOARGS, catalog_doc},
    {"user_chains", core_user_chains, METH_NOARGS, user_chains_doc},
    {"user_empty", core_user_empty, METH_NOARGS, user_empty_doc},
    {"read", core_read, METH_VARARGS, read_doc},
    {"read_cpu", core_read_cpu, METH_VARARGS, read_cpu_doc},
    {"code", core_code, METH_VARARGS, code_doc},
    {NULL, NULL, 0, NULL},
};
