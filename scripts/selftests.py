#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""selftests: the kernel's own mm selftests on a variant's kernel under QEMU.

Subcommands (the Makefile calls them; see docs/selftests.rst):
  run VARIANT        build a kernel for VARIANT with the selftests config,
                     the test binaries (once, from pristine 7.3), boot them
                     in an initramfs, report per test and per TAP subtest
  compare A B        both kernels, the same binaries; what got worse A -> B

Results go to build/selftests/<variant>/ (console.log, results.txt,
results.json, junit.xml) and build/selftests/compare-<A>-<B>/.
"""

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mmkunit import arch, cli, judge, kernel, proc  # noqa: E402
from mmkunit import tree as mmtree  # noqa: E402
from mmkunit.common import BUILD, REPO, Error, default_jobs, info  # noqa: E402

CONF_DIR = os.path.join(REPO, 'tools/testing/selftests/mm-kunit')
KERNEL_CONFIG = os.path.join(CONF_DIR, 'kernel.config')
TEST_LIST = os.path.join(CONF_DIR, 'tests')
FLAKY_LIST = os.path.join(CONF_DIR, 'flaky')
RESULTS = os.path.join(BUILD, 'selftests')
BIN_DIR = os.path.join(BUILD, 'out', 'selftests-bin')

# The guest: TCG with 2 vCPUs (more than the host's cores slows
# busy-waiting tests a lot), 2 GiB split into two fake NUMA nodes.  A
# vCPU thread of TCG can wait for the host's CPU for seconds when builds
# share it: the soft-lockup and RCU-stall limits are doubled so that such
# a wait is not reported as a splat.
GUEST_MEM_MB = 2048
GUEST_SMP = 2
GUEST_CMDLINE = ('console=ttyS0 panic=-1 rdinit=/init numa=fake=2 loglevel=5 '
		 'watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=120')
EXT4_MB = 64
BOOT_MARGIN_S = 180
# a whole guest run; the tests normally need about a third of it
HARD_TIMEOUT_S = 2700

MARK = '@@mm-selftest'
BEGIN_RE = re.compile(MARK + r' begin (\d+) (.*)$')
END_RE = re.compile(MARK + r' end (\d+) rc=(\d+) secs=(\d+)')
DONE_RE = re.compile(MARK + r' done')
# a kernel console line: "[   12.345678] ..." (CONFIG_PRINTK_TIME)
KERNEL_LINE_RE = re.compile(r'\[\s*\d+\.\d+\] (.*)$')
TAP_RE = re.compile(r'^(not ok|ok) (\d+)\b\s*(?:- )?(.*?)\s*'
		    r'(?:#\s*(SKIP|XFAIL|TODO|XPASS)\b\s*(.*))?$', re.IGNORECASE)

# A test's status, worst last; a subtest has pass, fail, skip, xfail or
# "not run" (seen on one side of a comparison only).
PASS, FAIL, SKIP, TIMEOUT, CRASH, NOT_RUN = 'pass', 'fail', 'skip', 'timeout', 'crash', 'not run'
GOOD = (PASS, SKIP, 'xfail')
KSFT_SKIP = 4


# ------------------------------------------------------------ the test list

def read_test_list(path: str = TEST_LIST) -> List[dict]:
	"""The selection: [{'name', 'category', 'timeout', 'setup', 'argv'}]."""
	tests, seen = [], set()
	with open(path) as f:
		for n, line in enumerate(f, 1):
			line = line.split('#', 1)[0].strip()
			if not line:
				continue
			cols = line.split()
			if len(cols) < 4 or not cols[1].isdigit():
				raise Error(f'{path}:{n}: want "category timeout setup command..."')
			setup = {} if cols[2] == '-' else dict(
				kv.split('=', 1) for kv in cols[2].split(','))
			name = ' '.join(cols[3:])
			if name in seen:
				raise Error(f'{path}:{n}: {name!r} twice')
			seen.add(name)
			tests.append({'name': name, 'category': cols[0], 'timeout': int(cols[1]),
				      'setup': setup, 'argv': cols[3:]})
	return tests


def read_flaky(path: str = FLAKY_LIST) -> List[dict]:
	"""Known flakes: [{'test', 'subtest' (a glob, '' = the test), 'why'}].

	A line is "test name | subtest glob | evidence"."""
	out = []
	if not os.path.isfile(path):
		return out
	with open(path) as f:
		for line in f:
			if line.lstrip().startswith('#') or not line.strip():
				continue
			parts = [p.strip() for p in line.rstrip('\n').split('|')]
			while len(parts) < 3:
				parts.append('')
			out.append({'test': parts[0], 'subtest': parts[1], 'why': parts[2]})
	return out


def flaky_entry(flaky: List[dict], test: str, subtest: str = '') -> Optional[dict]:
	for e in flaky:
		if e['test'] != test:
			continue
		if not e['subtest'] or fnmatch.fnmatchcase(subtest, e['subtest']):
			return e
	return None


# ------------------------------------------------------------ parsing

def parse_tap_line(line: str) -> Optional[dict]:
	"""One KTAP/TAP result line -> {'num', 'name', 'status', 'reason'}."""
	m = TAP_RE.match(line.strip())
	if not m:
		return None
	ok, num, name, directive, reason = m.groups()
	directive = (directive or '').upper()
	if directive == 'SKIP':
		status = SKIP
	elif directive == 'XFAIL':
		status = 'xfail'
	elif ok == 'ok':
		status = PASS
	else:
		status = FAIL
	return {'num': int(num), 'name': name.strip(), 'status': status,
		'reason': (reason or '').strip()}


def user_lines(lines: List[str]) -> List[str]:
	"""The lines a test printed (kernel console lines left out)."""
	return [l for l in lines if not KERNEL_LINE_RE.match(l.lstrip())]


def parse_subtests(lines: List[str]) -> Tuple[List[dict], Optional[int]]:
	"""TAP results of one test's output, and its plan ("1..N") if any.

	A result line with no name (kselftest's "ok 5 # SKIP reason") is named
	after the last "[RUN]"/"RUN"/"Run test:" line before it, or its reason;
	a name that line extends (khugepaged's "(madvise:anon)") takes it.  Subtests
	are keyed by number: the same binary numbers its cases the same way."""
	subs, plan, last_run, last_msg = [], None, '', ''
	seen: Dict[str, int] = {}
	for line in user_lines(lines):
		s = line.strip()
		m = re.match(r'^1\.\.(\d+)', s)
		if m:
			plan = int(m.group(1))
			continue
		if s.startswith('#') and not re.match(r'^#\s*(FAIL|OK|RUN|\[RUN\])\b', s):
			# the first message since the last result: the cause
			last_msg = last_msg or s.lstrip('# ').strip()
		m = re.match(r'^#\s*(?:\[RUN\]|RUN|Run test:)\s+(.*)$', s)
		if m:
			last_run = m.group(1).strip()
			continue
		r = parse_tap_line(s)
		if not r:
			continue
		if not r['name']:
			r['name'] = last_run or r['reason'] or f'#{r["num"]}'
		elif last_run.startswith(r['name'] + ' (') and last_run.endswith(')'):
			# khugepaged: "# Run test: collapse_full (madvise:anon)"
			# then "ok 2 collapse_full"
			r['name'] = last_run
		key = f'{r["num"]}'
		if key in seen:
			seen[key] += 1
			key = f'{key}.{seen[key]}'
		else:
			seen[key] = 1
		r['key'] = key
		if r['status'] == FAIL and not r['reason']:
			# the message the test printed before it, e.g. the harness's
			# "rmap.c:335:shm:Expected shm_fd (-1) != -1 (-1)"
			r['reason'] = last_msg
		subs.append(r)
		last_run, last_msg = '', ''
	return subs, plan


def scan_kernel_splats(lines: List[str]) -> List[str]:
	"""Kernel console lines that show a splat (mmkunit's patterns)."""
	found = []
	for line in lines:
		m = KERNEL_LINE_RE.search(line)
		if not m:
			continue
		body = m.group(1)
		if judge.SPLAT_RE.search(body) and not judge.SPLAT_IGNORE_RE.search(body):
			found.append(line.strip())
	return found


def skip_reason(lines: List[str]) -> str:
	"""Why a test skipped: the text after its last SKIP, else its last '#' line."""
	ul = [l.strip() for l in user_lines(lines)]
	for l in reversed(ul):
		m = re.search(r'#\s*SKIP\b:?\s*(.*)$', l, re.IGNORECASE)
		if m and m.group(1).strip():
			return m.group(1).strip()
	for l in reversed(ul):
		if l.startswith('#') and not l.startswith('# Totals') and len(l) > 2:
			return l.lstrip('# ').strip()
	return ''


def parse_console(text: str, tests: List[dict], host_timed_out: bool = False) -> dict:
	"""Split a guest console into per-test results.

	@tests: the list that was run, in order.  A test that began and never
	ended is a timeout when the host killed the guest, else a crash; the
	ones after it did not run."""
	lines = text.splitlines()
	by_idx: Dict[int, dict] = {}
	outside: List[str] = []
	cur = None
	done = False
	for line in lines:
		m = BEGIN_RE.search(line)
		if m:
			cur = {'idx': int(m.group(1)), 'lines': [], 'end': None}
			by_idx[cur['idx']] = cur
			continue
		m = END_RE.search(line)
		if m and cur is not None and int(m.group(1)) == cur['idx']:
			cur['end'] = (int(m.group(2)), int(m.group(3)))
			cur = None
			continue
		if DONE_RE.search(line):
			done = True
			continue
		(cur['lines'] if cur is not None else outside).append(line)
	results = []
	for i, t in enumerate(tests):
		seg = by_idx.get(i)
		r = {'name': t['name'], 'category': t['category'], 'timeout': t['timeout'],
		     'status': NOT_RUN, 'rc': None, 'secs': None, 'subtests': [], 'plan': None,
		     'splats': [], 'reason': '', 'output': []}
		if seg is not None:
			subs, plan = parse_subtests(seg['lines'])
			r.update(subtests=subs, plan=plan, splats=scan_kernel_splats(seg['lines']),
				 output=seg['lines'])
			if seg['end'] is None:
				r['status'] = TIMEOUT if host_timed_out else CRASH
				r['reason'] = ('the guest was killed at its hard timeout while this ran'
					       if host_timed_out else 'the guest stopped while this ran')
			else:
				rc, secs = seg['end']
				r['rc'], r['secs'] = rc, secs
				if rc == 0:
					r['status'] = PASS
				elif rc == KSFT_SKIP:
					r['status'] = SKIP
					r['reason'] = skip_reason(seg['lines'])
				elif rc == 137 and secs >= t['timeout'] - 1:
					r['status'] = TIMEOUT
					r['reason'] = f'killed after {t["timeout"]}s'
				else:
					r['status'] = FAIL
					r['reason'] = f'exit {rc}'
				if r['status'] in (PASS, SKIP) and any(s['status'] == FAIL for s in subs):
					r['status'] = FAIL
					r['reason'] = f'exit {rc} but a subtest failed'
				elif r['status'] == PASS and subs and all(s['status'] == SKIP for s in subs):
					# the harness exits 0 when every case skipped
					r['status'] = SKIP
					r['reason'] = 'every subtest skipped: ' + subs[0]['reason']
		results.append(r)
	return {'tests': results, 'splats_outside': scan_kernel_splats(outside),
		'completed': done, 'boot_log_tail': outside[-40:] if not by_idx else []}


def counts(res: dict) -> dict:
	"""Tests and subtests by status."""
	c = {'tests': {}, 'subtests': {}, 'splats': len(res['splats_outside'])}
	for t in res['tests']:
		c['tests'][t['status']] = c['tests'].get(t['status'], 0) + 1
		c['splats'] += len(t['splats'])
		for s in t['subtests']:
			c['subtests'][s['status']] = c['subtests'].get(s['status'], 0) + 1
	c['n_tests'] = sum(c['tests'].values())
	c['n_subtests'] = sum(c['subtests'].values())
	return c


def fmt_counts(d: dict) -> str:
	order = [PASS, FAIL, SKIP, 'xfail', TIMEOUT, CRASH, NOT_RUN]
	return ', '.join(f'{d[k]} {k}' for k in order if d.get(k))


# ------------------------------------------------------------ reports

def sub_summary(t: dict) -> str:
	n = {}
	for s in t['subtests']:
		n[s['status']] = n.get(s['status'], 0) + 1
	return '/'.join(str(n.get(k, 0)) for k in (PASS, FAIL, SKIP)) if t['subtests'] else '-'


def format_results(res: dict) -> str:
	"""The text report of one kernel's run."""
	out = [f'mm selftests on {res["variant"]}: {res["kernel"]}',
	       f'{"test":<44} {"status":<8} {"secs":>5}  subtests p/f/s  reason']
	for t in res['tests']:
		secs = '' if t['secs'] is None else str(t['secs'])
		out.append(f'{t["name"]:<44} {t["status"]:<8} {secs:>5}  {sub_summary(t):<14} '
			   f'{t["reason"][:90]}')
		# consecutive subtests with the same status and text on one line
		runs: List[list] = []
		for s in t['subtests']:
			if s['status'] in (PASS, 'xfail'):
				continue
			why = f' ({s["reason"]})' if s['reason'] and s['reason'] != s['name'] else ''
			text = f'{s["name"][:100]}{why[:120]}'
			if runs and runs[-1][0] == s['status'] and runs[-1][3] == text:
				runs[-1][2] = s['key']
				runs[-1][4] += 1
			else:
				runs.append([s['status'], s['key'], s['key'], text, 1])
		for status, first, last, text, n in runs:
			keys = first if n == 1 else f'{first}-{last}'
			out.append(f'    {status:<5} {keys:>5} {text}' + (f' (x{n})' if n > 1 else ''))
		for sp in t['splats']:
			out.append(f'    SPLAT {sp}')
	for sp in res['splats_outside']:
		out.append(f'SPLAT outside any test: {sp}')
	c = counts(res)
	out.append('')
	out.append(f'tests: {c["n_tests"]} ({fmt_counts(c["tests"])}); subtests: {c["n_subtests"]} '
		   f'({fmt_counts(c["subtests"])}); splats: {c["splats"]}; guest {res["guest_s"]}s'
		   + f', {res.get("smp", GUEST_SMP)} vCPUs'
		   + ('' if res['completed'] else '; THE GUEST DID NOT FINISH'))
	if res.get('config_missing'):
		out.append('config lines that did not take: ' + ' '.join(res['config_missing']))
	return '\n'.join(out)


def junit_xml(res: dict) -> str:
	"""JUnit XML: a testsuite per test binary, a testcase per subtest (or
	one for the binary when it printed none)."""
	root = ET.Element('testsuites', name=f'mm-selftests-{res["variant"]}')
	for t in res['tests']:
		cases = t['subtests'] or [{'key': '0', 'name': t['name'], 'status': t['status'],
					   'reason': t['reason']}]
		ts = ET.SubElement(root, 'testsuite', name=t['name'], tests=str(len(cases)),
				   time=str(t['secs'] or 0))
		nf = ns = 0
		for s in cases:
			tc = ET.SubElement(ts, 'testcase', classname=t['name'],
					   name=f'{s["key"]} {s["name"]}')
			if s['status'] in (SKIP, NOT_RUN):
				ns += 1
				ET.SubElement(tc, 'skipped', message=s['reason'] or s['status'])
			elif s['status'] not in GOOD:
				nf += 1
				ET.SubElement(tc, 'failure', message=s['reason'] or s['status'])
		if t['subtests'] and t['status'] not in GOOD:
			# the binary failed beyond its subtests (exit code, timeout)
			tc = ET.SubElement(ts, 'testcase', classname=t['name'], name='(exit)')
			ET.SubElement(tc, 'failure', message=f'{t["status"]}: {t["reason"]}')
			nf += 1
			ts.set('tests', str(len(cases) + 1))
		for sp in t['splats']:
			tc = ET.SubElement(ts, 'testcase', classname=t['name'], name='(kernel splat)')
			ET.SubElement(tc, 'failure', message=sp)
			nf += 1
		ts.set('failures', str(nf))
		ts.set('skipped', str(ns))
		ET.SubElement(ts, 'system-out').text = '\n'.join(t['output'][-200:])
	ET.indent(root)
	return ET.tostring(root, encoding='unicode') + '\n'


def write_reports(res: dict, out: str) -> None:
	os.makedirs(out, exist_ok=True)
	with open(os.path.join(out, 'results.txt'), 'w') as f:
		f.write(format_results(res) + '\n')
	slim = dict(res, tests=[{k: v for k, v in t.items() if k != 'output'} for t in res['tests']])
	with open(os.path.join(out, 'results.json'), 'w') as f:
		json.dump(slim, f, indent=1)
	with open(os.path.join(out, 'junit.xml'), 'w') as f:
		f.write(junit_xml(res))


# ------------------------------------------------------------ comparing

def compare(a: dict, b: dict, flaky: List[dict]) -> List[dict]:
	"""What got worse from @a to @b, test by test and subtest by subtest.

	A difference is worse when A was good (pass, skip, xfail) and B is not
	(fail, timeout, crash, not run), or when B has splats A has not; a
	pass that became a skip is reported as lost coverage.  Each gets a
	'flaky' entry when tools/testing/selftests/mm-kunit/flaky names it."""
	diffs = []
	bt = {t['name']: t for t in b['tests']}
	for ta in a['tests']:
		tb = bt.get(ta['name'])
		sb = tb['status'] if tb else NOT_RUN
		if ta['status'] in GOOD and sb not in GOOD:
			diffs.append({'test': ta['name'], 'subtest': '', 'a': ta['status'], 'b': sb,
				      'kind': 'worse', 'reason': tb['reason'] if tb else ''})
		elif ta['status'] == PASS and sb == SKIP:
			diffs.append({'test': ta['name'], 'subtest': '', 'a': PASS, 'b': SKIP,
				      'kind': 'coverage', 'reason': tb['reason']})
		elif ta['status'] not in GOOD and sb in GOOD:
			diffs.append({'test': ta['name'], 'subtest': '', 'a': ta['status'], 'b': sb,
				      'kind': 'better', 'reason': ''})
		subs_b = {s['key']: s for s in tb['subtests']} if tb else {}
		for s in ta['subtests']:
			o = subs_b.get(s['key'])
			st = o['status'] if o else NOT_RUN
			name = s['name'] if s['status'] != SKIP or not o else o['name']
			if s['status'] in GOOD and st not in GOOD:
				kind = 'worse'
			elif s['status'] == PASS and st == SKIP:
				kind = 'coverage'
			elif s['status'] not in GOOD and st in GOOD:
				kind = 'better'
			else:
				continue
			diffs.append({'test': ta['name'], 'subtest': f'{s["key"]} {name}', 'a': s['status'],
				      'b': st, 'kind': kind, 'reason': o['reason'] if o else ''})
		if tb and tb['splats'] and not ta['splats']:
			diffs.append({'test': ta['name'], 'subtest': '(kernel splat)', 'a': 'none',
				      'b': f'{len(tb["splats"])} line(s)', 'kind': 'worse',
				      'reason': tb['splats'][0]})
	for d in diffs:
		sub = d['subtest'].split(' ', 1)[1] if ' ' in d['subtest'] else d['subtest']
		d['flaky'] = flaky_entry(flaky, d['test'], sub) if d['kind'] == 'worse' else None
	# A known flaky subtest that fails can end its test (kselftest's "Bail
	# out!"): the test's own fail and the subtests after it that did not run
	# are re-run with the flake, and count unless the re-run has them good.
	for d in diffs:
		if not (d['flaky'] and d['subtest'] and d['b'] == FAIL):
			continue
		for e in diffs:
			if (e['test'] == d['test'] and e['kind'] == 'worse' and not e['flaky'] and
			    (not e['subtest'] or e['b'] == NOT_RUN)):
				e['flaky'] = dict(d['flaky'], why=f'follows the known flake {d["subtest"]} '
						  f'in the same run; {d["flaky"]["why"]}')
	return diffs


def format_compare(a: dict, b: dict, diffs: List[dict], elapsed: float) -> str:
	bt = {t['name']: t for t in b['tests']}
	out = [f'mm selftests: A={a["variant"]} vs B={b["variant"]} (same binaries)',
	       f'{"test":<44} {"A":<8} {"A p/f/s":<10} {"B":<8} {"B p/f/s":<10} verdict']
	for ta in a['tests']:
		tb = bt.get(ta['name'])
		mine = [d for d in diffs if d['test'] == ta['name']]
		if any(d['kind'] == 'worse' and not d.get('resolved') for d in mine):
			verdict = 'WORSE'
		elif any(d['kind'] == 'worse' for d in mine):
			verdict = 'flake'
		elif mine:
			verdict = 'changed'
		else:
			verdict = 'same'
		out.append(f'{ta["name"]:<44} {ta["status"]:<8} {sub_summary(ta):<10} '
			   f'{tb["status"] if tb else NOT_RUN:<8} {sub_summary(tb) if tb else "-":<10} {verdict}')
	out.append('')
	for side, r in (('A', a), ('B', b)):
		c = counts(r)
		out.append(f'{side} {r["variant"]}: tests {c["n_tests"]} ({fmt_counts(c["tests"])}); '
			   f'subtests {c["n_subtests"]} ({fmt_counts(c["subtests"])}); '
			   f'splats {c["splats"]}; guest {r["guest_s"]}s, {r.get("smp", GUEST_SMP)} vCPUs')
	out.append('')
	if not diffs:
		out.append('no differences')
	for d in diffs:
		what = d['test'] + (f' :: {d["subtest"]}' if d['subtest'] else '')
		line = f'{d["kind"].upper():<8} {what}: {d["a"]} -> {d["b"]}'
		if d['reason']:
			line += f' ({d["reason"][:100]})'
		out.append(line)
		if d.get('flaky'):
			out.append(f'         known flake: {d["flaky"]["why"]}')
		if 'reruns' in d:
			out.append(f'         re-run on B: {", ".join(d["reruns"]) or "not re-run"} -> '
				   + ('a flake, not counted' if d.get('resolved') else 'REGRESSION'))
	regs = [d for d in diffs if d['kind'] == 'worse' and not d.get('resolved')]
	for side, r in (('A', a), ('B', b)):
		for t in r['tests']:
			for sp in t['splats']:
				out.append(f'SPLAT on {side} during {t["name"]}: {sp}')
		for sp in r['splats_outside']:
			out.append(f'SPLAT on {side} outside any test: {sp}')
	out.append('')
	out.append(f'{len(regs)} regression(s), {counts(a)["splats"]} + {counts(b)["splats"]} splat '
		   f'line(s); {elapsed / 60:.1f} min')
	return '\n'.join(out)


def compare_junit(diffs: List[dict], a: str, b: str) -> str:
	root = ET.Element('testsuites', name=f'mm-selftests-compare-{a}-{b}')
	ts = ET.SubElement(root, 'testsuite', name=f'{a} -> {b}', tests=str(len(diffs)))
	nf = 0
	for d in diffs:
		tc = ET.SubElement(ts, 'testcase', classname=d['test'], name=d['subtest'] or '(test)')
		if d['kind'] == 'worse' and not d.get('resolved'):
			nf += 1
			ET.SubElement(tc, 'failure', message=f'{d["a"]} -> {d["b"]} {d["reason"]}')
	ts.set('failures', str(nf))
	ET.indent(root)
	return ET.tostring(root, encoding='unicode') + '\n'


# ------------------------------------------------------------ building

def make_env() -> dict:
	return dict(os.environ, **kernel.ccache_env())


def run_logged(cmd: List[str], log: str, cwd: Optional[str] = None, timeout: int = 0) -> None:
	"""Run a build step niced, output to @log; raise with its tail on failure."""
	timeout = timeout or kernel.build_timeout()
	with open(log, 'a') as f:
		r = proc.run(cmd, cwd=cwd, env=kernel.ccache_env(), log=f, echo=False,
			     timeout=timeout, nice=10, label=f'selftests: {" ".join(cmd[-1:])}')
	if not r.ok:
		with open(log, errors='replace') as f:
			tail = f.read().splitlines()[-25:]
		how = f'timed out after {timeout} s' if r.timed_out else f'failed ({r.rc})'
		raise Error(f'{" ".join(cmd[:4])} {how}; log {log}:\n' + '\n'.join(tail))


def config_lines(path: str = KERNEL_CONFIG) -> List[str]:
	with open(path) as f:
		return [l.strip() for l in f if l.startswith('CONFIG_')]


def kernel_dir(variant: str) -> str:
	return os.path.join(BUILD, 'out', 'selftests-' + variant.replace(':', '-'))


def source_key(variant: str) -> str:
	"""What a variant's selftests kernel is built from: base, patches,
	overlay (mmkunit's tree key) and the selftests config."""
	key = mmtree.variant_key(mmtree.base_commit(), mmtree.variant_patches(variant))
	with open(KERNEL_CONFIG, 'rb') as f:
		return key + ':' + hashlib.sha256(f.read()).hexdigest()


def built_stamp(out: str) -> str:
	"""The source key the bzImage in @out was built from, with its mtime
	(a bzImage rebuilt by hand no longer matches)."""
	img = os.path.join(out, 'arch/x86/boot/bzImage')
	return f'{os.stat(img).st_mtime_ns}' if os.path.isfile(img) else ''


def build_kernel(variant: str, jobs: int, build: bool = True) -> Tuple[str, List[str], float]:
	"""Assemble @variant and build its selftests kernel; return (bzImage,
	config lines that did not take, seconds).

	Nothing is done when the bzImage was built from the same sources (the
	shared build/tree then stays on whatever variant it holds).  With
	@build False the bzImage is booted as it is (a kernel built by hand
	in build/tree, e.g. with a change injected on purpose)."""
	t0 = time.monotonic()
	out = kernel_dir(variant)
	img = os.path.join(out, 'arch/x86/boot/bzImage')
	stampf = os.path.join(out, 'selftests-built-from')
	cfg = os.path.join(out, '.config')
	key = source_key(variant)
	fresh = os.path.isfile(stampf) and open(stampf).read() == key + ':' + built_stamp(out)
	if not build or fresh:
		if not os.path.isfile(img):
			raise Error(f'{img} does not exist: build it first (make selftests VARIANT={variant})')
		info(f'selftests-{variant}: ' + ('up to date' if fresh else
		     'booting the kernel as it is (--no-build, NOT checked against the sources)'))
	else:
		tree = mmtree.assemble(variant)
		os.makedirs(out, exist_ok=True)
		log = os.path.join(out, 'build.log')
		open(log, 'w').close()
		make = ['make', '-C', tree, f'O={out}', 'ARCH=x86_64', 'CC=ccache gcc',
			f'-j{jobs or default_jobs()}']
		info(f'selftests-{variant}: tinyconfig + {os.path.relpath(KERNEL_CONFIG, REPO)}')
		run_logged(make + ['tinyconfig'], log)
		with open(cfg, 'a') as f, open(KERNEL_CONFIG) as frag:
			f.write(frag.read())
		run_logged(make + ['olddefconfig'], log)
		info(f'selftests-{variant}: building the kernel in {os.path.relpath(out, REPO)} '
		     f'(log {os.path.relpath(log, REPO)})')
		run_logged(make + ['bzImage'], log)
		with open(stampf, 'w') as f:
			f.write(key + ':' + built_stamp(out))
	with open(cfg) as f:
		have = {l.strip() for l in f}
	missing = [l for l in config_lines() if l not in have]
	if missing:
		info(f'selftests-{variant}: config lines that did not take: {" ".join(missing)}')
	return img, missing, time.monotonic() - t0


def build_binaries(jobs: int) -> str:
	"""The mm selftests, static, from the pristine 7.3 tree; built once
	(kept while the base source and the list stay the same)."""
	base = mmtree.base_commit()
	stampf = os.path.join(BIN_DIR, 'base-commit')
	mm = os.path.join(BIN_DIR, 'mm')
	if os.path.isfile(stampf) and open(stampf).read() == base and os.path.isdir(mm):
		return mm
	tree = mmtree.assemble('pristine')
	shutil.rmtree(BIN_DIR, ignore_errors=True)
	os.makedirs(mm)
	log = os.path.join(BIN_DIR, 'build.log')
	hdr = os.path.join(BIN_DIR, 'hdr')
	info('selftests: building the mm selftests (static, from pristine 7.3) into '
	     f'{os.path.relpath(mm, REPO)}')
	run_logged(['make', '-C', tree, f'O={hdr}', 'ARCH=x86_64', 'headers'], log)
	# -k: a binary that does not build (32-bit pkeys without multilib) is
	# reported as missing, not fatal
	try:
		run_logged(['make', '-k', '-C', os.path.join(tree, 'tools/testing/selftests/mm'),
			    f'-j{jobs or 2}', f'OUTPUT={mm}', 'LDFLAGS=-static',
			    f'KHDR_INCLUDES=-isystem {hdr}/usr/include'], log)
	except Error as e:
		info(f'selftests: some binaries did not build ({str(e).splitlines()[0]})')
	missing = [t['argv'][0] for t in read_test_list()
		   if not os.path.isfile(os.path.join(mm, t['argv'][0]))]
	if missing:
		raise Error('selftests did not build: ' + ' '.join(sorted(set(missing))) +
			    f'; log {log}')
	with open(stampf, 'w') as f:
		f.write(base)
	return mm


# ------------------------------------------------------------ the guest

# Knobs put back to their boot values between tests.
KNOBS = ['/sys/kernel/mm/transparent_hugepage/enabled',
	 '/sys/kernel/mm/transparent_hugepage/defrag',
	 '/sys/kernel/mm/transparent_hugepage/shmem_enabled',
	 '/sys/kernel/mm/transparent_hugepage/use_zero_page',
	 '/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled',
	 '/sys/kernel/mm/transparent_hugepage/hugepages-*kB/shmem_enabled',
	 '/sys/kernel/mm/transparent_hugepage/khugepaged/*',
	 '/sys/kernel/mm/ksm/run', '/sys/kernel/mm/ksm/merge_across_nodes',
	 '/sys/kernel/mm/ksm/pages_to_scan', '/sys/kernel/mm/ksm/sleep_millisecs',
	 '/sys/kernel/mm/ksm/use_zero_pages', '/sys/kernel/mm/ksm/max_page_sharing']


def init_script(tests: List[dict]) -> str:
	"""/init of the guest: mounts, zram swap, ext4, then each test between
	markers with the reset before it, then reboot (QEMU exits)."""
	knobs = ' '.join(KNOBS)
	s = f'''#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin HOME=/tmp
mkdir -p /proc /sys /dev /tmp /mnt/ext4
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/hugepages /dev/shm
mount -t tmpfs shm /dev/shm
mount -t debugfs none /sys/kernel/debug
mount -t tmpfs tmp /tmp
mount -t hugetlbfs none /dev/hugepages
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup
echo 1024M > /sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0
mount -t ext4 -o loop /ext4.img /mnt/ext4 || echo "{MARK} note: no ext4 on /mnt/ext4"
for f in {knobs}; do
	case "$f" in */full_scans|*/pages_collapsed) continue;; esac
	[ -f "$f" ] || continue
	v=$(cat "$f" 2>/dev/null) || continue
	case "$v" in *\\[*) v=${{v#*[}}; v=${{v%%]*}};; esac
	echo "$f $v" >> /tmp/knobs
done
reset() {{
	kill -9 -1 2>/dev/null; wait
	echo 2 > /sys/kernel/mm/ksm/run 2>/dev/null
	while read f v; do echo "$v" 2>/dev/null > "$f"; done < /tmp/knobs
	echo 0 > /proc/sys/vm/nr_hugepages
	sync; echo 3 > /proc/sys/vm/drop_caches
	echo 1 > /proc/sys/vm/compact_memory
}}
echo "{MARK} env nproc=$(nproc) nodes=$(ls -d /sys/devices/system/node/node* | wc -l) $(grep -E 'MemTotal|SwapTotal' /proc/meminfo | tr -s ' ' | tr '\\n' ' ')"
cd /mm
'''
	for i, t in enumerate(tests):
		pre = ''
		if 'hugepages' in t['setup']:
			pre = f'echo {int(t["setup"]["hugepages"])} > /proc/sys/vm/nr_hugepages; '
		cmd = ' '.join(shlex.quote(a) for a in t['argv'])
		cwd = shlex.quote(t['setup'].get('cwd', '/mm'))
		s += (f'reset; {pre}cd {cwd}; echo "{MARK} begin {i} {t["name"]}"; t0=$(date +%s)\n'
		      f'timeout -s KILL {t["timeout"]} /mm/{cmd} </dev/null 2>&1; rc=$?\n'
		      f'echo "{MARK} end {i} rc=$rc secs=$(( $(date +%s) - t0 ))"; cd /mm\n')
	s += f'reset\necho "{MARK} done"\nsync\nreboot -f\n'
	return s


def make_initramfs(bins: str, tests: List[dict], work: str) -> str:
	root = os.path.join(work, 'initramfs')
	shutil.rmtree(root, ignore_errors=True)
	for d in ('bin', 'mm', 'proc', 'sys', 'dev', 'tmp'):
		os.makedirs(os.path.join(root, d))
	shutil.copy(kernel.BUSYBOX, os.path.join(root, 'bin', 'busybox'))
	for exe in sorted({t['argv'][0] for t in tests}):
		shutil.copy(os.path.join(bins, exe), os.path.join(root, 'mm', exe))
	# a fresh ext4 for every boot, mounted on /mnt/ext4 through a loop device
	img = os.path.join(root, 'ext4.img')
	subprocess.run(['truncate', '-s', f'{EXT4_MB}M', img], check=True)
	subprocess.run([shutil.which('mkfs.ext4') or '/sbin/mkfs.ext4', '-q', '-F', img],
		       check=True, stdout=subprocess.DEVNULL)
	return kernel.pack_initramfs(root, init_script(tests),
				      os.path.join(work, 'initramfs.cpio'))


def boot(kernel_img: str, cpio: str, work: str, hard_timeout: int,
	 smp: int = GUEST_SMP) -> Tuple[str, bool, float]:
	"""Boot the guest with @smp vCPUs; return (console text, killed at the
	hard timeout, secs)."""
	cmd = kernel.qemu_cmd(kernel_img, cpio, GUEST_CMDLINE, mem_mb=GUEST_MEM_MB, smp=smp)
	console = os.path.join(work, 'console.log')
	r = kernel.boot_initramfs(cmd, console, hard_timeout, nice=10)
	with open(console, errors='replace') as f:
		return f.read(), r.timed_out, r.seconds


def run_key(kernel: str, smp: int = GUEST_SMP) -> str:
	"""What a run's results depend on besides the list: the kernel file, the
	binaries, the guest's /init around the tests and its vCPU count."""
	h = hashlib.sha256(kernel.encode())
	if smp != GUEST_SMP:
		h.update(f'smp={smp}'.encode())
	h.update(init_script([]).encode())
	h.update(built_stamp(os.path.dirname(os.path.dirname(os.path.dirname(
		os.path.dirname(kernel))))).encode())
	stamp = os.path.join(BIN_DIR, 'base-commit')
	if os.path.isfile(stamp):
		with open(stamp) as f:
			h.update(f.read().encode())
	return h.hexdigest()


def reusable(variant: str, kernel: str, tests: List[dict],
	     smp: int = GUEST_SMP) -> Optional[dict]:
	"""The results of the last make selftests of @variant, when it ran on
	the same kernel file and binaries and ran each of @tests the same way
	(name, command, timeout, setup) to its end marker; only @tests are
	kept.  (Each test starts from the same reset state, so the results of
	a run stopped later, or of a run of more tests, still hold.)"""
	path = os.path.join(RESULTS, variant.replace(':', '-'), 'results.json')
	if not os.path.isfile(path):
		return None
	with open(path) as f:
		old = json.load(f)
	if old.get('run_key') != run_key(kernel, smp):
		return None
	ran = {t['name']: t for t in old.get('list', [])}
	if any(ran.get(t['name']) != t for t in tests):
		return None
	with open(os.path.join(os.path.dirname(path), 'console.log'), errors='replace') as f:
		full = {t['name']: t for t in parse_console(f.read(), old['list'])['tests']}
	if any(full[t['name']]['rc'] is None for t in tests):
		return None
	old['tests'] = [full[t['name']] for t in tests]
	old['list'] = tests
	old['completed'] = True
	old['run_dir'] = os.path.relpath(os.path.dirname(path), REPO)
	return old


def run_tests(variant: str, kernel: str, bins: str, tests: List[dict], out: str,
	      timeout: int = 0, smp: int = GUEST_SMP) -> dict:
	"""Boot @kernel with @tests on @smp vCPUs; parse, write the reports in @out."""
	os.makedirs(out, exist_ok=True)
	cpio = make_initramfs(bins, tests, out)
	hard = timeout or min(sum(t['timeout'] for t in tests) + BOOT_MARGIN_S, HARD_TIMEOUT_S)
	info(f'selftests-{variant}: booting {len(tests)} test(s) under QEMU, {smp} vCPUs '
	     f'(hard timeout {hard}s; console {os.path.relpath(out, REPO)}/console.log)')
	text, killed, secs = boot(kernel, cpio, out, hard, smp)
	res = parse_console(text, tests, host_timed_out=killed)
	res.update(variant=variant, kernel=os.path.relpath(kernel, REPO), guest_s=round(secs),
		   host_timed_out=killed, run_key=run_key(kernel, smp), list=tests, smp=smp)
	if not any(t['status'] != NOT_RUN for t in res['tests']):
		tail = '\n'.join(text.splitlines()[-30:])
		info(f'selftests-{variant}: no test ran; the console ends with:\n{tail}')
	return res


# ------------------------------------------------------------ commands

def select(tests: List[dict], only: str, test_timeout: int = 0) -> List[dict]:
	"""The tests whose name or category matches one of @only's globs;
	@test_timeout replaces each one's own limit."""
	if only:
		pats = [p.strip() for p in only.split(',') if p.strip()]
		tests = [t for t in tests if any(fnmatch.fnmatchcase(t['name'], p) or
						 fnmatch.fnmatchcase(t['category'], p) for p in pats)]
	if test_timeout:
		tests = [dict(t, timeout=test_timeout) for t in tests]
	return tests


def cmd_run(args) -> int:
	arch.require_default('make selftests')
	t0 = time.monotonic()
	tests = select(read_test_list(), args.only, args.test_timeout)
	if not tests:
		raise Error(f'no test matches {args.only!r}')
	bins = build_binaries(args.jobs)
	kernel, missing, tb = build_kernel(args.variant, args.jobs, build=not args.no_build)
	out = os.path.abspath(args.out) if args.out else os.path.join(
		RESULTS, args.variant.replace(':', '-') + smp_suffix(args.smp))
	res = run_tests(args.variant, kernel, bins, tests, out, args.timeout, args.smp)
	res.update(config_missing=missing, build_s=round(tb))
	write_reports(res, out)
	print(format_results(res))
	info(f'selftests-{args.variant}: build {tb:.0f}s, guest {res["guest_s"]}s, total '
	     f'{(time.monotonic() - t0) / 60:.1f} min; reports in {os.path.relpath(out, REPO)}/ '
	     '(results.txt, results.json, junit.xml, console.log)')
	c = counts(res)
	bad = sum(c['tests'].get(k, 0) for k in (FAIL, TIMEOUT, CRASH, NOT_RUN)) + c['splats']
	return 1 if bad else 0


def cmd_compare(args) -> int:
	arch.require_default('make selftests-compare')
	t0 = time.monotonic()
	if args.a == args.b:
		raise Error('A and B are the same kernel')
	tests = select(read_test_list(), args.only, args.test_timeout)
	bins = build_binaries(args.jobs)
	kernels = {}
	for v in (args.a, args.b):
		kernels[v] = build_kernel(v, args.jobs, build=not args.no_build)
	outdir = os.path.join(RESULTS, f'compare-{args.a}-{args.b}'.replace(':', '-') +
			      smp_suffix(args.smp))
	res = {}
	for v in (args.a, args.b):
		kernel, missing, tb = kernels[v]
		out = os.path.join(outdir, v.replace(':', '-'))
		old = reusable(v, kernel, tests, args.smp) if args.reuse else None
		if old:
			info(f'selftests-{v}: reusing the results of {old["run_dir"]} (same kernel '
			     'file, binaries and test list)')
			res[v] = old
		else:
			res[v] = run_tests(v, kernel, bins, tests, out, args.timeout, args.smp)
			res[v].update(config_missing=missing, build_s=round(tb))
		write_reports(res[v], out)
	flaky = read_flaky()
	diffs = compare(res[args.a], res[args.b], flaky)
	# Known flakes are run again on B before they count.
	rerun = sorted({d['test'] for d in diffs if d.get('flaky')})
	by_name = {t['name']: t for t in tests}
	for rnd in range(args.reruns if rerun else 0):
		pending = [n for n in rerun if any(d['test'] == n and not d.get('resolved')
						   for d in diffs if d.get('flaky'))]
		if not pending:
			break
		info(f'selftests: re-running known flakes on {args.b}: {", ".join(pending)}')
		again = run_tests(args.b, kernels[args.b][0], bins, [by_name[n] for n in pending],
				  os.path.join(outdir, f'rerun{rnd + 1}'), args.timeout, args.smp)
		for t in again['tests']:
			for d in diffs:
				if d['test'] != t['name'] or not d.get('flaky') or d.get('resolved'):
					continue
				if d['subtest'] and d['subtest'] != '(kernel splat)':
					key = d['subtest'].split(' ', 1)[0]
					st = next((s['status'] for s in t['subtests'] if s['key'] == key),
						  NOT_RUN)
				else:
					st = t['status']
				d.setdefault('reruns', []).append(st)
				d['resolved'] = st in GOOD
	elapsed = time.monotonic() - t0
	text = format_compare(res[args.a], res[args.b], diffs, elapsed)
	with open(os.path.join(outdir, 'compare.txt'), 'w') as f:
		f.write(text + '\n')
	with open(os.path.join(outdir, 'compare.json'), 'w') as f:
		json.dump({'a': args.a, 'b': args.b, 'elapsed_s': round(elapsed), 'diffs': diffs,
			   'counts': {v: counts(res[v]) for v in res}}, f, indent=1)
	with open(os.path.join(outdir, 'junit.xml'), 'w') as f:
		f.write(compare_junit(diffs, args.a, args.b))
	print(text)
	info(f'selftests-compare: reports in {os.path.relpath(outdir, REPO)}/ (compare.txt, '
	     f'compare.json, junit.xml; each kernel\'s results in {args.a}/ and {args.b}/)')
	regs = [d for d in diffs if d['kind'] == 'worse' and not d.get('resolved')]
	splats = counts(res[args.a])['splats'] + counts(res[args.b])['splats']
	return 1 if regs or splats else 0


def load_results(d: str, only: str = '') -> dict:
	"""A results directory of make selftests, re-read from its console.log
	with the list it ran (so the parsing is the current one)."""
	with open(os.path.join(d, 'results.json')) as f:
		old = json.load(f)
	tests = old.get('list') or read_test_list()
	with open(os.path.join(d, 'console.log'), errors='replace') as f:
		res = parse_console(f.read(), tests, host_timed_out=old.get('host_timed_out', False))
	if only:
		keep = {t['name'] for t in select(tests, only)}
		res['tests'] = [t for t in res['tests'] if t['name'] in keep]
	res.update(variant=old['variant'] + f' ({os.path.relpath(d, REPO)})', kernel=old['kernel'],
		   guest_s=old['guest_s'], smp=old.get('smp', GUEST_SMP))
	return res


def cmd_compare_results(args) -> int:
	"""Two results directories compared as make selftests-compare does,
	without booting anything (no re-runs of flakes)."""
	a, b = load_results(args.dir_a, args.only), load_results(args.dir_b, args.only)
	diffs = compare(a, b, read_flaky())
	print(format_compare(a, b, diffs, 0))
	regs = [d for d in diffs if d['kind'] == 'worse']
	return 1 if regs or counts(a)['splats'] + counts(b)['splats'] else 0


def smp_suffix(smp: int) -> str:
	"""What a results directory of a run with another vCPU count than the
	default ends with, so that it does not replace the default one."""
	return '' if smp == GUEST_SMP else f'-smp{smp}'


def smp_count(v: str) -> int:
	"""--smp's value: a vCPU count from 1 to 8."""
	try:
		n = int(v)
	except ValueError:
		raise argparse.ArgumentTypeError(f'not a number: {v!r}')
	if not 1 <= n <= 8:
		raise argparse.ArgumentTypeError(f'{n} vCPUs: want 1 to 8')
	return n


def main(argv: List[str]) -> int:
	ap = argparse.ArgumentParser(prog='selftests', description=__doc__,
				     formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = ap.add_subparsers(dest='cmd', required=True)
	r = sub.add_parser('run', help='the mm selftests on one kernel')
	r.add_argument('variant', nargs='?', default='series')
	r.set_defaults(fn=cmd_run)
	c = sub.add_parser('compare', help='the same selftests on kernels A and B')
	c.add_argument('a')
	c.add_argument('b')
	c.add_argument('--reruns', type=int, default=3,
		       help='re-runs on B of a known flake before it counts (default 3)')
	c.add_argument('--reuse', action='store_true',
		       help='take a side\'s results from its last make selftests when that ran '
		       'the same list on the same kernel file')
	c.set_defaults(fn=cmd_compare)
	cr = sub.add_parser('compare-results', help='two results directories, nothing booted')
	cr.add_argument('dir_a')
	cr.add_argument('dir_b')
	cr.add_argument('--only', default='', help='compare only these tests (globs)')
	cr.set_defaults(fn=cmd_compare_results)
	for p in (r, c):
		p.add_argument('--jobs', type=int, default=0)
		p.add_argument('--timeout', type=int, default=0,
			       help='hard timeout of a whole guest run in seconds (default: the '
			       f'sum of the per-test timeouts + {BOOT_MARGIN_S}, at most {HARD_TIMEOUT_S})')
		p.add_argument('--only', default='',
			       help='comma-separated globs of test names or categories')
		p.add_argument('--test-timeout', type=int, default=0,
			       help="every test's timeout in seconds instead of the list's")
		p.add_argument('--smp', type=smp_count, default=GUEST_SMP,
			       help=f'vCPUs of the guest (default {GUEST_SMP}; migration needs 3)')
	r.add_argument('--out', default='',
		       help='results directory (default build/selftests/VARIANT)')
	for p in (r, c):
		p.add_argument('--no-build', action='store_true',
			       help='boot build/out/selftests-VARIANT as it is (a kernel built by hand)')
	for p in (r, c):
		cli.add_lock_options(p)
	return cli.run_command(ap.parse_args(argv), 'selftests', argv)


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
