/*
 * fastcpu.h: the one header shared by the C files of fastcpu._core.
 *
 *   sequences.c  what is timed: the instruction sequences, and the catalog
 *                of every timed sequence (methods, models, known-cost
 *                chains), one row each with its needs and checks
 *   models.c     what is timed, too: C models of historical and proposed
 *                getcpu()/sched_getcpu() implementations, called out of line
 *   features.c   what this machine has: the requirements a row may name
 *                (CPUID bits, vDSO, rseq) and the facts the sequences read
 *   verdicts.c   each catalog row's verdicts, cached: can it run here (its
 *                needs, its probe in a forked child), does it report the CPU
 *   fork.c       a fork during a first use, mended in one place
 *   getcpu.c     fastcpu.getcpu(): the fastest method proven right here
 *   harness.c    how it is timed: the pair of timers for a row or a user
 *                function, warm-up, interleaved runs in chunks, the PMU
 *                counter's retries and width, statistics
 *   clock.c      what a TSC tick is worth: raw reads, frequency samples, rulers
 *   conversion.c core cycles per tick inside one measurement, from the
 *                ruler points (add and imul chains) between its stretches
 *   chains.c  sequences of known cost: dependent add (r, r) and imul chains
 *   userchains.c   the same chains as out-of-line user functions, for the
 *                  self-test of the user-function path
 *   userabi.c    a user function's timers (assembly) under the calling
 *                convention's rules, and stopping one that will not return
 *   glue_*.c     how Python sees it, by concern (glue.h: what they share):
 *                glue_bench.c the one measurement, glue_catalog.c the
 *                catalog and one reading, glue_getcpu.c getcpu(),
 *                glue_clock.c the clock's readings and the conversion
 *   module.c     the module: its state and the glue files' tables
 *
 * Nothing here knows about Python (only glue.h includes Python.h).
 */
#ifndef FASTCPU_H
#define FASTCPU_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nothing declared here leaves the extension (setup.py also builds with
 * -fvisibility=hidden, which covers definitions only): under -fPIC a
 * default-visibility global is read through the GOT, an extra dependent load
 * wherever a sequence reads it. PyInit__core, the one export, is marked by
 * PyMODINIT_FUNC. */
#pragma GCC visibility push(hidden)

/* ---- serialization ------------------------------------------------------- */

enum fc_serialize {
    FC_SER_LFENCE = 0, /* start lfence;rdtsc;lfence   end rdtscp;lfence */
    FC_SER_CPUID = 1,  /* start cpuid;rdtsc           end rdtscp;cpuid  */
    FC_SER_RDTSCP = 2, /* start rdtscp;lfence         end rdtscp;lfence */
    FC_SER_COUNT
};

extern const char *const fc_serialize_names[FC_SER_COUNT];

/* With counter='pmu' (pmu.c): the same modes reading the core-cycle counter.
 * 'rdtscp' has no counterpart (it reads the TSC). */
enum fc_pmu_serialize {
    FC_PMU_SER_LFENCE = 0, /* start lfence;rdpmc;lfence   end lfence;rdpmc;lfence */
    FC_PMU_SER_CPUID = 1,  /* start cpuid;rdpmc           end lfence;rdpmc;cpuid  */
    FC_PMU_SER_COUNT
};

/* One timed execution of `copies` back-to-back copies of a sequence, in TSC
 * ticks, harness included. One such function per method and serialization. */
typedef uint64_t (*fc_timer_fn)(uint32_t copies);

/* A user sequence (issue: user sequences): `unsigned fn(void)`. */
typedef unsigned (*fc_user_fn)(void);

/* ---- instructions shared by sequences.c, models.c and getcpu.c ------------ */

#define FC_INLINE static inline __attribute__((always_inline))
/* Keeps GCC's identical-code folding from merging two timers whose code is
 * the same into one function; clang does no such folding (and has no such
 * attribute). */
#if defined(__clang__)
#define FC_NO_ICF
#else
#define FC_NO_ICF __attribute__((no_icf))
#endif

/* The per-CPU GDT entry: GDT_ENTRY_CPUNODE (15) << 3 | RPL 3. Its limit is
 * cpu | node << 12 (Linux arch/x86/include/asm/segment.h). */
