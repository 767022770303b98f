/*
 * getcpu.c: fastcpu.getcpu(), the current CPU by the fastest way proven
 * right on this machine. The candidates, fastest first: the rseq cpu_id
 * load, RDPID, the vDSO's getcpu, the getcpu system call. Once per process
 * a helper thread pins itself to every CPU of the first caller's affinity
 * mask in turn (it inherits the mask and never leaves it) and keeps the
 * candidates that read that CPU there (and the node the system call, else
 * sysfs, gives); a candidate whose own call fails is dropped. The fastest
 * survivor is used from then on; with none (the pinning and the system call
 * both denied), FC_GETCPU_NONE and the reason. Nothing here knows about
 * Python.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "catalog.h"
#include "machine.h"
#include "getcpu.h"
#include "verdicts.h"
#include "x86.h"

enum fc_getcpu_way fc_getcpu_way, fc_getcpu_node_way, fc_getcpu_fallback_way;

/* The candidates, fastest first, each named by the catalog row that times
 * it: the row's name is the way's (fastcpu.getcpu_method()), and the row's
 * verdict (fc_method_cpu_reason) says whether it is tried at all, but for
 * the system call's, which is tried wherever it runs (its own call failing
 * drops it). */
static const struct candidate {
    enum fc_getcpu_way way;
    const char *row;
    bool judged_by_row;
} candidates[] = {
    {FC_GETCPU_RSEQ, "rseq", true},
    {FC_GETCPU_RDPID, "rdpid", true},
    {FC_GETCPU_VDSO, "vdso", true},
    {FC_GETCPU_SYSCALL, "syscall", false},
};
#define N_CANDIDATES (sizeof candidates / sizeof *candidates)

const char *fc_getcpu_way_name(enum fc_getcpu_way way)
{
    for (size_t i = 0; i < N_CANDIDATES; i++)
        if (candidates[i].way == way)
            return candidates[i].row;
    return way == FC_GETCPU_NONE ? "none" : "unchosen";
}

/* Why the cpu way, the node way or the per-call fallback is FC_GETCPU_NONE
 * (written by choose() before it publishes the ways). */
static char why_cpu[320], why_node[320], why_fallback[320];

const char *fc_getcpu_why(enum fc_getcpu_why which)
{
    return which == FC_WHY_NODE ? why_node : which == FC_WHY_FALLBACK ? why_fallback : why_cpu;
}

int fc_getcpu_by(enum fc_getcpu_way way, unsigned *node)
{
    unsigned cpu = 0, n = 0;
    switch (way) {
    case FC_GETCPU_RSEQ: {
        int32_t c, nid = 0;
        if (node && !fc_features()->rseq_node_id)
            return fc_getcpu_by(fc_getcpu_fallback_way, node);
        if (node)
            c = fc_rseq_cpu_node(true, &nid);
        else
            c = fastcpu_rseq_getcpu(); /* fastcpu_getcpu.h: what users copy */
        if (c < 0) /* this thread has no registered area */
            return fc_getcpu_by(fc_getcpu_fallback_way, node);
        cpu = (unsigned)c;
        n = (unsigned)nid;
        break;
    }
    /* the public header's readers (fastcpu_getcpu.h), the code users copy */
    case FC_GETCPU_RDPID: {
        int c = fastcpu_rdpid_getcpu(&n);
        if (c < 0)
            return -FC_GETCPU_ENONE; /* not chosen without RDPID */
        cpu = (unsigned)c;
        break;
    }
    case FC_GETCPU_VDSO: {
        int c = fastcpu_vdso_getcpu(&n);
        if (c < 0)
            return c;
        cpu = (unsigned)c;
        break;
    }
    case FC_GETCPU_SYSCALL: {
        int c = fastcpu_syscall_getcpu(&n);
        if (c < 0)
            return c;
        cpu = (unsigned)c;
        break;
    }
    default: /* FC_GETCPU_NONE (UNCHOSEN never gets here) */
        return -FC_GETCPU_ENONE;
    }
    if (cpu > (unsigned)INT32_MAX)
        return -EIO;
    if (node)
        *node = n;
    return (int)cpu;
}

/* ---- the sweep ----------------------------------------------------------- */

#define N_WAYS 4

struct sweep {
    enum fc_getcpu_way ways[N_WAYS];
    bool gives_node[N_WAYS];
    size_t n;
    bool cpu_ok[N_WAYS];  /* the cpu agreed on every CPU checked */
    bool node_ok[N_WAYS]; /* and the node too */
    int cpus_checked;     /* CPUs the helper thread was pinned to */
    int nodes_checked;    /* of those, CPUs whose node is known */
    int pin_errno;        /* the last sched_setaffinity failure (0: none) */
    int mask_errno;       /* sched_getaffinity's failure: no CPU to pin to (0: none) */
    int syscall_errno;    /* the getcpu system call's failure (0: none) */
};

/* The NUMA node of `cpu` from sysfs (a "nodeN" entry in its directory), or
 * -1 when sysfs does not say. */
