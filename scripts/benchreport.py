#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""benchreport: tables, JSON and plots from the BENCH lines of KUnit benchmark logs.

  benchreport.py inboot LOG... [--json OUT] [--plots DIR]
      Guest console logs of one kernel (one per boot, pooled).  Per bench and
      configuration, for each variant: n, median, min, max, cv% (stddev as a
      percentage of the mean) and the ratio of its median to the median of
      the bench's baseline variant.
  benchreport.py compare --base LOG... --new LOG... [--json OUT] [--plots DIR]
      Kernel A (base) against kernel B (new), one log per boot.  One row per
      bench, configuration and variant, LKP style:
          base_median ±cv%   %change  *   new_median ±cv%   configuration
      with "*" when the min-max ranges of base and new do not overlap.  A row
      found on one side only is an error, unless its case skipped on the other
      side: such rows are not compared, one line per reason (the count, the
      case, the first rows).  The kernels are named as --names A,B says, else
      by the variant= of their BENCHENV lines (make bench-compare's A and B),
      else base and new.  The plot puts each row's medians beside its change
      in percent, the sizes of one configuration (4 KiB / 64 KiB / 1 MiB)
      grouped.
  benchreport.py matrix --prefix K PATCH LOG[,LOG...] ... [--threshold PCT]
      One kernel per prefix of a patch series (K = patches applied, PATCH = the
      patch that prefix ends with, LOG "-" = that prefix did not build or
      boot).  Per bench: each configuration's median at the first prefix, the
      step every later prefix causes (%, against the previous prefix that has
      it; a row that covers several patches is labelled "FIRST-K"), marked "!" where its size exceeds --threshold (default 1.0 %),
      and the total change; then the list of marked steps by patch, so that
      one sees which patch costs (or gains) what; the cells without a value
      at a measured prefix, one line per reason.  The plot is each
      configuration's median as a ratio to its first, against K.
  In exact mode (BENCHENV exact=yes) the rows of more than one thread are not
      results: the vCPUs take turns on one host thread, so their rounds are
      bimodal.  Each mode lists them, one line per bench, as "not meaningful
      in exact mode" and keeps their stats in the JSON ("not_meaningful").
  --json OUT: the rows' stats ("results"), every sample ("samples": log, line,
      case, bench, config, variant, round, value, unit), the skipped and
      failed cases ("cases").
  --plots DIR: one PNG per bench (needs matplotlib; skipped with a note if absent).
  --kunit-dir DIR (default $MMKUNIT_KUNIT_DIR, else build/tree/tools/testing/kunit):
      where kunit_tool's kunit_parser.py is; logs are read with it.

BENCH line format (the contract with the in-kernel benchmark suites)
====================================================================
A benchmark case prints one KTAP diagnostic line per configuration and round
in its own output (so it lands in that case's log), e.g.

    # BENCH bench=pread16 fs=tmpfs mode=own-file threads=2 variant=lockless round=3 value=12.345 unit=Mreads/s

printed with kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT "# BENCH bench=%s "
"... round=%d value=%llu.%03llu unit=%s", ...).  "# <case>: BENCH ..." (as
kunit_info() prints it) is accepted too; lines of a parameterised case's
parameters count as the case's.  After "BENCH " come space-separated
key=value tokens; neither keys nor values contain spaces, keys contain no
"=", each key appears at most once.
Required keys:
  bench    the benchmark's name: one table and one plot each
  variant  the in-boot side of a comparison (base/lockless, off/on, ...), or
           "-" when the only comparison is between kernels.  Within a bench,
           the variant that appears first in the (first) log is the baseline.
  round    an integer >= 1; in one log every configuration and variant of a
           bench has the same set of rounds, each once
  value    the measurement, a finite number
  unit     its unit, the same for every line of one bench and configuration
Every other key is the configuration (shown in order of first appearance).
In inboot, a bench with a "threads" key of several integer values is plotted
as value against threads, one line per variant, with a dashed linear-scaling
line from that line's smallest thread count, one subplot per combination of
the other keys; any other bench as grouped bars with min-max error bars.
compare plots every bench as two panels, the medians and the change.  One PNG
per bench.

BENCHENV line (the environment of a boot)
=========================================
Each benchmark case prints, before its BENCH lines,

    # BENCHENV vcpus=2 preempt=VOLUNTARY thp=always accel=tcg exact=yes variant=series

key=value tokens like BENCH's: what the guest knows (vcpus, preempt, thp)
and what the runner passed on the kernel command line (accel, exact,
variant).  The keys of a log's BENCHENV lines must agree; a log without one
(older kernels, stock kunit.py) has an empty environment.  Every table names
the environment of its logs ("environment: ..."), the JSON has it per log
("envs") and per side ("env").  With exact=yes (QEMU -icount shift=0: 1 ns
of guest time is one instruction executed) the units say so: "ms" becomes
"ms icount (1e6 insns)", "MiB/s" "MiB/s icount (per 1e9 insns)".  compare
refuses an exact side against one that is not.  With two or more logs of one
kernel (inboot, or a compare side) the report prints how far apart the boots'
medians of each configuration are ("boots agree": largest difference, and
whether every one is within 0.5 %).

Skipped cases are listed with their reason, failed or crashed ones too.  Exit
status: 0 done (also when every case of a log skipped and printed no BENCH
line), 1 a case failed or crashed (the report is still printed), 2 bad input:
one line "benchreport: error: FILE:LINE: what is wrong" on stderr.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass, asdict, replace
from typing import Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_KUNIT_DIR = os.path.join(REPO, 'build', 'tree', 'tools', 'testing', 'kunit')
REQUIRED = ('bench', 'variant', 'round', 'value', 'unit')
BENCH_RE = re.compile(r'^\s*#\s+(?:\S+:\s+)?BENCH\s+(.*)$')
ENV_RE = re.compile(r'^\s*#\s+(?:\S+:\s+)?BENCHENV\s+(.*)$')
# A step of the per-patch matrix larger than this (in %) is marked.
STEP_PCT = 1.0
# Boots of one kernel whose medians differ by more than this do not "agree".
AGREE_PCT = 0.5
# Exact mode (-icount shift=0): a guest nanosecond is one instruction.
ICOUNT_UNITS = {'ns': 'ns icount (insns)', 'us': 'us icount (1e3 insns)',
		'ms': 'ms icount (1e6 insns)', 's': 's icount (1e9 insns)'}
# kunit_parser's TestStatus names, as the report words them.
STATUS = {'SUCCESS': 'passed', 'SKIPPED': 'skipped', 'FAILURE': 'failed',
	  'TEST_CRASHED': 'has no result line (guest stopped?)', 'NO_TESTS': 'ran no test'}
# Debian's python3-matplotlib, for a python3 (pyenv, venv) that does not see it.
DEBIAN_DIST_PACKAGES = '/usr/lib/python3/dist-packages'


class Error(Exception):
	"""Bad input: one line on stderr, exit 2."""