#define FC_CPUNODE_SELECTOR 0x7bu

/* A descriptor-table register as SIDT/SGDT store it in 64-bit mode. */
struct __attribute__((packed)) fc_dtr {
    uint16_t limit;
    uint64_t base;
};

/* Raw system call, so the timed code is the instruction itself, not libc's
 * wrapper and its errno handling. */
FC_INLINE long fc_syscall3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The errno a raw system call returned (-errno in -4095..-1), EIO for any
 * other failure. */
FC_INLINE int fc_syscall_errno(long rc)
{
    return rc < 0 && rc > -4096 ? (int)-rc : EIO;
}

/* ---- the method catalog (sequences.c) ------------------------------------ */

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
    const char *code_of; /* whose timers and reader these are; NULL: its own */
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

/* ---- the models (models.c) ----------------------------------------------- */

/* The reader and timers of a row defined outside sequences.c (each model in
 * models.c, each chain in chains.c), listed in its catalog. */
#define FC_HIDDEN __attribute__((visibility("hidden")))
#define FC_DECLARE_MODEL(name)                                               \
    FC_HIDDEN uint32_t read_##name(bool *valid);                             \
    FC_HIDDEN uint64_t time_##name##_lfence(uint32_t copies);                \
    FC_HIDDEN uint64_t time_##name##_cpuid(uint32_t copies);                 \
    FC_HIDDEN uint64_t time_##name##_rdtscp(uint32_t copies);                \
    FC_HIDDEN uint64_t time_##name##_pmu_lfence(uint32_t copies);            \
    FC_HIDDEN uint64_t time_##name##_pmu_cpuid(uint32_t copies);

FC_DECLARE_MODEL(vgetcpu26_tscp)
FC_DECLARE_MODEL(vgetcpu26_lsl)
FC_DECLARE_MODEL(vgetcpu26_hit)
FC_DECLARE_MODEL(vgetcpu26_miss)
FC_DECLARE_MODEL(glibc27_sched_getcpu)
FC_DECLARE_MODEL(getcpu_tscp)
FC_DECLARE_MODEL(getcpu_lsl)
FC_DECLARE_MODEL(getcpu_tscp_fp)
FC_DECLARE_MODEL(getcpu_sidt)
FC_DECLARE_MODEL(getcpu_sidt_rz_fp)
FC_DECLARE_MODEL(getcpu_sidt_norz_nofp)
FC_DECLARE_MODEL(getcpu_sidt_norz_fp)
FC_DECLARE_MODEL(getcpu_lsl_rz_fp)
FC_DECLARE_MODEL(getcpu_lsl_norz_nofp)
FC_DECLARE_MODEL(getcpu_lsl_norz_fp)
FC_DECLARE_MODEL(getcpu_cache_hit)
FC_DECLARE_MODEL(sched_getcpu_tscp)
FC_DECLARE_MODEL(sched_getcpu_lsl)
FC_DECLARE_MODEL(sched_getcpu_sidt)
FC_DECLARE_MODEL(sched_getcpu_rseq_inline)

/* The out-of-line model functions themselves (for `fastcpu show`). Their
 * cache argument is the kernel's struct getcpu_cache, of which the models
 * touch the first two words. */
