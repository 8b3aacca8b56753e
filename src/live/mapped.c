/* mapped.c - the files a process maps, found through /proc/PID/maps and
 * opened through /proc/PID/map_files; see mapped.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gelf.h>
#include <lzma.h>

#include "fsutil.h"
#include "mapped.h"

static const char *const lib_prefix[][2] = {
	[MW_LIB_LIBC] = { "libc.so", "libc-" },
	[MW_LIB_LIBM] = { "libm.so", "libm-" },
};

static int base_matches(const char *path, enum mw_mapped_lib lib)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	for (int i = 0; i < 2; i++)
		if (strncmp(b, lib_prefix[lib][i], strlen(lib_prefix[lib][i])) == 0)
			return 1;
	return 0;
}

/* One maps line into m (start, end, device, inode, name) and *off, *exec
 * (its file offset, whether it is mapped executable); 1 when it maps a
 * file, 0 for anything else, -1 when it does not parse. */
static int parse_line(char *line, struct mw_mapped *m, uint64_t *off, int *exec)
{
	unsigned long long start, end, o, ino;
	unsigned int maj, min;
	char perms[8], *path;
	size_t n;
	int used = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &o, &maj,
		   &min, &ino, &used) != 7 || !used)
		return -1;
	path = line + used;
	path[strcspn(path, "\n")] = '\0';
	if (path[0] != '/')
		return 0;
	n = strlen(path);
	m->deleted = n > 10 && strcmp(path + n - 10, " (deleted)") == 0;
	if (m->deleted)
		path[n - 10] = '\0';
	snprintf(m->name, sizeof(m->name), "%s", path);
	m->start = start;
	m->end = end;
	m->dev_major = maj;
	m->dev_minor = min;
	m->ino = ino;
	*off = o;
	*exec = strlen(perms) >= 3 && perms[2] == 'x';
	return 1;
}

/* The files of a name lib matches, as maps shows them: each one's
 * mapping at offset 0 and whether any mapping of it is executable. */
#define MAX_CANDIDATES 16
struct candidate {
	struct mw_mapped m;	/* its mapping at offset 0 (start 0: none seen) */
	int exec;
};

static void note_candidate(struct candidate *c, size_t *n, const struct mw_mapped *m,
			   uint64_t off, int exec)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (c[i].m.ino == m->ino && c[i].m.dev_major == m->dev_major &&
		    c[i].m.dev_minor == m->dev_minor)
			break;
	if (i == *n) {
		if (*n == MAX_CANDIDATES)
			return;
		memset(&c[i], 0, sizeof(c[i]));
		c[i].m.pid = m->pid;
		c[i].m.dev_major = m->dev_major;
		c[i].m.dev_minor = m->dev_minor;
		c[i].m.ino = m->ino;
		(*n)++;
	}
	if (off == 0 && !c[i].m.start)
		c[i].m = *m;
	c[i].exec |= exec;
}

