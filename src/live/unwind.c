/* unwind.c - a uprobe sample's user stack, unwound and symbolized with
 * libdwfl (unwind.h).
 *
 * A sample as perf_event_open(2) gives it with PERF_SAMPLE_REGS_USER
 * (the registers at the probe site, x86_64 perf order AX BX CX DX SI DI
 * BP SP IP R8..R15 for MW_UNWIND_REGMASK 0xff01ff) and
 * PERF_SAMPLE_STACK_USER (a copy of the stack from SP up, e.g. 16 KiB).
 * The same path as perf's util/unwind-libdw.c: the modules reported from
 * the process's maps text, dwfl_attach_state() with our callbacks,
 * dwfl_getthread_frames() for the walk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>

#include "fsutil.h"
#include "mapped.h"
#include "msg.h"
#include "unwind.h"
#include "xalloc.h"

struct mw_unwinder {
	Dwfl *dwfl;
	pid_t pid;
	struct mw_unwind_file *files;	/* a copy of the array (not of the
					 * names and descriptors) */
	size_t nfiles;
	int attached;
	/* the sample being unwound */
	pid_t tid;
	const uint64_t *regs;
	const unsigned char *stack;
	size_t len;
	uint64_t *pcs;
	int n, max;
};

/* libdwfl's find_elf has no argument of ours: the unwinder in use by
 * this thread, set by every function below that calls into libdwfl. */
static __thread struct mw_unwinder *current;

/* A file refused, once per name for the life of mallocwatch (a long
 * serve or a run of many samples says it once). */
static void refused(const char *why)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char *said[32];
	static size_t nsaid;
	int seen = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nsaid && !seen; i++)
		seen = strcmp(said[i], why) == 0;
	if (!seen && nsaid < sizeof(said) / sizeof(said[0]))
		said[nsaid++] = xstrdup(why);
	pthread_mutex_unlock(&lock);
	if (!seen)
		mw_warn("%s", why);
}

static int mw_dwfl_open_file(const char *path, char *why, size_t whylen);

/* find_elf: the descriptor opened while the process ran, else the name;
 * either checked (mw_elf_vet) before libdwfl reads it. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct mw_unwinder *u = current;
	char why[PATH_MAX + 256];
	int fd = -1;

	if (modname[0] != '/')	/* [vdso: PID]: from memory, not a file */
		return dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
	for (size_t i = 0; u && i < u->nfiles && fd < 0; i++)
		if (strcmp(u->files[i].name, modname) == 0) {
			fd = fcntl(u->files[i].fd, F_DUPFD_CLOEXEC, 0);
			if (fd >= 0 && (fd = mw_elf_vet(fd, modname, why, sizeof(why))) < 0) {
				refused(why);
				return -1;
			}
		}
	if (fd < 0 && (fd = mw_dwfl_open_file(modname, why, sizeof(why))) < 0) {
		if (why[0])
			refused(why);
		return -1;
	}
	*file_name = xstrdup(modname);
	return fd;
}

static int find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc,
			  char **name)
{
	char why[PATH_MAX + 256];
	int fd = mw_dwfl_find_debuginfo(mod, ud, modname, base, file_name, debuglink, crc, name,
					why, sizeof(why));

	if (fd < 0 && why[0])
		refused(why);
	return fd;
}

/* The module file path for libdwfl: opened as mw_open_regular does and
 * checked as mw_elf_vet does.  The descriptor, or -1 with a one-line
 * reason in why. */
static int mw_dwfl_open_file(const char *path, char *why, size_t whylen)
{
	int fd = mw_open_regular(AT_FDCWD, path, 0, 0);

	why[0] = '\0';
	if (fd < 0) {
		if (errno == EINVAL)
			snprintf(why, whylen, "'%s' is not a regular file: not read", path);
		return -1;
	}
	return mw_elf_vet(fd, path, why, whylen);
}

/* The debug file dir/debuglink (dir: "" for the root) when its build-id
 * is id: its descriptor (name in *name), else -1. */
static int debuglink_at(const char *dir, const char *sub, const char *debuglink,
			const char *id, char **name)
{
	char path[PATH_MAX], have[41];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s%s/%s", dir, sub, debuglink) >= sizeof(path) ||
	    (fd = mw_open_regular(AT_FDCWD, path, 0, 0)) < 0)
		return -1;
	if (mw_build_id_of_fd(fd, have) < 0 || strcmp(have, id) != 0) {
		close(fd);
		return -1;
	}
	*name = xstrdup(path);
	return fd;
}

