# SPDX-License-Identifier: GPL-2.0
"""The stages commands are made of: one variant assembled, built, booted
and judged (run_variant), the host tests, checkpatch.  Each returns a
report.Stage; a stage that cannot run says why in its error."""

import json
import os
import re
import subprocess
import sys
import time
import unittest
from typing import Dict, List, Optional, Tuple

from . import arch, expected, judge, kernel, repro, thread, tree
from .common import BUILD, REPO, Error, default_jobs, env_number, info, rel
from .report import Stage

# The suites of KUNIT_CASE_SLOW race cases (lockless_read_race,
# shmem_read_race) that make test runs in a boot of its own.  A suite glob
# only: 7.3's kunit executor oopses on a test glob that leaves a suite
# empty combined with an attribute filter (kunit_filter_glob_tests()
# returns NULL, kunit_filter_attr_tests() copies it).
RACE_GLOB = '*_race'


def out_dir(name: str) -> str:
	return os.path.join(BUILD, 'out', name.replace(':', '-'))


def guest_timeout(timeout: int, debug: bool, slow=False) -> int:
	"""A boot's hang guard: @timeout, else MMKUNIT_TIMEOUT, else 600 s
	(900 s under debug); three times that for a boot of the
	KUNIT_CASE_SLOW cases (the race suites: make test's races stage takes
	several minutes, twice that under debug)."""
	base = timeout or int(env_number('MMKUNIT_TIMEOUT', 900 if debug else 600))
	return base * 3 if slow and not timeout else base


def run_variant(variant: str, debug: bool = False, jobs: int = 0, timeout: int = 0,
		filter_glob: str = '', with_slow: bool = False,
		kunitconfigs: Optional[List[str]] = None, build: bool = True,
		name: str = '', build_name: str = '', slow_only: bool = False,
		kernel_args: Optional[List[str]] = None) -> Stage:
	"""Assemble, build and boot one variant; its verdicts as a Stage.

	The stage's files (mmkunit.log, test.log, results.json) go to
	build/out/NAME (NAME defaults to the variant).  With build=False the
	kernel built earlier in build/out/BUILD_NAME is only booted again
	(the races stage of make test, bench-compare's later boots).
	with_slow keeps KUNIT_CASE_SLOW cases; slow_only runs only them.
	For an architecture other than x86_64 (ARCH=arm64) both names get its
	suffix (series-arm64), and the stage records its architecture.
	@kernel_args go to the guest's command line (the benchmarks'
	mm_bench.* parameters)."""
	a = arch.current()
	sfx = ('-debug' if debug else '') + a.suffix
	name = (name or variant.replace(':', '-')) + sfx
	build_dir = out_dir(build_name + sfx if build_name else name)
	stage = Stage(name=name, out_dir=rel(out_dir(name)), started=time.strftime('%Y-%m-%dT%H:%M:%S'),
		      variant=variant, arch=a.name)
	t0 = time.monotonic()
	try:
		_run_variant(stage, variant, debug, jobs, timeout, filter_glob,
			     'only' if slow_only else with_slow, kunitconfigs, build, build_dir,
			     kernel_args or [])
	except (Error, OSError) as e:
		# An OSError (a full disk) is one line and this stage's error
		stage.error = str(e) if isinstance(e, Error) else \
			f'{e.strerror or e}' + (f': {e.filename}' if e.filename else '')
		info(f'{name}: {stage.error}')
		if isinstance(e, thread.SeriesOutcome):
			stage.outcome = e.outcome
			stage.repro['not_applied'] = {'patch': e.patch, 'files': e.files}
		try:		# the checkout's patches and the series, whatever failed
			if not stage.repro.get('patches'):
				ps = tree.variant_patches(variant)
				stage.repro.update(repro.patches_record(
					[tree.patch_file(p) for p in ps], [tree.patch_label(p) for p in ps]))
			if stage.series is None and tree.variant_patches(variant):
				stage.series = thread.stage_record()
		except (Error, OSError):
			pass
	stage.seconds = time.monotonic() - t0
	return stage