@dataclass
class Sample:
	log: str
	line: int
	case: str
	bench: str
	config: Dict[str, str]
	variant: str
	round: int
	value: float
	unit: str
	side: str = ''

	def ckey(self) -> Tuple:
		return tuple(sorted(self.config.items()))


def load_parser(kunit_dir: str):
	"""kunit_tool's parser module and a printer that prints nothing."""
	if not os.path.isfile(os.path.join(kunit_dir, 'kunit_parser.py')):
		raise Error(f'kunit_parser.py not found in {kunit_dir}: give --kunit-dir or '
			    'MMKUNIT_KUNIT_DIR (a kernel tree\'s tools/testing/kunit; '
			    '"make tree" makes the default one)')
	sys.path.insert(0, os.path.abspath(kunit_dir))
	import kunit_parser
	import kunit_printer
	return kunit_parser, kunit_printer.null_printer


def parse_bench(text: str, where: str) -> Tuple[str, Dict[str, str], str, int, float, str]:
	"""(bench, config, variant, round, value, unit) of the tokens after BENCH."""
	kv: Dict[str, str] = {}
	for tok in text.split():
		key, eq, val = tok.partition('=')
		if not key or not eq or not val:
			raise Error(f'{where}: BENCH token "{tok}" is not key=value')
		if key in kv:
			raise Error(f'{where}: BENCH key "{key}" given twice')
		kv[key] = val
	missing = [k for k in REQUIRED if k not in kv]
	if missing:
		raise Error(f'{where}: BENCH line without {", ".join(missing)}')
	rnd = int(kv['round']) if re.fullmatch(r'[0-9]+', kv['round']) else 0
	if rnd < 1:
		raise Error(f'{where}: BENCH round "{kv["round"]}" is not an integer >= 1')
	try:
		value = float(kv['value'])
	except ValueError:
		value = math.nan
	if not math.isfinite(value):
		raise Error(f'{where}: BENCH value "{kv["value"]}" is not a number')
	config = {k: v for k, v in kv.items() if k not in REQUIRED}
	return kv['bench'], config, kv['variant'], rnd, value, kv['unit']


def parse_env(text: str, where: str) -> Dict[str, str]:
	"""The key=value tokens after BENCHENV."""
	env: Dict[str, str] = {}
	for tok in text.split():
		key, eq, val = tok.partition('=')
		if not key or not eq or not val:
			raise Error(f'{where}: BENCHENV token "{tok}" is not key=value')
		env[key] = val
	return env


def exact_unit(unit: str) -> str:
	"""@unit as exact mode makes it: guest time counts instructions."""
	if unit in ICOUNT_UNITS:
		return ICOUNT_UNITS[unit]
	if unit.endswith('/s'):
		return f'{unit} icount (per 1e9 insns)'
	return unit


def env_text(env: Dict[str, str]) -> str:
	return ' '.join(f'{k}={v}' for k, v in env.items()) or 'not given (no BENCHENV line)'


def case_name(name: str) -> str:
	"""suite.case of a test's dotted path (suite and case names have no dot)."""
	return '.'.join(name.split('.')[:2])


def read_log(path: str, kp, printer) -> Tuple[List[Sample], List[Tuple[str, str, str]],
					      Dict[str, str]]:
	"""BENCH samples of one log, (case, status, skip reason) of its leaf
	cases, and its environment (the BENCHENV lines, which must agree)."""
	try:
		with open(path, errors='replace') as f:
			lines = f.readlines()
	except OSError as e:
		raise Error(f'{path}: {e.strerror}')
	# The Test tree keeps log text only: map each KTAP line back to its line numbers.
	numbers: Dict[str, List[int]] = {}
	stream = kp.extract_tap_lines(lines)
	while stream:
		n = stream.line_number()
		numbers.setdefault(stream.pop(), []).append(n)
	try:
		root = kp.parse_run_tests(lines, printer)
	except Exception as e:  # kunit_parser's own limits, e.g. a stream ending mid-test
		raise Error(f'{path}: kunit_parser cannot read it: {e}')
	if root.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
		raise Error(f'{path}: no KTAP output (no "KTAP version" line): not a KUnit guest log')
	samples: List[Sample] = []
	cases: List[Tuple[str, str, str]] = []
	env: Dict[str, str] = {}
	env_at: Dict[str, int] = {}

	def walk(test, name: str) -> None:
		for text in test.log:
			e = ENV_RE.match(text)
			if e:
				nums = numbers.get(text)
				line = nums[0] if nums else 0
				for k, v in parse_env(e.group(1), f'{path}:{line}').items():
					if env.setdefault(k, v) != v:
						raise Error(f'{path}:{line}: BENCHENV {k}={v} differs from '
							    f'{k}={env[k]} (line {env_at[k]}) in the same boot')
					env_at.setdefault(k, line)
				continue
			m = BENCH_RE.match(text)
			if not m:
				continue
			nums = numbers.get(text)
			line = nums.pop(0) if nums else 0
			fields = parse_bench(m.group(1), f'{path}:{line}')
			# kunit_parser puts a parameterised case's lines in the case's or
			# a parameter's log: tie them to suite.case.
			samples.append(Sample(path, line, case_name(name), *fields))
		for sub in test.subtests:
			# A case cut off without its result line has no name.
			walk(sub, f'{name}.{sub.name or "?"}' if name else sub.name or '?')
		if not test.subtests and name:
			cases.append((name, test.status.name, test.skip_reason))
	walk(root, '')
	if not samples and not (cases and all(c[1] == 'SKIPPED' for c in cases)):
		ran = ', '.join(f'{c} {STATUS.get(s, s)}' for c, s, _ in cases[:4]) + (', ...' if len(cases) > 4 else '')
		raise Error(f'{path}: no BENCH line in the KTAP output (cases: {ran or "none"})')
	if env.get('exact') == 'yes':
		samples = [replace(s, unit=exact_unit(s.unit)) for s in samples]
	return samples, cases, env


def describe(bench: str, config: Dict[str, str], variant: str) -> str:
	return ' '.join([f'bench={bench}'] + [f'{k}={v}' for k, v in config.items()] +
			[f'variant={variant}'])


def not_meaningful(samples: List[Sample], exact: bool) -> Tuple[List[Sample], List[Sample]]:
	"""(kept, dropped): in exact mode the rows of more than one thread are
	dropped.  The vCPUs take turns on one host thread and the guest clock
	counts the instructions of all of them, so such rounds are bimodal
	(cv 24-38 %): they measure no scaling and no path length."""
	if not exact:
		return samples, []
	kept, dropped = [], []
	for s in samples:
		t = s.config.get('threads', '')
		(dropped if re.fullmatch(r'[0-9]+', t) and int(t) > 1 else kept).append(s)
	return kept, dropped


