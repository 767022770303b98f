/*
 * glue_getcpu.c: fastcpu.getcpu() at the floor of a C call (getcpu.c
 * chooses the way), and the machine's features and current CPU.
 */
#include <string.h>

#include "glue.h"
#include "machine.h"
#include "getcpu.h"

/* The first call chooses; it pins a helper thread to each CPU of the
 * caller's affinity mask, so let other Python threads run meanwhile. */
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
"every CPU of the first caller's affinity mask (chosen on the first call).");

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
"for both on every CPU of the first caller's affinity mask (chosen on the\n"
"first call).");

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

PyMethodDef fc_glue_getcpu_functions[] = {
    {"getcpu", core_getcpu, METH_NOARGS, getcpu_doc},
    {"getcpu_node", core_getcpu_node, METH_NOARGS, getcpu_node_doc},
    {"getcpu_ways", core_getcpu_ways, METH_NOARGS, getcpu_ways_doc},
    {"features", core_features, METH_NOARGS, features_doc},
    {"current_cpu", core_current_cpu, METH_NOARGS, current_cpu_doc},
    {NULL, NULL, 0, NULL},
};