def _run_variant(stage: Stage, variant: str, debug: bool, jobs: int, timeout: int,
		 filter_glob: str, with_slow, kunitconfigs: Optional[List[str]],
		 build: bool, build_dir: str, kernel_args: List[str]) -> None:
	name = stage.name
	groups = tree.variant_groups(variant)	# APPLIED= is checked before the long work
	stage.applied = groups
	if build:
		src = tree.assemble(variant)
	elif os.path.isfile(os.path.join(tree.TREE, 'tools/testing/kunit/kunit.py')):
		src = tree.TREE
	else:
		raise Error(f'{variant}: no assembled tree to boot from')
	sdir = out_dir(name)
	os.makedirs(sdir, exist_ok=True)
	os.makedirs(build_dir, exist_ok=True)
	jobs = jobs or default_jobs()
	timeout = guest_timeout(timeout, debug, bool(with_slow))
	configs = list(kunitconfigs or tree.SUITE_KUNITCONFIGS)
	if debug:
		configs.append(tree.DEBUG_KUNITCONFIG)
	patches = tree.variant_patches(variant)
	mbox = tree.series_mbox() if patches else ''
	logpath = os.path.join(sdir, 'mmkunit.log')
	info(f'{name}: tree {rel(src)}, {len(patches)} patch{"" if len(patches) == 1 else "es"}'
	     + (f' of SERIES={mbox}' if mbox else '') + ('' if groups is None else
	     f' ({tree.describe_groups(groups)})') + ', '
	     + (f'build {rel(build_dir)}, ' if build else f'kernel of {rel(build_dir)}, ')
	     + f'{jobs} jobs, {arch.current().name}')
	if groups is None:
		info(f'{name}: {tree.describe_groups(groups)}')
	with open(logpath, 'w') as logf:
		if build:
			stage.build_seconds = kernel.build(name, src, build_dir, configs, jobs, logf)
		extra = []
		if debug:
			# A page freed early reads as poison (the race suite's oracle)
			extra.append('--kernel_args=page_poison=1')
		extra += ['--kernel_args=' + a for a in kernel_args]
		if with_slow == 'only':
			extra.append('--filter=speed=slow')
		elif not with_slow:
			extra.append('--filter=speed>slow')
		if filter_glob:
			extra.append(filter_glob)
		b = kernel.boot(name, src, build_dir, sdir, configs, extra, timeout, logf)
	stage.guest_seconds = b.result.seconds
	results = {}
	if os.path.isfile(b.json_path):
		with open(b.json_path) as f:
			try:
				results = judge.count_json(json.load(f))
			except ValueError:
				info(f'{name}: kunit.py wrote unreadable JSON ({rel(b.json_path)})')
	stage.cases = judge.judge_cases(results, groups, judge.load_expected_before(),
					require_listed=not filter_glob and kunitconfigs is None)
	stage.hooks = tree.hook_report(src) if src == tree.TREE else {}
	# A kernel built without the hooks' option (the benchmarks') has the
	# hook patches but not the hooks: what needs them skips, as on a posting
	judge.apply_notes(stage.cases, judge.scan_case_notes(b.log_lines),
			  hooks_required=tree.hooks_mode(variant) == 'required' and
			  tree.NOHOOKS_KUNITCONFIG not in configs)
	stage.cases += judge.judge_guest(b.log_lines, results, b.result.timed_out, timeout)
	stage.cases += missing_cases(name, src, configs, filter_glob, with_slow, results,
				     stage.cases)
	stage.repro = repro.record(build_dir, logpath, b.log_lines,
				   [tree.patch_file(p) for p in patches],
				   [tree.patch_label(p) for p in patches])
	if mbox:
		stage.series = thread.stage_record()
	c = stage.counts
	info(f'{name}: ' + (f'build {stage.build_seconds:.0f}s, ' if build else '') +
	     f'guest {stage.guest_seconds:.0f}s; {c["passed"]} passed, {c["failed"]} failed, '
	     f'{c["skipped"]} skipped')
	for n in judge.notes(stage.cases):
		info(f'  {name}: {n}')
	if tree.describe_hook_report(stage.hooks):
		info(f'{name}: {tree.describe_hook_report(stage.hooks)}')
	if groups is None:
		info(f'{name}: {tree.describe_groups(groups)}')
	info(f'{name}: full log {rel(logpath)}, guest log {rel(os.path.join(sdir, "test.log"))}')


