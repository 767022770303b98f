"""On PYTHONPATH, this directory makes every Python process started with it (a
notebook's kernel too) one without fastcpu's C core, as a platform where it
is not built: ``import fastcpu._core`` fails (``None`` in sys.modules), and
``import fastcpu`` gives the analysis kit alone. tests/test_kit.py uses it."""

import sys

sys.modules["fastcpu._core"] = None  # type: ignore[assignment]
