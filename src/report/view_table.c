/* view_table.c - the view's tables by number (view.h): each one's name
 * and the figure that counts its rows.  Below view.c and view_rows.c,
 * which both ask it. */
#include "view.h"

static const char *const table_names[] = {
	"arenas", "heaps", "threads", "tcache_double_free", "setjmp.threads", "math.functions",
	"settings", "thresholds.changes", "retries", "setjmp.jmp_bufs", "setjmp.code_addresses",
	"setjmp.longjmp_values", NULL, NULL, "events_log"
};
static const enum mw_view_fig table_rows[] = {
	MW_VF_arenas, MW_VF_heaps, MW_VF_threads, MW_VF_double_frees, MW_VF_jump_threads,
	MW_VF_math_functions, MW_VF_settings, MW_VF_threshold_changes, MW_VF_retries,
	MW_VF_jmp_bufs, MW_VF_code_addresses, MW_VF_longjmp_values, MW_VF_math_samples,
	MW_VF_unthreaded_probes, MW_VF_events_log
};
_Static_assert(sizeof(table_names) / sizeof(table_names[0]) == MW_VT_COUNT &&
	       sizeof(table_rows) / sizeof(table_rows[0]) == MW_VT_COUNT, "a table unnamed");

const char *mw_view_table_name(enum mw_view_table t)
{
	return table_names[t];
}

enum mw_view_fig mw_view_table_rows(enum mw_view_table t)
{
	return table_rows[t];
}
