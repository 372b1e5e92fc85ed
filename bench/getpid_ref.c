/*
 * A minimal, independent reference for mitbench's os/getpid probe: a tight
 * loop of raw getpid syscalls (the `syscall` instruction, no libc wrapper, no
 * vDSO), pinned to one CPU and timed with rdtscp. It shares no code with
 * mitbench, so agreement between the two is evidence that mitbench's
 * harness (batching, slope fit, statistics) adds or removes nothing.
 *
 * Build and run:   cc -O2 -o getpid_ref bench/getpid_ref.c && ./getpid_ref CPU
 * Prints the median over ROUNDS rounds of CALLS calls, in TSC ticks per call.
 * bench/compare-getpid.sh runs it beside mitbench on the same CPU.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#define CALLS 1000  /* per round: the 2 TSC reads cost < 0.1 tick per call */
#define ROUNDS 2001

static inline uint64_t stamp(void)
{
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);
	_mm_lfence();
	return t;
}

static inline long raw_getpid(void)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_getpid) : "rcx", "r11", "memory");
	return ret;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int cpu = argc > 1 ? atoi(argv[1]) : 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("sched_setaffinity");
		return 1;
	}
	static double per_call[ROUNDS];
	for (int i = 0; i < 20000; i++) /* warm-up */
		raw_getpid();
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = stamp();
		for (int i = 0; i < CALLS; i++)
			raw_getpid();
		uint64_t t1 = stamp();
		per_call[r] = (double)(t1 - t0) / CALLS;
	}
	qsort(per_call, ROUNDS, sizeof per_call[0], cmp);
	printf("cpu %d: median %.2f ticks per getpid (min %.2f, p99 %.2f; %d rounds of %d calls)\n", cpu,
	       per_call[ROUNDS / 2], per_call[0], per_call[ROUNDS * 99 / 100], ROUNDS, CALLS);
	return 0;
}
