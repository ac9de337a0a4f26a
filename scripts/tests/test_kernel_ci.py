# SPDX-License-Identifier: GPL-2.0
"""Host tests of where kernel CI lives (docs/kernel-ci.rst): SERIES= as a
lore thread through b4, its base and the does-not-apply outcome; KCIDB
5.3 JSON validated against kcidb-io's schema (when one is given); b4's per-patch check;
missing cases reported as failures; what rebuilds a result."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from . import fakerepo, threadmbox
from .test_runs import RunCase, fake_diff, mail

REPO = fakerepo.REPO
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from mmkunit import b4check, expected, kcidb, repro, thread  # noqa: E402
from mmkunit.report import Stage  # noqa: E402

SUITES = os.path.join(REPO, 'mm', 'tests')


def schema_python() -> str:
	"""An interpreter with jsonschema: Debian's python3-jsonschema first
	(make deps installs it; a pyenv python does not see dist-packages)."""
	for py in ('/usr/bin/python3', sys.executable):
		if os.path.exists(py) and subprocess.run(
				[py, '-c', 'import jsonschema'], capture_output=True).returncode == 0:
			return py
	return ''


def validate_file(test: unittest.TestCase, path: str) -> subprocess.CompletedProcess:
	"""mmkunit.kcidb's validation of @path, by schema_python()."""
	py = schema_python()
	if not py:
		test.skipTest('python3-jsonschema not installed (make deps installs it)')
	if not os.path.isfile(kcidb.SCHEMA):
		test.skipTest(f'machine: no KCIDB 5.3 schema at {kcidb.SCHEMA} (not carried in the '
			      'repository; MMKUNIT_KCIDB_SCHEMA, docs/kernel-ci.rst)')
	return subprocess.run([py, '-c', 'import sys; sys.path.insert(0, sys.argv[1]); '
			       'from mmkunit import kcidb; sys.exit(kcidb.main(sys.argv[2:]))',
			       os.path.join(REPO, 'scripts'), path],
			      capture_output=True, text=True, timeout=120)


def need_b4(test: unittest.TestCase) -> None:
	if shutil.which('b4') is None:
		test.skipTest('b4 not installed (make deps installs Debian\'s b4)')


# ------------------------------------------------------------ expected

DEMO_C = r'''
/* KUNIT_CASE(in_a_comment) is no case */
static struct kunit_case demo_cases[] = {
	KUNIT_CASE(demo_pass),
	KUNIT_CASE(demo_fail),
	KUNIT_CASE(demo_skip),
	KUNIT_CASE(demo_gone),
	{}
};

static struct kunit_suite demo_suite = {
	.name = "demo",
	.test_cases = demo_cases,
};

kunit_test_suite(demo_suite);
'''

SYNTH_C = r'''
// KUNIT_CASE(line_comment) is no case either
#define PARAM_CASE \
	KUNIT_CASE_PARAM(via_macro, some_gen_params)

static struct kunit_case a_cases[] = {
	KUNIT_CASE(plain),
	KUNIT_CASE_PARAM(param,
			 param_gen_params),
	KUNIT_CASE_SLOW(slow_one),
	KUNIT_CASE_PARAM_ATTR(slow_attr, gen, { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_ATTR(normal_attr, { .speed = KUNIT_SPEED_NORMAL }),
	PARAM_CASE,
#ifdef CONFIG_SOMETHING
	KUNIT_CASE(under_if),
#endif
	{}
};

#if IS_ENABLED(CONFIG_HOOK)
static struct kunit_case b_cases[] = {
	KUNIT_CASE(both),
	KUNIT_CASE(only_with_hook),
	{}
};
#else
static struct kunit_case b_cases[] = {
	KUNIT_CASE(both),
	KUNIT_CASE(only_without),
	{}
};
#endif

#ifdef CONFIG_C_SUITE
static struct kunit_case c_cases[] = {
	KUNIT_CASE(c_case),
	{}
};
static struct kunit_suite c_suite = {
	.name = "c_suite",
	.test_cases = c_cases,
};
kunit_test_suite(c_suite);
#endif

static struct kunit_suite a_suite = {
	.name = "a_suite",
	.test_cases = a_cases,
};

static struct kunit_suite b_suite = {
	.test_cases = b_cases,
	.name = "b_suite",
};

static struct kunit_suite not_registered = {
	.name = "not_registered",
	.test_cases = a_cases,
};

kunit_test_suites(&a_suite, &b_suite);
'''


