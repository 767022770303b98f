/*
 * clock.h: what a TSC tick is worth (clock.c): raw reads, frequency
 * samples, the ruler chains.
 */
#ifndef FASTCPU_CLOCK_H
#define FASTCPU_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

uint64_t fc_rdtsc(void);
/* n unfenced TSC reads into v[], back to back or each after a pseudo-random
 * stretch of work (`spaced`): the raw material of the granularity fit. */
void fc_tsc_reads(uint64_t *v, size_t n, bool spaced);
/* CLOCK_MONOTONIC in ns (Python's time.monotonic_ns). */
uint64_t fc_monotonic_ns(void);
/* A (CLOCK_MONOTONIC_RAW ns, TSC) pair read as close together as possible. */
void fc_tsc_ns_pair(uint64_t *ns, uint64_t *tsc);
/* Instructions per block of a ruler chain (clock.c), unrolled, about 1,000
 * core cycles a block: a block of 100 read register-register adds 0.9%
 * slower than imuls/3 in some processes on an AuthenticAMD family 25 model
 * 17 (Zen 4) guest, and never in others (a cycle per pass of the loop, by
 * where the code landed); 1,000 core cycles leave a tenth of that. The imul
 * chain's blocks are as long in core cycles as the add chain's, so that a
 * ruler point sized in counter steps spends no more on one ruler than on
 * the other (1,000 imuls a block spent half as much again on imuls at a
 * 26-tick step). */
#define FC_RULER_BLOCK 1000
#define FC_RULER_BLOCK_TEXT "1000"
#define FC_IMUL_RULER_BLOCK 333
#define FC_IMUL_RULER_BLOCK_TEXT "333"

/* The chains fastcpu.clock() times: register-register adds (1 core cycle
 * each) and 64-bit imuls (3), the two rulers; adds of an immediate, which
 * some cores fold at rename, a fact about the core, never a ruler. */
enum fc_ruler {
    FC_RULER_ADD = 0,
    FC_RULER_IMUL = 1,
    FC_RULER_IMMEDIATE_ADD = 2,
};
/* TSC ticks for `blocks` blocks of FC_RULER_BLOCK (imuls: FC_IMUL_RULER_BLOCK) dependent `ruler` instructions, fenced. */
uint64_t fc_ruler_ticks(enum fc_ruler ruler, uint32_t blocks);

#pragma GCC visibility pop

#endif
