# Installing, GNU style; every target takes PREFIX (default /usr/local) and DESTDIR:
#   make install         the tool, the marker header, its pkg-config file, the man pages,
#                        the bash completion, the licenses
#   make install-strip   the same with the binary stripped
#   make uninstall       removes what install put there
#   make deb             build/leanprofiler_VERSION_ARCH.deb, of a PREFIX=/usr tree
# install depends on all only: a root `make install` after `make` rebuilds nothing.
PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
INCLUDEDIR = $(PREFIX)/include
DATADIR = $(PREFIX)/share
MANDIR = $(DATADIR)/man
DOCDIR = $(DATADIR)/doc/leanprofiler
# share/, not lib/: the file names a header and no library, so it is the same on every
# architecture; Debian's pkg-config searches /usr/share/pkgconfig and /usr/local/share/pkgconfig.
PKGCONFIGDIR = $(DATADIR)/pkgconfig
# bash-completion loads completions from here on first use: /usr/share/... directly,
# /usr/local/share/... through XDG_DATA_DIRS.
BASHCOMPDIR = $(DATADIR)/bash-completion/completions

INSTALL = install
INSTALL_PROGRAM = $(INSTALL) -m 755
INSTALL_DATA = $(INSTALL) -m 644

# man/ is written on its own; whatever pages it has are installed.
MAN1 := $(wildcard man/*.1)
MAN3 := $(wildcard man/*.3)
DOCS := LICENSE LICENSES/GPL-2.0
VERSION := $(shell sed -n 's/^\#define LP_VERSION "\([^"]*\)".*/\1/p' $(sort $(wildcard user/*.c user/*/*.c)) | head -n 1)
need_version = $(if $(VERSION),,$(error no LP_VERSION "X.Y.Z" defined in user/*.c: the versions of the package and of leanprofiler.pc come from it))

.PHONY: install install-strip uninstall deb FORCE

# Made again on every install: it holds PREFIX, which may differ from the last one.
$(OUT)/leanprofiler.pc: leanprofiler.pc.in FORCE
	$(need_version)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
		-e 's|@VERSION@|$(VERSION)|' $< > $@.tmp && mv $@.tmp $@

install: all $(OUT)/leanprofiler.pc
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR)/LICENSES \
		$(if $(MAN1),$(DESTDIR)$(MANDIR)/man1) $(if $(MAN3),$(DESTDIR)$(MANDIR)/man3)
	$(Q)$(INSTALL_PROGRAM) $(OUT)/leanprofiler $(DESTDIR)$(BINDIR)/leanprofiler
	$(Q)$(INSTALL_DATA) include/leanprofiler.h $(DESTDIR)$(INCLUDEDIR)/leanprofiler.h
	$(Q)$(INSTALL_DATA) $(OUT)/leanprofiler.pc $(DESTDIR)$(PKGCONFIGDIR)/leanprofiler.pc
	$(Q)$(INSTALL_DATA) completion/leanprofiler.bash $(DESTDIR)$(BASHCOMPDIR)/leanprofiler
	$(Q)$(INSTALL_DATA) LICENSE $(DESTDIR)$(DOCDIR)/LICENSE
	$(Q)$(INSTALL_DATA) LICENSES/GPL-2.0 $(DESTDIR)$(DOCDIR)/LICENSES/GPL-2.0
	$(if $(MAN1),$(Q)$(INSTALL_DATA) $(MAN1) $(DESTDIR)$(MANDIR)/man1/)
	$(if $(MAN3),$(Q)$(INSTALL_DATA) $(MAN3) $(DESTDIR)$(MANDIR)/man3/)

install-strip:
	$(Q)$(MAKE) --no-print-directory INSTALL_PROGRAM='$(INSTALL_PROGRAM) -s' install

# Directories that other packages share (bin, include, man1, ...) stay; the doc directory is ours.
uninstall:
	$(call msg,UNINST,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/leanprofiler $(DESTDIR)$(INCLUDEDIR)/leanprofiler.h \
		$(DESTDIR)$(PKGCONFIGDIR)/leanprofiler.pc $(DESTDIR)$(BASHCOMPDIR)/leanprofiler \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(DOCS)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3)))
	$(Q)for d in $(DESTDIR)$(DOCDIR)/LICENSES $(DESTDIR)$(DOCDIR); do \
		if [ -d "$$d" ]; then rmdir --ignore-fail-on-non-empty "$$d"; fi; done

# The tree installed with PREFIX=/usr, packed by scripts/build-deb.sh (dpkg-dev: the
# dependencies from dpkg-shlibdeps).
DEB_STAGE := $(OUT)/deb/debian/leanprofiler
deb: all
	$(need_version)
	$(Q)scripts/deps.sh deb
	$(Q)rm -rf $(OUT)/deb
	$(Q)$(MAKE) --no-print-directory install-strip PREFIX=/usr DESTDIR=$(abspath $(DEB_STAGE))
	$(Q)scripts/build-deb.sh $(OUT)/deb $(VERSION) $(OUT)
