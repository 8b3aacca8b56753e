/* unit-procwhere.c - /proc/PID/cgroup texts into a cgroup path and a
 * guessed container (src/live/procwhere.c), as a table: cgroup v2 alone, v1
 * and v2 side by side (this machine's shape), container runtimes'
 * names, and garbage (no colons, empty lines, a path with colons, an
 * unterminated last line, a hex id too short to be one); then -p lists
 * (src/live/proclist.c): repeats dropped in order, garbage refused. */
#include <stdio.h>
#include <string.h>

#include "proclist.h"
#include "procwhere.h"

static const struct {
	const char *text, *cgroup, *from, *container;
} rows[] = {
	{ "0::/user.slice/user-0.slice/session-3.scope\n",
	  "/user.slice/user-0.slice/session-3.scope", "v2", "" },
	{ "9:name=systemd:/\n4:memory:/process_api/cd5e\n1:cpu:/\n0::/\n",
	  "/process_api/cd5e", "memory", "" },
	{ "9:name=systemd:/system.slice/x.service\n4:memory:/a\n0::/\n",
	  "/system.slice/x.service", "name=systemd", "" },
	{ "9:name=systemd:/\n1:cpu:/\n0::/\n", "/", "v2", "" },
	{ "9:name=systemd:/\n1:cpu:/\n", "/", "name=systemd", "" },
	{ "0::/system.slice/docker-3f2a1b9c0d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd.scope\n",
	  "/system.slice/docker-3f2a1b9c0d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd.scope",
	  "v2", "docker:3f2a1b9c0d4e" },
	{ "4:memory:/docker/0123456789abcdef0123\n", "/docker/0123456789abcdef0123", "memory",
	  "docker:0123456789ab" },
	{ "0::/machine.slice/libpod-aaaaaaaaaaaaaaaa.scope/container\n",
	  "/machine.slice/libpod-aaaaaaaaaaaaaaaa.scope/container", "v2", "podman:aaaaaaaaaaaa" },
	{ "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-pod1.slice/cri-containerd-bbbbbbbbbbbbbbbbbbbb.scope\n",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-pod1.slice/cri-containerd-bbbbbbbbbbbbbbbbbbbb.scope",
	  "v2", "containerd:bbbbbbbbbbbb" },
	{ "0::/kubepods/burstable/pod42\n", "/kubepods/burstable/pod42", "v2", "kubepods" },
	{ "0::/lxc.payload.web/init.scope\n", "/lxc.payload.web/init.scope", "v2", "lxc:web" },
	{ "3:cpuset:/lxc/db1\n", "/lxc/db1", "cpuset", "lxc:db1" },
	{ "0::/system.slice/docker-abc.scope\n", "/system.slice/docker-abc.scope", "v2", "" },
	/* garbage */
	{ "", "", "", "" },
	{ "no colons here\n\n\n", "", "", "" },
	{ "0::/a:b:c\n", "/a:b:c", "v2", "" },
	{ "0::/no-newline", "/no-newline", "v2", "" },
	{ ":\n::\n", "", "v2", "" },
	{ "0::/\x1b[31mred\n", "/\x1b[31mred", "v2", "" },
};

static const struct {
	const char *arg;
	int ok;
	const char *want;	/* the list, space-separated */
} lists[] = {
	{ "42", 1, "42" },
	{ "3,1,2,1,3", 1, "3 1 2" },
	{ "2147483647", 1, "2147483647" },
	{ "", 0, "" },
	{ "1,", 0, "" },
	{ ",1", 0, "" },
	{ "1,,2", 0, "" },
	{ "0", 0, "" },
	{ "2147483648", 0, "" },
	{ "-1", 0, "" },
	{ "1 2", 0, "" },
	{ "99999999999999999999", 0, "" },
};

static int check_lists(void)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		struct mw_pidlist l = { 0 };
		char err[128], got[256] = "";
		int ok = mw_pidlist_parse(&l, lists[i].arg, err, sizeof(err)) == 0;

		for (size_t k = 0; ok && k < l.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d", k ? " " : "",
				 (int)l.pids[k]);
		if (ok != lists[i].ok || (ok && strcmp(got, lists[i].want))) {
			printf("FAIL -p '%s': %s '%s'\n", lists[i].arg, ok ? "accepted" : err, got);
			failed++;
		}
		mw_pidlist_free(&l);
	}
	return failed;
}

int main(void)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mw_where w;

		memset(&w, 0x55, sizeof(w));
		mw_where_parse_cgroup(rows[i].text, &w);
		if (strcmp(w.cgroup, rows[i].cgroup) || strcmp(w.cgroup_from, rows[i].from) ||
		    strcmp(w.container, rows[i].container)) {
			printf("FAIL row %zu: cgroup '%s' from '%s' container '%s'\n", i, w.cgroup,
			       w.cgroup_from, w.container);
			failed++;
		}
	}
	failed += check_lists();
	printf("%zu cgroup rows, %zu -p lists: %d failed\n", sizeof(rows) / sizeof(rows[0]),
	       sizeof(lists) / sizeof(lists[0]), failed);
	return failed ? 1 : 0;
}
