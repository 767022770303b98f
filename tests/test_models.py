"""The models of historical and proposed getcpu()/sched_getcpu() implementations
compile to the instructions they model and are called out of line by their
timers. test_agreement.py checks the values they report, test_bench.py that
they bench, test_faults.py that the fault-prone ones are probed."""

import re
import shutil
import struct

import pytest

import fastcpu
from fastcpu import _core

INFO = {m.name: m for m in fastcpu.methods()}
# method -> the model function its timers call (None: inlined into the timer)
MODELS = {
    "vgetcpu26_tscp": "model_vgetcpu26_tscp",
    "vgetcpu26_lsl": "model_vgetcpu26_lsl",
    "vgetcpu26_hit": "model_vgetcpu26_lsl",
    "vgetcpu26_miss": "model_vgetcpu26_lsl",
    "glibc27_sched_getcpu": "model_glibc27_sched_getcpu",
    "getcpu_tscp": "model_getcpu_tscp",
    "getcpu_lsl": "model_getcpu_lsl",
    "getcpu_tscp_fp": "model_getcpu_tscp_fp",
    "getcpu_sidt": "model_getcpu_sidt",
    "getcpu_sidt_rz_fp": "model_getcpu_sidt_rz_fp",
    "getcpu_sidt_norz_nofp": "model_getcpu_sidt_norz_nofp",
    "getcpu_sidt_norz_fp": "model_getcpu_sidt_norz_fp",
    "getcpu_lsl_rz_fp": "model_getcpu_lsl_fp",
    "getcpu_lsl_norz_nofp": "model_getcpu_lsl",  # -mno-red-zone changes nothing here
    "getcpu_lsl_norz_fp": "model_getcpu_lsl_fp",
    "getcpu_cache_hit": "model_getcpu_cache",
    "sched_getcpu_tscp": "model_sched_getcpu_tscp",
    "sched_getcpu_lsl": "model_sched_getcpu_lsl",
    "sched_getcpu_sidt": "model_sched_getcpu_sidt",
    "sched_getcpu_rseq_inline": None,
}
# Tests of instruction shapes need a disassembler and the real, uninstrumented code.
needs_objdump = pytest.mark.skipif(
    shutil.which("objdump") is None or bool(_core.SANITIZED),
    reason="objdump (binutils) is not installed, or a sanitizer build instruments the code",
)


def test_every_model_is_in_the_catalog_with_its_source():
    for name, fn in MODELS.items():
        info = INFO[name]
        assert re.search(r"2\.6\.26|glibc 2\.(7|35)|seed|LKML|gaudet", info.description), name
        model = _core.code(name)[1]
        assert (model is None) == (fn is None), name


def test_models_need_what_their_instructions_need():
    feats = _core.features()
    for name in MODELS:
        if "tscp" in name:
            assert INFO[name].available <= feats["rdtscp"], name
        if "sidt" in name:
            assert INFO[name].reports_cpu == INFO["sidt"].reports_cpu, name
            assert INFO[name].cpu_reason == INFO["sidt"].cpu_reason, name


@pytest.mark.parametrize("name", [n for n, fn in MODELS.items() if fn])
def test_the_timer_calls_the_model_out_of_line(name):
    code = fastcpu.method_code(name, disassembler="none")
    timer, model = code.blocks[0], code.blocks[-1]
    assert timer.symbol == f"time_{name}_lfence"
    assert model.symbol == MODELS[name]
    # a direct call, e8 rel32, whose target is the model function
    targets = [
        timer.address + i + 5 + struct.unpack_from("<i", timer.code, i + 1)[0]
        for i in range(len(timer.code) - 4)
        if timer.code[i] == 0xE8
    ]
    assert model.address in targets


def asm(name, symbol=None):
    """The model function's (or the timer's) instructions, 'mnemonic operands'."""
    code = fastcpu.method_code(name, disassembler="objdump")
    block = next(b for b in code.blocks if symbol is None and b.symbol.startswith("model_") or b.symbol == symbol)
    return [" ".join(line.split("\t")[-1].split()) for line in block.disassembly]


def has(lines, pattern):
    return any(re.search(pattern, line) for line in lines)


