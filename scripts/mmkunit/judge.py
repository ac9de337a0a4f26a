# SPDX-License-Identifier: GPL-2.0
"""From what kunit.py and the guest log say to our verdicts.

Each case gets kunit's raw status, a verdict (pass / fail / skip) and the
reason when the two differ or the verdict needs one: a case of
patches/expected-before on a tree without its group must fail (its
failure is a pass), a splat in the guest log or a guest that stopped
mid-suite fails the run (as a pseudo-case "guest.splat" /
"guest.stopped")."""

import json
import os
import re
from typing import Dict, List, Optional, Tuple

from .common import REPO

# Guest log lines that fail a run whatever the KTAP says.
SPLAT_RE = re.compile(
	r'(BUG: |WARNING: |Oops|Kernel panic|kernel BUG at|'
	r'KASAN: |UBSAN: |KFENCE: |'
	r'possible circular locking|possible recursive locking|'
	r'inconsistent lock state|suspicious RCU usage|'
	r'bad unlock balance|held when returning to user space|'
	r'INFO: task .* blocked for more than|'
	r'rcu: INFO: .* stall|self-detected stall|detected stalls on CPUs|'
	r'Call Trace:)')
# Lines that match SPLAT_RE but are not splats.
SPLAT_IGNORE_RE = re.compile(r'^\s*(#|KTAP version|(not )?ok \d)')


# ---------------------------------------------------------------- results

def count_json(node: dict) -> Dict[str, str]:
	"""Flatten a kunit.py --json tree to {suite.case[.param]: status}."""
	out: Dict[str, str] = {}

	def walk(n, prefix):
		for g in n.get('sub_groups', []):
			walk(g, prefix + [g['name']])
		for c in n.get('test_cases', []):
			out['.'.join(prefix + [c['name']])] = c['status']
	walk(node, [])
	return out


def strip_console_prefix(line: str) -> str:
	"""A guest log line without its newline and printk time "[  1.23] "."""
	return re.sub(r'^\[\s*\d+\.\d+\]\s*', '', line.rstrip('\n'))


def scan_splats(log_lines: List[str]) -> List[str]:
	"""Guest log lines that show a kernel splat."""
	found = []
	for line in log_lines:
		body = strip_console_prefix(line)
		if SPLAT_RE.search(body) and not SPLAT_IGNORE_RE.search(body):
			found.append(line.rstrip('\n'))
	return found


def running_when_stopped(log_lines: List[str]) -> Optional[str]:
	"""Name of the suite (and case) that had started but not finished."""
	stack: List[str] = []
	for line in log_lines:
		body = strip_console_prefix(line).strip()
		m = re.match(r'^# Subtest: (\S+)', body)
		if m:
			stack.append(m.group(1))
			continue
		if re.match(r'^(not )?ok \d+ ', body) and stack:
			# A result line at the current depth closes the innermost
			# subtest only when its name matches.
			name = re.sub(r'^(not )?ok \d+ (- )?', '', body).split(' #')[0].strip()
			if name == stack[-1]:
				stack.pop()
	return ' / '.join(stack) if stack else None


def load_expected_before(path: Optional[str] = None) -> Dict[str, str]:
	"""patches/expected-before: case -> patch group that makes it pass."""
	path = path or os.path.join(REPO, 'patches', 'expected-before')
	out = {}
	if not os.path.isfile(path):
		return out
	with open(path) as f:
		for line in f:
			line = line.split('#', 1)[0].split()
			if len(line) == 2:
				out[line[0]] = line[1]
	return out



def case(name: str, status: str, verdict: str, reason: str = '') -> dict:
	return {'name': name, 'status': status, 'verdict': verdict, 'reason': reason}


# ------------------------------------------------------ skips and hooks

# The reasons our suites give a skip start with one of these
# (mm/tests/mm_hooks.h); a part of a case skipped for a missing test hook
# is logged as "# hook absent: <hook>: <part> not checked".
HOOK_ABSENT = 'hook absent: '
SKIP_KINDS = (('hook absent: ', 'hook'), ('config: ', 'config'),
	      ('not applied: ', 'not-applied'), ('machine: ', 'machine'))

# a result line; a parameter's name may hold spaces
_RESULT_RE = re.compile(r'^(\s*)(?:not )?ok \d+ (.*?)(?:\s+#\s*SKIP\b\s*(.*))?$')
_SUBTEST_RE = re.compile(r'^(\s*)# Subtest: (\S+)')


