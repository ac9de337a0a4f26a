# SPDX-License-Identifier: GPL-2.0
"""make mutate MODE=schemata (scripts/mmkunit/schemata.py): every operator
switched on a sample file that gcc compiles on the host; with no mutant
active the switched program is the original one (same output, same machine
code), with mutant N active it is the program of mutant N as MODE=each
builds it; places that cross; the reach lines of a boot; the cache."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from mmkunit import mutate, schemata  # noqa: E402

STUB = r'''#include <stdio.h>
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) do { *(volatile __typeof__(x) *)&(x) = (v); } while (0)
#define smp_wmb() __asm__ __volatile__("" ::: "memory")
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) do { __atomic_store_n(p, v, __ATOMIC_RELEASE); } while (0)
#define F_A 1
#define F_B 2
#define F_C 4
#define FOO_ORDER 3
struct st { int lock; int sum; int count; int flag; int order; int notes; };
static inline void spin_lock(int *l) { (*l)++; }
static inline void spin_unlock(int *l) { (*l)--; }
void note(struct st *s, int v);
int pick(int order, int v);
'''

# The sample of every operator; its lines are all "added"
SAMPLE = r'''#include "stub.h"

int clamp(int x, int max)
{
	if (x > max)
		return max;
	return x < 0 ? 0 : x;
}

int both(struct st *s, int a, int b)
{
	if (a >= 1 && b <= 2 &&
	    s->count != 5)
		return a + b;
	while (a < b)
		a++;
	return a;
}

void add(struct st *s, int v)
{
	spin_lock(&s->lock);
	s->sum += v;
	WRITE_ONCE(s->count, READ_ONCE(s->count) + 1);
	smp_wmb();
	spin_unlock(&s->lock);
	note(s, v);
	s->flag = F_A | F_B | F_C;
	s->order = pick(FOO_ORDER, v);
}

int load(struct st *s)
{
	int v = smp_load_acquire(&s->count);
	struct st t = { .sum = v, .count = v >= 2 };

	smp_store_release(&s->sum, v + t.count);
	for (int i = 0; i < v; i++)
		s->notes++;
	return v;
}
'''

DRIVER = r'''#include "stub.h"
int clamp(int x, int max);
int both(struct st *s, int a, int b);
void add(struct st *s, int v);
int load(struct st *s);
void note(struct st *s, int v) { s->notes += v; }
int pick(int order, int v) { return order * 10 + v; }
int main(void)
{
	int x;

	for (x = -2; x <= 5; x++)
		printf("clamp %d %d\n", x, clamp(x, 3));
	for (x = 0; x < 4; x++) {
		struct st s = { .count = x + 3 };
		int r = both(&s, x, 2);

		printf("both %d %d\n", x, r);
		add(&s, x);
		r = load(&s);
		printf("add %d %d %d %d %d %d %d %d\n", x, s.lock, s.sum, s.count, s.flag,
		       s.order, s.notes, r);
	}
	return 0;
}
'''

SWITCH_H = r'''unsigned int mm_mutant_active;
static inline int mm_mutant_on(unsigned int id) { return id == mm_mutant_active; }
'''

# every operator of mutate.py, each switched in the sample
OPERATORS = {'negate', 'drop-operand', 'cond-true', 'cond-false', 'lt-le', 'le-lt', 'gt-ge',
	     'ge-gt', 'bound+1', 'bound-1', 'and-or', 'plain-access', 'drop-flag', 'order-1',
	     'del-barrier', 'del-lock-pair', 'del-call', 'early-return', 'swap-next'}


def gcc(d, out, sources, *flags):
	r = subprocess.run(['gcc', '-O2', '-Wall', '-Werror', '-Wno-unused', '-Wno-parentheses', '-I', d, *flags, '-o', os.path.join(d, out)] +
			   [os.path.join(d, s) for s in sources], capture_output=True, text=True)
	return r


def write_sources(d, files):
	"""@files (name, text) into @d, with the switch header of the host
	programs: linux/mm_mutant.h, mm_mutant_on() reading a global."""
	for name, text in files:
		with open(os.path.join(d, name), 'w') as f:
			f.write(text)
	os.makedirs(os.path.join(d, 'linux'))
	with open(os.path.join(d, 'linux', 'mm_mutant.h'), 'w') as f:
		f.write('extern unsigned int mm_mutant_active;\n'
			'static inline int mm_mutant_on(unsigned int id) '
			'{ return id == mm_mutant_active; }\n')


class TestSwitching(unittest.TestCase):
	@classmethod
	def setUpClass(cls):
		cls.tmp = tempfile.TemporaryDirectory()
		d = cls.d = cls.tmp.name
		write_sources(d, (('stub.h', STUB), ('driver.c', DRIVER), ('sample.c', SAMPLE),
				  ('linux_mm_mutant.h', SWITCH_H)))
		cls.lines = SAMPLE.split('\n')
		cls.ms = mutate.generate('s/0001-s.patch', 'mm/sample.c', cls.lines,
					 set(range(len(cls.lines))))
		cls.ids = {m.name: k + 1 for k, m in enumerate(cls.ms)}
		cls.text, cls.cover, cls.own = schemata.switch_file(cls.ms, cls.lines, cls.ids)
		with open(os.path.join(d, 'switched.c'), 'w') as f:
			f.write(cls.text + '\nunsigned int mm_mutant_active;\n'
				'__attribute__((constructor)) static void mm_mutant_init(void)\n'
				'{ const char *e = getenv("MM_MUTANT"); '
				'mm_mutant_active = e ? atoi(e) : 0; }\n')
		with open(os.path.join(d, 'switched.c')) as f:
			body = f.read()
		with open(os.path.join(d, 'switched.c'), 'w') as f:
			f.write('#include <stdlib.h>\n' + body)
		r = gcc(d, 'switched', ['driver.c', 'switched.c'])
		assert r.returncode == 0, r.stderr + cls.text
		r = gcc(d, 'original', ['driver.c', 'sample.c'])
		assert r.returncode == 0, r.stderr
		cls.original = cls.run_prog('original')

	@classmethod
	def tearDownClass(cls):
		cls.tmp.cleanup()

	@classmethod
	def run_prog(cls, name, active=0):
		return subprocess.run([os.path.join(cls.d, name)], capture_output=True, text=True,
				      env=dict(os.environ, MM_MUTANT=str(active)), timeout=10).stdout

	# every operator has mutants in the sample, and all of them are
	# switched (none left to a build of its own)
	def test_every_operator_switched(self):
		self.assertEqual({m.operator for m in self.ms}, OPERATORS)
		self.assertEqual(self.own, {})
		self.assertTrue(self.text.startswith(schemata.HEADER + '\n'))
		# one line more (the include), no line moved
		self.assertEqual(len(self.text.split('\n')), len(self.lines) + 1)

	# no mutant active: the output of the original program, and with the
	# switch a constant 0, the same machine code
	def test_no_active_id_is_the_original(self):
		self.assertEqual(self.run_prog('switched', 0), self.original)
		d = self.d
		with open(os.path.join(d, 'off.c'), 'w') as f:
			f.write('#define mm_mutant_on(id) 0\n' +
				self.text.replace(schemata.HEADER + '\n', ''))
		for src, obj in (('sample.c', 'a.o'), ('off.c', 'b.o')):
			r = subprocess.run(['gcc', '-O2', '-w', '-I', d, '-c', '-o', os.path.join(d, obj),
					    os.path.join(d, src)], capture_output=True, text=True)
			self.assertEqual(r.returncode, 0, r.stderr)

		def code(obj):
			out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', os.path.join(d, obj)],
					     capture_output=True, text=True).stdout
			return [l.split(':', 1)[1].strip() for l in out.split('\n') if re.match(r'\s+[0-9a-f]+:', l)]
		self.assertEqual(code('a.o'), code('b.o'))

	# mutant N active: the program of mutant N built alone (MODE=each)
	def test_active_id_is_the_mutant(self):
		d = self.d
		checked = 0
		for m in self.ms:
			with open(os.path.join(d, 'each.c'), 'w') as f:
				f.write('\n'.join(m.apply(self.lines)))
			r = gcc(d, 'each', ['driver.c', 'each.c'])
			if r.returncode != 0:
				continue		# stillborn in MODE=each
			want = self.run_prog('each')
			self.assertEqual(self.run_prog('switched', self.ids[m.name]), want, m.name)
			checked += 1
		self.assertGreater(checked, len(self.ms) - 3)

	# the switches themselves: an expression, a condition over two lines,
	# a deletion, an insertion, a swap
	def test_switch_shapes(self):
		t = self.text
		i = self.ids
		self.assertIn(f' mm_mutant_on({i["s/0001:mm/sample.c:5:gt-ge#1"]}) ? (x >= max) : ', t)
		self.assertIn(f'if (mm_mutant_on({i["s/0001:mm/sample.c:5:early-return#1"]})) {{ return 0; }} '
			      'if (', t)
		n = i['s/0001:mm/sample.c:25:del-barrier#1']
		self.assertIn(f'if (mm_mutant_on({n})) {{  }} else ', t)
		self.assertIn('else { smp_wmb(); } }', t)
		n = i['s/0001:mm/sample.c:12:negate#1']
		self.assertIn(f'mm_mutant_on({n}) ? (!(a >= 1 && b <= 2 && s->count != 5))', t)
		# the lock and its unlock, one id
		n = i['s/0001:mm/sample.c:22:del-lock-pair#1']
		self.assertEqual(t.count(f'mm_mutant_on({n})'), 2)
		# WRITE_ONCE is a statement: switched as one
		n = i['s/0001:mm/sample.c:24:plain-access#1']
		self.assertIn(f'if (mm_mutant_on({n})) {{ (s->count = READ_ONCE(s->count) + 1); }} '
			      'else ', t)
		# a designated initialiser's field, and the middle of a for
		n = i['s/0001:mm/sample.c:35:ge-gt#1']
		self.assertIn(f'.count = (mm_mutant_on({n}) ? (v > 2)', t)
		n = i['s/0001:mm/sample.c:38:lt-le#1']
		self.assertIn(f'for (int i = 0; (mm_mutant_on({n}) ? (i <= v)', t)

	# places that cross: the later one keeps its own build
	def test_crossing_places(self):
		text = 'int f(int a, int b)\n{\n\treturn a + b;\n}\n'
		x = schemata.Switch(1, text.index('a + b'), text.index('a + b') + 5, 'expr', 'a - b')
		y = schemata.Switch(2, text.index('b;'), text.index('b;') + 2, 'stmt', '')
		out, dropped = schemata.render(text, [x, y])
		self.assertEqual(dropped, {2})
		self.assertIn('(mm_mutant_on(1) ? (a - b) : (a + b))', out)
		# nested: both kept, the inner one in the outer one's original
		z = schemata.Switch(3, text.index('a + b'), text.index('a + b') + 1, 'expr', 'b')
		out, dropped = schemata.render(text, [x, z])
		self.assertEqual(dropped, set())
		self.assertIn('(mm_mutant_on(1) ? (a - b) : ((mm_mutant_on(3) ? (b) : (a)) + b))', out)

	# a #define and a line outside any function keep their own build
	def test_own_build(self):
		lines = ['#define BIG(x) ((x) > 3)', 'int limit = 4 > 3;', 'int f(int x)', '{',
			 '\treturn BIG(x);', '}', 'static const int t[] = {', '\t[0] = 1 < 2,', '};']
		ms = mutate.generate('s/0001-s.patch', 'mm/x.c', lines, {0, 1, 7})
		# no early return among an initialiser's elements (not a function)
		self.assertNotIn('early-return', {m.operator for m in ms if m.line == 8})
		ids = {m.name: k + 1 for k, m in enumerate(ms)}
		text, _cover, own = schemata.switch_file(ms, lines, ids)
		self.assertIsNone(text)
		self.assertEqual(set(own.values()), {'a #define', 'outside a function body'})
		# an early return in a local's initialiser or after an #ifdef in
		# an expression: no statement starts there
		lines = ['int f(int x)', '{', '\tstruct s q = {', '\t\t.a = x,', '\t};', '',
			 '\treturn x |', '#ifdef A', '\t\t2 |', '#endif', '\t\t1;', '}']
		ms = mutate.generate('s/0001-s.patch', 'mm/x.c', lines, {3, 8})
		er = [m for m in ms if m.operator == 'early-return']
		self.assertEqual(len(er), 2)
		_t, _c, own = schemata.switch_file(er, lines, {m.name: k + 1 for k, m in enumerate(er)})
		self.assertEqual(set(own.values()), {'not at the start of a statement'})
		self.assertEqual(len(own), 2)
		ms = mutate.generate('s/0001-s.patch', 'include/linux/x.h', ['int f(int x)', '{',
									'\treturn x > 3;', '}'], {2})
		_t, _c, own = schemata.switch_file(ms, ['int f(int x)', '{', '\treturn x > 3;', '}'],
						   {m.name: 1 for m in ms})
		self.assertEqual(set(own.values()), {'a header under include/'})

	# a compiler error in a switch names its mutant
	def test_error_ids(self):
		cover = {'mm/a.c': {4: (10, 10), 5: (12, 14)}}
		log = ('  CC      mm/a.c\n../tree/mm/a.c:13:5: error: expected ";"\n'
		       'mm/a.c:10:1: error: x\n')
		self.assertEqual(schemata.error_ids(log, cover), ({4, 5}, False))
		self.assertEqual(schemata.error_ids('mm/b.c:3:1: error: y\n', cover), (set(), True))


# Variants (patches/variants/) on a sample: each is the sample with a few
# lines changed, as a posted alternative would change them
VSAMPLE = r"""#include "stub.h"
#define LIMIT 4
struct box { int a; };

