"""python -m fastcpu show: the bytes each method times, found by the ELF
symbol table, with and without a disassembler."""

import shutil
import subprocess

import pytest

import fastcpu
from fastcpu import _core
from fastcpu.instrument import show as _elf
from fastcpu.instrument import show as _show
from fastcpu.cli import main

NAMES = [m.name for m in fastcpu.methods()]
LFENCE, RDTSC, RDTSCP = bytes.fromhex("0faee8"), bytes.fromhex("0f31"), bytes.fromhex("0f01f9")
LIBRARY = _core.code("empty")[2]


@pytest.mark.parametrize("name", NAMES)
def test_every_method_shows_its_lfence_timer(name):
    code = fastcpu.method_code(name, disassembler="none")
    assert code.method == name and code.library == LIBRARY
    timer = code.blocks[0]
    # sched_getcpu_norseq times sched_getcpu's code in a child without rseq
    info = fastcpu.instrument.catalog.method_info(name)
    assert timer.symbol == f"time_{info.code_of}_lfence"
    assert info.code_of == (name if not info.in_child else "sched_getcpu")
    # the harness: lfence; rdtsc; (join the halves;) lfence opens,
    # lfence; rdtscp; lfence closes (the body completed, not only executed)
    opens, closes = timer.code.find(LFENCE + RDTSC), timer.code.rfind(LFENCE + RDTSCP + LFENCE)
    assert 0 <= opens < closes
    assert LFENCE in timer.code[opens + 5 : closes]
    if not _core.SANITIZED:  # instrumentation may end it with a call that never returns
        assert 0xC3 in timer.code  # a ret (the single-copy path may end in a jmp back)
    for b in code.blocks:
        # what runs is what the file holds at that symbol
        assert b.code == _elf.file_bytes(LIBRARY, b.link_address, len(b.code))
        assert b.disassembly is None


