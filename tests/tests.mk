# tests/tests.mk - the host-side test programs of libocdir.
# Linked statically against build/libocdir.a so that they also run in the
# guests (which see the host's filesystem) without an installed library.

TEST_CFLAGS := $(CFLAGS) -Iinclude -Ilib -pthread -MMD -MP
TEST_LIBS   := $(BUILD)/libocdir.a -pthread

TEST_PROGS  := $(BUILD)/tests/conformance \
	       $(BUILD)/tests/lib-resolver \
	       $(BUILD)/tests/lib-probe-threads \
	       $(BUILD)/tests/lib-api \
	       $(BUILD)/tests/lib-attack

.PHONY: tests-bin
all: tests-bin
tests-bin: $(TEST_PROGS)

$(BUILD)/tests/conformance: tests/conformance/conformance.c tests/conformance/cases.h \
		tests/helpers.h $(BUILD)/libocdir.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_LIBS)

$(BUILD)/tests/lib-%: tests/lib/%.c tests/helpers.h $(BUILD)/libocdir.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_LIBS)
