/* ledger_maps.c - the process's mappings for the ledger: smaps (Rss and
 * Swap per mapping), smaps_rollup, thread stacks, pagemap words and the
 * mmapped chunks in anonymous mappings; see ledger.h and ledger_int.h.
 *
 * /proc/PID/task/TID/syscall (proc(5)) is one line: the system call's
 * number, its six arguments, the stack pointer and the program counter,
 * or "-1 SP PC" outside a call, or "running":
 *
 *	202 0x7f6e4c8a1910 0x80 0x0 0x0 0x0 0x0 0x7f6e4c0a0e60 0x7f6e4d2b8d36
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ledger.h"
#include "ledger_int.h"
#include "xalloc.h"

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PAGEMAP_PAGES 65536
#define HDR_BATCH 1024		/* IOV_MAX */
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define IS_MMAPPED 2ULL
#define SIZE_BITS 7ULL

/* Shared memory (shmem, tmpfs pages), as smaps names it: a shared
 * anonymous mapping ("/dev/zero (deleted)", MAP_SHARED|MAP_ANONYMOUS:
 * PostgreSQL's shared_buffers), SysV shm ("/SYSV0052e2c1 (deleted)"),
 * POSIX shm ("/dev/shm/NAME"), a memfd ("/memfd:NAME (deleted)"), a
 * named shared anonymous mapping ("[anon_shmem:NAME]"). */
static int is_shm(const struct lg_vma *m)
{
	if (strncmp(m->name, "/memfd:", 7) == 0 || strncmp(m->name, "/dev/shm/", 9) == 0 ||
	    strncmp(m->name, "[anon_shmem:", 12) == 0)
		return 1;
	if (m->perms[3] != 's')
		return 0;
	return strcmp(m->name, "/dev/zero (deleted)") == 0 ||
	       (strncmp(m->name, "/SYSV", 5) == 0 && strstr(m->name, " (deleted)"));
}

static int kind_of(const struct lg_vma *m)
{
	if (strcmp(m->name, "[stack]") == 0)
		return LG_STACK;
	if (is_shm(m))
		return LG_SHM;
	if (m->inode || m->name[0] == '/')
		return LG_FILE;
	if (m->name[0] == '[' && strcmp(m->name, "[heap]") != 0 &&
	    strncmp(m->name, "[anon", 5) != 0)
		return LG_KERNEL;	/* [vdso], [vvar], [vsyscall] */
	return LG_ANON;
}

/* One mapping's header line into m: 1, or 0 when it is not one. */
static int header_line(const char *line, struct lg_vma *m)
{
	unsigned long long s, e, off, ino;
	char perms[8], dev[32];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %31s %llu %n", &s, &e, perms, &off, dev, &ino,
		   &pos) < 6 || e < s)
		return 0;
	memset(m, 0, sizeof(*m));
	m->start = s;
	m->end = e;
	m->inode = ino;
	snprintf(m->perms, sizeof(m->perms), "%s", perms);
	snprintf(m->name, sizeof(m->name), "%.*s", (int)strcspn(line + pos, "\n"), line + pos);
	return 1;
}

int lg_read_smaps(pid_t pid, struct lg_vma **v, size_t *n, char *err, size_t errlen)
{
	char path[64], *line = NULL;
	size_t len = 0, cap = 0;
	unsigned long long kb;
	FILE *f;

	*v = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if (!(f = fopen(path, "re"))) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &len, f) > 0) {
		struct lg_vma m;

		if (header_line(line, &m)) {
			if (*n == MW_LEDGER_MAX_VMAS)
				break;
			if (*n == cap)
				xgrow((void **)v, *n, &cap, sizeof(**v));
			m.kind = kind_of(&m);
			(*v)[(*n)++] = m;
		} else if (*n && sscanf(line, "Rss: %llu kB", &kb) == 1) {
			(*v)[*n - 1].rss = kb * 1024;
		} else if (*n && sscanf(line, "Swap: %llu kB", &kb) == 1) {
			(*v)[*n - 1].swap = kb * 1024;
		}
	}
	free(line);
	fclose(f);
	if (!*n) {
		snprintf(err, errlen, "cannot read '%s': no mappings (the process exited?)", path);
		return -1;
	}
	return 0;
}