struct fc_getcpu_cache;
FC_HIDDEN long model_vgetcpu26_tscp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN long model_vgetcpu26_lsl(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN int model_glibc27_sched_getcpu(void);
FC_HIDDEN long model_getcpu_tscp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_lsl(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_tscp_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_rz_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_norz_nofp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_norz_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_lsl_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_cache(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN int model_sched_getcpu_tscp(void);
FC_HIDDEN int model_sched_getcpu_lsl(void);
FC_HIDDEN int model_sched_getcpu_sidt(void);

/* Set up what the models read: the pointer glibc 2.7 kept mangled. Called
 * once at module init (module.c). */
void fc_models_init(void);

/* ---- known-cost chains (chains.c) ------------------------------ */

/* The chains the catalog lists as chain rows: each op at each length
 * (powers of two from 1 to 1024, and 100 and 300 for the "100 core cycles and
 * more" checks), with what it is made of and what each link costs. */
#define FC_CHAIN_LENGTHS(X, op)                                              \
    X(op, 1) X(op, 2) X(op, 4) X(op, 8) X(op, 16) X(op, 32) X(op, 64)        \
    X(op, 100) X(op, 128) X(op, 256) X(op, 300) X(op, 512) X(op, 1024)
#define FC_CHAINS(X) FC_CHAIN_LENGTHS(X, add) FC_CHAIN_LENGTHS(X, imul)

#define FC_add_TEXT "'add r64, r64'"
#define FC_add_LATENCY 1
#define FC_add_LATENCY_TEXT "1"
#define FC_imul_TEXT "'imul r64, r64'"
#define FC_imul_LATENCY 3
#define FC_imul_LATENCY_TEXT "3"

#define FC_DECLARE_CHAIN(op, n) FC_DECLARE_MODEL(op##_chain_##n)
FC_CHAINS(FC_DECLARE_CHAIN)

/* ---- the known-cost chains as user functions (userchains.c) ---------- */

/* One chain compiled as an out-of-line `unsigned fn(void)`, timed through the
 * user-function path; its cost above an empty function is length x latency
 * core cycles. */
struct fc_user_chain {
    const char *name; /* the inline chain of the same body: "add_chain_8" */
    const char *op;
    uint32_t length;
    uint32_t latency_cycles;
    fc_user_fn fn;
};

extern const struct fc_user_chain fc_user_chains[];
extern const size_t fc_user_chain_count;
/* A user function of no cost, shaped like the chains: the user path's zero. */
unsigned fc_user_empty(void);

/* ---- machine features (features.c) --------------------------------------- */

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

/* ---- each row's verdicts (verdicts.c) ------------------------------------ */

/* Why `m`, a row of fc_catalog[], cannot run here, or NULL when it can:
 * the first of its needs this machine lacks, else what its probe in a
 * forked child met. The answer is cached. A child forked while
 * another thread probes releases the lock and probes again on first use
 * (fc_atfork_init). */
const char *fc_method_unavailable(const struct fc_method *m);

/* Why `m`, though available, does not report the CPU here (an empty or
 * kernel-entry cost, SIDT emulated under UMIP, LSL failing...), or NULL
 * when it does. Decided once, from the availability verdict and the row's
 * cpu_check, run in-process after the probe; cached. */
const char *fc_method_cpu_reason(const struct fc_method *m);

/* For fork.c: the probe locks released (a probe made by another thread is
 * made again on first use). */
void fc_verdicts_after_fork_in_child(void);

/* ---- fork (fork.c) ------------------------------------------------------- */

/* Register (once) the pthread_atfork child handler that resets every lock
 * and unfinished first use of features.c, verdicts.c and getcpu.c, each
 * through its own after_fork_in_child. Called at module init. */
void fc_atfork_init(void);

/* ---- fastcpu.getcpu() (getcpu.c) ----------------------------------------- */

enum fc_getcpu_way {
    FC_GETCPU_UNCHOSEN = 0,
    FC_GETCPU_RSEQ,    /* cpu_id (node_id where covered); per call: < 0 falls back */
    FC_GETCPU_RDPID,   /* TSC_AUX: cpu | node << 12 */
    FC_GETCPU_VDSO,    /* __vdso_getcpu */
    FC_GETCPU_SYSCALL, /* the kernel's own answer, when the call succeeds */
    FC_GETCPU_NONE,    /* nothing could be verified: fc_getcpu_why() says why */
};

/* What fc_getcpu_by() returns for FC_GETCPU_NONE, negated: outside the
 * errno range, so it is told apart from a failing vDSO or system call. */
#define FC_GETCPU_ENONE 4096

/* Chosen once by fc_getcpu_choose(); read without a lock afterwards. */
extern enum fc_getcpu_way fc_getcpu_way, fc_getcpu_node_way, fc_getcpu_fallback_way;

/* Choose (once, thread-safe; may take milliseconds: it pins a helper thread
 * to each CPU of the caller's affinity mask, and to no other) the fastest way that reads the pinned CPU on each
 * CPU (and the node the system call, else sysfs, gives), for the cpu alone
 * and for cpu and node. A way whose own call fails (the system call denied
 * by seccomp, say) is not chosen; where nothing is verified the way is
 * FC_GETCPU_NONE. A child forked while another thread chooses chooses
 * again (fork.c registers the handler). */
void fc_getcpu_choose(void);
/* For fork.c: a choice another thread had not finished is made again. */
void fc_getcpu_after_fork_in_child(void);
const char *fc_getcpu_way_name(enum fc_getcpu_way way);

enum fc_getcpu_why { FC_WHY_CPU, FC_WHY_NODE, FC_WHY_FALLBACK };
/* Why that way is FC_GETCPU_NONE (valid once chosen). */
const char *fc_getcpu_why(enum fc_getcpu_why which);

/* One read by `way` (not UNCHOSEN); *node may be NULL. Returns the CPU, or a
 * negative errno when the vDSO or the system call failed, or
 * -FC_GETCPU_ENONE for FC_GETCPU_NONE (rseq falls back to
 * fc_getcpu_fallback_way on a thread without a registered area). */
int fc_getcpu_by(enum fc_getcpu_way way, unsigned *node);

static inline int fc_getcpu_fast(void)
{
    enum fc_getcpu_way way = __atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE);
    if (__builtin_expect(way == FC_GETCPU_RSEQ, 1)) {
        int32_t cpu;
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, cpu);
        if (__builtin_expect(cpu >= 0, 1))
            return cpu;
        return fc_getcpu_by(fc_getcpu_fallback_way, NULL);
    }
    if (way == FC_GETCPU_RDPID) {
        uint64_t aux;
        __asm__ volatile("rdpid %0" : "=r"(aux));
        return (int)(aux & 0xfffu);
    }
    if (way == FC_GETCPU_UNCHOSEN)
        fc_getcpu_choose();
    return fc_getcpu_by(__atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE), NULL);
}

