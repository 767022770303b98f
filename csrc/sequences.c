/*
 * sequences.c: what fastcpu times. Each method is one small always-inline
 * sequence; FC_DEFINE_TIMERS wraps it, unchanged, in the harness of timing.h
 * for each serialization mode, and a `read_` function runs it once so that
 * `fastcpu.read()` returns the value of exactly the code that was timed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>

#include "fastcpu.h"
#include "timing.h"

/* The per-CPU GDT entry: GDT_ENTRY_CPUNODE (15) << 3 | RPL 3. Its limit is
 * cpu | node << 12 (Linux arch/x86/include/asm/segment.h). */
#define FC_CPUNODE_SELECTOR 0x7bu

#define FC_INLINE static inline __attribute__((always_inline))

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

long fc_rseq_offset;

/* glibc's registered rseq area: cpu_id is the 32-bit field at offset 4. One
 * %fs-relative load, what an inlined rseq read compiles to. */
FC_INLINE uint32_t seq_rseq(void)
{
    uint32_t cpu;
    __asm__ volatile("movl %%fs:4(%1), %0" : "=r"(cpu) : "r"(fc_rseq_offset));
    return cpu;
}

int (*fc_vdso_getcpu)(unsigned *cpu, unsigned *node, void *cache);

FC_INLINE uint32_t seq_vdso(void)
{
    unsigned cpu = 0, node = 0;
    fc_vdso_getcpu(&cpu, &node, NULL);
    return cpu | node << 12;
}

FC_INLINE uint32_t seq_sched_getcpu(void) { return (uint32_t)sched_getcpu(); }

FC_INLINE uint32_t seq_syscall(void)
{
    unsigned cpu = 0, node = 0;
    fc_syscall3(SYS_getcpu, (long)&cpu, (long)&node, 0);
    return cpu | node << 12;
}

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
FC_METHOD_CODE(rseq)
FC_METHOD_CODE(vdso)
FC_METHOD_CODE(sched_getcpu)
FC_METHOD_CODE(syscall)
FC_METHOD_CODE(null_syscall)
FC_METHOD_CODE(pushf_popf)
FC_METHOD_CODE(rdfsbase)
FC_METHOD_CODE(rdgsbase)

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

/* ---- the catalog --------------------------------------------------------- */

#define FC_METHOD(n, need, enc, probe, desc)                                 \
    {#n, desc, need, enc, probe, read_##n, FC_TIMERS(n)}

const struct fc_method fc_methods[] = {
    FC_METHOD(empty, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "The empty sequence: the harness alone, subtracted from every "
              "method."),
    FC_METHOD(gdt, FC_NEED_NOTHING, FC_ENC_CPUNODE, false,
              "LSL on the per-CPU GDT segment (selector 0x7b), whose limit "
              "the kernel sets to cpu | node << 12; the vDSO's fallback when "
              "the CPU lacks RDPID."),
    FC_METHOD(tscp, FC_NEED_RDTSCP, FC_ENC_CPUNODE, true,
              "RDTSCP, keeping only ECX = TSC_AUX (cpu | node << 12); the "
              "2.6.2x vgetcpu's fast mode."),
    FC_METHOD(rdpid, FC_NEED_RDPID, FC_ENC_CPUNODE, true,
              "RDPID: TSC_AUX (cpu | node << 12) without reading the TSC; "
              "what today's vDSO getcpu uses when the CPU has it."),
    FC_METHOD(sidt, FC_NEED_DESCRIPTOR_TABLE, FC_ENC_SIDT, true,
              "SIDT, load the IDT limit, subtract 0x1000: dean gaudet's 2007 "
              "proposal as the seed timed it. Only a patched kernel puts the "
              "CPU there; under UMIP the kernel traps and emulates it."),
    FC_METHOD(sgdt, FC_NEED_DESCRIPTOR_TABLE, FC_ENC_LIMIT, true,
              "SGDT, load the GDT limit: the same store as SIDT on the other "
              "table. Reports no CPU on any released kernel."),
    FC_METHOD(rseq, FC_NEED_RSEQ, FC_ENC_CPU, false,
              "One %fs-relative load of cpu_id from the rseq area glibc "
              "registered (__rseq_offset + 4): an inlined rseq read."),
    FC_METHOD(vdso, FC_NEED_VDSO_GETCPU, FC_ENC_CPUNODE, false,
              "A call of the kernel's real __vdso_getcpu(&cpu, &node, NULL) "
              "(RDPID or LSL inside)."),
    FC_METHOD(sched_getcpu, FC_NEED_NOTHING, FC_ENC_CPU, false,
              "A call of glibc's sched_getcpu() (rseq cpu_id since glibc "
              "2.35, else the vDSO)."),
    FC_METHOD(syscall, FC_NEED_NOTHING, FC_ENC_CPUNODE, false,
              "The getcpu system call itself (syscall instruction, no libc "
              "wrapper)."),
    FC_METHOD(null_syscall, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "A null system call, getppid (lmbench's \"null\"): the price "
              "of entering the kernel at all."),
    FC_METHOD(pushf_popf, FC_NEED_NOTHING, FC_ENC_NONE, false,
              "pushfq; popfq: the user-mode half of local_irq_save/restore "
              "(cli itself is privileged)."),
    FC_METHOD(rdfsbase, FC_NEED_FSGSBASE, FC_ENC_NONE, true,
              "RDFSBASE: the thread pointer without a system call, where the "
              "kernel enabled FSGSBASE (AT_HWCAP2)."),
    FC_METHOD(rdgsbase, FC_NEED_FSGSBASE, FC_ENC_NONE, true,
              "RDGSBASE: the user GS base, where the kernel enabled FSGSBASE "
              "(AT_HWCAP2)."),
};

const size_t fc_method_count = sizeof fc_methods / sizeof fc_methods[0];

const struct fc_method *fc_method_find(const char *name)
{
    for (size_t i = 0; i < fc_method_count; i++)
        if (strcmp(fc_methods[i].name, name) == 0)
            return &fc_methods[i];
    return NULL;
}
