# SPDX-License-Identifier: GPL-2.0
"""Host tests of the test hooks: the inventory in docs/hooks.rst, the
Kconfig symbols and mm_hooks.h agree with patches/*/hooks/; HOOKS= picks
the patches a variant applies; the judge reads hook-absent skips and
parts from a guest log and fails them under HOOKS=required."""

import copy
import os
import re
import sys
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from mmkunit import judge, report, tree  # noqa: E402


def read(rel):
	with open(os.path.join(REPO, rel)) as f:
		return f.read()


class TestInventory(unittest.TestCase):
	def test_every_hook_symbol_named_in_header_and_docs(self):
		kconfig = read('mm/tests/Kconfig')
		header = read('mm/tests/mm_hooks.h')
		docs = read('docs/hooks.rst')
		syms = re.findall(r'^config MM_KUNIT_HOOK_(\w+)', kconfig, re.M)
		self.assertGreaterEqual(len(syms), 8)
		for s in syms:
			self.assertIn(f'#define mm_hook_name_{s} ', header,
				      f'mm_hooks.h has no name for MM_KUNIT_HOOK_{s}')
			self.assertIn(f'MM_KUNIT_HOOK_{s}', docs,
				      f'docs/hooks.rst does not list MM_KUNIT_HOOK_{s}')

	def test_every_hook_patch_listed_in_docs_and_series(self):
		docs = read('docs/hooks.rst')
		series = tree.read_series()
		hooks = [p for p in series if tree.is_test_hook(p)]
		self.assertGreaterEqual(len(hooks), 8)
		for p in hooks:
			group, _, name = p.split('/')
			self.assertIn(f'{group}/hooks/{name[:4]}', docs, p)
		# each group's hooks come after its feature patches
		for i, p in enumerate(series):
			if tree.is_test_hook(p):
				later = [q for q in series[i:] if tree.group_of(q) == tree.group_of(p)]
				self.assertTrue(all(tree.is_test_hook(q) for q in later), p)

	def test_feature_patches_carry_no_test_hook(self):
		for p in tree.read_series():
			if tree.is_test_hook(p):
				continue
			text = read('patches/' + p)
			added = '\n'.join(l for l in text.splitlines()
				  if l.startswith('+') and not l.startswith('+++'))
			for what in ('VISIBLE_IF_KUNIT', 'EXPORT_SYMBOL_IF_KUNIT',
				     'kunit/visibility.h', 'trace/events/', 'TRACE_EVENT',
				     'DEBUG_PAGE_RCU_FREE', 'trace_mm_filemap_read_rcu',
				     'trace_mm_shmem_read_batch', 'rcu_free_hold',
				     'rcu_free_nr_', 'rcu_free_check_'):
				self.assertNotIn(what, added, f'{p} adds {what}')


class TestHooksMode(unittest.TestCase):
	def mode(self, variant, **env):
		with mock.patch.dict(os.environ, env, clear=False):
			for k in ('HOOKS', 'SERIES'):
				if k not in env:
					os.environ.pop(k, None)
			return tree.hooks_mode(variant)

	def test_defaults(self):
		self.assertEqual(self.mode('series'), 'required')
		self.assertEqual(self.mode('before:shmem-batch'), 'required')
		self.assertEqual(self.mode('nohooks'), 'none')
		self.assertEqual(self.mode('pristine'), 'auto')
		self.assertEqual(self.mode('upto:3'), 'auto')
		self.assertEqual(self.mode('series', HOOKS='none'), 'none')

	def test_nohooks_leaves_out_every_hook_patch(self):
		with mock.patch.dict(os.environ, {}, clear=False):
			os.environ.pop('HOOKS', None)
			os.environ.pop('SERIES', None)
			full = tree.variant_patches('series')
			bare = tree.variant_patches('nohooks')
			before = tree.variant_patches('before:shmem-batch')
		self.assertEqual(bare, [p for p in full if not tree.is_test_hook(p)])
		self.assertLess(len(bare), len(full))
		# the rcu-free hooks come with the rcu-free group
		self.assertTrue(any(p.startswith('rcu-free/hooks/') for p in before))
		self.assertFalse(any(p.startswith('shmem-batch') for p in before))

	def test_bad_mode_refused(self):
		with mock.patch.dict(os.environ, {'HOOKS': 'maybe'}):
			with self.assertRaises(tree.Error):
				tree.hooks_mode('series')


LOG = """[    1.000000] KTAP version 1
[    1.000000] 1..1
[    1.000000]     KTAP version 1
[    1.000000]     # Subtest: demo
[    1.000000]     1..4
[    1.000000]     # demo_bytes: hook absent: tracepoint mm_shmem_read_batch: the batch count not checked
[    1.000000]     ok 1 demo_bytes
[    1.000000]     ok 2 demo_hold # SKIP hook absent: rcu_free_hold() (CONFIG_DEBUG_PAGE_RCU_FREE)
[    1.000000]     ok 3 demo_cfg # SKIP config: CONFIG_MEMORY_FAILURE is off
[    1.000000]         KTAP version 1
[    1.000000]         # Subtest: demo_param
[    1.000000]         # demo_param: hook absent: rcu_free_nr_early() (the grace-period check): the check not checked
[    1.000000]         ok 1 order 0, small
[    1.000000]         ok 2 order-2
[    1.000000]     ok 4 demo_param
[    1.000000] ok 1 demo
"""


class TestJudgeHooks(unittest.TestCase):
	CASES = [judge.case('demo.demo_bytes', 'PASS', 'pass'),
		 judge.case('demo.demo_hold', 'SKIP', 'skip'),
		 judge.case('demo.demo_cfg', 'SKIP', 'skip'),
		 judge.case('demo.demo_param.order 0, small', 'PASS', 'pass'),
		 judge.case('demo.demo_param.order-2', 'PASS', 'pass')]

	def judged(self, required):
		notes = judge.scan_case_notes(LOG.splitlines(True))
		return {c['name']: c for c in judge.apply_notes(copy.deepcopy(self.CASES), notes,
								 hooks_required=required)}

	def test_skips_sorted_by_kind_and_parts_counted_once(self):
		c = self.judged(False)
		self.assertEqual(c['demo.demo_hold']['skip_kind'], 'hook')
		self.assertEqual(c['demo.demo_cfg']['skip_kind'], 'config')
		self.assertEqual(c['demo.demo_bytes']['verdict'], 'pass')
		self.assertEqual(len(c['demo.demo_bytes']['hook_parts']), 1)
		self.assertIn('hook absent', c['demo.demo_bytes']['reason'])
		self.assertEqual(len(c['demo.demo_param.order 0, small']['hook_parts']), 1)
		self.assertNotIn('hook_parts', c['demo.demo_param.order-2'])
		sk = report.skip_counts(list(c.values()))
		self.assertEqual((sk['hook'], sk['config'], sk['hook_parts']), (1, 1, 2))
		stage = report.Stage(name='x', cases=list(c.values()))
		self.assertIn('1 case(s) and 2 part(s)', report.hook_line([stage]))

	def test_required_fails_every_hook_skip(self):
		c = self.judged(True)
		self.assertEqual(c['demo.demo_hold']['verdict'], 'fail')
		self.assertEqual(c['demo.demo_bytes']['verdict'], 'fail')
		self.assertIn('HOOKS=required', c['demo.demo_bytes']['reason'])
		self.assertEqual(c['demo.demo_cfg']['verdict'], 'skip')


if __name__ == '__main__':
	unittest.main()
