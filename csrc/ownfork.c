/*
 * ownfork.c: fastcpu's own fork(), marked on its thread while it runs
 * (ownfork.h says why).
 */
#include <unistd.h>

#include "ownfork.h"

static _Thread_local volatile bool forking_own;

pid_t fc_fork_own(void)
{
    forking_own = true;
    pid_t pid = fork();
    forking_own = false;
    return pid;
}

bool fc_forking_own(void) { return forking_own; }
