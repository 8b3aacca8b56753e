/* units.h - byte counts for people, shared by every report. */
#ifndef MALLOCWATCH_UNITS_H
#define MALLOCWATCH_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Format bytes as "1.5 MiB" into buf (binary units, one decimal; plain
 * "123 B" below 1 KiB; TiB is the largest unit).  Returns buf. */
const char *mw_human_bytes(uint64_t bytes, char *buf, size_t len);

#endif /* MALLOCWATCH_UNITS_H */