def write_suites(top: str, files: dict, kunitconfig: str, makefile: str) -> str:
	d = os.path.join(top, 'mm', 'tests')
	os.makedirs(d, exist_ok=True)
	for name, text in files.items():
		with open(os.path.join(d, name), 'w') as f:
			f.write(text)
	with open(os.path.join(d, '.kunitconfig'), 'w') as f:
		f.write(kunitconfig)
	with open(os.path.join(d, 'Makefile'), 'w') as f:
		f.write(makefile)
	return d


class TestExpected(unittest.TestCase):
	"""expected.py reads the cases each stage should run from the tables."""

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()

	def tearDown(self):
		self.tmp.cleanup()

	def synth(self):
		d = write_suites(self.tmp.name, {'a_kunit.c': SYNTH_C, 'off_kunit.c': DEMO_C},
				 'CONFIG_KUNIT=y\nCONFIG_A=y\n# CONFIG_OFF is not set\n',
				 'obj-$(CONFIG_A) += a_kunit.o\nobj-$(CONFIG_OFF) += off_kunit.o\n')
		return d, [os.path.join(d, '.kunitconfig')]

	def cases(self, suites):
		return {s.name: {c.name: (c.optional, c.slow) for c in s.cases} for s in suites}

	# every form of table entry, #if handling, registration; catches a
	# parser that takes comments for cases, misses a multi-line
	# KUNIT_CASE_PARAM or a macro entry, or requires a case under #if
	def test_synthetic_tables(self):
		d, cfg = self.synth()
		suites = expected.expected_suites(d, cfg, '', True)
		got = self.cases(suites)
		# not_registered: no kunit_test_suite(); c_suite: under #if
		self.assertEqual(sorted(got), ['a_suite', 'b_suite', 'c_suite'])
		self.assertEqual([s.name for s in suites if s.optional], ['c_suite'])
		a = got['a_suite']
		self.assertEqual(a, {'plain': (False, False), 'param': (False, False),
				     'slow_one': (False, True), 'slow_attr': (False, True),
				     'normal_attr': (False, False), 'via_macro': (False, False),
				     'under_if': (True, False)})
		# both branches of #if/#else list "both": required; the others not
		self.assertEqual(got['b_suite'], {'both': (False, False),
						  'only_with_hook': (True, False),
						  'only_without': (True, False)})
		fast = self.cases(expected.expected_suites(d, cfg, '', False))
		self.assertNotIn('slow_one', fast['a_suite'])
		self.assertNotIn('slow_attr', fast['a_suite'])
		slow = self.cases(expected.expected_suites(d, cfg, '', 'only'))
		self.assertEqual(sorted(slow['a_suite']), ['slow_attr', 'slow_one'])
		self.assertEqual(sorted(self.cases(expected.expected_suites(
			d, cfg, 'b_*', True))), ['b_suite'])
		self.assertEqual(self.cases(expected.expected_suites(d, cfg, 'a_suite.p*', True)),
				 {'a_suite': {'plain': (False, False), 'param': (False, False)}})

	# a case that did not run fails as missing; a parameterised case counts
	# by its parameters; optional cases are not reported; a required suite
	# with no case at all is one failure.  Removing any of those lines from
	# missing_cases() fails here.
	def test_missing_cases(self):
		d, cfg = self.synth()
		suites = expected.expected_suites(d, cfg, '', False)
		results = {'a_suite.plain': 'PASS', 'a_suite.param.first': 'PASS',
			   'a_suite.param.second': 'FAIL', 'a_suite.normal_attr': 'SKIP'}
		miss = {c['name']: c for c in expected.missing_cases(suites, results)}
		self.assertEqual(sorted(miss), ['a_suite.via_macro', 'b_suite'])
		for c in miss.values():
			self.assertEqual((c['status'], c['verdict']), ('NOT RUN', 'fail'))
			self.assertTrue(c['reason'].startswith(expected.MISSING), c)
		results['a_suite.via_macro.p1'] = 'PASS'
		results['b_suite.only_without'] = 'SKIP'
		miss = {c['name'] for c in expected.missing_cases(suites, results)}
		self.assertEqual(miss, {'b_suite.both'})
		results['b_suite.both'] = 'PASS'
		self.assertEqual(expected.missing_cases(suites, results), [])

	# today's mm/tests: the suites the kunitconfig builds are all found,
	# KUNIT_CASE_PARAM and the #define'd case entries are read, the #if/
	# #else tables of rcu_free count, lockless_read's (different in each
	# branch) are optional, the race and benchmark cases are slow
	def test_todays_suites(self):
		cfg = [os.path.join(SUITES, '.kunitconfig')]
		fast = {s.name: s for s in expected.expected_suites(SUITES, cfg, '', False)}
		for name in ('lazyfree_thp', 'filemap_batch', 'rcu_free_grace', 'rcu_free_drain',
			     'rcu_free_contig', 'rcu_free_offline', 'rcu_free_compaction',
			     'rcu_free_poison', 'rcu_free_poison_queued', 'rcu_free_cache',
			     'rcu_free_bound',
			     'lockless_read', 'lockless_read_aba', 'lockless_copy', 'shmem_read'):
			self.assertIn(name, fast)
			self.assertFalse(fast[name].optional, name)
		self.assertFalse(any(n.endswith(('_race', '_benchmark')) for n in fast), fast)
		req = {s.name: {c.name for c in s.cases if not c.optional} for s in fast.values()}
		self.assertIn('lazyfree_thp_extra_ref_kept', req['lazyfree_thp'])
		self.assertIn('filemap_batch_contig_boundaries', req['filemap_batch'])
		self.assertGreaterEqual(len(req['lazyfree_thp']), 5)
		self.assertGreaterEqual(len(req['shmem_read']), 5)
		races = {s.name: s for s in expected.expected_suites(SUITES, cfg, '*_race', 'only')}
		self.assertEqual(sorted(races), ['lazyfree_thp_race', 'lockless_read_race', 'shmem_read_race'])
		self.assertTrue(all(c.slow for s in races.values() for c in s.cases))
		every = {s.name for s in expected.expected_suites(SUITES, cfg, '', True)}
		self.assertTrue(any(n.endswith('_benchmark') for n in every), every)
		# every .c file the kunitconfig builds registers a suite we read,
		# but the helper units
		conf = expected.read_kunitconfigs(cfg)
		for path in expected.built_files(SUITES, conf):
			if not path.endswith('_helpers.c'):
				self.assertTrue(expected.parse_source(path), path)


