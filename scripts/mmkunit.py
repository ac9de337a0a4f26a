#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mmkunit: assemble Linux 7.3 + our series + the suites, build, run, report.

Subcommands (the Makefile calls them; see README.md):
  deps                       check / install the host packages
  assemble VARIANT           build/tree = base + VARIANT's patches + overlay
  run VARIANT [--debug]      kunit.py config/build/exec on that tree
  test                       host tests, checkpatch, series, races, pristine; one summary line

VARIANT is "series" (all of patches/series) or "pristine" (none of it).
"""

import argparse
import hashlib
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import time
import unittest
from typing import Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, 'build')

# Files of ours copied into the kernel tree, relative to the repo root.
OVERLAY_DIRS = ['mm/tests', 'fs/tests', 'tools/testing/kunit/configs',
		'tools/testing/kunit/qemu_configs']
QEMU_CONFIG = 'tools/testing/kunit/qemu_configs/x86_64_mm.py'
DEBUG_KUNITCONFIG = 'tools/testing/kunit/configs/mm_debug.config'
# kunitconfigs of the functional suites, relative to the tree.
# The KUNIT_CASE_SLOW race suite that make test runs in a boot of its own
RACE_GLOB = 'lockless_read_race'
SUITE_KUNITCONFIGS = ['mm/tests/.kunitconfig', 'fs/tests/.kunitconfig']

GIT_ID = {'GIT_AUTHOR_NAME': 'mm-kunit', 'GIT_AUTHOR_EMAIL': 'mm-kunit@localhost',
	  'GIT_COMMITTER_NAME': 'mm-kunit', 'GIT_COMMITTER_EMAIL': 'mm-kunit@localhost',
	  'GIT_AUTHOR_DATE': '2026-01-01T00:00:00Z',
	  'GIT_COMMITTER_DATE': '2026-01-01T00:00:00Z'}

# Guest log lines that fail a run whatever the KTAP says.
SPLAT_RE = re.compile(
	r'(BUG: |WARNING: |Oops|Kernel panic|kernel BUG at|'
	r'KASAN: |UBSAN: |KFENCE: |'
	r'possible circular locking|possible recursive locking|'
	r'inconsistent lock state|suspicious RCU usage|'
	r'bad unlock balance|held when returning to user space|'
	r'INFO: task .* blocked for more than|'
	r'rcu: INFO: .* stall|self-detected stall|detected stalls on CPUs|'
	r'Call Trace:)')
# Lines that match SPLAT_RE but are not splats.
SPLAT_IGNORE_RE = re.compile(r'^\s*(#|KTAP version|(not )?ok \d)')


class Error(Exception):
	"""A failure that gets one clear line and a non-zero exit."""


def info(msg: str) -> None:
	print(f'mmkunit: {msg}', flush=True)


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
	except subprocess.CalledProcessError as e:
		out = (e.stdout or '').strip().splitlines()[-20:]
		raise Error(f'{" ".join(cmd[:3])} failed (exit {e.returncode})' +
			    ('\n' + '\n'.join(out) if out else ''))


# ---------------------------------------------------------------- deps

# command or header -> Debian package
DEPS = [('gcc', 'gcc'), ('make', 'make'), ('flex', 'flex'), ('bison', 'bison'),
	('bc', 'bc'), ('cpio', 'cpio'), ('perl', 'perl'), ('git', 'git'),
	('ccache', 'ccache'), ('qemu-system-x86_64', 'qemu-system-x86'),
	('rsync', 'rsync'), ('xz', 'xz-utils'), ('dpkg-deb', 'dpkg'),
	('/usr/include/gelf.h', 'libelf-dev'),
	('/usr/include/openssl/opensslv.h', 'libssl-dev'),
	('/usr/share/qemu/qboot.rom', 'qemu-system-data'),
	('/usr/share/keyrings/debian-archive-keyring.gpg', 'debian-archive-keyring'),
	# benchreport.py's plots and make docs
	('/usr/lib/python3/dist-packages/matplotlib/__init__.py', 'python3-matplotlib'),
	('sphinx-build', 'python3-sphinx'),
	# make modules-run: the initramfs that loads the suites as modules
	('/bin/busybox', 'busybox-static'),
	# make selftests: the mm selftests linked statically, their ext4 disk
	('/usr/lib/x86_64-linux-gnu/libnuma.a', 'libnuma-dev'),
	('/usr/lib/x86_64-linux-gnu/libcap.a', 'libcap-dev'),
	('/usr/lib/x86_64-linux-gnu/liburing.a', 'liburing-dev'),
	('/sbin/mkfs.ext4', 'e2fsprogs')]


def missing_packages(deps=DEPS, which=shutil.which, exists=os.path.exists) -> List[str]:
	missing = []
	for what, pkg in deps:
		ok = exists(what) if what.startswith('/') else which(what) is not None
		if not ok and pkg not in missing:
			missing.append(pkg)
	return missing


def cmd_deps(_args) -> int:
	missing = missing_packages()
	if not missing:
		return 0
	cmd = ['apt-get', 'install', '-y', '--no-install-recommends'] + missing
	if (os.geteuid() != 0 or shutil.which('apt-get') is None or
	    os.environ.get('MMKUNIT_NO_INSTALL')):
		raise Error('missing packages; run: sudo ' + ' '.join(cmd))
	info('installing ' + ' '.join(missing))
	env = {'DEBIAN_FRONTEND': 'noninteractive'}
	r = sh(['apt-get', 'install', '-y', '--no-install-recommends'] + missing,
	       env=env, check=False, capture=True)
	if r.returncode != 0:
		# The package lists may be stale on a new machine.
		sh(['apt-get', 'update'], env=env, capture=True, check=False)
		sh(cmd, env=env, capture=True)
	still = missing_packages()
	if still:
		raise Error('still missing after apt-get: ' + ' '.join(still))
	return 0


# ---------------------------------------------------------------- source

def kernel_version(tree: str) -> Optional[Tuple[int, int]]:
	"""(VERSION, PATCHLEVEL) of a kernel tree, None if it is not one."""
	mk = os.path.join(tree, 'Makefile')
	if not (os.path.isfile(mk) and os.path.isdir(os.path.join(tree, 'mm')) and
		os.path.isfile(os.path.join(tree, 'tools/testing/kunit/kunit.py'))):
		return None
	v = {}
	with open(mk, errors='replace') as f:
		for line in f.readlines()[:10]:
			m = re.match(r'^(VERSION|PATCHLEVEL)\s*=\s*(\d+)', line)
			if m:
				v[m.group(1)] = int(m.group(2))
	if 'VERSION' not in v or 'PATCHLEVEL' not in v:
		return None
	return v['VERSION'], v['PATCHLEVEL']


def tree_state(tree: str) -> str:
	"""A cheap fingerprint of a user's tree, to know when to re-import it.

	A git tree: HEAD plus its uncommitted changes.  Anything else: the
	number of files and the newest mtime.
	"""
	if os.path.isdir(os.path.join(tree, '.git')):
		head = sh(['git', '-C', tree, 'rev-parse', 'HEAD'], capture=True,
			  check=False).stdout.strip()
		diff = subprocess.run(['git', '-C', tree, 'diff', 'HEAD'],
				      stdout=subprocess.PIPE, check=False).stdout
		return head + ':' + hashlib.sha256(diff).hexdigest()[:16]
	count, newest = 0, 0
	for root, dirs, files in os.walk(tree):
		dirs[:] = [d for d in dirs if d != '.git']
		for n in files:
			try:
				st = os.lstat(os.path.join(root, n))
			except OSError:
				continue
			count += 1
			newest = max(newest, st.st_mtime_ns)
	return f'{count}:{newest}'


def source_tree() -> Tuple[str, str, bool]:
	"""Return (path, identity, is_user_tree) of the base kernel source."""
	kdir = os.environ.get('KDIR', '')
	if kdir:
		kdir = os.path.abspath(kdir)
		ver = kernel_version(kdir)
		if ver is None:
			raise Error(f'KDIR={kdir} is not a kernel tree '
				    '(no Makefile with VERSION/PATCHLEVEL, mm/ and tools/testing/kunit)')
		if ver != (7, 3):
			info(f'warning: KDIR is Linux {ver[0]}.{ver[1]}, the series is against 7.3')
		return kdir, f'kdir:{kdir}:{tree_state(kdir)}', True
	env = {}
	tarball = os.environ.get('LINUX_TARBALL', '')
	if tarball:
		tarball = os.path.abspath(tarball)
		if not os.path.isfile(tarball):
			raise Error(f'LINUX_TARBALL={tarball} does not exist')
		env['LINUX_TARBALL'] = tarball
		# A different tarball must not reuse the Debian unpack.
		srcdir = os.path.join(BUILD, 'src-tarball')
		if os.path.exists(os.path.join(srcdir, 'tarball')):
			with open(os.path.join(srcdir, 'tarball')) as f:
				if f.read() != tarball:
					shutil.rmtree(srcdir)
		os.makedirs(srcdir, exist_ok=True)
		with open(os.path.join(srcdir, 'tarball'), 'w') as f:
			f.write(tarball)
	else:
		srcdir = BUILD
	r = subprocess.run([os.path.join(REPO, 'scripts/fetch-linux.sh'), srcdir],
			   env=dict(os.environ, **env), stdout=subprocess.PIPE, text=True)
	if r.returncode != 0:
		raise Error('could not get the Linux 7.3 source (see the line above)')
	path = r.stdout.strip().splitlines()[-1]
	if kernel_version(path) is None:
		raise Error(f'{path} is not a kernel tree')
	with open(os.path.join(path, 'Makefile')) as f:
		head = ''.join(f.readlines()[:6])
	ident = ('tarball:' + tarball if tarball else 'debian:') + \
		hashlib.sha256(head.encode()).hexdigest()[:16]
	return path, ident, False


# ---------------------------------------------------------------- assembly

def git(args: List[str], git_dir: str, work: Optional[str] = None, **kw):
	env = dict(GIT_ID, GIT_DIR=git_dir)
	if work:
		env['GIT_WORK_TREE'] = work
	return sh(['git'] + args, cwd=work, env=env, **kw)


# Bump when the way a source is imported changes: cached bases are redone.
IMPORT_VERSION = 2


def base_commit() -> str:
	"""Import the base source as one commit in build/linux.git (cached)."""
	src, ident, user_tree = source_tree()
	gd = os.path.join(BUILD, 'linux.git')
	idfile = os.path.join(gd, 'mmkunit-source')
	ident = f'{IMPORT_VERSION}:{ident}'
	if os.path.isfile(idfile):
		with open(idfile) as f:
			if f.read() == ident:
				r = git(['rev-parse', 'refs/heads/base'], gd, capture=True, check=False)
				if r.returncode == 0:
					return r.stdout.strip()
	info(f'importing {src} as the base commit (once per source)')
	if not os.path.isdir(gd):
		sh(['git', 'init', '-q', '--bare', gd])
	index = os.path.join(gd, 'import-index')
	if os.path.exists(index):
		os.unlink(index)
	env = dict(GIT_ID, GIT_DIR=gd, GIT_WORK_TREE=src, GIT_INDEX_FILE=index)
	if user_tree and os.path.isdir(os.path.join(src, '.git')):
		# A git tree: the files it tracks, as they are in its work tree
		# (uncommitted changes included, build output left out).
		files = subprocess.run(['git', '-C', src, 'ls-files', '-z'], check=True,
				       stdout=subprocess.PIPE).stdout
		full_env = dict(os.environ, **env)
		subprocess.run(['git', 'add', '-f', '--pathspec-from-file=-',
				'--pathspec-file-nul'], cwd=src, env=full_env,
			       input=files, check=True)
	else:
		# A tarball or a plain directory: every file.  (Debian's
		# tarball carries a .gitignore that ignores its whole top
		# level, so ignore rules cannot be used here.)
		if user_tree and (os.path.exists(os.path.join(src, '.config')) or
				  os.path.isdir(os.path.join(src, 'include/config'))):
			raise Error(f'KDIR={src} has been built in-tree (.config); '
				    'run "make mrproper" there or pass a clean tree')
		sh(['git', 'add', '-A', '-f', '.'], cwd=src, env=env)
	tree = sh(['git', 'write-tree'], cwd=src, env=env, capture=True).stdout.strip()
	commit = sh(['git', 'commit-tree', tree, '-m', f'base: {ident}'], cwd=src,
		    env=env, capture=True).stdout.strip()
	git(['update-ref', 'refs/heads/base', commit], gd)
	os.unlink(index)
	with open(idfile, 'w') as f:
		f.write(ident)
	return commit


def read_series(path: Optional[str] = None) -> List[str]:
	"""Patch paths (relative to patches/) in apply order; '#' comments."""
	path = path or os.path.join(REPO, 'patches', 'series')
	out = []
	with open(path) as f:
		for line in f:
			line = line.split('#', 1)[0].strip()
			if line:
				out.append(line)
	return out


def overlay_files() -> List[str]:
	files = []
	for d in OVERLAY_DIRS:
		top = os.path.join(REPO, d)
		for root, _dirs, names in os.walk(top):
			for n in sorted(names):
				if n.endswith(('.pyc', '~')) or '__pycache__' in root:
					continue
				files.append(os.path.relpath(os.path.join(root, n), REPO))
	return sorted(files)


# Hooks that make a kernel tree build our suites; each is (file, line,
# anchor): the line is added once, before the last anchor line (or at the
# end when anchor is None).
HOOKS = [('mm/Kconfig', 'source "mm/tests/Kconfig"', 'endmenu'),
	 ('mm/Makefile', 'obj-y += tests/', None),
	 ('fs/Kconfig', 'source "fs/tests/Kconfig"', 'endmenu'),
	 ('fs/Makefile', 'obj-y += tests/', None)]


def apply_hooks(tree: str, hooks=HOOKS) -> List[str]:
	"""Idempotently add the Kconfig/Makefile hooks; return what changed."""
	changed = []
	for rel, line, anchor in hooks:
		path = os.path.join(tree, rel)
		with open(path) as f:
			lines = f.read().splitlines()
		if line in (l.strip() for l in lines):
			continue
		pos = len(lines)
		if anchor:
			for i in range(len(lines) - 1, -1, -1):
				if lines[i].strip() == anchor:
					pos = i
					break
		lines[pos:pos] = [line, ''] if anchor else ['', line]
		with open(path, 'w') as f:
			f.write('\n'.join(lines) + '\n')
		changed.append(rel)
	return changed


def variant_patches(variant: str) -> List[str]:
	series = read_series()
	if variant == 'pristine':
		return []
	if variant == 'series':
		return series
	# "upto:N" = the first N patches (per-patch validation)
	m = re.match(r'^upto:(\d+)$', variant)
	if m:
		return series[:int(m.group(1))]
	# "before:GROUP" / "upto:GROUP" = the series without / through a group
	m = re.match(r'^(before|upto):([a-z0-9-]+)$', variant)
	if m:
		idx = [i for i, p in enumerate(series) if group_of(p) == m.group(2)]
		if not idx:
			raise Error(f'{variant}: no patch of group {m.group(2)!r} in patches/series')
		return series[:idx[0]] if m.group(1) == 'before' else series[:idx[-1] + 1]
	raise Error(f'unknown variant {variant!r} (series, pristine, upto:N, '
		    'before:GROUP, upto:GROUP)')


def variant_key(base: str, patches: List[str]) -> str:
	h = hashlib.sha256(base.encode())
	for p in patches:
		h.update(p.encode())
		with open(os.path.join(REPO, 'patches', p), 'rb') as f:
			h.update(f.read())
	for rel in overlay_files():
		h.update(rel.encode())
		with open(os.path.join(REPO, rel), 'rb') as f:
			h.update(f.read())
	h.update(repr(HOOKS).encode())
	return h.hexdigest()


# All variants share one worktree.  Compiles run in build/out/<variant>
# with source paths relative to it (../../tree/...), so every variant and
# every clone of the repo sends ccache the same command lines: switching
# variants rewrites only the files that differ and recompiles them from the
# cache.
TREE = os.path.join(BUILD, 'tree')


def assemble(variant: str) -> str:
	"""Make build/tree = base + the variant's patches + overlay; return its path."""
	patches = variant_patches(variant)
	for p in patches:
		if not os.path.isfile(os.path.join(REPO, 'patches', p)):
			raise Error(f'patches/series names {p}, which does not exist')
	base = base_commit()
	gd = os.path.join(BUILD, 'linux.git')
	tree = TREE
	key = variant_key(base, patches)
	keyfile = tree + '.key'
	if os.path.isdir(tree) and os.path.isfile(keyfile):
		with open(keyfile) as f:
			same = f.read() == key
		dirty = sh(['git', 'status', '--porcelain', '--untracked-files=no'],
			   cwd=tree, capture=True, check=False).stdout.strip()
		if same and not dirty:
			return tree
	if os.path.exists(keyfile):
		os.unlink(keyfile)
	if not os.path.isdir(os.path.join(tree, '.git')) and not os.path.isfile(os.path.join(tree, '.git')):
		if os.path.exists(tree):
			shutil.rmtree(tree)
		git(['worktree', 'prune'], gd)
		info(f'creating tree {os.path.relpath(tree, REPO)}')
		git(['worktree', 'add', '-q', '--detach', tree, base], gd, capture=True)
	env = dict(GIT_ID)
	# Only files that differ are rewritten, so unchanged objects stay built.
	sh(['git', 'am', '--abort'], cwd=tree, env=env, check=False, capture=True)
	sh(['git', 'checkout', '-q', '-f', '--detach', base], cwd=tree, env=env, capture=True)
	sh(['git', 'clean', '-q', '-fdx'], cwd=tree, env=env, capture=True)
	for i, p in enumerate(patches, 1):
		r = sh(['git', 'am', '-q', '--3way', os.path.join(REPO, 'patches', p)],
		       cwd=tree, env=env, check=False, capture=True)
		if r.returncode != 0:
			sh(['git', 'am', '--abort'], cwd=tree, env=env, check=False, capture=True)
			# Show where it does not apply: the hunks and the context
			# git looked for, against the tree with patches 1..i-1.
			why = sh(['git', 'apply', '--check', '--verbose',
				  os.path.join(REPO, 'patches', p)],
				 cwd=tree, check=False, capture=True).stdout
			print(why.rstrip()[:4000], file=sys.stderr)
			base_desc = 'the base' if i == 1 else f'the base + patches 1-{i - 1}'
			raise Error(f'patch {i}/{len(patches)} patches/{p} does not apply '
				    f'to {base_desc}')
	for rel in overlay_files():
		dst = os.path.join(tree, rel)
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		shutil.copy2(os.path.join(REPO, rel), dst)
	apply_hooks(tree)
	sh(['git', 'add', '-A', '-f'] + OVERLAY_DIRS + [h[0] for h in HOOKS], cwd=tree, env=env)
	sh(['git', 'commit', '-q', '--allow-empty', '-m', 'mm-kunit: suites overlay'],
	   cwd=tree, env=env, capture=True)
	with open(keyfile, 'w') as f:
		f.write(key)
	return tree


