# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of scripts/benchreport.py on recorded guest logs.

The logs in data/bench/ are guest consoles as kunit.py's test.log and QEMU's
serial console (with "[timestamp]" prefixes) show them: boot noise, then KTAP
with BENCH diagnostics.  inboot-series-boot1.log's bench "reclaim" has known
numbers: map=pmd variant=off 11, 10, 15 and variant=on 20, 29, 23 (ms), whose
medians are not their means.
compare-A-* (base) against compare-B-*: pread16 threads=1 base 10, 11, 12, 11
and new 15, 16, 14, 15 (ranges apart); threads=2 base 20, 22, 21, 21 and new
21, 23, 22, 22 (ranges overlap).  exact-pristine.log against exact-series.log
is make bench-compare A=pristine B=series in exact mode (BENCHENV exact=yes),
with the medians of docs/benchmarks.rst: shmem_seq_read's 18 configurations
(huge x layout x bs 4096/65536/1048576; 4 KiB written 2897 -> 2977) on both;
shmem_seq_read_lockless's 36 rows (variant=lockless and the _mib bench) on the
series only, the case skipped on pristine; pread16 threads=1 (tmpfs 1.250 ->
1.279) and threads=2, whose rounds are 1x or 2x the one-thread rate, as
icount makes them.  Error cases run on copies of the recorded
logs with one line changed, dropped or doubled.  Every test runs the tool as
a command, as the Makefile does, and needs kunit_tool's kunit_parser.py
(build/tree/tools/testing/kunit, or $MMKUNIT_KUNIT_DIR): without it the
module fails.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
import benchreport  # noqa: E402

SCRIPT = os.path.join(REPO, 'scripts', 'benchreport.py')
DATA = os.path.join(REPO, 'scripts', 'tests', 'data', 'bench')
KUNIT_DIR = os.environ.get('MMKUNIT_KUNIT_DIR', benchreport.DEFAULT_KUNIT_DIR)
BOOT1 = os.path.join(DATA, 'inboot-series-boot1.log')
BOOT2 = os.path.join(DATA, 'inboot-series-boot2.log')
BASE = [os.path.join(DATA, f'compare-A-boot{i}.log') for i in (1, 2)]
NEW = [os.path.join(DATA, f'compare-B-boot{i}.log') for i in (1, 2)]
EXACT_A = os.path.join(DATA, 'exact-pristine.log')
EXACT_B = os.path.join(DATA, 'exact-series.log')
RUNS = {}  # (command, args...) -> (JSON, stdout)


def setUpModule():
	if not os.path.isfile(os.path.join(KUNIT_DIR, 'kunit_parser.py')):
		raise RuntimeError(f'kunit_parser.py not found in {KUNIT_DIR}: benchreport reads '
				   'logs with kunit_tool\'s parser; run "make tree" or set '
				   'MMKUNIT_KUNIT_DIR to a kernel tree\'s tools/testing/kunit')


def run(cmd, *args, env=None):
	full_env = dict(os.environ, **(env or {}))
	return subprocess.run([sys.executable, SCRIPT, cmd, '--kunit-dir', KUNIT_DIR, *args],
			      capture_output=True, text=True, env=full_env, timeout=120)


class Base(unittest.TestCase):
	def setUp(self):
		self._tmp = tempfile.TemporaryDirectory()
		self.tmp = self._tmp.name

	def tearDown(self):
		self._tmp.cleanup()

	def mutate(self, path, fn, prefix='mutated-'):
		"""A copy of the recorded log at path with fn(list of lines) applied."""
		with open(path) as f:
			lines = fn(f.read().splitlines())
		out = os.path.join(self.tmp, prefix + os.path.basename(path))
		with open(out, 'w') as f:
			f.write('\n'.join(lines) + '\n')
		return out

	def json_of(self, cmd, *args):
		"""(JSON, stdout) of a run that must succeed; recorded logs are run once."""
		key = (cmd, *args)
		if key not in RUNS:
			out = os.path.join(self.tmp, 'out.json')
			p = run(cmd, *args, '--json', out)
			self.assertEqual(p.returncode, 0, p.stderr)
			with open(out) as f:
				RUNS[key] = json.load(f), p.stdout
		return RUNS[key]

	@staticmethod
	def find(results, bench, variant, **config):
		got = [r for r in results if r['bench'] == bench and r['variant'] == variant and
		       all(r['config'].get(k) == v for k, v in config.items())]
		assert len(got) == 1, (bench, variant, config, got)
		return got[0]

	def assertBadInput(self, p, pattern):
		"""Exit 2, one line on stderr matching pattern, no traceback."""
		self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
		self.assertNotIn('Traceback', p.stderr)
		self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
		self.assertRegex(p.stderr, r'^benchreport: error: ' + pattern)


