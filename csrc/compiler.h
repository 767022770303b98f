/*
 * compiler.h: the attributes the core's C files share.
 *
 * Every header of the core also wraps its declarations in visibility(hidden):
 * setup.py's -fvisibility=hidden covers definitions only, and under -fPIC a
 * default-visibility global is read through the GOT, an extra dependent load
 * wherever a sequence reads it. PyInit__core, the one export, is marked by
 * PyMODINIT_FUNC.
 */
#ifndef FASTCPU_COMPILER_H
#define FASTCPU_COMPILER_H

#define FC_INLINE static inline __attribute__((always_inline))
/* Keeps GCC's identical-code folding from merging two timers whose code is
 * the same into one function; clang does no such folding (and has no such
 * attribute). */
#if defined(__clang__)
#define FC_NO_ICF
#else
#define FC_NO_ICF __attribute__((no_icf))
#endif

/* A symbol defined in another file of the core, hidden at its declaration
 * too (the models' and chains' readers and timers, named by the catalog). */
#define FC_HIDDEN __attribute__((visibility("hidden")))

#endif