class TestMissingInARun(RunCase):
	# a fake run whose suite table lists cases kunit did not report: they
	# fail as "missing: did not run" in summary.json and are MISS in
	# kcidb.json (with MMKUNIT_EXPECTED=0, as the other fake runs, not)
	def test_missing_case_fails_the_run(self):
		shutil.rmtree(os.path.join(self.fr.repo, 'mm', 'tests'))
		write_suites(self.fr.repo, {'demo_kunit.c': DEMO_C}, 'CONFIG_KUNIT=y\nCONFIG_DEMO=y\n',
			     'obj-$(CONFIG_DEMO) += demo_kunit.o\n')
		r = self.fr.run('run', 'series', MMKUNIT_EXPECTED='1')
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertIn('2 missing', r.stdout)
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			cases = {c['name']: c for c in json.load(f)['stages'][0]['cases']}
		for name in ('demo.demo_fail', 'demo.demo_gone'):
			self.assertEqual(cases[name]['verdict'], 'fail')
			self.assertTrue(cases[name]['reason'].startswith(expected.MISSING), cases[name])
		self.assertEqual(cases['demo.demo_pass']['verdict'], 'pass')
		with open(os.path.join(self.fr.build, 'results', 'kcidb.json')) as f:
			tests = {t['path']: t['status'] for t in json.load(f)['tests']}
		self.assertEqual(tests['kunit.demo.demo_gone'], 'MISS')
		self.assertEqual(tests['kunit.demo.demo_pass'], 'PASS')
		v = validate_file(self, os.path.join(self.fr.build, 'results', 'kcidb.json'))
		self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
		r = self.fr.run('run', 'series')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn('missing cases not checked (MMKUNIT_EXPECTED=0)', r.stdout)


# ------------------------------------------------------------ threads

REAL = ['lazyfree-thp/0001-mm-rmap-discard-a-clean-lazyfree-PMD-mapped-THP-with.patch',
	'rcu-free/0001-mm-free-PG_rcu_free-folios-only-after-an-RCU-grace-p.patch',
	'rcu-free/0002-splice-don-t-steal-page-cache-folios.patch']
BASE = '0123456789abcdef0123456789abcdef01234567'


