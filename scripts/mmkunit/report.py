# SPDX-License-Identifier: GPL-2.0
"""What a run reports: the count line, build/results/summary.json and
build/results/junit.xml (per case kunit's status, our verdict and its
reason; the stages and their times), and series-check's matrix."""

import json
import os
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

from . import arch
from .common import BUILD, count_line, info

RESULTS = os.path.join(BUILD, 'results')


@dataclass
class Stage:
	"""One stage of a command: a variant booted, the host tests, checkpatch."""
	name: str
	cases: List[dict] = field(default_factory=list)
	seconds: float = 0.0
	build_seconds: Optional[float] = None
	guest_seconds: Optional[float] = None
	out_dir: str = ''
	error: str = ''		# why the stage could not run (infrastructure)
	started: str = ''
	# the patch groups the tree was judged as carrying; None: nobody said
	# (VARIANT=asis or SERIES= without APPLIED=), expected-before was off
	applied: Optional[List[str]] = field(default_factory=list)
	# the test hooks: HOOKS= mode, the hook patches applied and not
	hooks: dict = field(default_factory=dict)
	variant: str = ''
	# why the stage could not run when it is the series' doing:
	# "does-not-apply" / "wrong-base" (thread.SeriesOutcome, exit 3)
	outcome: str = ''
	# SERIES=: the thread's version, message-id, base check (thread.py)
	series: Optional[dict] = None
	# what rebuilds the result: config, compiler, QEMU, patch ids, seeds
	repro: dict = field(default_factory=dict)
	# the guest architecture of a kernel stage (x86_64, arm64); '' for a
	# stage that boots no kernel (host tests, checkpatch)
	arch: str = ''

	@property
	def counts(self) -> Dict[str, int]:
		c = {'passed': 0, 'failed': 0, 'skipped': 0}
		for k in self.cases:
			c[{'pass': 'passed', 'fail': 'failed', 'skip': 'skipped'}[k['verdict']]] += 1
		if self.error:
			c['failed'] += 1
		return c


def total(stages: List[Stage]) -> Dict[str, int]:
	t = {'passed': 0, 'failed': 0, 'skipped': 0}
	for s in stages:
		for k, v in s.counts.items():
			t[k] += v
	return t


def exit_code(stages: List[Stage]) -> int:
	"""3 when the series could not be put on our base, 2 when a stage
	could not run, else 1 on any failure, else 0."""
	if any(s.outcome for s in stages):
		return 3
	if any(s.error for s in stages):
		return 2
	return 1 if total(stages)['failed'] else 0


def skip_counts(cases: List[dict]) -> Dict[str, int]:
	"""Skipped cases by kind (hook, config, not-applied, machine, other)
	and the parts of cases skipped for a missing test hook."""
	out: Dict[str, int] = {}
	for c in cases:
		if c['verdict'] == 'skip':
			k = c.get('skip_kind', 'other')
			out[k] = out.get(k, 0) + 1
	out['hook_parts'] = sum(len(c.get('hook_parts', [])) for c in cases)
	return out


def hook_line(stages: List[Stage]) -> str:
	"""One line for the closing counts: what was skipped for missing hooks."""
	cases = [c for s in stages for c in s.cases]
	sk = skip_counts(cases)
	hooks = sorted({p.split(':')[0] for c in cases for p in c.get('hook_parts', [])} |
		       {c['reason'][len('hook absent: '):] for c in cases
			if c.get('skip_kind') == 'hook' and c['reason'].startswith('hook absent: ')})
	if not sk.get('hook') and not sk['hook_parts']:
		return 'hook-absent: nothing skipped for a missing test hook'
	return (f'hook-absent: {sk.get("hook", 0)} case(s) and {sk["hook_parts"]} part(s) '
		f'skipped for missing test hooks ({"; ".join(hooks)})')


def summary(command: str, stages: List[Stage], seconds: float, code: int) -> dict:
	cases = [c for s in stages for c in s.cases]
	out = {'command': command, 'arch': arch.current().name,
	       'finished': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
	       'seconds': round(seconds, 1), 'exit_code': code, 'counts': total(stages),
	       'skips': skip_counts(cases), 'stages': []}
	for s in stages:
		d = asdict(s)
		d['counts'] = s.counts
		d['skips'] = skip_counts(s.cases)
		d['seconds'] = round(s.seconds, 1)
		for k in ('build_seconds', 'guest_seconds'):
			if d[k] is not None:
				d[k] = round(d[k], 1)
		out['stages'].append(d)
	return out


