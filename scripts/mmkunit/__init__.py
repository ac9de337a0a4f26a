# SPDX-License-Identifier: GPL-2.0
"""mmkunit: the runner behind the Makefile, in modules along kunit_tool's
lines (tools/testing/kunit/):

  common   paths, errors, git/subprocess helpers shared by all
  tree     the kernel tree: source, base commit, series, overlay, hooks
  proc     one process-group runner (timeouts, heartbeat, signals)
  lock     the lock on build/ that every command touching it holds
  kernel   kunit.py config/build/exec and the one QEMU command builder
  judge    kunit's results -> verdicts (expected-before, splats, stops)
  report   the count line, summary.json, junit.xml, the series matrix
  deps     host packages
  stages   one variant assembled, built, booted and judged; host tests,
	   checkpatch
  cli      the subcommands (scripts/mmkunit.py is the entry point)

Nothing is imported here, so that install.py can take the tree module
alone.
"""
