# SPDX-License-Identifier: GPL-2.0
"""Whole runs of scripts/mmkunit.py on a fake kernel tree (fakerepo.py):
the lock on build/, signals, stale git locks, local changes in build/tree,
the user's git config, failed builds, stage directories, reports, exit
codes and progress.  Nothing here builds a kernel."""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakerepo  # noqa: E402

LAST_LINE = re.compile(r'^\d+ passed, \d+ failed, \d+ skipped$')


alive = fakerepo.alive


class RunCase(unittest.TestCase):
	patches = True

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.fr = fakerepo.FakeRepo(self.tmp.name, patches=self.patches)
		self.procs = []

	def tearDown(self):
		for p in self.procs:
			if p.poll() is None:
				p.kill()
				p.wait()
			p.stdout.close()
		self.tmp.cleanup()

	def start(self, *args, **env):
		p = self.fr.start(*args, **env)
		self.procs.append(p)
		return p

	def subs(self):
		return [c[2] for c in self.fr.calls()]

	def building(self):
		return os.path.exists(os.path.join(self.fr.ctl, 'child.pid'))

	def child_pid(self):
		with open(os.path.join(self.fr.ctl, 'child.pid')) as f:
			return int(f.read())


class TestLock(RunCase):
	# two concurrent runs: the second waits for the first, naming it, and
	# starts assembling only after it (old runner: no lock, the second
	# checked out build/tree under the first one's build)
	def test_second_run_waits_naming_the_first(self):
		a = self.start('run', 'series', FAKE_BUILD_SLEEP=4)
		self.assertTrue(self.fr.wait_for(self.building))
		b = self.start('run', 'series')
		out_b, _ = b.communicate(timeout=120)
		a.communicate(timeout=120)
		self.assertEqual(a.returncode, 0)
		self.assertEqual(b.returncode, 0, out_b)
		self.assertIn(f'pid {a.pid}', out_b)
		self.assertIn('mmkunit run', out_b)
		self.assertEqual(self.subs(), ['config', 'build', 'exec'] * 2)

	# --no-wait: refuse at once, naming the holder, exit 2
	def test_no_wait_refuses_naming_the_holder(self):
		a = self.start('run', 'series', FAKE_BUILD_SLEEP=4)
		self.assertTrue(self.fr.wait_for(self.building))
		r = self.fr.run('run', '--no-wait', 'series')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn(f'pid {a.pid}', r.stderr)
		self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
		a.communicate(timeout=120)
		self.assertEqual(self.subs(), ['config', 'build', 'exec'])

	# selftests.py takes the same lock (old: it had none)
	def test_selftests_take_the_same_lock(self):
		a = self.start('run', 'series', FAKE_BUILD_SLEEP=4)
		self.assertTrue(self.fr.wait_for(self.building))
		r = subprocess.run([sys.executable, os.path.join(self.fr.repo, 'scripts/selftests.py'),
				    'run', '--no-wait', 'series'], env=self.fr.env(), cwd=self.fr.repo,
				   capture_output=True, text=True, timeout=60)
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn(f'pid {a.pid}', r.stderr)
		a.communicate(timeout=120)


class TestSignals(RunCase):
	def interrupt_build(self, sig):
		a = self.start('run', 'series', FAKE_BUILD_SLEEP=120)
		self.assertTrue(self.fr.wait_for(self.building))
		child = self.child_pid()
		kunit = int(self.fr.calls()[-1][1])
		a.send_signal(sig)
		out, _ = a.communicate(timeout=60)
		self.assertEqual(a.returncode, 130, out)
		self.assertFalse(alive(child), 'make (the build child) survived')
		self.assertFalse(alive(kunit), 'kunit.py survived')
		self.assertIn('interrupted', out)

	# SIGTERM / ^C during a build: the build's process group dies with the
	# runner (old runner: kunit.py and its make kept running)
	def test_sigterm_during_build_leaves_no_process(self):
		self.interrupt_build(signal.SIGTERM)

	def test_sigint_during_build_leaves_no_process(self):
		self.interrupt_build(signal.SIGINT)