def skip_kind(reason: str) -> str:
	"""Which kind of skip a reason says: hook, config, not-applied,
	machine, or other."""
	for prefix, kind in SKIP_KINDS:
		if reason.startswith(prefix):
			return kind
	return 'other'


def scan_case_notes(log_lines: List[str]) -> Dict[str, dict]:
	"""Per case (suite.case, as count_json names it, parameters folded
	into their case): the KTAP skip reason and the hook-absent parts it
	logged, from the raw guest log."""
	out: Dict[str, dict] = {}
	stack: List[Tuple[int, str]] = []	# (indent, suite or case name)
	pending: List[str] = []
	for raw in log_lines:
		# Keep the KTAP indentation: only the printk time goes
		line = re.sub(r'^\[\s*\d+\.\d+\] ?', '', raw.rstrip('\n'))
		m = _SUBTEST_RE.match(line)
		if m:
			ind = len(m.group(1))
			stack = [s for s in stack if s[0] < ind] + [(ind, m.group(2))]
			continue
		if HOOK_ABSENT in line and line.lstrip().startswith('#'):
			pending.append(line.split(HOOK_ABSENT, 1)[1].strip())
			continue
		m = _RESULT_RE.match(line)
		if not m:
			continue
		ind, name, skip = len(m.group(1)), m.group(2), (m.group(3) or '').strip()
		# A subtest's header is indented as its results are: a case's
		# result has its suite above it, a parameter's its suite and
		# case (folded into the case).
		parents = [s[1] for s in stack if s[0] <= ind]
		path = parents[:1] + [name] if len(parents) < 2 else parents[:2]
		if len(parents) == 0:
			stack = []
			pending = []
			continue
		key = '.'.join(path)
		n = out.setdefault(key, {'skip': '', 'hook_parts': []})
		if skip and (len(parents) == 1 or not n['skip']):
			n['skip'] = skip
		n['hook_parts'].extend(p for p in pending if p not in n['hook_parts'])
		pending = []
		if len(parents) == 1:
			stack = [s for s in stack if s[0] <= ind]
	return out


def apply_notes(cases: List[dict], notes_by_case: Dict[str, dict], hooks_required: bool
		) -> List[dict]:
	"""Add the skip kind and the hook-absent parts to the verdicts; with
	@hooks_required (our own series, HOOKS=required) a skip or a part for a
	missing hook is a failure."""
	seen = set()
	for c in cases:
		n = None
		for key in (c['name'], '.'.join(c['name'].split('.')[:2])):
			n = notes_by_case.get(key)
			if n:
				break
		if not n:
			continue
		# The parts a parameterised case logged count once, at its first
		# parameter
		parts = [] if key in seen else n['hook_parts']
		seen.add(key)
		if c['verdict'] == 'skip' and n['skip']:
			c['skip_kind'] = skip_kind(n['skip'])
			if not c['reason']:
				c['reason'] = n['skip']
		if parts:
			c['hook_parts'] = list(parts)
		hook_skip = c.get('skip_kind') == 'hook'
		if hooks_required and (hook_skip or parts):
			what = n['skip'] if hook_skip else f'{HOOK_ABSENT}{parts[0]}'
			c['verdict'] = 'fail'
			c['reason'] = f'HOOKS=required: {what}' + \
				(f' (+{len(parts) - 1} more parts)' if len(parts) > 1 else '')
		elif parts and c['verdict'] != 'fail':
			c['reason'] = (c['reason'] + '; ' if c['reason'] else '') + \
				f'{len(parts)} part(s) not checked, {HOOK_ABSENT.strip()} ' + \
				'; '.join(parts)
	return cases


def hook_counts(cases: List[dict]) -> Dict[str, int]:
	"""Cases skipped whole for a missing hook, and parts skipped."""
	return {'hook_skipped_cases': sum(1 for c in cases if c.get('skip_kind') == 'hook'),
		'hook_skipped_parts': sum(len(c.get('hook_parts', [])) for c in cases)}


