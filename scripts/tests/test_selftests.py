# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of scripts/selftests.py: reading a guest console of the
mm selftests (TAP, timeouts, a guest that stops mid-test, splats), the
comparison of two kernels and the reports.

The logs in data/selftests/ are excerpts of real guest consoles of
make selftests (see the README there for where each comes from)."""

import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
import selftests as st  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'selftests')


def data(name: str) -> str:
	with open(os.path.join(DATA, name), errors='replace') as f:
		return f.read()


def test(name: str, timeout: int = 300, category: str = 'x') -> dict:
	return {'name': name, 'category': category, 'timeout': timeout, 'setup': {},
		'argv': name.split()}


def result(variant: str, tests: list) -> dict:
	"""A parsed run from (name, status, [(key, name, status)], splats)."""
	out = []
	for name, status, subs, splats in tests:
		out.append({'name': name, 'category': 'x', 'timeout': 300, 'status': status,
			    'rc': 0, 'secs': 1, 'plan': None, 'reason': '', 'output': [],
			    'splats': splats,
			    'subtests': [{'key': k, 'num': int(k), 'name': n, 'status': s,
					  'reason': ''} for k, n, s in subs]})
	return {'variant': variant, 'kernel': 'k', 'guest_s': 1, 'completed': True,
		'tests': out, 'splats_outside': []}


class TestTap(unittest.TestCase):
	def test_result_lines(self):
		p = st.parse_tap_line
		self.assertEqual(p('ok 3 Basic COW after fork() with base page')['status'], 'pass')
		r = p('ok 7 # SKIP MADV_PAGEOUT did not work, is swap enabled?')
		self.assertEqual((r['num'], r['name'], r['status'], r['reason']),
				 (7, '', 'skip', 'MADV_PAGEOUT did not work, is swap enabled?'))
		r = p('not ok 12 migration.shared_anon')
		self.assertEqual((r['num'], r['name'], r['status']), (12, 'migration.shared_anon', 'fail'))
		self.assertEqual(p('ok 1 foo # XFAIL known')['status'], 'xfail')
		self.assertIsNone(p('# ok 1 nested, not a result of ours'))
		self.assertIsNone(p('[   12.345678] ok 1 from the kernel'))

	def test_kernel_lines_are_not_results(self):
		subs, plan = st.parse_subtests(['1..2', 'ok 1 a',
						'[    3.100000] not ok 9 printed by the kernel',
						'not ok 2 b'])
		self.assertEqual(plan, 2)
		self.assertEqual([(s['key'], s['status']) for s in subs], [('1', 'pass'), ('2', 'fail')])

	def test_unnamed_skip_takes_the_run_line(self):
		subs, _ = st.parse_subtests(['# [RUN] collapse of a file THP', 'ok 4 # SKIP no swap'])
		self.assertEqual(subs[0]['name'], 'collapse of a file THP')
		self.assertEqual(subs[0]['reason'], 'no swap')

	def test_repeated_numbers_get_their_own_key(self):
		subs, _ = st.parse_subtests(['ok 1 a', 'ok 1 b'])
		self.assertEqual([s['key'] for s in subs], ['1', '1.2'])


class TestConsole(unittest.TestCase):
	def test_markers_status_and_splat_attribution(self):
		tests = [test('a'), test('b', timeout=5), test('c'), test('d')]
		con = '\n'.join([
			'[    0.000000] Linux version 7.3.4',
			'@@mm-selftest begin 0 a', '1..1', 'ok 1 one',
			'[   10.000000] WARNING: CPU: 0 PID: 1 at mm/huge_memory.c:1 x+0x1/0x2',
			'@@mm-selftest end 0 rc=0 secs=2',
			'@@mm-selftest begin 1 b', '1..3', 'ok 1 x',
			'@@mm-selftest end 1 rc=137 secs=5',
			'@@mm-selftest begin 2 c', '1..0 # SKIP THP not available',
			'@@mm-selftest end 2 rc=4 secs=0',
			'@@mm-selftest begin 3 d', 'ok 1 x', 'ok 2 y', 'not ok 3 z',
			'@@mm-selftest end 3 rc=0 secs=1',
			'@@mm-selftest done'])
		r = st.parse_console(con, tests)
		a, b, c, d = r['tests']
		self.assertEqual(a['status'], 'pass')
		self.assertEqual(len(a['splats']), 1)
		self.assertEqual(b['status'], 'timeout')
		self.assertEqual(c['status'], 'skip')
		self.assertEqual(c['reason'], 'THP not available')
		self.assertEqual(d['status'], 'fail', 'exit 0 with a failed subtest is a failure')
		self.assertTrue(r['completed'])
		self.assertEqual(st.counts(r)['splats'], 1)

	def test_guest_stops_mid_test(self):
		tests = [test('a'), test('b'), test('c')]
		con = '@@mm-selftest begin 0 a\nok 1 x\n@@mm-selftest end 0 rc=0 secs=1\n' \
		      '@@mm-selftest begin 1 b\nok 1 x\n[   5.000000] Oops: general protection fault\n'
		r = st.parse_console(con, tests)
		self.assertEqual([t['status'] for t in r['tests']], ['pass', 'crash', 'not run'])
		self.assertEqual(len(r['tests'][1]['splats']), 1)
		self.assertFalse(r['completed'])
		r = st.parse_console(con, tests, host_timed_out=True)
		self.assertEqual(r['tests'][1]['status'], 'timeout')

	def test_user_output_is_no_splat(self):
		self.assertEqual(st.scan_kernel_splats(['WARNING: this is a test printing',
							'# BUG: expected in the message']), [])


class TestRealLogs(unittest.TestCase):
	@staticmethod
	def run_list(n: int, names: dict) -> list:
		"""A run list whose entry i is names[i] (placeholders elsewhere)."""
		return [test(names.get(i, f'other{i}')) for i in range(n)]

	def test_khugepaged_one_failing_subtest(self):
		tests = self.run_list(4, {3: 'khugepaged'})
		r = st.parse_console(data('khugepaged-anon.log'), tests)
		k = r['tests'][3]
		self.assertEqual((k['status'], k['rc'], k['secs']), ('fail', 1, 19))
		self.assertEqual(k['plan'], 26)
		self.assertEqual(len(k['subtests']), 26)
		bad = [s for s in k['subtests'] if s['status'] != 'pass']
		self.assertEqual([(s['key'], s['name'], s['status']) for s in bad],
				 [('15', 'collapse_compound_extreme (madvise:anon)', 'fail')])
		# the same TAP name twice, told apart by the "Run test:" line
		names = [s['name'] for s in k['subtests'] if s['key'] in ('14', '15')]
		self.assertEqual(names, ['collapse_compound_extreme (khugepaged:anon)',
					 'collapse_compound_extreme (madvise:anon)'])
		self.assertEqual(k['splats'], [])
		self.assertEqual([t['status'] for t in r['tests'][:3]], ['not run'] * 3)

	def test_guest_killed_mid_test(self):
		tests = self.run_list(9, {6: 'transhuge-stress -d 10', 7: 'folio_split_race_test'})
		r = st.parse_console(data('killed-mid-test.log'), tests, host_timed_out=True)
		ts, fs, after = r['tests'][6], r['tests'][7], r['tests'][8]
		self.assertEqual((ts['status'], ts['secs']), ('pass', 19))
		self.assertEqual([s['name'] for s in ts['subtests']], ['Completed'])
		self.assertEqual(fs['status'], 'timeout')
		self.assertIn('hard timeout', fs['reason'])
		self.assertEqual(fs['plan'], 1)
		self.assertEqual(after['status'], 'not run')
		self.assertFalse(r['completed'])
		# the same console without the host's kill: the guest stopped
		r = st.parse_console(data('killed-mid-test.log'), tests)
		self.assertEqual(r['tests'][7]['status'], 'crash')

	def test_oops_mid_test_is_a_crash_with_its_splats(self):
		tests = self.run_list(8, {5: 'khugepaged all:file /mnt/ext4',
					  6: 'transhuge-stress -d 10'})
		r = st.parse_console(data('oops-mid-test.log'), tests)
		before, during, after = r['tests'][5], r['tests'][6], r['tests'][7]
		# the excerpt starts after test 5 began: its end marker alone is ignored
		self.assertEqual(before['status'], 'not run')
		self.assertEqual(during['status'], 'crash')
		self.assertEqual(during['subtests'], [], 'kernel lines are no TAP results')
		heads = [l for l in during['splats'] if 'Call Trace' not in l]
		self.assertIn('kernel BUG at ../../tree/mm/swapfile.c:1746!', heads[0])
		self.assertTrue(any('BUG: kernel NULL pointer dereference' in l for l in heads))
		self.assertEqual(after['status'], 'not run')
		self.assertEqual(r['splats_outside'], [])

	def test_flaky_khugepaged_matches_its_entry(self):
		tests = self.run_list(4, {3: 'khugepaged'})
		bad = st.parse_console(data('khugepaged-anon.log'), tests)
		good = st.parse_console(data('khugepaged-anon.log').replace('not ok 15', 'ok 15')
					.replace('rc=1', 'rc=0'), tests)
		for r, v in ((bad, 'B'), (good, 'A')):
			r.update(variant=v, kernel='k', guest_s=1)
		flaky = [{'test': 'khugepaged', 'subtest': 'collapse_compound_extreme (madvise:anon)',
			  'why': 'evidence'}]
		d = st.compare(good, bad, flaky)
		sub = [x for x in d if x['subtest']]
		self.assertEqual(len(sub), 1)
		self.assertEqual(sub[0]['subtest'], '15 collapse_compound_extreme (madvise:anon)')
		self.assertEqual(sub[0]['flaky']['why'], 'evidence')


class TestCompare(unittest.TestCase):
	def test_worse_better_coverage_and_flakes(self):
		a = result('pristine', [
			('t1', 'pass', [('1', 's1', 'pass'), ('2', 's2', 'pass')], []),
			('t2', 'pass', [('1', 'x', 'pass')], []),
			('t3', 'fail', [], []),
			('t4', 'pass', [('1', 'collapse', 'pass')], []),
			('t5', 'pass', [], [])])
		b = result('series', [
			('t1', 'fail', [('1', 's1', 'pass'), ('2', 's2', 'fail')], []),
			('t2', 'pass', [('1', 'x', 'skip')], []),
			('t3', 'pass', [], []),
			('t4', 'fail', [('1', 'collapse', 'fail')], []),
			('t5', 'pass', [], ['[ 1.0] BUG: Bad page state'])])
		flaky = [{'test': 't4', 'subtest': 'coll*', 'why': '1 of 10 runs'}]
		d = {(x['test'], x['subtest']): x for x in st.compare(a, b, flaky)}
		self.assertEqual(d[('t1', '')]['kind'], 'worse')
		self.assertEqual(d[('t1', '2 s2')]['kind'], 'worse')
		self.assertNotIn(('t1', '1 s1'), d)
		self.assertEqual(d[('t2', '1 x')]['kind'], 'coverage')
		self.assertEqual(d[('t3', '')]['kind'], 'better')
		self.assertEqual(d[('t4', '1 collapse')]['flaky']['why'], '1 of 10 runs')
		self.assertIsNone(d[('t1', '2 s2')]['flaky'])
		self.assertEqual(d[('t5', '(kernel splat)')]['kind'], 'worse')
		text = st.format_compare(a, b, list(d.values()), 60)
		self.assertIn('WORSE', text)
		ET.fromstring(st.compare_junit(list(d.values()), 'pristine', 'series'))

	def test_subtest_missing_on_b_is_not_run(self):
		a = result('a', [('t', 'pass', [('1', 'x', 'pass'), ('2', 'y', 'pass')], [])])
		b = result('b', [('t', 'timeout', [('1', 'x', 'pass')], [])])
		d = st.compare(a, b, [])
		self.assertEqual([(x['subtest'], x['b']) for x in d], [('', 'timeout'), ('2 y', 'not run')])

	def test_a_flake_that_ends_its_test_takes_what_it_stopped_along(self):
		# khugepaged, series, 2026-12-01: collapse_compound_extreme failed
		# ("Bail out!"), the subtests after it did not run; the re-run
		# must judge those too, not count them as regressions
		a = result('a', [('k', 'pass', [('1', 'x', 'pass'), ('15', 'coll', 'pass'),
						('18', 'fork', 'pass')], [])])
		b = result('b', [('k', 'fail', [('1', 'x', 'fail'), ('15', 'coll', 'fail')], [])])
		flaky = [{'test': 'k', 'subtest': 'coll', 'why': '1 of 2 runs'}]
		d = {x['subtest']: x for x in st.compare(a, b, flaky)}
		self.assertEqual(d['15 coll']['flaky']['why'], '1 of 2 runs')
		self.assertIn('follows the known flake 15 coll', d['']['flaky']['why'])
		self.assertIn('follows the known flake 15 coll', d['18 fork']['flaky']['why'])
		self.assertIsNone(d['1 x']['flaky'])  # a failure of its own still counts


class TestFiles(unittest.TestCase):
	def test_the_repo_lists_parse(self):
		tests = st.read_test_list()
		self.assertGreater(len(tests), 20)
		for t in tests:
			self.assertGreater(t['timeout'], 0)
		for e in st.read_flaky():
			self.assertTrue(e['test'] in {t['name'] for t in tests}, e)
			self.assertTrue(e['why'], f'{e["test"]}: a known flake needs its evidence')

	def test_init_script_runs_each_test_between_markers(self):
		tests = [test('cow', 600), dict(test('hugetlb-mmap', 120), setup={'hugepages': '64'})]
		s = st.init_script(tests)
		self.assertIn('timeout -s KILL 600 /mm/cow', s)
		self.assertIn('echo 64 > /proc/sys/vm/nr_hugepages; cd /mm; echo "@@mm-selftest begin 1', s)
		self.assertEqual(s.count('reset;'), 2)
		self.assertTrue(s.rstrip().endswith('reboot -f'))

	def test_reports(self):
		r = st.parse_console('@@mm-selftest begin 0 a\nok 1 x\nnot ok 2 y\n'
				     '@@mm-selftest end 0 rc=1 secs=3\n@@mm-selftest done\n', [test('a')])
		r.update(variant='series', kernel='k', guest_s=9)
		with tempfile.TemporaryDirectory() as d:
			st.write_reports(r, d)
			self.assertTrue(os.path.isfile(os.path.join(d, 'results.json')))
			root = ET.parse(os.path.join(d, 'junit.xml')).getroot()
			suite = root.find('testsuite')
			self.assertEqual(suite.get('failures'), '2')
			with open(os.path.join(d, 'results.txt')) as f:
				self.assertIn('fail', f.read())


class TestSmp(unittest.TestCase):
	# make selftests SMP=3: the vCPU count reaches QEMU's -smp, keeps its
	# results apart (directory, run key) and shows in the reports
	def test_smp_reaches_qemu_and_the_results(self):
		from unittest import mock
		cmds = []

		def fake_boot(cmd, console, timeout, nice=0):
			cmds.append(cmd)
			with open(console, 'w') as f:
				f.write('@@mm-selftest begin 0 a\nok 1 x\n@@mm-selftest end 0 rc=0 secs=1\n'
					'@@mm-selftest done\n')
			return mock.Mock(timed_out=False, seconds=2.0)
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(st, 'make_initramfs', return_value=os.path.join(d, 'i.cpio')), \
		     mock.patch.object(st.kernel, 'load_qemu_config') as qc, \
		     mock.patch.object(st.kernel, 'boot_initramfs', side_effect=fake_boot):
			qc.return_value.choose_accel.return_value = 'tcg'
			r3 = st.run_tests('series', os.path.join(d, 'bzImage'), d, [test('a')], d, 60, 3)
			r2 = st.run_tests('series', os.path.join(d, 'bzImage'), d, [test('a')], d, 60)
		self.assertEqual(cmds[0][cmds[0].index('-smp') + 1], '3')
		self.assertEqual(cmds[1][cmds[1].index('-smp') + 1], str(st.GUEST_SMP))
		self.assertEqual((r3['smp'], r2['smp']), (3, st.GUEST_SMP))
		self.assertNotEqual(r3['run_key'], r2['run_key'])
		self.assertIn('3 vCPUs', st.format_results(r3))
		self.assertEqual(st.smp_suffix(3), '-smp3')
		self.assertEqual(st.smp_suffix(st.GUEST_SMP), '')

	def test_smp_option(self):
		import argparse
		self.assertEqual(st.smp_count('3'), 3)
		for bad in ('0', '9', 'x'):
			with self.assertRaises(argparse.ArgumentTypeError):
				st.smp_count(bad)


if __name__ == '__main__':
	unittest.main()


class TestBuildKernel(unittest.TestCase):
	# build_kernel assembles the variant through the runner's tree module
	# and builds tinyconfig + kernel.config + bzImage with run_logged (the
	# process-group runner); nothing is compiled here
	def test_build_kernel_steps(self):
		from unittest import mock
		with tempfile.TemporaryDirectory() as d:
			calls = []

			def fake_make(cmd, log, cwd=None, timeout=0):
				calls.append(cmd[-1])
				out = [a[2:] for a in cmd if a.startswith('O=')][0]
				if cmd[-1] == 'tinyconfig':
					open(os.path.join(out, '.config'), 'w').close()
				if cmd[-1] == 'bzImage':
					img = os.path.join(out, 'arch/x86/boot/bzImage')
					os.makedirs(os.path.dirname(img))
					open(img, 'w').close()
			with mock.patch.object(st, 'kernel_dir', return_value=os.path.join(d, 'out')), \
			     mock.patch.object(st, 'source_key', return_value='key'), \
			     mock.patch.object(st.mmtree, 'assemble', return_value=d) as asm, \
			     mock.patch.object(st, 'run_logged', side_effect=fake_make):
				img, _missing, _secs = st.build_kernel('series', 1)
			asm.assert_called_once_with('series')
			self.assertEqual(calls, ['tinyconfig', 'olddefconfig', 'bzImage'])
			self.assertTrue(img.endswith('arch/x86/boot/bzImage'))
