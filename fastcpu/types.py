"""The record types fastcpu's functions return, for annotations and ``isinstance``.

Where no C core is built, the instrument's types (``Agreement``, ``AgreementTable``,
``Reference``, ``ChainInfo``, ``CpuReading``, ``CodeBlock``, ``MethodCode``) are absent: asking
for one says why. ``BenchResult``, ``DiffResult``, ``Results``, ``Clock`` and ``MethodInfo``
are also at the top, ``fastcpu.X``.
"""

from __future__ import annotations

from .analysis.ab import ABComparison, ABRow
from .results.values import CounterUnits, Rulers
from .results.parts import ClockMotion
from .analysis.compare import ComparisonTable
from .instrument import CORE_MISSING, missing_type
from .results.results import CpuVerdict
from .analysis.seed_table import SeedRow, SeedTable
from .results.selftest_report import ChainCheck, PathCheck, SelfTest
from .results.stability import Stability


if CORE_MISSING is None:  # the instrument's record types
    from .instrument.catalog import ChainInfo
    from .instrument.cpu import Agreement, AgreementTable, Reference
    from .instrument.cpu import CpuReading
    from .instrument.show import CodeBlock, MethodCode
else:  # no C core here: asking for one says why
    def __getattr__(name: str) -> object:
        if name in __all__:
            missing_type(__name__, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ABComparison",
    "ABRow",
    "Agreement",
    "AgreementTable",
    "ChainCheck",
    "ChainInfo",
    "ClockMotion",
    "CodeBlock",
    "ComparisonTable",
    "CounterUnits",
    "CpuVerdict",
    "CpuReading",
    "MethodCode",
    "PathCheck",
    "Reference",
    "Rulers",
    "SeedRow",
    "SeedTable",
    "SelfTest",
    "Stability",
]
