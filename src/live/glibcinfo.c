/* glibcinfo.c - glibc's allocator globals and structure layouts from
 * libdwfl and libdw; see glibcinfo.h.  The layouts are read from the
 * DWARF in glibcinfo_dwarf.c. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "glibcinfo.h"
#include "glibcinfo_int.h"
#include "procmem.h"
#include "ptstop.h"
#include "mapped.h"
#include "sdtnote.h"
#include "unwind.h"

#define DEBUG_PACKAGES "Debian: libc6-dbg, Fedora/RHEL: glibc-debuginfo"

/* glibc's allocator globals: their runtime addresses into g (0 when
 * absent), and __libc_malloc's into *libc_malloc, in one pass over mod's
 * symbol table (libc's has thousands). */
static void symbols(Dwfl_Module *mod, struct mw_glibc *g, uint64_t *libc_malloc)
{
	const struct { const char *name; uint64_t *addr; } want[] = {
		{ "main_arena", &g->main_arena }, { "mp_", &g->mp }, { "narenas", &g->narenas },
		{ "free_list", &g->free_list }, { "__curbrk", &g->curbrk },
		{ "list_lock", &g->list_lock }, { "free_list_lock", &g->free_list_lock },
	};
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (nm && sym.st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
			if (!*libc_malloc && strcmp(nm, "__libc_malloc") == 0)
				*libc_malloc = addr;
			if (!g->malloc_trim && (strcmp(nm, "__malloc_trim") == 0 ||
						strcmp(nm, "malloc_trim") == 0))
				g->malloc_trim = addr;
		}
		if (!nm || sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
			continue;
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (!*want[k].addr && strcmp(nm, want[k].name) == 0)
				*want[k].addr = addr;
	}
}


/* What find_debuginfo needs to look inside the process's root. */
struct dbg_ctx {
	pid_t pid;
	char root_why[80];	/* the debuginfo's place in its root holds
				 * something that could not be used: why; "" */
	char root_rel[128];	/* that place, relative to the root */
	char why[PATH_MAX + 256];	/* a debug file found and refused */
};

/* The debuginfo of mod by build-id inside process c->pid's own root
 * (usr/lib/debug/.build-id/NN/REST.debug, as Debian's and Fedora's
 * packages place it), resolved with openat2(2) RESOLVE_IN_ROOT so that
 * no link in that tree leads out of it; a regular file whose build-id is
 * mod's.  Not when that root is ours (the host's places, and only they,
 * were searched: MW_DEBUGINFO_PATH means what it says).  The
 * descriptor, or -1. */
