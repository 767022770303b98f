/*
 * pin.h: pin the benchmark programs' one thread to a CPU, as the scripts
 * ask (their --cpu), so that a figure is one core's. Included by the C
 * programs that refuse to run elsewhere: an unpinned figure would be
 * mislabelled.
 */
#ifndef FASTCPU_BENCH_PIN_H
#define FASTCPU_BENCH_PIN_H

#include <sched.h>
#include <stdio.h>

/* 0 when pinned to `cpu`; 1, with the reason on stderr, when refused. */
static int pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    return 0;
}

#endif
