# SPDX-License-Identifier: GPL-2.0
"""The one way the runner starts a long child (kunit.py, make, QEMU): in a
process group of its own, tracked until it ends, killed with its whole
group on a timeout, an exception, SIGINT or SIGTERM.  While it runs
silently, a heartbeat line says how long it has been running."""

import os
import selectors
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Set, TextIO

from .common import env_number, info

# process groups of running children
_groups: Set[int] = set()


class Interrupted(BaseException):
	"""SIGTERM or SIGHUP arrived (SIGINT arrives as KeyboardInterrupt)."""

	def __init__(self, signum: int):
		super().__init__(signal.Signals(signum).name)
		self.signum = signum


def _raise_interrupted(signum, _frame):
	raise Interrupted(signum)


def install_signal_handlers() -> None:
	"""SIGTERM/SIGHUP unwind like ^C, so that finally blocks kill children."""
	for s in (signal.SIGTERM, signal.SIGHUP):
		signal.signal(s, _raise_interrupted)


def kill_group(pgid: int, grace: float = 2.0) -> None:
	"""SIGTERM the group, SIGKILL what is left after @grace seconds."""
	for sig in (signal.SIGTERM, signal.SIGKILL):
		try:
			os.killpg(pgid, sig)
		except ProcessLookupError:
			break
		deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 0)
		while time.monotonic() < deadline:
			try:
				os.killpg(pgid, 0)
			except ProcessLookupError:
				return
			time.sleep(0.05)
	_groups.discard(pgid)


def kill_all() -> int:
	"""Kill every child group still running; return how many there were."""
	n = 0
	for pgid in list(_groups):
		kill_group(pgid)
		_groups.discard(pgid)	# not clear(): one started meanwhile stays
		n += 1
	return n


@dataclass
class Result:
	"""How a child ended."""
	cmd: List[str]
	rc: int
	seconds: float
	timed_out: bool = False
	tail: str = ''		# its last lines of output
	stalled: bool = False	# timed out because it was silent for @stall seconds
	stopped_on: str = ''	# the line @stop_on matched, when that stopped it

	@property
	def ok(self) -> bool:
		return self.rc == 0 and not self.timed_out


def heartbeat_interval() -> float:
	return env_number('MMKUNIT_HEARTBEAT', 60)


def run(cmd: List[str], cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
	log: Optional[TextIO] = None, echo: bool = True, timeout: Optional[float] = None,
	label: str = '', progress: Optional[Callable[[], str]] = None,
	stdin=subprocess.DEVNULL, nice: int = 0, stall: Optional[float] = None,
	stall_on: str = '', stop_on: Optional[Callable[[str], bool]] = None,
	stop_grace: float = 5.0, stall_of: Optional[Callable[[], float]] = None) -> Result:
	"""Run @cmd in a new process group; its output goes to @log (and to our
	stdout with @echo).  After @timeout seconds the group is killed and the
	result says timed_out.  With @label, a line "LABEL, N s elapsed
	(PROGRESS)" is printed whenever the child was silent for
	MMKUNIT_HEARTBEAT seconds (60).  With @stall, the group is killed as
	well when it printed nothing for @stall seconds (timed_out and stalled
	in the result); with @stall_on, only a line holding that text counts.
	With @stall_of, the silence allowed is what it returns at each look
	(it may follow the lines @stop_on has seen), @stall only until then.
	With @stop_on, the first line for which it is true stops the group
	@stop_grace seconds later (timed_out, and stopped_on names the line).
	Any exception (^C, SIGTERM) kills the group before it propagates."""
	full_env = dict(os.environ, **(env or {}))
	if log:
		log.write('$ ' + ' '.join(shlex.quote(c) for c in cmd) + '\n')
		log.flush()
	argv = (['nice', '-n', str(nice)] if nice else []) + cmd
	beat = heartbeat_interval() if label else None
	t0 = time.monotonic()
	p = subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
			     stderr=subprocess.STDOUT, stdin=stdin, start_new_session=True)
	_groups.add(p.pid)
	deadline = t0 + timeout if timeout else None
	last_out = t0
	last_line = t0		# the heartbeat does not count as output for @stall
	tail: List[str] = []
	timed_out = stalled = False
	stop_at: Optional[float] = None
	stopped_on = ''
	buf = b''
	try:
		sel = selectors.DefaultSelector()
		sel.register(p.stdout, selectors.EVENT_READ)
		while True:
			now = time.monotonic()
			waits = [1.0]
			if deadline is not None:
				waits.append(max(0.05, deadline - now))
			if beat:
				waits.append(max(0.05, last_out + beat - now))
			if stall_of is not None:
				stall = stall_of() or stall
			if stall:
				waits.append(max(0.05, last_line + stall - now))
			if stop_at is not None:
				waits.append(max(0.05, stop_at - now))
			if sel.select(timeout=min(waits)):
				chunk = os.read(p.stdout.fileno(), 65536)
				if not chunk:
					break
				buf += chunk
				*lines, buf = buf.split(b'\n')
				for raw in lines:
					line = raw.decode(errors='replace') + '\n'
					if log:
						log.write(line)
					if echo:
						sys.stdout.write(line)
					tail = (tail + [line])[-40:]
					if stall_on in line:
						last_line = time.monotonic()
					if stop_on is not None and stop_at is None and stop_on(line):
						stop_at = time.monotonic() + stop_grace
						stopped_on = line.rstrip('\n')
				if lines:
					if log:
						log.flush()
					if echo:
						sys.stdout.flush()
					last_out = time.monotonic()
			now = time.monotonic()
			if deadline is not None and now > deadline:
				timed_out = True
				break
			if stall and now - last_line > stall:
				timed_out = stalled = True
				break
			if stop_at is not None and now > stop_at:
				timed_out = True
				break
			if beat and now - last_out >= beat:
				extra = progress() if progress else ''
				info(f'{label}, {now - t0:.0f} s elapsed' + (f' ({extra})' if extra else ''))
				last_out = now
		if buf and log:
			log.write(buf.decode(errors='replace') + '\n')
		if timed_out:
			kill_group(p.pid, grace=1.0)
		rc = p.wait()
	finally:
		if p.poll() is None or p.pid in _groups:
			kill_group(p.pid)
			p.wait()
		_groups.discard(p.pid)
		p.stdout.close()
	return Result(cmd=cmd, rc=rc, seconds=time.monotonic() - t0, timed_out=timed_out,
		      tail=''.join(tail), stalled=stalled, stopped_on=stopped_on if timed_out and
		      not stalled else '')
