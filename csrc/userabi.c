/*
 * userabi.c: a user function timed under the x86-64 calling convention's
 * rules, and stopped when it will not return.
 *
 * The timers (assembly, below) save what a function must preserve (rbx,
 * rbp, r12-r15, rsp, MXCSR's control bits, the x87 control word) before the
 * opening read and, after the closing read, compare, restore and record what
 * changed, together with DF (which must be clear on return). Both sides of a
 * pair (the user's function and the empty one, or 2k and k copies) run the
 * same timer code, and nothing of the check lies between the reads, so the
 * figures are those of the plain timers (the known-cost user chains of
 * selftest(paths=('user',)) read the same). After the call nothing may be
 * read through rsp or a callee-saved register, so the check finds its frame
 * through a global pointer, and a forked copy finds it wiped
 * (MADV_WIPEONFORK) and exits at once.
 *
 * Each chunk of runs (fc_user_step) is measured under a sigsetjmp: a fault
 * inside the function (SIGSEGV, SIGBUS, SIGILL, SIGFPE), the timeout, or
 * Ctrl-C on a function that does not come back siglongjmp out of it on this
 * thread, and the chunk fails saying why. One user-function chunk runs at a
 * time in the process (a lock), so the frame, the handlers and the alternate
 * signal stack are global.
 *
 * What cannot be mended: a function that writes over memory it does not own
 * (the harness's stack frame above its return address included), changes
 * %fs, or jumps to code that runs on; one abandoned (timeout, Ctrl-C, a
 * fault) leaves whatever it held (a lock of malloc's, a half-written
 * structure) as it was.
 */
#define _GNU_SOURCE
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

#include "fastcpu.h"
#include "timing.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* What the timers save and check. Offsets are spelled out in the assembly. */
struct fc_user_frame {
    uint64_t saved[6];  /*  0: rbx rbp r12 r13 r14 r15 at the call */
    uint64_t rsp;       /* 48: rsp at the call instruction */
    uint64_t t0;        /* 56: the opening read */
    uint32_t mxcsr;     /* 64 */
    uint16_t fpucw;     /* 68 */
    uint16_t pad;       /* 70 */
    uint32_t broken;    /* 72: FC_ABI_* bits, or-ed by every check */
    uint32_t in_call;   /* 76: between the save and the check */
    uint32_t mxcsr_now; /* 80: scratch */
    uint16_t fpucw_now; /* 84: scratch */
    uint16_t pad2;      /* 86 */
    uint32_t alive;     /* 88: 1 in the measuring process, 0 in a forked copy */
};
_Static_assert(offsetof(struct fc_user_frame, rsp) == 48, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, t0) == 56, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, mxcsr) == 64, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, fpucw) == 68, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, broken) == 72, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, in_call) == 76, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, mxcsr_now) == 80, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, fpucw_now) == 84, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, alive) == 88, "frame layout");

/* The frame, in a page of its own that a fork's child gets zeroed. */
__attribute__((used)) struct fc_user_frame *volatile fc_user_frame_ptr;

/* How a forked copy that returned from the function ends (exit_group). */
#define FC_USER_FORK_EXIT 0

/* ---- the timers ----------------------------------------------------------
 *
 * fc_user_timer_SIDE_MODE(fn, copies, counter): one timed run, `copies`
 * calls of fn, in counts of the mode's counter. One copy goes through a
 * trampoline: the timer calls it, it opens the timed region and jumps to
 * the function (a sibling call), and the function returns straight to the
 * timer, which uses the result and closes the region. So the call's push of
 * the return address happens before the opening read, and the return inside
 * the region loads an address stored long before: with the call inside the
 * region, the return waited for the push it had to read back, and a body
 * shorter than ~8 core cycles ran entirely beside it (read as 0 over the
 * empty function); through the trampoline, one shorter than ~4 (AuthenticAMD
 * family 25 model 1, Zen 3 guest, plain C). The return still matches its
 * call, so it stays predicted. More copies run a loop between the reads
 * (fn in r12, the count in rbx and ebp, as the C timers had it).
 *
 * The user's function and the empty baseline are called from two copies of
 * the timer (SIDE = method, empty), i.e. from two call sites: from one site
 * whose target alternated between them, the branch predictor missed inside
 * the timed region, and the empty baseline read ~12 core cycles dearer than
 * an 8-add function (AuthenticAMD family 25 model 1, Zen 3 guest).
 *
 * Tramp ABI: rdi fn, rsi where t0 goes, ecx the PMU counter. Each closing
 * read leaves t1 in rax and the function's rbx in r10 (cpuid overwrites
 * rbx), then jumps to the shared check. */

