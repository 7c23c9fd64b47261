# tests/race/race.mk - the race torture program and `make torture`.
# Included by the top-level Makefile. The program links libocdir statically
# so that the QEMU guests (which see the host's filesystem) can run it.

RACE_BIN := $(BUILD)/race/race

.PHONY: race-bin torture
all: race-bin
race-bin: $(RACE_BIN)

$(RACE_BIN): tests/race/race.c tests/helpers.h include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -pthread

# 10^6 rounds per variant, arena and place by default: the emulated variants
# on the host, the native ones in the patched guest. TORTURE_ROUNDS,
# TORTURE_SECONDS (per variant, arena and place), TORTURE_JOBS (pairs),
# TORTURE_PLACES and TORTURE_KERNEL; see tests/race/torture, docs/security.md.
torture: race-bin
	$(Q)tests/race/torture

-include tests/faults/faults.mk