static int sysfs_node(long cpu)
{
    char path[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld", cpu);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int node = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        if (strncmp(e->d_name, "node", 4) != 0 || !isdigit((unsigned char)e->d_name[4]))
            continue;
        long v = strtol(e->d_name + 4, &end, 10);
        if (*end == '\0' && v >= 0 && v <= INT32_MAX) {
            node = (int)v;
            break;
        }
    }
    closedir(d);
    return node;
}

/* One candidate's reading, or false when it has none here (rseq cpu_id
 * negative in this thread, the vDSO or the system call failing). */
static bool read_way(enum fc_getcpu_way way, unsigned *cpu, unsigned *node)
{
    if (way == FC_GETCPU_RSEQ) {
        int32_t nid, c = fc_rseq_cpu_node(fc_features()->rseq_node_id, &nid);
        *cpu = (unsigned)c;
        *node = (unsigned)nid;
        return c >= 0;
    }
    int c = fc_getcpu_by(way, node);
    *cpu = (unsigned)c;
    return c >= 0;
}

/* The affinity mask this thread was created with (its creator's), in a set
 * of *ncpus CPUs grown until the kernel's mask fits; NULL when it cannot be
 * read (errno set: sched_getaffinity denied, or no memory). */
static cpu_set_t *allowed_cpus(long *ncpus, size_t *size)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n < 1)
        n = 1;
    for (;;) {
        cpu_set_t *set = CPU_ALLOC(n);
        if (!set)
            return NULL;
        *size = CPU_ALLOC_SIZE(n);
        if (sched_getaffinity(0, *size, set) == 0) {
            *ncpus = n;
            return set;
        }
        int err = errno;
        CPU_FREE(set);
        /* EINVAL: the kernel's mask is wider than the set (more possible
         * CPUs than configured ones); anything else is a refusal */
        if (err != EINVAL || n > (1L << 20)) {
            errno = err;
            return NULL;
        }
        n *= 2;
    }
}

/* The helper thread: pinned to each CPU of its creator's affinity mask in
 * turn (never outside it: a cpuset or taskset gave the process those CPUs
 * and no others), the pinning is the reference (a thread allowed one CPU
 * runs there once sched_setaffinity returns); the node comes from the getcpu
 * system call, else from sysfs. Every candidate, the system call included,
 * must read that CPU. */
static void *sweep_main(void *arg)
{
    struct sweep *s = arg;
    long ncpus;
    size_t allowed_size;
    cpu_set_t *allowed = allowed_cpus(&ncpus, &allowed_size);
    if (!allowed) { /* no mask, no CPU known to be ours: pin to none */
        s->mask_errno = errno ? errno : ENOMEM;
        return NULL;
    }
    size_t size = CPU_ALLOC_SIZE(ncpus);
    cpu_set_t *set = CPU_ALLOC(ncpus);
    if (!set) {
        CPU_FREE(allowed);
        return NULL;
    }
    for (long cpu = 0; cpu < ncpus; cpu++) {
        if (!CPU_ISSET_S((size_t)cpu, allowed_size, allowed))
            continue;
        CPU_ZERO_S(size, set);
        CPU_SET_S((size_t)cpu, size, set);
        /* A CPU gone offline since the mask was read: skip the gap. */
        if (sched_setaffinity(0, size, set) != 0) {
            if (errno != EINVAL)
                s->pin_errno = errno;
            continue;
        }
        unsigned ref_cpu = 0, ref_node = 0;
        long rc = fc_syscall3(SYS_getcpu, (long)&ref_cpu, (long)&ref_node, 0);
        int node = -1;
        if (rc == 0) {
            if (ref_cpu != (unsigned)cpu)
                continue; /* pinning did not take: no evidence either way */
            node = (int)ref_node;
        } else {
            s->syscall_errno = fc_syscall_errno(rc);
            node = sysfs_node(cpu);
        }
        s->cpus_checked++;
        if (node >= 0)
            s->nodes_checked++;
        for (size_t i = 0; i < s->n; i++) {
            unsigned c, nd;
            bool have = read_way(s->ways[i], &c, &nd);
            if (!have || c != (unsigned)cpu)
                s->cpu_ok[i] = false;
            if (!have || !s->gives_node[i] || node < 0 || c != (unsigned)cpu ||
                nd != (unsigned)node)
                s->node_ok[i] = false;
        }
    }
    CPU_FREE(set);
    CPU_FREE(allowed);
    return NULL;
}

static void add_candidate(struct sweep *s, enum fc_getcpu_way way, const char *method,
                          bool gives_node)
{
    if (method && fc_method_cpu_reason(fc_method_find(method)))
        return; /* unavailable, or not a CPU source here */
    s->ways[s->n] = way;
    s->gives_node[s->n] = gives_node;
    s->cpu_ok[s->n] = s->node_ok[s->n] = true;
    s->n++;
}

/* "errno 1, Operation not permitted" */
static void describe_errno(char *out, size_t size, int err)
{
    snprintf(out, size, "errno %d, %s", err, strerror(err));
}

