/* kmod_sources.c - the kernel runtime's mends (kmod_sources.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cache.h"
#include "fsutil.h"
#include "hash.h"
#include "kmod_sources.h"
#include "runtime.h"
#include "spawn.h"

/* print_flush.c's test that drops a message whose header was not given
 * its whole size (SystemTap 4.6 to 5.0: the bug; before 4.6 the reserve
 * never split a header, 5.1 pads and retries), and the comment upstream's
 * fix carries. */
#define RELAY_BUG "bytes_reserved > hlen"
#define RELAY_FIXED "header straddle"
/* The kernel's new name, and what upstream's 5.2 runtime calls. */
#define TW_FUNC "task_work_cancel_func"
#define TW_TYPE_OLD "typeof(&task_work_cancel)"
#define TW_TYPE_NEW "typeof(&" TW_FUNC ")"
#define TW_SYM_OLD "kallsyms_lookup_name(\"task_work_cancel\")"
#define TW_SYM_NEW "kallsyms_lookup_name(\"" TW_FUNC "\")"
/* Linux 6.12's uprobes: what the kernel declares and upstream's 5.2
 * runtime calls, the texts of uprobes-inode.c replaced (each exactly
 * once; then, where they are, the texts 6.12's compile flags refuse), and
 * the name transport.c looks up (it must resolve when the module loads). */
#define UP_FUNC "uprobe_unregister_nosync"
static const char *const up_needed[][2] = {
	{ "typedef typeof(&uprobe_unregister) uprobe_unregister_fn;",
	  "typedef typeof(&" UP_FUNC ") uprobe_unregister_fn;" },
	{ "struct uprobe_consumer kconsumer;",
	  "struct uprobe_consumer kconsumer; struct uprobe *mw_uprobe; /* mallocwatch: 6.12 */" },
	{ "ret = uprobe_register (inst->inode, c->offset, &inst->kconsumer);",
	  "{ inst->mw_uprobe = uprobe_register (inst->inode, c->offset, 0, &inst->kconsumer); "
	  "ret = IS_ERR(inst->mw_uprobe) ? (int) PTR_ERR(inst->mw_uprobe) : 0; "
	  "if (ret) inst->mw_uprobe = NULL; }" },
	{ "(void) uprobe_unregister (inst->inode, c->offset, &inst->kconsumer);",
	  "if (inst->mw_uprobe) { " UP_FUNC " (inst->mw_uprobe, &inst->kconsumer); "
	  "uprobe_unregister_sync (); } inst->mw_uprobe = NULL;" },
};
static const char *const up_optional[][2] = {
	{ "#define uprobe_register(a,b,c) \\\nibt_wrapper(int, (* (uprobe_register_fn)"
	  "kallsyms_uprobe_register)((a), (b), (c)))",
	  "#define uprobe_register(a,b,c,d) \\\nibt_wrapper(struct uprobe *, (* (uprobe_register_fn)"
	  "kallsyms_uprobe_register)((a), (b), (c), (d)))" },
	{ "  else\n    ; // already unlocked\n", "  /* else: already unlocked (-Wempty-body) */\n" },
};
#define UP_SYM_OLD "kallsyms_lookup_name (\"uprobe_unregister\");"
#define UP_SYM_NEW "kallsyms_lookup_name (\"" UP_FUNC "\");"
#define MENDS 4

/* text with from, which must be in it exactly once, replaced by to, into
 * *out (malloc'd); 1, or -1 (*out NULL). */
static int replace_once(const char *text, const char *from, const char *to, char **out)
{
	const char *at = strstr(text, from);
	size_t head, flen = strlen(from), tlen = strlen(to);
	char *m;

	*out = NULL;
	if (!at || strstr(at + flen, from))
		return -1;
	head = (size_t)(at - text);
	m = malloc(strlen(text) - flen + tlen + 1);
	if (!m)
		return -1;
	memcpy(m, text, head);
	memcpy(m + head, to, tlen);
	strcpy(m + head + tlen, at + flen);
	*out = m;
	return 1;
}

int mw_krt_mend_relay(const char *relay_v2, const char *print_flush, char **mended)
{
	*mended = NULL;
	if (strstr(print_flush, RELAY_FIXED) || !strstr(print_flush, RELAY_BUG))
		return 0;
	return replace_once(relay_v2, MW_KRT_RELAY_ANCHOR, MW_KRT_RELAY_MENDED, mended);
}

