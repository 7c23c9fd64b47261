# tests/tests.mk - the host-side test programs of libocdir.
# Linked statically against build/libocdir.a so that they also run in the
# guests (which see the host's filesystem) without an installed library.

TEST_CFLAGS  = $(ALL_CFLAGS) -Ilib -pthread -MMD -MP
TEST_LIBS   := $(BUILD)/libocdir.a -pthread

TEST_PROGS  := $(BUILD)/tests/conformance \
	       $(BUILD)/tests/lib-resolver \
	       $(BUILD)/tests/lib-probe-threads \
	       $(BUILD)/tests/lib-api \
	       $(BUILD)/tests/lib-attack

.PHONY: tests-bin
all: tests-bin
tests-bin: $(TEST_PROGS) $(BUILD)/tests/conformance.tsv $(BUILD)/tests/calls.tsv

# The case table of cases.h as data, for the bindings' conformance tests
# (bindings/README.md): written by the C program that runs the same table.
$(BUILD)/tests/conformance.tsv: $(BUILD)/tests/conformance
	$(if $(Q),@echo "  GEN     $@")
	$(Q)$< --print-table >$@.tmp && mv $@.tmp $@

# ... and the calls table of calls.h (mkdir, mkpath, setup, prepare).
$(BUILD)/tests/calls.tsv: $(BUILD)/tests/conformance
	$(if $(Q),@echo "  GEN     $@")
	$(Q)$< --print-calls >$@.tmp && mv $@.tmp $@

$(BUILD)/tests/conformance: tests/conformance/conformance.c tests/conformance/cases.h \
		tests/conformance/calls.h \
		tests/helpers.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

$(BUILD)/tests/lib-%: tests/lib/%.c tests/helpers.h $(BUILD)/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

# The resolver's test calls the library's internal oc_resolver_open(), which
# the installed libocdir.a keeps local: it links the objects as built.
$(BUILD)/tests/lib-resolver: tests/lib/resolver.c tests/helpers.h $(LIB_INTERNAL_A) $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_INTERNAL_A) -pthread

# The fd-identity hook's own test, linked with the test-hooks library
# (make test-hooks), not with the release one: tests/suites/45-bindings.
.PHONY: test-hooks-bin
test-hooks-bin: $(BUILD)/tests/lib-hook
$(BUILD)/test-hooks/libocdir.a: FORCE
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/test-hooks TEST_HOOKS=1 lib

$(BUILD)/tests/lib-hook: tests/lib/hook.c tests/helpers.h $(BUILD)/test-hooks/libocdir.a $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/test-hooks/libocdir.a -pthread
