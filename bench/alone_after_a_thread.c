/*
 * Is a one-page flush "alone" once a thread of the process has run on the
 * other CPU? Read with no mitbench code: the measuring thread on CPU 1
 * times one-page mprotect and munmap (the median of 256 calls a round,
 * in TSC ticks) before any other thread of this process ran, then after a
 * thread ran briefly on CPU 0 and exited, then again after pauses.
 *
 * memory/shootdown's `alone` rows assume no other CPU holds the process's
 * address space. The kernel keeps a CPU the process ran on in the mm's CPU
 * mask after the thread is gone, and a flush may still reach it: on the
 * 2-vCPU Zen 4 guest of 2026-12-04 (kernel 6.18.44) both calls cost about
 * half as much again after the thread, for as long as the process lived.
 * mitbench's worker processes start co-runners and spinners on the other
 * CPU, so its `alone` rows read either state by what ran before them in
 * the same process.
 *
 * Build and run:   cc -O2 -pthread -o alone_after_a_thread bench/alone_after_a_thread.c
 *                  ./alone_after_a_thread [PAUSES]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#include "pin.h"

enum { PAGES = 256, PAGE = 4096 };

static int ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A thread of this process that runs on CPU 0 for about a millisecond. */
static void *visit_cpu0(void *unused)
{
	pin(0);
	for (volatile int i = 0; i < 1000000; i++)
		;
	return unused;
}

/* One round: PAGES faulted-in pages, each toggled once by mprotect, then
 * each unmapped; prints the median tick count of each call. */
static void round_of(const char *when)
{
	static double protect[PAGES], unmap[PAGES];
	char *pages = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (int i = 0; i < PAGES; i++)
		pages[i * PAGE] = 1;
	for (int i = 0; i < PAGES; i++) {
		int prot = i & 1 ? PROT_READ : PROT_READ | PROT_WRITE;
		unsigned long long t0 = __rdtsc();
		if (mprotect(pages, PAGE, prot)) {
			perror("mprotect");
			exit(1);
		}
		protect[i] = __rdtsc() - t0;
	}
	for (int i = 0; i < PAGES; i++) {
		unsigned long long t0 = __rdtsc();
		if (munmap(pages + i * PAGE, PAGE)) {
			perror("munmap");
			exit(1);
		}
		unmap[i] = __rdtsc() - t0;
	}
	qsort(protect, PAGES, sizeof protect[0], ascending);
	qsort(unmap, PAGES, sizeof unmap[0], ascending);
	printf("%-44s %8.0f %8.0f\n", when, protect[PAGES / 2], unmap[PAGES / 2]);
}

int main(int argc, char **argv)
{
	int pauses = argc > 1 ? atoi(argv[1]) : 4;
	pin(1);
	printf("%-44s %8s %8s\n", "median ticks a call", "mprotect", "munmap");
	round_of("no other thread has run");
	round_of("no other thread has run");
	pthread_t thread;
	if (pthread_create(&thread, NULL, visit_cpu0, NULL)) {
		perror("pthread_create");
		return 1;
	}
	pthread_join(thread, NULL);
	round_of("a thread ran on CPU 0 and exited");
	round_of("a thread ran on CPU 0 and exited");
	for (int i = 0; i < pauses; i++) {
		usleep(700000);
		round_of("  0.7 s later");
	}
	return 0;
}
