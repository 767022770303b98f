/*
 * fastcpu_getcpu.h: the current CPU, the fastest way Linux x86-64 offers,
 * as a small header to copy into your own code (C11 or C++, GCC or clang;
 * no library but the C library, nothing to call first). fastcpu's own
 * getcpu() runs these very functions (csrc/getcpu.c), after checking on
 * every CPU of its affinity mask which of them reads right.
 *
 *   int fastcpu_getcpu(void);               the best of the ways below
 *   int fastcpu_rseq_getcpu(void);          rseq cpu_id, -1 when none
 *   int fastcpu_rdpid_getcpu(unsigned *node);   RDPID, -1 when no RDPID
 *   int fastcpu_vdso_getcpu(unsigned *node);    the vDSO's getcpu
 *   int fastcpu_syscall_getcpu(unsigned *node); the getcpu system call
 *
 * Each returns the CPU (>= 0), or a negative value when it cannot read it
 * here; *node (may be NULL) gets the NUMA node. Thread-safe; async-signal-
 * safe once each way has been used once in the process (the vDSO's lookup
 * and CPUID are cached on first use).
 *
 * What glibc gives for free: glibc >= 2.35 registers an rseq area for every
 * thread (unless GLIBC_TUNABLES=glibc.pthread.rseq=0) and the kernel
 * (>= 4.18) keeps its cpu_id current; from 2.35, sched_getcpu() itself reads
 * that cpu_id, without a call into the vDSO. fastcpu_rseq_getcpu() is the
 * same load, inline: one mov from %fs. Before 2.35, sched_getcpu() calls the
 * vDSO's getcpu (RDPID or LSL inside, behind an indirect call).
 *
 * RDPID reads IA32_TSC_AUX, which Linux sets to cpu | node << 12; it is
 * checked in CPUID (7.0:ECX bit 22) first, so that it never raises SIGILL.
 * UMIP does not trap it (UMIP covers SGDT, SIDT, SLDT, SMSW, STR).
 */
#ifndef FASTCPU_GETCPU_PUBLIC_H
#define FASTCPU_GETCPU_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* glibc >= 2.35 (<sys/rseq.h>): where its rseq area lies from the thread
 * pointer, and its size, 0 when glibc registered none. Weak: with an older
 * glibc they are absent and their addresses NULL. Default visibility, so
 * that a build with -fvisibility=hidden still binds them to glibc's. */
extern const ptrdiff_t __rseq_offset __attribute__((weak, visibility("default")));
extern const unsigned int __rseq_size __attribute__((weak, visibility("default")));

#ifdef __cplusplus
}
#endif

/* The rseq area's cpu_id (offset 4 in struct rseq), or -1 when this thread
 * has none: glibc < 2.35, rseq turned off (GLIBC_TUNABLES=
 * glibc.pthread.rseq=0), or a kernel < 4.18 or a registration that failed
 * (cpu_id is then -1 or -2). Volatile: the kernel rewrites it whenever the
 * thread migrates. */
static inline int fastcpu_rseq_getcpu(void)
{
    if (&__rseq_offset == NULL || &__rseq_size == NULL || __rseq_size < 8)
        return -1;
    int32_t cpu;
    __asm__ volatile("movl %%fs:4(%1), %0" : "=r"(cpu) : "r"(__rseq_offset));
    return cpu >= 0 ? cpu : -1;
}

/* Whether the CPU has RDPID (CPUID.(EAX=7,ECX=0):ECX bit 22), asked once:
 * 0 unknown, 1 yes, 2 no. */
static inline int fastcpu_has_rdpid(void)
{
    static int known;
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (k == 0) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (__get_cpuid_max(0, NULL) >= 7)
            __cpuid_count(7, 0, a, b, c, d);
        k = (c >> 22) & 1 ? 1 : 2;
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k == 1;
}

/* The raw TSC_AUX value: call only where fastcpu_has_rdpid() said yes. */
static inline uint64_t fastcpu_rdpid_raw(void)
{
    uint64_t aux;
    __asm__ volatile("rdpid %0" : "=r"(aux));
    return aux;
}

/* RDPID: cpu | node << 12 in TSC_AUX, or -1 without RDPID. */
static inline int fastcpu_rdpid_getcpu(unsigned *node)
{
    if (!fastcpu_has_rdpid())
        return -1;
    uint64_t aux = fastcpu_rdpid_raw();
    if (node)
        *node = (unsigned)aux >> 12;
    return (int)(aux & 0xfffu);
}