class TestThread(unittest.TestCase):
	"""A thread built from the mails of patches/: two versions, a cover
	letter each, replies quoting a diff with trailers."""

	def setUp(self):
		need_b4(self)
		self.tmp = tempfile.TemporaryDirectory()
		p = mock.patch.object(thread, 'THREAD_DIR', os.path.join(self.tmp.name, 'thread'))
		p.start()
		self.addCleanup(p.stop)
		self.addCleanup(self.tmp.cleanup)
		self.v2 = [threadmbox.read_patch(os.path.join(REPO, 'patches', p)) for p in REAL]
		# v1 worded patch 2 differently (same diff)
		s, f, b = self.v2[1]
		self.v1 = [self.v2[0], (s, f, '(v1 wording) ' + b), self.v2[2]]

	def write(self, text: str, name: str = 'thread.mbox') -> str:
		path = os.path.join(self.tmp.name, name)
		with open(path, 'w') as f:
			f.write(text)
		return path

	def split(self, mbox: str):
		out = []
		for i, m in enumerate(thread.read_mails(mbox)):
			p = os.path.join(self.tmp.name, f'got-{i}.patch')
			with open(p, 'wb') as f:
				f.write(m.as_bytes())
			out.append(p)
		return out

	# the newest complete version's patches (the same diffs as patches/),
	# its cover letter's message-id, base-commit and prerequisites, the
	# trailers of the replies; the v1 wording, the cover letter and the
	# replies left out
	def test_newest_version_with_trailers(self):
		mbox = self.write(threadmbox.thread(self.v1, self.v2, base=BASE,
						    prereq=['1' * 40]))
		got, meta = thread.prepare(mbox)
		self.assertEqual((meta['kind'], meta['version'], meta['versions']),
				 ('thread', 2, [2, 1]))
		self.assertEqual(meta['message_id'], 'v2-0@example.org')
		self.assertEqual(meta['base_commit'], BASE)
		self.assertEqual(meta['prerequisite_patch_ids'], ['1' * 40])
		files = self.split(got)
		self.assertEqual([repro.patch_id(p) for p in files],
				 [repro.patch_id(os.path.join(REPO, 'patches', p)) for p in REAL])
		with open(got) as f:
			text = f.read()
		self.assertNotIn('(v1 wording)', text)
		self.assertNotIn('Looks right to me', text)
		self.assertEqual(meta['patches'][0]['trailers'],
				 [f'Reviewed-by: {threadmbox.REVIEWER}', f'Tested-by: {threadmbox.TESTER}'])
		self.assertEqual(meta['patches'][2]['trailers'], [f'Tested-by: {threadmbox.TESTER}'])
		# cached by content: no second b4 run
		with mock.patch.object(thread, 'run_b4', side_effect=AssertionError('b4 again')):
			self.assertEqual(thread.prepare(mbox)[0], got)

	# a newest version with a patch missing is passed over, and said
	def test_incomplete_newest_version(self):
		mbox = self.write(threadmbox.thread(self.v1, self.v2, v3_only=[1]))
		got, meta = thread.prepare(mbox)
		self.assertEqual(meta['version'], 2)
		self.assertEqual(len(thread.read_mails(got)), 3)
		self.assertTrue(any(s.startswith('v3: incomplete, has 1 of 3') for s in meta['skipped']),
				meta['skipped'])

	# a clean series mbox (a cover letter and its patches) does not go
	# through b4; its base-commit is read all the same
	def test_clean_mbox_is_not_a_thread(self):
		text = threadmbox.version(self.v2, 2, 0, base=BASE, review=False)
		mbox = self.write(text, 'clean.mbx')
		with mock.patch.object(thread, 'run_b4', side_effect=AssertionError('b4 run')):
			got, meta = thread.prepare(mbox)
		self.assertEqual((got, meta['kind'], meta['base_commit']), (mbox, 'mbox', BASE))
		self.assertEqual(meta['message_id'], 'v2-0@example.org')