class TestTree(RunCase):
	# an interrupted import or git command leaves *.lock files; the next
	# run clears them once it holds build/'s lock (old: every later run
	# failed until they were deleted by hand)
	def test_stale_git_locks_are_cleared(self):
		self.assertEqual(self.fr.run('run', 'series').returncode, 0)
		gd = os.path.join(self.fr.build, 'linux.git')
		for lock in ('import-index.lock', 'worktrees/tree/index.lock'):
			open(os.path.join(gd, lock), 'w').close()
		with open(os.path.join(self.fr.kdir, 'mm', 'new.c'), 'w') as f:
			f.write('int new;\n')		# a new source: import again
		r = self.fr.run('run', 'pristine')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn('stale', r.stdout)

	# local changes in build/tree are not reassembled away without FORCE=1
	# (old: checkout -f dropped them silently)
	def test_tree_with_local_changes_needs_force(self):
		self.assertEqual(self.fr.run('run', 'series').returncode, 0)
		fake = os.path.join(self.fr.build, 'tree', 'mm', 'fake.c')
		with open(fake, 'a') as f:
			f.write('int mutation;\n')
		r = self.fr.run('run', 'pristine')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('FORCE=1', r.stderr)
		self.assertIn('git -C build/tree commit', r.stderr)
		with open(fake) as f:
			self.assertIn('mutation', f.read())
		r = self.fr.run('run', 'pristine', FORCE=1)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		with open(fake) as f:
			self.assertNotIn('mutation', f.read())

	# a mutation committed in build/tree is kept for the same variant, and
	# reassembling for another variant needs FORCE=1 (old: dropped)
	def test_committed_mutation_kept_until_force(self):
		self.assertEqual(self.fr.run('run', 'series').returncode, 0)
		tree = os.path.join(self.fr.build, 'tree')
		with open(os.path.join(tree, 'mm', 'fake.c'), 'a') as f:
			f.write('int mutation;\n')
		env = dict(self.fr.env(), GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
			   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
		subprocess.run(['git', '-C', tree, 'commit', '-qam', 'mutation'], env=env, check=True)
		self.assertEqual(self.fr.run('run', 'series').returncode, 0)
		with open(os.path.join(tree, 'mm', 'fake.c')) as f:
			self.assertIn('mutation', f.read())
		r = self.fr.run('run', 'pristine')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('FORCE=1', r.stderr)
		# FORCE=1 for the same variant: back to the series as it is
		r = self.fr.run('run', 'series', FORCE=1)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		with open(os.path.join(tree, 'mm', 'fake.c')) as f:
			self.assertNotIn('mutation', f.read())

	# a git KDIR is imported with its history (fetched: git log in
	# build/tree shows its commits), its uncommitted changes and untracked
	# files in one commit on top, its ignored files (build output) left
	# out; a new untracked file is seen by the fingerprint and imported
	# (old: one flattened commit of the tracked files, untracked ones
	# neither imported nor fingerprinted)
	def test_git_kdir_is_imported_with_history(self):
		env = dict(self.fr.env(), GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
			   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
		kdir = self.fr.kdir
		with open(os.path.join(kdir, '.gitignore'), 'w') as f:
			f.write('*.o\n')
		for c in (['init', '-q'], ['add', '-A'], ['commit', '-qm', 'linux: first'],
			  ['commit', '-q', '--allow-empty', '-m', 'mm: second']):
			subprocess.run(['git', '-C', kdir] + c, env=env, check=True)
		with open(os.path.join(kdir, 'mm', 'Kconfig'), 'a') as f:
			f.write('# uncommitted\n')
		for n, text in (('untracked.c', 'int untracked;\n'), ('mm/fake.o', 'obj\n')):
			with open(os.path.join(kdir, n), 'w') as f:
				f.write(text)
		r = self.fr.run('run', 'series')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		tree = os.path.join(self.fr.build, 'tree')
		log = subprocess.run(['git', '-C', tree, 'log', '--format=%s'], capture_output=True,
				     text=True, check=True).stdout.splitlines()
		self.assertEqual(log[-2:], ['mm: second', 'linux: first'])
		self.assertIn('mm: fake change', log)
		self.assertTrue(os.path.exists(os.path.join(tree, 'untracked.c')))
		self.assertFalse(os.path.exists(os.path.join(tree, 'mm', 'fake.o')))
		with open(os.path.join(tree, 'mm', 'Kconfig')) as f:
			self.assertIn('# uncommitted', f.read())
		with open(os.path.join(kdir, 'new.c'), 'w') as f:
			f.write('int new;\n')
		r = self.fr.run('run', 'series')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertTrue(os.path.exists(os.path.join(tree, 'new.c')))
		# the user's tree is read, not written
		st = subprocess.run(['git', '-C', kdir, 'status', '--porcelain'], capture_output=True,
				    text=True, check=True).stdout.split()
		self.assertEqual(sorted(st), sorted(['M', 'mm/Kconfig', '??', 'new.c', '??',
						     'untracked.c']))

	# KDIR_DEPTH=N: only the last N commits of a git KDIR's history; a bad
	# value is one line
	def test_git_kdir_depth(self):
		env = dict(self.fr.env(), GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
			   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
		for c in (['init', '-q'], ['add', '-A'], ['commit', '-qm', 'linux: first'],
			  ['commit', '-q', '--allow-empty', '-m', 'mm: second']):
			subprocess.run(['git', '-C', self.fr.kdir] + c, env=env, check=True)
		r = self.fr.run('run', 'asis', KDIR_DEPTH=1)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		log = subprocess.run(['git', '-C', os.path.join(self.fr.build, 'tree'), 'log',
				      '--format=%s'], capture_output=True, text=True,
				     check=True).stdout.splitlines()
		self.assertEqual(log, ['mm-kunit: suites overlay', 'mm: second'])
		r = self.fr.run('run', 'asis', KDIR_DEPTH='all')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
		self.assertIn('KDIR_DEPTH', r.stderr)

	# no git gc --auto outlives a run: the commits of an assembly used to
	# start one in the background after a kernel import (its 80 000 loose
	# objects), and the next run removed its locks as stale; here a
	# gc.auto of 1 in build/linux.git's config stands for those objects
	def test_no_background_gc_after_a_run(self):
		self.assertEqual(self.fr.run('run', 'series').returncode, 0)
		gd = os.path.join(self.fr.build, 'linux.git')
		subprocess.run(['git', '--git-dir', gd, 'config', 'gc.auto', '1'], check=True)
		# gc --auto counts the loose objects in objects/17/ only: put two there
		found = []
		for i in range(100000):
			body = f'loose {i}\n'.encode()
			if hashlib.sha1(b'blob %d\0' % len(body) + body).hexdigest().startswith('17'):
				found.append(body)
				if len(found) == 2:
					break
		for body in found:
			subprocess.run(['git', '--git-dir', gd, 'hash-object', '-w', '--stdin'],
				       input=body, capture_output=True, check=True)
		r = self.fr.run('run', 'pristine')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

		def packed():
			return os.path.exists(os.path.join(gd, 'gc.pid')) or any(
				n.endswith('.pack') for n in os.listdir(os.path.join(gd, 'objects', 'pack')))
		self.assertFalse(self.fr.wait_for(packed, timeout=5))

	# commit.gpgsign and hooks in the user's git config do not reach git am
	# (old: git am / git commit failed with the user's signing program)
	def test_user_git_config_cannot_break_assembly(self):
		home = os.path.join(self.tmp.name, 'home')
		hooks = os.path.join(home, 'hooks')
		os.makedirs(hooks)
		with open(os.path.join(home, '.gitconfig'), 'w') as f:
			f.write(f'[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n'
				f'[core]\n\thooksPath = {hooks}\n')
		for h in ('applypatch-msg', 'pre-commit', 'commit-msg'):
			with open(os.path.join(hooks, h), 'w') as f:
				f.write('#!/bin/sh\nexit 1\n')
			os.chmod(os.path.join(hooks, h), 0o755)
		r = self.fr.run('run', 'series', HOME=home, XDG_CONFIG_HOME=os.path.join(home, 'x'))
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


def mail(n: int, total: int, subject: str, diff: str) -> str:
	"""One git format-patch mail of an mbox; no diff: a cover letter."""
	head = fakerepo.PATCH.split('\n---\n')[0].replace('[PATCH] mm: fake change',
								  f'[PATCH {n}/{total}] {subject}')
	return head + '\n---\n' + diff + '--\n2.39.5\n\n'


def fake_diff(old: str, new: str, line: int = 1) -> str:
	"""A diff of mm/fake.c: @new after its last line, @old at @line."""
	return (' mm/fake.c | 1 +\n\ndiff --git a/mm/fake.c b/mm/fake.c\n--- a/mm/fake.c\n'
		f'+++ b/mm/fake.c\n@@ -{line} +{line},2 @@\n {old}\n+{new}\n')


class TestSeriesMbox(RunCase):
	"""SERIES=path/to/series.mbx (what b4 am writes) instead of patches/series."""

	def write_mbox(self, second: str = 'int mbox_two;', first_context: str = 'int fake;'):
		path = os.path.join(self.tmp.name, 'v2.mbx')
		with open(path, 'w') as f:
			f.write(mail(0, 2, 'mm: a posted series', 'A cover letter: no diff.\n\n') +
				mail(1, 2, 'mm: mbox one', fake_diff(first_context, 'int mbox_one;')) +
				mail(2, 2, 'mm: mbox two', fake_diff('int mbox_one;', second, 2)))
		return path

	def tree_log(self):
		return subprocess.run(['git', '-C', os.path.join(self.fr.build, 'tree'), 'log',
				       '--format=%s'], capture_output=True, text=True,
				      check=True).stdout.splitlines()

	def fake_c(self):
		with open(os.path.join(self.fr.build, 'tree', 'mm', 'fake.c')) as f:
			return f.read()

	# the mbox's mails are applied with git am in place of patches/series,
	# its cover letter left out; a changed mbox reassembles the tree
	# (old: SERIES= was ignored, patches/series applied)
	def test_mbox_is_applied_instead_of_patches_series(self):
		mbox = self.write_mbox()
		r = self.fr.run('run', 'series', SERIES=mbox)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertEqual(self.tree_log()[:3], ['mm-kunit: suites overlay', 'mm: mbox two',
						       'mm: mbox one'])
		self.assertNotIn('mm: fake change', self.tree_log())
		self.assertIn('no diff, left out: mm: a posted series', r.stdout)
		self.assertIn(f'2 patches of SERIES={mbox}', r.stdout)
		self.assertIn('mbox_two', self.fake_c())
		self.write_mbox(second='int mbox_two_v3;')
		r = self.fr.run('run', 'series', SERIES=mbox)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn('mbox_two_v3', self.fake_c())
		# without SERIES=, patches/series again
		r = self.fr.run('run', 'series')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn('mm: fake change', self.tree_log())

	# APPLIED= says which groups the mbox carries; without it
	# expected-before is off and the run says so (old: the groups of
	# patches/series were assumed whatever was applied)
	def test_mbox_expected_before_follows_applied(self):
		with open(os.path.join(self.fr.repo, 'patches', 'expected-before'), 'w') as f:
			f.write('demo.demo_fail fake\n')
		mbox = self.write_mbox()
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='none', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		st = self.read_stage()
		self.assertEqual(st['applied'], [])
		self.assertEqual(st['cases']['demo.demo_fail']['verdict'], 'pass')
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='fake', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertEqual(self.read_stage()['cases']['demo.demo_fail']['reason'], 'kunit: FAIL')
		r = self.fr.run('run', 'series', SERIES=mbox, FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertIn('expected-before off: APPLIED= not given', r.stdout)
		st = self.read_stage()
		self.assertIsNone(st['applied'])
		self.assertIn('APPLIED= not given', st['cases']['demo.demo_fail']['reason'])
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='nosuch')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('nosuch is not a group', r.stderr)

	def add_hooks(self):
		"""Two test hooks of group fake: one applies after the mbox, one not."""
		hd = os.path.join(self.fr.repo, 'patches', 'fake', 'hooks')
		os.makedirs(hd)
		for name, diff in (('0001-mm-hook-good.patch', fake_diff('int mbox_two;', 'int hook_one;', 3)),
				   ('0002-mm-hook-bad.patch', fake_diff('int not_there;', 'int hook_two;'))):
			with open(os.path.join(hd, name), 'w') as f:
				f.write(mail(1, 1, name[5:-6].replace('-', ' '), diff))
		with open(os.path.join(self.fr.repo, 'patches', 'series'), 'a') as f:
			f.write('fake/hooks/0001-mm-hook-good.patch\nfake/hooks/0002-mm-hook-bad.patch\n')

	# HOOKS=auto (the default with SERIES=): the hooks of the APPLIED= groups
	# are tried after the mails, those that do not apply are named and left
	# out; HOOKS=required refuses; HOOKS=none applies none (old: no hooks)
	def test_mbox_gets_the_hooks_that_apply(self):
		self.add_hooks()
		mbox = self.write_mbox()
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='fake')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn('test hook patches/fake/hooks/0002-mm-hook-bad.patch does not apply: '
			      'left out', r.stdout)
		self.assertIn('hook_one', self.fake_c())
		st = self.read_stage()
		self.assertEqual(st['hooks'], {'mode': 'auto',
					       'applied': ['fake/hooks/0001-mm-hook-good.patch'],
					       'not_applied': ['fake/hooks/0002-mm-hook-bad.patch']})
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='fake', HOOKS='required')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('HOOKS=required: 1 test hook(s) do not apply', r.stderr)
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='fake', HOOKS='none')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertNotIn('hook_one', self.fake_c())
		self.assertNotIn('mm: hook good', self.tree_log())
		r = self.fr.run('run', 'nohooks', SERIES=mbox)
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('nohooks is our series without its test hooks', r.stderr)

	# make test SERIES=: checkpatch on the mbox's mails, the suites on the
	# mbox's kernel (and its races boot) and on the base (old: patches/series)
	def test_make_test_takes_the_mbox(self):
		mbox = self.write_mbox()
		r = self.fr.run('test', SERIES=mbox, APPLIED='fake')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			stages = {st['name']: st for st in json.load(f)['stages']}
		self.assertEqual([os.path.basename(c['name']) for c in stages['checkpatch']['cases']
				  if c['name'].endswith('.patch')],
				 ['0001-mm-mbox-one.patch', '0002-mm-mbox-two.patch'])
		self.assertEqual(stages['series']['applied'], ['fake'])
		self.assertEqual(stages['pristine']['applied'], [])
		self.assertIn(f'series: tree build/tree, 2 patches of SERIES={mbox}', r.stdout)
		self.assertIn('races: tree build/tree, 2 patches of SERIES=', r.stdout)

	def read_stage(self):
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			st = json.load(f)['stages'][0]
		st['cases'] = {c['name']: c for c in st['cases']}
		return st

	# a mail that does not apply is named with its mbox (exit 3: the
	# series' own outcome, docs/kernel-ci.rst); a missing mbox is one line
	# (old: SERIES= ignored, exit 0)
	def test_mbox_errors_are_one_line(self):
		mbox = self.write_mbox(first_context='int not_there;')
		r = self.fr.run('run', 'series', SERIES=mbox)
		self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
		self.assertIn(f'patch 1/2 0001-mm-mbox-one.patch of SERIES={mbox} does not apply',
			      r.stderr.strip().splitlines()[-1])
		self.assertNotIn('Traceback', r.stderr)
		r = self.fr.run('run', 'series', SERIES=mbox + '.missing')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
		self.assertIn('is not a file', r.stderr)


