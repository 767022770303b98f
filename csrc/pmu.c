/*
 * pmu.c: the core-cycle counter behind clock='pmu'. Where the kernel and the
 * CPU allow it, a perf event counting CPU cycles for the calling thread is
 * opened and its mmap page read, so the timers of timing.h can read the
 * counter with rdpmc from user space, as they read the TSC with rdtsc.
 *
 * Linux lets a process use rdpmc once it has mmapped a perf event whose page
 * says cap_user_rdpmc (sysfs .../cpu/rdpmc = 1, the default); the page also
 * gives the hardware counter's number (index - 1) and its width. Each thread
 * needs its own event: the counter counts the thread that opened it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fastcpu.h"

_Thread_local uint32_t fc_pmu_counter;

struct pmu_thread {
    int fd;
    struct perf_event_mmap_page *page;
    size_t page_size;
    enum fc_pmu_scope scope;
};

static _Thread_local struct pmu_thread pmu = {.fd = -1};
static _Thread_local char why_buf[192];
static pthread_key_t close_key;
static pthread_once_t close_key_once = PTHREAD_ONCE_INIT;

/* Close a thread's event when the thread exits. */
static void close_thread_event(void *arg)
{
    struct pmu_thread *t = arg;
    if (t->page)
        munmap(t->page, t->page_size);
    if (t->fd >= 0)
        close(t->fd);
    t->page = NULL;
    t->fd = -1;
}

static void make_close_key(void) { pthread_key_create(&close_key, close_thread_event); }

static int open_cycles(int exclude_kernel)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = (unsigned)exclude_kernel;
    attr.exclude_hv = 1;
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

int fc_pmu_refresh(const char **why)
{
    volatile struct perf_event_mmap_page *pg = pmu.page;
    uint32_t seq, index;
    /* The kernel updates the page under a sequence count. */
    do {
        seq = pg->lock;
        __asm__ volatile("" ::: "memory");
        index = pg->index;
        __asm__ volatile("" ::: "memory");
    } while (pg->lock != seq);
    if (index == 0) {
        *why = "the cycle event is not on a hardware counter now (mmap page "
               "index 0): another user of the PMU may hold the counters";
        return -1;
    }
    fc_pmu_counter = index - 1;
    return 0;
}

int fc_pmu_open(enum fc_pmu_scope *scope, const char **why)
{
    if (pmu.page) {
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
    if (!pg->cap_user_rdpmc) {
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
    pthread_once(&close_key_once, make_close_key);
    pthread_setspecific(close_key, &pmu);
    if (fc_pmu_refresh(why) < 0)
        return -1;
    *scope = s;
    return 0;
}

uint64_t fc_pmu_mask(void)
{
    uint16_t width = pmu.page ? pmu.page->pmc_width : 0;
    return width == 0 || width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}
