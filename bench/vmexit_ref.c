/*
 * A minimal, independent reference for mitbench's guest/exit probe: 4,000
 * samples of 100 CPUIDs (leaf 0, which every hypervisor intercepts: one VM
 * exit each on a guest) and of 100 LFENCEs (which stay in the guest),
 * timed with rdtscp, TSC ticks per instruction at the 2nd and 50th
 * percentile. It shares no code with mitbench. Run it pinned to the CPU
 * mitbench measures on, just before `mitbench run --probe guest --cpu N`:
 *
 *   cc -O2 -o vmexit_ref bench/vmexit_ref.c && taskset -c 1 ./vmexit_ref
 *
 * The 2nd percentile is the quiet level's figure on a host slow part of
 * the time; on 2026-12-07 (a Zen 3 KVM guest) it read 2,465-2,500 ticks
 * where mitbench's row read 2,502-2,558 (docs/the-guest-boundary.md).
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

enum { SAMPLES = 4000, EACH = 100 };

static int ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	static double exits[SAMPLES], fences[SAMPLES];
	unsigned aux;
	for (int s = 0; s < SAMPLES; s++) {
		unsigned a, b, c, d;
		uint64_t t0 = __rdtscp(&aux);
		for (int i = 0; i < EACH; i++) {
			__cpuid(0, a, b, c, d);
			__asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d));
		}
		uint64_t t1 = __rdtscp(&aux);
		for (int i = 0; i < EACH; i++)
			__asm__ volatile("lfence" : : : "memory");
		uint64_t t2 = __rdtscp(&aux);
		exits[s] = (double)(t1 - t0) / EACH;
		fences[s] = (double)(t2 - t1) / EACH;
	}
	qsort(exits, SAMPLES, sizeof exits[0], ascending);
	qsort(fences, SAMPLES, sizeof fences[0], ascending);
	printf("cpuid  p2 %.0f p50 %.0f ticks\nlfence p2 %.1f p50 %.1f ticks\n",
	       exits[SAMPLES / 50], exits[SAMPLES / 2], fences[SAMPLES / 50], fences[SAMPLES / 2]);
	return 0;
}
