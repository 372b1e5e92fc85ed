/*
 * A user-mode replay of one candidate cause of the return toll that
 * os/syscall-return measures: the return-address predictor left holding
 * entries the kernel pushed and never popped. With SRSO's safe-RET every
 * kernel return is `call srso_safe_ret` (which pops its own return address
 * and returns to the real one): the call and the return balance, so each
 * kernel call leaves its entry behind, and the user's first return after
 * the crossing is predicted into kernel text, which user mode cannot
 * fetch.
 *
 * The replay leaves such an entry in user mode: a function jumps (not
 * calls) to a `call` at a chosen address, whose callee drops the return
 * address and jumps back, so the predictor holds an entry for the byte
 * after that `call` and the stack is as before; then the function
 * returns, predicted to that entry. Three places for the `call`:
 *   none      no entry left (a plain call and return);
 *   text      the entry points into executable user text (int3s);
 *   no-exec   the `call` ends its page, the entry points at the next page,
 *             mapped PROT_NONE: a target the fetch cannot read, as kernel
 *             text is to user mode.
 * Per place, the 2nd percentile of 300 samples of 1,000 calls, in TSC
 * ticks per call, and the extra over none.
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

/* Where the `call` sits; 0 leaves no entry. */
static uint8_t *site;

__attribute__((noinline)) static void leave_entry(void) {
    if (!site)
        return;
    /* jmp to the call site; its callee drops the return address and jumps
     * back here through r11. rax, r11 are clobbered. */
    __asm__ volatile("lea 1f(%%rip), %%r11\n\t"
                     "jmp *%0\n\t"
                     "1:"
                     :
                     : "r"(site)
                     : "r11", "memory");
}

/* The k-th smallest of n samples, by selection (n is small). */
static double kth(double *v, int n, int k) {
    for (int i = 0; i <= k; i++)
        for (int j = i + 1; j < n; j++)
            if (v[j] < v[i]) { double t = v[i]; v[i] = v[j]; v[j] = t; }
    return v[k];
}

static double run(uint8_t *where) {
    static double v[SAMPLES];
    unsigned aux;
    site = where;
    for (int s = 0; s < SAMPLES; s++) {
        uint64_t t0 = __rdtscp(&aux);
        for (int i = 0; i < CALLS; i++)
            leave_entry();
        v[s] = (double)(__rdtscp(&aux) - t0) / CALLS;
    }
    return kth(v, SAMPLES, SAMPLES * 2 / 100);
}

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
    /* Two calls to it: one mid-page, one ending the page. */
    uint8_t *mid = code + 2048, *end = code + PAGE - 5;
    for (uint8_t *c = mid; c; c = (c == mid ? end : NULL)) {
        int32_t rel = (int32_t)(code - (c + 5));
        c[0] = 0xe8;
        memcpy(c + 1, &rel, 4);
    }
    if (mprotect(code, PAGE, PROT_READ | PROT_EXEC) || mprotect(code + PAGE, PAGE, PROT_NONE)) {
        perror("mprotect");
        return 1;
    }
    double none = run(NULL), text = run(mid), noexec = run(end);
    printf("none     %7.1f ticks\n", none);
    printf("text     %7.1f ticks (%+.1f)\n", text, text - none);
    printf("no-exec  %7.1f ticks (%+.1f)\n", noexec, noexec - none);
    munmap(code, 2 * PAGE);
    return 0;
}
