# Makefile for mallocwatch.
#
# Knobs (set on the command line, e.g. `make V=1 DEVELOPER=1`):
#   V=1             show the full commands
#   prefix=DIR      install prefix (default /usr/local)
#   DESTDIR=DIR     staging root for `make install`
#   EXTRA_CFLAGS=   appended to CFLAGS
#   DEVELOPER=1     add -Werror
#   SANITIZE=LIST   build with -fsanitize=LIST, e.g. address,undefined
#   GLIBC_PREFIX=   where the probe-enabled glibc is cached
#                   (default /var/cache/mallocwatch/glibc)
#
# Targets:
#   all        build build/mallocwatch, build/memlock-shim.so and
#              build/umulti-shim.so
#   deps       install missing Debian packages (root)
#   glibc      build the probe-enabled glibc once, if the system's has no probes (root)
#   demo       deps + glibc + all, then trace examples/arena-storm and
#              compare with its own malloc_info() (scripts/demo.sh)
#   check      deps + glibc + all, then every test (tests/run)
#   check-vm   the end-to-end tests under the kernel runtime and the bpf
#              runtime, and the two compared, in a Debian 12 guest with
#              Debian's 6.1 kernel (scripts/vm.sh, tests/vm-check.sh;
#              root, qemu, debootstrap); not part of check (see README)
#   fuzz       run each libFuzzer harness (tests/fuzz) for FUZZ_SECONDS
#              (default 600) with ASan and UBSan; `make check` runs each
#              for FUZZ_CHECK_SECONDS (default 20)
#   bench      overhead and parser ratios against same-run baselines (bench/run)
#   bench-vm   the kernel runtime against the bpf runtime, per hit and stop,
#              in the check-vm guest (scripts/vm.sh, bench/runtimes.sh; root)
#   install    install the binary, the shim and the man page
#   uninstall  remove what install put there
#   clean      remove build/

prefix ?= /usr/local
bindir = $(prefix)/bin
libexecdir = $(prefix)/libexec/mallocwatch
mandir = $(prefix)/share/man
GLIBC_PREFIX ?= /var/cache/mallocwatch/glibc
FUZZ_SECONDS ?= 600
FUZZ_CHECK_SECONDS ?= 20
FUZZ_CC ?= clang

CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS = -Wall -Wextra -Wformat-security -Wmissing-prototypes \
	-Wstrict-prototypes -Wundef -Wwrite-strings -Wvla -Wimplicit-fallthrough
