/* The reference mitbench reads beside every round, written once more in C:
   a chain of dependent 64-bit multiply-adds held in one register, no memory,
   no syscall, no indirect branch. Prints the quiet figure (the 2nd
   percentile of 400 readings, each the best of 5 samples of 4,000 steps),
   in TSC ticks per step, on the CPU given: what mitbench's
   machine_states.reference.ticks should read on the same CPU in the same
   minute.

   usage: reference_ref CPU */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#define STEPS 4000
#define SAMPLES 5
#define READINGS 400

static uint64_t chain(uint64_t x, int steps) {
    for (int i = 0; i < steps; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: reference_ref CPU\n");
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[1]), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    static double readings[READINGS];
    uint64_t x = 1;
    for (int r = 0; r < READINGS; r++) {
        double best = 1e30;
        for (int s = 0; s < SAMPLES; s++) {
            unsigned aux;
            uint64_t start = __rdtscp(&aux);
            x = chain(x, STEPS);
            uint64_t end = __rdtscp(&aux);
            double per_step = (double)(end - start) / STEPS;
            if (per_step < best) best = per_step;
        }
        readings[r] = best;
    }
    qsort(readings, READINGS, sizeof readings[0], by_value);
    printf("reference: quiet %.4f median %.4f ticks a step\n", readings[READINGS / 50],
           readings[READINGS / 2]);
    return x == 42;
}