#define FC_S(x) #x
#define FC_XS(x) FC_S(x)

#define OPEN_lfence "lfence\n\trdtsc\n\tshl $32, %rdx\n\tor %rdx, %rax\n\tlfence\n\t"
#define OPEN_rdtscp "rdtscp\n\tshl $32, %rdx\n\tor %rdx, %rax\n\tlfence\n\t"
#define OPEN_cpuid "xor %eax, %eax\n\tcpuid\n\trdtsc\n\tshl $32, %rdx\n\tmov %eax, %eax\n\tor %rdx, %rax\n\t"
#define OPEN_pmu_lfence "lfence\n\trdpmc\n\tshl $32, %rdx\n\tor %rdx, %rax\n\tlfence\n\t"
#define OPEN_pmu_cpuid "mov %ecx, %r8d\n\txor %eax, %eax\n\tcpuid\n\tmov %r8d, %ecx\n\trdpmc\n\tshl $32, %rdx\n\tmov %eax, %eax\n\tor %rdx, %rax\n\t"

/* the cpuid openings overwrite rbx: the trampoline keeps it */
#define TRAMP_PUSH_lfence ""
#define TRAMP_PUSH_rdtscp ""
#define TRAMP_PUSH_cpuid "push %rbx\n\t"
#define TRAMP_PUSH_pmu_lfence ""
#define TRAMP_PUSH_pmu_cpuid "push %rbx\n\t"
#define TRAMP_POP_lfence ""
#define TRAMP_POP_rdtscp ""
#define TRAMP_POP_cpuid "pop %rbx\n\t"
#define TRAMP_POP_pmu_lfence ""
#define TRAMP_POP_pmu_cpuid "pop %rbx\n\t"

#define CLOSE_TSC "rdtscp\n\tlfence\n\tmov %rbx, %r10\n\tshl $32, %rdx\n\tmov %eax, %eax\n\tor %rdx, %rax\n\t"
/* the function completed before the read, as timing.h's lfence close waits */
#define CLOSE_lfence "lfence\n\t" CLOSE_TSC
#define CLOSE_rdtscp CLOSE_TSC
#define CLOSE_cpuid "rdtscp\n\tmov %eax, %r8d\n\tmov %edx, %r9d\n\tmov %rbx, %r10\n\txor %eax, %eax\n\tcpuid\n\tmov %r9, %rax\n\tshl $32, %rax\n\tor %r8, %rax\n\t"
#define CLOSE_pmu_lfence "mov %r14d, %ecx\n\tlfence\n\trdpmc\n\tlfence\n\tmov %rbx, %r10\n\tshl $32, %rdx\n\tmov %eax, %eax\n\tor %rdx, %rax\n\t"
#define CLOSE_pmu_cpuid "mov %r14d, %ecx\n\tlfence\n\trdpmc\n\tmov %eax, %r8d\n\tmov %edx, %r9d\n\tmov %rbx, %r10\n\txor %eax, %eax\n\tcpuid\n\tmov %r9, %rax\n\tshl $32, %rax\n\tor %r8, %rax\n\t"

/* In the loop, the PMU counter goes to ecx before the opening read. */
#define LOOP_OPEN_lfence OPEN_lfence
#define LOOP_OPEN_rdtscp OPEN_rdtscp
#define LOOP_OPEN_cpuid OPEN_cpuid
#define LOOP_OPEN_pmu_lfence "mov %r14d, %ecx\n\t" OPEN_pmu_lfence
#define LOOP_OPEN_pmu_cpuid "mov %r14d, %ecx\n\t" OPEN_pmu_cpuid