int lg_read_rollup(pid_t pid, uint64_t *rss, uint64_t *swap)
{
	char path[64], buf[4096];
	unsigned long long kb;
	const char *l;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0 || !(l = strstr(buf, "\nRss:")) ||
	    sscanf(l, "\nRss: %llu kB", &kb) != 1)
		return -1;
	*rss = kb * 1024;
	*swap = (l = strstr(buf, "\nSwap:")) && sscanf(l, "\nSwap: %llu kB", &kb) == 1 ?
		kb * 1024 : 0;
	return 0;
}

uint64_t lg_peak_rss(pid_t pid)
{
	char path[64], buf[4096];
	unsigned long long kb;
	const char *l;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0 || !(l = strstr(buf, "\nVmHWM:")) ||
	    sscanf(l, "\nVmHWM: %llu kB", &kb) != 1)
		return 0;
	return kb * 1024;
}

/* The mapping of v holding addr, or NULL (v sorted, binary search). */
static struct lg_vma *vma_at(struct lg_vma *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < v[mid].start)
			hi = mid;
		else if (addr >= v[mid].end)
			lo = mid + 1;
		else
			return &v[mid];
	}
	return NULL;
}

/* The stack pointer in a task's syscall file: 0 when not known. */
static uint64_t task_sp(pid_t pid, const char *tid)
{
	char path[96], buf[512], *w[12], *save = NULL;
	int nw = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%.16s/syscall", (int)pid, tid);
	if (mw_read_small(path, 0, buf, sizeof(buf)) < 0)
		return 0;
	for (char *t = strtok_r(buf, " \n", &save); t && nw < 12; t = strtok_r(NULL, " \n", &save))
		w[nw++] = t;
	return nw >= 3 ? strtoull(w[nw - 2], NULL, 16) : 0;
}

size_t lg_mark_stacks(pid_t pid, struct lg_vma *v, size_t n)
{
	char path[64];
	struct dirent *d;
	size_t found = 0, seen = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return 0;
	while ((d = readdir(dir)) && seen++ < 65536) {
		struct lg_vma *m;
		uint64_t sp;

		if (d->d_name[0] < '0' || d->d_name[0] > '9' || !(sp = task_sp(pid, d->d_name)))
			continue;
		m = vma_at(v, n, sp);
		if (m && m->kind == LG_ANON) {
			m->kind = LG_STACK;
			found++;
		}
	}
	closedir(dir);
	return found;
}

uint64_t lg_zero_pfn(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	volatile char *pg = mmap(NULL, (size_t)ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t w = 0;
	int fd;

	if (pg == MAP_FAILED)
		return 0;
	(void)pg[0];	/* a read fault maps the zero page */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread(fd, &w, sizeof(w), (off_t)((uintptr_t)pg / (uint64_t)ps * 8)) !=
	    sizeof(w))
		w = 0;
	if (fd >= 0)
		close(fd);
	munmap((void *)pg, (size_t)ps);
	return w & PM_PRESENT ? w & PM_PFN_MASK : 0;
}

