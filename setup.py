"""Build fastcpu._core, the C timing core, against the numpy C API, on Linux
x86-64; elsewhere, or with FASTCPU_NO_CORE=1, install the analysis kit alone
(result files, compare, the seed table, A/B, exports, plots, the noise
model), whose instrument functions then raise fastcpu.Unsupported. On Linux
x86-64 a failed build of the core is an error, as ever."""

import os
import platform
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: Whether to build the C core: only where it can run, and not when told not to.
BUILD_CORE = (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
              and os.environ.get("FASTCPU_NO_CORE", "") in ("", "0"))
if not BUILD_CORE:
    why = ("FASTCPU_NO_CORE is set" if os.environ.get("FASTCPU_NO_CORE", "") not in ("", "0")
           else f"this is {sys.platform}/{platform.machine()}, not Linux x86-64")
    print(f"fastcpu: installing the analysis kit without the C core ({why}): bench(), measure() "
          "and the other instrument functions will raise fastcpu.Unsupported", file=sys.stderr)

# -fvisibility=hidden: nothing but PyInit__core (PyMODINIT_FUNC) is exported,
# so globals are read %rip-relative, not through the GOT (csrc/compiler.h).
# -fno-stack-protector, -fcf-protection=none: the timed code and the models
# must be the code `fastcpu show` and the tests expect, whatever the
# interpreter's own CFLAGS add (Debian's python3 builds extensions with
# -fstack-protector-strong, which put a canary, and so a stack frame, into
# the SIDT models that are meant to store into the red zone; Ubuntu's gcc
# adds endbr64 to every function by default).
extra_compile_args = ["-std=c11", "-O2", "-Wall", "-Wextra", "-fvisibility=hidden",
                      "-fno-stack-protector", "-fcf-protection=none"]
extra_link_args = []
if os.environ.get("FASTCPU_WERROR"):
    extra_compile_args.append("-Werror")
# FASTCPU_SANITIZE=1 builds with AddressSanitizer and UBSan for the test suite.
if os.environ.get("FASTCPU_SANITIZE"):
    flags = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]
    extra_compile_args += flags
    extra_link_args += flags



class build_ext_and_copy(build_ext):
    """Also place the built extension in the source tree, as --inplace would,
    so `pip install . && python -m fastcpu` works from a checkout too (there
    the checkout's fastcpu/ comes first on sys.path)."""

    def run(self):
        super().run()
        if not self.inplace and os.path.isdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")):
            self.copy_extensions_to_source()


def core_extension() -> Extension:
    import numpy  # the core's build needs it; the kit alone does not

    return Extension(
        "fastcpu._core",
        sources=[
            "csrc/module.c",
            "csrc/glue_args.c",
            "csrc/glue_bench.c",
            "csrc/glue_catalog.c",
            "csrc/glue_clock.c",
            "csrc/glue_getcpu.c",
            "csrc/harness.c",
            "csrc/sequences.c",
            "csrc/models.c",
            "csrc/getcpu.c",
            "csrc/features.c",
            "csrc/verdicts.c",
            "csrc/fork.c",
            "csrc/ownfork.c",
            "csrc/clock.c",
            "csrc/conversion.c",
            "csrc/estimate.c",
            "csrc/chains.c",
            "csrc/userchains.c",
            "csrc/usershapes.c",
            "csrc/userabi.c",
            "csrc/userguard.c",
            "csrc/pmu.c",
        ],
        depends=[
            "csrc/catalog.h",
            "csrc/chains.h",
            "csrc/clock.h",
            "csrc/compiler.h",
            "csrc/conversion.h",
            "csrc/estimate.h",
            "csrc/fastcpu_getcpu.h",
            "csrc/fork.h",
            "csrc/ownfork.h",
            "csrc/getcpu.h",
            "csrc/glue.h",
            "csrc/harness.h",
            "csrc/machine.h",
            "csrc/models.h",
            "csrc/pmu.h",
            "csrc/requirements.h",
            "csrc/timers.h",
            "csrc/timing.h",
            "csrc/userabi.h",
            "csrc/userchains.h",
            "csrc/userguard.h",
            "csrc/verdicts.h",
            "csrc/x86.h",
        ],
        include_dirs=[numpy.get_include()],
        extra_compile_args=extra_compile_args,
        extra_link_args=extra_link_args,
        libraries=["rt"],  # timer_create before glibc 2.34 (csrc/userguard.c)
    )


setup(
    cmdclass={"build_ext": build_ext_and_copy},
    ext_modules=[core_extension()] if BUILD_CORE else [],
)