# ---------------------------------------------------------------- results

def count_json(node: dict) -> Dict[str, str]:
	"""Flatten a kunit.py --json tree to {suite.case[.param]: status}."""
	out: Dict[str, str] = {}

	def walk(n, prefix):
		for g in n.get('sub_groups', []):
			walk(g, prefix + [g['name']])
		for c in n.get('test_cases', []):
			out['.'.join(prefix + [c['name']])] = c['status']
	walk(node, [])
	return out


def strip_console_prefix(line: str) -> str:
	"""A guest log line without its newline and printk time "[  1.23] "."""
	return re.sub(r'^\[\s*\d+\.\d+\]\s*', '', line.rstrip('\n'))


def scan_splats(log_lines: List[str]) -> List[str]:
	"""Guest log lines that show a kernel splat."""
	found = []
	for line in log_lines:
		body = strip_console_prefix(line)
		if SPLAT_RE.search(body) and not SPLAT_IGNORE_RE.search(body):
			found.append(line.rstrip('\n'))
	return found


def running_when_stopped(log_lines: List[str]) -> Optional[str]:
	"""Name of the suite (and case) that had started but not finished."""
	stack: List[str] = []
	for line in log_lines:
		body = strip_console_prefix(line).strip()
		m = re.match(r'^# Subtest: (\S+)', body)
		if m:
			stack.append(m.group(1))
			continue
		if re.match(r'^(not )?ok \d+ ', body) and stack:
			# A result line at the current depth closes the innermost
			# subtest only when its name matches.
			name = re.sub(r'^(not )?ok \d+ (- )?', '', body).split(' #')[0].strip()
			if name == stack[-1]:
				stack.pop()
	return ' / '.join(stack) if stack else None


