/* bench/bpfobj-tune.c - what mallocwatch does to every bpf object stap
 * compiles for it (src/runtime/bpfobj.h), for the bench's own objects:
 * stapbpf's internal map made an array.
 *
 * Usage: bpfobj-tune FILE.bo...   exit 0 when every object was changed,
 * 1 when one was not (another stap's object) or could not be read.
 */
#include <stdio.h>

#include "bpfobj.h"

int main(int argc, char **argv)
{
	char err[512];
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		int r = mw_bpfobj_tune(argv[i], err, sizeof(err));

		if (r < 0)
			fprintf(stderr, "bpfobj-tune: %s\n", err);
		else if (r == 0)
			fprintf(stderr, "bpfobj-tune: '%s': no internal map of stapbpf's to change\n",
				argv[i]);
		rc |= r != 1;
	}
	return rc;
}
