# SPDX-License-Identifier: GPL-2.0
"""make mutate's trivial compiler equivalence (scripts/mmkunit/tce.py): a
mutant compiled with the command kbuild saved for its file is equivalent
only when its object is the original's; what cannot be compared says why;
a kept result is not compiled again."""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from types import SimpleNamespace  # noqa: E402
from unittest import mock  # noqa: E402

from mmkunit import mutate, tce  # noqa: E402

HEADER = '#define CONFIG_ON 0\n#define barrier() __asm__ __volatile__("" ::: "memory")\n'

SOURCE = r'''#include "conf.h"
int work(int a);
const char *where(void)
{
	return __FILE__;
}
int pick(int a)
{
	if (CONFIG_ON && work(a))
		return 1;
	barrier();
	return a + 1;
}
'''


@unittest.skipUnless(shutil.which('gcc') and shutil.which('objcopy'), 'needs gcc and objcopy')
class TestTCE(unittest.TestCase):
	def setUp(self):
		self.dir = tempfile.mkdtemp()
		self.addCleanup(shutil.rmtree, self.dir)
		self.tree = os.path.join(self.dir, 'tree')
		self.build = os.path.join(self.dir, 'build')
		os.makedirs(os.path.join(self.tree, 'mm'))
		os.makedirs(os.path.join(self.build, 'mm'))
		with open(os.path.join(self.tree, 'mm', 'conf.h'), 'w') as f:
			f.write(HEADER)
		with open(os.path.join(self.tree, 'mm', 'pick.c'), 'w') as f:
			f.write(SOURCE)
		src = os.path.join(self.tree, 'mm', 'pick.c')
		# as kbuild saves it: a dependency file, the tree's -I, objtool after ';'
		with open(os.path.join(self.build, 'mm', '.pick.o.cmd'), 'w') as f:
			f.write(f'savedcmd_mm/pick.o := gcc -Wp,-MMD,mm/.pick.o.d -O2 '
				f'-fmacro-prefix-map={self.tree}/= -I{self.tree}/mm -c -o mm/pick.o {src}'
				' ; false objtool mm/pick.o\n')
		self.lines = SOURCE.split('\n')

	def line(self, text):
		return next(i for i, l in enumerate(self.lines) if text in l)

	def check(self, items):
		"""items: (name, file, edits, the file's lines)"""
		t = tce.TCE(self.tree, self.build, os.path.join(self.dir, 'work'), None, 2)
		full = []
		for name, path, edits, lines in items:
			mutated = list(lines)
			for l, text in edits.items():
				mutated[l] = text
			full.append((name, path, lines, mutated))
		return t, t.check(full)

	def test_identical_only_when_the_object_is(self):
		cond = self.line('CONFIG_ON &&')
		items = [
			# an operand the config makes 0: the same object
			('drop', 'mm/pick.c', {cond: '\tif (CONFIG_ON)'}, self.lines),
			# a compiler barrier where nothing moves across it
			('barrier', 'mm/pick.c', {self.line('barrier();'): '\t'}, self.lines),
			# another constant: another object
			('bound', 'mm/pick.c', {self.line('a + 1'): '\treturn a + 2;'}, self.lines),
			# the other operand kept: work() is called
			('operand', 'mm/pick.c', {cond: '\tif (work(a))'}, self.lines),
		]
		t, res = self.check(items)
		self.assertEqual(res['drop'][0], True, res['drop'])
		self.assertIn('mm/pick.o of build', res['drop'][1])
		self.assertEqual(res['barrier'][0], True, res['barrier'])
		self.assertEqual(res['bound'][0], False, res['bound'])
		self.assertEqual(res['operand'][0], False, res['operand'])
		self.assertEqual(t.compiled, 5)		# the original once

	def test_not_compared_says_why(self):
		items = [
			('header', 'mm/conf.h', {0: '#define CONFIG_ON 1'}, HEADER.split('\n')),
			('broken', 'mm/pick.c', {self.line('a + 1'): '\treturn a +;'}, self.lines),
			('nocmd', 'mm/other.c', {0: ''}, ['int x;']),
		]
		_, res = self.check(items)
		self.assertEqual(res['header'][0], None)
		self.assertIn('not a .c file', res['header'][1])
		self.assertEqual(res['broken'][0], None)
		self.assertIn('does not compile', res['broken'][1])
		self.assertEqual(res['nocmd'], (None, 'no compile command of mm/other.c in build'))

	def test_no_stale_verdict(self):
		"""A second run decides anew: a header only the mutant's code reads
		changed, the original's object did not, the verdict does."""
		with open(os.path.join(self.tree, 'mm', 'conf.h'), 'a') as f:
			f.write('#define HVAL 0\nstatic inline int helper(void) { return HVAL; }\n')
		cond = self.line('CONFIG_ON &&')
		items = [('or', 'mm/pick.c', {cond: '\tif (CONFIG_ON || helper())'}, self.lines)]
		_, first = self.check(items)
		self.assertEqual(first['or'][0], True, first)
		with open(os.path.join(self.tree, 'mm', 'conf.h'), 'w') as f:
			f.write(HEADER + '#define HVAL 1\nstatic inline int helper(void) { return HVAL; }\n')
		_, again = self.check(items)
		self.assertEqual(again['or'][0], False, again)

	@unittest.skipUnless(shutil.which('ccache'), 'needs ccache')
	def test_through_ccache_with_a_base_dir(self):
		"""kbuild's command runs ccache, whose environment for the builds
		has a base directory (kernel.ccache_env()): the copy's __FILE__
		must still map back, and a second run is a ccache hit."""
		cmd = os.path.join(self.build, 'mm', '.pick.o.cmd')
		with open(cmd) as f:
			text = f.read()
		with open(cmd, 'w') as f:
			f.write(text.replace(':= gcc', ':= ccache gcc'))
		env = {'CCACHE_BASEDIR': self.dir, 'CCACHE_DIR': os.path.join(self.dir, 'ccache')}
		cond = self.line('CONFIG_ON &&')
		for _ in range(2):
			t = tce.TCE(self.tree, self.build, os.path.join(self.dir, 'build', 'tce'), env, 2)
			res = t.check([('drop', 'mm/pick.c', self.lines,
					self.lines[:cond] + ['\tif (CONFIG_ON)'] + self.lines[cond + 1:])])
			self.assertEqual(res['drop'][0], True, res)

	def test_objcopy_of_the_compiler(self):
		self.assertEqual(tce.objcopy_of('ccache gcc -c -o x.o x.c'), 'objcopy')
		self.assertEqual(tce.objcopy_of('ccache aarch64-linux-gnu-gcc -c x.c'),
				 'aarch64-linux-gnu-objcopy')
		self.assertEqual(tce.objcopy_of('clang --target=aarch64 -c x.c'), 'llvm-objcopy')

	def test_settles_only_identical_survivors(self):
		"""make mutate's use: an identical survivor becomes equivalent with
		the reason, another stays a survivor, a variant is not compiled."""
		cond = self.line('CONFIG_ON &&')
		ms = [mutate.Mutant('p:mm/pick.c:9:drop-operand#1', 'p', 'mm/pick.c', 9, 'drop-operand',
				    {cond: '\tif (CONFIG_ON)'}),
		      mutate.Mutant('p:mm/pick.c:12:bound+1#1', 'p', 'mm/pick.c', 12, 'bound+1',
				    {self.line('a + 1'): '\treturn a + 2;'}),
		      mutate.Mutant('variant:v', 'p', 'mm/pick.c', 9, 'variant',
				    {cond: '\tif (CONFIG_ON)'}, alt='variants/v.patch')]
		results = {m.name: {'status': 'survived', 'reason': '', 'variant': m.alt, 'run': 'build'}
			   for m in ms}
		runner = SimpleNamespace(build_dir=self.build, jobs=2)
		with mock.patch.object(mutate.tree, 'TREE', self.tree), \
			mock.patch.object(mutate, 'MUTATE_DIR', os.path.join(self.dir, 'mutate')), \
			mock.patch.object(mutate, 'BUILD', self.dir), \
			mock.patch.object(mutate.kernel, 'ccache_env', lambda: {}):
			info = mutate.settle_tce(ms, results, {'mm/pick.c': self.lines}, runner, None)
		drop, bound, variant = (results[m.name] for m in ms)
		self.assertEqual((drop['status'], drop['tce']), ('equivalent', 'identical'))
		self.assertIn('TCE', drop['reason'])
		self.assertEqual((bound['status'], bound['tce']), ('survived', 'differs'))
		self.assertEqual(variant, {'status': 'survived', 'reason': '', 'variant': 'variants/v.patch',
					   'run': 'build'})
		self.assertEqual((info['checked'], info['identical']), (2, 1))
		self.assertEqual(mutate.exit_code([drop]), 0)

	def test_schemata_config_must_match(self):
		"""A switched survivor is compared only when the series build's
		config is the schemata build's but for the switch."""
		sch = SimpleNamespace(build_dir=os.path.join(self.dir, 'sch'))
		os.makedirs(sch.build_dir)
		with open(os.path.join(self.build, '.config'), 'w') as f:
			f.write('# a comment\nCONFIG_A=y\n')
		cond = self.line('CONFIG_ON &&')
		m = mutate.Mutant('p:mm/pick.c:9:drop-operand#1', 'p', 'mm/pick.c', 9, 'drop-operand',
				  {cond: '\tif (CONFIG_ON)'})
		runner = SimpleNamespace(build_dir=self.build, jobs=1)
		for config, want in (('CONFIG_A=y\nCONFIG_MM_MUTANT=y\n', 'equivalent'),
				     ('CONFIG_A=m\nCONFIG_MM_MUTANT=y\n', 'survived')):
			with open(os.path.join(sch.build_dir, '.config'), 'w') as f:
				f.write(config)
			results = {m.name: {'status': 'survived', 'reason': '', 'variant': '',
					    'run': 'switched'}}
			with mock.patch.object(mutate.tree, 'TREE', self.tree), \
				mock.patch.object(mutate, 'MUTATE_DIR', os.path.join(self.dir, 'mutate')), \
				mock.patch.object(mutate.kernel, 'ccache_env', lambda: {}):
				info = mutate.settle_tce([m], results, {'mm/pick.c': self.lines}, runner, sch)
			self.assertEqual(results[m.name]['status'], want, (config, info))
		self.assertEqual(list(info['not_compared'].values()), [1])
		self.assertIn('config', list(info['not_compared'])[0])


class TestMergeTCE(unittest.TestCase):
	def test_sums_and_says_what_was_not_run(self):
		a = {'checked': 2, 'identical': 1, 'compiled': 3, 'not_compared': {'x': 1}, 'config': 'c'}
		b = {'checked': 1, 'identical': 1, 'compiled': 2, 'not_compared': {'x': 2}, 'config': 'c'}
		self.assertEqual(mutate.merge_tce([a, b]),
				 {'checked': 3, 'identical': 2, 'compiled': 5, 'not_compared': {'x': 3},
				  'config': 'c', 'shards_without': 0})
		self.assertEqual(mutate.merge_tce([a, None])['shards_without'], 1)
		mutant = {'name': 'p:f.c:1:negate#1', 'patch': 'p', 'status': 'survived', 'diff': '',
			  'file': 'f.c', 'line': 1}
		text = mutate.table({'mutants': [mutant], 'tce': mutate.merge_tce([a, None])})
		self.assertIn('TCE was not run in 1 shard(s)', text)
		self.assertNotIn('TCE was not run', mutate.table({'mutants': [mutant], 'tce': a}))


if __name__ == '__main__':
	unittest.main()
