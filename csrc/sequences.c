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

#include "fastcpu.h"
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

long fc_rseq_offset;

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

fc_vdso_getcpu_fn fc_vdso_getcpu;

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
    return rc == 0 ? cpu | node << 12 : (uint32_t)(rc < 0 && rc > -4096 ? -rc : EIO);
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
    FC_DEFINE_TIMERS(name, fc_sink(seq_##name()))                            \
    static uint32_t read_##name(bool *valid)                                 \
    {                                                                        \
        *valid = true;                                                       \
        return seq_##name();                                                 \
    }

FC_METHOD_CODE(empty)
FC_METHOD_CODE(tscp)
FC_METHOD_CODE(rdpid)
FC_METHOD_CODE(sgdt)
FC_DEFINE_TIMERS(sched_getcpu, fc_sink(seq_sched_getcpu()))
static uint32_t read_sched_getcpu(bool *valid)
{
    int cpu = sched_getcpu(); /* -1 with errno set on failure: return errno */
    *valid = cpu >= 0;
    return cpu >= 0 ? (uint32_t)cpu : (uint32_t)errno;
}
FC_METHOD_CODE(null_syscall)
FC_METHOD_CODE(pushf_popf)
FC_METHOD_CODE(pushf_pop_push_popf)
FC_METHOD_CODE(gs_reload)
FC_METHOD_CODE(sldt)
FC_METHOD_CODE(rdfsbase)
FC_METHOD_CODE(rdgsbase)

FC_DEFINE_TIMERS_SETUP(rseq, const long offset_ = fc_rseq_offset, fc_sink(seq_rseq(offset_)))
static uint32_t read_rseq(bool *valid)
{
    *valid = true;
    return seq_rseq(fc_rseq_offset);
}

FC_DEFINE_TIMERS_SETUP(vdso, const fc_vdso_getcpu_fn fn_ = fc_vdso_getcpu, call_vdso(fn_))
FC_DEFINE_TIMERS(syscall, call_syscall())

FC_DEFINE_TIMERS(gdt, fc_sink(seq_gdt()))
/* LSL clears ZF and leaves the destination alone when the selector is not
 * usable; report that instead of a stale register. */
static uint32_t read_gdt(bool *valid)
{
    uint32_t limit = 0;
    __asm__ volatile("lsl %2, %0" : "+r"(limit), "=@ccz"(*valid) : "r"(FC_CPUNODE_SELECTOR));
    return limit;
}

FC_DEFINE_TIMERS(sidt, fc_sink(seq_sidt()))
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

/* ---- the catalog --------------------------------------------------------- */

#define FC_METHOD(n, need, enc, probe, desc)                                 \
    {#n, desc, need, enc, probe, read_##n, FC_TIMERS(n), NULL, NULL}

/* A model of models.c: its timers call `fn` out of line. */
#define FC_MODEL_METHOD(n, fn, need, enc, probe, desc)                       \
    {#n, desc, need, enc, probe, read_##n, FC_TIMERS(n), (const void *)fn, NULL}

const struct fc_method fc_methods[] = {
    FC_METHOD(empty, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "The empty sequence: the harness alone, subtracted from every "
              "method."),
    FC_METHOD(gdt, FC_NEED_LSL, FC_ENC_CPUNODE, false,
              "LSL on the per-CPU GDT segment (selector 0x7b), whose limit "
              "the kernel sets to cpu | node << 12; the vDSO's fallback when "
              "the CPU lacks RDPID."),
    FC_METHOD(tscp, FC_NEED_RDTSCP, FC_ENC_CPUNODE, true,
              "RDTSCP, keeping only ECX = TSC_AUX (cpu | node << 12); the "
              "2.6.2x vgetcpu's fast mode."),
    FC_METHOD(rdpid, FC_NEED_RDPID, FC_ENC_CPUNODE, true,
              "RDPID: TSC_AUX (cpu | node << 12) without reading the TSC; "
              "what today's vDSO getcpu uses when the CPU has it."),
    FC_METHOD(sidt, FC_NEED_SIDT, FC_ENC_SIDT, true,
              "SIDT, load the IDT limit, subtract 0x1000: dean gaudet's 2007 "
              "proposal as the seed timed it. Only a patched kernel puts the "
              "CPU there; under UMIP the kernel traps and emulates it."),
    FC_METHOD(sgdt, FC_NEED_DESCRIPTOR_TABLE, FC_ENC_LIMIT, true,
              "SGDT, load the GDT limit: the same store as SIDT on the other "
              "table. Reports no CPU on any released kernel."),
    FC_METHOD(sldt, FC_NEED_DESCRIPTOR_TABLE, FC_ENC_SELECTOR, true,
              "SLDT: the LDT selector, a 2-byte store; the cheapest of the "
              "three stores by dean gaudet's account (LKML, 2007), and unusable "
              "for the CPU since a process may change its LDT. Emulated under "
              "UMIP since Linux 5.10."),
    {"rseq",
     "One %fs-relative load of cpu_id from the rseq area glibc registered "
     "(__rseq_offset + 4): an inlined rseq read. read() adds node_id "
     "(offset 20) where __rseq_size and AT_RSEQ_FEATURE_SIZE both cover it.",
     FC_NEED_RSEQ, FC_ENC_CPU, false, read_rseq, FC_TIMERS(rseq), NULL, read_cpu_rseq},
    FC_METHOD(vdso, FC_NEED_VDSO_GETCPU, FC_ENC_CPUNODE, false,
              "A call of the kernel's real __vdso_getcpu(&cpu, &node, NULL) "
              "(RDPID or LSL inside), made as the getcpu models are called: "
              "cpu and node are read back after the timed region."),
    FC_METHOD(sched_getcpu, FC_NEED_NOTHING, FC_ENC_CPU, false,
              "A call of glibc's sched_getcpu() (rseq cpu_id since glibc "
              "2.35, else the vDSO)."),
    FC_METHOD(syscall, FC_NEED_NOTHING, FC_ENC_CPUNODE, false,
              "The getcpu system call itself (syscall instruction, no libc "
              "wrapper), made as the getcpu models are called."),
    FC_METHOD(null_syscall, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "A null system call, getppid (lmbench's \"null\"): the price "
              "of entering the kernel at all."),
    FC_METHOD(gs_reload, FC_NEED_GS_RELOAD, FC_ENC_NONE, true,
              "mov %gs, %ax; mov %ax, %gs: the seed's user-mode %gs save/"
              "restore (a selector load), beside Rusty Russell's 2006 null "
              "system call with and without the kernel's %gs save/restore."),
    FC_METHOD(pushf_popf, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "pushfq; popfq: the user-mode half of local_irq_save/restore "
              "(cli itself is privileged)."),
    FC_METHOD(pushf_pop_push_popf, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "pushfq; pop %rax; push %rax; popfq: the seed's user-mode half "
              "exactly, the flags passing through a register as "
              "local_irq_save keeps them."),
    FC_METHOD(rdfsbase, FC_NEED_FSGSBASE, FC_ENC_NONE, true,
              "RDFSBASE: the thread pointer without a system call, where the "
              "kernel enabled FSGSBASE (AT_HWCAP2)."),
    FC_METHOD(rdgsbase, FC_NEED_FSGSBASE, FC_ENC_NONE, true,
              "RDGSBASE: the user GS base, where the kernel enabled FSGSBASE "
              "(AT_HWCAP2)."),

    /* Models (models.c), called out of line as a caller calls the vDSO. */
    FC_MODEL_METHOD(vgetcpu26_tscp, model_vgetcpu26_tscp, FC_NEED_RDTSCP, FC_ENC_CPUNODE, true,
                    "Model of Linux 2.6.26's vDSO vgetcpu (arch/x86/vdso/vgetcpu.c) "
                    "called with a NULL cache: the per-call check of vgetcpu_mode "
                    "(read through the vDSO's pointer), here RDTSCP, then cpu and "
                    "node decoded into the caller's pointers."),
    FC_MODEL_METHOD(vgetcpu26_lsl, model_vgetcpu26_lsl, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "Model of Linux 2.6.26's vDSO vgetcpu with a NULL cache, the mode "
                    "check finding LSL (CPUs without RDTSCP, such as Core 2): LSL on "
                    "the per-CPU GDT segment, decoded into cpu and node."),
    FC_MODEL_METHOD(vgetcpu26_hit, model_vgetcpu26_lsl, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "Model of Linux 2.6.26's vDSO vgetcpu, per-jiffy cache hit: the "
                    "cache's first word equals jiffies, the cached cpu | node << 12 "
                    "is rewritten to the cache and decoded. jiffies is no longer "
                    "mapped to user space: a process-local variable stands in."),
    FC_MODEL_METHOD(vgetcpu26_miss, model_vgetcpu26_lsl, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "Model of Linux 2.6.26's vDSO vgetcpu, per-jiffy cache miss: the "
                    "compare fails (the timer invalidates the cache with one store "
                    "first), then the mode check, LSL, the refill and the decode. "
                    "jiffies is a process-local stand-in."),
    FC_MODEL_METHOD(glibc27_sched_getcpu, model_glibc27_sched_getcpu, FC_NEED_LSL, FC_ENC_CPU,
                    false,
                    "Model of glibc 2.7's x86-64 sched_getcpu.S, a wrapper around "
                    "getcpu: demangle the __vdso_getcpu pointer (ror, xor with the "
                    "pointer guard at %fs:0x30), call it with a local for the cpu, "
                    "no node and the per-thread cache, check for an error, load the "
                    "local. The callee is the 2.6.26 vgetcpu model, which hits."),
    FC_MODEL_METHOD(getcpu_tscp, model_getcpu_tscp, FC_NEED_RDTSCP, FC_ENC_CPUNODE, true,
                    "The seed's proposal (LKML, 2008): getcpu without the per-call "
                    "mode check, the kernel installing the RDTSCP version at boot; "
                    "decoded into cpu and node."),
    FC_MODEL_METHOD(getcpu_lsl, model_getcpu_lsl, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "The seed's proposal (LKML, 2008): getcpu without the per-call "
                    "mode check, LSL version; decoded into cpu and node."),
    FC_MODEL_METHOD(getcpu_tscp_fp, model_getcpu_tscp_fp, FC_NEED_RDTSCP, FC_ENC_CPUNODE, true,
                    "The seed's getcpu_tscp (LKML, 2008) with the frame of a kernel "
                    "built with CONFIG_FRAME_POINTER: push %rbp; mov %rsp,%rbp ... "
                    "leave around the same body (written in asm: GCC 12 omits the "
                    "frame in such a leaf even under -fno-omit-frame-pointer)."),
    FC_MODEL_METHOD(getcpu_sidt, model_getcpu_sidt, FC_NEED_SIDT, FC_ENC_CPUNODE, true,
                    "The seed's proposal (LKML, 2008) after dean gaudet's (LKML, 2007): "
                    "getcpu from SIDT, the IDT limit holding 0x1000 + node + (cpu << "
                    "NODES_SHIFT, 6 assumed); SIDT's 10 bytes stored in the red zone, "
                    "no frame pointer (compiled C). "
                    "Needs a patched kernel; under UMIP it traps."),
    FC_MODEL_METHOD(getcpu_sidt_rz_fp, model_getcpu_sidt_rz_fp, FC_NEED_SIDT, FC_ENC_CPUNODE,
                    true,
                    "The seed's getcpu_sidt (LKML, 2008) with a red zone and a frame "
                    "pointer: push %rbp; mov %rsp,%rbp, SIDT stored below %rbp with no "
                    "room made (asm). One of the four red zone x frame pointer corners "
                    "dean gaudet told apart."),
    FC_MODEL_METHOD(getcpu_sidt_norz_nofp, model_getcpu_sidt_norz_nofp, FC_NEED_SIDT,
                    FC_ENC_CPUNODE, true,
                    "The seed's getcpu_sidt (LKML, 2008) without a red zone or a frame "
                    "pointer (-mno-red-zone -fomit-frame-pointer; asm): %rsp moved by "
                    "16 to make room for SIDT's store."),
    FC_MODEL_METHOD(getcpu_sidt_norz_fp, model_getcpu_sidt_norz_fp, FC_NEED_SIDT,
                    FC_ENC_CPUNODE, true,
                    "The seed's getcpu_sidt (LKML, 2008) as the kernel's flags compile "
                    "it (-mno-red-zone -fno-omit-frame-pointer; asm): a frame, and %rsp "
                    "moved to make room for SIDT's store. Formerly getcpu_sidt_fp."),
    FC_MODEL_METHOD(getcpu_lsl_rz_fp, model_getcpu_lsl_fp, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "The seed's getcpu_lsl (LKML, 2008) with a frame pointer (asm): "
                    "push %rbp; mov %rsp,%rbp ... pop %rbp around the same body."),
    FC_MODEL_METHOD(getcpu_lsl_norz_nofp, model_getcpu_lsl, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "The seed's getcpu_lsl (LKML, 2008) without a red zone: the same "
                    "function as getcpu_lsl, since LSL writes a register and nothing is "
                    "kept below %rsp; timed apart as a control."),
    FC_MODEL_METHOD(getcpu_lsl_norz_fp, model_getcpu_lsl_fp, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "The seed's getcpu_lsl (LKML, 2008) as the kernel's flags compile it "
                    "(-mno-red-zone -fno-omit-frame-pointer): the same function as "
                    "getcpu_lsl_rz_fp, the red zone being unused; timed apart as a "
                    "control."),
    FC_MODEL_METHOD(getcpu_cache_hit, model_getcpu_cache, FC_NEED_LSL, FC_ENC_CPUNODE, false,
                    "The seed's streamlined cache check (LKML, 2008), hit path: one "
                    "compare of the cache with jiffies and no stores back, where "
                    "2.6.26 rewrote both words. jiffies is a process-local stand-in."),
    FC_MODEL_METHOD(sched_getcpu_tscp, model_sched_getcpu_tscp, FC_NEED_RDTSCP, FC_ENC_CPU,
                    true,
                    "The seed's specialized sched_getcpu (LKML, 2008): RDTSCP and the "
                    "CPU returned in %eax; no pointers, no cache, no error check. "
                    "Compare glibc27_sched_getcpu."),
    FC_MODEL_METHOD(sched_getcpu_lsl, model_sched_getcpu_lsl, FC_NEED_LSL, FC_ENC_CPU, false,
                    "The seed's specialized sched_getcpu (LKML, 2008), LSL version: "
                    "the CPU returned in %eax."),
    FC_MODEL_METHOD(sched_getcpu_sidt, model_sched_getcpu_sidt, FC_NEED_SIDT, FC_ENC_CPU, true,
                    "The specialized sched_getcpu on SIDT (dean gaudet, LKML, 2007): the "
                    "CPU in %eax, no pointers; the IDT limit holds 0x1000 + node + (cpu "
                    "<< NODES_SHIFT, 6 assumed), stored into his padded stack struct "
                    "(6 bytes before the limit, so the base is aligned) in the red "
                    "zone. Needs a patched kernel; under UMIP it traps."),
    FC_MODEL_METHOD(sched_getcpu_rseq_inline, NULL, FC_NEED_RSEQ_AREA, FC_ENC_CPU, false,
                    "glibc 2.35's rseq sched_getcpu, inlined into the caller: one "
                    "volatile load of cpu_id, and when it is negative (rseq not "
                    "registered) an out-of-line fall back to the vDSO's getcpu."),
};

const size_t fc_method_count = sizeof fc_methods / sizeof fc_methods[0];
_Static_assert(sizeof fc_methods / sizeof fc_methods[0] <= FC_METHODS_MAX,
               "raise FC_METHODS_MAX in fastcpu.h");

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
    for (size_t i = 0; i < fc_method_count; i++)
        if (strcmp(fc_methods[i].name, name) == 0)
            return &fc_methods[i];
    return NULL;
}