class TestInboot(Base):
	# Catches wrong stats: mean for median, population stddev, cv not relative to the mean.
	def test_stats_on_known_numbers(self):
		d, out = self.json_of('inboot', BOOT1)
		off = self.find(d['results'], 'reclaim', 'off', map='pmd')
		on = self.find(d['results'], 'reclaim', 'on', map='pmd')
		self.assertEqual((off['n'], off['median'], off['min'], off['max']), (3, 11, 10, 15))
		self.assertEqual((on['n'], on['median'], on['min'], on['max']), (3, 23, 20, 29))
		self.assertAlmostEqual(off['stddev_pct'], 7 ** 0.5 / 12 * 100)  # variance 14/2, mean 12
		self.assertAlmostEqual(on['stddev_pct'], 21 ** 0.5 / 24 * 100)  # variance 42/2, mean 24
		self.assertRegex(out, r'\npmd +on +3 +23\.00 +20\.00 +29\.00 +19\.1% +2\.091\n')

	# Catches a ratio taken against the wrong variant or inverted.
	def test_ratio_to_baseline(self):
		d, _ = self.json_of('inboot', BOOT1)
		off = self.find(d['results'], 'reclaim', 'off', map='pmd')
		on = self.find(d['results'], 'reclaim', 'on', map='pmd')
		self.assertEqual((off['baseline'], off['ratio']), ('off', 1.0))
		self.assertAlmostEqual(on['ratio'], 23 / 11)

	# Catches a baseline chosen by name (sorted) instead of first appearance in the log.
	def test_baseline_is_the_variant_seen_first(self):
		swapped = self.mutate(BOOT1, lambda ls: [
			re.sub(r'variant=(off|on) ', lambda m: 'variant=' + ('on ' if m[1] == 'off' else 'off '), x)
			for x in ls])
		d, _ = self.json_of('inboot', swapped)
		off = self.find(d['results'], 'reclaim', 'off', map='pmd')
		self.assertEqual(off['baseline'], 'on')
		self.assertAlmostEqual(off['ratio'], 23 / 11)

	# Catches a timestamped QEMU console log not read, or logs not pooled.
	def test_logs_pooled_timestamped_console_read(self):
		d, _ = self.json_of('inboot', BOOT1, BOOT2)
		r = self.find(d['results'], 'pread16', 'base', mode='own-file', threads='1')
		self.assertEqual((r['n'], r['median'], r['min'], r['max']), (6, 10.25, 10.0, 10.4))
		self.assertEqual(len(d['samples']), 96)

	# Catches BENCH lines tied to the wrong case or the wrong file line (parameterised case too).
	def test_samples_tied_to_case_and_line(self):
		d, _ = self.json_of('inboot', BOOT2)
		with open(BOOT2) as f:
			lines = f.read().splitlines()
		for s in d['samples']:
			text = lines[s['line'] - 1]
			self.assertIn(f'bench={s["bench"]} ', text)
			self.assertIn(f' round={s["round"]} value={s["value"]:.3f} ', text)
		cases = {s['bench']: s['case'] for s in d['samples']}
		self.assertEqual(cases, {'pread16': 'shmem_bench.shmem_bench_pread16',
					 'batchread': 'shmem_bench.shmem_bench_batch_read',
					 'reclaim': 'lazyfree_bench.lazyfree_bench_reclaim'})

	# Catches kunit_parser's progress output (a stdout printer) mixed into the report.
	def test_parser_prints_nothing(self):
		p = run('inboot', BOOT1)
		self.assertEqual(p.returncode, 0, p.stderr)
		self.assertNotIn('=====', p.stdout)
		self.assertNotIn('[PASSED]', p.stdout)
		self.assertEqual(p.stderr, '')

	# Catches a skipped benchmark case left out of the report.
	def test_skipped_case_reported(self):
		p = run('inboot', BOOT1)
		self.assertIn('skipped: shmem_bench.shmem_bench_pread16_huge: '
			      'shmem THP disabled (shmem_enabled=never)', p.stdout)

	# Catches an all-skipped log (pristine kernel) taken for an error, or its
	# reasons dropped; the four cases skipped for one reason are one line
	# naming them (one line per case before)
	def test_all_cases_skipped_is_not_an_error(self):
		p = run('inboot', os.path.join(DATA, 'inboot-pristine-skipped.log'))
		self.assertEqual(p.returncode, 0, p.stderr)
		self.assertIn('every benchmark case skipped', p.stdout)
		lines = [x for x in p.stdout.splitlines() if x.startswith('skipped:')]
		self.assertEqual(len(lines), 1, p.stdout)
		self.assertTrue(lines[0].startswith('skipped: 4 cases: series absent: '), lines)
		for case in ('shmem_bench.shmem_bench_pread16', 'shmem_bench.shmem_bench_pread16_huge',
			     'shmem_bench.shmem_bench_batch_read', 'lazyfree_bench.lazyfree_bench_reclaim'):
			self.assertIn(case + ';' if 'reclaim' not in case else case + ' (', lines[0])

	# Catches a failed benchmark case not reported or not in the exit status.
	def test_failed_case_reported_exit_1(self):
		log = self.mutate(BOOT1, lambda ls: [x.replace('    ok 3 shmem_bench_batch_read',
							      '    not ok 3 shmem_bench_batch_read')
						     for x in ls])
		p = run('inboot', log)
		self.assertEqual(p.returncode, 1, p.stderr)
		self.assertIn('FAILED: shmem_bench.shmem_bench_batch_read', p.stdout)

	# Catches JSON without the raw samples, the stats or the skipped cases.
	def test_json_content(self):
		d, _ = self.json_of('inboot', BOOT1)
		self.assertEqual(d['mode'], 'inboot')
		self.assertEqual(len(d['samples']), 48)
		s = [x for x in d['samples'] if x['bench'] == 'reclaim' and x['config'] == {'map': 'pmd'}
		     and x['variant'] == 'on']
		self.assertEqual(sorted((x['round'], x['value']) for x in s), [(1, 20), (2, 29), (3, 23)])
		self.assertEqual({x['unit'] for x in s}, {'ms'})
		self.assertEqual(len(d['results']), 8 + 4 + 4)
		self.assertEqual(d['cases'], [{'log': BOOT1, 'case': 'shmem_bench.shmem_bench_pread16_huge',
					       'status': 'SKIPPED',
					       'reason': 'shmem THP disabled (shmem_enabled=never)'}])