/* The .gnu_debuglink search: beside file_name, in its .debug/, and
 * under each absolute directory of dpath (":"-separated). */
static int by_debuglink(Dwfl_Module *mod, const char *file_name, const char *debuglink,
			const char *dpath, char **name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char id[41] = "", dir[PATH_MAX];
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	int n = dwfl_module_build_id(mod, &bits, &vaddr), fd;

	if (!debuglink || !*debuglink || strchr(debuglink, '/') || !slash || file_name[0] != '/' ||
	    n < 1 || n > 20 || (size_t)(slash - file_name) >= sizeof(dir))
		return -1;
	for (int i = 0; i < n; i++)
		snprintf(id + 2 * i, 3, "%02x", bits[i]);
	memcpy(dir, file_name, (size_t)(slash - file_name));
	dir[slash - file_name] = '\0';
	if ((fd = debuglink_at(dir, "", debuglink, id, name)) >= 0 ||
	    (fd = debuglink_at(dir, "/.debug", debuglink, id, name)) >= 0)
		return fd;
	for (const char *p = dpath; *p; ) {
		size_t len = strcspn(p, ":");
		char top[PATH_MAX];

		if (*p == '+' || *p == '-')	/* libdwfl's CRC flags */
			p++, len--;
		if (len && *p == '/' && len < sizeof(top)) {
			memcpy(top, p, len);
			top[len] = '\0';
			if ((size_t)snprintf(top + len, sizeof(top) - len, "%s", dir) <
			    sizeof(top) - len && (fd = debuglink_at(top, "", debuglink, id, name)) >= 0)
				return fd;
		}
		p += len + (p[len] == ':');
	}
	return -1;
}

int mw_dwfl_find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink, GElf_Word crc,
			   char **name, char *why, size_t whylen)
{
	const char *dpath = getenv("MW_DEBUGINFO_PATH");
	int fd = dwfl_build_id_find_debuginfo(mod, ud, modname, base, file_name, debuglink, crc,
					      name);

	why[0] = '\0';
	if (fd < 0)
		fd = by_debuglink(mod, file_name, debuglink, dpath ? dpath : "/usr/lib/debug", name);
	if (fd >= 0 && (fd = mw_elf_vet(fd, *name ? *name : modname, why, whylen)) < 0) {
		free(*name);
		*name = NULL;
	}
	return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct mw_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Only the stack copy is memory: CFI comes from the module files. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct mw_unwinder *u = arg;
	uint64_t sp = u->regs[MW_UR_SP];

	(void)dwfl;
	if (addr < sp || addr - sp > u->len || u->len - (addr - sp) < sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - sp), sizeof(*result));
	return true;
}