int mw_krt_mend_task_work(const char *stp_task_work, int kernel_has_func, char **mended)
{
	char *half;
	int r;

	*mended = NULL;
	if (!kernel_has_func || strstr(stp_task_work, TW_FUNC))
		return 0;
	if (replace_once(stp_task_work, TW_TYPE_OLD, TW_TYPE_NEW, &half) < 0)
		return -1;
	r = replace_once(half, TW_SYM_OLD, TW_SYM_NEW, mended);
	free(half);
	return r;
}

/* text with each pair of the table's from replaced by its to: once each
 * (needed), or where it is (not needed); into *text, replaced (malloc'd).
 * 1, or -1 (*text unchanged) when a needed one is not there once. */
static int replace_all(char **text, const char *const (*tab)[2], size_t n, int needed)
{
	char *next;

	for (size_t i = 0; i < n; i++) {
		if (replace_once(*text, tab[i][0], tab[i][1], &next) < 0) {
			if (needed)
				return -1;
			continue;
		}
		free(*text);
		*text = next;
	}
	return 1;
}

int mw_krt_mend_uprobes(const char *uprobes_inode, int kernel_has_func, char **mended)
{
	char *m;

	*mended = NULL;
	if (!kernel_has_func || strstr(uprobes_inode, UP_FUNC))
		return 0;
	if (!(m = strdup(uprobes_inode)))
		return -1;
	if (replace_all(&m, up_needed, sizeof(up_needed) / sizeof(up_needed[0]), 1) < 0) {
		free(m);
		return -1;
	}
	replace_all(&m, up_optional, sizeof(up_optional) / sizeof(up_optional[0]), 0);
	*mended = m;
	return 1;
}

int mw_krt_mend_uprobes_sym(const char *transport, int kernel_has_func, char **mended)
{
	*mended = NULL;
	if (!kernel_has_func || strstr(transport, UP_FUNC))
		return 0;
	return replace_once(transport, UP_SYM_OLD, UP_SYM_NEW, mended);
}

/* The whole of the file dir/name (at most 1 MiB), NUL-terminated and
 * malloc'd; NULL with errno set. */
static char *slurp(const char *dir, const char *name)
{
	char path[PATH_MAX];
	size_t got = 0, cap = 65536;
	char *buf;
	ssize_t n = 1;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	buf = malloc(cap);
	while (buf && n > 0) {
		if (got + 1 == cap) {
			char *b = cap < (1u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!b) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			buf = b;
			cap *= 2;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n > 0)
			got += (size_t)n;
	}
	close(fd);
	if (buf && n < 0) {
		free(buf);
		return NULL;
	}
	if (buf)
		buf[got] = '\0';
	return buf;
}

/* text into dir/name, which the copy made (in our private directory). */
static int put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	size_t len = strlen(text);
	int fd, e;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = write(fd, text, len) != (ssize_t)len;
	return close(fd) < 0 || e ? -1 : 0;
}

/* Does the kernel built in kbuild ("": the running one's build tree)
 * declare func() (task_work_cancel_func, uprobe_unregister_nosync)?  Its
 * headers say: include/linux/HEADER in the build tree, or in the tree its
 * Makefile includes (Debian splits the headers in two: the build tree's
 * Makefile reads the -common tree's).  Without them, the running kernel's
 * /proc/kallsyms, for the running kernel alone. */
static int kernel_declares(const char *kbuild, const char *header, const char *func)
{
	char kb[PATH_MAX], common[PATH_MAX] = "";
	const char *tries[3];
	struct utsname u;
	char *text, *mk;
	int has = 0;

	if (kbuild && *kbuild) {
		snprintf(kb, sizeof(kb), "%s", kbuild);
	} else {
		uname(&u);
		snprintf(kb, sizeof(kb), "/lib/modules/%s/build", u.release);
	}
	if ((mk = slurp(kb, "Makefile"))) {
		/* "include /usr/src/linux-headers-X-common/Makefile" */
		for (char *l = mk; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			size_t n = strcspn(l, "\n");

			if (n > 17 && n < sizeof(common) + 8 && strncmp(l, "include /", 9) == 0 &&
			    strncmp(l + n - 9, "/Makefile", 9) == 0) {
				snprintf(common, sizeof(common), "%.*s", (int)(n - 17), l + 8);
				break;
			}
		}
		free(mk);
	}
	tries[0] = kb;
	tries[1] = common[0] ? common : NULL;
	tries[2] = NULL;
	for (int i = 0; tries[i]; i++)
		if ((text = slurp(tries[i], header))) {
			has = strstr(text, func) != NULL;
			free(text);
			return has;
		}
	if (kbuild && *kbuild)
		return 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while (f && !has && (n = getline(&line, &cap, f)) > 0) {
		char *name = strrchr(line, ' ');

		has = name && strncmp(name + 1, func, strlen(func)) == 0 &&
		      strcmp(name + 1 + strlen(func), "\n") == 0;
	}
	free(line);
	if (f)
		fclose(f);
	return has;
}

