/*
 * getcpu.c: fastcpu.getcpu(), the current CPU by the fastest way proven
 * right on this machine. The candidates, fastest first: the rseq cpu_id
 * load, RDPID, the vDSO's getcpu, the getcpu system call (the reference).
 * Once per process a helper thread pins itself to every CPU it may use in
 * turn and keeps the candidates that agree with the system call on each;
 * the fastest survivor is used from then on. Nothing here knows about
 * Python.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fastcpu.h"

enum fc_getcpu_way fc_getcpu_way, fc_getcpu_node_way, fc_getcpu_fallback_way;

static const char *const way_names[] = {
    [FC_GETCPU_UNCHOSEN] = "unchosen", [FC_GETCPU_RSEQ] = "rseq",
    [FC_GETCPU_RDPID] = "rdpid",       [FC_GETCPU_VDSO] = "vdso",
    [FC_GETCPU_SYSCALL] = "syscall",
};

const char *fc_getcpu_way_name(enum fc_getcpu_way way) { return way_names[way]; }

unsigned fc_getcpu_by(enum fc_getcpu_way way, unsigned *node)
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
            FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, c);
        if (c < 0) /* this thread has no registered area */
            return fc_getcpu_by(fc_getcpu_fallback_way, node);
        cpu = (unsigned)c;
        n = (unsigned)nid;
        break;
    }
    case FC_GETCPU_RDPID: {
        uint64_t aux;
        __asm__ volatile("rdpid %0" : "=r"(aux));
        cpu = (unsigned)aux & 0xfffu;
        n = (unsigned)aux >> 12;
        break;
    }
    case FC_GETCPU_VDSO:
        fc_vdso_getcpu(&cpu, &n, NULL);
        break;
    default:
        fc_syscall3(SYS_getcpu, (long)&cpu, (long)&n, 0);
        break;
    }
    if (node)
        *node = n;
    return cpu;
}

/* ---- the sweep ----------------------------------------------------------- */

#define N_WAYS 4

struct sweep {
    enum fc_getcpu_way ways[N_WAYS];
    bool gives_node[N_WAYS];
    size_t n;
    bool cpu_ok[N_WAYS];  /* the cpu agreed on every CPU checked */
    bool node_ok[N_WAYS]; /* and the node too */
    int cpus_checked;
};

/* One candidate's reading, or false when it has none here (rseq cpu_id
 * negative in this thread). */
static bool read_way(enum fc_getcpu_way way, unsigned *cpu, unsigned *node)
{
    if (way == FC_GETCPU_RSEQ) {
        int32_t nid, c = fc_rseq_cpu_node(fc_features()->rseq_node_id, &nid);
        *cpu = (unsigned)c;
        *node = (unsigned)nid;
        return c >= 0;
    }
    *cpu = fc_getcpu_by(way, node);
    return true;
}

static void *sweep_main(void *arg)
{
    struct sweep *s = arg;
    long ncpus = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpus < 1)
        ncpus = 1;
    size_t size = CPU_ALLOC_SIZE(ncpus);
    cpu_set_t *set = CPU_ALLOC(ncpus);
    if (!set)
        return NULL;
    for (long cpu = 0; cpu < ncpus; cpu++) {
        CPU_ZERO_S(size, set);
        CPU_SET_S((size_t)cpu, size, set);
        /* A CPU this process may not use (cpuset, offline): skip the gap. */
        if (sched_setaffinity(0, size, set) != 0)
            continue;
        unsigned ref_cpu = 0, ref_node = 0;
        if (fc_syscall3(SYS_getcpu, (long)&ref_cpu, (long)&ref_node, 0) != 0 ||
            ref_cpu != (unsigned)cpu)
            continue; /* pinning did not take: no evidence either way */
        s->cpus_checked++;
        for (size_t i = 0; i < s->n; i++) {
            unsigned c, nd;
            bool have = read_way(s->ways[i], &c, &nd);
            if (!have || c != ref_cpu)
                s->cpu_ok[i] = false;
            if (!have || !s->gives_node[i] || c != ref_cpu || nd != ref_node)
                s->node_ok[i] = false;
        }
    }
    CPU_FREE(set);
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

static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
    struct sweep s = {0};
    add_candidate(&s, FC_GETCPU_RSEQ, "rseq", fc_features()->rseq_node_id);
    add_candidate(&s, FC_GETCPU_RDPID, "rdpid", true);
    add_candidate(&s, FC_GETCPU_VDSO, "vdso", true);
    add_candidate(&s, FC_GETCPU_SYSCALL, NULL, true);

    /* A helper thread, so the caller's own affinity is never touched. */
    pthread_t t;
    if (pthread_create(&t, NULL, sweep_main, &s) == 0)
        pthread_join(t, NULL);
    enum fc_getcpu_way way = FC_GETCPU_SYSCALL, node_way = FC_GETCPU_SYSCALL,
                       fallback = FC_GETCPU_SYSCALL;
    if (s.cpus_checked > 0) { /* no evidence: trust only the system call */
        for (size_t i = s.n; i-- > 0;) {
            if (s.cpu_ok[i])
                way = s.ways[i];
            if (s.node_ok[i])
                node_way = s.ways[i];
            if (s.cpu_ok[i] && s.ways[i] != FC_GETCPU_RSEQ)
                fallback = s.ways[i];
        }
    }
    fc_getcpu_fallback_way = fallback;
    __atomic_store_n(&fc_getcpu_node_way, node_way, __ATOMIC_RELEASE);
    /* last: the fast path's acquire load of it publishes the others */
    __atomic_store_n(&fc_getcpu_way, way, __ATOMIC_RELEASE);
}

void fc_getcpu_choose(void) { pthread_once(&choose_once, choose); }

/* ---- a read from a fresh thread ------------------------------------------ */

struct in_thread {
    const struct fc_method *m;
    bool valid;
    unsigned cpu;
    int node;
    uint32_t raw;
};

static void *in_thread_main(void *arg)
{
    struct in_thread *a = arg;
    a->raw = fc_method_read_cpu(a->m, &a->valid, &a->cpu, &a->node);
    return NULL;
}

int fc_read_cpu_in_new_thread(const struct fc_method *m, int cpu, bool *valid,
                              unsigned *out_cpu, int *out_node, uint32_t *raw)
{
    /* a set of cpu + 1 bits: never for a CPU this kernel cannot have */
    if (cpu < 0 || cpu >= sysconf(_SC_NPROCESSORS_CONF))
        return EINVAL;
    size_t size = CPU_ALLOC_SIZE(cpu + 1);
    cpu_set_t *set = CPU_ALLOC(cpu + 1);
    if (!set)
        return ENOMEM;
    CPU_ZERO_S(size, set);
    CPU_SET_S((size_t)cpu, size, set);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* pinned before it runs a single instruction of ours */
    int err = pthread_attr_setaffinity_np(&attr, size, set);
    struct in_thread a = {.m = m};
    pthread_t t;
    if (!err)
        err = pthread_create(&t, &attr, in_thread_main, &a);
    if (!err)
        pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    CPU_FREE(set);
    if (err)
        return err;
    *valid = a.valid;
    *out_cpu = a.cpu;
    *out_node = a.node;
    *raw = a.raw;
    return 0;
}
