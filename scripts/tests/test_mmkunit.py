# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of the runner's modules (scripts/mmkunit/) and the QEMU
accelerator choice."""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from mmkunit import cli, common, deps, judge, kernel, proc, report, tree  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakerepo  # noqa: E402


load_qemu_config = kernel.load_qemu_config


class TestResults(unittest.TestCase):
	JSON = {'name': 'KUnit Test Group', 'sub_groups': [
		{'name': 'lazyfree_thp', 'sub_groups': [
			{'name': 'extra_ref', 'sub_groups': [],
			 'test_cases': [{'name': 'gup-pin', 'status': 'PASS'},
					{'name': 'folio-ref', 'status': 'FAIL'}]}],
		 'test_cases': [{'name': 'clean', 'status': 'PASS'},
				{'name': 'droppable', 'status': 'SKIP'}]}],
		'test_cases': []}

	def test_count_json_flattens_params(self):
		r = judge.count_json(self.JSON)
		self.assertEqual(r, {'lazyfree_thp.clean': 'PASS',
				     'lazyfree_thp.droppable': 'SKIP',
				     'lazyfree_thp.extra_ref.gup-pin': 'PASS',
				     'lazyfree_thp.extra_ref.folio-ref': 'FAIL'})

	def test_judge_counts(self):
		c, notes = judge.judge(judge.count_json(self.JSON), [], {})
		self.assertEqual(c, {'passed': 2, 'failed': 1, 'skipped': 1})
		self.assertIn('folio-ref', notes[0])

	def test_expected_before_fail_is_a_pass_without_the_group(self):
		res = {'s.new': 'FAIL', 's.old': 'PASS'}
		c, notes = judge.judge(res, [], {'s.new': 'lazyfree-thp'})
		self.assertEqual(c, {'passed': 2, 'failed': 0, 'skipped': 0})
		self.assertIn('as expected', notes[0])

	def test_expected_before_pass_without_the_group_fails(self):
		c, notes = judge.judge({'s.new': 'PASS'}, [], {'s.new': 'lazyfree-thp'})
		self.assertEqual(c['failed'], 1)
		self.assertIn('does not see the patch', notes[0])

	def test_expected_before_with_the_group_must_pass(self):
		c, _ = judge.judge({'s.new': 'FAIL'}, ['lazyfree-thp'],
				     {'s.new': 'lazyfree-thp'})
		self.assertEqual(c['failed'], 1)

	def test_expected_before_covers_params(self):
		c, _ = judge.judge({'s.new.p1': 'FAIL'}, [], {'s.new': 'g'})
		self.assertEqual(c['passed'], 1)

	def test_expected_before_case_that_did_not_run_fails(self):
		c, notes = judge.judge({'s.other': 'PASS'}, [], {'s.gone': 'g'},
					 require_listed=True)
		self.assertEqual(c['failed'], 1)
		self.assertIn('did not run', notes[0])
		c, _ = judge.judge({'s.other': 'PASS'}, [], {'s.gone': 'g'})
		self.assertEqual(c['failed'], 0)

	# groups not known (VARIANT=asis, SERIES= without APPLIED=): a listed
	# case is judged by its kunit status and says that expected-before is off
	def test_expected_before_off_without_applied(self):
		cases = {c['name']: c for c in judge.judge_cases(
			{'s.new': 'FAIL', 's.ok': 'PASS', 's.old': 'PASS'}, None,
			{'s.new': 'g', 's.ok': 'g'})}
		self.assertEqual(cases['s.new']['verdict'], 'fail')
		self.assertIn('APPLIED= not given', cases['s.new']['reason'])
		self.assertEqual(cases['s.ok']['verdict'], 'pass')
		self.assertEqual(cases['s.old']['reason'], '')

	def test_load_expected_before(self):
		with tempfile.NamedTemporaryFile('w', delete=False) as f:
			f.write('# comment\ns.a  grp  # why\n\nbad line here x\n')
		try:
			self.assertEqual(judge.load_expected_before(f.name), {'s.a': 'grp'})
		finally:
			os.unlink(f.name)


class TestGuestLog(unittest.TestCase):
	def test_splats_found(self):
		log = ['[    1.0] ok 1 lazyfree_thp\n',
		       '[    2.0] WARNING: CPU: 0 PID: 1 at mm/rmap.c:10 f+0x1\n',
		       '[    2.1] BUG: KASAN: use-after-free in foo\n',
		       '[    2.2] WARNING: possible circular locking dependency detected\n',
		       '[    2.3] rcu: INFO: rcu_preempt self-detected stall on CPU\n',
		       'WARNING: CPU: 1 PID: 46 at lib/kunit/user_alloc.c:80 kunit_vm_mmap_free+0x1\n']
		self.assertEqual(len(judge.scan_splats(log)), 5)

	def test_ktap_lines_are_not_splats(self):
		log = ['    # lazyfree_thp_clean: EXPECTATION FAILED at x.c:1\n',
		       'ok 1 lazyfree_thp\n', '    KTAP version 1\n',
		       'rcu: \tRCU lockdep checking is enabled.\n',
		       'Lock dependency validator: Copyright (c) 2006 Red Hat, Inc.\n']
		self.assertEqual(judge.scan_splats(log), [])

	def test_running_when_stopped(self):
		log = ['KTAP version 1\n', '1..2\n', '    # Subtest: first\n',
		       '    ok 1 a\n', 'ok 1 first\n', '    # Subtest: second\n',
		       '        # Subtest: param_case\n', '        ok 1 p1\n']
		self.assertEqual(judge.running_when_stopped(log), 'second / param_case')

	def test_nothing_running_after_a_complete_run(self):
		log = ['KTAP version 1\n', '1..1\n', '    # Subtest: first\n',
		       '    ok 1 a\n', 'ok 1 first\n']
		self.assertIsNone(judge.running_when_stopped(log))


alive = fakerepo.alive


class TestTimeout(unittest.TestCase):
	def test_hung_stage_is_killed_with_its_children(self):
		with tempfile.TemporaryDirectory() as d:
			pidfile = os.path.join(d, 'child')
			# A parent that waits on a child that never ends, like
			# kunit.py waiting on a hung QEMU.
			cmd = ['sh', '-c', f'sleep 300 & echo $! > {pidfile}; wait']
			with open(os.path.join(d, 'log'), 'w') as log:
				t0 = time.monotonic()
				r = proc.run(cmd, cwd=d, log=log, echo=False, timeout=1)
			self.assertTrue(r.timed_out)
			self.assertFalse(r.ok)
			self.assertLess(time.monotonic() - t0, 30)
			with open(pidfile) as f:
				child = int(f.read())
			self.assertFalse(alive(child), 'the hung child survived the timeout')

	# an exception in the caller (^C arrives as KeyboardInterrupt while
	# proc.run waits) kills the child's whole group
	def test_exception_kills_the_group(self):
		with tempfile.TemporaryDirectory() as d:
			pidfile = os.path.join(d, 'child')
			cmd = ['sh', '-c', f'sleep 300 & echo $! > {pidfile}; wait']

			def progress():
				raise KeyboardInterrupt
			with mock.patch.dict(os.environ, {'MMKUNIT_HEARTBEAT': '0.5'}):
				with self.assertRaises(KeyboardInterrupt):
					proc.run(cmd, cwd=d, echo=False, label='x', progress=progress)
			with open(pidfile) as f:
				child = int(f.read())
			self.assertFalse(alive(child), 'the child survived the exception')


class TestTreeAndSeries(unittest.TestCase):
	def test_kernel_version(self):
		with tempfile.TemporaryDirectory() as d:
			self.assertIsNone(tree.kernel_version(d))
			os.makedirs(os.path.join(d, 'mm'))
			os.makedirs(os.path.join(d, 'tools/testing/kunit'))
			open(os.path.join(d, 'tools/testing/kunit/kunit.py'), 'w').close()
			with open(os.path.join(d, 'Makefile'), 'w') as f:
				f.write('# SPDX\nVERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n')
			self.assertEqual(tree.kernel_version(d), (7, 3))

	# (in a copy of the runner: make test runs these tests while it holds
	# this checkout's build/ lock, which assemble here would wait for)
	def test_kdir_not_a_kernel_tree_is_one_clear_error(self):
		with tempfile.TemporaryDirectory() as d:
			fr = fakerepo.FakeRepo(os.path.join(d, 'fake'))
			r = subprocess.run(fr.cmd('assemble', 'series'), env=fr.env(KDIR=d),
					   capture_output=True, text=True, timeout=60)
			self.assertEqual(r.returncode, 2)
			self.assertIn('is not a kernel tree', r.stderr)
			self.assertEqual(len(r.stderr.strip().splitlines()), 1)

	def test_user_tree_fingerprint_sees_uncommitted_changes(self):
		with tempfile.TemporaryDirectory() as d:
			env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
				   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
			with open(os.path.join(d, 'f'), 'w') as f:
				f.write('a\n')
			for c in (['init', '-q'], ['add', 'f'], ['commit', '-qm', 'x']):
				subprocess.run(['git', '-C', d] + c, env=env, check=True)
			before = tree.tree_state(d)
			with open(os.path.join(d, 'f'), 'w') as f:
				f.write('b\n')
			self.assertNotEqual(tree.tree_state(d), before)

	def test_plain_tree_fingerprint_sees_a_new_file(self):
		with tempfile.TemporaryDirectory() as d:
			before = tree.tree_state(d)
			open(os.path.join(d, 'new'), 'w').close()
			self.assertNotEqual(tree.tree_state(d), before)

	def test_series_file(self):
		with tempfile.NamedTemporaryFile('w', delete=False) as f:
			f.write('# head\na/1.patch\n\n  b/2.patch  # note\n')
		try:
			self.assertEqual(tree.read_series(f.name), ['a/1.patch', 'b/2.patch'])
		finally:
			os.unlink(f.name)

	def test_repo_series_names_existing_patches_in_group_order(self):
		series = tree.read_series()
		self.assertTrue(series)
		for p in series:
			self.assertTrue(os.path.isfile(os.path.join(REPO, 'patches', p)), p)
		order = ['lazyfree-thp', 'rcu-free', 'shmem-batch']
		groups = [tree.group_of(p) for p in series]
		self.assertEqual(groups, sorted(groups, key=order.index))

	# (every suite lives in mm/tests, beside the code it tests: the hooks
	# touch mm/Kconfig and mm/Makefile only)
	def test_hooks_idempotent_and_anchored(self):
		with tempfile.TemporaryDirectory() as d:
			os.makedirs(os.path.join(d, 'mm'))
			with open(os.path.join(d, 'mm', 'Kconfig'), 'w') as f:
				f.write('menu "x"\nconfig A\n\tbool\n\nendmenu\n')
			with open(os.path.join(d, 'mm', 'Makefile'), 'w') as f:
				f.write('obj-y += a.o\n')
			self.assertEqual(sorted(tree.apply_hooks(d)), ['mm/Kconfig', 'mm/Makefile'])
			self.assertEqual(tree.apply_hooks(d), [])
			with open(os.path.join(d, 'mm', 'Kconfig')) as f:
				k = f.read()
			src = 'source "mm/tests/Kconfig"'
			self.assertLess(k.index(src), k.index('endmenu'))
			self.assertEqual(k.count(src), 1)
			with open(os.path.join(d, 'mm', 'Makefile')) as f:
				self.assertEqual(f.read().count('obj-y += tests/'), 1)

	# series-check: PASS -> not PASS between built prefixes is a regression,
	# an unbuilt prefix is reported and skipped, first passing patch per case
	def test_series_check_matrix(self):
		rows = [{'k': 0, 'patch': 'pristine 7.3', 'built': True,
			 'results': {'s.a': 'FAIL', 's.b': 'PASS', 's.c': 'PASS'}},
			{'k': 1, 'patch': 'g/0001.patch', 'built': True,
			 'results': {'s.a': 'PASS', 's.b': 'PASS', 's.c': 'PASS'}},
			{'k': 2, 'patch': 'g/0002.patch', 'built': False, 'results': {}},
			{'k': 3, 'patch': 'g/0003.patch', 'built': True,
			 'results': {'s.a': 'PASS', 's.b': 'FAIL'}}]
		an = report.analyse_matrix(rows)
		self.assertEqual(an['first_pass'], {'s.a': 1, 's.b': 0, 's.c': 0})
		self.assertEqual(an['not_built'], [2])
		self.assertEqual([(g['case'], g['from'], g['to'], g['status'])
				  for g in an['regressions']],
				 [('s.b', 1, 3, 'FAIL'), ('s.c', 1, 3, 'NOT RUN')])
		text = report.format_matrix(rows, an)
		self.assertIn('REGRESSION: s.b: PASS at 1, FAIL at 3', text)
		self.assertIn('not built', text)
		# an expected-before failure that then passes is no regression
		self.assertFalse(report.analyse_matrix(rows[:2])['regressions'])

	# a parameterised case's parent follows its parameters: kunit_json lists
	# only the parameters (s.p.a, s.p.b) where they run and the parent alone
	# (s.p) where the suite skips it whole, so the parent read "first pass:
	# never" although every parameter passed (rcu_free_drain_streak)
	def test_series_check_matrix_parent_follows_params(self):
		rows = [{'k': 0, 'patch': 'pristine 7.3', 'built': True,
			 'results': {'s.p': 'SKIP', 's.q': 'SKIP'}},
			{'k': 1, 'patch': 'g/0001.patch', 'built': True,
			 'results': {'s.p.a': 'PASS', 's.p.b': 'SKIP', 's.q.a': 'FAIL', 's.q.b': 'PASS'}},
			{'k': 2, 'patch': 'g/0002.patch', 'built': True,
			 'results': {'s.p.a': 'PASS', 's.p.b': 'FAIL', 's.q.a': 'PASS', 's.q.b': 'PASS'}},
			{'k': 3, 'patch': 'g/0003.patch', 'built': True,
			 'results': {'s.p.a': 'SKIP', 's.p.b': 'SKIP', 's.q.a': 'ERROR', 's.q.b': 'PASS'}}]
		an = report.analyse_matrix(rows)
		self.assertEqual([r['results']['s.p'] for r in rows], ['SKIP', 'PASS', 'FAIL', 'SKIP'])
		self.assertEqual([r['results']['s.q'] for r in rows], ['SKIP', 'FAIL', 'PASS', 'ERROR'])
		self.assertEqual(an['first_pass']['s.p'], 1)
		self.assertEqual(an['first_pass']['s.q'], 2)
		self.assertEqual(an['params'], {'s.p': 2, 's.q': 2})
		# a parameter's regression is listed, its parent's not again (s.q at
		# 3); a parent's own is (s.p at 2: s.p.b went from SKIP to FAIL)
		self.assertEqual([(g['case'], g['from'], g['to']) for g in an['regressions']],
				 [('s.p', 1, 2), ('s.p.a', 2, 3), ('s.q.a', 2, 3)])
		text = report.format_matrix(rows, an)
		self.assertIn(' s.p  (first pass: patch 1; from its 2 parameters where they ran)', text)
		self.assertNotIn('s.p  (first pass: never', text)

	# a crashed case (kunit_json's ERROR) is a C cell, not "?" (old: "?")
	def test_series_check_matrix_maps_crashes(self):
		rows = [{'k': 0, 'patch': 'pristine 7.3', 'built': True,
			 'results': {'s.a': 'ERROR', 's.b': 'PASS'}}]
		text = report.format_matrix(rows, report.analyse_matrix(rows))
		self.assertEqual(text.splitlines()[1].split()[-2:], ['C', 'P'])

	# modules-run: /init loads every module and reports insmod's status;
	# only the console after the first insmod mark counts as module KTAP
	def test_modules_initramfs_and_ktap(self):
		init = cli.modules_init_script(['a_kunit', 'b_kunit'])
		self.assertTrue(init.startswith('#!/bin/busybox sh\n'))
		self.assertLess(init.index('insmod /a_kunit.ko'), init.index('insmod /b_kunit.ko'))
		self.assertIn('a_kunit.ko returned $?', init)
		self.assertTrue(init.rstrip().endswith('reboot -f'))
		console = ('KTAP version 1\n1..1\nok 1 builtin\n'
			   + cli.MODULE_MARK + ' a_kunit.ko\nKTAP version 1\n1..1\nok 1 a\n')
		ktap = cli.module_ktap(console)
		self.assertTrue(ktap.startswith(cli.MODULE_MARK))
		self.assertNotIn('builtin', ktap)
		self.assertEqual(cli.module_ktap('no mark here'), '')

	# the stock-kunit.py configs stay in step with the suites' kunitconfigs:
	# mm_suites.config is their union (mm/tests/.kunitconfig alone, since
	# every suite lives in mm/tests), mm_debug.config contains it
	def test_kunitconfigs_in_step(self):
		def syms(rel):
			with open(os.path.join(REPO, rel)) as f:
				return {l.strip() for l in f if l.startswith('CONFIG_')}
		union = set()
		for rel in tree.SUITE_KUNITCONFIGS:
			union |= syms(rel)
		cfg = 'tools/testing/kunit/configs/'
		self.assertEqual(syms(cfg + 'mm_suites.config'), union)
		self.assertLessEqual(union, syms(cfg + 'mm_debug.config'))
		self.assertIn('CONFIG_KASAN=y', syms(cfg + 'mm_debug.config'))
		bench = {l for l in union if l.endswith('_BENCHMARK=y')}
		self.assertTrue(bench)
		self.assertLessEqual(bench, syms(cfg + 'mm_bench.config'))

	# the rcu_free_* suites: one case table each, and docs/rcu-free.rst's
	# case table names the same cases in the same order (suites in the
	# order of the Makefile)
	def test_rcu_free_case_tables_match_docs(self):
		with open(os.path.join(REPO, 'mm/tests/Makefile')) as f:
			make = f.read()
		cases = []
		for name in re.findall(r'(rcu_free_\w+_kunit)\.o', make):
			with open(os.path.join(REPO, 'mm/tests', name + '.c')) as f:
				src = f.read()
			tables = re.findall(r'static struct kunit_case \w+\[\] = \{(.*?)\n\};',
					    src, re.S)
			self.assertEqual(len(tables), 1, name)
			cases += re.findall(r'KUNIT_CASE(?:_PARAM)?\((\w+)', tables[0])
		with open(os.path.join(REPO, 'docs/rcu-free.rst')) as f:
			doc = f.read()
		doc = doc[doc.index('The suites: '):doc.index('Seen failing')]
		documented = re.findall(r'^(rcu_free_\w+)', doc, re.M)
		self.assertGreater(len(cases), 20)
		self.assertEqual(documented, cases)

	@mock.patch.dict(os.environ, {'SERIES': '', 'APPLIED': ''})
	def test_variants(self):
		self.assertEqual(tree.variant_patches('pristine'), [])
		self.assertEqual(tree.variant_patches('series'), tree.read_series())
		self.assertEqual(tree.variant_patches('upto:1'), tree.read_series()[:1])
		with self.assertRaises(common.Error):
			tree.variant_patches('bogus')

	# alt:NAME = the series + patches/variants/NAME.patch last; its groups
	# are the series' (not "variants"); an unknown NAME is refused by name
	@mock.patch.dict(os.environ, {'SERIES': '', 'APPLIED': '', 'HOOKS': ''})
	def test_alt_variants(self):
		names = tree.alternatives()
		self.assertGreaterEqual(len(names), 6)
		alt = tree.variant_patches('alt:' + names[0])
		self.assertEqual(alt, tree.read_series() + [f'variants/{names[0]}.patch'])
		self.assertTrue(os.path.isfile(tree.patch_file(alt[-1])))
		self.assertEqual(tree.variant_groups('alt:' + names[0]),
				 tree.variant_groups('series'))
		with self.assertRaisesRegex(common.Error, 'no patches/variants/nosuch.patch'):
			tree.variant_patches('alt:nosuch')

	# make variants: a case that fails on an alternative is listed pinned;
	# a skipped or passed one is not; an alternative that could not run says so
	def test_variants_report(self):
		st = report.Stage(name='alt-x', cases=[
			{'name': 's.a', 'status': 'FAILED', 'verdict': 'fail', 'reason': ''},
			{'name': 's.b', 'status': 'SKIPPED', 'verdict': 'skip', 'reason': ''},
			{'name': 's.c', 'status': 'PASSED', 'verdict': 'pass', 'reason': ''}])
		self.assertEqual(cli.pinned_cases(st), ['s.a'])
		text = cli.variants_text([
			dict(name='x', error='', pinned=['s.a'], passed=1, failed=1, skipped=1),
			dict(name='y', error='', pinned=[], passed=3, failed=0, skipped=0),
			dict(name='z', error='does not apply', pinned=[], passed=0, failed=1,
			     skipped=0)])
		self.assertIn('x: 1 passed, 1 failed, 1 skipped: 1 pinned\n  pinned: s.a', text)
		self.assertIn('y: 3 passed, 0 failed, 0 skipped: nothing pinned', text)
		self.assertIn('z: 0 passed, 1 failed, 0 skipped: error: does not apply', text)

	# the mails of a b4 mbox: subject without its [PATCH v2 1/3] tag
	# (folded), and which of them carry a diff (a cover letter does not)
	def test_mbox_mails(self):
		head = 'From: a@b\nSubject: [PATCH v2 1/3] mm: a long\n subject\n\n'
		self.assertEqual(tree.mail_subject(head + 'body\n'), 'mm: a long subject')
		self.assertFalse(tree.has_diff(head + 'cover\n---\n 1 file changed\n'))
		self.assertTrue(tree.has_diff(head + '---\ndiff --git a/x b/x\n'))
		self.assertTrue(tree.has_diff(head + '--- a/x\n+++ b/x\n@@ -1 +1 @@\n'))

	# APPLIED=: comma list of known groups, "none", "series"; others refused
	def test_parse_applied(self):
		with mock.patch.object(tree, 'known_groups', return_value=['a', 'b']):
			self.assertEqual(tree.parse_applied('b, a'), ['a', 'b'])
			self.assertEqual(tree.parse_applied('none'), [])
			self.assertEqual(tree.parse_applied('series'), ['a', 'b'])
			with self.assertRaises(common.Error):
				tree.parse_applied('a,c')

	# before:/upto:GROUP (bench-compare's A and B) cut the series at a group's edges
	@mock.patch.dict(os.environ, {'SERIES': ''})
	def test_group_variants(self):
		series = ['a/0001.patch', 'b/0001.patch', 'b/0002.patch', 'c/0001.patch']
		with mock.patch.object(tree, 'read_series', return_value=series):
			self.assertEqual(tree.variant_patches('before:b'), series[:1])
			self.assertEqual(tree.variant_patches('upto:b'), series[:3])
			self.assertEqual(tree.variant_patches('before:a'), [])
			self.assertEqual(tree.variant_patches('upto:c'), series)
			with self.assertRaises(common.Error):
				tree.variant_patches('upto:nosuch')


class TestBenchMatrixPrefixes(unittest.TestCase):
	# Catches bench-matrix measuring other prefixes than asked: FROM..TO
	# inclusive (default 0..N), STEPS sorted and deduplicated, nonsense refused.
	def test_prefixes(self):
		self.assertEqual(cli.matrix_prefixes(23, None, None, ''), list(range(24)))
		self.assertEqual(cli.matrix_prefixes(23, 20, None, ''), [20, 21, 22, 23])
		self.assertEqual(cli.matrix_prefixes(23, None, 2, ''), [0, 1, 2])
		self.assertEqual(cli.matrix_prefixes(23, None, None, '23,0,1,20,1'), [0, 1, 20, 23])
		for bad in ((23, 3, 3, ''), (23, None, None, '5'), (23, None, None, '0,24'),
			    (23, None, None, 'a,b'), (23, 0, None, '0,1')):
			with self.assertRaises(common.Error, msg=bad):
				cli.matrix_prefixes(*bad)


class TestDeps(unittest.TestCase):
	def test_missing_packages(self):
		table = [('qemu-system-x86_64', 'qemu-system-x86'), ('gcc', 'gcc'),
			 ('/nonexistent/gelf.h', 'libelf-dev')]
		m = deps.missing_packages(table, which=lambda c: None if c.startswith('qemu') else '/x',
					  exists=lambda p: False)
		self.assertEqual(m, ['qemu-system-x86', 'libelf-dev'])

	def test_missing_qemu_without_install_names_the_command(self):
		saved = deps.missing_packages
		os.environ['MMKUNIT_NO_INSTALL'] = '1'
		try:
			deps.missing_packages = lambda *a, **k: ['qemu-system-x86']
			with self.assertRaises(common.Error) as e:
				deps.cmd_deps(None)
			self.assertIn('apt-get install -y --no-install-recommends qemu-system-x86',
				      str(e.exception))
		finally:
			deps.missing_packages = saved
			del os.environ['MMKUNIT_NO_INSTALL']


class TestAccel(unittest.TestCase):
	def setUp(self):
		self.cfg = load_qemu_config()
		self.tmp = tempfile.TemporaryDirectory()

	def tearDown(self):
		self.tmp.cleanup()

	def cpuinfo(self, flags):
		p = os.path.join(self.tmp.name, 'cpuinfo')
		with open(p, 'w') as f:
			f.write(f'processor\t: 0\nflags\t\t: fpu {flags} sse\n')
		return p

	def test_kvm_present_but_no_vmx_is_not_usable(self):
		dev = os.path.join(self.tmp.name, 'kvm')
		open(dev, 'w').close()
		self.assertFalse(self.cfg.kvm_usable(dev, self.cpuinfo('pae')))

	def test_kvm_with_vmx_is_usable(self):
		dev = os.path.join(self.tmp.name, 'kvm')
		open(dev, 'w').close()
		self.assertTrue(self.cfg.kvm_usable(dev, self.cpuinfo('vmx')))
		self.assertTrue(self.cfg.kvm_usable(dev, self.cpuinfo('svm')))

	def test_no_dev_kvm_is_not_usable(self):
		self.assertFalse(self.cfg.kvm_usable('/nonexistent/kvm', self.cpuinfo('vmx')))

	def test_config_has_two_cpus_and_thp_memory(self):
		p = self.cfg.QEMU_ARCH['extra_qemu_params']
		self.assertEqual(p[p.index('-smp') + 1], '2')
		self.assertGreaterEqual(int(p[p.index('-m') + 1]), 2048)

	def test_wrapper_drops_kvm_and_makes_tcg_multithreaded(self):
		fake = os.path.join(self.tmp.name, 'bin')
		os.makedirs(fake)
		with open(os.path.join(fake, 'qemu-system-x86_64'), 'w') as f:
			f.write('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
		os.chmod(os.path.join(fake, 'qemu-system-x86_64'), 0o755)
		wrapper = os.path.join(REPO, 'tools/testing/kunit/qemu_configs/x86_64_mm.d')
		env = dict(os.environ, PATH=os.pathsep.join([wrapper, fake, '/usr/bin', '/bin']))
		r = subprocess.run(['qemu-system-x86_64', '-m', '1024', '-accel', 'kvm',
				    '-accel', 'hvf', '-accel', 'tcg', '-append', 'a b'],
				   env=env, capture_output=True, text=True, timeout=30)
		self.assertEqual(r.stdout.splitlines(),
				 ['-m', '1024', '-accel', 'tcg,thread=multi', '-append', 'a b'])


class TestFetch(unittest.TestCase):
	def test_unreachable_mirror_is_one_clear_error(self):
		with tempfile.TemporaryDirectory() as d:
			src = os.path.join(d, 'bad.sources')
			with open(src, 'w') as f:
				f.write('Types: deb\nURIs: http://127.0.0.1:9/debian\n'
					'Suites: bookworm\nComponents: main\n')
			# without the local tarball the docs tell everyone to export
			# (with it, the script unpacked that and passed)
			env = {k: v for k, v in os.environ.items() if k != 'LINUX_TARBALL'}
			env['MMKUNIT_APT_SOURCES'] = src
			r = subprocess.run([os.path.join(REPO, 'scripts/fetch-linux.sh'),
					    os.path.join(d, 'b')],
					   env=env, capture_output=True, text=True, timeout=300)
			self.assertNotEqual(r.returncode, 0)
			self.assertIn('cannot reach the Debian mirror', r.stderr)


if __name__ == '__main__':
	unittest.main()


class TestRepeat(unittest.TestCase):
	# make repeat: a case with two verdicts over the runs, or missing from
	# some runs, is flaky; one that failed every run is listed apart; a
	# case that passed (or skipped) every run is neither
	def test_flakes(self):
		from mmkunit import repeat
		runs = [{'s.a': 'pass', 's.b': 'fail', 's.c': 'skip', 's.d': 'pass'},
			{'s.a': 'fail', 's.b': 'fail', 's.c': 'skip'},
			{'s.a': 'pass', 's.b': 'fail', 's.c': 'skip', 's.d': 'pass'}]
		rows = {r['case']: r for r in repeat.flakes(runs)}
		self.assertTrue(rows['s.a']['flaky'])
		self.assertEqual((rows['s.a']['passed'], rows['s.a']['failed']), (2, 1))
		self.assertFalse(rows['s.b']['flaky'])
		self.assertEqual(rows['s.b']['failed'], 3)
		self.assertFalse(rows['s.c']['flaky'])
		self.assertTrue(rows['s.d']['flaky'])		# not run once
		self.assertEqual(rows['s.d']['absent'], 1)
		self.assertEqual(repeat.flakes(runs)[0]['case'], 's.a')
		text = repeat.flake_text(repeat.flakes(runs), 3, 'idle')
		self.assertIn('flaky: s.a: 2 passed, 1 failed, 0 skipped', text)
		self.assertIn('failed every run: s.b', text)
		self.assertNotIn('s.c', text)
		self.assertTrue(text.endswith('4 case(s): 2 flaky, 1 failed every run'))
