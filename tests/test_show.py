"""python -m fastcpu show: the bytes each method times, found by the ELF
symbol table, with and without a disassembler."""

import shutil
import subprocess

import pytest

import fastcpu
from fastcpu import _core, _elf, _show
from fastcpu._cli import main

NAMES = [m.name for m in fastcpu.methods()]
LFENCE, RDTSC, RDTSCP = bytes.fromhex("0faee8"), bytes.fromhex("0f31"), bytes.fromhex("0f01f9")
LIBRARY = _core.code("empty")[2]


@pytest.mark.parametrize("name", NAMES)
def test_every_method_shows_its_lfence_timer(name):
    code = fastcpu.method_code(name, disassembler="none")
    assert code.method == name and code.library == LIBRARY
    timer = code.blocks[0]
    assert timer.symbol == f"time_{name}_lfence"
    # the harness: lfence; rdtsc; (join the halves;) lfence opens,
    # rdtscp; lfence closes
    opens, closes = timer.code.find(LFENCE + RDTSC), timer.code.rfind(RDTSCP + LFENCE)
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
