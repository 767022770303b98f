"""Function bounds from an ELF64 file's symbol table, for showing timed code.

Just enough ELF to answer "which function starts at this address, how long is
it, and what are its bytes in the file": section headers, ``.symtab`` (the
full table, local symbols included, which ``.dynsym`` lacks) and the section
that holds an address.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

__all__ = ["FunctionSymbol", "function_symbols", "file_bytes", "ElfError"]

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
