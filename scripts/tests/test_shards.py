# SPDX-License-Identifier: GPL-2.0
"""SHARD=i/N of series-check and bench-matrix and their merges, on the fake
kernel tree (fakerepo.py) with a fake kunit.py whose results depend on the
patches applied: the shards' slices are disjoint and cover the run, two
merged shards give the report of one unsharded run, and a merge refuses
shards of other runs or environments, a shard given twice, a prefix in two
shards, and names a missing shard.  The bench-matrix test needs kunit_tool's
kunit_parser.py (build/tree/tools/testing/kunit or $MMKUNIT_KUNIT_DIR), as
test_benchreport.py does."""

import json
import os
import shutil
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakerepo  # noqa: E402

sys.path.insert(0, os.path.join(fakerepo.REPO, 'scripts'))
from mmkunit import common, shard  # noqa: E402
from scripts.tests.test_runs import RunCase  # noqa: E402

KUNIT_DIR = os.environ.get('MMKUNIT_KUNIT_DIR',
			   os.path.join(fakerepo.REPO, 'build/tree/tools/testing/kunit'))

# Prefix k of the fake series carries "int fake_1;" .. "int fake_k;".  Case
# p<j> passes from patch j on; "red" passes at prefixes 0 and 1 and fails
# from 2 on (a regression between the two shards of 0..3 in two);
# benchmark boots print BENCH lines whose values move with every patch.
FAKE_KUNIT = r'''#!/usr/bin/env python3
import json, os, sys
''' + fakerepo.FAKE_KUNIT_ARGS + r'''out = opts['build_dir']
with open(os.path.join(os.environ['FAKE_CTL'], 'calls'), 'a') as f:
	f.write(sub + ' ' + ' '.join(pos) + '\n')
bz = os.path.join(out, 'arch/x86/boot/bzImage')
if sub == 'config':
	os.makedirs(out, exist_ok=True)
	open(os.path.join(out, '.config'), 'w').close()
	sys.exit(0)
if sub == 'build':
	os.makedirs(os.path.dirname(bz), exist_ok=True)
	shutil = __import__('shutil')
	shutil.copyfile('mm/fake.c', bz)
	sys.exit(0)
if sub != 'exec' or not os.path.isfile(bz):
	sys.exit(2)
with open(bz) as f:
	src = f.read()
n = sum(f'int fake_{j};' in src for j in (1, 2, 3))
glob = pos[0] if pos else ''
if 'benchmark' in glob:
	suite = 'fake_benchmark'
	env = ' '.join(a.split('.', 1)[1] for a in kargs if a.startswith('mm_bench.'))
	diag = [f'    # BENCHENV vcpus=2 {env}']
	for r in (1, 2, 3):
		for size, v in ((1, 1000 + 10 * n + r), (2, 2000 - 30 * n * n + r)):
			diag.append(f'    # BENCH bench=fake size={size} variant=- round={r} '
				    f'value={v}.000 unit=ms')
	cases = [('fake_bench', True, diag)]
else:
	suite = 'fake'
	cases = [(f'p{j}', n >= j, []) for j in (1, 2, 3)] + [('red', n < 2, [])]
lines = ['KTAP version 1', '1..1', '    KTAP version 1', f'    # Subtest: {suite}',
	 f'    1..{len(cases)}']
for k, (c, ok, diag) in enumerate(cases, 1):
	lines += diag + [('    ok ' if ok else '    not ok ') + f'{k} {c}']
lines.append(f'ok 1 {suite}')
text = '\n'.join(lines) + '\n'
with open(os.path.join(out, 'test.log'), 'w') as f:
	f.write(text)
print(text, flush=True)
with open(opts['json'], 'w') as f:
	json.dump({'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
		{'name': suite, 'sub_groups': [], 'test_cases': [
			{'name': c, 'status': 'PASS' if ok else 'FAIL'} for c, ok, _ in cases]}]}, f)
sys.exit(0)
'''


