/*
 * sequences.c: what fastcpu times. Each method is one small always-inline
 * sequence; FC_DEFINE_TIMERS wraps it, unchanged, in the harness of timing.h
 * for each serialization mode, and a `read_` function runs it once so that
 * `fastcpu.read()` returns the value of the code that was timed (a getcpu()
 * call's reader also reads back the cpu and node the timed call stored).
 * The catalog at the end lists these and the out-of-line models of
 * models.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>

#include "catalog.h"
#include "chains.h"
#include "machine.h"
#include "models.h"
#include "x86.h"
#include "timing.h"

/* ---- the sequences ------------------------------------------------------- */

FC_INLINE uint32_t seq_empty(void) { return 0; }

FC_INLINE uint32_t seq_gdt(void)
{
    uint32_t limit;
    __asm__ volatile("lsl %1, %0" : "=r"(limit) : "r"(FC_CPUNODE_SELECTOR) : "cc");
    return limit;
}

FC_INLINE uint32_t seq_tscp(void)
{
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
    return aux;
}

FC_INLINE uint32_t seq_rdpid(void)
{
    uint64_t aux;
    __asm__ volatile("rdpid %0" : "=r"(aux));
    return (uint32_t)aux;
}

/* The seed's conservative SIDT sequence: store, load the limit, subtract. */
FC_INLINE uint32_t seq_sidt(void)
{
    struct fc_dtr idt;
    __asm__ volatile("sidt %0" : "=m"(idt));
    return (uint32_t)idt.limit - 0x1000u;
}

FC_INLINE uint32_t seq_sgdt(void)
{
    struct fc_dtr gdt;
    __asm__ volatile("sgdt %0" : "=m"(gdt));
    return gdt.limit;
}

/* SLDT: the LDT selector, a 2-byte store. dean gaudet found it the
 * cheapest of the three stores, and unusable: a process may change its LDT
 * (modify_ldt). Under UMIP Linux emulates it for 64-bit processes since
 * 5.10 (before: SIGSEGV), so it is probed in a child. */
FC_INLINE uint32_t seq_sldt(void)
{
    uint16_t selector;
    __asm__ volatile("sldt %0" : "=m"(selector));
    return selector;
}

/* glibc's registered rseq area: cpu_id is the 32-bit field at offset 4. One
 * %fs-relative load, what an inlined rseq read compiles to; the timers load
 * __rseq_offset into a register before the opening read, as glibc has it in
 * an immediate. */
FC_INLINE uint32_t seq_rseq(long offset)
{
    uint32_t cpu;
    FC_RSEQ_LOAD_AT(offset, FC_RSEQ_CPU_ID, cpu);
    return cpu;
}

/* getcpu through the vDSO and through the system call, called in the shape
 * the models are (timing.h's FC_GETCPU_CALLER): cpu and node in the
 * caller's frame, only the return value kept; read_vdso and read_syscall
 * read cpu and node back, outside any timed region. The timers load the
 * vDSO's address before the opening read. */
FC_GETCPU_CALLER(vdso, (fc_vdso_getcpu_fn fn), fn(&cpu_, &node_, NULL))
FC_GETCPU_CALLER(syscall, (void), fc_syscall3(SYS_getcpu, (long)&cpu_, (long)&node_, 0))

/* On failure (*valid false) these return the error number instead: what
 * fastcpu.read() names (a seccomp filter may deny the system call). */
static uint32_t read_vdso(bool *valid)
{
    unsigned cpu = 0, node = 0;
    int rc = fc_vdso_getcpu(&cpu, &node, NULL);
    *valid = rc == 0;
    return rc == 0 ? cpu | node << 12 : (uint32_t)(rc < 0 ? -rc : EIO);
}

static uint32_t read_syscall(bool *valid)
{
    unsigned cpu = 0, node = 0;
    long rc = fc_syscall3(SYS_getcpu, (long)&cpu, (long)&node, 0);
    *valid = rc == 0;
    return rc == 0 ? cpu | node << 12 : (uint32_t)fc_syscall_errno(rc);
}

FC_INLINE uint32_t seq_sched_getcpu(void) { return (uint32_t)sched_getcpu(); }

/* lmbench's "null" system call. */
FC_INLINE uint32_t seq_null_syscall(void)
{
    return (uint32_t)fc_syscall3(SYS_getppid, 0, 0, 0);
}

/* The user-mode half of local_irq_save/restore. The pushes would overwrite
 * the 128-byte red zone below %rsp that the compiler may be using, so step
 * over it first (lea leaves the flags alone). */
