# cli/cli.mk - the ocdir command: build/ocdir, linked statically against
# build/libocdir.a (lib/lib.mk). Included by the top-level Makefile.
# Its version is OCDIR_VERSION_STRING of include/ocdir.h.

CLI_BIN       := $(BUILD)/ocdir
CLI_CFLAGS     = $(ALL_CFLAGS) -MMD -MP

.PHONY: cli
all: $(CLI_BIN)
cli: $(CLI_BIN)

# ocdir.c: options and messages; mode.c (-m) and quote.c (names in
# messages) are files of their own that the fuzz targets (tests/fuzz/)
# link as well.
CLI_OBJS      := $(BUILD)/cli/ocdir.o $(BUILD)/cli/mode.o $(BUILD)/cli/quote.o

$(BUILD)/cli/%.o: cli/%.c $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CLI_CFLAGS) -c -o $@ $<

$(CLI_BIN): $(CLI_OBJS) $(BUILD)/libocdir.a
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -pthread -o $@ $(CLI_OBJS) $(BUILD)/libocdir.a

-include $(CLI_OBJS:.o=.d)
