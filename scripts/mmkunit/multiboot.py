# SPDX-License-Identifier: GPL-2.0
"""make mutate MODE=schemata MUTANTS_PER_BOOT=N: several switched mutants
one after another in one boot of the schemata kernel.

The guest boots with kunit.autorun=0 (the suites' debugfs directories
exist, nothing runs) and a busybox /init that, for each mutant of the
plan, writes its id to /sys/kernel/debug/mm_mutant/active and the cases
that reach it to mm_mutant/cases (KUnit skips the others), runs the
suites that reach it through their debugfs "run" files, prints their
"results" (a KTAP document each) and the kernel log of the mutant's span
(dmesg -c) between markers, and writes 0 back.  A mutant whose results
have a top-level "not ok", whose span tainted the kernel or printed a
splat makes the guest reboot before the next one.  Every CHECK_EVERY
mutants, and at the end, the suites used since the last check run again
with no mutant active (a clean check); a failure there reboots too.

The host splits the console by the markers and judges each mutant as a
boot of its own would be judged (judge.judge_cases() on its suites'
KTAP, judge.scan_splats() on its span): a kill counts (the boot was clean
at the last check and every mutant since showed no failure), a survivor
counts once a clean check after it passed; a failed check sends the
mutants since the last one to a boot of their own each; a mutant begun
but not ended (a crash, or no marker for the mutant timeout: a hang) is
killed; the mutants the boot did not reach, or whose verdict
a reboot left unconfirmed, go into the next boot.  docs/mutate.rst,
"Several mutants per boot"."""

import os
import re
import shutil
import threading
import time
from concurrent.futures import FIRST_COMPLETED, FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from . import judge, proc
from .common import BUILD, Error, env_number, info, rel

MARK = 'MMKUNIT-MB:'
# a clean check after this many mutants (and at the end of each boot)
CHECK_EVERY = 8
# KUnit taints the kernel with TAINT_TEST when a suite runs: not a change
TAINT_TEST = 1 << 18
# a mutant goes into this many boots of several at most, then boots alone
MAX_TRIES = 3
# a suite silent for HANG_TIMES its time in the debugfs baseline and
# HANG_SLACK seconds (MMKUNIT_MUTATE_HANG_SLACK) is hung (the baseline ran
# on this host, in this run)
HANG_TIMES = 3
HANG_SLACK = 20
# seconds the console keeps going after the line that decided (Stopper):
# the failure line itself names the case, these only add context
STOP_GRACE = 0.5

_NAME_RE = re.compile(r'^\w+$')
_CASE_RE = re.compile(r'^\w+(\.\w+)?$')


# ------------------------------------------------------------ the guest

def _ere(pattern: str) -> str:
	"""judge.SPLAT_RE as a POSIX ERE in single quotes for busybox grep."""
	if "'" in pattern:
		raise Error('multiboot: a quote in the splat pattern')
	return pattern


