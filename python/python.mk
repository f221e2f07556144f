# The Python module (python/, docs/markers.md "Python"): `make python` builds it for
# PYTHON (default Debian's /usr/bin/python3; `make python PYTHON=/path/to/python3` for
# another CPython 3.8+) into build/python/, importable with PYTHONPATH=build/python.
# `make install` installs it into the prefix's site-packages (PYTHON_SITEDIR) when PYTHON
# has its headers (Debian: python3-dev); `pip install ./python` builds it with setuptools.
PYTHON ?= /usr/bin/python3
PY_OUT := $(OUT)/python
# Asked of PYTHON once per make run, and only when a Python target is made.
PY_INCLUDE = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT_SUFFIX = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_NATIVE = $(PY_OUT)/leanprofiler/_native$(PY_EXT_SUFFIX)
PYTHON_SITEDIR = $(shell $(PYTHON) python/sitedir.py $(PREFIX) 2>/dev/null)

.PHONY: python python-check install-python uninstall-python

python-check:
	$(Q)if [ ! -x "$(PYTHON)" ]; then echo "make python: no Python at $(PYTHON): install python3 (scripts/deps.sh test) or set PYTHON=" >&2; exit 1; fi
	$(Q)if [ ! -f "$(PY_INCLUDE)/Python.h" ]; then echo "make python: no Python.h for $(PYTHON): install python3-dev (scripts/deps.sh test)" >&2; exit 1; fi

python: python-check $(PY_NATIVE) $(PY_OUT)/leanprofiler/__init__.py

# The suffix is PYTHON's (.cpython-311-x86_64-linux-gnu.so): known once PYTHON is asked.
$(PY_OUT)/leanprofiler/_native%: python/leanprofiler/_native.c include/leanprofiler.h | python-check
	$(call msg,PY-EXT,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -I$(PY_INCLUDE) -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
		-Wno-missing-field-initializers -fPIC -shared -fvisibility=hidden $< -o $@.tmp && mv $@.tmp $@

$(PY_OUT)/leanprofiler/__init__.py: python/leanprofiler/__init__.py
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

install-python: python
	$(call msg,INSTALL,$(DESTDIR)$(PYTHON_SITEDIR)/leanprofiler)
	$(Q)if [ -z "$(PYTHON_SITEDIR)" ]; then echo "make install: cannot tell $(PYTHON)'s site-packages under $(PREFIX): set PYTHON_SITEDIR=" >&2; exit 1; fi
	$(Q)$(INSTALL) -d $(DESTDIR)$(PYTHON_SITEDIR)/leanprofiler
	$(Q)$(INSTALL_DATA) $(PY_OUT)/leanprofiler/__init__.py $(DESTDIR)$(PYTHON_SITEDIR)/leanprofiler/__init__.py
	$(Q)$(INSTALL_DATA) $(PY_NATIVE) $(DESTDIR)$(PYTHON_SITEDIR)/leanprofiler/

uninstall-python:
	$(Q)if [ -n "$(PYTHON_SITEDIR)" ]; then rm -rf $(DESTDIR)$(PYTHON_SITEDIR)/leanprofiler; fi

# Built by `make` and installed by `make install` wherever PYTHON has its headers (so a
# root `make install` after `make` builds nothing); `make python` says what is missing.
# Not into make deb's tree: a Python module belongs in a python3-* package of its own,
# depending on python3 (lintian refuses it in one that does not).
ifneq ($(wildcard $(PY_INCLUDE)/Python.h),)
all: python
ifneq ($(DESTDIR),$(abspath $(DEB_STAGE)))
install: install-python
uninstall: uninstall-python
endif
endif

# tests/integration/test_python records programs importing the module as make builds it.
check-build: python
