# SPDX-License-Identifier: GPL-2.0
"""Paths, the one-line error, output and git helpers shared by the modules."""

import os
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, 'build')

# git in build/ runs with our identity and without the user's or the
# system's config: signing, hooks or templates there cannot break git am.
# No automatic gc: git commit would start a "git gc --auto" in the
# background (after an import's 80 000 loose objects) that outlives the
# run and holds locks the next run takes for stale.
GIT_ID = {'GIT_AUTHOR_NAME': 'mm-kunit', 'GIT_AUTHOR_EMAIL': 'mm-kunit@localhost',
	  'GIT_COMMITTER_NAME': 'mm-kunit', 'GIT_COMMITTER_EMAIL': 'mm-kunit@localhost',
	  'GIT_AUTHOR_DATE': '2026-01-01T00:00:00Z',
	  'GIT_COMMITTER_DATE': '2026-01-01T00:00:00Z',
	  'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1',
	  'GIT_CONFIG_COUNT': '1', 'GIT_CONFIG_KEY_0': 'gc.auto', 'GIT_CONFIG_VALUE_0': '0'}

# Exit codes of every command (docs/running.rst "Exit codes"); 3: the series could
# not be put on our base (it does not apply, or SERIES_BASE=strict and it
# names another base; thread.SeriesOutcome)
EXIT_PASS, EXIT_FAIL, EXIT_INFRA, EXIT_INTERRUPTED = 0, 1, 2, 130


class Error(Exception):
	"""A failure that gets one clear line and exit 2 (infrastructure)."""
	exit_code = 2


def stamp() -> str:
	return time.strftime('%H:%M:%S')


def info(msg: str) -> None:
	print(f'mmkunit: [{stamp()}] {msg}', flush=True)


def rel(path: str) -> str:
	"""@path relative to the repo when it is inside it."""
	r = os.path.relpath(path, REPO)
	return path if r.startswith('..') else r


def default_jobs() -> int:
	"""Build jobs: the CPUs this process may run on (taskset, cgroups)."""
	try:
		return len(os.sched_getaffinity(0)) or 1
	except (AttributeError, OSError):
		return os.cpu_count() or 2


def env_number(name: str, default: float) -> float:
	"""A number from the environment; empty means @default."""
	v = os.environ.get(name, '').strip()
	if not v:
		return default
	try:
		return float(v)
	except ValueError:
		raise Error(f'{name}={v!r} is not a number')


def sh(cmd: List[str], cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
       check: bool = True, capture: bool = False, timeout: Optional[float] = None
       ) -> subprocess.CompletedProcess:
	full_env = dict(os.environ)
	if env:
		full_env.update(env)
	try:
		return subprocess.run(cmd, cwd=cwd, env=full_env, check=check,
				      stdout=subprocess.PIPE if capture else None,
				      stderr=subprocess.STDOUT if capture else None,
				      text=True, timeout=timeout)
	except subprocess.TimeoutExpired:
		raise Error(f'{" ".join(cmd[:3])} timed out after {timeout:.0f} s')
	except subprocess.CalledProcessError as e:
		out = (e.stdout or '').strip().splitlines()[-20:]
		raise Error(f'{" ".join(cmd[:3])} failed (exit {e.returncode})' +
			    ('\n' + '\n'.join(out) if out else ''))


def count_line(counts: Dict[str, int]) -> str:
	"""The line every command ends with."""
	return f'{counts["passed"]} passed, {counts["failed"]} failed, {counts["skipped"]} skipped'


def eprint(msg: str) -> None:
	print(msg, file=sys.stderr, flush=True)


# Free space make test wants for build/: a fresh clone's run writes about
# 5.5 GB (sources, the tree, the series, nohooks and pristine kernels;
# README), ccache more; the environment's MMKUNIT_TEST_DISK_GB overrides it
TEST_DISK_GB = 8


def disk_warning(path: str = BUILD, need_gb: Optional[float] = None) -> str:
	"""A line saying that the file system of @path (or of its nearest
	existing parent) has less than @need_gb GB free, or ''."""
	if need_gb is None:
		need_gb = float(os.environ.get('MMKUNIT_TEST_DISK_GB') or TEST_DISK_GB)
	while not os.path.exists(path) and os.path.dirname(path) != path:
		path = os.path.dirname(path)
	free = shutil.disk_usage(path).free / 1e9
	if free >= need_gb:
		return ''
	return (f'only {free:.1f} GB free for {rel(path) if path.startswith(REPO) else path}: '
		f'a make test from a fresh clone writes about {need_gb:g} GB into build/; '
		'a full disk fails the stages with "No space left on device"')

