/* output.c - output files; see output.h.
 *
 * mallocwatch runs as root, and an output path may lie in a directory
 * another user can write (/tmp).  So a file is opened
 *
 *	open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
 *	     O_CLOEXEC [| O_APPEND], 0666)
 *
 * (a planted symbolic link is refused, not followed; a FIFO without a
 * reader does not block the open), under sudo with the invoking user's
 * filesystem identity (setfsuid, setfsgid and the groups initgroups would
 * give, for this thread only), and kept only when it is a regular file
 * with one link, or a character device (/dev/null, a terminal); then it
 * is truncated (unless appended to) and made blocking again.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "msg.h"
#include "output.h"
#include "sudouser.h"
#include "xalloc.h"

/* A filesystem identity: fsuid, fsgid, supplementary groups. */
struct fs_id {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
};

/* Make id this thread's filesystem identity.  setfsuid and setfsgid are
 * per thread, and so is the setgroups system call (glibc's setgroups()
 * would change every thread).  Groups first: dropping fsuid 0 drops the
 * filesystem capabilities but not CAP_SETGID.  0, or -1. */
static int set_fs_id(const struct fs_id *id)
{
	if (syscall(SYS_setgroups, (size_t)id->ngroups, id->groups) < 0)
		return -1;
	setfsgid(id->gid);
	setfsuid(id->uid);
	/* an invalid id changes nothing and returns the current one */
	return setfsgid((gid_t)-1) == (int)id->gid && setfsuid((uid_t)-1) == (int)id->uid ?
	       0 : -1;
}

/* This thread's filesystem identity now; 0, or -1. */
static int get_fs_id(struct fs_id *id)
{
	id->uid = (uid_t)setfsuid((uid_t)-1);
	id->gid = (gid_t)setfsgid((gid_t)-1);
	if ((id->ngroups = getgroups(0, NULL)) < 0)
		return -1;
	id->groups = xcalloc((size_t)id->ngroups + 1, sizeof(gid_t));
	return (id->ngroups = getgroups(id->ngroups, id->groups)) < 0 ? -1 : 0;
}

/* The sudo user's identity: uid, gid and user's groups as initgroups
 * would set them (none without SUDO_USER, as the program gets).  1, 0
 * when not under sudo, -1 with err. */
static int sudo_fs_id(struct fs_id *id, char *err, size_t errlen)
{
	char user[64];
	int r = mw_sudo_user(&id->uid, &id->gid, user, sizeof(user), err, errlen);

	id->groups = NULL;
	id->ngroups = 0;
	if (r <= 0 || !user[0])
		return r;
	for (int n = 32;;) {
		id->groups = xrealloc(id->groups, (size_t)n * sizeof(gid_t));
		id->ngroups = n;
		if (getgrouplist(user, id->gid, id->groups, &id->ngroups) >= 0)
			return 1;
		n = id->ngroups > n ? id->ngroups : 2 * n;
	}
}

/* Why open() failed with errno e, as the user who tried: a symbolic
 * link (ELOOP; EACCES in a sticky directory on recent kernels, whatever
 * fs.protected_symlinks says), a FIFO without a reader or a socket
 * (ENXIO); NULL: e says. */
static const char *open_failure(const char *path, int e)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return NULL;
	if (S_ISLNK(sb.st_mode))
		return "it is a symbolic link";
	if (e == ENXIO && S_ISFIFO(sb.st_mode))
		return "it is a FIFO";
	if (e == ENXIO && S_ISSOCK(sb.st_mode))
		return "it is a socket";
	return NULL;
}

/* Keep fd, just opened on path, only when it is a regular file with one
 * link (truncated unless append) or a character device; blocking again.
 * NULL, or why not. */
static const char *keep_output(int fd, int append)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return strerror(errno);
	if (S_ISREG(sb.st_mode)) {
		if (sb.st_nlink > 1)
			return "it has other hard links";
		if (!append && ftruncate(fd, 0) < 0)
			return strerror(errno);
	} else if (S_ISFIFO(sb.st_mode)) {
		return "it is a FIFO";
	} else if (!S_ISCHR(sb.st_mode)) {
		return "it is not a regular file";
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return strerror(errno);
	return NULL;
}

/* open() path for writing (extra: O_APPEND or 0), as the sudo user
 * under sudo, else as we are; the descriptor, or -1 after a message. */
