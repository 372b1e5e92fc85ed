/*
 * Intel's call-depth tracking (retbleed=stuff), written once more in C and
 * AT&T assembly, sharing no code with mitbench: what kernel/sequences'
 * rows call-depth-accounting and call-depth-stuffing should read on the
 * same CPU in the same minute.
 *
 *   call-depth-accounting   the call thunk before a function (sarq $5 of
 *                           the count) falling into it; the function's
 *                           `ret` a jump to the return thunk: shlq $5 of
 *                           the count, not zero, ret
 *   call-depth-stuffing     the count zeroed (as after its reset at entry),
 *                           then the return thunk: shlq $5 gives zero, 16
 *                           calls stuff the return stack, the stack pointer
 *                           restored, the count credited (-1), ret
 *
 * The kernel keeps the count per CPU through %gs; here it is a __thread
 * variable through %fs (initial-exec offset from the thread pointer).
 * Each is called CALLS times a sample through two dependent loads, as
 * mitbench's harness calls an item; per sequence the median of SAMPLES
 * samples in TSC ticks per call (the lowest of three passes), less the
 * same of a function that only returns.
 *
 * Build and run:   cc -O2 -o call_depth_ref bench/call_depth_ref.c && ./call_depth_ref CPU
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#define CALLS 1000
#define SAMPLES 400

__thread uint64_t depth_count;

void plain_return(void);
void counted_call(void);
void underflowing_return(void);

/* The return thunk is written twice, once after each entry, as each of
 * mitbench's copies carries its own. */
#define RETURN_THUNK(label)                                                  \
    "  .balign 64, 0xcc\n" label ":\n"                                       \
    "  shlq $5, %fs:depth_count@tpoff\n"                                     \
    "  jz 1f\n"                                                              \
    "  ret\n"                                                                \
    "  int3\n"                                                               \
    "1:\n"                                                                   \
    "  .rept 16\n"                                                           \
    "  call 2f\n"                                                            \
    "  int3\n"                                                               \
    "2:\n"                                                                   \
    "  .endr\n"                                                              \
    "  addq $128, %rsp\n"                                                    \
    "  movq $-1, %fs:depth_count@tpoff\n"                                    \
    "  ret\n"                                                                \
    "  int3\n"

__asm__(".text\n"
        "  .balign 64\n"
        "plain_return:\n"
        "  ret\n"
        "  .balign 64, 0xcc\n"
        "counted_call:\n"
        "  sarq $5, %fs:depth_count@tpoff\n"
        "  jmp counted_call_return\n" RETURN_THUNK("counted_call_return")
        "  .balign 64, 0xcc\n"
        "underflowing_return:\n"
        "  movq $0, %fs:depth_count@tpoff\n"
        "  jmp underflowing_return_thunk\n" RETURN_THUNK("underflowing_return_thunk"));

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(void (*f)(void)) {
    static double samples[SAMPLES];
    void (*volatile call)(void) = f;
    void (*volatile *volatile through)(void) = &call;
    for (int s = 0; s < SAMPLES; s++) {
        unsigned aux;
        uint64_t start = __rdtscp(&aux);
        for (int i = 0; i < CALLS; i++)
            (*through)();
        uint64_t end = __rdtscp(&aux);
        samples[s] = (double)(end - start) / CALLS;
    }
    qsort(samples, SAMPLES, sizeof samples[0], by_value);
    return samples[SAMPLES / 2];
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: call_depth_ref CPU\n");
        return 2;
    }
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(atoi(argv[1]), &only);
    if (sched_setaffinity(0, sizeof only, &only) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    struct {
        const char *name;
        void (*f)(void);
        double ticks;
    } rows[] = {
        {"call+ret", plain_return, 0},
        {"call-depth-accounting", counted_call, 0},
        {"call-depth-stuffing", underflowing_return, 0},
    };
    depth_count = (uint64_t)-1; /* credited, as the kernel's at a start */
    for (int pass = 0; pass < 3; pass++)
        for (unsigned i = 0; i < 3; i++) {
            double t = median_of(rows[i].f);
            if (pass == 0 || t < rows[i].ticks)
                rows[i].ticks = t;
        }
    for (unsigned i = 1; i < 3; i++)
        printf("%-26s %7.2f ticks, %+7.2f over call+ret (%.2f)\n", rows[i].name, rows[i].ticks,
               rows[i].ticks - rows[0].ticks, rows[0].ticks);
    return 0;
}