def init_script(plan: List[tuple], every: int = CHECK_EVERY, stop: bool = True) -> str:
	"""The busybox /init of one boot: the mutants of @plan (id, the suites
	that reach it, in run order, and optionally the cases they keep for it,
	"SUITE.CASE" or a whole "SUITE"; none: every case) one after another,
	a clean check of the suites used since the last one (every case) after
	every @every mutants and at the end (@every 0: none); with @stop a
	mutant's first failing suite ends it, and the guest reboots after a
	mutant that failed, tainted or printed a splat, and after a failed
	check."""
	for entry in plan:
		mid, suites = entry[0], entry[1]
		cases = entry[2] if len(entry) > 2 else []
		if not isinstance(mid, int) or mid < 0 or not suites or \
		   not all(_NAME_RE.match(s) for s in suites) or \
		   not all(_CASE_RE.match(c) and c.split('.')[0] in suites for c in cases) or \
		   (cases and not all(any(c.split('.')[0] == s for c in cases) for s in suites)):
			raise Error(f'multiboot: bad plan entry {entry}')
	splat = _ere(judge.SPLAT_RE.pattern)
	ignore = judge.SPLAT_IGNORE_RE.pattern.replace(r'\s', '[[:space:]]').replace(r'\d', '[0-9]')
	out = [
		'#!/bin/busybox sh',
		'# make mutate MUTANTS_PER_BOOT: switched mutants one after another',
		'# (scripts/mmkunit/multiboot.py)',
		'B=/bin/busybox',
		'D=/sys/kernel/debug',
		'P=/proc',
		'W=',
		'$B mount -t proc proc /proc',
		'$B mount -t sysfs sys /sys',
		'$B mount -t debugfs none $D',
		f'M={MARK}',
		f'STOP={1 if stop else 0}',
		f"SPLAT='{splat}'",
		f"IGNORE='{ignore}'",
		"up() { $B cut -d' ' -f1 $P/uptime; }",
		f'taint() {{ echo $(( $($B cat $P/sys/kernel/tainted) & ~{TAINT_TEST} )); }}',
		'# the kernel log since the last call: to the console, bad=1 on a splat',
		'klog() {',
		'\t$B dmesg -c > $W/k',
		'\techo "$M dmesg"',
		'\t$B cat $W/k',
		'\techo "$M end-dmesg"',
		"\tif $B sed 's/^\\[[^]]*\\] *//' $W/k | $B grep -vE \"$IGNORE\" | "
		'$B grep -qE "$SPLAT"; then bad=1; fi',
		'}',
		'# a splat or a taint between two spans: the boot is dirty',
		'gap() {',
		'\t$B dmesg -c > $W/k',
		"\tif [ \"$(taint)\" != \"$T\" ] || $B sed 's/^\\[[^]]*\\] *//' $W/k | "
		'$B grep -vE "$IGNORE" | $B grep -qE "$SPLAT"; then',
		'\t\techo "$M dirty"',
		'\t\t$B cat $W/k',
		'\t\techo "$M end-dirty"',
		'\t\techo "$M reboot"',
		'\t\t$B reboot -f',
		'\tfi',
		'}',
		'suite() {',
		'\techo "$M suite $1 $(up)"',
		'\t: > $W/r',
		'\tif [ -e $D/kunit/$1/run ]; then',
		'\t\techo 1 > $D/kunit/$1/run',
		'\t\t$B cat $D/kunit/$1/results > $W/r',
		'\tfi',
		'\techo "$M results $1 $(up)"',
		'\t$B cat $W/r',
		'\techo "$M end-results $1"',
		"\t$B grep -q '^ok 1 ' $W/r || bad=1",
		'}',
		'# mutant ID SUITE...: with the cases of $C (blank: every case)',
		'mutant() {',
		'\tid=$1',
		'\tshift',
		'\tgap',
		'\tbad=0',
		'\techo "$M begin $id $(up)"',
		'\techo "$C" > $D/mm_mutant/cases',
		'\techo $id > $D/mm_mutant/active',
		'\t# a failing suite kills: the others need not run',
		'\tfor s in "$@"; do',
		'\t\tsuite $s',
		'\t\tif [ $bad = 1 ] && [ $STOP = 1 ]; then break; fi',
		'\tdone',
		'\techo 0 > $D/mm_mutant/active',
		'\techo > $D/mm_mutant/cases',
		'\tklog',
		'\t[ "$(taint)" = "$T" ] || bad=1',
		'\tT=$(taint)',
		'\techo "$M end $id $bad $(up)"',
		'\tif [ $bad = 1 ] && [ $STOP = 1 ]; then',
		'\t\techo "$M reboot"',
		'\t\t$B reboot -f',
		'\tfi',
		'}',
		'check() {',
		'\tgap',
		'\tbad=0',
		'\techo "$M check $(up)"',
		'\tfor s in "$@"; do suite $s; done',
		'\tklog',
		'\t[ "$(taint)" = "$T" ] || bad=1',
		'\tT=$(taint)',
		'\techo "$M end-check $bad $(up)"',
		'\tif [ $bad = 1 ]; then',
		'\t\techo "$M reboot"',
		'\t\t$B reboot -f',
		'\tfi',
		'}',
	]
	first = plan[0][1][0] if plan else ''
	if first:
		# the switch printed what ran at boot (init code) only when a
		# suite starts: a run of the first suite with no case kept puts
		# it here, not in the first mutant's span, whose switch never ran
		out += [f"echo '{first}.mm_mutant_none' > $D/mm_mutant/cases",
			f'[ -e $D/kunit/{first}/run ] && echo 1 > $D/kunit/{first}/run',
			'echo > $D/mm_mutant/cases']
	out += [
		'$B dmesg -c > /dev/null',
		'T=$(taint)',
		'echo "$M ready $($B ls $D/kunit | $B wc -l)"',
	]
	used: List[str] = []
	for n, entry in enumerate(plan, 1):
		mid, suites = entry[0], entry[1]
		out.append(f"C='{' '.join(entry[2] if len(entry) > 2 else [])}'")
		out.append(f'mutant {mid} ' + ' '.join(suites))
		used += [s for s in suites if s not in used]
		if every and n % every == 0 and used:
			out.append('check ' + ' '.join(used))
			used = []
	if every and used:
		out.append('check ' + ' '.join(used))
	out += ['echo "$M done"', '$B reboot -f', '']
	return '\n'.join(out)


# ------------------------------------------------------------ the console

@dataclass
class Span:
	"""One mutant's part of the console (@kind 'mutant'), a clean check's
	('check') or a dirty gap between two ('gap')."""
	kind: str
	id: int = 0
	t0: float = 0.0
	t1: float = 0.0
	ended: bool = False
	bad: bool = False			# what the guest saw: a failure, taint or splat
	order: List[str] = field(default_factory=list)		# suites begun
	suites: Dict[str, List[str]] = field(default_factory=dict)	# suite -> its KTAP
	seconds: Dict[str, float] = field(default_factory=dict)	# suite -> its run time
	running: str = ''			# the suite begun and not done
	# suite.case of the expectation failures the console showed while a
	# suite ran (KUnit prints them at KERN_ERR): what a crash leaves
	failing: List[str] = field(default_factory=list)
	klog: List[str] = field(default_factory=list)		# dmesg of the span
	console: List[str] = field(default_factory=list)	# other console lines

	def text(self) -> List[str]:
		return self.console + self.klog


@dataclass
class Console:
	"""A multi-mutant boot's console split by the markers."""
	ready: bool = False
	done: bool = False
	rebooted: bool = False
	spans: List[Span] = field(default_factory=list)
	outside: List[str] = field(default_factory=list)	# lines before the first span


FAILED_RE = re.compile(r'^\s*# (\w+): (?:EXPECTATION|ASSERTION) FAILED at ')


def _float(words: List[str], i: int) -> float:
	try:
		return float(words[i])
	except (IndexError, ValueError):
		return 0.0