static int debuginfo_in_root(Dwfl_Module *mod, struct dbg_ctx *c, char **name)
{
	const unsigned char *id;
	const void *fid;
	GElf_Addr vaddr;
	char rel[128], root[64];
	int n = dwfl_module_build_id(mod, &id, &vaddr), len, rootfd, fd;
	struct stat sb, ours;
	Elf *e;
	ssize_t fn;

	if (n < 2 || n > 40)
		return -1;
	len = snprintf(rel, sizeof(rel), "usr/lib/debug/.build-id/%02x/", id[0]);
	for (int i = 1; i < n; i++)
		len += snprintf(rel + len, sizeof(rel) - (size_t)len, "%02x", id[i]);
	snprintf(rel + len, sizeof(rel) - (size_t)len, ".debug");
	snprintf(root, sizeof(root), "/proc/%d/root", (int)c->pid);
	if ((rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	/* our own root: the host's places were searched already */
	if (fstat(rootfd, &sb) == 0 && stat("/", &ours) == 0 && sb.st_dev == ours.st_dev &&
	    sb.st_ino == ours.st_ino) {
		close(rootfd);
		return -1;
	}
	/* a regular file, never a FIFO or a device */
	fd = mw_open_regular(rootfd, rel, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, 0);
	close(rootfd);
	snprintf(c->root_rel, sizeof(c->root_rel), "%s", rel);
	if (fd < 0 && errno != ENOENT && errno != ENOTDIR)	/* there, not readable */
		snprintf(c->root_why, sizeof(c->root_why), "%s", errno == EINVAL ?
			 "not a regular ELF file" : strerror(errno));	/* EINVAL: fsutil.h */
	if (fd < 0)
		return -1;
	if (!(e = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		snprintf(c->root_why, sizeof(c->root_why), "not a regular ELF file");
		close(fd);
		return -1;
	}
	fn = dwelf_elf_gnu_build_id(e, &fid);	/* fid points into e */
	if (fn != n || memcmp(fid, id, (size_t)n) != 0) {
		snprintf(c->root_why, sizeof(c->root_why), "its build-id is not the libc's");
		elf_end(e);
		close(fd);
		return -1;
	}
	elf_end(e);
	if (asprintf(name, "%s/%s", root, rel) < 0)
		*name = NULL;
	return fd;
}

/* The host's places first (build-id and .gnu_debuglink under
 * /usr/lib/debug, $MW_DEBUGINFO_PATH: unwind.h), then the process's own
 * root; what is found is checked (mapped.h's mw_elf_vet), and a file
 * refused is the reason the DWARF is missing (ctx->why). */
static int find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc,
			  char **debuginfo_file_name)
{
	struct dbg_ctx *c = *ud;
	char why[PATH_MAX + 256];
	int fd = mw_dwfl_find_debuginfo(mod, ud, modname, base, file_name, debuglink, crc,
					debuginfo_file_name, why, sizeof(why));

	if (fd < 0 && !why[0] && c && (fd = debuginfo_in_root(mod, c, debuginfo_file_name)) >= 0 &&
	    (fd = mw_elf_vet(fd, *debuginfo_file_name ? *debuginfo_file_name : modname, why,
			     sizeof(why))) < 0) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
	}
	if (fd < 0 && why[0] && c && !c->why[0])
		snprintf(c->why, sizeof(c->why), "%s", why);
	return fd;
}

/* The compile unit of malloc.c: the one holding __libc_malloc's code (fn,
 * a runtime address; bias, the module's), through .debug_aranges.  0
 * when found. */
static int malloc_unit(Dwarf *dw, Dwarf_Addr bias, uint64_t fn, Dwarf_Die *cu)
{
	return fn && dwarf_addrdie(dw, fn - bias, cu) ? 0 : -1;
}

/* The code ranges of malloc.c's unit (cu) as runtime addresses. */
static void malloc_code(Dwarf_Die *cu, Dwarf_Addr bias, struct mw_glibc *g)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	g->ncode = 0;
	while (g->ncode < MW_GLIBC_CODE_RANGES &&
	       (off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0)
		if (hi > lo) {
			g->code[g->ncode].lo = lo + bias;
			g->code[g->ncode].hi = hi + bias;
			g->ncode++;
		}
}

/* The libc's debug symbols are in the process's root but could not be
 * read (c): say so, not that they are to be installed. */
static void root_unreadable(char *err, size_t errlen, const struct mw_glibc *g,
			    const struct dbg_ctx *c)
{
	snprintf(err, errlen, "the debug symbols of '%s' inside process %d's root "
		 "(/proc/%d/root/%s) cannot be used: %s", g->module, (int)c->pid, (int)c->pid,
		 c->root_rel, c->root_why);
}

/* g's symbols and layouts from mod (ctx: its debug file refused, if
 * one was).  0, or -1 with err. */
static int read_module(Dwfl_Module *mod, const struct dbg_ctx *ctx, const char *procpath,
		       struct mw_glibc *g, char *err, size_t errlen)
{
	char what[128];
	Dwarf *dw;
	Dwarf_Addr bias;
	Dwarf_Die cu;
	bool have_cu;
	uint64_t libc_malloc = 0;
	const char *debugfile = NULL;

	symbols(mod, g, &libc_malloc);
	if ((!g->main_arena || !g->mp) && ctx->why[0]) {
		snprintf(err, errlen, "%s", ctx->why);
		return -1;
	}
	if ((!g->main_arena || !g->mp) && ctx->root_why[0]) {
		root_unreadable(err, errlen, g, ctx);
		return -1;
	}
	if (!g->main_arena || !g->mp) {
		snprintf(err, errlen, "no symbols for glibc's 'main_arena' and 'mp_' in '%s' or "
			 "its debuginfo: install its debug symbols (%s) or set MW_DEBUGINFO_PATH",
			 g->module, DEBUG_PACKAGES);
		return -1;
	}
	if (!(dw = dwfl_module_getdwarf(mod, &bias)) && ctx->why[0]) {
		snprintf(err, errlen, "%s", ctx->why);
		return -1;
	}
	if (!dw && ctx->root_why[0]) {
		root_unreadable(err, errlen, g, ctx);
		return -1;
	}
	if (!dw) {
		snprintf(err, errlen, "no DWARF for '%s' (glibc's struct layouts): install its "
			 "debug symbols (%s) or set MW_DEBUGINFO_PATH", g->module, DEBUG_PACKAGES);
		return -1;
	}
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	snprintf(g->dwarf_file, sizeof(g->dwarf_file), "%s",
		 debugfile && strcmp(debugfile, procpath) != 0 ? debugfile : g->module);
	have_cu = malloc_unit(dw, bias, libc_malloc, &cu) == 0;
	if (have_cu)
		malloc_code(&cu, bias, g);
	if (mw_glibc_layouts(dw, have_cu ? &cu : NULL, g, what, sizeof(what)) < 0) {
		snprintf(err, errlen, "the DWARF of '%s' lacks %s: install the debug symbols of "
			 "that exact libc (%s)", g->dwarf_file, what, DEBUG_PACKAGES);
		return -1;
	}
	return 0;
}

static unsigned long dwarf_reads;	/* mw_glibc_dwarf_reads() */


/* Read g for the libc m: from fd when >= 0 (mw_glibc_preload: the file
 * by its name, m->name; taken, dwfl closes it), else opened as the
 * mapped file itself (mapped.h).  0; -1 with err when that file lacks
 * what is needed (symbols, DWARF): lasting; -2 when it could not be
 * opened or read (the process went away, ...). */
static int load_mapped(const struct mw_mapped *m, int fd, struct mw_glibc *g, char *err,
		       size_t errlen)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,	/* not used: the fd is given */
		.find_debuginfo = find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	struct dbg_ctx ctx = { .pid = m->pid };
	char procpath[PATH_MAX];
	Dwfl *dwfl;
	Dwfl_Module *mod;
	void **ud;
	int ret = -1, by_name = fd >= 0;

	debuginfo_path = getenv("MW_DEBUGINFO_PATH");
	snprintf(g->module, sizeof(g->module), "%s", m->name);
	g->elsewhere = !by_name && !mw_mapped_here(m);
	if (!by_name && (fd = mw_mapped_open(m, err, errlen)) < 0)
		return -2;
	/* the file is the process's: nothing read from it unchecked */
	if ((fd = mw_elf_vet(fd, m->name, err, errlen)) < 0)
		return -1;
	dwarf_reads++;
	if (!(dwfl = dwfl_begin(&cb))) {
		snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		close(fd);
		return -2;
	}
	if (by_name)
		snprintf(procpath, sizeof(procpath), "%s", m->name);
	else
		mw_mapped_proc_path(m, procpath, sizeof(procpath));
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, m->name, procpath, fd, m->start, false);	/* fd: dwfl's */
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		snprintf(err, errlen, "cannot read process %d's libc '%s': %s", (int)m->pid,
			 m->name, dwfl_errmsg(-1));
		ret = -2;
		goto cleanup;
	}
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = &ctx;
	if (read_module(mod, &ctx, procpath, g, err, errlen) < 0)
		goto cleanup;
	{
		GElf_Addr ebias;

		g->version_minor = mw_glibc_minor_of(dwfl_module_getelf(mod, &ebias));
	}
	/* safe-linking of fastbin and tcache pointers: glibc 2.32 */
	g->safe_linking = g->version_minor == 0 || g->version_minor >= 32;
	ret = 0;
