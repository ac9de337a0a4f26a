# SPDX-License-Identifier: GPL-2.0
"""The subcommands of scripts/mmkunit.py (the Makefile calls them; see
README.md), and run_command(), which every command of mmkunit and
selftests.py goes through: the lock on build/, the signal handlers, and
the exit codes 0 pass / 1 test failure / 2 infrastructure / 130
interrupted."""

import argparse
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

from . import arch, deps, judge, kernel, mutate, proc, repeat, report, shard, stages, thread, tree
from .common import (BUILD, EXIT_INFRA, EXIT_INTERRUPTED, REPO, Error, count_line,
		     default_jobs, disk_warning, eprint, info, rel)
from .lock import BuildLock

DOC = """mmkunit: assemble Linux 7.3 + our series + the suites, build, run, report.

Subcommands (the Makefile calls them; see README.md):
  deps                       check / install the host packages
  assemble VARIANT           build/tree = base + VARIANT's patches + overlay
  run VARIANT [--debug]      kunit.py config/build/exec on that tree
  test                       host tests, checkpatch, series, races, pristine; one summary line

VARIANT is "series" (all of patches/series, or of the mbox SERIES=),
"pristine" (none of it), "asis" (KDIR as it is, APPLIED= says which groups
it carries), upto:N, before:GROUP, upto:GROUP or alt:NAME (the series and
patches/variants/NAME.patch).  Exit codes: 0 pass, 1 a test failed,
2 the run could not be done (build, tree, OS error), 130 interrupted.
"""


# ---------------------------------------------------------------- commands

def cmd_assemble(args) -> int:
	print(tree.assemble(args.variant))
	return 0


def finish(command: str, ss: List[report.Stage], t0: float) -> int:
	"""Write summary.json and junit.xml, print the count line; exit code."""
	code = report.exit_code(ss)
	out = report.write(command, ss, time.monotonic() - t0, code)
	info(f'results: {rel(out)}/summary.json, {rel(out)}/junit.xml')
	return code


def cmd_run(args) -> int:
	t0 = time.monotonic()
	kcsan = {}
	if args.kcsan:
		if args.debug:
			raise Error('--kcsan and --debug exclude each other (KCSAN and KASAN)')
		kcsan = dict(kunitconfigs=list(tree.SUITE_KUNITCONFIGS) + [tree.KCSAN_KUNITCONFIG],
			     name=args.variant.replace(':', '-') + '-kcsan',
			     timeout=args.timeout or 1800)
	st = stages.run_variant(args.variant, debug=args.debug, jobs=args.jobs,
				timeout=kcsan.pop('timeout', args.timeout),
				filter_glob=args.filter_glob, with_slow=args.slow, **kcsan)
	code = finish('run', [st], t0)
	if st.error:
		raise thread.SeriesOutcome(st.outcome, st.error) if st.outcome else Error(st.error)
	print(report.hook_line([st]))
	print(count_line(st.counts))
	return code


def cmd_test(args) -> int:
	t0 = time.monotonic()
	low = disk_warning()
	if low:
		info('warning: ' + low)
	sfx = ('-debug' if args.debug else '') + arch.current().suffix
	ss = [stages.host_tests(), stages.checkpatch()]
	variants = list(args.variants)
	if 'nohooks' in variants and (tree.series_mbox() or args.debug or
				      not any(tree.is_test_hook(p) for p in tree.read_series())):
		# A posted series is judged with the hooks that apply to it.
		# Under the debug options the series kernel (every hook in)
		# covers the feature code; nohooks differs only by the hooks
		# and would add a third cold debug build to make test-debug.
		variants.remove('nohooks')
	hooksoff, why_not = '', ''
	for v in variants:
		st = stages.run_variant(v, debug=args.debug, jobs=args.jobs, timeout=args.timeout)
		ss.append(st)
		if v == 'nohooks' and 'series' in variants:
			# the series without the hooks' option against the series
			# without the hook patches: the same code (text_check())
			if hooksoff and not st.error:
				ss.append(stages.text_check(
					hooksoff, stages.out_dir('nohooks' + arch.current().suffix)))
			else:
				why = why_not or ('the nohooks kernel did not build' if st.error else
						  'the series was not run before nohooks')
				ss.append(report.Stage(name='hooks-off text' + sfx,
						       error=f'not run: {why}', arch=arch.current().name))
				info(f'hooks-off text{sfx}: not run: {why}')
		if v == 'series' and 'nohooks' in variants and not st.error:
			hooksoff, why_not = stages.hooksoff_build(args.jobs)
		elif v == 'series' and st.error:
			why_not = 'the series kernel did not build'
		if v == 'series':
			# The race suites are KUNIT_CASE_SLOW, left out above by
			# speed>slow: boot the same kernel again for them alone,
			# never a kernel an earlier build left.
			if st.error:
				ss.append(report.Stage(name='races' + sfx,
						       error='not run: the series kernel did not build',
						       arch=arch.current().name))
				info(f'races{sfx}: not run: the series kernel did not build')
			else:
				ss.append(stages.run_variant(v, debug=args.debug, jobs=args.jobs,
							     timeout=args.timeout, build=False,
							     filter_glob=stages.RACE_GLOB,
							     slow_only=True, name='races',
							     build_name='series'))
	if 'nohooks' not in variants:
		info(f'hooks-off text{sfx}: not run: no nohooks kernel in this run (' + (
			'a posted series' if tree.series_mbox() else 'the debug options'
			if args.debug else 'not asked for') + ')')
	report.print_stages(ss)
	code = finish('test', ss, t0)
	print(report.hook_line(ss))
	print(count_line(report.total(ss)))
	return code


