/*
 * fork.c: what a fork() made while another thread was inside a first use
 * leaves in the child, mended in one place. That thread does not exist in
 * the child, so whatever it held is released and whatever it had not
 * finished is done again on the child's first use (detecting features,
 * probing a row in a child of its own, choosing the getcpu way). Verdicts
 * already reached stay. Each file owning such state says how to reset it;
 * this one, above them all, calls each.
 */
#include <pthread.h>
#include <unistd.h>

#include "machine.h"
#include "fork.h"
#include "getcpu.h"
#include "verdicts.h"

static void after_fork_in_child(void)
{
    fc_features_after_fork_in_child();
    fc_verdicts_after_fork_in_child();
    fc_getcpu_after_fork_in_child();
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void register_atfork(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }

void fc_atfork_init(void) { pthread_once(&atfork_once, register_atfork); }
