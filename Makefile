# ocdir - race-free create-and-open of directories.
#
#   make            build the library, the command and the test programs
#   make run        the main job: boot legacy, stock 7.3 and patched 7.3,
#                   show the feature (vm/demo, README)
#   make check      every test, on the host and in the QEMU guests (README)
#   make check-host the host-side tests only, no QEMU, no root needed for most
#   make install    PREFIX, DESTDIR, ... (install.mk);  make dist: build/ocdir-VERSION.tar.gz
#   make deps       install the Debian packages the above need
#   make kernels    build (or find cached) the test kernels: five built,
#                   stock and stock-7.3 fetched (Debian's own)
#   make check-debug  the 7.3 lockdep/KASAN kernel on every mount (not in CI's
#                     make check: its compile does not fit the budget)
#   make check-lts  the 6.12 backport's guest tests, its debug kernel included,
#                   and vm/demo --lts (make run's tables on the 6.12 kernels)
#   make check-series  checkpatch --strict and a build after every patch,
#                      and the open(2) man-pages patch (kernel/check-man-pages)
#   make V=1 ...    show the commands;  make SAN=1 ...  ASan+UBSan build
#   make test-hooks the library with the bindings' fd-identity test hook
#   make check-mutants  the bindings' mutation check (bindings/mutate)
#
# Each folder adds its own rules in a *.mk file included below; outputs go to
# build/ (host programs) and ${XDG_CACHE_HOME:-~/.cache}/ocdir (kernels).

.DEFAULT_GOAL := all
# The build directory is build/ unless the make command line names another
# (`make BUILD=b-clang CC=clang`). A BUILD variable in the environment, as
# some CI systems set one, is not taken: the tests look in build/.
ifneq ($(origin BUILD),command line)
BUILD := build
endif
CFLAGS  ?= -O2 -g
RANLIB  ?= ranlib
OBJCOPY ?= objcopy