def cmd_judge(args) -> int:
	"""Judge a guest log of a kernel built and booted elsewhere: kunit's
	results, expected-before for the groups it carries, splats, a stop."""
	t0 = time.monotonic()
	with open(args.log, errors='replace') as f:
		lines = f.readlines()
	kdir = args.kunit_dir or os.environ.get('MMKUNIT_KUNIT_DIR') or \
		os.path.join(tree.TREE, 'tools/testing/kunit')
	results = judge.parse_guest_log(lines, kdir)
	applied = tree.parse_applied(args.applied, '--applied')
	st = report.Stage(name=args.name, out_dir=rel(os.path.dirname(os.path.abspath(args.log))),
			  started=time.strftime('%Y-%m-%dT%H:%M:%S'))
	st.applied = applied
	st.cases = judge.judge_cases(results, applied, judge.load_expected_before(),
				     require_listed=args.require_listed)
	judge.apply_notes(st.cases, judge.scan_case_notes(lines), hooks_required=False)
	st.cases += judge.judge_guest(lines, results, False, 0)
	for n in judge.notes(st.cases):
		info(f'  {st.name}: {n}')
	code = report.exit_code([st])
	out = report.write('judge ' + args.log, [st], time.monotonic() - t0, code,
			   results=args.out or os.path.dirname(os.path.abspath(args.log)))
	info(f'results: {rel(out)}/summary.json, {rel(out)}/junit.xml')
	print(report.hook_line([st]))
	print(count_line(st.counts))
	return code


# ------------------------------------------------------------ series-check

SERIES_CHECK_DIR = os.path.join(BUILD, 'series-check')


def prefix_name(series: List[str], k: int) -> str:
	"""Prefix @k of @series as series-check and bench-matrix name it: the
	patch it ends with."""
	return tree.patch_name(series[k - 1]) if k else 'pristine 7.3'


def series_check_prefixes(n: int, lo: Optional[int], hi: Optional[int]) -> List[int]:
	"""FROM..TO of series-check (default 0..@n)."""
	lo = lo if lo is not None else 0
	hi = hi if hi is not None else n
	if not 0 <= lo <= hi <= n:
		raise Error(f'FROM={lo} TO={hi}: must be 0 <= FROM <= TO <= {n}')
	return list(range(lo, hi + 1))


def series_check_row(series: List[str], k: int, jobs: int, timeout: int) -> dict:
	"""Build and run prefix @k; its row of the matrix."""
	st = stages.run_variant(f'upto:{k}', jobs=jobs, timeout=timeout, name='series-check')
	row = {'k': k, 'patch': prefix_name(series, k),
	       'built': not st.error, 'notes': judge.notes(st.cases) if not st.error
	       else [st.error],
	       'results': {c['name']: c['status'] for c in st.cases
			   if not c['name'].startswith('guest.') and c['status'] != 'NOT RUN'},
	       'guest': [c['reason'] for c in st.cases if c['name'].startswith('guest.')]}
	if k and not st.error:
		found, excused = stages.checkpatch_findings(
			tree.TREE, tree.patch_file(series[k - 1]))
		row['checkpatch'] = '!!' if found else 'ok'
		if excused:
			info(f'checkpatch: patch {k}: excused {excused} finding(s): '
			     f'{stages.TRACE_EVENT_WHY} (docs/architecture.rst)')
	return row


def matrix_text(rows: List[dict], missing: Optional[Dict[str, List[int]]] = None
		) -> Tuple[str, dict]:
	"""The matrix of @rows (analysed: report.analyse_matrix()) and its
	analysis; @missing: the shards a merge lacks, and their prefixes."""
	an = report.analyse_matrix(rows)
	text = report.format_matrix(rows, an)
	for r in rows:
		for g in r['guest']:
			text += f'\nGUEST: prefix {r["k"]}: {g}'
	for s, ks in (missing or {}).items():
		text += f'\nMISSING: shard {s}: prefixes {shard.spans(ks) or "none"} not run'
	return text, an


def matrix_exit(rows: List[dict], an: dict) -> int:
	bad = len(an['regressions']) + len(an['not_built']) + sum(
		1 for r in rows if r.get('checkpatch') == '!!') + sum(len(r['guest']) for r in rows)
	return 1 if bad else 0


def write_matrix(rows: List[dict], an: dict, text: str, data: dict) -> None:
	"""build/series-check/matrix.txt, matrix.json (@data, the rows and
	the analysis) and matrix-junit.xml."""
	os.makedirs(SERIES_CHECK_DIR, exist_ok=True)
	stem = os.path.join(SERIES_CHECK_DIR, 'matrix')
	with open(stem + '.txt', 'w') as f:
		f.write(text + '\n')
	with open(stem + '.json', 'w') as f:
		json.dump(dict({'rows': rows}, **data, **an), f, indent=1)
	with open(stem + '-junit.xml', 'w') as f:
		f.write(report.matrix_junit(rows, an))


VARIANTS_DIR = os.path.join(BUILD, 'variants')


def pinned_cases(st: report.Stage) -> List[str]:
	"""The cases that failed on an alternative: each decides on a choice
	the seeds leave open, or the alternative is wrong."""
	return [c['name'] for c in st.cases if c['verdict'] == 'fail']


def variants_text(rows: List[dict]) -> str:
	"""One line per alternative, then its pinned cases."""
	lines = []
	for r in rows:
		if r['error']:
			state = f'error: {r["error"]}'
		elif r['pinned']:
			state = f'{len(r["pinned"])} pinned'
		else:
			state = 'nothing pinned'
		lines.append(f'{r["name"]}: {r["passed"]} passed, {r["failed"]} failed, '
			     f'{r["skipped"]} skipped: {state}')
		lines += [f'  pinned: {c}' for c in r['pinned']]
	return '\n'.join(lines)


def cmd_variants(args) -> int:
	"""The suites on the series with each alternative of patches/variants/
	(VARIANT=alt:NAME): a case that fails on one is pinned."""
	names = [n for n in args.only.split(',') if n] if args.only else tree.alternatives()
	if not names:
		raise Error('make variants: no patches/variants/*.patch')
	for n in names:
		tree.alt_patch(n)
	t0 = time.monotonic()
	sts, rows = [], []
	for n in names:
		st = stages.run_variant('alt:' + n, jobs=args.jobs, timeout=args.timeout,
					filter_glob=args.filter_glob, with_slow=args.slow)
		sts.append(st)
		rows.append(dict(name=n, error=st.error, pinned=pinned_cases(st), **st.counts))
	text = variants_text(rows)
	os.makedirs(VARIANTS_DIR, exist_ok=True)
	with open(os.path.join(VARIANTS_DIR, 'report.json'), 'w') as f:
		json.dump({'variants': rows, 'elapsed_s': round(time.monotonic() - t0)}, f, indent=1)
	with open(os.path.join(VARIANTS_DIR, 'report.txt'), 'w') as f:
		f.write(text + '\n')
	print(text)
	code = finish('variants', sts, t0)
	print(count_line(report.total(sts)))
	return code


