"""Nothing is written outside the paths the user gives: not in HOME, not in
TMPDIR, not in the working directory beyond the files asked for."""

import json
import os

from pinning import run_python

SCRIPT = r"""
import json, os
import matplotlib.pyplot as plt
import fastcpu
from fastcpu import plot
from fastcpu.cli import main

fastcpu.bench("gdt", 50)
fastcpu.bench_diff("gdt", 20, k=2)
fastcpu.read("syscall"); fastcpu.read_raw("syscall")
fastcpu.getcpu(); fastcpu.getcpu_node(); fastcpu.getcpu_method()
fastcpu.clock(refresh=True)
print(fastcpu.check())
fastcpu.method_code("gdt")
res = fastcpu.measure(20, ["gdt", "syscall"])
res.save("r.json")
res.save("r.json.gz")
res.save("r.json", overwrite=True)
assert fastcpu.load("r.json") == fastcpu.load("r.json.gz") == res
fastcpu.compare("r.json", "r.json.gz", dataframe=False)
fastcpu.stability(res["gdt"])
fig = plot.distributions(res)
fig.savefig("plot.png")
plt.close(fig)
codes = [
    main(["--runs", "10", "--methods", "gdt"]),
    main(["run", "--out", "run.json", "--runs", "10", "--methods", "gdt,syscall"]),
    main(["run", "--out", "run.json", "--runs", "10", "--methods", "gdt"]),  # refused: exists
    main(["run", "--out", "run.csv", "--format", "csv", "--runs", "10", "--methods", "gdt"]),
    main(["plot", "run.json", "--out", "cli.png"]),
    main(["plot", "run.json", "--out", "cli.png"]),  # refused: exists
    main(["plot", "run.json", "--out", "cli.png", "--overwrite"]),  # through a temporary file
    main(["plot", "run.json", "--out", "nodir/x.png"]),  # refused: no such directory
    main(["compare", "run.json", "r.json"]),
    main(["check"]),
    main(["show", "gdt"]),
]
print(json.dumps(codes))
"""

ASKED_FOR = {"r.json", "r.json.gz", "plot.png", "run.json", "run.csv", "cli.png"}


def _tree(root):
    return sorted(os.path.relpath(os.path.join(d, n), root)
                  for d, dirs, files in os.walk(root) for n in dirs + files)


def test_nothing_is_written_outside_the_paths_given(tmp_path):
    home, tmp, cwd, mpl = (tmp_path / n for n in ("home", "tmp", "cwd", "mpl"))
    for d in (home, tmp, cwd, mpl):
        d.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp), "MPLBACKEND": "Agg",
           # matplotlib keeps its config and font cache under $MPLCONFIGDIR,
           # else ~/.config/matplotlib and ~/.cache/matplotlib: matplotlib's
           # own files, not fastcpu's, so they are sent elsewhere explicitly.
           "MPLCONFIGDIR": str(mpl),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")}
    code = f"import os; os.chdir({str(cwd)!r}); exec({SCRIPT!r})"
    p = run_python(code, **env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[-1]) == [0, 0, 2, 0, 0, 2, 0, 2, 0, 0, 0]
    assert _tree(home) == []
    assert _tree(tmp) == []
    assert _tree(cwd) == sorted(ASKED_FOR)  # no temporary file left either
    # the refused commands wrote nothing: run.json holds two methods, not one
    assert sorted(json.loads((cwd / "run.json").read_text())["results"][i]["method"]
                  for i in range(2)) == ["gdt", "syscall"]
