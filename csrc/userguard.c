/*
 * userguard.c: a user function's session, stopped when the function will
 * not return.
 *
 * Each chunk of runs (fc_user_step) is run by the harness (fc_session_step,
 * called from here: the guard sits above the harness, the glue above both)
 * under a sigsetjmp: a fault inside the function (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE), the timeout, or Ctrl-C on a function that does not come back
 * siglongjmp out of it on this thread, and the chunk fails saying why. One
 * user-function chunk runs at a time in the process (a lock), so the frame,
 * the handlers and the alternate signal stack are global.
 *
 * What cannot be mended: a function that writes over memory it does not own
 * (the harness's stack frame above its return address included), changes
 * %fs, or jumps to code that runs on; one abandoned (timeout, Ctrl-C, a
 * fault) leaves whatever it held (a lock of malloc's, a half-written
 * structure) as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "clock.h"
#include "ownfork.h"
#include "harness.h"
#include "timing.h"
#include "userabi.h"
#include "userguard.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* ---- stopping a chunk ---------------------------------------------------- */

enum stop_reason { STOP_NONE, STOP_FAULT, STOP_TIMEOUT, STOP_INTERRUPT };

/* Ctrl-C or the timeout leaves a function this long to come back before it
 * is abandoned: a chunk of runs (FC_CHUNK_TICKS, ~13 ms) ends well within
 * it, and the glue then raises between chunks without abandoning anything. */
#define FC_USER_GRACE_NS 500000000ull

static pthread_mutex_t chunk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *setup_failed;
static int stop_signal;
static volatile sig_atomic_t active;       /* a chunk is running under the jump */
static volatile sig_atomic_t stop_reason;
static volatile sig_atomic_t forks;        /* libc fork()s by the function */
static volatile sig_atomic_t timer_armed;
static pthread_t owner;
static pid_t owner_pid;
static timer_t stop_timer;
static sigjmp_buf stop_jump;
static _Thread_local uint64_t deadline_ns; /* this thread's measurement's; 0: none */
/* This thread's Python call depth (fc_user_begin): a ctypes callback inside
 * the function counts itself in it until it returns. */
static _Thread_local const volatile int *python_depth;
static _Thread_local int python_depth_before;
static _Thread_local bool in_chunk;  /* a bench() nested in the function's callback */

static struct {
    int sig, code;
    uintptr_t addr, rip;
    uint64_t regs[7]; /* rbx rbp r12 r13 r14 r15 rsp at the fault */
} fault;

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
#define N_FAULT_SIGNALS (sizeof fault_signals / sizeof fault_signals[0])
static struct sigaction old_fault[N_FAULT_SIGNALS], old_int;
static bool int_installed;
/* The stop signal is borrowed for each chunk and given back after it: the
 * action it had before (the application's, or none) is restored exactly. */
static struct sigaction old_stop;
static volatile sig_atomic_t stop_borrowed;
static _Alignas(16) char alt_stack[1 << 16];

static void arm_stop_timer(uint64_t at_ns)
{
    struct itimerspec its = {{0, 0}, {(time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u)}};
    if (timer_armed)
        timer_settime(stop_timer, TIMER_ABSTIME, &its, NULL); /* async-signal-safe */
}

/* A ctypes callback runs Python inside the function: never jump out of
 * the interpreter's frames (its fault is the process's, its Ctrl-C
 * Python's, as before). */
static bool abandonable(void)
{
    return !(python_depth && *python_depth > python_depth_before);
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    struct fc_user_frame *f = fc_user_frame_ptr;
    if (active && f && f->in_call && pthread_equal(pthread_self(), owner) && abandonable()) {
        const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
        fault.sig = sig;
        fault.code = si->si_code;
        fault.addr = (uintptr_t)si->si_addr;
        fault.rip = (uintptr_t)g[REG_RIP];
        const int which[7] = {REG_RBX, REG_RBP, REG_R12, REG_R13, REG_R14, REG_R15, REG_RSP};
        for (int i = 0; i < 7; i++)
            fault.regs[i] = (uint64_t)g[which[i]];
        stop_reason = STOP_FAULT;
        siglongjmp(stop_jump, 1);
    }
    /* not the function's: the action before ours takes it (a fault comes
     * again on return; a sent signal is sent again) */
    for (size_t i = 0; i < N_FAULT_SIGNALS; i++)
        if (fault_signals[i] == sig)
            sigaction(sig, &old_fault[i], NULL);
    if (si->si_code <= 0)
        raise(sig);
}

