# bench/bench.mk - the benchmark of issue 7 (docs/performance.md).
#   make bench   build it, run it in the patched guest (tmpfs and ext4) and on
#                the host, and write bench/results/ (CSV, markdown, PNG chart)

BENCH_BIN := $(BUILD)/bench/ocdir_bench

all: $(BENCH_BIN)

$(BENCH_BIN): bench/ocdir_bench.c include/ocdir.h $(BUILD)/libocdir.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) -Iinclude -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -lpthread

.PHONY: bench
bench: deps $(BENCH_BIN)
	$(Q)bench/run
