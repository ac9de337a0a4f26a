# SPDX-License-Identifier: GPL-2.0
"""A per-patch check for b4 (b4.review-perpatch-check-cmd): one patch
mail on stdin, a JSON array on stdout in b4's check protocol

	[{"tool": "mm-kunit", "status": "pass|warn|fail",
	  "summary": "one line", "details": "multi-line text"}]

built on the per-patch matrix of make series-check
(build/series-check/matrix.json): the patch is found in the series under
test (patches/series, or the mails of SERIES=) by its git patch-id, else
by its subject; the matrix rows of prefix k-1 and k say what patch k
turns green (a case that did not pass before it and passes with it) or
red (passed before, does not now), whether it builds, whether its guest
showed a splat or stopped, and checkpatch's word on it.

  fail  it does not build, turns a case red, or its guest splats/stops;
  warn  the matrix has no rows for it (not measured), checkpatch found
	something, or the mail is not a patch of the series under test;
  pass  otherwise.

With --run the two prefixes are measured first (make series-check
FROM=k-1 TO=k, under build/'s lock): minutes of kernel builds."""

import json
import os
import re
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from .common import BUILD, Error, rel

TOOL = 'mm-kunit'
MATRIX = os.path.join(BUILD, 'series-check', 'matrix.json')


def result(status: str, summary: str, details: str = '') -> List[Dict[str, str]]:
	r = {'tool': TOOL, 'status': status, 'summary': summary}
	if details:
		r['details'] = details
	return [r]


def norm_subject(s: str) -> str:
	s = re.sub(r'^\s*(\[[^]]*\]\s*)+', '', ' '.join(s.split()))
	return s.strip().lower()


def find_patch(mail: bytes, series: List[str]) -> Tuple[Optional[int], str]:
	"""(k, how) of the mail in @series (1-based), None when not there."""
	from .repro import patch_id
	from .tree import mail_subject, patch_file
	with tempfile.NamedTemporaryFile(suffix='.patch') as f:
		f.write(mail)
		f.flush()
		pid = patch_id(f.name)
	text = mail.decode(errors='replace')
	subj = norm_subject(mail_subject(text))
	by_subject = None
	for k, p in enumerate(series, 1):
		path = patch_file(p)
		if pid and patch_id(path) == pid:
			return k, f'patch-id {pid[:12]}'
		with open(path, errors='replace') as pf:
			if subj and norm_subject(mail_subject(pf.read())) == subj and by_subject is None:
				by_subject = k
	if by_subject is not None:
		return by_subject, 'subject (its diff differs from the series\' patch)'
	return None, ''


def rows_of(matrix: Dict) -> Dict[int, Dict]:
	return {r['k']: r for r in matrix.get('rows', [])}


def judge_patch(k: int, n: int, name: str, matrix: Dict, source: str) -> List[Dict[str, str]]:
	"""b4's verdict on patch @k of @n from the matrix rows k-1 and k."""
	rows = rows_of(matrix)
	head = f'patch {k}/{n}'
	if k not in rows or k - 1 not in rows:
		return result('warn', f'{head}: not measured (no matrix rows {k - 1} and {k} in '
			      f'{source}); run make series-check FROM={k - 1} TO={k}',
			      f'{name}\nmatrix: {source}\nrows there: '
			      f'{", ".join(str(x) for x in sorted(rows)) or "none"}')
	before, now = rows[k - 1], rows[k]
	lines = [f'{name}', f'matrix: {source} (prefix {k - 1} -> {k})']
	if not now['built']:
		return result('fail', f'{head}: does not build (prefix {k})',
			      '\n'.join(lines + [f'  {x}' for x in now.get('notes', [])]))
	if not before['built']:
		lines.append(f'prefix {k - 1} did not build: nothing to compare with')
	cases = sorted(set(before.get('results', {})) | set(now.get('results', {})))
	green, red = [], []
	for c in cases:
		was = before.get('results', {}).get(c, 'NOT RUN') if before['built'] else 'NOT RUN'
		is_ = now.get('results', {}).get(c, 'NOT RUN')
		if was == 'PASS' and is_ != 'PASS' and before['built']:
			red.append(f'{c}: PASS -> {is_}')
		elif was != 'PASS' and is_ == 'PASS':
			green.append(f'{c}: {was} -> PASS')
	guest = now.get('guest', [])
	cp = now.get('checkpatch', '')
	status = 'fail' if red or guest else 'warn' if cp == '!!' else 'pass'
	summary = (f'{head}: turns {len(green)} case(s) green, {len(red)} red; builds'
		   + (f'; guest: {guest[0]}' if guest else '')
		   + ('; checkpatch --strict: findings' if cp == '!!' else
		      '; checkpatch --strict clean' if cp == 'ok' else ''))
	if red:
		lines.append('red (passed before this patch, not with it):')
		lines += [f'  {x}' for x in red]
	if green:
		lines.append('green (pass from this patch on):')
		lines += [f'  {x}' for x in green]
	passing = sum(1 for s in now.get('results', {}).values() if s == 'PASS')
	lines.append(f'with this patch: {passing} of {len(now.get("results", {}))} case(s) pass')
	lines += [f'guest: {g}' for g in guest]
	return result(status, summary, '\n'.join(lines))


def check(mail: bytes, matrix_path: str = MATRIX, run=None) -> List[Dict[str, str]]:
	"""The check of one patch mail.  @run(k): measure prefixes k-1, k."""
	from .tree import patch_name, series_patches
	series = series_patches()
	k, how = find_patch(mail, series)
	if k is None:
		return result('warn', 'not a patch of the series under test (patches/series or '
			      'SERIES=): nothing to say', f'{len(series)} patches in the series')
	if run is not None:
		run(k)
	try:
		with open(matrix_path) as f:
			matrix = json.load(f)
	except FileNotFoundError:
		matrix = {}
	except ValueError as e:
		return result('fail', f'unreadable matrix {rel(matrix_path)}: {e}')
	out = judge_patch(k, len(series), patch_name(series[k - 1]), matrix, rel(matrix_path))
	out[0]['details'] = f'found by {how}\n' + out[0].get('details', '')
	return out


def cmd_b4_check(args) -> int:
	"""mmkunit b4-check: the JSON on stdout, everything else on stderr."""
	mail = sys.stdin.buffer.read()
	# info() lines and child processes (--run's builds) must not reach
	# b4's JSON: stdout is stderr, at the file descriptor too, until the end
	sys.stdout.flush()
	saved_fd = os.dup(1)
	real_stdout = sys.stdout
	os.dup2(2, 1)
	sys.stdout = sys.stderr
	try:
		run = None
		if args.run:
			run = _runner(args)
		try:
			out = check(mail, args.matrix or MATRIX, run)
		except Error as e:
			out = result('fail', f'mm-kunit could not check it: {e}')
	finally:
		sys.stdout.flush()
		os.dup2(saved_fd, 1)
		os.close(saved_fd)
		sys.stdout = real_stdout
	print(json.dumps(out, indent=1), flush=True)
	return 0


def _runner(args):
	def run(k: int) -> None:
		from . import cli
		from .lock import BuildLock
		lock = BuildLock(f'mmkunit b4-check --run (prefixes {k - 1}, {k})')
		lock.acquire(wait=True)
		try:
			ns = type('A', (), {'from_': k - 1, 'to': k, 'jobs': args.jobs,
					    'timeout': args.timeout, 'shard': ''})()
			cli.cmd_series_check(ns)
		finally:
			lock.release()
	return run
