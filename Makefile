# ocdir - race-free create-and-open of directories.
#
#   make            build the library, the command and the test programs
#   make run        the main job: boot the kernels, show the feature (README)
#   make check      every test, on the host and in the QEMU guests (README)
#   make deps       install the Debian packages the above need
#   make kernels    build (or find cached) the four test kernels
#   make check-series  checkpatch --strict and a build after every patch
#   make V=1 ...    show the commands;  make SAN=1 ...  ASan+UBSan build
#
# Each folder adds its own rules in a *.mk file included below; outputs go to
# build/ (host programs) and ${XDG_CACHE_HOME:-~/.cache}/ocdir (kernels).

CC      ?= gcc
BUILD   ?= build
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifneq ($(V),1)
Q := @
endif
export CC

KERNELS := patched stock legacy debug

.PHONY: all deps kernels check check-series run clean
all:

deps:
	$(Q)scripts/deps

kernels: deps
	$(Q)for k in $(KERNELS); do kernel/build $$k >/dev/null || exit 1; done

-include lib/lib.mk
-include cli/cli.mk
-include install.mk
include tests/harness/harness.mk
include vm/vm.mk
-include tests/tests.mk
-include tests/race/race.mk
-include tests/fuzz/fuzz.mk
-include bench/bench.mk

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory kernels
	$(Q)tests/run

check-series: deps
	$(Q)kernel/check-series

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)vm/demo

clean:
	rm -rf $(BUILD)
