/*
 * An independent reference for mitbench's os/syscall-return probe: samples
 * of 1,000 syscalls made inline (the `syscall` instruction in the loop),
 * from inside a noinline function (the same instruction, then the
 * function's own return), and from functions that push N return-stack
 * entries after the syscall (N = 2, 4, 16: the refill), beside the pushes
 * alone in a function and an empty function (the refill's own cost), for
 * getpid, getuid, getppid and close(-1). The shapes alternate sample by
 * sample, pinned to one CPU, timed with rdtscp: a slow stretch of the host
 * lifts every shape alike, where timing each shape in a block of its own
 * (../shared/tools/return-refill.c) lets the blocks land on different host
 * levels. It shares no code with mitbench.
 *
 * Per syscall, in TSC ticks per call: the 2nd percentile of 300 samples of
 * each shape; the toll (in-fn - inline), what each refill wins back
 * (in-fn - refill-N) and leaves (refill-N - inline - (pushes-N - empty)),
 * read three ways: as differences of the 2nd percentiles (as the C tool
 * reads them); as the median over the 300 passes (one sample of each
 * shape, in turn) of the differences within each pass; and as that median over the
 * quiet passes only, those whose canary (read before the shapes as
 * mitbench reads its own) lies within 6% of the quiet level: on a busy
 * host the toll has levels, and mitbench reads the quiet one. The quiet
 * level is the third argument (the canary's quiet level on mitbench's
 * machine line, `machine_states.quiet_canary` in its JSON), else the
 * run's own 2nd percentile of the canary, which a run spent all in a slow
 * stretch puts at a slow level.
 *
 * The calls are direct, as the probe's are; `indirect` after the CPU makes
 * them through a function pointer, as the C tool's are.
 *
 * Build and run:   cc -O2 -mno-red-zone -o return_after_ref bench/return_after_ref.c && ./return_after_ref CPU [direct|indirect [QUIET_LEVEL]]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#define CALLS 1000
#define SAMPLES 300

static inline long raw(long nr, long arg) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(arg) : "rcx", "r11", "memory");
    return ret;
}

/* N calls, each to the instruction after it, then the stack put back. */
#define PUSHES(n) \
    __asm__ volatile(".rept " #n "\n\tcall 1f\n\tint3\n1:\n\t.endr\n\tadd $(8*" #n "), %%rsp" ::: "memory")

__attribute__((noinline)) static long in_fn(long nr, long arg) { return raw(nr, arg); }
__attribute__((noinline)) static long empty(long nr, long arg) {
    __asm__ volatile("" ::: "memory");
    return nr + arg;
}
#define REFILL(n)                                                                    \
    __attribute__((noinline)) static long refill_##n(long nr, long arg) {             \
        long r = raw(nr, arg);                                                        \
        PUSHES(n);                                                                    \
        return r;                                                                     \
    }                                                                                 \
    __attribute__((noinline)) static long pushes_##n(long nr, long arg) {             \
        PUSHES(n);                                                                    \
        return nr + arg;                                                              \
    }
REFILL(2)
REFILL(4)
REFILL(16)

enum { INLINE, IN_FN, EMPTY, R2, P2, R4, P4, R16, P16, SHAPES };
static const char *names[SHAPES] = {"inline", "in-fn", "empty", "refill-2", "pushes-2",
                                    "refill-4", "pushes-4", "refill-16", "pushes-16"};

/* One sample of one shape: direct calls, so the loop is what the probe's is. */
#define TIMED(call)                                          \
    do {                                                     \
        uint64_t t0 = __rdtscp(&aux);                        \
        for (int i = 0; i < CALLS; i++) call;                \
        v = (double)(__rdtscp(&aux) - t0) / CALLS;           \
    } while (0)

/* The functions by shape, for calls through a pointer (`indirect`, as the
 * C tool makes them); volatile so the compiler cannot make them direct. */
typedef long (*shape_fn)(long, long);
static shape_fn volatile by_shape[SHAPES] = {
    [IN_FN] = in_fn, [EMPTY] = empty, [R2] = refill_2, [P2] = pushes_2,
    [R4] = refill_4, [P4] = pushes_4, [R16] = refill_16, [P16] = pushes_16,
};
static int indirect;