class TestCompare(Base):
	# Catches a wrong %change (sign, base) and a non-overlap mark missing or always set.
	def test_change_and_mark(self):
		d, out = self.json_of('compare', '--base', *BASE, '--new', *NEW)
		one = self.find(d['results'], 'pread16', '-', threads='1')
		two = self.find(d['results'], 'pread16', '-', threads='2')
		self.assertEqual((one['base']['median'], one['new']['median'], one['disjoint']), (11, 15, True))
		self.assertAlmostEqual(one['change_pct'], 400 / 11)
		self.assertEqual((two['base']['median'], two['new']['median'], two['disjoint']), (21, 22, False))
		self.assertAlmostEqual(two['change_pct'], 100 / 21)
		self.assertRegex(out, r'\n11\.00 +±7\.4% +\+36\.4% +\* +15\.00 +±5\.4% +fs=tmpfs threads=1\n')
		self.assertRegex(out, r'\n21\.00 +±3\.9% +\+4\.8% {4,}22\.00 +±3\.7% +fs=tmpfs threads=2\n')

	# Catches a bench whose case skipped on one kernel turned into an error or a bogus row.
	# Catches --ref not dividing by the same boot's median of the reference
	# configuration (threads=2 over threads=1, per log: base 1.866, new 1.501)
	def test_compare_ref_normalizes_per_boot(self):
		d, out = self.json_of('compare', '--base', *BASE, '--new', *NEW,
				      '--ref', 'bench=pread16 fs=tmpfs threads=1')
		rows = {r['config']['threads']: r for r in d['results']}
		self.assertAlmostEqual(rows['2']['base']['median'], (20 / 10.5 + 21 / 11.5) / 2, places=3)
		self.assertAlmostEqual(rows['2']['new']['median'], (23 / 15.5 + 22 / 14.5) / 2, places=3)
		self.assertEqual(rows['2']['base']['unit'], 'x ref')
		self.assertIn('ratios to the median', out)
		p = run('compare', '--base', *BASE, '--new', *NEW, '--ref', 'bench=pread16 threads=9')
		self.assertEqual(p.returncode, 2)
		self.assertIn('no sample of --ref', p.stderr)

	def test_case_skipped_on_one_side_not_compared(self):
		d, out = self.json_of('compare', '--base', *BASE, '--new', *NEW)
		self.assertEqual({(n['bench'], n['variant'], n['missing'], n['reason'])
				  for n in d['not_compared']},
				 {('batchread', 'off', 'base', 'series absent'),
				  ('batchread', 'on', 'base', 'series absent')})
		self.assertNotIn('batchread', {r['bench'] for r in d['results']})

	# Catches a configuration present on one side only silently dropped.
	def test_config_on_one_side_only(self):
		new = [self.mutate(p, lambda ls: [x for x in ls if 'threads=2' not in x]) for p in NEW[:1]]
		p = run('compare', '--base', BASE[0], '--new', *new)
		self.assertBadInput(p, r'bench=pread16 fs=tmpfs threads=2 variant=-: only in the base logs '
				    r'\(first at .*compare-A-boot1\.log:\d+\)$')


ENV = 'vcpus=2 preempt=VOLUNTARY thp=always accel=tcg exact=yes variant=series'


def with_env(lines, env=ENV):
	"""@lines with a BENCHENV line before the first BENCH line of every case
	(before every BENCH line that does not follow another one)."""
	out = []
	for x in lines:
		if '# BENCH ' in x and not (out and '# BENCH' in out[-1]):
			out.append(x[:x.index('#')] + '# BENCHENV ' + env)
		out.append(x)
	return out


