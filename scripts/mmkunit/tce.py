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
and the mutant differ only in the edit.  Nothing is kept between runs but
what ccache keeps: each compile has a fixed directory per mutant under
@work, so that a second run is a ccache hit, and ccache hashes what the
compile reads, headers and config included (docs/mutate.rst, "Equivalent
by their object code")."""

import concurrent.futures
import hashlib
import os
import re
import shlex
import shutil
from typing import Dict, List, Optional, Sequence, Tuple

from . import proc
from .common import Error

COMPILE_TIMEOUT = 600


def compile_command(build_dir: str, path: str) -> str:
	"""The compile command kbuild saved in @build_dir for @path (a .c
	file of the tree), or '' when it has none."""
	obj = os.path.splitext(path)[0] + '.o'
	d, b = os.path.split(obj)
	try:
		with open(os.path.join(build_dir, d, f'.{b}.cmd'), errors='replace') as f:
			first = f.readline()
	except OSError:
		return ''
	return first.split(':=', 1)[1].strip() if ':=' in first else ''


def objcopy_of(cmd: str) -> str:
	"""The objcopy that goes with the compiler of @cmd: PREFIX-objcopy for
	PREFIX-gcc, llvm-objcopy for clang."""
	words = shlex.split(cmd.split(';')[0])
	words = [w for w in words if w not in ('ccache', 'distcc')]
	cc = os.path.basename(words[0]) if words else 'gcc'
	if 'clang' in cc:
		return 'llvm-objcopy'
	m = re.match(r'(.*)gcc(-[0-9.]+)?$', cc)
	return (m.group(1) if m else '') + 'objcopy'


def _command_for(cmd: str, src_tree: str, path: str, src: str, out: str, tmp: str) -> Optional[str]:
	"""@cmd made to compile @src into @out: the compiler alone (kbuild
	chains objtool and others after ';'), no dependency file, make's
	escapes undone, and __FILE__ of @src spelt as the tree's.  None when
	@cmd does not name the tree's source file."""
	cmd = cmd.split(';')[0].replace('$$', '$').replace('$(pound)', '#')
	orig = os.path.join(src_tree, path)
	if f' {orig}' not in cmd or not re.search(r' -o \S+', cmd):
		return None
	cmd = re.sub(r'-Wp,-MMD,\S+', '', cmd)
	cmd = cmd.replace(f' {orig}', f' {shlex.quote(src)}')
	cmd = re.sub(r' -o \S+', f' -o {shlex.quote(out)}', cmd, count=1)
	return cmd + f' -fmacro-prefix-map={shlex.quote(tmp)}/='


def object_hash(build_dir: str, cmd: str, src_tree: str, path: str, text: str, tmp: str,
		env: Optional[Dict[str, str]] = None) -> Tuple[str, str]:
	"""@text compiled as @path with @cmd (in @build_dir, where kbuild runs
	it), in directory @tmp (emptied first, removed after), and stripped of
	debug information: (sha256 of the object, '') or ('', why not)."""
	shutil.rmtree(tmp, ignore_errors=True)
	try:
		src = os.path.join(tmp, path)
		os.makedirs(os.path.dirname(src), exist_ok=True)
		with open(src, 'w', encoding='utf-8', errors='surrogateescape') as f:
			f.write(text)
		out = os.path.join(tmp, 'out.o')
		c = _command_for(cmd, src_tree, path, src, out, tmp)
		if c is None:
			return '', f'the compile command of {path} does not name it'
		with open(os.path.join(tmp, 'log'), 'w') as log:
			r = proc.run(['sh', '-c', c], cwd=build_dir, env=env, log=log, echo=False,
				     timeout=COMPILE_TIMEOUT)
		if not r.ok:
			with open(os.path.join(tmp, 'log'), errors='replace') as f:
				err = [l for l in f.read().splitlines() if 'error' in l]
			return '', ('does not compile alone: ' + (err or ['?'])[0][:160]
				    if not r.timed_out else f'its compile ran {COMPILE_TIMEOUT} s')
		try:
			r = proc.run([objcopy_of(cmd), '--strip-debug', out], echo=False,
				     timeout=COMPILE_TIMEOUT)
		except OSError as e:
			return '', f'{objcopy_of(cmd)}: {e.strerror}'
		if not r.ok:
			return '', f'{objcopy_of(cmd)}: {r.tail.strip()[:160]}'
		with open(out, 'rb') as f:
			return hashlib.sha256(f.read()).hexdigest(), ''
	finally:
		shutil.rmtree(tmp, ignore_errors=True)


class TCE:
	"""Compares mutants' objects with their original's.

	@src_tree: the tree whose files @build_dir compiles; @build_dir: the
	build directory of the kernel the suites ran (its .NAME.o.cmd files);
	@work: where the compiles run, a directory per mutant; @env: for the
	compiler (ccache's); @jobs: compiles at once."""

	def __init__(self, src_tree: str, build_dir: str, work: str,
		     env: Optional[Dict[str, str]] = None, jobs: int = 2):
		self.src_tree = src_tree
		self.build_dir = build_dir
		self.work = work
		# no path rewritten relative to a base directory: __FILE__ of the
		# copy would then escape the -fmacro-prefix-map of its directory
		self.env = dict(env or {}, CCACHE_BASEDIR='')
		self.jobs = max(1, jobs)
		self.compiled = 0
		self._orig: Dict[str, Tuple[str, str, str]] = {}

	def _slot(self, name: str) -> str:
		return os.path.join(self.work, hashlib.sha256(name.encode()).hexdigest()[:16])

	def _original(self, path: str, lines: List[str]) -> Tuple[str, str, str]:
		"""(command, hash of the original object, why not)."""
		cmd = compile_command(self.build_dir, path)
		if not cmd:
			return '', '', f'no compile command of {path} in {os.path.basename(self.build_dir)}'
		h, why = object_hash(self.build_dir, cmd, self.src_tree, path, '\n'.join(lines),
				     self._slot('original:' + path), self.env)
		return cmd, h, why and f'the original {why}'

	def _map(self, fn, items):
		"""fn over @items, @jobs at once, in order; on any exception
		(^C, SIGTERM) the compiles not started are dropped."""
		ex = concurrent.futures.ThreadPoolExecutor(self.jobs)
		try:
			futures = [ex.submit(fn, x) for x in items]
			out = [f.result() for f in futures]
		except BaseException:
			ex.shutdown(wait=True, cancel_futures=True)
			raise
		ex.shutdown(wait=True)
		return out

	def check(self, items: Sequence[Tuple[str, str, List[str], List[str]]]
		  ) -> Dict[str, Tuple[Optional[bool], str]]:
		"""@items: (name, file, the file's lines, the mutant's lines).
		Returns name -> (True: the same object, False: another object,
		None: not compared; why not, or the object compared)."""
		res: Dict[str, Tuple[Optional[bool], str]] = {}
		todo = []
		for name, path, lines, mutated in items:
			if not path.endswith('.c'):
				res[name] = (None, 'not a .c file: every object that includes it would change')
			else:
				todo.append((name, path, lines, mutated))
		paths = sorted({p for _, p, _, _ in todo})
		first = {p: l for _, p, l, _ in todo}
		for p, o in zip(paths, self._map(lambda p: self._original(p, first[p]), paths)):
			self._orig[p] = o
			self.compiled += 1
		work = []
		for name, path, lines, mutated in todo:
			cmd, orig, why = self._orig[path]
			if not orig:
				res[name] = (None, why)
			else:
				work.append((name, path, mutated, cmd, orig))

		def one(w):
			name, path, mutated, cmd, _ = w
			return object_hash(self.build_dir, cmd, self.src_tree, path, '\n'.join(mutated),
					   self._slot(name), self.env)
		for w, (h, why) in zip(work, self._map(one, work)):
			name, path, _, _, orig = w
			self.compiled += 1
			if not h:
				res[name] = (None, why)
			else:
				res[name] = (h == orig, f'{os.path.splitext(path)[0]}.o of '
					     f'{os.path.basename(self.build_dir)}')
		return res


def config_matches(series_dir: str, other_dir: str, ignore: str = 'CONFIG_MM_MUTANT') -> bool:
	"""Whether @other_dir's .config is @series_dir's, but for the options
	starting with @ignore (the schemata build's switch)."""
	def lines(d):
		with open(os.path.join(d, '.config'), errors='replace') as f:
			return [l for l in f.read().splitlines()
				if l and not l.startswith('#') and not l.startswith(ignore)]
	try:
		return lines(series_dir) == lines(other_dir)
	except OSError as e:
		raise Error(f'TCE: {e}') from e


def config_hash(build_dir: str) -> str:
	try:
		with open(os.path.join(build_dir, '.config'), 'rb') as f:
			return hashlib.sha256(f.read()).hexdigest()[:16]
	except OSError:
		return ''