def cmd_series_check(args) -> int:
	"""Build and run every prefix of patches/series (or shard i/N's slice
	of them); the per-patch matrix."""
	series = tree.series_patches()
	ks = series_check_prefixes(len(series), args.from_, args.to)
	part = shard.parse(args.shard) if args.shard else None
	mine = shard.block(ks, *part) if part else ks
	if part:
		run = shard.run_identity('series-check', series, prefixes=[ks[0], ks[-1]],
					 hooks=tree.hooks_env())
		info(f'series-check: shard {part[0]}/{part[1]}: prefixes '
		     f'{shard.spans(mine) or "none"} of {ks[0]}..{ks[-1]}')
	t0 = time.monotonic()
	rows = [series_check_row(series, k, args.jobs, args.timeout) for k in mine]
	elapsed = time.monotonic() - t0
	if not part:
		text, an = matrix_text(rows)
		write_matrix(rows, an, text, {'elapsed_s': round(elapsed)})
		print(text)
		info(f'series-check: prefixes {ks[0]}..{ks[-1]} in {elapsed / 60:.1f} min; '
		     f'{rel(SERIES_CHECK_DIR)}/matrix.txt, matrix.json and matrix-junit.xml')
		return matrix_exit(rows, an)
	stem = os.path.join(SERIES_CHECK_DIR, shard.name(*part))
	shard.write(stem + '.json', dict(shard.record(run, *part), elapsed_s=round(elapsed),
					 rows=copy.deepcopy(rows)))
	text, an = matrix_text(rows)
	with open(stem + '.txt', 'w') as f:
		f.write(text + '\n')
	print(text)
	info(f'series-check: shard {part[0]}/{part[1]}: {len(rows)} prefix(es) in '
	     f'{elapsed / 60:.1f} min; {rel(stem)}.json and .txt; make series-check-merge '
	     'makes the matrix of all shards')
	return matrix_exit(rows, an)


def cmd_series_check_merge(args) -> int:
	"""The matrix of the shards of one series-check run, as that run
	unsharded writes it."""
	shards = shard.load(args.files, SERIES_CHECK_DIR, 'series-check')
	missing = shard.check(shards, 'series-check', lambda d: [r['k'] for r in d['rows']])
	run, n = shards[0][1]['run'], shards[0][1]['shard_count']
	ks = list(range(run['prefixes'][0], run['prefixes'][1] + 1))
	gone = {f'{s}/{n}': shard.block(ks, s, n) for s in missing}
	rows = sorted((r for _, d in shards for r in d['rows']), key=lambda r: r['k'])
	text, an = matrix_text(rows, gone)
	data = {'elapsed_s': sum(d['elapsed_s'] for _, d in shards)}
	if gone:
		data['missing_shards'] = gone
	write_matrix(rows, an, text, data)
	print(text)
	if gone:
		info(f'series-check-merge: shard(s) {", ".join(gone)} missing: prefixes '
		     f'{shard.spans([k for v in gone.values() for k in v])} not in the matrix')
	info(f'series-check-merge: {len(shards)} shard file(s) -> {rel(SERIES_CHECK_DIR)}/'
	     'matrix.txt, matrix.json and matrix-junit.xml')
	return 1 if gone else matrix_exit(rows, an)


# ------------------------------------------------------------ modules-run

# Suites that use exported symbols only (tristate in their Kconfig); each is
# (source, module name, kunit filter glob).
MODULE_SUITES = [('mm/tests/filemap_batch_kunit.c', 'filemap_batch_kunit',
		  'filemap_batch')]
BUSYBOX = kernel.BUSYBOX
MODULE_MARK = 'mm-kunit: insmod'


def modules_init_script(mods: List[str]) -> str:
	"""/init of the module initramfs: load each module, then reboot (exit)."""
	lines = ['#!/bin/busybox sh', '/bin/busybox mount -t proc proc /proc',
		 '/bin/busybox mount -t sysfs sys /sys']
	for m in mods:
		lines += [f'echo "{MODULE_MARK} {m}.ko"', f'/bin/busybox insmod /{m}.ko',
			  f'echo "{MODULE_MARK} {m}.ko returned $?"']
	# -no-reboot turns the reboot into QEMU's exit (this kernel cannot
	# power off: no ACPI)
	lines.append('/bin/busybox reboot -f')
	return '\n'.join(lines) + '\n'


def module_ktap(console: str) -> str:
	"""The console output after the first insmod mark: the modules' KTAP."""
	i = console.find(MODULE_MARK)
	return console[i:] if i >= 0 else ''