class TestThreadRuns(RunCase):
	"""SERIES= as a thread in whole (fake) runs."""

	def fake_patches(self, second='int mbox_two;', context='int mbox_one;'):
		frm = 'Test <test@example.com>'
		return [('mm: mbox one', frm, '---\n' + fake_diff('int fake;', 'int mbox_one;')),
			('mm: mbox two', frm, '---\n' + fake_diff(context, second, 2))]

	def write(self, text: str, name: str) -> str:
		path = os.path.join(self.tmp.name, name)
		with open(path, 'w') as f:
			f.write(text)
		return path

	def summary(self):
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			return json.load(f)

	def kcidb(self):
		with open(os.path.join(self.fr.build, 'results', 'kcidb.json')) as f:
			return json.load(f)

	def tree_log(self):
		return subprocess.run(['git', '-C', os.path.join(self.fr.build, 'tree'), 'log',
				       '--format=%s'], capture_output=True, text=True,
				      check=True).stdout.splitlines()

	# acceptance: the thread gives the newest version's patches and the
	# same verdicts as the clean mbox of that version
	def test_thread_same_as_clean_mbox(self):
		need_b4(self)
		v1 = self.fake_patches(second='int mbox_two_v1;')
		v2 = self.fake_patches()
		clean = self.write(mail(0, 2, 'mm: a posted series', 'cover\n\n') +
				   mail(1, 2, 'mm: mbox one', fake_diff('int fake;', 'int mbox_one;')) +
				   mail(2, 2, 'mm: mbox two', fake_diff('int mbox_one;', 'int mbox_two;', 2)),
				   'clean.mbx')
		r = self.fr.run('run', 'series', SERIES=clean, APPLIED='fake', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		want = {c['name']: c['verdict'] for c in self.summary()['stages'][0]['cases']}
		log_clean = self.tree_log()
		mbox = self.write(threadmbox.thread(v1, v2), 'thread.mbox')
		r = self.fr.run('run', 'series', SERIES=mbox, APPLIED='fake', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		self.assertIn('SERIES: a thread: took v2 of v2, v1 with b4 am', r.stdout)
		st = self.summary()['stages'][0]
		self.assertEqual({c['name']: c['verdict'] for c in st['cases']}, want)
		self.assertEqual(self.tree_log()[:3], log_clean[:3])
		self.assertEqual(st['series']['version'], 2)
		self.assertEqual(st['series']['message_id'], 'v2-0@example.org')
		co = self.kcidb()['checkouts'][0]
		self.assertEqual((co['message_id'], co['valid']), ('v2-0@example.org', True))
		self.assertRegex(co['patchset_hash'], '^[0-9a-f]{64}$')

	# a base-commit that is not ours: applied on ours and said (summary,
	# KCIDB); SERIES_BASE=strict refuses with exit 3
	def test_wrong_base(self):
		need_b4(self)
		mbox = self.write(threadmbox.thread(self.fake_patches(), self.fake_patches(),
						    base=BASE), 'thread.mbox')
		r = self.fr.run('run', 'series', SERIES=mbox)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn(f'base-commit {BASE[:12]} named by the series is not our base', r.stdout)
		base = self.summary()['stages'][0]['series']['base']
		self.assertEqual((base['requested'], base['match']), (BASE, False))
		self.assertRegex(base['used'], '^[0-9a-f]{40}$')
		# the base it names is ours: said, matched, no refusal when strict
		ours = base['used']
		mbox = self.write(threadmbox.thread(self.fake_patches(), self.fake_patches(),
						    base=ours), 'ours.mbox')
		r = self.fr.run('run', 'series', SERIES=mbox, SERIES_BASE='strict')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertIn(f'base-commit {ours[:12]} named by the series is our base', r.stdout)
		self.assertTrue(self.summary()['stages'][0]['series']['base']['match'])
		mbox = self.write(threadmbox.thread(self.fake_patches(), self.fake_patches(),
						    base=BASE), 'thread.mbox')
		r = self.fr.run('run', 'series', SERIES=mbox, SERIES_BASE='strict')
		self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
		self.assertIn('SERIES_BASE=strict: refusing', r.stderr.strip().splitlines()[-1])
		self.assertEqual(self.summary()['stages'][0]['outcome'], 'wrong-base')
		self.assertFalse(self.kcidb()['checkouts'][0]['valid'])

	# a patch that does not apply: exit 3, the patch and the file named,
	# summary.json's outcome, KCIDB valid=false with the patch's hash; the
	# document still validates
	def test_does_not_apply(self):
		need_b4(self)
		bad = self.fake_patches(context='int not_there;')
		mbox = self.write(threadmbox.thread(bad, bad), 'thread.mbox')
		r = self.fr.run('run', 'series', SERIES=mbox)
		self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
		last = r.stderr.strip().splitlines()[-1]
		self.assertIn('patch 2/2 0002-mm-mbox-two.patch of SERIES=', last)
		self.assertIn('does not apply to the base + patches 1-1: mm/fake.c:2', last)
		s = self.summary()
		self.assertEqual(s['exit_code'], 3)
		st = s['stages'][0]
		self.assertEqual(st['outcome'], 'does-not-apply')
		self.assertEqual(st['repro']['not_applied']['files'], ['mm/fake.c:2'])
		doc = self.kcidb()
		co = doc['checkouts'][0]
		self.assertFalse(co['valid'])
		self.assertIn('mm/fake.c:2', co['log_excerpt'])
		self.assertRegex(co['patchset_hash'], '^[0-9a-f]{64}$')
		self.assertEqual(doc['builds'][0]['status'], 'SKIP')
		v = validate_file(self, os.path.join(self.fr.build, 'results', 'kcidb.json'))
		self.assertEqual(v.returncode, 0, v.stdout + v.stderr)


# ------------------------------------------------------------ KCIDB

class TestKcidb(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)

	def stages(self):
		case = lambda n, s, v, r='': {'name': n, 'status': s, 'verdict': v, 'reason': r}
		patches = []
		for i in range(2):
			p = os.path.join(self.tmp.name, f'000{i + 1}-x.patch')
			with open(p, 'w') as f:
				f.write(fakerepo.PATCH.replace('fake_patched', f'fake_{i}'))
			patches.append(p)
		rec = repro.patches_record(patches, [os.path.basename(p) for p in patches])
		series = Stage(name='series', variant='series', started='2026-12-01T10:00:00',
			       build_seconds=12.5, repro=dict(rec, compiler='gcc (Debian) 12.2.0'),
			       cases=[case('s.passes', 'PASS', 'pass'),
				      case('s.fails', 'FAIL', 'fail', 'kunit: FAIL'),
				      case('s.skips', 'SKIP', 'skip', 'hook absent: no such hook'),
				      case('s.gone', 'NOT RUN', 'fail', expected.MISSING),
				      case('s.param.read 4096 bytes at 1.5/2, huge=always',
					   'PASS', 'pass'),
				      case('s.crashed', 'ERROR', 'fail', 'kunit: ERROR'),
				      case('guest.splat', 'SPLAT', 'fail', 'splat: WARNING')])
		broken = Stage(name='pristine', variant='pristine', started='2026-12-01T10:05:00',
			       error='pristine: kunit.py build failed (exit 2); log: x')
		races = Stage(name='races', variant='series', error='not run: the series kernel '
			      'did not build', repro=dict(rec))
		host = Stage(name='host tools', cases=[case('scripts.tests.test_x.T.test_ok',
							    'PASS', 'pass')])
		cp = Stage(name='checkpatch', cases=[case('patches/fake/0001-mm-x.patch', 'FAIL',
							  'fail', 'WARNING: x')])
		return [host, cp, series, races, broken], rec, patches

	# a failed, a skipped, a missing and a crashed case, a stage whose
	# build failed and one that could not run: the document validates
	# against kcidb-io's 5.3 schema and says each as KCIDB does
	def test_document_validates(self):
		stages, rec, patches = self.stages()
		doc = kcidb.document('test', stages, 60.0, 1, run_id='r1')
		path = os.path.join(self.tmp.name, 'kcidb.json')
		with open(path, 'w') as f:
			json.dump(doc, f)
		v = validate_file(self, path)
		self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
		self.assertIn('valid against KCIDB schema 5.3', v.stdout)
		tests = {t['misc']['name']: t for t in doc['tests']}
		self.assertEqual({n: tests[n]['status'] for n in ('s.passes', 's.fails', 's.skips',
								  's.gone', 's.crashed')},
				 {'s.passes': 'PASS', 's.fails': 'FAIL', 's.skips': 'SKIP',
				  's.gone': 'MISS', 's.crashed': 'ERROR'})
		self.assertEqual(tests['s.param.read 4096 bytes at 1.5/2, huge=always']['path'],
				 'kunit.s.param.read_4096_bytes_at_1_5_2_huge_always')
		builds = {b['misc']['stage']: b for b in doc['builds']}
		self.assertEqual(len(builds), 5)
		self.assertEqual(builds['pristine']['status'], 'FAIL')
		self.assertEqual(builds['races']['status'], 'ERROR')
		self.assertEqual(builds['series']['compiler'], 'gcc (Debian) 12.2.0')
		# patchset_hash as KCIDB defines it: sha256sum *.patch | cut -c-64 | sha256sum
		sums = ''.join(repro.sha256_file(p) + '\n' for p in patches)
		self.assertEqual(repro.sha256_file(patches[0]),
				 hashlib.sha256(fakerepo.PATCH.replace('fake_patched', 'fake_0')
						.encode()).hexdigest())
		want = hashlib.sha256(sums.encode()).hexdigest()
		cos = {c['patchset_hash']: c for c in doc['checkouts']}
		self.assertEqual(sorted(cos), ['', want])
		self.assertEqual(builds['pristine']['checkout_id'], cos['']['id'])
		self.assertEqual(builds['series']['checkout_id'], cos[want]['id'])
		self.assertEqual(builds['checkpatch']['checkout_id'], cos[want]['id'])

	# the validation can fail: a path KCIDB does not allow, a status it
	# does not know, a missing origin are each reported
	def test_validation_catches_errors(self):
		stages, _, _ = self.stages()
		doc = kcidb.document('test', stages, 60.0, 1, run_id='r1')
		doc['tests'][0]['path'] = 'kunit.a case'
		doc['tests'][1]['status'] = 'BROKEN'
		del doc['builds'][0]['origin']
		path = os.path.join(self.tmp.name, 'bad.json')
		with open(path, 'w') as f:
			json.dump(doc, f)
		v = validate_file(self, path)
		self.assertEqual(v.returncode, 1, v.stdout + v.stderr)
		self.assertIn("'BROKEN' is not one of", v.stdout)
		self.assertIn("'origin' is a required property", v.stdout)
		self.assertIn('does not match', v.stdout)

	def test_case_paths(self):
		self.assertEqual(kcidb.case_path('suite.case'), 'kunit.suite.case')
		self.assertEqual(kcidb.case_path('a.b.order 9: huge=within_size'),
				 'kunit.a.b.order_9_huge_within_size')
		self.assertEqual(kcidb.case_path('a.b. ...'), 'kunit.a.b._')


class TestKcidbRun(RunCase):
	# make test writes kcidb.json next to summary.json: one build per
	# stage, the guest log as the tests' output file, and it validates
	def test_make_test_writes_valid_kcidb(self):
		r = self.fr.run('test', FAKE_FAIL=1)
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		path = os.path.join(self.fr.build, 'results', 'kcidb.json')
		with open(path) as f:
			doc = json.load(f)
		self.assertEqual([b['misc']['stage'] for b in doc['builds']],
				 ['host tools', 'checkpatch', 'series', 'races', 'pristine'])
		t = [t for t in doc['tests'] if t['path'] == 'kunit.demo.demo_fail']
		self.assertEqual(len(t), 2)
		self.assertTrue(t[0]['output_files'][0]['url'].endswith('/build/out/series/test.log'))
		v = validate_file(self, path)
		self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
		# what rebuilds it, in summary.json
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			st = {s['name']: s for s in json.load(f)['stages']}
		rep = st['series']['repro']
		self.assertEqual(rep['kernel_config'], 'build/out/series/.config')
		self.assertRegex(rep['kernel_config_sha256'], '^[0-9a-f]{64}$')
		self.assertTrue(rep['qemu'], rep)
		pid = repro.patch_id(os.path.join(self.fr.repo, 'patches', 'fake',
						  '0001-mm-fake-change.patch'))
		self.assertEqual([p['patch_id'] for p in rep['patches']], [pid])
		self.assertEqual(st['pristine']['repro']['patchset_hash'], '')
		# the imported base (a plain KDIR here: our commit, not a real one)
		self.assertRegex(rep['base_commit'], '^[0-9a-f]{40}$')
		self.assertNotIn('kdir_head', rep)
		co = [c for c in doc['checkouts'] if c['patchset_hash']][0]
		self.assertEqual(co['misc']['base_import_commit'], rep['base_commit'])
		self.assertNotIn('git_commit_hash', co)


class TestRepro(unittest.TestCase):
	def test_seeds_and_qemu(self):
		log = ['[  3.1] KTAP version 1\n',
		       '[  3.2]     # lockless_race_truncate: seed 4242 (boot with '
		       'lockless_read_race_kunit.seed=4242 to make the same choices)\n',
		       '    # shmem_read_truncate_race: seed=7\n']
		self.assertEqual(repro.seeds(log), [{'case': 'lockless_race_truncate', 'seed': '4242'},
						    {'case': 'shmem_read_truncate_race', 'seed': '7'}])
		out = 'x\nRunning tests with:\n$ qemu-system-x86_64 -nodefaults -accel kvm ' \
		      '-accel hvf -accel tcg -kernel bz -append \'a b\'\ny\n'
		cmd = repro.qemu_command(out)
		self.assertTrue(cmd.startswith('qemu-system-x86_64 -nodefaults'), cmd)
		self.assertEqual(repro.effective_qemu(cmd, 'tcg', False),
				 "qemu-system-x86_64 -nodefaults -accel tcg,thread=multi -kernel bz "
				 "-append 'a b'")
		self.assertIn('-icount shift=0,sleep=off', repro.effective_qemu(cmd, 'tcg', True))
		self.assertEqual(repro.patchset_hash([]), '')


# ------------------------------------------------------------ b4 check

def row(k, results, built=True, checkpatch='ok', guest=()):
	return {'k': k, 'patch': f'p{k}', 'built': built, 'results': results,
		'checkpatch': checkpatch, 'guest': list(guest), 'notes': []}


class TestB4Check(unittest.TestCase):
	# b4's protocol: a list of {tool, status pass|warn|fail, summary,
	# details}; what the patch turns green or red decides the status
	def test_judge_patch(self):
		m = {'rows': [row(0, {'a': 'FAIL', 'b': 'PASS', 'c': 'PASS'}),
			      row(1, {'a': 'PASS', 'b': 'PASS', 'c': 'PASS'}),
			      row(2, {'a': 'PASS', 'b': 'FAIL', 'c': 'PASS'}, checkpatch='!!'),
			      row(3, {}, built=False),
			      row(4, {'a': 'PASS', 'b': 'PASS', 'c': 'PASS'}, checkpatch='!!')]}
		r = b4check.judge_patch(1, 5, 'p1', m, 'm.json')
		self.assertEqual(set(r[0]), {'tool', 'status', 'summary', 'details'})
		self.assertEqual((r[0]['tool'], r[0]['status']), ('mm-kunit', 'pass'))
		self.assertIn('turns 1 case(s) green, 0 red', r[0]['summary'])
		self.assertIn('a: FAIL -> PASS', r[0]['details'])
		r = b4check.judge_patch(2, 5, 'p2', m, 'm.json')
		self.assertEqual(r[0]['status'], 'fail')
		self.assertIn('b: PASS -> FAIL', r[0]['details'])
		self.assertEqual(b4check.judge_patch(3, 5, 'p3', m, 'm.json')[0]['status'], 'fail')
		self.assertEqual(b4check.judge_patch(4, 5, 'p4', m, 'm.json')[0]['status'], 'warn')
		r = b4check.judge_patch(5, 5, 'p5', m, 'm.json')
		self.assertEqual(r[0]['status'], 'warn')
		self.assertIn('not measured', r[0]['summary'])


class TestB4CheckCommand(RunCase):
	# the command b4 calls: the patch mail on stdin, the JSON alone on
	# stdout (b4 parses it), found by patch-id in the series under test
	def test_command(self):
		d = os.path.join(self.fr.build, 'series-check')
		os.makedirs(d)
		with open(os.path.join(d, 'matrix.json'), 'w') as f:
			json.dump({'rows': [row(0, {'demo.x': 'FAIL'}), row(1, {'demo.x': 'PASS'})]}, f)
		patch = os.path.join(self.fr.repo, 'patches', 'fake', '0001-mm-fake-change.patch')
		with open(patch, 'rb') as f:
			mail_bytes = f.read().replace(b'Subject: [PATCH] mm: fake change',
						      b'Subject: [PATCH v3 1/1] mm: fake change')
		r = subprocess.run(self.fr.cmd('b4-check'), input=mail_bytes, env=self.fr.env(),
				   cwd=self.tmp.name, capture_output=True, timeout=120)
		self.assertEqual(r.returncode, 0, r.stderr)
		out = json.loads(r.stdout)
		self.assertEqual(out[0]['status'], 'pass', out)
		self.assertIn('patch 1/1: turns 1 case(s) green, 0 red', out[0]['summary'])
		self.assertIn('found by patch-id', out[0]['details'])
		other = mail_bytes.replace(b'+int fake_patched;', b'+int other;').replace(
			b'mm: fake change', b'mm: something else')
		r = subprocess.run(self.fr.cmd('b4-check'), input=other, env=self.fr.env(),
				   cwd=self.tmp.name, capture_output=True, timeout=120)
		self.assertEqual(json.loads(r.stdout)[0]['status'], 'warn')

	# --run measures prefixes 0 and 1 (fake kernels) first; their builds'
	# and boots' output goes to stderr, stdout stays b4's JSON alone
	def test_command_run(self):
		patch = os.path.join(self.fr.repo, 'patches', 'fake', '0001-mm-fake-change.patch')
		with open(patch, 'rb') as f:
			r = subprocess.run(self.fr.cmd('b4-check', '--run'), stdin=f, env=self.fr.env(),
					   cwd=self.tmp.name, capture_output=True, timeout=300)
		self.assertEqual(r.returncode, 0, r.stderr)
		out = json.loads(r.stdout)
		self.assertEqual(out[0]['status'], 'pass', out)
		self.assertIn('patch 1/1: turns 0 case(s) green, 0 red; builds', out[0]['summary'])
		self.assertIn(b'fake build', r.stderr)
		self.assertTrue(os.path.isfile(os.path.join(self.fr.build, 'series-check',
							    'matrix.json')))


if __name__ == '__main__':
	unittest.main()
