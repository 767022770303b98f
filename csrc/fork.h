/*
 * fork.h: a fork during a first use, mended in one place (fork.c).
 */
#ifndef FASTCPU_FORK_H
#define FASTCPU_FORK_H

#pragma GCC visibility push(hidden)

/* Register (once) the pthread_atfork child handler that resets every lock
 * and unfinished first use of features.c, verdicts.c and getcpu.c, each
 * through its own after_fork_in_child. Called at module init. */
void fc_atfork_init(void);

#pragma GCC visibility pop

#endif
