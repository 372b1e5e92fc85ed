/*
 * Hot-path kernels for the `cflags` probe family. build.rs compiles this
 * file once per hardening flag set, each time with -DMB_PREFIX=<set>_ so
 * every set's functions get their own names and all link into one binary.
 *
 * Each kernel has the shape hardening hits hardest:
 *   pipeline  parse/lookup/rewrite/transmit through function pointers, one
 *             packet at a time (indirect calls: retpolines, CET)
 *   interp    a bytecode interpreter dispatching each instruction through a
 *             handler table (indirect calls and returns: retpolines, return
 *             thunks, SLS, zeroed call-used registers)
 *   format    records formatted into local buffers with memcpy/strcpy
 *             (stack protector, auto-var-init, fortify, stack clash)
 *
 * Every entry point `<prefix>NAME(n)` performs n items and returns a
 * checksum, so the work cannot be optimised away.
 */
#include <stdint.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(MB_PREFIX, name)

/* Hides a value from the optimiser, so calls through a table the compiler
 * could see the contents of stay indirect. */
#define OPAQUE(x) __asm__("" : "+r"(x))

/* ---------------------------------------------------------------- pipeline */

#define RING 256
#define FRAME 64

struct desc {
	uint32_t offset, dst, port;
};

static uint8_t frames[RING * FRAME];
static struct desc descs[RING];
static uint32_t routes[1024];
static uint64_t tx_bytes;
static unsigned cursor;

typedef void (*stage_fn)(struct desc *);

static void parse(struct desc *d)
{
	const uint8_t *f = frames + d->offset;
	d->dst = (f[12] == 0x08 && f[13] == 0x00)
		? (uint32_t)f[30] << 24 | (uint32_t)f[31] << 16 | (uint32_t)f[32] << 8 | f[33]
		: 0;
}

static void lookup(struct desc *d)
{
	d->port = routes[(d->dst * 0x9e3779b1u) >> 22];
}

static void rewrite(struct desc *d)
{
	uint8_t *f = frames + d->offset;
	uint32_t old = (uint32_t)f[22] << 8 | f[23], new, acc;
	uint16_t sum = (uint16_t)(f[24] << 8 | f[25]);
	f[0] = 0x02;
	f[5] = (uint8_t)d->port;
	f[22]--;
	new = (uint32_t)f[22] << 8 | f[23];
	acc = (uint16_t)~sum + (uint16_t)~old + new;
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	sum = (uint16_t)~acc;
	f[24] = (uint8_t)(sum >> 8);
	f[25] = (uint8_t)sum;
}

static void transmit(struct desc *d)
{
	tx_bytes += FRAME + (d->port & 1);
}

static stage_fn stages[4];

void FN(init)(void)
{
	uint32_t x = 0x5eed;
	for (unsigned i = 0; i < RING; i++) {
		uint8_t *f = frames + i * FRAME;
		x = x * 1103515245u + 12345u;
		f[12] = 0x08;
		f[14] = 0x45;
		f[22] = 64;
		f[23] = 17;
		f[30] = (uint8_t)(x >> 24);
		f[31] = (uint8_t)(x >> 16);
		f[32] = (uint8_t)(x >> 8);
		f[33] = (uint8_t)x;
		descs[i].offset = i * FRAME;
	}
	for (unsigned i = 0; i < 1024; i++)
		routes[i] = i % 16;
	stages[0] = parse;
	stages[1] = lookup;
	stages[2] = rewrite;
	stages[3] = transmit;
}

uint64_t FN(pipeline)(uint64_t packets)
{
	while (packets--) {
		struct desc *d = &descs[cursor++ % RING];
		for (int s = 0; s < 4; s++) {
			stage_fn f = stages[s];
			OPAQUE(f);
			f(d);
		}
	}
	return tx_bytes;
}

/* ------------------------------------------------------------------ interp */

enum op { PUSH, ADD, MUL, DUP, SWAP, DEC, JNZ, DROP, NOPS };

struct insn {
	uint8_t op;
	int32_t arg;
};

struct vm {
	int64_t stack[16];
	int sp, pc;
};

typedef void (*handler)(struct vm *, int32_t);