/* The same for cpu and node, by fc_getcpu_node_way (chosen already). */
static inline int fc_getcpu_node_fast(unsigned *node)
{
    if (__builtin_expect(fc_getcpu_node_way == FC_GETCPU_RDPID, 1)) {
        uint64_t aux; /* inline: the common case on current x86 */
        __asm__ volatile("rdpid %0" : "=r"(aux));
        *node = (unsigned)aux >> 12;
        return (int)(aux & 0xfffu);
    }
    return fc_getcpu_by(fc_getcpu_node_way, node);
}

/* ---- the harness (harness.c) --------------------------------------------- */

struct fc_run_buffers {
    uint64_t *raw;    /* ticks of each run of the method side */
    uint64_t *empty;  /* ticks of each run of the empty side */
    bool *migrated;   /* the CPU differed between before and after the pair */
};

/* What is timed against what: two timer functions, or two user functions
 * called through the same indirect call, each side with its own number of
 * copies per run. bench(): the method against the empty sequence, the same
 * copies on both sides. bench_diff(): the method at 2k copies (the "method"
 * side) against itself at k (the "empty" side), both through the copy loop. */
struct fc_pair {
    fc_timer_fn method, empty;          /* built-in: inlined sequences */
    fc_user_fn user_method, user_empty; /* user sequence: pointer calls */
    enum fc_serialize serialize;
    uint32_t method_copies, empty_copies;
    bool pmu; /* time with the PMU counter (pmu.c): the rows' pmu_timers */
};

/* Why nothing can be timed here (the TSC unreadable, or no RDTSCP, with
 * which every mode closes the timed region), or NULL when it can. */
const char *fc_timer_unavailable(void);

/* A user sequence's baseline: an empty function called the same way. */
unsigned fc_empty_user_fn(void);

/* Fill `p` (its serialize and pmu already set) to time one thing: the
 * catalog row `m` or, when `m` is NULL, the user function `user`.
 * fc_pair_against_empty(): `copies` copies against as many of the empty
 * sequence (the empty row, or fc_empty_user_fn for a user function), what
 * bench() times. fc_pair_diff(): 2k copies against k of itself, what
 * bench_diff() times. NULL, or why not (a row without PMU timers). */
const char *fc_pair_against_empty(struct fc_pair *p, const struct fc_method *m,
                                  fc_user_fn user, uint32_t copies);
const char *fc_pair_diff(struct fc_pair *p, const struct fc_method *m, fc_user_fn user,
                         uint32_t k);

