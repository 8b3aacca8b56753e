/* output.h - the files a command writes: created close-on-exec before any
 * work, never through a symbolic link, as the invoking user under sudo,
 * and closed with the first write error named.  Messages go through
 * msg.h. */
#ifndef MALLOCWATCH_OUTPUT_H
#define MALLOCWATCH_OUTPUT_H

#include <stdio.h>

/* Create path for writing, close-on-exec (a traced program must never
 * get it); "-" is stdout when dash_ok.  Opened O_NOFOLLOW, O_NONBLOCK
 * and mode 0666 less the umask; under sudo (mw_sudo_user, sudouser.h) with
 * the invoking user's filesystem identity (uid, gid, SUDO_USER's groups),
 * so a file the user could not write is not written and a new one is
 * the user's.  Kept when it is a regular file with one link (then
 * truncated) or a character device (/dev/null, a terminal).  NULL after
 * a message: "cannot write 'PATH': it is a symbolic link" (or a FIFO, a
 * socket, not a regular file, has other hard links), "cannot create
 * 'PATH': ERRNO", with " (as the sudo user, uid N)" under sudo. */
FILE *mw_output_create(const char *path, int dash_ok);

/* mw_output_create() for appending (O_APPEND, not truncated; no "-"). */
FILE *mw_output_append(const char *path);

/* Flush f and close it (not stdout/stderr).  0, or -1 after a message
 * "cannot write 'PATH': ..." naming err when non-zero (the first error a
 * writer saw), else the flush's or the close's. */
int mw_output_close(FILE *f, const char *path, int err);

/* A command's text report and its JSON (snapshot, explain, trim): *fo
 * made for out (-o; NULL: stdout), then *fj for json (--json; NULL:
 * none, *fj left as it is); "-" is stdout for either, so *fj may be
 * *fo.  0, or -1 after mw_output_create's message. */
int mw_output_open_pair(const char *out, const char *json, FILE **fo, FILE **fj);

/* Close what mw_output_open_pair opened (fj NULL: no JSON); json_err,
 * the JSON writer's errno, is named for the file the JSON went to.  0,
 * or -1 after a message for each file that failed. */
int mw_output_close_pair(FILE *fo, const char *out, FILE *fj, const char *json, int json_err);

/* Whether the text report is written beside the JSON: not when both
 * would go to stdout (--json - with no -o, or -o -), so that stdout is
 * one JSON document. */
int mw_output_pair_text(FILE *fo, FILE *fj);

/* Write s (NULL: nothing) to out with XML's five special characters as
 * entities (&lt; &gt; &amp; &quot; &apos;), for JUnit XML and HTML text
 * and attribute values (XML 1.0 section 4.6; HTML5 knows &apos; too),
 * and every byte XML 1.0 cannot carry or a terminal would act on --
 * control bytes other than newline and tab, bytes that are not UTF-8,
 * C1 controls and bidirectional overrides -- shown as msg.h's
 * mw_quote_char shows them (\x1b; backslashes left as they are), so
 * that what comes out is well-formed whatever the bytes of s. */
void mw_xml_escape(FILE *out, const char *s);

#endif /* MALLOCWATCH_OUTPUT_H */
