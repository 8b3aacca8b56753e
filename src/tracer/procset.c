/* procset.c - the processes a run is about, asked (procset.h). */
#include "procset.h"

int mw_procset_starts(const struct mw_procset *s)
{
	return s->kind == MW_PROCS_COMMAND;
}

int mw_procset_ptraced(const struct mw_procset *s)
{
	return mw_procset_starts(s) || s->follow;
}

int mw_procset_polled(const struct mw_procset *s)
{
	return s->kind == MW_PROCS_CGROUP || s->kind == MW_PROCS_LISTED;
}

int mw_procset_changes(const struct mw_procset *s)
{
	return s->follow || mw_procset_polled(s) || (mw_procset_starts(s) && s->runs >= 2);
}

pid_t mw_procset_first(const struct mw_procset *s)
{
	return s->npid ? s->pid[0] : 0;
}