static void op_push(struct vm *vm, int32_t arg) { vm->stack[vm->sp++ & 15] = arg; vm->pc++; }
static void op_add(struct vm *vm, int32_t arg) { (void)arg; vm->sp--; vm->stack[(vm->sp - 1) & 15] += vm->stack[vm->sp & 15]; vm->pc++; }
static void op_mul(struct vm *vm, int32_t arg) { (void)arg; vm->sp--; vm->stack[(vm->sp - 1) & 15] *= vm->stack[vm->sp & 15] | 1; vm->pc++; }
static void op_dup(struct vm *vm, int32_t arg) { (void)arg; vm->stack[vm->sp & 15] = vm->stack[(vm->sp - 1) & 15]; vm->sp++; vm->pc++; }
static void op_swap(struct vm *vm, int32_t arg)
{
	(void)arg;
	int64_t t = vm->stack[(vm->sp - 1) & 15];
	vm->stack[(vm->sp - 1) & 15] = vm->stack[(vm->sp - 2) & 15];
	vm->stack[(vm->sp - 2) & 15] = t;
	vm->pc++;
}
static void op_dec(struct vm *vm, int32_t arg) { (void)arg; vm->stack[(vm->sp - 1) & 15]--; vm->pc++; }
static void op_jnz(struct vm *vm, int32_t arg) { vm->pc = vm->stack[(vm->sp - 1) & 15] ? arg : vm->pc + 1; }
static void op_drop(struct vm *vm, int32_t arg) { (void)arg; vm->sp--; vm->pc++; }

/* acc = 1; for (i = 100; i; i--) acc = acc * 3 + i; then start over. */
static const struct insn program[] = {
	{PUSH, 1}, {PUSH, 100},                        /* acc i */
	{SWAP, 0}, {PUSH, 3}, {MUL, 0}, {SWAP, 0},     /* acc*3 i */
	{DUP, 0}, {SWAP, 0}, {DROP, 0},                /* shuffle, as real code does */
	{SWAP, 0}, {PUSH, 7}, {ADD, 0}, {SWAP, 0},     /* acc*3+7 i */
	{DEC, 0}, {JNZ, 2},                            /* loop while i */
	{DROP, 0}, {DROP, 0}, {PUSH, 0}, {JNZ, 0},     /* reset (falls through) */
};
#define PROGRAM_LEN (int)(sizeof program / sizeof program[0])

static handler handlers[NOPS] = {op_push, op_add, op_mul, op_dup, op_swap, op_dec, op_jnz, op_drop};

uint64_t FN(interp)(uint64_t instructions)
{
	static struct vm vm;
	uint64_t check = 0;
	while (instructions--) {
		if (vm.pc >= PROGRAM_LEN)
			vm.pc = 0, vm.sp = 0;
		struct insn in = program[vm.pc];
		handler h = handlers[in.op];
		OPAQUE(h);
		h(&vm, in.arg);
		check += (uint64_t)vm.sp;
	}
	return check + (uint64_t)vm.stack[0];
}

/* ------------------------------------------------------------------ format */

struct record {
	uint32_t id;
	int32_t value;
	const char *name;
};

static const char *const names[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"};

static size_t put_uint(char *out, uint64_t v)
{
	char digits[24];
	size_t n = 0, i;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = digits[n - 1 - i];
	return n;
}

/* Formats `id=<id> name=<name> value=<value>\n` into a local line, then
 * copies it out. */
static __attribute__((noinline)) size_t format_record(char *out, size_t cap, const struct record *r)
{
	char line[128];
	char num[32];
	size_t len = 0, n;

	memcpy(line, "id=", 3);
	len = 3;
	n = put_uint(num, r->id);
	memcpy(line + len, num, n);
	len += n;
	strcpy(line + len, " name=");
	len += 6;
	n = strlen(r->name);
	memcpy(line + len, r->name, n);
	len += n;
	strcpy(line + len, " value=");
	len += 7;
	if (r->value < 0)
		line[len++] = '-';
	n = put_uint(num, (uint64_t)(r->value < 0 ? -(int64_t)r->value : r->value));
	memcpy(line + len, num, n);
	len += n;
	line[len++] = '\n';
	if (len > cap)
		len = cap;
	memcpy(out, line, len);
	return len;
}

uint64_t FN(format)(uint64_t records)
{
	static uint32_t next;
	char out[256];
	uint64_t check = 0;
	while (records--) {
		struct record r = {next, (int32_t)(next * 2654435761u), names[next % 6]};
		size_t len = format_record(out, sizeof out, &r);
		check += len + (uint8_t)out[len / 2];
		next++;
	}
	return check;
}
