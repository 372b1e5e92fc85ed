/* calls-vs-reference: do calls and returns slow down on this machine while
   mitbench's reference (a dependent multiply-add chain) holds its speed?

   Build: gcc -O2 -o /tmp/calls-vs-reference bench/calls-vs-reference.c
   Run:   /tmp/calls-vs-reference SECONDS [CPU]     (CPU 1 by default)

   Every 50 ms, on one CPU, the best of 5 samples of three loops of 4,000
   steps each, in TSC ticks per step: the reference's chain (the same
   multiply-add as src/measure/harness/reference.rs), a direct call to a function
   that returns, and the same call through a pointer. One line per round:
   seconds, chain, call/chain, indirect call/chain. Where the host slows
   the front end (calls, returns, their predictors) apart from the core's
   arithmetic, the two ratios rise while the chain does not. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

enum { STEPS = 4000, SAMPLES = 5 };

static inline uint64_t start(void) { _mm_lfence(); uint64_t t = __rdtsc(); _mm_lfence(); return t; }
static inline uint64_t stop(void) { unsigned aux; uint64_t t = __rdtscp(&aux); _mm_lfence(); return t; }

__attribute__((noinline)) static uint64_t step(uint64_t x) { __asm__ volatile("" : "+r"(x)); return x + 1; }
static uint64_t (*volatile through)(uint64_t) = step;

static double seconds_since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0;
  int cpu = argc > 2 ? atoi(argv[2]) : 1;
  if (secs <= 0) { fprintf(stderr, "usage: %s SECONDS [CPU]\n", argv[0]); return 2; }
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 2; }
  struct timespec t0; clock_gettime(CLOCK_MONOTONIC, &t0);
  double at;
  while ((at = seconds_since(&t0)) < secs) {
    double best[3] = {1e30, 1e30, 1e30};
    uint64_t x = 1;
    for (int k = 0; k < SAMPLES; k++) {
      uint64_t a = start();
      for (int i = 0; i < STEPS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
      }
      uint64_t b = stop();
      if ((b - a) / (double)STEPS < best[0]) best[0] = (b - a) / (double)STEPS;
      a = start(); for (int i = 0; i < STEPS; i++) x = step(x); b = stop();
      if ((b - a) / (double)STEPS < best[1]) best[1] = (b - a) / (double)STEPS;
      a = start(); for (int i = 0; i < STEPS; i++) x = through(x); b = stop();
      if ((b - a) / (double)STEPS < best[2]) best[2] = (b - a) / (double)STEPS;
    }
    __asm__ volatile("" : : "r"(x));
    printf("%.2f %.4f %.4f %.4f\n", at, best[0], best[1] / best[0], best[2] / best[0]);
    fflush(stdout);
    usleep(50000);
  }
  return 0;
}
