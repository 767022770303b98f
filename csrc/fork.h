/*
 * fork.h: a fork during a first use, mended in one place (fork.c).
 */
#ifndef FASTCPU_FORK_H
#define FASTCPU_FORK_H

#include <stdbool.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* fork() for fastcpu's own use (a probe child, verdicts.c): while it runs,
 * fc_forking_own() is true on this thread, in the parent's atfork handlers
 * and the child's, so that the user-function guard (userguard.c) does not
 * take it for a fork by the function being measured (a ctypes callback
 * inside it that asked fastcpu for a first verdict). */
pid_t fc_fork_own(void);
bool fc_forking_own(void);

/* Register (once) the pthread_atfork child handler that resets every lock
 * and unfinished first use of features.c, verdicts.c and getcpu.c, each
 * through its own after_fork_in_child. Called at module init. */
void fc_atfork_init(void);

#pragma GCC visibility pop

#endif
