# cli/cli.mk - the ocdir command: build/ocdir, linked statically against
# build/libocdir.a (lib/lib.mk). Included by the top-level Makefile.

OCDIR_VERSION ?= 0.1.0
CLI_BIN       := $(BUILD)/ocdir
CLI_CFLAGS    := $(CFLAGS) -Iinclude -DOCDIR_VERSION='"$(OCDIR_VERSION)"' -MMD -MP

.PHONY: cli
all: $(CLI_BIN)
cli: $(CLI_BIN)

$(BUILD)/cli/ocdir.o: cli/ocdir.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(CLI_CFLAGS) -c -o $@ $<

$(CLI_BIN): $(BUILD)/cli/ocdir.o $(BUILD)/libocdir.a
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -pthread -o $@ $(BUILD)/cli/ocdir.o $(BUILD)/libocdir.a

-include $(BUILD)/cli/ocdir.d