def load_expected_before(path: Optional[str] = None) -> Dict[str, str]:
	"""patches/expected-before: case -> patch group that makes it pass."""
	path = path or os.path.join(REPO, 'patches', 'expected-before')
	out = {}
	if not os.path.isfile(path):
		return out
	with open(path) as f:
		for line in f:
			line = line.split('#', 1)[0].split()
			if len(line) == 2:
				out[line[0]] = line[1]
	return out


def group_of(patch: str) -> str:
	return patch.split('/', 1)[0]


def judge(results: Dict[str, str], applied_groups: List[str],
	  expected_before: Dict[str, str], require_listed: bool = False
	  ) -> Tuple[Dict[str, int], List[str]]:
	"""Count results; a case whose group is not applied must not pass.

	With @require_listed, a case of expected-before that did not run at all
	is a failure too (it was renamed or its suite was not built).
	"""
	counts = {'passed': 0, 'failed': 0, 'skipped': 0}
	notes = []
	if require_listed:
		for pat in sorted(expected_before):
			if not any(c == pat or c.startswith(pat + '.') for c in results):
				counts['failed'] += 1
				notes.append(f'{pat}: listed in patches/expected-before but did not run')
	for case, status in sorted(results.items()):
		grp = None
		for pat, g in expected_before.items():
			if case == pat or case.startswith(pat + '.'):
				grp = g
		if grp and grp not in applied_groups:
			if status == 'FAIL':
				counts['passed'] += 1
				notes.append(f'{case}: fails before {grp}, as expected')
			elif status == 'SKIP':
				counts['skipped'] += 1
			else:
				counts['failed'] += 1
				notes.append(f'{case}: {status} without {grp}: '
					     'the case does not see the patch')
			continue
		if status == 'PASS':
			counts['passed'] += 1
		elif status == 'SKIP':
			counts['skipped'] += 1
		else:
			counts['failed'] += 1
			notes.append(f'{case}: {status}')
	return counts, notes


