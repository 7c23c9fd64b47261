# lib/lib.mk - libocdir: build/libocdir.so.MAJOR.MINOR.PATCH (real name, with
# the links libocdir.so.MAJOR = the soname, and libocdir.so) and
# build/libocdir.a. Included by the top-level Makefile; paths are relative
# to the repository; the version comes from include/ocdir.h (Makefile).
#
# Only the ocdir_* calls are exported, from both libraries: the shared one
# through lib/ocdir.map; the static one is one relocatable object whose
# hidden (internal oc_*) symbols are made local by objcopy. The test programs
# that call internal functions link $(LIB_INTERNAL_A), the objects as built.

LIB_SRCS    := $(wildcard lib/*.c)
LIB_OBJS    := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIB_PIC     := $(patsubst lib/%.c,$(BUILD)/lib/%.pic.o,$(LIB_SRCS))
LIB_SONAME  := libocdir.so.$(OCDIR_VERSION_MAJOR)
LIB_REALNAME := libocdir.so.$(OCDIR_VERSION)
LIB_REAL    := $(BUILD)/$(LIB_REALNAME)
LIB_SO      := $(BUILD)/$(LIB_SONAME)
LIB_A       := $(BUILD)/libocdir.a
LIB_INTERNAL_A := $(BUILD)/lib/libocdir-internal.a
LIB_CFLAGS   = $(ALL_CFLAGS) -fvisibility=hidden -pthread -MMD -MP

.PHONY: lib
all: lib
lib: $(LIB_REAL) $(LIB_SO) $(BUILD)/libocdir.so $(LIB_A)

# The library with the fd-identity test hook (lib/internal.h), for the
# bindings' tests: $(BUILD)/test-hooks/libocdir.so.1. Not part of `all`.
.PHONY: test-hooks
test-hooks:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/test-hooks TEST_HOOKS=1 lib

$(BUILD)/lib/%.o: lib/%.c $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/%.pic.o: lib/%.c $(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(LIB_REAL): $(LIB_PIC) lib/ocdir.map
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -shared -pthread -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=lib/ocdir.map -o $@ $(LIB_PIC)

$(LIB_SO): $(LIB_REAL)
	$(Q)ln -sf $(LIB_REALNAME) $@

$(BUILD)/libocdir.so: $(LIB_SO)
	$(Q)ln -sf $(LIB_SONAME) $@

# One object for the whole library, its internal symbols local. With LTO
# (-flto in CFLAGS or LDFLAGS) the objects hold compiler IR: the partial
# link must turn it into machine code first, or objcopy localizes
# nothing in the IR's own symbol table (the oc_* calls stayed global) and
# breaks the references of its early debug info (-g: "undefined reference
# to 'ocdir.c.<hash>'" when the command links). So the partial link gets
# the compiler flags (the driver loads the LTO plugin: clang's then emits
# machine code) and, for gcc, -flinker-output=nolto-rel, without which
# gcc -r writes IR again; the compiler is asked whether it knows that
# option (clang does not) only when LTO is on.
LIB_LTO_LDFLAGS = $(filter -flto%,$(ALL_CFLAGS) $(ALL_LDFLAGS))
LIB_NOLTO_REL   = $(if $(LIB_LTO_LDFLAGS),$(shell $(CC) -flinker-output=nolto-rel -E -x c \
			/dev/null >/dev/null 2>&1 && echo -flinker-output=nolto-rel))
$(BUILD)/lib/libocdir.o: $(LIB_OBJS)
	$(if $(Q),@echo "  LD -r   $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_LTO_LDFLAGS) $(LIB_NOLTO_REL) -r -nostdlib -o $@.tmp $(LIB_OBJS)
	$(Q)$(OBJCOPY) --localize-hidden $@.tmp $@ && rm -f $@.tmp

$(LIB_A): $(BUILD)/lib/libocdir.o
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rc $@ $< && $(RANLIB) $@

$(LIB_INTERNAL_A): $(LIB_OBJS)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rc $@ $(LIB_OBJS) && $(RANLIB) $@

-include $(LIB_OBJS:.o=.d) $(LIB_PIC:.o=.d)
