# SPDX-License-Identifier: GPL-2.0
"""A copy of this repo's runner with a fake kernel tree and a fake kunit.py,
for host tests of whole runs (lock, signals, stages, reports) that build no
kernel.

FakeRepo(tmp) copies scripts/, the overlay directories and a patches/ of its
own into tmp/repo and makes a fake Linux 7.3 tree in tmp/linux (KDIR).  Its
kunit.py (below) logs each call in tmp/ctl/calls and:
  config  writes .config;
  build   sleeps FAKE_BUILD_SLEEP seconds (with a child "sleep" whose pid goes
	  to ctl/child.pid), fails when FAKE_BUILD_FAIL is set, else writes
	  arch/x86/boot/bzImage (arch/arm64/boot/Image with the arm64 QEMU
	  config) holding FAKE_KERNEL_ID;
  exec    fails without a bzImage, logs the booted kernel id to ctl/booted,
	  writes test.log (KTAP) and --json: suite "demo" with demo_pass and
	  (FAKE_FAIL) demo_fail, or the race suite when the glob names it;
	  FAKE_SPLAT adds a WARNING line, FAKE_STOP cuts the log mid-suite.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _default_sigint() -> None:
	signal.signal(signal.SIGINT, signal.SIG_DFL)


# The argument parsing of a fake kunit.py (a script's text; it needs sys):
# sub, the --option=value / --option value pairs in opts (the first wins),
# every --kernel_args= in kargs, the rest in pos
FAKE_KUNIT_ARGS = r'''args = sys.argv[1:]
sub = args[0]
opts, pos, kargs, i = {}, [], [], 1
while i < len(args):
	a = args[i]
	if a.startswith('--kernel_args='):
		kargs.append(a.split('=', 1)[1])
	elif a.startswith('--') and '=' in a:
		k, v = a[2:].split('=', 1)
		opts.setdefault(k, v)
	elif a.startswith('--'):
		opts[a[2:]] = args[i + 1]
		i += 1
	else:
		pos.append(a)
	i += 1
'''

FAKE_KUNIT = r'''#!/usr/bin/env python3
import json, os, subprocess, sys, time
''' + FAKE_KUNIT_ARGS + r'''ctl = os.environ['FAKE_CTL']
out = opts['build_dir']
with open(os.path.join(ctl, 'calls'), 'a') as f:
	f.write(f'{time.time():.3f} {os.getpid()} {sub} ' + ' '.join(args[1:]) + '\n')
bz = os.path.join(out, 'arch/arm64/boot/Image' if 'arm64' in opts.get('qemu_config', '')
		  else 'arch/x86/boot/bzImage')
if sub == 'config':
	os.makedirs(out, exist_ok=True)
	open(os.path.join(out, '.config'), 'w').close()
	sys.exit(0)
if sub == 'build':
	print('fake build: make ARCH=' + ('arm64' if 'arm64' in bz else 'x86_64') + ' -j' +
	      opts.get('jobs', '?'), flush=True)
	if os.environ.get('FAKE_BUILD_SLEEP'):
		child = subprocess.Popen(['sleep', '300'])
		with open(os.path.join(ctl, 'child.pid'), 'w') as f:
			f.write(str(child.pid))
		time.sleep(float(os.environ['FAKE_BUILD_SLEEP']))
		child.kill()
	if os.environ.get('FAKE_BUILD_FAIL'):
		print('mm/fake.c:1:1: error: fake build failure', flush=True)
		sys.exit(1)
	os.makedirs(os.path.dirname(bz), exist_ok=True)
	with open(bz, 'w') as f:
		f.write(os.environ.get('FAKE_KERNEL_ID', 'kernel'))
	sys.exit(0)
if sub == 'exec':
	if not os.path.isfile(bz):
		print('fake exec: no kernel image', flush=True)
		sys.exit(1)
	with open(bz) as f, open(os.path.join(ctl, 'booted'), 'a') as b:
		b.write(f.read() + ' ' + ' '.join(pos) + '\n')
	glob = pos[0] if pos else ''
	if 'race' in glob:
		suite, cases = 'lockless_read_race', [('race_ok', 'PASS')]
	else:
		suite, cases = 'demo', [('demo_pass', 'PASS')]
		if os.environ.get('FAKE_FAIL'):
			cases.append(('demo_fail', 'FAIL'))
		cases.append(('demo_skip', 'SKIP'))
	lines = ['KTAP version 1', '1..1', f'    # Subtest: {suite}', f'    1..{len(cases)}']
	stop = bool(os.environ.get('FAKE_STOP'))
	for n, (c, st) in enumerate(cases, 1):
		if stop and n == 2:
			break
		lines.append(('    ok ' if st != 'FAIL' else '    not ok ') + f'{n} {c}' +
			     (' # SKIP no reason' if st == 'SKIP' else ''))
		if os.environ.get('FAKE_SPLAT') and n == 1:
			lines.append('[    1.000000] WARNING: CPU: 0 PID: 1 at mm/fake.c:1 fake+0x1')
	if not stop:
		lines.append(f'ok 1 {suite}')
	with open(os.path.join(out, 'test.log'), 'w') as f:
		f.write('\n'.join(lines) + '\n')
	if stop:
		print('fake exec: the guest stopped', flush=True)
		sys.exit(1)
	tree = {'name': 'KUnit Test Group', 'test_cases': [],
		'sub_groups': [{'name': suite, 'sub_groups': [],
				'test_cases': [{'name': c, 'status': st} for c, st in cases]}]}
	if 'json' in opts:
		with open(opts['json'], 'w') as f:
			json.dump(tree, f)
	print('\n'.join(lines), flush=True)
	sys.exit(1 if any(st == 'FAIL' for _, st in cases) else 0)
sys.exit(2)
'''

PATCH = '''From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.com>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] mm: fake change

---
 mm/fake.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/mm/fake.c b/mm/fake.c
index 0000000..1111111 100644
--- a/mm/fake.c
+++ b/mm/fake.c
@@ -1 +1,2 @@
 int fake;
+int fake_patched;
--
2.39.5
'''

TREE_FILES = {
	'Makefile': 'VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 0\n',
	'mm/Kconfig': 'menu "mm"\n\nendmenu\n',
	'mm/Makefile': 'obj-y := fake.o\n',
	'mm/fake.c': 'int fake;\n',
	'scripts/checkpatch.pl': 'exit 0;\n',
}



def alive(pid: int) -> bool:
	"""True while pid runs (a zombie waiting for its reaper is dead); waits
	up to 5 s for it to end."""
	deadline = time.monotonic() + 5
	while time.monotonic() < deadline:
		try:
			with open(f'/proc/{pid}/stat') as f:
				state = f.read().rsplit(')', 1)[1].split()[0]
		except FileNotFoundError:
			return False
		if state in ('Z', 'X'):
			return False
		time.sleep(0.05)
	return True


class FakeRepo:
	def __init__(self, top: str, patches: bool = True):
		self.top = top
		self.repo = os.path.join(top, 'repo')
		self.kdir = os.path.join(top, 'linux')
		self.ctl = os.path.join(top, 'ctl')
		self.build = os.path.join(self.repo, 'build')
		os.makedirs(self.ctl)
		ign = shutil.ignore_patterns('__pycache__', '*.pyc', 'tests')
		shutil.copytree(os.path.join(REPO, 'scripts'), os.path.join(self.repo, 'scripts'),
				ignore=ign)
		tests = os.path.join(self.repo, 'scripts', 'tests')
		os.makedirs(tests)
		open(os.path.join(tests, '__init__.py'), 'w').close()
		with open(os.path.join(tests, 'test_fake.py'), 'w') as f:
			f.write('import unittest\n\n\nclass T(unittest.TestCase):\n'
				'\tdef test_ok(self):\n\t\tpass\n')
		for d in ('mm/tests', 'tools/testing/kunit/configs',
			  'tools/testing/kunit/qemu_configs'):
			shutil.copytree(os.path.join(REPO, d), os.path.join(self.repo, d), ignore=ign)
		shutil.copy(os.path.join(REPO, 'Makefile'), self.repo)
		shutil.copytree(os.path.join(REPO, '.ci'), os.path.join(self.repo, '.ci'))
		pd = os.path.join(self.repo, 'patches', 'fake')
		os.makedirs(pd)
		with open(os.path.join(pd, '0001-mm-fake-change.patch'), 'w') as f:
			f.write(PATCH)
		with open(os.path.join(self.repo, 'patches', 'series'), 'w') as f:
			f.write('fake/0001-mm-fake-change.patch\n' if patches else '')
		open(os.path.join(self.repo, 'patches', 'expected-before'), 'w').close()
		for rel, text in TREE_FILES.items():
			p = os.path.join(self.kdir, rel)
			os.makedirs(os.path.dirname(p), exist_ok=True)
			with open(p, 'w') as f:
				f.write(text)
		k = os.path.join(self.kdir, 'tools/testing/kunit/kunit.py')
		os.makedirs(os.path.dirname(k))
		with open(k, 'w') as f:
			f.write(FAKE_KUNIT)
		os.chmod(k, 0o755)

	def env(self, **kw) -> dict:
		env = {k: v for k, v in os.environ.items()
		       if not k.startswith(('FAKE_', 'MMKUNIT_', 'FORCE', 'GIT_')) and k != 'ARCH'}
		# MMKUNIT_EXPECTED=0: the fake kunit.py runs suite "demo", not the
		# suites of mm/tests the missing-case check expects
		env.update(KDIR=self.kdir, FAKE_CTL=self.ctl, MMKUNIT_NO_INSTALL='1',
			   MMKUNIT_EXPECTED='0',
			   MMKUNIT_KUNIT_DIR=os.path.join(self.kdir, 'tools/testing/kunit'),
			   CCACHE_DIR=os.path.join(self.top, 'ccache'))
		env.update({k: str(v) for k, v in kw.items()})
		return env

	def cmd(self, *args) -> list:
		return [sys.executable, os.path.join(self.repo, 'scripts', 'mmkunit.py')] + list(args)

	def run(self, *args, timeout: float = 120, **env) -> subprocess.CompletedProcess:
		return subprocess.run(self.cmd(*args), env=self.env(**env), cwd=self.repo,
				      capture_output=True, text=True, timeout=timeout)

	def start(self, *args, **env) -> subprocess.Popen:
		"""The runner in the background, SIGINT at its default as in a
		terminal: a shell without job control starts a background job (make
		test &, nohup) with SIGINT ignored, and Python keeps it ignored, so
		a ^C the tests send would not reach the runner."""
		return subprocess.Popen(self.cmd(*args), env=self.env(**env), cwd=self.repo,
					stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
					preexec_fn=_default_sigint)

	def calls(self) -> list:
		p = os.path.join(self.ctl, 'calls')
		if not os.path.exists(p):
			return []
		with open(p) as f:
			return [l.split() for l in f]

	def booted(self) -> list:
		p = os.path.join(self.ctl, 'booted')
		if not os.path.exists(p):
			return []
		with open(p) as f:
			return f.read().splitlines()

	def wait_for(self, pred, timeout: float = 60) -> bool:
		deadline = time.monotonic() + timeout
		while time.monotonic() < deadline:
			if pred():
				return True
			time.sleep(0.1)
		return False