/* A measurement of `runs` runs of a pair in chunks: the caller calls
 * fc_session_step() until it returns FC_STEP_DONE, and between calls may
 * look for signals (module.c re-takes the GIL there). Each step is a chunk
 * of about FC_CHUNK_TICKS: warm-up runs first (FC_WARM_UP_RUNS at most,
 * unrecorded), then recorded runs; with the PMU counter a chunk whose counter
 * moved is redone, FC_PMU_TRIES times in a row at most, and the deltas are
 * masked to the counter's width at the end. */
#define FC_WARM_UP_RUNS 64u
/* About 2^25 ticks (~13 ms at 2.6 GHz) per chunk, and at most one run past
 * that: Ctrl-C waits for a chunk and one run. */
#define FC_CHUNK_TICKS (1ull << 25)
#define FC_PMU_TRIES 3

struct fc_session {
    const struct fc_pair *pair;
    struct fc_run_buffers bufs;
    size_t runs, done;
    uint32_t warm, warmed;
    int moved;      /* PMU chunks in a row whose counter moved */
    char why[256];  /* what went wrong, for FC_STEP_UNSUPPORTED / FC_STEP_FAILED */
    /* On the TSC with `rulers`: a ruler point before the first recorded run,
     * one every rulers->spacing_ticks of runs and one after the last, into
     * points[0 .. n_points) (malloc'd, grown as needed; fc_session_free). */
    const struct fc_ruler_args *rulers;
    struct fc_ruler_point *points;
    size_t n_points, cap_points;
    uint64_t origin_tsc;
};

enum fc_step {
    FC_STEP_MORE,        /* a chunk done: call again */
    FC_STEP_DONE,        /* every run recorded */
    FC_STEP_UNSUPPORTED, /* the PMU counter cannot be read: why says why */
    FC_STEP_FAILED,      /* the counter kept moving, or a user function crashed */
    FC_STEP_NO_MEMORY,   /* the ruler points could not be grown */
    FC_STEP_BROKE,       /* a user function broke the calling convention or forked */
    FC_STEP_TIMED_OUT,   /* a user function outlived the timeout (fc_user_begin) */
    FC_STEP_INTERRUPTED, /* Ctrl-C, and a user function that did not come back */
};

/* `rulers` NULL: none (the PMU counter counts core cycles itself). */
void fc_session_init(struct fc_session *s, const struct fc_pair *p, struct fc_run_buffers b,
                     size_t runs, const struct fc_ruler_args *rulers);
enum fc_step fc_session_step(struct fc_session *s);
/* Free the session's ruler points. */
void fc_session_free(struct fc_session *s);

/* ---- user functions under the calling convention (userabi.c) ------------
 * What a user function must leave as it found it: a bit each (numbers, as
 * the assembly spells them). */
#define FC_ABI_RBX_BIT 1
#define FC_ABI_RBP_BIT 2
#define FC_ABI_R12_BIT 4
#define FC_ABI_R13_BIT 8
#define FC_ABI_R14_BIT 16
#define FC_ABI_R15_BIT 32
#define FC_ABI_RSP_BIT 64
#define FC_ABI_DF_BIT 128
#define FC_ABI_MXCSR_BIT 256
#define FC_ABI_X87CW_BIT 512
#define FC_ABI_COUNT 10

/* One timed run of `copies` calls of `fn` for pair `p` (its mode and
 * counter), on the empty side's call site or the method's; what the
 * function broke is restored after each call and recorded for
 * fc_user_step. */
uint64_t fc_user_time(fc_user_fn fn, const struct fc_pair *p, uint32_t copies,
                      bool empty_side);
/* Before a user function's session: the timeout in seconds (0: none, at
 * most FC_USER_TIMEOUT_MAX), and how to tell that the thread runs Python
 * (a ctypes callback inside the function), where nothing may be abandoned. */
#define FC_USER_TIMEOUT_MAX 1e6
void fc_user_begin(double timeout_s, int (*python_running)(void));
/* The timeout has passed (checked between chunks). */
bool fc_user_timed_out(void);
/* `step_chunk` (fc_session_step, passed by the glue: userabi.c sits below
 * the harness, which calls its timers) for a user function: the chunk under
 * a sigsetjmp, so that a fault in the function, the timeout or Ctrl-C stops
 * it; FC_STEP_BROKE, FC_STEP_FAILED (a crash), FC_STEP_TIMED_OUT,
 * FC_STEP_INTERRUPTED with s->why, FC_STEP_UNSUPPORTED where it cannot be
 * guarded. */