def cmd_modules_run(args) -> int:
	"""Build the tristate suites as modules against the series kernel, load
	them from an initramfs in the guest and read their KTAP."""
	arch.require_default('make modules-run')
	if not os.path.exists(BUSYBOX):
		raise Error(f'{BUSYBOX} missing: apt-get install busybox-static')
	st = stages.run_variant('series', jobs=args.jobs, timeout=args.timeout,
				filter_glob=','.join(g for _, _, g in MODULE_SUITES))
	if st.error:
		raise Error(st.error)
	out = stages.out_dir('series')
	work = os.path.join(BUILD, 'modules')
	shutil.rmtree(work, ignore_errors=True)
	src, root = os.path.join(work, 'src'), os.path.join(work, 'initramfs')
	for d in (src, os.path.join(root, 'bin'), os.path.join(root, 'proc'),
		  os.path.join(root, 'sys'), os.path.join(root, 'dev')):
		os.makedirs(d)
	with open(os.path.join(src, 'Kbuild'), 'w') as f:
		for relp, name, _ in MODULE_SUITES:
			shutil.copy(os.path.join(REPO, relp), os.path.join(src, name + '.c'))
			f.write(f'obj-m += {name}.o\n')
	with open(os.path.join(work, 'build.log'), 'w') as logf:
		r = proc.run(['make', '-C', tree.TREE, f'O={out}', f'M={src}', 'ARCH=x86_64',
			      'CC=ccache gcc', f'-j{args.jobs or default_jobs()}', 'modules'],
			     env=kernel.ccache_env(), log=logf, echo=False,
			     timeout=kernel.build_timeout(), label='modules: building')
	if not r.ok:
		print(r.tail[-3000:])
		raise Error('building the suites as modules ' +
			    ('timed out' if r.timed_out else 'failed'))
	mods = [name for _, name, _ in MODULE_SUITES]
	for m in mods:
		shutil.copy(os.path.join(src, m + '.ko'), root)
	shutil.copy(BUSYBOX, os.path.join(root, 'bin', 'busybox'))
	cpio = kernel.pack_initramfs(root, modules_init_script(mods),
				     os.path.join(work, 'initramfs.cpio'))
	cmd = kernel.qemu_cmd(os.path.join(out, kernel.IMAGE), cpio,
			      'console=ttyS0 panic=-1 rdinit=/init kunit.filter_glob=' +
			      ','.join(g for _, _, g in MODULE_SUITES))
	console = os.path.join(work, 'console.log')
	timeout = args.timeout or 300
	b = kernel.boot_initramfs(cmd, console, timeout)
	if b.timed_out:
		raise Error(f'the module guest did not exit in {timeout}s; console: {console}')
	with open(console, errors='replace') as f:
		text = f.read()
	ktap = module_ktap(text)
	if not ktap:
		raise Error(f'no "{MODULE_MARK}" line: the initramfs did not run; console: {console}')
	ktap_path = os.path.join(work, 'modules.ktap')
	with open(ktap_path, 'w') as f:
		f.write(ktap)
	jpath = os.path.join(work, 'modules.json')
	subprocess.run([sys.executable, os.path.join(tree.TREE, 'tools/testing/kunit/kunit.py'),
			'parse', '--json=' + jpath, ktap_path], cwd=tree.TREE,
		       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
	res = {}
	if os.path.isfile(jpath):
		with open(jpath) as f:
			res = judge.count_json(json.load(f))
	mc = {'passed': 0, 'failed': 0, 'skipped': 0}
	for s in res.values():
		mc['passed' if s == 'PASS' else 'skipped' if s == 'SKIP' else 'failed'] += 1
	for m in mods:
		if f'{MODULE_MARK} {m}.ko returned 0' not in text:
			mc['failed'] += 1
			info(f'modules: insmod {m}.ko did not return 0')
	if not res:
		mc['failed'] += 1
		info('modules: no KTAP results after the insmod')
	info(f'modules: {", ".join(m + ".ko" for m in mods)} loaded in the guest: '
	     f'{count_line(mc)} (console {rel(console)})')
	counts = st.counts
	totals = {k: counts[k] + mc[k] for k in mc}
	print(count_line(totals))
	return 1 if totals['failed'] else 0


# ------------------------------------------------------------ bench

BENCH_GLOB = '*_benchmark*'
BENCHREPORT = os.path.join(REPO, 'scripts', 'benchreport.py')


def bench_mode() -> Dict[str, str]:
	"""The accelerator of the benchmark boots, and whether they run in
	exact mode: single-threaded TCG with "-icount shift=0,sleep=off", the
	default where KVM is not usable (MMKUNIT_EXACT=0 turns it off).  Sets
	MMKUNIT_EXACT for the QEMU wrapper and says which mode it is."""
	accel = kernel.load_qemu_config().choose_accel()
	exact = accel != 'kvm' and os.environ.get('MMKUNIT_EXACT', '1') != '0'
	os.environ['MMKUNIT_EXACT'] = '1' if exact else '0'
	if exact:
		info('bench: exact mode: QEMU single-threaded TCG with -icount shift=0,sleep=off '
		     '(KVM is not usable here); guest time is instructions executed (1 ns = 1 '
		     'instruction), the same in every boot; MMKUNIT_EXACT=0 for wall time under '
		     'multi-threaded TCG')
	elif accel == 'kvm':
		info('bench: KVM: wall time')
	else:
		info('bench: multi-threaded TCG (MMKUNIT_EXACT=0): wall time, moves by up to '
		     '±20 % between boots')
	return {'accel': accel, 'exact': 'yes' if exact else 'no', 'arch': arch.current().name}


HOOKS_SUFFIX = '+hooks'


def bench_variant(variant: str) -> Tuple[str, bool]:
	"""(tree variant, with the test hooks' option) of a benchmark kernel:
	the suites' kunitconfig without CONFIG_MM_KUNIT_HOOKS and
	CONFIG_DEBUG_PAGE_RCU_FREE, as a distribution would build the series,
	unless the name ends in +hooks (series+hooks: what the hooks cost)."""
	if variant.endswith(HOOKS_SUFFIX):
		return variant[:-len(HOOKS_SUFFIX)], True
	return variant, False


def check_bench_variant(variant: str) -> None:
	"""Reject a bad benchmark kernel name early."""
	base, _ = bench_variant(variant)
	tree.variant_patches(base)


def bench_boot(variant: str, dest_dir: str, label: str, build: bool,
	       jobs: int, timeout: int, glob: str = '',
	       mode: Optional[Dict[str, str]] = None, build_name: str = '') -> str:
	"""Boot @variant's kernel for the benchmark suites; keep its guest log.
	@mode (bench_mode()) and the variant reach the benchmarks' BENCHENV
	line as mm_bench.* kernel parameters.  The kernel is built without the
	test hooks' option (bench_variant()), in a build directory of its own
	(<variant>-bench, or @build_name), so that the suites' builds are not
	reconfigured."""
	base, hooks = bench_variant(variant)
	if hooks and (base in ('pristine', 'nohooks') or tree.hooks_mode(base) == 'none'):
		raise Error(f'{variant}: {base} has no test hooks to build')
	name = variant.replace(':', '-').replace('+', '-') + '-bench'
	bname = (build_name + ('-hooks' if hooks else '')) if build_name else name
	env = dict(mode or {}, variant=variant)
	configs = list(tree.SUITE_KUNITCONFIGS) + ([] if hooks else [tree.NOHOOKS_KUNITCONFIG]) + \
		[tree.BENCH_BASE_KUNITCONFIG]
	st = stages.run_variant(base, jobs=jobs, timeout=timeout or 1800,
				filter_glob=glob or BENCH_GLOB, with_slow=True, build=build,
				name=name, build_name=bname, kunitconfigs=configs,
				kernel_args=[f'mm_bench.{k}={v}' for k, v in env.items()])
	if st.error:
		raise Error(st.error)
	src = os.path.join(REPO, st.out_dir, 'test.log')
	if not os.path.isfile(src):
		raise Error(f'{variant}: the guest left no log ({src})')
	dest = os.path.join(dest_dir, label + '.log')
	shutil.copyfile(src, dest)
	if st.counts['failed']:
		info(f'{variant}: a benchmark case failed; see {rel(dest)}')
	return dest


def kunit_dir() -> str:
	"""kunit_tool's directory for benchreport's parser: build/tree's,
	else MMKUNIT_KUNIT_DIR's (a merge on a machine without a tree)."""
	own = os.path.join(tree.TREE, 'tools/testing/kunit')
	if os.path.isfile(os.path.join(own, 'kunit_parser.py')):
		return own
	return os.environ.get('MMKUNIT_KUNIT_DIR') or own


def bench_report(args: List[str], out_dir: str) -> int:
	"""benchreport.py run in @out_dir (logs named relative to it stay so
	in report.json); the report printed and in report.txt."""
	env = dict(os.environ, MMKUNIT_KUNIT_DIR=kunit_dir())
	cmd = [sys.executable, BENCHREPORT] + args + [
		'--json', os.path.join(out_dir, 'report.json'), '--plots', out_dir]
	r = subprocess.run(cmd, env=env, cwd=out_dir, stdout=subprocess.PIPE, text=True)
	sys.stdout.write(r.stdout)
	sys.stdout.flush()
	with open(os.path.join(out_dir, 'report.txt'), 'w') as f:
		f.write(r.stdout)
	info(f'bench: logs, report.txt, report.json and plots in {rel(out_dir)}')
	return r.returncode


def bench_dir(label: str, sfx: Optional[str] = None) -> str:
	"""build/bench/<time>-<label><arch suffix>; @sfx: another suffix."""
	d = os.path.join(BUILD, 'bench', time.strftime('%Y%m%d-%H%M%S') + '-' +
			 label.replace(':', '-') + (arch.current().suffix if sfx is None else sfx))
	os.makedirs(d, exist_ok=True)
	return d


def cmd_bench(args) -> int:
	"""The benchmark suites on one kernel, in-boot comparisons side by side."""
	check_bench_variant(args.variant)		# reject a bad variant early
	out = bench_dir(args.variant)
	mode = bench_mode()
	logs = [bench_boot(args.variant, out, f'{args.variant}-boot{i + 1}', i == 0,
			   args.jobs, args.timeout, args.filter_glob, mode)
		for i in range(args.boots)]
	return bench_report(['inboot'] + logs, out)


def cmd_bench_compare(args) -> int:
	"""Kernels A and B booted alternately; an A/B table per benchmark."""
	for v in (args.a, args.b):
		check_bench_variant(v)
	if args.a == args.b:
		raise Error('A and B are the same kernel')
	out = bench_dir(f'{args.a}-vs-{args.b}')
	logs: Dict[str, List[str]] = {args.a: [], args.b: []}
	mode = bench_mode()
	boots = args.boots or (1 if mode['exact'] == 'yes' else 3)
	for i in range(boots):
		for v in (args.a, args.b):
			logs[v].append(bench_boot(v, out, f'{v}-boot{i + 1}', i == 0,
						  args.jobs, args.timeout, args.filter_glob, mode))
	ref = ['--ref', args.ref] if args.ref else []
	return bench_report(['compare', '--base'] + logs[args.a] + ['--new'] + logs[args.b] + ref,
			    out)


def matrix_prefixes(n: int, lo: Optional[int], hi: Optional[int], steps: str) -> List[int]:
	"""The prefixes bench-matrix measures: FROM..TO (default 0..@n), or
	the comma-separated STEPS (e.g. the group boundaries)."""
	if steps:
		if lo is not None or hi is not None:
			raise Error('give STEPS= or FROM=/TO=, not both')
		try:
			ks = sorted({int(x) for x in steps.split(',') if x.strip()})
		except ValueError:
			raise Error(f'STEPS={steps}: comma-separated prefix numbers (0 = pristine 7.3)')
	else:
		ks = list(range(lo if lo is not None else 0, (hi if hi is not None else n) + 1))
	if len(ks) < 2 or ks[0] < 0 or ks[-1] > n:
		raise Error(f'bench-matrix needs two or more prefixes within 0..{n} (got {ks})')
	return ks


def first_line(cmd: List[str]) -> str:
	"""The first line of @cmd's output ('' when it cannot run)."""
	try:
		r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
	except (OSError, subprocess.TimeoutExpired):
		return ''
	return r.stdout.strip().splitlines()[0].strip() if r.returncode == 0 and r.stdout.strip() \
		else ''


def cpu_model(cpuinfo: str = '/proc/cpuinfo') -> str:
	try:
		with open(cpuinfo) as f:
			for line in f:
				if line.startswith('model name'):
					return line.split(':', 1)[1].strip()
	except OSError:
		pass
	return ''


def bench_env(mode: Dict[str, str]) -> Dict[str, str]:
	"""What a bench-matrix shard records of its machine, all of which must
	agree for its steps to compare with another shard's: @mode (arch,
	accelerator, exact mode), the QEMU and compiler versions (instruction
	counts depend on both), and under wall time the host CPU."""
	a = arch.current()
	env = dict(mode, qemu=first_line([a.qemu, '--version']),
		   compiler=first_line([a.cross_compile + 'gcc', '--version']))
	if mode['exact'] != 'yes':
		env['cpu'] = cpu_model()
	return env


BENCH_MATRIX_DIR = os.path.join(BUILD, 'bench-matrix')
LOG_RE = re.compile(r'^upto-\d+-boot\d+\.log$')


def matrix_boots(k: int, out: str, args, mode: Dict[str, str]) -> List[str]:
	"""Prefix @k's boots: their logs' names in @out; [] when the prefix
	could not be measured."""
	logs: List[str] = []
	for i in range(args.boots):
		try:
			logs.append(os.path.basename(bench_boot(
				f'upto:{k}', out, f'upto-{k}-boot{i + 1}', i == 0, args.jobs,
				args.timeout, args.filter_glob, mode, build_name='bench-matrix')))
		except Error as e:
			info(f'bench-matrix: prefix {k} not measured: {e}')
			return []
	return logs


def matrix_report(prefixes: List[Tuple[int, str, List[str]]], threshold: float,
		  out: str) -> int:
	"""benchreport's matrix of (k, patch, logs in @out) per prefix."""
	report_args = ['matrix', '--threshold', str(threshold)]
	for k, patch, logs in prefixes:
		report_args += ['--prefix', str(k), patch, ','.join(logs) or '-']
	return bench_report(report_args, out)


def cmd_bench_matrix(args) -> int:
	"""The benchmark suites at each prefix of the series (or shard i/N's
	slice of them), in one build directory (each step recompiles what the
	next patch touched): every configuration's median and the step each
	patch causes."""
	series = tree.series_patches()
	ks = matrix_prefixes(len(series), args.from_, args.to, args.steps)
	part = shard.parse(args.shard) if args.shard else None
	mine = shard.block(ks, *part) if part else ks
	if part:
		run = shard.run_identity('bench-matrix', series, prefixes=ks,
					 suite=args.filter_glob or BENCH_GLOB, boots=args.boots,
					 threshold=args.threshold)
	out = bench_dir(f'matrix-{ks[0]}-{ks[-1]}' + (f'-{shard.name(*part)}' if part else ''))
	mode = bench_mode()
	if mode['exact'] != 'yes' and args.boots < 3:
		info('bench-matrix: not exact mode, where one boot moves by up to ±20 %: '
		     'steps of a few percent are noise; give BOOTS=3 or more')
	if part:
		info(f'bench-matrix: shard {part[0]}/{part[1]}: prefixes '
		     f'{shard.spans(mine) or "none"} of {shard.spans(ks)}')
	t0 = time.monotonic()
	prefixes = [(k, prefix_name(series, k), matrix_boots(k, out, args, mode)) for k in mine]
	missing = sum(1 for p in prefixes if not p[2])
	if part:
		path = os.path.join(BENCH_MATRIX_DIR, shard.name(*part) + '.json')
		shard.write(path, dict(shard.record(run, *part), env=bench_env(mode),
				       elapsed_s=round(time.monotonic() - t0), prefixes=[
					       {'k': k, 'patch': patch, 'logs': [
						       {'name': n, 'text': read_text(os.path.join(out, n))}
						       for n in logs]} for k, patch, logs in prefixes]))
		info(f'bench-matrix: shard {part[0]}/{part[1]}: {rel(path)} (logs included); '
		     'make bench-matrix-merge makes the report of all shards')
	rc = matrix_report(prefixes, args.threshold, out) if prefixes else 0
	return max(rc, 1) if missing else rc


def read_text(path: str) -> str:
	with open(path, errors='replace') as f:
		return f.read()


def check_bench_envs(shards: List[Tuple[str, dict]]) -> None:
	"""Refuse shards measured in different environments: a step across two
	of them would compare the machines, not the patches."""
	p0, d0 = shards[0]
	for p, d in shards[1:]:
		diff = shard.differences(d0['env'], d['env'])
		if diff:
			raise Error(f'bench-matrix-merge: {rel(p0)} and {rel(p)} were measured in '
				    'different environments (' + '; '.join(
					    f'{k}: {d0["env"].get(k) or "-"} vs {d["env"].get(k) or "-"}'
					    for k in diff) + '): steps between them would compare the '
				    'machines, not the patches')


def cmd_bench_matrix_merge(args) -> int:
	"""The report of the shards of one bench-matrix run, as that run
	unsharded prints and writes it."""
	shards = shard.load(args.files, BENCH_MATRIX_DIR, 'bench-matrix')
	missing = shard.check(shards, 'bench-matrix', lambda d: [p['k'] for p in d['prefixes']])
	check_bench_envs(shards)
	run, n = shards[0][1]['run'], shards[0][1]['shard_count']
	ks = run['prefixes']
	out = bench_dir(f'matrix-{ks[0]}-{ks[-1]}-merged', arch.lookup(run['arch']).suffix)
	got = {p['k']: p for _, d in shards for p in d['prefixes']}
	names = [p[0] for p in run['patches']]
	prefixes = []
	for k in ks:
		logs = []
		for log in got.get(k, {}).get('logs', []):
			if not LOG_RE.match(log['name']):
				raise Error(f'bench-matrix-merge: prefix {k}: log name {log["name"]!r} '
					    'is not one of make bench-matrix')
			with open(os.path.join(out, log['name']), 'w') as f:
				f.write(log['text'])
			logs.append(log['name'])
		prefixes.append((k, names[k - 1] if k else 'pristine 7.3', logs))
	rc = matrix_report(prefixes, run['threshold'], out)
	gone = {f'{s}/{n}': shard.block(ks, s, n) for s in missing}
	if gone:
		info(f'bench-matrix-merge: shard(s) {", ".join(gone)} missing: prefixes '
		     f'{shard.spans([k for v in gone.values() for k in v])} not measured')
	env = shards[0][1]['env']
	info(f'bench-matrix-merge: {len(shards)} shard file(s) -> {rel(out)}; measured with '
	     f'{env.get("qemu") or "QEMU of unknown version"}, {env.get("compiler") or "?"}')
	return max(rc, 1) if any(not p[2] for p in prefixes) else rc


# ------------------------------------------------------------ main

def add_lock_options(p: argparse.ArgumentParser) -> None:
	"""The options of a command that holds build/'s lock."""
	p.add_argument('--no-wait', action='store_true',
		       help='when another run holds build/, refuse (exit 2) instead of '
		       'waiting (also NO_WAIT=1)')
	p.set_defaults(lock=True)


def main(argv: List[str]) -> int:
	ap = argparse.ArgumentParser(prog='mmkunit', description=DOC,
				     formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = ap.add_subparsers(dest='cmd', required=True)
	sub.add_parser('deps').set_defaults(fn=deps.cmd_deps)
	a = sub.add_parser('assemble')
	a.add_argument('variant')
	a.set_defaults(fn=cmd_assemble)
	add_lock_options(a)
	for name, fn in (('run', cmd_run), ('test', cmd_test)):
		p = sub.add_parser(name)
		if name == 'run':
			p.add_argument('variant', nargs='?', default='series')
			p.add_argument('filter_glob', nargs='?', default='')
			p.add_argument('--slow', action='store_true',
				       help='also run KUNIT_CASE_SLOW cases (benchmarks)')
			p.add_argument('--kcsan', action='store_true',
				       help='add ' + tree.KCSAN_KUNITCONFIG + ' (build/out/<variant>-kcsan)')
		else:
			p.add_argument('--variants', nargs='+',
				       default=['series', 'nohooks', 'pristine'])
		p.add_argument('--debug', action='store_true',
			       help='add ' + tree.DEBUG_KUNITCONFIG)
		p.add_argument('--jobs', type=int, default=0,
			       help='build jobs (default: the CPUs this process may use)')
		p.add_argument('--timeout', type=int, default=0,
			       help='guest run timeout in seconds')
		p.set_defaults(fn=fn)
		add_lock_options(p)
	b = sub.add_parser('bench', help='benchmark suites on one kernel')
	b.add_argument('variant', nargs='?', default='series')
	b.add_argument('--boots', type=int, default=1)
	b.set_defaults(fn=cmd_bench)
	c = sub.add_parser('bench-compare', help='kernels A and B alternately')
	c.add_argument('a', help='base kernel: pristine, series, upto:N, before:GROUP, upto:GROUP')
	c.add_argument('b', help='new kernel, same forms')
	c.add_argument('--boots', type=int, default=0,
		       help='boots of each kernel (default 1 in exact mode, else 3)')
	c.add_argument('--ref', default='', help="benchreport's --ref: a configuration the change "
		       'does not touch, as the in-boot reference')
	c.set_defaults(fn=cmd_bench_compare)
	bm = sub.add_parser('bench-matrix', help='benchmark suites at each prefix of the series')
	bm.add_argument('--from', dest='from_', type=int, default=None)
	bm.add_argument('--to', type=int, default=None)
	bm.add_argument('--steps', default='', help='comma-separated prefixes instead of '
			'FROM..TO (e.g. the group boundaries)')
	bm.add_argument('--boots', type=int, default=1, help='boots per prefix (default 1: '
			'exact mode repeats itself)')
	bm.add_argument('--threshold', type=float, default=1.0,
			help='mark steps larger than this, in %% (default 1.0)')
	bm.set_defaults(fn=cmd_bench_matrix)
	bmm = sub.add_parser('bench-matrix-merge', help='one report from the JSON of bench-matrix '
			     'shards')
	bmm.add_argument('files', nargs='*', help='shard JSON files (default: '
			 'build/bench-matrix/shard-*.json)')
	bmm.set_defaults(fn=cmd_bench_matrix_merge)
	j = sub.add_parser('judge', help='judge the guest log of a kernel built and booted '
			   'elsewhere (summary.json and junit.xml next to it)')
	j.add_argument('log', help='the raw guest console (kunit.py\'s test.log)')
	j.add_argument('--applied', default='series',
		       help='patch groups the kernel carries: comma-separated, "series" '
		       '(all, the default) or "none" (pristine)')
	j.add_argument('--name', default='guest', help='stage name in the reports')
	j.add_argument('--out', default='', help='where to write summary.json and junit.xml '
		       '(default: the log\'s directory)')
	j.add_argument('--kunit-dir', default='', help='a tree\'s tools/testing/kunit for its '
		       'KTAP parser (default MMKUNIT_KUNIT_DIR, else build/tree)')
	j.add_argument('--require-listed', action='store_true',
		       help='a case of patches/expected-before that did not run fails')
	j.set_defaults(fn=cmd_judge)
	rp = sub.add_parser('repeat', help='boot the series kernel RUNS times (optionally '
			    'loaded): which cases flake')
	rp.add_argument('filter_glob', nargs='?', default='')
	rp.add_argument('--runs', type=int, default=10)
	rp.add_argument('--load', type=int, default=0,
			help='jobs of a kernel build of another tree beside the runs (0: none)')
	rp.add_argument('--races', action='store_true', help='also boot the race suites each run')
	rp.add_argument('--jobs', type=int, default=0)
	rp.add_argument('--timeout', type=int, default=0)
	rp.set_defaults(fn=repeat.cmd_repeat)
	add_lock_options(rp)
	v = sub.add_parser('variants', help='the suites on each alternative of patches/variants/: '
			   'a case that fails on one is pinned')
	v.add_argument('filter_glob', nargs='?', default='')
	v.add_argument('--only', default='', help='NAME[,NAME...] of patches/variants/')
	v.add_argument('--slow', action='store_true', help='also KUNIT_CASE_SLOW cases')
	v.add_argument('--jobs', type=int, default=0)
	v.add_argument('--timeout', type=int, default=0)
	v.set_defaults(fn=cmd_variants)
	add_lock_options(v)
	m = sub.add_parser('series-check', help='build and run every prefix of the series')
	m.add_argument('--from', dest='from_', type=int, default=None)
	m.add_argument('--to', type=int, default=None)
	m.set_defaults(fn=cmd_series_check)
	sm = sub.add_parser('series-check-merge', help='one matrix from the JSON of series-check '
			    'shards')
	sm.add_argument('files', nargs='*', help='shard JSON files (default: '
			'build/series-check/shard-*.json)')
	sm.set_defaults(fn=cmd_series_check_merge)
	mr = sub.add_parser('modules-run', help='the tristate suites as modules in the guest')
	mr.set_defaults(fn=cmd_modules_run)
	# docs/kernel-ci.rst: b4's per-patch check, KCIDB validation
	from . import b4check, kcidb
	b4c = sub.add_parser('b4-check', help="b4's review-perpatch-check-cmd: a patch mail on "
			     'stdin, JSON from the per-patch matrix on stdout')
	b4c.add_argument('--matrix', default='', help='series-check matrix.json '
			 '(default build/series-check/matrix.json)')
	b4c.add_argument('--run', action='store_true', help='measure prefixes k-1 and k first '
			 '(make series-check FROM=k-1 TO=k)')
	b4c.add_argument('--jobs', type=int, default=0)
	b4c.add_argument('--timeout', type=int, default=0)
	b4c.set_defaults(fn=b4check.cmd_b4_check)
	kc = sub.add_parser('kcidb-check', help='validate a kcidb.json against kcidb-io\'s '
			    'KCIDB 5.3 schema (python3-jsonschema)')
	kc.add_argument('file', nargs='?', default=os.path.join(report.RESULTS, 'kcidb.json'))
	kc.set_defaults(fn=lambda a: kcidb.main([a.file]))
	mu = sub.add_parser('mutate', help='mutants of each patch\'s lines, built and run '
			    '(docs/mutate.rst)')
	mu.add_argument('--patch', default='', help='numbers or names of patches, comma-separated '
			'(default: every patch of the series)')
	mu.add_argument('--budget', type=float, default=0, help='minutes; stop cleanly before '
			'a mutant that would not fit')
	mu.add_argument('--shard', default='', help='i/N: run the i-th of N deterministic slices')
	mu.add_argument('--seed', default='0', help='seed of the run order (default 0)')
	mu.add_argument('--mode', default='each', choices=mutate.MODES,
			help='each: a build per mutant; schemata: every mutant switched at boot '
			'in one build (docs/mutate.rst)')
	mu.add_argument('--per-boot', dest='per_boot', type=int, default=1,
			help='MODE=schemata: up to N switched mutants one after another in one boot '
			'(default 1: a boot per mutant; docs/mutate.rst)')
	mu.add_argument('--guests', type=int, default=1,
			help='MODE=schemata: boots of several mutants run N at a time (default 1; '
			'docs/mutate.rst)')
	mu.add_argument('--reach', default='case', choices=('case', 'suite'),
			help='boots of several: a mutant runs only the cases that reached it in the '
			'baseline (case, the default) or every case of those suites (suite)')
	mu.add_argument('--only', default='', help='name globs of the mutants to run, '
			'comma-separated (default: every mutant of the selection)')
	mu.add_argument('--alt', default='', help='NAME[,NAME...] of patches/variants/ to run '
			'with the mutants, or none (default: those of the selected patches\' lines)')
	mu.add_argument('--equivalent', default='skip', choices=('skip', 'check'),
			help='the mutants listed in patches/mutants-equivalent: counted as equivalent '
			'without a boot (skip, the default) or run, a kill reported (check)')
	mu.add_argument('--fresh', action='store_true', help='run every mutant again: no result '
			'reused from build/mutate/cache.json')
	mu.add_argument('--race-reads', dest='race_reads', type=int, default=mutate.RACE_READS,
			help='reads each lockless_read_race case checks in a race boot (default '
			f'{mutate.RACE_READS}; 0: the suite\'s own RACE_READS, as make test)')
	mu.add_argument('--filter_glob', default='', help='kunit.py filter glob of the functional '
			'boots (default: every functional suite)')
	mu.add_argument('--jobs', type=int, default=0)
	mu.add_argument('--timeout', type=int, default=0,
			help='guest timeout of a mutant in seconds (default: 5 times the baseline guest time, '
			'120-300 s)')
	mu.set_defaults(fn=mutate.cmd_mutate)
	add_lock_options(mu)
	mm = sub.add_parser('mutate-merge', help='one report from the JSON of mutate shards')
	mm.add_argument('files', nargs='*', help='shard JSON files (default: '
			'build/mutate/shard-*.json)')
	mm.set_defaults(fn=mutate.cmd_mutate_merge)
	for p in (b, c, bm):
		p.add_argument('--filter_glob', default='',
			       help=f'kunit.py filter glob (default {BENCH_GLOB})')
	for p in (bm, m):
		p.add_argument('--shard', default='', help='i/N: run the i-th of N deterministic '
			       'slices of the prefixes (contiguous blocks)')
	for p in (b, c, bm, m, mr):
		p.add_argument('--jobs', type=int, default=0)
		p.add_argument('--timeout', type=int, default=0,
			       help='guest run timeout in seconds (default 1800)')
		add_lock_options(p)
	return run_command(ap.parse_args(argv), 'mmkunit', argv)


def run_command(args, prog: str, argv: List[str]) -> int:
	"""Run the parsed subcommand under build/'s lock (when it takes it):
	2 and one line on an Error or an OS error, 130 on SIGINT/SIGTERM; every
	child process group is killed on the way out."""
	proc.install_signal_handlers()
	lock = None
	code = EXIT_INFRA
	try:
		if getattr(args, 'lock', False):
			lock = BuildLock(f'{prog} {" ".join(argv)}'.strip())
			lock.acquire(wait=not (args.no_wait or os.environ.get('NO_WAIT')))
			tree.clear_stale_git_locks()
		code = args.fn(args)
	except Error as e:
		eprint(f'{prog}: error: {e}')
		code = e.exit_code
	except OSError as e:
		where = f': {e.filename}' if e.filename else ''
		eprint(f'{prog}: error: {e.strerror or e}{where}')
	except (KeyboardInterrupt, proc.Interrupted) as e:
		n = proc.kill_all()
		what = getattr(e, 'signum', signal.SIGINT)
		eprint(f'{prog}: interrupted ({signal.Signals(what).name}); '
		       f'stopped {n} process group(s)')
		code = EXIT_INTERRUPTED
	finally:
		proc.kill_all()
		if lock and lock.fd is not None:
			record_exit(code, lock.command)
		if lock:
			lock.release()
	return code


def record_exit(code: int, command: str) -> None:
	"""build/results/last-exit: the code of the last command that held the
	lock (.ci/run exits with it; make turns every failure into 2)."""
	try:
		os.makedirs(report.RESULTS, exist_ok=True)
		with open(os.path.join(report.RESULTS, 'last-exit'), 'w') as f:
			f.write(f'{code} {command}\n')
	except OSError:
		pass
