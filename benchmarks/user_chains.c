/*
 * user_chains.c: the known-cost chains as a user would hand them to
 * fastcpu.bench(): plain functions `unsigned fn(void)` in a shared library
 * of their own, built by the tests and by benchmarks/accuracy.py with
 *
 *     cc -O2 -shared -fPIC -o libuserchains.so benchmarks/user_chains.c
 *
 * and loaded with ctypes. user_add_chain_N runs N dependent `add r64, r64`
 * (N core cycles; not `add $1`, which Intel cores since Golden Cove fold at
 * rename), user_imul_chain_N N dependent `imul r64, r64` (3N core
 * cycles), both in rax, the return register, so the body is the chain and a
 * ret. Lengths as in csrc/chains.c.
 */
#include <stdint.h>

#define CHAIN(op, insn, n)                                                   \
    unsigned user_##op##_chain_##n(void)                                     \
    {                                                                        \
        uint64_t acc;                                                        \
        __asm__ volatile(".rept " #n "\n\t" insn "\n\t.endr" : "=a"(acc));   \
        return (unsigned)acc;                                                \
    }

#define LENGTHS(X, op, insn)                                                 \
    X(op, insn, 1) X(op, insn, 2) X(op, insn, 4) X(op, insn, 8)              \
    X(op, insn, 16) X(op, insn, 32) X(op, insn, 64) X(op, insn, 100)         \
    X(op, insn, 128) X(op, insn, 256) X(op, insn, 300) X(op, insn, 512)      \
    X(op, insn, 1024)

LENGTHS(CHAIN, add, "add %0, %0")
LENGTHS(CHAIN, imul, "imul %0, %0")
