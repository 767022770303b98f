/*
 * pmu.c: the core-cycle counter behind counter='pmu'. Where the kernel and the
 * CPU allow it, a perf event counting CPU cycles for the calling thread is
 * opened and its mmap page read, so the timers of timing.h can read the
 * counter with rdpmc from user space, as they read the TSC with rdtsc.
 *
 * Linux lets a process use rdpmc once it has mmapped a perf event whose page
 * says cap_user_rdpmc (sysfs .../cpu/rdpmc = 1, the default); the page also
 * gives the hardware counter's number (index - 1) and its width. Each thread
 * needs its own event: the counter counts the thread that opened it.
 *
 * The event is pinned: it never shares a counter by multiplexing. Between
 * chunks of runs fc_pmu_check() makes sure the counter stayed where the
 * timers read it. A forked child inherits this thread's state but not the
 * mapping (the kernel maps the page VM_DONTCOPY), so the state remembers the
 * process it belongs to and a child opens its own event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmu.h"

_Thread_local uint32_t fc_pmu_counter;

struct pmu_thread {
    int fd;
    struct perf_event_mmap_page *page;
    size_t page_size;
    enum fc_pmu_scope scope;
    pid_t pid; /* the process that mapped the page */
    /* the page at the last fc_pmu_refresh(), for fc_pmu_check() */
    uint32_t index;
    uint64_t not_running; /* time_enabled - time_running, ns */
};

static _Thread_local struct pmu_thread pmu = {.fd = -1};
static _Thread_local char why_buf[192];
static pthread_key_t close_key;
static pthread_once_t close_key_once = PTHREAD_ONCE_INIT;

/* Close a thread's event when the thread exits, or a parent's state that a
 * forked child inherited: there the page is not mapped (its address may
 * hold something else by now), only the descriptor is the child's. */
static void close_thread_event(void *arg)
{
    struct pmu_thread *t = arg;
    if (t->page && t->pid == getpid())
        munmap(t->page, t->page_size);
    if (t->fd >= 0)
        close(t->fd);
    t->page = NULL;
    t->fd = -1;
}

/* This thread's open event, or NULL (never opened, or opened by the parent
 * of this forked process). */
static struct perf_event_mmap_page *own_page(void)
{
    if (pmu.page && pmu.pid != getpid())
        close_thread_event(&pmu);
    return pmu.page;
}

/* FC_ENV_PMU_SOFTWARE, a private test hook (environment, read at open):
 * open a software task-clock event instead of the cycle counter, so the
 * tests can walk the open and fork paths on a machine without a PMU. Its
 * page grants no rdpmc and has index 0, so nothing is ever timed with it. */

static void make_close_key(void) { pthread_key_create(&close_key, close_thread_event); }

static int open_cycles(int exclude_kernel)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    const char *software = getenv(FC_ENV_PMU_SOFTWARE);
    bool test_hook = software && *software;
    attr.type = test_hook ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = test_hook ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = (unsigned)exclude_kernel;
    attr.exclude_hv = 1;
    /* always on its counter while the thread runs: never multiplexed with
     * other events (where it cannot be, it stops counting instead, which
     * fc_pmu_check() sees) */
    attr.pinned = 1;
    /* this thread, any CPU, no group */
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *open_failure(int err)
{
    switch (err) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        snprintf(why_buf, sizeof why_buf,
                 "perf_event_open found no hardware cycle counter (%s): no PMU, "
                 "or a hypervisor that exposes none",
                 err == ENOENT ? "ENOENT" : err == ENODEV ? "ENODEV" : "EOPNOTSUPP");
        return why_buf;
    case EACCES:
    case EPERM:
        return "perf_event_open refused to count cycles (see "
               "/proc/sys/kernel/perf_event_paranoid, or a seccomp filter)";
    case ENOSYS:
        return "this kernel has no perf_event_open";
    default:
        snprintf(why_buf, sizeof why_buf, "perf_event_open failed: %s", strerror(err));
        return why_buf;
    }
}

/* The counter's number and how long the event was enabled but off the
 * counter, read consistently: the kernel updates the page under a sequence
 * count. */
static void read_page(uint32_t *index, uint64_t *not_running)
{
    volatile struct perf_event_mmap_page *pg = pmu.page;
    uint32_t seq;
    do {
        seq = pg->lock;
        __asm__ volatile("" ::: "memory");
        *index = pg->index;
        *not_running = pg->time_enabled - pg->time_running;
        __asm__ volatile("" ::: "memory");
    } while (pg->lock != seq);
}

int fc_pmu_refresh(const char **why)
{
    if (!own_page()) {
        *why = "this thread has no cycle counter open (or it was opened before a fork)";
        return -1;
    }
    read_page(&pmu.index, &pmu.not_running);
    if (pmu.index == 0) {
        *why = "the cycle event is not on a hardware counter now (mmap page "
               "index 0): another user of the PMU may hold the counters";
        return -1;
    }
    fc_pmu_counter = pmu.index - 1;
    return 0;
}

int fc_pmu_check(const char **why)
{
    if (!own_page()) {
        *why = "this thread has no cycle counter open";
        return -1;
    }
    uint32_t index;
    uint64_t not_running;
    read_page(&index, &not_running);
    if (index != pmu.index) {
        *why = "the kernel moved the cycle event to another hardware counter "
               "while the runs read the old one";
        return -1;
    }
    if (not_running != pmu.not_running) {
        *why = "the cycle event was off its counter for part of the runs "
               "(time_enabled grew past time_running)";
        return -1;
    }
    /* The same counter throughout: a context switch in between stops and
     * restarts it where it was, so the raw deltas stay this thread's. */
    return 0;
}

int fc_pmu_open(enum fc_pmu_scope *scope, const char **why)
{
    if (own_page()) {
        *scope = pmu.scope;
        return fc_pmu_refresh(why);
    }
    enum fc_pmu_scope s = FC_PMU_ALL;
    int fd = open_cycles(0);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        s = FC_PMU_USER_ONLY; /* perf_event_paranoid >= 2 */
        fd = open_cycles(1);
    }
    if (fd < 0) {
        *why = open_failure(errno);
        return -1;
    }
    size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
    void *page = mmap(NULL, page_size, PROT_READ, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) {
        snprintf(why_buf, sizeof why_buf, "mmap of the perf event page failed: %s",
                 strerror(errno));
        close(fd);
        *why = why_buf;
        return -1;
    }
    struct perf_event_mmap_page *pg = page;
    const char *software = getenv(FC_ENV_PMU_SOFTWARE);
    if (!pg->cap_user_rdpmc && !(software && *software)) {
        munmap(page, page_size);
        close(fd);
        *why = "the kernel does not let user space read the counter with rdpmc "
               "(cap_user_rdpmc is 0; see /sys/bus/event_source/devices/cpu/rdpmc)";
        return -1;
    }
    pmu.fd = fd;
    pmu.page = pg;
    pmu.page_size = page_size;
    pmu.scope = s;
    pmu.pid = getpid();
    pthread_once(&close_key_once, make_close_key);
    pthread_setspecific(close_key, &pmu);
    if (fc_pmu_refresh(why) < 0)
        return -1;
    *scope = s;
    return 0;
}

uint64_t fc_pmu_mask(void)
{
    uint16_t width = own_page() ? pmu.page->pmc_width : 0;
    return width == 0 || width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}