def missing_cases(name: str, src: str, configs: List[str], filter_glob: str, with_slow,
		  results: Dict[str, str], cases: List[dict]) -> List[dict]:
	"""A failed case per case the suites' tables say this stage should
	have run and that did not run (scripts/mmkunit/expected.py).
	MMKUNIT_EXPECTED=0 turns it off (the host tests' fake kernels), and
	the stage says so."""
	if os.environ.get('MMKUNIT_EXPECTED', '1') == '0':
		info(f'{name}: missing cases not checked (MMKUNIT_EXPECTED=0)')
		return []
	try:
		suites = expected.expected_suites(os.path.join(src, 'mm/tests'),
						  [os.path.join(src, k) for k in configs],
						  filter_glob, with_slow)
	except (OSError, ValueError) as e:
		return [judge.case('expected', 'NONE', 'fail',
				   f'could not read the cases this stage should run: {e}')]
	have = {c['name'] for c in cases}
	out = [c for c in expected.missing_cases(suites, results) if c['name'] not in have]
	info(f'{name}: expected {expected.describe(suites)}; {len(out)} missing')
	return out


# The objects of mm/ that our test hooks touch: without CONFIG_MM_KUNIT_HOOKS
# (and CONFIG_DEBUG_PAGE_RCU_FREE) their code must be that of the series
# without its hook patches (the nohooks variant), byte for byte.
HOOK_OBJECTS = ['mm/filemap.o', 'mm/shmem.o', 'mm/page_alloc.o', 'mm/compaction.o',
		'mm/memory-failure.o']


def hooksoff_build(jobs: int = 0) -> Tuple[str, str]:
	"""Build HOOK_OBJECTS of the assembled series tree with the suites'
	kunitconfig and the test hooks' option off (mm_nohooks.config), in
	build/out/hooksoff.  (build dir, '') or ('', why not)."""
	name = 'hooksoff' + arch.current().suffix
	out = out_dir(name)
	os.makedirs(out, exist_ok=True)
	configs = list(tree.SUITE_KUNITCONFIGS) + [tree.NOHOOKS_KUNITCONFIG]
	t0 = time.monotonic()
	try:
		with open(os.path.join(out, 'mmkunit.log'), 'w') as logf:
			kernel.build_objects(name, tree.TREE, out, configs, HOOK_OBJECTS,
					     jobs or default_jobs(), logf)
	except (Error, OSError) as e:
		return '', str(e)
	info(f'{name}: {len(HOOK_OBJECTS)} objects of the series without the hooks\' '
	     f'option built in {time.monotonic() - t0:.0f} s')
	return out, ''


