# SPDX-License-Identifier: GPL-2.0
"""Host tests of scripts/hook_coverage.py: on a synthetic suite, every
pattern a test hook takes (docs/hooks.rst) classifies its assertion sites
as its comment says; on mm/tests, every assertion of every suite file is
counted."""

import glob
import json
import os
import re
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
import hook_coverage  # noqa: E402

SCRIPT = os.path.join(REPO, 'scripts', 'hook_coverage.py')
DATA = os.path.join(REPO, 'scripts', 'tests', 'data', 'hook_coverage')
TESTS = os.path.join(REPO, 'mm', 'tests')


def annotated():
	"""{(file, line): 'run' or 'hook'} from the comments of the synthetic files"""
	want = {}
	for path in sorted(glob.glob(os.path.join(DATA, '*.[ch]'))):
		with open(path) as f:
			for n, line in enumerate(f, 1):
				m = re.search(r'/\* (run|hook) \*/', line)
				if m:
					want[(os.path.basename(path), n)] = m.group(1)
	return want


def site_count(path):
	"""The assertion macros of a file, counted by a regex after comments and strings go"""
	with open(path) as f:
		text = hook_coverage.LEX.sub(lambda m: '' if m.group()[0] == '/' else '""', f.read())
	return len(re.findall(r'\b(?:KUNIT_(?:EXPECT|ASSERT)_\w+|KUNIT_FAIL\w*)\s*\(', text))


class TestSynthetic(unittest.TestCase):
	def setUp(self):
		self.r = hook_coverage.count([DATA])

	def test_each_site_as_its_comment_says(self):
		want = annotated()
		got = {(s['file'], s['line']) for s in self.r['hook_only_sites']}
		for where, what in sorted(want.items()):
			self.assertEqual('hook' if where in got else 'run', what, '%s:%d' % where)
		self.assertEqual(got - set(want), set(), 'hook-only sites without a comment')
		self.assertEqual(self.r['sites'], len(want))
		self.assertEqual(self.r['run'], sum(w == 'run' for w in want.values()))

	def test_benchmark_sites_left_out(self):
		self.assertNotIn('sample_benchmark.c', self.r['files'])
		self.assertEqual(self.r['files']['sample.h'], {'sites': 2, 'run': 2, 'hook_only': 0})

	def test_reasons_name_the_hook(self):
		why = {s['line']: s['reason'] for s in self.r['hook_only_sites'] if s['file'] == 'sample_kunit.c'}
		with open(os.path.join(DATA, 'sample_kunit.c')) as f:
			line = {l.split(';')[0].strip(): n for n, l in enumerate(f, 1)}
		for site, reason in (
				('KUNIT_EXPECT_EQ(test, 15, 15)', '#if MM_HOOK(RCU_FREE_HOLD)'),
				('KUNIT_EXPECT_EQ(test, 18, 18)', '#if !MM_HOOK(RCU_FREE_HOLD), its #else'),
				('KUNIT_EXPECT_EQ(test, 20, 20)', 'after if (!queue): RCU_FREE_HOLD ... return'),
				('KUNIT_EXPECT_EQ(test, 11, 11)', 'if (probed): tracepoint'),
				('KUNIT_EXPECT_EQ(test, 9, 9)', 'else of if (!built): RCU_FREE_NR_EARLY'),
				('KUNIT_EXPECT_TRUE(test, checked(test))',
				 'after checked(), which skips: after MM_HOOK_REQUIRE(FILEMAP_READ_RCU_CAN_COPY)')):
			self.assertIn(reason, why[line[site]], site)
		self.assertTrue(any('suite init hooked_init() skips' in w for w in why.values()))

	def test_command_line(self):
		out = subprocess.run([sys.executable, SCRIPT, '--json', DATA], capture_output=True,
				     text=True, check=True).stdout
		self.assertEqual(json.loads(out), self.r)
		out = subprocess.run([sys.executable, SCRIPT, '--list', DATA], capture_output=True,
				     text=True, check=True).stdout
		self.assertIn('sample_kunit.c:21: KUNIT_ASSERT_EQ (reason: ', out)
		self.assertRegex(out, r'\n21 of 56 assertion sites \(37\.5 %\) run without the test hooks\n')


class TestRepo(unittest.TestCase):
	def test_every_suite_file_parsed(self):
		r = hook_coverage.count([TESTS])
		self.assertGreater(r['sites'], 300)
		files = [p for p in sorted(glob.glob(os.path.join(TESTS, '*.[ch]')))
			 if not hook_coverage.excluded(os.path.basename(p))]
		for path in files:
			name, n = os.path.basename(path), site_count(path)
			self.assertEqual(r['files'].get(name, {'sites': 0})['sites'], n, name)
			if name.endswith('_kunit.c'):
				self.assertGreater(n, 0, name)
		self.assertEqual(r['sites'], sum(map(site_count, files)))
		self.assertEqual(r['run'] + len(r['hook_only_sites']), r['sites'])

	def test_runs_and_exits_0(self):
		p = subprocess.run([sys.executable, SCRIPT, '--list'], capture_output=True, text=True)
		self.assertEqual(p.returncode, 0, p.stderr)
		self.assertRegex(p.stdout, r'\d+ of \d+ assertion sites \([\d.]+ %\) run without the test hooks')


if __name__ == '__main__':
	unittest.main()
