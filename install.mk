# install.mk - make install / make uninstall, with PREFIX and DESTDIR; make dist.
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#   make uninstall PREFIX=/usr DESTDIR=/tmp/stage
#   make dist            build/ocdir-VERSION.tar.gz
#
# Installs the command, both libraries (libocdir.so.MAJOR.MINOR.PATCH with
# its links libocdir.so.MAJOR, the soname, and libocdir.so; libocdir.a),
# include/ocdir.h, a pkg-config file generated for this PREFIX/LIBDIR, the
# man pages, the bash completion of the command and the bindings (the
# Python module in PYTHONDIR, the Go package in GOSRCDIR, the Rust crate
# in CARGOREGDIR/ocdir-VERSION and ocdir-sys-VERSION). uninstall removes exactly those files.
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
# The bindings (bindings/README.md), where each ecosystem looks: the Python
# module where python3 finds it (Debian: /usr/lib/python3/dist-packages for
# PREFIX=/usr, PREFIX/lib/python3.X/dist-packages otherwise), the Go
# package and the Rust crate as source, where Debian keeps them
# (/usr/share/gocode/src, /usr/share/cargo/registry).
PYTHON3    ?= python3
python_version = $(shell $(PYTHON3) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR  ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(or $(python_version),3)/dist-packages)
# The Go package's import path is ocdir.invalid/ocdir (bindings/go/README.md).
GOSRCROOT  ?= $(PREFIX)/share/gocode/src
GOSRCDIR   ?= $(GOSRCROOT)/ocdir.invalid/ocdir
CARGOREGDIR ?= $(PREFIX)/share/cargo/registry
RUST_CRATE_DIR = $(CARGOREGDIR)/ocdir-$(OCDIR_VERSION)
RUST_SYS_DIR = $(CARGOREGDIR)/ocdir-sys-$(OCDIR_VERSION)
GO_FILES   := bindings/go/go.mod bindings/go/ocdir.go bindings/go/setup.go bindings/go/nocgo.go
RUST_FILES := Cargo.toml build.rs src/lib.rs

MAN_PAGES  := $(wildcard man/*.1 man/*.3 man/*.7)
PC_FILE    := $(BUILD)/ocdir.pc
# For building against this checkout's library, not installed: with
# PKG_CONFIG_PATH=$(BUILD), pkg-config prefers ocdir-uninstalled.pc to
# ocdir.pc. The bindings' tests link with it (tests/suites/45-bindings);
# its rpath lets their programs find build/libocdir.so.1 at run time.
PC_UNINSTALLED := $(BUILD)/ocdir-uninstalled.pc

.PHONY: install uninstall dist $(PC_FILE) $(PC_UNINSTALLED)
all: $(PC_FILE) $(PC_UNINSTALLED)

$(PC_UNINSTALLED):
	@mkdir -p $(@D)
	$(Q)printf '%s\n' \
		'libdir=$(abspath $(BUILD))' \
		'includedir=$(abspath include)' \
		'' \
		'Name: ocdir' \
		'Description: race-free create-and-open of directories (uninstalled, $(abspath .))' \
		'Version: $(OCDIR_VERSION)' \
		'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -locdir' \
		'Libs.private: -pthread' >$@.tmp && mv $@.tmp $@

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
	$(Q)$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/ocdir $(DESTDIR)$(GOSRCDIR) \
		$(DESTDIR)$(RUST_CRATE_DIR)/src $(DESTDIR)$(RUST_SYS_DIR)/src
	$(Q)$(INSTALL) -m 644 bindings/python/ocdir/__init__.py bindings/python/ocdir/py.typed $(DESTDIR)$(PYTHONDIR)/ocdir/
	$(Q)$(INSTALL) -m 644 $(GO_FILES) $(DESTDIR)$(GOSRCDIR)/
	$(Q)for c in ocdir:$(RUST_CRATE_DIR) ocdir-sys:$(RUST_SYS_DIR); do \
		src=bindings/rust/$${c%%:*} dst=$(DESTDIR)$${c#*:}; \
		$(INSTALL) -m 644 $$src/build.rs $$dst/ && \
		$(INSTALL) -m 644 $$src/src/lib.rs $$dst/src/ && \
		sed 's/, path = "[^"]*"//' $$src/Cargo.toml >$$dst/Cargo.toml && \
		printf '%s\n' '{"files":{},"package":""}' >$$dst/.cargo-checksum.json || exit 1; \
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
	$(Q)rm -f $(DESTDIR)$(PYTHONDIR)/ocdir/__init__.py $(DESTDIR)$(PYTHONDIR)/ocdir/py.typed $(addprefix $(DESTDIR)$(GOSRCDIR)/,$(notdir $(GO_FILES))) \
		$(addprefix $(DESTDIR)$(RUST_CRATE_DIR)/,$(RUST_FILES) .cargo-checksum.json) \
		$(addprefix $(DESTDIR)$(RUST_SYS_DIR)/,$(RUST_FILES) .cargo-checksum.json)
	$(Q)rm -rf $(DESTDIR)$(PYTHONDIR)/ocdir/__pycache__
	$(Q)rmdir $(DESTDIR)$(PYTHONDIR)/ocdir $(DESTDIR)$(GOSRCDIR) $(DESTDIR)$(GOSRCROOT)/ocdir.invalid $(DESTDIR)$(RUST_CRATE_DIR)/src $(DESTDIR)$(RUST_CRATE_DIR) \
		$(DESTDIR)$(RUST_SYS_DIR)/src $(DESTDIR)$(RUST_SYS_DIR) 2>/dev/null || true

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