int mw_mapped_find(pid_t pid, enum mw_mapped_lib lib, struct mw_mapped *m, char *err,
		   size_t errlen)
{
	char maps[64], line[PATH_MAX + 256];
	struct candidate *c = calloc(MAX_CANDIDATES, sizeof(*c));
	size_t nc = 0;
	FILE *f;
	int found = 0;

	memset(m, 0, sizeof(*m));
	m->pid = pid;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!c || !(f = fopen(maps, "re"))) {
		if (c && errno == ENOENT)
			snprintf(err, errlen, "no process %d", (int)pid);
		else
			snprintf(err, errlen, "cannot read '%s': %s", maps, strerror(errno));
		free(c);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct mw_mapped cand = { .pid = pid };
		uint64_t off;
		int r, exec;

		if (!strchr(line, '\n') && !feof(f)) {
			int ch;	/* longer than PATH_MAX: not a library of ours */

			while ((ch = getc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		r = parse_line(line, &cand, &off, &exec);
		if (r < 0) {
			snprintf(err, errlen, "'%s' has a line that does not parse", maps);
			fclose(f);
			free(c);
			return -1;
		}
		if (r == 1 && base_matches(cand.name, lib))
			note_candidate(c, &nc, &cand, off, exec);
	}
	fclose(f);
	/* the one loaded: a file a process only reads (a debugger, or
	 * mallocwatch itself through libelf, maps a libc.so.6 as data) has
	 * no executable mapping */
	for (size_t i = 0; i < nc && !found; i++)
		if (c[i].exec && c[i].m.start) {
			*m = c[i].m;
			found = 1;
		}
	err[0] = '\0';
	if (!found && nc)	/* the loader maps it whole, then its code */
		snprintf(err, errlen, "process %d maps %s as data alone, with no code mapped "
			 "from it: a program still loading it (try again), or one that only "
			 "reads the file", (int)pid, lib == MW_LIB_LIBC ? "libc" : "libm");
	free(c);
	return found;
}

/* m's entry name in /proc/PID/map_files: "START-END" in lower-case hex. */
static void range_name(const struct mw_mapped *m, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIx64 "-%" PRIx64, m->start, m->end);
}

void mw_mapped_proc_path(const struct mw_mapped *m, char *buf, size_t len)
{
	char range[48];

	range_name(m, range, sizeof(range));
	snprintf(buf, len, "/proc/%d/map_files/%s", (int)m->pid, range);
}

static int same_file(const struct mw_mapped *m, const struct stat *sb)
{
	return S_ISREG(sb->st_mode) && major(sb->st_dev) == m->dev_major &&
	       minor(sb->st_dev) == m->dev_minor && (uint64_t)sb->st_ino == m->ino;
}

static int checked(const struct mw_mapped *m, int fd, char *err, size_t errlen)
{
	struct stat sb;

	if (fstat(fd, &sb) == 0 && same_file(m, &sb))
		return fd;
	snprintf(err, errlen, "process %d's mapping at 0x%" PRIx64 " is not the file its maps "
		 "names (device and inode differ): it changed while it was read", (int)m->pid,
		 m->start);
	close(fd);
	return -1;
}

int mw_mapped_open(const struct mw_mapped *m, char *err, size_t errlen)
{
	char path[96];
	int fd;

	mw_mapped_proc_path(m, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == EPERM) {
		/* map_files needs CAP_SYS_ADMIN; a user reading a process of
		 * their own: the name, in its root, then in ours, if it is
		 * still the file (O_NONBLOCK: a FIFO planted there must not
		 * hang us; same_file wants a regular file) */
		char alt[PATH_MAX + 64];
		int e = errno;

		snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)m->pid, m->name);
		for (int i = 0; i < 2 && fd < 0; i++) {
			struct stat sb;

			fd = open(i ? m->name : alt, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			if (fd >= 0 && (fstat(fd, &sb) < 0 || !same_file(m, &sb))) {
				close(fd);
				fd = -1;
			}
		}
		errno = e;
	}
	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(err, errlen, "process %d exited or unmapped '%s' while it was "
				 "read", (int)m->pid, m->name);
		else
			snprintf(err, errlen, "cannot open '%s' (process %d's '%s'): %s%s", path,
				 (int)m->pid, m->name, strerror(errno), errno == EPERM ?
				 " (needs root)" : "");
		return -1;
	}
	return checked(m, fd, err, errlen);
}

int mw_mapped_here(const struct mw_mapped *m)
{
	struct stat sb;

	return !m->deleted && stat(m->name, &sb) == 0 && same_file(m, &sb);
}

/* A detached copy (open_tree(2), OPEN_TREE_CLONE) of the mount holding
 * m's file, made in the process's own mount namespace by a child (setns
 * needs one thread) and passed back over a socket.  The fd or -1. */