def junit_xml(stages: List[Stage], seconds: float) -> str:
	"""JUnit XML: one testsuite per stage, one testcase per case; a case
	that fails is a <failure>, a stage that could not run an <error>."""
	tot = total(stages)
	root = ET.Element('testsuites', name='mm-kunit', time=f'{seconds:.1f}',
			  tests=str(sum(tot.values())), failures=str(tot['failed']),
			  skipped=str(tot['skipped']))
	for s in stages:
		c = s.counts
		fails = sum(1 for k in s.cases if k['verdict'] == 'fail')
		ts = ET.SubElement(root, 'testsuite', name=s.name,
				   tests=str(len(s.cases) + (1 if s.error else 0)),
				   failures=str(fails), errors=str(1 if s.error else 0),
				   skipped=str(c['skipped']), time=f'{s.seconds:.1f}',
				   timestamp=s.started)
		props = ET.SubElement(ts, 'properties')
		for k in ('seconds', 'build_seconds', 'guest_seconds', 'out_dir', 'arch'):
			v = getattr(s, k)
			if v is not None and v != '':
				ET.SubElement(props, 'property', name=k,
					      value=f'{v:.1f}' if isinstance(v, float) else str(v))
		ET.SubElement(props, 'property', name='applied', value='unknown: expected-before off'
			      if s.applied is None else ','.join(s.applied) or 'none')
		if s.hooks:
			ET.SubElement(props, 'property', name='hooks', value=(
				f'{s.hooks.get("mode")}; applied: ' +
				(','.join(s.hooks.get('applied', [])) or 'none') + '; not applied: ' +
				(','.join(s.hooks.get('not_applied', [])) or 'none')))
		if s.error:
			tc = ET.SubElement(ts, 'testcase', classname=s.name, name='stage', time='0')
			ET.SubElement(tc, 'error', message=s.error, type='infrastructure').text = s.error
		for k in s.cases:
			tc = ET.SubElement(ts, 'testcase', classname=s.name, name=k['name'], time='0')
			if k['verdict'] == 'fail':
				ET.SubElement(tc, 'failure', message=k['reason'] or k['status'],
					      type=k['status']).text = k['reason']
			elif k['verdict'] == 'skip':
				ET.SubElement(tc, 'skipped', message=k['reason'] or k['status'])
			ET.SubElement(tc, 'system-out').text = (
				f'status: {k["status"]}; verdict: {k["verdict"]}' +
				(f'; skip: {k["skip_kind"]}' if k.get('skip_kind') else '') +
				(f'; hook-absent parts: {len(k["hook_parts"])}' if k.get('hook_parts')
				 else '') +
				(f'; reason: {k["reason"]}' if k['reason'] else ''))
	ET.indent(root)
	return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def write(command: str, stages: List[Stage], seconds: float, code: int,
	  results: str = '') -> str:
	"""build/results/summary.json and junit.xml; return the directory."""
	results = results or RESULTS
	os.makedirs(results, exist_ok=True)
	with open(os.path.join(results, 'summary.json'), 'w') as f:
		json.dump(summary(command, stages, seconds, code), f, indent=1)
		f.write('\n')
	with open(os.path.join(results, 'junit.xml'), 'w') as f:
		f.write(junit_xml(stages, seconds))
	from . import kcidb		# KCIDB 5.3 JSON (docs/kernel-ci.rst)
	kcidb.write(command, stages, seconds, code, results)
	return results


def print_stages(stages: List[Stage]) -> None:
	"""The per-stage table of make test."""
	info('summary:')
	for s in stages:
		info(f'  {s.name:<12} {count_line(s.counts)}'
		     + (f' ({s.seconds:.0f} s)' if s.seconds >= 1 else '')
		     + (f'; could not run: {s.error.splitlines()[0]}' if s.error else ''))


# ------------------------------------------------------------ series-check

def with_parents(results: Dict[str, str]) -> Dict[str, str]:
	"""@results with the status of each parameterised case's parent
	(suite.case of suite.case.param) from its parameters, as kunit's own
	result line for the parent has it: crashed if one crashed, else failed
	if one failed, else skipped if all skipped, else passed.  kunit_json
	keeps only the parameters, so a parent is otherwise listed only where
	it ran without parameters (a kernel whose suite skips it whole)."""
	params: Dict[str, List[str]] = {}
	for name, status in results.items():
		parts = name.split('.')
		if len(parts) > 2:
			params.setdefault('.'.join(parts[:2]), []).append(status)
	out = dict(results)
	for parent, sts in params.items():
		if parent in out:
			continue
		if any(st in ('ERROR', 'CRASHED') for st in sts):
			out[parent] = 'ERROR'
		elif any(st not in ('PASS', 'SKIP') for st in sts):
			out[parent] = 'FAIL'
		elif all(st == 'SKIP' for st in sts):
			out[parent] = 'SKIP'
		else:
			out[parent] = 'PASS'
	return out