typedef long (*fastcpu_vdso_getcpu_fn)(unsigned *cpu, unsigned *node, void *cache);

/* __vdso_getcpu, found in the vDSO's ELF image (getauxval(AT_SYSINFO_EHDR))
 * through its dynamic section, as the kernel's own parse_vdso.c does; the
 * symbol count from DT_HASH (the x86-64 vDSO is linked with both hash
 * styles). NULL when there is none. */
static inline fastcpu_vdso_getcpu_fn fastcpu_vdso_lookup(void)
{
    const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    if (!base)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        return NULL;
    /* the load bias (where vaddr 0 lies), from the first PT_LOAD */
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
    const Elf64_Dyn *dyn = NULL;
    uintptr_t bias = 0;
    int loaded = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !loaded) {
            bias = (uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr;
            loaded = 1;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn = (const Elf64_Dyn *)(base + ph[i].p_offset);
        }
    }
    if (!loaded || !dyn)
        return NULL;
    const Elf64_Sym *sym = NULL;
    const char *names = NULL;
    const Elf64_Word *hash = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            sym = (const Elf64_Sym *)(bias + dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            names = (const char *)(bias + dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            hash = (const Elf64_Word *)(bias + dyn->d_un.d_ptr);
    }
    if (!sym || !names || !hash)
        return NULL;
    for (Elf64_Word j = 0; j < hash[1]; j++) /* hash[1]: nchain, the symbol count */
        if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && sym[j].st_shndx != SHN_UNDEF &&
            strcmp(names + sym[j].st_name, "__vdso_getcpu") == 0)
            return (fastcpu_vdso_getcpu_fn)(bias + sym[j].st_value);
    return NULL;
}

/* The vDSO's getcpu, looked up once (a lookup that races another is the
 * same lookup): the CPU, -ENOSYS without one, or what it returned. */
/* What a getcpu-style call answered: the CPU, its node in *node (may be
 * NULL), or -errno (-EIO for an answer that is no CPU number). */
static inline int fastcpu_answer_(long rc, unsigned cpu, unsigned n, unsigned *node)
{
    if (rc != 0)
        return rc < 0 && rc > -4096 ? (int)rc : -EIO;
    if (cpu > INT32_MAX)
        return -EIO;
    if (node)
        *node = n;
    return (int)cpu;
}

static inline int fastcpu_vdso_getcpu(unsigned *node)
{
    static fastcpu_vdso_getcpu_fn fn;
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&fn, fastcpu_vdso_lookup(), __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    fastcpu_vdso_getcpu_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (!f)
        return -ENOSYS;
    unsigned cpu = 0, n = 0;
    long rc = f(&cpu, &n, NULL);
    return fastcpu_answer_(rc, cpu, n, node);
}

/* The getcpu system call (309 on x86-64), raw: no feature macro needed, and
 * a seccomp filter's refusal comes back as -errno. */
static inline int fastcpu_syscall_getcpu(unsigned *node)
{
    unsigned cpu = 0, n = 0;
    long rc;
    __asm__ volatile("syscall"
                     : "=a"(rc)
                     : "a"(309L), "D"(&cpu), "S"(&n), "d"(0L)
                     : "rcx", "r11", "memory");
    return fastcpu_answer_(rc, cpu, n, node);
}

/* The best way there is: the rseq load, else RDPID, else the vDSO, else the
 * system call. */
static inline int fastcpu_getcpu(void)
{
    int cpu = fastcpu_rseq_getcpu();
    if (__builtin_expect(cpu >= 0, 1))
        return cpu;
    if (fastcpu_has_rdpid())
        return (int)(fastcpu_rdpid_raw() & 0xfffu);
    cpu = fastcpu_vdso_getcpu(NULL);
    return cpu >= 0 ? cpu : fastcpu_syscall_getcpu(NULL);
}

#else /* not Linux x86-64: only the C library's answer, where it has one */

#include <errno.h>

static inline int fastcpu_rseq_getcpu(void) { return -1; }
static inline int fastcpu_has_rdpid(void) { return 0; }
static inline int fastcpu_rdpid_getcpu(unsigned *node) { (void)node; return -1; }
static inline int fastcpu_vdso_getcpu(unsigned *node) { (void)node; return -ENOSYS; }
static inline int fastcpu_syscall_getcpu(unsigned *node) { (void)node; return -ENOSYS; }
static inline int fastcpu_getcpu(void) { return -ENOSYS; }

#endif

#endif