class TestEnvironment(Base):
	# Catches the BENCHENV line not read, or not carried into the table and JSON.
	def test_env_in_table_and_json(self):
		log = self.mutate(BOOT1, with_env)
		d, out = self.json_of('inboot', log)
		want = dict(t.split('=') for t in ENV.split())
		self.assertEqual(d['env'], want)
		self.assertEqual(d['envs'], {log: want})
		self.assertIn('environment: ' + ENV + '\n', out)

	# Catches exact-mode times shown as wall time: ms of icount time are 1e6 instructions.
	def test_exact_units(self):
		d, out = self.json_of('inboot', self.mutate(BOOT1, with_env))
		on = self.find(d['results'], 'reclaim', 'on', map='pmd')
		self.assertEqual(on['unit'], 'ms icount (1e6 insns)')
		pread = self.find(d['results'], 'pread16', 'base', mode='own-file', threads='1')
		self.assertEqual(pread['unit'], 'Mreads/s icount (per 1e9 insns)')
		self.assertIn('reclaim (ms icount (1e6 insns); baseline variant off', out)
		d, _ = self.json_of('inboot', self.mutate(BOOT1, lambda ls: with_env(
			ls, ENV.replace('exact=yes', 'exact=no')), 'wall-'))
		self.assertEqual(self.find(d['results'], 'reclaim', 'on', map='pmd')['unit'], 'ms')

	# Catches a row that only a test hook measures (hooks=on, e.g. the bytes a
	# tracepoint counts) refused in a comparison with the same kernel built
	# without the hooks' option; without hooks= it stays an error.
	def test_row_of_a_hook_only_with_hooks_on(self):
		off = [self.mutate(p, lambda ls: [x for x in with_env(ls, ENV + ' hooks=off')
						  if 'threads=1 ' not in x], 'off-') for p in NEW[:1]]
		on = [self.mutate(p, lambda ls: with_env(ls, ENV + ' hooks=on'), 'on-') for p in BASE[:1]]
		d, out = self.json_of('compare', '--base', *off, '--new', *on)
		hook = [n for n in d['not_compared'] if 'needs a test hook' in n['reason']]
		self.assertTrue(hook, d['not_compared'])
		self.assertTrue(all(n['missing'] == 'base' and n['config'].get('threads') == '1'
				    for n in hook), hook)
		# hooks=on on the side that lacks the row: still an error
		p = run('compare', '--base', *[self.mutate(off[0], lambda ls: [
			x.replace('hooks=off', 'hooks=on') for x in ls], 'on2-')], '--new', *on)
		self.assertBadInput(p, r'bench=pread16 fs=tmpfs threads=1 variant=-: only in the new logs')

	# Catches a log without BENCHENV (older kernels, stock kunit.py) refused or given a made-up one.
	def test_no_env_line(self):
		d, out = self.json_of('inboot', BOOT1)
		self.assertEqual(d['env'], {})
		self.assertIn('environment: not given (no BENCHENV line)', out)

	# Catches two cases of one boot that disagree about the environment taken silently.
	def test_env_differs_within_a_boot(self):
		def two(ls):
			ls = with_env(ls)
			i = max(n for n, x in enumerate(ls) if 'BENCHENV' in x)
			ls[i] = ls[i].replace('vcpus=2', 'vcpus=4')
			return ls
		log = self.mutate(BOOT1, two)
		p = run('inboot', log)
		self.assertBadInput(p, re.escape(log) + r':\d+: BENCHENV vcpus=4 differs from vcpus=2 '
				    r'\(line \d+\) in the same boot$')

	# Catches instruction counts compared with wall time.
	def test_compare_exact_against_wall_time_refused(self):
		base = self.mutate(BASE[0], lambda ls: with_env(ls, ENV.replace('exact=yes', 'exact=no')))
		new = [self.mutate(NEW[0], with_env)]
		p = run('compare', '--base', base, '--new', *new)
		self.assertBadInput(p, 'base logs have exact=no, new logs exact=yes')

	# Catches the two kernels' environments (their variants) not shown side by side.
	def test_compare_env_per_side(self):
		base = self.mutate(BASE[0], lambda ls: with_env(ls, ENV.replace('series', 'pristine')))
		new = self.mutate(NEW[0], with_env)
		d, out = self.json_of('compare', '--base', base, '--new', new)
		self.assertEqual((d['env']['base']['variant'], d['env']['new']['variant']),
				 ('pristine', 'series'))
		self.assertIn('base environment: ' + ENV.replace('series', 'pristine') + '\n', out)
		self.assertIn('new environment: ' + ENV + '\n', out)
		self.assertEqual(d['results'][0]['base']['unit'], 'Mreads/s icount (per 1e9 insns)')


