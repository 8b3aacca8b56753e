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
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
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

struct stk_proc *stk_proc_find(struct mw_stacks *s, pid_t pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

struct stk_proc *stk_proc_add(struct mw_stacks *s, pid_t pid)
{
	struct stk_proc *p;

	XGROW(s->procs, s->nprocs + 1, s->cprocs);
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->watched = 1;
	return p;
}

struct stk_proc *stk_proc_get(struct mw_stacks *s, pid_t pid)
{
	struct stk_proc *p = stk_proc_find(s, pid);

	if (!p) {
		p = stk_proc_add(s, pid);
		p->watched = is_watched(s, pid);
	}
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
static void open_files(struct stk_proc *p, const char *maps)
{
	char err[PATH_MAX + 256];
	struct mw_mapped m;
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	int at;

	for (const char *l = maps; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
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

/* p's current image (the last read from its maps), NULL before the
 * first */
static struct stk_image *current(struct stk_proc *p)
{
	for (size_t i = p->nimg; i > 0; i--)
		if (!p->img[i - 1].libc_only && !p->img[i - 1].live)
			return &p->img[i - 1];
	return NULL;
}

/* A sample read after its process exec'd: the libc alone, loaded where
 * the probe site's address says (ip less its link-time address; a
 * shared object's first PT_LOAD is at 0), in an image of its own (one
 * per load address).  The image, or NULL. */
static struct stk_image *libc_image(struct mw_stacks *s, struct stk_proc *p,
				    const struct stk_site *site, uint64_t ip)
{
	char err[256], *maps;
	uint64_t base = ip - site->pc;
	struct stk_image *im;

	if (!s->libc_path || !s->libc_span || ip < site->pc)
		return NULL;
	for (size_t i = 0; i < p->nimg; i++)
		if (p->img[i].libc_only && p->img[i].u && mw_unwinder_covers(p->img[i].u, ip))
			return &p->img[i];
	if (asprintf(&maps, "%" PRIx64 "-%" PRIx64 " r-xp 00000000 00:01 1 %s\n", base,
		     base + s->libc_span, s->libc_path) < 0)
		return NULL;
	im = stk_image_at(p, p->nimg);
	im->libc_only = 1;
	im->maps = maps;
	/* (no descriptor: libdwfl opens the traced libc by mallocwatch's path) */
	im->u = mw_unwinder_new(p->pid, maps, NULL, 0, err, sizeof(err));
	return im;
}

/* Read p's maps again; a new image when they changed (the current one
 * replaced when no event was unwound with it).  0, or -1 when the
 * process is gone (the last image stays). */
static int refresh(struct stk_proc *p)
{
	char err[256];
	char *maps = read_maps(p->pid);
	struct stk_image *im = current(p);

	p->read_ms = mw_now_ms();
	if (!maps)
		return -1;
	if (im && im->maps && strcmp(maps, im->maps) == 0) {
		free(maps);
		return 0;
	}
	if (im && im->nev == 0)
		stk_image_clear(im);
	else
		im = stk_image_at(p, p->nimg);
	im->maps = maps;
	open_files(p, maps);
	im->u = mw_unwinder_new(p->pid, maps, p->files, p->nfiles, err, sizeof(err));
	return 0;
}

void stk_proc_prime(struct mw_stacks *s, pid_t pid)
{
	struct stk_proc *p = stk_proc_get(s, pid);

	if (p->watched && !current(p))
		refresh(p);
}

void stk_proc_unwind(struct mw_stacks *s, struct stk_proc *p, const struct stk_site *site,
		     pid_t tid,
		     const uint64_t *regs, const unsigned char *stack, size_t len,
		     struct mw_stack_event *e)
{
	uint64_t t0 = mw_now_ns();
	struct stk_image *im = current(p);

	e->npcs = 0;
	e->image = -1;
	if (p->lm_known)	/* its map as the kernel reported it */
		im = stk_proc_live_image(s, p);
	else if (!im || !im->u || !mw_unwinder_covers(im->u, regs[MW_UR_IP])) {
		refresh(p);
		im = current(p);
	}
	if (im && im->u)
		e->npcs = mw_unwind(im->u, tid, regs, stack, len, e->pcs, MW_MAX_FRAMES);
	/* ended in an address no module holds: a library loaded since */
	if (im && im->u && !p->lm_known && e->npcs > 0 && e->npcs < MW_MAX_FRAMES &&
	    !mw_unwinder_covers(im->u, e->pcs[e->npcs - 1]) &&
	    mw_now_ms() - p->read_ms > 20 && refresh(p) == 0) {
		im = current(p);	/* the image refresh() made: not NULL */
		e->npcs = im && im->u ? mw_unwind(im->u, tid, regs, stack, len, e->pcs,
						  MW_MAX_FRAMES) : 0;
	}
	if (im && im->u && !mw_unwinder_covers(im->u, regs[MW_UR_IP])) {
		/* the maps read are not those it ran in: an exec since */
		s->st.stale++;
		e->npcs = 0;
		if ((im = libc_image(s, p, site, regs[MW_UR_IP])) && im->u)
			e->npcs = mw_unwind(im->u, tid, regs, stack, len, e->pcs, MW_MAX_FRAMES);
		/* up to the libc's caller: past it the walk has no CFI */
		for (int i = 0; im && i < e->npcs; i++)	/* npcs is 0 without im */
			if (!mw_unwinder_covers(im->u, e->pcs[i])) {
				e->npcs = i + 1;
				break;
			}
	}
	if (im && im->u && mw_unwinder_covers(im->u, regs[MW_UR_IP])) {
		e->image = (int)(im - p->img);
		im->nev++;
	}
	if (e->npcs == 0) {
		e->pcs[0] = regs[MW_UR_IP];
		e->npcs = 1;
	}
	if (e->npcs > 1)
		s->st.unwound++;
	s->unwind_us_sum += (double)(mw_now_ns() - t0) / 1e3;
}

void stk_proc_place(struct mw_stacks *s, struct stk_proc *p, struct mw_stack_event *e)
{
	struct stk_image *im = current(p);

	e->image = -1;
	if (!im || !im->u || !mw_unwinder_covers(im->u, e->pcs[0])) {
		refresh(p);
		im = current(p);
	}
	if (im && im->u && mw_unwinder_covers(im->u, e->pcs[0])) {
		e->image = (int)(im - p->img);
		im->nev++;
	} else
		s->st.stale++;
	if (e->npcs > 1)
		s->st.unwound++;
}

/* One "start-end perms offset dev inode path" line with a path into m. */
static int map_line(const char *l, struct stk_map *m)
{
	unsigned long long start, end, off;
	int at = 0;
	size_t len;

	if (sscanf(l, "%llx-%llx %*s %llx %*x:%*x %*u %n", &start, &end, &off, &at) != 3 ||
	    !at || l[at] != '/')
		return -1;
	len = strcspn(l + at, "\n");
	*m = (struct stk_map){ .start = start, .end = end, .offset = off,
			       .path = strndup(l + at, len) };
	return m->path ? 0 : -1;
}

void stk_image_map(struct stk_image *im)
{
	if (im->mapped || !im->maps)
		return;
	im->mapped = 1;
	for (const char *l = im->maps; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
		struct stk_map m;

		if (map_line(l, &m) < 0)
			continue;
		if (im->u)
			mw_unwinder_build_id(im->u, m.start, m.build_id);
		XGROW(im->map, im->nmap + 1, im->cmap);
		im->map[im->nmap++] = m;
	}
}

/* path opened when it is the file m recorded: a stream is data, so only
 * a regular file every user may read (never a FIFO, a device or a file
 * only root may read: fsutil.h's mw_open_regular), with the build-id m
 * recorded when it recorded one; libdwfl reads it only after mw_elf_vet
 * (unwind.c).  Its descriptor, else -1. */
static int open_checked(const struct stk_map *m, const char *path)
{
	char id[41];
	int fd = mw_open_regular(AT_FDCWD, path, 0, S_IROTH);

	if (fd < 0)
		return -1;
	if (m->build_id[0] && (mw_build_id_of_fd(fd, id) < 0 || strcmp(id, m->build_id) != 0)) {
		close(fd);
		return -1;	/* another file under that name */
	}
	return fd;
}

/* The file of a replayed mapping: its path, else the file of that name
 * in dir (the traced libc's directory: the probe-enabled glibc's libc
 * and loader are mapped under the system's names in the program's mount
 * namespace), when it has the recorded build-id; -1 when neither. */
static int open_recorded(const struct stk_map *m, const char *dir)
{
	char alt[PATH_MAX];
	const char *base = strrchr(m->path, '/');
	int fd = open_checked(m, m->path);

	if (fd < 0 && dir && m->build_id[0] && base &&
	    (size_t)snprintf(alt, sizeof(alt), "%s%s", dir, base) < sizeof(alt))
		fd = open_checked(m, alt);
	return fd;
}

void stk_image_load(struct stk_proc *p, struct stk_image *im, const char *dir)
{
	char err[256], line[PATH_MAX + 128];
	size_t len = 0, cap = 4096;
	char *maps;

	if (im->tried || im->maps)
		return;
	im->tried = 1;
	maps = xmalloc(cap);
	maps[0] = '\0';
	for (size_t i = 0; i < im->nmap; i++) {
		const struct stk_map *m = &im->map[i];
		int fd = -1, have = 0, n;
		size_t ino;

		for (size_t j = 0; j < p->nfiles && !have; j++)
			have = strcmp(p->files[j].name, m->path) == 0;
		if (!have && (fd = open_recorded(m, dir)) < 0)
			continue;	/* the map alone names it */
		if (fd >= 0) {
			XGROW(p->files, p->nfiles + 1, p->cfiles);
			p->files[p->nfiles].name = xstrdup(m->path);
			p->files[p->nfiles++].fd = fd;
		}
		/* libdwfl skips a line of inode 0 and joins lines of one
		 * inode: each file its own, the index of its first line */
		for (ino = 0; strcmp(im->map[ino].path, m->path) != 0; ino++)
			;
		n = snprintf(line, sizeof(line), "%llx-%llx r-xp %08llx 00:01 %zu %s\n",
			     (unsigned long long)m->start, (unsigned long long)m->end,
			     (unsigned long long)m->offset, ino + 1, m->path);
		while (len + (size_t)n + 1 > cap)
			maps = xrealloc(maps, cap *= 2);
		memcpy(maps + len, line, (size_t)n + 1);
		len += (size_t)n;
	}
	if (len)
		im->u = mw_unwinder_new(p->pid, maps, p->files, p->nfiles, err, sizeof(err));
	free(maps);
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

		for (size_t j = 0; j < p->nimg; j++)
			stk_image_clear(&p->img[j]);
		stk_proc_live_free(p);
		free(p->img);
		for (size_t j = 0; j < p->nfiles; j++) {
			close(p->files[j].fd);
			free(p->files[j].name);
		}
		free(p->files);
	}
	free(s->procs);
	s->procs = NULL;
	s->nprocs = s->cprocs = 0;
}
