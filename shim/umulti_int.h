/* umulti_int.h - what umulti-shim.c (the calls interposed, the sites
 * they record, the programs loaded) and umulti_arm.c (the sites armed as
 * uprobe_multi links, early or at the last PERF_EVENT_IOC_SET_BPF) share,
 * and umulti_base.c (the site table, the next definitions, the logs) under
 * both.
 * Not an interface: built into umulti-shim.so, which exports only the
 * calls it interposes. */
#ifndef MALLOCWATCH_UMULTI_INT_H
#define MALLOCWATCH_UMULTI_INT_H

#include <stdint.h>
#include <sys/types.h>

#define MAX_SITES 4096		/* MAX_UPROBE_MULTI_CNT is 1 << 20 */

struct site {
	char *path;
	uint64_t off;
	int stand_in;		/* the /dev/null fd given for its perf event */
	int prog;		/* stapbpf's program fd, -1 until SET_BPF */
	int pid;		/* perf_event_open's pid: -1 every process */
};

#pragma GCC visibility push(hidden)	/* not exported from the preloaded shim */

/* umulti_base.c's: the sites stapbpf wrote (umulti-shim.c fills it), site
 * I at sites[I], and the next definitions of what the shim interposes */
extern struct site sites[MAX_SITES];
extern unsigned nsites;
extern int (*real_open)(const char *, int, ...);
extern ssize_t (*real_write)(int, const void *, size_t);
extern int (*real_ioctl)(int, unsigned long, ...);
extern int (*real_close)(int);
extern long (*real_syscall)(long, ...);

/* The real_* above set, by dlsym(RTLD_NEXT): called by the shim's
 * constructor and again by any wrapper that runs before it. */
void resolve(void);

long sys_bpf(int cmd, void *attr, unsigned size);

/* The tests' log named by environment variable var, opened to append
 * (made 0600, not through a link): its fd, or -1 (unset, or not opened). */
int log_open(const char *var);

/* umulti_arm.c's: the sites are armed (links made, each site's program in
 * its slot) */
extern int armed;

/* Every site has its program: the early links when they fit (above), else
 * the map, the dispatcher, a link per (file, pid).  0, or -1 with errno
 * (nothing left armed). */
int arm(void);

/* The links, the dispatcher and the program array closed. */
void disarm(void);

/* Start the early arming of the sites mallocwatch wrote to file
 * (MW_UMULTI_SITES; umulti_arm.c says how): a thread reads the file and
 * makes the links while stapbpf loads its programs, and arm() takes them
 * when stapbpf's sites are those. */
void prearm_start(const char *file);

#pragma GCC visibility pop

#endif /* MALLOCWATCH_UMULTI_INT_H */
