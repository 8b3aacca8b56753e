/* msg.h - the one place mallocwatch talks to the user on stderr.
 *
 * Every message is one line, written with a single fprintf so that lines
 * from concurrent writers never interleave:
 *
 *	mallocwatch: cannot open '/nope/libc.so.6': No such file or directory
 *
 * Lowercase, no full stop, what failed first, the object quoted
 * (git Documentation/CodingGuidelines, strace error_prints.c).
 */
#ifndef MALLOCWATCH_MSG_H
#define MALLOCWATCH_MSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdnoreturn.h>

/* Exit statuses, documented in mallocwatch(1) and README.md.  In -c mode
 * the traced program's own status is passed on instead of MW_EXIT_OK. */
enum {
	MW_EXIT_OK = 0,
	MW_EXIT_RUNTIME = 1,	/* a runtime error: tracer, ELF, I/O */
	MW_EXIT_USAGE = 2,	/* bad command line */
	MW_EXIT_CHECK = 3,	/* a --check failed */
};

/* Print "mallocwatch: <formatted>\n" to stderr. */
void mw_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "mallocwatch: warning: <formatted>\n" to stderr.  Silenced by
 * mw_quiet(1) (the -q option). */
void mw_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "mallocwatch: <formatted>\n" unless quiet: informational notes
 * such as which runtime was chosen. */
void mw_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* mw_error(), then exit(status). */
noreturn void mw_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* mw_error(), then "Try 'mallocwatch --help'." and exit(MW_EXIT_USAGE). */
noreturn void mw_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* s made safe to show inside a message: printable ASCII as is, every
 * other byte as \xNN, backslash as \\; cut with "..." to fit len bytes
 * (len >= 8).  Returns buf.  For anything read from a file, a stream or
 * another process before it goes to a terminal. */
const char *mw_quote(const char *s, char *buf, size_t len);

/* Suppress warnings and notes (not errors) when on is non-zero. */
void mw_quiet(int on);

#endif /* MALLOCWATCH_MSG_H */