class TestAsis(RunCase):
	# VARIANT=asis: KDIR exactly as it is (no patch of patches/series), the
	# suites' overlay and hooks added; APPLIED= decides expected-before,
	# without it the run says expected-before is off (old: no such variant)
	def test_asis_tests_kdir_as_it_is(self):
		with open(os.path.join(self.fr.repo, 'patches', 'expected-before'), 'w') as f:
			f.write('demo.demo_fail fake\n')
		with open(os.path.join(self.fr.kdir, 'mm', 'fake.c'), 'a') as f:
			f.write('int kdir_local;\n')
		r = self.fr.run('run', 'asis', APPLIED='none', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		tree = os.path.join(self.fr.build, 'tree')
		with open(os.path.join(tree, 'mm', 'fake.c')) as f:
			self.assertEqual(f.read(), 'int fake;\nint kdir_local;\n')
		self.assertTrue(os.path.isfile(os.path.join(tree, 'mm', 'tests', 'Kconfig')))
		with open(os.path.join(tree, 'mm', 'Kconfig')) as f:
			self.assertIn('source "mm/tests/Kconfig"', f.read())
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			st = json.load(f)['stages'][0]
		self.assertEqual((st['name'], st['applied']), ('asis', []))
		self.assertEqual({c['name']: c['verdict'] for c in st['cases']}['demo.demo_fail'],
				 'pass')
		r = self.fr.run('run', 'asis', APPLIED='fake', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		r = self.fr.run('run', 'asis', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertIn('asis: expected-before off: APPLIED= not given', r.stdout)
		r = self.fr.run('run', 'asis', KDIR='')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertEqual(r.stderr.strip(), 'mmkunit: error: VARIANT=asis tests KDIR as it is: '
				 'set KDIR=/path/to/your/linux')
		# APPLIED= with a variant whose groups patches/series knows
		r = self.fr.run('run', 'series', APPLIED='none')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('APPLIED= is for VARIANT=asis and SERIES=', r.stderr)


class TestFailures(RunCase):
	# a failed build never boots an older kernel: the races stage after a
	# failed series build used to boot the previous bzImage and report it
	def test_failed_build_then_races_stage_boots_nothing(self):
		r = self.fr.run('test', FAKE_KERNEL_ID='old')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		booted = len(self.fr.booted())
		r = self.fr.run('test', FAKE_BUILD_FAIL=1)
		self.assertEqual(self.fr.booted()[booted:], [])
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertRegex(r.stdout.strip().splitlines()[-1], LAST_LINE)
		self.assertIn('races', r.stdout)
		self.assertFalse(os.path.exists(os.path.join(self.fr.build, 'out', 'series',
							     'arch/x86/boot/bzImage')))

	# a failed build of `run` is exit 2 (infrastructure), the reason on one line
	def test_failed_build_is_exit_2(self):
		r = self.fr.run('run', 'series', FAKE_BUILD_FAIL=1)
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('build failed', r.stderr)

	# an OS error (here build/out is a file; a full disk is the same path)
	# is one line and exit 2 (old: a Python traceback, exit 1)
	def test_os_error_is_one_line(self):
		os.makedirs(self.fr.build)
		open(os.path.join(self.fr.build, 'out'), 'w').close()
		r = self.fr.run('run', 'series')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertNotIn('Traceback', r.stderr)
		self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
		self.assertIn('build/out', r.stderr)

	def test_failed_case_is_exit_1(self):
		r = self.fr.run('run', 'series', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertRegex(r.stdout.strip().splitlines()[-1], LAST_LINE)


class TestExitThroughMake(RunCase):
	# .ci/run (make test) exits with the runner's code: 1 for a failed case
	# (old: make turned it into 2)
	def test_ci_run_keeps_the_exit_code(self):
		if self.fr.run('deps').returncode != 0:
			self.skipTest('host packages missing (make deps)')
		env = self.fr.env(FAKE_FAIL=1)
		r = subprocess.run([os.path.join(self.fr.repo, '.ci', 'run')], env=env,
				   capture_output=True, text=True, timeout=300)
		self.assertEqual(r.returncode, 1, r.stdout[-2000:] + r.stderr)
		self.assertRegex(r.stdout.strip().splitlines()[-1], LAST_LINE)
		r = subprocess.run(['make', '-C', self.fr.repo, 'run'], env=env,
				   capture_output=True, text=True, timeout=300)
		self.assertEqual(r.returncode, 2)
		self.assertIn('Error 1', r.stderr)


class TestProgress(RunCase):
	# a silent build prints a heartbeat with the elapsed time (old: nothing)
	def test_heartbeat_during_build(self):
		r = self.fr.run('run', 'series', FAKE_BUILD_SLEEP=3, MMKUNIT_HEARTBEAT=1)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertRegex(r.stdout, r'series: building, \d+ s elapsed')
		self.assertRegex(r.stdout, r'\[\d\d:\d\d:\d\d\] .*series')

	# BUILD_TIMEOUT=: a hung build is killed and reported as a timeout
	# (old: no build timeout below 3600 s)
	def test_build_timeout(self):
		t0 = time.monotonic()
		r = self.fr.run('run', 'series', FAKE_BUILD_SLEEP=60, BUILD_TIMEOUT=2)
		self.assertLess(time.monotonic() - t0, 40)
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('timed out after 2 s', r.stderr)
		self.assertFalse(alive(self.child_pid()))

	# JOBS defaults to the CPUs this process may run on (old: os.cpu_count())
	def test_jobs_from_cpu_affinity(self):
		if len(os.sched_getaffinity(0)) < 2:
			self.skipTest('needs 2 CPUs to tell affinity from cpu_count')
		p = subprocess.run(self.fr.cmd('run', 'series'), env=self.fr.env(), cwd=self.fr.repo,
				   capture_output=True, text=True, timeout=120,
				   preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}))
		self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
		build = [c for c in self.fr.calls() if c[2] == 'build'][0]
		self.assertIn('--jobs=1', build)


class TestReports(RunCase):
	def read_summary(self):
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			return json.load(f)

	# every stage has its own output directory: the races stage used to
	# overwrite the series stage's results.json, test.log and mmkunit.log
	def test_each_stage_has_its_own_directory(self):
		r = self.fr.run('test')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		out = os.path.join(self.fr.build, 'out')
		with open(os.path.join(out, 'series', 'results.json')) as f:
			self.assertIn('demo', f.read())
		with open(os.path.join(out, 'races', 'results.json')) as f:
			self.assertIn('lockless_read_race', f.read())
		with open(os.path.join(out, 'series', 'test.log')) as f:
			self.assertIn('demo_pass', f.read())

	# a disk with less free space than make test writes into build/: one
	# warning line first that says so, and the run goes on
	def test_low_disk_warned(self):
		r = self.fr.run('test', MMKUNIT_TEST_DISK_GB='1e12')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertRegex(r.stdout + r.stderr, r'warning: only [\d.]+ GB free for .*writes about '
				 r'1e\+12 GB into build/')
		r = self.fr.run('test', MMKUNIT_TEST_DISK_GB='0')
		self.assertNotIn('GB free', r.stdout + r.stderr)

	# the races stage boots for the slow cases of every race suite only
	# (old: one suite's glob and no speed filter, so shmem_read's slow
	# truncate race ran nowhere)
	def test_races_stage_runs_only_slow_race_cases(self):
		r = self.fr.run('test')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		execs = [c for c in self.fr.calls() if c[2] == 'exec']
		self.assertEqual(len(execs), 3, execs)	# series, races, pristine
		self.assertIn('--filter=speed>slow', execs[0])
		self.assertIn('--filter=speed=slow', execs[1])
		self.assertIn('*_race', execs[1])
		self.assertNotIn('--filter=speed>slow', execs[1])

	# summary.json: per case kunit's status, our verdict and its reason;
	# an expected-before failure, a splat and a stopped guest are in it
	def test_summary_json_verdicts(self):
		with open(os.path.join(self.fr.repo, 'patches', 'expected-before'), 'w') as f:
			f.write('demo.demo_fail fake\n')
		r = self.fr.run('test', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		s = self.read_summary()
		self.assertEqual(s['exit_code'], 1)
		stages = {st['name']: st for st in s['stages']}
		self.assertEqual(list(stages), ['host tools', 'checkpatch', 'series', 'races',
						'pristine'])
		for st in stages.values():
			self.assertIn('seconds', st)
		pri = {c['name']: c for c in stages['pristine']['cases']}
		self.assertEqual(pri['demo.demo_fail']['status'], 'FAIL')
		self.assertEqual(pri['demo.demo_fail']['verdict'], 'pass')
		self.assertIn('expected-before', pri['demo.demo_fail']['reason'])
		ser = {c['name']: c for c in stages['series']['cases']}
		self.assertEqual(ser['demo.demo_fail']['verdict'], 'fail')
		self.assertEqual(ser['demo.demo_skip']['verdict'], 'skip')
		counts = s['counts']
		self.assertEqual(r.stdout.strip().splitlines()[-1],
				 f'{counts["passed"]} passed, {counts["failed"]} failed, '
				 f'{counts["skipped"]} skipped')

	def test_summary_splat_and_stopped_guest(self):
		r = self.fr.run('run', 'series', FAKE_SPLAT=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		st = self.read_summary()['stages'][0]
		self.assertTrue(any(c['reason'].startswith('splat') for c in st['cases']), st)
		r = self.fr.run('run', 'series', FAKE_STOP=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		st = self.read_summary()['stages'][0]
		self.assertTrue(any('stopped guest' in c['reason'] for c in st['cases']), st)

	# the JUnit file opens in a standard consumer: Debian's python3-junitparser
	# (make deps installs it), run by whichever python has it (a pyenv
	# python first on PATH does not see Debian's dist-packages)
	def test_junit_opens_in_junitparser(self):
		python = junitparser_python()
		if not python:
			self.skipTest('python3-junitparser not installed (make deps installs it)')
		with open(os.path.join(self.fr.repo, 'patches', 'expected-before'), 'w') as f:
			f.write('demo.demo_fail fake\n')
		r = self.fr.run('test', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		j = subprocess.run([python, '-c', JUNIT_READER,
				    os.path.join(self.fr.build, 'results', 'junit.xml')],
				   capture_output=True, text=True, timeout=60)
		self.assertEqual(j.returncode, 0, j.stderr)
		suites = json.loads(j.stdout)
		self.assertEqual(list(suites), ['host tools', 'checkpatch', 'series', 'races',
						'pristine'])
		pri = suites['pristine']
		self.assertEqual(pri['cases']['demo.demo_fail'], 'passed')
		self.assertEqual(pri['cases']['demo.demo_skip'], 'skipped')
		self.assertIn('seconds', pri['props'])
		self.assertEqual(suites['series']['cases']['demo.demo_fail'], 'failure: kunit: FAIL')
		self.assertEqual(suites['series']['failures'], 1)
		self.assertEqual(suites['races']['cases'], {'lockless_read_race.race_ok': 'passed'})


JUNIT_READER = """
import json, sys
import junitparser
out = {}
for s in junitparser.JUnitXml.fromfile(sys.argv[1]):
	cases = {}
	for c in s:
		if c.is_passed:
			cases[c.name] = 'passed'
		elif c.is_skipped:
			cases[c.name] = 'skipped'
		else:
			cases[c.name] = ' '.join(f'{r._tag}: {r.message}' for r in c.result)
	out[s.name] = {'cases': cases, 'failures': s.failures,
		       'props': {p.name: p.value for p in s.properties()}}
print(json.dumps(out))
"""


def junitparser_python() -> str:
	"""An interpreter that can import junitparser, or ''."""
	for py in (sys.executable, '/usr/bin/python3'):
		if os.path.exists(py) and subprocess.run(
				[py, '-c', 'import junitparser'], capture_output=True).returncode == 0:
			return py
	return ''


GUEST_LOG = '''[    0.500000] KTAP version 1
[    0.500000] 1..1
[    0.600000]     KTAP version 1
[    0.600000]     # Subtest: demo
[    0.600000]     # module: demo_kunit
[    0.600000]     1..2
[    0.700000]     ok 1 demo_pass
[    0.700000]     # demo_new: EXPECTATION FAILED at mm/tests/demo.c:10
[    0.700000]     not ok 2 demo_new
[    0.800000] not ok 1 demo
'''


class TestJudge(RunCase):
	# mmkunit.py judge LOG --applied=GROUPS: the verdicts of a kernel built
	# and booted elsewhere (old: no such command)
	def judge(self, log_text, *args):
		kdir = os.environ.get('MMKUNIT_KUNIT_DIR') or os.path.join(
			fakerepo.REPO, 'build', 'tree', 'tools', 'testing', 'kunit')
		if not os.path.isfile(os.path.join(kdir, 'kunit_parser.py')):
			self.skipTest('no kunit_parser.py (make tree, or MMKUNIT_KUNIT_DIR)')
		log = os.path.join(self.tmp.name, 'guest', 'test.log')
		os.makedirs(os.path.dirname(log), exist_ok=True)
		with open(log, 'w') as f:
			f.write(log_text)
		r = self.fr.run('judge', log, '--kunit-dir', kdir, *args)
		summary = None
		p = os.path.join(os.path.dirname(log), 'summary.json')
		if os.path.exists(p):
			with open(p) as f:
				summary = json.load(f)
		return r, summary

	def setUp(self):
		super().setUp()
		with open(os.path.join(self.fr.repo, 'patches', 'expected-before'), 'w') as f:
			f.write('demo.demo_new fake\n')

	def test_judge_pristine_and_series(self):
		r, s = self.judge(GUEST_LOG, '--applied=none')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		cases = {c['name']: c for c in s['stages'][0]['cases']}
		self.assertEqual(cases['demo.demo_new']['status'], 'FAIL')
		self.assertEqual(cases['demo.demo_new']['verdict'], 'pass')
		self.assertEqual(r.stdout.strip().splitlines()[-1], '2 passed, 0 failed, 0 skipped')
		r, s = self.judge(GUEST_LOG, '--applied=fake')
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertEqual(r.stdout.strip().splitlines()[-1], '1 passed, 1 failed, 0 skipped')

	def test_judge_splat_and_bad_group(self):
		r, s = self.judge(GUEST_LOG + '[    0.900000] BUG: KASAN: use-after-free in x\n',
				  '--applied=none')
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertIn('guest.splat', [c['name'] for c in s['stages'][0]['cases']])
		r, _ = self.judge(GUEST_LOG, '--applied=nosuch')
		self.assertEqual(r.returncode, 2)
		self.assertIn('not a group', r.stderr)


class TestModules(unittest.TestCase):
	# install.py imports only the tree module of the runner (old: all of it)
	def test_install_imports_only_the_tree_module(self):
		scripts = os.path.join(fakerepo.REPO, 'scripts')
		r = subprocess.run([sys.executable, '-c',
				    f'import sys; sys.path.insert(0, {scripts!r}); import install; '
				    'print(" ".join(sorted(m for m in sys.modules '
				    'if m.startswith("mmkunit"))))'],
				   capture_output=True, text=True, timeout=60)
		mods = r.stdout.split()
		self.assertIn('mmkunit.tree', mods)
		self.assertFalse({'mmkunit.kernel', 'mmkunit.judge', 'mmkunit.report',
				  'mmkunit.cli'} & set(mods), mods)


if __name__ == '__main__':
	unittest.main()