static int open_as_user(const char *path, int extra)
{
	struct fs_id self = { 0 }, user = { 0 };
	const char *why = NULL;
	char err[256];
	int fd = -1, e = 0, sudo, switched = 0;

	if ((sudo = sudo_fs_id(&user, err, sizeof(err))) < 0) {
		mw_error("%s", err);
		goto cleanup;
	}
	if (sudo && get_fs_id(&self) == 0) {
		switched = 1;
		sudo = set_fs_id(&user) == 0 ? 1 : -1;
	}
	if (sudo < 0 || (sudo && !switched)) {
		mw_error("cannot create '%s' as the sudo user (uid %u): %s", path,
			 (unsigned)user.uid, strerror(errno ? errno : EPERM));
		goto cleanup;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		  extra, 0666);
	if (fd < 0 && (why = open_failure(path, e = errno)))	/* looked at as the user */
		mw_error("cannot write '%s': %s", path, why);
	else if (fd < 0 && sudo)
		mw_error("cannot create '%s': %s (as the sudo user, uid %u)", path, strerror(e),
			 (unsigned)user.uid);
	else if (fd < 0)
		mw_error("cannot create '%s': %s", path, strerror(e));
cleanup:
	if (switched && set_fs_id(&self) < 0)
		mw_die(MW_EXIT_RUNTIME, "cannot take back root's identity after opening '%s'",
		       path);
	free(self.groups);
	free(user.groups);
	return fd;
}

/* The FILE for path (extra as open_as_user), or NULL after a message. */
static FILE *output_open(const char *path, int extra)
{
	const char *why;
	int fd = open_as_user(path, extra);
	FILE *f = NULL;

	if (fd < 0)
		return NULL;
	if ((why = keep_output(fd, extra & O_APPEND)) || !(f = fdopen(fd, extra ? "a" : "w"))) {
		mw_error("cannot write '%s': %s", path, why ? why : strerror(errno));
		close(fd);
	}
	return f;
}

FILE *mw_output_create(const char *path, int dash_ok)
{
	if (dash_ok && strcmp(path, "-") == 0)
		return stdout;
	return output_open(path, 0);
}

FILE *mw_output_append(const char *path)
{
	return output_open(path, O_APPEND);
}

int mw_output_close(FILE *f, const char *path, int err)
{
	int bad;

	errno = 0;
	bad = fflush(f) != 0 || ferror(f);
	err = err ? err : errno;
	if (f != stdout && f != stderr) {
		bad |= fclose(f) != 0;
		err = err ? err : errno;
	}
	if (bad || err) {
		mw_error("cannot write '%s': %s", path, strerror(err ? err : EIO));
		return -1;
	}
	return 0;
}

int mw_output_open_pair(const char *out, const char *json, FILE **fo, FILE **fj)
{
	*fo = out ? mw_output_create(out, 1) : stdout;
	return *fo && (!json || (*fj = mw_output_create(json, 1))) ? 0 : -1;
}

int mw_output_close_pair(FILE *fo, const char *out, FILE *fj, const char *json, int json_err)
{
	int bad = mw_output_close(fo, out ? out : "stdout", fj == fo ? json_err : 0) < 0;

	if (fj && fj != fo && mw_output_close(fj, json, json_err) < 0)
		bad = 1;
	return bad ? -1 : 0;
}

int mw_output_pair_text(FILE *fo, FILE *fj)
{
	return !(fj == stdout && fo == stdout);
}

void mw_xml_escape(FILE *out, const char *s)
{
	char tmp[8];
	size_t used, n;

	while (s && *s) {
		/* a control byte, a byte that is not UTF-8 or a C1 control is
		 * no XML 1.0 character (nor one to show): as msg.h quotes it */
		if (*s == '\n' || *s == '\t')
			n = 1, used = 1, tmp[0] = *s;
		else
			n = mw_quote_char(s, tmp, &used, 0);
		s += used;
		for (size_t i = 0; i < n; i++)
			switch (tmp[i]) {
			case '<': fputs("&lt;", out); break;
			case '>': fputs("&gt;", out); break;
			case '&': fputs("&amp;", out); break;
			case '"': fputs("&quot;", out); break;
			case '\'': fputs("&apos;", out); break;
			default: fputc(tmp[i], out);
			}
	}
}
