# tests/fuzz/fuzz.mk - the differential fuzzer (tests/fuzz/fuzz.c, model.c),
# and the libFuzzer targets of the command (make fuzz-targets, below).
#
#   make fuzz-bin      build build/tests/fuzz (static, so it runs in the guests)
#   make fuzz          the long run: FUZZ_CASES cases per filesystem on the
#                      debug kernel (lockdep + KASAN), raw vs model vs emulated
#   make fuzz FUZZ_SEED=... FUZZ_CASES=... FUZZ_KERNEL=patched|debug|PATH
#             FUZZ_SECONDS=T (stop each filesystem's run after T seconds)
#             FUZZ_FS="/tmp /mnt/ext4 /mnt/9p"
#             FUZZ_FIRST=F (run cases F .. F+FUZZ_CASES-1: a long run in
#             parts; disjoint ranges of one seed add up to one run)
#
#             FUZZ_JOBS=N (fuzzer processes per filesystem, default 2:
#             the guests have 2 vCPUs)
#
# Under TCG on the project's 2-core machine the debug kernel manages about
# 125-150 cases per second on tmpfs, 66 on ext4 and 7 on 9p (rates in
# tests/fuzz/README.md), so 10^6 cases take 2-2.5 hours on /tmp and far
# longer elsewhere; the run prints a progress line per job every 10 minutes
# and, at the end, how many cases it did.
#
# The short run that `make check` does is tests/suites/90-fuzz.

FUZZ_SEED    ?= 20261203
FUZZ_CASES   ?= 1000000
FUZZ_KERNEL  ?= debug
FUZZ_TIMEOUT ?= 36000
FUZZ_FS      ?= /tmp /mnt/ext4 /mnt/9p
FUZZ_SECONDS ?=
FUZZ_JOBS    ?= 2
FUZZ_FIRST   ?= 0

FUZZ_CFLAGS  = $(ALL_CFLAGS) -pthread -MMD -MP

.PHONY: fuzz fuzz-bin
all: fuzz-bin
fuzz-bin: $(BUILD)/tests/fuzz

$(BUILD)/tests/fuzz: tests/fuzz/fuzz.c tests/fuzz/model.c tests/fuzz/model.h \
		tests/helpers.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(FUZZ_CFLAGS) $(ALL_LDFLAGS) $(if $(filter 1,$(SAN)),,-static) -o $@ tests/fuzz/fuzz.c \
		tests/fuzz/model.c $(BUILD)/libocdir.a -pthread

# libFuzzer targets (clang's -fsanitize=fuzzer, Debian's libclang-rt-14-dev)
# over the command's own code, as the command links it: tests/fuzz/mode-fuzz.c
# (-m, cli/mode.c) and tests/fuzz/quote-fuzz.c (names in messages,
# cli/quote.c). Not part of `all`: tests/suites/90-fuzz builds and runs
# them (make fuzz-targets), or says why it cannot.
FUZZ_CLANG   ?= clang
LIBFUZZER_CFLAGS = $(OCDIR_CPPFLAGS) -Icli -std=c11 -Wall -Wextra -Werror -g -O1 \
		   -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

.PHONY: fuzz-targets
fuzz-targets: $(BUILD)/tests/fuzz-mode $(BUILD)/tests/fuzz-quote

$(BUILD)/tests/fuzz-mode: tests/fuzz/mode-fuzz.c cli/mode.c cli/mode.h
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(FUZZ_CLANG) $(LIBFUZZER_CFLAGS) -o $@ tests/fuzz/mode-fuzz.c cli/mode.c

$(BUILD)/tests/fuzz-quote: tests/fuzz/quote-fuzz.c cli/quote.c cli/quote.h
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(FUZZ_CLANG) $(LIBFUZZER_CFLAGS) -o $@ tests/fuzz/quote-fuzz.c cli/quote.c

# One guest, the three filesystems in turn; vm/run fails on any kernel report.
fuzz: fuzz-bin
	$(Q)vm/run --kernel $(FUZZ_KERNEL) --timeout $(FUZZ_TIMEOUT) -- sh -c '\
		echo 1 >/proc/sys/fs/protected_symlinks; rc=0; \
		for fs in $(FUZZ_FS); do \
			$(BUILD)/tests/fuzz --seed $(FUZZ_SEED) --cases $(FUZZ_CASES) \
				--dir $$fs --backends raw,model,emulated --max-reports 5 \
				--jobs $(FUZZ_JOBS) --first $(FUZZ_FIRST) \
				$(if $(FUZZ_SECONDS),--max-seconds $(FUZZ_SECONDS)) || rc=1; \
		done; exit $$rc'