/* The stop timer's signal carries this address: a stop signal without it
 * is the application's (sent by kill, sigqueue or a timer of its own). */
static const char stop_mark;

static bool from_stop_timer(const siginfo_t *si)
{
    return si->si_code == SI_TIMER && si->si_value.sival_ptr == (void *)&stop_mark;
}

/* The application's stop signal, arrived while fastcpu borrowed it: its
 * action before ours takes it (a handler is called; the default action,
 * termination, is taken once our handler returns). */
static void forward_stop(int sig, siginfo_t *si, void *ctx)
{
    if (old_stop.sa_flags & SA_SIGINFO) {
        if (old_stop.sa_sigaction)
            old_stop.sa_sigaction(sig, si, ctx);
    } else if (old_stop.sa_handler == SIG_DFL) {
        sigaction(sig, &old_stop, NULL);
        raise(sig);
    } else if (old_stop.sa_handler != SIG_IGN) {
        old_stop.sa_handler(sig);
    }
}

/* The stop signal: the timer, armed at the timeout or by Ctrl-C, on the
 * measuring thread. */
static void on_stop(int sig, siginfo_t *si, void *ctx)
{
    if (!from_stop_timer(si)) {
        forward_stop(sig, si, ctx);
        return;
    }
    if (active && pthread_equal(pthread_self(), owner) && abandonable()) {
        if (stop_reason == STOP_NONE)
            stop_reason = STOP_TIMEOUT;
        siglongjmp(stop_jump, 1);
    }
}

/* Ctrl-C: Python's handler first (KeyboardInterrupt comes when the chunk
 * ends), then the function has FC_USER_GRACE_NS to come back. */
static void on_sigint(int sig, siginfo_t *si, void *ctx)
{
    if (old_int.sa_flags & SA_SIGINFO) {
        if (old_int.sa_sigaction)
            old_int.sa_sigaction(sig, si, ctx);
    } else if (old_int.sa_handler != SIG_DFL && old_int.sa_handler != SIG_IGN) {
        old_int.sa_handler(sig);
    }
    if (active) {
        stop_reason = STOP_INTERRUPT;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        arm_stop_timer((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec +
                       FC_USER_GRACE_NS);
    }
}

/* fastcpu's own forks (a probe child, fc_fork_own) are not the
 * function's, though a ctypes callback inside it made them. */
static void fork_parent(void)
{
    if (active && pthread_equal(pthread_self(), owner) && !fc_forking_own())
        forks++;
}

/* The copy of a measuring thread that forked inside the function: it must
 * not return into the function's caller, let alone Python. */
static void fork_child(void)
{
    if (fc_forking_own()) /* a probe child: it runs one instruction and leaves */
        return;
    if (active && pthread_equal(pthread_self(), owner))
        _exit(FC_USER_FORK_EXIT);
    /* a fork by another thread: nothing of ours is held in the child, and
     * the stop signal is the application's again */
    if (stop_borrowed)
        sigaction(stop_signal, &old_stop, NULL);
    stop_borrowed = 0;
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&chunk_lock, &fresh, sizeof fresh);
    active = 0;
    if (fc_user_frame_ptr)
        fc_user_frame_ptr->alive = 1;
}

static void set_up(void)
{
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        setup_failed = "cannot map the user-function frame";
        return;
    }
    /* a kernel before 4.14 refuses: fork()'s copies are still ended (the
     * atfork handler), a raw fork system call's only when the chunk ends */
    (void)madvise(page, 4096, MADV_WIPEONFORK);
    fc_user_frame_ptr = page;
    fc_user_frame_ptr->alive = 1;
    pthread_atfork(NULL, fork_parent, fork_child);
    stop_signal = SIGRTMIN + 7;
}

/* Borrow the stop signal for a chunk, unblocked on this thread (*mask:
 * this thread's mask before). 0, or an errno. */
static int borrow_stop_signal(sigset_t *mask)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, stop_signal);
    pthread_sigmask(SIG_UNBLOCK, &stop, mask);
    if (sigaction(stop_signal, &sa, &old_stop) < 0)
        return errno;
    stop_borrowed = 1;
    return 0;
}

/* Give the stop signal back, its timer deleted: a signal of the timer
 * queued before the delete is taken here (blocked, then waited for with no
 * wait), one of the application's passed to its action, and the action
 * before ours restored exactly, unless the application installed another
 * meanwhile (that one stays). This thread's mask is `mask` again. */
