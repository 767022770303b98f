/*
 * ownfork.h: fastcpu's own fork() (a probe child), told apart from a fork
 * by a measured user function (ownfork.c). Below everything that forks or
 * watches forks, so that both can include it.
 */
#ifndef FASTCPU_OWNFORK_H
#define FASTCPU_OWNFORK_H

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

#pragma GCC visibility pop

#endif
