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
