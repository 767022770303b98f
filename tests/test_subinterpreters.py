"""fastcpu refuses a sub-interpreter cleanly, and the main interpreter can
still import and use it afterwards (issue 22, item 7).

The C core keeps process-wide state (the feature cache, the verdicts, numpy's
C API table), so only the main interpreter may load it. From Python 3.12 the
Py_mod_multiple_interpreters slot refuses an isolated sub-interpreter; a
legacy one (which does not check the slot) and every sub-interpreter of 3.10
and 3.11 (no slot) are refused by the module's exec slot, before numpy is
imported there: numpy loaded in a sub-interpreter refuses the main one
("cannot load module more than once per process"). Each case runs in a fresh
interpreter.
"""

import json
import sys

import pytest

from pinning import run_python

SCRIPT = r"""
import json, sys
try:
    import _interpreters as interpreters  # 3.13 on
except ImportError:
    import _xxsubinterpreters as interpreters  # 3.10 to 3.12
MAIN_FIRST = %r
if MAIN_FIRST:
    import fastcpu

# what the sub-interpreter's own modules hold after the refusal
LEFT = '''
import sys
left = sorted(m for m in sys.modules if m in ("fastcpu", "fastcpu._core", "numpy") or m.startswith("numpy."))
if left:
    raise RuntimeError("left behind: " + ", ".join(left))
'''


def run(interp, code):
    # an exception raised in the sub-interpreter, as 'Type: message', or None
    if hasattr(interpreters, "exec"):  # 3.13: returns what was raised
        failure = interpreters.exec(interp, code)
        return None if failure is None else f"{failure.type.__name__}: {failure.msg}"
    try:
        interpreters.run_string(interp, code)
    except interpreters.RunFailedError as exc:  # "<class 'ImportError'>: message"
        return str(exc).replace("<class '", "").replace("'>", "", 1)
    return None


# create()'s arguments for each kind: 3.12 on also has legacy interpreters,
# which do not check the multiple-interpreters slot
kinds = {"default": ((), {})}
if sys.version_info >= (3, 13):
    kinds["legacy"] = (("legacy",), {})
elif sys.version_info >= (3, 12):
    kinds["legacy"] = ((), {"isolated": False})
out = {}
for kind, (args, kwargs) in kinds.items():
    interp = interpreters.create(*args, **kwargs)
    try:
        # twice: a refused import leaves nothing that makes the next one differ
        out[kind] = [run(interp, "import fastcpu"), run(interp, "import fastcpu"), run(interp, LEFT)]
    finally:
        interpreters.destroy(interp)

import fastcpu
name = next(m.name for m in fastcpu.methods() if m.available and m.name != "empty")
out["main"] = {"getcpu": fastcpu.getcpu(), "runs": fastcpu.bench(name, 10).runs,
               "core": fastcpu._core.__name__}
print(json.dumps(out))
"""

#: What a refused import says: the exec slot's message, or (3.12 on, an
#: isolated sub-interpreter) CPython's for the Py_mod_multiple_interpreters slot.
OURS = ("ImportError: fastcpu cannot be imported in a sub-interpreter: its C core (fastcpu._core) "
        "keeps process-wide state and uses numpy's C API, which are the main interpreter's; "
        "import fastcpu in the main interpreter")
CPYTHONS = "ImportError: module fastcpu._core does not support loading in subinterpreters"


@pytest.mark.parametrize("main_first", [False, True], ids=["sub-interpreter first", "main first"])
def test_a_sub_interpreter_is_refused_and_main_still_imports(main_first):
    try:
        import _interpreters  # noqa: F401
    except ImportError:
        pytest.importorskip("_xxsubinterpreters", reason="this Python has no sub-interpreter module")
    p = run_python(SCRIPT % (main_first,))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for kind in out.keys() - {"main"}:
        first, again, left = out[kind]
        assert first == again, kind
        assert first == OURS or (first == CPYTHONS and kind == "default" and sys.version_info >= (3, 12)), first
        assert left is None, left  # neither fastcpu, its core nor numpy stayed in the sub-interpreter
    if sys.version_info < (3, 12) or "legacy" in out:
        # no slot (3.10, 3.11) or one a legacy interpreter ignores: the exec slot refused
        assert OURS in [out[k][0] for k in out.keys() - {"main"}]
    assert out["main"]["core"] == "fastcpu._core" and out["main"]["runs"] == 10
    assert out["main"]["getcpu"] >= 0
