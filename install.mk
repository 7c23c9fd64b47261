# install.mk - make install / make uninstall, with PREFIX and DESTDIR.
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#   make uninstall PREFIX=/usr DESTDIR=/tmp/stage
#
# Installs the command, both libraries (libocdir.so.1 with its libocdir.so
# link, libocdir.a), include/ocdir.h, a pkg-config file generated for this
# PREFIX/LIBDIR, and the man pages. uninstall removes exactly those files.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL    ?= install
OCDIR_VERSION ?= 0.1.0

MAN_PAGES  := $(wildcard man/*.1 man/*.3 man/*.7)
PC_FILE    := $(BUILD)/ocdir.pc

.PHONY: install uninstall $(PC_FILE)
all: $(PC_FILE)

# Always regenerated: its content depends on PREFIX/LIBDIR, not on files.
$(PC_FILE):
	@mkdir -p $(@D)
	$(Q)printf '%s\n' \
		'prefix=$(PREFIX)' \
		'libdir=$(LIBDIR)' \
		'includedir=$(INCLUDEDIR)' \
		'' \
		'Name: ocdir' \
		'Description: race-free create-and-open of directories' \
		'Version: $(OCDIR_VERSION)' \
		'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -locdir' \
		'Libs.private: -pthread' >$@.tmp && mv $@.tmp $@

install: $(BUILD)/ocdir $(BUILD)/libocdir.so.1 $(BUILD)/libocdir.a $(PC_FILE)
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	$(Q)$(INSTALL) -m 755 $(BUILD)/ocdir $(DESTDIR)$(BINDIR)/ocdir
	$(Q)$(INSTALL) -m 755 $(BUILD)/libocdir.so.1 $(DESTDIR)$(LIBDIR)/libocdir.so.1
	$(Q)ln -sf libocdir.so.1 $(DESTDIR)$(LIBDIR)/libocdir.so
	$(Q)$(INSTALL) -m 644 $(BUILD)/libocdir.a $(DESTDIR)$(LIBDIR)/libocdir.a
	$(Q)$(INSTALL) -m 644 include/ocdir.h $(DESTDIR)$(INCLUDEDIR)/ocdir.h
	$(Q)$(INSTALL) -m 644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/ocdir.pc
	$(Q)for p in $(MAN_PAGES); do \
		s=$${p##*.}; \
		$(INSTALL) -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done

uninstall:
	$(Q)rm -f $(DESTDIR)$(BINDIR)/ocdir \
		$(DESTDIR)$(LIBDIR)/libocdir.so.1 $(DESTDIR)$(LIBDIR)/libocdir.so \
		$(DESTDIR)$(LIBDIR)/libocdir.a $(DESTDIR)$(INCLUDEDIR)/ocdir.h \
		$(DESTDIR)$(PKGCONFIGDIR)/ocdir.pc
	$(Q)for p in $(MAN_PAGES); do \
		s=$${p##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; \
	done