# ---------------------------------------------------------------- kunit.py

def ccache_env() -> Dict[str, str]:
	env = {'CCACHE_BASEDIR': REPO, 'CCACHE_NOHASHDIR': '1',
	       'CCACHE_SLOPPINESS': 'time_macros,include_file_mtime,include_file_ctime'}
	if 'CCACHE_DIR' not in os.environ:
		env['CCACHE_DIR'] = os.path.join(os.path.expanduser('~'), '.cache', 'mmkunit-ccache')
	return env


def kunit_cmd(tree: str, sub: str, out: str, kunitconfigs: List[str], jobs: int,
	      extra: List[str]) -> List[str]:
	cmd = [sys.executable, os.path.join(tree, 'tools/testing/kunit/kunit.py'), sub,
	       '--build_dir=' + out,
	       '--qemu_config=' + os.path.join(tree, QEMU_CONFIG)]
	if sub in ('config', 'build', 'run'):
		cmd += ['--kunitconfig=' + os.path.join(tree, k) for k in kunitconfigs]
		cmd += ['--make_options', 'CC=ccache gcc']
	if sub in ('build', 'run'):
		cmd += [f'--jobs={jobs}']
	return cmd + extra


def run_stage(cmd: List[str], tree: str, logf, timeout: Optional[float]) -> int:
	"""Run one kunit.py stage, tee to logf, kill the process group on timeout."""
	env = dict(os.environ, **ccache_env())
	logf.write('$ ' + ' '.join(shlex.quote(c) for c in cmd) + '\n')
	logf.flush()
	p = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE,
			     stderr=subprocess.STDOUT, text=True, errors='replace',
			     start_new_session=True)
	deadline = time.monotonic() + timeout if timeout else None
	sel = selectors.DefaultSelector()
	sel.register(p.stdout, selectors.EVENT_READ)
	timed_out = False
	while True:
		wait = None if deadline is None else max(0.1, deadline - time.monotonic())
		if sel.select(timeout=wait):
			line = p.stdout.readline()
			if not line:
				break
			logf.write(line)
			sys.stdout.write(line)
			sys.stdout.flush()
		if deadline is not None and time.monotonic() > deadline:
			timed_out = True
			break
	if timed_out:
		os.killpg(p.pid, signal.SIGKILL)
		p.wait()
		return -999
	return p.wait()