FC_INLINE uint32_t seq_pushf_popf(void)
{
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
                     "pushfq\n\t"
                     "popfq\n\t"
                     "lea 128(%%rsp), %%rsp" ::: "memory", "cc");
    return 0;
}

/* Seed 004's user-mode half exactly: pushfq; pop %rax; push %rax; popfq
 * (the flags pass through a register, as local_irq_save keeps them), over
 * the red zone as in seq_pushf_popf. */
FC_INLINE uint32_t seq_pushf_pop_push_popf(void)
{
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
                     "pushfq\n\t"
                     "pop %%rax\n\t"
                     "push %%rax\n\t"
                     "popfq\n\t"
                     "lea 128(%%rsp), %%rsp" ::: "rax", "memory", "cc");
    return 0;
}

/* Seed 003's %gs save/restore as user mode can do it: read the selector,
 * load it back (a descriptor load with its checks). Rusty Russell timed the
 * kernel's own %gs save/restore on a null system call (2006). Reloading a
 * null selector clears the GS base on Intel CPUs, so features.c runs it
 * only while this process has no GS base of its own. */
FC_INLINE uint32_t seq_gs_reload(void)
{
    uint16_t gs;
    __asm__ volatile("mov %%gs, %0\n\t"
                     "mov %0, %%gs"
                     : "=&r"(gs)::"memory");
    return gs;
}

FC_INLINE uint32_t seq_rdfsbase(void)
{
    uint64_t base;
    __asm__ volatile("rdfsbase %0" : "=r"(base));
    return (uint32_t)base;
}

FC_INLINE uint32_t seq_rdgsbase(void)
{
    uint64_t base;
    __asm__ volatile("rdgsbase %0" : "=r"(base));
    return (uint32_t)base;
}

/* ---- timers and readers -------------------------------------------------- */

