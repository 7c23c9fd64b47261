# tests/faults/faults.mk - the fault-case program (included by tests/race/race.mk).
# Linked dynamically against libc on purpose: it interposes malloc/calloc/
# realloc (libc's strdup() included) to fail the library's allocations.

FAULTS_BIN := $(BUILD)/faults/faults

.PHONY: faults-bin
all: faults-bin
faults-bin: $(FAULTS_BIN)

$(FAULTS_BIN): tests/faults/faults.c tests/helpers.h include/ocdir.h $(BUILD)/libocdir.a \
		$(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -pthread $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -pthread