def print_not_meaningful(dropped: List[Sample]) -> List[Dict]:
	"""One line per bench for the rows not_meaningful() dropped; their
	stats for the JSON."""
	rows: Dict[Tuple, List[Sample]] = {}
	for s in dropped:
		rows.setdefault((s.side, s.bench, s.ckey(), s.variant), []).append(s)
	out = []
	for key, cell in rows.items():
		s = cell[0]
		out.append({'bench': s.bench, 'config': s.config, 'variant': s.variant,
			    'side': s.side, **stats(cell)})
	per_bench: Dict[str, List[str]] = {}
	for r in out:
		d = describe(r['bench'], r['config'], r['variant'])
		if d not in per_bench.setdefault(r['bench'], []):
			per_bench[r['bench']].append(d)
	for bench, descs in per_bench.items():
		print(f'not meaningful in exact mode: {len(descs)} row{"s" if len(descs) > 1 else ""} '
		      f'of {bench} with threads > 1, not shown (the vCPUs take turns on one host '
		      f'thread: such rounds are bimodal; measure scaling under KVM); '
		      f'e.g. {examples(descs)}')
	return out


def examples(items: List[str], n: int = 2) -> str:
	"""The first @n of @items, and how many more."""
	more = len(items) - n
	return '; '.join(items[:n]) + (f'; and {more} more' if more > 0 else '')


def spans(ks: List[int]) -> str:
	"""1, 2, 3, 5 -> "1-3, 5"."""
	out: List[List[int]] = []
	for k in sorted(set(ks)):
		if out and k == out[-1][1] + 1:
			out[-1][1] = k
		else:
			out.append([k, k])
	return ', '.join(str(a) if a == b else f'{a}-{b}' for a, b in out)


def check_rounds(path: str, samples: List[Sample], bad: Dict[str, str]) -> None:
	"""One log: no duplicate sample, every configuration of a bench has all its rounds.
	bad: status of the cases that failed or crashed, to name in the error."""
	seen: Dict[Tuple, int] = {}
	rounds: Dict[str, Dict[Tuple, set]] = {}
	first: Dict[Tuple, Sample] = {}
	for s in samples:
		key = (s.bench, s.ckey(), s.variant, s.round)
		if key in seen:
			raise Error(f'{path}:{s.line}: duplicate BENCH sample (same bench, '
				    f'configuration, variant and round as line {seen[key]})')
		seen[key] = s.line
		rounds.setdefault(s.bench, {}).setdefault((s.ckey(), s.variant), set()).add(s.round)
		first.setdefault((s.ckey(), s.variant), s)
	for bench, per in rounds.items():
		every = set().union(*per.values())
		for cv, got in per.items():
			if got != every:
				s = first[cv]
				missing = ', '.join(str(r) for r in sorted(every - got))
				raise Error(f'{path}: {describe(bench, s.config, s.variant)}: round {missing} '
					    f'missing (other configurations of {bench} have rounds '
					    f'{", ".join(str(r) for r in sorted(every))})' +
					    (f'; {s.case} {STATUS.get(bad[s.case], bad[s.case])}' if s.case in bad else ''))


def check_units(samples: List[Sample]) -> None:
	first: Dict[Tuple, Sample] = {}
	for s in samples:
		f = first.setdefault((s.bench, s.ckey()), s)
		if s.unit != f.unit:
			raise Error(f'{s.log}:{s.line}: unit "{s.unit}" differs from "{f.unit}" '
				    f'({f.log}:{f.line}) for the same bench and configuration')


def load_side(paths: List[str], side: str, kp, printer,
	      envs: Dict[str, Dict[str, str]]) -> Tuple[List[Sample], List[Dict]]:
	"""Samples and cases of @paths; each log's environment goes to @envs."""
	samples: List[Sample] = []
	cases: List[Dict] = []
	for path in paths:
		got, leafs, envs[path] = read_log(path, kp, printer)
		check_rounds(path, got, {case_name(c): st for c, st, _ in leafs
					 if st not in ('SUCCESS', 'SKIPPED')})
		for s in got:
			s.side = side
		samples += got
		cases += [{'log': path, 'case': c, 'status': st, 'reason': r} for c, st, r in leafs]
	return samples, cases


def side_env(paths: List[str], envs: Dict[str, Dict[str, str]]) -> Dict[str, str]:
	"""The environment of the logs of one kernel: each key's value, or its
	values joined by "|" where the logs differ ("?" for a log without it)."""
	keys = list(dict.fromkeys(k for p in paths for k in envs[p]))
	return {k: '|'.join(dict.fromkeys(envs[p].get(k, '?') for p in paths)) for k in keys}


def boot_agreement(samples: List[Sample], paths: List[str]) -> Optional[Dict]:
	"""How far apart the boots' medians of every bench, configuration and
	variant are: (max - min) / min of the per-log medians, in %.  None for
	a single log."""
	if len(paths) < 2:
		return None
	per: Dict[Tuple, Dict[str, List[float]]] = {}
	first: Dict[Tuple, Sample] = {}
	for s in samples:
		key = (s.bench, s.ckey(), s.variant)
		first.setdefault(key, s)
		per.setdefault(key, {}).setdefault(s.log, []).append(s.value)
	rows = []
	for key, logs in per.items():
		meds = [statistics.median(logs[p]) for p in paths if p in logs]
		lo, hi = min(meds), max(meds)
		spread = (hi - lo) / abs(lo) * 100 if lo else (0.0 if hi == lo else math.inf)
		f = first[key]
		rows.append({'bench': f.bench, 'config': f.config, 'variant': f.variant,
			     'medians': meds, 'spread_pct': spread})
	if not rows:
		return None
	worst = max(rows, key=lambda r: r['spread_pct'])
	return {'boots': len(paths), 'limit_pct': AGREE_PCT, 'configurations': len(rows),
		'max_spread_pct': worst['spread_pct'],
		'worst': describe(worst['bench'], worst['config'], worst['variant']),
		'within_limit': all(r['spread_pct'] <= AGREE_PCT for r in rows), 'rows': rows}


def print_agreement(agree: Optional[Dict], label: str = '') -> None:
	if not agree:
		return
	print(f'\n{label}boots agree: {agree["boots"]} boots, {agree["configurations"]} '
	      f'configurations; largest difference of medians {agree["max_spread_pct"]:.3f}% '
	      f'({agree["worst"]}); every configuration within {agree["limit_pct"]}%: '
	      f'{"yes" if agree["within_limit"] else "NO"}')


def group(samples: List[Sample]) -> Dict[str, Dict]:
	"""bench -> keys, variants, configs, cells[(ckey, variant)][side] = values, in order of appearance."""
	benches: Dict[str, Dict] = {}
	for s in samples:
		b = benches.setdefault(s.bench, {'keys': [], 'variants': [], 'configs': {},
						 'cells': {}, 'cases': [], 'units': []})
		b['keys'] += [k for k in s.config if k not in b['keys']]
		for what, v in (('variants', s.variant), ('cases', s.case), ('units', s.unit)):
			if v not in b[what]:
				b[what].append(v)
		b['configs'].setdefault(s.ckey(), s.config)
		b['cells'].setdefault((s.ckey(), s.variant), {}).setdefault(s.side, []).append(s)
	for b in benches.values():
		b['configs'] = {ck: {k: c[k] for k in b['keys'] if k in c}
				for ck, c in b['configs'].items()}
	return benches


