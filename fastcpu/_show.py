"""The exact instructions a method times: code bytes and, when a disassembler
is installed, their disassembly (``python -m fastcpu show METHOD``).

For every method the function shown first is its timer for the default
``'lfence'`` mode: the opening ``lfence; rdtsc; lfence``, the copy loop around
the sequence, the closing ``lfence; rdtscp; lfence``. For a model it is followed by
the model function the timer calls. The bytes are read from memory, where
they run; their bounds come from the extension's ELF symbol table.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from dataclasses import dataclass

from . import _core
from ._args import check_int
from ._core import Unsupported
from ._args import DISASSEMBLERS
from ._elf import ElfError, FunctionSymbol, function_symbols
from ._methods import method_info

__all__ = ["CodeBlock", "MethodCode", "method_code", "DISASSEMBLERS"]  # DISASSEMBLERS: _args's, what
# method_code() accepts for `disassembler`


@dataclass(frozen=True)
class CodeBlock:
    """One function's machine code.

    Attributes:
        symbol: its name in the extension's symbol table (``time_rdpid_lfence``,
            ``model_getcpu_tscp``, ``NAME.cold`` for a part the compiler moved
            out of line).
        address: where it is loaded in this process.
        link_address: its address in the file (what objdump prints).
        code: its bytes, as they are in memory.
        disassembly: one line per instruction, or ``None`` without a disassembler.
    """

    symbol: str
    address: int
    link_address: int
    code: bytes
    disassembly: tuple[str, ...] | None

    def hex_lines(self, width: int = 16) -> list[str]:
        """The bytes as hex, `width` a line, each line led by its link-time address."""
        width = check_int("width", width, 1, 1 << 16)
        return [
            f"{self.link_address + i:8x}:  {self.code[i:i + width].hex(' ')}"
            for i in range(0, len(self.code), width)
        ]


@dataclass(frozen=True)
class MethodCode:
    """What :func:`method_code` found for one method.

    Attributes:
        method: the method's name.
        blocks: the timer, then the model function for a model, each with any
            out-of-line ``.cold`` part.
        library: path of the extension the code is in.
        disassembler: ``'objdump'``, ``'capstone'`` or ``None`` (bytes only).
        note: why there is no disassembly, when there is none.
    """

    method: str
    blocks: tuple[CodeBlock, ...]
    library: str
    disassembler: str | None
    note: str | None

    def __str__(self) -> str:
        lines = [f"{self.method}: the code it times, from {self.library}"]
        if self.note:
            lines.append(f"({self.note})")
        for b in self.blocks:
            lines.append("")
            lines.append(f"{b.symbol} ({len(b.code)} bytes at 0x{b.link_address:x}):")
            lines.extend("  " + line for line in (b.disassembly or b.hex_lines()))
        return "\n".join(lines)


def _symbol_at(symbols: tuple[FunctionSymbol, ...], link_address: int, path: str) -> FunctionSymbol:
    for s in symbols:
        if s.value == link_address:
            return s
    raise ElfError(f"no function symbol of {path} starts at 0x{link_address:x}")


def _cold_parts(symbols: tuple[FunctionSymbol, ...], name: str) -> list[FunctionSymbol]:
    return [s for s in symbols if s.name == f"{name}.cold" or s.name.startswith(f"{name}.cold.")]


def _objdump(path: str, sym: FunctionSymbol) -> tuple[str, ...]:
    out = subprocess.run(
        ["objdump", "-d", "-w", f"--start-address=0x{sym.value:x}",
         f"--stop-address=0x{sym.value + sym.size:x}", path],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout
    # keep the instruction lines: "    6060:\t48 89 f8 \tmov ..."
    return tuple(line.strip() for line in out.splitlines() if ":\t" in line and line.strip()[0] in "0123456789abcdef")


def _capstone(code: bytes, link_address: int) -> tuple[str, ...]:
    import capstone  # type: ignore[import-not-found]

    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.syntax = capstone.CS_OPT_SYNTAX_ATT
    return tuple(
        f"{i.address:x}:\t{i.bytes.hex(' ')}\t{i.mnemonic} {i.op_str}".rstrip()
        for i in md.disasm(code, link_address)
    )


def _have_capstone() -> bool:
    try:
        import capstone  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


def _choose(disassembler: str) -> tuple[str | None, str | None]:
    """The disassembler to use and, when none, why."""
    if not isinstance(disassembler, str):
        raise TypeError(f"disassembler must be a str, one of {', '.join(DISASSEMBLERS)}; "
                        f"not {type(disassembler).__name__}")
    if disassembler not in DISASSEMBLERS:
        raise ValueError(f"unknown disassembler {disassembler!r}: use one of {', '.join(DISASSEMBLERS)}")
    if disassembler == "none":
        return None, "disassembly not asked for"
    has_objdump = shutil.which("objdump") is not None
    if disassembler == "objdump" and not has_objdump:
        raise Unsupported("objdump is not installed (it comes with binutils)")
    if disassembler == "capstone" and not _have_capstone():
        raise Unsupported("capstone is not installed (pip install capstone)")
    if disassembler != "auto":
        return disassembler, None
    if has_objdump:
        return "objdump", None
    if _have_capstone():
        return "capstone", None
    return None, "neither objdump (binutils) nor capstone (pip install capstone) is installed: code bytes only"


def method_code(method: str, *, disassembler: str = "auto") -> MethodCode:
    """The machine code `method` times: its 'lfence' timer and, for a model,
    the model function the timer calls.

    Args:
        method: a name from :func:`fastcpu.methods` or
            :func:`fastcpu.chain_methods`; unavailable methods can
            be shown too (nothing is run).
        disassembler: ``'auto'`` (objdump, else capstone, else bytes only),
            ``'objdump'``, ``'capstone'`` or ``'none'``.

    Raises:
        TypeError, ValueError: `method` or `disassembler` is not a valid name.
        fastcpu.Unsupported: the disassembler asked for is not installed.
        fastcpu.Error: the extension has no symbol table (it was stripped).
    """
    info = method_info(method)
    tool, note = _choose(disassembler)
    # a row measured in a child (sched_getcpu_norseq) times another row's code
    timer, model, path, base = _core.code(info.code_of)
    try:
        symbols = function_symbols(path)
        heads = [_symbol_at(symbols, timer - base, path)]
        if model is not None:
            heads.append(_symbol_at(symbols, model - base, path))
    except (ElfError, OSError) as exc:
        raise _core.Error(f"cannot find the code of {info.name}: {exc}") from None
    blocks = []
    for head in heads:
        for sym in [head, *_cold_parts(symbols, head.name)]:
            code = ctypes.string_at(base + sym.value, sym.size)
            if tool == "objdump":
                dis: tuple[str, ...] | None = _objdump(path, sym)
            elif tool == "capstone":
                dis = _capstone(code, sym.value)
            else:
                dis = None
            blocks.append(CodeBlock(sym.name, base + sym.value, sym.value, code, dis))
    return MethodCode(info.name, tuple(blocks), path, tool, note)
