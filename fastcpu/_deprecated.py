"""Every deprecated name, in one table, and the one way it warns.

A name that changed keeps answering, with a ``DeprecationWarning`` that says
what it is now and the release that removes it, until that release. Each
place that still answers an old name (a module's ``__getattr__``, a keyword,
a property, a command-line option, a table's column, a dict's key) looks it
up here and calls :func:`warn`; none words its own warning (the CLI's
``--clock`` prints the same sentence on stderr, where a command-line user
sees no DeprecationWarning). Removing them is
one step: delete the rows whose ``removed_in`` has come, and the code that
still answers them (``tests/test_deprecated.py`` fails from that release on).

Names that a file format keeps reading (a result file's ``"clock"`` for
``"counter"``) are no deprecation: files written by an old fastcpu load for
good, without a warning.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass


__all__ = ["Deprecated", "DEPRECATED", "REMOVED_IN", "CSV_COLUMNS", "COLUMN", "ESTIMATE", "REGIME", "attribute",
           "renamed_keys", "warn", "warn_key"]

#: The release that removes every name deprecated up to 0.7.0 (two minor
#: releases of warnings after the last of them).
REMOVED_IN = "0.9.0"


@dataclass(frozen=True)
class Deprecated:
    """One deprecated name: ``old`` and ``new`` as the user spells them,
    ``replacement`` what the code answers the old name with (a keyword, a
    column, a key, or for a module attribute ``new`` itself), the release that
    deprecated it (the first release that shipped the new name) and the one
    that removes it."""

    old: str
    new: str
    since: str
    replacement: str
    removed_in: str = REMOVED_IN
    key: str | None = None  # an old key of a table or dict: the key itself

    @property
    def message(self) -> str:
        return (f"{self.old} is deprecated since fastcpu {self.since} and will be removed in "
                f"fastcpu {self.removed_in}: use {self.new}")


#: The tables and dicts whose keys were renamed, as the rows spell them.
COLUMN = "the comparison column"  # a row or column of fastcpu.compare()'s table
ESTIMATE = "the estimator"  # a key of fastcpu.noise.estimates() and of recovery()'s rows
REGIME = "the noise regime"  # a key of fastcpu.noise.REGIMES


def _rows() -> list[Deprecated]:
    rows: list[Deprecated] = []

    def add(old: str, new: str, since: str, replacement: str | None = None) -> None:
        rows.append(Deprecated(old, new, since, new if replacement is None else replacement))

    def add_key(what: str, old: str, new: str, since: str) -> None:  # a key of a table or dict
        rows.append(Deprecated(f"{what} {old!r}", f"{what} {new!r}", since, new, key=old))

    # 0.6.0: the top level holds what users call; the record types moved to
    # fastcpu.types, the limits to fastcpu.limits (the names that were at the
    # top before 0.6.0, and no others).
    for name in ("ABComparison", "ABRow", "Agreement", "AgreementTable", "CodeBlock", "ComparisonTable",
                 "CounterUnits", "CpuReading", "MethodCode", "PathCheck", "Reference", "Rulers", "SeedRow",
                 "SeedTable", "SelfTest", "Stability"):
        add(f"fastcpu.{name}", f"fastcpu.types.{name}", "0.6.0")
    for name in ("COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "UNROLL_MAX"):
        add(f"fastcpu.{name}", f"fastcpu.limits.{name}", "0.6.0")
    add("fastcpu.CLOCKS", "fastcpu.limits.COUNTERS", "0.6.0")
    # one meaning of "calibration" (the clock's): the chains of known cost are chains
    add("fastcpu.CalibrationInfo", "fastcpu.types.ChainInfo", "0.6.0")
    add("fastcpu.calibration_methods", "fastcpu.chain_methods", "0.6.0")
    add("fastcpu.limits.CLOCKS", "fastcpu.limits.COUNTERS", "0.7.0")

    # 0.3.0: what the runs counted is the counter (clock is the Clock)
    for call in ("bench", "bench_diff", "BenchResult", "DiffResult"):
        add(f"{call}(clock=)", f"{call}(counter=)", "0.3.0", "counter")
    for cls in ("BenchResult", "DiffResult"):
        add(f"{cls}.clock", f"{cls}.counter", "0.3.0", "counter")
    add("--clock", "--counter", "0.3.0", "counter")

    # 0.3.0: the fenced paired mean is 'paired_mean' everywhere
    for unit in ("ticks", "ns", "core_cycles"):
        for old in ("mean", "mean_ci_low", "mean_ci_high"):
            add_key(COLUMN, f"{old}_{unit}", f"paired_{old}_{unit}", "0.3.0")
    add("fastcpu.noise.clean_mean_ticks", "fastcpu.noise.paired_mean_ticks", "0.3.0")
    add("fastcpu.noise.ESTIMATORS", "fastcpu.noise.RECOVERY_ESTIMATORS", "0.3.0")
    add_key(ESTIMATE, "clean_mean", "paired_mean", "0.3.0")

    # 0.7.0: one name per figure
    add_key(COLUMN, "tsc_granularity_ticks", "tsc_step_ticks", "0.7.0")
    add_key(REGIME, "10 ns steps (this guest)", "10 ns steps (Zen 4 guest)", "0.7.0")
    return rows


#: old name as spelled -> its row.
DEPRECATED: dict[str, Deprecated] = {row.old: row for row in _rows()}

#: Columns the one CSV schema still writes after today's, for readers of
#: 0.6's two CSVs, until REMOVED_IN: a column written, not a name looked up,
#: so it cannot warn (``compare --csv``, ``run --format csv``). Each is
#: (old column, what holds the figure now).
CSV_COLUMNS: tuple[tuple[str, str], ...] = (
    ("tsc_granularity_ticks", "tsc_step_ticks"),
    ("migrated_runs", "migrations"),
    *((f"{stat}_ci95_{unit}", f"{stat}_ci_low_{unit} and {stat}_ci_high_{unit}")
      for stat in ("estimate", "paired_mean") for unit in ("ticks", "ns", "core_cycles")),
)


def warn(old: str, stacklevel: int = 2) -> str:
    """Warn that `old` (spelled as in DEPRECATED) is deprecated, at the
    caller's caller (`stacklevel` as for ``warnings.warn``, counted from the
    function that calls this one); return what replaces it."""
    row = DEPRECATED[old]
    warnings.warn(row.message, DeprecationWarning, stacklevel=stacklevel + 1)
    return row.replacement


def renamed_keys(what: str) -> dict[str, str]:
    """The deprecated keys of one table or dict (`what`: COLUMN, ESTIMATE,
    REGIME): old key -> today's."""
    return {row.key: row.replacement for row in DEPRECATED.values()
            if row.key is not None and row.old == f"{what} {row.key!r}"}


def warn_key(what: str, key: str, stacklevel: int = 2) -> str:
    """:func:`warn` for the old `key` of `what` (COLUMN, ESTIMATE, REGIME);
    today's key."""
    return warn(f"{what} {key!r}", stacklevel + 1)


def attribute(module: str, name: str) -> object:
    """A module's ``__getattr__`` for its deprecated names: the value of
    ``module.name``'s new home, with the warning at the user's line; an
    AttributeError where `name` is no deprecated name of `module`."""
    old = f"{module}.{name}"
    if old not in DEPRECATED:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    home, _, new = warn(old, stacklevel=3).rpartition(".")  # 3: past the module's __getattr__
    return getattr(importlib.import_module(home), new)
