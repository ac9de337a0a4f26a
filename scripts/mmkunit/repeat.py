# SPDX-License-Identifier: GPL-2.0
"""make repeat: boot the series kernel (and the race suites) RUNS times,
optionally while a kernel build of another tree loads the host, and say
which cases flake: a case whose verdict is not the same in every run."""

import json
import os
import signal
import subprocess
import time
from typing import Dict, List, Optional, Tuple

from . import report, stages, tree
from .common import BUILD, Error, count_line, info, rel

REPEAT_DIR = os.path.join(BUILD, 'repeat')


def flakes(runs: List[Dict[str, str]]) -> List[dict]:
	"""Per case, over the runs ({case: verdict} each): how many times it
	passed, failed and skipped, and in how many runs it did not run.
	Sorted: cases with more than one verdict first, then by name."""
	names = sorted({n for r in runs for n in r})
	rows = []
	for n in names:
		v = [r.get(n) for r in runs]
		row = dict(case=n, passed=v.count('pass'), failed=v.count('fail'),
			   skipped=v.count('skip'), absent=v.count(None))
		row['flaky'] = len({x for x in v if x is not None}) > 1 or \
			(row['absent'] and row['absent'] < len(runs))
		rows.append(row)
	rows.sort(key=lambda r: (not r['flaky'], not r['failed'], r['case']))
	return rows


def flake_text(rows: List[dict], nruns: int, load: str) -> str:
	"""The report: the cases that flaked or failed, and one line of totals."""
	lines = [f'{nruns} run(s), {load}']
	bad = [r for r in rows if r['flaky'] or r['failed']]
	for r in bad:
		kind = 'flaky' if r['flaky'] else 'failed every run'
		lines.append(f'  {kind}: {r["case"]}: {r["passed"]} passed, {r["failed"]} failed, '
			     f'{r["skipped"]} skipped' + (f', {r["absent"]} not run' if r['absent'] else ''))
	lines.append(f'{len(rows)} case(s): {sum(r["flaky"] for r in rows)} flaky, '
		     f'{sum(bool(r["failed"]) and not r["flaky"] for r in rows)} failed every run')
	return '\n'.join(lines)


def start_load(jobs: int) -> Tuple[Optional[subprocess.Popen], str]:
	"""A kernel build of another tree (the base source, defconfig, in
	build/repeat/load, no ccache) at nice 0, started again each time it
	ends, in a process group of its own; (process, what it is)."""
	src, _, _ = tree.source_tree()
	out = os.path.join(REPEAT_DIR, 'load')
	os.makedirs(out, exist_ok=True)
	cmd = (f'cd {src} && make -s O={out} defconfig >/dev/null && while :; do '
	       f'make -s O={out} clean >/dev/null; CCACHE_DISABLE=1 make -s O={out} -j{jobs} vmlinux '
	       f'>/dev/null 2>&1; done')
	log = open(os.path.join(REPEAT_DIR, 'load.log'), 'w')
	p = subprocess.Popen(['bash', '-c', cmd], stdout=log, stderr=log, start_new_session=True)
	return p, f'loaded: a defconfig build of the base tree, -j{jobs}, nice 0, no ccache'


def stop_load(p: Optional[subprocess.Popen]) -> None:
	if p is None:
		return
	try:
		os.killpg(p.pid, signal.SIGTERM)
		p.wait(timeout=30)
	except (ProcessLookupError, subprocess.TimeoutExpired):
		try:
			os.killpg(p.pid, signal.SIGKILL)
		except ProcessLookupError:
			pass


def verdicts(st: report.Stage) -> Dict[str, str]:
	out = {c['name']: c['verdict'] for c in st.cases}
	if st.error:
		out[f'{st.name}: could not run'] = 'fail'
	return out


def cmd_repeat(args) -> int:
	"""Build the series kernel once, then boot it RUNS times (the suites;
	with --races also the race suites, as make test's races stage)."""
	if args.runs < 2:
		raise Error('make repeat: RUNS=2 at least (a flake needs two runs to show)')
	t0 = time.monotonic()
	os.makedirs(REPEAT_DIR, exist_ok=True)
	load, what = (None, 'idle (no load of our own)')
	sts: List[report.Stage] = []
	runs: List[Dict[str, str]] = []
	try:
		if args.load:
			load, what = start_load(args.load)
			info(f'repeat: {what}')
		for i in range(args.runs):
			run: Dict[str, str] = {}
			st = stages.run_variant('series', jobs=args.jobs, timeout=args.timeout,
						filter_glob=args.filter_glob, build=(i == 0),
						name=f'repeat-{i + 1}', build_name='series')
			sts.append(st)
			run.update(verdicts(st))
			if args.races and not st.error:
				rs = stages.run_variant('series', jobs=args.jobs, timeout=args.timeout,
							build=False, filter_glob=stages.RACE_GLOB,
							slow_only=True, name=f'repeat-{i + 1}-races',
							build_name='series')
				sts.append(rs)
				run.update(verdicts(rs))
			runs.append(run)
			c = report.total(sts[-2:] if args.races else sts[-1:])
			info(f'repeat: run {i + 1}/{args.runs}: {count_line(c)}')
			if st.error and i == 0:
				break
	finally:
		stop_load(load)
	rows = flakes(runs)
	text = flake_text(rows, len(runs), what)
	with open(os.path.join(REPEAT_DIR, 'report.json'), 'w') as f:
		json.dump(dict(runs=len(runs), load=what, races=args.races, cases=rows,
			       elapsed_s=round(time.monotonic() - t0)), f, indent=1)
	with open(os.path.join(REPEAT_DIR, 'report.txt'), 'w') as f:
		f.write(text + '\n')
	print(text)
	info(f'repeat: {rel(REPEAT_DIR)}/report.txt and report.json; each run in build/out/repeat-N')
	code = report.exit_code(sts)
	report.write('repeat', sts, time.monotonic() - t0, code)
	print(count_line(report.total(sts)))
	return code
