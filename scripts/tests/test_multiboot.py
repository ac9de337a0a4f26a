# SPDX-License-Identifier: GPL-2.0
"""make mutate MUTANTS_PER_BOOT=N (scripts/mmkunit/multiboot.py): the
guest's init script for a plan (its markers, a clean check every K
mutants), run on the host under busybox sh against a fake debugfs
whose suites pass, fail, splat, taint or crash per active mutant; the
console split into spans; the verdicts of a boot (a clean boot, a kill
that reboots early, a crash in the middle, a dirty clean check, a hang
against a boot out of time); the judging of a mutant's span with
kunit_tool's parser; and MultiBoot.run() over several boots."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from mmkunit import multiboot, mutate, schemata  # noqa: E402
from mmkunit.multiboot import MARK  # noqa: E402

BUSYBOX = '/bin/busybox'
KUNIT_DIR = os.environ.get('MMKUNIT_KUNIT_DIR', os.path.join(
	os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
	'build', 'tree', 'tools', 'testing', 'kunit'))

# A busybox stand-in: what a suite does depends on the active mutant
# (files in $F: fail.ID, splat.ID, taint.ID, crash.ID, hang.ID; ID 0 is
# a clean check); "reboot" and a crash kill the script's shell.
FAKE_BB = r'''#!/bin/sh
F=$(dirname "$0")
cmd=$1
shift
case $cmd in
mount) exit 0 ;;
reboot) kill -9 $PPID; exit 0 ;;
dmesg)
	# what ran at boot is printed when a suite first runs
	if [ -f "$F/pending" ] && cat "$F"/d/kunit/*/run | grep -q 1; then
		cat "$F/pending" >> "$F/dmesg"; rm "$F/pending"
	fi
	cat "$F/dmesg"; : > "$F/dmesg"; exit 0 ;;
cat)
	case $1 in
	*/kunit/*/results)
		s=$(basename "$(dirname "$1")")
		id=$(cat "$F/d/mm_mutant/active")
		[ -f "$F/crash.$id" ] && { kill -9 $PPID; exit 0; }
		[ -f "$F/splat.$id" ] && echo "[   12.5] WARNING: CPU: 1 PID: 9 at mm/rmap.c:10 f+0x1/0x2" >> "$F/dmesg"
		[ -f "$F/taint.$id" ] && echo 512 > "$F/proc/sys/kernel/tainted"
		[ -f "$F/unreached.$id" ] || echo "[   12.6] mm_mutant: reached in $s.${s}_case: $id" >> "$F/dmesg"
		echo "[   12.7] cases kept: $(cat "$F/d/mm_mutant/cases")" >> "$F/dmesg"
		r=ok
		[ -f "$F/fail.$id" ] && r='not ok'
		printf 'KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: %s\n    1..1\n' "$s"
		printf '    %s 1 %s_case\n%s 1 %s\n' "$r" "$s" "$r" "$s"
		exit 0 ;;
	esac ;;
esac
exec /bin/busybox "$cmd" "$@"
'''


def simulate(plan, every=multiboot.CHECK_EVERY, stop=True, fail=(), splat=(), taint=(),
	     crash=(), dirty_check=False, unreached=(), boot_reach=()):
	"""Run init_script(@plan) under busybox sh on the host against the
	fake; its console lines."""
	if not os.access(BUSYBOX, os.X_OK):
		raise RuntimeError(f'{BUSYBOX} missing: apt-get install busybox-static')
	d = tempfile.mkdtemp(prefix='multiboot-')
	try:
		suites = {s for e in plan for s in e[1]}
		for s in suites:
			os.makedirs(os.path.join(d, 'd', 'kunit', s))
			open(os.path.join(d, 'd', 'kunit', s, 'run'), 'w').close()
		os.makedirs(os.path.join(d, 'd', 'mm_mutant'))
		os.makedirs(os.path.join(d, 'proc', 'sys', 'kernel'))
		os.makedirs(os.path.join(d, 'w'))
		with open(os.path.join(d, 'proc', 'uptime'), 'w') as f:
			f.write('12.50 3.00\n')
		with open(os.path.join(d, 'proc', 'sys', 'kernel', 'tainted'), 'w') as f:
			f.write('262144\n')		# TAINT_TEST, as after the first suite
		for what, ids in (('fail', fail), ('splat', splat), ('taint', taint), ('crash', crash),
				  ('unreached', unreached)):
			for i in ids:
				open(os.path.join(d, f'{what}.{i}'), 'w').close()
		if dirty_check:
			open(os.path.join(d, 'fail.0'), 'w').close()
		open(os.path.join(d, 'dmesg'), 'w').close()
		if boot_reach:
			with open(os.path.join(d, 'pending'), 'w') as f:
				f.write(f'[    1.0] mm_mutant: reached in {plan[0][1][0]}: '
					f'{",".join(map(str, boot_reach))}\n')
		bb = os.path.join(d, 'bb')
		with open(bb, 'w') as f:
			f.write(FAKE_BB)
		os.chmod(bb, 0o755)
		script = multiboot.init_script(plan, every, stop)
		script = script.replace('B=/bin/busybox', f'B={bb}', 1)
		script = script.replace('D=/sys/kernel/debug', f'D={d}/d', 1)
		script = script.replace('P=/proc', f'P={d}/proc', 1)
		script = script.replace('\nW=\n', f'\nW={d}/w\n', 1)
		p = subprocess.run([BUSYBOX, 'sh', '-c', script], stdout=subprocess.PIPE,
				   stderr=subprocess.STDOUT, text=True, timeout=60)
		# as the serial console gives them
		return [ln.replace('\n', '\r\n') for ln in p.stdout.splitlines(keepends=True)]
	finally:
		shutil.rmtree(d)


def mini_parse(ktap):
	"""suite.case -> status of the fake's KTAP (kunit_tool stands in
	for this in TestJudging)."""
	out, suite = {}, ''
	for line in ktap:
		m = re.match(r'^    # Subtest: (\w+)', line)
		if m:
			suite = m.group(1)
		m = re.match(r'^    (not )?ok \d+ (\w+)', line)
		if m and suite:
			out[f'{suite}.{m.group(2)}'] = 'FAIL' if m.group(1) else 'PASS'
	return out


def judge_span(sp):
	cases, _ = multiboot.span_cases(sp, mini_parse, [], {}, 'test')
	return {c['name']: c['reason'] for c in cases if c['verdict'] == 'fail'}


def verdicts(lines, ids, stalled=False, timed_out=False):
	con = multiboot.parse_console(lines)
	out = multiboot.decide(con, ids, judge_span, stalled, timed_out, 30.0)
	return con, {i: (v.what, sorted(v.kills)) for i, v in out.items()}


PLAN3 = [(3, ['lazyfree_thp']), (5, ['rcu_free_grace', 'lazyfree_thp']), (9, ['shmem_read'])]


class TestScript(unittest.TestCase):
	# the markers of a plan, and a clean check of the suites used since
	# the last one after every K mutants and at the end
	def test_plan(self):
		plan = [(i, ['s%d' % (i % 3)]) for i in range(1, 11)]
		text = multiboot.init_script(plan, every=8)
		calls = [ln for ln in text.splitlines() if re.match(r'^(mutant|check) ', ln)]
		self.assertEqual(calls[:8], [f'mutant {i} s{i % 3}' for i in range(1, 9)])
		self.assertEqual(calls[8], 'check s1 s2 s0')
		self.assertEqual(calls[9:], ['mutant 9 s0', 'mutant 10 s1', 'check s0 s1'])
		self.assertIn('kunit.autorun', multiboot.APPEND)
		self.assertTrue(text.rstrip().endswith('$B reboot -f'))
		self.assertEqual(text.count(f'echo "$M done"'), 1)
		# no check at all when asked for none (the debugfs baseline)
		self.assertNotIn('\ncheck ', multiboot.init_script(plan, every=0))
		for bad in ([(1, [])], [(1, ['a b'])], [(-1, ['a'])], [(1, ['a;reboot'])],
			    # a case of a suite the mutant does not run, a suite
			    # with no case kept, a case name the shell would split
			    [(1, ['a'], ['b.c'])], [(1, ['a', 'b'], ['a.c'])],
			    [(1, ['a'], ['a.c d'])]):
			with self.assertRaises(Exception):
				multiboot.init_script(bad)
		p = subprocess.run([BUSYBOX, 'sh', '-n', '-c', text], stderr=subprocess.PIPE, text=True)
		self.assertEqual(p.returncode, 0, p.stderr)


class TestCases(unittest.TestCase):
	# a mutant's suites run with the list of the cases that reach it in
	# mm_mutant/cases, cleared after it: the next mutant without a list
	# and the clean check run every case
	def test_cases_written(self):
		plan = [(3, ['lazyfree_thp', 'shmem_read'], ['lazyfree_thp.a', 'lazyfree_thp.b',
							    'shmem_read']),
			(5, ['lazyfree_thp'])]
		con = multiboot.parse_console(simulate(plan))
		kept = [[ln.split('cases kept:')[1].strip() for ln in sp.klog if 'cases kept:' in ln]
			for sp in con.spans]
		self.assertEqual([(sp.kind, sp.id) for sp in con.spans],
				 [('mutant', 3), ('mutant', 5), ('check', 0)])
		self.assertEqual(kept, [['lazyfree_thp.a lazyfree_thp.b shmem_read'] * 2, [''], ['', '']])

	# a mutant whose line ran only at boot never runs in a boot of several
	# (its switch is off at boot there): it boots on its own
	def test_boot_only_not_eligible(self):
		sch = FakeSchemata(2)
		mb = multiboot.MultiBoot(sch, 4, '/nonexistent')
		mb.ok = ['lazyfree_thp']
		self.assertTrue(mb.eligible(M('m1')) and mb.eligible(M('m2')))
		sch.boot_only = {2}
		self.assertEqual((mb.eligible(M('m1')), mb.eligible(M('m2'))), (True, False))

	# the plan entry of a mutant: its suites, and the cases of them that
	# reached it (a suite whose init or exit reached it: whole)
	def test_plan_of(self):
		sch = FakeSchemata(2)
		sch.reach = {1: {'lazyfree_thp', 'shmem_read'}, 2: {'lazyfree_thp'}}
		sch.suite_order = ['shmem_read', 'lazyfree_thp']
		sch.case_reach = {1: {'lazyfree_thp.a', 'shmem_read', 'shmem_read.x'},
				  2: {'lazyfree_thp.b', 'lazyfree_thp.a'}}
		mb = multiboot.MultiBoot(sch, 4, '/nonexistent')
		self.assertEqual(mb.plan_of(M('m1')), (1, ['shmem_read', 'lazyfree_thp'],
						       ['shmem_read', 'lazyfree_thp.a']))
		self.assertEqual(mb.plan_of(M('m2')), (2, ['lazyfree_thp'],
						       ['lazyfree_thp.a', 'lazyfree_thp.b']))
		mb.cases = False
		self.assertEqual(mb.plan_of(M('m2')), (2, ['lazyfree_thp'], []))


class TestBoots(unittest.TestCase):
	# a clean boot of 3 mutants: each its suites' KTAP and log, a passed
	# check at the end, every mutant survived
	def test_clean(self):
		lines = simulate(PLAN3)
		con, v = verdicts(lines, [3, 5, 9])
		self.assertTrue(con.ready and con.done and not con.rebooted)
		self.assertEqual([(s.kind, s.id, s.ended, s.bad) for s in con.spans],
				 [('mutant', 3, True, False), ('mutant', 5, True, False),
				  ('mutant', 9, True, False), ('check', 0, True, False)])
		self.assertEqual(con.spans[1].order, ['rcu_free_grace', 'lazyfree_thp'])
		self.assertIn('    ok 1 rcu_free_grace_case', con.spans[1].suites['rcu_free_grace'])
		self.assertTrue(any('reached in shmem_read' in ln for ln in con.spans[2].klog))
		self.assertEqual(con.spans[3].order, ['lazyfree_thp', 'rcu_free_grace', 'shmem_read'])
		self.assertEqual(v, {3: ('survived', []), 5: ('survived', []), 9: ('survived', [])})

	# a kill reboots the guest at once: the mutants before it count, the
	# next one goes into the next boot
	def test_kill_reboots(self):
		lines = simulate(PLAN3, fail=[5])
		con, v = verdicts(lines, [3, 5, 9])
		self.assertTrue(con.rebooted and not con.done)
		self.assertEqual([s.id for s in con.spans], [3, 5])
		self.assertTrue(con.spans[1].bad)
		# its first failing suite ended it
		self.assertEqual(con.spans[1].order, ['rcu_free_grace'])
		self.assertEqual(v, {3: ('survived', []), 5: ('killed', ['rcu_free_grace.rcu_free_grace_case']),
				     9: ('again', [])})

	# a splat kills and reboots; a taint the judging does not see reboots
	# too, and that mutant boots on its own
	def test_splat_and_taint(self):
		_, v = verdicts(simulate(PLAN3, splat=[3]), [3, 5, 9])
		self.assertEqual(v[3], ('killed', ['guest.splat']))
		self.assertEqual(v[5][0], 'again')
		con, v = verdicts(simulate(PLAN3, taint=[5]), [3, 5, 9])
		self.assertTrue(con.rebooted)
		self.assertEqual([v[3][0], v[5][0], v[9][0]], ['again', 'alone', 'again'])

	# a crash in the middle: the mutant begun and not ended is killed,
	# the one after it goes into the next boot
	def test_crash(self):
		lines = simulate(PLAN3, crash=[5])
		con, v = verdicts(lines, [3, 5, 9])
		self.assertFalse(con.spans[1].ended)
		self.assertEqual(con.spans[1].running, 'rcu_free_grace')
		self.assertEqual(v, {3: ('survived', []), 5: ('killed', ['guest.stopped']),
				     9: ('again', [])})

	# a failed clean check: the verdicts since the last check do not
	# count, those mutants boot on their own; the ones before stand
	def test_dirty_check(self):
		plan = [(i, ['lazyfree_thp']) for i in range(1, 6)]
		lines = simulate(plan, every=2, dirty_check=True)
		con, v = verdicts(lines, [1, 2, 3, 4, 5])
		self.assertEqual([s.kind for s in con.spans], ['mutant', 'mutant', 'check'])
		self.assertTrue(con.spans[2].bad and con.rebooted)
		self.assertEqual(v, {1: ('alone', []), 2: ('alone', []), 3: ('again', []),
				     4: ('again', []), 5: ('again', [])})
		con, v = verdicts(simulate(plan, every=2), [1, 2, 3, 4, 5])
		self.assertEqual([s.kind for s in con.spans].count('check'), 3)
		self.assertEqual({w for w, _ in v.values()}, {'survived'})

	# a console silent for the mutant timeout is a hang (killed); a boot
	# stopped at its overall limit while printing decides nothing
	def test_hang_and_time(self):
		lines = [f'{MARK} ready 12\n', f'{MARK} begin 3 1.0\n', f'{MARK} suite lazyfree_thp 1.0\n',
			 'some kernel line\n']
		_, v = verdicts(lines, [3, 5], stalled=True, timed_out=True)
		self.assertEqual(v, {3: ('killed', ['guest.stopped']), 5: ('again', [])})
		_, v = verdicts(lines, [3, 5], timed_out=True)
		self.assertEqual(v[3], ('alone', []))
		# a splat then: killed all the same
		_, v = verdicts(lines + ['[  9.0] BUG: unable to handle page fault\n'], [3], timed_out=True)
		self.assertEqual(v[3], ('killed', ['guest.splat', 'guest.stopped']))
		# a boot that died before the init script: nothing decided
		_, v = verdicts(['Kernel panic - not syncing: IO-APIC + timer doesn\'t work!\n'], [3])
		self.assertEqual(v, {3: ('again', [])})

	# a splat between two mutants (after one ended): the boot is dirty
	def test_gap(self):
		lines = simulate(PLAN3)
		end3 = next(k for k, ln in enumerate(lines) if f'{MARK} end 3 ' in ln)
		lines = lines[:end3 + 1] + [f'{MARK} dirty\n', '[ 13.0] WARNING: at mm/x.c:1\n',
					    f'{MARK} end-dirty\n', f'{MARK} reboot\n']
		_, v = verdicts(lines, [3, 5, 9])
		self.assertEqual(v, {3: ('alone', []), 5: ('again', []), 9: ('again', [])})


class TestJudging(unittest.TestCase):
	KTAP = ['KTAP version 1', '1..1', '    KTAP version 1', '    # Subtest: lazyfree_thp',
		'    1..2', '    ok 1 lazyfree_thp_clean', '        KTAP version 1',
		'        # Subtest: lazyfree_thp_ref', '        ok 1 gup-pin',
		'        not ok 2 folio-ref', '    not ok 2 lazyfree_thp_ref',
		'# lazyfree_thp: pass:1 fail:1 skip:0 total:2', 'not ok 1 lazyfree_thp']

	def parse(self, ktap):
		# kunit_tool's parser, as make mutate reads the results (needs
		# build/tree or $MMKUNIT_KUNIT_DIR, as test_benchreport does)
		from mmkunit import judge
		if not os.path.isfile(os.path.join(KUNIT_DIR, 'kunit_parser.py')):
			raise RuntimeError(f'kunit_parser.py not found in {KUNIT_DIR}: run make tree, or '
					   'set MMKUNIT_KUNIT_DIR to a kernel tree\'s tools/testing/kunit')
		return judge.parse_guest_log(ktap, KUNIT_DIR)

	# a mutant's span judged as its own boot would be: the failing
	# parameter by kunit_tool's name, a splat in its log, a crash
	def test_span(self):
		sp = multiboot.Span('mutant', 3, ended=True, order=['lazyfree_thp'],
				    suites={'lazyfree_thp': self.KTAP},
				    klog=['[ 2.0] mm_mutant: reached in lazyfree_thp: 3',
					  '[ 2.1] # lazyfree_thp_ref: WARNING: not a splat, a KTAP comment'])
		cases, whole = multiboot.span_cases(sp, self.parse, [], {})
		failed = sorted(c['name'] for c in cases if c['verdict'] == 'fail')
		self.assertTrue(whole)
		self.assertEqual(failed, ['lazyfree_thp.lazyfree_thp_ref.folio-ref'])
		sp.klog.append('[ 2.2] BUG: KASAN: use-after-free in folio_put+0x1/0x2')
		cases, _ = multiboot.span_cases(sp, self.parse, [], {})
		self.assertIn('guest.splat', [c['name'] for c in cases if c['verdict'] == 'fail'])
		# begun, not ended: stopped while running its second suite
		sp2 = multiboot.Span('mutant', 4, order=['lazyfree_thp', 'shmem_read'],
				     suites={'lazyfree_thp': self.KTAP}, running='shmem_read',
				     console=['BUG: kernel NULL pointer dereference, address: 0'])
		con = multiboot.parse_console([f'{MARK} begin 4 1.0\r\n', f'{MARK} suite shmem_read 1.1\r\n',
						'    # shmem_read_batch: EXPECTATION FAILED at mm/tests/x.c:9\r\n'])
		sp2.failing = con.spans[0].failing
		self.assertEqual(sp2.failing, ['shmem_read.shmem_read_batch'])
		cases, whole = multiboot.span_cases(sp2, self.parse, [], {}, 'no output for 120 s')
		names = {c['name']: c['reason'] for c in cases if c['verdict'] == 'fail'}
		self.assertFalse(whole)
		self.assertIn('while running shmem_read', names['guest.stopped'])
		self.assertIn('guest.splat', names)
		self.assertIn('lazyfree_thp.lazyfree_thp_ref.folio-ref', names)
		self.assertEqual(names['shmem_read.shmem_read_batch'], 'kunit: FAIL')


class TestStall(unittest.TestCase):
	# proc.run(stall=): a child silent that long is stopped as stalled;
	# with stall_on, lines without the marker (a guest printing stall
	# reports) do not count as progress
	def test_stall(self):
		from mmkunit import proc
		r = proc.run(['sh', '-c', 'echo a; sleep 30'], echo=False, timeout=60, stall=1)
		self.assertTrue(r.timed_out and r.stalled)
		self.assertLess(r.seconds, 20)
		r = proc.run(['sh', '-c', f'echo "{MARK} begin 1"; while :; do echo noise; sleep 0.2; done'],
			     echo=False, timeout=60, stall=1, stall_on=MARK)
		self.assertTrue(r.stalled)
		self.assertLess(r.seconds, 20)
		r = proc.run(['sh', '-c', 'for i in 1 2 3 4 5 6; do echo x; sleep 0.3; done'],
			     echo=False, timeout=60, stall=1)
		self.assertTrue(r.ok and not r.stalled)

	# proc.run(stop_on=): the first line it says yes to stops the child
	# stop_grace seconds later, neither stalled nor at the overall limit
	def test_stop_on(self):
		from mmkunit import proc
		r = proc.run(['sh', '-c', 'echo a; echo STOP; echo b; sleep 30'], echo=False,
			     timeout=60, stop_on=lambda ln: 'STOP' in ln, stop_grace=0.5)
		self.assertTrue(r.timed_out and not r.stalled)
		self.assertEqual(r.stopped_on, 'STOP')
		self.assertLess(r.seconds, 20)
		r = proc.run(['sh', '-c', 'echo a; echo STOP'], echo=False, timeout=60,
			     stop_on=lambda ln: 'STOP' in ln, stop_grace=5)
		self.assertTrue(r.ok and r.stopped_on == '')

	# the Stopper of a boot of several: a splat anywhere; a case failure
	# only inside a mutant's suite, and not one the baseline fails
	def test_stopper(self):
		st = multiboot.Stopper({'rcu_free_grace.known.param'})
		lines = [f'{MARK} ready 2', '    # lazyfree_thp_x: EXPECTATION FAILED at a.c:1',
			 f'{MARK} begin 7 0.1', f'{MARK} suite rcu_free_grace 0.2',
			 '[    1.0] rcu: something', '    # known: EXPECTATION FAILED at a.c:2',
			 f'{MARK} results rcu_free_grace 3.0',
			 '    # other: EXPECTATION FAILED at a.c:3', f'{MARK} end 7 0 3.1',
			 f'{MARK} check 3.2', f'{MARK} suite rcu_free_grace 3.3',
			 '    # other: ASSERTION FAILED at a.c:3']
		self.assertEqual([st(ln + '\n') for ln in lines], [False] * len(lines))
		st = multiboot.Stopper(set())
		self.assertFalse(st(f'{MARK} begin 8 0.1'))
		self.assertFalse(st(f'{MARK} suite rcu_free_grace 0.2'))
		self.assertTrue(st('    # other: ASSERTION FAILED at a.c:3\r\n'))
		self.assertTrue(multiboot.Stopper(set())('[    2.5] BUG: unable to handle page fault'))
		self.assertFalse(multiboot.Stopper({'guest.splat'})('[    2.5] WARNING: CPU: 0 PID: 1'))

	# a mutant stopped at its failing case is killed by that case (and the
	# stopped guest), not sent to a boot of its own as a boot out of time
	def test_decide_stopped(self):
		lines = [f'{MARK} ready 1', f'{MARK} begin 3 0.1', f'{MARK} suite lazyfree_thp 0.2',
			 '    # lazyfree_thp_case: EXPECTATION FAILED at a.c:1']
		con = multiboot.parse_console([ln + '\n' for ln in lines])

		def judge_span(sp):
			cases, _w = multiboot.span_cases(sp, mini_parse, [], {})
			return mutate.Runner.failed(cases)
		out = multiboot.decide(con, [3], judge_span, False, True, 5.0, True)
		self.assertEqual(out[3].what, 'killed')
		self.assertIn('lazyfree_thp.lazyfree_thp_case', out[3].kills)
		out = multiboot.decide(con, [3], judge_span, False, True, 5.0, False)
		self.assertEqual(out[3].what, 'alone')

	# the hang bound of a boot: three times its longest suite and 20 s,
	# at most the mutant timeout
	def test_stall_for(self):
		mb = multiboot.MultiBoot(FakeSchemata(2), 4, '/nonexistent')
		mb.seconds = {'lazyfree_thp': 5.0, 'rcu_free_grace': 20.0}
		mb.sch.base.timeout = 300
		self.assertEqual(mb.stall_for([(1, ['lazyfree_thp'])]), 35)
		self.assertEqual(mb.stall_for([(1, ['lazyfree_thp']), (2, ['rcu_free_grace'])]), 80)
		self.assertEqual(mb.stall_for([(1, ['not_timed'])]), 200)
		mb.sch.base.timeout = 50
		self.assertEqual(mb.stall_for([(1, ['lazyfree_thp']), (2, ['rcu_free_grace'])]), 50)

	# a hang is judged by the suite that runs: the Stopper's stall() follows
	# the markers, and proc.run(stall_of=) stops a silent short suite at
	# its own limit, not the longest suite's of the boot
	def test_stall_per_suite(self):
		from mmkunit import proc
		st = multiboot.Stopper(set())
		st.limits, st.between = {'fast': 1.0, 'slow': 30.0}, 30.0
		self.assertEqual(st.stall(), 30.0)
		st(f'{MARK} begin 1 1.0')
		st(f'{MARK} suite fast 1.1')
		self.assertEqual(st.stall(), 1.0)
		st(f'{MARK} results fast 1.2')
		self.assertEqual(st.stall(), 30.0)
		st = multiboot.Stopper(set())
		st.limits, st.between = {'fast': 1.0, 'slow': 30.0}, 30.0
		r = proc.run(['sh', '-c', f'echo "{MARK} begin 1 1.0"; echo "{MARK} suite fast 1.1"; sleep 30'],
			     echo=False, timeout=60, stall=30, stall_on=MARK, stop_on=st,
			     stall_of=st.stall)
		self.assertTrue(r.stalled)
		self.assertLess(r.seconds, 10)


class FakeBase:
	groups, expected, timeout, glob = [], {}, 60, ''
	failed = staticmethod(mutate.Runner.failed)
	killer = staticmethod(mutate.Runner.killer)


class FakeSchemata:
	"""schemata.SchemataRunner as MultiBoot uses it: mutants 1..n reached
	by one suite each; run() (a boot of its own) says survived."""

	def __init__(self, n):
		self.base = FakeBase()
		self.tree_dir = self.build_dir = '/nonexistent'
		self.ids = {f'm{i}': i for i in range(1, n + 1)}
		self.reach = {i: {'lazyfree_thp'} for i in range(1, n + 1)}
		self.case_reach = {i: {'lazyfree_thp.lazyfree_thp_case'} for i in range(1, n + 1)}
		self.race_reach = {}
		self.suite_order = ['lazyfree_thp']
		self.base_fail = set()
		self.alone_runs = []
		self.concluded = []

	def switched(self, name):
		return True

	def cases_of(self, m, suites):
		return schemata.SchemataRunner.cases_of(self, m, suites)

	def conclude(self, m, o, kills, log, races_done=False):
		self.concluded.append((m.name, races_done))
		return _conclude(self, m, o, kills)

	def run(self, m, log):
		self.alone_runs.append(m.name)
		return mutate.Outcome('survived')


def _conclude(sch, m, o, kills):
	if kills:
		o.status, o.killer = 'killed', sch.base.killer(kills)
		o.reason, o.killers = kills[o.killer], sorted(kills)
	return o


class M:
	def __init__(self, name):
		self.name = name
		self.races = False


def simulated(sch, per_boot, **how):
	"""A MultiBoot over @sch whose boots are simulate()d with @how (every
	boot alike), @per_boot mutants at most each."""
	mb = multiboot.MultiBoot(sch, per_boot, tempfile.mkdtemp(prefix='multiboot-logs-'))
	mb.ok = ['lazyfree_thp']
	mb.parse = mini_parse

	def boot(plan, tag, every, stop, timeout, stall=0):
		lines = simulate(plan, **how)
		mb.boots += 1
		r = type('R', (), {'stalled': False, 'timed_out': False, 'seconds': 10.0,
				  'stopped_on': ''})
		return multiboot.parse_console(lines), r, os.path.join(mb.logs, 'x.log')
	mb.boot = boot
	return mb


def two_guests(sch, per_boot=3):
	"""A MultiBoot over @sch with two guests, its boots still to fake."""
	mb = multiboot.MultiBoot(sch, per_boot, tempfile.mkdtemp(prefix='multiboot-logs-'))
	mb.ok = ['lazyfree_thp']
	mb.parse = mini_parse
	mb.guests = 2
	return mb


def until_stopped(mb, what):
	"""A guest of @mb that runs until run() stops it (as kill_all would)."""
	if not mb._stop.wait(30):
		raise AssertionError(f'{what} was not stopped')
	raise multiboot.Error('killed')


class TestRun(unittest.TestCase):
	# MultiBoot.run() over simulated boots: a kill ends a boot and the next
	# one starts after it, a crash kills, a failed check sends the mutants
	# since the last check to boots of their own
	def test_run(self):
		sch = FakeSchemata(12)
		mb = multiboot.MultiBoot(sch, 6, tempfile.mkdtemp(prefix='multiboot-logs-'))
		mb.ok = ['lazyfree_thp']
		mb.parse = mini_parse
		plans = []

		def boot(plan, tag, every, stop, timeout, stall=0):
			plans.append([e[0] for e in plan])
			self.assertTrue(all(e[2] == ['lazyfree_thp.lazyfree_thp_case'] for e in plan))
			first = len(plans) == 1
			lines = simulate(plan, every=3, fail=[2, 9], crash=[4],
					 dirty_check=(len(plans) == 3))
			path = os.path.join(mb.logs, f'multiboot-{tag}.log')
			with open(path, 'w') as f:
				f.writelines(lines)
			mb.boots += 1
			r = type('R', (), {'stalled': False, 'timed_out': False, 'seconds': 10.0,
					  'stopped_on': ''})
			self.assertTrue(first or plan[0][0] != 1)
			return multiboot.parse_console(lines), r, path

		mb.boot = boot
		ms = [M(f'm{i}') for i in range(1, 13)]
		out = mb.run(ms, lambda m: os.path.join(mb.logs, m.name + '.log'))
		status = {n: (o.status, o.killer) for n, (o, _s) in out.items()}
		# boot 1: 1 survives, 2 killed (reboot); boot 2: 3 survives, 4
		# crashes; boot 3: 5, 6, 7 then a failed check -> each alone; boot
		# 4: 8 survives, 9 killed; boot 5: 10..12, the check passes
		self.assertEqual(plans, [[1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7, 8], [5, 6, 7, 8, 9, 10],
					 [8, 9, 10, 11, 12], [10, 11, 12]])
		self.assertEqual(status['m2'], ('killed', 'lazyfree_thp.lazyfree_thp_case'))
		self.assertEqual(status['m4'], ('killed', 'guest.stopped'))
		self.assertEqual(status['m9'][0], 'killed')
		self.assertEqual(sorted(sch.alone_runs), ['m5', 'm6', 'm7'])
		for n in ('m1', 'm3', 'm5', 'm6', 'm7', 'm8', 'm10', 'm11', 'm12'):
			self.assertEqual(status[n][0], 'survived', n)
		with open(os.path.join(mb.logs, 'm5.log')) as f:
			self.assertIn('the clean check after it failed', f.read())
		shutil.rmtree(mb.logs)

	# what ran at boot (a mutant's init code: the switch was off then) is
	# printed when the first suite runs: the guest runs that suite with no
	# case kept before the first mutant, so the first mutant's span does
	# not take it for its own, and that mutant boots alone
	def test_boot_reach_not_in_first_span(self):
		sch = FakeSchemata(2)
		mb = simulated(sch, 4, unreached=[1], boot_reach=[1])
		out = mb.run([M('m1'), M('m2')], lambda m: os.path.join(mb.logs, m.name + '.log'))
		self.assertEqual(sch.alone_runs, ['m1'])
		self.assertEqual({n: o.status for n, (o, _s) in out.items()},
				 {'m1': 'survived', 'm2': 'survived'})
		shutil.rmtree(mb.logs)

	# two boots at once (guests=2): they overlap, no mutant is in two of
	# them at the same time, and every verdict is the one a boot at a
	# time gives
	def test_guests(self):
		import threading
		import time as _time

		def go(guests):
			sch = FakeSchemata(12)
			mb = multiboot.MultiBoot(sch, 3, tempfile.mkdtemp(prefix='multiboot-logs-'))
			mb.ok = ['lazyfree_thp']
			mb.parse = mini_parse
			mb.guests = guests
			lock = threading.Lock()
			held, most = set(), [0]
			flying = [0]
			tags = []

			def boot(plan, tag, every, stop, timeout, stall=0):
				ids = {e[0] for e in plan}
				with lock:
					tags.append(tag)
					self.assertFalse(ids & held, f'{ids & held} in two boots at once')
					held.update(ids)
					flying[0] += 1
					most[0] = max(most[0], flying[0])
				# wait (a while at most) for the other guest to be in flight
				t = _time.monotonic() + 2
				while guests > 1 and flying[0] < 2 and _time.monotonic() < t:
					_time.sleep(0.01)
				lines = simulate(plan, every=3, fail=[2, 9], crash=[7])
				path = os.path.join(mb.logs, f'multiboot-{tag}.log')
				with open(path, 'w') as f:
					f.writelines(lines)
				with lock:
					held.difference_update(ids)
					flying[0] -= 1
					mb.boots += 1
				r = type('R', (), {'stalled': False, 'timed_out': False, 'seconds': 10.0,
						  'stopped_on': ''})
				return multiboot.parse_console(lines), r, path
			mb.boot = boot
			ms = [M(f'm{i}') for i in range(1, 13)]
			out = mb.run(ms, lambda m: os.path.join(mb.logs, m.name + '.log'))
			shutil.rmtree(mb.logs)
			self.assertEqual(len(tags), len(set(tags)), tags)
			self.assertEqual(sch.alone_runs, [])
			return {n: (o.status, o.killer) for n, (o, _s) in out.items()}, most[0]
		one, most1 = go(1)
		two, most2 = go(2)
		self.assertEqual((most1, most2), (1, 2))
		self.assertEqual(one, two)
		self.assertEqual([n for n, v in sorted(two.items()) if v[0] == 'killed'],
				 ['m2', 'm7', 'm9'])

	# the boots of their own (kunit.py, the lane) run beside the boots of
	# several, one at a time; a survivor's race boot goes there too; every
	# mutant's outcome reaches on_result once, as soon as it is known
	def test_lane_beside_boots(self):
		import threading
		import time as _time
		sch = FakeSchemata(10)
		sch.races_for = {'m3'}
		sch.race_boot_needed = lambda m, kills, done: m.name in sch.races_for and not kills
		mb = simulated(sch, 2, fail=[2])
		mb.guests = 2
		lock = threading.Lock()
		state = {'several': 0, 'lane': 0, 'overlap': 0, 'lanes_at_once': 0}
		boot = mb.boot

		def slow_boot(*a, **k):
			with lock:
				state['several'] += 1
				if state['lane']:
					state['overlap'] += 1
			_time.sleep(0.05)
			try:
				return boot(*a, **k)
			finally:
				with lock:
					state['several'] -= 1
		mb.boot = slow_boot

		def lane_work(name):
			with lock:
				state['lane'] += 1
				state['lanes_at_once'] = max(state['lanes_at_once'], state['lane'])
				if state['several']:
					state['overlap'] += 1
			_time.sleep(0.2)
			with lock:
				state['lane'] -= 1
		run = sch.run
		sch.run = lambda m, log: (lane_work(m.name), run(m, log))[1]
		conclude = sch.conclude

		def conclude_lane(m, o, kills, log, races_done=False):
			if sch.race_boot_needed(m, kills, races_done):
				self.assertIsNot(threading.current_thread(), threading.main_thread())
				lane_work(m.name)
			return conclude(m, o, kills, log, races_done)
		sch.conclude = conclude_lane
		ms = [M(f'm{i}') for i in range(1, 9)]
		own = [M('m9'), M('m10')]
		got = []
		def on_result(m, o, seconds):
			self.assertIs(threading.current_thread(), threading.main_thread())
			got.append(m.name)
		out = mb.run(ms, lambda m: os.path.join(mb.logs, m.name + '.log'), own=own,
			     on_result=on_result)
		self.assertEqual(sorted(got), sorted(m.name for m in ms + own))
		self.assertEqual(set(out), set(got))
		self.assertEqual(sorted(sch.alone_runs), ['m10', 'm9'])
		self.assertEqual(state['lanes_at_once'], 1)
		self.assertGreater(state['overlap'], 0)
		self.assertEqual(out['m2'][0].status, 'killed')
		self.assertIn(('m3', False), sch.concluded)
		shutil.rmtree(mb.logs)

	# a boot that fails (an error in a worker) ends run() at once: the
	# other guest in flight is stopped, not waited for
	def test_guest_error(self):
		import time as _time
		mb = two_guests(FakeSchemata(6))

		def boot(plan, tag, every, stop, timeout, stall=0):
			if plan[0][0] == 1:
				_time.sleep(0.2)
				raise multiboot.Error('cpio failed')
			until_stopped(mb, 'the other guest')
		mb.boot = boot
		t = _time.monotonic()
		with self.assertRaisesRegex(multiboot.Error, 'cpio failed'):
			mb.run([M(f'm{i}') for i in range(1, 7)], lambda m: os.path.join(mb.logs, 'x.log'))
		self.assertLess(_time.monotonic() - t, 10)
		shutil.rmtree(mb.logs)

	# a boot of several that fails while a boot of its own is in flight
	# ends run() at once: the lane's guest is stopped, not waited for
	def test_lane_error(self):
		import time as _time
		sch = FakeSchemata(4)
		mb = two_guests(sch)

		def boot(plan, tag, every, stop, timeout, stall=0):
			_time.sleep(0.2)
			raise multiboot.Error('cpio failed')
		mb.boot = boot
		sch.run = lambda m, log: until_stopped(mb, 'the lane')
		t = _time.monotonic()
		with self.assertRaisesRegex(multiboot.Error, 'cpio failed'):
			mb.run([M('m1'), M('m2')], lambda m: os.path.join(mb.logs, 'x.log'),
			       own=[M('m3')])
		self.assertLess(_time.monotonic() - t, 10)
		shutil.rmtree(mb.logs)

	# a survivor whose switch did not run in its own span (the baseline
	# saw it run in work no case owns) is not taken as survived: it
	# boots on its own, with whole suites
	def test_unreached_survivor_alone(self):
		sch = FakeSchemata(3)
		mb = simulated(sch, 4, unreached=[2])
		out = mb.run([M('m1'), M('m2'), M('m3')], lambda m: os.path.join(mb.logs, m.name + '.log'))
		self.assertEqual(sch.alone_runs, ['m2'])
		self.assertEqual({n: o.status for n, (o, _s) in out.items()},
				 {'m1': 'survived', 'm2': 'survived', 'm3': 'survived'})
		with open(os.path.join(mb.logs, 'm2.log')) as f:
			self.assertIn('its line did not run in its span', f.read())
		shutil.rmtree(mb.logs)


class TestSkips(unittest.TestCase):
	# a case that passes at boot and skips when its suite runs again from
	# debugfs keeps its suite's mutants out of boots of several; a clean
	# check where a case that passed both debugfs runs skips is dirty
	def spans(self, statuses):
		out = []
		for st in statuses:
			sp = multiboot.Span('mutant', 0, ended=True)
			sp.order = ['lazyfree_thp']
			sp.suites = {'lazyfree_thp': ['ok 1 lazyfree_thp', st]}
			out.append(sp)
		return out

	def baseline(self, statuses):
		sch = FakeSchemata(1)
		sch.base_pass = {'lazyfree_thp.x'}
		mb = multiboot.MultiBoot(sch, 4, '/nonexistent')
		con = multiboot.Console(ready=True, done=True, spans=self.spans(statuses))
		r = type('R', (), {'seconds': 5.0})
		mb.boot = lambda *a, **k: (con, r, '/nonexistent/x.log')
		mb.parse = lambda ktap: {'lazyfree_thp.x': ktap[1]}
		mb.baseline(['lazyfree_thp'])
		return mb

	def test_baseline_skip(self):
		mb = self.baseline(['PASS', 'PASS'])
		self.assertEqual((mb.ok, mb.passing), (['lazyfree_thp'], {'lazyfree_thp.x'}))
		mb = self.baseline(['PASS', 'SKIP'])
		self.assertEqual((mb.ok, mb.passing), ([], set()))

	# with two guests the debugfs baseline is two boots at once, each
	# running its share of the suites twice in the baseline's order; a
	# suite failing in one share keeps only its own mutants out
	def test_baseline_shared_among_guests(self):
		import threading as _threading
		sch = FakeSchemata(1)
		suites = ['s_a', 's_b', 'lockless_read_race', 's_c']
		sch.base_pass = {'s_a.x', 's_a.y', 's_a.z', 's_b.x', 's_c.x', 'lockless_read_race.x'}
		mb = multiboot.MultiBoot(sch, 4, '/nonexistent')
		mb.guests = 2
		plans, inside, most = {}, [0], [0]
		lock = _threading.Lock()
		both = _threading.Barrier(2, timeout=10)

		def boot(plan, tag, every, stop, timeout, stall=0):
			with lock:
				plans[tag] = plan
				inside[0] += 1
				most[0] = max(most[0], inside[0])
			both.wait()		# both guests in flight at once
			spans = []
			for _i, part in plan:
				sp = multiboot.Span('mutant', 0, ended=True)
				sp.order = list(part)
				sp.suites = {x: ['ok 1 ' + x, 'FAIL' if x == 's_b' else 'PASS']
					     for x in part}
				spans.append(sp)
			with lock:
				inside[0] -= 1
			return (multiboot.Console(ready=True, done=True, spans=spans),
				type('R', (), {'seconds': 5.0}), f'/nonexistent/{tag}.log')
		mb.boot = boot
		mb.parse = lambda ktap: {ktap[0].split()[2] + '.x': ktap[1]}
		mb.baseline(suites)
		self.assertEqual(most[0], 2)
		self.assertEqual(sorted(plans), ['baseline', 'baseline-2'])
		shares = [p[0][1] for p in plans.values()]
		for p in plans.values():
			self.assertEqual(p[0], p[1])		# its share, twice
		self.assertEqual(sorted(x for sh in shares for x in sh), sorted(suites))
		for sh in shares:
			self.assertEqual(sh, [x for x in suites if x in sh])	# in order
		# s_a (3 cases) and the race suite (10) apart
		self.assertFalse(any('s_a' in sh and 'lockless_read_race' in sh for sh in shares))
		self.assertEqual(mb.ok, ['s_a', 'lockless_read_race', 's_c'])
		self.assertEqual(mb.passing, {'s_a.x', 'lockless_read_race.x', 's_c.x'})

	def test_check_skip(self):
		mb = self.baseline(['PASS', 'PASS'])
		check, mutant = self.spans(['SKIP', 'SKIP'])
		check.kind = 'check'
		self.assertIn('lazyfree_thp.x', mb.judge_span(check))
		self.assertEqual(mb.judge_span(mutant), {})
		check.suites['lazyfree_thp'][1] = 'PASS'
		self.assertEqual(mb.judge_span(check), {})

	# a race baseline that stopped or splatted: its guest.* kills no
	# functional mutant less, and the race suites keep their own boot
	def test_race_guest(self):
		sch = FakeSchemata(1)
		sch.race_reach = {1: {'lockless_read_race'}}
		sch.base_race_fail = {'guest.splat', 'lockless_read_race.y'}
		mb = multiboot.MultiBoot(sch, 4, '/nonexistent')
		mb.ok = ['lazyfree_thp', 'lockless_read_race']
		m = M('m1')
		m.races = True
		self.assertEqual(mb.base_fails(), {'lockless_read_race.y'})
		self.assertFalse(mb.races_here(m))
		sch.base_race_fail = {'lockless_read_race.y'}
		self.assertTrue(mb.races_here(m))


class TestConclude(unittest.TestCase):
	# the race boot after a boot of several stays one per mutant, only for
	# a race mutant the functional suites did not kill
	def test_races(self):
		from mmkunit import schemata
		sch = object.__new__(schemata.SchemataRunner)
		sch.base = FakeBase()
		sch.ids = {'a': 1, 'b': 2}
		sch.race_reach = {1: {'lockless_read_race'}, 2: {'lockless_read_race'}}
		sch.base_race_fail = set()
		booted = []

		def boot(races, active, log, glob='', whole=False):
			booted.append((races, active) + ((glob,) if races else ()))
			return [{'name': 'lockless_read_race.x', 'status': 'FAIL', 'verdict': 'fail',
				 'reason': 'kunit: FAIL'}], 7.0, None
		sch.boot = boot
		a, b = M('a'), M('b')
		a.races = b.races = True
		o = sch.conclude(a, mutate.Outcome('survived'), {'lazyfree_thp.c': 'kunit: FAIL'}, None)
		self.assertEqual((o.status, o.killer, booted), ('killed', 'lazyfree_thp.c', []))
		o = sch.conclude(b, mutate.Outcome('survived'), {}, None)
		self.assertEqual((o.status, o.killer, o.races_seconds), ('killed', 'lockless_read_race.x', 7.0))
		self.assertEqual(booted, [(True, 2, 'lockless_read_race')])
		# its race suites already ran in its boot of several: no race boot
		booted.clear()
		o = sch.conclude(b, mutate.Outcome('survived'), {}, None, races_done=True)
		self.assertEqual((o.status, booted), ('survived', []))

	# the baseline gives a mutant whose line ran only at boot every suite:
	# code run at boot can change what any of them sees
	def test_baseline_boot_only(self):
		from mmkunit import schemata
		sch = object.__new__(schemata.SchemataRunner)
		sch.base = FakeBase()
		log = ['mm_mutant: reached in lazyfree_thp: 1,4\n',
		       'mm_mutant: reached in lazyfree_thp.lazyfree_thp_case: 1\n',
		       'mm_mutant: reached in shmem_read.shmem_read_hole: 2\n']
		# rcu_free_grace ran no switch: every suite of the boot all the same
		cases = [{'name': n, 'status': 'PASS', 'verdict': 'pass', 'reason': ''}
			 for n in ('lazyfree_thp.lazyfree_thp_case', 'rcu_free_grace.x',
				   'shmem_read.shmem_read_hole')]
		sch.boot = lambda races, active, log_, glob='': (
			cases, 5.0, type('B', (), {'log_lines': log}))
		sch.baseline(False, None)
		self.assertEqual(sch.boot_only, {4})
		self.assertEqual(sch.reach, {1: {'lazyfree_thp'}, 2: {'shmem_read'},
					     4: {'lazyfree_thp', 'rcu_free_grace', 'shmem_read'}})
		self.assertEqual(sch.suite_order, ['lazyfree_thp', 'shmem_read', 'rcu_free_grace'])

	# a race mutant's race suites run in its boot of several, after its
	# functional suites and with the race cases that reach it, when they
	# ran again cleanly in the debugfs baseline; else the race boot of its
	# own stays; what fails in the race baseline kills no mutant
	def test_races_in_boot(self):
		sch = FakeSchemata(3)
		sch.base.race_args = lambda: ['--kernel_args=lockless_read_race_kunit.reads=25000']
		sch.race_reach = {1: {'lockless_read_race'}, 3: {'lockless_read_race'}}
		sch.base_race_fail = {'lockless_read_race.flaky'}
		mb = multiboot.MultiBoot(sch, 4, '/nonexistent')
		mb.ok = ['lazyfree_thp', 'lockless_read_race']
		m1, m2, m3 = M('m1'), M('m2'), M('m3')
		m1.races = m2.races = True		# m3 is no mutant for the race suites
		# the race suite whole: which race case reaches a line is timing
		self.assertEqual(mb.plan_of(m1), (1, ['lazyfree_thp', 'lockless_read_race'],
						  ['lazyfree_thp.lazyfree_thp_case', 'lockless_read_race']))
		self.assertEqual(mb.plan_of(m2), (2, ['lazyfree_thp'], ['lazyfree_thp.lazyfree_thp_case']))
		self.assertEqual(mb.plan_of(m3), (3, ['lazyfree_thp'], ['lazyfree_thp.lazyfree_thp_case']))
		self.assertEqual(mb.race_params(), ['lockless_read_race_kunit.reads=25000'])
		self.assertEqual(mb.base_fails(), {'lockless_read_race.flaky'})
		self.assertTrue(mb.races_here(m1) and not mb.races_here(m2))
		mb.ok = ['lazyfree_thp']
		self.assertFalse(mb.races_here(m1))
		self.assertEqual(mb.plan_of(m1)[1], ['lazyfree_thp'])
		# the guest runs the race suite after the functional one and stops
		# at the first failing suite
		lines = simulate([mb.plan_of(m1)[:2] + ([],)], fail=[1])
		con = multiboot.parse_console(lines)
		self.assertEqual(con.spans[0].order, ['lazyfree_thp'])
		mb.ok = ['lazyfree_thp', 'lockless_read_race']
		lines = simulate([mb.plan_of(m1)])
		con = multiboot.parse_console(lines)
		self.assertEqual(con.spans[0].order, ['lazyfree_thp', 'lockless_read_race'])
		self.assertEqual(con.spans[-1].order, ['lazyfree_thp', 'lockless_read_race'])


class TestRaceReads(unittest.TestCase):
	# a race boot of make mutate, its baseline's too, in either mode,
	# carries the read budget of the lockless_read_race cases (0: none,
	# the suite's own); a functional boot does not; the budget is part
	# of every mutant's cache key
	class Booted(Exception):
		pass

	def boots(self, reads: int) -> List[List[str]]:
		from unittest import mock
		from mmkunit import kernel, schemata
		base = object.__new__(mutate.Runner)
		base.race_reads, base.glob, base.configs = reads, '', []
		base.timeout = base.race_timeout = 60
		base.build_dir = base.stage_dir = base.race_dir = '/nonexistent'
		base.base_fail, base.base_race_fail = set(), set()
		sch = object.__new__(schemata.SchemataRunner)
		sch.base, sch.base_fail, sch.base_race_fail = base, set(), set()
		sch.tree_dir = sch.build_dir = sch.stage_dir = '/nonexistent'
		seen = []

		def boot(*args, **_kw):
			seen.append(list(args[5]))
			raise self.Booted()
		with mock.patch.object(kernel, 'boot', boot):
			for call in (lambda: sch.boot(True, 3, None), lambda: sch.boot(False, 3, None),
				     lambda: base.boot(True, None, True), lambda: base.boot(False, None)):
				with self.assertRaises(self.Booted):
					call()
		return seen

	def test_budget(self):
		arg = '--kernel_args=lockless_read_race_kunit.reads=12500'
		# shmem_read_race's truncation rounds get the same share: 2000 / 20
		rounds = '--kernel_args=shmem_read_race_kunit.rounds=100'
		races, fun, races_each, fun_each = self.boots(12500)
		self.assertIn(arg, races)
		self.assertIn(rounds, races)
		self.assertIn('--kernel_args=mm_mutant=3', races)
		self.assertIn(arg, races_each)
		self.assertIn(rounds, races_each)
		self.assertFalse([a for a in fun + fun_each if 'reads=' in a or 'rounds=' in a])
		for extra in self.boots(0):
			self.assertFalse([a for a in extra if 'reads=' in a or 'rounds=' in a])
		# never no round at all
		self.assertIn('--kernel_args=shmem_read_race_kunit.rounds=1', self.boots(1)[0])

	def test_cache_key(self):
		self.assertNotEqual(mutate.cache_env('schemata', '', 25000),
				    mutate.cache_env('schemata', '', 250000))
		# only the cases that reach a mutant: kept apart from whole suites
		narrow = mutate.cache_env('schemata', '', 25000, 'case', 8)
		self.assertNotEqual(narrow, mutate.cache_env('schemata', '', 25000, 'case', 1))
		self.assertNotEqual(narrow, mutate.cache_env('schemata', '', 25000, 'suite', 8))
		self.assertEqual(mutate.cache_env('schemata', '', 25000, 'suite', 8),
				 mutate.cache_env('schemata', '', 25000, 'case', 1))


if __name__ == '__main__':
	unittest.main()