def stats(cell: List[Sample]) -> Dict:
	values = [s.value for s in cell]
	mean = statistics.fmean(values)
	cv = statistics.stdev(values) / abs(mean) * 100 if len(values) > 1 and mean else None
	return {'unit': cell[0].unit, 'n': len(values), 'median': statistics.median(values),
		'min': min(values), 'max': max(values), 'stddev_pct': cv}


def decimals(samples: List[Sample]) -> int:
	"""Decimals that give the largest value of a bench 4 significant digits."""
	top = max(abs(s.value) for s in samples)
	return max(0, 3 - math.floor(math.log10(top))) if top else 0


def num(v: Optional[float], places: int) -> str:
	return '-' if v is None else f'{v:.{places}f}'


def table(rows: List[List[str]], align: str) -> str:
	"""Rows (the first is the header) as text; align: "l" or "r" per column."""
	widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
	return '\n'.join('  '.join(c.ljust(w) if a == 'l' else c.rjust(w)
				   for c, w, a in zip(r, widths, align)).rstrip() for r in rows)


def pct(v: Optional[float], fmt: str = '.1f', prefix: str = '') -> str:
	return '-' if v is None else f'{prefix}{v:{fmt}}%'


def report_cases(cases: List[Dict], nlogs: int) -> int:
	"""Print failed cases one by one and skipped ones one line per reason
	(a parameterised case's parameters as one case); return how many failed."""
	seen: Dict[Tuple, List[str]] = {}
	for c in cases:
		if c['status'] != 'SUCCESS':
			seen.setdefault((c['status'], c['case'], c['reason']), []).append(c['log'])
	failed = 0
	skipped: Dict[Tuple[str, str], Dict[str, int]] = {}
	for (status, case, reason), logs in seen.items():
		where = ', '.join(logs) if len(logs) <= 2 else f'in {len(logs)} of {nlogs} logs'
		if status == 'SKIPPED':
			per = skipped.setdefault((reason or 'no reason given', where), {})
			per[case_name(case)] = per.get(case_name(case), 0) + 1
		else:
			failed += 1
			print(f'FAILED: {case} {STATUS.get(status, status)} ({where})')
	for (reason, where), per in skipped.items():
		names = [c if n == 1 else f'{c} ({n} parameters)' for c, n in per.items()]
		if len(names) == 1:
			print(f'skipped: {names[0]}: {reason} ({where})')
		else:
			print(f'skipped: {len(names)} cases: {reason}: {examples(names, 4)} ({where})')
	return failed


# (JSON dict, samples, cases, plot points (bench, config, label, stats), failed cases)
Report = Tuple[Dict, List[Sample], List[Dict], List[Tuple], int]


def inboot(args, kp, printer) -> Report:
	"""Print one table per bench: the variants of one kernel side by side."""
	envs: Dict[str, Dict[str, str]] = {}
	samples, cases = load_side(args.logs, '', kp, printer, envs)
	check_units(samples)
	env = side_env(args.logs, envs)
	print(f'environment: {env_text(env)}')
	samples, dropped = not_meaningful(samples, env.get('exact') == 'yes')
	results = []
	for bench, b in group(samples).items():
		base = b['variants'][0]
		places = decimals([s for cell in b['cells'].values() for s in cell['']])
		rows = [b['keys'] + ['variant', 'n', 'median', 'min', 'max', 'cv%', 'ratio']]
		for ck, config in b['configs'].items():
			ref = b['cells'].get((ck, base))
			for variant in b['variants']:
				if (ck, variant) not in b['cells']:
					continue
				st = stats(b['cells'][(ck, variant)][''])
				ref_median = stats(ref[''])['median'] if ref else None
				ratio = (st['median'] / ref_median
					 if ref_median and len(b['variants']) > 1 else None)
				results.append({'bench': bench, 'config': config, 'variant': variant,
						'baseline': base, **st, 'ratio': ratio})
				rows.append([config.get(k, '-') for k in b['keys']] + [
					variant, str(st['n']), num(st['median'], places), num(st['min'], places),
					num(st['max'], places),
					pct(st['stddev_pct']), '-' if ratio is None else f'{ratio:.3f}'])
		print(f'\n{bench} ({", ".join(b["units"])}; baseline variant {base}; '
		      f'case {", ".join(b["cases"])})')
		print(table(rows, 'l' * (len(b['keys']) + 1) + 'rrrrrr'))
	if not samples and not dropped:
		print('no BENCH line: every benchmark case skipped')
	nm = print_not_meaningful(dropped)
	agree = boot_agreement(samples, args.logs)
	print_agreement(agree)
	failed = report_cases(cases, len(args.logs))
	points = [(r['bench'], r['config'], r['variant'], r) for r in results]
	out = {'mode': 'inboot', 'logs': args.logs, 'env': env, 'envs': envs,
	       'boot_agreement': agree, 'results': results, 'not_meaningful': nm}
	return out, samples, cases, points, failed


def normalize(samples: List[Sample], ref: str) -> List[Sample]:
	"""Divide each sample of the --ref bench by the median of the --ref
	configuration in the same log (boot), so that the level one boot sets
	for all its numbers drops out; the result is a ratio ("x ref")."""
	want = dict(t.split('=', 1) for t in ref.split() if '=' in t)
	bench = want.pop('bench', '')
	if not bench or len(want) != len(ref.split()) - 1:
		raise Error(f'--ref {ref!r}: give bench=<name> and key=value for every key of a configuration')
	refs: Dict[str, List[float]] = {}
	for s in samples:
		if s.bench == bench and s.config == want:
			refs.setdefault(s.log, []).append(s.value)
	out = []
	for s in samples:
		if s.bench != bench:
			out.append(s)
			continue
		if s.log not in refs:
			raise Error(f'{s.log}: no sample of --ref {ref}')
		out.append(replace(s, value=s.value / statistics.median(refs[s.log]), unit='x ref'))
	return out


def side_names(args, env: Dict[str, Dict[str, str]]) -> Dict[str, str]:
	"""What to call the two kernels: --names, else the variant their
	BENCHENV lines name (make bench-compare's A and B), else base/new."""
	if args.names:
		a, sep, b = args.names.partition(',')
		if not sep or not a or not b or a == b or ',' in b:
			raise Error(f'--names {args.names!r}: give two different names, A,B')
		return {'base': a, 'new': b}
	got = {side: env[side].get('variant', '') for side in ('base', 'new')}
	if all(v and '|' not in v for v in got.values()) and got['base'] != got['new']:
		return got
	return {'base': 'base', 'new': 'new'}