class TestBootAgreement(Base):
	def boots(self, factor):
		"""BOOT1 and a copy whose reclaim map=pmd variant=off round 1 (the
		median, 11 ms) is scaled by @factor."""
		one = self.mutate(BOOT1, with_env)
		two = self.mutate(BOOT1, lambda ls: [
			x.replace('variant=off round=1 value=11.000', f'variant=off round=1 value={11 * factor:.3f}')
			for x in with_env(ls)], f'scaled-{factor}-')
		return one, two

	# Catches identical boots reported as differing, or the check not printed.
	def test_identical_boots_agree(self):
		d, out = self.json_of('inboot', *self.boots(1.0))
		a = d['boot_agreement']
		self.assertEqual((a['boots'], a['max_spread_pct'], a['within_limit']), (2, 0.0, True))
		# 16 configurations, less pread16's four of 2 threads: not results in exact mode
		self.assertEqual(a['configurations'], 12)
		self.assertIn('boots agree: 2 boots, 12 configurations; largest difference of medians '
			      '0.000%', out)
		self.assertIn('every configuration within 0.5%: yes', out)

	# Catches a 0.6 % difference of one median missed, or the wrong configuration named.
	def test_a_median_off_by_more_than_the_limit(self):
		d, out = self.json_of('inboot', *self.boots(1.006))
		a = d['boot_agreement']
		self.assertAlmostEqual(a['max_spread_pct'], 0.6, places=2)
		self.assertFalse(a['within_limit'])
		self.assertEqual(a['worst'], 'bench=reclaim map=pmd variant=off')
		self.assertIn('every configuration within 0.5%: NO', out)

	# Catches the limit applied to the rounds instead of the medians: 0.4 % is within.
	def test_a_median_off_by_less_than_the_limit(self):
		d, _ = self.json_of('inboot', *self.boots(1.004))
		self.assertTrue(d['boot_agreement']['within_limit'])

	# Catches a single boot given a verdict it cannot have.
	def test_one_boot_has_no_verdict(self):
		d, out = self.json_of('inboot', BOOT1)
		self.assertIsNone(d['boot_agreement'])
		self.assertNotIn('boots agree', out)


class TestBadInput(Base):
	def bad_line(self, target, old, new, log=BOOT1):
		"""Run inboot on a copy of log whose first line containing target has old
		replaced by new; return the result and the "path:line: " expected."""
		with open(log) as f:
			lineno = next(i for i, x in enumerate(f, 1) if target in x)
		path = self.mutate(log, lambda ls: ls[:lineno - 1] + [ls[lineno - 1].replace(old, new)] +
				   ls[lineno:])
		return run('inboot', path), f'{re.escape(path)}:{lineno}: '

	def test_mangled_bench_lines(self):
		line = 'map=pmd variant=on round=2 value=29.000 unit=ms'
		cases = [
			# Catches a line without a required key taken with a default.
			(' unit=ms', '', 'BENCH line without unit$'),
			(' round=2', '', 'BENCH line without round$'),
			# Catches a non-numeric value (console garbage) parsed, or crashing the tool.
			('value=29.000', 'value=29.0x0', 'BENCH value "29.0x0" is not a number$'),
			('value=29.000', 'value=nan', 'BENCH value "nan" is not a number$'),
			# Catches a round that is not a positive integer.
			('round=2', 'round=0', 'BENCH round "0" is not an integer >= 1$'),
			('round=2', 'round=2.0', 'BENCH round "2.0" is not an integer >= 1$'),
			# Catches a truncated or merged token.
			('round=2', 'round=2 pmd', 'BENCH token "pmd" is not key=value$'),
		]
		for old, new, msg in cases:
			with self.subTest(new=new):
				p, where = self.bad_line(line, old, new)
				self.assertBadInput(p, where + msg)

	# Catches the same sample printed twice counted twice.
	def test_duplicate_sample(self):
		target = 'bench=reclaim map=pmd variant=on round=2 '
		path = self.mutate(BOOT1, lambda ls: [y for x in ls for y in ([x, x] if target in x else [x])])
		with open(path) as f:
			second = [i for i, x in enumerate(f, 1) if target in x][1]
		self.assertBadInput(run('inboot', path), re.escape(f'{path}:{second}: duplicate BENCH sample'))

	# Catches a missing line (lost console output) averaged over fewer rounds unnoticed.
	def test_missing_round(self):
		path = self.mutate(BOOT2, lambda ls: [x for x in ls if 'mode=shared-file threads=2 '
						     'variant=lockless round=2 ' not in x])
		self.assertBadInput(run('inboot', path), re.escape(
			f'{path}: bench=pread16 fs=tmpfs mode=shared-file threads=2 variant=lockless: '
			'round 2 missing'))

	# Catches a log cut off inside a case (guest stopped) reported without naming that case.
	def test_log_cut_off_mid_case(self):
		path = self.mutate(BOOT1, lambda ls: ls[:ls.index(next(x for x in ls if 'threads=2 '
									  'variant=lockless round=3' in x))])
		self.assertBadInput(run('inboot', path), re.escape(
			f'{path}: bench=pread16 fs=tmpfs mode=own-file threads=2 variant=lockless: round 3 '
			'missing (other configurations of pread16 have rounds 1, 2, 3); shmem_bench.? has no '
			'result line (guest stopped?)') + '$')

	# Catches two units mixed in one bench and configuration.
	def test_units_differ(self):
		p, where = self.bad_line('map=pte variant=on round=3 value=36.000 unit=ms',
					 'unit=ms', 'unit=s')
		self.assertBadInput(p, where + 'unit "s" differs from "ms"')

	# Catches a log without KTAP (guest never reached kunit) taken as empty results.
	def test_no_ktap(self):
		path = self.mutate(BOOT1, lambda ls: ls[:[x.strip() for x in ls].index('KTAP version 1')])
		self.assertBadInput(run('inboot', path), re.escape(path) + ': no KTAP output')

	# Catches a log with cases that ran but printed no BENCH line taken as an empty report.
	def test_no_bench_line(self):
		path = self.mutate(BOOT2, lambda ls: [x for x in ls if 'BENCH' not in x])
		self.assertBadInput(run('inboot', path), re.escape(path) + ': no BENCH line in the KTAP output')

	# Catches a missing kunit_parser turned into a traceback.
	def test_no_kunit_parser(self):
		p = subprocess.run([sys.executable, SCRIPT, 'inboot', '--kunit-dir', self.tmp, BOOT1],
				   capture_output=True, text=True)
		self.assertBadInput(p, 'kunit_parser.py not found in ')