def run_variant(variant: str, debug: bool = False, jobs: int = 0,
		timeout: int = 0, filter_glob: str = '', with_slow: bool = False,
		kunitconfigs: Optional[List[str]] = None,
		build: bool = True, out_name: str = '',
		results_out: Optional[Dict[str, str]] = None) -> Tuple[Dict[str, int], List[str]]:
	"""Assemble, build and boot one variant; return counts and notes.

	With build=False the variant's kernel, built earlier, is only booted
	again (make bench-compare alternates kernels that way)."""
	if build:
		tree = assemble(variant)
	elif os.path.isfile(os.path.join(TREE, 'tools/testing/kunit/kunit.py')):
		tree = TREE
	else:
		raise Error(f'{variant}: no assembled tree to boot from')
	name = (out_name or variant.replace(':', '-')) + ('-debug' if debug else '')
	out = os.path.join(BUILD, 'out', name)
	os.makedirs(out, exist_ok=True)
	jobs = jobs or os.cpu_count() or 2
	timeout = timeout or int(os.environ.get('MMKUNIT_TIMEOUT', '900' if debug else '600'))
	configs = list(kunitconfigs or SUITE_KUNITCONFIGS)
	if debug:
		configs.append(DEBUG_KUNITCONFIG)
	logpath = os.path.join(out, 'mmkunit.log')
	jsonpath = os.path.join(out, 'results.json')
	guest_log = os.path.join(out, 'test.log')
	# Results of an earlier run must never be read as this run's.
	for stale in (jsonpath, guest_log):
		if os.path.exists(stale):
			os.unlink(stale)
	patches = variant_patches(variant)
	groups = sorted({group_of(p) for p in patches})
	info(f'{name}: tree {os.path.relpath(tree, REPO)}, {len(patches)} patches '
	     f'({", ".join(groups) or "none"}), build {os.path.relpath(out, REPO)}')
	with open(logpath, 'w') as logf:
		t0 = time.monotonic()
		for sub in ('config', 'build') if build else ():
			rc = run_stage(kunit_cmd(tree, sub, out, configs, jobs, []), tree, logf,
				       timeout=3600)
			if rc != 0:
				raise Error(f'{name}: kunit.py {sub} failed (exit {rc}); '
					    f'log: {logpath}')
		t_build = time.monotonic() - t0
		extra = [f'--timeout={timeout}', '--json=' + jsonpath]
		if debug:
			# A page freed early reads as poison (the race suite's oracle)
			extra.append('--kernel_args=page_poison=1')
		if not with_slow:
			extra.append('--filter=speed>slow')
		if filter_glob:
			extra.append(filter_glob)
		t1 = time.monotonic()
		rc = run_stage(kunit_cmd(tree, 'exec', out, configs, jobs, extra), tree, logf,
			       timeout=timeout + 120)
		t_run = time.monotonic() - t1
	lines = []
	if os.path.isfile(guest_log):
		with open(guest_log, errors='replace') as f:
			lines = f.readlines()
	notes = []
	results: Dict[str, str] = {}
	if os.path.isfile(jsonpath):
		with open(jsonpath) as f:
			try:
				results = count_json(json.load(f))
			except ValueError:
				notes.append('kunit.py wrote unreadable JSON')
	if results_out is not None:
		results_out.update(results)
	counts, judged = judge(results, groups, load_expected_before(),
			       require_listed=not filter_glob and kunitconfigs is None)
	notes += judged
	stopped = running_when_stopped(lines)
	if rc == -999 or stopped:
		counts['failed'] += 1
		notes.append(f'guest stopped (timeout {timeout}s or crash) while running '
			     f'{stopped or "before the first suite"}')
	splats = scan_splats(lines)
	if splats:
		counts['failed'] += 1
		notes.append(f'{len(splats)} splat line(s) in the guest log, first: {splats[0].strip()}')
	if not results and not stopped:
		counts['failed'] += 1
		notes.append('no test results at all')
	info(f'{name}: build {t_build:.0f}s, guest {t_run:.0f}s; '
	     f'{counts["passed"]} passed, {counts["failed"]} failed, '
	     f'{counts["skipped"]} skipped')
	for n in notes:
		info(f'  {name}: {n}')
	info(f'{name}: full log {os.path.relpath(logpath, REPO)}, guest log '
	     f'{os.path.relpath(guest_log, REPO)}')
	return counts, notes


# ---------------------------------------------------------------- commands

def cmd_assemble(args) -> int:
	print(assemble(args.variant))
	return 0


def cmd_run(args) -> int:
	counts, _ = run_variant(args.variant, debug=args.debug, jobs=args.jobs,
				timeout=args.timeout, filter_glob=args.filter_glob,
				with_slow=args.slow)
	print(f'{counts["passed"]} passed, {counts["failed"]} failed, '
	      f'{counts["skipped"]} skipped')
	return 1 if counts['failed'] else 0


def host_tests() -> Dict[str, int]:
	"""scripts/tests through unittest's own runner; counts from its result."""
	# benchreport's tests read logs with kunit_tool's parser from a kernel tree
	if 'MMKUNIT_KUNIT_DIR' not in os.environ:
		try:
			os.environ['MMKUNIT_KUNIT_DIR'] = os.path.join(
				assemble('series'), 'tools/testing/kunit')
		except Error as e:
			info(f'host tools: no kernel tree for kunit_parser ({e})')
	suite = unittest.defaultTestLoader.discover(os.path.join(REPO, 'scripts', 'tests'),
						    top_level_dir=REPO)
	result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
	failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
	skipped = len(result.skipped)
	counts = {'passed': result.testsRun - failed - skipped, 'failed': failed,
		  'skipped': skipped}
	if result.testsRun == 0:
		counts['failed'] += 1
		info('host tools: no tests found')
	info(f'host tools: {counts["passed"]} passed, {counts["failed"]} failed, '
	     f'{counts["skipped"]} skipped')
	return counts


def checkpatch_targets() -> List[Tuple[str, List[str]]]:
	"""(path, extra args) of every patch in the series and every suite file."""
	out = [(os.path.join(REPO, 'patches', p), []) for p in read_series()]
	for d in ('mm/tests', 'fs/tests'):
		top = os.path.join(REPO, d)
		if os.path.isdir(top):
			for n in sorted(os.listdir(top)):
				if n.endswith(('.c', '.h')):
					out.append((os.path.join(top, n), ['--file']))
	return out


def checkpatch_findings(tree: str, path: str, extra: Optional[List[str]] = None) -> str:
	"""scripts/checkpatch.pl --strict on one patch (or, with --file, one
	source file); '' when it is clean."""
	cmd = ['perl', os.path.join(tree, 'scripts/checkpatch.pl'), '--strict',
	       '--no-tree', '--terse', '--no-summary', '--show-types']
	r = subprocess.run(cmd + (extra or []) + [path], cwd=tree, stdout=subprocess.PIPE,
			   stderr=subprocess.STDOUT, text=True)
	out = r.stdout.strip()
	return out or ('' if r.returncode == 0 else f'checkpatch exited {r.returncode}')