def parse_console(lines: List[str]) -> Console:
	"""Split a boot's console (init_script()'s markers) into spans."""
	out = Console()
	cur: Optional[Span] = None
	block: Optional[List[str]] = None
	start = 0.0
	for raw in lines:
		# the serial console ends its lines with \r\n
		line = judge.strip_console_prefix(raw.replace('\r', ''))
		at = line.find(MARK)
		if at < 0:
			if block is not None:
				block.append(line)
			elif cur is not None:
				cur.console.append(line)
				m = FAILED_RE.match(line)
				if m and cur.running and f'{cur.running}.{m.group(1)}' not in cur.failing:
					cur.failing.append(f'{cur.running}.{m.group(1)}')
			else:
				out.outside.append(line)
			continue
		if line[:at].strip():
			# a kernel message in front of the marker
			(cur.console if cur is not None else out.outside).append(line[:at])
		w = line[at + len(MARK):].split()
		if not w:
			continue
		what = w[0]
		if what == 'ready':
			out.ready = True
		elif what == 'begin' and len(w) > 1 and w[1].isdigit():
			cur = Span('mutant', int(w[1]), t0=_float(w, 2))
			out.spans.append(cur)
			block = None
		elif what == 'check':
			cur = Span('check', t0=_float(w, 1))
			out.spans.append(cur)
			block = None
		elif what == 'dirty':
			cur = Span('gap', ended=True, bad=True)
			out.spans.append(cur)
			block = cur.klog
		elif what == 'end-dirty':
			block = None
			cur = None
		elif cur is None:
			if what == 'reboot':
				out.rebooted = True
			elif what == 'done':
				out.done = True
			continue
		elif what == 'suite' and len(w) > 1:
			cur.order.append(w[1])
			cur.running = w[1]
			start = _float(w, 2)
		elif what == 'results' and len(w) > 1:
			cur.running = ''
			block = cur.suites.setdefault(w[1], [])
			cur.seconds[w[1]] = max(0.0, _float(w, 2) - start)
		elif what in ('end-results', 'end-dmesg'):
			block = None
		elif what == 'dmesg':
			block = cur.klog
		elif what in ('end', 'end-check'):
			k = 2 if what == 'end' else 1
			if what == 'end' and (cur.kind != 'mutant' or len(w) < 2 or w[1] != str(cur.id)):
				continue
			cur.ended = True
			cur.bad = len(w) > k and w[k] == '1'
			cur.t1 = _float(w, k + 1)
			cur = None
			block = None
		elif what == 'reboot':
			out.rebooted = True
		elif what == 'done':
			out.done = True
	return out


class Stopper:
	"""proc.run()'s stop_on for a boot of several: yes at a splat line
	(it kills the mutant it comes in, or dirties the boot), and at a case
	failure that KUnit prints while a mutant's suite runs (a case the
	baseline does not fail: it kills the mutant).  What comes after either
	cannot change the verdict, so the host need not wait for it."""

	def __init__(self, base_fail: Set[str]):
		self.base_fail = base_fail
		self.splats = 'guest.splat' not in base_fail
		self.mutant = 0		# the id of the mutant span the console is in
		self.running = ''	# its suite running
		self.limits: Dict[str, float] = {}	# suite -> the silence that is a hang in it
		self.between = 0.0	# the same outside a suite

	def stall(self) -> float:
		"""proc.run()'s stall_of: the silence that is a hang now, the
		running suite's limit (MultiBoot.suite_stall()) while one runs."""
		return self.limits.get(self.running, self.between) if self.running else self.between

	def __call__(self, raw: str) -> bool:
		line = judge.strip_console_prefix(raw.replace('\r', ''))
		at = line.find(MARK)
		if at >= 0:
			w = line[at + len(MARK):].split() + ['']
			if w[0] == 'begin' and w[1].isdigit():
				self.mutant, self.running = int(w[1]), ''
			elif w[0] in ('check', 'dirty', 'end', 'end-check'):
				self.mutant, self.running = 0, ''
			elif w[0] == 'suite':
				self.running = w[1]
			elif w[0] == 'results':
				self.running = ''
			return False
		if self.splats and judge.scan_splats([line]):
			return True
		m = FAILED_RE.match(line)
		if not (m and self.mutant > 0 and self.running):
			return False
		name = f'{self.running}.{m.group(1)}'
		return not any(b == name or b.startswith(name + '.') for b in self.base_fail)


# ------------------------------------------------------------ judging

def has_result(ktap: List[str], suite: str) -> bool:
	"""The results file of @suite was read whole: its top-level line."""
	return any(re.match(r'^(not )?ok 1 ' + re.escape(suite) + r'\b', ln) for ln in ktap)


def span_cases(span: Span, parse: Callable[[List[str]], Dict[str, str]], groups, expected,
	       why_stopped: str = '') -> Tuple[List[dict], bool]:
	"""The judged cases of a span, as a boot of the mutant alone would give
	them (guest.stopped when it did not end, guest.splat for a splat in its
	part of the console), and whether every suite it began has results."""
	results: Dict[str, str] = {}
	whole = True
	for s in span.order:
		ktap = span.suites.get(s)
		if ktap is None:
			whole = False		# the suite that was running when it stopped
			continue
		if not has_result(ktap, s):
			whole = False
		results.update(parse(ktap))
	if not span.ended:
		# a case whose failure the console showed before the crash: its
		# result line never came (a boot of its own would have it)
		for name in span.failing:
			if not any(r == name or r.startswith(name + '.') for r in results):
				results[name] = 'FAIL'
	cases = judge.judge_cases(results, groups, expected)
	if not span.ended:
		cases.append(judge.case('guest.stopped', 'STOPPED', 'fail',
					f'stopped guest ({why_stopped or "crash or timeout"}) while running '
					f'{span.running or "between suites"}'))
	splats = judge.scan_splats(span.klog if span.ended else span.text())
	if splats:
		cases.append(judge.case('guest.splat', 'SPLAT', 'fail',
					f'splat: {len(splats)} line(s) in the guest log, first: '
					f'{splats[0].strip()}'))
	return cases, whole


