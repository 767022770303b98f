"""The catalog: names, kinds, availability and the reasons given."""

import json

import pytest

import fastcpu
from fastcpu.instrument.catalog import method_info
from fastcpu import _core
from pinning import run_python
import core_probe

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


# ---- the one catalog (csrc/sequences.c) -------------------------------------

KINDS = {"method", "model", "chain"}
ROLES = {"cpu_source", "library_call", "entry_cost", "model", "chain"}
CPU_ENCODINGS = {"cpunode", "cpu", "sidt"}


def test_every_catalog_row_is_whole():
    # the C side checks what Python cannot see: a kind, a timer for every
    # serialization mode and PMU mode, a reader, a reason for every need, a
    # cpu_check where the encoding reports no CPU, one row per name
    assert core_probe.catalog_problems() == []


def test_every_catalog_row_names_its_kind_needs_and_verdicts():
    table = core_probe.requirements()
    requirements = {name: reason for name, _, reason in table}
    here = {name: has for name, has, _ in table}
    assert requirements and all(reason for reason in requirements.values())
    rows = _core.catalog()
    assert len({r["name"] for r in rows}) == len(rows)
    for r in rows:
        name, kind, role, description, encoding = r["name"], r["kind"], r["role"], r["description"], r["encoding"]
        needs, available, reason = r["needs"], r["available"], r["reason"]
        reports, cpu_reason, chain = r["reports_cpu"], r["cpu_reason"], r["chain"]
        assert kind in KINDS, name
        assert role in ROLES, name
        # a model's role is model, a chain's chain, and no other row's
        assert (role == "model") == (kind == "model") and (role == "chain") == (kind == "chain"), name
        assert description, name
        assert set(needs) <= set(requirements), name
        assert available == (reason is None), name
        assert reports == (cpu_reason is None), name
        assert reports <= available, name
        if encoding not in CPU_ENCODINGS:
            assert not reports and cpu_reason, name  # says why it reports no CPU
        if available:
            assert all(here[n] for n in needs), name
        elif reason in requirements.values():
            assert reason in [requirements[n] for n in needs], name  # the reason is a need's
        assert (chain is not None) == (kind == "chain"), name


def test_the_catalog_reaches_python_whole():
    rows = _core.catalog()
    methods = [r for r in rows if r["kind"] in ("method", "model")]
    chains = [r for r in rows if r["kind"] == "chain"]
    # every method is a row of the one catalog, the one measured in a child included
    infos = {m.name: m for m in fastcpu.methods()}
    assert [m.name for m in fastcpu.methods()] == [r["name"] for r in methods]
    for r in methods:  # every field of the row, by name
        info = infos[r["name"]]
        assert (info.kind, info.role, info.description, info.encoding, info.code_of) == (
            r["kind"], r["role"], r["description"], r["encoding"], r["code_of"])
        assert info.in_child == (r["in_child"] is not None)
        if r["in_child"] is None:
            assert (info.available, info.reason, info.reports_cpu, info.cpu_reason) == (
                r["available"], r["reason"], r["reports_cpu"], r["cpu_reason"])
        else:  # this process cannot time it (rseq registered); whether its child can start decides
            assert not r["available"] and "child interpreter" in r["reason"]
            assert info.reason == fastcpu.instrument.child.available_reason()
    assert [(c.name, c.op, c.length, c.latency_cycles) for c in fastcpu.chain_methods()] == [
        (r["name"], r["chain"]["op"], r["chain"]["length"], r["chain"]["latency_cycles"]) for r in chains]
    assert all(method_info(r["name"]).role == "chain" for r in chains)
    in_child = [m for m in fastcpu.methods() if m.in_child]
    assert [(m.name, m.kind, m.role) for m in in_child] == [("sched_getcpu_norseq", "method", "library_call")]
    for r in rows:  # every row is found by name alike
        assert _core.code(r["name"])[0], r["name"]


def test_a_hidden_requirement_is_the_reason_of_every_row_that_needs_it():
    # FASTCPU_TEST_HIDE_CPUID hides any CPUID line of FC_REQUIREMENTS by name:
    # each row needing it then gives that line's reason, whatever the method
    script = (
        "import json\nfrom fastcpu import _core\n"
        "print(json.dumps([[r['name'], list(r['needs']), r['reason']] for r in _core.catalog()]))\n"
    )
    reasons = {name: reason for name, _, reason in core_probe.requirements()}
    for hidden in ("rdtscp", "rdpid", "fsgsbase"):
        p = run_python(script, FASTCPU_TEST_HIDE_CPUID=hidden)
        assert p.returncode == 0, p.stderr
        for name, needs, reason in json.loads(p.stdout):
            if hidden in needs:
                assert reason == reasons[hidden], (hidden, name, reason)


def test_a_former_name_is_an_unknown_method_naming_todays():
    # getcpu_sidt_fp changed the red zone and the frame pointer at once; it
    # is now getcpu_sidt_norz_fp, one of the four corners (old result files
    # load under that name: tests/test_data.py)
    names = [m.name for m in fastcpu.methods()]
    assert "getcpu_sidt_fp" not in names
    for corner in ("getcpu_sidt", "getcpu_sidt_rz_fp", "getcpu_sidt_norz_nofp", "getcpu_sidt_norz_fp",
                   "getcpu_lsl", "getcpu_lsl_rz_fp", "getcpu_lsl_norz_nofp", "getcpu_lsl_norz_fp"):
        assert corner in names
    with pytest.raises(ValueError, match="unknown method 'getcpu_sidt_fp': did you mean .*'getcpu_sidt_norz_fp'"):
        method_info("getcpu_sidt_fp")
    with pytest.raises(ValueError, match="unknown method 'getcpu_sidt_fp'"):
        fastcpu.bench("getcpu_sidt_fp", 5)


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
