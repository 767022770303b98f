/*
 * models.h: the C models of historical and proposed getcpu() and
 * sched_getcpu() implementations (models.c), each a catalog row.
 */
#ifndef FASTCPU_MODELS_H
#define FASTCPU_MODELS_H

#include "catalog.h"

#pragma GCC visibility push(hidden)

FC_DECLARE_MODEL(vgetcpu26_tscp)
FC_DECLARE_MODEL(vgetcpu26_lsl)
FC_DECLARE_MODEL(vgetcpu26_hit)
FC_DECLARE_MODEL(vgetcpu26_miss)
FC_DECLARE_MODEL(glibc27_sched_getcpu)
FC_DECLARE_MODEL(getcpu_tscp)
FC_DECLARE_MODEL(getcpu_lsl)
FC_DECLARE_MODEL(getcpu_tscp_fp)
FC_DECLARE_MODEL(getcpu_sidt)
FC_DECLARE_MODEL(getcpu_sidt_rz_fp)
FC_DECLARE_MODEL(getcpu_sidt_norz_nofp)
FC_DECLARE_MODEL(getcpu_sidt_norz_fp)
FC_DECLARE_MODEL(getcpu_lsl_rz_fp)
FC_DECLARE_MODEL(getcpu_lsl_norz_nofp)
FC_DECLARE_MODEL(getcpu_lsl_norz_fp)
FC_DECLARE_MODEL(getcpu_cache_hit)
FC_DECLARE_MODEL(sched_getcpu_tscp)
FC_DECLARE_MODEL(sched_getcpu_lsl)
FC_DECLARE_MODEL(sched_getcpu_sidt)
FC_DECLARE_MODEL(sched_getcpu_rseq_inline)

/* The out-of-line model functions themselves (for `fastcpu show`). Their
 * cache argument is the kernel's struct getcpu_cache, of which the models
 * touch the first two words. */
struct fc_getcpu_cache;
FC_HIDDEN long model_vgetcpu26_tscp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN long model_vgetcpu26_lsl(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN int model_glibc27_sched_getcpu(void);
FC_HIDDEN long model_getcpu_tscp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_lsl(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_tscp_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_rz_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_norz_nofp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_norz_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_lsl_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_cache(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN int model_sched_getcpu_tscp(void);
FC_HIDDEN int model_sched_getcpu_lsl(void);
FC_HIDDEN int model_sched_getcpu_sidt(void);

/* Set up what the models read: the pointer glibc 2.7 kept mangled. Called
 * once at module init (module.c). */
void fc_models_init(void);

#pragma GCC visibility pop

#endif
