# Makefile for mallocwatch.
#
# Knobs (set on the command line, e.g. `make V=1 DEVELOPER=1`):
#   V=1             show the full commands
#   prefix=DIR      install prefix (default /usr/local; the Debian package
#                   uses /usr): the binary goes to prefix/bin, the shims and
#                   the glibc scripts to prefix/libexec/mallocwatch (compiled
#                   in, so give the same prefix to the build and install)
#   DESTDIR=DIR     staging root for `make install`
#   CFLAGS= CPPFLAGS= LDFLAGS=  the usual (dpkg-buildflags sets them for
#                   the package); the shims get them too, not SANITIZE
#   EXTRA_CFLAGS=   appended to CFLAGS
#   DEVELOPER=1     add -Werror
#   SANITIZE=LIST   build with -fsanitize=LIST, e.g. address,undefined
#   GLIBC_PREFIX=   where the probe-enabled glibc is cached
#                   (default /var/cache/mallocwatch/glibc)
#   TEST_JOBS=N     `make check` builds with -jN and runs N tests at a
#                   time (tests/run -j N; default: the online CPUs)
#
# Targets:
#   all        build build/mallocwatch, build/memlock-shim.so and
#              build/umulti-shim.so
#   deps       install missing Debian packages (root)
#   glibc      build the probe-enabled glibc once, if the system's has no probes (root)
#   demo       deps + glibc + all, then trace examples/arena-storm and
#              compare with its own malloc_info() (scripts/demo.sh)
#   check      deps + glibc + all, then every test (tests/run -j TEST_JOBS)
#   check-vm   the end-to-end tests under the kernel runtime and the bpf
#              runtime, and the two compared, in a Debian 12 guest with
#              Debian's 6.1 kernel, or with MW_VM_SUITE=trixie a Debian 13
#              guest with its 6.12 kernel and systemtap 5.1 (and the trixie
#              root's glibc: glibc-root) (scripts/vm.sh, tests/vm/vm-check.sh;
#              root, qemu, debootstrap); not part of check (docs/testing.md)
#   check-ci-example  examples/ci/github-actions.yml's steps on a clean
#              clone: its packages alone build mallocwatch in a bare Debian
#              12 root, its check step fails a regression with an ::error
#              and a step summary (scripts/ci-example.sh; root, debootstrap,
#              a few minutes); not part of check
#   fuzz       run each libFuzzer harness (tests/fuzz) for FUZZ_SECONDS
#              (default 600) with ASan and UBSan; `make check` runs each
#              for FUZZ_CHECK_SECONDS (default 20)
#   glibc-root a Debian root (SUITE=bullseye|bookworm|trixie, default
#              bookworm) at ROOTS_DIR/SUITE whose own glibc is rebuilt
#              with SDT probes, once (scripts/glibc-root.sh; root, 15-40
#              minutes of 2 cores)
#   check-glibc the end-to-end tests on that root's glibc: programs built
#              and run inside it, traced from here (scripts/check-glibc.sh,
#              docs/glibc-versions.md; root); not part of check
#   analyze    gcc -fanalyzer and cppcheck over src/, their reports known to
#              be false listed with the reason (scripts/analyze.sh; some 6
#              minutes); not part of check
#   bench      overhead and parser ratios against same-run baselines (bench/run)
#   bench-vm   the kernel runtime against the bpf runtime, per hit and stop,
#              in the check-vm guest (scripts/vm.sh, bench/runtimes.sh; root)
#   deb        the Debian package, built from the tracked files in
#              build/deb/ (dpkg-buildpackage -b -us -uc): build/deb/*.deb
#   check-deb  install that package into a fresh bookworm root (debootstrap)
#              and run it there: snapshot -p of python3, setup glibc, -c
#              (tests/vm/check-deb.sh; root, debootstrap; slow: the glibc
#              build in the root); not part of check
#   install    install the binary, the shims, the glibc scripts, the man
#              pages and the bash completion
#   uninstall  remove what install put there
#   clean      remove build/

prefix ?= /usr/local
bindir = $(prefix)/bin
libexecdir = $(prefix)/libexec/mallocwatch
datadir = $(prefix)/share
mandir = $(datadir)/man
bashcompdir = $(datadir)/bash-completion/completions
GLIBC_PREFIX ?= /var/cache/mallocwatch/glibc
SUITE ?= bookworm
ROOTS_DIR ?= /var/cache/mallocwatch/roots
MW_VM_SUITE ?= bookworm
FUZZ_SECONDS ?= 600
FUZZ_CHECK_SECONDS ?= 20
FUZZ_CC ?= clang