def checkpatch() -> Dict[str, int]:
	"""scripts/checkpatch.pl --strict on the series and the suites."""
	tree = assemble('series')
	counts = {'passed': 0, 'failed': 0, 'skipped': 0}
	for path, extra in checkpatch_targets():
		found = checkpatch_findings(tree, path, extra)
		if not found:
			counts['passed'] += 1
		else:
			counts['failed'] += 1
			info(f'checkpatch --strict: {os.path.relpath(path, REPO)}:')
			print(found)
	info(f'checkpatch: {counts["passed"]} clean, {counts["failed"]} with findings')
	return counts


def cmd_test(args) -> int:
	total = {'passed': 0, 'failed': 0, 'skipped': 0}
	stages = [('host tools', host_tests), ('checkpatch', checkpatch)]
	for v in args.variants:
		stages.append((v + ('-debug' if args.debug else ''), lambda v=v: run_variant(v, debug=args.debug, jobs=args.jobs,
							  timeout=args.timeout)[0]))
		if v == 'series':
			# The race suite is KUNIT_CASE_SLOW, left out above by
			# speed>slow: boot the same kernel again for it alone.
			stages.append(('races' + ('-debug' if args.debug else ''),
				       lambda v=v: run_variant(v, debug=args.debug, jobs=args.jobs,
							       timeout=args.timeout, build=False,
							       filter_glob=RACE_GLOB, with_slow=True,
							       out_name='series')[0]))
	summary = []
	for name, fn in stages:
		try:
			c = fn()
		except Error as e:
			info(f'{name}: {e}')
			c = {'passed': 0, 'failed': 1, 'skipped': 0}
		summary.append((name, c))
		for k in total:
			total[k] += c[k]
	info('summary:')
	for name, c in summary:
		info(f'  {name:<12} {c["passed"]} passed, {c["failed"]} failed, '
		     f'{c["skipped"]} skipped')
	print(f'{total["passed"]} passed, {total["failed"]} failed, {total["skipped"]} skipped')
	return 1 if total['failed'] else 0


# ------------------------------------------------------------ series-check

def analyse_matrix(rows: List[dict]) -> dict:
	"""Regressions, unbuilt prefixes and first passing patch of a matrix.

	@rows: one per prefix, in order, each {'k', 'built', 'results'} with
	results {case: PASS/FAIL/SKIP/...}.  A regression is a case that
	passed on the previous built prefix and does not pass now (failed,
	crashed, or did not run)."""
	cases = sorted({c for r in rows for c in r['results']})
	regressions, first_pass = [], {}
	prev = None
	for r in rows:
		if not r['built']:
			continue
		for c in cases:
			now = r['results'].get(c, 'NOT RUN')
			if now == 'PASS' and c not in first_pass:
				first_pass[c] = r['k']
			if prev and prev['results'].get(c) == 'PASS' and now != 'PASS':
				regressions.append({'case': c, 'from': prev['k'], 'to': r['k'],
						    'status': now})
		prev = r
	return {'cases': cases, 'regressions': regressions, 'first_pass': first_pass,
		'not_built': [r['k'] for r in rows if not r['built']]}


CELL = {'PASS': 'P', 'FAIL': 'F', 'SKIP': 'S', 'NOT RUN': '-', 'CRASHED': 'C'}


def format_matrix(rows: List[dict], an: dict) -> str:
	"""Patches down, cases across (numbered, legend below)."""
	cases = an['cases']
	width = max(3, len(str(len(cases))) + 1)
	lines = ['patch' + ' ' * 46 + ''.join(f'{i + 1:>{width}}' for i in range(len(cases)))]
	for r in rows:
		label = f'{r["k"]:>2} {r["patch"]}'[:48]
		cp = r.get('checkpatch', '')
		if not r['built']:
			cells = ' not built'
		else:
			cells = ''.join(f'{CELL.get(r["results"].get(c, "NOT RUN"), "?"):>{width}}'
					for c in cases)
		lines.append(f'{label:<48}{cp:>3}{cells}')
	lines.append('')
	lines.append('P pass, F fail, S skip, - not run, C crashed; third column: '
		     'checkpatch --strict (ok / !!)')
	for i, c in enumerate(cases):
		fp = an['first_pass'].get(c)
		lines.append(f'{i + 1:>{width}} {c}  (first pass: '
			     f'{"never" if fp is None else ("pristine" if fp == 0 else "patch " + str(fp))})')
	for g in an['regressions']:
		lines.append(f'REGRESSION: {g["case"]}: PASS at {g["from"]}, {g["status"]} at {g["to"]}')
	for k in an['not_built']:
		lines.append(f'NOT BUILT: prefix {k}')
	return '\n'.join(lines)


def cmd_series_check(args) -> int:
	"""Build and run every prefix of patches/series; the per-patch matrix."""
	series = read_series()
	lo = args.from_ if args.from_ is not None else 0
	hi = args.to if args.to is not None else len(series)
	if not 0 <= lo <= hi <= len(series):
		raise Error(f'FROM={lo} TO={hi}: must be 0 <= FROM <= TO <= {len(series)}')
	t0 = time.monotonic()
	rows = []
	for k in range(lo, hi + 1):
		res: Dict[str, str] = {}
		row = {'k': k, 'patch': series[k - 1] if k else 'pristine 7.3',
		       'built': True, 'results': res, 'notes': []}
		try:
			_, row['notes'] = run_variant(f'upto:{k}', jobs=args.jobs,
						      timeout=args.timeout,
						      out_name='series-check', results_out=res)
			if k:
				row['checkpatch'] = '!!' if checkpatch_findings(
					TREE, os.path.join(REPO, 'patches', series[k - 1])) else 'ok'
		except Error as e:
			row['built'] = False
			row['notes'] = [str(e)]
		rows.append(row)
	an = analyse_matrix(rows)
	out = os.path.join(BUILD, 'series-check')
	os.makedirs(out, exist_ok=True)
	text = format_matrix(rows, an)
	elapsed = time.monotonic() - t0
	with open(os.path.join(out, 'matrix.txt'), 'w') as f:
		f.write(text + '\n')
	with open(os.path.join(out, 'matrix.json'), 'w') as f:
		json.dump({'rows': rows, 'elapsed_s': round(elapsed), **an}, f, indent=1)
	print(text)
	info(f'series-check: prefixes {lo}..{hi} in {elapsed / 60:.1f} min; '
	     f'{os.path.relpath(out, REPO)}/matrix.txt and matrix.json')
	bad = len(an['regressions']) + len(an['not_built']) + sum(
		1 for r in rows if r.get('checkpatch') == '!!')
	return 1 if bad else 0


