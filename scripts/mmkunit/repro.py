# SPDX-License-Identifier: GPL-2.0
"""What rebuilds a stage's result, recorded in summary.json (stage
"repro") and in KCIDB's misc: the kernel config (path and sha256), the
compiler (the config's CONFIG_CC_VERSION_TEXT), the QEMU version and
command line (as kunit.py printed it, and as run after the repo's QEMU
wrapper chose the accelerator), the patches applied with their git
patch-id and sha256 (and KCIDB's patchset_hash over them), and the seeds
the randomised cases printed in the guest log."""

import hashlib
import os
import re
import shlex
import subprocess
from typing import Dict, List

from .common import GIT_ID, REPO, rel

_QEMU_VERSION: Dict[str, str] = {}


def sha256_file(path: str) -> str:
	h = hashlib.sha256()
	with open(path, 'rb') as f:
		for chunk in iter(lambda: f.read(1 << 20), b''):
			h.update(chunk)
	return h.hexdigest()


def patchset_hash(sha256s: List[str]) -> str:
	"""KCIDB's patchset_hash: sha256 over the newline-terminated sha256 of
	each patch, in order ("sha256sum *.patch | cut -c-64 | sha256sum");
	'' for no patches."""
	if not sha256s:
		return ''
	return hashlib.sha256(''.join(h + '\n' for h in sha256s).encode()).hexdigest()


def patch_id(path: str) -> str:
	"""git patch-id --stable of a patch file ('' when it has no diff)."""
	with open(path, 'rb') as f:
		r = subprocess.run(['git', 'patch-id', '--stable'], input=f.read(),
				   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
				   env=dict(os.environ, **GIT_ID), timeout=120)
	return r.stdout.decode().split()[0] if r.stdout.strip() else ''


def patches_record(paths: List[str], labels: List[str]) -> Dict:
	"""The patches applied, in order: file, sha256, patch-id; patchset_hash."""
	rows = []
	for path, label in zip(paths, labels):
		rows.append({'patch': label, 'file': rel(path), 'sha256': sha256_file(path),
			     'patch_id': patch_id(path)})
	return {'patches': rows, 'patchset_hash': patchset_hash([r['sha256'] for r in rows])}


def config_record(build_dir: str) -> Dict[str, str]:
	path = os.path.join(build_dir, '.config')
	if not os.path.isfile(path):
		return {}
	cc = ''
	with open(path, errors='replace') as f:
		for line in f:
			m = re.match(r'CONFIG_CC_VERSION_TEXT="(.*)"', line)
			if m:
				cc = m.group(1)
				break
	return {'kernel_config': rel(path), 'kernel_config_sha256': sha256_file(path),
		'compiler': cc}


def qemu_version(binary: str = 'qemu-system-x86_64') -> str:
	if binary not in _QEMU_VERSION:
		try:
			r = subprocess.run([binary, '--version'], stdout=subprocess.PIPE,
					   stderr=subprocess.STDOUT, text=True, timeout=30)
			_QEMU_VERSION[binary] = (r.stdout.strip().splitlines() or [''])[0]
		except (OSError, subprocess.TimeoutExpired) as e:
			_QEMU_VERSION[binary] = f'unknown ({e})'
	return _QEMU_VERSION[binary]


def qemu_command(log_text: str) -> str:
	"""The QEMU command line kunit.py printed ("Running tests with:")."""
	m = re.search(r'^Running tests with:\n\$ (.*)$', log_text, re.M)
	return m.group(1).strip() if m else ''


def effective_qemu(cmd: str, accel: str, exact: bool) -> str:
	"""@cmd as the repo's QEMU wrapper (x86_64_mm.d) runs it where KVM is
	not usable: kunit.py's -accel kvm/hvf dropped, -accel tcg threaded
	(exact mode: single-threaded with -icount shift=0,sleep=off)."""
	if not cmd or accel == 'kvm':
		return cmd
	try:
		args = shlex.split(cmd)
	except ValueError:
		return cmd
	out, i = [], 0
	while i < len(args):
		if args[i] == '-accel' and i + 1 < len(args):
			if args[i + 1] == 'tcg':
				out += (['-accel', 'tcg,thread=single', '-icount', 'shift=0,sleep=off']
					if exact else ['-accel', 'tcg,thread=multi'])
			i += 2
			continue
		out.append(args[i])
		i += 1
	return ' '.join(shlex.quote(a) for a in out)


SEED_RE = re.compile(r'#\s*([A-Za-z_]\w*):\s.*?\bseed[ =:]+(\d+)')


def seeds(log_lines: List[str]) -> List[Dict[str, str]]:
	"""The seeds randomised cases printed ("# case: seed N ...")."""
	out = []
	for line in log_lines:
		m = SEED_RE.search(line)
		if m:
			out.append({'case': m.group(1), 'seed': m.group(2)})
	return out


def record(build_dir: str, logpath: str, log_lines: List[str],
	   patch_paths: List[str], patch_labels: List[str]) -> Dict:
	"""Everything above for one stage."""
	rec: Dict = {}
	rec.update(config_record(build_dir))
	text = ''
	if os.path.isfile(logpath):
		with open(logpath, errors='replace') as f:
			text = f.read()
	cmd = qemu_command(text)
	try:
		from .kernel import load_qemu_config
		accel = load_qemu_config().choose_accel()
	except Exception:		# the record must not stop a run
		accel = 'unknown'
	exact = os.environ.get('MMKUNIT_EXACT') == '1'
	rec.update(qemu=qemu_version(), qemu_command_kunit=cmd,
		   qemu_command=effective_qemu(cmd, accel, exact), accel=accel,
		   exact_mode=exact, seeds=seeds(log_lines))
	rec.update(patches_record(patch_paths, patch_labels))
	rec.update(git_heads())
	return rec


def git_heads() -> Dict[str, str]:
	"""build/tree's HEAD, the imported base commit and a git KDIR's HEAD."""
	out = {}
	gd = os.path.join(REPO, 'build', 'linux.git')
	for key, args in (('tree_head', ['-C', os.path.join(REPO, 'build', 'tree'), 'rev-parse',
					 'HEAD']),
			  ('base_commit', ['--git-dir', gd, 'rev-parse', '-q', '--verify',
					   'refs/heads/base']),
			  ('kdir_head', ['--git-dir', gd, 'rev-parse', '-q', '--verify',
					 'refs/kdir/head'])):
		try:
			r = subprocess.run(['git'] + args, stdout=subprocess.PIPE,
					   stderr=subprocess.DEVNULL, text=True, timeout=60,
					   env=dict(os.environ, **GIT_ID))
		except (OSError, subprocess.TimeoutExpired):
			continue
		if r.returncode == 0 and r.stdout.strip():
			out[key] = r.stdout.strip()
	if not os.environ.get('KDIR'):
		out.pop('kdir_head', None)	# a KDIR of an earlier run
	return out
