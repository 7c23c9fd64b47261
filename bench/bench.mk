# bench/bench.mk - the benchmark of issue 7 (docs/performance.md).
#   make bench           build it, run it in the patched guest (tmpfs and ext4)
#                        and on the host, and write bench/results/ (CSV,
#                        markdown, PNG chart)
#   make bench-profile   where the time of mkdirat and of the native call goes:
#                        perf and ftrace in a guest booted with the `profile`
#                        kernel -> bench/results/profile/

BENCH_BIN := $(BUILD)/bench/ocdir_bench
PROFILE_LOOP := $(BUILD)/bench/profile_loop

all: $(BENCH_BIN) $(PROFILE_LOOP)

$(BENCH_BIN): bench/ocdir_bench.c include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -lpthread

$(PROFILE_LOOP): bench/profile_loop.c $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) -o $@ $< -lpthread

.PHONY: bench bench-profile
bench: deps $(BENCH_BIN)
	$(Q)bench/run

bench-profile: deps $(PROFILE_LOOP)
	$(Q)bench/profile
