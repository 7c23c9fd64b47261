# Programs of the harness's own tests (tests/suites/10-harness).
HARNESS_BIN := $(BUILD)/tests/creat_dir_probe

all: $(HARNESS_BIN)

$(BUILD)/tests/creat_dir_probe: tests/harness/creat_dir_probe.c tests/helpers.h $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<
