/* fsutil.c - see fsutil.h. */
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void mw_remove_tree(const char *path)
{
	if (path && path[0])
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