@needs_objdump
def test_vgetcpu26_checks_the_mode_per_call_and_has_both_instructions():
    for name in ("vgetcpu26_tscp", "vgetcpu26_lsl"):
        lines = asm(name)
        assert has(lines, r"^rdtscp$") and has(lines, r"^lsl ")
        assert has(lines, r"<fc_vdso_mode_(tscp|lsl)>")  # the mode, through the vDSO's pointer
        assert has(lines, r"^cmpl \$0x1,\(%r..\)")  # == VGETCPU_RDTSCP
        assert has(lines, r"<fc_vdso_jiffies>")  # the cache check
        assert not has(lines, r"%xmm")  # two plain stores, as compilers of 2008 made them


@needs_objdump
def test_the_seeds_getcpu_has_no_mode_check():
    tscp, lsl = asm("getcpu_tscp"), asm("getcpu_lsl")
    assert tscp[0] == "rdtscp" and not has(tscp, r"^lsl|cmpl|<fc_vdso")
    assert lsl[1].startswith("lsl ") and not has(lsl, r"rdtscp|cmpl|<fc_vdso")
    assert tscp[-1] == "ret"


@needs_objdump
def test_frame_pointer_and_red_zone_variants():
    fp = asm("getcpu_tscp_fp")
    assert fp[:3] == ["push %rbp", "mov %rsp,%rbp", "rdtscp"]
    assert "leave" in fp
    rz = asm("getcpu_sidt")
    assert rz[0].startswith("sidt -0x") and rz[0].endswith("(%rsp)")  # below %rsp: the red zone
    assert not has(rz, r"push|%rbp|sub .*,%rsp")
    nrz = asm("getcpu_sidt_norz_fp")
    assert nrz[:3] == ["push %rbp", "mov %rsp,%rbp", "sub $0x10,%rsp"]
    assert has(nrz, r"^sidt -0xa\(%rbp\)") and "leave" in nrz


def _base_offset_from_entry(sidt_line, frame):
    """Where SIDT's 8-byte base lands, relative to %rsp at the model's entry:
    `frame` is how far the addressing register (%rsp or %rbp) sits below it."""
    m = re.match(r"sidt (-?)(0x[0-9a-f]+|\d+)\(%r(sp|bp)\)", sidt_line)
    assert m, sidt_line
    offset = int(m.group(2), 0) * (-1 if m.group(1) else 1)
    return offset - frame + 2  # the base follows the 2-byte limit


@needs_objdump
def test_red_zone_and_frame_pointer_are_two_knobs():
    """The four corners for SIDT: each knob changes only its own
    instructions, and every SIDT store leaves its base 8-byte aligned."""
    corners = {
        # name: (frame pointer?, room made below %rsp?, %rsp/%rbp below entry at the store)
        "getcpu_sidt": (False, False, 0),
        "getcpu_sidt_rz_fp": (True, False, 8),
        "getcpu_sidt_norz_nofp": (False, True, 16),
        "getcpu_sidt_norz_fp": (True, True, 8),
    }
    for name, (fp, room, frame) in corners.items():
        lines = asm(name)
        assert (lines[0] == "push %rbp" and lines[1] == "mov %rsp,%rbp") == fp, name
        assert has(lines, r"^sub \$0x10,%rsp") == room, name
        assert has(lines, r"%rbp") == fp, name
        sidt = next(x for x in lines if x.startswith("sidt "))
        if not room:
            assert sidt.startswith("sidt -0x"), name  # below %rsp: the red zone
        # %rsp at entry is 8 mod 16 (the call pushed the return address)
        assert (8 + _base_offset_from_entry(sidt, frame)) % 8 == 0, (name, sidt)
    lsl, lsl_fp = asm("getcpu_lsl"), [x for x in asm("getcpu_lsl_rz_fp") if x != "ud2"]  # naked: GCC's ud2
    assert lsl_fp[:2] == ["push %rbp", "mov %rsp,%rbp"] and lsl_fp[-2:] == ["pop %rbp", "ret"]
    def body(lines):
        return [re.sub(r" [0-9a-f]+ <.*>$", "", x) for x in lines]  # jump targets differ

    assert body(lsl_fp[2:-2]) == body(lsl[:-1])  # the same body inside the frame
    assert not has(lsl, r"%rsp|%rbp")  # nothing in memory: the red zone is unused


