/*
 * usershapes.c: out-of-line user functions of other shapes than the plain
 * chains of userchains.c, compiled as a translation unit of their own, for
 * the self-test's bias of the user-function path (fastcpu/instrument/bias.py).
 * A user's function is not fastcpu's chain: what the call, the return and
 * the harness's ends add or hide of it depends on its make-up (a stack
 * frame, loads and stores, a taken branch, where it lies in memory). With
 * fastcpu 0.8.7 on an AuthenticAMD family 25 model 17 guest, functions
 * compiled outside fastcpu read +0.3 to +1.4 core cycles high while the
 * correction, taken from the plain chains alone, claimed +-1.1 (issue 39).
 * So the bias is taken over these shapes too, and its interval carries
 * how far they lie apart.
 *
 * Each body's cost is its critical path, a dependent chain in rax, the
 * return register, of known latency (add 1 core cycle, imul 3): whatever
 * else a body does lies off that path and needs less time than the chain
 * beside it, so the truth is the chain's whatever the core's L1 latency:
 *
 * - mix: add and imul links alternating in one chain (4 core cycles a pair);
 * - memory: an imul chain (3 core cycles a link) with, per link, a load
 *   from and a store to a stack buffer, neither depending on rax nor on
 *   each other (each load is independent: no load feeds another, so no
 *   load latency adds up; a store waits for nothing): a body with a stack
 *   frame and memory operands whose latency is still the chain's;
 * - branch: an imul chain with a taken jump after each link (one taken
 *   branch per 3 core cycles, within every x86-64 core's branch throughput);
 * - apart: an add chain on a 64-byte boundary, in this separate object;
 * - frame: an add chain behind a prologue, as compiled code with a local
 *   has: a store of that local to the stack before the first link. The
 *   store feeds nothing, but what stands before the first link moves where
 *   the chain starts in the core's dispatch after the harness's open: on
 *   the AuthenticAMD family 26 model 2 guest an add chain behind one such
 *   instruction read about half a core cycle above the same chain behind
 *   none or two, and a held-apart function with a store of a local read so
 *   too (benchmarks/user_functions.py), beyond its interval while no pooled
 *   shape had a prologue (issue 39).
 */
#include "userchains.h"

__attribute__((noinline, used)) unsigned fc_user_shape_mix_16(void)
{
    uint64_t acc;
    __asm__ volatile(".rept 16\n\tadd %0, %0\n\timul %0, %0\n\t.endr" : "=a"(acc));
    return (unsigned)acc;
}

__attribute__((noinline, used)) unsigned fc_user_shape_memory_24(void)
{
    /* buf: on the stack, read and written by the asm only ("memory"). Left
     * unset: filling it would put stores and constant loads before the first
     * link, which the front end must get through before the chain starts (a
     * body that read about a core cycle above its chain on the AuthenticAMD
     * family 25 model 1 guest). */
    uint64_t buf[4];
    uint64_t acc, scratch;
    __asm__ volatile(".rept 24\n\t"
                     "imul %0, %0\n\t"
                     "mov 8(%2), %1\n\t"   /* a load off the chain: no load feeds another */
                     "mov %2, 16(%2)\n\t"  /* a store off the chain: it waits for nothing */
                     ".endr"
                     : "=&a"(acc), "=&r"(scratch) /* early: the pointer is not in rax */
                     : "r"(buf)
                     : "memory");
    return (unsigned)acc;
}

__attribute__((noinline, used)) unsigned fc_user_shape_branch_24(void)
{
    uint64_t acc;
    __asm__ volatile(".rept 24\n\timul %0, %0\n\tjmp 1f\n1:\n\t.endr" : "=a"(acc));
    return (unsigned)acc;
}

__attribute__((noinline, used, aligned(64))) unsigned fc_user_shape_apart_48(void)
{
    uint64_t acc;
    __asm__ volatile(".rept 48\n\tadd %0, %0\n\t.endr" : "=a"(acc));
    return (unsigned)acc;
}

__attribute__((noinline, used)) unsigned fc_user_shape_frame_32(void)
{
    /* volatile and named by the asm: the store stays, before the chain; one
     * instruction only (a pushed register too would make two, which on that
     * guest read as no prologue) */
    volatile uint64_t local = 1;
    uint64_t acc;
    __asm__ volatile(".rept 32\n\tadd %0, %0\n\t.endr" : "=a"(acc) : "m"(local));
    return (unsigned)acc;
}