enum fc_step fc_user_step(struct fc_session *s, enum fc_step (*step_chunk)(struct fc_session *));
/* The names of the FC_ABI_* bits set in `broken`, comma-separated. */
int fc_user_describe_abi(uint32_t broken, char *out, size_t size);

/* bench()'s two figures, per copy: min(raw) - min(empty) and
 * median(raw) - median(empty). */
void fc_best_median(const struct fc_run_buffers *b, size_t runs, uint32_t copies,
                    double *best, double *median);

/* The building blocks of a session. Warm both sides up, unrecorded: `runs`
 * pairs, but stop early once `budget_ticks` have passed. Returns how many
 * were done. */
uint32_t fc_warm_up(const struct fc_pair *p, uint32_t runs, uint64_t budget_ticks);

/* Record runs [first, first + count) but stop early once `budget_ticks` have
 * passed, so the caller can look for signals. Returns how many were done. */
size_t fc_measure(const struct fc_pair *p, struct fc_run_buffers *b,
                  size_t first, size_t count, uint64_t budget_ticks);

/* Statistics with numpy's meaning (median of an even count: mean of the two
 * middle values). `v` is left untouched and nothing of size n is allocated. */
uint64_t fc_min_u64(const uint64_t *v, size_t n);
double fc_median_u64(const uint64_t *v, size_t n);

/* ---- the clock (clock.c) ------------------------------------------------- */

uint64_t fc_rdtsc(void);
/* n unfenced TSC reads into v[], back to back or each after a pseudo-random
 * stretch of work (`spaced`): the raw material of the granularity fit. */
void fc_tsc_reads(uint64_t *v, size_t n, bool spaced);
/* CLOCK_MONOTONIC in ns (Python's time.monotonic_ns). */
uint64_t fc_monotonic_ns(void);
/* A (CLOCK_MONOTONIC_RAW ns, TSC) pair read as close together as possible. */
void fc_tsc_ns_pair(uint64_t *ns, uint64_t *tsc);
/* Instructions per block of a ruler chain (clock.c), unrolled: a block of
 * 100 read register-register adds 0.9% slower than imuls/3 in some
 * processes on an AuthenticAMD family 25 model 17 (Zen 4) guest, and never
 * in others (a cycle per pass of the loop, by where the code landed); 1,000
 * leave a tenth of that. */
#define FC_RULER_BLOCK 1000
#define FC_RULER_BLOCK_TEXT "1000"

/* The chains fastcpu.clock() times: register-register adds (1 core cycle
 * each) and 64-bit imuls (3), the two rulers; adds of an immediate, which
 * some cores fold at rename, a fact about the core, never a ruler. */
enum fc_ruler {
    FC_RULER_ADD = 0,
    FC_RULER_IMUL = 1,
    FC_RULER_IMMEDIATE_ADD = 2,
};
/* TSC ticks for `blocks` blocks of FC_RULER_BLOCK dependent `ruler` instructions, fenced. */
uint64_t fc_ruler_ticks(enum fc_ruler ruler, uint32_t blocks);

/* ---- core cycles per tick inside a measurement (conversion.c) ----------- */

/* How a measurement times its ruler points: a register-register add chain
 * of `add_blocks` blocks and an imul chain of `imul_blocks` blocks, each
 * timer's own cost in core cycles (fences and reads), and a point every
 * `spacing_ticks` TSC ticks of runs (fastcpu/_conversion.py sizes them for
 * the host at hand). */
struct fc_ruler_args {
    uint32_t add_blocks, imul_blocks;
    double add_fixed_cycles, imul_fixed_cycles;
    uint64_t spacing_ticks;
};
/* One ruler point: the runs recorded before it, TSC ticks since the
 * measurement began, and each ruler's core cycles per tick. Doubles, so
 * that Python gets them as one (n, 4) array. */
struct fc_ruler_point {
    double run, tsc, add, imul;
};
/* Time a point (after a short warm-up chain when `warm_up`). */
void fc_ruler_point_take(const struct fc_ruler_args *r, uint64_t run, uint64_t origin_tsc,
                         bool warm_up, struct fc_ruler_point *out);

