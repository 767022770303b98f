"""Shared fixtures: the methods this machine can run, and a neutral working directory."""

import os

# Plots render off-screen in tests (set before anything imports matplotlib;
# fastcpu itself never picks a backend).
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402

import fastcpu  # noqa: E402

from fastcpu.instrument import CORE_MISSING  # noqa: E402

# Where no C core is installed (FASTCPU_NO_CORE=1, CI's kit pass: tests/test_kit.py alone),
# no method can run.
AVAILABLE = [m.name for m in fastcpu.methods() if m.available] if CORE_MISSING is None else []
UNAVAILABLE = [m for m in fastcpu.methods() if not m.available] if CORE_MISSING is None else []


def pytest_configure(config):
    # Registered here, not in pyproject.toml: CI's unprivileged pass runs a
    # copy of tests/ without the project's configuration.
    config.addinivalue_line("markers", "notebook: executes a notebook (slow; skipped in the sanitizer pass)")
    config.addinivalue_line("markers", "without_core: runs fastcpu with its C core blocked (CI: the kit's own "
                                       "venv, pass 1b)")
    config.addinivalue_line("markers", "slow: seconds a test (tests/suites.py's SLOW, and every notebook); the "
                                       "README's pytest leaves them out, .ci/run's pass 1c runs them")


def pytest_collection_modifyitems(config, items):
    # suites.SLOW names them by file and test; a notebook's execution is slow too
    import suites

    slow = set(suites.SLOW)
    for item in items:
        where = f"{item.path.name}::{item.originalname}"
        if where in slow or item.get_closest_marker("notebook") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True, scope="session")
def _neutral_cwd(tmp_path_factory):
    """Run from an empty directory: `python -m fastcpu` in a subprocess started
    from the repository root would import the uninstalled source tree (no
    compiled _core) instead of the installed package."""
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(before)


@pytest.fixture(autouse=True)
def _no_failed_selftest_verdicts(monkeypatch):
    """A self-test that failed in one test withdraws bench()'s correction for
    the rest of the process (fastcpu.instrument.harness._failed_verdicts): each test
    starts without another test's verdicts."""
    if CORE_MISSING is not None:  # no self-test without the core
        return
    from fastcpu.instrument import harness as _harness

    monkeypatch.setattr(_harness, "_failed_verdicts", {})


@pytest.fixture(params=AVAILABLE)
def available_method(request):
    return request.param
