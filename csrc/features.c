/*
 * features.c: what this machine offers, decided without ever running a
 * faulting instruction in the interpreter. CPUID bits and the kernel's
 * AT_HWCAP2 come first; an instruction that could still fault (a hypervisor
 * whose CPUID lies, a kernel that does not emulate SIDT under UMIP) is run
 * once in a forked child, and only a clean exit lets it run in-process.
 * Nothing here knows the catalog: it detects the machine's facts (and owns
 * the ones every timed run reads: the rseq offset, the vDSO's getcpu) and
 * answers which requirement is missing; verdicts.c applies that, and the
 * probes, to each catalog row.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "machine.h"
#include "pmu.h"
#include "x86.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif
#ifndef ARCH_GET_GS
#define ARCH_GET_GS 0x1004 /* asm/prctl.h */
#endif
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27 /* Linux >= 6.3 */
#endif

/* Private test hooks, so the tests can walk the paths this machine never
 * takes. FASTCPU_TEST_HIDE_CPUID: comma-separated CPUID features to pretend
 * absent (umip, and the name of any CPUID line of FC_REQUIREMENTS: rdtscp,
 * rdpid, fsgsbase...). FASTCPU_TEST_FAULT_IN_PROBE:
 * comma-separated method names whose probe child executes ud2 first. */
#define FC_ENV_HIDE_CPUID "FASTCPU_TEST_HIDE_CPUID"

bool fc_list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

enum { EAX, EBX, ECX, EDX };

/* FC_REQUIREMENTS (requirements.h) as a table: where each is found, what to say
 * when it is missing. */
#define FC_CPUID(leaf_, subleaf_, reg_, bit_)                                \
    .cpuid = true, .leaf = leaf_, .subleaf = subleaf_, .reg = reg_, .bit = bit_
#define FC_FACT(field) .fact = offsetof(struct fc_features, field)
#define FC_AT_USE(fn) .at_use = fn

/* Loading a null selector into %gs zeroes the GS base on Intel CPUs: a row
 * that reloads %gs runs only while this process has none to lose (asked
 * when the row is first judged). */
static const char *no_gs_base(void)
{
    unsigned long base = 1;
    if (fc_syscall3(SYS_arch_prctl, ARCH_GET_GS, (long)&base, 0) != 0)
        return "arch_prctl(ARCH_GET_GS) failed: cannot tell whether reloading "
               "%gs would clear a GS base this process set";
    return base == 0 ? NULL : fc_requirements[FC_REQ_NO_GS_BASE].reason;
}

#define FC_REQ_ROW(id, name_, where, reason_)                                \
    [FC_REQ_##id] = {.name = name_, where, .reason = reason_},
const struct fc_requirement fc_requirements[FC_REQ_COUNT] = {FC_REQUIREMENTS(FC_REQ_ROW)};

static struct fc_features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;
static bool features_done; /* detect() ran to the end */

static bool cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit)
{
    unsigned r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]))
        return false; /* leaf beyond the maximum: the feature is absent */
    return (r[reg] >> bit) & 1u;
}

static void detect(void)
{
    struct fc_features *f = &features;
    const char *hide = getenv(FC_ENV_HIDE_CPUID);
    if (hide && *hide)
        f->test_hooks = true;
    else
        hide = NULL;
    /* the CPUID bits the catalog may need, each hidden by its name */
    for (int r = 0; r < FC_REQ_COUNT; r++) {
        const struct fc_requirement *q = &fc_requirements[r];
        if (q->cpuid)
            f->has[r] = cpuid_bit(q->leaf, q->subleaf, (int)q->reg, (int)q->bit) &&
                        !(hide && fc_list_has(hide, q->name));
    }
    f->rdtscp = f->has[FC_REQ_RDTSCP];
    f->rdpid = f->has[FC_REQ_RDPID];
    f->fsgsbase_cpu = f->has[FC_REQ_FSGSBASE];
    f->fsgsbase_enabled = f->fsgsbase_cpu && (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE);
    f->umip = cpuid_bit(7, 0, ECX, 2) && !(hide && fc_list_has(hide, "umip"));
    f->hypervisor = cpuid_bit(1, 0, ECX, 31);
    f->invariant_tsc = cpuid_bit(0x80000007u, 0, EDX, 8);
    const char *fault = getenv(FC_ENV_FAULT_IN_PROBE);
    const char *software_pmu = getenv(FC_ENV_PMU_SOFTWARE);
    if ((fault && *fault) || (software_pmu && *software_pmu))
        f->test_hooks = true;
    if (f->hypervisor) {
        /* Leaf 0x40000000: the hypervisor's vendor string in EBX, ECX, EDX. */
        unsigned r[4];
        __cpuid(0x40000000u, r[0], r[1], r[2], r[3]);
        memcpy(f->hypervisor_vendor, &r[1], 4);
        memcpy(f->hypervisor_vendor + 4, &r[2], 4);
        memcpy(f->hypervisor_vendor + 8, &r[3], 4);
        f->hypervisor_vendor[12] = '\0';
    }

    /* CR4.TSD (prctl PR_SET_TSC) makes rdtsc and rdtscp fault. */
    int tsc_mode = 0;
    f->tsc_readable = prctl(PR_GET_TSC, &tsc_mode, 0, 0, 0) != 0 || tsc_mode != PR_TSC_SIGSEGV;

    /* glibc >= 2.35 exports these; older ones simply lack the symbols. The
     * area exists in every thread even when registration is off: cpu_id
     * then holds -2, which glibc's sched_getcpu checks. */
    const long *offset = dlsym(RTLD_DEFAULT, "__rseq_offset");
    const unsigned *size = dlsym(RTLD_DEFAULT, "__rseq_size");
    if (offset && size) {
        f->rseq_area = true;
        f->rseq_offset = *offset;
        f->rseq_size = *size;
        f->rseq_registered = *size > 0;
        fc_rseq_offset = *offset;
    }
    /* node_id (offset 20) only where glibc's __rseq_size says the area
     * holds it and the kernel says it fills it: a glibc that registered 32
     * bytes but exports 20 vouches only for the original fields. */
    f->rseq_feature_size = (unsigned)getauxval(AT_RSEQ_FEATURE_SIZE);
    f->rseq_node_id = f->rseq_registered && f->rseq_size >= FC_RSEQ_NODE_ID + 4 &&
                      f->rseq_feature_size >= FC_RSEQ_NODE_ID + 4;

    if (getauxval(AT_SYSINFO_EHDR)) {
        void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (vdso) {
            void *sym = dlvsym(vdso, "__vdso_getcpu", "LINUX_2.6");
            if (sym) {
                *(void **)&fc_vdso_getcpu = sym;
                f->vdso_getcpu = true;
            }
        }
    }
    /* the facts the catalog may need, now that they are known */
    for (int r = 0; r < FC_REQ_COUNT; r++)
        if (!fc_requirements[r].cpuid && !fc_requirements[r].at_use)
            f->has[r] = *(const bool *)((const char *)f + fc_requirements[r].fact);
    __atomic_store_n(&features_done, true, __ATOMIC_RELEASE);
}