def judge_cases(results: Dict[str, str], applied_groups: Optional[List[str]],
		expected_before: Dict[str, str], require_listed: bool = False) -> List[dict]:
	"""One verdict per case; a case whose group is not applied must not pass.

	@applied_groups None: nobody said which groups the kernel carries
	(VARIANT=asis, SERIES= without APPLIED=); expected-before is off, every
	case is judged by its kunit status and a listed one says so.
	With @require_listed, a case of expected-before that did not run at all
	is a failure too (it was renamed or its suite was not built).
	"""
	out = []
	if require_listed:
		for pat in sorted(expected_before):
			if not any(c == pat or c.startswith(pat + '.') for c in results):
				out.append(case(pat, 'NOT RUN', 'fail',
						'listed in patches/expected-before but did not run'))
	for name, status in sorted(results.items()):
		grp = None
		for pat, g in expected_before.items():
			if name == pat or name.startswith(pat + '.'):
				grp = g
		if grp and applied_groups is None:
			out.append(case(name, status, {'PASS': 'pass', 'SKIP': 'skip'}.get(status, 'fail'),
					f'expected-before off (APPLIED= not given): {status} '
					f'judged as is, the kernel may or may not carry {grp}'))
			continue
		if grp and grp not in applied_groups:
			if status == 'FAIL':
				out.append(case(name, status, 'pass',
						f'expected-before: fails before {grp}, as expected'))
			elif status == 'SKIP':
				out.append(case(name, status, 'skip'))
			else:
				out.append(case(name, status, 'fail',
						f'expected-before: {status} without {grp}: '
						'the case does not see the patch'))
			continue
		if status == 'PASS':
			out.append(case(name, status, 'pass'))
		elif status == 'SKIP':
			out.append(case(name, status, 'skip'))
		else:
			out.append(case(name, status, 'fail', f'kunit: {status}'))
	return out


def judge_guest(log_lines: List[str], results: Dict[str, str], timed_out: bool,
		timeout: int) -> List[dict]:
	"""Pseudo-cases for what the guest log says beyond the KTAP."""
	out = []
	stopped = running_when_stopped(log_lines)
	if timed_out or stopped:
		why = f'timeout {timeout} s or crash' if timeout else 'crash or timeout'
		out.append(case('guest.stopped', 'STOPPED', 'fail',
				f'stopped guest ({why}) while running '
				f'{stopped or "before the first suite"}'))
	splats = scan_splats(log_lines)
	if splats:
		out.append(case('guest.splat', 'SPLAT', 'fail',
				f'splat: {len(splats)} line(s) in the guest log, first: '
				f'{splats[0].strip()}'))
	if not results and not stopped:
		out.append(case('guest.results', 'NONE', 'fail', 'no test results at all'))
	return out


def count_verdicts(cases: List[dict]) -> Dict[str, int]:
	counts = {'passed': 0, 'failed': 0, 'skipped': 0}
	for c in cases:
		counts[{'pass': 'passed', 'fail': 'failed', 'skip': 'skipped'}[c['verdict']]] += 1
	return counts


def notes(cases: List[dict]) -> List[str]:
	return [f'{c["name"]}: {c["reason"]}' for c in cases if c['reason']]


def judge(results: Dict[str, str], applied_groups: List[str],
	  expected_before: Dict[str, str], require_listed: bool = False
	  ) -> Tuple[Dict[str, int], List[str]]:
	"""Counts and notes of judge_cases()."""
	cases = judge_cases(results, applied_groups, expected_before, require_listed)
	return count_verdicts(cases), notes(cases)


def parse_guest_log(lines: List[str], kunit_dir: str) -> Dict[str, str]:
	"""{suite.case: status} of a raw guest log, read with kunit_tool's own
	KTAP parser and JSON writer from @kunit_dir (a tree's
	tools/testing/kunit), as kunit.py exec --json would give."""
	import json
	import sys
	from .common import Error
	if not os.path.isfile(os.path.join(kunit_dir, 'kunit_parser.py')):
		raise Error(f'kunit_parser.py not found in {kunit_dir}: pass --kunit-dir or set '
			    'MMKUNIT_KUNIT_DIR to a kernel tree\'s tools/testing/kunit')
	sys.path.insert(0, os.path.abspath(kunit_dir))
	import kunit_json
	import kunit_parser
	import kunit_printer
	test = kunit_parser.parse_run_tests(lines, kunit_printer.null_printer)
	return count_json(json.loads(kunit_json.get_json_result(test, kunit_json.Metadata())))


def read_results(json_path: str) -> dict:
	"""The case statuses of kunit.py's results.json (count_json()); {}
	when the file is missing or unreadable (a guest that died early)."""
	if not os.path.isfile(json_path):
		return {}
	with open(json_path) as f:
		try:
			return count_json(json.load(f))
		except ValueError:
			return {}