static int clone_in_their_ns(const struct mw_mapped *m, char *err, size_t errlen)
{
	char mf[64], ns[64], name[48], cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, byte = 0;
	struct iovec io = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int sv[2], fd = -1, st;
	pid_t child;

	snprintf(mf, sizeof(mf), "/proc/%d/map_files", (int)m->pid);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)m->pid);
	range_name(m, name, sizeof(name));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child == 0) {
		int dir = open(mf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		int nsfd = open(ns, O_RDONLY | O_CLOEXEC);
		int t;

		if (dir < 0 || nsfd < 0 || setns(nsfd, CLONE_NEWNS) < 0)
			_exit(1);
		if ((t = open_tree(dir, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0)
			_exit(2);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &t, sizeof(t));
		_exit(sendmsg(sv[1], &msg, MSG_NOSIGNAL) == 1 ? 0 : 3);
	}
	close(sv[1]);
	if (child > 0 && recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) == 1 &&
	    (cm = CMSG_FIRSTHDR(&msg)) && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	close(sv[0]);
	if (child > 0)
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
	if (fd < 0)
		snprintf(err, errlen, "cannot reach process %d's '%s' in its mount namespace%s",
			 (int)m->pid, m->name, child < 0 ? ": fork failed" : " (it exited, or "
			 "mallocwatch lacks CAP_SYS_ADMIN)");
	return fd;
}

/* Our own mount namespace, once: private to us, with a tmpfs on
 * MW_MAPPED_DIR. */
static int private_ns(char *err, size_t errlen)
{
	static int done;
	char fdpath[64];
	int run, dir;

	if (done)
		return 0;
	if ((run = mw_dir_open_safe("/run/mallocwatch", 1, 0, err, errlen)) < 0)
		return -1;
	close(run);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		snprintf(err, errlen, "cannot make a private mount namespace for the files of "
			 "another mount namespace: %s", strerror(errno));
		return -1;
	}
	/* opened in the new namespace: a descriptor from the old one names
	 * the old namespace's mount, which cannot be mounted on from here */
	if ((dir = mw_dir_open_safe(MW_MAPPED_DIR, 1, 0, err, errlen)) < 0)
		return -1;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", dir);
	if (mount("mallocwatch", fdpath, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0700,size=64k") < 0) {
		snprintf(err, errlen, "cannot mount a tmpfs on '%s': %s", MW_MAPPED_DIR,
			 strerror(errno));
		close(dir);
		return -1;
	}
	close(dir);
	done = 1;
	return 0;
}

int mw_mapped_mount(const struct mw_mapped *m, const char *name, char *out, size_t len,
		    char *err, size_t errlen)
{
	int tree, fd;

	if (private_ns(err, errlen) < 0)
		return -1;
	/* the mount is ours when the process shares our namespace */
	{
		char mf[64], range[48];
		int dir;

		snprintf(mf, sizeof(mf), "/proc/%d/map_files", (int)m->pid);
		range_name(m, range, sizeof(range));
		dir = open(mf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		tree = dir < 0 ? -1 : open_tree(dir, range, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (dir >= 0)
			close(dir);
	}
	if (tree < 0 && (tree = clone_in_their_ns(m, err, errlen)) < 0)
		return -1;
	if (checked(m, tree, err, errlen) < 0)
		return -1;
	snprintf(out, len, "%s/%s", MW_MAPPED_DIR, name);
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (fd < 0 || move_mount(tree, "", AT_FDCWD, out, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		snprintf(err, errlen, "cannot mount process %d's '%s' on '%s': %s", (int)m->pid,
			 m->name, out, strerror(errno));
		if (fd >= 0)
			close(fd);
		close(tree);
		return -1;
	}
	close(fd);
	close(tree);
	return 0;
}

/* The bytes an xz image decodes to, counted up to just past max; as
 * libdwfl decodes .gnu_debugdata (lzma_auto_decoder, 1 GiB memory
 * limit, the first stream only). */
static uint64_t xz_out(const void *in, size_t len, uint64_t max)
{
	lzma_stream z = LZMA_STREAM_INIT;
	uint8_t buf[65536];
	uint64_t out = 0;
	lzma_ret r;

	if (lzma_auto_decoder(&z, 1ULL << 30, 0) != LZMA_OK)
		return 0;
	z.next_in = in;
	z.avail_in = len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		r = lzma_code(&z, LZMA_RUN);
		out += sizeof(buf) - z.avail_out;
	} while (r == LZMA_OK && out <= max);
	lzma_end(&z);
	return out;
}

static void add_sat(uint64_t *sum, uint64_t v)
{
	*sum = v > UINT64_MAX - *sum ? UINT64_MAX : *sum + v;
}

/* What the sections of elf would decompress to, in all, into *sum.  0,
 * or -1 when a section or its compression header cannot be read. */
static int inflated(Elf *elf, uint64_t *sum)
{
	size_t shstrndx = 0;
	Elf_Scn *scn = NULL;

	*sum = 0;
	(void)elf_getshdrstrndx(elf, &shstrndx);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *d;
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &ch))
				return -1;
			add_sat(sum, ch.ch_size);
		} else if (nm && strncmp(nm, ".zdebug", 7) == 0) {
			/* "ZLIB", then the size, 8 bytes big-endian */
			const unsigned char *b;
			uint64_t v = 0;

			if (!(d = elf_rawdata(scn, NULL)) || d->d_size < 12 ||
			    memcmp(d->d_buf, "ZLIB", 4) != 0)
				continue;	/* libdw reads it as it is */
			b = (const unsigned char *)d->d_buf + 4;
			for (int i = 0; i < 8; i++)
				v = v << 8 | b[i];
			add_sat(sum, v);
		} else if (nm && strcmp(nm, ".gnu_debugdata") == 0) {
			if ((d = elf_rawdata(scn, NULL)) && d->d_size)
				add_sat(sum, xz_out(d->d_buf, d->d_size, MW_ELF_XZ_MAX));
		}
	}
	return 0;
}

