# bxctl (issue #5): included by the top-level Makefile after TOOLS is
# defined; appends $(O)/bin/bxctl to TOOLS.