#define FC_USER_TIMER_ASM(side, mode)                                                   \
    "\t.p2align 4\n"                                                                    \
    "\t.type tramp_" #side "_" #mode ", @function\n"                                    \
    "tramp_" #side "_" #mode ":\n\t"                                                    \
    TRAMP_PUSH_##mode OPEN_##mode TRAMP_POP_##mode                                      \
    "mov %rax, (%rsi)\n\t"                                                              \
    "jmp *%rdi\n"                                                                       \
    "\t.size tramp_" #side "_" #mode ", .-tramp_" #side "_" #mode "\n"                  \
    "\t.p2align 4\n"                                                                    \
    "\t.globl fc_user_timer_" #side "_" #mode "\n"                                      \
    "\t.hidden fc_user_timer_" #side "_" #mode "\n"                                     \
    "\t.type fc_user_timer_" #side "_" #mode ", @function\n"                            \
    "fc_user_timer_" #side "_" #mode ":\n\t"                                            \
    "push %rbx\n\tpush %rbp\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"    \
    "sub $8, %rsp\n\t"                                                                  \
    "mov %rdi, %r12\n\tmov %esi, %ebp\n\tmov %edx, %r14d\n\t"                           \
    "cmp $1, %ebp\n\tje 1f\n\t"                                                         \
    "mov %ebp, %ebx\n"                  /* the loop leaves its count in rbx */          \
    "1:\n\t"                                                                            \
    "mov fc_user_frame_ptr(%rip), %r11\n\t"                                             \
    "mov %rbx, 0(%r11)\n\tmov %rbp, 8(%r11)\n\tmov %r12, 16(%r11)\n\t"                  \
    "mov %r13, 24(%r11)\n\tmov %r14, 32(%r11)\n\tmov %r15, 40(%r11)\n\t"                \
    "mov %rsp, 48(%r11)\n\tstmxcsr 64(%r11)\n\tfnstcw 68(%r11)\n\tmovl $1, 76(%r11)\n\t" \
    "cmp $1, %ebp\n\tjne 2f\n\t"                                                        \
    "mov %r12, %rdi\n\tmov %r14d, %ecx\n\tlea 56(%r11), %rsi\n\t"                       \
    "call tramp_" #side "_" #mode "\n\t"                                                \
    "imul $1, %eax, %edx\n\t" /* fc_use */                                              \
    CLOSE_##mode                                                                        \
    "jmp fc_user_check\n"                                                               \
    "2:\n\t"                                                                            \
    LOOP_OPEN_##mode                                                                    \
    "mov %rax, 56(%r11)\n\t"                                                            \
    "xor %ebx, %ebx\n\t.p2align 4\n"                                                   \
    "3:\n\t"                                                                            \
    "call *%r12\n\t"                                                                    \
    "imul $1, %eax, %edx\n\t"                                                           \
    "add $1, %ebx\n\t"                                                                  \
    "cmp %ebx, %ebp\n\t"                                                                \
    "jne 3b\n\t"                                                                        \
    CLOSE_##mode                                                                        \
    "jmp fc_user_check\n"                                                               \
    "\t.size fc_user_timer_" #side "_" #mode ", .-fc_user_timer_" #side "_" #mode "\n"

#define FC_USER_TIMERS_ASM(side)                                                        \
    FC_USER_TIMER_ASM(side, lfence)                                                     \
    FC_USER_TIMER_ASM(side, cpuid)                                                      \
    FC_USER_TIMER_ASM(side, rdtscp)                                                     \
    FC_USER_TIMER_ASM(side, pmu_lfence)                                                 \
    FC_USER_TIMER_ASM(side, pmu_cpuid)

/* The check, jumped to by every timer with the frame of its own on the
 * stack as the function may have left it: t1 in rax, the function's rbx in
 * r10. Nothing here reads through rsp or a callee-saved register before it
 * has restored them. Returns t1 - t0 from the timer. */
