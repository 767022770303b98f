/*
 * glue_args.c: the argument checks every glue file makes the same way
 * (glue.h says what each does).
 */
#include "glue.h"
#include "harness.h"
#include "verdicts.h"

int fc_glue_bounded(PyObject *obj, const char *name, long low, long high, long *out)
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

int fc_glue_check_timer(core_state *st)
{
    const char *why = fc_timer_unavailable();
    if (why) {
        PyErr_SetString(st->unsupported, why);
        return -1;
    }
    return 0;
}

const struct fc_method *fc_glue_lookup(core_state *st, const char *name)
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


PyObject *fc_glue_value_error(const char *what, double value)
{
    char text[32];
    snprintf(text, sizeof text, "%g", value); /* PyErr_Format knows no %g */
    PyErr_Format(PyExc_ValueError, "%s, not %s", what, text);
    return NULL;
}