def compare(args, kp, printer) -> Report:
	"""Print one LKP-style table per bench: base logs against new logs."""
	envs: Dict[str, Dict[str, str]] = {}
	base, base_cases = load_side(args.base, 'base', kp, printer, envs)
	new, new_cases = load_side(args.new, 'new', kp, printer, envs)
	env = {'base': side_env(args.base, envs), 'new': side_env(args.new, envs)}
	exact = {side: e.get('exact', '?') for side, e in env.items()}
	if 'yes' in exact.values() and exact['base'] != exact['new']:
		raise Error(f'base logs have exact={exact["base"]}, new logs exact={exact["new"]}: '
			    'instruction counts (exact mode) and wall time do not compare')
	names = side_names(args, env)
	for side in ('base', 'new'):
		print(f'{side} environment: {env_text(env[side])}')
	base, dropped_base = not_meaningful(base, exact['base'] == 'yes')
	new, dropped_new = not_meaningful(new, exact['new'] == 'yes')
	agree = {side: boot_agreement(smp, paths) for side, smp, paths in
		 (('base', base, args.base), ('new', new, args.new))}
	if args.ref:
		base, new = normalize(base, args.ref), normalize(new, args.ref)
		print(f'values of bench {args.ref.split()[0].split("=", 1)[1]} are ratios to the median of '
		      f'"{args.ref}" in the same boot')
	check_units(base + new)
	skipped = {side: {case_name(c['case']): c['reason'] for c in cases if c['status'] == 'SKIPPED'}
		   for side, cases in (('base', base_cases), ('new', new_cases))}
	results, not_compared, points = [], [], []
	for bench, b in group(base + new).items():
		rows = [[names['base'], '±cv%', '%change', '', names['new'], '±cv%', 'configuration']]
		places = decimals([s for cell in b['cells'].values() for side in cell.values() for s in side])
		for (ck, variant), sides in b['cells'].items():
			config = b['configs'][ck]
			if len(sides) < 2:
				have = next(iter(sides))
				other = 'new' if have == 'base' else 'base'
				s = sides[have][0]
				if s.case not in skipped[other] and env[have].get('hooks') == 'on' and \
				   env[other].get('hooks') == 'off':
					# a row that only a test hook can measure (the
					# bytes a tracepoint counts): the other kernel
					# ran the case without the hooks' option
					not_compared.append({'bench': bench, 'config': config,
							     'variant': variant, 'missing': other,
							     'case': s.case, 'reason': 'hooks=off, a row '
							     'that needs a test hook'})
					continue
				if s.case not in skipped[other]:
					raise Error(f'{describe(bench, config, variant)}: only in the {have} '
						    f'logs (first at {s.log}:{s.line})')
				not_compared.append({'bench': bench, 'config': config, 'variant': variant,
						     'missing': other, 'case': s.case,
						     'reason': skipped[other][s.case]})
				continue
			st = {side: stats(sides[side]) for side in ('base', 'new')}
			b0, n0 = st['base'], st['new']
			change = (n0['median'] - b0['median']) / abs(b0['median']) * 100 if b0['median'] else None
			disjoint = n0['min'] > b0['max'] or n0['max'] < b0['min']
			row = {'bench': bench, 'config': config, 'variant': variant, **st,
			       'change_pct': change, 'disjoint': disjoint}
			results.append(row)
			points.append((bench, row))
			rows.append([num(b0['median'], places), pct(b0['stddev_pct'], prefix='±'), pct(change, '+.1f'),
				     '*' if disjoint else '', num(n0['median'], places), pct(n0['stddev_pct'], prefix='±'),
				     ' '.join(f'{k}={v}' for k, v in config.items()) +
				     ('' if variant == '-' else f' variant={variant}')])
		if len(rows) > 1:
			print(f'\n{bench} ({", ".join(b["units"])}; case {", ".join(b["cases"])})')
			print(table(rows, 'rrrlrrl'))
	if results:
		print(f'\n* = the min-max ranges of {names["base"]} and {names["new"]} do not overlap')
	print_not_compared(not_compared, names)
	nm = print_not_meaningful(dropped_base + dropped_new)
	for side in ('base', 'new'):
		print_agreement(agree[side], f'{names[side]}: ')
	failed = report_cases(base_cases + new_cases, len(args.base) + len(args.new))
	out = {'mode': 'compare', 'base_logs': args.base, 'new_logs': args.new, 'names': names,
	       'env': env, 'envs': envs, 'boot_agreement': agree,
	       'results': results, 'not_compared': not_compared, 'not_meaningful': nm}
	return out, base + new, base_cases + new_cases, points, failed


def print_not_compared(not_compared: List[Dict], names: Dict[str, str]) -> None:
	"""One line per reason a row was not compared: the count, the cases
	and the first rows as examples."""
	why: Dict[Tuple[str, str], List[Dict]] = {}
	for n in not_compared:
		why.setdefault((n['missing'], n['reason']), []).append(n)
	for (missing, reason), ns in why.items():
		cases = list(dict.fromkeys(n['case'] for n in ns))
		benches = list(dict.fromkeys(n['bench'] for n in ns))
		print(f'not compared: {len(ns)} row{"s" if len(ns) > 1 else ""} of '
		      f'{", ".join(benches)}: {", ".join(cases)} skipped on {names[missing]}: {reason}; '
		      f'e.g. {examples([describe(n["bench"], n["config"], n["variant"]) for n in ns])}')