#define FC_METHOD_CODE(name)                                                 \
    FC_DEFINE_TIMERS(name, fc_use(seq_##name()))                             \
    static uint32_t read_##name(bool *valid)                                 \
    {                                                                        \
        *valid = true;                                                       \
        return seq_##name();                                                 \
    }

FC_METHOD_CODE(empty)
FC_METHOD_CODE(tscp)
FC_METHOD_CODE(rdpid)
FC_METHOD_CODE(sgdt)
FC_DEFINE_TIMERS(sched_getcpu, fc_use(seq_sched_getcpu()))
static uint32_t read_sched_getcpu(bool *valid)
{
    int cpu = sched_getcpu(); /* -1 with errno set on failure: return errno */
    *valid = cpu >= 0;
    return cpu >= 0 ? (uint32_t)cpu : (uint32_t)errno;
}
/* What its failure means, in every row that reads with read_sched_getcpu. */
#define SCHED_GETCPU_FAILURE .read_failure = "glibc's sched_getcpu()", .read_errno = true
FC_METHOD_CODE(null_syscall)
FC_METHOD_CODE(pushf_popf)
FC_METHOD_CODE(pushf_pop_push_popf)
FC_METHOD_CODE(gs_reload)
FC_METHOD_CODE(sldt)
FC_METHOD_CODE(rdfsbase)
FC_METHOD_CODE(rdgsbase)

FC_DEFINE_TIMERS_SETUP(rseq, const long offset_ = fc_rseq_offset, fc_use(seq_rseq(offset_)))
static uint32_t read_rseq(bool *valid)
{
    *valid = true;
    return seq_rseq(fc_rseq_offset);
}

FC_DEFINE_TIMERS_SETUP(vdso, const fc_vdso_getcpu_fn fn_ = fc_vdso_getcpu, call_vdso(fn_))
FC_DEFINE_TIMERS(syscall, call_syscall())

FC_DEFINE_TIMERS(gdt, fc_use(seq_gdt()))
/* LSL clears ZF and leaves the destination alone when the selector is not
 * usable; report that instead of a stale register. */
static uint32_t read_gdt(bool *valid)
{
    uint32_t limit = 0;
    __asm__ volatile("lsl %2, %0" : "+r"(limit), "=@ccz"(*valid) : "r"(FC_CPUNODE_SELECTOR));
    return limit;
}

FC_DEFINE_TIMERS(sidt, fc_use(seq_sidt()))
/* The raw IDT limit, before the proposal's subtraction. */
static uint32_t read_sidt(bool *valid)
{
    *valid = true;
    return seq_sidt() + 0x1000u;
}

/* cpu_id, and node_id where both glibc and the kernel say the area holds
 * it. */
static uint32_t read_cpu_rseq(bool *valid, unsigned *cpu, int *node)
{
    int32_t n, c = fc_rseq_cpu_node(fc_features()->rseq_node_id, &n);
    *valid = c >= 0;
    *cpu = (unsigned)c;
    *node = n;
    return (uint32_t)c;
}

/* ---- does it report the CPU here? --------------------------------------- */

/* A row's cpu_check (catalog.h): why the value it reads holds no CPU on
 * this machine, or NULL when it does. Run in-process, once, after the
 * row's probe. */

/* The LSL rows: LSL never faults, but reads a CPU only where the kernel has
 * the per-CPU segment. */
static const char *lsl_cpu_check(void)
{
    bool valid;
    read_gdt(&valid);
    return valid ? NULL
                 : "LSL on selector 0x7b cleared ZF: this kernel has no per-CPU "
                   "GDT segment (Linux < 2.6.19, or not x86-64)";
}

/* The SIDT rows: only a kernel with dean gaudet's patch stores the CPU in
 * the IDT limit. */
static const char *idt_cpu_check(void)
{
    bool valid;
    uint32_t limit = read_sidt(&valid);
    if (limit >= 0x1000u)
        return NULL; /* a kernel that stores the CPU there */
    if (fc_features()->umip && limit == 0)
        return "UMIP: the kernel emulates SIDT and the limit is always 0";
    return "the IDT limit is below 0x1000 (0xfff on released kernels): no kernel "
           "stores the CPU there; the 2007 patch was never merged";
}

static const char *gdt_limit_cpu_check(void)
{
    bool valid;
    uint32_t limit = read_sgdt(&valid);
    if (fc_features()->umip && limit == 0)
        return "UMIP: the kernel emulates SGDT and the limit is always 0";
    return "the GDT limit is the table's size minus one, the same on every CPU: "
           "no kernel stores the CPU there";
}

static const char *rseq_cpu_check(void)
{
    int32_t cpu;
    FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, cpu);
    return cpu < 0 ? "rseq cpu_id is negative in this thread (-1: not registered yet, "
                     "-2: registration failed)"
                   : NULL;
}

static const char *ldt_cpu_check(void)
{
    bool valid;
    uint32_t selector = read_sldt(&valid);
    if (fc_features()->umip && selector == 0)
        return "UMIP: the kernel emulates SLDT and the selector is always 0 (a "
               "process without an LDT)";
    return "the LDT selector is 0, or the same GDT entry on every CPU once a "
           "process has an LDT: no kernel stores the CPU there, and a process "
           "may change its LDT (modify_ldt)";
}

/* The rows whose encoding reports no CPU. */
static const char *no_cpu(void)
{
    return "it reports no CPU: a cost the CPU reads are compared with";
}

static const char *chain_no_cpu(void) { return "a known-cost chain reports no CPU"; }

/* ---- the catalog --------------------------------------------------------- */

/*
 * One row per timed sequence. FC_METHOD_ROW / FC_MODEL_ROW / FC_CHAIN_ROW
 * fill what every row of a kind has (name, kind, reader, timers, model);
 * the row names the rest: .encoding, .needs (FC_NEEDS of requirements.h's
 * FC_REQUIREMENTS), .probe_in_child (it may fault whatever CPUID says),
 * .cpu_check (why it may not report the CPU here), .read_failure (what a
 * failed reading means) and .description.
 */
#define FC_ROW(n, k, r) .name = #n, .kind = k, .role = r, .read = read_##n, FC_TIMERS(n)
/* A row that times another row's sequence elsewhere: in a child interpreter
 * started with the GLIBC_TUNABLES setting `tunable` (catalog.h: in_child). */
#define FC_CHILD_ROW(n, of, r, tunable)                                      \
    .name = #n, .kind = FC_KIND_METHOD, .role = FC_ROLE_##r, .read = read_##of, \
    FC_TIMERS(of), .code_of = #of, .in_child = tunable,                         \
    .elsewhere = "it runs only in a child interpreter started with GLIBC_TUNABLES " \
                 "(fastcpu.bench and fastcpu.read start one)"
/* A method: `role` CPU_SOURCE, LIBRARY_CALL or ENTRY_COST (catalog.h). */
#define FC_METHOD_ROW(n, role) FC_ROW(n, FC_KIND_METHOD, FC_ROLE_##role)
/* A model of models.c: its timers call `fn` out of line. */
#define FC_MODEL_ROW(n, fn) FC_ROW(n, FC_KIND_MODEL, FC_ROLE_MODEL), .model = (const void *)(fn)
/* A chain of chains.c (chains.h: FC_CHAINS). */
#define FC_CHAIN_ROW(op, n)                                                  \
    {FC_ROW(op##_chain_##n, FC_KIND_CHAIN, FC_ROLE_CHAIN),     \
     .encoding = FC_ENC_NONE,                                                \
     .cpu_check = chain_no_cpu, .chain = {#op, n, FC_##op##_LATENCY},        \
     .description = "Known cost: a dependent chain of " #n " " FC_##op##_TEXT \
                    ", known to take " #n " x " FC_##op##_LATENCY_TEXT       \
                    " core cycles."},

const struct fc_method fc_catalog[] = {
    {FC_METHOD_ROW(empty, ENTRY_COST), .encoding = FC_ENC_NONE, .cpu_check = no_cpu,
     .description = "The empty sequence: the harness alone, subtracted from every "
                    "method."},
    {FC_METHOD_ROW(gdt, CPU_SOURCE), .encoding = FC_ENC_CPUNODE, .cpu_check = lsl_cpu_check,
     .read_failure = "LSL cleared ZF: selector 0x7b is not a usable segment here, so the limit "
                     "register was left unchanged",
     .description = "LSL on the per-CPU GDT segment (selector 0x7b), whose limit "
                    "the kernel sets to cpu | node << 12; the vDSO's fallback when "
                    "the CPU lacks RDPID."},
    {FC_METHOD_ROW(tscp, CPU_SOURCE), .encoding = FC_ENC_CPUNODE, .needs = FC_NEEDS(RDTSCP),
     .probe_in_child = true,
     .description = "RDTSCP, keeping only ECX = TSC_AUX (cpu | node << 12); the "
                    "2.6.2x vgetcpu's fast mode."},
    {FC_METHOD_ROW(rdpid, CPU_SOURCE), .encoding = FC_ENC_CPUNODE, .needs = FC_NEEDS(RDPID),
     .probe_in_child = true,
     .description = "RDPID: TSC_AUX (cpu | node << 12) without reading the TSC; "
                    "what today's vDSO getcpu uses when the CPU has it."},
    {FC_METHOD_ROW(sidt, CPU_SOURCE), .encoding = FC_ENC_SIDT, .probe_in_child = true,
     .cpu_check = idt_cpu_check,
     .description = "SIDT, load the IDT limit, subtract 0x1000: dean gaudet's 2007 "
                    "proposal as the seed timed it. Only a patched kernel puts the "
                    "CPU there; under UMIP the kernel traps and emulates it."},
    {FC_METHOD_ROW(sgdt, CPU_SOURCE), .encoding = FC_ENC_LIMIT, .probe_in_child = true,
     .cpu_check = gdt_limit_cpu_check,
     .description = "SGDT, load the GDT limit: the same store as SIDT on the other "
                    "table. Reports no CPU on any released kernel."},
    {FC_METHOD_ROW(sldt, CPU_SOURCE), .encoding = FC_ENC_SELECTOR, .probe_in_child = true,
     .cpu_check = ldt_cpu_check,
     .description = "SLDT: the LDT selector, a 2-byte store; the cheapest of the "
                    "three stores by dean gaudet's account (LKML, 2007), and unusable "
                    "for the CPU since a process may change its LDT. Emulated under "
                    "UMIP since Linux 5.10."},
    {FC_METHOD_ROW(rseq, CPU_SOURCE), .encoding = FC_ENC_CPU, .needs = FC_NEEDS(RSEQ),
     .cpu_check = rseq_cpu_check, .read_cpu = read_cpu_rseq,
     .read_failure = "cpu_id is negative on this thread: rseq is not registered for it",
     .description = "One %fs-relative load of cpu_id from the rseq area glibc registered "
                    "(__rseq_offset + 4): an inlined rseq read. read() adds node_id "
                    "(offset 20) where __rseq_size and AT_RSEQ_FEATURE_SIZE both cover it."},
    {FC_METHOD_ROW(vdso, LIBRARY_CALL), .encoding = FC_ENC_CPUNODE, .needs = FC_NEEDS(VDSO_GETCPU),
     .read_failure = "the vDSO's __vdso_getcpu", .read_errno = true,
     .description = "A call of the kernel's real __vdso_getcpu(&cpu, &node, NULL) "
                    "(RDPID or LSL inside), made as the getcpu models are called: "
                    "cpu and node are read back after the timed region."},
    {FC_METHOD_ROW(sched_getcpu, LIBRARY_CALL), .encoding = FC_ENC_CPU, SCHED_GETCPU_FAILURE,
     .reference = "library",
     .description = "A call of glibc's sched_getcpu() (rseq cpu_id since glibc "
                    "2.35, else the vDSO)."},
    {FC_CHILD_ROW(sched_getcpu_norseq, sched_getcpu, LIBRARY_CALL, "glibc.pthread.rseq=0"),
     .encoding = FC_ENC_CPU, SCHED_GETCPU_FAILURE,
     .description = "A call of glibc's sched_getcpu() with rseq registration turned off "
                    "(GLIBC_TUNABLES=glibc.pthread.rseq=0), so it calls the vDSO's getcpu as "
                    "glibc did before 2.35 (the seed's 13.7 ns row): the same sequence as "
                    "sched_getcpu, timed and read in a child interpreter started with the "
                    "tunable (it is read at process start), on the calling thread's CPUs."},
    {FC_METHOD_ROW(syscall, ENTRY_COST), .encoding = FC_ENC_CPUNODE, .reference = "kernel",
     .read_failure = "the getcpu system call", .read_errno = true,
     .description = "The getcpu system call itself (syscall instruction, no libc "
                    "wrapper), made as the getcpu models are called."},
    {FC_METHOD_ROW(null_syscall, ENTRY_COST), .encoding = FC_ENC_NONE, .cpu_check = no_cpu,
     .description = "A null system call, getppid (lmbench's \"null\"): the price "
                    "of entering the kernel at all."},
    {FC_METHOD_ROW(gs_reload, ENTRY_COST), .encoding = FC_ENC_NONE, .needs = FC_NEEDS(NO_GS_BASE),
     .probe_in_child = true, .cpu_check = no_cpu,
     .description = "mov %gs, %ax; mov %ax, %gs: the seed's user-mode %gs save/"
                    "restore (a selector load), beside Rusty Russell's 2006 null "
                    "system call with and without the kernel's %gs save/restore."},
    {FC_METHOD_ROW(pushf_popf, ENTRY_COST), .encoding = FC_ENC_NONE, .cpu_check = no_cpu,
     .description = "pushfq; popfq: the user-mode half of local_irq_save/restore "
                    "(cli itself is privileged)."},
    {FC_METHOD_ROW(pushf_pop_push_popf, ENTRY_COST), .encoding = FC_ENC_NONE, .cpu_check = no_cpu,
     .description = "pushfq; pop %rax; push %rax; popfq: the seed's user-mode half "
                    "exactly, the flags passing through a register as "
                    "local_irq_save keeps them."},
    {FC_METHOD_ROW(rdfsbase, ENTRY_COST), .encoding = FC_ENC_NONE,
     .needs = FC_NEEDS(FSGSBASE) | FC_NEEDS(FSGSBASE_ENABLED), .probe_in_child = true,
     .cpu_check = no_cpu,
     .description = "RDFSBASE: the thread pointer without a system call, where the "
                    "kernel enabled FSGSBASE (AT_HWCAP2)."},
    {FC_METHOD_ROW(rdgsbase, ENTRY_COST), .encoding = FC_ENC_NONE,
     .needs = FC_NEEDS(FSGSBASE) | FC_NEEDS(FSGSBASE_ENABLED), .probe_in_child = true,
     .cpu_check = no_cpu,
     .description = "RDGSBASE: the user GS base, where the kernel enabled FSGSBASE "
                    "(AT_HWCAP2)."},

    /* Models (models.c), called out of line as a caller calls the vDSO. */
    {FC_MODEL_ROW(vgetcpu26_tscp, model_vgetcpu26_tscp), .encoding = FC_ENC_CPUNODE,
     .needs = FC_NEEDS(RDTSCP), .probe_in_child = true,
     .description = "Model of Linux 2.6.26's vDSO vgetcpu (arch/x86/vdso/vgetcpu.c) "
                    "called with a NULL cache: the per-call check of vgetcpu_mode "
                    "(read through the vDSO's pointer), here RDTSCP, then cpu and "
                    "node decoded into the caller's pointers."},
    {FC_MODEL_ROW(vgetcpu26_lsl, model_vgetcpu26_lsl), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "Model of Linux 2.6.26's vDSO vgetcpu with a NULL cache, the mode "
                    "check finding LSL (CPUs without RDTSCP, such as Core 2): LSL on "
                    "the per-CPU GDT segment, decoded into cpu and node."},
    {FC_MODEL_ROW(vgetcpu26_hit, model_vgetcpu26_lsl), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "Model of Linux 2.6.26's vDSO vgetcpu, per-jiffy cache hit: the "
                    "cache's first word equals jiffies, the cached cpu | node << 12 "
                    "is rewritten to the cache and decoded. jiffies is no longer "
                    "mapped to user space: a process-local variable stands in."},
    {FC_MODEL_ROW(vgetcpu26_miss, model_vgetcpu26_lsl), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "Model of Linux 2.6.26's vDSO vgetcpu, per-jiffy cache miss: the "
                    "compare fails (the timer invalidates the cache with one store "
                    "first), then the mode check, LSL, the refill and the decode. "
                    "jiffies is a process-local stand-in."},
    {FC_MODEL_ROW(glibc27_sched_getcpu, model_glibc27_sched_getcpu), .encoding = FC_ENC_CPU,
     .cpu_check = lsl_cpu_check,
     .description = "Model of glibc 2.7's x86-64 sched_getcpu.S, a wrapper around "
                    "getcpu: demangle the __vdso_getcpu pointer (ror, xor with the "
                    "pointer guard at %fs:0x30), call it with a local for the cpu, "
                    "no node and the per-thread cache, check for an error, load the "
                    "local. The callee is the 2.6.26 vgetcpu model, which hits."},
    {FC_MODEL_ROW(getcpu_tscp, model_getcpu_tscp), .encoding = FC_ENC_CPUNODE,
     .needs = FC_NEEDS(RDTSCP), .probe_in_child = true,
     .description = "The seed's proposal (LKML, 2008): getcpu without the per-call "
                    "mode check, the kernel installing the RDTSCP version at boot; "
                    "decoded into cpu and node."},
    {FC_MODEL_ROW(getcpu_lsl, model_getcpu_lsl), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "The seed's proposal (LKML, 2008): getcpu without the per-call "
                    "mode check, LSL version; decoded into cpu and node."},
    {FC_MODEL_ROW(getcpu_tscp_fp, model_getcpu_tscp_fp), .encoding = FC_ENC_CPUNODE,
     .needs = FC_NEEDS(RDTSCP), .probe_in_child = true,
     .description = "The seed's getcpu_tscp (LKML, 2008) with the frame of a kernel "
                    "built with CONFIG_FRAME_POINTER: push %rbp; mov %rsp,%rbp ... "
                    "leave around the same body (written in asm: GCC 12 omits the "
                    "frame in such a leaf even under -fno-omit-frame-pointer)."},
    {FC_MODEL_ROW(getcpu_sidt, model_getcpu_sidt), .encoding = FC_ENC_CPUNODE,
     .probe_in_child = true, .cpu_check = idt_cpu_check,
     .description = "The seed's proposal (LKML, 2008) after dean gaudet's (LKML, 2007): "
                    "getcpu from SIDT, the IDT limit holding 0x1000 + node + (cpu << "
                    "NODES_SHIFT, 6 assumed); SIDT's 10 bytes stored in the red zone, "
                    "no frame pointer (compiled C). "
                    "Needs a patched kernel; under UMIP it traps."},
    {FC_MODEL_ROW(getcpu_sidt_rz_fp, model_getcpu_sidt_rz_fp), .encoding = FC_ENC_CPUNODE,
     .probe_in_child = true, .cpu_check = idt_cpu_check,
     .description = "The seed's getcpu_sidt (LKML, 2008) with a red zone and a frame "
                    "pointer: push %rbp; mov %rsp,%rbp, SIDT stored below %rbp with no "
                    "room made (asm). One of the four red zone x frame pointer corners "
                    "dean gaudet told apart."},
    {FC_MODEL_ROW(getcpu_sidt_norz_nofp, model_getcpu_sidt_norz_nofp),
     .encoding = FC_ENC_CPUNODE, .probe_in_child = true, .cpu_check = idt_cpu_check,
     .description = "The seed's getcpu_sidt (LKML, 2008) without a red zone or a frame "
                    "pointer (-mno-red-zone -fomit-frame-pointer; asm): %rsp moved by "
                    "16 to make room for SIDT's store."},
    {FC_MODEL_ROW(getcpu_sidt_norz_fp, model_getcpu_sidt_norz_fp),
     .encoding = FC_ENC_CPUNODE, .probe_in_child = true, .cpu_check = idt_cpu_check,
     .description = "The seed's getcpu_sidt (LKML, 2008) as the kernel's flags compile "
                    "it (-mno-red-zone -fno-omit-frame-pointer; asm): a frame, and %rsp "
                    "moved to make room for SIDT's store. Formerly getcpu_sidt_fp."},
    {FC_MODEL_ROW(getcpu_lsl_rz_fp, model_getcpu_lsl_fp), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "The seed's getcpu_lsl (LKML, 2008) with a frame pointer (asm): "
                    "push %rbp; mov %rsp,%rbp ... pop %rbp around the same body."},
    {FC_MODEL_ROW(getcpu_lsl_norz_nofp, model_getcpu_lsl), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "The seed's getcpu_lsl (LKML, 2008) without a red zone: the same "
                    "function as getcpu_lsl, since LSL writes a register and nothing is "
                    "kept below %rsp; timed apart as a control."},
    {FC_MODEL_ROW(getcpu_lsl_norz_fp, model_getcpu_lsl_fp), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "The seed's getcpu_lsl (LKML, 2008) as the kernel's flags compile it "
                    "(-mno-red-zone -fno-omit-frame-pointer): the same function as "
                    "getcpu_lsl_rz_fp, the red zone being unused; timed apart as a "
                    "control."},
    {FC_MODEL_ROW(getcpu_cache_hit, model_getcpu_cache), .encoding = FC_ENC_CPUNODE,
     .cpu_check = lsl_cpu_check,
     .description = "The seed's streamlined cache check (LKML, 2008), hit path: one "
                    "compare of the cache with jiffies and no stores back, where "
                    "2.6.26 rewrote both words. jiffies is a process-local stand-in."},
    {FC_MODEL_ROW(sched_getcpu_tscp, model_sched_getcpu_tscp), .encoding = FC_ENC_CPU,
     .needs = FC_NEEDS(RDTSCP), .probe_in_child = true,
     .description = "The seed's specialized sched_getcpu (LKML, 2008): RDTSCP and the "
                    "CPU returned in %eax; no pointers, no cache, no error check. "
                    "Compare glibc27_sched_getcpu."},
    {FC_MODEL_ROW(sched_getcpu_lsl, model_sched_getcpu_lsl), .encoding = FC_ENC_CPU,
     .cpu_check = lsl_cpu_check,
     .description = "The seed's specialized sched_getcpu (LKML, 2008), LSL version: "
                    "the CPU returned in %eax."},
    {FC_MODEL_ROW(sched_getcpu_sidt, model_sched_getcpu_sidt), .encoding = FC_ENC_CPU,
     .probe_in_child = true, .cpu_check = idt_cpu_check,
     .description = "The specialized sched_getcpu on SIDT (dean gaudet, LKML, 2007): the "
                    "CPU in %eax, no pointers; the IDT limit holds 0x1000 + node + (cpu "
                    "<< NODES_SHIFT, 6 assumed), stored into his padded stack struct "
                    "(6 bytes before the limit, so the base is aligned) in the red "
                    "zone. Needs a patched kernel; under UMIP it traps."},
    {FC_MODEL_ROW(sched_getcpu_rseq_inline, NULL), .encoding = FC_ENC_CPU,
     .needs = FC_NEEDS(RSEQ_AREA),
     .description = "glibc 2.35's rseq sched_getcpu, inlined into the caller: one "
                    "volatile load of cpu_id, and when it is negative (rseq not "
                    "registered) an out-of-line fall back to the vDSO's getcpu."},

    /* Known-cost chains (chains.c): sequences of known cost. */
    FC_CHAINS(FC_CHAIN_ROW)
};

const size_t fc_catalog_count = sizeof fc_catalog / sizeof fc_catalog[0];
_Static_assert(sizeof fc_catalog / sizeof fc_catalog[0] <= FC_METHODS_MAX,
               "raise FC_METHODS_MAX in catalog.h");

uint32_t fc_method_read_cpu(const struct fc_method *m, bool *valid, unsigned *cpu, int *node)
{
    if (m->read_cpu)
        return m->read_cpu(valid, cpu, node);
    uint32_t raw = m->read(valid);
    switch (m->encoding) {
    case FC_ENC_CPUNODE:
        *cpu = raw & 0xfffu;
        *node = (int)(raw >> 12);
        break;
    case FC_ENC_SIDT: {
        uint32_t v = raw - 0x1000u;
        *cpu = v >> FC_SIDT_NODES_SHIFT;
        *node = (int)(v & ((1u << FC_SIDT_NODES_SHIFT) - 1));
        break;
    }
    default: /* the CPU itself; NONE and LIMIT never get here */
        *cpu = raw;
        *node = -1;
        break;
    }
    return raw;
}

const struct fc_method *fc_method_find(const char *name)
{
    for (size_t i = 0; i < fc_catalog_count; i++)
        if (strcmp(fc_catalog[i].name, name) == 0)
            return &fc_catalog[i];
    return NULL;
}

const char *fc_kind_name(enum fc_kind kind)
{
    switch (kind) {
    case FC_KIND_METHOD:
        return "method";
    case FC_KIND_MODEL:
        return "model";
    case FC_KIND_CHAIN:
        return "chain";
    default:
        return "unset";
    }
}

const char *fc_role_name(enum fc_role role)
{
    switch (role) {
    case FC_ROLE_CPU_SOURCE:
        return "cpu_source";
    case FC_ROLE_LIBRARY_CALL:
        return "library_call";
    case FC_ROLE_ENTRY_COST:
        return "entry_cost";
    case FC_ROLE_MODEL:
        return "model";
    case FC_ROLE_CHAIN:
        return "chain";
    default:
        return "unset";
    }
}

const char *fc_row_problem(const struct fc_method *m)
{
    if (!m->name || !*m->name || !m->description || !*m->description)
        return "no name or no description";
    if (m->kind < FC_KIND_METHOD || m->kind >= FC_KIND_END)
        return "no kind";
    if (m->role < FC_ROLE_CPU_SOURCE || m->role >= FC_ROLE_END)
        return "no role";
    if ((m->kind == FC_KIND_MODEL) != (m->role == FC_ROLE_MODEL) ||
        (m->kind == FC_KIND_CHAIN) != (m->role == FC_ROLE_CHAIN))
        return "a role its kind contradicts (a model's is model, a chain's chain)";
    for (int i = 0; i < FC_SER_COUNT; i++)
        if (!m->timers[i])
            return "a serialization mode without a timer";
    for (int i = 0; i < FC_PMU_SER_COUNT; i++)
        if (!m->pmu_timers[i])
            return "a PMU mode without a timer";
    if (!m->read)
        return "no reader (read() and the fault probe run it)";
    if (m->needs >> FC_REQ_COUNT)
        return "a need outside FC_REQUIREMENTS";
    for (int r = 0; r < FC_REQ_COUNT; r++)
        if ((m->needs >> r & 1) && (!fc_requirements[r].reason || !*fc_requirements[r].reason))
            return "a need without a reason";
    bool reports = m->encoding == FC_ENC_CPUNODE || m->encoding == FC_ENC_CPU ||
                   m->encoding == FC_ENC_SIDT;
    if (!reports && !m->cpu_check)
        return "an encoding that reports no CPU, and no cpu_check to say why";
    if ((m->kind == FC_KIND_CHAIN) != (m->chain.op != NULL))
        return "a chain on a row that is no chain, or the reverse";
    if (m->chain.op && (!m->chain.length || !m->chain.latency_cycles))
        return "a chain without a length or a latency";
    if (m->in_child && (!*m->in_child || !m->code_of || !fc_method_find(m->code_of) ||
                        fc_method_find(m->code_of)->in_child))
        return "a child's row without a tunable or an in-process row whose code it times";
    if (!m->in_child != !m->elsewhere || (m->elsewhere && !*m->elsewhere))
        return "a child's row without the reason this process does not time it, or the reverse";
    if (m->reference && strcmp(m->reference, "library") != 0 && strcmp(m->reference, "kernel") != 0)
        return "a reference that is neither \"library\" nor \"kernel\"";
    if (m->read_errno && (!m->read_failure || !*m->read_failure))
        return "read_errno without the call read_failure names";
    const struct fc_method *code = m->code_of ? fc_method_find(m->code_of) : NULL;
    if (code && code->read == m->read &&
        (code->read_errno != m->read_errno || !code->read_failure != !m->read_failure ||
         (m->read_failure && strcmp(code->read_failure, m->read_failure) != 0)))
        return "a failed reading told otherwise than by the row whose reader it shares";
    for (const struct fc_method *o = fc_catalog; o < m; o++)
        if (strcmp(o->name, m->name) == 0)
            return "a name an earlier row has";
    return NULL;
}
