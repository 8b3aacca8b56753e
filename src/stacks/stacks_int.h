/* stacks_int.h - what stacks.c (the perf events and their rings),
 * stacks_ring.c (the rings read) and stacks_proc.c (the watched
 * processes: their maps, files and unwinders, and the probe arguments
 * read from a sample) share.  Not for other files.
 */
#ifndef MALLOCWATCH_STACKS_INT_H
#define MALLOCWATCH_STACKS_INT_H

#include <pthread.h>
#include <stdint.h>

#include "sdtarg.h"
#include "stacks.h"

#define MW_STACK_COPY 16384	/* bytes of user stack per sample */

/* One stacked probe site of the libc. */
struct stk_site {
	int probe;			/* enum mw_probe_id */
	uint64_t offset;		/* in the file (uprobe PMU config2) */
	uint64_t pc;			/* its link-time address */
	struct mw_sdt_arg args[3];
	int nargs;			/* parsed, at most 3 */
	unsigned long period;		/* perf sample_period: 1, or heap_more's */
};

/* One file mapping of an image: a line of /proc/PID/maps with a path,
 * and the build-id of the file (from libdwfl's module; "" unknown). */
struct stk_map {
	uint64_t start, end, offset;
	char *path;
	char build_id[41];
};

/* One module map of a process: its maps as read at one time (a live
 * run), or rebuilt from the saved stream's L records (a replay). */
struct stk_image {
	char *maps;			/* /proc/PID/maps text; NULL before made */
	struct mw_unwinder *u;		/* over maps; NULL none could be made */
	size_t nev;			/* events unwound with it */
	struct stk_map *map;		/* its file mappings, filled by
					 * stk_image_map() or L records */
	size_t nmap, cmap;
	int mapped;			/* map[] is filled */
	int libc_only;			/* made from the probe site alone: the
					 * libc where the site says, for a
					 * sample read after an exec */
	int tried;			/* a replay's unwinder was tried */
	int live;			/* made from the side-band records */
};

/* One process seen in samples. */
struct stk_proc {
	pid_t pid;
	int watched;			/* 1 keep, 0 drop */
	struct stk_image *img;		/* its module maps, the current last */
	size_t nimg, cimg;
	struct mw_unwind_file *files;	/* the files it maps, opened */
	size_t nfiles, cfiles;
	long long read_ms;		/* when its maps were last read */
	/* its executable mappings from the side-band records (stacks_live.c),
	 * complete from its exec on (lm_known); lm_dirty: changed since
	 * the last live image was made */
	struct stk_map *lm;
	size_t nlm, clm;
	int lm_known, lm_dirty;
};

/* A record copied out of a ring (pbuf[off, off + size)), read in time
 * order with the other rings' (seq: the order read, among equal times). */
struct stk_pend {
	uint64_t time;
	size_t off, size, seq;
};

struct mw_stacks {
	struct stk_site *sites;
	size_t nsites, csites;
	int *fds;			/* nsites * ncpus, -1 where none */
	uint64_t *ids;			/* their PERF_EVENT_IOC_IDs */
	int ncpus;
	void **rings;			/* per CPU, NULL where none */
	size_t ring_pages;		/* data pages of a ring */
	unsigned char *rec;		/* a record copied out of a ring's wrap */
	unsigned char *pbuf;		/* the records of a drain, copied */
	size_t npbuf, cpbuf;
	struct stk_pend *pend;		/* and where each is */
	size_t npend, cpend;
	int sideband;			/* the lead events carry MMAP2 and COMM
					 * records (stacks_live.c) */
	int stop_pipe[2];
	pthread_t reader;
	int running;
	pthread_mutex_t lock;		/* drains, the events, the processes */
	struct mw_stack_event *ev;
	size_t nev, cev;
	struct stk_proc *procs;
	size_t nprocs, cprocs;
	pid_t *watch;
	size_t nwatch, cwatch;
	struct mw_stacks_stats st;
	double unwind_us_sum;
	int saved;			/* read from a saved stream: no events,
					 * no /proc */
	char *search_dir;		/* a saved stream's libc directory */
	char *libc_path;		/* the libc traced (mallocwatch's view) */
	uint64_t libc_span;		/* its PT_LOADs' end, link-time */
};

