#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Add this repo's suites to a kernel tree of yours, or take them out again.

  install.py install KDIR     copy the overlay into KDIR, add the hook lines
  install.py uninstall KDIR   remove exactly what install added

After "install", stock kunit_tool works in KDIR:

  ./tools/testing/kunit/kunit.py run --kunitconfig=mm/tests \\
      --qemu_config=tools/testing/kunit/qemu_configs/x86_64_mm.py --arch=x86_64 \\
      --filter='speed>slow' --timeout=900

(speed>slow leaves out the KUNIT_CASE_SLOW benchmarks and race suites,
which take longer than kunit.py's default 300 s timeout under TCG)

(plus one --kunitconfig= per directory of mmkunit.tree.SUITE_KUNITCONFIGS; install
prints the full command).

What goes in is what the runner puts in its own tree: every file under
mmkunit.tree.OVERLAY_DIRS and the lines of mmkunit.tree.HOOKS (both read at run time).
Install keeps a manifest, KDIR/.mm-kunit-install (JSON: each file with its
sha256, the directories it created, each hook line and where it went), so
uninstall removes only that: our files if they are unchanged since install
(an edited one is kept and named), the hook lines, and the directories it
created once they are empty.  Files that are not ours are never touched:
install refuses (exit 2, before changing anything) when one of our paths
already exists in KDIR with other content.

Version policy: KDIR must be a kernel tree (Makefile with VERSION and
PATCHLEVEL, mm/Kconfig, tools/testing/kunit/kunit.py and every file a hook
goes into), otherwise exit 2.  Linux 7.3 is what the suites are written
for; another 7.x gets a warning and the install goes on (the suites may not
build there); any other version is refused with exit 2.

Exit codes: 0 done (or nothing to do; uninstall without a manifest says
there is nothing to remove and exits 0), 2 refused.  No git command is run;
a git tree sees our files as untracked and the hook lines as modifications.
"""

import hashlib
import json
import os
import stat
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mmkunit import tree as runner_tree  # noqa: E402  (the tree module only)

MANIFEST = '.mm-kunit-install'
MANIFEST_FORMAT = 1
WANT_VERSION = (7, 3)


class Refused(Exception):
	"""KDIR cannot be used; one line says why (exit 2)."""


def out(msg: str) -> None:
	print(msg, flush=True)


def sha256(path: str) -> str:
	h = hashlib.sha256()
	with open(path, 'rb') as f:
		for chunk in iter(lambda: f.read(1 << 16), b''):
			h.update(chunk)
	return h.hexdigest()


def file_mode(path: str) -> int:
	return stat.S_IMODE(os.stat(path).st_mode)


def hooks_now() -> List[Tuple[str, str, Optional[str]]]:
	return list(runner_tree.HOOKS)


# ---------------------------------------------------------------- checks

def check_tree(kdir: str, hooks) -> Tuple[int, int]:
	"""Refuse anything that is not a kernel tree; return its version."""
	if not os.path.isdir(kdir):
		raise Refused(f'{kdir}: no such directory')
	real = os.path.realpath(kdir)
	if real == os.path.realpath(runner_tree.REPO):
		raise Refused(f'{kdir} is this repo, not a kernel tree')
	if real == os.path.realpath(runner_tree.TREE):
		raise Refused(f'{kdir} is the runner\'s own tree; "make tree" '
			      'puts the suites there by itself')
	need = ['Makefile', 'mm/Kconfig', 'tools/testing/kunit/kunit.py']
	need += [h[0] for h in hooks if h[0] not in need]
	for rel in need:
		if not os.path.isfile(os.path.join(kdir, rel)):
			raise Refused(f'{kdir} is not a kernel tree: it has no {rel}')
	ver = runner_tree.kernel_version(kdir)
	if ver is None:
		raise Refused(f'{kdir} is not a kernel tree: its Makefile has no '
			      'VERSION/PATCHLEVEL')
	if ver[0] != WANT_VERSION[0]:
		raise Refused(f'{kdir} is Linux {ver[0]}.{ver[1]}; the suites are '
			      f'for {WANT_VERSION[0]}.{WANT_VERSION[1]}')
	if ver != WANT_VERSION:
		out(f'warning: {kdir} is Linux {ver[0]}.{ver[1]}, the suites are '
		    f'written for {WANT_VERSION[0]}.{WANT_VERSION[1]}; installing '
		    'anyway, they may not build')
	return ver


# ---------------------------------------------------------------- manifest

def load_manifest(kdir: str) -> Optional[dict]:
	path = os.path.join(kdir, MANIFEST)
	if not os.path.isfile(path):
		return None
	try:
		with open(path) as f:
			m = json.load(f)
	except (OSError, ValueError) as e:
		raise Refused(f'{path} is unreadable ({e}); remove it by hand')
	if m.get('format') != MANIFEST_FORMAT:
		raise Refused(f'{path} has format {m.get("format")!r}, '
			      f'this script knows {MANIFEST_FORMAT}')
	return m


def save_manifest(kdir: str, m: dict) -> bool:
	"""Write the manifest if it changed; return whether it did."""
	path = os.path.join(kdir, MANIFEST)
	text = json.dumps(m, indent=1, sort_keys=True) + '\n'
	try:
		with open(path) as f:
			if f.read() == text:
				return False
	except OSError:
		pass
	write_file(path, text.encode(), 0o644)
	return True


def write_file(path: str, data: bytes, mode: int) -> None:
	"""Replace path atomically; the new file gets the current mtime, so
	kbuild rebuilds what depends on it."""
	fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix='.mm-kunit.')
	try:
		with os.fdopen(fd, 'wb') as f:
			f.write(data)
		os.chmod(tmp, mode)
		os.replace(tmp, path)
	except BaseException:
		if os.path.exists(tmp):
			os.unlink(tmp)
		raise


# ---------------------------------------------------------------- hooks

def add_hook(kdir: str, hook) -> Optional[dict]:
	"""Add one hook with runner_tree.apply_hooks(); return where it went, or
	None if the line was already there (then it is not ours)."""
	rel = hook[0]
	path = os.path.join(kdir, rel)
	with open(path, 'rb') as f:
		before = f.read()
	if not runner_tree.apply_hooks(kdir, [hook]):
		return None
	with open(path, 'rb') as f:
		after = f.read()
	b, a = before.split(b'\n'), after.split(b'\n')
	i = 0
	while i < len(b) and b[i] == a[i]:
		i += 1
	block = a[i:i + len(a) - len(b)]
	# The only change must be the inserted lines; apply_hooks() rewrites
	# the file, which would also change e.g. a missing final newline.
	if a[:i] + a[i + len(block):] != b:
		with open(path, 'wb') as f:
			f.write(before)
		raise Refused(f'{rel}: adding the hook line would change more than '
			      'that line (no final newline?); add it by hand: '
			      f'{hook[1]}')
	return {'file': rel, 'line': hook[1], 'at': i,
		'block': [x.decode() for x in block]}


def remove_hook(kdir: str, h: dict) -> str:
	"""Take out the lines add_hook() put in; say what happened."""
	path = os.path.join(kdir, h['file'])
	try:
		with open(path, 'rb') as f:
			lines = f.read().split(b'\n')
	except OSError:
		return 'file is gone, nothing to remove'
	block = [x.encode() for x in h['block']]
	n = len(block)
	at = h['at']
	if lines[at:at + n] != block:
		# The file was edited since install: look for the block itself.
		found = [i for i in range(len(lines) - n + 1) if lines[i:i + n] == block]
		if not found:
			if h['line'].encode() in (x.strip() for x in lines):
				return 'line moved or reformatted by hand, left in place'
			return 'line no longer there, nothing to remove'
		at = min(found, key=lambda i: abs(i - h['at']))
	del lines[at:at + n]
	mode = file_mode(path)
	write_file(path, b'\n'.join(lines), mode)
	return 'removed'


# ---------------------------------------------------------------- install

def install(kdir: str) -> int:
	hooks = hooks_now()
	ver = check_tree(kdir, hooks)
	old = load_manifest(kdir) or {'format': MANIFEST_FORMAT, 'files': {},
				      'dirs': [], 'hooks': []}
	repo = runner_tree.REPO
	files = runner_tree.overlay_files()
	ofiles: Dict[str, dict] = old['files']

	# Plan every file before changing anything, so a conflict leaves the
	# tree as it was.
	plan = []
	conflicts = []
	for rel in files:
		src = os.path.join(repo, rel)
		dst = os.path.join(kdir, rel)
		want = sha256(src)
		mode = file_mode(src)
		rec = ofiles.get(rel)
		if os.path.lexists(dst) and not os.path.isfile(dst):
			conflicts.append(f'{rel} (not a regular file)')
			continue
		have = sha256(dst) if os.path.isfile(dst) else None
		if rec is None or not rec.get('ours', True):
			if have is None:
				plan.append(('added', rel, src, want, mode))
			elif have == want:
				plan.append(('theirs', rel, src, want, mode))
			else:
				conflicts.append(rel)
		elif have is None:
			plan.append(('added', rel, src, want, mode))
		elif have != rec['sha256'] and have != want:
			plan.append(('kept', rel, src, want, mode))
		elif have == want and file_mode(dst) == mode:
			plan.append(('unchanged', rel, src, want, mode))
		else:
			plan.append(('updated', rel, src, want, mode))
	if conflicts:
		for c in conflicts:
			out(f'  conflict  {c}: exists in {kdir} with other content, not ours')
		raise Refused(f'{len(conflicts)} of our paths already exist in {kdir} '
			      'with other content; move them away and rerun')

	out(f'mm-kunit: install into {kdir} (Linux {ver[0]}.{ver[1]}) '
	    f'from {repo}')
	new = {'format': MANIFEST_FORMAT, 'repo': repo, 'files': {},
	       'dirs': list(old['dirs']), 'hooks': list(old['hooks'])}
	counts = dict.fromkeys(('added', 'updated', 'unchanged', 'kept', 'removed',
				'hooks added', 'hooks removed'), 0)
	try:
		for what, rel, src, want, mode in plan:
			dst = os.path.join(kdir, rel)
			if what in ('added', 'updated'):
				make_dirs(kdir, os.path.dirname(rel), new['dirs'])
				with open(src, 'rb') as f:
					write_file(dst, f.read(), mode)
				new['files'][rel] = {'sha256': want}
				counts[what] += 1
				out(f'  {what:<9} {rel}')
			elif what == 'unchanged':
				new['files'][rel] = {'sha256': want}
				counts[what] += 1
				out(f'  left      {rel} (unchanged)')
			elif what == 'kept':
				new['files'][rel] = ofiles[rel]
				counts[what] += 1
				out(f'  kept      {rel} (edited since install; not '
				    'overwritten: remove it and rerun to get the repo\'s)')
			else:  # theirs: already there, identical, not ours
				new['files'][rel] = {'sha256': want, 'ours': False}
				counts['unchanged'] += 1
				out(f'  left      {rel} (already there before install, '
				    'identical; not ours, uninstall keeps it)')
		# Files we installed that the repo no longer has.
		for rel, rec in sorted(ofiles.items()):
			if rel in new['files']:
				continue
			if not rec.get('ours', True):
				continue
			what = remove_ours(kdir, rel, rec)
			if what == 'removed':
				counts['removed'] += 1
				out(f'  removed   {rel} (no longer in the repo)')
			elif what == 'kept':
				counts['kept'] += 1
				out(f'  kept      {rel} (no longer in the repo, but edited '
				    'since install)')
		# Hooks: drop the ones that left HOOKS, add the new ones.
		current = {(h[0], h[1]) for h in hooks}
		for h in reversed(old['hooks']):
			if (h['file'], h['line']) in current:
				continue
			res = remove_hook(kdir, h)
			new['hooks'].remove(h)
			if res == 'removed':
				counts['hooks removed'] += 1
			out(f'  hook      {h["file"]}: - {h["line"]} ({res})')
		recorded = {(h['file'], h['line']) for h in new['hooks']}
		for hook in hooks:
			added = add_hook(kdir, hook)
			if added:
				if (hook[0], hook[1]) in recorded:
					# Ours, but the user took the line out: a new record.
					new['hooks'] = [h for h in new['hooks'] if
							(h['file'], h['line']) != (hook[0], hook[1])]
				new['hooks'].append(added)
				counts['hooks added'] += 1
				out(f'  hook      {hook[0]}: + {hook[1]}')
			elif (hook[0], hook[1]) in recorded:
				out(f'  hook      {hook[0]}: {hook[1]} (present)')
			else:
				out(f'  hook      {hook[0]}: {hook[1]} (already there '
				    'before install; not ours, uninstall keeps it)')
		remove_empty_dirs(kdir, new['dirs'])
	finally:
		# Whatever was done is recorded, even if a step failed half way.
		for rel, rec in ofiles.items():
			if rel not in new['files'] and os.path.isfile(os.path.join(kdir, rel)):
				new['files'][rel] = rec
		wrote = save_manifest(kdir, new)

	changed = (counts['added'] + counts['updated'] + counts['removed'] +
		   counts['hooks added'] + counts['hooks removed'])
	if not changed:
		out(f'nothing changed: {kdir} already has this repo\'s suites '
		    f'({counts["unchanged"]} files, {len(hooks)} hook lines)')
	else:
		out(f'{counts["added"]} added, {counts["updated"]} updated, '
		    f'{counts["unchanged"]} unchanged, {counts["removed"]} removed, '
		    f'{counts["kept"]} kept; {counts["hooks added"]} hook lines added'
		    + (f', {counts["hooks removed"]} removed'
		       if counts['hooks removed'] else '')
		    + (f'; manifest {MANIFEST} written' if wrote else ''))
		out('run them there with:\n  ./tools/testing/kunit/kunit.py run '
		    + kunitconfig_args() + ' \\\n      --qemu_config='
		    f'{runner_tree.QEMU_CONFIG} --arch=x86_64 \\\n'
		    "      --filter='speed>slow' --timeout=900\n"
		    '(the KUNIT_CASE_SLOW benchmarks and race suites: drop the filter, '
		    'and give them --timeout=3600)')
	if counts['kept']:
		out(f'note: {counts["kept"]} edited files kept, see above')
	return 0


def kunitconfig_args() -> str:
	"""--kunitconfig= of every functional suite directory."""
	return ' '.join(f'--kunitconfig={os.path.dirname(k)}'
			for k in runner_tree.SUITE_KUNITCONFIGS)


def make_dirs(kdir: str, rel: str, created: List[str]) -> None:
	"""mkdir -p KDIR/rel, recording each directory made."""
	if not rel or os.path.isdir(os.path.join(kdir, rel)):
		return
	make_dirs(kdir, os.path.dirname(rel), created)
	os.mkdir(os.path.join(kdir, rel))
	if rel not in created:
		created.append(rel)


def remove_ours(kdir: str, rel: str, rec: dict) -> str:
	"""Remove one installed file if unchanged: 'removed', 'kept' or 'gone'."""
	path = os.path.join(kdir, rel)
	if not os.path.isfile(path):
		return 'gone'
	if sha256(path) != rec['sha256']:
		return 'kept'
	os.unlink(path)
	# The byte-compiled copy kunit.py leaves next to a QEMU config.
	if rel.endswith('.py'):
		cache = os.path.join(os.path.dirname(path), '__pycache__')
		stem = os.path.basename(rel)[:-3] + '.'
		if os.path.isdir(cache):
			for n in os.listdir(cache):
				if n.startswith(stem) and n.endswith('.pyc'):
					os.unlink(os.path.join(cache, n))
	return 'removed'


def remove_empty_dirs(kdir: str, dirs: List[str]) -> List[str]:
	"""rmdir the recorded directories that are empty, deepest first;
	return the ones removed (and drop them from dirs)."""
	gone = []
	for rel in sorted(dirs, key=lambda d: d.count('/'), reverse=True):
		path = os.path.join(kdir, rel)
		if not os.path.isdir(path):
			gone.append(rel)
			continue
		if not os.listdir(path):
			os.rmdir(path)
			gone.append(rel)
	for rel in gone:
		dirs.remove(rel)
	return gone


# ---------------------------------------------------------------- uninstall

def uninstall(kdir: str) -> int:
	if not os.path.isdir(kdir):
		raise Refused(f'{kdir}: no such directory')
	m = load_manifest(kdir)
	if m is None:
		out(f'mm-kunit: nothing to remove: {kdir} has no {MANIFEST} '
		    '(never installed, or already uninstalled)')
		return 0
	out(f'mm-kunit: uninstall from {kdir}')
	kept = 0
	for rel, rec in sorted(m['files'].items()):
		if not rec.get('ours', True):
			out(f'  left      {rel} (was there before install)')
			continue
		what = remove_ours(kdir, rel, rec)
		if what == 'removed':
			out(f'  removed   {rel}')
		elif what == 'kept':
			kept += 1
			out(f'  kept      {rel} (edited since install; it is yours now)')
		else:
			out(f'  gone      {rel} (already removed)')
	for h in reversed(m['hooks']):
		out(f'  hook      {h["file"]}: - {h["line"]} ({remove_hook(kdir, h)})')
	dirs = list(m['dirs'])
	for rel in remove_empty_dirs(kdir, dirs):
		out(f'  rmdir     {rel}')
	for rel in dirs:
		out(f'  left      {rel}/ (not empty)')
	os.unlink(os.path.join(kdir, MANIFEST))
	out(f'  removed   {MANIFEST}')
	if kept:
		out(f'note: {kept} edited files kept, see above')
	return 0


def main(argv: List[str]) -> int:
	if len(argv) != 2 or argv[0] not in ('install', 'uninstall'):
		print(__doc__, file=sys.stderr)
		return 2
	cmd, kdir = argv[0], os.path.expanduser(argv[1])
	try:
		return (install if cmd == 'install' else uninstall)(kdir)
	except Refused as e:
		print(f'mm-kunit {cmd}: refused: {e}', file=sys.stderr)
		return 2


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