class TestPlots(Base):
	# Catches plots not written (one PNG per bench) for inboot and compare.
	def test_plots_written(self):
		p = run('inboot', BOOT1, BOOT2, '--plots', os.path.join(self.tmp, 'in'))
		self.assertEqual(p.returncode, 0, p.stderr)
		if 'plots skipped' in p.stdout:
			self.skipTest(p.stdout.strip().splitlines()[-1])
		p = run('compare', '--base', *BASE, '--new', *NEW, '--plots', os.path.join(self.tmp, 'cmp'))
		self.assertEqual(p.returncode, 0, p.stderr)
		for d, names in (('in', ['batchread.png', 'pread16.png', 'reclaim.png']),
				 ('cmp', ['pread16.png'])):
			self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, d))), names)
			for n in names:
				with open(os.path.join(self.tmp, d, n), 'rb') as f:
					data = f.read()
				self.assertTrue(data.startswith(b'\x89PNG') and len(data) > 5000, n)

	# Catches a missing matplotlib turning into a traceback or losing the tables and JSON.
	def test_plots_skipped_without_matplotlib(self):
		fake = os.path.join(self.tmp, 'fake')
		os.makedirs(os.path.join(fake, 'matplotlib'))
		with open(os.path.join(fake, 'matplotlib', '__init__.py'), 'w') as f:
			f.write('raise ImportError("no matplotlib here")\n')
		out = os.path.join(self.tmp, 'out.json')
		p = run('inboot', BOOT1, '--json', out, '--plots', os.path.join(self.tmp, 'png'),
			env={'PYTHONPATH': fake})
		self.assertEqual(p.returncode, 0, p.stderr)
		skipped = [x for x in p.stdout.splitlines() if 'plots skipped' in x]
		self.assertEqual(len(skipped), 1, p.stdout)
		self.assertTrue(skipped[0].startswith(
			'plots skipped: matplotlib cannot be imported (no matplotlib here'), skipped)
		self.assertIn('\nreclaim (ms;', p.stdout)
		self.assertTrue(os.path.isfile(out))
		self.assertFalse(os.path.exists(os.path.join(self.tmp, 'png')))


