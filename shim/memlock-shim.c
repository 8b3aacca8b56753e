/* memlock-shim.c - let stapbpf run where RLIMIT_MEMLOCK cannot be raised.
 *
 * stapbpf raises RLIMIT_MEMLOCK before loading its programs and treats a
 * failure as fatal ("could not increase map resource limit").  Without
 * CAP_SYS_RESOURCE that always fails, yet since Linux 5.11 BPF maps are
 * charged to the memory cgroup, not to memlock, so the limit does not
 * stop the load (PLATFORM.md).  mallocwatch LD_PRELOADs this shim into
 * stapbpf alone - never into the traced program - so that only a failing
 * setrlimit(RLIMIT_MEMLOCK, ...) reports success.  Every other call, and
 * every call that succeeds, is passed through unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/resource.h>

typedef int (*setrlimit_fn)(__rlimit_resource_t, const struct rlimit *);

int setrlimit(__rlimit_resource_t res, const struct rlimit *lim)
{
	setrlimit_fn real = (setrlimit_fn)dlsym(RTLD_NEXT, "setrlimit");
	int rc;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(res, lim);
	if (rc != 0 && res == RLIMIT_MEMLOCK && errno == EPERM)
		return 0;
	return rc;
}
