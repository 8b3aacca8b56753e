/* fuzz-sdtarg.c - libFuzzer harness for the SDT argument spec parsers
 * (src/probes/sdtarg.c, src/probes/sdtarg_arch.c): one input is an argument string,
 * parsed with every architecture's syntax.  Seeds: corpus-sdtarg/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probetab.h"
#include "sdtarg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mw_sdt_arg args[MW_MAX_ARGS];
	char *s = malloc(size + 1), err[256];

	memcpy(s, data, size);
	s[size] = '\0';
	for (int arch = MW_ARCH_X86_64; arch < MW_ARCH_UNKNOWN; arch++)
		mw_sdt_args_parse_arch((enum mw_arch)arch, s, args, MW_MAX_ARGS, err, sizeof(err));
	free(s);
	return 0;
}