class TestAtAGlance(Base):
	"""What a maintainer reads first: rows not compared grouped by reason,
	the kernels named as given, exact mode's multi-thread rows set apart,
	the change plot's grouping."""

	def exact(self, *extra):
		return self.json_of('compare', '--base', EXACT_A, '--new', EXACT_B, *extra)

	# Catches one "not compared" line per row (36 here, as before) or a
	# grouping that loses the count, the case or the reason.
	def test_not_compared_one_line_per_reason(self):
		d, out = self.exact()
		self.assertEqual(len(d['not_compared']), 36)
		lines = [x for x in out.splitlines() if x.startswith('not compared:')]
		self.assertEqual(lines, [
			'not compared: 36 rows of shmem_seq_read, shmem_seq_read_lockless_mib: '
			'shmem_read_benchmark.shmem_seq_read_lockless skipped on pristine: no '
			'lockless_page_cache_read switch (rcu-free patch 18); e.g. bench=shmem_seq_read '
			'huge=never layout=written bs=4096 variant=lockless; bench=shmem_seq_read '
			'huge=never layout=written bs=65536 variant=lockless; and 34 more'])

	# Catches two reasons merged into one line: pread16 skipped on pristine
	# for another reason is a line of its own, with its own count.
	def test_two_reasons_two_lines(self):
		base = self.mutate(EXACT_A, lambda ls: [
			x.replace('ok 1 pread16_base', 'ok 1 pread16_base # SKIP only one CPU')
			for x in ls if 'bench=pread16' not in x])
		d, out = self.json_of('compare', '--base', base, '--new', EXACT_B)
		lines = [x for x in out.splitlines() if x.startswith('not compared:')]
		self.assertEqual(len(lines), 2, out)
		self.assertTrue(lines[0].startswith('not compared: 36 rows of '), lines)
		self.assertTrue(lines[1].startswith(
			'not compared: 2 rows of pread16: pread16_benchmark.pread16_base skipped on '
			'pristine: only one CPU; e.g. bench=pread16 fs=tmpfs mode=own-file threads=1 '
			'variant=-; bench=pread16 fs=ramfs'), lines)

	# Catches the kernels called base/new where the logs (make bench-compare's
	# A and B) or --names say what they are, and a bad --names accepted.
	def test_kernels_named_as_given(self):
		d, out = self.exact()
		self.assertEqual(d['names'], {'base': 'pristine', 'new': 'series'})
		self.assertRegex(out, r'\npristine +±cv% +%change +series +±cv% +configuration\n')
		d, out = self.exact('--names', 'A,B')
		self.assertEqual(d['names'], {'base': 'A', 'new': 'B'})
		self.assertIn('skipped on A: ', out)
		d, _ = self.json_of('compare', '--base', *BASE, '--new', *NEW)
		self.assertEqual(d['names'], {'base': 'base', 'new': 'new'})
		p = run('compare', '--base', EXACT_A, '--new', EXACT_B, '--names', 'A')
		self.assertBadInput(p, "--names 'A': give two different names, A,B$")

	# Catches exact mode's bimodal multi-thread rows shown as results (the
	# recorded ramfs threads=2 row would read +122.7 %), or one-thread rows
	# dropped with them, or the rows dropped outside exact mode.
	def test_exact_mode_multithread_rows_not_results(self):
		d, out = self.exact()
		self.assertEqual({r['config']['threads'] for r in d['results'] if r['bench'] == 'pread16'},
				 {'1'})
		one = self.find(d['results'], 'pread16', '-', fs='tmpfs', threads='1')
		self.assertAlmostEqual(one['change_pct'], (1.279 - 1.250) / 1.250 * 100, places=6)
		self.assertEqual(sorted((n['side'], n['config']['fs']) for n in d['not_meaningful']),
				 [('base', 'ramfs'), ('base', 'tmpfs'), ('new', 'ramfs'), ('new', 'tmpfs')])
		self.assertNotIn('threads=2\n', out)
		self.assertIn('\nnot meaningful in exact mode: 2 rows of pread16 with threads > 1, not '
			      'shown', out)
		wall = [self.mutate(x, lambda ls: [y.replace('exact=yes', 'exact=no') for y in ls], 'wall-')
			for x in (EXACT_A, EXACT_B)]
		d, out = self.json_of('compare', '--base', wall[0], '--new', wall[1])
		self.assertEqual(len([r for r in d['results'] if r['bench'] == 'pread16']), 4)
		self.assertEqual(d['not_meaningful'], [])
		self.assertNotIn('not meaningful', out)
		d, out = self.json_of('inboot', EXACT_B)
		self.assertEqual({r['config']['threads'] for r in d['results'] if r['bench'] == 'pread16'},
				 {'1'})
		self.assertIn('not meaningful in exact mode: 2 rows of pread16', out)

	# Catches sizes not grouped inside a configuration (4 KiB / 64 KiB /
	# 1 MiB), groups reordered, or a size shown in bytes.
	def test_change_plot_layout(self):
		d, _ = self.exact()
		rows = [r for r in d['results'] if r['bench'] == 'shmem_seq_read']
		sk, order, pos, labels, seps = benchreport.compare_layout(rows[::-1], 'shmem_seq_read')
		self.assertEqual(sk, 'bs')
		self.assertEqual(labels[:4], ['huge=always layout=hole   1 MiB', '64 KiB', '4 KiB',
					      'huge=always layout=fallocated   1 MiB'])
		self.assertEqual(len(seps), 5)
		self.assertLess(pos[2] + 1, pos[3])		# a gap between groups
		self.assertEqual([benchreport.size_label('bs', v) for v in ('4096', '64K', '2M', '1000')],
				 ['4 KiB', '64 KiB', '2 MiB', '1000 B'])
		self.assertEqual(benchreport.size_label('size_mib', '1024'), '1024 MiB')
		self.assertIsNone(benchreport.size_key([{'fs': 'tmpfs', 'threads': '1'}]))

	# Catches the compare plot missing for a bench, or drawn without the
	# change panel (a PNG of one panel is far narrower).
	def test_compare_plot_has_both_panels(self):
		p = run('compare', '--base', EXACT_A, '--new', EXACT_B, '--plots', self.tmp)
		self.assertEqual(p.returncode, 0, p.stderr)
		if 'plots skipped' in p.stdout:
			self.skipTest(p.stdout.strip().splitlines()[-1])
		self.assertEqual(sorted(x for x in os.listdir(self.tmp) if x.endswith('.png')),
				 ['pread16.png', 'shmem_seq_read.png'])
		with open(os.path.join(self.tmp, 'shmem_seq_read.png'), 'rb') as f:
			head = f.read(24)
		width, height = int.from_bytes(head[16:20], 'big'), int.from_bytes(head[20:24], 'big')
		self.assertGreater(width, 1200)
		self.assertGreater(height, 600)

	# Catches the matrix's cells without a value left unexplained or listed
	# one per cell: one line per reason, with the prefixes.
	def test_matrix_unmeasured_one_line_per_reason(self):
		d, out = self.json_of('matrix', '--prefix', '0', 'pristine 7.3', EXACT_A,
				      '--prefix', '1', 'g/0001-a.patch', EXACT_B)
		self.assertEqual(len(d['not_measured']), 36)
		lines = [x for x in out.splitlines() if x.startswith('not measured:')]
		self.assertEqual(len(lines), 1, out)
		self.assertTrue(lines[0].startswith(
			'not measured: 36 rows at prefix 0: shmem_read_benchmark.shmem_seq_read_lockless '
			'skipped: no lockless_page_cache_read switch (rcu-free patch 18); e.g. '), lines)
		self.assertNotIn('threads=2', out.split('not meaningful')[0])
		self.assertEqual(benchreport.spans([5, 1, 2, 3, 3]), '1-3, 5')