__asm__(
    "\t.text\n"
    "\t.globl fc_user_code_start\n\t.hidden fc_user_code_start\n"
    "fc_user_code_start:\n"
    "\t.p2align 4\n"
    "\t.type fc_user_check, @function\n"
    "fc_user_check:\n\t"
    "mov fc_user_frame_ptr(%rip), %r11\n\t"
    "cmpl $0, 88(%r11)\n\t"
    "je 9f\n\t"
    "sub 56(%r11), %rax\n\t"
    "xor %ecx, %ecx\n\t"
    "cmp 0(%r11), %r10\n\tje 1f\n\tor $" FC_XS(FC_ABI_RBX_BIT) ", %ecx\n1:\n\t"
    "cmp 8(%r11), %rbp\n\tje 1f\n\tor $" FC_XS(FC_ABI_RBP_BIT) ", %ecx\n1:\n\t"
    "cmp 16(%r11), %r12\n\tje 1f\n\tor $" FC_XS(FC_ABI_R12_BIT) ", %ecx\n1:\n\t"
    "cmp 24(%r11), %r13\n\tje 1f\n\tor $" FC_XS(FC_ABI_R13_BIT) ", %ecx\n1:\n\t"
    "cmp 32(%r11), %r14\n\tje 1f\n\tor $" FC_XS(FC_ABI_R14_BIT) ", %ecx\n1:\n\t"
    "cmp 40(%r11), %r15\n\tje 1f\n\tor $" FC_XS(FC_ABI_R15_BIT) ", %ecx\n1:\n\t"
    "cmp 48(%r11), %rsp\n\tje 1f\n\tor $" FC_XS(FC_ABI_RSP_BIT) ", %ecx\n1:\n\t"
    "mov 0(%r11), %rbx\n\tmov 8(%r11), %rbp\n\tmov 16(%r11), %r12\n\t"
    "mov 24(%r11), %r13\n\tmov 32(%r11), %r14\n\tmov 40(%r11), %r15\n\t"
    "mov 48(%r11), %rsp\n\t"
    "pushfq\n\tpop %rdx\n\t"
    "test $0x400, %edx\n\tjz 1f\n\tor $" FC_XS(FC_ABI_DF_BIT) ", %ecx\n\tcld\n1:\n\t"
    "stmxcsr 80(%r11)\n\tmov 80(%r11), %edx\n\txor 64(%r11), %edx\n\t"
    "test $0xffc0, %edx\n\tjz 1f\n\tor $" FC_XS(FC_ABI_MXCSR_BIT) ", %ecx\n\t"
    "ldmxcsr 64(%r11)\n1:\n\t"
    "fnstcw 84(%r11)\n\tmovzwl 84(%r11), %edx\n\tmovzwl 68(%r11), %esi\n\t"
    "cmp %esi, %edx\n\tje 1f\n\tor $" FC_XS(FC_ABI_X87CW_BIT) ", %ecx\n\t"
    "fnclex\n\tfldcw 68(%r11)\n1:\n\t"
    "or %ecx, 72(%r11)\n\t"
    "movl $0, 76(%r11)\n\t"
    "add $8, %rsp\n\t"
    "pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbp\n\tpop %rbx\n\t"
    "ret\n"
    "9:\n\t" /* a forked copy: end it before it returns anywhere */
    "mov $" FC_XS(SYS_exit_group) ", %eax\n\t"
    "mov $" FC_XS(FC_USER_FORK_EXIT) ", %edi\n\t"
    "syscall\n\t"
    "ud2\n"
    "\t.size fc_user_check, .-fc_user_check\n"
    FC_USER_TIMERS_ASM(method)
    FC_USER_TIMERS_ASM(empty)
    "\t.globl fc_user_code_end\n\t.hidden fc_user_code_end\n"
    "fc_user_code_end:\n");

#define FC_DECLARE_USER_TIMERS(side)                                                    \
    uint64_t fc_user_timer_##side##_lfence(fc_user_fn, uint32_t, uint32_t);             \
    uint64_t fc_user_timer_##side##_cpuid(fc_user_fn, uint32_t, uint32_t);              \
    uint64_t fc_user_timer_##side##_rdtscp(fc_user_fn, uint32_t, uint32_t);             \
    uint64_t fc_user_timer_##side##_pmu_lfence(fc_user_fn, uint32_t, uint32_t);         \
    uint64_t fc_user_timer_##side##_pmu_cpuid(fc_user_fn, uint32_t, uint32_t);
