/*
 * chains.h: sequences of known cost (chains.c): dependent add and imul
 * chains, each a catalog row.
 */
#ifndef FASTCPU_CHAINS_H
#define FASTCPU_CHAINS_H

#include "catalog.h"

#pragma GCC visibility push(hidden)

/* The chains the catalog lists as chain rows: each op at each length
 * (powers of two from 1 to 1024, and 100 and 300 for the "100 core cycles and
 * more" checks), with what it is made of and what each link costs. */
#define FC_CHAIN_LENGTHS(X, op)                                              \
    X(op, 1) X(op, 2) X(op, 4) X(op, 8) X(op, 16) X(op, 32) X(op, 64)        \
    X(op, 100) X(op, 128) X(op, 256) X(op, 300) X(op, 512) X(op, 1024)
#define FC_CHAINS(X) FC_CHAIN_LENGTHS(X, add) FC_CHAIN_LENGTHS(X, imul)

#define FC_add_TEXT "'add r64, r64'"
#define FC_add_LATENCY 1
#define FC_add_LATENCY_TEXT "1"
#define FC_imul_TEXT "'imul r64, r64'"
#define FC_imul_LATENCY 3
#define FC_imul_LATENCY_TEXT "3"

#define FC_DECLARE_CHAIN(op, n) FC_DECLARE_MODEL(op##_chain_##n)
FC_CHAINS(FC_DECLARE_CHAIN)

#pragma GCC visibility pop

#endif