cleanup:
	if (mod) {
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = NULL;
	}
	dwfl_end(dwfl);
	return ret;
}

/* Loaded libcs by device and inode, their globals as offsets from the
 * start of the module's first mapping (the same in every process).
 *
 * Every user's processes share these CACHE_SIZE places, and a user can
 * run processes on as many libc files as it likes: copies of its own,
 * or, in a user namespace, overlay mounts of the system's (each a device
 * of its own, and root's file by its owner).  A file put out is read
 * again for the next process mapping it, one libc at a time, behind the
 * reads of those files (processes kept waiting are counted timeout): one
 * user must not be able to put out the files other users' processes
 * need.  So each place is charged to a user (mw_glibc_slot_victim,
 * mw_glibc_slot_use): the real uid of the process it was read for (which
 * the process cannot choose, where the file's owner it can), moved on a
 * later use to the user of that process when that user holds fewer
 * places (two fewer: a libc several users' processes map is charged to
 * the one holding least, and stays there).  When all are taken, the place given up is the least
 * recently used of the user holding the most, the loading user's own on
 * a tie: one user's loads put out another's files only while the other
 * holds more, so each of k users keeps about CACHE_SIZE / k files however
 * many the others load. */
#define CACHE_SIZE 64
static struct cached {
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	int ok;
	struct mw_glibc g;	/* addresses relative to the module's start */
	char err[512];
} cache[CACHE_SIZE];
static struct mw_glibc_slot slots[CACHE_SIZE];	/* cache[i]'s user and last use */
static size_t ncached;
static uint64_t uses;	/* the clock of slots' last uses */