ifeq ($(DEVELOPER),1)
WARNINGS += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif
# src/ is one folder per stage (README.md, Layout); every folder is on
# the include path, so a file includes another's header by its name alone.
SRC_DIRS = $(wildcard src/*/)
INCLUDES = $(patsubst %/,-I%,$(SRC_DIRS)) -Ibuild
ALL_CFLAGS = -std=gnu11 $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE $(INCLUDES) \
	-DMW_LIBEXECDIR='"$(libexecdir)"' -DMW_GLIBC_PREFIX='"$(GLIBC_PREFIX)"' \
	$(EXTRA_CFLAGS)
# libmicrohttpd is dlopen'ed by serve alone (src/commands/mhd_load.h)
LIBS = -ldw -lelf -lz -ljansson -lbpf -lutil -pthread

ifneq ($(V),1)
Q = @
QUIET_CC = @echo '   CC ' $@;
QUIET_GEN = @echo '   GEN' $@;
QUIET_LINK = @echo '   LINK' $@;
endif

.DELETE_ON_ERROR:
.PHONY: all deps glibc demo check check-vm fuzz fuzz-check bench bench-vm install uninstall clean

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

# Each stp/NAME.stp becomes const char mw_stp_NAME[] (see src/trace/stpsrc.h).
build/stpsrc.c: $(STP) scripts/embed.awk | build
	$(QUIET_GEN)awk -f scripts/embed.awk $(STP) >$@

build/%.o: %.c $(HDRS) | build
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/stpsrc.o: build/stpsrc.c
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

build/mallocwatch: $(OBJS)
	$(QUIET_LINK)$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LIBS)

build/libmw.a: $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJS)

# LD_PRELOADed into stapbpf alone (never the traced program); see
# src/trace/runtime.c and docs/platform.md.
build/memlock-shim.so: shim/memlock-shim.c | build
	$(QUIET_CC)$(CC) -O2 -Wall -shared -fPIC -o $@ $< -ldl

build/umulti-shim.so: shim/umulti-shim.c shim/inplace.c shim/inplace.h src/trace/umulti.h | build
	$(QUIET_CC)$(CC) -O2 -Wall -Wextra -Wmissing-prototypes -Isrc/trace -shared -fPIC -o $@ \
		shim/umulti-shim.c shim/inplace.c -ldl -pthread

deps:
	$(Q)sh scripts/install-deps.sh

glibc: deps
	$(Q)sh scripts/build-glibc.sh $(GLIBC_PREFIX)

demo: deps glibc all
	$(Q)$(MAKE) -s -C examples
	$(Q)sh scripts/demo.sh

UNIT_TESTS = $(patsubst tests/%.c,build/tests/%,$(wildcard tests/unit-*.c))

# libFuzzer harnesses, each linked with every module but main.c, built
# with clang's libFuzzer, ASan and UBSan (UB is fatal).  Seeds are
# committed in tests/fuzz/corpus-NAME; what a run finds goes to
# build/fuzz/found-NAME.  tests/t-fuzz.sh runs them.
FUZZERS = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE $(INCLUDES) -DMW_LIBEXECDIR='"$(libexecdir)"' \
	-DMW_GLIBC_PREFIX='"$(GLIBC_PREFIX)"'
LIB_SRCS = $(filter-out src/commands/main.c,$(SRCS)) build/stpsrc.c


build/tests/unit-%: tests/unit-%.c tests/unit.h build/libmw.a
	$(Q)mkdir -p build/tests
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -o $@ $< build/libmw.a $(LIBS)

# the shim's rewrite, #included by its tests (it is not in libmw.a)
build/tests/unit-inplace build/tests/unit-inplace-paths build/tests/unit-inplace-fuzz: \
	shim/inplace.c shim/inplace.h tests/inplace-harness.h

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
	build/tests/fixtures/exec-after build/tests/fixtures/trim-hostile \
	build/tests/fixtures/stopwatch

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

build/tests/fixtures/fork-arenas: tests/fixtures/fork-arenas.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/exec-after: tests/fixtures/exec-after.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/trim-hostile: tests/fixtures/trim-hostile.c
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) -O2 -Wall -o $@ $< -pthread

build/tests/fixtures/stopwatch: tests/fixtures/stopwatch.c
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

check: deps glibc all $(UNIT_TESTS) $(FIXTURES) $(FUZZERS)
	$(Q)$(MAKE) -s -C examples
	$(Q)FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS) sh tests/run

check-vm: deps glibc
	$(Q)MW_DEPS_VM=1 sh scripts/install-deps.sh
	$(Q)sh scripts/vm.sh sh tests/vm-check.sh

build/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(LIB_SRCS) $(HDRS)
	$(Q)mkdir -p build/fuzz
	$(QUIET_LINK)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRCS) $(LIBS)

fuzz: $(FUZZERS)
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/run fuzz

bench: deps glibc all
	$(Q)$(MAKE) -s -C examples
	$(Q)sh bench/run

bench-vm: deps glibc
	$(Q)MW_DEPS_VM=1 sh scripts/install-deps.sh
	$(Q)sh scripts/vm.sh env MW_HOST_LOAD="$$(cut -d' ' -f1-3 /proc/loadavg)" sh bench/runtimes.sh

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libexecdir) $(DESTDIR)$(mandir)/man1
	install -m 755 build/mallocwatch $(DESTDIR)$(bindir)/mallocwatch
	install -m 644 build/memlock-shim.so $(DESTDIR)$(libexecdir)/memlock-shim.so
	install -m 644 build/umulti-shim.so $(DESTDIR)$(libexecdir)/umulti-shim.so
	install -m 644 docs/mallocwatch.1 $(DESTDIR)$(mandir)/man1/mallocwatch.1

uninstall:
	rm -f $(DESTDIR)$(bindir)/mallocwatch $(DESTDIR)$(mandir)/man1/mallocwatch.1
	rm -rf $(DESTDIR)$(libexecdir)

clean:
	rm -rf build tests/out
	$(MAKE) -s -C examples clean
