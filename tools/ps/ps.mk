# Parameter server (issue #6): included by the top-level Makefile after
# TOOLS is defined; appends binaries built into $(O)/bin (staged into
# every guest).