def load_qemu_config():
	"""Load x86_64_mm.py (the repo's QEMU config) outside kunit_tool's
	package, for its accelerator choice; undo the PATH change it makes."""
	path = os.path.join(REPO, QEMU_CONFIG)
	with open(path) as f:
		src = f.read()
	src = src.replace('from ..qemu_config import QemuArchParams',
			  'QemuArchParams = lambda **kw: kw')
	mod = type(sys)('x86_64_mm')
	mod.__file__ = path
	saved = dict(os.environ)
	try:
		exec(compile(src, path, 'exec'), mod.__dict__)
	finally:
		os.environ.clear()
		os.environ.update(saved)
	return mod


# ------------------------------------------------------------ modules-run

# Suites that use exported symbols only (tristate in their Kconfig); each is
# (source, module name, kunit filter glob).
MODULE_SUITES = [('mm/tests/filemap_batch_kunit.c', 'filemap_batch_kunit',
		  'filemap_batch')]
BUSYBOX = '/bin/busybox'
MODULE_MARK = 'mm-kunit: insmod'


def modules_init_script(mods: List[str]) -> str:
	"""/init of the module initramfs: load each module, then reboot (exit)."""
	lines = ['#!/bin/busybox sh', '/bin/busybox mount -t proc proc /proc',
		 '/bin/busybox mount -t sysfs sys /sys']
	for m in mods:
		lines += [f'echo "{MODULE_MARK} {m}.ko"', f'/bin/busybox insmod /{m}.ko',
			  f'echo "{MODULE_MARK} {m}.ko returned $?"']
	# -no-reboot turns the reboot into QEMU's exit (this kernel cannot
	# power off: no ACPI)
	lines.append('/bin/busybox reboot -f')
	return '\n'.join(lines) + '\n'


def module_ktap(console: str) -> str:
	"""The console output after the first insmod mark: the modules' KTAP."""
	i = console.find(MODULE_MARK)
	return console[i:] if i >= 0 else ''


def pack_initramfs(root: str, init: str, cpio: str) -> str:
	"""Write @init as @root/init and pack @root into the newc archive @cpio."""
	with open(os.path.join(root, 'init'), 'w') as f:
		f.write(init)
	os.chmod(os.path.join(root, 'init'), 0o755)
	with open(cpio, 'wb') as f:
		names = subprocess.run(['find', '.'], cwd=root, stdout=subprocess.PIPE,
				       check=True).stdout
		subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet'], cwd=root,
			       input=names, stdout=f, check=True)
	return cpio


