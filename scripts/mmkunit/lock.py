# SPDX-License-Identifier: GPL-2.0
"""The lock on build/: every command that writes there (assembly, builds,
boots, selftests) holds it for its whole run.  A second command waits for
it, saying which run holds it, or with --no-wait / NO_WAIT=1 refuses at
once (exit 2).  The lock is an flock on build/mmkunit.lock, so it goes
away with its holder however that ends; the file holds a JSON record of
the holder (pid, command, start time) for the message."""

import fcntl
import json
import os
import sys
import time
from typing import Optional

from .common import BUILD, Error, info, rel

LOCK_NAME = 'mmkunit.lock'


class BuildLock:
	def __init__(self, command: str, build: str = ''):
		self.command = command
		self.path = os.path.join(build or BUILD, LOCK_NAME)
		self.fd: Optional[int] = None

	def holder(self) -> str:
		"""Who holds the lock, from its record."""
		try:
			with open(self.path) as f:
				rec = json.load(f)
			age = time.time() - rec['started']
			return (f'pid {rec["pid"]} ({rec["command"]}, started '
				f'{time.strftime("%H:%M:%S", time.localtime(rec["started"]))}, '
				f'{age:.0f} s ago)')
		except (OSError, ValueError, KeyError):
			return 'another run (no record)'

	def acquire(self, wait: bool = True) -> None:
		os.makedirs(os.path.dirname(self.path), exist_ok=True)
		fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
		try:
			fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
		except BlockingIOError:
			who = self.holder()
			if not wait:
				os.close(fd)
				raise Error(f'{rel(os.path.dirname(self.path))}/ is in use by {who}; '
					    'not waiting (--no-wait / NO_WAIT=1)')
			info(f'{rel(os.path.dirname(self.path))}/ is in use by {who}; waiting for it '
			     'to finish (--no-wait or NO_WAIT=1 refuses instead)')
			t0 = time.monotonic()
			try:
				fcntl.flock(fd, fcntl.LOCK_EX)
			except BaseException:
				os.close(fd)
				raise
			info(f'got {rel(self.path)} after {time.monotonic() - t0:.0f} s')
		rec = {'pid': os.getpid(), 'command': self.command, 'started': time.time(),
		       'argv': sys.argv}
		os.ftruncate(fd, 0)
		os.write(fd, (json.dumps(rec) + '\n').encode())
		self.fd = fd

	def release(self) -> None:
		if self.fd is not None:
			try:
				os.ftruncate(self.fd, 0)
			except OSError:
				pass
			os.close(self.fd)
			self.fd = None