def matrix(args, kp, printer) -> Report:
	"""Print one per-patch table per bench: the median of each
	configuration at the first prefix, then the step each patch causes."""
	prefixes = []
	for k, patch, logs in args.prefix:
		if not re.fullmatch(r'[0-9]+', k):
			raise Error(f'--prefix {k} {patch}: K must be the number of patches applied')
		prefixes.append({'k': int(k), 'patch': patch,
				 'logs': [] if logs == '-' else logs.split(',')})
	if len({p['k'] for p in prefixes}) != len(prefixes):
		raise Error('--prefix: the same K given twice')
	prefixes.sort(key=lambda p: p['k'])
	envs: Dict[str, Dict[str, str]] = {}
	samples: List[Sample] = []
	cases: List[Dict] = []
	for p in prefixes:
		got, got_cases = load_side(p['logs'], str(p['k']), kp, printer, envs)
		samples += got
		cases += got_cases
		p['env'] = side_env(p['logs'], envs)
	exact = {p['env'].get('exact', '?') for p in prefixes if p['logs']}
	if 'yes' in exact and len(exact) > 1:
		raise Error('some prefixes ran in exact mode and some did not: instruction counts '
			    'and wall time do not compare')
	check_units(samples)
	samples, dropped = not_meaningful(samples, exact == {'yes'})
	built = [p for p in prefixes if p['logs']]
	print(f'environment: {env_text(built[0]["env"]) if built else "-"}')
	print(f'prefixes: {", ".join(str(p["k"]) for p in prefixes)}; a step is the change of '
	      f'the median against the previous prefix that has the configuration; '
	      f'"!" marks steps over {args.threshold}%')
	benches_out, marked, points, unmeasured = {}, [], [], []
	for bench, b in group(samples).items():
		cols = [(ck, v) for ck in b['configs'] for v in b['variants'] if (ck, v) in b['cells']]
		col_case = {col: next(iter(b['cells'][col].values()))[0].case for col in cols}
		places = decimals([s for cell in b['cells'].values() for side in cell.values() for s in side])
		med = {(col, p['k']): stats(b['cells'][col][str(p['k'])])
		       for col in cols for p in prefixes if str(p['k']) in b['cells'][col]}
		rows = [['', 'patch'] + [f'c{i + 1}' for i in range(len(cols))]]
		steps: Dict[Tuple, Optional[float]] = {}
		last: Dict[Tuple, float] = {}
		last_k: Dict[Tuple, int] = {}
		first: Dict[Tuple, float] = {}
		prev_k = None
		for p in prefixes:
			# A step over several patches (STEPS=, or a prefix not measured) says so
			span = p['k'] if prev_k is None or p['k'] == prev_k + 1 or not p['logs'] \
				else f"{prev_k + 1}-{p['k']}"
			if p['logs']:
				prev_k = p['k']
			row = [str(span), p['patch'][:44]]
			for col in cols:
				st = med.get((col, p['k']))
				if not p['logs']:
					row.append('x')
				elif st is None:
					row.append('-')
					unmeasured.append({'bench': bench, 'config': b['configs'][col[0]],
							   'variant': col[1], 'k': p['k'],
							   'case': col_case[col]})
				elif col not in last:
					row.append(num(st['median'], places))
					first[col] = st['median']
				else:
					step = ((st['median'] - last[col]) / abs(last[col]) * 100
						if last[col] else None)
					steps[(col, p['k'])] = step
					over = step is not None and abs(step) > args.threshold
					row.append(pct(step, '+.2f') + ('!' if over else ''))
					if over:
						config = b['configs'][col[0]]
						marked.append({'bench': bench, 'config': config, 'variant': col[1],
							       'k': p['k'], 'from_k': last_k[col] + 1,
							       'patch': p['patch'], 'step_pct': step})
				if st is not None:
					last[col] = st['median']
					last_k[col] = p['k']
			rows.append(row)
		total = ['', 'total (last / first)']
		for col in cols:
			total.append(pct((last[col] - first[col]) / abs(first[col]) * 100, '+.2f')
				     if col in first and first[col] else '-')
		rows.append(total)
		print(f'\n{bench} ({", ".join(b["units"])}; case {", ".join(b["cases"])}); the '
		      'first row with a value is the median, the rows after it the step in %')
		print(table(rows, 'rl' + 'r' * len(cols)))
		for i, (ck, v) in enumerate(cols):
			print(f'  c{i + 1}: ' + ' '.join(f'{k}={x}' for k, x in b['configs'][ck].items()) +
			      ('' if v == '-' else f' variant={v}'))
		benches_out[bench] = {
			'units': b['units'],
			'columns': [{'config': b['configs'][ck], 'variant': v} for ck, v in cols],
			'medians': [[med[(col, p['k'])]['median'] if (col, p['k']) in med else None
				     for col in cols] for p in prefixes],
			'steps_pct': [[steps.get((col, p['k'])) for col in cols] for p in prefixes]}
		for col in cols:
			ref = first.get(col)
			if not ref:
				continue
			label = ' '.join(f'{k}={x}' for k, x in b['configs'][col[0]].items()) + \
				('' if col[1] == '-' else f' variant={col[1]}')
			points.append((bench, label, [(p['k'], med[(col, p['k'])]['median'] / ref)
						      for p in prefixes if (col, p['k']) in med]))
	if not samples and not dropped:
		print('no BENCH line: every benchmark case skipped')
	if marked:
		print(f'\nsteps over {args.threshold}%, by patch:')
		for m in sorted(marked, key=lambda m: m['k']):
			span = f'{m["k"]}' if m['from_k'] == m['k'] else f'{m["from_k"]}-{m["k"]}'
			print(f'  {span:>5} {m["patch"]}: {m["step_pct"]:+.2f}%  '
			      f'{describe(m["bench"], m["config"], m["variant"])}')
	else:
		print(f'\nno step over {args.threshold}%')
	for p in prefixes:
		if not p['logs']:
			print(f'not measured: prefix {p["k"]} ({p["patch"]}): no log (build or boot failed)')
	print_unmeasured(unmeasured, cases, prefixes)
	nm = print_not_meaningful(dropped)
	failed = report_cases(cases, sum(len(p['logs']) for p in prefixes))
	out = {'mode': 'matrix', 'threshold_pct': args.threshold,
	       'prefixes': [{'k': p['k'], 'patch': p['patch'], 'logs': p['logs'], 'env': p['env']}
			    for p in prefixes],
	       'envs': envs, 'benches': benches_out, 'marked': marked,
	       'not_measured': unmeasured, 'not_meaningful': nm}
	return out, samples, cases, points, failed


def print_unmeasured(unmeasured: List[Dict], cases: List[Dict], prefixes: List[Dict]) -> None:
	"""The cells of the matrix ("-") without a value at a measured
	prefix, one line per reason: the case skipped there (its reason), or
	it printed no line for that configuration."""
	logs = {p['k']: set(p['logs']) for p in prefixes}
	why: Dict[Tuple[str, str], List[Dict]] = {}
	for u in unmeasured:
		reasons = {c['reason'] for c in cases if c['log'] in logs[u['k']] and
			   c['status'] == 'SKIPPED' and case_name(c['case']) == u['case']}
		reason = ('skipped: ' + ' | '.join(sorted(r or 'no reason given' for r in reasons))
			  if reasons else 'no BENCH line for it')
		why.setdefault((u['case'], reason), []).append(u)
	for (case, reason), us in why.items():
		rows = list(dict.fromkeys(describe(u['bench'], u['config'], u['variant']) for u in us))
		print(f'not measured: {len(rows)} row{"s" if len(rows) > 1 else ""} at prefix'
		      f'{"es" if len({u["k"] for u in us}) > 1 else ""} {spans([u["k"] for u in us])}: '
		      f'{case} {reason}; e.g. {examples(rows)}')


def plot_matrix(plt, path: str, bench: str, lines: List[Tuple], ks: List[int]) -> None:
	"""lines: (label, [(k, ratio to first)]); one PNG at path."""
	fig, ax = plt.subplots(figsize=(max(7.0, 0.35 * len(ks) + 3), 5.0))
	for i, (label, pts) in enumerate(lines):
		ax.plot([k for k, _ in pts], [r for _, r in pts], marker='o', ms=3,
			color=f'C{i % 10}', ls='-' if i < 10 else '--', label=label)
	ax.axhline(1.0, color='grey', lw=0.8)
	ax.set(xlabel='patches applied (prefix of the series)',
	       ylabel='median / median at its first prefix')
	ax.set_xticks(ks)
	ax.grid(alpha=0.3)
	ax.legend(fontsize='x-small', ncol=2)
	fig.suptitle(f'{bench}: per-patch matrix')
	fig.tight_layout()
	fig.savefig(path, dpi=100)
	plt.close(fig)


