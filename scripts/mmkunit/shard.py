# SPDX-License-Identifier: GPL-2.0
"""SHARD=i/N of make mutate, series-check and bench-matrix: the slice a
shard runs, what every shard records of the whole run (so that a merge
can tell shards of one run from shards of another), and the checks of a
merge: same run, same N, no shard twice, no item in two shards, which
shards are missing.  docs/mutate.rst, "Across machines: shards and merge"."""

import hashlib
import json
import os
import re
import subprocess
from typing import Callable, Dict, List, Sequence, Tuple

from . import arch, tree
from .common import BUILD, REPO, Error, rel

FORMAT = 1
FILE_RE = re.compile(r'^shard-(\d+)-of-(\d+)\.json$')


def parse(spec: str) -> Tuple[int, int]:
	"""SHARD=i/N: (i, N), 1 <= i <= N."""
	m = re.match(r'^\s*(\d+)\s*/\s*(\d+)\s*$', spec)
	if not m:
		raise Error(f'SHARD={spec}: give i/N, two numbers with 1 <= i <= N '
			    '(e.g. SHARD=2/4: the second of four shards)')
	i, n = int(m.group(1)), int(m.group(2))
	if n < 1:
		raise Error(f'SHARD={spec}: N is the number of shards, at least 1')
	if i < 1:
		raise Error(f'SHARD={spec}: shards count from 1 (SHARD=1/{n} .. SHARD={n}/{n})')
	if i > n:
		raise Error(f'SHARD={spec}: there are only {n} shards (SHARD=1/{n} .. SHARD={n}/{n})')
	return i, n


def block(items: Sequence, i: int, n: int) -> list:
	"""Shard i of n (1-based) of @items: the i-th of n contiguous blocks,
	their sizes at most one apart (the first ones the smaller)."""
	return list(items[(i - 1) * len(items) // n:i * len(items) // n])


def name(i: int, n: int) -> str:
	return f'shard-{i}-of-{n}'


def spans(ks: List[int]) -> str:
	"""1, 2, 3, 5 -> "1-3, 5"."""
	out: List[str] = []
	for k in sorted(ks):
		if out and k == int(out[-1].split('-')[-1]) + 1:
			out[-1] = out[-1].split('-')[0] + f'-{k}'
		else:
			out.append(str(k))
	return ', '.join(out)


def repo_commit() -> str:
	"""This repo's HEAD ("-dirty" with changes to tracked files), or ''
	outside git."""
	def git(*args: str) -> subprocess.CompletedProcess:
		return subprocess.run(['git', '-C', REPO] + list(args), capture_output=True,
				      text=True)
	head = git('rev-parse', '--verify', '-q', 'HEAD')
	if head.returncode:
		return ''
	dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!build').stdout
	return head.stdout.strip() + ('-dirty' if dirty.strip() else '')


def patch_ids(series: List[str]) -> List[List[str]]:
	"""[name, sha256 of the file] of each patch of the series."""
	out = []
	for p in series:
		with open(tree.patch_file(p), 'rb') as f:
			out.append([tree.patch_name(p), hashlib.sha256(f.read()).hexdigest()[:16]])
	return out


def base_tree() -> str:
	"""The tree (contents) of the base kernel: the same on every machine
	with the same Linux 7.3 source, whatever its import commit is."""
	gd = os.path.join(BUILD, 'linux.git')
	return tree.git(['rev-parse', tree.base_commit() + '^{tree}'], gd,
			capture=True).stdout.strip()


def run_identity(command: str, series: List[str], **what) -> Dict:
	"""What a whole run is, as every shard of it records it: the command,
	the architecture, the base kernel's tree, the series' patches, this
	repo's commit, and @what (the prefixes, the suites filter, ...)."""
	return dict({'command': command, 'arch': arch.current().name, 'base_tree': base_tree(),
		     'patches': patch_ids(series), 'repo': repo_commit()}, **what)


def fingerprint(run: Dict) -> str:
	return hashlib.sha256(json.dumps(run, sort_keys=True).encode()).hexdigest()[:16]


def record(run: Dict, i: int, n: int) -> Dict:
	"""The head of a shard's JSON."""
	return {'format': FORMAT, 'command': run['command'], 'fingerprint': fingerprint(run),
		'run': run, 'shard': f'{i}/{n}', 'shards': [i], 'shard_count': n}


def write(path: str, data: Dict) -> None:
	os.makedirs(os.path.dirname(path), exist_ok=True)
	with open(path, 'w') as f:
		json.dump(data, f, indent=1)
		f.write('\n')


def load(paths: List[str], directory: str, command: str,
	 is_shard: Callable[[Dict], bool] = None) -> List[Tuple[str, Dict]]:
	"""The shards' JSON: @paths, else every shard-*-of-*.json in
	@directory.  @is_shard tells a shard of @command (default: its
	"command" and a "fingerprint")."""
	if not paths and os.path.isdir(directory):
		paths = sorted(os.path.join(directory, n) for n in os.listdir(directory)
			       if FILE_RE.match(n))
	if not paths:
		raise Error(f'{command}-merge: no shard results: give SHARDS="a.json b.json" or run '
			    f'make {command} SHARD=i/N first (they go to {rel(directory)}/)')
	out = []
	for p in paths:
		with open(p) as f:
			try:
				d = json.load(f)
			except ValueError as e:
				raise Error(f'{command}-merge: {p} is not JSON ({e})')
		ok = isinstance(d, dict) and (is_shard(d) if is_shard else
					      d.get('command') == command and 'fingerprint' in d)
		if not ok:
			raise Error(f'{command}-merge: {p} is not a shard of make {command}'
				    + (f' (it is one of make {d["command"]})'
				       if isinstance(d, dict) and d.get('command', command) != command
				       else ''))
		out.append((p, d))
	return out


def differences(a: Dict, b: Dict) -> List[str]:
	return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def check(shards: List[Tuple[str, Dict]], command: str,
	  items: Callable[[Dict], List[int]], what: str = 'prefix') -> List[int]:
	"""Refuse shards of different runs or of different N, a shard given
	twice, an item (@items of a shard) in two shards; return the missing
	shards' numbers."""
	p0, d0 = shards[0]
	for p, d in shards[1:]:
		if d['fingerprint'] != d0['fingerprint']:
			diff = differences(d0.get('run', {}), d.get('run', {}))
			raise Error(f'{command}-merge: {rel(p0)} and {rel(p)} are shards of different '
				    f'runs (they differ in {", ".join(diff) or "their fingerprint"})')
		if d['shard_count'] != d0['shard_count']:
			raise Error(f'{command}-merge: {rel(p0)} is a shard of {d0["shard_count"]}, '
				    f'{rel(p)} one of {d["shard_count"]}')
	seen_shard: Dict[int, str] = {}
	seen_item: Dict[int, str] = {}
	for p, d in shards:
		for s in d['shards']:
			if s in seen_shard:
				raise Error(f'{command}-merge: shard {s}/{d["shard_count"]} given twice '
					    f'({rel(seen_shard[s])}, {rel(p)})')
			seen_shard[s] = p
		for k in items(d):
			if k in seen_item:
				raise Error(f'{command}-merge: {what} {k} is in two shards '
					    f'({rel(seen_item[k])}, {rel(p)})')
			seen_item[k] = p
	n = d0['shard_count']
	return sorted(set(range(1, n + 1)) - set(seen_shard))
