"""The catalog: names, availability and the reasons given."""

import fastcpu
from fastcpu._methods import method_info
from fastcpu import _core

REQUIRED = {"empty", "gdt", "tscp", "rdpid", "sidt", "rseq", "vdso", "sched_getcpu", "syscall"}


def test_catalog_holds_the_first_methods():
    names = [m.name for m in fastcpu.methods()]
    assert REQUIRED <= set(names)
    assert len(names) == len(set(names))


def test_every_method_is_described_and_explained():
    for m in fastcpu.methods():
        assert m.description
        assert m.encoding in {"none", "cpunode", "cpu", "sidt", "limit", "selector"}
        assert m.available == (m.reason is None)


def test_availability_follows_cpuid():
    feats = _core.features()
    by_name = {m.name: m for m in fastcpu.methods()}
    assert by_name["rdpid"].available <= feats["rdpid"]
    assert by_name["tscp"].available <= feats["rdtscp"]
    assert by_name["rseq"].available == feats["rseq_registered"]
    assert by_name["vdso"].available == feats["vdso_getcpu"]
    if not feats["rdpid"]:
        assert "RDPID" in by_name["rdpid"].reason


def test_a_former_name_still_names_its_method():
    # getcpu_sidt_fp changed the red zone and the frame pointer at once; it
    # is now getcpu_sidt_norz_fp, one of the four corners
    names = [m.name for m in fastcpu.methods()]
    assert "getcpu_sidt_fp" not in names
    for corner in ("getcpu_sidt", "getcpu_sidt_rz_fp", "getcpu_sidt_norz_nofp", "getcpu_sidt_norz_fp",
                   "getcpu_lsl", "getcpu_lsl_rz_fp", "getcpu_lsl_norz_nofp", "getcpu_lsl_norz_fp"):
        assert corner in names
    assert method_info("getcpu_sidt_fp").name == "getcpu_sidt_norz_fp"
    if method_info("getcpu_sidt_norz_fp").available:
        assert fastcpu.bench("getcpu_sidt_fp", 5).method == "getcpu_sidt_norz_fp"


def test_gs_reload_is_refused_in_a_process_with_a_gs_base():
    # Reloading a null %gs selector clears the GS base on Intel CPUs: a
    # process that set one (arch_prctl ARCH_SET_GS) must not run it.
    from pinning import run_python

    code = (
        "import ctypes, json\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "assert libc.syscall(158, 0x1001, ctypes.c_ulong(0x1000)) == 0  # arch_prctl(ARCH_SET_GS)\n"
        "import fastcpu\n"
        "m = next(m for m in fastcpu.methods() if m.name == 'gs_reload')\n"
        "print(json.dumps([m.available, m.reason]))\n"
    )
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    import json

    assert json.loads(out.stdout) == [
        False, "this process has a GS base (arch_prctl ARCH_SET_GS or WRGSBASE), which reloading %gs may clear"
    ]
    info = {m.name: m for m in fastcpu.methods()}["gs_reload"]
    assert info.available and info.reason is None  # this process has none
