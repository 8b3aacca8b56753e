/* stacks_live.c - the watched processes' module maps as the kernel
 * reports them (stacks_int.h): the side-band records of the first event
 * of each CPU's ring (perf_event_open(2): attr.mmap, mmap2, build_id,
 * comm, comm_exec, sample_id_all), read in time order with the samples.
 *
 *	PERF_RECORD_MMAP2  u32 pid, tid; u64 addr, len, pgoff;
 *	                   u8 build_id_size, 3 reserved, u8 build_id[20];
 *	                   u32 prot, flags; char filename[]; sample_id
 *	PERF_RECORD_COMM   u32 pid, tid; char comm[]; sample_id
 *	                   (misc PERF_RECORD_MISC_COMM_EXEC: an exec)
 *
 * A process seen to exec after the events were opened (a -c program, a
 * shell wrapper's exec) has its whole module map from these records: its
 * executable mappings (attr.mmap reports PROT_EXEC ones) from the exec
 * on.  A sample of it is unwound in the map as it was when the sample was
 * taken, even when the process has exec'd another program since (its
 * /proc/PID/maps then shows the new one).  A module is placed from its
 * executable mapping as the whole file from offset 0 (start - pgoff: an
 * ELF object's segments keep their file offsets' distances, its first
 * PT_LOAD at offset 0), which is what libdwfl needs to place it.  Its
 * file is opened in the process's root (/proc/PID/root), else in ours,
 * else beside the traced libc (the probe-enabled glibc is mapped under
 * the system's names in the program's mount namespace), and used only
 * when its build-id is the one the kernel reported.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "fsutil.h"
#include "stacks_int.h"
#include "xalloc.h"

void stk_proc_exec(struct stk_proc *p)
{
	for (size_t i = 0; i < p->nlm; i++)
		free(p->lm[i].path);
	p->nlm = 0;
	p->lm_known = 1;
	p->lm_dirty = 1;
}

void stk_proc_mmap(struct stk_proc *p, uint64_t addr, uint64_t len, uint64_t pgoff,
		   const char *path, const char *build_id)
{
	size_t n = 0;

	if (!p->lm_known || path[0] != '/' || len == 0 || pgoff > addr)
		return;	/* before its exec, or anonymous, [vdso]... */
	/* a mapping over others replaces them (munmap is not reported) */
	for (size_t i = 0; i < p->nlm; i++)
		if (p->lm[i].end <= addr || p->lm[i].start >= addr + len)
			p->lm[n++] = p->lm[i];
		else
			free(p->lm[i].path);
	p->nlm = n;
	XGROW(p->lm, p->nlm + 1, p->clm);
	p->lm[p->nlm] = (struct stk_map){ .start = addr, .end = addr + len, .offset = pgoff,
					  .path = xstrdup(path) };
	snprintf(p->lm[p->nlm++].build_id, sizeof(p->lm[0].build_id), "%s", build_id);
	p->lm_dirty = 1;
}

/* path (relative to at, resolved inside it with resolve) opened when its
 * build-id is id (any file when id is ""): the descriptor, else -1. */
static int open_with_id(int at, const char *path, unsigned long long resolve, const char *id)
{
	char have[41];
	int fd = mw_open_regular(at, path, resolve, 0);	/* never a FIFO or a device */

	if (fd >= 0 && id[0] && (mw_build_id_of_fd(fd, have) < 0 || strcmp(have, id) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* m's file: in p's root, in ours, beside the traced libc. */
static int open_live(struct mw_stacks *s, struct stk_proc *p, const struct stk_map *m)
{
	char alt[PATH_MAX + 64];
	const char *base = strrchr(m->path, '/');
	int fd = -1, root;

	/* in p's root, its links resolved there (a link of the process's
	 * cannot lead to a file of ours) */
	snprintf(alt, sizeof(alt), "/proc/%d/root", (int)p->pid);
	if ((root = open(alt, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fd = open_with_id(root, m->path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
				  m->build_id);
		close(root);
	}
	if (fd < 0 && m->build_id[0])
		fd = open_with_id(AT_FDCWD, m->path, 0, m->build_id);
	if (fd < 0 && m->build_id[0] && s->libc_path && strrchr(s->libc_path, '/') &&
	    (size_t)snprintf(alt, sizeof(alt), "%.*s%s",
			     (int)(strrchr(s->libc_path, '/') - s->libc_path), s->libc_path,
			     base) < sizeof(alt))
		fd = open_with_id(AT_FDCWD, alt, 0, m->build_id);
	return fd;
}

struct stk_image *stk_image_at(struct stk_proc *p, size_t i)
{
	if (i >= p->nimg) {
		XGROW(p->img, i + 1, p->cimg);
		memset(p->img + p->nimg, 0, (i + 1 - p->nimg) * sizeof(*p->img));
		p->nimg = i + 1;
	}
	return &p->img[i];
}

void stk_image_clear(struct stk_image *im)
{
	mw_unwinder_free(im->u);
	free(im->maps);
	for (size_t i = 0; i < im->nmap; i++)
		free(im->map[i].path);
	free(im->map);
	memset(im, 0, sizeof(*im));
}

/* The maps text of p's list (each module from offset 0, see above) into
 * a new string; its files opened into p->files. */
static char *live_maps(struct mw_stacks *s, struct stk_proc *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < p->nlm; i++) {
		const struct stk_map *m = &p->lm[i];
		int have = 0, fd;

		for (size_t j = 0; j < p->nfiles && !have; j++)
			have = strcmp(p->files[j].name, m->path) == 0;
		if (!have && (fd = open_live(s, p, m)) < 0)
			continue;	/* not that file: the map alone names it */
		if (!have) {
			XGROW(p->files, p->nfiles + 1, p->cfiles);
			p->files[p->nfiles].name = xstrdup(m->path);
			p->files[p->nfiles++].fd = fd;
		}
		/* (libdwfl skips inode 0 and joins lines of one inode) */
		fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp 00000000 00:01 %zu %s\n",
			m->start - m->offset, m->end, i + 1, m->path);
	}
	fclose(f);
	return text;
}

struct stk_image *stk_proc_live_image(struct mw_stacks *s, struct stk_proc *p)
{
	char err[256];
	struct stk_image *im = NULL;

	for (size_t i = p->nimg; i > 0 && !im; i--)
		if (p->img[i - 1].live)
			im = &p->img[i - 1];
	if (im && !p->lm_dirty)
		return im;
	if (!im || im->nev)
		im = stk_image_at(p, p->nimg);
	else
		stk_image_clear(im);
	im->live = 1;
	im->maps = live_maps(s, p);
	im->mapped = 1;
	for (size_t i = 0; i < p->nlm; i++) {
		struct stk_map m = p->lm[i];

		m.start -= m.offset;
		m.offset = 0;
		m.path = xstrdup(m.path);
		XGROW(im->map, im->nmap + 1, im->cmap);
		im->map[im->nmap++] = m;
	}
	if (im->maps)
		im->u = mw_unwinder_new(p->pid, im->maps, p->files, p->nfiles, err, sizeof(err));
	p->lm_dirty = 0;
	return im;
}

void stk_proc_live_free(struct stk_proc *p)
{
	for (size_t i = 0; i < p->nlm; i++)
		free(p->lm[i].path);
	free(p->lm);
	p->lm = NULL;
	p->nlm = p->clm = 0;
}