def text_sections(obj: str) -> List[Tuple[str, str]]:
	"""(section, disassembly with relocations) of every code section of
	@obj, as objdump prints them, without the file name line."""
	cross = arch.current().cross_compile
	objdump, objcopy = cross + 'objdump', cross + 'objcopy'
	r = subprocess.run([objdump, '-h', obj], capture_output=True, text=True)
	if r.returncode != 0:
		raise Error(f'{objdump} -h {obj}: {r.stderr.strip()}')
	names, lines = [], r.stdout.splitlines()
	for i, line in enumerate(lines):
		f = line.split()
		# "  3 .text  000012f0 ...", flags on the next line: the CODE ones
		if len(f) >= 7 and f[0].isdigit() and i + 1 < len(lines) and \
		   'CODE' in lines[i + 1]:
			names.append(f[1])
	out = []
	for sec in names:
		d = subprocess.run([objdump, '-d', '-r', '--no-show-raw-insn', '-j', sec, obj],
				   capture_output=True, text=True)
		if d.returncode != 0:
			raise Error(f'{objdump} -d -j {sec} {obj}: {d.stderr.strip()}')
		raw = subprocess.run([objcopy, '-O', 'binary', '--only-section=' + sec, obj,
				      '/dev/stdout'], capture_output=True)
		if raw.returncode != 0:
			raise Error(f'{objcopy} --only-section={sec} {obj}: '
				    f'{raw.stderr.decode(errors="replace").strip()}')
		body = [ln for ln in d.stdout.splitlines() if ln.strip() and
			'file format' not in ln]
		out.append((sec, '\n'.join(body) + '\nbytes:' + raw.stdout.hex()))
	return out


def first_difference(a: str, b: str) -> str:
	"""The first line where disassemblies @a and @b differ, for the reason."""
	la, lb = a.splitlines(), b.splitlines()
	for x, y in zip(la, lb):
		if x != y:
			return f'"{x.strip()[:90]}" vs "{y.strip()[:90]}"'
	return f'{len(la)} vs {len(lb)} lines'


def text_check(hooksoff: str, nohooks: str) -> Stage:
	"""A case per object of HOOK_OBJECTS: its code sections (bytes and
	disassembly with relocations) in @hooksoff equal those in @nohooks."""
	stage = Stage(name='hooks-off text' + arch.current().suffix, out_dir=rel(hooksoff),
		      started=time.strftime('%Y-%m-%dT%H:%M:%S'))
	for o in HOOK_OBJECTS:
		cname = 'text_equal.' + os.path.basename(o)[:-2]
		a, b = os.path.join(hooksoff, o), os.path.join(nohooks, o)
		missing = [rel(p) for p in (a, b) if not os.path.isfile(p)]
		if missing:
			stage.cases.append(judge.case(cname, 'NONE', 'fail',
						      f'not built: {", ".join(missing)}'))
			continue
		try:
			sa, sb = dict(text_sections(a)), dict(text_sections(b))
		except Error as e:
			stage.cases.append(judge.case(cname, 'NONE', 'fail', str(e)))
			continue
		bad = []
		for sec in sorted(set(sa) | set(sb)):
			if sec not in sa or sec not in sb:
				bad.append(f'{sec} only in {"the nohooks build" if sec in sb else "the series"}')
			elif sa[sec] != sb[sec]:
				bad.append(f'{sec} differs: {first_difference(sa[sec], sb[sec])}')
		if bad:
			stage.cases.append(judge.case(
				cname, 'FAIL', 'fail',
				f'{o} of the series without CONFIG_MM_KUNIT_HOOKS differs from the '
				f'nohooks build: ' + '; '.join(bad)))
		else:
			stage.cases.append(judge.case(
				cname, 'PASS', 'pass',
				f'{o}: {len(sa)} code sections, equal ({", ".join(sorted(sa))})'))
	c = stage.counts
	info(f'{stage.name}: {c["passed"]} of {len(HOOK_OBJECTS)} objects equal to the nohooks '
	     f'build' + (f', {c["failed"]} differ' if c['failed'] else ''))
	return stage


class _Result(unittest.TextTestResult):
	"""unittest's text result that also keeps the tests that passed."""

	def __init__(self, *a, **kw):
		super().__init__(*a, **kw)
		self.passed: List[str] = []

	def addSuccess(self, test):
		super().addSuccess(test)
		self.passed.append(test.id())