def ran_in(span: Span, mid: int) -> bool:
	"""Whether mutant @mid's switch ran in @span (the switch's reach lines
	in its part of the kernel log)."""
	from .schemata import parse_case_reach
	return mid in parse_case_reach(span.klog + span.console)


@dataclass
class Verdict:
	"""What one boot says of a mutant: 'killed' (with @kills), 'survived',
	'alone' (boot it on its own: a failed check after it, a boot that ran
	out of time in it) or 'again' (into a later boot of several)."""
	what: str
	kills: Dict[str, str] = field(default_factory=dict)
	why: str = ''
	seconds: float = 0.0
	span: Optional[Span] = None


def decide(con: Console, ids: List[int], judge_span: Callable[[Span], Dict[str, str]],
	   stalled: bool, timed_out: bool, boot_seconds: float, stopped: bool = False
	   ) -> Dict[int, Verdict]:
	"""Per id of the boot's plan, its verdict (see Verdict).

	@judge_span gives the new failures (beyond the baseline's) of a
	mutant's span; @stalled: no marker came for the mutant timeout (a
	hang), @timed_out: the boot was stopped (stalled, past its overall
	limit, or @stopped: at a splat or a failing case, see Stopper)."""
	out: Dict[int, Verdict] = {}
	seg: List[Tuple[int, Span]] = []	# survivors since the last passed check

	def confirm():
		for i, sp in seg:
			out[i] = Verdict('survived', seconds=sp.t1 - sp.t0, span=sp)
		seg.clear()

	def dirty(why: str):
		for i, sp in seg:
			out[i] = Verdict('alone', why=why, seconds=sp.t1 - sp.t0, span=sp)
		seg.clear()

	for sp in con.spans:
		if sp.kind in ('check', 'gap'):
			if sp.kind == 'check' and sp.ended and not sp.bad and not judge_span(sp):
				confirm()
				continue
			dirty('the clean check after it failed' if sp.kind == 'check' else
			      'a splat or taint came after it')
			break
		if sp.id in out or sp.id not in ids:
			break			# a plan the boot did not follow
		if not sp.ended:
			if timed_out and not stalled and not stopped and not judge.scan_splats(sp.text()):
				# past the boot's overall limit, still printing: not a hang
				out[sp.id] = Verdict('alone', why='the boot ran out of time in it', span=sp)
				seg.clear()
				break
			kills = judge_span(sp)
			secs = max(0.0, boot_seconds - sp.t0)
			out[sp.id] = (Verdict('killed', kills=kills, span=sp, seconds=secs) if kills else
				      Verdict('alone', why='it stopped the guest as the baseline did',
					      span=sp, seconds=secs))
			confirm()
			break
		kills = judge_span(sp)
		if kills:
			out[sp.id] = Verdict('killed', kills=kills, seconds=sp.t1 - sp.t0, span=sp)
			confirm()
			break			# what ran after a kill does not count
		if sp.bad:
			# the guest saw what the host does not count (a taint
			# without a splat, a suite without results)
			out[sp.id] = Verdict('alone', why='its boot saw a failure the judging does not',
					     seconds=sp.t1 - sp.t0, span=sp)
			seg.clear()
			break
		seg.append((sp.id, sp))
	for i, sp in seg:
		out[i] = Verdict('again', why='no clean check after it', span=sp)
	for i in ids:
		out.setdefault(i, Verdict('again', why='not reached in this boot'))
	return out


# ------------------------------------------------------------ the runner

# no kunit.filter: every suite, the race suites too, gets its debugfs
# directory (nothing runs at boot); a plan names the suites each mutant runs
APPEND = 'console=ttyS0 panic=-1 rdinit=/init kunit.autorun=0 loglevel=5 mm_mutant=0'


