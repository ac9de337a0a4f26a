# SPDX-License-Identifier: GPL-2.0
"""Trivial compiler equivalence (TCE) of the mutants no case killed.

A mutant whose source file compiles to the same object as the original
file (the same code, data and relocations; debug information aside),
with the compile command of the kernel the suites ran, cannot be told
apart from the original by any case of that kernel: it is equivalent
there by construction.  Examples on x86_64: a deleted smp_rmb() (a
compiler barrier only, where nothing moves across it), an operand the
config makes constant (cpusets_enabled() without CONFIG_CPUSETS).  The
same mutant may differ on another architecture or config; the result
says which build it was compiled for.

Only C files are compared: a header's mutant changes every object that
includes it.  Each compile runs in a directory of its own outside the
tree, with __FILE__ mapped back to the tree's name, so that the original
and the mutant differ only in the edit.  Results are kept in the mutate
cache under a key of the compile command, the original object and the
edits (see docs/mutate.rst, "Equivalent by their object code")."""

import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

CACHE_PREFIX = 'tce\0'


def compile_command(build_dirs: Sequence[str], path: str) -> Tuple[str, str]:
	"""The compile command kbuild saved for @path (a .c file of the tree)
	in the first of @build_dirs that has one, and that directory; ('', '')
	when none has."""
	obj = os.path.splitext(path)[0] + '.o'
	d, b = os.path.split(obj)
	for bd in build_dirs:
		cmd_file = os.path.join(bd, d, f'.{b}.cmd')
		try:
			with open(cmd_file, errors='replace') as f:
				first = f.readline()
		except OSError:
			continue
		if ':=' in first:
			return bd, first.split(':=', 1)[1].strip()
	return '', ''


def _command_for(cmd: str, src_tree: str, path: str, src: str, out: str, tmp: str) -> Optional[str]:
	"""@cmd made to compile @src into @out: the compiler alone (kbuild
	chains objtool and others after ';'), no dependency file, and
	__FILE__ of @src spelt as the tree's.  None when @cmd does not name
	the tree's source file."""
	cmd = cmd.split(';')[0]
	orig = os.path.join(src_tree, path)
	if f' {orig}' not in cmd or not re.search(r' -o \S+', cmd):
		return None
	cmd = re.sub(r'-Wp,-MMD,\S+', '', cmd)
	cmd = cmd.replace(f' {orig}', f' {shlex.quote(src)}')
	cmd = re.sub(r' -o \S+', f' -o {shlex.quote(out)}', cmd, count=1)
	return cmd + f' -fmacro-prefix-map={shlex.quote(tmp)}/='


def object_bytes(build_dir: str, cmd: str, src_tree: str, path: str, text: str) -> Tuple[bytes, str]:
	"""@text compiled as @path with @cmd (in @build_dir, where kbuild runs
	it) and stripped of debug information: (the object, '') or (b'', why
	not)."""
	tmp = tempfile.mkdtemp(prefix='mmkunit-tce-')
	try:
		src = os.path.join(tmp, path)
		os.makedirs(os.path.dirname(src), exist_ok=True)
		with open(src, 'w') as f:
			f.write(text)
		out = os.path.join(tmp, 'out.o')
		c = _command_for(cmd, src_tree, path, src, out, tmp)
		if c is None:
			return b'', f'the compile command of {path} does not name it'
		r = subprocess.run(c, shell=True, cwd=build_dir, capture_output=True, text=True)
		if r.returncode:
			err = [l for l in r.stderr.splitlines() if 'error' in l]
			return b'', f'does not compile alone: {(err or ["?"])[0][:160]}'
		r = subprocess.run(['objcopy', '--strip-debug', out], capture_output=True, text=True)
		if r.returncode:
			return b'', f'objcopy: {r.stderr.strip()[:160]}'
		with open(out, 'rb') as f:
			return f.read(), ''
	finally:
		shutil.rmtree(tmp, ignore_errors=True)


class TCE:
	"""Compares mutants' objects with their original's.

	@src_tree: the tree whose files the build directories compile;
	@build_dirs: where to look for each file's compile command, first
	first; @cache: a mapping (get/put) kept between runs, or None."""

	def __init__(self, src_tree: str, build_dirs: Sequence[str], cache=None, jobs: int = 2):
		self.src_tree = src_tree
		self.build_dirs = [d for d in build_dirs if d]
		self.cache = cache
		self.jobs = max(1, jobs)
		self.compiled = 0
		self.reused = 0
		self._orig: Dict[str, Tuple[str, str, str, str]] = {}

	def _original(self, path: str, lines: List[str]) -> Tuple[str, str, str, str]:
		"""(build dir, command, sha256 of the original object, why not)."""
		if path not in self._orig:
			bd, cmd = compile_command(self.build_dirs, path)
			if not cmd:
				self._orig[path] = ('', '', '', 'no build directory has its compile command')
			else:
				obj, why = object_bytes(bd, cmd, self.src_tree, path, '\n'.join(lines))
				self.compiled += 1
				self._orig[path] = (bd, cmd, hashlib.sha256(obj).hexdigest() if obj else '',
						    why and f'the original {why}')
		return self._orig[path]

	def check(self, items: List[Tuple[str, str, Dict[int, str], List[str]]]
		  ) -> Dict[str, Tuple[Optional[bool], str]]:
		"""@items: (name, file, edits: 0-based line -> text, the file's
		lines).  Returns name -> (True: the same object, False: another
		object, None: not compared; why, or the build compared in)."""
		res: Dict[str, Tuple[Optional[bool], str]] = {}
		todo = []
		for name, path, edits, lines in items:
			if not path.endswith('.c'):
				res[name] = (None, 'a header: every object that includes it would change')
				continue
			todo.append((name, path, edits, lines))
		# the originals first, one compile per file
		paths = {p: l for _, p, _, l in todo}
		with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
			list(ex.map(lambda p: self._original(p, paths[p]), paths))
		work = []
		for name, path, edits, lines in todo:
			bd, cmd, orig, why = self._original(path, lines)
			if not orig:
				res[name] = (None, why)
				continue
			key = CACHE_PREFIX + hashlib.sha256('\0'.join(
				[cmd, path, orig, json.dumps(edits, sort_keys=True)]).encode()).hexdigest()
			hit = self.cache.get(key) if self.cache is not None else None
			if hit is not None and 'identical' in hit:
				self.reused += 1
				res[name] = (hit['identical'], hit.get('where', ''))
				continue
			work.append((name, path, edits, lines, bd, cmd, orig, key))

		def one(w):
			name, path, edits, lines, bd, cmd, orig, key = w
			text = list(lines)
			for l, t in edits.items():
				text[l] = t
			obj, why = object_bytes(bd, cmd, self.src_tree, path, '\n'.join(text))
			return w, obj, why
		with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
			for w, obj, why in ex.map(one, work):
				name, path, _, _, bd, _, orig, key = w
				self.compiled += 1
				if not obj:
					res[name] = (None, why)
					continue
				same = hashlib.sha256(obj).hexdigest() == orig
				where = f'{os.path.splitext(path)[0]}.o of {os.path.basename(bd)}'
				res[name] = (same, where)
				if self.cache is not None:
					self.cache.put(key, {'name': name, 'identical': same, 'where': where})
		return res