def host_tests() -> Stage:
	"""scripts/tests through unittest's own runner; a case per test."""
	stage = Stage(name='host tools', out_dir='', started=time.strftime('%Y-%m-%dT%H:%M:%S'))
	t0 = time.monotonic()
	# benchreport's tests read logs with kunit_tool's parser from a kernel tree
	if 'MMKUNIT_KUNIT_DIR' not in os.environ:
		try:
			os.environ['MMKUNIT_KUNIT_DIR'] = os.path.join(
				tree.assemble('series'), 'tools/testing/kunit')
		except Error as e:
			info(f'host tools: no kernel tree for kunit_parser ({e})')
	suite = unittest.defaultTestLoader.discover(os.path.join(REPO, 'scripts', 'tests'),
						    top_level_dir=REPO)
	# The host tests are the same for every ARCH= (those of arm64 set it
	# themselves): not the run's architecture
	saved = {k: os.environ.pop(k) for k in ('ARCH', 'MMKUNIT_ARCH') if k in os.environ}
	try:
		result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2,
						 resultclass=_Result).run(suite)
	finally:
		os.environ.update(saved)
	for t in result.passed:
		stage.cases.append(judge.case(t, 'PASS', 'pass'))
	for t, tb in result.failures + result.errors:
		last = tb.strip().splitlines()[-1] if tb.strip() else 'error'
		stage.cases.append(judge.case(t.id(), 'FAIL', 'fail', last))
	for t in result.unexpectedSuccesses:
		stage.cases.append(judge.case(t.id(), 'PASS', 'fail', 'unexpected success'))
	for t, why in result.skipped:
		stage.cases.append(judge.case(t.id(), 'SKIP', 'skip', why))
	if result.testsRun == 0:
		stage.cases.append(judge.case('host tools', 'NONE', 'fail', 'no tests found'))
		info('host tools: no tests found')
	stage.seconds = time.monotonic() - t0
	c = stage.counts
	info(f'host tools: {c["passed"]} passed, {c["failed"]} failed, {c["skipped"]} skipped')
	return stage


def checkpatch_targets() -> List[Tuple[str, List[str]]]:
	"""(path, extra args) of every patch in the series and every suite file."""
	out = [(tree.patch_file(p), []) for p in tree.series_patches()]
	top = os.path.join(REPO, 'mm/tests')
	if os.path.isdir(top):
		for n in sorted(os.listdir(top)):
			if n.endswith(('.c', '.h')):
				out.append((os.path.join(top, n), ['--file']))
	return out


# The one exception to "checkpatch --strict must be clean": the kernel
# writes trace event headers with TP_STRUCT__entry( / TP_fast_assign( lines
# that end in '(' and the TP_* arguments indented by tabs, not aligned with
# the open parenthesis of TRACE_EVENT( or TP_printk(; every header in
# include/trace/events/ has that shape and checkpatch reports it as these
# two CHECKs.  They are excused on the lines of a patch that change a file
# under TRACE_EVENTS_DIR, nowhere else, and the gate says how many.
TRACE_EVENTS_DIR = 'include/trace/events/'
TRACE_EVENT_STYLE = ('CHECK:OPEN_ENDED_LINE', 'CHECK:PARENTHESIS_ALIGNMENT')
TRACE_EVENT_WHY = (f'{"/".join(t.split(":")[1] for t in TRACE_EVENT_STYLE)} on '
		   f'{TRACE_EVENTS_DIR} lines, the TRACE_EVENT() header style '
		   'checkpatch does not know')

_HUNK = re.compile(r'@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@')