int hold(struct st *s, int i)
{
	if (s->flag != 1)
		return 0;
	return i < s->count;
}

int step(struct st *s, int v)
{
	if (v > LIMIT)
		return pick(v, s->sum);
	s->sum += v;
	return s->sum < 8;
}
"""

VDRIVER = r"""#include "stub.h"
int hold(struct st *s, int i);
int step(struct st *s, int v);
int pick(int order, int v) { return order * 10 + v; }
void note(struct st *s, int v) { }
int main(void)
{
	for (int v = 0; v < 7; v++) {
		struct st s = { .flag = v & 1, .count = 3, .sum = v };

		printf("%d %d %d %d\n", v, hold(&s, v), step(&s, v), s.sum);
	}
	return 0;
}
"""

# name -> (old lines, new lines) replaced in VSAMPLE
VARIANTS = {
	'delete-if': (['\tif (s->flag != 1)', '\t\treturn 0;'], []),
	'insert-stmts': (['\ts->sum += v;'],
			 ['\t/* twice */', '\tif (v == 2) {', '\t\ts->sum += 100;', '\t}',
			  '\ts->sum += v;']),
	'return-expr': (['\treturn s->sum < 8;'], ['\treturn s->sum <= 8;']),
	'one-to-two': (['\t\treturn pick(v, s->sum);'], ['\t\treturn pick(v,', '\t\t\t    s->sum + 1);']),
	'define': (['#define LIMIT 4'], ['#define LIMIT 5']),
	'struct': (['struct box { int a; };'], ['struct box { int a; int b; };']),
}


def vapply(text, old, new):
	lines = text.split('\n')
	i = next(k for k in range(len(lines)) if lines[k:k + len(old)] == old)
	return lines[:i] + new + lines[i + len(old):]


class TestVariants(unittest.TestCase):
	@classmethod
	def setUpClass(cls):
		cls.tmp = tempfile.TemporaryDirectory()
		d = cls.d = cls.tmp.name
		write_sources(d, (('stub.h', STUB), ('vdriver.c', VDRIVER)))
		cls.lines = VSAMPLE.split('\n')
		cls.vs, cls.news = [], {}
		for k, (name, (old, new)) in enumerate(VARIANTS.items()):
			cls.news[name] = vapply(VSAMPLE, old, new)
			edits = mutate.variant_edits(cls.lines, cls.news[name], name)
			cls.vs.append(mutate.Mutant(name=f'variant:{name}', patch='s/0001-s.patch',
						    file='mm/v.c', line=min(edits) + 1, operator='variant',
						    edits=edits, alt=f'variants/{name}.patch'))
		# the mutants of the same lines too: variants nest with them
		cls.ms = mutate.generate('s/0001-s.patch', 'mm/v.c', cls.lines,
					 set(range(len(cls.lines))))
		cls.ids = {m.name: k + 1 for k, m in enumerate(cls.ms + cls.vs)}
		cls.text, _cover, cls.own = schemata.switch_file(cls.ms + cls.vs, cls.lines, cls.ids)
		with open(os.path.join(d, 'switched.c'), 'w') as f:
			f.write('#include <stdlib.h>\n' + cls.text +
				'\nunsigned int mm_mutant_active;\n'
				'__attribute__((constructor)) static void mm_mutant_init(void)\n'
				'{ const char *e = getenv("MM_MUTANT"); '
				'mm_mutant_active = e ? atoi(e) : 0; }\n')
		r = gcc(d, 'switched', ['vdriver.c', 'switched.c'])
		assert r.returncode == 0, r.stderr + cls.text

	@classmethod
	def tearDownClass(cls):
		cls.tmp.cleanup()

	def prog(self, name, lines=None, active=0):
		if lines is not None:
			with open(os.path.join(self.d, name + '.c'), 'w') as f:
				f.write('\n'.join(lines))
			r = gcc(self.d, name, ['vdriver.c', name + '.c'])
			self.assertEqual(r.returncode, 0, r.stderr)
		return subprocess.run([os.path.join(self.d, name)], capture_output=True, text=True,
				      env=dict(os.environ, MM_MUTANT=str(active)), timeout=10).stdout

	# a change written on one line keeps every line where it was
	def test_edits_move_no_line(self):
		for v in self.vs:
			self.assertEqual(len(v.apply(self.lines)), len(self.lines), v.name)
		ins = next(v for v in self.vs if v.name == 'variant:insert-stmts')
		self.assertEqual(list(ins.edits.values()),
				 ['\t/* twice */ if (v == 2) { s->sum += 100; } s->sum += v;'])
		with self.assertRaisesRegex(Exception, 'preprocessor'):
			mutate.variant_edits(['int a;', 'int b;'], ['#if X', 'int a;', '#endif', 'int b;'],
					     'x')

	# a #define and a struct keep their own build; the other four are
	# switched; with no active id the switched program is the sample
	def test_switched_or_own(self):
		self.assertEqual({n: w for n, w in self.own.items() if n.startswith('variant:')},
				 {'variant:define': 'a #define', 'variant:struct': 'outside a function body'})
		self.assertEqual(self.prog('switched'), self.prog('orig', self.lines))

	# with its id, a switched variant is the sample with the variant's
	# lines as the patch writes them, and its edits (MODE=each) are too
	def test_active_variant_is_the_patch(self):
		checked = 0
		for v in self.vs:
			want = self.prog('patched', self.news[v.name[len('variant:'):]])
			self.assertEqual(self.prog('each', v.apply(self.lines)), want, v.name)
			if v.name in self.own:
				continue
			got = self.prog('switched', active=self.ids[v.name])
			self.assertEqual(got, want, v.name)
			self.assertNotEqual(got, self.prog('switched'), v.name)
			checked += 1
		self.assertEqual(checked, 4)


class TestReach(unittest.TestCase):
	# the lines the switch prints after each suite: per id, its suites
	def test_parse_reach(self):
		log = ['[    1.100000] mm_mutant: active mutant 0, recording the ids that run\n',
		       '[    2.000000] mm_mutant: reached in lazyfree_thp: 1,2,17\n',
		       '    ok 1 lazyfree_thp\n',
		       '[    3.000000] mm_mutant: reached in rcu_free_grace: 17,40\n',
		       '[    3.000001] mm_mutant: reached in rcu_free_grace: 41\n',
		       'mm_mutant: reached in shmem_read: 2']
		self.assertEqual(schemata.parse_reach(log), {
			1: {'lazyfree_thp'}, 2: {'lazyfree_thp', 'shmem_read'},
			17: {'lazyfree_thp', 'rcu_free_grace'}, 40: {'rcu_free_grace'},
			41: {'rcu_free_grace'}})
		self.assertEqual(schemata.parse_reach(['nothing here\n']), {})

	# what ran before the first suite is printed with that suite's init,
	# in the first block of suite-level lines: an id seen nowhere after
	# ran only at boot (its mutant needs a boot of its own, every suite)
	def test_boot_only(self):
		log = ['[    2.000000] mm_mutant: reached in lazyfree_thp: 1,2,3\n',
		       '[    2.000001] mm_mutant: reached in lazyfree_thp: 4,5\n',
		       '[    2.100000] mm_mutant: reached in lazyfree_thp.lazyfree_thp_split: 2\n',
		       '[    2.900000] mm_mutant: reached in lazyfree_thp: 3\n',
		       '[    3.000000] mm_mutant: reached in shmem_read: 1,6\n',
		       '[    3.100000] mm_mutant: reached in shmem_read.shmem_read_hole: 7\n']
		self.assertEqual(schemata.boot_only(log), {4, 5})
		self.assertEqual(schemata.boot_only(log[4:]), {1, 6})
		self.assertEqual(schemata.boot_only([]), set())

	# the lines after each case, after a suite's init and at its end: per
	# id, where it ran; the suites come from them, and a run keeps a
	# suite's cases that reached the id, or the whole suite when its init,
	# exit or what ran between suites reached it
	def test_parse_case_reach(self):
		log = ['[    2.000000] mm_mutant: reached in lazyfree_thp: 5\n',
		       '[    2.100000] mm_mutant: reached in lazyfree_thp.lazyfree_thp_split: 1,2\n',
		       '[    2.200000] mm_mutant: reached in lazyfree_thp.lazyfree_thp_dirty: 2\n',
		       '[    3.000000] mm_mutant: reached in shmem_read.shmem_read_hole: 2,5\n']
		where = schemata.parse_case_reach(log)
		self.assertEqual(where, {
			1: {'lazyfree_thp.lazyfree_thp_split'},
			2: {'lazyfree_thp.lazyfree_thp_split', 'lazyfree_thp.lazyfree_thp_dirty',
			    'shmem_read.shmem_read_hole'},
			5: {'lazyfree_thp', 'shmem_read.shmem_read_hole'}})
		self.assertEqual(schemata.parse_reach(log), {
			1: {'lazyfree_thp'}, 2: {'lazyfree_thp', 'shmem_read'},
			5: {'lazyfree_thp', 'shmem_read'}})
		self.assertEqual(schemata.case_list(['shmem_read', 'lazyfree_thp'], where[2]),
				 ['shmem_read.shmem_read_hole', 'lazyfree_thp.lazyfree_thp_dirty',
				  'lazyfree_thp.lazyfree_thp_split'])
		self.assertEqual(schemata.case_list(['lazyfree_thp', 'shmem_read'], where[5]),
				 ['lazyfree_thp', 'shmem_read.shmem_read_hole'])
		# a suite with no line of its own (a race suite's) runs whole
		self.assertEqual(schemata.case_list(['x'], where[1]), ['x'])
		# and so does one whose init or exit ran it, whatever its cases
		self.assertEqual(schemata.case_list(['x', 'y'], {'x', 'x.c', 'y.d'}), ['x', 'y.d'])


	# the one glob a mutant's boot runs: its suite, their common start
	def test_suite_glob(self):
		self.assertEqual(schemata.suite_glob({'lazyfree_thp'}), 'lazyfree_thp')
		self.assertEqual(schemata.suite_glob({'lockless_copy', 'lockless_read'}), 'lockless_*')
		self.assertEqual(schemata.suite_glob({'rcu_free_grace', 'rcu_free_drain'}),
				 'rcu_free_*')
		self.assertEqual(schemata.suite_glob({'lazyfree_thp', 'shmem_read'}), '')


class TestOwnBoot(unittest.TestCase):
	"""SchemataRunner.boot(): how long a mutant's boot of its own may be
	silent, and what stops it."""

	def boot(self, races, active, whole=False, base_seconds=28.0, timeout=140):
		from mmkunit import kernel, proc
		sch = object.__new__(schemata.SchemataRunner)
		base = type('B', (), {'glob': '', 'timeout': timeout, 'race_timeout': 300,
				      'groups': [], 'expected': {},
				      'race_args': lambda self: []})()
		sch.base, sch.base_seconds = base, base_seconds
		sch.tree_dir = sch.build_dir = sch.stage_dir = tempfile.gettempdir()
		sch.base_fail, sch.base_race_fail = set(), set()
		sch.configs = lambda: []
		seen = {}

		def fake(name, tree, build, stage, configs, extra, timeout, log, echo=True,
			 stop_on=None, stall=0):
			seen.update(timeout=timeout, stall=stall, stop_on=stop_on)
			return kernel.Boot(result=proc.Result([], 0, 1.0), json_path='/nonexistent')
		real, kernel.boot = kernel.boot, fake
		try:
			sch.boot(races, active, None, '', whole)
		finally:
			kernel.boot = real
		return seen

	# a mutant's functional suites: hung after three times the baseline
	# boot's silence (60 s at least, the mutant timeout at most), the
	# guest stopped at a splat; the baseline, race boots and a variant
	# (every case it fails is named) keep the mutant timeout and run on
	def test_limits(self):
		seen = self.boot(False, 7)
		self.assertEqual((seen['timeout'], seen['stall']), (140, 84))
		self.assertIsNotNone(seen['stop_on'])
		self.assertEqual(self.boot(False, 7, base_seconds=5.0)['stall'], 60)
		self.assertEqual(self.boot(False, 7, base_seconds=100.0)['stall'], 140)
		self.assertEqual(self.boot(False, 0)['stall'], 0)
		self.assertEqual(self.boot(True, 7)['stall'], 0)
		seen = self.boot(False, 7, whole=True)
		self.assertEqual((seen['stall'], seen['stop_on']), (0, None))


	# a boot of its own silent past its limit hung: killed by
	# guest.stopped, not booted again as a boot in which no case ran
	def test_hang_not_booted_again(self):
		from mmkunit import kernel, proc
		sch = object.__new__(schemata.SchemataRunner)
		sch.base = type('B', (), {'glob': '', 'groups': [], 'expected': {},
					  'failed': staticmethod(mutate.Runner.failed),
					  'killer': staticmethod(mutate.Runner.killer)})()
		sch.ids, sch.reach, sch.race_reach = {'m': 1}, {1: {'lazyfree_thp'}}, {}
		sch.base_fail, sch.base_race_fail = set(), set()
		boots = []

		def boot(races, active, log, glob='', whole=False):
			boots.append(active)
			r = proc.Result([], -9, 84.0, timed_out=True, stalled=True)
			stopped = {'name': 'guest.stopped', 'status': 'STOPPED', 'verdict': 'fail',
				   'reason': 'stopped guest'}
			return [stopped], 84.0, kernel.Boot(result=r)
		sch.boot = boot
		m = type('M', (), {'name': 'm', 'races': False, 'alt': ''})()
		o = sch.run(m, None)
		self.assertEqual(boots, [1])
		self.assertEqual((o.status, o.killer), ('killed', 'guest.stopped'))


class TestCache(unittest.TestCase):
	def setUp(self):
		self.ms = mutate.generate('s/0001-s.patch', 'mm/sample.c', SAMPLE.split('\n'),
					  set(range(len(SAMPLE.split('\n')))))

	# a mutant's key: its own patch and text; not another patch's
	def test_keys(self):
		lines = SAMPLE.split('\n')
		a, b = self.ms[0], self.ms[5]
		k = schemata.mutant_key('env', 'patch one', a, lines)
		self.assertEqual(k, schemata.mutant_key('env', 'patch one', a, lines))
		self.assertNotEqual(k, schemata.mutant_key('env', 'patch one v2', a, lines))
		self.assertNotEqual(k, schemata.mutant_key('env2', 'patch one', a, lines))
		self.assertNotEqual(k, schemata.mutant_key('env', 'patch one', b, lines))

	# the suites: all unchanged without a reach; with one, exactly the
	# suites that reach the mutant (then and now)
	def test_reusable(self):
		suites = {'a': '1', 'b': '2', 'c': '3'}
		e = {'result': {}, 'suites': dict(suites), 'reach': ['a']}
		self.assertTrue(schemata.reusable(e, suites, None))
		self.assertFalse(schemata.reusable(None, suites, None))
		changed_b = dict(suites, b='9')
		self.assertFalse(schemata.reusable(e, changed_b, None))	# no baseline yet
		self.assertTrue(schemata.reusable(e, changed_b, {'a'}))	# b does not reach it
		self.assertFalse(schemata.reusable(e, dict(suites, a='9'), {'a'}))
		self.assertFalse(schemata.reusable(e, changed_b, {'a', 'b'}))	# b reaches it now
		own = {'result': {}, 'suites': dict(suites), 'reach': None}
		self.assertFalse(schemata.reusable(own, changed_b, {'a'}))
		nr = {'result': {}, 'suites': dict(suites), 'reach': []}
		self.assertTrue(schemata.reusable(nr, changed_b, set()))

	# a kill by a suite that still reaches the mutant, unchanged, is kept
	# when another suite changes or reaches it anew; a survivor is not,
	# nor a kill by a changed suite, nor one by a splat
	def test_reusable_kill(self):
		suites = {'a': '1', 'b': '2'}
		kill = {'result': {'status': 'killed', 'killer': 'a.case_one.param'},
			'suites': dict(suites), 'reach': ['a']}
		changed_b = dict(suites, b='9')
		self.assertTrue(schemata.reusable(kill, changed_b, {'a', 'b'}))	# b reaches it now
		self.assertFalse(schemata.reusable(kill, dict(suites, a='9'), {'a', 'b'}))
		self.assertFalse(schemata.reusable(kill, changed_b, {'b'}))	# a no longer reaches it
		survived = dict(kill, result={'status': 'survived'})
		self.assertFalse(schemata.reusable(survived, changed_b, {'a', 'b'}))
		splat = dict(kill, result={'status': 'killed', 'killer': 'guest.splat'})
		self.assertFalse(schemata.reusable(splat, changed_b, {'a', 'b'}))
		self.assertFalse(schemata.reusable(kill, changed_b, None))	# no baseline yet

	def test_suite_hashes(self):
		with tempfile.TemporaryDirectory() as d:
			def write(name, text):
				with open(os.path.join(d, name), 'w') as f:
					f.write(text)
			write('a_kunit.c', 'static struct kunit_suite a_suite = {\n\t.name = "a",\n};\n')
			write('b_kunit.c', 'static struct kunit_suite b_suite = {\n\t.name = "b",\n};\n')
			write('helpers.h', 'int x;\n')
			h = schemata.suite_hashes(d)
			self.assertEqual(sorted(h), ['a', 'b'])
			write('a_kunit.c', 'static struct kunit_suite a_suite = {\n\t.name = "a", };\n')
			h2 = schemata.suite_hashes(d)
			self.assertNotEqual(h['a'], h2['a'])
			self.assertEqual(h['b'], h2['b'])
			write('helpers.h', 'int y;\n')
			h3 = schemata.suite_hashes(d)
			self.assertNotEqual(h2['b'], h3['b'])


if __name__ == '__main__':
	unittest.main()
