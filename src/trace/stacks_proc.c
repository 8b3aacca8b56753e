/* stacks_proc.c - the processes whose samples --stacks keeps: which they
 * are, their module maps and files, their stacks unwound, and the probe
 * arguments read from a sample (stacks_int.h).
 *
 * A process is kept when it is one given (-p) or descends from
 * mallocwatch (-c, -c -f): its parent chain in /proc/PID/stat
 * ("42 (prog) S 41 ...", the 4th field) reaches our pid.  Its maps
 * (proc(5)) are read when its first sample comes and again when a stack
 * runs into an address no module of the last map holds (a library
 * loaded since); each file named there is opened once, through
 * /proc/PID/map_files (mapped.h), so it is the very file mapped even in
 * another mount namespace, and stays open for the report.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "mapped.h"
#include "stacks_int.h"
#include "xalloc.h"

/* pid's parent, or -1 when it is gone or unreadable */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;
	long pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %ld", &pp) != 1)
		return -1;
	return (pid_t)pp;
}

static int is_watched(const struct mw_stacks *s, pid_t pid)
{
	pid_t me = getpid();

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		for (size_t i = 0; i < s->nwatch; i++)
			if (s->watch[i] == pid)
				return 1;
		if (pid == me)
			return depth > 0;
		pid = parent_of(pid);
	}
	return 0;
}

struct stk_proc *stk_proc_get(struct mw_stacks *s, pid_t pid)
{
	struct stk_proc *p;

	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	XGROW(s->procs, s->nprocs + 1, s->cprocs);
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->watched = is_watched(s, pid);
	return p;
}

