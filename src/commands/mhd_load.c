/* mhd_load.c - libmicrohttpd loaded when serve starts (mhd_load.h). */
#include <dlfcn.h>
#include <stdio.h>

#define MW_MHD_LOADER	/* the names are the library's here */
#include "mhd_load.h"

struct mw_mhd mw_mhd;

int mw_mhd_load(char *err, size_t len)
{
	static void *lib;
	struct mw_mhd m;

	if (lib)
		return 0;
	if (!(lib = dlopen(MW_MHD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, len, "serve needs libmicrohttpd (%s): %s", MW_MHD_SONAME, dlerror());
		return -1;
	}
#define MW_MHD_SYM(f)								\
	if (!(*(void **)&m.f = dlsym(lib, #f))) {				\
		snprintf(err, len, "serve needs libmicrohttpd's %s: %s", #f, dlerror()); \
		dlclose(lib);							\
		lib = NULL;							\
		return -1;							\
	}
	MW_MHD_FUNCS(MW_MHD_SYM)
#undef MW_MHD_SYM
	mw_mhd = m;
	return 0;
}
