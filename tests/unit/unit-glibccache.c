/* unit-glibccache.c - the policy of the libc layouts glibcinfo.c keeps
 * (mw_glibc_slot_victim, mw_glibc_slot_use): one user's processes, on as
 * many libc files as they like, cannot put out the files another user's
 * processes use while that user holds no more than they do.  A cache of
 * 64 places is played here as glibcinfo.c plays it (a use of a file kept
 * is a mw_glibc_slot_use; a file not kept takes a free place, else the
 * victim's), with files as numbers. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "glibcinfo.h"
#include "unit.h"

#define N 64
#define ROOT 0
#define NOBODY 65534

static struct cache {
	struct mw_glibc_slot s[N];
	int file[N];
	size_t n;
	uint64_t clock;
} c;

static void reset(void)
{
	memset(&c, 0, sizeof(c));
}

/* A process of user's maps file: 1 when it was kept, 0 when read. */
static int use(int file, uid_t user)
{
	size_t i;

	for (i = 0; i < c.n; i++)
		if (c.file[i] == file) {
			mw_glibc_slot_use(c.s, c.n, i, user, ++c.clock);
			return 1;
		}
	i = c.n < N ? c.n++ : mw_glibc_slot_victim(c.s, c.n, user);
	c.s[i] = (struct mw_glibc_slot){ .user = user, .used = ++c.clock };
	c.file[i] = file;
	return 0;
}

static size_t holds(uid_t user)
{
	size_t k = 0;

	for (size_t i = 0; i < c.n; i++)
		k += c.s[i].user == user;
	return k;
}

static int kept(int file)
{
	for (size_t i = 0; i < c.n; i++)
		if (c.file[i] == file)
			return 1;
	return 0;
}

int main(void)
{
	unsigned long lost = 0;

	/* root's system libc (file 1) and nobody's 70 copies (1000 + k),
	 * used in turn as serve would read them, 50 times: root's is read
	 * once, nobody's are put out by nobody's own */
	reset();
	for (int round = 0; round < 50; round++) {
		lost += round > 0 && !use(1, ROOT);
		if (round == 0)
			use(1, ROOT);
		for (int k = 0; k < 70; k++)
			use(1000 + k, NOBODY);
	}
	CHECK(lost == 0, "root's libc was read again %lu times in 49 rounds", lost);
	CHECK(holds(ROOT) == 1 && holds(NOBODY) == N - 1, "root %zu, nobody %zu",
	      holds(ROOT), holds(NOBODY));

	/* the same, root's libc first read for nobody's shell (a process
	 * of nobody's on it): root's next use takes it over */
	reset();
	use(1, NOBODY);
	for (int k = 0; k < 10; k++)
		use(1000 + k, NOBODY);
	CHECK(use(1, ROOT), "root's use of the libc nobody read first");
	CHECK(holds(ROOT) == 1, "root holds %zu", holds(ROOT));
	use(1, NOBODY);		/* nobody holds more: it stays root's */
	CHECK(holds(ROOT) == 1, "root holds %zu after nobody's use", holds(ROOT));
	for (int k = 0; k < 500; k++)
		use(2000 + k, NOBODY);
	CHECK(kept(1), "root's libc, also used by nobody, put out by nobody's loads");

	/* root holds 40 (containers' libcs), nobody floods: root keeps half */
	reset();
	for (int k = 0; k < 40; k++)
		use(k, ROOT);
	for (int k = 0; k < 1000; k++)
		use(1000 + k, NOBODY);
	CHECK(holds(ROOT) == N / 2 && holds(NOBODY) == N / 2, "root %zu, nobody %zu",
	      holds(ROOT), holds(NOBODY));
	/* root's 32 left are its most recently used */
	{
		int newest = 0;

		for (int k = 8; k < 40; k++)
			newest += kept(k);
		CHECK(newest == N / 2, "of root's 32 newest files, %d kept", newest);
	}
	/* a tie: each puts out its own least recently used */
	use(500, ROOT);
	CHECK(!kept(8) && holds(ROOT) == N / 2, "root's load on a tie: root's oldest (8) out");
	use(5000, NOBODY);
	CHECK(holds(ROOT) == N / 2 && !kept(1000 + 1000 - N / 2),
	      "nobody's load on a tie: nobody's oldest out");

	/* three users: one floods, the others keep their share */
	reset();
	for (int k = 0; k < 30; k++) {
		use(k, 1000);
		use(100 + k, 1001);
	}
	for (int k = 0; k < 1000; k++)
		use(1000 + k, NOBODY);
	CHECK(holds(1000) >= N / 3 && holds(1001) >= N / 3,
	      "users 1000 and 1001 kept %zu and %zu of %d", holds(1000), holds(1001), N);

	/* a victim is the least recently used of the user holding most */
	{
		struct mw_glibc_slot s[4] = {
			{ ROOT, 1 }, { NOBODY, 9 }, { NOBODY, 3 }, { 7, 2 },
		};

		CHECK(mw_glibc_slot_victim(s, 4, ROOT) == 2, "nobody's oldest");
		CHECK(mw_glibc_slot_victim(s, 4, 7) == 2, "nobody's oldest, for 7");
		CHECK(mw_glibc_slot_victim(s, 4, NOBODY) == 2, "nobody's own oldest");
		s[3].user = ROOT;	/* 2 and 2: the loader's own */
		CHECK(mw_glibc_slot_victim(s, 4, ROOT) == 0, "root's own oldest on a tie");
		CHECK(mw_glibc_slot_victim(s, 4, NOBODY) == 2, "nobody's own oldest on a tie");
		CHECK(mw_glibc_slot_victim(s, 4, 7) == 0, "the oldest of the tied, for 7");
		/* a use by an unknown user stamps it, charges no one */
		mw_glibc_slot_use(s, 4, 1, MW_NO_UID, 10);
		CHECK(s[1].user == NOBODY && s[1].used == 10, "a use by no known user");
		/* 1 fewer: not moved (it would come back at the next use) */
		s[3].user = 7;
		mw_glibc_slot_use(s, 4, 1, ROOT, 11);
		CHECK(s[1].user == NOBODY, "moved to root, holding 1 to nobody's 2");
		mw_glibc_slot_use(s, 4, 1, 8, 12);
		CHECK(s[1].user == 8, "not moved to 8, holding none to nobody's 2");
	}
	return failed ? 1 : 0;
}