def analyse_matrix(rows: List[dict]) -> dict:
	"""Regressions, unbuilt prefixes and first passing patch of a matrix.

	@rows: one per prefix, in order, each {'k', 'built', 'results'} with
	results {case: PASS/FAIL/SKIP/...}.  A regression is a case that
	passed on the previous built prefix and does not pass now (failed,
	crashed, or did not run).  A parameterised case's parent row follows
	its parameters (with_parents(), added to each row's results); its
	regression is listed only when none of its parameters' is."""
	for r in rows:
		r['results'] = with_parents(r['results'])
	cases = sorted({c for r in rows for c in r['results']})
	regressions, first_pass = [], {}
	prev = None
	for r in rows:
		if not r['built']:
			continue
		step = []
		for c in cases:
			now = r['results'].get(c, 'NOT RUN')
			if now == 'PASS' and c not in first_pass:
				first_pass[c] = r['k']
			if prev and prev['results'].get(c) == 'PASS' and now != 'PASS':
				step.append({'case': c, 'from': prev['k'], 'to': r['k'], 'status': now})
		regressed = {g['case'] for g in step}
		regressions += [g for g in step
				if not any(c.startswith(g['case'] + '.') for c in regressed)]
		prev = r
	params = {c: sum(1 for x in cases if x.startswith(c + '.')) for c in cases}
	return {'cases': cases, 'regressions': regressions, 'first_pass': first_pass,
		'params': {c: n for c, n in params.items() if n},
		'not_built': [r['k'] for r in rows if not r['built']]}


# kunit_json writes ERROR for a crashed case (TestStatus.TEST_CRASHED)
CELL = {'PASS': 'P', 'FAIL': 'F', 'SKIP': 'S', 'NOT RUN': '-', 'ERROR': 'C', 'CRASHED': 'C'}


def format_matrix(rows: List[dict], an: dict) -> str:
	"""Patches down, cases across (numbered, legend below)."""
	cases = an['cases']
	width = max(3, len(str(len(cases))) + 1)
	lines = ['patch' + ' ' * 46 + ''.join(f'{i + 1:>{width}}' for i in range(len(cases)))]
	for r in rows:
		label = f'{r["k"]:>2} {r["patch"]}'[:48]
		cp = r.get('checkpatch', '')
		if not r['built']:
			cells = ' not built'
		else:
			cells = ''.join(f'{CELL.get(r["results"].get(c, "NOT RUN"), "?"):>{width}}'
					for c in cases)
		lines.append(f'{label:<48}{cp:>3}{cells}')
	lines.append('')
	lines.append('P pass, F fail, S skip, - not run, C crashed; third column: '
		     'checkpatch --strict (ok / !!)')
	for i, c in enumerate(cases):
		fp = an['first_pass'].get(c)
		n = an.get('params', {}).get(c)
		lines.append(f'{i + 1:>{width}} {c}  (first pass: '
			     f'{"never" if fp is None else ("pristine" if fp == 0 else "patch " + str(fp))}'
			     f'{f"; from its {n} parameters where they ran" if n else ""})')
	for g in an['regressions']:
		lines.append(f'REGRESSION: {g["case"]}: PASS at {g["from"]}, {g["status"]} at {g["to"]}')
	for k in an['not_built']:
		lines.append(f'NOT BUILT: prefix {k}')
	return '\n'.join(lines)



def matrix_problems(r: dict, an: dict) -> List[str]:
	"""What makes prefix @r fail series-check: not built, checkpatch, a
	splat or a stop, a case that passed at the previous built prefix."""
	notes = '; '.join(r.get('notes') or [])
	out = [] if r['built'] else ['not built' + (f': {notes}' if notes else '')]
	if r.get('checkpatch') == '!!':
		out.append('checkpatch --strict found something')
	out += [f'guest: {g}' for g in r.get('guest', [])]
	out += [f'regression: {g["case"]}: PASS at {g["from"]}, {g["status"]} at {g["to"]}'
		for g in an['regressions'] if g['to'] == r['k']]
	return out


def matrix_junit(rows: List[dict], an: dict) -> str:
	"""JUnit XML of the per-patch matrix: one testcase per prefix, failed
	for what makes series-check fail there, its cells' counts as output."""
	root = ET.Element('testsuites', name='mm-kunit series-check')
	bad = {r['k']: matrix_problems(r, an) for r in rows}
	ts = ET.SubElement(root, 'testsuite', name='series-check', tests=str(len(rows)),
			   failures=str(sum(1 for p in bad.values() if p)))
	for r in rows:
		tc = ET.SubElement(ts, 'testcase', classname='series-check',
				   name=f'prefix {r["k"]}: {r["patch"]}', time='0')
		if bad[r['k']]:
			ET.SubElement(tc, 'failure', message=bad[r['k']][0],
				      type='series-check').text = '\n'.join(bad[r['k']])
		cells: Dict[str, int] = {}
		for c in an['cases']:
			st = r['results'].get(c, 'NOT RUN')
			cells[st] = cells.get(st, 0) + 1
		ET.SubElement(tc, 'system-out').text = ', '.join(
			f'{n} {st}' for st, n in sorted(cells.items())) if r['built'] else 'not built'
	ET.indent(root)
	return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'