@needs_objdump
def test_sched_getcpu_sidt_uses_the_padded_struct_and_returns_the_cpu():
    lines = asm("sched_getcpu_sidt")
    m = re.match(r"sidt -0x([0-9a-f]+)\(%rsp\)$", lines[0])
    assert m, lines[0]  # a leaf: the red zone, no frame
    limit_at = -int(m.group(1), 16)
    # 6 bytes of padding: the limit 6 bytes past an 8-aligned struct (entry
    # %rsp is 8 mod 16), so the base after it is aligned
    assert (limit_at + 8 - 6) % 8 == 0 and (limit_at + 2 + 8) % 8 == 0
    assert lines[1] == f"movzwl {lines[0].split()[1]},%eax"
    assert lines[2:] == ["sub $0x1000,%eax", "shr $0x6,%eax", "ret"]
    assert not has(lines, r"\(%rdi\)|\(%rsi\)")  # no pointers


@needs_objdump
def test_glibc27_demangles_the_pointer_and_calls_through_it():
    lines = asm("glibc27_sched_getcpu")
    assert has(lines, r"^ror \$0x11,%r")
    assert has(lines, r"^xor %fs:0x30,%r")
    assert has(lines, r"^call \*%r")
    assert has(lines, r"^cmp \$0xfffffffffffff000")  # the error check


def walk(block, start):
    """The instructions executed from link address `start` to ret, following
    unconditional jumps and falling through conditional ones."""
    by_addr = {}
    order = []
    for line in block.disassembly:
        addr, _, rest = line.partition(":")
        by_addr[int(addr, 16)] = len(order)
        order.append(" ".join(rest.split("\t")[-1].split()))
    i, path = by_addr[start], []
    while len(path) < 64:
        path.append(order[i])
        if order[i] == "ret":
            return path
        if order[i].startswith("jmp "):
            i = by_addr[int(order[i].split()[1], 16)]
        else:
            i += 1
    raise AssertionError("no ret within 64 instructions")


@needs_objdump
def test_the_streamlined_cache_hit_stores_nothing():
    model = fastcpu.method_code("getcpu_cache_hit", disassembler="objdump").blocks[-1]
    lines = asm("getcpu_cache_hit")
    cmp_at = next(i for i, line in enumerate(lines) if re.match(r"cmp %r\w+,\(%rdx\)", line))
    assert lines[cmp_at + 1].startswith("je ")  # hit: compare with jiffies, jump
    hit = walk(model, int(lines[cmp_at + 1].split()[1], 16))
    assert re.match(r"mov 0x8\(%rdx\),%e..", hit[0])  # the cached value
    assert not has(hit, r",(0x8)?\(%rdx\)$")  # and no store back into the cache
    # whereas 2.6.26's hit path rewrites both words
    old = fastcpu.method_code("vgetcpu26_hit", disassembler="objdump").blocks[-1]
    old_lines = asm("vgetcpu26_hit")
    cmp_at = next(i for i, line in enumerate(old_lines) if re.match(r"cmp %r\w+,\(%rdx\)", line))
    old_hit = walk(old, int(old_lines[cmp_at + 1].split()[1], 16))
    assert sum(bool(re.search(r",(0x8)?\(%r..\)$", x)) for x in old_hit) >= 2


@needs_objdump
def test_specialized_sched_getcpu_returns_the_cpu_in_eax():
    lines = asm("sched_getcpu_tscp")
    assert lines == ["rdtscp", "mov %ecx,%eax", "and $0xfff,%eax", "ret"]


@needs_objdump
def test_glibc235_logic_is_one_fs_load_inline_with_a_cold_fallback():
    code = fastcpu.method_code("sched_getcpu_rseq_inline", disassembler="objdump")
    timer = [" ".join(line.split("\t")[-1].split()) for line in code.blocks[0].disassembly]
    loop = timer[timer.index(next(line for line in timer if re.match(r"mov %fs:0x4\(%r..\),%e..", line))):]
    assert re.match(r"test %e..,%e..", loop[1]) and loop[2].startswith("js ")
    assert not has(timer, r"^call")  # the fallback is out of line, in .cold
    cold = [b for b in code.blocks if b.symbol.endswith(".cold")]
    assert cold and has([" ".join(x.split("\t")[-1].split()) for x in cold[0].disassembly], r"^call")
