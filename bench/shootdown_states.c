/*
 * The two host states of a remote TLB shootdown on a guest, read with no
 * mitbench code: a spinner thread on CPU 0 (a thread of this process,
 * so every flush must reach it) times its own progress, and the measuring
 * thread on CPU 1 toggles one page between read-only and read-write with
 * mprotect, ROUND_CALLS calls a round.
 *
 * Per round it prints the median call (ns), the spinner's longest gap and
 * the share of the round it spent in gaps of at least 100 us (its vCPU
 * descheduled by the host: a paravirtual flush then skips the IPI, and
 * the call is cheaper), and the median cache-line round trip between the
 * two threads just before the round (where the host placed the two vCPUs:
 * near or far cores price the IPI differently).
 *
 * mitbench's memory/shootdown classes a round as `partner-away` when its
 * spinner was stalled for more than 10% of it; this loop is what that
 * rule was read from.
 *
 * Build and run:   cc -O2 -pthread -o shootdown_states bench/shootdown_states.c
 *                  ./shootdown_states [ROUNDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

#include "pin.h"

enum { ROUND_CALLS = 2000, TRIPS = 51, STALL_US = 100 };

static volatile int stop, reset;
static volatile uint64_t longest_gap, stalled, stall_ticks;
static volatile int flag;

static void *spinner(void *unused)
{
	(void)unused;
	pin(0);
	uint64_t last = __rdtsc();
	while (!stop) {
		uint64_t now = __rdtsc(), gap = now - last;
		last = now;
		if (reset) {
			longest_gap = stalled = 0;
			reset = 0;
		}
		if (gap > longest_gap)
			longest_gap = gap;
		if (gap >= stall_ticks)
			stalled += gap;
		if (flag == 1)
			flag = 2;
	}
	return NULL;
}

static int ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double ticks_per_ns(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	uint64_t t0 = __rdtsc();
	double ns;
	do {
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	} while (ns < 2e7);
	return (__rdtsc() - t0) / ns;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	double tpn = ticks_per_ns();
	stall_ticks = (uint64_t)(STALL_US * 1000 * tpn);
	pin(1);
	pthread_t thread;
	pthread_create(&thread, NULL, spinner, NULL);
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	page[0] = 1;
	static double calls[ROUND_CALLS];
	double trips[TRIPS];
	printf("round  median_ns  spinner_longest_gap_us  stalled_pct  round_trip_ns\n");
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < TRIPS; i++) {
			uint64_t t0 = __rdtsc();
			flag = 1;
			while (flag != 2)
				;
			trips[i] = (__rdtsc() - t0) / tpn;
			flag = 0;
		}
		qsort(trips, TRIPS, sizeof trips[0], ascending);
		reset = 1;
		while (reset)
			;
		uint64_t start = __rdtsc();
		for (int i = 0; i < ROUND_CALLS; i++) {
			int prot = i & 1 ? PROT_READ : PROT_READ | PROT_WRITE;
			uint64_t t0 = __rdtsc();
			if (mprotect(page, 4096, prot)) {
				perror("mprotect");
				return 1;
			}
			calls[i] = (__rdtsc() - t0) / tpn;
		}
		uint64_t span = __rdtsc() - start;
		qsort(calls, ROUND_CALLS, sizeof calls[0], ascending);
		printf("%5d  %9.0f  %22.1f  %11.1f  %13.0f\n", r,
		       calls[ROUND_CALLS / 2], longest_gap / tpn / 1e3,
		       100.0 * stalled / span, trips[TRIPS / 2]);
	}
	stop = 1;
	pthread_join(thread, NULL);
	munmap(page, 4096);
	return 0;
}
