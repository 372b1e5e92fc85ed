/*
 * A minimal, independent reference for mitbench's os/getpid probe: samples
 * of 1,000 getpid calls, raw (the `syscall` instruction: mitbench's
 * `syscall` variant) alternating with glibc's getpid() (its `libc`
 * variant), pinned to one CPU, timed with rdtscp, one pair of samples every
 * millisecond for about 2 s so the machine's states all show. Beside each
 * pair it reads the machine's own speed the way mitbench's reference does
 * (a chain of 4,000 dependent multiply-adds, best of 5). It shares no code
 * with mitbench, so agreement between the two is evidence that mitbench's
 * harness (batching, slope fit, rounds, statistics) adds or removes
 * nothing.
 *
 * The quiet figure is the 2nd percentile of the samples: timing noise only
 * ever adds, and on a guest its host slows now and then. On a guest whose
 * whole CPU speed wanders, that percentile also picks the machine's fastest
 * moments; the samples file (second argument) lets a checker read the loop
 * at a given reference speed instead.
 *
 * Build and run:   cc -O2 -o getpid_ref bench/getpid_ref.c && ./getpid_ref CPU [SAMPLES_FILE]
 * Prints, per route, the quiet figure and the median in TSC ticks per call;
 * SAMPLES_FILE gets one line per pair: reference ticks a step, syscall and
 * libc ticks per call. bench/compare-getpid.sh runs it beside mitbench on
 * the same CPU.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#define CALLS 1000  /* per sample: the 2 TSC reads cost < 0.1 tick per call */
#define SAMPLES 1001

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

static uint64_t chain(uint64_t x, int steps)
{
	for (int i = 0; i < steps; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Ticks a step of the multiply-add chain, best of 5 samples of 4,000. */
static double reference(void)
{
	static uint64_t x = 1;
	double best = 1e30;
	for (int s = 0; s < 5; s++) {
		uint64_t t0 = stamp();
		x = chain(x, 4000);
		double per_step = (double)(stamp() - t0) / 4000;
		if (per_step < best)
			best = per_step;
	}
	return best;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *route, double *per_call)
{
	qsort(per_call, SAMPLES, sizeof per_call[0], cmp);
	printf("%s: quiet %.2f median %.2f ticks per getpid (min %.2f, p99 %.2f; %d samples of %d calls)\n", route,
	       per_call[SAMPLES * 2 / 100], per_call[SAMPLES / 2], per_call[0], per_call[SAMPLES * 99 / 100], SAMPLES,
	       CALLS);
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
	FILE *samples = NULL;
	if (argc > 2 && !(samples = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	static double raw[SAMPLES], libc[SAMPLES];
	for (int i = 0; i < 20000; i++) /* warm-up */
		raw_getpid();
	for (int r = 0; r < SAMPLES; r++) {
		uint64_t t0 = stamp();
		for (int i = 0; i < CALLS; i++)
			raw_getpid();
		uint64_t t1 = stamp();
		for (int i = 0; i < CALLS; i++)
			getpid();
		uint64_t t2 = stamp();
		raw[r] = (double)(t1 - t0) / CALLS;
		libc[r] = (double)(t2 - t1) / CALLS;
		if (samples)
			fprintf(samples, "%.4f %.3f %.3f\n", reference(), raw[r], libc[r]);
		usleep(1000);
	}
	if (samples && fclose(samples) != 0) {
		perror(argv[2]);
		return 1;
	}
	printf("cpu %d\n", cpu);
	report("syscall", raw);
	report("libc", libc);
	return 0;
}
