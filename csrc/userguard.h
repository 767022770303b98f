/*
 * userguard.h: a user function's session, stopped when the function will
 * not return (userguard.c): a fault in it, the timeout, or Ctrl-C. It sits
 * above the harness, whose steps it runs; the glue calls it instead of
 * fc_session_step for a user function.
 */
#ifndef FASTCPU_USERGUARD_H
#define FASTCPU_USERGUARD_H

#include <stdbool.h>

#include "harness.h"

#pragma GCC visibility push(hidden)

#define FC_USER_TIMEOUT_MAX 1e6

/* Before a user function's session, with the GIL held: the timeout in
 * seconds (0: none, at most FC_USER_TIMEOUT_MAX), and where to see that the
 * thread runs Python inside the function (a ctypes callback), where nothing
 * may be abandoned: `python_depth` (the thread state's gilstate_counter, a
 * plain int the signal handlers read) above `depth_now`, its value here.
 * NULL: no thread state to watch. A value, not a function: the guard calls
 * nothing above it. */
void fc_user_begin(double timeout_s, const volatile int *python_depth, int depth_now);
/* The timeout has passed (checked between chunks). */
bool fc_user_timed_out(void);
/* fc_session_step for a user function: the chunk under a sigsetjmp, so that
 * a fault in the function, the timeout or Ctrl-C stops it; FC_STEP_BROKE,
 * FC_STEP_FAILED (a crash), FC_STEP_TIMED_OUT, FC_STEP_INTERRUPTED with
 * s->why, FC_STEP_UNSUPPORTED where it cannot be guarded. */
enum fc_step fc_user_step(struct fc_session *s);

#pragma GCC visibility pop

#endif
