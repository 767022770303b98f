/*
 * chains.c: sequences whose cost is known in advance, so that fastcpu's
 * numbers can be checked against the truth (benchmarks/accuracy.py). Each is
 * a dependent chain: every instruction needs the result of the one before,
 * so a chain of N takes N times the instruction's latency, however wide the
 * core. Two instructions with different latencies, so that a harness error
 * that scales with the count cannot hide:
 *
 *   add r64, r64    1 core cycle on every x86-64 core
 *   imul r64, r64   3 core cycles on Intel since Nehalem and AMD since Zen
 *
 * Not `add $1, r64`: Intel cores since Golden Cove fold chains of immediate
 * adds at rename, several per cycle, so such a chain has no known cost.
 *
 * They are timed by the same FC_DEFINE_TIMERS harness as every method, and
 * listed in the one catalog (sequences.c) as chain rows.
 */
#include "catalog.h"
#include "chains.h"

#define FC_TIMER_LINKAGE FC_HIDDEN
#include "timing.h"

/*
 * The chain register is an output only ("=r"), yet each instruction also
 * reads it: the compiler neither initialises it nor touches it between
 * copies, so with unroll > 1 the copies form one long dependent chain (the
 * loop runs the same code, hence the same register, every time). The
 * chain's result is used as every timed result is (timing.h, fc_use): into
 * a register of its own, so it does not lengthen the chain across copies.
 */
#define FC_CHAIN(insn, n)                                                    \
    do {                                                                     \
        uint64_t acc_;                                                       \
        __asm__ volatile(".rept " #n "\n\t" insn "\n\t.endr" : "=r"(acc_));  \
        fc_use(acc_);                                                        \
    } while (0)

/* What each chain is made of (chains.h says what each link costs). */
#define FC_add_INSN "add %0, %0"
#define FC_imul_INSN "imul %0, %0"

#define FC_CHAIN_CODE(op, n)                                                 \
    FC_DEFINE_TIMERS(op##_chain_##n, FC_CHAIN(FC_##op##_INSN, n))            \
    uint32_t read_##op##_chain_##n(bool *valid)                              \
    {                                                                        \
        FC_CHAIN(FC_##op##_INSN, n);                                         \
        *valid = true;                                                       \
        return 0;                                                            \
    }

/* Every chain the catalog lists (chains.h: FC_CHAINS). */
FC_CHAINS(FC_CHAIN_CODE)
