"""Shared fixtures: the methods this machine can run."""

import pytest

import fastcpu

AVAILABLE = [m.name for m in fastcpu.methods() if m.available]
UNAVAILABLE = [m for m in fastcpu.methods() if not m.available]


@pytest.fixture(params=AVAILABLE)
def available_method(request):
    return request.param
