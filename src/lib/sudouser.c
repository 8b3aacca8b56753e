/* sudouser.c - the user who ran mallocwatch through sudo; see sudouser.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sudouser.h"

/* A sudo user id: digits only, below (uid_t)-1. */
static int parse_id(const char *s, unsigned long *v)
{
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return *end || errno || *v >= (uid_t)-1 ? -1 : 0;
}

int mw_sudo_user(uid_t *uid, gid_t *gid, char *user, size_t userlen, char *err,
		 size_t errlen)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	const char *name = getenv("SUDO_USER");
	unsigned long vu, vg;

	if (getuid() != 0 || (!u && !g))
		return 0;
	if (parse_id(u, &vu) < 0 || parse_id(g, &vg) < 0) {
		snprintf(err, errlen, "SUDO_UID='%s' and SUDO_GID='%s' do not name a user to run "
			 "the program as; set both to numeric ids, or unset both to run it as root",
			 u ? u : "", g ? g : "");
		return -1;
	}
	*uid = (uid_t)vu;
	*gid = (gid_t)vg;
	snprintf(user, userlen, "%s", name ? name : "");
	return 1;
}
