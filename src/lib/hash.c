/* hash.c - FNV-1a, 64 bits (hash.h).
 */
#include <sys/stat.h>

#include "hash.h"

uint64_t mw_fnv1a(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t mw_fnv1a_stat(uint64_t h, const char *path)
{
	struct stat sb;
	long long v[2];

	if (stat(path, &sb) < 0)
		return h;
	v[0] = (long long)sb.st_size;
	v[1] = (long long)sb.st_mtime;
	return mw_fnv1a(h, v, sizeof(v));
}
