"""The host a benchmark ran on, as its recorded output names it (docs/
keeps one section per host). The caller puts the checkout on sys.path."""

from __future__ import annotations

import os
import platform

from fastcpu.instrument.machine import machine_info


def host_line() -> str:
    """The host as the guest sees it: vendor, family, model, name, hypervisor."""
    info = machine_info()
    return (
        f"{info.get('vendor')} family {info.get('family')} model {info.get('model')} "
        f"({info.get('model_name')}), {info.get('hypervisor') or 'bare metal'}, "
        f"{os.cpu_count()} CPUs, Linux {platform.release()}"
    )


def load_line() -> str:
    """The load average over 1, 5 and 15 minutes, as /proc/loadavg has it."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