static void give_back_stop_signal(const sigset_t *mask)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, stop_signal);
    if (stop_borrowed) {
        pthread_sigmask(SIG_BLOCK, &stop, NULL);
        const struct timespec now = {0, 0};
        siginfo_t si;
        while (sigtimedwait(&stop, &si, &now) == stop_signal)
            if (!from_stop_timer(&si))
                forward_stop(stop_signal, &si, NULL);
        struct sigaction cur;
        if (sigaction(stop_signal, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_stop)
            sigaction(stop_signal, &old_stop, NULL);
        stop_borrowed = 0;
    }
    pthread_sigmask(SIG_SETMASK, mask, NULL);
}

/* errno's name, for a message that must name it. */
static const char *errno_name(int err)
{
    switch (err) {
    case EAGAIN: return "EAGAIN";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    default: return "errno";
    }
}

static void install(stack_t *old_stack)
{
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0};
    sigaltstack(&ss, old_stack);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FAULT_SIGNALS; i++)
        sigaction(fault_signals[i], &sa, &old_fault[i]);
    /* Ctrl-C only where someone handles it (Python's handler): SIG_IGN and
     * SIG_DFL stay as they are */
    int_installed = false;
    if (sigaction(SIGINT, NULL, &old_int) == 0 &&
        ((old_int.sa_flags & SA_SIGINFO) ||
         (old_int.sa_handler != SIG_DFL && old_int.sa_handler != SIG_IGN))) {
        sa.sa_sigaction = on_sigint;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        int_installed = sigaction(SIGINT, &sa, &old_int) == 0;
    }
}

static void uninstall(const stack_t *old_stack)
{
    if (int_installed)
        sigaction(SIGINT, &old_int, NULL);
    for (size_t i = 0; i < N_FAULT_SIGNALS; i++)
        sigaction(fault_signals[i], &old_fault[i], NULL);
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == alt_stack)
        sigaltstack(old_stack, NULL);
}

void fc_user_begin(double timeout_s, const volatile int *depth, int depth_now)
{
    pthread_once(&once, set_up);
    if (in_chunk) /* nested: refused by fc_user_step, the outer depth and deadline stand */
        return;
    python_depth = depth;
    python_depth_before = depth_now;
    deadline_ns = 0;
    if (timeout_s > 0)
        deadline_ns = fc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
}

bool fc_user_timed_out(void) { return deadline_ns && fc_monotonic_ns() >= deadline_ns; }

/* Which callee-saved registers and rsp differ at the fault from the call's. */
static uint32_t broken_at_fault(const struct fc_user_frame *f)
{
    uint32_t b = 0;
    for (int i = 0; i < 6; i++)
        if (fault.regs[i] != f->saved[i])
            b |= 1u << i;
    if (fault.regs[6] != f->rsp)
        b |= FC_ABI_RSP_BIT;
    return b;
}

static enum fc_step fault_step(struct fc_session *s, const struct fc_user_frame *f)
{
    static const char *const names[] = {[SIGSEGV] = "SIGSEGV", [SIGBUS] = "SIGBUS",
                                        [SIGILL] = "SIGILL", [SIGFPE] = "SIGFPE"};
    const char *name = names[fault.sig] ? names[fault.sig] : "a fault";
    char regs[120];
    if (fault.rip >= (uintptr_t)fc_user_code_start && fault.rip < (uintptr_t)fc_user_code_end &&
        fc_user_describe_abi(broken_at_fault(f), regs, sizeof regs) > 0) {
        /* the harness's own code faulted on what the function left it */
        snprintf(s->why, sizeof s->why,
                 "the function broke the x86-64 calling convention: it changed %s, and the "
                 "harness faulted on it (%s)",
                 regs, name);
        return FC_STEP_BROKE;
    }
    long off = (long)(fault.regs[6] - f->rsp);
    snprintf(s->why, sizeof s->why,
             "the function crashed: %s at instruction 0x%lx (address 0x%lx)%s; it was abandoned "
             "there, with whatever it held",
             name, (unsigned long)fault.rip, (unsigned long)fault.addr,
             fault.rip == fault.addr && off >= -8
                 ? ", a jump to a bad address (a return after an unbalanced push or pop, or "
                   "with %rsp moved?)"
                 : "");
    return FC_STEP_FAILED;
}