def fake_patch(j: int) -> str:
	"""Patch j of the fake series: adds "int fake_j;" to mm/fake.c."""
	head = fakerepo.PATCH.split('diff --git')[0].replace('mm: fake change',
							      f'mm: fake change {j}')
	old = ['int fake;'] + [f'int fake_{i};' for i in range(1, j)]
	return (head + 'diff --git a/mm/fake.c b/mm/fake.c\nindex 0000000..1111111 100644\n'
		'--- a/mm/fake.c\n+++ b/mm/fake.c\n'
		f'@@ -1,{len(old)} +1,{len(old) + 1} @@\n' +
		''.join(f' {line}\n' for line in old) + f'+int fake_{j};\n--\n2.39.5\n')


class TestShardSlices(unittest.TestCase):
	# Catches an off-by-one or an overlap in the slice: every shard of every
	# split is a contiguous block, the blocks in order are the whole run,
	# and their sizes are at most one apart.
	def test_blocks_partition_the_run(self):
		for m in range(0, 13):
			items = list(range(100, 100 + m))
			for n in range(1, 7):
				blocks = [shard.block(items, i, n) for i in range(1, n + 1)]
				self.assertEqual(sum(blocks, []), items, (m, n))
				sizes = [len(b) for b in blocks]
				self.assertLessEqual(max(sizes) - min(sizes), 1, (m, n, sizes))
		self.assertEqual(shard.block([0, 1, 20, 23], 2, 2), [20, 23])

	# Catches a SHARD= that is not i/N with 1 <= i <= N taken, or refused
	# without saying what is wrong
	def test_parse(self):
		self.assertEqual(shard.parse('2/4'), (2, 4))
		self.assertEqual(shard.parse('1/1'), (1, 1))
		for bad, why in (('0/2', 'shards count from 1'), ('3/2', 'there are only 2 shards'),
				 ('junk', 'give i/N'), ('2/0', 'N is the number of shards'),
				 ('', 'give i/N'), ('1/2/3', 'give i/N')):
			with self.assertRaises(common.Error, msg=bad) as e:
				shard.parse(bad)
			self.assertIn(why, str(e.exception))
			self.assertIn(f'SHARD={bad}', str(e.exception))

	def test_spans(self):
		self.assertEqual(shard.spans([5, 1, 2, 3, 7, 8]), '1-3, 5, 7-8')
		self.assertEqual(shard.spans([]), '')


class ShardRun(RunCase):
	def setUp(self):
		super().setUp()
		fr = self.fr
		with open(os.path.join(fr.kdir, 'tools/testing/kunit/kunit.py'), 'w') as f:
			f.write(FAKE_KUNIT)
		pd = os.path.join(fr.repo, 'patches', 'fake')
		for p in os.listdir(pd):
			os.unlink(os.path.join(pd, p))
		names = [f'fake/000{j}-mm-fake-change-{j}.patch' for j in (1, 2, 3)]
		for j, name in enumerate(names, 1):
			with open(os.path.join(fr.repo, 'patches', name), 'w') as f:
				f.write(fake_patch(j))
		with open(os.path.join(fr.repo, 'patches', 'series'), 'w') as f:
			f.write(''.join(n + '\n' for n in names))

	def run_ok(self, *args, codes=(0, 1)):
		r = self.fr.run(*args, timeout=300)
		self.assertIn(r.returncode, codes, r.stdout + r.stderr)
		return r

	def refused(self, *args):
		r = self.fr.run(*args)
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		return r.stderr

	def load(self, path):
		with open(path) as f:
			return json.load(f)

	def save(self, data, name):
		path = os.path.join(self.tmp.name, name)
		with open(path, 'w') as f:
			json.dump(data, f)
		return path