class MultiBoot:
	"""Boots of several switched mutants each (schemata.SchemataRunner
	@sch's kernel), @per_boot mutants at most per boot; the consoles go to
	@logs/multiboot-*.log."""

	def __init__(self, sch, per_boot: int, logs: str, cases: bool = True):
		self.sch = sch
		self.cases = cases		# a mutant runs only the cases that reach it
		self.per_boot = per_boot
		self.logs = logs
		self.work = os.path.join(BUILD, 'mutate', 'multiboot')
		self.kunit_dir = os.path.join(sch.tree_dir, 'tools', 'testing', 'kunit')
		self.ok: List[str] = []			# suites that run again from debugfs cleanly
		self.passing: Set[str] = set()		# cases that pass both debugfs runs
		self.seconds: Dict[str, float] = {}	# suite -> its run time there
		self.boots = 0
		self.boot_seconds = 0.0		# guest time, summed over guests
		self.wall_seconds = 0.0		# time in baseline() and run()
		self.guests = 1			# boots in flight at once
		self.tags = 0			# the last boot's number (its log's name)
		self._lock = threading.Lock()
		self._stop = threading.Event()	# set: no boot starts any more
		self._accel = ''
		self.fruitless: Dict[str, int] = {}	# boots of a mutant that decided nothing
		self.tries: Dict[str, int] = {}
		self.alone: Set[str] = set()		# mutants that boot on their own
		self.decided = 0
		self.lane_boots = 0			# run()'s kunit.py boots of their own
		self.lane_seconds = 0.0

	def parse(self, ktap: List[str]) -> Dict[str, str]:
		return judge.parse_guest_log(ktap, self.kunit_dir)

	def stall(self) -> int:
		return self.sch.base.timeout or 300

	def suites_of(self, m) -> List[str]:
		"""The functional suites that reach @m, in the baseline's order."""
		reach = self.sch.reach.get(self.sch.ids[m.name], set())
		order = self.sch.suite_order
		return sorted(reach, key=lambda s: (order.index(s) if s in order else len(order), s))

	def races_of(self, m) -> List[str]:
		"""The race suites that reach @m when it is a mutant for them."""
		sch = self.sch
		if not getattr(m, 'races', False) or getattr(sch, 'base_race_fail', None) is None:
			return []
		return sorted(getattr(sch, 'race_reach', {}).get(sch.ids[m.name], set()))

	def races_here(self, m) -> bool:
		"""@m's race suites run in its boot of several, after its functional
		suites (only when those did not kill it): each runs again from
		debugfs cleanly, and the race baseline stopped or splatted
		nowhere (what it fails then would hide those kills here)."""
		races = self.races_of(m)
		guest = [x for x in getattr(self.sch, 'base_race_fail', None) or ()
			 if x.startswith('guest.')]
		return bool(races) and not guest and all(s in self.ok for s in races)

	def plan_of(self, m) -> tuple:
		"""Mutant @m's plan entry: its id, the suites that reach it and,
		with @cases, the cases of them that reach it."""
		suites = self.suites_of(m) + (self.races_of(m) if self.races_here(m) else [])
		return (self.sch.ids[m.name], suites,
			self.sch.cases_of(m, suites) if self.cases else [])

	def eligible(self, m) -> bool:
		"""Mutant @m may run in a boot of several: switched, reached by the
		functional suites, each of which runs again from debugfs cleanly."""
		if not self.ok or m.name in self.alone or not self.sch.switched(m.name):
			return False
		if getattr(m, 'alt', ''):
			return False	# a variant: every case it fails, in a boot of its own
		if self.sch.ids[m.name] in getattr(self.sch, 'boot_only', ()):
			return False	# its switch is off at boot here: a boot of its own
		suites = self.suites_of(m)
		return bool(suites) and all(s in self.ok for s in suites)

	def judge_span(self, sp: Span, stopped_on: str = '') -> Dict[str, str]:
		"""The new failures of span @sp; for a clean check also the cases
		that passed both runs of the debugfs baseline and skip there (a
		state an earlier mutant left that hides them from the next).
		@stopped_on: the line the host stopped the guest at, if it did."""
		base = self.sch.base
		why = (f'the host stopped it at: {stopped_on.strip()[:100]}' if stopped_on
		       else f'no progress for {self.stall()} s, or a crash')
		cases, _whole = span_cases(sp, self.parse, base.groups, base.expected, why)
		out = {k: v for k, v in base.failed(cases).items() if k not in self.base_fails()}
		if sp.kind == 'check':
			out.update({c['name']: 'skipped in a clean check, passed in the debugfs baseline'
				    for c in cases if c['status'] == 'SKIP' and c['name'] in self.passing})
		return out

	def base_fails(self) -> Set[str]:
		"""What fails with no mutant active, functional and race (but a
		race baseline's stopped guest or splat): it kills no mutant."""
		return set(self.sch.base_fail) | {x for x in getattr(self.sch, 'base_race_fail', None) or ()
						  if not x.startswith('guest.')}

	def stall_for(self, plan: List[tuple]) -> int:
		"""A hang in a boot of @plan: the longest suite_stall() of its
		suites."""
		return max((self.suite_stall(s) for e in plan for s in e[1]),
			   default=self.suite_stall(''))

	def suite_stall(self, suite: str) -> int:
		"""A hang while @suite runs: no marker for HANG_TIMES its time in
		the debugfs baseline (a boot of this run, on this host) and
		HANG_SLACK seconds (a suite not timed there: 60 s), at most the
		mutant timeout."""
		slack = env_number('MMKUNIT_MUTATE_HANG_SLACK', HANG_SLACK)
		return int(min(self.stall(), HANG_TIMES * self.seconds.get(suite, 60.0) + slack))

	def boot(self, plan: List[tuple], tag: str, every: int, stop: bool,
		 timeout: float, stall: int = 0):
		"""One boot of @plan: (the console split, proc.Result, its path)."""
		from . import kernel
		# a root of its own: boots run at once (self.guests)
		root = os.path.join(self.work, f'root-{tag}')
		shutil.rmtree(root, ignore_errors=True)
		for d in ('bin', 'proc', 'sys', 'dev'):
			os.makedirs(os.path.join(root, d), exist_ok=True)
		if not os.path.exists(kernel.BUSYBOX):
			raise Error(f'{kernel.BUSYBOX} missing: apt-get install busybox-static')
		shutil.copy(kernel.BUSYBOX, os.path.join(root, 'bin', 'busybox'))
		cpio = kernel.pack_initramfs(root, init_script(plan, every, stop),
					     os.path.join(self.work, f'initramfs-{tag}.cpio'))
		shutil.rmtree(root, ignore_errors=True)
		cmd = kernel.qemu_cmd(os.path.join(self.sch.build_dir, kernel.image()), cpio,
				      ' '.join([APPEND] + self.race_params()), accel=self.accel())
		path = os.path.join(self.logs, f'multiboot-{tag}.log')
		# a hang: no marker for the mutant timeout (a guest that keeps
		# printing stall reports is hung all the same)
		# a splat, or a case failing in a mutant's span, decides: nothing
		# after it counts, so the guest is stopped soon after
		stop = None if tag.startswith('baseline') else Stopper(self.base_fails())
		if stop is not None:
			# a hang is judged by the suite that runs, not the longest
			stop.limits = {s: self.suite_stall(s) for e in plan for s in e[1]}
			stop.between = stall or self.stall()
		if self._stop.is_set():
			raise Error('multiboot: stopped before boot ' + tag)
		r = kernel.boot_initramfs(cmd, path, int(timeout), stall=stall or self.stall(),
					  stall_on=MARK, label=f'mutate: boot {tag} of several mutants',
					  stop_on=stop, stop_grace=STOP_GRACE,
					  stall_of=stop.stall if stop is not None else None)
		os.unlink(cpio)
		with open(path, errors='replace') as f:
			lines = f.readlines()
		with self._lock:
			self.boots += 1
			self.boot_seconds += r.seconds
		return parse_console(lines), r, path

	def accel(self) -> str:
		"""The accelerator of every boot, chosen once (from the thread
		that runs first: the baseline's and run()'s, never a worker)."""
		if not self._accel:
			from . import kernel
			self._accel = kernel.choose_accel()
		return self._accel

	def race_params(self) -> List[str]:
		"""The race boots' kernel parameters (the read budget), for the
		race suites run here."""
		args = self.sch.base.race_args() if hasattr(self.sch.base, 'race_args') else []
		return [a.split('=', 1)[1] for a in args if a.startswith('--kernel_args=')]

	def baseline(self, suites: List[str]) -> None:
		"""@suites run twice from debugfs with no mutant active: those whose
		cases all pass (or skip) both times, with no splat in the boot,
		are the ones a boot of several mutants may run.  With guests, the
		suites are shared among up to self.guests boots at once (each runs
		its share twice, in the baseline's order)."""
		self.ok = []
		if not suites:
			return
		parts = self.baseline_parts(suites)
		tags = ['baseline'] + [f'baseline-{k}' for k in range(2, len(parts) + 1)]
		t0 = time.monotonic()
		if getattr(self.boot, '__func__', None) is MultiBoot.boot:
			self.accel()		# here, not in a worker (it rewrites os.environ)
		pool = ThreadPoolExecutor(max_workers=len(parts))
		futs: list = []
		try:
			futs += [pool.submit(self.boot, [(0, p), (0, p)], t, 0, False,
					     self.stall() * 4 + 120) for p, t in zip(parts, tags)]
			# the first error at once, not after the other boot
			wait(futs, return_when=FIRST_EXCEPTION)
			boots = [f.result() for f in futs]
		except BaseException:
			self._stop_guests(futs)
			raise
		finally:
			pool.shutdown(wait=True, cancel_futures=True)
			self._stop.clear()
			self.wall_seconds += time.monotonic() - t0
		bad: Dict[str, str] = {}
		passed: Dict[str, int] = {}
		why = ''
		for part, (con, r, path) in zip(parts, boots):
			why = self._judge_baseline(part, con, bad, passed)
			if why:
				break
		if why:
			info(f'mutate: boots of several mutants: off, the debugfs baseline failed ({why}; '
			     f'console {rel(path)}): every mutant boots on its own')
			return
		self.passing = {n for n, k in passed.items() if k == 2}
		self.ok = [s for s in suites if s not in bad]
		info(f'mutate: boots of several mutants (MUTANTS_PER_BOOT={self.per_boot}): '
		     f'{len(self.ok)} of {len(suites)} suites run again from debugfs as at boot '
		     f'(baseline boot{"s" if len(boots) > 1 else ""} '
		     f'{", ".join(f"{b[1].seconds:.0f}" for b in boots)} s)' +
		     (f'; the mutants of {", ".join(f"{s} ({w})" for s, w in sorted(bad.items()))} '
		      'boot on their own' if bad else ''))

	def _stop_guests(self, futs: list) -> None:
		"""After an error: no boot starts any more, and the guests of the
		boots @futs in flight are killed until every worker has returned."""
		self._stop.set()
		while not all(f.done() for f in futs):
			proc.kill_all()
			wait(futs, timeout=0.5)

	def baseline_parts(self, suites: List[str]) -> List[List[str]]:
		"""@suites shared among self.guests boots of the debugfs baseline,
		each share in the baseline's order: the largest first, each to the
		lightest share so far, a suite weighing its cases at boot (a race
		suite ten)."""
		n = min(max(1, self.guests), len(suites))
		if n == 1:
			return [list(suites)]
		at_boot = getattr(self.sch, 'base_pass', set())

		def weight(s: str) -> int:
			if s.endswith('_race'):
				return 10
			return max(1, sum(1 for c in at_boot if c.split('.')[0] == s))
		load = [0] * n
		share: Dict[str, int] = {}
		for s in sorted(suites, key=lambda x: -weight(x)):
			k = load.index(min(load))
			share[s] = k
			load[k] += weight(s)
		return [p for p in ([s for s in suites if share[s] == k] for k in range(n)) if p]

	def _judge_baseline(self, suites: List[str], con: 'Console', bad: Dict[str, str],
			    passed: Dict[str, int]) -> str:
		"""One boot of the debugfs baseline, @suites run twice (console
		@con): why it fails as a whole ('' when it does not); the suites
		that do not run again as at boot go into @bad, the cases that pass
		are counted in @passed, each suite's time into self.seconds."""
		spans = [s for s in con.spans if s.kind == 'mutant']
		if not con.done or len(spans) != 2 or not all(s.ended for s in spans):
			return 'the boot did not end as planned'
		if any(judge.scan_splats(s.klog) for s in spans):
			return 'a splat in it'
		base = self.sch.base
		at_boot = getattr(self.sch, 'base_pass', set())
		for s in suites:
			for sp in spans:
				ktap = sp.suites.get(s, [])
				cases = judge.judge_cases(self.parse(ktap), base.groups, base.expected)
				failed = [c['name'] for c in cases if c['verdict'] == 'fail']
				# what passes at boot and skips here would never kill
				skipped = [c['name'] for c in cases
					   if c['status'] == 'SKIP' and c['name'] in at_boot]
				if not has_result(ktap, s) or not cases or failed or skipped:
					bad[s] = ', '.join(failed[:3]) or (
						', '.join(skipped[:3]) + ' skipped' if skipped
						else 'no results')
				for c in cases:
					if c['verdict'] == 'pass':
						passed[c['name']] = passed.get(c['name'], 0) + 1
				self.seconds[s] = max(self.seconds.get(s, 0.0), sp.seconds.get(s, 0.0))
		return ''

	def _take(self, batch: list, tag: str, con: 'Console', r, path: str,
		  log_of: Callable[[object], str], verdicts: Dict[str, 'Verdict'],
		  spent: Dict[str, float], alone: list) -> bool:
		"""Take what boot @tag of @batch decided (its console @con, result
		@r): verdicts, the time each begun mutant cost, the mutants that
		now boot alone.  True when it decided something."""
		by_id = {self.sch.ids[m.name]: m for m in batch}
		stopped_on = getattr(r, 'stopped_on', '')
		out = decide(con, list(by_id), lambda sp: self.judge_span(sp, stopped_on),
			     r.stalled, r.timed_out, r.seconds,
			     bool(r.stopped_on))
		for i, v in out.items():
			if v.what == 'survived' and not ran_in(v.span, i):
				# reached in the baseline by work no case of it owns
				# (a callback an earlier case queued): whole suites
				out[i] = Verdict('alone', why='its line did not run in its span',
						 seconds=v.seconds, span=v.span)
		began = [i for i, v in out.items() if v.span is not None]
		share = r.seconds / max(1, len(began))
		progress = False
		for i, v in out.items():
			m = by_id[i]
			if v.span is None:
				continue
			spent[m.name] += share
			self.tries[m.name] = self.tries.get(m.name, 0) + 1
			with open(log_of(m), 'a') as f:
				f.write(f'mutate: boot {tag} of several ({rel(path)}): {v.what}' +
					(f' ({v.why})' if v.why else '') +
					(f' by {", ".join(sorted(v.kills)[:5])}' +
					 (f' (+{len(v.kills) - 5} more)' if len(v.kills) > 5 else '')
					 if v.kills else '') + '\n')
				f.writelines(ln + '\n' for s in v.span.order
					     for ln in v.span.suites.get(s, []))
				f.writelines(ln + '\n' for ln in v.span.text())
			if v.what in ('killed', 'survived'):
				verdicts[m.name] = v
				progress = True
			elif v.what == 'alone' or self.tries[m.name] >= MAX_TRIES:
				alone.append(m)
				progress = True
		said = [v.what for v in out.values() if v.span is not None]
		info(f'mutate: boot {tag} of several mutants: {len(said)} of {len(batch)} begun (' +
		     ', '.join(f'{n} {w}' for w, n in sorted(
			     {w: said.count(w) for w in said}.items())) +
		     f'), {r.seconds:.0f} s' + (' (hung)' if r.stalled else
						 ' (stopped at what decided)' if stopped_on else
						 ' (out of time)' if r.timed_out else ''))
		return progress

	def run(self, ms: list, log_of: Callable[[object], str], own: list = (),
		on_result: Optional[Callable[[object, object, float], None]] = None
		) -> Dict[str, tuple]:
		"""Outcomes (mutate.Outcome) of the eligible mutants @ms and of the
		mutants @own that boot on their own (sch.run()), each with the
		seconds it cost; a mutant's notes go to the file @log_of(m).  Up to
		self.guests boots run at once, each on mutants no other boot in
		flight holds.  A boot of its own (kunit.py: one at a time, they
		share the build dir) takes a guest's turn like a boot of several,
		so both guests stay busy.  What a boot decides is taken as soon as
		it ends, and @on_result(m, outcome, seconds), when given, gets
		each mutant as soon as its outcome is known."""
		queue = list(ms)
		verdicts: Dict[str, Verdict] = {}
		spent: Dict[str, float] = {m.name: 0.0 for m in list(ms) + list(own)}
		alone: List = []
		busy: Set[str] = set()
		flying: Dict[object, tuple] = {}
		# the kunit.py lane: ('own', m) a boot of its own, ('races', m, v)
		# the race suites of a survivor of a boot of several
		lane: List[tuple] = [('own', m) for m in own]
		results: Dict[str, tuple] = {}
		self.tags = max(self.tags, self.boots)
		t_run = time.monotonic()
		if getattr(self.boot, '__func__', None) is MultiBoot.boot:
			self.accel()		# here, not in a worker (it rewrites os.environ)
		self._stop.clear()
		guests = max(1, self.guests)
		pool = ThreadPoolExecutor(max_workers=guests)

		def done_with(m, o, seconds: float) -> None:
			self.decided += 1
			results[m.name] = (o, seconds)
			if on_result is not None:
				on_result(m, o, seconds)

		def settle(m) -> None:
			"""A verdict of a boot of several: concluded here, or its race
			suites to the lane."""
			v = verdicts[m.name]
			if self.race_boot(m, v):
				lane.append(('races', m, v))
				return
			t0 = time.monotonic()
			o = self.conclude(m, v, log_of)
			done_with(m, o, spent[m.name] + time.monotonic() - t0)

		try:
			while queue or flying or lane:
				while len(flying) < guests:
					if lane and not any(f[0] == 'lane' for f in flying.values()):
						job = lane.pop(0)
						if job[0] == 'own' and job[1] in alone:
							self.alone.add(job[1].name)
						fut = pool.submit(self.lane_job, job, log_of)
						flying[fut] = ('lane', job, '')
						continue
					free = [m for m in queue if m.name not in busy]
					if not free:
						break
					# the free mutants shared among the idle guests: a
					# kill ends a boot early, so none holds what another
					# could run now
					idle = guests - len(flying)
					batch = free[:min(self.per_boot, -(-len(free) // idle))]
					plan = [self.plan_of(m) for m in batch]
					est = sum(max(5.0, sum(self.seconds.get(s, 30.0) for s in e[1]))
						  for e in plan)
					self.tags += 1
					tag = f'{self.tags:03d}'
					busy |= {m.name for m in batch}
					fut = pool.submit(self.boot, plan, tag, CHECK_EVERY, True,
							  self.stall() + 60 + 10 * est, self.stall_for(plan))
					flying[fut] = ('several', batch, tag)
				if not flying:
					break
				done, _ = wait(list(flying), return_when=FIRST_COMPLETED)
				for fut in sorted(done, key=lambda f: flying[f][2]):
					kind, what, tag = flying.pop(fut)
					if kind == 'lane':
						o, seconds = fut.result()
						m = what[1]
						done_with(m, o, spent[m.name] + seconds)
						continue
					batch = what
					busy -= {m.name for m in batch}
					con, r, path = fut.result()
					had = set(verdicts)
					n_alone = len(alone)
					progress = self._take(batch, tag, con, r, path, log_of, verdicts,
							      spent, alone)
					for m in batch:
						if m.name in verdicts and m.name not in had:
							settle(m)
					lane += [('own', m) for m in alone[n_alone:]]
					if progress:
						continue
					# a mutant in two boots that decided nothing boots alone
					stuck = []
					for m in batch:
						self.fruitless[m.name] = self.fruitless.get(m.name, 0) + 1
						if self.fruitless[m.name] >= 2 and m not in alone:
							stuck.append(m)
					if stuck:
						info(f'mutate: {len(stuck)} mutant(s) were in two boots of '
						     f'several that decided nothing (console {rel(path)}): '
						     'they boot on their own')
						alone += stuck
						lane += [('own', m) for m in stuck]
				queue = [m for m in queue if m.name not in verdicts and m not in alone]
		except BaseException:
			self._stop_guests(list(flying))
			raise
		finally:
			pool.shutdown(wait=True, cancel_futures=True)
			self.wall_seconds += time.monotonic() - t_run
		missing = [m for m in list(ms) + list(own) if m.name not in results]
		if missing:
			raise Error(f'multiboot: no outcome for {", ".join(m.name for m in missing[:3])}')
		return results

	def conclude(self, m, v: 'Verdict', log_of: Callable[[object], str]):
		"""The Outcome of @m from its verdict @v of a boot of several
		(sch.conclude(): its race suites boot when they still must)."""
		from .mutate import Outcome
		o = Outcome('survived')
		o.guest_seconds = v.seconds
		with open(log_of(m), 'a') as log:
			return self.sch.conclude(m, o, v.kills, log, races_done=self.races_here(m))

	def race_boot(self, m, v: 'Verdict') -> bool:
		"""Whether concluding @m's verdict @v boots its race suites
		(kunit.py: the lane's work, never beside another kunit.py)."""
		need = getattr(self.sch, 'race_boot_needed', None)
		return bool(need and need(m, v.kills, self.races_here(m)))

	def lane_job(self, job: tuple, log_of: Callable[[object], str]) -> tuple:
		"""A job of the kunit.py lane (run()): the Outcome and its seconds."""
		m = job[1]
		if self._stop.is_set():
			raise Error('multiboot: stopped before a boot of its own')
		t0 = time.monotonic()
		if job[0] == 'own':
			with open(log_of(m), 'a') as log:
				log.write('mutate: a boot of its own\n')
				o = self.sch.run(m, log)
		else:
			o = self.conclude(m, job[2], log_of)
		seconds = time.monotonic() - t0
		with self._lock:
			self.lane_boots += 1
			self.lane_seconds += seconds
		return o, seconds
