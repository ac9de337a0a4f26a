# SPDX-License-Identifier: GPL-2.0
#
# mm-kunit: KUnit suites and microbenchmarks for three mm series on Linux 7.3.
# See README.md.  Everything built goes under build/ (git-ignored).
#
#   make run          assemble 7.3 + patches/series + suites, build, run
#   make test         host tests, checkpatch, suites on the series and on pristine 7.3
#   make test-debug   the same suites under KASAN, lockdep, DEBUG_VM, PROVE_RCU
#   make install KDIR=/path/to/linux   add the suites to your tree (uninstall: take them out)
#   make docs         build docs/ with Sphinx into build/docs
#
# Variables: KDIR=/path/to/linux-7.3 (your tree instead of Debian's source),
# LINUX_TARBALL=/path/linux-7.3.tar.xz, SUITE='lazyfree_thp*' (a kunit.py
# filter glob), VARIANT=series|pristine|upto:N, TIMEOUT=<guest seconds>,
# JOBS=<n>.

PYTHON  ?= python3
MMKUNIT := $(PYTHON) $(CURDIR)/scripts/mmkunit.py
VARIANT ?= series
SUITE   ?=
TIMEOUT ?= 0
JOBS    ?= 0
export KDIR LINUX_TARBALL

RUNOPTS := --timeout=$(TIMEOUT) --jobs=$(JOBS)

.PHONY: all deps run run-debug test test-debug test-host tree clean distclean help \
	install uninstall docs

all: run

help:
	@sed -n '2,13p' Makefile

deps:
	@$(MMKUNIT) deps

tree: deps
	@$(MMKUNIT) assemble $(VARIANT)

run: deps
	@$(MMKUNIT) run $(RUNOPTS) $(VARIANT) $(SUITE)

run-debug: deps
	@$(MMKUNIT) run --debug $(RUNOPTS) $(VARIANT) $(SUITE)

test: deps
	@$(MMKUNIT) test $(RUNOPTS)

test-debug: deps
	@$(MMKUNIT) test --debug $(RUNOPTS)

test-host:
	@$(PYTHON) -m unittest discover -s scripts/tests -t . -v

install uninstall:
	$(if $(KDIR),,$(error KDIR is required: make $@ KDIR=/path/to/your/linux-7.3))
	@$(PYTHON) $(CURDIR)/scripts/install.py $@ "$(KDIR)"

docs:
	@command -v sphinx-build >/dev/null || { echo "make docs: sphinx-build not found;" \
		"install Debian's python3-sphinx (apt-get install python3-sphinx)" >&2; exit 2; }
	@sphinx-build -W --keep-going -b html docs build/docs
	@echo "docs: $(CURDIR)/build/docs/index.html"

clean:
	rm -rf build/out build/tree build/tree.key

distclean:
	rm -rf build