/* How many of the n slots user holds. */
static size_t held(const struct mw_glibc_slot *s, size_t n, uid_t user)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i].user == user;
	return k;
}

size_t mw_glibc_slot_victim(const struct mw_glibc_slot *s, size_t n, uid_t user)
{
	size_t v = 0, best = 0;

	for (size_t i = 0; i < n; i++) {	/* n is CACHE_SIZE: n * n is small */
		/* the most held first, the loader's own on a tie */
		size_t w = 2 * held(s, n, s[i].user) + (s[i].user == user);

		if (w > best || (w == best && s[i].used < s[v].used)) {
			best = w;
			v = i;
		}
	}
	return v;
}

void mw_glibc_slot_use(struct mw_glibc_slot *s, size_t n, size_t i, uid_t user, uint64_t now)
{
	s[i].used = now;
	if (user != MW_NO_UID && user != s[i].user && held(s, n, user) + 1 < held(s, n, s[i].user))
		s[i].user = user;
}

static uint64_t *const_addrs(struct mw_glibc *g, size_t *n)
{
	*n = 8;
	return &g->main_arena;	/* main_arena .. malloc_trim */
}

static void rebase(struct mw_glibc *g, uint64_t from, uint64_t to)
{
	size_t n;
	uint64_t *a = const_addrs(g, &n);

	for (size_t i = 0; i < n; i++)
		if (a[i])
			a[i] = a[i] - from + to;
	for (int i = 0; i < g->ncode; i++) {
		g->code[i].lo = g->code[i].lo - from + to;
		g->code[i].hi = g->code[i].hi - from + to;
	}
}

/* What is kept for m's file (its device and inode), or NULL. */
static struct cached *kept(const struct mw_mapped *m)
{
	for (size_t i = 0; i < ncached; i++)
		if (cache[i].ino == m->ino && cache[i].dev_major == m->dev_major &&
		    cache[i].dev_minor == m->dev_minor)
			return &cache[i];
	return NULL;
}

/* Keep what m's file gave (r: load_mapped's 0 or -1; g read at
 * m->start, or the reason in err) for the next process that maps it,
 * charged to user (the uid of the process it was read for). */
static void keep(const struct mw_mapped *m, int r, const struct mw_glibc *g, const char *err,
		 uid_t user)
{
	size_t i = ncached < CACHE_SIZE ? ncached++ : mw_glibc_slot_victim(slots, ncached, user);
	struct cached *c = &cache[i];

	slots[i] = (struct mw_glibc_slot){ .user = user, .used = ++uses };
	*c = (struct cached){ .dev_major = m->dev_major, .dev_minor = m->dev_minor,
			      .ino = m->ino, .ok = r == 0 };
	if (r == 0) {
		c->g = *g;
		rebase(&c->g, m->start, 0);
	} else {
		snprintf(c->err, sizeof(c->err), "%s", err);
	}
}

/* The cache is shared by the threads reading processes (snapmulti.h):
 * cache_lock guards it, held briefly; load_lock makes one libc file be
 * read at a time (the first processes of a libc wait for it rather than
 * each reading it), held across that read but never by a lookup that the
 * cache answers. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned long mw_glibc_dwarf_reads(void)
{
	return dwarf_reads;
}

void mw_glibc_cache_reset(void)
{
	pthread_mutex_lock(&cache_lock);
	ncached = 0;
	pthread_mutex_unlock(&cache_lock);
}

/* What is kept for m's file, into g (rebased to m) or err: 0 or -1 as
 * mw_glibc_load; 1 when nothing is kept.  Used for a process of user's
 * (MW_NO_UID: not known). */
static int from_cache(const struct mw_mapped *m, struct mw_glibc *g, char *err, size_t errlen,
		      uid_t user)
{
	struct cached *c;
	int r = 1;

	pthread_mutex_lock(&cache_lock);
	if ((c = kept(m)))
		mw_glibc_slot_use(slots, ncached, (size_t)(c - cache), user, ++uses);
	if (c && !c->ok) {
		snprintf(err, errlen, "%s", c->err);
		r = -1;
	} else if (c) {
		*g = c->g;
		r = 0;
	}
	pthread_mutex_unlock(&cache_lock);
	if (r == 0) {
		snprintf(g->module, sizeof(g->module), "%s", m->name);
		g->elsewhere = !mw_mapped_here(m);
		rebase(g, 0, m->start);
	}
	return r;
}