# CC, CFLAGS, CPPFLAGS, LDFLAGS, AR, RANLIB and OBJCOPY belong to whoever
# builds: `make CFLAGS=-O2`, `make CC=clang`, Debian's dpkg-buildflags all
# work. What the code itself needs is in the OCDIR_* variables below, which
# every rule puts before the user's flags. -Werror only where the project's
# own checks build (OCDIR_WERROR=1: `make check`, tests/run), never for a
# packager whose compiler may warn about something new.
OCDIR_CPPFLAGS := -D_GNU_SOURCE -Iinclude
OCDIR_CFLAGS   := -std=c11 -Wall -Wextra $(if $(filter 1,$(OCDIR_WERROR)),-Werror)
OCDIR_LDFLAGS  :=
ifeq ($(SAN),1)
OCDIR_CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer
OCDIR_LDFLAGS  += -fsanitize=address,undefined
endif
# make test-hooks: the library once more, in $(BUILD)/test-hooks, with the
# fd-identity hook of lib/internal.h (the bindings' tests). Never installed.
ifeq ($(TEST_HOOKS),1)
OCDIR_CPPFLAGS += -DOCDIR_TEST_HOOKS
endif
ALL_CFLAGS  = $(OCDIR_CPPFLAGS) $(CPPFLAGS) $(OCDIR_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(OCDIR_LDFLAGS) $(LDFLAGS)
ifneq ($(V),1)
Q := @
endif
export CC

# The version: the OCDIR_VERSION_* macros of include/ocdir.h, nowhere else.
# The .pc file, the shared library's names, `ocdir --version` and
# `make dist` take it from there.
ocdir_version_part = $(shell sed -n 's/^\#define OCDIR_VERSION_$(1)[[:space:]]*\([0-9][0-9]*\).*/\1/p' include/ocdir.h)
OCDIR_VERSION_MAJOR := $(call ocdir_version_part,MAJOR)
OCDIR_VERSION := $(OCDIR_VERSION_MAJOR).$(call ocdir_version_part,MINOR).$(call ocdir_version_part,PATCH)

# Objects are rebuilt when the compiler or the flags change (a `make` after
# `make CFLAGS=...`, or the -Werror of `make check` after a plain `make`).
OCDIR_FLAGS_STAMP := $(BUILD)/.flags
ocdir_flags_now := $(CC) | $(ALL_CFLAGS) | $(ALL_LDFLAGS) | $(AR) | $(RANLIB) | $(OBJCOPY)
ocdir_same = $(and $(findstring x$(1)x,x$(2)x),$(findstring x$(2)x,x$(1)x))
.PHONY: FORCE
$(OCDIR_FLAGS_STAMP): FORCE
	$(if $(call ocdir_same,$(file <$@),$(ocdir_flags_now)),,$(shell mkdir -p $(@D))$(file >$@,$(ocdir_flags_now)))

# make check's kernels, in the order the guest suites first need them (it
# builds them in the background while the suites run; stock-7.3 is Debian's
# own kernel, fetched, not built). make check tests the mainline series
# (7.3) and the legacy era; the 6.12 LTS backport's kernels (Debian's stock
# 6.12, patched, and its lockdep/KASAN kernel debug) are make check-lts's,
# and the 7.3 lockdep/KASAN kernel debug-7.3 is make check-debug's: their
# compiles and boots do not fit in CI's 90 minutes beside the others from
# a cold cache (docs/harness.md).
KERNELS := stock-7.3 patched-7.3 legacy
DEBUG_KERNELS := debug-7.3
LTS_KERNELS := stock patched debug
LTS_SUITES := 10-harness 20-openat2 30-kernel-selftests 50-library-guest 90-fuzz

.PHONY: all deps kernels check check-host check-lts check-debug check-series check-mutants run clean
all:

deps:
	$(Q)scripts/deps

kernels: deps
	$(Q)for k in $(KERNELS) $(DEBUG_KERNELS) $(LTS_KERNELS); do kernel/build $$k >/dev/null || exit 1; done

-include lib/lib.mk
-include cli/cli.mk
-include install.mk
include tests/harness/harness.mk
include tests/kernel/kernel.mk
include vm/vm.mk
-include tests/tests.mk
-include tests/race/race.mk
-include tests/fuzz/fuzz.mk
-include bench/bench.mk

check: deps
	$(Q)$(MAKE) --no-print-directory OCDIR_WERROR=1 all
	$(Q)tests/run --kernels "$(KERNELS)"

# The suites that need no QEMU guest, the guest parts of the others skipped;
# works in an extracted `make dist` tarball (no git metadata needed).
check-host:
	$(Q)$(MAKE) --no-print-directory OCDIR_WERROR=1 all
	$(Q)tests/run --host $(CHECK_HOST_SUITES)

# The 6.12 LTS series on its own kernels, the debug one included: the guest
# suites' parts that boot stock, patched and debug; then make run's demo on
# the 6.12 kernels (legacy, stock, patched), which make run no longer shows.
check-lts: deps
	$(Q)$(MAKE) --no-print-directory OCDIR_WERROR=1 all
	$(Q)tests/run --kernels "$(LTS_KERNELS)" $(LTS_SUITES); a=$$?; \
		vm/demo --lts; b=$$?; [ $$a -eq 0 ] && [ $$b -eq 0 ]

# The debug 7.3 kernel (lockdep, KASAN) on every mount the patched one is
# tested on, the guest's NFS and SMB mounts included: its smoke boot, the
# selftests and the conformance table (raw, native). Its compile and boots
# do not fit in make check's CI budget.
check-debug: deps
	$(Q)$(MAKE) --no-print-directory OCDIR_WERROR=1 all
	$(Q)OCDIR_DEBUG_ALL=1 tests/run --kernels "$(DEBUG_KERNELS)" 10-harness 31-kernel-selftests-7.3 50-library-guest

# Can the bindings' tests fail? Every mutant of bindings/*/mutants.tsv
# (one argument the binding passes to the library, broken at a time) must
# make its binding's tests fail: bindings/mutate.
check-mutants: deps
	$(Q)$(MAKE) --no-print-directory OCDIR_WERROR=1 all test-hooks
	$(Q)bindings/mutate

check-series: deps
	$(Q)kernel/check-series; a=$$?; kernel/check-series --series kernel/patches-7.3; b=$$?; \
		kernel/check-man-pages; c=$$?; [ $$a -eq 0 ] && [ $$b -eq 0 ] && [ $$c -eq 0 ]

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)vm/demo

clean:
	rm -rf $(BUILD)
