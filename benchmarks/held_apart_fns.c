/*
 * held_apart_fns.c: known-cost functions that fastcpu's correction never
 * saw, for benchmarks/user_functions.py (issue 39). The self-test takes the
 * user path's bias from its own out-of-line bodies (csrc/userchains.c,
 * csrc/usershapes.c); these are others, compiled as a user's shared library
 * of their own:
 *
 *     cc -O2 -std=c11 -shared -fPIC -o libheldapart.so benchmarks/held_apart_fns.c
 *
 * Each is `unsigned fn(void)` whose cost is a dependent chain in rax, the
 * return register, of known latency (register-register add 1 core cycle,
 * imul 3); whatever else a body does (loads from a stack buffer, a taken
 * conditional branch) lies off that chain and needs less time than the
 * chain beside it, so the truth is the chain's. ROWS lists each function's
 * truth in core cycles; the benchmark reads it from here, never by hand.
 */
#include <stdint.h>

#define CHAIN_FN(name, body)                                                 \
    unsigned name(void)                                                      \
    {                                                                        \
        uint64_t acc;                                                        \
        __asm__ volatile(body : "=a"(acc));                                  \
        return (unsigned)acc;                                                \
    }

/* the three: 5 adds (below what the user path resolves), 37 imuls,
 * 200 adds */
CHAIN_FN(held_add_5, ".rept 5\n\tadd %0, %0\n\t.endr")
CHAIN_FN(held_imul_37, ".rept 37\n\timul %0, %0\n\t.endr")
CHAIN_FN(held_add_200, ".rept 200\n\tadd %0, %0\n\t.endr")
/* 3 imuls: 9 core cycles, also below the resolution */
CHAIN_FN(held_imul_3, ".rept 3\n\timul %0, %0\n\t.endr")
/* 12 x (imul, add, add): 60 core cycles */
CHAIN_FN(held_mix_60, ".rept 12\n\timul %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\t.endr")
/* 20 imuls, each followed by a taken conditional branch on a register that
 * is 0 throughout: 60 core cycles */
unsigned held_branch_60(void)
{
    uint64_t acc, zero = 0;
    __asm__ volatile(".rept 20\n\timul %0, %0\n\ttest %1, %1\n\tjz 1f\n\tnop\n1:\n\t.endr"
                     : "=&a"(acc)
                     : "r"(zero));
    return (unsigned)acc;
}
/* 40 adds, each beside a load of a local variable on the stack into another
 * register (independent loads of one 8-byte store: none feeds another, nor
 * the chain): 40 core cycles */
unsigned held_load_40(void)
{
    volatile uint64_t local = 7;
    uint64_t acc, scratch;
    __asm__ volatile(".rept 40\n\tadd %0, %0\n\tmov %2, %1\n\t.endr"
                     : "=&a"(acc), "=&r"(scratch)
                     : "m"(local));
    return (unsigned)acc;
}
/* 90 adds on a 128-byte boundary: 90 core cycles */
__attribute__((aligned(128))) CHAIN_FN(held_aligned_add_90, ".rept 90\n\tadd %0, %0\n\t.endr")

/* name, truth in core cycles */
#define ROWS(X)                                                              \
    X(held_add_5, 5) X(held_imul_3, 9) X(held_load_40, 40)                   \
    X(held_mix_60, 60) X(held_branch_60, 60) X(held_aligned_add_90, 90)      \
    X(held_imul_37, 111) X(held_add_200, 200)

struct held_row {
    const char *name;
    unsigned truth_core_cycles;
};

#define ROW(name, truth) {#name, truth},
const struct held_row held_rows[] = {ROWS(ROW)};
const unsigned held_row_count = sizeof held_rows / sizeof held_rows[0];
