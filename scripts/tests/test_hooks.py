# SPDX-License-Identifier: GPL-2.0
"""Host tests of the test hooks: the inventory in docs/hooks.rst, the
Kconfig symbols and mm_hooks.h agree with patches/*/hooks/; HOOKS= picks
the patches a variant applies; the judge reads hook-absent skips and
parts from a guest log and fails them under HOOKS=required."""

import copy
import os
import re
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from mmkunit import cli, judge, kernel, report, stages, tree  # noqa: E402


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


	def test_hook_patches_key_nothing_on_kunit_alone(self):
		# every kernel built with KUnit (the benchmarks' too) would carry
		# it: the hooks are keyed on CONFIG_MM_KUNIT_HOOKS or
		# CONFIG_DEBUG_PAGE_RCU_FREE (docs/hooks.rst, "The hooks' option")
		hooks = [p for p in tree.read_series() if tree.is_test_hook(p)]
		self.assertTrue(hooks)
		for p in hooks:
			added = [l for l in read('patches/' + p).splitlines()
				 if l.startswith('+') and not l.startswith('+++')]
			for l, outer in preprocessor_lines(read('patches/' + p)):
				if 'CONFIG_KUNIT' in l and not any(hook_option(c) for c in outer + [l]):
					self.fail(f'{p}: {l} (not inside a hooks\' option)')
			text = '\n'.join(added)
			if any(w in text for w in ('EXPORT_SYMBOL_IF_KUNIT', 'VISIBLE_IF_KUNIT',
						   'TRACE_EVENT')):
				self.assertTrue('CONFIG_MM_KUNIT_HOOKS' in text or
						'CONFIG_DEBUG_PAGE_RCU_FREE' in text,
						f'{p} exports or traces outside the hooks\' options')


def hook_option(cond: str) -> bool:
	return 'CONFIG_MM_KUNIT_HOOKS' in cond or 'CONFIG_DEBUG_PAGE_RCU_FREE' in cond


def preprocessor_lines(patch: str):
	"""(added #if line, the conditions of the #if blocks around it) of a
	patch, following each file's context and added lines in order (an
	#else block's condition does not count)."""
	stack = []
	for line in patch.splitlines():
		if line.startswith('diff --git'):
			stack = []
			continue
		if not line[:1] in (' ', '+') or line.startswith('+++'):
			continue
		text = line[1:].strip()
		if text.startswith('#if'):
			if line.startswith('+'):
				yield text, list(stack)
			stack.append(text)
		elif text.startswith(('#else', '#elif')) and stack:
			stack[-1] = '#else'
		elif text.startswith('#endif') and stack:
			stack.pop()


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



class TestTextCheck(unittest.TestCase):
	"""stages.text_check(): the code of the hooks-off objects against the
	nohooks build's, on objects compiled here."""

	def build(self, root: str, src: str, objs=None) -> str:
		for o in objs or stages.HOOK_OBJECTS:
			path = os.path.join(root, o)
			os.makedirs(os.path.dirname(path), exist_ok=True)
			with open(path[:-2] + '.c', 'w') as f:
				f.write(src)
			subprocess.run(['gcc', '-O2', '-c', path[:-2] + '.c', '-o', path], check=True)
		return root

	def check(self, a: str, b: str, objs=None):
		with tempfile.TemporaryDirectory() as top:
			st = stages.text_check(self.build(os.path.join(top, 'a'), a, objs),
					       self.build(os.path.join(top, 'b'), b))
		return {c['name']: c for c in st.cases}

	def test_same_code_passes(self):
		src = 'static int f(int x) { return x + 1; }\nint g(int x) { return f(x) * 2; }\n'
		# a comment and a blank line move the code's lines, not its bytes
		cases = self.check('/* hook */\n\n' + src, src)
		self.assertEqual({c['verdict'] for c in cases.values()}, {'pass'}, cases)
		self.assertEqual(len(cases), len(stages.HOOK_OBJECTS))

	def test_an_extra_function_fails(self):
		src = 'static int f(int x) { return x + 1; }\nint g(int x) { return f(x) * 2; }\n'
		cases = self.check(src + 'int f_hook(int x) { return f(x); }\n', src)
		self.assertEqual(cases['text_equal.filemap']['verdict'], 'fail')
		self.assertIn('.text differs', cases['text_equal.filemap']['reason'])

	def test_a_changed_constant_fails(self):
		cases = self.check('int g(int x) { return x * 3; }\n', 'int g(int x) { return x * 5; }\n')
		self.assertEqual(cases['text_equal.shmem']['verdict'], 'fail')

	def test_an_object_not_built_fails(self):
		src = 'int g(int x) { return x; }\n'
		cases = self.check(src, src, objs=stages.HOOK_OBJECTS[1:])
		self.assertEqual(cases['text_equal.filemap']['verdict'], 'fail')
		self.assertIn('not built', cases['text_equal.filemap']['reason'])


