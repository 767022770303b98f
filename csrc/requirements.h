/*
 * requirements.h: what a catalog row may require of this machine, a list
 * shared by the catalog (which names them) and features.c (which checks them).
 */
#ifndef FASTCPU_REQUIREMENTS_H
#define FASTCPU_REQUIREMENTS_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/*
 * What a row may require of this machine, one line each:
 *   X(ID, name, where it is found, why a row cannot run without it)
 * where it is found: FC_CPUID(leaf, subleaf, register, bit), a CPUID bit
 * that features.c reads (and that FASTCPU_TEST_HIDE_CPUID=name hides);
 * FC_FACT(field), a bool of struct fc_features that features.c detects; or
 * FC_AT_USE(fn), process state features.c asks `fn` about when a row
 * needing it is first judged (fn: NULL when met, else why not).
 * A row lists its needs as FC_NEEDS(ID) | ...; they are checked in this
 * order, so a CPU bit comes before what the kernel must do with it.
 */
#define FC_REQUIREMENTS(X)                                                   \
    X(RDTSCP, "rdtscp", FC_CPUID(0x80000001u, 0, EDX, 27),                   \
      "CPUID lacks RDTSCP (80000001H:EDX bit 27)")                           \
    X(RDPID, "rdpid", FC_CPUID(7, 0, ECX, 22), "CPUID lacks RDPID (7.0:ECX bit 22)") \
    X(FSGSBASE, "fsgsbase", FC_CPUID(7, 0, EBX, 0),                          \
      "CPUID lacks FSGSBASE (7.0:EBX bit 0)")                                \
    X(FSGSBASE_ENABLED, "fsgsbase_enabled", FC_FACT(fsgsbase_enabled),       \
      "the kernel did not enable FSGSBASE for user mode (AT_HWCAP2 bit 1; "  \
      "Linux < 5.9)")                                                        \
    X(RSEQ, "rseq_registered", FC_FACT(rseq_registered),                     \
      "glibc did not register rseq (glibc < 2.35, kernel < 4.18, or "        \
      "GLIBC_TUNABLES=glibc.pthread.rseq=0)")                                \
    X(RSEQ_AREA, "rseq_area", FC_FACT(rseq_area),                            \
      "glibc exports no __rseq_offset (glibc < 2.35): no rseq area to load " \
      "cpu_id from")                                                         \
    X(VDSO_GETCPU, "vdso_getcpu", FC_FACT(vdso_getcpu),                      \
      "the vDSO exports no __vdso_getcpu (LINUX_2.6)")                       \
    X(NO_GS_BASE, "no_gs_base", FC_AT_USE(no_gs_base),                       \
      "this process has a GS base (arch_prctl ARCH_SET_GS or WRGSBASE), "    \
      "which reloading %gs may clear")

#define FC_REQ_ENUM(id, name, where, reason) FC_REQ_##id,
enum fc_requirement_id { FC_REQUIREMENTS(FC_REQ_ENUM) FC_REQ_COUNT };
#undef FC_REQ_ENUM
#define FC_NEEDS(id) (1u << FC_REQ_##id)

/* One line of FC_REQUIREMENTS, as features.c holds it. */
struct fc_requirement {
    const char *name;
    bool cpuid; /* a CPUID bit (below), else a fact or asked at use */
    unsigned leaf, subleaf, reg, bit;
    size_t fact;                /* offsetof the bool in struct fc_features */
    const char *(*at_use)(void); /* NULL when met, else why not */
    const char *reason;
};
extern const struct fc_requirement fc_requirements[FC_REQ_COUNT];

/* Why requirement `r` is not met here (its reason, or what its at_use
 * function says), or NULL when it is. */
const char *fc_requirement_missing(int r);

#pragma GCC visibility pop

#endif