/* Take load_lock by deadline (CLOCK_MONOTONIC seconds; 0: however long
 * it takes): 0, or -1 when the deadline passed first. */
static int load_lock_by(double deadline)
{
	struct timespec ts;

	if (!deadline)
		return pthread_mutex_lock(&load_lock) == 0 ? 0 : -1;
	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	return pthread_mutex_clocklock(&load_lock, CLOCK_MONOTONIC, &ts) == 0 ? 0 : -1;
}

int mw_glibc_load(pid_t pid, struct mw_glibc *g, char *err, size_t errlen)
{
	return mw_glibc_load_by(pid, g, 0, err, errlen) == 0 ? 0 : -1;
}

static int load_by(pid_t pid, struct mw_glibc *g, double deadline, char *err, size_t errlen)
{
	struct mw_mapped m;
	uid_t user;
	int r;

	r = mw_mapped_find(pid, MW_LIB_LIBC, &m, err, errlen);
	if (r == 0 && mw_proc_kind(pid) != MW_PROC_USER)
		mw_proc_no_memory(pid, err, errlen);	/* a zombie maps nothing */
	else if (r == 0 && !err[0])
		snprintf(err, errlen, "process %d maps no libc.so.6: a static binary or not "
			 "glibc; its allocator cannot be read", (int)pid);
	if (r <= 0)
		return -1;
	if (mw_process_uid(pid, &user) < 0)
		user = MW_NO_UID;	/* gone: what it gave is not kept */
	if ((r = from_cache(&m, g, err, errlen, user)) <= 0)
		return r;
	if (load_lock_by(deadline) < 0) {	/* another libc's read holds it */
		snprintf(err, errlen, "process %d not read: the budget was spent waiting for "
			 "another process's libc to be read", (int)pid);
		return -2;
	}
	if ((r = from_cache(&m, g, err, errlen, user)) > 0) {	/* not read meanwhile */
		r = load_mapped(&m, -1, g, err, errlen);
		/* -2 says nothing lasting about that libc */
		if (r != -2 && user != MW_NO_UID) {
			pthread_mutex_lock(&cache_lock);
			keep(&m, r, g, err, user);
			pthread_mutex_unlock(&cache_lock);
		}
		r = r < 0 ? -1 : 0;
	}
	pthread_mutex_unlock(&load_lock);
	return r;
}

int mw_glibc_load_by(pid_t pid, struct mw_glibc *g, double deadline, char *err, size_t errlen)
{
	/* before its maps are read: an exec after it changes it */
	uint64_t image = mw_ptstop_image(pid);
	int r;

	memset(g, 0, sizeof(*g));
	if ((r = load_by(pid, g, deadline, err, errlen)) == 0)
		g->image = image;
	return r;
}

int mw_glibc_preload(const char *path, char *err, size_t errlen)
{
	struct mw_mapped m = { .pid = getpid() };
	struct cached *c;
	struct mw_glibc g;
	struct stat sb;
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		close(fd);
		return -1;
	}
	m.dev_major = major(sb.st_dev);
	m.dev_minor = minor(sb.st_dev);
	m.ino = (uint64_t)sb.st_ino;
	pthread_mutex_lock(&load_lock);
	pthread_mutex_lock(&cache_lock);
	if ((c = kept(&m))) {
		mw_glibc_slot_use(slots, ncached, (size_t)(c - cache), getuid(), ++uses);
		r = c->ok ? 0 : -1;
		if (!c->ok)
			snprintf(err, errlen, "%s", c->err);
		pthread_mutex_unlock(&cache_lock);
		pthread_mutex_unlock(&load_lock);
		close(fd);
		return r;
	}
	pthread_mutex_unlock(&cache_lock);
	snprintf(m.name, sizeof(m.name), "%s", path);
	memset(&g, 0, sizeof(g));
	r = load_mapped(&m, fd, &g, err, errlen);	/* at 0: addresses as kept */
	if (r == 0) {
		pthread_mutex_lock(&cache_lock);
		keep(&m, r, &g, err, getuid());	/* for a -c run's program */
		pthread_mutex_unlock(&cache_lock);
	}
	pthread_mutex_unlock(&load_lock);
	return r == 0 ? 0 : -1;
}