/* One mend in the copy: nothing when r is 0; what to write when 1; a
 * line for err when -1. */
struct mend {
	const char *file;	/* in the runtime */
	const char *bug;	/* for the warning */
	int r;
	char *text;
};

/* sys copied to dest (which must not exist), the mends written into it;
 * 0, or -1 with err set. */
static int make_copy(const char *sys, const char *dest, const struct mend *m, char *err,
		     size_t errlen)
{
	/* -L: the copy holds no link, so that no write of the mends can go
	 * through one into stap's own runtime */
	const char *argv[] = { "cp", "-R", "-L", "--", sys, dest, NULL };
	char msg[400];

	if (mw_run_capture((char *const *)argv, NULL, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "cannot copy SystemTap's runtime: %s", msg);
		return -1;
	}
	for (int i = 0; i < MENDS; i++)
		if (m[i].r == 1 && put(dest, m[i].file, m[i].text) < 0) {
			snprintf(err, errlen, "cannot write the mended %s in '%s': %s", m[i].file,
				 dest, strerror(errno));
			return -1;
		}
	return 0;
}

/* Remove path (in base) through a locked temporary name: a removal cut
 * short leaves a temporary for the sweep (cache.h), never half a copy
 * under a name a run would use. */
static void drop(const char *base, const char *path)
{
	char tmp[PATH_MAX];
	int fd = mw_cache_tmpdir(base, tmp, sizeof(tmp));

	if (fd < 0)
		return;
	if (rename(path, tmp) == 0)
		mw_remove_tree(tmp);
	else
		rmdir(tmp);
	close(fd);
}

/* The copies in base made before from the runtime whose hash is src
 * (its stap upgraded since), and those of a mallocwatch that named them
 * by one hash alone, removed; keep is the one in use. */
static void prune(const char *base, uint64_t src, const char *keep)
{
	char head[24], p[PATH_MAX + NAME_MAX + 2];
	const char *kname = strrchr(keep, '/') + 1;
	struct dirent *e;
	DIR *d = opendir(base);

	snprintf(head, sizeof(head), "%016llx-", (unsigned long long)src);
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		int old = n == 16 && strspn(e->d_name, "0123456789abcdef") == 16;

		if (strcmp(e->d_name, kname) == 0 ||
		    !(old || (n == 33 && strncmp(e->d_name, head, 17) == 0)))
			continue;
		snprintf(p, sizeof(p), "%s/%s", base, e->d_name);
		drop(base, p);
	}
	if (d)
		closedir(d);
}

/* The mended copy kept in MW_CACHE_DIR/runtime (root's alone), named
 * SRC-HASH: SRC a hash of the runtime's path, HASH one of what the copy
 * is made of: that path, the times of it and of the directories stap's
 * own hash looks at (a package upgrade replaces their files) and of
 * stap, and the mends.  Made once (in a locked temporary directory
 * there, renamed into place whole) and then used as it is, so its path
 * and times stay; a new copy replaces the older ones of the same SRC.
 * 0 with its path in dir, or -1 (no cache: the caller copies into its
 * work directory). */
static int keep_copy(const char *sys, const struct mend *m, char *dir, size_t len)
{
	static const char *const parts[] = { "", "/transport", "/linux", "/unwind" };
	char base[PATH_MAX], tmp[PATH_MAX], dest[PATH_MAX + 32], p[PATH_MAX], err[512];
	uint64_t src = mw_fnv1a(MW_FNV1A_INIT, sys, strlen(sys) + 1), h = src;
	int ok, fd;

	if (mw_cache_subdir("runtime", base, sizeof(base)) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", sys, parts[i]);
		h = mw_fnv1a_stat(h, p);
	}
	h = mw_fnv1a_stat(h, "/usr/bin/stap");
	for (int i = 0; i < MENDS; i++)
		h = m[i].r == 1 ? mw_fnv1a(h, m[i].text, strlen(m[i].text) + 1) : mw_fnv1a(h, "-", 2);
	if ((size_t)snprintf(dir, len, "%s/%016llx-%016llx", base, (unsigned long long)src,
			     (unsigned long long)h) >= len)
		return -1;
	if (mw_root_only_dir(dir))
		return 0;
	if ((fd = mw_cache_tmpdir(base, tmp, sizeof(tmp))) < 0)
		return -1;
	snprintf(dest, sizeof(dest), "%s/runtime", tmp);
	ok = make_copy(sys, dest, m, err, sizeof(err)) == 0 &&
	     (rename(dest, dir) == 0 || mw_root_only_dir(dir));	/* or another run's */
	mw_remove_tree(tmp);
	close(fd);
	if (ok)
		prune(base, src, dir);
	return ok ? 0 : -1;
}