def load_pyplot():
	"""(matplotlib.pyplot with the Agg backend, None) or (None, why not)."""
	try:
		import matplotlib
	except ImportError as e:
		why = str(e)
		if not os.path.isdir(DEBIAN_DIST_PACKAGES) or DEBIAN_DIST_PACKAGES in sys.path:
			return None, why
		sys.path.append(DEBIAN_DIST_PACKAGES)
		try:
			import matplotlib
		except Exception as e2:  # built for another Python, broken install...
			return None, f'{why}; with {DEBIAN_DIST_PACKAGES} too: {e2}'
	matplotlib.use('Agg')
	import matplotlib.pyplot as plt
	return plt, None


def plot_bench(plt, path: str, bench: str, points: List[Tuple]) -> None:
	"""points: (config, label, stats); one PNG at path."""
	unit = ', '.join(sorted({st['unit'] for _, _, st in points}))
	threads = {c.get('threads') for c, _, _ in points}
	if len(threads) > 1 and all(re.fullmatch(r'[1-9][0-9]*', t or '') for t in threads):
		panels: Dict[str, Dict[str, List]] = {}
		for c, label, st in points:
			other = ' '.join(f'{k}={v}' for k, v in c.items() if k != 'threads')
			panels.setdefault(other, {}).setdefault(label, []).append((int(c['threads']), st))
		cols = min(len(panels), 2)
		rows = -(-len(panels) // cols)
		fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.5 * rows), squeeze=False)
		for ax, (title, lines) in zip(axes.flat, panels.items()):
			for i, (label, pts) in enumerate(lines.items()):
				pts.sort(key=lambda p: p[0])
				t = [p[0] for p in pts]
				med = [p[1]['median'] for p in pts]
				err = [[m - p[1]['min'] for m, p in zip(med, pts)],
				       [p[1]['max'] - m for m, p in zip(med, pts)]]
				ax.errorbar(t, med, yerr=err, marker='o', capsize=3, color=f'C{i}', label=label)
				ax.plot(t, [med[0] * x / t[0] for x in t], '--', color=f'C{i}', alpha=0.5,
					label=f'{label}: linear from {t[0]} thread{"s" if t[0] > 1 else ""}')
			ax.set(title=title, xlabel='threads', ylabel=unit, ylim=(0, None))
			ax.set_xticks(sorted({int(t) for t in threads}))
			ax.grid(alpha=0.3)
			ax.legend(fontsize='small')
		for ax in list(axes.flat)[len(panels):]:
			ax.set_visible(False)
	else:
		def name(c: Dict[str, str]) -> str:
			return '\n'.join(f'{k}={v}' for k, v in c.items()) or bench
		configs = list(dict.fromkeys(name(c) for c, _, _ in points))
		labels = list(dict.fromkeys(label for _, label, _ in points))
		width = 0.8 / len(labels)
		fig, ax = plt.subplots(figsize=(max(6.0, 1.0 + len(configs) * (0.5 + 0.4 * len(labels))), 4.5))
		for i, label in enumerate(labels):
			mine = [(configs.index(name(c)), st) for c, lb, st in points if lb == label]
			x = [j + (i - (len(labels) - 1) / 2) * width for j, _ in mine]
			med = [st['median'] for _, st in mine]
			err = [[m - st['min'] for m, (_, st) in zip(med, mine)],
			       [st['max'] - m for m, (_, st) in zip(med, mine)]]
			ax.bar(x, med, width, yerr=err, capsize=3, label=label)
		ax.set_xticks(range(len(configs)), configs, fontsize='small')
		ax.set(ylabel=unit)
		ax.grid(axis='y', alpha=0.3)
		ax.legend(fontsize='small')
	fig.suptitle(f'{bench}: median, min-max error bars')
	fig.tight_layout()
	fig.savefig(path, dpi=100)
	plt.close(fig)


# Keys whose values are a request or buffer size: the change plot groups
# their values (4 KiB / 64 KiB / 1 MiB) inside each configuration.
SIZE_KEYS = ('bs', 'size', 'block_size', 'len')
SIZE_RE = re.compile(r'([0-9]+)([KMG]?)(?:i?B)?', re.I)


def size_key(configs: List[Dict[str, str]]) -> Optional[str]:
	"""The last key of @configs that names a size and whose every value
	is one (bytes, or 64K / 2M), or that ends in _kib / _mib; else None."""
	keys = list(dict.fromkeys(k for c in configs for k in c))
	for k in reversed(keys):
		vals = [c[k] for c in configs if k in c]
		if (k in SIZE_KEYS or k.endswith(('_kib', '_mib'))) and \
		   all(SIZE_RE.fullmatch(v) for v in vals):
			return k
	return None


def size_label(key: str, value: str) -> str:
	"""4096 -> "4 KiB", 64K -> "64 KiB", size_mib=1024 -> "1024 MiB"."""
	m = SIZE_RE.fullmatch(value)
	if not m:
		return f'{key}={value}'
	if key.endswith('_mib'):
		return f'{value} MiB'
	if key.endswith('_kib'):
		return f'{value} KiB'
	n = int(m[1]) << {'': 0, 'K': 10, 'M': 20, 'G': 30}[m[2].upper()]
	for unit, shift in (('GiB', 30), ('MiB', 20), ('KiB', 10)):
		if n >= 1 << shift and n % (1 << shift) == 0:
			return f'{n >> shift} {unit}'
	return f'{n} B'


def better(unit: str) -> str:
	"""Which way is better for @unit, as a plot says it."""
	if '/s' in unit or unit == 'x ref':
		return 'higher is better' if '/s' in unit else ''
	if unit.split(' ')[0] in ('ns', 'us', 'ms', 's'):
		return 'lower is better'
	return ''


def compare_layout(rows: List[Dict], bench: str) -> Tuple[Optional[str], List[Dict], List[float],
								 List[str], List[float]]:
	"""Where plot_compare() puts each row, top down: (size key, rows in
	plot order, y positions, y labels, y of the lines between groups).
	Rows whose configuration differs only in the size key form a group
	(in order of first appearance), its sizes in their order; the group
	is named on its first row, a size on every row."""
	sk = size_key([r['config'] for r in rows])
	groups: Dict[str, List[Dict]] = {}
	for r in rows:
		g = ' '.join(f'{k}={v}' for k, v in r['config'].items() if k != sk)
		g += '' if r['variant'] == '-' else f' variant={r["variant"]}'
		groups.setdefault(g.strip() or bench, []).append(r)
	order, pos, labels, seps = [], [], [], []
	y = 0.0
	for gi, (g, rs) in enumerate(groups.items()):
		if gi:
			seps.append(y - 0.2)
			y += 0.6
		for j, r in enumerate(rs):
			size = size_label(sk, r['config'][sk]) if sk and sk in r['config'] else ''
			labels.append(f'{g}   {size}'.strip() if j == 0 else size)
			order.append(r)
			pos.append(y)
			y += 1
	return sk, order, pos, labels, seps