/* The facts the sequences and models read on every timed run, owned here:
 * set once by detect(), read-only after. */
long fc_rseq_offset;
fc_vdso_getcpu_fn fc_vdso_getcpu;

const struct fc_features *fc_features(void)
{
    pthread_once(&features_once, detect);
    return &features;
}

int fc_current_cpu(void)
{
    /* rseq cpu_id: -1 before registration, -2 when it failed; glibc
     * registers every thread it creates */
    if (fc_features()->rseq_registered) {
        int32_t cpu;
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, cpu);
        if (cpu >= 0)
            return cpu;
    }
    return sched_getcpu();
}

const char *fc_requirement_missing(int r)
{
    const struct fc_requirement *q = &fc_requirements[r];
    if (q->at_use)
        return q->at_use();
    return fc_features()->has[r] ? NULL : q->reason;
}

/* ---- user function addresses -------------------------------------------- */

/* The page the kernel emulates a few fixed entry points in (listed
 * executable in /proc/self/maps, absent from dl_iterate_phdr). */
#define VSYSCALL_START ((uintptr_t)0xffffffffff600000ull)
#define VSYSCALL_END (VSYSCALL_START + 4096)

struct code_search {
    uintptr_t address;
    int found;
};

static int in_loaded_code(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct code_search *s = data;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        if (start <= s->address && s->address - start < (uintptr_t)ph->p_memsz) {
            s->found = 1;
            return 1;
        }
    }
    return 0;
}

int fc_address_executable(uintptr_t address)
{
    if (address >= VSYSCALL_START && address < VSYSCALL_END)
        return FC_ADDRESS_VSYSCALL;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) {
        /* no /proc (a minimal container, a chroot): the loaded objects'
         * executable segments (the program, its libraries, the vDSO) are
         * known without it; other executable memory (JIT code, ctypes
         * callbacks) is not, and that is said to the caller */
        int saved = errno;
        struct code_search s = {address, 0};
        dl_iterate_phdr(in_loaded_code, &s);
        if (s.found)
            return 1;
        errno = saved;
        return -1;
    }
    char line[512];
    int executable = 0;
    bool mapped = false;
    while (!mapped && fgets(line, sizeof line, f)) {
        unsigned long start, end;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 && start <= address &&
            address < end) {
            mapped = true;
            executable = perms[2] == 'x';
            /* listed executable, but the kernel emulates its few entry points
             * on a fault: any other address in it kills the process */
            if (executable && strstr(line, "[vsyscall]"))
                executable = FC_ADDRESS_VSYSCALL;
        }
        /* a long path: skip the rest of the line */
        while (!strchr(line, '\n') && fgets(line, sizeof line, f))
            ;
    }
    fclose(f);
    return executable;
}

void fc_features_after_fork_in_child(void)
{
    /* a detection another thread had not finished is done again */
    if (!__atomic_load_n(&features_done, __ATOMIC_ACQUIRE)) {
        pthread_once_t fresh = PTHREAD_ONCE_INIT;
        memcpy(&features_once, &fresh, sizeof fresh);
    }
}