class TestSeriesCheckShards(ShardRun):
	def out(self, name):
		return os.path.join(self.fr.build, 'series-check', name)

	def outputs(self):
		"""matrix.json without its time, matrix.txt, matrix-junit.xml."""
		data = self.load(self.out('matrix.json'))
		data.pop('elapsed_s')
		with open(self.out('matrix.txt')) as f, open(self.out('matrix-junit.xml')) as g:
			return data, f.read(), g.read()

	# Catches shards that run overlapping or missing prefixes, and a merge
	# that is not the matrix of one run: its rows, first passes, the
	# regression between the shards (red: PASS at 1, FAIL at 2, which
	# neither shard sees alone), its text and JUnit.
	def test_two_shards_merge_to_one_run(self):
		self.assertEqual(self.run_ok('series-check', '--shard=1/2').returncode, 0)
		self.assertEqual(self.run_ok('series-check', '--shard=2/2').returncode, 0)
		a, b = (self.load(self.out(f'shard-{i}-of-2.json')) for i in (1, 2))
		self.assertEqual([r['k'] for r in a['rows']], [0, 1])
		self.assertEqual([r['k'] for r in b['rows']], [2, 3])
		self.assertEqual(a['fingerprint'], b['fingerprint'])
		self.assertTrue(os.path.isfile(self.out('shard-1-of-2.txt')))
		r = self.run_ok('series-check-merge')
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)	# the regression
		merged = self.outputs()
		self.assertEqual([(g['case'], g['from'], g['to']) for g in merged[0]['regressions']],
				 [('fake.red', 1, 2)])
		self.assertEqual(merged[0]['first_pass']['fake.p3'], 3)
		junit = ET.fromstring(merged[2])
		self.assertEqual(junit.find('testsuite').get('failures'), '1')
		self.assertEqual(self.run_ok('series-check').returncode, 1)
		one = self.outputs()
		self.assertEqual(merged[0], one[0])
		self.assertEqual(merged[1], one[1])
		self.assertEqual(merged[2], one[2])

	# Catches a merge that takes shards of another run (FROM= differs), a
	# shard twice, a prefix in two shards, shards of different N or a
	# mutate shard, and one that says nothing of a missing shard.
	def test_merge_refuses_and_names_missing(self):
		self.run_ok('series-check', '--shard=1/2', '--to=1')
		self.run_ok('series-check', '--shard=2/2', '--to=1')
		one, two = self.out('shard-1-of-2.json'), self.out('shard-2-of-2.json')
		self.assertIn('given twice', self.refused('series-check-merge', one, one))
		b = self.load(two)
		b['rows'].append(self.load(one)['rows'][0])
		self.assertIn('prefix 0 is in two shards',
			      self.refused('series-check-merge', one, self.save(b, 'overlap.json')))
		b = dict(self.load(two), shard_count=3)
		self.assertIn('shard of 2', self.refused('series-check-merge', one,
							 self.save(b, 'n3.json')))
		self.assertIn('not a shard of make series-check',
			      self.refused('series-check-merge', one,
					   self.save({'fingerprint': 'x', 'mutants': []}, 'm.json')))
		# shard 2 of the same N but of FROM=1 TO=1: another run
		self.run_ok('series-check', '--shard=2/2', '--from=1', '--to=1')
		self.assertIn('different runs (they differ in prefixes)',
			      self.refused('series-check-merge', one, two))
		r = self.run_ok('series-check-merge', one)
		self.assertEqual(r.returncode, 1)
		self.assertIn('shard(s) 2/2 missing: prefixes 1 not in the matrix', r.stdout)
		with open(self.out('matrix.txt')) as f:
			self.assertIn('MISSING: shard 2/2: prefixes 1 not run', f.read())
		self.assertEqual(self.load(self.out('matrix.json'))['missing_shards'], {'2/2': [1]})

	# Catches a bad SHARD= that builds first and fails late, or with an
	# unclear message
	def test_bad_shard_refused_before_building(self):
		for bad in ('0/2', '3/2', 'junk'):
			self.assertIn(f'SHARD={bad}', self.refused('series-check', f'--shard={bad}'))
			self.assertIn(f'SHARD={bad}', self.refused('bench-matrix', f'--shard={bad}'))
		self.assertEqual(self.fr.calls(), [])


