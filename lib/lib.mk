# lib/lib.mk - libocdir: build/libocdir.so.1 (+ .so link) and build/libocdir.a.
# Included by the top-level Makefile; paths are relative to the repository.

LIB_SRCS    := $(wildcard lib/*.c)
LIB_OBJS    := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIB_PIC     := $(patsubst lib/%.c,$(BUILD)/lib/%.pic.o,$(LIB_SRCS))
LIB_SONAME  := libocdir.so.1
LIB_SO      := $(BUILD)/$(LIB_SONAME)
LIB_A       := $(BUILD)/libocdir.a
LIB_CFLAGS  := $(CFLAGS) -Iinclude -fvisibility=hidden -pthread -MMD -MP

.PHONY: lib
all: lib
lib: $(LIB_SO) $(BUILD)/libocdir.so $(LIB_A)

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/%.pic.o: lib/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(LIB_SO): $(LIB_PIC) lib/ocdir.map
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -pthread -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=lib/ocdir.map -o $@ $(LIB_PIC)

$(BUILD)/libocdir.so: $(LIB_SO)
	$(Q)ln -sf $(LIB_SONAME) $@

$(LIB_A): $(LIB_OBJS)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJS)

-include $(LIB_OBJS:.o=.d) $(LIB_PIC:.o=.d)
