/* The bench checks' one way to put the calling thread on a CPU: exits with
 * the error where the CPU is not allowed. Needs _GNU_SOURCE before the
 * first include. */
#ifndef BENCH_PIN_H
#define BENCH_PIN_H
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}
#endif