enum fc_step fc_user_step(struct fc_session *s)
{
    if (setup_failed) {
        snprintf(s->why, sizeof s->why, "user functions cannot be guarded here: %s",
                 setup_failed);
        return FC_STEP_UNSUPPORTED;
    }
    if (in_chunk) {
        snprintf(s->why, sizeof s->why,
                 "a user function's measurement cannot run inside another's (the function "
                 "being measured called bench() or bench_diff() on a user function)");
        return FC_STEP_FAILED;
    }
    pthread_mutex_lock(&chunk_lock);
    in_chunk = true;
    struct fc_user_frame *f = fc_user_frame_ptr;
    f->broken = 0;
    f->in_call = 0;
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(fpucw));
    f->mxcsr = mxcsr; /* what a stop before the first call restores */
    f->fpucw = fpucw;
    owner = pthread_self();
    owner_pid = getpid();
    forks = 0;
    stop_reason = STOP_NONE;
    stack_t old_stack;
    install(&old_stack);
    sigset_t old_mask;
    int err = borrow_stop_signal(&old_mask);
    const char *failed = err ? "sigaction" : NULL;
    if (!err) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = stop_signal;
        sev.sigev_value.sival_ptr = (void *)&stop_mark;
        sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
        timer_armed = timer_create(CLOCK_MONOTONIC, &sev, &stop_timer) == 0;
        if (!timer_armed) {
            err = errno;
            failed = "timer_create";
        }
    }
    if (failed && deadline_ns) {
        /* nothing could stop a function that does not return: refused
         * before it is called */
        give_back_stop_signal(&old_mask);
        uninstall(&old_stack);
        in_chunk = false;
        pthread_mutex_unlock(&chunk_lock);
        snprintf(s->why, sizeof s->why,
                 "a timeout cannot be enforced here: %s failed with %s (%d), so nothing could "
                 "stop a function that does not return (RLIMIT_SIGPENDING 0? a seccomp "
                 "filter?); pass timeout=0 to measure without one",
                 failed, errno_name(err), err);
        return FC_STEP_UNSUPPORTED;
    }
    if (deadline_ns)
        arm_stop_timer(deadline_ns + FC_USER_GRACE_NS);
    volatile enum fc_step step = FC_STEP_MORE;
    if (sigsetjmp(stop_jump, 1) == 0) {
        active = 1;
        /* one call first, through the single-copy path, which survives any
         * register the function changes: the copy loop keeps its count and
         * the function in callee-saved registers, and would run on with
         * them changed; and a function that forks, forks once */
        const struct fc_pair *p = s->pair;
        fc_sink(fc_user_time(p->user_method, p->serialize, p->pmu, 1, false));
        if (!f->broken && !forks)
            step = fc_session_step(s);
        active = 0;
    } else {
        active = 0;
        f->in_call = 0;
        /* the handler's floating-point state, not the caller's: restore it */
        mxcsr = f->mxcsr;
        fpucw = f->fpucw;
        __asm__ volatile("cld\n\tfnclex\n\tldmxcsr %0\n\tfldcw %1" ::"m"(mxcsr), "m"(fpucw));
        if (stop_reason == STOP_FAULT) {
            step = fault_step(s, f);
        } else if (stop_reason == STOP_INTERRUPT) {
            snprintf(s->why, sizeof s->why, "interrupted: the function did not come back "
                                            "within 0.5 s of Ctrl-C and was abandoned");
            step = FC_STEP_INTERRUPTED;
        } else {
            snprintf(s->why, sizeof s->why, "the function did not come back before the "
                                            "timeout and was abandoned");
            step = FC_STEP_TIMED_OUT;
        }
    }
    if (timer_armed) {
        timer_armed = 0;
        timer_delete(stop_timer);
    }
    give_back_stop_signal(&old_mask);
    uninstall(&old_stack);
    if (getpid() != owner_pid) /* a copy made by a raw fork system call */
        _exit(FC_USER_FORK_EXIT);
    uint32_t broken = f->broken;
    in_chunk = false;
    pthread_mutex_unlock(&chunk_lock);
    if (step == FC_STEP_MORE || step == FC_STEP_DONE) {
        char regs[120];
        if (broken && fc_user_describe_abi(broken, regs, sizeof regs) > 0) {
            snprintf(s->why, sizeof s->why,
                     "the function broke the x86-64 calling convention: it changed %s "
                     "(restored after each call)",
                     regs);
            return FC_STEP_BROKE;
        }
        if (forks) {
            snprintf(s->why, sizeof s->why,
                     "the function called fork(): its %d cop%s ended at once with _exit(%d) "
                     "instead of returning",
                     (int)forks, forks == 1 ? "y" : "ies", FC_USER_FORK_EXIT);
            return FC_STEP_BROKE;
        }
    }
    return step;
}