static double sample(int shape, long nr, long arg) {
    unsigned aux;
    double v = 0;
    if (indirect && shape != INLINE) {
        shape_fn f = by_shape[shape];
        TIMED(f(nr, arg));
        return v;
    }
    switch (shape) {
    case INLINE: TIMED(raw(nr, arg)); break;
    case IN_FN: TIMED(in_fn(nr, arg)); break;
    case EMPTY: TIMED(empty(nr, arg)); break;
    case R2: TIMED(refill_2(nr, arg)); break;
    case P2: TIMED(pushes_2(nr, arg)); break;
    case R4: TIMED(refill_4(nr, arg)); break;
    case P4: TIMED(pushes_4(nr, arg)); break;
    case R16: TIMED(refill_16(nr, arg)); break;
    case P16: TIMED(pushes_16(nr, arg)); break;
    }
    return v;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *v, int q_pct) {
    static double sorted[SAMPLES];
    memcpy(sorted, v, sizeof sorted);
    qsort(sorted, SAMPLES, sizeof *sorted, cmp);
    return sorted[SAMPLES * q_pct / 100];
}

/* A pass is quiet where its canary, read before the shapes as mitbench
 * reads its own (the best of 5 samples of 64 raw getpids, ticks per
 * call), lies within 6% (its quiet band) of the quiet level. */
#define QUIET_BAND 1.06
static double canary[SAMPLES], quiet_level;

static double canary_reading(void) {
    unsigned aux;
    double best = 1e300;
    for (int k = 0; k < 5; k++) {
        uint64_t t0 = __rdtscp(&aux);
        for (int i = 0; i < 64; i++) raw(SYS_getpid, 0);
        double v = (double)(__rdtscp(&aux) - t0) / 64;
        if (v < best) best = v;
    }
    return best;
}

/* A difference of shapes, as +1/-1 weights on each. */
static void report(const char *what, double s[SAMPLES][SHAPES], const double *p2, const int *weight) {
    double of_p2 = 0, within[SAMPLES], quiet[SAMPLES];
    int n_quiet = 0;
    for (int k = 0; k < SHAPES; k++) of_p2 += weight[k] * p2[k];
    for (int n = 0; n < SAMPLES; n++) {
        within[n] = 0;
        for (int k = 0; k < SHAPES; k++) within[n] += weight[k] * s[n][k];
        if (canary[n] <= quiet_level * QUIET_BAND) quiet[n_quiet++] = within[n];
    }
    qsort(quiet, n_quiet, sizeof *quiet, cmp);
    printf("  %-14s %+7.1f of the 2nd percentiles, %+7.1f median within passes, ", what, of_p2,
           quantile(within, 50));
    if (n_quiet) printf("%+7.1f in the %d quiet\n", quiet[n_quiet / 2], n_quiet);
    else printf("no quiet pass\n");
}

int main(int argc, char **argv) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(argc > 1 ? atoi(argv[1]) : 1, &set);
    indirect = argc > 2 && strcmp(argv[2], "indirect") == 0;
    double given_level = argc > 3 ? atof(argv[3]) : 0;
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
    struct { const char *name; long nr, arg; } calls[] = {
        {"getpid", SYS_getpid, 0}, {"getuid", SYS_getuid, 0},
        {"getppid", SYS_getppid, 0}, {"close(-1)", SYS_close, -1},
    };
    static double s[SAMPLES][SHAPES];
    for (unsigned c = 0; c < 4; c++) {
        long nr = calls[c].nr, arg = calls[c].arg;
        for (int n = 0; n < SAMPLES; n++) {
            canary[n] = canary_reading();
            for (int k = 0; k < SHAPES; k++) {
                int shape = (k + n) % SHAPES; /* each shape leads the pass in turn */
                s[n][shape] = sample(shape, nr, arg);
            }
        }
        quiet_level = given_level > 0 ? given_level : quantile(canary, 2);
        double p2[SHAPES], column[SAMPLES];
        printf("%s, 2nd percentile:", calls[c].name);
        for (int k = 0; k < SHAPES; k++) {
            for (int n = 0; n < SAMPLES; n++) column[n] = s[n][k];
            p2[k] = quantile(column, 2);
            printf(" %s %.1f%s", names[k], p2[k], k + 1 < SHAPES ? "," : "\n");
        }
        report("toll", s, p2, (int[SHAPES]){[IN_FN] = 1, [INLINE] = -1});
        int refills[][2] = {{R2, P2}, {R4, P4}, {R16, P16}};
        for (int r = 0; r < 3; r++) {
            int refill = refills[r][0], pushes = refills[r][1];
            char what[32];
            int won[SHAPES] = {0}, left[SHAPES] = {0};
            won[IN_FN] = 1, won[refill] = -1;
            left[refill] = 1, left[INLINE] = -1, left[pushes] = -1, left[EMPTY] = 1;
            snprintf(what, sizeof what, "%s won", names[refill]);
            report(what, s, p2, won);
            snprintf(what, sizeof what, "%s left", names[refill]);
            report(what, s, p2, left);
        }
    }
    return 0;
}
