"""Shared fixtures: the methods this machine can run."""

import os

# Plots render off-screen in tests (set before anything imports matplotlib;
# fastcpu itself never picks a backend).
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402

import fastcpu  # noqa: E402

AVAILABLE = [m.name for m in fastcpu.methods() if m.available]
UNAVAILABLE = [m for m in fastcpu.methods() if not m.available]


@pytest.fixture(params=AVAILABLE)
def available_method(request):
    return request.param