/* Each mend of m (MENDS) worked out from the runtime in sys for the
 * kernel built in kbuild; -1 when the runtime cannot be read. */
static int find_mends(const char *sys, const char *kbuild, struct mend *m)
{
	char *relay = slurp(sys, "transport/relay_v2.c");
	char *flush = relay ? slurp(sys, "print_flush.c") : NULL;
	char *text;

	if (!flush) {
		free(relay);
		return -1;
	}
	m[0].r = mw_krt_mend_relay(relay, flush, &m[0].text);
	free(relay);
	free(flush);
	/* a runtime without it has no task_work_cancel to mend */
	if ((text = slurp(sys, "stp_task_work.c")))
		m[1].r = mw_krt_mend_task_work(text, kernel_declares(kbuild,
				"include/linux/task_work.h", TW_FUNC), &m[1].text);
	free(text);
	/* nor inode uprobes without it (and transport.c with it) */
	if ((text = slurp(sys, "linux/uprobes-inode.c"))) {
		int has = kernel_declares(kbuild, "include/linux/uprobes.h", UP_FUNC);
		char *tr = slurp(sys, "transport/transport.c");

		m[2].r = mw_krt_mend_uprobes(text, has, &m[2].text);
		m[3].r = tr ? mw_krt_mend_uprobes_sym(tr, has, &m[3].text) : has ? -1 : 0;
		free(tr);
	}
	free(text);
	return 0;
}

int mw_krt_runtime(const char *workdir, const char *kbuild, char *dir, size_t len, char *err,
		   size_t errlen)
{
	const char *env = getenv("SYSTEMTAP_RUNTIME");
	const char *sys = env && *env ? env : MW_STAP_RUNTIME;
	struct mend m[MENDS] = {
		{ "transport/relay_v2.c", "its output may lose a message at a relay sub-buffer's "
		  "end (SystemTap 4.6 to 5.0, PR31117)", 0, NULL },
		{ "stp_task_work.c", "it may not build for this kernel's task_work_cancel_func() "
		  "(SystemTap before 5.2)", 0, NULL },
		{ "linux/uprobes-inode.c", "it does not build for this kernel's uprobes "
		  "(uprobe_unregister_nosync, Linux 6.12; SystemTap before 5.2)", 0, NULL },
		{ "transport/transport.c", "its module does not load on this kernel "
		  "(no uprobe_unregister, Linux 6.12; SystemTap before 5.2)", 0, NULL },
	};
	int any = 0, r = -1;

	dir[0] = '\0';
	err[0] = '\0';
	if (find_mends(sys, kbuild, m) < 0) {
		snprintf(err, errlen, "cannot read SystemTap's runtime in '%s': %s", sys,
			 strerror(errno));
		goto out;
	}
	for (int i = 0; i < MENDS; i++) {
		any |= m[i].r == 1;
		if (m[i].r < 0 && !err[0])
			snprintf(err, errlen, "SystemTap's runtime in '%s' has neither upstream's "
				 "fix nor the text mallocwatch mends in %s: %s", sys, m[i].file,
				 m[i].bug);
	}
	r = 0;
	if (!any)
		goto out;
	/* kept: stap's cache of its kernel configuration tests (stapconf)
	 * is keyed by the runtime's path and times, so a copy per compile
	 * would run them all again (minutes in an emulated guest) */
	if (keep_copy(sys, m, dir, len) == 0) {
		r = 1;
		goto out;
	}
	if ((size_t)snprintf(dir, len, "%s/runtime", workdir) >= len) {
		snprintf(err, errlen, "the work directory's path is too long");
		goto fail;
	}
	if (make_copy(sys, dir, m, err, errlen) < 0)
		goto fail;
	r = 1;
	goto out;
fail:
	dir[0] = '\0';
	r = -1;
out:
	for (int i = 0; i < MENDS; i++)
		free(m[i].text);
	return r;
}
