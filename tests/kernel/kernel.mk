# Programs that check the kernel series from userspace beyond its own
# selftests (tests/kernel/selftests).
KERNEL_TEST_BIN := $(BUILD)/tests/audit_calls

all: $(KERNEL_TEST_BIN)

$(BUILD)/tests/audit_calls: tests/kernel/audit_calls.c tests/helpers.h $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<