/* DWARF's x86_64 numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct mw_unwinder *u = arg;
	const uint64_t *r = u->regs;
	Dwarf_Word d[17] = { r[MW_UR_AX], r[MW_UR_DX], r[MW_UR_CX], r[MW_UR_BX],
			     r[MW_UR_SI], r[MW_UR_DI], r[MW_UR_BP], r[MW_UR_SP] };

	for (int i = 0; i < 8; i++)
		d[8 + i] = r[MW_UR_R8 + i];
	d[16] = r[MW_UR_IP];
	if (!dwfl_thread_state_registers(thread, 0, 17, d))
		return false;
	dwfl_thread_state_register_pc(thread, r[MW_UR_IP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct mw_unwinder *mw_unwinder_new(pid_t pid, const char *maps,
				    const struct mw_unwind_file *files, size_t nfiles,
				    char *err, size_t errlen)
{
	struct mw_unwinder *u = xcalloc(1, sizeof(*u));
	FILE *f = NULL;

	u->pid = pid;
	debuginfo_path = getenv("MW_DEBUGINFO_PATH");
	u->files = xcalloc(nfiles ? nfiles : 1, sizeof(*files));
	if (nfiles)
		memcpy(u->files, files, nfiles * sizeof(*files));
	u->nfiles = nfiles;
	current = u;
	if (!(u->dwfl = dwfl_begin(&callbacks)) ||
	    !(f = fmemopen((void *)maps, strlen(maps), "r"))) {
		snprintf(err, errlen, "libdwfl: %s", u->dwfl ? strerror(errno) :
			 dwfl_errmsg(-1));
		goto fail;
	}
	dwfl_report_begin(u->dwfl);
	if (dwfl_linux_proc_maps_report(u->dwfl, f) != 0 ||
	    dwfl_report_end(u->dwfl, NULL, NULL) != 0) {
		snprintf(err, errlen, "cannot report the modules of process %d: %s",
			 (int)pid, dwfl_errmsg(-1));
		goto fail;
	}
	fclose(f);
	current = NULL;
	return u;
fail:
	if (f)
		fclose(f);
	mw_unwinder_free(u);
	current = NULL;
	return NULL;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct mw_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int mw_unwind(struct mw_unwinder *u, pid_t tid, const uint64_t *regs,
	      const void *stack, size_t len, uint64_t *pcs, int max)
{
	current = u;
	if (!u->attached) {
		Dwfl_Module *m = dwfl_addrmodule(u->dwfl, regs[MW_UR_IP]);
		Elf *elf = NULL;
		GElf_Addr bias;

		/* the machine comes from a module's ELF: the probe site's */
		if (m)
			elf = dwfl_module_getelf(m, &bias);
		if (!dwfl_attach_state(u->dwfl, elf, u->pid, &thread_callbacks, u)) {
			current = NULL;
			return 0;
		}
		u->attached = 1;
	}
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->len = len;
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	/* it ends with -1 where the CFI or the stack copy ends: normal */
	(void)dwfl_getthread_frames(u->dwfl, tid, frame_cb, u);
	if (u->n == 0 && max > 0)
		pcs[u->n++] = regs[MW_UR_IP];
	current = NULL;
	return u->n;
}

int mw_unwinder_covers(struct mw_unwinder *u, uint64_t addr)
{
	return dwfl_addrmodule(u->dwfl, addr) != NULL;
}

/* The n bytes of a build-id as hex into out (41 bytes). */
static void hex_id(const unsigned char *bits, int n, char *out)
{
	out[0] = '\0';
	for (int i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", bits[i]);
}

int mw_unwinder_build_id(struct mw_unwinder *u, uint64_t addr, char *out)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	Dwfl_Module *m;
	int n = 0;

	out[0] = '\0';
	current = u;
	if ((m = dwfl_addrmodule(u->dwfl, addr))) {
		(void)dwfl_module_getelf(m, &bias);	/* the build-id is read from it */
		if ((n = dwfl_module_build_id(m, &bits, &vaddr)) > 0)
			hex_id(bits, n, out);
	}
	current = NULL;
	return n > 0 ? 0 : -1;
}

int mw_build_id_of_fd(int fd, char *out)
{
	const void *bits;
	Elf *elf;
	ssize_t n = -1;

	out[0] = '\0';
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -1;
	if ((n = dwelf_elf_gnu_build_id(elf, &bits)) > 0)
		hex_id(bits, (int)n, out);
	elf_end(elf);
	return n > 0 ? 0 : -1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void mw_unwind_symbolize(struct mw_unwinder *u, uint64_t pc, int activation,
			 struct mw_frame *f)
{
	uint64_t at = activation || pc == 0 ? pc : pc - 1;
	const unsigned char *bits;
	GElf_Addr vaddr, off = 0;
	GElf_Sym sym;
	Dwfl_Module *m;
	Dwfl_Line *line;
	const char *s;
	int n;

	memset(f, 0, sizeof(*f));
	f->pc = pc;
	current = u;
	if (!(m = dwfl_addrmodule(u->dwfl, at)))
		goto out;
	if ((s = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL)))
		snprintf(f->module, sizeof(f->module), "%s", base_name(s));
	if ((n = dwfl_module_build_id(m, &bits, &vaddr)) > 0)
		hex_id(bits, n, f->build_id);
	if ((s = dwfl_module_addrinfo(m, at, &off, &sym, NULL, NULL, NULL))) {
		snprintf(f->function, sizeof(f->function), "%s", s);
		f->offset = pc - (at - off);
	}
	if ((line = dwfl_module_getsrc(m, at)) &&
	    (s = dwfl_lineinfo(line, NULL, &f->line, NULL, NULL, NULL)))
		snprintf(f->file, sizeof(f->file), "%s", s);
out:
	current = NULL;
}

void mw_unwinder_free(struct mw_unwinder *u)
{
	if (!u)
		return;
	current = u;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	current = NULL;
	free(u->files);
	free(u);
}