/* Levels of the core clock a measurement reports at most. */
#define FC_LEVELS_MAX 8
/* What a measurement's ruler points say: core cycles per tick that convert
 * its runs as each stretch between two points would be converted with the
 * points around it (NaN: no undisturbed point), its 95% half-width; the
 * points, those whose rulers disagreed (disturbed, left out), the hops
 * (neighbouring undisturbed points at different levels) and the runs of the
 * stretches they fell in; the rulers' means over the undisturbed points; the
 * levels seen (each a mean of the points that agree with it) and the
 * lowest and highest point. */
struct fc_conversion {
    double cycles_per_tick, ci95;
    uint32_t points, disturbed, hops;
    uint32_t hops_located; /* of the hops: those whose place the runs showed */
    uint32_t slowdowns;    /* level changes whose rulers moved apart or body held: not the clock */
    double hop_runs;
    double add_mean, imul_mean;
    uint32_t levels; /* level[] lowest first */
    double level[FC_LEVELS_MAX];
    uint32_t level_points[FC_LEVELS_MAX];
    double level_min, level_max;
    double span_ticks; /* from the first point to the last */
};
/* The runs a measurement recorded, where the conversion may read them: both
 * sides' ticks of each run (a run is core-clock work: its ticks scale as
 * 1 / the clock's level). */
struct fc_run_ticks {
    const uint64_t *a, *b;
    size_t runs;
};
/* Convert with points p[0 .. n) in the order taken: a point is disturbed
 * where its two rulers differ by more than the fraction `agree_tol` (an
 * interrupt slows a chain many times over; the rulers' own systematic
 * difference, their fixed costs' error, stays well inside it), two points
 * are at different levels where they differ by more than `tol`;
 * `resolution` is one counter step over the shorter ruler's ticks
 * (fc_ruler_resolution); `runs` (NULL: none) the runs themselves, where a
 * stretch a hop fell into is converted apart at the hop they show. */
void fc_convert(const struct fc_ruler_point *p, size_t n, double agree_tol, double tol,
                double resolution, const struct fc_run_ticks *runs, struct fc_conversion *out);
/* One step of a counter moving `step_ticks` TSC ticks at a time over the
 * TSC ticks of the shorter ruler chain, at `cycles_per_tick`. */
double fc_ruler_resolution(double step_ticks, double cycles_per_tick, uint32_t add_blocks,
                           uint32_t imul_blocks);
/* Within what fraction two points' levels agree: three counter steps of a
 * chain (`resolution`), at least 1% (a clock's step is 2.5% or more). */
double fc_ruler_tolerance(double resolution);
/* Within what fraction a point's two rulers agree: FC_RULERS_AGREE at least. */
#define FC_RULERS_AGREE 0.03

/* ---- the PMU core-cycle counter (pmu.c) ---------------------------------- */

enum fc_pmu_scope {
    FC_PMU_ALL = 1,       /* user and kernel cycles */
    FC_PMU_USER_ONLY = 2, /* perf_event_paranoid allowed user mode only */
};

/* Open this thread's core-cycle counter for user-space rdpmc (once per
 * thread) and set fc_pmu_counter. Returns 0 and sets *scope on success, or
 * -1 with *why saying why not (a static or thread-local string). */
int fc_pmu_open(enum fc_pmu_scope *scope, const char **why);
/* Private test hook: open a software event in place of the cycle counter
 * (pmu.c says why). */
#define FC_ENV_PMU_SOFTWARE "FASTCPU_TEST_PMU_SOFTWARE"
/* Re-read the counter's rdpmc number (it moves if the kernel reschedules the
 * event) before a chunk of runs; 0, or -1 with *why. */
int fc_pmu_refresh(const char **why);
/* After the chunk: 0 when the event stayed on that counter and never left
 * it (so every delta read there is this thread's cycles), or -1 with *why;
 * the caller redoes the chunk. */
int fc_pmu_check(const char **why);
/* Mask of the counter's valid bits: deltas are taken modulo its width. */
uint64_t fc_pmu_mask(void);

#pragma GCC visibility pop

#endif
