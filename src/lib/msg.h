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
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

/* Exit statuses, documented in each command's man page.  In -c mode
 * the traced program's own status is passed on instead of MW_EXIT_OK. */
enum {
	MW_EXIT_OK = 0,
	MW_EXIT_RUNTIME = 1,	/* a runtime error: tracer, ELF, I/O */
	MW_EXIT_USAGE = 2,	/* bad command line */
	MW_EXIT_CHECK = 3,	/* a --check failed */
};

/* Print "mallocwatch: <formatted>\n" to stderr.  Control bytes in the
 * formatted text are shown as mw_quote() shows them (backslashes left
 * as they are), so that a string a caller did not quote cannot reach
 * the terminal raw or break the line; quote them all the same. */
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

/* The command whose usage errors follow (main.c sets it: "snapshot"),
 * so that their hint names its help: "Try 'mallocwatch snapshot
 * --help'."; NULL (the default) names the main one. */
void mw_usage_command(const char *name);

/* getopt_long(3) answered c ('?': an option it does not know, ':': one
 * missing its argument; the optstring starts with ':' so that getopt
 * prints nothing itself) for argv: one usage line naming the option,
 * "unknown option '--bogus'" or "option '-p' needs an argument", and
 * exit 2 as mw_usage_error. */
noreturn void mw_bad_option(int c, char *const *argv);

/* Strings from a file, a stream or another process (argv, comm, paths,
 * probe names) are shown quoted wherever they are printed, so that no
 * control sequence in them reaches a terminal: printable ASCII and valid
 * UTF-8 characters as they are; backslash as \\; every other byte -- C0
 * controls (ESC is \x1b), DEL, bytes that are not UTF-8, and the bytes of
 * C1 controls (U+009B, CSI, is \xc2\x9b) and of bidirectional overrides
 * (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F) -- as \xNN, the way
 * `ls -b` and strace show them. */

/* s quoted as above into buf, cut with "..." to fit len bytes (len >= 8).
 * Returns buf.  For messages and fixed-width columns.  NULL s is "?". */
const char *mw_quote(const char *s, char *buf, size_t len);

/* s quoted as above, whole, to f (NULL: "?").  0, or EOF if writing
 * failed. */
int mw_fputs_quoted(const char *s, FILE *f);

/* The text that shows the character at s as above: out[0..return) (at
 * most 8 bytes; not NUL-terminated), *used bytes of s taken.  A
 * backslash is doubled when backslash is non-zero, else left as it is
 * (for text whose quoted parts carry their backslashes already). */
size_t mw_quote_char(const char *s, char out[8], size_t *used, int backslash);

/* The length (2 to 4) of the valid UTF-8 sequence at s that encodes one
 * character above U+007F (no overlong form, no surrogate, at most
 * U+10FFFF), its code point in *cp (when not NULL); 0 when s does not
 * start with one (ASCII included). */
size_t mw_utf8_len(const char *s, uint32_t *cp);

/* Suppress warnings and notes (not errors) when on is non-zero. */
void mw_quiet(int on);

/* 1 when warnings and notes are suppressed (mw_quiet), else 0. */
int mw_is_quiet(void);

#endif /* MALLOCWATCH_MSG_H */
