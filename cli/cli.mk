# cli/cli.mk - the ocdir command: build/ocdir, linked statically against
# build/libocdir.a (lib/lib.mk). Included by the top-level Makefile.
# Its version is OCDIR_VERSION_STRING of include/ocdir.h.

CLI_BIN       := $(BUILD)/ocdir
CLI_CFLAGS     = $(ALL_CFLAGS) -MMD -MP

.PHONY: cli
all: $(CLI_BIN)
cli: $(CLI_BIN)

$(BUILD)/cli/ocdir.o: cli/ocdir.c $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CLI_CFLAGS) -c -o $@ $<

$(CLI_BIN): $(BUILD)/cli/ocdir.o $(BUILD)/libocdir.a
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -pthread -o $@ $(BUILD)/cli/ocdir.o $(BUILD)/libocdir.a

-include $(BUILD)/cli/ocdir.d
