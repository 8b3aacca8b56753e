# mallocwatch.mk - arena regression checks for a project's Makefile.
#
# Copy it next to your Makefile, `include mallocwatch.mk`, and set (the
# rules are shell words: quote each, MW_RULES="--check 'arenas<=+1'")
#   MW_RUN    the command to trace        (default: ./app)
#   MW_RULES  --check options             (default: no more arenas or lock
#             waits than the baseline, no tcache double free)
#   MW_BASE   the committed baseline      (default: mallocwatch-baseline.json)
#   MW_FORMAT how the results are written (text, junit, json, github, ...)
#   MW_FORMAT_OUTPUT  a file for the results alone (e.g. mallocwatch.xml
#             with MW_FORMAT=junit); default: on stderr with the notes
# Targets:
#   mallocwatch-check     trace MW_RUN (3 runs, worst figure), judge the
#                         rules against MW_BASE; exit 3 on a regression,
#                         the report in mallocwatch-report.json
#   mallocwatch-baseline  write MW_BASE from a run of MW_RUN (review and
#                         commit it when a change is meant)
# Needs root (tracing) and mallocwatch on PATH (or MW=/path/to/mallocwatch).

MW ?= mallocwatch
MW_RUN ?= ./app
MW_BASE ?= mallocwatch-baseline.json
MW_REPEAT ?= 3
MW_FORMAT ?= text
MW_FORMAT_OUTPUT ?=
MW_RULES ?= --check 'arenas<=+0' --check 'reuse_waits<=+0' --check 'tcache_double_free==0'

.PHONY: mallocwatch-check mallocwatch-baseline

mallocwatch-check:
	$(MW) -q --repeat $(MW_REPEAT) --baseline $(MW_BASE) $(MW_RULES) \
		--format $(MW_FORMAT) $(if $(MW_FORMAT_OUTPUT),--format-output $(MW_FORMAT_OUTPUT)) \
		--json mallocwatch-report.json -o /dev/null -c $(MW_RUN)

mallocwatch-baseline:
	$(MW) -q --json $(MW_BASE) -o /dev/null -c $(MW_RUN)
