/*
 * userchains.h: the known-cost chains as out-of-line user functions
 * (userchains.c), for the self-test of the user-function path.
 */
#ifndef FASTCPU_USERCHAINS_H
#define FASTCPU_USERCHAINS_H

#include <stddef.h>
#include <stdint.h>

#include "timers.h"

#pragma GCC visibility push(hidden)

/* One chain compiled as an out-of-line `unsigned fn(void)`, timed through the
 * user-function path; its cost above an empty function is length x latency
 * core cycles. */
struct fc_user_chain {
    const char *name; /* the inline chain of the same body: "add_chain_8"; a
                       * shape's own name where none has it: "shape_mix_16" */
    const char *op;
    uint32_t length;
    uint32_t latency_cycles;
    fc_user_fn fn;
};

extern const struct fc_user_chain fc_user_chains[];
extern const size_t fc_user_chain_count;
/* The other shapes (usershapes.c, a translation unit of its own): their
 * rows in fc_user_chains have an op of their own ("mix", "memory",
 * "branch", "apart", "frame"), no inline chain of the same body, and a cost of
 * length x latency core cycles (latency: per link of the chain). */
unsigned fc_user_shape_mix_16(void);
unsigned fc_user_shape_memory_24(void);
unsigned fc_user_shape_branch_24(void);
unsigned fc_user_shape_apart_48(void);
unsigned fc_user_shape_frame_32(void);
/* A user function of no cost, shaped like the chains: the user path's zero. */
unsigned fc_user_empty(void);

#pragma GCC visibility pop

#endif
