"""Everything fastcpu records about the machine it measures on: /proc and
/sys (``_machine``) and the C core's CPUID facts, as JSON-ready values."""

from __future__ import annotations

import platform

from . import _core
from ._machine import (affinity, boost_enabled, cpu_governors, cpuinfo_first, glibc_version, isolated_cpus,
                       parse_cpu_list, read_text)

__all__ = ["machine_info"]

_SYS_CPU = "/sys/devices/system/cpu"

#: features() entries that say nothing of the machine: whether the private
#: test hooks (FASTCPU_TEST_*) are set.
_NOT_MACHINE_FACTS = frozenset({"test_hooks"})


def machine_info() -> dict[str, object]:
    """Everything fastcpu records about this machine, as JSON-ready values."""
    cpu = cpuinfo_first()
    feats = _core.features()
    flags = set(cpu.get("flags", "").split())
    return {
        "vendor": cpu.get("vendor_id"),
        "model_name": cpu.get("model name"),
        "family": int(cpu["cpu family"]) if "cpu family" in cpu else None,
        "model": int(cpu["model"]) if "model" in cpu else None,
        "stepping": int(cpu["stepping"]) if cpu.get("stepping", "").isdigit() else None,
        "microcode": cpu.get("microcode"),
        # every yes-or-no fact the C core decides availability from (a new
        # one is recorded with no edit here), and the kernel's TSC flags
        "flags": {
            **{k: v for k, v in feats.items() if type(v) is bool and k not in _NOT_MACHINE_FACTS},
            "constant_tsc": "constant_tsc" in flags,
            "nonstop_tsc": "nonstop_tsc" in flags,
        },
        "hypervisor": feats["hypervisor_vendor"] or None,
        "kernel": platform.release(),
        "glibc": glibc_version(),
        "rseq_registered": bool(feats["rseq_registered"]),
        "rseq_size": feats["rseq_size"],
        "online_cpus": parse_cpu_list(read_text(f"{_SYS_CPU}/online")),
        "affinity": affinity(),
        "isolated_cpus": isolated_cpus(),
        "nohz_full": parse_cpu_list(read_text(f"{_SYS_CPU}/nohz_full")),
        "governors": cpu_governors(),
        "boost": boost_enabled(),
        "hostname": platform.node(),
        "python": platform.python_version(),
    }
