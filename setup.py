"""Build fastcpu._core, the C timing core, against the numpy C API."""

import os
import platform
import sys

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
    sys.exit(
        "fastcpu times x86-64 instructions under Linux; this is "
        f"{sys.platform}/{platform.machine()}, which it cannot support."
    )

# -fvisibility=hidden: nothing but PyInit__core (PyMODINIT_FUNC) is exported,
# so globals are read %rip-relative, not through the GOT (csrc/fastcpu.h).
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


setup(
    cmdclass={"build_ext": build_ext_and_copy},
    ext_modules=[
        Extension(
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
                "csrc/clock.c",
                "csrc/conversion.c",
                "csrc/chains.c",
                "csrc/userchains.c",
                "csrc/userabi.c",
                "csrc/pmu.c",
            ],
            depends=["csrc/fastcpu.h", "csrc/timing.h", "csrc/glue.h"],
            include_dirs=[numpy.get_include()],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
            libraries=["rt"],  # timer_create before glibc 2.34 (csrc/userabi.c)
        )
    ],
)
