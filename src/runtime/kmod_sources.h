/* kmod_sources.h - the kernel runtime's mends: a private copy of SystemTap's
 * runtime sources for a module's compile (stap -R DIR), with three of its
 * bugs mended where the runtime stap uses has them.  Each mend is found
 * by the exact text it replaces and skipped when the runtime already has
 * upstream's fix; a runtime that has neither is used as it is, with a
 * warning.
 *
 * 1. The relay (SystemTap 4.6 to 5.0, sourceware PR31117, upstream
 *    commit b6abf4bd0).  The module runtime sends a probe's output to
 *    stapio through a relay channel of 4096-byte sub-buffers
 *    (runtime/transport/relay_v2.c), each flush of the print buffer (at
 *    a probe's end, and every 8192 bytes a probe prints) as one message:
 *    a struct _stp_trace header (8 bytes; 12 from SystemTap 5.0) then
 *    the text.  When a flush begins with no more than a header's size
 *    left in the current sub-buffer, the reserve gives it those few
 *    bytes, __stp_print_flush() gives up on the whole message (counted:
 *    "There were N transport failures"), and the bytes are left as they
 *    were.  stapio before 5.0 reads them as a header, and with a length
 *    it cannot take drains the channel: the rest of the output is lost
 *    with it.  Seen in the make check-vm guest (SystemTap 4.8): the flush
 *    of a process with 1100 jmp_bufs delivered 907 records and no end
 *    line, the same records on every run.  The mend: the reserve
 *    switches to the next sub-buffer whenever no more than a header's
 *    size is left in this one (it switched only when none was left).
 *    The bytes skipped are the sub-buffer's padding, which relay's read
 *    skips (as it does for every sub-buffer stapio's read switches out
 *    early), so every header is whole and nothing is dropped.  Upstream's
 *    fix (zero bytes, then a retry, which its stapio skips) is found by
 *    its comment in print_flush.c.
 *
 * 2. task_work_cancel (SystemTap before 5.2 on Linux 6.11 and later,
 *    and on the stable kernels that took the change: Debian 12's 6.1.1xx).
 *    The kernel renamed task_work_cancel(task, func) to
 *    task_work_cancel_func() and gave task_work_cancel() a struct
 *    callback_head; stp_task_work.c, which finds the function through
 *    kallsyms under its old name and type, no longer compiles.  The mend
 *    (upstream's in 5.2): the type and the kallsyms name become
 *    task_work_cancel_func's, when the kernel the module is built for
 *    declares it (its headers' include/linux/task_work.h; the running
 *    kernel's /proc/kallsyms when the headers are not found).
 *
 * 3. Linux 6.12's uprobes (SystemTap before 5.2, Debian 13's 5.1-5
 *    included).  uprobe_register() takes a ref_ctr_offset and returns the
 *    struct uprobe; uprobe_unregister(inode, offset, consumer) is gone,
 *    replaced by uprobe_unregister_nosync(uprobe, consumer) and
 *    uprobe_unregister_sync().  linux/uprobes-inode.c no longer compiles
 *    ("'uprobe_unregister' undeclared", seen in make check-vm's trixie
 *    guest), and transport/transport.c looks up uprobe_unregister, which
 *    the module then cannot resolve.  The mend, when the kernel's
 *    include/linux/uprobes.h declares uprobe_unregister_nosync: each
 *    instance keeps the struct uprobe its registration returned and
 *    unregisters it with the two new calls; transport.c looks up
 *    uprobe_unregister_nosync; and an "else ;" that 6.12's flags refuse
 *    (-Werror=empty-body) becomes a comment.  Upstream's 5.2 names
 *    uprobe_unregister_nosync, which is how its fix is found.
 */
#ifndef MALLOCWATCH_KRT_MEND_H
#define MALLOCWATCH_KRT_MEND_H

#include <stddef.h>

/* The line of relay_v2.c's _stp_data_write_reserve() the relay's mend
 * replaces (SystemTap 4.0 to 5.0 spell it so), and what it becomes. */
#define MW_KRT_RELAY_ANCHOR "if (buf->offset >= buf->chan->subbuf_size) {"
#define MW_KRT_RELAY_MENDED \
	"if (buf->offset + sizeof(struct _stp_trace) >= buf->chan->subbuf_size) { " \
	"/* mallocwatch: a header never straddles (PR31117) */"