/* MALLOCWATCH_ELF_MB in bytes (MW_ELF_MB when unset or not 1 to 65536) */
static uint64_t elf_cap(void)
{
	const char *env = getenv("MALLOCWATCH_ELF_MB");
	char *end;
	unsigned long mb = env ? strtoul(env, &end, 10) : 0;

	if (!env || !*env || *end || mb < 1 || mb > 65536)
		mb = MW_ELF_MB;
	return (uint64_t)mb << 20;
}

/* size bytes of fd into a sealed memfd: its descriptor, or -1 */
static int private_copy(int fd, off_t size)
{
	int copy = memfd_create("mallocwatch-elf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	off_t off = 0;

	while (copy >= 0 && off < size) {
		ssize_t n = sendfile(copy, fd, &off, (size_t)(size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {	/* 0: the file shrank meanwhile */
			close(copy);
			return -1;
		}
	}
	if (copy >= 0 && fcntl(copy, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
			       F_SEAL_SEAL) < 0) {
		close(copy);
		return -1;
	}
	return copy;
}

int mw_elf_vet(int fd, const char *name, char *err, size_t errlen)
{
	uint64_t cap = elf_cap(), sum = 0;
	struct stat sb;
	Elf *elf = NULL;
	int ok;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file: not read", name);
		goto fail;
	}
	if (sb.st_uid != 0 || (sb.st_mode & 022)) {	/* its owner could change it */
		int copy;

		if ((uint64_t)sb.st_size > cap) {
			snprintf(err, errlen, "'%s' is larger than the %" PRIu64 " MiB mallocwatch "
				 "copies of a file another user can change (MALLOCWATCH_ELF_MB): "
				 "not read", name, cap >> 20);
			goto fail;
		}
		if ((copy = private_copy(fd, sb.st_size)) < 0) {
			snprintf(err, errlen, "cannot copy '%s': %s", name, strerror(errno));
			goto fail;
		}
		close(fd);
		fd = copy;
	}
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "'%s' is not an ELF file: not read", name);
		goto fail;
	}
	if (inflated(elf, &sum) < 0) {
		snprintf(err, errlen, "'%s' has a section that cannot be read: %s; not read", name,
			 elf_errmsg(-1));
		goto fail;
	}
	ok = sum <= cap && sum / MW_ELF_RATIO <= (uint64_t)sb.st_size;
	if (!ok) {
		snprintf(err, errlen, "'%s' has compressed sections that would decompress to more "
			 "than mallocwatch reads (%" PRIu64 " MiB, MALLOCWATCH_ELF_MB, and %d times "
			 "the file's size): not read", name, cap >> 20, MW_ELF_RATIO);
		goto fail;
	}
	elf_end(elf);
	return fd;
fail:
	if (elf)
		elf_end(elf);
	close(fd);
	return -1;
}
