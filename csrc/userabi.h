/*
 * userabi.h: a user function timed under the x86-64 calling convention's
 * rules (userabi.c): the timers, which check and restore what the function
 * must preserve, and the frame they check it in. Stopping a function that
 * will not return is userguard.h's, above the harness.
 */
#ifndef FASTCPU_USERABI_H
#define FASTCPU_USERABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timers.h"

#pragma GCC visibility push(hidden)

/* What a user function must leave as it found it: a bit each (numbers, as
 * the assembly spells them). */
#define FC_ABI_RBX_BIT 1
#define FC_ABI_RBP_BIT 2
#define FC_ABI_R12_BIT 4
#define FC_ABI_R13_BIT 8
#define FC_ABI_R14_BIT 16
#define FC_ABI_R15_BIT 32
#define FC_ABI_RSP_BIT 64
#define FC_ABI_DF_BIT 128
#define FC_ABI_MXCSR_BIT 256
#define FC_ABI_X87CW_BIT 512
#define FC_ABI_COUNT 10

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

/* The frame, in a page of its own that a fork's child gets zeroed (mapped
 * by userguard.c before the first user function is timed). */
extern struct fc_user_frame *volatile fc_user_frame_ptr;

/* The timers' code, from the check to the last timer: a fault there is the
 * harness's own, on what the function left it. */
extern const char fc_user_code_start[], fc_user_code_end[];

/* How a forked copy that returned from the function ends (exit_group). */
#define FC_USER_FORK_EXIT 0

/* One timed run of `copies` calls of `fn` in mode `serialize`, on the TSC
 * or (`pmu`) the PMU counter, from the empty side's call site or the
 * method's; what the function broke is restored after each call and or-ed
 * into fc_user_frame_ptr->broken. */
uint64_t fc_user_time(fc_user_fn fn, enum fc_serialize serialize, bool pmu, uint32_t copies,
                      bool empty_side);

/* The names of the FC_ABI_* bits set in `broken`, comma-separated. */
int fc_user_describe_abi(uint32_t broken, char *out, size_t size);

#pragma GCC visibility pop

#endif