class TestBenchMatrixShards(ShardRun):
	def setUp(self):
		super().setUp()
		if not os.path.isfile(os.path.join(KUNIT_DIR, 'kunit_parser.py')):
			raise RuntimeError(f'kunit_parser.py not found in {KUNIT_DIR}: the report reads '
					   'logs with kunit_tool\'s parser; run "make tree" or set '
					   'MMKUNIT_KUNIT_DIR to a kernel tree\'s tools/testing/kunit')
		for n in ('kunit_parser.py', 'kunit_printer.py'):
			shutil.copy(os.path.join(KUNIT_DIR, n),
				    os.path.join(self.fr.kdir, 'tools/testing/kunit', n))
		self.shards = os.path.join(self.fr.build, 'bench-matrix')

	def report(self, label):
		"""report.json of the one bench directory whose name ends in @label."""
		bench = os.path.join(self.fr.build, 'bench')
		ds = [d for d in os.listdir(bench) if d.endswith(label)]
		self.assertEqual(len(ds), 1, os.listdir(bench))
		return self.load(os.path.join(bench, ds[0], 'report.json'))

	# Catches shards that measure overlapping or missing prefixes, and a
	# merged report that differs from one run's: every median, every step
	# (also 1 -> 2, between the shards), the marked steps, the logs.
	def test_two_shards_merge_to_one_run(self):
		for i in (1, 2):
			self.run_ok('bench-matrix', f'--shard={i}/2', codes=(0,))
		a, b = (self.load(os.path.join(self.shards, f'shard-{i}-of-2.json')) for i in (1, 2))
		self.assertEqual([p['k'] for p in a['prefixes']], [0, 1])
		self.assertEqual([p['k'] for p in b['prefixes']], [2, 3])
		self.assertEqual(a['env'], b['env'])
		self.assertEqual(a['env']['exact'], 'yes')
		r = self.run_ok('bench-matrix-merge', codes=(0,))
		merged = self.report('-merged')
		steps = merged['benches']['fake']['steps_pct']
		self.assertIsNone(steps[0][0])
		self.assertTrue(all(s is not None for row in steps[1:] for s in row), steps)
		self.assertIn(2, [m['k'] for m in merged['marked']])
		self.run_ok('bench-matrix', codes=(0,))
		self.assertEqual(merged, self.report('matrix-0-3'))
		self.assertIn('steps over 1.0%, by patch', r.stdout)

	# Catches a merge of shards measured under another QEMU or outside exact
	# mode, of a shard twice, of another run, and one silent on a missing
	# shard (its prefixes are "not measured", exit 1 as for a failed boot).
	def test_merge_refuses_and_names_missing(self):
		for i in (1, 2):
			self.run_ok('bench-matrix', f'--shard={i}/2', '--to=1', codes=(0,))
		one, two = (os.path.join(self.shards, f'shard-{i}-of-2.json') for i in (1, 2))
		b = self.load(two)
		b['env']['qemu'] = 'QEMU emulator version 0.1'
		err = self.refused('bench-matrix-merge', one, self.save(b, 'qemu.json'))
		self.assertIn('different environments (qemu: ', err)
		b = self.load(two)
		b['env']['exact'] = 'no'
		self.assertIn('exact: yes vs no',
			      self.refused('bench-matrix-merge', one, self.save(b, 'exact.json')))
		self.assertIn('given twice', self.refused('bench-matrix-merge', two, two))
		b = self.load(two)
		b['run']['suite'] = 'other*'
		b['fingerprint'] = shard.fingerprint(b['run'])
		self.assertIn('different runs (they differ in suite)',
			      self.refused('bench-matrix-merge', one, self.save(b, 'suite.json')))
		r = self.run_ok('bench-matrix-merge', one, codes=(1,))
		self.assertIn('shard(s) 2/2 missing: prefixes 1 not measured', r.stdout)
		self.assertIn('not measured: prefix 1 (fake/0001-mm-fake-change-1.patch)', r.stdout)


if __name__ == '__main__':
	unittest.main()
