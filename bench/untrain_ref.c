/*
 * Zen 1/2's return-thunk sequences, written once more in C as raw bytes,
 * and Intel's call-depth tracking in AT&T assembly, sharing no code with
 * mitbench: what kernel/sequences' rows retbleed-untrain,
 * retbleed-return-thunk, srso-untrain-zen1-2, srso-return-thunk-zen1-2,
 * call-depth-accounting and call-depth-stuffing should read on the same
 * CPU in the same minute.
 *
 * Each sequence is written at the start of a page of its own (as mitbench
 * copies each into a 4 KiB slot), reached by a short jump as the kernel
 * reaches it, its 64-byte alignment as arch/x86/lib/retpoline.S has it:
 *
 *   retbleed-untrain   jmp 0x7f; at 0x7f: f6 | c3 cc | lfence | jmp 0x80
 *                      (from 0x7f: test bl, 0xcc; the `ret` at 0x80)
 *   retbleed-return    jmp 0x40; at 0x40: ret; int3
 *   srso-untrain       jmp 0x7e; at 0x7e: movabs rax, <lea rsp,[rsp+8];
 *                      ret; int3; int3>, lfence, call 0x80, ud2
 *   srso-return        jmp 0x47; at 0x40: lea rsp,[rsp+8]; ret; int3;
 *                      at 0x47: call 0x40; ud2
 *
 * Call-depth tracking (retbleed=stuff) keeps a count the kernel holds per
 * CPU through %gs; here a __thread variable through %fs:
 *
 *   call-depth-accounting  the call thunk before a function (sarq $5 of
 *                          the count) falling into it; its `ret` a jump to
 *                          the return thunk: shlq $5, not zero, ret
 *   call-depth-stuffing    the count zeroed (as after its reset at entry),
 *                          then the return thunk: shlq $5 gives zero, 16
 *                          calls stuff the return stack, the stack pointer
 *                          restored, the count credited (-1), ret
 *
 * These two run from the binary's text, against a `ret` there.
 *
 * Each is called CALLS times a sample at the call site mitbench's harness
 * compiles to (objdump of `Harness::measure` for this probe: `mov
 * (%rbx),%rax; call *(%rax)`, the target read by the call itself),
 * written here in inline assembly so that no compiler picks another; per
 * sequence the median of SAMPLES samples in TSC ticks per call (the
 * lowest of three passes), less the same of a function that only returns:
 * the row's difference from call+ret, read as mitbench reads a round (its
 * median). Beside it, the same called as C compiles a call through a
 * pointer (`mov`, `mov`, `call *%rax`): the sequences whose return
 * mispredicts on purpose (SRSO's) cost about 4 ticks less there on a Zen 3
 * guest (+15.2 against +19.3 for SRSO's return thunk), whatever the
 * layout: the call site is part of what a replay prices.
 *
 * Build and run:   cc -O2 -o untrain_ref bench/untrain_ref.c && ./untrain_ref CPU
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#define CALLS 1000
#define SAMPLES 400
#define PAGE 4096

struct sequence {
    const char *name;
    unsigned offset; /* where its bytes go in its page */
    unsigned char bytes[24];
    unsigned len;
};

/* Each page starts with `jmp rel8` to its sequence; the bytes follow. */
static const struct sequence SEQUENCES[] = {
    {"call+ret", 0x00, {0xc3}, 1},
    {"retbleed-untrain", 0x7f, {0xf6, 0xc3, 0xcc, 0x0f, 0xae, 0xe8, 0xeb, 0xf9, 0xcc}, 9},
    {"retbleed-return-thunk", 0x40, {0xc3, 0xcc}, 2},
    {"srso-untrain-zen1-2", 0x7e,
     {0x48, 0xb8, 0x48, 0x8d, 0x64, 0x24, 0x08, 0xc3, 0xcc, 0xcc, 0x0f, 0xae, 0xe8, 0xe8, 0xf0,
      0xff, 0xff, 0xff, 0x0f, 0x0b},
     20},
    {"srso-return-thunk-zen1-2", 0x40,
     {0x48, 0x8d, 0x64, 0x24, 0x08, 0xc3, 0xcc, 0xe8, 0xf4, 0xff, 0xff, 0xff, 0x0f, 0x0b}, 14},
};
#define N (sizeof SEQUENCES / sizeof SEQUENCES[0])