def plot_compare(plt, path: str, bench: str, rows: List[Dict], names: Dict[str, str]) -> None:
	"""One PNG at @path: per compared row, the medians of both kernels
	(min-max error bars) beside the change of the median in percent.
	Rows of one configuration but the size are grouped, sizes coloured
	alike in every group; a pale bar's min-max ranges overlap."""
	unit = rows[0]['base']['unit']
	sk, order, pos, labels, seps = compare_layout(rows, bench)
	y = pos[-1] + 1 if pos else 1
	fig, (ax_abs, ax_chg) = plt.subplots(1, 2, sharey=True,
					     figsize=(14, max(3.0, 1.6 + 0.3 * y)))
	h = 0.38
	for i, side in enumerate(('base', 'new')):
		med = [r[side]['median'] for r in order]
		err = [[m - r[side]['min'] for m, r in zip(med, order)],
		       [r[side]['max'] - m for m, r in zip(med, order)]]
		ax_abs.barh([p - h / 2 + i * h for p in pos], med, h, xerr=err, capsize=2,
			    color=('#a6bddb', '#1c5a99')[i], label=names[side])
	ax_abs.set(xlabel=unit, title='median (min-max)')
	ax_abs.legend(fontsize='small', loc='upper center', bbox_to_anchor=(0.5, 0), borderaxespad=4.0, ncol=2)
	sizes = list(dict.fromkeys(r['config'].get(sk, '') for r in order)) if sk else ['']
	colour = {v: f'C{i % 10}' for i, v in enumerate(sizes)}
	change = [r['change_pct'] or 0.0 for r in order]
	for p, r, c in zip(pos, order, change):
		ax_chg.barh(p, c, 0.75, color=colour[r['config'].get(sk, '') if sk else ''],
			    alpha=1.0 if r['disjoint'] else 0.4)
	lo, hi = min(change + [0.0]), max(change + [0.0])
	pad = max(hi - lo, 2.0) * 0.18
	ax_chg.set_xlim(lo - pad, hi + pad)
	for p, c in zip(pos, change):
		ax_chg.text(c + (pad * 0.05 if c >= 0 else -pad * 0.05), p, f'{c:+.1f}%',
			    va='center', ha='left' if c >= 0 else 'right', fontsize='small')
	ax_chg.axvline(0, color='black', lw=1)
	ax_chg.set(xlabel=f'change of the median, {names["new"]} against {names["base"]} (%)',
		   title='change' + (f' ({better(unit)})' if better(unit) else ''))
	if sk:
		from matplotlib.patches import Patch
		ax_chg.legend([Patch(color=colour[v]) for v in sizes],
			      [size_label(sk, v) for v in sizes], fontsize='small', loc='upper center',
			      bbox_to_anchor=(0.5, 0), borderaxespad=4.0, ncol=len(sizes))
	for ax in (ax_abs, ax_chg):
		for sp in seps:
			ax.axhline(sp, color='grey', lw=0.5)
		ax.grid(axis='x', alpha=0.3)
	ax_abs.set_yticks(pos, labels, fontsize='small')
	ax_abs.invert_yaxis()
	fig.suptitle(f'{bench}: {names["new"]} against {names["base"]} '
		     '(pale: min-max ranges overlap)')
	fig.tight_layout()
	fig.savefig(path, dpi=100, bbox_inches='tight')
	plt.close(fig)


def main(argv: Optional[List[str]] = None) -> int:
	common = argparse.ArgumentParser(add_help=False)
	common.add_argument('--json', metavar='OUT', help='write samples and stats as JSON')
	common.add_argument('--plots', metavar='DIR', help='write one PNG per bench here')
	common.add_argument('--kunit-dir', default=os.environ.get('MMKUNIT_KUNIT_DIR', DEFAULT_KUNIT_DIR),
			    help='directory of kunit_parser.py (default: $MMKUNIT_KUNIT_DIR, '
			    'else build/tree/tools/testing/kunit)')
	ap = argparse.ArgumentParser(prog='benchreport', description=__doc__,
				     formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = ap.add_subparsers(dest='cmd', required=True)
	a = sub.add_parser('inboot', parents=[common], help='variants within one kernel')
	a.add_argument('logs', nargs='+', metavar='LOG')
	a.set_defaults(fn=inboot)
	a = sub.add_parser('compare', parents=[common], help='kernel A (base) against kernel B (new)')
	a.add_argument('--base', nargs='+', required=True, metavar='LOG')
	a.add_argument('--new', nargs='+', required=True, metavar='LOG')
	a.add_argument('--ref', metavar='CONFIG', default='',
		       help='"bench=<name> key=value ...": divide that bench\'s samples by '
		       'the median of this configuration in the same boot (one the '
		       'compared change does not touch), to cancel boot-to-boot level shifts')
	a.add_argument('--names', metavar='A,B', default='',
		       help='what to call the two kernels in the tables and plots (default: '
		       'the variant= of their BENCHENV lines, else base,new)')
	a.set_defaults(fn=compare)
	a = sub.add_parser('matrix', parents=[common], help='one kernel per prefix of a series')
	a.add_argument('--prefix', nargs=3, action='append', required=True,
		       metavar=('K', 'PATCH', 'LOGS'),
		       help='K patches applied, the patch the prefix ends with, its logs '
		       '(comma-separated; "-" when it was not measured)')
	a.add_argument('--threshold', type=float, default=STEP_PCT,
		       help=f'mark steps larger than this, in %% (default {STEP_PCT})')
	a.set_defaults(fn=matrix)
	args = ap.parse_args(argv)
	try:
		kp, printer = load_parser(args.kunit_dir)
		out, samples, cases, points, failed = args.fn(args, kp, printer)
		out['samples'] = [asdict(s) for s in samples]
		out['cases'] = [c for c in cases if c['status'] != 'SUCCESS']
		if args.json:
			try:
				with open(args.json, 'w') as f:
					json.dump(out, f, indent=1)
			except OSError as e:
				raise Error(f'{args.json}: {e.strerror}')
		if args.plots and points:
			plt, why = load_pyplot()
			if plt is None:
				print(f'plots skipped: matplotlib cannot be imported ({why})')
			else:
				try:
					os.makedirs(args.plots, exist_ok=True)
					for bench in dict.fromkeys(p[0] for p in points):
						path = os.path.join(args.plots, re.sub(r'[^\w.-]', '_', bench) + '.png')
						mine = [p[1:] for p in points if p[0] == bench]
						if out['mode'] == 'matrix':
							plot_matrix(plt, path, bench, mine,
								    [p['k'] for p in out['prefixes']])
						elif out['mode'] == 'compare':
							plot_compare(plt, path, bench, [m[0] for m in mine],
								     out['names'])
						else:
							plot_bench(plt, path, bench, mine)
						print(f'plot: {path}')
				except OSError as e:
					raise Error(f'{args.plots}: {e.strerror}')
	except Error as e:
		print(f'benchreport: error: {e}', file=sys.stderr)
		return 2
	return 1 if failed else 0


if __name__ == '__main__':
	sys.exit(main())
