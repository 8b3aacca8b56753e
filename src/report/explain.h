/* explain.h - one process read for `explain` and `snapshot -p`: its
 * snapshot with the free chunks kept, its RSS ledger (ledger.h) and the
 * findings (findings.h). */
#ifndef MALLOCWATCH_EXPLAIN_H
#define MALLOCWATCH_EXPLAIN_H

#include <stddef.h>
#include <sys/types.h>

#include "findings.h"
#include "glibcinfo.h"
#include "ledger.h"
#include "snapshot.h"

/* What mw_explain_read gives; free with mw_explained_free. */
struct mw_explained {
	struct mw_snapshot *s;	/* never NULL once read */
	struct mw_ledger *l;	/* NULL when the ledger could not be made:
				 * lerr says why */
	struct mw_finding *f;	/* NULL with l */
	size_t nf;
	char lerr[512];
};

/* Read process pid (libc layouts g, deadline timeout_ms) into e.  The
 * status of mw_snapshot_take (MW_SNAP_OK, or else no snapshot and the
 * reason in err); a ledger that cannot be made (smaps or pagemap not
 * readable) leaves e->l NULL and the reason in e->lerr. */
int mw_explain_read(pid_t pid, const struct mw_glibc *g, long timeout_ms,
		    struct mw_explained *e, char *err, size_t errlen);

void mw_explained_free(struct mw_explained *e);

#endif /* MALLOCWATCH_EXPLAIN_H */
