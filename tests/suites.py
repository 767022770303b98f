"""Which test files each CI pass runs (.ci/run asks: ``python tests/suites.py NAME``).

The first pass runs every file. Two passes repeat a part of the suite under
other conditions, and only where those conditions can change an outcome, so
that CI stays under 20 minutes on a 2-CPU guest:

- ``sanitized``: the C core built with AddressSanitizer and UBSan. Every file
  that drives the C core (its measuring, reading, clocks, user functions,
  signals, forks, threads, bad input) runs there; the analysis kit's files
  (result files, compare, plots, notebooks, the CLI's text) reach the C core
  only through what those already drive.
- ``unprivileged``: as a user that is not root. The files whose outcome can
  turn on privilege: CPU affinity and seccomp, the PMU (perf_event_paranoid),
  file permissions and what is written where, the child process, errno
  reasons, the CLI's commands.

Every test file is in ``sanitized`` or ``KIT`` (tests/test_architecture.py
checks it), so a new file is placed on purpose.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: Files that drive the C core: the sanitizer pass runs them.
SANITIZED = (
    "test_affinity_bounds.py", "test_agreement.py", "test_bad_input.py", "test_bench.py", "test_c_estimate.py",
    "test_child_runner.py", "test_clock.py", "test_conversion.py", "test_errors.py", "test_estimate.py", "test_faults.py",
    "test_fork.py", "test_getcpu.py", "test_hostile_round4.py", "test_lying_numbers.py", "test_memory.py",
    "test_methods.py",
    "test_models.py", "test_pmu.py", "test_properties.py", "test_read.py",
    "test_rulers.py", "test_selftest.py", "test_signals.py", "test_subinterpreters.py",
    "test_threads.py", "test_user_abi.py", "test_user_fn.py",
)

#: The analysis kit's files, and those that check figures rather than memory
#: (test_accuracy: the sanitizer instruments the harness's own loops).
KIT = (
    "test_ab.py", "test_c_getcpu_header.py", "test_c_headers.py", "test_figures.py", "test_accuracy.py", "test_answers.py", "test_architecture.py", "test_benchmarks.py",
    "test_blocks.py", "test_cli.py", "test_cli_hostile.py", "test_copy_loop.py", "test_compare.py", "test_data.py", "test_deprecated.py",
    "test_export.py", "test_file_bounds.py", "test_hostile_files.py", "test_kit.py", "test_names.py",
    "test_no_stray_files.py", "test_noise.py", "test_notebooks.py", "test_plot.py",
    "test_plot_bounds.py", "test_plot_text.py", "test_progress.py", "test_readme.py", "test_repr.py",
    "test_results.py", "test_seed_table.py", "test_show.py", "test_stability.py",
    "test_statistics.py", "test_worked_example.py",
)

#: Files whose outcome can turn on privilege: the unprivileged pass runs them.
UNPRIVILEGED = (
    "test_affinity_bounds.py", "test_c_getcpu_header.py", "test_agreement.py", "test_bad_input.py", "test_child_runner.py",
    "test_cli.py", "test_errors.py", "test_file_bounds.py", "test_fork.py", "test_getcpu.py", "test_hostile_round4.py",
    "test_no_stray_files.py", "test_pmu.py", "test_signals.py",
)

#: Tests that take seconds each (whole notebooks, a venv without the core, files of
#: gigabytes or every bit flipped, leak and peak-memory loops, the worked example's build):
#: marked ``slow`` (tests/conftest.py), left out of the README's ``pytest`` (pyproject's
#: addopts) and run by .ci/run's pass 1c. Each is "file::test name" (every parameter).
SLOW = (
    "test_benchmarks.py::test_performance_script_prints_its_tables",
    "test_cli.py::test_compare_out_writes_what_stdout_would_get",
    "test_cli.py::test_compare_seed_table_and_ab_from_the_shell",
    "test_cli_hostile.py::test_every_subcommand_answers_hostile_input_without_a_traceback",
    "test_compare.py::test_cli_compare_formats",
    "test_file_bounds.py::test_a_gz_of_near_identical_runs_loads",
    "test_file_bounds.py::test_ctrl_c_stops_a_gz_save_at_once_and_leaves_the_old_file",
    "test_file_bounds.py::test_every_command_that_prints_text_from_a_file_works_in_the_posix_locale",
    "test_hostile_files.py::test_any_field_of_any_value_loads_whole_or_is_refused_by_name",
    "test_hostile_files.py::test_load_holds_at_most_its_stated_multiple_of_the_text_whatever_the_file",
    "test_hostile_files.py::test_no_single_bit_flip_anywhere_loads_with_a_changed_figure",
    "test_kit.py::test_across_machines_executes_without_the_core",
    "test_kit.py::test_compare_the_seed_table_and_ab_without_the_core",
    "test_kit.py::test_every_export_and_plot_without_the_core",
    "test_kit.py::test_the_instrument_raises_unsupported_naming_the_platform",
    "test_kit.py::test_every_data_file_loads_without_the_core",
    "test_kit.py::test_the_cli_compares_and_plots_without_the_core",
    "test_memory.py::test_bench_does_not_leak",
    "test_memory.py::test_errors_do_not_leak",
    "test_memory.py::test_the_cli_peak_is_the_arrays_plus_bounded_scratch",
    "test_memory.py::test_the_estimates_and_warnings_of_a_large_result_take_bounded_scratch",
    "test_no_stray_files.py::test_nothing_is_written_outside_the_paths_given",
    "test_plot_bounds.py::test_plot_memory_is_bounded_by_the_picture_not_the_runs",
    "test_plot_bounds.py::test_plots_of_a_file_of_2000_methods_and_a_long_label_take_seconds",
    "test_plot_text.py::test_text_from_files_is_drawn_as_written_in_every_plot",
    "test_worked_example.py::test_the_worked_example_lands_where_the_doc_says",
)

#: The tests by the room of fastcpu/ they hold (docs/architecture.md): a newcomer changing a
#: room runs its group first (``pytest $(python tests/suites.py room instrument)``). Every test
#: file is in exactly one group (tests/test_architecture.py checks).
ROOMS = {
    "base": ("test_bad_input.py", "test_errors.py", "test_names.py", "test_deprecated.py", "test_lying_numbers.py"),
    "files": ("test_file_bounds.py", "test_hostile_files.py", "test_data.py"),
    "results": ("test_results.py", "test_repr.py", "test_estimate.py", "test_c_estimate.py", "test_statistics.py",
                "test_blocks.py", "test_stability.py", "test_properties.py", "test_answers.py"),
    "instrument": ("test_bench.py", "test_methods.py", "test_models.py", "test_agreement.py", "test_getcpu.py",
                   "test_read.py", "test_child_runner.py", "test_clock.py", "test_conversion.py", "test_rulers.py",
                   "test_selftest.py", "test_accuracy.py", "test_copy_loop.py", "test_user_fn.py",
                   "test_user_abi.py", "test_signals.py", "test_fork.py", "test_threads.py", "test_faults.py",
                   "test_memory.py", "test_pmu.py", "test_affinity_bounds.py", "test_subinterpreters.py",
                   "test_show.py", "test_hostile_round4.py", "test_c_headers.py", "test_c_getcpu_header.py"),
    "analysis": ("test_ab.py", "test_compare.py", "test_seed_table.py", "test_export.py", "test_noise.py"),
    "plot": ("test_plot.py", "test_plot_bounds.py", "test_plot_text.py"),
    "cli": ("test_cli.py", "test_cli_hostile.py", "test_progress.py", "test_no_stray_files.py"),
    "house": ("test_architecture.py", "test_kit.py", "test_worked_example.py", "test_readme.py", "test_figures.py",
              "test_benchmarks.py", "test_notebooks.py"),
}

SUITES = {"sanitized": SANITIZED, "unprivileged": UNPRIVILEGED}


def files(suite: str) -> tuple[str, ...]:
    """The test files of `suite`, checked to exist."""
    here = Path(__file__).resolve().parent
    missing = [f for f in SUITES[suite] if not (here / f).is_file()]
    if missing:
        raise SystemExit(f"tests/suites.py names files that are not there: {', '.join(missing)}")
    return SUITES[suite]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "room" and sys.argv[2] in ROOMS:
        here = Path(__file__).resolve().parent
        print(" ".join(str(here / f) for f in ROOMS[sys.argv[2]]))
    elif len(sys.argv) == 2 and sys.argv[1] in SUITES:
        print(" ".join(files(sys.argv[1])))
    else:
        raise SystemExit(f"usage: python tests/suites.py {{{','.join(SUITES)}}} | room {{{','.join(ROOMS)}}}")
