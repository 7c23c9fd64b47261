# The program vm/demo runs in each guest (`make run`).
all: $(BUILD)/vm/demo_calls

$(BUILD)/vm/demo_calls: vm/demo_calls.c include/ocdir.h tests/helpers.h $(BUILD)/libocdir.a \
		$(OCDIR_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libocdir.a -lpthread
