# SPDX-License-Identifier: GPL-2.0
#
# The Python package "bx" (python/, issue #30): pure Python over
# libbx.so.0 with ctypes, so installing it needs no compiler and no pip.
# Included by the top-level Makefile.
#
#   install-python  python/bx (with py.typed) and bx-VERSION.dist-info
#                   into $(DESTDIR)$(PYTHONDIR). PYTHONDIR is where
#                   $(PYTHON), Debian's /usr/bin/python3, looks for the
#                   prefix: /usr/lib/python3/dist-packages with
#                   PREFIX=/usr, $(PREFIX)/lib/python3.N/dist-packages
#                   otherwise (/usr/local/lib/python3.11/dist-packages on
#                   Debian 12: its python3 does not search
#                   /usr/local/lib/python3/dist-packages)
#   python-check    the host tests (python/tests, without /dev/bx) with
#                   pytest against the libbx just built; check.sh's unit
#                   tier runs them (tools/testing/unit/python_test.sh)
#
# "make stage" puts the package and its tests under $(STAGE)/python
# (the guests' /opt/bx/python), where selftests/bx/python.sh runs them.

# Debian's interpreter: python3-pytest and python3-numpy are installed for
# it (a python3 earlier on PATH, pyenv's say, may lack them).
PYTHON	?= /usr/bin/python3
PREFIX	?= /usr/local
PY_VER	:= $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)
PYTHONDIR ?= $(if $(filter /usr /usr/,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VER)/dist-packages)
INSTALL	?= install

PY_SRCS := $(wildcard python/bx/*.py) python/bx/py.typed
PY_TESTS := $(wildcard python/tests/*.py)
PY_EXAMPLES := $(wildcard python/examples/*.py)

# $(call py_install,DIR): the package's sources into DIR/bx.
py_install = $(INSTALL) -d $(1)/bx && $(INSTALL) -m 0644 $(PY_SRCS) $(1)/bx/

.PHONY: install-python python-check

# PY_INSTALLER: what the dist-info's INSTALLER names (debian/rules: debian).
PY_INSTALLER ?= make

install-python:
	$(call py_install,$(DESTDIR)$(PYTHONDIR))
	$(PYTHON) python/mkdistinfo.py $(DESTDIR)$(PYTHONDIR) $(PY_INSTALLER)

python-check: $(LIBBX_SO)
	cd python && BX_LIBBX=$(LIBBX_SO) PYTHONDONTWRITEBYTECODE=1 \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests
