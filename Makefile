# SPDX-License-Identifier: GPL-2.0
#
# mm-kunit: KUnit suites and microbenchmarks for three mm series on Linux 7.3.
# See README.md.  Everything built goes under build/ (git-ignored).
#
#   make run          assemble 7.3 + patches/series + suites, build, run
#   make test         host tests, checkpatch, suites on the series and on pristine 7.3
#   make test-debug   the same suites under KASAN, lockdep, DEBUG_VM, PROVE_RCU
#   make run-kcsan    the suites (SUITE=) under KCSAN, which excludes KASAN
#   make install KDIR=/path/to/linux   add the suites to your tree (uninstall: take them out)
#   make docs         build docs/ with Sphinx into build/docs
#   make bench        the *_benchmark suites on VARIANT, in-boot comparisons
#   make bench-compare A=before:shmem-batch B=series   two kernels alternately
#   make bench-matrix the *_benchmark suites at each prefix of the series: the step each patch causes
#   make bench-matrix-merge   one report from bench-matrix shards' JSON (SHARDS='a.json b.json')
#   make series-check every prefix of patches/series: build, run, matrix
#   make series-check-merge   one matrix from series-check shards' JSON (SHARDS='a.json b.json')
#   make modules-run  the tristate suites as modules, loaded in the guest
#   make selftests    the kernel's mm selftests on VARIANT's kernel under QEMU
#   make selftests-compare A=pristine B=series   the same selftests, what got worse
#   make mutate       mutants of each patch's lines, built and run: which ones no case
#                     kills (PATCH=, BUDGET=<min>, SHARD=i/N, SEED=, SUITE=,
#                     MODE=schemata|each, MUTANTS_PER_BOOT=8, GUESTS=2, FRESH=1, ALT=a,b|none:
#                     the variants run with them, MUTANTS=glob,..., RACE_READS=25000:
#                     reads of a lockless_read_race case in race boots, REACH=suite: every
#                     case of the suites that reach a mutant, not only its own, EQUIVALENT=check:
#                     run the mutants listed in patches/mutants-equivalent too; docs/mutate.rst)
#   make mutate-merge one report from the shards' JSON (SHARDS='a.json b.json')
#   make repeat       boot the series kernel RUNS=10 times, LOAD=2 (jobs of a kernel
#                     build beside it), RACES=1 (the race suites too): which cases flake
#   make variants     the suites on each alternative of patches/variants/ (ALT=a,b;
#                     SUITE=): a case that fails on one is pinned (exit 1)
#
# Variables: KDIR=/path/to/linux-7.3 (your tree instead of Debian's source;
# KDIR_DEPTH=N: only N commits of a git KDIR's history),
# LINUX_TARBALL=/path/linux-7.3.tar.xz, SUITE='lazyfree_thp*' (a kunit.py
# filter glob), VARIANT=series|pristine|asis|upto:N|before:GROUP|upto:GROUP|alt:NAME
# (asis: KDIR as it is; alt:NAME: the series + patches/variants/NAME.patch), SERIES=path/to/series.mbx (a b4 am mbox or a whole
# lore thread, instead of patches/series; SERIES_BASE=strict refuses one
# whose base-commit: is not ours), APPLIED=lazyfree-thp,... (the groups asis or SERIES=
# carries; none; without it expected-before is off),
# TIMEOUT=<guest seconds>, JOBS=<n>, BOOTS=<n> (bench), REF='bench=... key=...'
# (bench-compare: ratios to an in-boot reference), FROM=/TO= (series-check,
# bench-matrix), STEPS=0,1,20,23 (bench-matrix: only these prefixes),
# SHARD=i/N (mutate, series-check, bench-matrix: the i-th of N deterministic
# slices, for N machines; the *-merge targets combine them; docs/mutate.rst
# "Across machines: shards and merge"),
# THRESHOLD=<%> (bench-matrix: mark larger steps, default 1),
# SLOW=1 (run, run-debug: also the KUNIT_CASE_SLOW cases, e.g.
# make run SLOW=1 SUITE=lockless_read_race), ONLY='cow,thp' (selftests: test
# names or categories of tools/testing/selftests/mm-kunit/tests), SMP=<n>
# (selftests: the guest's vCPUs, default 2; results in <dir>-smp<n>), REUSE=1
# (selftests-compare: take a side's results from its last make selftests),
# FORCE=1 (reassemble build/tree over local changes), NO_WAIT=1 (refuse
# instead of waiting when another run holds build/), BUILD_TIMEOUT=<s>
# (kernel build limit, default 3600), MMKUNIT_HEARTBEAT=<s> (progress line
# during a silent build, default 60), DISTCC_HOSTS=... (compile ccache's
# misses on those distcc hosts), ARCH=arm64 (run, test, bench and the
# bench-* commands cross-built and booted on arm64 under QEMU; default
# x86_64; docs/arm64.rst).
#
# Exit codes of scripts/mmkunit.py and selftests.py: 0 pass, 1 a test
# failed, 2 the run could not be done, 3 the series does not apply (or
# names another base with SERIES_BASE=strict), 130 interrupted.  make itself exits
# 2 on any of them and names the code ("Error 1"); .ci/run exits with it.

PYTHON  ?= python3
MMKUNIT := $(PYTHON) $(CURDIR)/scripts/mmkunit.py
VARIANT ?= series
SUITE   ?=
TIMEOUT ?= 0
JOBS    ?= 0
export KDIR LINUX_TARBALL SERIES APPLIED HOOKS KDIR_DEPTH FORCE NO_WAIT BUILD_TIMEOUT MMKUNIT_HEARTBEAT \
	SERIES_BASE MMKUNIT_KCIDB_ORIGIN MMKUNIT_KCIDB_URL DISTCC_HOSTS
# ARCH=arm64: the guest architecture of run, test, bench (docs/arm64.rst)
export MMKUNIT_ARCH = $(ARCH)

RUNOPTS := --timeout=$(TIMEOUT) --jobs=$(JOBS)
BOOTS   ?=
ONLY    ?=
SELFTESTS := $(PYTHON) $(CURDIR)/scripts/selftests.py
STOPTS  := $(if $(filter-out 0,$(JOBS)),--jobs=$(JOBS)) $(if $(filter-out 0,$(TIMEOUT)),--timeout=$(TIMEOUT)) $(if $(ONLY),--only='$(ONLY)') $(if $(SMP),--smp=$(SMP))
FROM    ?=
TO      ?=

.PHONY: variants ci-local repeat all deps run run-debug run-kcsan test test-debug test-host tree clean distclean help \
	bench bench-compare bench-matrix bench-matrix-merge series-check series-check-merge \
	modules-run install uninstall docs selftests selftests-compare mutate mutate-merge

all: run

help:
	@sed -n '2,/^$$/p' Makefile

deps:
	@$(MMKUNIT) deps

tree: deps
	@$(MMKUNIT) assemble $(VARIANT)

run: deps
	@$(MMKUNIT) run $(RUNOPTS) $(if $(SLOW),--slow) $(VARIANT) $(SUITE)

run-debug: deps
	@$(MMKUNIT) run --debug $(RUNOPTS) $(if $(SLOW),--slow) $(VARIANT) $(SUITE)

run-kcsan: deps
	@$(MMKUNIT) run --kcsan $(RUNOPTS) $(if $(SLOW),--slow) $(VARIANT) $(SUITE)

test: deps
	@$(MMKUNIT) test $(RUNOPTS)

test-debug: deps
	@$(MMKUNIT) test --debug $(RUNOPTS)

test-host:
	@env -u ARCH -u MMKUNIT_ARCH $(PYTHON) -m unittest discover -s scripts/tests -t . -v

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

bench: deps
	@$(MMKUNIT) bench $(RUNOPTS) $(if $(BOOTS),--boots=$(BOOTS)) $(if $(SUITE),--filter_glob='$(SUITE)') $(VARIANT)

bench-compare: deps
	@test -n "$(A)" -a -n "$(B)" || { echo "make bench-compare: A=<kernel> B=<kernel> are required (e.g. A=before:shmem-batch B=series)" >&2; exit 2; }
	@$(MMKUNIT) bench-compare $(RUNOPTS) $(if $(BOOTS),--boots=$(BOOTS)) $(if $(SUITE),--filter_glob='$(SUITE)') $(if $(REF),--ref='$(REF)') $(A) $(B)

bench-matrix: deps
	@$(MMKUNIT) bench-matrix $(RUNOPTS) $(if $(BOOTS),--boots=$(BOOTS)) $(if $(SUITE),--filter_glob='$(SUITE)') $(if $(FROM),--from=$(FROM)) $(if $(TO),--to=$(TO)) $(if $(STEPS),--steps=$(STEPS)) $(if $(THRESHOLD),--threshold=$(THRESHOLD)) $(if $(SHARD),--shard=$(SHARD))

bench-matrix-merge:
	@$(MMKUNIT) bench-matrix-merge $(SHARDS)

series-check: deps
	@$(MMKUNIT) series-check $(RUNOPTS) $(if $(FROM),--from=$(FROM)) $(if $(TO),--to=$(TO)) $(if $(SHARD),--shard=$(SHARD))

series-check-merge:
	@$(MMKUNIT) series-check-merge $(SHARDS)

modules-run: deps
	@$(MMKUNIT) modules-run $(RUNOPTS)

selftests: deps
	@$(SELFTESTS) run $(STOPTS) $(VARIANT)

selftests-compare: deps
	@test -n "$(A)" -a -n "$(B)" || { echo "make selftests-compare: A=<kernel> B=<kernel> are required (e.g. A=pristine B=series)" >&2; exit 2; }
	@$(SELFTESTS) compare $(STOPTS) $(if $(REUSE),--reuse) $(A) $(B)

repeat: deps
	@$(MMKUNIT) repeat $(RUNOPTS) --runs=$(or $(RUNS),10) $(if $(filter-out 0,$(LOAD)),--load=$(LOAD)) $(if $(RACES),--races) $(if $(SUITE),'$(SUITE)')

variants: deps
	@$(MMKUNIT) variants $(RUNOPTS) $(if $(ALT),--only='$(ALT)') $(if $(SLOW),--slow) $(if $(SUITE),'$(SUITE)')

mutate: deps
	@$(MMKUNIT) mutate $(if $(filter-out 0,$(JOBS)),--jobs=$(JOBS)) $(if $(filter-out 0,$(TIMEOUT)),--timeout=$(TIMEOUT)) $(if $(PATCH),--patch='$(PATCH)') $(if $(BUDGET),--budget=$(BUDGET)) $(if $(SHARD),--shard=$(SHARD)) $(if $(SEED),--seed=$(SEED)) --mode=$(or $(MODE),schemata) $(if $(filter-out 0,$(FRESH)),--fresh) --per-boot=$(or $(MUTANTS_PER_BOOT),8) --guests=$(or $(GUESTS),2) $(if $(ALT),--alt='$(ALT)') $(if $(MUTANTS),--only='$(MUTANTS)') $(if $(RACE_READS),--race-reads=$(RACE_READS)) $(if $(REACH),--reach=$(REACH)) $(if $(EQUIVALENT),--equivalent=$(EQUIVALENT)) $(if $(SUITE),--filter_glob='$(SUITE)')

# GitLab CI's pipeline (.gitlab-ci.yml) on this machine, jobs in a shell:
# make ci-local CI_LOCAL_ARGS='--variable RUN=mutate --variable PATCH=lazyfree-thp'
# gitlab-ci-local goes to build/node (npm, Node.js >= 20; 4.65 is the last
# release that runs on Node 20)
CI_LOCAL_VERSION ?= 4.65.0
CI_LOCAL := build/node/node_modules/.bin/gitlab-ci-local
$(CI_LOCAL):
	@command -v npm >/dev/null || { echo "make ci-local: needs npm and Node.js >= 20" >&2; exit 2; }
	npm install --silent --prefix build/node gitlab-ci-local@$(CI_LOCAL_VERSION)

ci-local: $(CI_LOCAL)
	$(CI_LOCAL) --shell-executor-no-image $(CI_LOCAL_ARGS)

mutate-merge:
	@$(MMKUNIT) mutate-merge $(SHARDS)