def patch_line_files(text: str) -> Dict[int, str]:
	"""Line number (1-based, as checkpatch counts a patch) of each line
	inside a hunk of the patch @text -> the file that hunk changes (its
	b/ path).  Mail text, diff headers and the signature map to nothing."""
	out: Dict[int, str] = {}
	cur = ''
	old = new = 0
	for n, line in enumerate(text.split('\n'), 1):
		if (old > 0 or new > 0) and line[:1] in ('+', '-', ' ', '', '\\'):
			out[n] = cur
			if line[:1] == '+':
				new -= 1
			elif line[:1] == '-':
				old -= 1
			elif line[:1] != '\\':
				old, new = old - 1, new - 1
			continue
		old = new = 0
		m = re.match(r'diff --git a/.* b/(.*)$', line)
		if m:
			cur = m.group(1)
		elif line.startswith('+++ b/'):
			cur = line[len('+++ b/'):].split('\t')[0]
		elif cur:
			m = _HUNK.match(line)
			if m:
				old = int(m.group(1) or 1)
				new = int(m.group(2) or 1)
	return out


def excuse_trace_event_style(found: str, path: str) -> Tuple[str, int]:
	"""(@found without the TRACE_EVENT_STYLE findings that --terse reports
	on lines of the patch @path inside a file under TRACE_EVENTS_DIR, how
	many were dropped).  Anything else is kept as it is."""
	with open(path, errors='replace') as f:
		files = patch_line_files(f.read())
	kept: List[str] = []
	excused = 0
	for line in found.splitlines():
		m = re.match(r'(\d+): ([A-Z]+:[A-Z0-9_]+): ', line[len(path) + 1:]) \
			if line.startswith(path + ':') else None
		if m and m.group(2) in TRACE_EVENT_STYLE and \
		   files.get(int(m.group(1)), '').startswith(TRACE_EVENTS_DIR):
			excused += 1
		else:
			kept.append(line)
	return '\n'.join(kept), excused


def checkpatch_findings(src: str, path: str,
			extra: Optional[List[str]] = None) -> Tuple[str, int]:
	"""scripts/checkpatch.pl --strict on one patch (or, with --file, one
	source file): (its findings, '' when it is clean; how many findings of
	a patch excuse_trace_event_style() dropped)."""
	cmd = ['perl', os.path.join(src, 'scripts/checkpatch.pl'), '--strict',
	       '--no-tree', '--terse', '--no-summary', '--show-types']
	r = subprocess.run(cmd + (extra or []) + [path], cwd=src, stdout=subprocess.PIPE,
			   stderr=subprocess.STDOUT, text=True)
	out = r.stdout.strip()
	if not out:
		return ('' if r.returncode == 0 else f'checkpatch exited {r.returncode}'), 0
	if '--file' in (extra or []):
		return out, 0
	# checkpatch exits 1 for the excused CHECKs too: all excused is clean
	return excuse_trace_event_style(out, path)


def checkpatch() -> Stage:
	"""scripts/checkpatch.pl --strict on the series and the suites."""
	stage = Stage(name='checkpatch', started=time.strftime('%Y-%m-%dT%H:%M:%S'))
	t0 = time.monotonic()
	try:
		src = tree.assemble('series')
	except Error as e:
		stage.error = str(e)
		info(f'checkpatch: {e}')
		return stage
	excused = excused_patches = 0
	for path, extra in checkpatch_targets():
		found, n = checkpatch_findings(src, path, extra)
		excused += n
		excused_patches += 1 if n else 0
		if not found:
			stage.cases.append(judge.case(rel(path), 'PASS', 'pass',
						      f'{n} excused: {TRACE_EVENT_WHY}' if n else ''))
		else:
			stage.cases.append(judge.case(rel(path), 'FAIL', 'fail',
						      found.splitlines()[0]))
			info(f'checkpatch --strict: {rel(path)}:')
			print(found)
	stage.seconds = time.monotonic() - t0
	c = stage.counts
	if excused:
		info(f'checkpatch: excused {excused} finding(s) in {excused_patches} patch(es): '
		     f'{TRACE_EVENT_WHY} (docs/architecture.rst)')
	info(f'checkpatch: {c["passed"]} clean, {c["failed"]} with findings')
	return stage