class TestMatrix(Base):
	"""Prefix 0 = the compare-A logs (pread16 threads=1 median 11, threads=2
	21), prefix 1 = compare-B (15, 22; batchread appears), prefix 2 not
	measured, prefix 3 = compare-B again (no step)."""

	def matrix(self, *extra):
		return self.json_of('matrix', '--prefix', '0', 'pristine 7.3', ','.join(BASE),
				    '--prefix', '1', 'g/0001-a.patch', ','.join(NEW),
				    '--prefix', '2', 'g/0002-b.patch', '-',
				    '--prefix', '3', 'g/0003-c.patch', ','.join(NEW), *extra)

	def column(self, d, bench, variant='-', **config):
		b = d['benches'][bench]
		i = b['columns'].index({'config': config, 'variant': variant})
		return [m[i] for m in b['medians']], [s[i] for s in b['steps_pct']]

	# Catches a step taken against the wrong prefix (the unmeasured one, or
	# the first instead of the previous), with the wrong sign, or a
	# configuration that appears at a later prefix given a step.
	def test_steps_against_previous_measured_prefix(self):
		d, out = self.matrix()
		med, steps = self.column(d, 'pread16', fs='tmpfs', threads='1')
		self.assertEqual(med, [11, 15, None, 15])
		self.assertEqual(steps[:3], [None, 400 / 11, None])
		self.assertAlmostEqual(steps[3], 0.0)
		med, steps = self.column(d, 'batchread', 'on', size='64K')
		self.assertEqual(med[0], None)
		self.assertEqual(steps[1], None)
		self.assertRegex(out, r'\n +1 +g/0001-a\.patch +\+36\.36%! +\+4\.76%!\n')
		self.assertRegex(out, r'\n +2 +g/0002-b\.patch +x +x\n')
		# prefix 3's step covers patches 2 and 3 (prefix 2 was not measured)
		self.assertRegex(out, r'\n2-3 +g/0003-c\.patch ')
		self.assertIn('not measured: prefix 2 (g/0002-b.patch)', out)

	# Catches the threshold not applied (every step marked, or none) and the
	# marked steps not listed by patch.
	def test_threshold_marks_steps(self):
		d, out = self.matrix('--threshold', '5')
		self.assertEqual([(m['k'], m['config']['threads']) for m in d['marked']], [(1, '1')])
		self.assertIn('\n      1 g/0001-a.patch: +36.36%  bench=pread16 fs=tmpfs threads=1', out)
		self.assertNotIn('+4.76%!', out)
		d, _ = self.matrix()
		self.assertEqual(sorted((m['k'], m['config']['threads']) for m in d['marked']),
				 [(1, '1'), (1, '2')])

	# Catches prefixes of exact mode mixed with wall-time ones being compared.
	def test_exact_and_wall_time_refused(self):
		a = [self.mutate(p, with_env, 'env-') for p in BASE]
		b = [self.mutate(p, lambda ls: with_env(ls, ENV.replace('exact=yes', 'exact=no')), 'wall-')
		     for p in NEW]
		p = run('matrix', '--prefix', '0', 'p', ','.join(a), '--prefix', '1', 'q', ','.join(b))
		self.assertBadInput(p, 'some prefixes ran in exact mode and some did not')

	# Catches a plot missing for the matrix.
	def test_matrix_plot(self):
		p = run('matrix', '--prefix', '0', 'p', ','.join(BASE), '--prefix', '1', 'q',
			','.join(NEW), '--plots', self.tmp)
		self.assertEqual(p.returncode, 0, p.stderr)
		if 'plots skipped' in p.stdout:
			self.skipTest(p.stdout.strip().splitlines()[-1])
		self.assertEqual(sorted(x for x in os.listdir(self.tmp) if x.endswith('.png')),
				 ['batchread.png', 'pread16.png'])


if __name__ == '__main__':
	unittest.main()
