/* metrics_diff_write.c - `mallocwatch diff`'s document (metrics.h): the
 * diff of two reports' process (metrics_diff.c), with the diff of every
 * process of two trees beside it when either report is of several
 * (metrics_diff_procs.c), written as text, JSON or Markdown.
 */
#include <stdio.h>

#include "jsonout.h"
#include "metrics.h"
#include "metrics_int.h"

json_t *mw_diff_new(const json_t *a, const json_t *b, const char *a_name, const char *b_name)
{
	json_t *root = mw_diff_one(a, b), *p;

	if (!root || mw_json_set(&root, "base", mw_json_str(a_name)) < 0 ||
	    mw_json_set(&root, "new", mw_json_str(b_name)) < 0)
		return NULL;
	if (!mw_diff_is_multi(a) && !mw_diff_is_multi(b))
		return root;
	if (!(p = mw_diff_procs(a, b)) || mw_json_set(&root, "processes", p) < 0)
		return NULL;
	return root;
}

void mw_diff_write(FILE *f, enum mw_format fmt, const json_t *diff)
{
	const json_t *metrics = json_object_get(diff, "metrics"), *ar = json_object_get(diff, "arenas");
	const json_t *x;
	size_t i;

	if (fmt == MW_FMT_JSON) {
		mw_json_write(diff, f, JSON_INDENT(2));
		return;
	}
	if (fmt != MW_FMT_MARKDOWN) {
		if (json_object_get(diff, "processes"))
			mw_diff_procs_text(f, diff);
		else
			mw_diff_text_one(f, diff, 0);
		return;
	}
	if (json_object_get(diff, "processes")) {
		mw_diff_procs_markdown(f, diff);
		return;
	}
	fprintf(f, "| metric | base | new | change | percent | unit |\n"
		"|---|---:|---:|---:|---:|---|\n");
	json_array_foreach(metrics, i, x) {
		fputs("|", f);
		mw_diff_md_cells(f, x);
	}
	fprintf(f, "\nArenas: %zu appeared, %zu vanished, %zu changed\n",
		json_array_size(json_object_get(ar, "appeared")),
		json_array_size(json_object_get(ar, "vanished")),
		json_array_size(json_object_get(ar, "changed")));
}
