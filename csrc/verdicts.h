/*
 * verdicts.h: each catalog row's verdicts, cached (verdicts.c): can it run
 * here, does it report the CPU.
 */
#ifndef FASTCPU_VERDICTS_H
#define FASTCPU_VERDICTS_H

#include "catalog.h"

#pragma GCC visibility push(hidden)

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

#pragma GCC visibility pop

#endif
