"""fastcpu.method_code(): a method's timed instructions, read from the built extension's ELF
symbols and disassembled (objdump or capstone)."""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
import ctypes
import shutil
import subprocess

from .. import _core
from .._args import check_int
from .._core import Unsupported
from .._args import DISASSEMBLERS
from .catalog import method_info

__all__ = ['FunctionSymbol', 'function_symbols', 'file_bytes', 'ElfError', 'CodeBlock', 'MethodCode', 'method_code', 'DISASSEMBLERS']


_SHT_SYMTAB = 2
_SHT_NOBITS = 8  # .bss: no bytes in the file
_STT_FUNC = 2
_SHDR = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYM = struct.Struct("<IBBHQQ")  # Elf64_Sym


class ElfError(ValueError):
    """The file is not a little-endian ELF64 file this reader understands."""


@dataclass(frozen=True)
class FunctionSymbol:
    """A function in the file: its name, link-time address and size in bytes."""

    name: str
    value: int
    size: int


@dataclass(frozen=True)
class _Section:
    type: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


def _sections(data: bytes) -> list[_Section]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shentsize != _SHDR.size or shoff + shnum * shentsize > len(data):
        raise ElfError("truncated or unusual section header table")
    out = []
    for i in range(shnum):
        _, typ, _, addr, offset, size, link, _, _, entsize = _SHDR.unpack_from(data, shoff + i * shentsize)
        out.append(_Section(typ, addr, offset, size, link, entsize))
    return out


@functools.lru_cache(maxsize=4)
def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=4)
def function_symbols(path: str) -> tuple[FunctionSymbol, ...]:
    """Every sized function symbol of ``.symtab``, sorted by address.

    Raises:
        ElfError: not ELF64, or no ``.symtab`` (the file was stripped).
    """
    data = _read(path)
    sections = _sections(data)
    symtabs = [s for s in sections if s.type == _SHT_SYMTAB]
    if not symtabs:
        raise ElfError(
            f"{path} has no symbol table (.symtab): it was stripped, so the "
            "bounds of its functions are unknown; rebuild it without stripping"
        )
    symtab = symtabs[0]
    strtab = sections[symtab.link]
    names = data[strtab.offset : strtab.offset + strtab.size]
    out = []
    for off in range(symtab.offset, symtab.offset + symtab.size, _SYM.size):
        name_off, info, _, shndx, value, size = _SYM.unpack_from(data, off)
        if info & 0xF != _STT_FUNC or size == 0 or shndx == 0:
            continue
        end = names.index(b"\0", name_off)
        out.append(FunctionSymbol(names[name_off:end].decode(), value, size))
    return tuple(sorted(out, key=lambda s: s.value))


def file_bytes(path: str, address: int, size: int) -> bytes:
    """The bytes the file maps at link-time `address`, from its section.

    Raises:
        ElfError: no section with file contents holds that range.
    """
    data = _read(path)
    for s in _sections(data):
        if s.type != _SHT_NOBITS and s.addr and s.addr <= address and address + size <= s.addr + s.size:
            start = s.offset + address - s.addr
            return data[start : start + size]
    raise ElfError(f"no section of {path} holds 0x{address:x}..0x{address + size:x}")


# method_code() accepts for `disassembler`


@dataclass(frozen=True)
class CodeBlock:
    """One function's machine code: its `symbol` (``NAME.cold`` for an out-of-line part), load
    `address`, `link_address` (what objdump prints), `code` bytes and `disassembly` (one line per
    instruction, or ``None`` without a disassembler).
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
    """What :func:`method_code` found for one method: its `blocks` (the timer, then a model's
    function, each with any ``.cold`` part), the extension's path (`library`), the `disassembler`
    used (``None``: bytes only) and a `note` saying why there is no disassembly.
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
    """The machine code `method` times: its 'lfence' timer and, for a model, the model function.

    Args:
        method: a name from :func:`fastcpu.methods` or :func:`fastcpu.chain_methods`
            (unavailable ones too: nothing is run).
        disassembler: ``'auto'`` (objdump, else capstone, else bytes), ``'objdump'``,
            ``'capstone'`` or ``'none'``.

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
