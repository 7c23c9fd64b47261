# tests/race/race.mk - the race torture program and `make torture`.
# Included by the top-level Makefile. The program links libocdir statically
# so that the QEMU guests (which see the host's filesystem) can run it.

RACE_BIN := $(BUILD)/race/race

.PHONY: race-bin torture
all: race-bin
race-bin: $(RACE_BIN)

$(RACE_BIN): tests/race/race.c tests/race/race.h tests/helpers.h include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -pthread

# 10^6 rounds per variant, arena and place by default: the emulated variants
# on the host, the native ones in the patched guest. TORTURE_ROUNDS,
# TORTURE_SECONDS (per variant, arena and place), TORTURE_JOBS (pairs),
# TORTURE_PLACES and TORTURE_KERNEL; see tests/race/torture, docs/security.md.
torture: race-bin hostile-bin hostile3-bin netfs-race-bin
	$(Q)tests/race/torture

-include tests/faults/faults.mk

# tests/race/hostile.c: the hostile-user attackers of issue 14 (one per
# finding). A short run is part of tests/suites/80-race, the long one of
# `make torture` (TORTURE_HOSTILE_*). `make hostile-old HOSTILE_OLD=DIR`
# builds the same program against another checkout's header and
# build/libocdir.a (e.g. a worktree of the release before the fixes), to show
# that every attacker can fail: build/race/hostile-old.
HOSTILE_BIN := $(BUILD)/race/hostile

.PHONY: hostile-bin hostile-old
all: hostile-bin
hostile-bin: $(HOSTILE_BIN)

$(HOSTILE_BIN): tests/race/hostile.c tests/race/race.h tests/helpers.h include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -pthread

hostile-old: tests/race/hostile.c tests/race/race.h tests/helpers.h
	@test -n "$(HOSTILE_OLD)" && test -f "$(HOSTILE_OLD)/build/libocdir.a" || \
		{ echo "make hostile-old HOSTILE_OLD=<checkout with build/libocdir.a>" >&2; exit 2; }
	@mkdir -p $(BUILD)/race
	$(Q)$(CC) -I$(HOSTILE_OLD)/include $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) \
		-o $(BUILD)/race/hostile-old $< $(HOSTILE_OLD)/build/libocdir.a -pthread

# tests/race/netfs_race.c: two clients of one NFS or SMB export race on a
# name (client A creates and opens, client B moves and plants); run in the
# 7.3 guests' own NFS and SMB mounts by tests/suites/80-race.
NETFS_RACE_BIN := $(BUILD)/race/netfs_race

.PHONY: netfs-race-bin
all: netfs-race-bin
netfs-race-bin: $(NETFS_RACE_BIN)

$(NETFS_RACE_BIN): tests/race/netfs_race.c tests/race/race.h tests/helpers.h include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a

# tests/race/hostile3.c: the attackers of issue 39 (a retried handle, a
# directory from before the call taken for staging, a given-away directory
# left at its name). Linked with a mkdirat wrapper (the deterministic
# exchange). `make hostile3-old HOSTILE_OLD=DIR` builds it against another
# checkout's build/libocdir.a, as hostile-old does.
HOSTILE3_BIN := $(BUILD)/race/hostile3
HOSTILE3_LINK := -Wl,--wrap=mkdirat

.PHONY: hostile3-bin hostile3-old
all: hostile3-bin
hostile3-bin: $(HOSTILE3_BIN)

$(HOSTILE3_BIN): tests/race/hostile3.c tests/race/race.h tests/helpers.h include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) $(HOSTILE3_LINK) -o $@ $< $(BUILD)/libocdir.a -pthread

hostile3-old: tests/race/hostile3.c tests/race/race.h tests/helpers.h
	@test -n "$(HOSTILE_OLD)" && test -f "$(HOSTILE_OLD)/build/libocdir.a" || \
		{ echo "make hostile3-old HOSTILE_OLD=<checkout with build/libocdir.a>" >&2; exit 2; }
	@mkdir -p $(BUILD)/race
	$(Q)$(CC) -I$(HOSTILE_OLD)/include $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) $(HOSTILE3_LINK) \
		-o $(BUILD)/race/hostile3-old $< $(HOSTILE_OLD)/build/libocdir.a -pthread

# tests/race/round3/: the attackers of the round on issue 39's paths by
# someone who had not written the code; tests/race/round3/run runs them.
ROUND3_PROGS := discard_enoent takeback_foreign public_exchange same_tick noread_parent
ROUND3_BINS := $(addprefix $(BUILD)/race/round3/,$(ROUND3_PROGS))

.PHONY: round3-bin
all: round3-bin
round3-bin: $(ROUND3_BINS)

$(BUILD)/race/round3/%: tests/race/round3/%.c include/ocdir.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) $(if $(filter same_tick,$*),$(HOSTILE3_LINK)) \
		-o $@ $< $(BUILD)/libocdir.a -pthread