CC ?= cc
CFLAGS ?= -O2 -g
# The shims are preloaded into stapbpf: the user's flags, never SANITIZE's.
SHIM_CFLAGS := $(CPPFLAGS) $(CFLAGS)
SHIM_LDFLAGS := $(LDFLAGS)
# The one source of the version: VERSION (debian/changelog and
# docs/NEWS.md must agree with it: tests/e2e/t-version.sh, make deb).
VERSION := $(shell cat VERSION)
WARNINGS = -Wall -Wextra -Wformat-security -Wmissing-prototypes \
	-Wstrict-prototypes -Wundef -Wwrite-strings -Wvla -Wimplicit-fallthrough
ifeq ($(DEVELOPER),1)
WARNINGS += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif
# src/ is one folder per stage (docs/architecture.md, Layout); every folder is on
# the include path, so a file includes another's header by its name alone.
SRC_DIRS = $(wildcard src/*/)
INCLUDES = $(patsubst %/,-I%,$(SRC_DIRS)) -Ibuild
ALL_CFLAGS = -std=gnu11 $(CPPFLAGS) $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE $(INCLUDES) \
	-DMW_LIBEXECDIR='"$(libexecdir)"' -DMW_GLIBC_PREFIX='"$(GLIBC_PREFIX)"' \
	$(EXTRA_CFLAGS)
# libmicrohttpd is dlopen'ed by serve alone (src/commands/mhd_load.h)
LIBS = -ldw -lelf -lz -llzma -ljansson -lbpf -lyaml -lcrypt -lutil -pthread

ifneq ($(V),1)
Q = @
QUIET_CC = @echo '   CC ' $@;
QUIET_GEN = @echo '   GEN' $@;
QUIET_LINK = @echo '   LINK' $@;
endif

.DELETE_ON_ERROR:
.PHONY: FORCE all deps glibc glibc-root demo check check-build check-vm check-glibc check-ci-example fuzz \
	fuzz-check analyze bench bench-vm deb check-deb install uninstall clean

SRCS = $(wildcard $(addsuffix *.c,$(SRC_DIRS)))
HDRS = $(wildcard $(addsuffix *.h,$(SRC_DIRS)) $(addsuffix *.def,$(SRC_DIRS)))
OBJS = $(addprefix build/,$(notdir $(SRCS:.c=.o))) build/stpsrc.o
LIB_OBJS = $(filter-out build/main.o,$(OBJS))
vpath %.c $(SRC_DIRS)
# Objects go side by side into build/ and includes name a header alone,
# so no two files under src/ may share a name.
NAMES = $(notdir $(SRCS) $(HDRS)) stpsrc.c
DUP_NAMES = $(sort $(foreach f,$(NAMES),$(if $(word 2,$(filter $(f),$(NAMES))),$(f))))
ifneq ($(DUP_NAMES),)
$(error two files under src/ share a name: $(DUP_NAMES))
endif
STP = stp/common.stp stp/bpf.stp stp/kernel.stp

all: build/mallocwatch build/memlock-shim.so build/umulti-shim.so

build:
	$(Q)mkdir -p build

# Each stp/NAME.stp becomes const char mw_stp_NAME[] (see src/script/stpsrc.h).
build/stpsrc.c: $(STP) scripts/embed.awk | build
	$(QUIET_GEN)awk -f scripts/embed.awk $(STP) >$@

# build/version.h: MW_VERSION from VERSION, remade when VERSION changes
build/version.h: VERSION | build
	$(QUIET_GEN)printf '#define MW_VERSION "%s"\n' "$(VERSION)" >$@

# build/cflags: the compiler flags, rewritten when they change, so that
# objects made with other flags are made again (git's GIT-CFLAGS): the
# paths are compiled in, and `make install prefix=/usr` after `make` must
# not install a binary that looks in /usr/local.
build/cflags: FORCE | build
	$(Q)printf '%s\n' '$(subst ','\'',$(ALL_CFLAGS) $(SHIM_CFLAGS) $(SHIM_LDFLAGS) $(LDFLAGS))' \
		>$@.new && if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi
FORCE:

build/%.o: %.c $(HDRS) build/version.h build/cflags | build
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/stpsrc.o: build/stpsrc.c build/cflags
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/mallocwatch: $(OBJS)
	$(QUIET_LINK)$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LIBS)

build/libmw.a: $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJS)

# LD_PRELOADed into stapbpf alone (never the traced program); see
# src/runtime/runtime.c and docs/platform.md.
build/memlock-shim.so: shim/memlock-shim.c build/cflags | build
	$(QUIET_CC)$(CC) $(SHIM_CFLAGS) -Wall -shared -fPIC -o $@ $< $(SHIM_LDFLAGS) -ldl

UMULTI_SRCS = shim/umulti-shim.c shim/umulti_base.c shim/umulti_arm.c shim/inplace.c shim/inplace_flow.c
build/umulti-shim.so: $(UMULTI_SRCS) shim/umulti_int.h shim/inplace.h shim/inplace_int.h \
		src/protocol/uprobe_multi.h build/cflags | build
	$(QUIET_CC)$(CC) $(SHIM_CFLAGS) -Wall -Wextra -Wmissing-prototypes -Isrc/protocol -shared -fPIC \
		-o $@ $(UMULTI_SRCS) $(SHIM_LDFLAGS) -ldl -pthread

deps:
	$(Q)sh scripts/install-deps.sh

analyze: build/version.h
	$(Q)sh scripts/analyze.sh

glibc: deps
	$(Q)sh scripts/build-glibc.sh $(GLIBC_PREFIX)

demo: deps glibc all
	$(Q)$(MAKE) -s -C examples
	$(Q)sh scripts/demo.sh

UNIT_TESTS = $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/unit-*.c))

# libFuzzer harnesses, each linked with every module but main.c, built
# with clang's libFuzzer, ASan and UBSan (UB is fatal).  Seeds are
# committed in tests/fuzz/corpus-NAME; what a run finds goes to
# build/fuzz/found-NAME.  tests/e2e/t-fuzz.sh runs them.
FUZZERS = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE $(INCLUDES) -DMW_LIBEXECDIR='"$(libexecdir)"' \
	-DMW_GLIBC_PREFIX='"$(GLIBC_PREFIX)"'
LIB_SRCS = $(filter-out src/commands/main.c,$(SRCS)) build/stpsrc.c


build/tests/unit-%: tests/unit/unit-%.c tests/unit/unit.h build/libmw.a
	$(Q)mkdir -p build/tests
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -o $@ $< build/libmw.a $(LIBS)

# the shim's rewrite, #included by its tests (it is not in libmw.a)
build/tests/unit-inplace build/tests/unit-inplace-paths build/tests/unit-inplace-fuzz: \
	shim/inplace.c shim/inplace_flow.c shim/inplace.h shim/inplace_int.h \
	tests/unit/inplace-harness.h
build/tests/unit-proccopy build/tests/unit-procahead build/tests/unit-procpool \
build/tests/unit-snaplists: tests/unit/procmem-harness.h

# ELF fixtures for the tests (tests/fixtures/*)
FIXTURES = build/tests/fixtures/libfix.so build/tests/fixtures/fixprog \
	build/tests/fixtures/badnotes.o build/tests/fixtures/libmfix.so \
	build/tests/fixtures/mathprog build/tests/fixtures/injectnote.o \
	build/tests/fixtures/corrupt-arena \
	build/tests/fixtures/ttyprog build/tests/fixtures/ctr-run \
	build/tests/fixtures/fork-arenas build/tests/fixtures/mi-at-exit.so \
	build/tests/fixtures/busy-alloc build/tests/fixtures/serve-counts \
	build/tests/fixtures/stack-chains build/tests/fixtures/stack-chains-fp \
	build/tests/fixtures/stack-chains-stripped build/tests/fixtures/stack-fork \
	build/tests/fixtures/exec-after build/tests/fixtures/exec-later \
	build/tests/fixtures/fork-exec \
	build/tests/fixtures/locked-arena \
	build/tests/fixtures/mallinfo-hold build/tests/fixtures/many-free \
	build/tests/fixtures/hold-mmapped build/tests/fixtures/tune-det \
	build/tests/fixtures/hold-shm \
	build/tests/fixtures/retitle \
	build/tests/fixtures/trim-hostile build/tests/fixtures/stopwatch \
	build/tests/fixtures/held-kinds build/tests/fixtures/release-tree \
	build/tests/fixtures/vm-sibling build/tests/fixtures/pid-reuse \
	build/tests/fixtures/fuse-flush

build/tests/fixtures/libfix.so: tests/fixtures/libfix.S
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -shared -fPIC -o $@ $<

build/tests/fixtures/fixprog: tests/fixtures/fixprog.c build/tests/fixtures/libfix.so
	$(QUIET_CC)$(CC) -O0 -o $@ $< -L$(@D) -lfix -Wl,-rpath,'$$ORIGIN'

build/tests/fixtures/libmfix.so: tests/fixtures/libmfix.S
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -shared -fPIC -o $@ $<

build/tests/fixtures/mathprog: tests/fixtures/mathprog.c build/tests/fixtures/libmfix.so
	$(QUIET_CC)$(CC) -O0 -o $@ $< -L$(@D) -lmfix -lm -Wl,-rpath,'$$ORIGIN'

build/tests/fixtures/corrupt-arena: tests/fixtures/corrupt-arena.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O0 -Wall -o $@ $<

build/tests/fixtures/ttyprog: tests/fixtures/ttyprog.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $<

build/tests/fixtures/ctr-run: tests/fixtures/ctr-run.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $<

build/tests/fixtures/serve-counts: tests/fixtures/serve-counts.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/mi-at-exit.so: tests/fixtures/mi-at-exit.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -shared -fPIC -o $@ $<

# the process-tree fixtures: their shared part in fixutil.c
build/tests/fixtures/fork-arenas: tests/fixtures/fork-arenas.c tests/fixtures/fixutil.c tests/fixtures/fixutil.h
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $(filter %.c,$^) -pthread

build/tests/fixtures/release-tree: tests/fixtures/release-tree.c tests/fixtures/fixutil.c tests/fixtures/fixutil.h
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $(filter %.c,$^) -pthread

build/tests/fixtures/exec-after: tests/fixtures/exec-after.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/exec-later: tests/fixtures/exec-later.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/fuse-flush: tests/fixtures/fuse-flush.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -Wextra -o $@ $< -pthread

build/tests/fixtures/fork-exec: tests/fixtures/fork-exec.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/mallinfo-hold: tests/fixtures/mallinfo-hold.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/locked-arena: tests/fixtures/locked-arena.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/hold-mmapped: tests/fixtures/hold-mmapped.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O0 -Wall -o $@ $<

build/tests/fixtures/tune-det: tests/fixtures/tune-det.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O0 -Wall -o $@ $<

build/tests/fixtures/hold-shm: tests/fixtures/hold-shm.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -lrt

build/tests/fixtures/many-free: tests/fixtures/many-free.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/retitle: tests/fixtures/retitle.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $<

build/tests/fixtures/trim-hostile: tests/fixtures/trim-hostile.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/stopwatch: tests/fixtures/stopwatch.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $<

build/tests/fixtures/held-kinds: tests/fixtures/held-kinds.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -pthread -o $@ $<

build/tests/fixtures/vm-sibling: tests/fixtures/vm-sibling.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $<

build/tests/fixtures/pid-reuse: tests/fixtures/pid-reuse.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $<

build/tests/fixtures/busy-alloc: tests/fixtures/busy-alloc.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -g -Wall -pthread -o $@ $<

# --stacks' call chains: CFI unwinding (-O2 omits the frame pointer), the
# frame pointer kept, and a stripped copy (symbols from .dynsym alone:
# -rdynamic exports the chain's functions)
build/tests/fixtures/stack-chains: tests/fixtures/stack-chains.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -g -Wall -o $@ $< -pthread

build/tests/fixtures/stack-chains-fp: tests/fixtures/stack-chains.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -g -fno-omit-frame-pointer -Wall -o $@ $< -pthread

build/tests/fixtures/stack-chains-stripped: tests/fixtures/stack-chains.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -rdynamic -s -o $@ $< -pthread

# --stacks over several processes (-f, -p A,B): each child's own chains
build/tests/fixtures/stack-fork: tests/fixtures/stack-fork.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -g -Wall -o $@ $< -pthread

build/tests/fixtures/injectnote.o: tests/fixtures/injectnote.S
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -c -o $@ $<

build/tests/fixtures/badnotes.o: tests/fixtures/badnotes.S
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -c -o $@ $<

# check builds with TEST_JOBS jobs and runs that many tests at a time
TEST_JOBS = $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)

check: deps glibc
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) check-build
	$(Q)FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS) sh tests/run -j $(TEST_JOBS)

check-build: all $(UNIT_TESTS) $(FIXTURES) $(FUZZERS)
	$(Q)$(MAKE) -s -C examples

check-vm: deps $(if $(filter bookworm,$(MW_VM_SUITE)),glibc)
	$(Q)MW_DEPS_VM=1 sh scripts/install-deps.sh
	$(Q)[ "$(MW_VM_SUITE)" = bookworm ] || sh scripts/glibc-root.sh $(MW_VM_SUITE) $(ROOTS_DIR)/$(MW_VM_SUITE)
	$(Q)MW_VM_SUITE=$(MW_VM_SUITE) MW_ROOTS_DIR=$(ROOTS_DIR) sh scripts/vm.sh sh tests/vm/vm-check.sh

glibc-root: deps
	$(Q)MW_DEPS_ROOTS=1 sh scripts/install-deps.sh
	$(Q)sh scripts/glibc-root.sh $(SUITE) $(ROOTS_DIR)/$(SUITE)

# t-attach-exec-reuse's pid-reuse runs here, as nobody, not in the root
check-glibc: glibc-root all build/tests/fixtures/pid-reuse
	$(Q)sh scripts/check-glibc.sh $(ROOTS_DIR)/$(SUITE)

check-ci-example: deps glibc
	$(Q)sh scripts/ci-example.sh

# every module compiled once for the four harnesses (it was once for each)
FUZZ_OBJS = $(addprefix build/fuzz/obj/,$(notdir $(LIB_SRCS:.c=.o)))
$(filter-out build/fuzz/obj/stpsrc.o,$(FUZZ_OBJS)): build/fuzz/obj/%.o: %.c $(HDRS) build/version.h
	$(Q)mkdir -p build/fuzz/obj
	$(QUIET_CC)$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

build/fuzz/obj/stpsrc.o: build/stpsrc.c
	$(Q)mkdir -p build/fuzz/obj
	$(QUIET_CC)$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

build/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_OBJS) $(HDRS) build/version.h
	$(Q)mkdir -p build/fuzz
	$(QUIET_LINK)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_OBJS) $(LIBS)

fuzz: $(FUZZERS)
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/run fuzz

bench: deps glibc all
	$(Q)$(MAKE) -s -C examples
	$(Q)sh bench/run

bench-vm: deps glibc
	$(Q)MW_DEPS_VM=1 sh scripts/install-deps.sh
	$(Q)sh scripts/vm.sh env MW_HOST_LOAD="$$(cut -d' ' -f1-3 /proc/loadavg)" sh bench/runtimes.sh

# Every docs/*.1 (one page per command).  `mallocwatch setup glibc` runs
# the installed build-glibc.sh, which runs install-deps.sh beside it: the
# same two files `make glibc` runs from scripts/.
MANPAGES = $(wildcard docs/*.1)

# The package, from the files git tracks (and new ones it does not ignore)
# as they are in the tree, copied to build/deb/mallocwatch-VERSION: what a
# clean clone holds, built as dpkg-buildpackage builds it there.  The
# .deb, .buildinfo and .changes land in build/deb/.
deb:
	$(Q)command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
		{ echo "make deb: needs dpkg-dev and debhelper (apt-get install dpkg-dev debhelper)"; exit 1; }
	$(Q)sh scripts/check-version.sh >/dev/null
	$(Q)rm -rf build/deb && mkdir -p build/deb/mallocwatch-$(VERSION)
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -C build/deb/mallocwatch-$(VERSION) -xf -
	$(Q)cd build/deb/mallocwatch-$(VERSION) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; echo "make deb: dpkg-buildpackage failed (build/deb/build.log)"; exit 1; }
	$(Q)ls build/deb/*.deb

# Slow (the glibc build inside a fresh root): not part of check.
check-deb: deb
	$(Q)sh tests/vm/check-deb.sh build/deb/mallocwatch_$(VERSION)_amd64.deb

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libexecdir) $(DESTDIR)$(mandir)/man1 \
		$(DESTDIR)$(bashcompdir)
	install -m 755 build/mallocwatch $(DESTDIR)$(bindir)/mallocwatch
	install -m 644 build/memlock-shim.so $(DESTDIR)$(libexecdir)/memlock-shim.so
	install -m 644 build/umulti-shim.so $(DESTDIR)$(libexecdir)/umulti-shim.so
	install -m 755 scripts/build-glibc.sh $(DESTDIR)$(libexecdir)/build-glibc.sh
	install -m 755 scripts/install-deps.sh $(DESTDIR)$(libexecdir)/install-deps.sh
	install -m 644 scripts/safe-dirs.sh $(DESTDIR)$(libexecdir)/safe-dirs.sh
	install -m 644 $(MANPAGES) $(DESTDIR)$(mandir)/man1/
	install -m 644 completions/mallocwatch.bash $(DESTDIR)$(bashcompdir)/mallocwatch

uninstall:
	rm -f $(DESTDIR)$(bindir)/mallocwatch $(DESTDIR)$(bashcompdir)/mallocwatch
	rm -f $(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(MANPAGES)))
	rm -rf $(DESTDIR)$(libexecdir)

clean:
	rm -rf build tests/out
	$(MAKE) -s -C examples clean
