# SPDX-License-Identifier: GPL-2.0
#
# The Python package "bx" (python/, issue #30): pure Python over
# libbx.so.0 with ctypes, so installing it needs no compiler and no pip.
# Included by the top-level Makefile.
#
#   install-python  python/bx into $(DESTDIR)$(PYTHONDIR)/bx (PYTHONDIR
#                   defaults to $(PREFIX)/lib/python3/dist-packages:
#                   /usr/lib/python3/dist-packages with PREFIX=/usr, as
#                   Debian's python3 searches; with the default PREFIX,
#                   /usr/local/lib/python3/dist-packages, which it does
#                   not: add it to PYTHONPATH or pass PYTHONDIR)
#   python-check    the host tests (python/tests, without /dev/bx) with
#                   pytest against the libbx just built
#
# "make stage" puts the package and its tests under $(STAGE)/python
# (the guests' /opt/bx/python), where selftests/bx/python.sh runs them.

# Debian's interpreter: python3-pytest and python3-numpy are installed for
# it (a python3 earlier on PATH, pyenv's say, may lack them).
PYTHON	?= /usr/bin/python3
PREFIX	?= /usr/local
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
INSTALL	?= install

PY_SRCS := $(wildcard python/bx/*.py)
PY_TESTS := $(wildcard python/tests/*.py)
PY_EXAMPLES := $(wildcard python/examples/*.py)

# $(call py_install,DIR): the package's sources into DIR/bx.
py_install = $(INSTALL) -d $(1)/bx && $(INSTALL) -m 0644 $(PY_SRCS) $(1)/bx/

.PHONY: install-python python-check

install-python:
	$(call py_install,$(DESTDIR)$(PYTHONDIR))

python-check: $(LIBBX_SO)
	cd python && BX_LIBBX=$(LIBBX_SO) PYTHONDONTWRITEBYTECODE=1 \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests
