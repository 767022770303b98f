/*
 * catalog.h: the catalog of every timed sequence (sequences.c): methods,
 * models and known-cost chains, one row each with its needs and checks.
 */
#ifndef FASTCPU_CATALOG_H
#define FASTCPU_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "requirements.h"
#include "timers.h"

#pragma GCC visibility push(hidden)

enum fc_encoding {
    FC_ENC_NONE,     /* reports no CPU (empty, kernel-entry costs) */
    FC_ENC_CPUNODE,  /* cpu | node << 12 (LSL limit, TSC_AUX)      */
    FC_ENC_SIDT,     /* seed's proposal: IDT limit - 0x1000         */
    FC_ENC_CPU,      /* the CPU number itself (sched_getcpu, rseq)  */
    FC_ENC_LIMIT,    /* a raw descriptor-table limit (SGDT)         */
    FC_ENC_SELECTOR, /* a segment selector (SLDT)                   */
};

/* The seed's SIDT encoding puts the node in the low CONFIG_NODES_SHIFT bits
 * of (limit - 0x1000) and the CPU above them; 6 is x86-64's default. */
#define FC_SIDT_NODES_SHIFT 6

/* What a row of the catalog is. Zero is left out on purpose: a row that
 * forgot its kind is caught by fc_row_problem(). */
enum fc_kind {
    FC_KIND_METHOD = 1,  /* an instruction or call that may tell the CPU, or a
                          * cost they are compared with (sequences.c) */
    FC_KIND_MODEL,       /* a C model of a historical or proposed getcpu() or
                          * sched_getcpu() (models.c) */
    FC_KIND_CHAIN, /* a dependent chain of known cost (chains.c) */
    FC_KIND_END
};

/* What a row is for, where it is shown (a plot's panel, a table's group):
 * decided once, here in the catalog, for every reader of it. */
enum fc_role {
    FC_ROLE_CPU_SOURCE = 1, /* an instruction or load that reads the CPU number */
    FC_ROLE_LIBRARY_CALL,   /* a library's way of asking for it (vDSO, glibc) */
    FC_ROLE_ENTRY_COST,     /* a kernel entry or another cost the ways are
                             * compared with (the empty sequence among them) */
    FC_ROLE_MODEL,          /* a model of an implementation (kind model) */
    FC_ROLE_CHAIN,    /* a chain of known cost (kind chain) */
    FC_ROLE_END
};

/* A chain row's chain: `length` dependent `op` instructions of
 * `latency_cycles` core cycles each. */
struct fc_chain {
    const char *op; /* "add" or "imul" */
    uint32_t length;
    uint32_t latency_cycles;
};

/* One row of the catalog: everything fastcpu knows about one sequence. */
struct fc_method {
    const char *name;
    const char *description;
    enum fc_kind kind;
    enum fc_role role;
    enum fc_encoding encoding;
    uint32_t needs;      /* FC_NEEDS(...) of FC_REQUIREMENTS; 0: the TSC alone */
    bool probe_in_child; /* may fault whatever CPUID says: run once in a fork first */
    /* Why it does not report the CPU here although it runs (SIDT emulated
     * under UMIP, LSL without a per-CPU segment...), or NULL when it does;
     * called once, in-process, after the row was found available. NULL
     * here: it reports the CPU wherever it runs. A row whose encoding
     * reports no CPU names one that always says why. */
    const char *(*cpu_check)(void);
    /* One execution, its raw register value; *valid is false when the
     * instruction reported failure (LSL with ZF clear). */
    uint32_t (*read)(bool *valid);
    fc_timer_fn timers[FC_SER_COUNT];
    /* The same, reading the PMU's core-cycle counter (FC_TIMERS fills both;
     * NULL where a method was defined without them). */
    fc_timer_fn pmu_timers[FC_PMU_SER_COUNT];
    /* The out-of-line model the timers call (models.c), for showing its
     * code; NULL when the sequence is inlined into the timers. */
    const void *model;
    /* Reads cpu and node itself instead of decoding `read`'s raw value by
     * `encoding` (rseq: node_id is a second field); NULL for most. */
    uint32_t (*read_cpu)(bool *valid, unsigned *cpu, int *node);
    struct fc_chain chain; /* FC_KIND_CHAIN rows only */
    /* A row measured and read only in a child interpreter started with this
     * GLIBC_TUNABLES setting (glibc reads tunables once, at process start),
     * timing the sequence of the row `code_of` names; NULL: in this process.
     * The C core refuses such a row in-process: fastcpu's Python starts the
     * child (_child_runner.py) and judges whether it can. */
    const char *in_child;
    /* Why this process never times the row, another process does (set with
     * in_child: verdicts.c gives it as the row's reason); NULL: it may. */
    const char *elsewhere;
    const char *code_of; /* whose timers and reader these are; NULL: its own */
    /* fastcpu.check() compares every row's reading on each CPU with the
     * readings of the rows that name a reference here: "library" (the C
     * library's answer) and "kernel" (the system call's, which gives the
     * node too); NULL: not a reference. */
    const char *reference;
    /* What a reading that failed (*valid false) means, for fastcpu.read():
     * the reason itself, or (read_errno) the call whose error number the
     * reader returns instead of the value; NULL: its reader never fails. */
    const char *read_failure;
    bool read_errno;
};

#define FC_METHODS_MAX 256 /* size of the per-row availability caches */

/* The catalog (sequences.c): methods, models and known-cost chains, in the
 * order fastcpu lists them. */
extern const struct fc_method fc_catalog[];
extern const size_t fc_catalog_count;
const struct fc_method *fc_method_find(const char *name);
const char *fc_kind_name(enum fc_kind kind);
const char *fc_role_name(enum fc_role role);

/* What is wrong with a row (a missing timer, kind or reader...), or NULL:
 * tests/test_methods.py checks every row. */
const char *fc_row_problem(const struct fc_method *m);

/* Run `m` once and decode what it reports: *node is -1 when the method
 * gives no node. Returns the raw value; *valid as for `read`. Only for a
 * method that fc_method_cpu_reason() accepts. */
uint32_t fc_method_read_cpu(const struct fc_method *m, bool *valid, unsigned *cpu,
                            int *node);

/* The reader and timers of a row defined outside sequences.c (each model in
 * models.c, each chain in chains.c), listed in its catalog. */
#define FC_DECLARE_MODEL(name)                                               \
    FC_HIDDEN uint32_t read_##name(bool *valid);                             \
    FC_HIDDEN uint64_t time_##name##_lfence(uint32_t copies);                \
    FC_HIDDEN uint64_t time_##name##_cpuid(uint32_t copies);                 \
    FC_HIDDEN uint64_t time_##name##_rdtscp(uint32_t copies);                \
    FC_HIDDEN uint64_t time_##name##_pmu_lfence(uint32_t copies);            \
    FC_HIDDEN uint64_t time_##name##_pmu_cpuid(uint32_t copies);

#pragma GCC visibility pop

#endif