/* The relay's mend, from the text of relay_v2.c and of print_flush.c
 * (NUL-terminated):
 *   0  nothing to do: print_flush.c does not drop a message for a header
 *      cut short (no "bytes_reserved > hlen": SystemTap before 4.6, whose
 *      reserve never cut one, and from 5.1, upstream's fix, "header
 *      straddle");
 *   1  *mended (malloc'd, the caller's to free) is relay_v2.c with
 *      MW_KRT_RELAY_ANCHOR replaced by MW_KRT_RELAY_MENDED;
 *  -1  neither: the anchor is not in relay_v2.c exactly once (another
 *      runtime), or no memory; *mended is NULL. */
int mw_krt_mend_relay(const char *relay_v2, const char *print_flush, char **mended);

/* task_work_cancel's mend, from the text of stp_task_work.c, for a
 * kernel that declares task_work_cancel_func() (kernel_has_func 1) or
 * not (0):
 *   0  nothing to do: the kernel has the old function, or the runtime
 *      already names task_work_cancel_func (upstream's fix);
 *   1  *mended (malloc'd, the caller's) is stp_task_work.c with
 *      "typeof(&task_work_cancel)" and kallsyms_lookup_name("task_work_cancel")
 *      naming task_work_cancel_func instead;
 *  -1  one of the two is not there exactly once, or no memory. */
int mw_krt_mend_task_work(const char *stp_task_work, int kernel_has_func, char **mended);

/* Linux 6.12's uprobes mend of linux/uprobes-inode.c, from its text, for
 * a kernel that declares uprobe_unregister_nosync() (kernel_has_func 1)
 * or not (0):
 *   0  nothing to do: an older kernel, or the runtime already names
 *      uprobe_unregister_nosync (upstream's fix);
 *   1  *mended (malloc'd, the caller's) is uprobes-inode.c mended;
 *  -1  one of the four texts it replaces is not there exactly once, or
 *      no memory. */
int mw_krt_mend_uprobes(const char *uprobes_inode, int kernel_has_func, char **mended);

/* The same mend's part in transport/transport.c: the kallsyms lookup of
 * "uprobe_unregister" made one of "uprobe_unregister_nosync".  0, 1 or
 * -1 as above. */
int mw_krt_mend_uprobes_sym(const char *transport, int kernel_has_func, char **mended);

/* The runtime sources a module's compile should use.  The runtime stap
 * uses (SYSTEMTAP_RUNTIME in the environment, as stap reads it, else
 * MW_STAP_RUNTIME) is read; when it needs a mend for the kernel whose
 * build tree is kbuild (NULL or "": the running kernel's,
 * /lib/modules/RELEASE/build), it is copied whole with cp(1), links
 * followed (the copy has none, and no write goes through one), and
 * mended.  As root the copy is kept in MW_CACHE_DIR/runtime (root's
 * alone, 0700; cache.h), named SRC-HASH: SRC a hash of the runtime's
 * path, HASH one of that path, the times of its directories and of
 * stap, and the mends.  Made once, in a locked temporary renamed into
 * place whole, then used as it is, since stap keys its cache of kernel
 * configuration tests (stapconf) by the runtime's path and times; the
 * copies of the same SRC made before (its stap upgraded since) are
 * removed then.  Otherwise (or MW_NO_CACHE) it is made in
 * workdir/runtime (workdir: the run's private directory, where
 * "runtime" must not exist yet).  Returns 1 with the copy's path in dir
 * (len bytes), or 0 when no mend applies (dir empty: stap's own runtime
 * is used); either way err (errlen bytes) is empty, or says in one line
 * which bug is left because the runtime has neither upstream's fix nor
 * the text the mend replaces (for a warning).  -1 with a one-line reason
 * in err when the runtime cannot be read or copied (dir empty: the
 * caller compiles with stap's own and warns). */
int mw_krt_runtime(const char *workdir, const char *kbuild, char *dir, size_t len, char *err,
		   size_t errlen);

/* Where stap finds its runtime when neither -R nor SYSTEMTAP_RUNTIME
 * says otherwise: its PKGDATADIR's runtime, as Debian, Ubuntu and Fedora
 * package it. */
#define MW_STAP_RUNTIME "/usr/share/systemtap/runtime"

#endif /* MALLOCWATCH_KRT_MEND_H */
