/* unit.h - the check the unit tests (tests/unit/unit-*.c) share.
 *
 * CHECK(cond) or CHECK(cond, FORMAT, ...), FORMAT a string literal:
 * when cond is false, prints "FAIL FILE:LINE: cond: message" on stdout
 * and counts it in failed.  A test's main returns failed ? 1 : 0, the
 * exit codes of tests/run (0 pass, 1 fail; a count could reach 77,
 * which means skip).
 */
#ifndef MALLOCWATCH_TESTS_UNIT_H
#define MALLOCWATCH_TESTS_UNIT_H

#include <stdio.h>

static int failed;

#define CHECK(cond, ...) do {							\
		if (!(cond)) {							\
			printf("FAIL %s:%d: %s:", __FILE__, __LINE__, #cond);	\
			printf(" " __VA_ARGS__);				\
			printf("\n");						\
			failed++;						\
		}								\
	} while (0)

#endif /* MALLOCWATCH_TESTS_UNIT_H */
