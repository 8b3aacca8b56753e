/* report_ledger.h - the RSS ledger and fragmentation (ledger.h) of a
 * snapshot as text and JSON, and the explain report that joins them with
 * the findings (findings.h).  Bytes in human units in the text, exact in
 * the JSON (docs/json.md, "ledger", "fragmentation", "findings").
 */
#ifndef MALLOCWATCH_REPORT_LEDGER_H
#define MALLOCWATCH_REPORT_LEDGER_H

#include <stdio.h>

#include <jansson.h>

#include "findings.h"
#include "ledger.h"
#include "procwhere.h"
#include "snapshot.h"

/* The ledger: the process's parts and the check against smaps_rollup,
 * one row per arena (at most 64 shown), then each arena's fragmentation
 * and the free chunk sizes over all arenas. */
void mw_ledger_text(FILE *f, const struct mw_snapshot *s, const struct mw_ledger *l);

/* Add "ledger", "fragmentation" and "findings" to a snapshot's JSON
 * object *snap (mw_snapshot_json_value); *snap NULL when out of memory. */
void mw_ledger_json_add(json_t **snap, const struct mw_snapshot *s, const struct mw_ledger *l,
			const struct mw_finding *v, size_t n);

/* `mallocwatch explain`: a line naming the process, the findings, then
 * the ledger (mw_ledger_text).  comm is the process's name (quoted). */
void mw_explain_text(FILE *f, const struct mw_snapshot *s, const struct mw_ledger *l,
		     const struct mw_finding *v, size_t n, const char *comm);

/* A snapshot as a JSON document, {"version": 1, "snapshot": {...}}
 * (docs/json.md), with the key "where" when w is not NULL
 * (mw_where_json) and mw_ledger_json_add's keys when l is not NULL.  0,
 * or -1 with errno set (ENOMEM: it could not be built). */
int mw_snapshot_json_ledger(FILE *f, const struct mw_snapshot *s, const char *comm,
			    const struct mw_where *w, const struct mw_ledger *l,
			    const struct mw_finding *v, size_t n);

/* The HTML page's findings section: <h2> and the text (as
 * mw_findings_text wrote it) in a <pre>, escaped; nothing for NULL. */
void mw_findings_html(FILE *f, const char *text);

#endif /* MALLOCWATCH_REPORT_LEDGER_H */
