/*
 * verdicts.c: whether each catalog row can run here, and whether it reports
 * the CPU here, decided once per row and cached. Nothing here knows a
 * method by name: each row says what it needs (FC_REQUIREMENTS, which
 * features.c answers), whether to probe it in a forked child, and how to
 * tell whether it reports the CPU (its cpu_check).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"
#include "ownfork.h"
#include "machine.h"
#include "verdicts.h"

/* Run one execution of `m` in a child; NULL when it ran to the end, else a
 * static message naming the signal that killed it. The child writes one
 * byte to a pipe after the instruction, and that byte is the verdict: with
 * SIGCHLD ignored the kernel reaps the child itself (waitpid then fails with
 * ECHILD once it is gone), and another thread may reap it first. */
static const char *probe_in_child(const struct fc_method *m)
{
    const char *fault = getenv(FC_ENV_FAULT_IN_PROBE);
    bool must_fault = fault && fc_list_has(fault, m->name); /* decided before fork */
    int ran[2];
    /* close-on-exec: a concurrent fork-and-exec elsewhere keeps no end;
     * non-blocking: the verdict is read once the child is gone */
    if (pipe2(ran, O_CLOEXEC | O_NONBLOCK) != 0)
        return "could not create a pipe to probe the instruction safely";
    pid_t pid = fc_fork_own(); /* not a fork by a user function that asked for this verdict */
    if (pid < 0) {
        close(ran[0]);
        close(ran[1]);
        return "could not fork to probe the instruction safely";
    }
    if (pid == 0) {
        /* Only async-signal-safe calls from here: no core file, run, report,
         * leave. */
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        close(ran[0]);
        if (must_fault)
            __asm__ volatile("ud2"); /* the test hook: fault as a lying CPUID would */
        bool valid;
        m->read(&valid);
        char done = 1;
        _exit(write(ran[1], &done, 1) == 1 ? 0 : 1);
    }
    close(ran[1]);
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    /* waited < 0 (ECHILD): reaped by the kernel or another thread, so it
     * has exited; the pipe still holds its byte if it got that far */
    char done = 0;
    ssize_t got;
    while ((got = read(ran[0], &done, 1)) < 0 && errno == EINTR)
        ;
    close(ran[0]);
    if (got == 1 && done == 1)
        return NULL;
    if (waited == pid && WIFSIGNALED(status)) {
        switch (WTERMSIG(status)) {
        case SIGILL:
            return "the instruction raised SIGILL in a probe child although "
                   "CPUID lists it (a hypervisor hiding it?)";
        case SIGSEGV:
            return "the instruction raised SIGSEGV in a probe child (UMIP "
                   "without kernel emulation, Linux < 5.4, or a disabled "
                   "feature)";
        default:
            return "the instruction killed a probe child with a signal";
        }
    }
    if (waited != pid)
        return "the probe child died before reporting, and its exit status "
               "was not ours to read (SIGCHLD ignored, or reaped elsewhere)";
    return "the probe child did not exit cleanly";
}

/* The first of `m`'s needs this machine lacks, in FC_REQUIREMENTS order. */
static const char *static_reason(const struct fc_method *m)
{
    for (int r = 0; r < FC_REQ_COUNT; r++) {
        const char *why = m->needs >> r & 1 ? fc_requirement_missing(r) : NULL;
        if (why)
            return why;
    }
    return NULL;
}

/* `m`'s place in fc_catalog[]: the index of its cached verdicts. */
static size_t row_index(const struct fc_method *m) { return (size_t)(m - fc_catalog); }

/* One cached answer per method: 0 unknown, 1 available, 2 not. */
static _Atomic int verdict[FC_METHODS_MAX];
static const char *verdict_reason[FC_METHODS_MAX];
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *reason_without_probe(const struct fc_method *m)
{
    /* a row another process times (a child interpreter: this process has
     * what the child must not, rseq registered) says why it is not timed here */
    if (m->elsewhere)
        return m->elsewhere;
    return fc_features()->tsc_readable ? static_reason(m)
                                       : "this process may not read the TSC (prctl "
                                         "PR_SET_TSC, CR4.TSD)";
}

const char *fc_method_unavailable(const struct fc_method *m)
{
    size_t i = row_index(m);
    if (verdict[i] == 1)
        return NULL;
    if (verdict[i] == 2)
        return verdict_reason[i];

    pthread_mutex_lock(&probe_lock);
    if (verdict[i] == 0) {
        const char *why = reason_without_probe(m);
        if (!why && m->probe_in_child)
            why = probe_in_child(m);
        verdict_reason[i] = why;
        verdict[i] = why ? 2 : 1;
    }
    pthread_mutex_unlock(&probe_lock);
    return verdict_reason[i];
}

/* ---- does it report the CPU? --------------------------------------------- */

static const char *cpu_reason_uncached(const struct fc_method *m)
{
    const char *why = fc_method_unavailable(m);
    if (why)
        return why;
    return m->cpu_check ? m->cpu_check() : NULL;
}

static _Atomic int cpu_verdict[FC_METHODS_MAX];
static const char *cpu_verdict_reason[FC_METHODS_MAX];
static pthread_mutex_t cpu_reason_lock = PTHREAD_MUTEX_INITIALIZER;

const char *fc_method_cpu_reason(const struct fc_method *m)
{
    size_t i = row_index(m);
    if (cpu_verdict[i] == 0) {
        /* outside the lock: it may probe, which takes probe_lock */
        const char *why = cpu_reason_uncached(m);
        pthread_mutex_lock(&cpu_reason_lock);
        if (cpu_verdict[i] == 0) {
            cpu_verdict_reason[i] = why;
            cpu_verdict[i] = why ? 2 : 1;
        }
        pthread_mutex_unlock(&cpu_reason_lock);
    }
    return cpu_verdict[i] == 1 ? NULL : cpu_verdict_reason[i];
}

void fc_verdicts_after_fork_in_child(void)
{
    /* a probe another thread was making: its lock is released, its row
     * probed again on first use */
    pthread_mutex_init(&probe_lock, NULL);
    pthread_mutex_init(&cpu_reason_lock, NULL);
}