static void explain(const struct sweep *s, int create_err, bool node)
{
    char *out = node ? why_node : why_cpu;
    size_t size = node ? sizeof why_node : sizeof why_cpu;
    char pin[96] = "", sys[96] = "";
    if (s->syscall_errno)
        describe_errno(sys, sizeof sys, s->syscall_errno);
    if (create_err) {
        describe_errno(pin, sizeof pin, create_err);
        snprintf(out, size,
                 "no way of reading the CPU could be verified: the helper thread that "
                 "pins itself to each CPU could not be created: %s; the getcpu system "
                 "call %s%s",
                 pin, s->syscall_errno ? "failed: " : "works but cannot be checked", sys);
    } else if (s->cpus_checked == 0 && s->mask_errno) {
        describe_errno(pin, sizeof pin, s->mask_errno);
        snprintf(out, size,
                 "no way of reading the CPU could be verified: the helper thread could "
                 "not read its affinity mask, the CPUs it may pin itself to "
                 "(sched_getaffinity: %s), and the getcpu system call failed: %s; a "
                 "seccomp filter or a container may deny them",
                 pin, sys);
    } else if (s->cpus_checked == 0) {
        if (s->pin_errno)
            describe_errno(pin, sizeof pin, s->pin_errno);
        snprintf(out, size,
                 "no way of reading the CPU could be verified: the helper thread could "
                 "not be pinned to any CPU (sched_setaffinity: %s) and the getcpu system "
                 "call failed: %s; a seccomp filter or a container may deny them",
                 s->pin_errno ? pin : "no CPU accepted", sys);
    } else if (node && s->nodes_checked < s->cpus_checked) {
        snprintf(out, size,
                 "the NUMA node cannot be verified: the getcpu system call failed (%s) "
                 "and sysfs names no node for some CPUs; a seccomp filter may deny "
                 "the system call",
                 sys);
    } else {
        snprintf(out, size,
                 "no way of reading the %s agreed with the pinned CPU on every CPU "
                 "(%d checked)%s%s",
                 node ? "CPU and NUMA node" : "CPU", s->cpus_checked,
                 s->syscall_errno ? "; the getcpu system call failed: " : "", sys);
    }
}

static pthread_once_t choose_once = PTHREAD_ONCE_INIT;
static bool chosen; /* choose() ran to the end (read by the fork handler) */

static void choose(void)
{
    struct sweep s = {0};
    for (size_t i = 0; i < N_CANDIDATES; i++) /* rseq gives the node where its area covers node_id */
        add_candidate(&s, candidates[i].way, candidates[i].judged_by_row ? candidates[i].row : NULL,
                      candidates[i].way != FC_GETCPU_RSEQ || fc_features()->rseq_node_id);

    /* A helper thread, so the caller's own affinity is never touched. */
    pthread_t t;
    int create_err = pthread_create(&t, NULL, sweep_main, &s);
    if (create_err == 0)
        pthread_join(t, NULL);
    enum fc_getcpu_way way = FC_GETCPU_NONE, node_way = FC_GETCPU_NONE,
                       fallback = FC_GETCPU_NONE;
    if (s.cpus_checked > 0) {
        for (size_t i = s.n; i-- > 0;) {
            if (s.cpu_ok[i])
                way = s.ways[i];
            if (s.node_ok[i])
                node_way = s.ways[i];
            if (s.cpu_ok[i] && s.ways[i] != FC_GETCPU_RSEQ)
                fallback = s.ways[i];
        }
    } else {
        /* no evidence: trust only the kernel's own answer, if it gives one */
        unsigned c, n;
        long rc = fc_syscall3(SYS_getcpu, (long)&c, (long)&n, 0);
        if (rc == 0)
            way = node_way = fallback = FC_GETCPU_SYSCALL;
        else
            s.syscall_errno = fc_syscall_errno(rc);
    }
    if (way == FC_GETCPU_NONE)
        explain(&s, create_err, false);
    if (node_way == FC_GETCPU_NONE)
        explain(&s, create_err, true);
    if (fallback == FC_GETCPU_NONE)
        snprintf(why_fallback, sizeof why_fallback,
                 "this thread has no registered rseq area, and no other way of reading "
                 "the CPU was verified here%s",
                 s.syscall_errno ? " (the getcpu system call fails)" : "");
    fc_getcpu_fallback_way = fallback;
    __atomic_store_n(&fc_getcpu_node_way, node_way, __ATOMIC_RELEASE);
    /* last: the fast path's acquire load of it publishes the others */
    __atomic_store_n(&fc_getcpu_way, way, __ATOMIC_RELEASE);
    __atomic_store_n(&chosen, true, __ATOMIC_RELEASE);
}

/* In a child forked while another thread was choosing: that thread is gone
 * and the once-control would never complete. Choose again, from scratch. */
void fc_getcpu_after_fork_in_child(void)
{
    if (!__atomic_load_n(&chosen, __ATOMIC_ACQUIRE)) {
        pthread_once_t fresh = PTHREAD_ONCE_INIT;
        memcpy(&choose_once, &fresh, sizeof fresh);
        fc_getcpu_way = fc_getcpu_node_way = fc_getcpu_fallback_way = FC_GETCPU_UNCHOSEN;
    }
}

void fc_getcpu_choose(void) { pthread_once(&choose_once, choose); }