#define RING_PAGES 512	/* data pages per CPU: 2 MiB, ~120 samples */

/* stacks_ring.c: every ring read, then what they held taken in time
 * order: all of it when final, else what was written before this drain
 * began (under s->lock). */
void stk_drain(struct mw_stacks *s, int final);

/* The process pid's entry, or NULL when no sample of it was kept. */
struct stk_proc *stk_proc_find(struct mw_stacks *s, pid_t pid);

/* A new entry for pid, watched, with no image (a replay's). */
struct stk_proc *stk_proc_add(struct mw_stacks *s, pid_t pid);

/* Image i of p, made empty when p has fewer (a replay's L records);
 * stacks_live.c, which stacks_proc.c and stacks_save.c call (and which
 * calls neither). */
struct stk_image *stk_image_at(struct stk_proc *p, size_t i);

/* Free what im holds and zero it. */
void stk_image_clear(struct stk_image *im);

/* The side-band records (stacks_live.c): p exec'd (its list starts
 * empty and is known from now on); p mapped path's bytes [addr, addr +
 * len) from file offset pgoff (build_id hex, "" unknown). */
void stk_proc_exec(struct stk_proc *p);
void stk_proc_mmap(struct stk_proc *p, uint64_t addr, uint64_t len, uint64_t pgoff,
		   const char *path, const char *build_id);

/* p's image of its list as it is now (a new one when the list changed
 * since the last was made).  Never NULL. */
struct stk_image *stk_proc_live_image(struct mw_stacks *s, struct stk_proc *p);

/* Free p's list. */
void stk_proc_live_free(struct stk_proc *p);

/* Fill im->map from im->maps and its unwinder (build-ids); no-op when
 * it is filled (a replay's, from its records). */
void stk_image_map(struct stk_image *im);

/* Make a replayed image's unwinder from its map: only the files whose
 * build-id is the recorded one (or that have none recorded) are used,
 * found at their path or, by base name, in dir (NULL: none). */
void stk_image_load(struct stk_proc *p, struct stk_image *im, const char *dir);

/* The process pid's entry, made (its fate decided: watched or not) when
 * first seen.  Never NULL. */
struct stk_proc *stk_proc_get(struct mw_stacks *s, pid_t pid);

/* A process given to watch (-p) that ran before the events: its module
 * map read from /proc/PID/maps now, so that samples drained after it
 * exited are unwound in it (a later change of its maps is read again
 * while it lives, an exec from the kernel's records). */
void stk_proc_prime(struct mw_stacks *s, pid_t pid);

/* Unwind a sample of p's thread tid at site into e->pcs (reading p's
 * maps and opening its files when none is known, or when the stack runs
 * into an address no module holds).  A sample whose process has exec'd
 * since (its probe site in no module of the maps read) is unwound in an
 * image of the libc alone, placed where the site says. */
void stk_proc_unwind(struct mw_stacks *s, struct stk_proc *p, const struct stk_site *site,
		     pid_t tid,
		     const uint64_t *regs, const unsigned char *stack, size_t len,
		     struct mw_stack_event *e);

/* The site's arguments into e->args from regs and the stack copy. */
void stk_read_args(const struct stk_site *site, const uint64_t *regs,
		   const unsigned char *stack, size_t len, struct mw_stack_event *e);

/* Place e (its pcs already unwound, by the script) in p's image that
 * holds its first address, the maps read again when none does. */
void stk_proc_place(struct mw_stacks *s, struct stk_proc *p, struct mw_stack_event *e);

/* Free every process's maps, files and unwinder. */
void stk_procs_free(struct mw_stacks *s);

#endif /* MALLOCWATCH_STACKS_INT_H */
