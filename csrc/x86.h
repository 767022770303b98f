/*
 * x86.h: what the sequences, the models and getcpu.c share about
 * x86-64 Linux: the per-CPU segment, descriptor-table registers, a raw system
 * call.
 */
#ifndef FASTCPU_X86_H
#define FASTCPU_X86_H

#include <errno.h>
#include <stdint.h>

#include "compiler.h"

#pragma GCC visibility push(hidden)

/* The per-CPU GDT entry: GDT_ENTRY_CPUNODE (15) << 3 | RPL 3. Its limit is
 * cpu | node << 12 (Linux arch/x86/include/asm/segment.h). */
#define FC_CPUNODE_SELECTOR 0x7bu

/* A descriptor-table register as SIDT/SGDT store it in 64-bit mode. */
struct __attribute__((packed)) fc_dtr {
    uint16_t limit;
    uint64_t base;
};

/* Raw system call, so the timed code is the instruction itself, not libc's
 * wrapper and its errno handling. */
FC_INLINE long fc_syscall3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The errno a raw system call returned (-errno in -4095..-1), EIO for any
 * other failure. */
FC_INLINE int fc_syscall_errno(long rc)
{
    return rc < 0 && rc > -4096 ? (int)-rc : EIO;
}

#pragma GCC visibility pop

#endif