FC_DECLARE_USER_TIMERS(method)
FC_DECLARE_USER_TIMERS(empty)
extern const char fc_user_code_start[], fc_user_code_end[];

typedef uint64_t (*user_timer)(fc_user_fn, uint32_t, uint32_t);

/* [side][mode]: the TSC modes by enum fc_serialize, then pmu_lfence, pmu_cpuid */
static const user_timer timers[2][5] = {
    {fc_user_timer_method_lfence, fc_user_timer_method_cpuid, fc_user_timer_method_rdtscp,
     fc_user_timer_method_pmu_lfence, fc_user_timer_method_pmu_cpuid},
    {fc_user_timer_empty_lfence, fc_user_timer_empty_cpuid, fc_user_timer_empty_rdtscp,
     fc_user_timer_empty_pmu_lfence, fc_user_timer_empty_pmu_cpuid},
};

uint64_t fc_user_time(fc_user_fn fn, const struct fc_pair *p, uint32_t copies, bool empty_side)
{
    int mode = p->pmu ? (p->serialize == FC_SER_CPUID ? 4 : 3) : (int)p->serialize;
    return timers[empty_side][mode](fn, copies, p->pmu ? fc_pmu_counter : FC_NO_COUNTER);
}

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
static int (*python_running)(void); /* the glue's: this thread runs Python now */
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
static bool abandonable(void) { return !(python_running && python_running()); }

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

/* The stop signal: the timer, armed at the timeout or by Ctrl-C, on the
 * measuring thread. */
static void on_stop(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si, (void)ctx;
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

static void fork_parent(void)
{
    if (active && pthread_equal(pthread_self(), owner))
        forks++;
}

/* The copy of a measuring thread that forked inside the function: it must
 * not return into the function's caller, let alone Python. */
static void fork_child(void)
{
    if (active && pthread_equal(pthread_self(), owner))
        _exit(FC_USER_FORK_EXIT);
    /* a fork by another thread: nothing of ours is held in the child */
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    /* kept for good: a signal of the timer still queued after a chunk must
     * not kill the process */
    if (sigaction(stop_signal, &sa, NULL) < 0)
        setup_failed = "cannot install the handler of the stop signal";
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

void fc_user_begin(double timeout_s, int (*python_running_now)(void))
{
    pthread_once(&once, set_up);
    python_running = python_running_now;
    if (in_chunk) /* nested: refused by fc_user_step, the outer deadline stands */
        return;
    deadline_ns = 0;
    if (timeout_s > 0)
        deadline_ns = fc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
}

bool fc_user_timed_out(void) { return deadline_ns && fc_monotonic_ns() >= deadline_ns; }

static const char *const abi_names[FC_ABI_COUNT] = {
    "%rbx", "%rbp", "%r12", "%r13", "%r14", "%r15", "%rsp",
    "DF (the direction flag)", "MXCSR's control bits", "the x87 control word"};

int fc_user_describe_abi(uint32_t broken, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < FC_ABI_COUNT && n < size; i++)
        if (broken & (1u << i))
            n += (size_t)snprintf(out + n, size - n, "%s%s", n ? ", " : "", abi_names[i]);
    return (int)n;
}

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

enum fc_step fc_user_step(struct fc_session *s, enum fc_step (*step_chunk)(struct fc_session *))
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
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = stop_signal;
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_armed = timer_create(CLOCK_MONOTONIC, &sev, &stop_timer) == 0;
    if (deadline_ns)
        arm_stop_timer(deadline_ns + FC_USER_GRACE_NS);
    volatile enum fc_step step = FC_STEP_MORE;
    if (sigsetjmp(stop_jump, 1) == 0) {
        active = 1;
        /* one call first, through the single-copy path, which survives any
         * register the function changes: the copy loop keeps its count and
         * the function in callee-saved registers, and would run on with
         * them changed; and a function that forks, forks once */
        fc_sink(fc_user_time(s->pair->user_method, s->pair, 1, false));
        if (!f->broken && !forks)
            step = step_chunk(s);
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