def test_bounds_agree_with_nm():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-S", "--defined-only", LIBRARY], capture_output=True, text=True, check=True).stdout
    expected = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and int(parts[1], 16):
            expected[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    ours = {s.name: (s.value, s.size) for s in _elf.function_symbols(LIBRARY)}
    timers = {k: v for k, v in expected.items() if k.startswith(("time_", "model_"))}
    assert timers and all(ours[k] == v for k, v in timers.items())


def test_a_stripped_library_is_refused_with_the_reason(tmp_path, monkeypatch):
    strip = shutil.which("strip")
    if strip is None:
        pytest.skip("strip (binutils) is not installed")
    stripped = tmp_path / "stripped.so"
    subprocess.run([strip, "-o", str(stripped), LIBRARY], check=True)
    _elf.function_symbols.cache_clear()
    with pytest.raises(_elf.ElfError, match="stripped"):
        _elf.function_symbols(str(stripped))
    real = _core.code

    def code_in_stripped(name):
        timer, model, _, base = real(name)
        return timer, model, str(stripped), base

    monkeypatch.setattr(_show._core, "code", code_in_stripped)
    with pytest.raises(fastcpu.Error, match="stripped"):
        fastcpu.method_code("rdpid")


def test_not_elf():
    with pytest.raises(_elf.ElfError, match="not a little-endian ELF64"):
        _elf.function_symbols(__file__)


def test_bytes_only_without_a_disassembler(monkeypatch):
    monkeypatch.setattr(_show.shutil, "which", lambda _: None)
    monkeypatch.setattr(_show, "_have_capstone", lambda: False)
    code = fastcpu.method_code("rdpid")
    assert code.disassembler is None
    assert "neither objdump" in code.note and "capstone" in code.note
    text = str(code)
    assert "time_rdpid_lfence" in text and "0f ae e8 0f 31" in text.replace("\n", " ")
    with pytest.raises(fastcpu.Unsupported, match="objdump is not installed"):
        fastcpu.method_code("rdpid", disassembler="objdump")
    with pytest.raises(fastcpu.Unsupported, match="capstone is not installed"):
        fastcpu.method_code("rdpid", disassembler="capstone")


@pytest.mark.parametrize("tool", ["objdump", "capstone"])
def test_disassembly(tool):
    if tool == "objdump" and shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is not installed")
    if tool == "capstone" and _core.SANITIZED:  # before importing it: the process would abort
        pytest.skip("capstone dlopens with RTLD_DEEPBIND, which the sanitizer runtime refuses")
    if tool == "capstone" and not _show._have_capstone():
        pytest.skip("capstone is not installed")
    code = fastcpu.method_code("getcpu_tscp", disassembler=tool)
    assert code.disassembler == tool and code.note is None
    timer, model = code.blocks
    text = "\n".join(timer.disassembly)
    assert "lfence" in text and "rdtsc" in text and "rdtscp" in text and "call" in text
    assert any("rdtscp" in line for line in model.disassembly)
    # one line per instruction, each led by its link-time address
    assert int(model.disassembly[0].split(":")[0], 16) == model.link_address


def test_auto_prefers_objdump():
    code = fastcpu.method_code("gdt")
    if shutil.which("objdump"):
        assert code.disassembler == "objdump"
    elif _show._have_capstone():
        assert code.disassembler == "capstone"


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown disassembler"):
        fastcpu.method_code("gdt", disassembler="gdb")
    with pytest.raises(ValueError, match="did you mean"):
        fastcpu.method_code("gdtt")


def test_cli_show(capsys):
    assert main(["show", "vgetcpu26_hit", "--disassembler", "none"]) == 0
    out = capsys.readouterr().out
    assert "time_vgetcpu26_hit_lfence" in out and "model_vgetcpu26_lsl" in out


@pytest.mark.parametrize("args", [["show"], ["show", "nope"], ["show", "gdt", "--disassembler", "gdb"]])
def test_cli_show_bad_options(args, capsys):
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("fastcpu: error:")


# ---- what sits inside the timed region ----


def _instructions(lines):
    """(address, mnemonic, operands) of objdump -d -w lines."""
    out = []
    for line in lines:
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        words = parts[2].split("#")[0].split(None, 1)
        out.append((int(parts[0].rstrip(":"), 16), words[0], words[1].strip() if len(words) > 1 else ""))
    return out


def _single_copy_region(lines):
    """The instructions between the opening read's closing lfence and the
    closing lfence; rdtscp; lfence on the path without a loop (a region
    holding no jump backwards into itself)."""
    insns = _instructions(lines)
    regions = []
    for i, (_, mnemonic, _) in enumerate(insns):
        if mnemonic == "rdtsc" and insns[i + 3][1] == "lfence":  # rdtsc; shl; or; lfence
            # the closing lfence; rdtscp; lfence (a body may hold an rdtscp of its own)
            end = next(
                k for k in range(i + 4, len(insns) - 2)
                if [m for _, m, _ in insns[k : k + 3]] == ["lfence", "rdtscp", "lfence"]
            )
            regions.append(insns[i + 4 : end])

    def loops(region):
        start = region[0][0] if region else 0
        return any(
            m.startswith("j") and ops[:1].isdigit() and start <= int(ops.split()[0], 16) <= addr
            for addr, m, ops in region
        )

    single = [r for r in regions if not loops(r)]
    assert len(single) == 1, regions
    return single[0]


def _operands(ops):
    """AT&T operands split at the commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in ops:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [o for o in out + [cur] if o]


STORES_ONLY = ("mov", "sidt", "sgdt", "set", "stos")


def _loads(region):
    """The instructions of `region` that read memory: a memory source operand
    (AT&T order: the destination comes last), a read-modify-write of memory,
    or an indirect call or jump through memory. lea computes an address and
    reads nothing; a plain store reads nothing."""
    loads = []
    for _, mnemonic, ops in region:
        if mnemonic.startswith(("lea", "nop")):
            continue
        operands = _operands(ops)
        memory = ["(" in o or "%fs:" in o or "%gs:" in o for o in operands]
        if any(memory[:-1]) or (memory and memory[-1] and not mnemonic.startswith(STORES_ONLY)):
            loads.append(f"{mnemonic} {ops}")
    return loads


# The single-copy timed region of each: the loads it must hold, no more.
# rseq's cpu_id is one %fs-relative load with __rseq_offset already in a
# register (loaded before the opening read: no GOT, no reload after the
# read's memory clobber); the vDSO is called through a register; the system
# call and the models load nothing in the caller.
EXPECTED_LOADS = {
    "empty": 0, "gdt": 0, "rdpid": 0, "tscp": 0, "rseq": 1, "sched_getcpu_rseq_inline": 1,
    "vdso": 0, "syscall": 0, "getcpu_lsl": 0, "getcpu_tscp": 0, "vgetcpu26_hit": 0,
    "glibc27_sched_getcpu": 0, "sched_getcpu_lsl": 0,
}


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.skipif(bool(_core.SANITIZED), reason="a sanitizer build instruments the timed code")
@pytest.mark.parametrize("name", sorted(EXPECTED_LOADS))
def test_the_timed_region_holds_only_the_sequences_loads(name):
    timer = fastcpu.method_code(name, disassembler="objdump").blocks[0]
    region = _single_copy_region(timer.disassembly)
    loads = _loads(region)
    assert len(loads) == EXPECTED_LOADS[name], (name, loads, region)
    if name in ("rseq", "sched_getcpu_rseq_inline"):
        assert loads[0].startswith("mov %fs:0x4("), loads
    if name == "vdso":
        calls = [ops for _, m, ops in region if m.startswith("call")]
        assert len(calls) == 1 and calls[0].startswith("*%r"), region


def test_the_load_finder_finds_loads():
    # the shapes the old build had: __rseq_offset through the GOT, the vDSO's
    # address loaded and called through memory
    lines = [
        "1:\t48 8b 05 00 00 00 00\tmov    0xe0e7(%rip),%rax        # 55fc0 <x>",
        "2:\t48 8b 00\tmov    (%rax),%rax",
        "3:\t64 8b 40 04\tmov    %fs:0x4(%rax),%eax",
        "4:\tff 10\tcall   *(%rax)",
        "5:\t89 44 24 08\tmov    %eax,0x8(%rsp)",
        "6:\t48 8d 74 24 0c\tlea    0xc(%rsp),%rsi",
        "7:\tff d4\tcall   *%r12",
    ]
    assert _loads(_instructions(lines)) == [
        "mov 0xe0e7(%rip),%rax", "mov (%rax),%rax", "mov %fs:0x4(%rax),%eax", "call *(%rax)",
    ]


def test_calibration_chains_show_too(capsys):
    code = fastcpu.method_code("add_chain_4", disassembler="none")
    assert code.blocks[0].symbol == "time_add_chain_4_lfence"
    assert main(["show", "imul_chain_2", "--disassembler", "none"]) == 0
    assert "time_imul_chain_2_lfence" in capsys.readouterr().out


# The seed's own sequences, exactly as it timed them: the single-copy timed
# region holds these instructions and nothing else.
SEED_REGIONS = {
    # seed 003: the user-mode %gs save/restore
    "gs_reload": [("mov", r"%gs,%(e?ax|\w+)"), ("mov", r"%(e?ax|\w+),%gs")],
    # seed 004: pushfq; pop %rax; push %rax; popfq, stepping over the red zone
    "pushf_pop_push_popf": [
        ("lea", r"-0x80\(%rsp\),%rsp"), ("pushf", ""), ("pop", "%rax"), ("push", "%rax"),
        ("popf", ""), ("lea", r"0x80\(%rsp\),%rsp"),
    ],
    "pushf_popf": [("lea", r"-0x80\(%rsp\),%rsp"), ("pushf", ""), ("popf", ""), ("lea", r"0x80\(%rsp\),%rsp")],
    # SLDT to memory (the form UMIP emulates), then the selector loaded
    "sldt": [("sldt", r"-?0x\w+\(%rsp\)"), ("movzwl", r"-?0x\w+\(%rsp\),%e\w+")],
}


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.skipif(bool(_core.SANITIZED), reason="a sanitizer build instruments the timed code")
@pytest.mark.parametrize("name", sorted(SEED_REGIONS))
def test_the_seeds_sequences_are_timed_exactly(name):
    import re

    timer = fastcpu.method_code(name, disassembler="objdump").blocks[0]
    region = [
        (m, ops) for _, m, ops in _single_copy_region(timer.disassembly)
        # register glue the empty sequence has too (the opening count kept,
        # a return value zeroed or widened, the result used by one multiply
        # by 1: timing.h's fc_use), not part of the sequence
        if not (m in ("mov", "movzwl", "xor") and "(" not in ops and "%gs" not in ops)
        and not (m == "imul" and ops.startswith("$0x1,"))
    ]
    expected = SEED_REGIONS[name]
    assert len(region) == len(expected), region
    for (m, ops), (want_m, want_ops) in zip(region, expected):
        assert m.rstrip("qlw") == want_m.rstrip("qlw") or m == want_m, region
        assert re.fullmatch(want_ops, ops), (ops, want_ops, region)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.skipif(bool(_core.SANITIZED), reason="a sanitizer build instruments the timed code")
@pytest.mark.parametrize("name", NAMES)
def test_every_timed_region_ends_by_using_its_result(name):
    # timing.h's fc_use: the closing read waits for one multiply by 1 of the
    # sequence's result (the empty sequence's a zeroed register), not for
    # whatever kind of instruction the sequence itself ends with
    timer = fastcpu.method_code(name, disassembler="objdump").blocks[0]
    region = [(m, ops) for _, m, ops in _single_copy_region(timer.disassembly)]
    assert region, timer.disassembly
    uses = [i for i, (m, ops) in enumerate(region) if m.startswith("imul") and ops.startswith("$0x1,")]
    assert uses, region
    # after it, at most register glue the compiler placed there (nothing that waits)
    assert all(m in ("mov", "xor") and "(" not in ops for m, ops in region[uses[-1] + 1 :]), region


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.skipif(bool(_core.SANITIZED), reason="a sanitizer build instruments the timed code")
def test_a_user_function_is_entered_by_a_jump_from_its_trampoline():
    # csrc/harness.c: the timer calls a trampoline, which opens the timed
    # region and jumps to the user's function (a sibling call), so that the
    # call's push of the return address happens before the opening read
    symbols = [s for s in _elf.function_symbols(LIBRARY) if s.name.startswith("tramp_")]
    names = {s.name.split(".")[0] for s in symbols}
    modes = ["lfence", "cpuid", "rdtscp", "pmu_lfence", "pmu_cpuid"]
    assert names == {f"tramp_{side}_{mode}" for side in ("method", "empty") for mode in modes}
    for sym in symbols:
        lines = _show._objdump(LIBRARY, sym)
        insns = [line.split("\t")[-1].split() for line in lines]
        insns = [i for i in insns if i and not i[0].startswith(("nop", "data16", "cs", "xchg"))]
        assert insns[-1][0] == "jmp" and insns[-1][1].startswith("*%r"), (sym.name, lines)
        # the opening read comes before the jump: the region opens in the trampoline
        assert any(i[0] in ("rdtsc", "rdtscp", "rdpmc") for i in insns), (sym.name, lines)
        assert not any(i[0].startswith("call") for i in insns), (sym.name, lines)


def test_a_user_function_closes_as_the_inline_timers_do():
    # csrc/userabi.c: in 'lfence' mode the closing read waits for the function to complete
    # (lfence; rdtscp; lfence), as the inline timers' does; in 'rdtscp' mode rdtscp; lfence
    symbols = {s.name: s for s in _elf.function_symbols(LIBRARY) if s.name.startswith("fc_user_timer_")}
    for side in ("method", "empty"):
        for mode, close, not_close in (("lfence", LFENCE + RDTSCP + LFENCE, None),
                                       ("rdtscp", RDTSCP + LFENCE, LFENCE + RDTSCP)):
            sym = symbols[f"fc_user_timer_{side}_{mode}"]
            code = _elf.file_bytes(LIBRARY, sym.value, sym.size)
            assert close in code, (sym.name, code.hex())
            if not_close is not None:
                assert not_close not in code, (sym.name, code.hex())
