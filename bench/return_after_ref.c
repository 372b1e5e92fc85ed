/*
 * An independent reference for mitbench's os/syscall-return probe: samples
 * of 1,000 syscalls made inline (the `syscall` instruction in the loop) and
 * from inside a noinline function (the same instruction, then the
 * function's own return), alternating, pinned to one CPU, timed with
 * rdtscp; for getpid, getuid, getppid and close(-1). Per syscall it prints
 * the 2nd percentile of 300 samples of each, in TSC ticks per call, and
 * the extra of the function over inline: the toll the return after the
 * crossing pays. It shares no code with mitbench.
 *
 * Build and run:   cc -O2 -o return_after_ref bench/return_after_ref.c && ./return_after_ref CPU
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#define CALLS 1000
#define SAMPLES 300

static inline long raw(long nr, long arg) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(arg) : "rcx", "r11", "memory");
    return ret;
}

__attribute__((noinline)) static long in_fn(long nr, long arg) { return raw(nr, arg); }

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double p2(double *v) {
    qsort(v, SAMPLES, sizeof *v, cmp);
    return v[SAMPLES * 2 / 100];
}

int main(int argc, char **argv) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(argc > 1 ? atoi(argv[1]) : 1, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
    struct { const char *name; long nr, arg; } calls[] = {
        {"getpid", SYS_getpid, 0}, {"getuid", SYS_getuid, 0},
        {"getppid", SYS_getppid, 0}, {"close(-1)", SYS_close, -1},
    };
    static double inl[SAMPLES], fn[SAMPLES];
    unsigned aux;
    for (unsigned c = 0; c < 4; c++) {
        long nr = calls[c].nr, arg = calls[c].arg;
        for (int s = 0; s < SAMPLES; s++) {
            uint64_t t0 = __rdtscp(&aux);
            for (int i = 0; i < CALLS; i++) raw(nr, arg);
            uint64_t t1 = __rdtscp(&aux);
            for (int i = 0; i < CALLS; i++) in_fn(nr, arg);
            uint64_t t2 = __rdtscp(&aux);
            inl[s] = (double)(t1 - t0) / CALLS;
            fn[s] = (double)(t2 - t1) / CALLS;
        }
        double a = p2(inl), b = p2(fn);
        printf("%-10s inline %7.1f  in a function %7.1f  extra %+6.1f ticks\n", calls[c].name, a, b, b - a);
    }
    return 0;
}
