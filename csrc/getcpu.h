/*
 * getcpu.h: fastcpu.getcpu() (getcpu.c): the fastest way of reading the
 * CPU proven right here, chosen once, and its inline fast path.
 */
#ifndef FASTCPU_GETCPU_H
#define FASTCPU_GETCPU_H

#include <stdint.h>

#include "fastcpu_getcpu.h"

#pragma GCC visibility push(hidden)

enum fc_getcpu_way {
    FC_GETCPU_UNCHOSEN = 0,
    FC_GETCPU_RSEQ,    /* cpu_id (node_id where covered); per call: < 0 falls back */
    FC_GETCPU_RDPID,   /* TSC_AUX: cpu | node << 12 */
    FC_GETCPU_VDSO,    /* __vdso_getcpu */
    FC_GETCPU_SYSCALL, /* the kernel's own answer, when the call succeeds */
    FC_GETCPU_NONE,    /* nothing could be verified: fc_getcpu_why() says why */
};

/* What fc_getcpu_by() returns for FC_GETCPU_NONE, negated: outside the
 * errno range, so it is told apart from a failing vDSO or system call. */
#define FC_GETCPU_ENONE 4096

/* Chosen once by fc_getcpu_choose(); read without a lock afterwards. */
extern enum fc_getcpu_way fc_getcpu_way, fc_getcpu_node_way, fc_getcpu_fallback_way;

/* Choose (once, thread-safe; may take milliseconds: it pins a helper thread
 * to each CPU of the caller's affinity mask, and to no other) the fastest way that reads the pinned CPU on each
 * CPU (and the node the system call, else sysfs, gives), for the cpu alone
 * and for cpu and node. A way whose own call fails (the system call denied
 * by seccomp, say) is not chosen; where nothing is verified the way is
 * FC_GETCPU_NONE. A child forked while another thread chooses chooses
 * again (fork.c registers the handler). */
void fc_getcpu_choose(void);
/* For fork.c: a choice another thread had not finished is made again. */
void fc_getcpu_after_fork_in_child(void);
const char *fc_getcpu_way_name(enum fc_getcpu_way way);

enum fc_getcpu_why { FC_WHY_CPU, FC_WHY_NODE, FC_WHY_FALLBACK };
/* Why that way is FC_GETCPU_NONE (valid once chosen). */
const char *fc_getcpu_why(enum fc_getcpu_why which);

/* One read by `way` (not UNCHOSEN); *node may be NULL. Returns the CPU, or a
 * negative errno when the vDSO or the system call failed, or
 * -FC_GETCPU_ENONE for FC_GETCPU_NONE (rseq falls back to
 * fc_getcpu_fallback_way on a thread without a registered area). */
int fc_getcpu_by(enum fc_getcpu_way way, unsigned *node);

static inline int fc_getcpu_fast(void)
{
    enum fc_getcpu_way way = __atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE);
    if (__builtin_expect(way == FC_GETCPU_RSEQ, 1)) {
        int cpu = fastcpu_rseq_getcpu();
        if (__builtin_expect(cpu >= 0, 1))
            return cpu;
        return fc_getcpu_by(fc_getcpu_fallback_way, NULL);
    }
    if (way == FC_GETCPU_RDPID) /* verified: no need to ask CPUID again */
        return (int)(fastcpu_rdpid_raw() & 0xfffu);
    if (way == FC_GETCPU_UNCHOSEN)
        fc_getcpu_choose();
    return fc_getcpu_by(__atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE), NULL);
}

/* The same for cpu and node, by fc_getcpu_node_way (chosen already). */
static inline int fc_getcpu_node_fast(unsigned *node)
{
    if (__builtin_expect(fc_getcpu_node_way == FC_GETCPU_RDPID, 1)) {
        uint64_t aux = fastcpu_rdpid_raw(); /* inline: the common case on current x86 */
        *node = (unsigned)aux >> 12;
        return (int)(aux & 0xfffu);
    }
    return fc_getcpu_by(fc_getcpu_node_way, node);
}

#pragma GCC visibility pop

#endif
