/*
 * userabi.c: a user function timed under the x86-64 calling convention's
 * rules.
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
 * (MADV_WIPEONFORK, userguard.c) and exits at once.
 *
 * Stopping a function that will not return (a fault, the timeout, Ctrl-C)
 * is userguard.c's, which runs the harness's chunks under a sigsetjmp.
 */
#include <stdio.h>
#include <sys/syscall.h>

#include "timing.h"
#include "userabi.h"

_Static_assert(offsetof(struct fc_user_frame, rsp) == 48, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, t0) == 56, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, mxcsr) == 64, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, fpucw) == 68, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, broken) == 72, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, in_call) == 76, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, mxcsr_now) == 80, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, fpucw_now) == 84, "frame layout");
_Static_assert(offsetof(struct fc_user_frame, alive) == 88, "frame layout");

/* The frame (userabi.h), read by the assembly through this pointer. */
__attribute__((used)) struct fc_user_frame *volatile fc_user_frame_ptr;


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

uint64_t fc_user_time(fc_user_fn fn, enum fc_serialize serialize, bool pmu, uint32_t copies,
                      bool empty_side)
{
    int mode = pmu ? (serialize == FC_SER_CPUID ? 4 : 3) : (int)serialize;
    return timers[empty_side][mode](fn, copies, pmu ? fc_pmu_counter : FC_NO_COUNTER);
}

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

