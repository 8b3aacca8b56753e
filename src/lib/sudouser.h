/* sudouser.h - the user who ran mallocwatch through sudo: the program
 * of -c runs as that user (target.h) and the output files are written
 * as that user (output.h).
 */
#ifndef MALLOCWATCH_SUDOUSER_H
#define MALLOCWATCH_SUDOUSER_H

#include <stddef.h>
#include <sys/types.h>

/* Under sudo: real uid 0 with SUDO_UID and SUDO_GID set.  1 with *uid,
 * *gid and user (SUDO_USER, "" when unset; for initgroups) filled: the
 * invoking user, whom the program runs as and the output files are
 * written as; 0 when not under sudo (nothing filled); -1 with err when
 * either is set but the two are not both numeric ids. */
int mw_sudo_user(uid_t *uid, gid_t *gid, char *user, size_t userlen, char *err,
		 size_t errlen);

#endif /* MALLOCWATCH_SUDOUSER_H */
