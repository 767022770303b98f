/* A test helper, not part of fastcpu: the C core's plain-C files (all of
 * csrc/ but the glue and module.c) linked into a small program that shows the
 * tests what no Python entry point does, so that the extension carries no
 * function for the tests alone. tests/core_probe.py builds and runs it.
 *
 *   core_probe problems             each catalog row's fc_row_problem(), "name: problem"
 *   core_probe requirements         each line of FC_REQUIREMENTS: "name\t1|0\treason" (1: present)
 *   core_probe median               per line of stdin (uint64s): fc_median_u64() of them
 *   core_probe read_in_thread M CPU one read of method M in a new pthread pinned to CPU before
 *                                   it runs: "cpu node raw valid" (node -1: none)
 *
 * Exit status 0, 2 for bad usage, 3 where the method cannot be read here
 * (its reason on stdout), 4 where a thread cannot be made. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "fork.h"
#include "harness.h"
#include "models.h"
#include "verdicts.h"

static int problems(void)
{
    for (size_t i = 0; i < fc_catalog_count; i++) {
        const char *problem = fc_row_problem(&fc_catalog[i]);
        if (problem)
            printf("%s: %s\n", fc_catalog[i].name ? fc_catalog[i].name : "?", problem);
    }
    return 0;
}

static int requirements(void)
{
    for (int r = 0; r < FC_REQ_COUNT; r++)
        printf("%s\t%d\t%s\n", fc_requirements[r].name, fc_requirement_missing(r) == NULL,
               fc_requirements[r].reason);
    return 0;
}

static int medians(void)
{
    static char line[1 << 23];
    static uint64_t values[1 << 18];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = 0;
        char *p = line, *end;
        for (;;) {
            errno = 0;
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p)
                break;
            if (errno || n == sizeof values / sizeof values[0])
                return 2;
            values[n++] = v;
            p = end;
        }
        if (n == 0) /* fc_median_u64 is never asked for the median of nothing */
            printf("none\n");
        else
            printf("%.17g\n", fc_median_u64(values, n));
    }
    return 0;
}

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

static int read_in_thread(const char *name, int cpu)
{
    const struct fc_method *m = fc_method_find(name);
    const char *why = m ? fc_method_unavailable(m) : "unknown method";
    if (!why)
        why = fc_method_cpu_reason(m);
    if (why) {
        printf("%s: %s\n", name, why);
        return 3;
    }
    if (cpu < 0 || cpu >= sysconf(_SC_NPROCESSORS_CONF))
        return 2;
    size_t size = CPU_ALLOC_SIZE(cpu + 1);
    cpu_set_t *set = CPU_ALLOC(cpu + 1);
    if (!set)
        return 4;
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
    if (err) {
        printf("%s\n", strerror(err));
        return 4;
    }
    printf("%u %d %" PRIu32 " %d\n", a.cpu, a.node, a.raw, a.valid);
    return 0;
}

int main(int argc, char **argv)
{
    /* what module.c's exec slot sets up before any row is read */
    fc_atfork_init();
    fc_models_init();
    if (argc == 2 && !strcmp(argv[1], "problems"))
        return problems();
    if (argc == 2 && !strcmp(argv[1], "requirements"))
        return requirements();
    if (argc == 2 && !strcmp(argv[1], "median"))
        return medians();
    if (argc == 4 && !strcmp(argv[1], "read_in_thread"))
        return read_in_thread(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: core_probe problems|requirements|median|read_in_thread METHOD CPU\n");
    return 2;
}