__thread uint64_t depth_count;

void plain_return(void);
void counted_call(void);
void underflowing_return(void);

/* The return thunk, once after each entry, as each of mitbench's copies
 * carries its own. */
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

/* Where the page's first jump lands: the sequence's entry. */
static unsigned entry(const struct sequence *s) {
    if (strcmp(s->name, "srso-return-thunk-zen1-2") == 0)
        return 0x47; /* the `call` after the safe return */
    return s->offset;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Where a sequence is called from. */
enum call_site { HARNESS, REGISTER };

/* CALLS calls of f at the harness's call site: the loop's instructions
 * as the release build of mitbench has them. */
static void call_as_harness(void (*f)(void)) {
    void (*cell)(void) = f;
    void (**through)(void) = &cell;
    long n = CALLS;
    __asm__ volatile("1: mov (%%rbx), %%rax\n"
                     "   call *(%%rax)\n"
                     "   dec %0\n"
                     "   jne 1b\n"
                     : "+r"(n)
                     : "b"(&through)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory",
                       "cc");
}

/* The median of f's samples, ticks per call, from `site`. */
static double median_of(void (*f)(void), enum call_site site) {
    static double samples[SAMPLES];
    void (*volatile call)(void) = f;
    void (*volatile *volatile through)(void) = &call;
    for (int s = 0; s < SAMPLES; s++) {
        unsigned aux;
        uint64_t start = __rdtscp(&aux);
        _mm_lfence();
        if (site == HARNESS)
            call_as_harness(f);
        else
            for (int i = 0; i < CALLS; i++)
                (*through)();
        uint64_t end = __rdtscp(&aux);
        _mm_lfence();
        samples[s] = (double)(end - start) / CALLS;
    }
    qsort(samples, SAMPLES, sizeof samples[0], by_value);
    return samples[SAMPLES / 2];
}

/* Pins this thread to `cpu`; 0 on success. */
static int pin(int cpu) {
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    return sched_setaffinity(0, sizeof only, &only);
}

/* The call-depth rows, each the lowest of three passes' medians, against
 * the `ret` beside them in the text. */
static void call_depth_rows(void) {
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
            double t = median_of(rows[i].f, HARNESS);
            if (pass == 0 || t < rows[i].ticks)
                rows[i].ticks = t;
        }
    for (unsigned i = 1; i < 3; i++)
        printf("%-26s %7.2f ticks, %+7.2f over call+ret (%.2f)\n", rows[i].name, rows[i].ticks,
               rows[i].ticks - rows[0].ticks, rows[0].ticks);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: untrain_ref CPU\n");
        return 2;
    }
    if (pin(atoi(argv[1])) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    uint8_t *code = mmap(NULL, N * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset(code, 0xcc, N * PAGE);
    for (unsigned i = 0; i < N; i++) {
        uint8_t *page = code + i * PAGE;
        const struct sequence *s = &SEQUENCES[i];
        if (s->offset > 0) {
            page[0] = 0xeb;
            page[1] = (uint8_t)(entry(s) - 2);
        }
        memcpy(page + s->offset, s->bytes, s->len);
    }
    if (mprotect(code, N * PAGE, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return 1;
    }
    double harness[N], reg[N];
    /* Each in turn, three passes over them, keeping the lowest. */
    for (int pass = 0; pass < 3; pass++)
        for (unsigned i = 0; i < N; i++) {
            void (*f)(void) = (void (*)(void))(code + i * PAGE);
            double t = median_of(f, HARNESS), r = median_of(f, REGISTER);
            if (pass == 0 || t < harness[i])
                harness[i] = t;
            if (pass == 0 || r < reg[i])
                reg[i] = r;
        }
    for (unsigned i = 1; i < N; i++)
        printf("%-26s %7.2f ticks, %+7.2f over call+ret (%.2f); called through a register "
               "%+7.2f\n",
               SEQUENCES[i].name, harness[i], harness[i] - harness[0], harness[0], reg[i] - reg[0]);
    call_depth_rows();
    munmap(code, N * PAGE);
    return 0;
}
