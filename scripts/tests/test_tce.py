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


class Cache(dict):
	def put(self, key, value):
		self[key] = value

	def save(self):
		pass


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

	def check(self, items, cache=None):
		t = tce.TCE(self.tree, [os.path.join(self.dir, 'nothing'), self.build], cache, 2)
		return t, t.check(items)

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
		self.assertIn('header', res['header'][1])
		self.assertEqual(res['broken'][0], None)
		self.assertIn('does not compile', res['broken'][1])
		self.assertEqual(res['nocmd'], (None, 'no build directory has its compile command'))

	def test_kept_results(self):
		cond = self.line('CONFIG_ON &&')
		items = [('drop', 'mm/pick.c', {cond: '\tif (CONFIG_ON)'}, self.lines),
			 ('bound', 'mm/pick.c', {self.line('a + 1'): '\treturn a + 2;'}, self.lines)]
		cache = Cache()
		_, first = self.check(items, cache)
		t, again = self.check(items, cache)
		self.assertEqual(again, first)
		self.assertEqual((t.compiled, t.reused), (1, 2))	# the original only
		# another original (a header it includes changed): compiled again
		with open(os.path.join(self.tree, 'mm', 'conf.h'), 'w') as f:
			f.write(HEADER.replace('CONFIG_ON 0', 'CONFIG_ON 1'))
		t, changed = self.check(items, cache)
		self.assertEqual((t.compiled, t.reused), (3, 0))
		self.assertEqual(changed['drop'][0], False)

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
		results = {m.name: {'status': 'survived', 'reason': '', 'variant': m.alt} for m in ms}
		runner = SimpleNamespace(build_dir=self.build, jobs=2)
		with mock.patch.object(mutate.tree, 'TREE', self.tree):
			info = mutate.settle_tce(ms, results, {'mm/pick.c': self.lines}, Cache(), runner,
						 None)
		drop, bound, variant = (results[m.name] for m in ms)
		self.assertEqual((drop['status'], drop['tce']), ('equivalent', 'identical'))
		self.assertIn('TCE', drop['reason'])
		self.assertEqual((bound['status'], bound['tce']), ('survived', 'differs'))
		self.assertEqual(variant, {'status': 'survived', 'reason': '', 'variant': 'variants/v.patch'})
		self.assertEqual((info['checked'], info['identical']), (2, 1))
		self.assertEqual(mutate.exit_code([drop]), 0)


if __name__ == '__main__':
	unittest.main()