int lg_pagemap(int fd, uint64_t addr, uint64_t page, uint64_t *buf, size_t npages)
{
	size_t want = npages * sizeof(*buf), got = 0;
	off_t off = (off_t)(addr / page * sizeof(*buf));

	while (got < want) {
		ssize_t r = pread(fd, (char *)buf + got, want - got, off + (off_t)got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Does [s, e) overlap a range of r? */
static int overlaps(const struct lg_range *r, size_t n, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < n; i++)
		if (s < r[i].end && r[i].start < e)
			return 1;
	return 0;
}

/* The first two words of n pages from a (resident or swapped: pm) into
 * hw[2 * k]: one process_vm_readv for up to HDR_BATCH pages, each page
 * read alone where that fails; an unread page's words are left 0. */
static void page_heads(struct mw_proc *p, uint64_t a, uint64_t page, const uint64_t *pm,
		       size_t n, uint64_t *hw)
{
	struct iovec loc[HDR_BATCH], rem[HDR_BATCH];
	size_t idx[HDR_BATCH];

	memset(hw, 0, n * 2 * sizeof(*hw));
	for (size_t k = 0; k < n;) {
		size_t m = 0;
		ssize_t got;

		for (; k < n && m < HDR_BATCH; k++) {
			if (!(pm[k] & (PM_PRESENT | PM_SWAPPED)))
				continue;
			idx[m] = k;
			loc[m] = (struct iovec){ .iov_base = &hw[2 * k], .iov_len = 16 };
			rem[m] = (struct iovec){ .iov_base = (void *)(uintptr_t)(a + k * page),
						 .iov_len = 16 };
			m++;
		}
		got = m ? process_vm_readv(p->pid, loc, (unsigned long)m, rem, (unsigned long)m, 0) : 0;
		if (got == (ssize_t)(m * 16))
			continue;
		for (size_t j = got > 0 ? (size_t)got / 16 : 0; j < m; j++)
			if (mw_proc_read(p, a + idx[j] * page, &hw[2 * idx[j]], 16) < 0)
				hw[2 * idx[j]] = hw[2 * idx[j] + 1] = 0;
	}
}

/* Mapping m's mmapped chunks: at a page's start (resident or swapped),
 * prev_size 0 (no alignment correction), IS_MMAPPED alone, whole pages
 * that fit in the mapping; the next one looked for past its end. */
static size_t vma_mmapped(struct mw_proc *p, int pmfd, const struct lg_vma *m, uint64_t page,
			  size_t *heads, struct lg_range **r, size_t *n, size_t *cap)
{
	uint64_t *pm = xcalloc(PAGEMAP_PAGES, sizeof(*pm)), *hw = xcalloc(PAGEMAP_PAGES * 2,
									  sizeof(*hw));
	uint64_t next = m->start;
	size_t found = 0;

	for (uint64_t a = m->start; a < m->end && *heads < MW_LEDGER_MAX_MMAPPED;) {
		size_t np = (size_t)((m->end - a) / page);

		if (np > PAGEMAP_PAGES)
			np = PAGEMAP_PAGES;
		if (lg_pagemap(pmfd, a, page, pm, np) < 0)
			break;
		page_heads(p, a, page, pm, np, hw);
		*heads += np;
		for (size_t k = 0; k < np; k++) {
			uint64_t at = a + k * page, sz = hw[2 * k + 1] & ~SIZE_BITS;

			if (at < next || hw[2 * k] || (hw[2 * k + 1] & SIZE_BITS) != IS_MMAPPED ||
			    !sz || sz % page || sz > m->end - at)
				continue;
			if (*n == *cap)
				xgrow((void **)r, *n, cap, sizeof(**r));
			(*r)[(*n)++] = (struct lg_range){ .start = at, .end = at + sz, .cstart = at,
							  .cend = at + sz, .arena = -1 };
			found++;
			next = at + sz;
		}
		a += np * page;
	}
	free(pm);
	free(hw);
	return found;
}

size_t lg_find_mmapped(struct mw_proc *p, const struct lg_vma *v, size_t nv, uint64_t page,
		       struct lg_range **r, size_t *n, size_t *cap)
{
	size_t heads = 0, found = 0, nregions = *n;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)p->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	for (size_t i = 0; i < nv && heads < MW_LEDGER_MAX_MMAPPED; i++) {
		const struct lg_vma *m = &v[i];

		if (m->kind != LG_ANON || strcmp(m->perms, "rw-p") != 0 ||
		    overlaps(*r, nregions, m->start, m->end))
			continue;
		found += vma_mmapped(p, fd, m, page, &heads, r, n, cap);
	}
	close(fd);
	return found;
}
