/*
 * machine.h: what this machine has (features.c): CPUID bits, the vDSO,
 * rseq, and the facts the sequences read.
 */
#ifndef FASTCPU_MACHINE_H
#define FASTCPU_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "requirements.h"

#pragma GCC visibility push(hidden)

/* Owned by features.c: set once by fc_features(); read by the rseq and
 * vDSO sequences, the models and getcpu.c. */
typedef int (*fc_vdso_getcpu_fn)(unsigned *cpu, unsigned *node, void *cache);
extern long fc_rseq_offset;
extern fc_vdso_getcpu_fn fc_vdso_getcpu;

/* A field of glibc's rseq area, %fs-relative: cpu_id (offset 4), node_id
 * (offset 20, Linux >= 6.3). Volatile: the kernel rewrites them whenever the
 * thread migrates. FC_RSEQ_LOAD_AT takes __rseq_offset from a register
 * (a timer loads it before its opening read); FC_RSEQ_LOAD reads it. */
#define FC_RSEQ_CPU_ID 4
#define FC_RSEQ_NODE_ID 20
#define FC_RSEQ_LOAD_AT(offset, field, out)                                  \
    __asm__ volatile("movl %%fs:%c2(%1), %0" : "=r"(out) : "r"(offset), "i"(field))
#define FC_RSEQ_LOAD(field, out) FC_RSEQ_LOAD_AT(fc_rseq_offset, field, out)

/* cpu_id and, with `with_node`, node_id (else *node = -1): cpu, node, cpu
 * again, so that a migration between the loads shows as a changed cpu_id
 * and the pair is read again. A negative cpu_id: rseq not registered. */
FC_INLINE int32_t fc_rseq_cpu_node(bool with_node, int32_t *node)
{
    int32_t before, after, n = -1;
    do {
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, before);
        if (with_node)
            FC_RSEQ_LOAD(FC_RSEQ_NODE_ID, n);
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, after);
    } while (before != after);
    *node = n;
    return before;
}

struct fc_features {
    bool rdtscp, rdpid, umip, fsgsbase_cpu, fsgsbase_enabled, hypervisor,
        invariant_tsc, tsc_readable;
    char hypervisor_vendor[13]; /* CPUID 0x40000000, e.g. "KVMKVMKVM"; "" on metal */
    bool rseq_registered;
    bool rseq_area;               /* glibc exports __rseq_offset (>= 2.35) */
    long rseq_offset;             /* from the thread pointer */
    unsigned rseq_size;           /* __rseq_size: 0 when not registered */
    unsigned rseq_feature_size;   /* AT_RSEQ_FEATURE_SIZE; 0 before Linux 6.3 */
    bool rseq_node_id;            /* node_id (offset 20) is covered by both */
    bool vdso_getcpu;
    /* Each line of FC_REQUIREMENTS: whether this machine has it. */
    bool has[FC_REQ_COUNT];
    /* Private test hooks (environment, read once): CPUID bits to pretend
     * absent, and methods whose probe child must fault (ud2). */
    bool test_hooks;
};

/* Filled once, on first use; safe to call from any thread after module init. */
const struct fc_features *fc_features(void);

/* Whether the comma-separated `list` (a test hook's environment variable)
 * holds `word` exactly. */
bool fc_list_has(const char *list, const char *word);

/* Private test hook: comma-separated method names whose probe child
 * executes ud2 first (verdicts.c). */
#define FC_ENV_FAULT_IN_PROBE "FASTCPU_TEST_FAULT_IN_PROBE"

/* For fork.c: a detection another thread had not finished is done again. */
void fc_features_after_fork_in_child(void);

/* 1 when `address` lies in an executable mapping of this process
 * (/proc/self/maps), 0 when not, FC_ADDRESS_VSYSCALL in the [vsyscall]
 * page (listed executable, emulated by the kernel: no function to call),
 * -1 with errno when the maps cannot be read and the address is in no
 * loaded object's executable segment (dl_iterate_phdr), which is checked
 * instead. */
#define FC_ADDRESS_VSYSCALL 2
int fc_address_executable(uintptr_t address);

/* The current CPU, by the cheapest correct way available (outside any timed
 * region: migration checks). */
int fc_current_cpu(void);

#pragma GCC visibility pop

#endif
