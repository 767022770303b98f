/*
 * userchains.c: the known-cost chains as real out-of-line functions
 * `unsigned fn(void)`, so that the self-test (fastcpu/_selftest.py) can time
 * the user-function path exactly as it times a user's function: through
 * time_runs() with its address, an indirect call from the harness. Their cost is known:
 * `length` dependent `op` instructions of `latency` core cycles each, plus
 * the call and return that the empty baseline function also pays. The
 * harness uses the returned value as it uses a user function's (fc_use).
 */
#include "userchains.h"

/* The chain runs in rax, the return register, so the function is the chain
 * and a ret: no move that a user's compiler might or might not emit. */
#define FC_USER_CHAIN_FN(op, insn, n)                                        \
    __attribute__((noinline, used)) static unsigned user_##op##_chain_##n(void) \
    {                                                                        \
        uint64_t acc;                                                        \
        __asm__ volatile(".rept " #n "\n\t" insn "\n\t.endr" : "=a"(acc));   \
        return (unsigned)acc;                                                \
    }

#define FC_USER_ADD(n) FC_USER_CHAIN_FN(add, "add %0, %0", n)
#define FC_USER_IMUL(n) FC_USER_CHAIN_FN(imul, "imul %0, %0", n)

/* Lengths: short enough that the self-test takes milliseconds per chain,
 * spread so that a bias growing with the length would show, and from 16
 * core cycles on: a body hides the return that the empty function pays
 * only once it is longer than that (about 4 core cycles through the
 * trampoline of harness.c, about 10 before it, on an AuthenticAMD family
 * 25 model 1 (Zen 3) guest), and the fit must see only lengths beyond. */
FC_USER_ADD(16)
FC_USER_ADD(32)
FC_USER_ADD(128)
FC_USER_IMUL(8)
FC_USER_IMUL(16)
FC_USER_IMUL(64)

#define FC_USER_ROW(op, n, lat) {#op "_chain_" #n, #op, n, lat, user_##op##_chain_##n}

const struct fc_user_chain fc_user_chains[] = {
    FC_USER_ROW(add, 16, 1),  FC_USER_ROW(add, 32, 1),   FC_USER_ROW(add, 128, 1),
    FC_USER_ROW(imul, 8, 3),  FC_USER_ROW(imul, 16, 3),  FC_USER_ROW(imul, 64, 3),
    /* other shapes (usershapes.c): latency per link; mix: an add and an imul */
    {"shape_mix_16", "mix", 16, 4, fc_user_shape_mix_16},
    {"shape_memory_24", "memory", 24, 3, fc_user_shape_memory_24},
    {"shape_branch_24", "branch", 24, 3, fc_user_shape_branch_24},
    {"shape_apart_48", "apart", 48, 1, fc_user_shape_apart_48},
    {"shape_frame_32", "frame", 32, 1, fc_user_shape_frame_32},
};

const size_t fc_user_chain_count = sizeof fc_user_chains / sizeof fc_user_chains[0];

/* The user path's zero: a function of no cost, shaped like the chains (a
 * result in rax and a ret), timed against the harness's own empty function
 * by the self-test: what the user path reads for nothing. */
__attribute__((noinline)) unsigned fc_user_empty(void)
{
    uint64_t acc;
    __asm__ volatile("" : "=a"(acc));
    return (unsigned)acc;
}
