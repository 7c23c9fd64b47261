# install.mk - make install / make uninstall, with PREFIX and DESTDIR; make dist.
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#   make uninstall PREFIX=/usr DESTDIR=/tmp/stage
#   make dist            build/ocdir-VERSION.tar.gz
#
# Installs the command, both libraries (libocdir.so.MAJOR.MINOR.PATCH with
# its links libocdir.so.MAJOR, the soname, and libocdir.so; libocdir.a),
# include/ocdir.h, a pkg-config file generated for this PREFIX/LIBDIR, the
# man pages and the bash completion of the command. uninstall removes
# exactly those files.
#
# Installing to the live system (DESTDIR empty) runs ldconfig afterwards, as
# root, so that programs find libocdir.so.MAJOR in LIBDIR when LIBDIR is one
# of the dynamic linker's directories (/usr/local/lib and /usr/lib are, on
# Debian). LDCONFIG=true skips it. A staged install (DESTDIR set) leaves that
# to the package manager.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR  ?= $(PREFIX)/share/bash-completion/completions
INSTALL    ?= install
LDCONFIG   ?= ldconfig

MAN_PAGES  := $(wildcard man/*.1 man/*.3 man/*.7)
PC_FILE    := $(BUILD)/ocdir.pc

.PHONY: install uninstall dist $(PC_FILE)
all: $(PC_FILE)

# Always regenerated: its content depends on PREFIX/LIBDIR, not on files.
# libdir and includedir are written relative to ${prefix} when they lie
# under PREFIX (pkg-config --define-prefix and relocated trees need that).
$(PC_FILE):
	@mkdir -p $(@D)
	$(Q)printf '%s\n' \
		'prefix=$(PREFIX)' \
		'libdir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))' \
		'includedir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))' \
		'' \
		'Name: ocdir' \
		'Description: race-free create-and-open of directories' \
		'Version: $(OCDIR_VERSION)' \
		'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -locdir' \
		'Libs.private: -pthread' >$@.tmp && mv $@.tmp $@

install: $(BUILD)/ocdir $(LIB_REAL) $(BUILD)/libocdir.a $(PC_FILE)
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	$(Q)$(INSTALL) -m 755 $(BUILD)/ocdir $(DESTDIR)$(BINDIR)/ocdir
	$(Q)$(INSTALL) -m 755 $(LIB_REAL) $(DESTDIR)$(LIBDIR)/$(LIB_REALNAME)
	$(Q)ln -sf $(LIB_REALNAME) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libocdir.so
	$(Q)$(INSTALL) -m 644 $(BUILD)/libocdir.a $(DESTDIR)$(LIBDIR)/libocdir.a
	$(Q)$(INSTALL) -m 644 include/ocdir.h $(DESTDIR)$(INCLUDEDIR)/ocdir.h
	$(Q)$(INSTALL) -m 644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/ocdir.pc
	$(Q)$(INSTALL) -m 644 cli/ocdir.bash-completion $(DESTDIR)$(BASHCOMPDIR)/ocdir
	$(Q)for p in $(MAN_PAGES); do \
		s=$${p##*.}; \
		$(INSTALL) -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done
ifeq ($(DESTDIR),)
	$(Q)if [ "$$(id -u)" -eq 0 ]; then \
		$(LDCONFIG) || echo "make install: $(LDCONFIG) failed; programs may not find $(LIB_SONAME)" >&2; \
	else \
		echo "make install: not root, ldconfig not run: run it as root, or set LD_LIBRARY_PATH=$(LIBDIR)" >&2; \
	fi
endif

uninstall:
	$(Q)rm -f $(DESTDIR)$(BINDIR)/ocdir \
		$(DESTDIR)$(LIBDIR)/$(LIB_REALNAME) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
		$(DESTDIR)$(LIBDIR)/libocdir.so \
		$(DESTDIR)$(LIBDIR)/libocdir.a $(DESTDIR)$(INCLUDEDIR)/ocdir.h \
		$(DESTDIR)$(PKGCONFIGDIR)/ocdir.pc $(DESTDIR)$(BASHCOMPDIR)/ocdir
	$(Q)for p in $(MAN_PAGES); do \
		s=$${p##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; \
	done

# make dist: build/ocdir-VERSION.tar.gz, the source tree under ocdir-VERSION/.
# In a git checkout: the files git knows of (tracked, or new and not
# ignored), as they are in the work tree, so tag and commit first for a
# release; elsewhere (an extracted tarball): every file but $(BUILD)/.
# Never a build tree: $(BUILD)/, nor any other top folder with a .flags
# stamp (a `make BUILD=dir` tree, ignored or not).
# Reproducible: sorted, owner 0, mtime of the last commit (or
# SOURCE_DATE_EPOCH). Its own `make && make check-host` passes.
DIST_NAME  := ocdir-$(OCDIR_VERSION)
DIST_TAR   := $(BUILD)/$(DIST_NAME).tar.gz

dist:
	@mkdir -p $(BUILD)
	$(Q)set -e; list=$(BUILD)/$(DIST_NAME).files; \
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files --cached --others --exclude-standard; \
	else \
		find . -path ./$(BUILD) -prune -o -path ./.git -prune -o \
			\( -type f -o -type l \) -printf '%P\n'; \
	fi | while IFS= read -r f; do \
		case $$f in $(BUILD)/*) continue;; esac; \
		top=$${f%%/*}; \
		if [ "$$top" != "$$f" ] && [ -f "$$top/.flags" ]; then continue; fi; \
		if [ -e "$$f" ] || [ -L "$$f" ]; then printf '%s\n' "$$f"; fi; \
	done | LC_ALL=C sort -u >$$list; \
	epoch=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)}; \
	tar --verbatim-files-from -T $$list --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime=@$$epoch --transform 's,^,$(DIST_NAME)/,S' \
		-cf - | gzip -n -9 >$(DIST_TAR).tmp; \
	mv $(DIST_TAR).tmp $(DIST_TAR); rm -f $$list
	@echo "$(DIST_TAR)"
