/*
 * calibration.c: sequences whose cost is known in advance, so that fastcpu's
 * numbers can be checked against the truth (benchmarks/accuracy.py). Each is
 * a dependent chain: every instruction needs the result of the one before,
 * so a chain of N takes N times the instruction's latency, however wide the
 * core. Two instructions with different latencies, so that a harness error
 * that scales with the count cannot hide:
 *
 *   add $1, r64     1 core cycle on every x86-64 core
 *   imul r64, r64   3 core cycles on Intel since Nehalem and AMD since Zen
 *
 * They are timed by the same FC_DEFINE_TIMERS harness as every method.
 */
#include <string.h>

#include "fastcpu.h"
#include "timing.h"

/*
 * The chain register is an output only ("=r"), yet each instruction also
 * reads it: the compiler neither initialises it nor touches it between
 * copies, so with unroll > 1 the copies form one long dependent chain (the
 * loop runs the same code, hence the same register, every time).
 */
#define FC_CHAIN(insn, n)                                                    \
    do {                                                                     \
        uint64_t acc_;                                                       \
        __asm__ volatile(".rept " #n "\n\t" insn "\n\t.endr" : "=r"(acc_));  \
    } while (0)

/* What each chain is made of, and what each link costs in core cycles. */
#define FC_add_INSN "add $1, %0"
#define FC_add_TEXT "'add $1, r64'"
#define FC_add_LATENCY 1
#define FC_add_LATENCY_TEXT "1"
#define FC_imul_INSN "imul %0, %0"
#define FC_imul_TEXT "'imul r64, r64'"
#define FC_imul_LATENCY 3
#define FC_imul_LATENCY_TEXT "3"

#define FC_CHAIN_CODE(op, n)                                                 \
    FC_DEFINE_TIMERS(op##_chain_##n, FC_CHAIN(FC_##op##_INSN, n))            \
    static uint32_t read_##op##_chain_##n(bool *valid)                       \
    {                                                                        \
        FC_CHAIN(FC_##op##_INSN, n);                                         \
        *valid = true;                                                       \
        return 0;                                                            \
    }

/* Lengths: powers of two from 1 to 1024, and 100 and 300 for the "100
 * cycles and more" checks. */
#define FC_CHAIN_LENGTHS(X, op)                                              \
    X(op, 1) X(op, 2) X(op, 4) X(op, 8) X(op, 16) X(op, 32) X(op, 64)        \
    X(op, 100) X(op, 128) X(op, 256) X(op, 300) X(op, 512) X(op, 1024)

FC_CHAIN_LENGTHS(FC_CHAIN_CODE, add)
FC_CHAIN_LENGTHS(FC_CHAIN_CODE, imul)

#define FC_CALIBRATION(op, n)                                                \
    {{#op "_chain_" #n,                                                      \
      "Calibration: a dependent chain of " #n " " FC_##op##_TEXT ", "        \
      "known to take " #n " x " FC_##op##_LATENCY_TEXT " core cycles.",      \
      FC_NEED_NOTHING, FC_ENC_NONE, false, read_##op##_chain_##n,            \
      FC_TIMERS(op##_chain_##n), NULL, NULL},                                \
     #op, n, FC_##op##_LATENCY},

const struct fc_calibration fc_calibrations[] = {
    FC_CHAIN_LENGTHS(FC_CALIBRATION, add)
    FC_CHAIN_LENGTHS(FC_CALIBRATION, imul)
};

const size_t fc_calibration_count = sizeof fc_calibrations / sizeof fc_calibrations[0];

const struct fc_calibration *fc_calibration_find(const char *name)
{
    for (size_t i = 0; i < fc_calibration_count; i++)
        if (strcmp(fc_calibrations[i].method.name, name) == 0)
            return &fc_calibrations[i];
    return NULL;
}