def cmd_modules_run(args) -> int:
	"""Build the tristate suites as modules against the series kernel, load
	them from an initramfs in the guest and read their KTAP."""
	if not os.path.exists(BUSYBOX):
		raise Error(f'{BUSYBOX} missing: apt-get install busybox-static')
	counts, _ = run_variant('series', jobs=args.jobs, timeout=args.timeout,
				filter_glob=','.join(g for _, _, g in MODULE_SUITES))
	out = os.path.join(BUILD, 'out', 'series')
	work = os.path.join(BUILD, 'modules')
	shutil.rmtree(work, ignore_errors=True)
	src, root = os.path.join(work, 'src'), os.path.join(work, 'initramfs')
	for d in (src, os.path.join(root, 'bin'), os.path.join(root, 'proc'),
		  os.path.join(root, 'sys'), os.path.join(root, 'dev')):
		os.makedirs(d)
	with open(os.path.join(src, 'Kbuild'), 'w') as f:
		for rel, name, _ in MODULE_SUITES:
			shutil.copy(os.path.join(REPO, rel), os.path.join(src, name + '.c'))
			f.write(f'obj-m += {name}.o\n')
	env = dict(os.environ, **ccache_env())
	r = subprocess.run(['make', '-C', TREE, f'O={out}', f'M={src}', 'ARCH=x86_64',
			    'CC=ccache gcc', f'-j{args.jobs or os.cpu_count() or 2}', 'modules'],
			   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
	if r.returncode:
		print(r.stdout[-3000:])
		raise Error('building the suites as modules failed')
	mods = [name for _, name, _ in MODULE_SUITES]
	for m in mods:
		shutil.copy(os.path.join(src, m + '.ko'), root)
	shutil.copy(BUSYBOX, os.path.join(root, 'bin', 'busybox'))
	cpio = pack_initramfs(root, modules_init_script(mods),
			      os.path.join(work, 'initramfs.cpio'))
	# the QEMU config's choice: KVM only where it can run guests
	accel = load_qemu_config().choose_accel()
	cmd = ['qemu-system-x86_64', '-nodefaults', '-nographic', '-no-reboot', '-m', '3072',
	       '-smp', '2', '-serial', 'stdio', '-bios', 'qboot.rom',
	       '-accel', 'kvm' if accel == 'kvm' else 'tcg,thread=multi',
	       '-kernel', os.path.join(out, 'arch/x86/boot/bzImage'), '-initrd', cpio,
	       '-append', 'console=ttyS0 panic=-1 rdinit=/init kunit.filter_glob=' +
	       ','.join(g for _, _, g in MODULE_SUITES)]
	console = os.path.join(work, 'console.log')
	timeout = args.timeout or 300
	with open(console, 'w') as logf:
		p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT,
				     stdin=subprocess.DEVNULL, start_new_session=True)
		try:
			p.wait(timeout=timeout)
		except subprocess.TimeoutExpired:
			os.killpg(p.pid, signal.SIGKILL)
			p.wait()
			raise Error(f'the module guest did not exit in {timeout}s; '
				    f'console: {console}')
	with open(console, errors='replace') as f:
		text = f.read()
	ktap = module_ktap(text)
	if not ktap:
		raise Error(f'no "{MODULE_MARK}" line: the initramfs did not run; console: {console}')
	ktap_path = os.path.join(work, 'modules.ktap')
	with open(ktap_path, 'w') as f:
		f.write(ktap)
	jpath = os.path.join(work, 'modules.json')
	subprocess.run([sys.executable, os.path.join(TREE, 'tools/testing/kunit/kunit.py'),
			'parse', '--json=' + jpath, ktap_path], cwd=TREE,
		       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
	res = {}
	if os.path.isfile(jpath):
		with open(jpath) as f:
			res = count_json(json.load(f))
	mc = {'passed': 0, 'failed': 0, 'skipped': 0}
	for st in res.values():
		mc['passed' if st == 'PASS' else 'skipped' if st == 'SKIP' else 'failed'] += 1
	for m in mods:
		if f'{MODULE_MARK} {m}.ko returned 0' not in text:
			mc['failed'] += 1
			info(f'modules: insmod {m}.ko did not return 0')
	if not res:
		mc['failed'] += 1
		info('modules: no KTAP results after the insmod')
	info(f'modules: {", ".join(m + ".ko" for m in mods)} loaded in the guest: '
	     f'{mc["passed"]} passed, {mc["failed"]} failed, {mc["skipped"]} skipped '
	     f'(console {os.path.relpath(console, REPO)})')
	total = {k: counts[k] + mc[k] for k in mc}
	print(f'{total["passed"]} passed, {total["failed"]} failed, {total["skipped"]} skipped')
	return 1 if total['failed'] else 0


BENCH_GLOB = '*_benchmark*'
BENCHREPORT = os.path.join(REPO, 'scripts', 'benchreport.py')


def bench_boot(variant: str, dest_dir: str, label: str, build: bool,
	       jobs: int, timeout: int, glob: str = '') -> str:
	"""Boot @variant's kernel for the benchmark suites; keep its guest log."""
	counts, _ = run_variant(variant, jobs=jobs, timeout=timeout or 1800,
				filter_glob=glob or BENCH_GLOB, with_slow=True, build=build)
	src = os.path.join(BUILD, 'out', variant.replace(':', '-'), 'test.log')
	if not os.path.isfile(src):
		raise Error(f'{variant}: the guest left no log ({src})')
	dest = os.path.join(dest_dir, label + '.log')
	shutil.copyfile(src, dest)
	if counts['failed']:
		info(f'{variant}: a benchmark case failed; see {os.path.relpath(dest, REPO)}')
	return dest


def bench_report(args: List[str], out_dir: str) -> int:
	env = dict(os.environ, MMKUNIT_KUNIT_DIR=os.path.join(TREE, 'tools/testing/kunit'))
	cmd = [sys.executable, BENCHREPORT] + args + [
		'--json', os.path.join(out_dir, 'report.json'), '--plots', out_dir]
	rc = subprocess.run(cmd, env=env).returncode
	info(f'bench: logs, report.json and plots in {os.path.relpath(out_dir, REPO)}')
	return rc


def bench_dir(label: str) -> str:
	d = os.path.join(BUILD, 'bench', time.strftime('%Y%m%d-%H%M%S') + '-' +
			 label.replace(':', '-'))
	os.makedirs(d, exist_ok=True)
	return d


def cmd_bench(args) -> int:
	"""The benchmark suites on one kernel, in-boot comparisons side by side."""
	variant_patches(args.variant)		# reject a bad variant early
	out = bench_dir(args.variant)
	logs = [bench_boot(args.variant, out, f'{args.variant}-boot{i + 1}', i == 0,
			   args.jobs, args.timeout, args.filter_glob) for i in range(args.boots)]
	return bench_report(['inboot'] + logs, out)


def cmd_bench_compare(args) -> int:
	"""Kernels A and B booted alternately; an A/B table per benchmark."""
	for v in (args.a, args.b):
		variant_patches(v)
	if args.a == args.b:
		raise Error('A and B are the same kernel')
	out = bench_dir(f'{args.a}-vs-{args.b}')
	logs: Dict[str, List[str]] = {args.a: [], args.b: []}
	for i in range(args.boots):
		for v in (args.a, args.b):
			logs[v].append(bench_boot(v, out, f'{v}-boot{i + 1}', i == 0,
						  args.jobs, args.timeout, args.filter_glob))
	ref = ['--ref', args.ref] if args.ref else []
	return bench_report(['compare', '--base'] + logs[args.a] + ['--new'] + logs[args.b] + ref,
			    out)


def main(argv: List[str]) -> int:
	ap = argparse.ArgumentParser(prog='mmkunit', description=__doc__,
				     formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = ap.add_subparsers(dest='cmd', required=True)
	sub.add_parser('deps').set_defaults(fn=cmd_deps)
	a = sub.add_parser('assemble')
	a.add_argument('variant')
	a.set_defaults(fn=cmd_assemble)
	for name, fn in (('run', cmd_run), ('test', cmd_test)):
		p = sub.add_parser(name)
		if name == 'run':
			p.add_argument('variant', nargs='?', default='series')
			p.add_argument('filter_glob', nargs='?', default='')
			p.add_argument('--slow', action='store_true',
				       help='also run KUNIT_CASE_SLOW cases (benchmarks)')
		else:
			p.add_argument('--variants', nargs='+', default=['series', 'pristine'])
		p.add_argument('--debug', action='store_true',
			       help='add ' + DEBUG_KUNITCONFIG)
		p.add_argument('--jobs', type=int, default=0)
		p.add_argument('--timeout', type=int, default=0,
			       help='guest run timeout in seconds')
		p.set_defaults(fn=fn)
	b = sub.add_parser('bench', help='benchmark suites on one kernel')
	b.add_argument('variant', nargs='?', default='series')
	b.add_argument('--boots', type=int, default=1)
	b.set_defaults(fn=cmd_bench)
	c = sub.add_parser('bench-compare', help='kernels A and B alternately')
	c.add_argument('a', help='base kernel: pristine, series, upto:N, before:GROUP, upto:GROUP')
	c.add_argument('b', help='new kernel, same forms')
	c.add_argument('--boots', type=int, default=3, help='boots of each kernel')
	c.add_argument('--ref', default='', help="benchreport's --ref: a configuration the change "
		       'does not touch, as the in-boot reference')
	c.set_defaults(fn=cmd_bench_compare)
	m = sub.add_parser('series-check', help='build and run every prefix of the series')
	m.add_argument('--from', dest='from_', type=int, default=None)
	m.add_argument('--to', type=int, default=None)
	m.set_defaults(fn=cmd_series_check)
	mr = sub.add_parser('modules-run', help='the tristate suites as modules in the guest')
	mr.set_defaults(fn=cmd_modules_run)
	for p in (b, c):
		p.add_argument('--filter_glob', default='',
			       help=f'kunit.py filter glob (default {BENCH_GLOB})')
	for p in (b, c, m, mr):
		p.add_argument('--jobs', type=int, default=0)
		p.add_argument('--timeout', type=int, default=0,
			       help='guest run timeout in seconds (default 1800)')
	return run_command(ap.parse_args(argv), 'mmkunit')


def run_command(args, prog: str) -> int:
	"""Run the parsed subcommand: 2 and one line on an Error, 130 on ^C."""
	try:
		return args.fn(args)
	except Error as e:
		print(f'{prog}: error: {e}', file=sys.stderr)
		return 2
	except KeyboardInterrupt:
		return 130


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
