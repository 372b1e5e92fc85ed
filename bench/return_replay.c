/*
 * User-mode replays of the candidate causes of the return toll that
 * os/syscall-return measures, timed as the probe times a syscall: the same
 * work inline in the loop and inside a noinline function, whose return
 * comes right after it. The extra of the function over inline is what the
 * work costs the return after it, as the toll is what a crossing costs it.
 *
 * The candidates, each what a kernel path could leave in the
 * return-address predictor:
 *   plain       nothing (an empty function: a call and a return);
 *   stale       one entry the kernel pushed and never popped. With SRSO's
 *               safe-RET every kernel return is `call srso_safe_ret`, which
 *               drops its own return address and returns to the real one:
 *               each kernel call leaves its entry behind. Replayed by a jmp
 *               to a `call` that ends a page whose next page is PROT_NONE
 *               (a target the fetch cannot read, as kernel text is to user
 *               mode); its callee drops the return address and jumps back;
 *   stale x4    four such entries, as a kernel path of four calls leaves;
 *   fill        the kernel's return-stack filling (__FILL_RETURN_BUFFER):
 *               32 calls whose entries point at int3 traps, the stack put
 *               back, so every entry the predictor holds is wrong;
 *   overflow    a balanced chain of 40 calls and returns, deeper than the
 *               predictor: the entry of the function's own caller is gone.
 * Per candidate, the 2nd percentile of 300 samples of 1,000 items, inline
 * and in a function, in TSC ticks per item, and the extra.
 *
 * Build and run:   cc -O2 -o return_replay bench/return_replay.c && ./return_replay CPU
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#define CALLS 1000
#define SAMPLES 300
#define PAGE 4096

/* The `call` that ends the executable page. */
static uint8_t *site;

#define ALWAYS static inline __attribute__((always_inline))

ALWAYS void plain(void) { __asm__ volatile("" ::: "memory"); }

/* jmp to the call site; its callee drops the return address and jumps back
 * here through r11. */
ALWAYS void stale(void) {
    __asm__ volatile("lea 1f(%%rip), %%r11\n\t"
                     "jmp *%0\n\t"
                     "1:"
                     :
                     : "r"(site)
                     : "r11", "memory");
}

ALWAYS void stale4(void) {
    for (int i = 0; i < 4; i++)
        stale();
}

/* 32 entries at int3 traps, two calls a turn, then the stack put back. */
ALWAYS void fill(void) {
    __asm__ volatile("mov $16, %%ecx\n\t"
                     "1: call 2f\n\t"
                     "int3\n\t"
                     "2: call 3f\n\t"
                     "int3\n\t"
                     "3: dec %%ecx\n\t"
                     "jnz 1b\n\t"
                     "add $256, %%rsp"
                     :
                     :
                     : "rcx", "memory", "cc");
}

__attribute__((noinline)) static int chain(int depth) {
    if (depth == 0)
        return 0;
    int below = chain(depth - 1);
    __asm__ volatile("" : "+r"(below));
    return below + 1;
}

ALWAYS void overflow(void) {
    int d = chain(40);
    __asm__ volatile("" : : "r"(d));
}

/* The k-th smallest of n samples, by selection (n is small). */
static double kth(double *v, int n, int k) {
    for (int i = 0; i <= k; i++)
        for (int j = i + 1; j < n; j++)
            if (v[j] < v[i]) { double t = v[i]; v[i] = v[j]; v[j] = t; }
    return v[k];
}

/* For each candidate: the work inlined in the timed loop, and a noinline
 * function doing it, timed by its own loop. */
#define TIMED(work)                                                         \
    __attribute__((noinline)) static void work##_fn(void) { work(); }       \
    static double work##_time(int in_fn) {                                  \
        static double v[SAMPLES];                                           \
        unsigned aux;                                                       \
        for (int s = 0; s < SAMPLES; s++) {                                 \
            uint64_t t0 = __rdtscp(&aux);                                   \
            if (in_fn)                                                      \
                for (int i = 0; i < CALLS; i++)                             \
                    work##_fn();                                            \
            else                                                            \
                for (int i = 0; i < CALLS; i++)                             \
                    work();                                                 \
            v[s] = (double)(__rdtscp(&aux) - t0) / CALLS;                   \
        }                                                                   \
        return kth(v, SAMPLES, SAMPLES * 2 / 100);                          \
    }

TIMED(plain)
TIMED(stale)
TIMED(stale4)
TIMED(fill)
TIMED(overflow)

int main(int argc, char **argv) {
    int cpu = argc > 1 ? atoi(argv[1]) : 1;
    uint8_t *code = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) { perror("mmap"); return 1; }
    cpu_set_t on;
    CPU_ZERO(&on);
    CPU_SET(cpu, &on);
    if (sched_setaffinity(0, sizeof on, &on)) { perror("pinning"); return 1; }
    memset(code, 0xcc, PAGE); /* int3: where a wrong prediction lands */
    /* The callee at the page's start: add $8,%rsp; jmp *%r11 */
    const uint8_t callee[] = {0x48, 0x83, 0xc4, 0x08, 0x41, 0xff, 0xe3};
    memcpy(code, callee, sizeof callee);
    site = code + PAGE - 5;
    int32_t rel = (int32_t)(code - (site + 5));
    site[0] = 0xe8;
    memcpy(site + 1, &rel, 4);
    if (mprotect(code, PAGE, PROT_READ | PROT_EXEC) || mprotect(code + PAGE, PAGE, PROT_NONE)) {
        perror("mprotect");
        return 1;
    }
    struct { const char *name; double (*time)(int); } each[] = {
        {"plain", plain_time}, {"stale", stale_time},       {"stale x4", stale4_time},
        {"fill", fill_time},   {"overflow", overflow_time},
    };
    printf("%-10s %8s %8s %8s   (TSC ticks per item, 2nd percentile)\n", "candidate", "inline",
           "in-fn", "extra");
    for (unsigned i = 0; i < sizeof each / sizeof each[0]; i++) {
        double inline_ = each[i].time(0), in_fn = each[i].time(1);
        printf("%-10s %8.1f %8.1f %+8.1f\n", each[i].name, inline_, in_fn, in_fn - inline_);
    }
    munmap(code, 2 * PAGE);
    return 0;
}
