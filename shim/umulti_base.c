/* umulti_base.c - what umulti-shim.c and umulti_arm.c both stand on: the
 * site table stapbpf wrote, the next definitions of the calls the shim
 * interposes (resolve()), the bpf(2) call made through them, and the
 * tests' logs.  It calls neither of them: they call it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "umulti_int.h"

struct site sites[MAX_SITES];
unsigned nsites;

int (*real_open)(const char *, int, ...);
ssize_t (*real_write)(int, const void *, size_t);
int (*real_ioctl)(int, unsigned long, ...);
int (*real_close)(int);
long (*real_syscall)(long, ...);

/* The next definitions of what the shim interposes.  Called by the
 * constructor and again by any wrapper that runs before it (another
 * library's constructor may open or write first). */
void resolve(void)
{
	real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}

long sys_bpf(int cmd, void *attr, unsigned size)
{
	return real_syscall(__NR_bpf, cmd, attr, size);
}

int log_open(const char *var)
{
	const char *path = getenv(var);

	return path ? real_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				0600) : -1;
}
