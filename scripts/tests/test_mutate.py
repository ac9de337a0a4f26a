# SPDX-License-Identifier: GPL-2.0
"""make mutate (scripts/mmkunit/mutate.py): the operators on sample hunks
(a lock pair, READ_ONCE/WRITE_ONCE, a #define macro, comments), the scope
of a patch, and whole runs on a fake tree (fakerepo.py) whose "kernel" is
a small C program gcc builds in a fraction of a second: killed, survived,
stillborn and equivalent mutants, shards merged, ^C and SIGKILL in the
middle, BUDGET."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakerepo  # noqa: E402

sys.path.insert(0, os.path.join(fakerepo.REPO, 'scripts'))
from mmkunit import deps, kernel, mutate  # noqa: E402
from scripts.tests.test_runs import RunCase  # noqa: E402

SAMPLE_PATCH = r'''From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.com>
Subject: [PATCH] mm: sample

---
diff --git a/mm/sample.c b/mm/sample.c
index 1111111..2222222 100644
--- a/mm/sample.c
+++ b/mm/sample.c
@@ -1,3 +1,25 @@
 #include "sample.h"
+#define SAMPLE_BIG(x)	((x) > SAMPLE_LIMIT && (x) != 0)
 
 int sample;
+
+void sample_add(struct sample_state *s, int v)
+{
+	/* if (s->a < v) && comments are not code */
+	spin_lock(&s->lock);
+	s->sum += v;
+	WRITE_ONCE(s->count, READ_ONCE(s->count) + 1);
+	smp_wmb();
+	VM_BUG_ON(v < 0);
+	spin_unlock(&s->lock);
+	folio_mark_dirty(s->folio);
+}
+
+int sample_lazy(struct folio *folio)
+{
+	if (folio_test_lazyfree(folio) &&
+	    !folio_test_dirty(folio))
+		return sample_order(folio, __GFP_NOWARN | GFP_KERNEL, HPAGE_PMD_ORDER);
+	spin_unlock(&sample_lock);
+	return 0;
+}
diff --git a/mm/Kconfig b/mm/Kconfig
--- a/mm/Kconfig
+++ b/mm/Kconfig
@@ -1 +1,2 @@
 menu "mm"
+config SAMPLE
diff --git a/mm/tests/sample_kunit.c b/mm/tests/sample_kunit.c
--- /dev/null
+++ b/mm/tests/sample_kunit.c
@@ -0,0 +1 @@
+static int sample_test(int a) { if (a < 1) return 0; return 1; }
diff --git a/Documentation/mm/sample.rst b/Documentation/mm/sample.rst
--- /dev/null
+++ b/Documentation/mm/sample.rst
@@ -0,0 +1 @@
+if (a < b) in a document
'''

# The sample file after the patch: its first line and the patch's lines
SAMPLE_BASE = ['#include "sample.h"', '', 'int sample;']


def sample_file():
	added = mutate.added_lines(SAMPLE_PATCH)['mm/sample.c']
	lines = [''] * max(added)
	for n, text in added.items():
		lines[n - 1] = text
	lines[0], lines[2], lines[3] = '#include "sample.h"', '', 'int sample;'
	return lines, {n - 1 for n in added}


class TestGeneration(unittest.TestCase):
	def setUp(self):
		lines, mutable = sample_file()
		self.lines = lines
		self.ms = mutate.generate('sample/0001-mm-sample.patch', 'mm/sample.c', lines, mutable)
		self.by = {m.name: m for m in self.ms}

	def edit(self, name):
		return self.by[name].edits

	# which files of a patch are in scope: C under mm/ fs/ include/, not
	# the suites (mm/tests/), not Kconfig, not documentation
	def test_functions_not_enums_or_initialisers(self):
		code = ['enum mode {', '\tA,', '\tB,', '};', '',
			'static const int t[] = {', '\t1,', '};', '',
			'struct s {', '\tint x;', '};', '',
			'static int f(enum mode m)', '{', '\treturn m == A;', '}',
			'void g(void) {', '\tf(B);', '}']
		self.assertEqual(mutate.functions(code), [(14, 16), (17, 19)])

	def test_scope_of_a_patch(self):
		files = mutate.added_lines(SAMPLE_PATCH)
		self.assertEqual(sorted(files), ['Documentation/mm/sample.rst', 'mm/Kconfig',
						 'mm/sample.c', 'mm/tests/sample_kunit.c'])
		self.assertEqual([f for f in files if mutate.in_scope(f)], ['mm/sample.c'])
		# new-side line numbers of the added lines
		self.assertEqual(sorted(files['mm/sample.c'])[:2], [2, 5])

	# names are patch:file:line:operator#n, in line order, reproducible
	def test_names_and_order(self):
		names = [m.name for m in self.ms]
		self.assertTrue(all(n.startswith('sample/0001:mm/sample.c:') for n in names))
		lines = [m.line for m in self.ms]
		self.assertEqual(lines, sorted(lines))
		again = mutate.generate('sample/0001-mm-sample.patch', 'mm/sample.c',
					*sample_file())
		self.assertEqual(names, [m.name for m in again])
		self.assertEqual(len(names), len(set(names)))

	# a lock and its unlock are deleted together; an unlock never alone
	# (the unlock of another lock, sample_lock, has no pair: untouched)
	def test_lock_pair(self):
		pair = [m for m in self.ms if m.operator == 'del-lock-pair']
		self.assertEqual(len(pair), 1)
		self.assertEqual(sorted(pair[0].edits), [8, 13])
		self.assertEqual(self.lines[8].strip(), 'spin_lock(&s->lock);')
		self.assertEqual(self.lines[13].strip(), 'spin_unlock(&s->lock);')
		self.assertTrue(all(not v.strip() for v in pair[0].edits.values()))
		for m in self.ms:
			if m.operator in ('del-call', 'del-barrier'):
				for l in m.edits:
					self.assertNotIn('unlock', self.lines[l])

	# the macros: WRITE_ONCE / READ_ONCE become plain accesses, one each;
	# a #define line gets the expression operators, no statement ones
	def test_macros(self):
		plain = [m.edits[10].strip() for m in self.ms if m.operator == 'plain-access']
		self.assertEqual(plain, ['(s->count = READ_ONCE(s->count) + 1);',
					 'WRITE_ONCE(s->count, (s->count) + 1);'])
		define = {m.operator for m in self.ms if m.line == 2}
		self.assertEqual(define, {'gt-ge', 'bound+1', 'bound-1', 'and-or'})
		self.assertEqual(self.edit('sample/0001:mm/sample.c:2:bound+1#1')[1],
				 '#define SAMPLE_BIG(x)\t((x) > (SAMPLE_LIMIT + 1) && (x) != 0)')

	# barriers and calls are deleted; the debug-only VM_BUG_ON is left alone
	# and the comment line with "if (s->a < v) &&" gives nothing
	def test_statements(self):
		self.assertEqual(self.edit('sample/0001:mm/sample.c:12:del-barrier#1'), {11: '\t'})
		self.assertEqual(self.edit('sample/0001:mm/sample.c:15:del-call#1'), {14: '\t'})
		self.assertFalse([m for m in self.ms if m.line in (8, 13)])
		self.assertEqual(self.edit('sample/0001:mm/sample.c:9:early-return#1'),
				 {8: '\treturn; spin_lock(&s->lock);'})
		self.assertEqual(self.edit('sample/0001:mm/sample.c:20:early-return#1'),
				 {19: '\treturn 0; if (folio_test_lazyfree(folio) &&'})
		self.assertEqual(self.edit('sample/0001:mm/sample.c:10:swap-next#1'),
				 {9: self.lines[10], 10: self.lines[9]})

	# no early return before a return of the same value (false, 0, NULL,
	# nothing): that mutant would be the original; before another value, one
	def test_early_return_not_same_value(self):
		lines = ['bool f(int x)', '{', '\treturn false;', '}',
			 'void g(int x)', '{', '\treturn;', '}',
			 'int *h(int x)', '{', '\treturn NULL;', '}',
			 'int u(int x)', '{', '\treturn (0); /* none */', '}',
			 'bool t(int x)', '{', '\treturn true;', '}']
		ms = mutate.generate('s/0001-s.patch', 'mm/x.c', lines, set(range(len(lines))))
		er = {m.name: m.edits for m in ms if m.operator == 'early-return'}
		self.assertEqual(er, {'s/0001:mm/x.c:19:early-return#1':
				      {18: '\treturn 0; return true;'}})

	# conditions over two lines: negated whole, each operand dropped,
	# && <-> ||; flags dropped from an | chain; an order one less
	def test_conditions_and_constants(self):
		self.assertEqual(self.edit('sample/0001:mm/sample.c:20:negate#1'),
				 {19: '\tif (!(folio_test_lazyfree(folio) && !folio_test_dirty(folio)))',
				  20: ''})
		self.assertEqual(self.edit('sample/0001:mm/sample.c:20:drop-operand#1')[19],
				 '\tif (!folio_test_dirty(folio))')
		self.assertEqual(self.edit('sample/0001:mm/sample.c:20:drop-operand#2')[19],
				 '\tif (folio_test_lazyfree(folio))')
		self.assertEqual(self.edit('sample/0001:mm/sample.c:20:and-or#1')[19],
				 '\tif (folio_test_lazyfree(folio) ||')
		flags = sorted(m.edits[21].strip() for m in self.ms if m.operator == 'drop-flag')
		self.assertEqual(flags, [
			'return sample_order(folio, GFP_KERNEL, HPAGE_PMD_ORDER);',
			'return sample_order(folio, __GFP_NOWARN, HPAGE_PMD_ORDER);'])
		self.assertIn('(HPAGE_PMD_ORDER - 1)',
			      self.edit('sample/0001:mm/sample.c:22:order-1#1')[21])

	# < <-> <=, > <-> >=, +-1 on the bound; never on -> or << or #include
	def test_comparisons(self):
		lines = ['int f(int *p, int n)', '{', '\tif (p->a < n << 2)', '\t\treturn 1;',
			 '\treturn n >= p[1];', '}']
		ms = mutate.generate('x/0001-x.patch', 'mm/x.c', lines, {2, 4})
		got = {(m.line, m.operator): m.edits for m in ms}
		self.assertEqual(got[(3, 'lt-le')], {2: '\tif (p->a <= n << 2)'})
		self.assertEqual(got[(3, 'bound+1')], {2: '\tif (p->a < (n + 1) << 2)'})
		self.assertEqual(got[(5, 'ge-gt')], {4: '\treturn n > p[1];'})
		self.assertEqual(got[(5, 'bound-1')], {4: '\treturn n >= (p[1] - 1);'})
		self.assertEqual(len([k for k in got if k[1] in ('lt-le', 'gt-ge', 'ge-gt',
								  'le-lt')]), 2)
		self.assertFalse(mutate.generate('x/0001-x.patch', 'mm/x.c',
						 ['#include <linux/mm.h>'], {0}))

	def test_shards_partition_the_run_order(self):
		order = mutate.run_order(self.ms, '0')
		self.assertEqual(order, mutate.run_order(self.ms, '0'))
		self.assertNotEqual([m.name for m in order],
				    [m.name for m in mutate.run_order(self.ms, '1')])
		a, b, c = (mutate.shard_of(order, i, 3) for i in (1, 2, 3))
		self.assertEqual(sorted(m.name for m in a + b + c), sorted(m.name for m in order))
		self.assertRaises(mutate.Error, mutate.parse_shard, '3/2')
		self.assertRaises(mutate.Error, mutate.parse_shard, '0/2')

	def test_select_patches(self):
		series = ['lazyfree-thp/0001-a.patch', 'rcu-free/0001-b.patch',
			  'rcu-free/0005-c.patch']
		self.assertEqual(mutate.select_patches(series, '3'), series[2:])
		self.assertEqual(mutate.select_patches(series, 'rcu-free'), series[1:])
		self.assertEqual(mutate.select_patches(series, 'rcu-free/0005,1'),
				 [series[0], series[2]])
		self.assertEqual(mutate.select_patches(series, ''), series)
		self.assertRaises(mutate.Error, mutate.select_patches, series, '4')
		self.assertRaises(mutate.Error, mutate.select_patches, series, 'nope')

	# the killer named: a case that failed its checks before a splat,
	# a splat before a stopped guest, any of them before the nameless
	# cases kunit.py reports after a crash ("suite." with status ERROR)
	def test_killer(self):
		kills = {'lazyfree_thp.': 'kunit: ERROR', 'guest.stopped': 'stopped guest',
			 'guest.splat': 'splat: rcu stall', 'a.case_crashed': 'kunit: ERROR',
			 'lazyfree_thp.clean_discarded': 'kunit: FAIL'}
		order = []
		while kills:
			k = mutate.Runner.killer(kills)
			order.append(k)
			del kills[k]
		self.assertEqual(order, ['lazyfree_thp.clean_discarded', 'guest.splat',
					 'guest.stopped', 'a.case_crashed', 'lazyfree_thp.'])

	# DISTCC_HOSTS: ccache hands its misses to distcc, and make deps wants
	# Debian's distcc then (and only then)
	def test_distcc(self):
		old = os.environ.pop('DISTCC_HOSTS', None)
		try:
			self.assertNotIn('CCACHE_PREFIX', kernel.ccache_env())
			self.assertNotIn(('distcc', 'distcc'), deps.wanted())
			os.environ['DISTCC_HOSTS'] = '127.0.0.1:3632/2'
			self.assertEqual(kernel.ccache_env()['CCACHE_PREFIX'], 'distcc')
			self.assertIn(('distcc', 'distcc'), deps.wanted())
		finally:
			os.environ.pop('DISTCC_HOSTS', None)
			if old is not None:
				os.environ['DISTCC_HOSTS'] = old


# ---------------------------------------------------------------- whole runs

# The fake kernel: gcc builds mm/fake.c with the test program into the
# "bzImage"; exec runs it, and its output is the KTAP.  Every call is logged
# with the sha of mm/fake.c as it was then.
FAKE_KUNIT = r'''#!/usr/bin/env python3
import hashlib, json, os, re, subprocess, sys, time
args = sys.argv[1:]
sub = args[0]
opts = {}
for a in args[1:]:
	if a.startswith('--') and '=' in a:
		k, v = a[2:].split('=', 1)
		opts.setdefault(k, v)
ctl = os.environ['FAKE_CTL']
out = opts['build_dir']
with open('mm/fake.c', 'rb') as f:
	sha = hashlib.sha256(f.read()).hexdigest()[:12]
with open(os.path.join(ctl, 'calls'), 'a') as f:
	f.write(f'{sub} {sha} ' + ' '.join(args[1:]) + '\n')
bz = os.path.join(out, 'arch/x86/boot/bzImage')
if sub == 'config':
	os.makedirs(out, exist_ok=True)
	open(os.path.join(out, '.config'), 'w').close()
	sys.exit(0)
if sub == 'build':
	with open(os.path.join(ctl, 'calls')) as f:
		builds = sum(1 for l in f if l.startswith('build '))
	if str(builds) == os.environ.get('FAKE_SLEEP_AT'):
		child = subprocess.Popen(['sleep', '300'])
		with open(os.path.join(ctl, 'child.pid'), 'w') as f:
			f.write(str(child.pid))
		child.wait()
	os.makedirs(os.path.dirname(bz), exist_ok=True)
	sys.exit(subprocess.run(['gcc', '-Wall', '-Werror', '-Iinclude', '-o', bz, 'mm/fake.c',
				 'mm/fake_test.c']).returncode)
if sub == 'exec':
	if not os.path.isfile(bz):
		sys.exit(1)
	with open(os.path.join(ctl, 'booted'), 'a') as f:
		f.write(sha + '\n')
	with open(os.path.join(ctl, 'booted')) as f:
		boots = len(f.read().split())
	if str(boots) in os.environ.get('FAKE_PANIC_AT', '').split(','):
		with open(os.path.join(out, 'test.log'), 'w') as f:
			f.write("Kernel panic - not syncing: IO-APIC + timer doesn't work!\n")
		sys.exit(1)
	env = dict(os.environ)
	if opts.get('kernel_args', '').startswith('mm_mutant='):
		env['MM_MUTANT'] = opts['kernel_args'].split('=', 1)[1]
	text = subprocess.run([bz], stdout=subprocess.PIPE, text=True, env=env).stdout
	with open(os.path.join(out, 'test.log'), 'w') as f:
		f.write(text)
	print(text, flush=True)		# as kunit.py shows the KTAP
	cases = [{'name': m.group(2), 'status': 'PASS' if not m.group(1) else 'FAIL'}
		 for m in re.finditer(r'^    (not )?ok \d+ (\S+)', text, re.M)]
	with open(opts['json'], 'w') as f:
		json.dump({'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
			{'name': 'fake', 'sub_groups': [], 'test_cases': cases}]}, f)
	sys.exit(0)
sys.exit(2)
'''

FAKE_H = '''struct fake_state { int lock; int sum; int count; };
struct fake_pair { int a, b; };
static inline void spin_lock(int *l) { (*l)++; }
static inline void spin_unlock(int *l) { (*l)--; }
int fake_clamp(int x, int max);
struct fake_pair fake_pair_of(int a);
void fake_add(struct fake_state *s, int v);
'''

FAKE_TEST = r'''#include <stdio.h>
#include "fake.h"
static int n;
static void check(const char *name, int ok)
{
	printf("    %s %d %s\n", ok ? "ok" : "not ok", ++n, name);
}
int main(void)
{
	struct fake_state s = { 0 };
	struct fake_pair p = fake_pair_of(1);

	printf("KTAP version 1\n1..1\n    # Subtest: fake\n    1..3\n");
	check("fake.clamps", fake_clamp(5, 3) == 3 && fake_clamp(4, 3) == 3 &&
	      fake_clamp(1, 3) == 1);
	check("fake.pair", p.a == 1 && p.b == 2);
	fake_add(&s, 2);
	check("fake.adds", s.sum == 2 && s.count == 1 && s.lock == 0);
	printf("ok 1 fake\n");
	return 0;
}
'''

FAKE_C = '#include "fake.h"\nint fake;\n'

FAKE_PATCH = '''From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.com>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH] mm: fake functions

---
 mm/fake.c | 22 ++++++++++++++++++++++
 1 file changed, 22 insertions(+)

diff --git a/mm/fake.c b/mm/fake.c
index 0000000..1111111 100644
--- a/mm/fake.c
+++ b/mm/fake.c
@@ -1,2 +1,24 @@
 #include "fake.h"
 int fake;
+
+int fake_clamp(int x, int max)
+{
+	if (x > max)
+		return max;
+	return x;
+}
+
+struct fake_pair fake_pair_of(int a)
+{
+	struct fake_pair p = { a, a + 1 };
+
+	return p;
+}
+
+void fake_add(struct fake_state *s, int v)
+{
+	spin_lock(&s->lock);
+	s->sum += v;
+	s->count++;
+	spin_unlock(&s->lock);
+}
--
2.39.5
'''

N_MUTANTS = 13		# 7 of fake_clamp, 1 of fake_pair_of, 5 of fake_add
STILLBORN = 'fake/0001:mm/fake.c:15:early-return#1'	# return 0; in a struct function


class TestTable(unittest.TestCase):
	# the report's table has a row per feature group (the score each group
	# must reach) when the selection spans several groups, none for one
	def test_group_rows(self):
		def m(patch, status):
			return {'patch': patch, 'status': status, 'name': patch + ':x', 'diff': '',
				'file': 'mm/x.c', 'line': 1, 'killer': 'a.b', 'reason': ''}
		data = {'mutants': [m('rcu-free/0001-a.patch', 'killed'),
				    m('rcu-free/0002-b.patch', 'survived'),
				    m('rcu-free/0002-b.patch', 'killed'),
				    m('shmem-batch/0001-c.patch', 'killed')]}
		text = mutate.table(data)
		rows = {ln.split()[0]: ln.split() for ln in text.splitlines() if ln.endswith('%')}
		self.assertEqual(rows['rcu-free/*'][1:5], ['3', '2', '1', '0'])
		self.assertEqual(rows['rcu-free/*'][-2], '66.7')
		self.assertEqual(rows['shmem-batch/*'][-2], '100.0')
		self.assertEqual(rows['total'][1], '4')
		one = mutate.table({'mutants': data['mutants'][:3]})
		self.assertNotIn('rcu-free/*', one)


class MutateBase(RunCase):
	def setUp(self):
		super().setUp()
		fr = self.fr
		for name, text in (('mm/fake.c', FAKE_C), ('mm/fake.h', FAKE_H),
				   ('mm/fake_test.c', FAKE_TEST),
				   ('tools/testing/kunit/kunit.py', FAKE_KUNIT)):
			with open(os.path.join(fr.kdir, name), 'w') as f:
				f.write(text)
		with open(os.path.join(fr.repo, 'patches/fake/0001-mm-fake-change.patch'), 'w') as f:
			f.write(FAKE_PATCH)
		self.out = os.path.join(fr.build, 'mutate')

	def mutate(self, *args, **env):
		r = self.fr.run('mutate', *args, timeout=300, **env)
		self.assertIn(r.returncode, (0, 1), r.stdout + r.stderr)
		return r

	def result(self, stem='results'):
		with open(os.path.join(self.out, stem + '.json')) as f:
			return json.load(f)

	def text(self, stem):
		with open(os.path.join(self.out, stem + '.txt')) as f:
			return f.read()

	def calls(self):
		with open(os.path.join(self.fr.ctl, 'calls')) as f:
			return [l.split()[:2] for l in f]

	def tree_clean(self):
		tree = os.path.join(self.fr.build, 'tree')
		st = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'],
				    cwd=tree, capture_output=True, text=True, check=True).stdout
		return st.strip() == ''



class MutateRun(MutateBase):
	# one whole run: every status, the killing case, the survivors' diffs,
	# the table, JUnit (a survivor fails, an equivalent one does not), a
	# progress line with an ETA per mutant; the tree as it was after
	def test_run_reports_every_status(self):
		with open(os.path.join(self.fr.repo, 'patches/mutants-equivalent'), 'w') as f:
			f.write('# name reason\nfake/0001:mm/fake.c:6:gt-ge#1 x == max returns max, '
				'which is x\n')
		r = self.mutate()
		self.assertEqual(r.returncode, 1, r.stdout)	# survivors
		d = self.result()
		st = {m['name']: m for m in d['mutants']}
		self.assertEqual(len(st), N_MUTANTS)
		self.assertEqual(st['fake/0001:mm/fake.c:6:negate#1']['status'], 'killed')
		self.assertEqual(st['fake/0001:mm/fake.c:6:negate#1']['killer'], 'fake.fake.clamps')
		self.assertEqual(st['fake/0001:mm/fake.c:6:gt-ge#1']['status'], 'equivalent')
		self.assertEqual(st['fake/0001:mm/fake.c:6:bound-1#1']['status'], 'survived')
		self.assertEqual(st['fake/0001:mm/fake.c:20:del-lock-pair#1']['status'], 'survived')
		self.assertEqual(st['fake/0001:mm/fake.c:20:early-return#1']['killer'], 'fake.fake.adds')
		self.assertEqual(st[STILLBORN]['status'], 'stillborn')
		self.assertIn('error', st[STILLBORN]['reason'])
		self.assertIn('-\tif (x > max)\n+\tif (x > (max - 1))',
			      st['fake/0001:mm/fake.c:6:bound-1#1']['diff'])
		counts = {s: sum(1 for m in d['mutants'] if m['status'] == s) for s in mutate.STATUSES}
		self.assertEqual(counts, {'killed': 6, 'survived': 5, 'not reached': 0, 'stillborn': 1,
					  'equivalent': 1, 'not run': 0})
		text = self.text('results')
		self.assertRegex(text, r'fake/0001\s+13\s+6\s+5\s+0\s+1\s+1\s+0\s+54\.5 %')
		self.assertIn('survivors (5):', text)
		self.assertIn('fake/0001:mm/fake.c:6:negate#1: fake.fake.clamps', text)
		# the listed one is not run (EQUIVALENT=check would)
		self.assertEqual(st['fake/0001:mm/fake.c:6:gt-ge#1']['run'], 'listed')
		self.assertEqual(r.stdout.count('ETA'), N_MUTANTS - 1)
		self.assertIn(f'[{N_MUTANTS - 1}/{N_MUTANTS - 1}]', r.stdout)
		# one line per mutant: the build's and the guest's output go to its log
		self.assertNotIn('# Subtest: fake', r.stdout)
		with open(os.path.join(self.out, 'logs', '00000.log')) as f:
			self.assertIn('# Subtest: fake', f.read())
		junit = ET.parse(os.path.join(self.out, 'results-junit.xml')).getroot()
		fails = [tc.get('name') for tc in junit.iter('testcase') if tc.find('failure') is not None]
		self.assertEqual(len(fails), 5)
		self.assertNotIn('fake/0001:mm/fake.c:6:gt-ge#1', fails)
		self.assertTrue(self.tree_clean())
		self.assertFalse(os.path.exists(os.path.join(self.out, 'applied.json')))

	# a listed equivalent is counted without a boot; EQUIVALENT=check runs
	# it, and one a case kills is counted killed and reported as wrongly
	# listed
	def test_listed_equivalent_not_run_unless_checked(self):
		survivor, killed = 'fake/0001:mm/fake.c:6:gt-ge#1', 'fake/0001:mm/fake.c:6:negate#1'
		with open(os.path.join(self.fr.repo, 'patches/mutants-equivalent'), 'w') as f:
			f.write(f'{survivor} x == max returns max, which is x\n'
				f'{killed} a wrong claim\n')
		r = self.mutate()
		st = {m['name']: m for m in self.result()['mutants']}
		for n in (survivor, killed):
			self.assertEqual((st[n]['status'], st[n]['run']), ('equivalent', 'listed'))
		self.assertIn('2 mutant(s) listed in patches/mutants-equivalent not run', r.stdout)
		self.assertEqual(r.stdout.count('ETA'), N_MUTANTS - 2)
		r = self.mutate('--equivalent', 'check')
		st = {m['name']: m for m in self.result()['mutants']}
		self.assertEqual(st[survivor]['status'], 'equivalent')
		self.assertEqual(st[survivor]['run'], 'build')
		self.assertEqual(st[killed]['status'], 'killed')
		self.assertIn(f'note: {killed} is listed in patches/mutants-equivalent', self.text('results'))

	# a stillborn mutant never boots: the image is gone before its build,
	# no exec follows the failed build, no boot ever saw its source
	def test_stillborn_never_boots(self):
		self.mutate()
		d = self.result()
		sb = [m for m in d['mutants'] if m['status'] == 'stillborn']
		self.assertEqual([m['name'] for m in sb], [STILLBORN])
		calls = self.calls()
		builds = {sha for sub, sha in calls if sub == 'build'}
		with open(os.path.join(self.fr.ctl, 'booted')) as f:
			booted = f.read().split()
		self.assertEqual(len(booted), 1 + N_MUTANTS - 1)	# baseline + all but it
		self.assertEqual(len(builds), 1 + N_MUTANTS)
		for k, (sub, sha) in enumerate(calls):
			if sub == 'build' and sha not in booted:
				self.assertNotEqual(calls[k + 1:k + 2], [['exec', sha]])
		self.assertEqual(len(builds - set(booted)), 1)

	# SHARD=1/2 and SHARD=2/2, merged, give the table and the JSON of one run
	def test_merge_of_two_shards_equals_one_run(self):
		self.mutate('--shard=1/2')
		self.mutate('--shard=2/2')
		a, b = self.result('shard-1-of-2'), self.result('shard-2-of-2')
		self.assertEqual(len(a['mutants']) + len(b['mutants']), N_MUTANTS)
		self.assertFalse({m['name'] for m in a['mutants']} & {m['name'] for m in b['mutants']})
		r = self.fr.run('mutate-merge')
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.mutate()
		self.assertEqual(self.text('merged'), self.text('results'))
		keep = ('name', 'status', 'killer', 'diff')
		strip = lambda d: [{k: m[k] for k in keep} for m in d['mutants']]  # noqa: E731
		self.assertEqual(strip(self.result('merged')), strip(self.result()))
		# a shard given twice, or of another seed, is refused
		p = os.path.join(self.out, 'shard-1-of-2.json')
		r = self.fr.run('mutate-merge', p, p)
		self.assertEqual(r.returncode, 2)
		self.assertIn('given twice', r.stderr)
		other = os.path.join(self.fr.top, 'series-check-shard.json')
		with open(other, 'w') as f:
			json.dump({'command': 'series-check', 'fingerprint': 'x', 'rows': []}, f)
		r = self.fr.run('mutate-merge', p, other)
		self.assertEqual(r.returncode, 2)
		self.assertIn('not a shard of make mutate', r.stderr)
		self.mutate('--shard=2/2', '--seed=7')
		r = self.fr.run('mutate-merge')
		self.assertEqual(r.returncode, 2)
		self.assertIn('different mutant sets', r.stderr)

	def interrupt(self, sig):
		p = self.fr.start('mutate', FAKE_SLEEP_AT=3)	# the second mutant's build
		self.procs.append(p)
		pidfile = os.path.join(self.fr.ctl, 'child.pid')
		self.assertTrue(self.fr.wait_for(lambda: os.path.exists(pidfile)))
		with open(pidfile) as f:
			child = int(f.read())
		self.assertFalse(self.tree_clean())		# the mutant is in the tree
		p.send_signal(sig)
		out, _ = p.communicate(timeout=60)
		return p, out, child

	# ^C and SIGTERM in a mutant's build: the tree is restored, the build
	# killed, exit 130, the partial results say what ran
	def test_sigint_restores_the_tree(self):
		p, out, child = self.interrupt(signal.SIGINT)
		self.assertEqual(p.returncode, 130, out)
		self.assertTrue(self.tree_clean(), out)
		self.assertFalse(fakerepo.alive(child))
		d = self.result()
		self.assertFalse(d['complete'])
		self.assertEqual(sum(1 for m in d['mutants'] if m['status'] != 'not run'), 1)
		self.assertIn('interrupted after 1 mutant(s); the tree is restored', out)

	def test_sigterm_restores_the_tree(self):
		p, out, _child = self.interrupt(signal.SIGTERM)
		self.assertEqual(p.returncode, 130, out)
		self.assertTrue(self.tree_clean(), out)

	# SIGKILL cannot be caught: the next run restores the file it names
	def test_next_run_restores_after_sigkill(self):
		p, _out, child = self.interrupt(signal.SIGKILL)
		os.kill(child, signal.SIGKILL)
		self.assertFalse(self.tree_clean())
		r = self.mutate('--budget=0.0001')
		self.assertIn('restored mm/fake.c', r.stdout)
		self.assertTrue(self.tree_clean())

	# a boot in which no case ran (a panic before the suites, as TCG gives
	# on a loaded host) is booted again: the second boot decides
	def test_boot_without_cases_is_repeated(self):
		r = self.mutate('--shard=1/4', FAKE_PANIC_AT='2')	# the first mutant's boot
		d = self.result('shard-1-of-4')
		first = d['mutants'][0] if d['mutants'][0]['status'] != 'not run' else None
		ran = [m for m in d['mutants'] if m['reboots']]
		self.assertEqual(len(ran), 1, r.stdout)
		self.assertIn('no case ran in the guest', r.stdout)
		self.assertNotIn('guest.', ran[0]['killer'])
		self.assertIsNotNone(first)
		# both boots panic: killed by the splat
		with open(os.path.join(self.fr.ctl, 'booted')) as f:
			n = len(f.read().split())		# boots so far; then the baseline
		r = self.mutate('--shard=1/4', '--fresh', FAKE_PANIC_AT=f'{n + 2},{n + 3}')
		d = self.result('shard-1-of-4')
		dead = [m for m in d['mutants'] if m['reboots']]
		self.assertEqual(dead[0]['status'], 'killed')
		self.assertEqual(dead[0]['killer'], 'guest.splat')

	# SUITE= narrows the functional boots to a glob; shards of different
	# SUITE= are not merged
	def test_suite_glob(self):
		self.mutate('--filter_glob=fake.clamp*', '--budget=0.0001', '--shard=1/2')
		with open(os.path.join(self.fr.ctl, 'calls')) as f:
			execs = [l for l in f if l.startswith('exec ')]
		self.assertTrue(execs)
		self.assertTrue(all(l.rstrip().endswith("--filter=speed>slow fake.clamp*")
				    for l in execs), execs)
		self.mutate('--budget=0.0001', '--shard=2/2')
		r = self.fr.run('mutate-merge')
		self.assertEqual(r.returncode, 2)
		self.assertIn('different suites', r.stderr)

	# MUTANTS=: only the mutants whose names match, in the run order; a
	# glob that matches none is an error, not an empty pass
	def test_only(self):
		self.mutate('--only=*:mm/fake.c:5:*,*:mm/fake.c:6:*')
		names = [m['name'] for m in self.result()['mutants']]
		self.assertTrue(names)
		self.assertTrue(all(':mm/fake.c:5:' in n or ':mm/fake.c:6:' in n for n in names), names)
		r = self.fr.run('mutate', '--only=nosuch*', timeout=300)
		self.assertEqual(r.returncode, 2)
		self.assertIn('no mutant of the selection has such a name', r.stderr)

	# BUDGET: stops cleanly before a mutant that would not fit, says so,
	# and the report counts the rest as not run
	def test_budget_stops_cleanly(self):
		r = self.mutate('--budget=0.0001')
		self.assertIn('BUDGET=0.0001 min reached', r.stdout)
		d = self.result()
		self.assertFalse(d['complete'])
		self.assertTrue(all(m['status'] == 'not run' for m in d['mutants']))
		self.assertTrue(self.tree_clean())
		self.assertRegex(self.text('results'), r'fake/0001\s+13\s+0\s+0\s+0\s+0\s+0\s+13')


if __name__ == '__main__':
	unittest.main()


# ---------------------------------------------------------------- MODE=schemata

# The fake switch: mm_mutant_on() reads the active id from MM_MUTANT (which
# the fake kunit.py sets from --kernel_args=mm_mutant=N), records what ran,
# and prints the reach line at exit as the kernel does after a suite.
FAKE_SWITCH_H = r'''#include <stdio.h>
#include <stdlib.h>
static unsigned char mm_mutant_seen[4096];
static inline int mm_mutant_on(unsigned int id)
{
	const char *e = getenv("MM_MUTANT");

	if (!e)
		return 0;
	mm_mutant_seen[id] = 1;
	return (unsigned int)atoi(e) == id;
}
__attribute__((destructor)) static void mm_mutant_dump(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < 4096; i++)
		if (mm_mutant_seen[i])
			printf("%s%u", n++ ? "," : "mm_mutant: reached in fake: ", i);
	if (n)
		printf("\n");
}
'''


def fake_switch_patch() -> str:
	lines = FAKE_SWITCH_H.rstrip('\n').split('\n')
	return ('From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
		'From: Test <test@example.com>\nSubject: [PATCH] fake switch\n\n---\n'
		'diff --git a/include/linux/mm_mutant.h b/include/linux/mm_mutant.h\n'
		'new file mode 100644\nindex 0000000..1111111\n--- /dev/null\n'
		'+++ b/include/linux/mm_mutant.h\n'
		f'@@ -0,0 +1,{len(lines)} @@\n' + ''.join('+' + l + '\n' for l in lines) + '--\n2.39.5\n')


# fake_add's lock pair: the test program checks the lock count, but this
# line is never run by the fake suite: fake_unused() is called by no case
FAKE_UNUSED = '''
+
+int fake_unused(int x)
+{
+	return x > 2;
+}
'''


class SchemataRun(MutateBase):
	def setUp(self):
		super().setUp()
		fr = self.fr
		sd = os.path.join(fr.repo, 'patches', 'mutate')
		os.makedirs(sd)
		with open(os.path.join(sd, '0001-fake-switch.patch'), 'w') as f:
			f.write(fake_switch_patch())
		# the fake suite's source, for the cache's suite hashes
		with open(os.path.join(fr.repo, 'mm/tests/fake_kunit.c'), 'w') as f:
			f.write('static struct kunit_suite fake_suite = {\n\t.name = "fake",\n};\n')
		# one function no case calls: its mutants are not reached
		patch = FAKE_PATCH.replace(' mm/fake.c | 22 ++++++++++++++++++++++',
					   ' mm/fake.c | 27 +++++++++++++++++++++++++++')
		patch = patch.replace('@@ -1,2 +1,24 @@', '@@ -1,2 +1,29 @@')
		patch = patch.replace('+	spin_unlock(&s->lock);\n+}\n',
				      '+	spin_unlock(&s->lock);\n+}\n' + FAKE_UNUSED.lstrip('\n'))
		with open(os.path.join(fr.repo, 'patches/fake/0001-mm-fake-change.patch'), 'w') as f:
			f.write(patch)
		with open(os.path.join(fr.kdir, 'mm/fake.h'), 'a') as f:
			f.write('int fake_unused(int x);\n')

	def statuses(self, d):
		return {m['name']: m['status'] for m in d['mutants']}

	# one build for every switched mutant, a boot per reached one, none for
	# the lines no case runs; the verdicts are those of MODE=each; the
	# struct function's early return does not compile as a switch and gets
	# a build of its own (stillborn there, as in MODE=each)
	def test_schemata_equals_each(self):
		self.mutate()
		each = self.statuses(self.result())
		os.unlink(os.path.join(self.out, 'cache.json'))
		with open(os.path.join(self.fr.ctl, 'calls')) as f:
			before = len(f.readlines())
		r = self.mutate('--mode=schemata')
		d = self.result()
		sch = self.statuses(d)
		unreached = {n for n, s in sch.items() if s == 'not reached'}
		self.assertEqual(sorted(unreached), sorted(n for n in sch if ':mm/fake.c:28:' in n))
		self.assertEqual({n: s for n, s in sch.items() if n not in unreached},
				 {n: s for n, s in each.items() if n not in unreached})
		self.assertTrue(all(each[n] == 'survived' for n in unreached))
		self.assertEqual(d['schemata']['own_build'], {STILLBORN: 'its switch does not compile'})
		with open(os.path.join(self.fr.ctl, 'calls')) as f:
			calls = [l.split()[0] for l in f.readlines()[before:]]
		n_switched = len(sch) - 1
		# two schemata builds (the second without the struct function's
		# early return), the series build of the stillborn one and its own
		self.assertEqual(calls.count('build'), 4, calls)
		# the schemata baseline, a boot per reached switched mutant, the
		# series baseline; the stillborn one never boots
		self.assertEqual(calls.count('exec'), 1 + n_switched - len(unreached) + 1, calls)
		self.assertIn('not reached: no case runs these lines', self.text('results'))
		self.assertIn('mm/fake.c:28', self.text('results'))
		self.assertIn(f'{len(unreached)} not reached (no boot)', r.stdout)
		self.assertTrue(self.tree_clean())
		self.assertFalse(os.path.exists(os.path.join(self.out, 'schemata.json')))

	# a second run with nothing changed reuses every result and neither
	# builds nor boots; a changed suite re-runs the mutants it reaches, and
	# only those; a changed patch re-runs its mutants
	def test_cache(self):
		self.mutate('--mode=schemata')
		first = self.statuses(self.result())
		calls = len(self.calls())
		r = self.mutate('--mode=schemata')
		self.assertEqual(len(self.calls()), calls, 'nothing built or booted')
		self.assertIn(f'{len(first)} of {len(first)} result(s) reused', r.stdout)
		self.assertEqual(self.statuses(self.result()), first)
		self.assertTrue(all(m['reused'] for m in self.result()['mutants']))
		# the fake suite changes: what it reaches runs again; the lines it
		# does not reach and the mutant of its own build stay
		with open(os.path.join(self.fr.repo, 'mm/tests/fake_kunit.c'), 'a') as f:
			f.write('/* a new case */\n')
		r = self.mutate('--mode=schemata')
		d = self.result()
		again = {m['name'] for m in d['mutants'] if not m['reused']}
		reached = {m['name'] for m in d['mutants'] if m['reach']}
		self.assertEqual(again, reached | {STILLBORN})
		self.assertTrue(all(':mm/fake.c:28:' not in n for n in again))
		self.assertEqual(self.statuses(d), first)
		# a suite the mutants do not reach changes: everything reused
		# after the baseline
		with open(os.path.join(self.fr.repo, 'mm/tests/fake_other_kunit.c'), 'w') as f:
			f.write('static struct kunit_suite other_suite = {\n\t.name = "other",\n};\n')
		r = self.mutate('--mode=schemata')
		d = self.result()
		self.assertEqual({m['name'] for m in d['mutants'] if not m['reused']}, {STILLBORN})
		# the patch changes: all its mutants run again
		with open(os.path.join(self.fr.repo, 'patches/fake/0001-mm-fake-change.patch'), 'a') as f:
			f.write('\n')
		self.mutate('--mode=schemata')
		self.assertFalse(any(m['reused'] for m in self.result()['mutants']))


	# a listed mutant that a kept result says a case killed stays killed,
	# and noted, when another suite changes (no kept result holds whole);
	# the run boots nothing for it
	def test_listed_kill_kept(self):
		killed = 'fake/0001:mm/fake.c:6:negate#1'
		with open(os.path.join(self.fr.repo, 'patches/mutants-equivalent'), 'w') as f:
			f.write(f'{killed} a wrong claim\n')
		self.mutate('--mode=schemata', '--equivalent', 'check')
		self.assertEqual(self.statuses(self.result())[killed], 'killed')
		with open(os.path.join(self.fr.repo, 'mm/tests/fake_other_kunit.c'), 'w') as f:
			f.write('static struct kunit_suite other_suite = {\n\t.name = "other",\n};\n')
		self.mutate('--mode=schemata')
		m = {x['name']: x for x in self.result()['mutants']}[killed]
		self.assertEqual((m['status'], m['reused']), ('killed', True))
		self.assertIn(f'note: {killed} is listed in patches/mutants-equivalent',
			      self.text('results'))


def fake_variant(name, after, old, new):
	"""patches/variants/NAME.patch text: @old lines of mm/fake.c as it is
	after the series (@after) replaced by @new."""
	import difflib
	lines = after.split('\n')
	i = next(k for k in range(len(lines)) if lines[k:k + len(old)] == old)
	changed = lines[:i] + new + lines[i + len(old):]
	body = '\n'.join(difflib.unified_diff(lines, changed, 'a/mm/fake.c', 'b/mm/fake.c',
					     lineterm=''))
	return (f'Subject: [PATCH] variant: {name}\n\n---\n'
		f'diff --git a/mm/fake.c b/mm/fake.c\n{body}\n')


class VariantsRun(SchemataRun):
	# SchemataRun's own cases run there only
	test_schemata_equals_each = test_cache = test_listed_kill_kept = None

	def setUp(self):
		super().setUp()
		with open(os.path.join(self.fr.repo, 'patches/fake/0001-mm-fake-change.patch')) as f:
			added = [l[1:] for l in f.read().split('\n')
				 if l.startswith('+') and not l.startswith('+++')]
		after = FAKE_C + '\n'.join(added) + '\n'
		vd = os.path.join(self.fr.repo, 'patches', 'variants')
		os.makedirs(vd)
		# x == max returns max, which is x: nothing can pin it
		with open(os.path.join(vd, 'fake-clamp-ge.patch'), 'w') as f:
			f.write(fake_variant('clamp-ge', after, ['\tif (x > max)'], ['\tif (x >= max)']))
		# counts twice: fake.adds decides on it (a case that pins)
		with open(os.path.join(vd, 'fake-add-twice.patch'), 'w') as f:
			f.write(fake_variant('add-twice', after, ['\ts->count++;'],
					     ['\ts->count++;', '\t/* again */', '\ts->count++;']))

	def variants(self):
		return {m['name']: m for m in self.result()['mutants'] if m.get('variant')}

	# the variants of the selected patches run with the mutants, switched
	# in the schemata kernel and built on their own in MODE=each, with the
	# same verdicts; a case that fails on one is pinned, reported apart
	# from the per-patch table, in the JUnit, and in the exit code
	def test_variants_run_with_the_mutants(self):
		for mode, run in (('schemata', 'switched'), ('each', 'build')):
			r = self.mutate(f'--mode={mode}', '--fresh')
			self.assertEqual(r.returncode, 1)
			v = self.variants()
			self.assertEqual({n: (m['status'], m['run']) for n, m in v.items()},
					 {'variant:fake-clamp-ge': ('survived', run),
					  'variant:fake-add-twice': ('killed', run)}, mode)
			self.assertIn('adds', v['variant:fake-add-twice']['killer'])
			text = self.text('results')
			self.assertIn('variants (2, 1 pinning a case)', text)
			self.assertRegex(text, r'fake-add-twice +fake/0001, \w+: PINNED: \S*adds')
			self.assertRegex(text, r'fake-clamp-ge +fake/0001, \w+: nothing pinned')
			self.assertNotIn('variant:', text.split('variants (')[0])
			root = ET.parse(os.path.join(self.out, 'results-junit.xml')).getroot()
			ts = next(t for t in root if t.get('name') == 'mutate variants')
			self.assertEqual(ts.get('failures'), '1')
			self.assertTrue(self.tree_clean())
		# ALT=none: no variant
		self.mutate('--mode=schemata', '--alt=none')
		self.assertEqual(self.variants(), {})
		self.assertEqual(self.result()['total_variants'], 0)

	# the exit code: a pinned case or a variant that does not build is a
	# failure like a survivor; a variant that pins nothing is not
	def test_exit_code(self):
		killed = {'status': 'killed', 'variant': ''}
		self.assertEqual(mutate.exit_code([killed]), 0)
		self.assertEqual(mutate.exit_code([killed, {'status': 'survived', 'variant': 'v'}]), 0)
		self.assertEqual(mutate.exit_code([killed, {'status': 'not reached', 'variant': 'v'}]), 0)
		self.assertEqual(mutate.exit_code([killed, {'status': 'killed', 'variant': 'v'}]), 1)
		self.assertEqual(mutate.exit_code([killed, {'status': 'stillborn', 'variant': 'v'}]), 1)
		self.assertEqual(mutate.exit_code([{'status': 'survived', 'variant': ''}]), 1)