class TestKunitconfigCombinations(unittest.TestCase):
	"""Every set of kunitconfigs the runner passes is one kunit.py accepts:
	it refuses two files that set one option two ways, which is why
	mm_nohooks.config goes in as --kconfig_add (kernel.kunit_cmd())."""

	def kunit_kernel(self):
		kdir = os.environ.get('MMKUNIT_KUNIT_DIR') or os.path.join(tree.TREE,
									   'tools/testing/kunit')
		if not os.path.isfile(os.path.join(kdir, 'kunit_kernel.py')):
			self.skipTest(f'machine: no kunit_tool at {kdir} (make tree assembles one)')
		sys.path.insert(0, kdir)
		try:
			import kunit_kernel
		finally:
			sys.path.remove(kdir)
		return kunit_kernel

	def test_runner_combinations_parse(self):
		kk = self.kunit_kernel()
		suite = [os.path.join(REPO, k) for k in tree.SUITE_KUNITCONFIGS]
		for extra in (tree.DEBUG_KUNITCONFIG, tree.KCSAN_KUNITCONFIG):
			kk.get_parsed_kunitconfig('/nonexistent', suite + [os.path.join(REPO, extra)])
		cmd = kernel.kunit_cmd(REPO, 'config', '/tmp/out', tree.SUITE_KUNITCONFIGS +
				       [tree.NOHOOKS_KUNITCONFIG], 1, [])
		files = [c.split('=', 1)[1] for c in cmd if c.startswith('--kunitconfig=')]
		adds = [c.split('=', 1)[1] for c in cmd if c.startswith('--kconfig_add=')]
		self.assertNotIn(os.path.join(REPO, tree.NOHOOKS_KUNITCONFIG), files)
		self.assertIn('# CONFIG_MM_KUNIT_HOOKS is not set', adds)
		merged = kk.get_parsed_kunitconfig('/nonexistent', files)
		merged.merge_in_entries(kk.kunit_config.parse_from_string('\n'.join(adds)))
		self.assertEqual(dict((e.name, e.value) for e in merged.as_entries())
				 .get('MM_KUNIT_HOOKS'), 'n')
		# two files setting the option two ways are refused, as said above
		with self.assertRaises(kk.ConfigError):
			kk.get_parsed_kunitconfig('/nonexistent', suite + [
				os.path.join(REPO, tree.NOHOOKS_KUNITCONFIG)])


class TestBenchKernels(unittest.TestCase):
	def test_benchmarks_build_without_the_hooks_option(self):
		self.assertEqual(cli.bench_variant('series'), ('series', False))
		self.assertEqual(cli.bench_variant('before:shmem-batch'), ('before:shmem-batch', False))
		self.assertEqual(cli.bench_variant('series+hooks'), ('series', True))
		text = read(tree.NOHOOKS_KUNITCONFIG)
		self.assertIn('# CONFIG_MM_KUNIT_HOOKS is not set', text)
		self.assertIn('# CONFIG_DEBUG_PAGE_RCU_FREE is not set', text)


if __name__ == '__main__':
	unittest.main()