static char *read_maps(pid_t pid)
{
	char path[64];
	size_t len = 0, cap = 65536;
	char *buf;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	buf = xmalloc(cap);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096)
			buf = xrealloc(buf, cap *= 2);
	}
	close(fd);
	if (n < 0 || len == 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* Open each file maps names that p has no descriptor of. */
static void open_files(struct stk_proc *p)
{
	char err[PATH_MAX + 256];
	struct mw_mapped m;
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	int at;

	for (const char *l = p->maps; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
		const char *nl = strchr(l, '\n');
		size_t len;
		int fd, have = 0;

		if (sscanf(l, "%llx-%llx %*s %llx %x:%x %llu %n", &start, &end, &off, &maj,
			   &min, &ino, &at) != 6 || l[at] != '/')
			continue;
		len = (nl ? (size_t)(nl - l) : strlen(l)) - (size_t)at;
		if (len >= sizeof(m.name))
			continue;
		memset(&m, 0, sizeof(m));
		memcpy(m.name, l + at, len);
		for (size_t i = 0; i < p->nfiles && !have; i++)
			have = strcmp(p->files[i].name, m.name) == 0;
		if (have)
			continue;
		m.pid = p->pid;
		m.start = start;
		m.end = end;
		m.dev_major = maj;
		m.dev_minor = min;
		m.ino = ino;
		if ((fd = mw_mapped_open(&m, err, sizeof(err))) < 0)
			continue;	/* libdwfl will try the name */
		XGROW(p->files, p->nfiles + 1, p->cfiles);
		p->files[p->nfiles].name = xstrdup(m.name);
		p->files[p->nfiles++].fd = fd;
	}
}

/* Read p's maps again; a new unwinder when they changed.  0, or -1 when
 * the process is gone (the last map stays). */
static int refresh(struct stk_proc *p)
{
	char err[256];
	char *maps = read_maps(p->pid);

	p->read_ms = mw_now_ms();
	if (!maps)
		return -1;
	if (p->maps && strcmp(maps, p->maps) == 0) {
		free(maps);
		return 0;
	}
	free(p->maps);
	p->maps = maps;
	open_files(p);
	/* (the old unwinder points into files, which may have moved) */
	mw_unwinder_free(p->u);
	p->u = mw_unwinder_new(p->pid, p->maps, p->files, p->nfiles, err, sizeof(err));
	return 0;
}

void stk_proc_unwind(struct mw_stacks *s, struct stk_proc *p, pid_t tid,
		     const uint64_t *regs, const unsigned char *stack, size_t len,
		     struct mw_stack_event *e)
{
	uint64_t t0 = mw_now_ns();

	e->npcs = 0;
	if (!p->u || !mw_unwinder_covers(p->u, regs[MW_UR_IP]))
		refresh(p);
	if (p->u)
		e->npcs = mw_unwind(p->u, tid, regs, stack, len, e->pcs, MW_MAX_FRAMES);
	/* ended in an address no module holds: a library loaded since */
	if (p->u && e->npcs > 0 && e->npcs < MW_MAX_FRAMES &&
	    !mw_unwinder_covers(p->u, e->pcs[e->npcs - 1]) &&
	    mw_now_ms() - p->read_ms > 20 && refresh(p) == 0)
		e->npcs = mw_unwind(p->u, tid, regs, stack, len, e->pcs, MW_MAX_FRAMES);
	if (e->npcs == 0) {
		e->pcs[0] = regs[MW_UR_IP];
		e->npcs = 1;
	}
	if (e->npcs > 1)
		s->st.unwound++;
	s->unwind_us_sum += (double)(mw_now_ns() - t0) / 1e3;
}

/* sdtarg's registers to the sample's (perf order) */
static int perf_reg(enum mw_reg r)
{
	static const int map[MW_REG_COUNT] = {
		[MW_REG_RAX] = MW_UR_AX, [MW_REG_RBX] = MW_UR_BX, [MW_REG_RCX] = MW_UR_CX,
		[MW_REG_RDX] = MW_UR_DX, [MW_REG_RSI] = MW_UR_SI, [MW_REG_RDI] = MW_UR_DI,
		[MW_REG_RBP] = MW_UR_BP, [MW_REG_RSP] = MW_UR_SP, [MW_REG_RIP] = MW_UR_IP,
		[MW_REG_R8] = MW_UR_R8, [MW_REG_R9] = MW_UR_R8 + 1,
		[MW_REG_R10] = MW_UR_R8 + 2, [MW_REG_R11] = MW_UR_R8 + 3,
		[MW_REG_R12] = MW_UR_R8 + 4, [MW_REG_R13] = MW_UR_R8 + 5,
		[MW_REG_R14] = MW_UR_R8 + 6, [MW_REG_R15] = MW_UR_R8 + 7,
	};

	return r >= 0 && r < MW_REG_COUNT ? map[r] : -1;
}

/* v cut to size bytes, sign-extended when the spec is signed */
static int64_t sized(uint64_t v, int size, int is_signed)
{
	int bits = size * 8;

	if (bits >= 64)
		return (int64_t)v;
	v &= (1ULL << bits) - 1;
	if (is_signed && (v >> (bits - 1)))
		v |= ~0ULL << bits;
	return (int64_t)v;
}

/* One argument: a register, a constant, or a slot of the stack copy. */
static int read_arg(const struct mw_sdt_arg *a, const uint64_t *regs,
		    const unsigned char *stack, size_t len, int64_t *out)
{
	uint64_t v = 0, addr, sp = regs[MW_UR_SP];
	int r;

	switch (a->kind) {
	case MW_ARG_CONST:
		*out = a->value;
		return 0;
	case MW_ARG_REG:
		if ((r = perf_reg(a->reg)) < 0)
			return -1;
		v = regs[r] >> (a->reg_high8 ? 8 : 0);
		*out = sized(v, a->reg_high8 ? 1 : a->size < a->reg_bytes ? a->size :
			     a->reg_bytes, a->is_signed);
		return 0;
	case MW_ARG_MEM:
		if (a->sym[0] || a->index != MW_REG_NONE || (r = perf_reg(a->base)) < 0 ||
		    r == MW_UR_IP)
			return -1;
		addr = regs[r] + (uint64_t)a->disp;
		if (addr < sp || addr - sp > len || len - (addr - sp) < (size_t)a->size)
			return -1;
		memcpy(&v, stack + (addr - sp), (size_t)a->size);
		*out = sized(v, a->size, a->is_signed);
		return 0;
	}
	return -1;
}

void stk_read_args(const struct stk_site *site, const uint64_t *regs,
		   const unsigned char *stack, size_t len, struct mw_stack_event *e)
{
	e->args_known = 0;
	for (int i = 0; i < site->nargs && i < 3; i++)
		if (read_arg(&site->args[i], regs, stack, len, &e->args[i]) == 0)
			e->args_known |= 1u << i;
}

void stk_procs_free(struct mw_stacks *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		struct stk_proc *p = &s->procs[i];

		mw_unwinder_free(p->u);
		for (size_t j = 0; j < p->nfiles; j++) {
			close(p->files[j].fd);
			free(p->files[j].name);
		}
		free(p->files);
		free(p->maps);
	}
	free(s->procs);
	s->procs = NULL;
	s->nprocs = s->cprocs = 0;
}
