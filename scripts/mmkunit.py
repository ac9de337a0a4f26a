#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mmkunit: assemble Linux 7.3 + our series + the suites, build, run, report.

The entry point the Makefile calls; the code is in scripts/mmkunit/
(see its __init__.py).  Exit codes: 0 pass, 1 a test failed, 2 the run
could not be done, 130 interrupted."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mmkunit.cli import main  # noqa: E402

if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
