# SPDX-License-Identifier: GPL-2.0
"""The kernel tree: the base source imported as one commit, a variant's
patches applied with git am, our suites and the hooks that build them.

build/tree is a worktree of build/linux.git shared by all variants; it is
reassembled only when the variant's key changes, and never over local
changes without FORCE=1."""

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from typing import List, Optional, Tuple

from .common import BUILD, GIT_ID, REPO, Error, info, rel, sh

# Files of ours copied into the kernel tree, relative to the repo root.
OVERLAY_DIRS = ['mm/tests', 'tools/testing/kunit/configs',
		'tools/testing/kunit/qemu_configs']
# x86_64's; arch.current().qemu_config is the run's architecture's
QEMU_CONFIG = 'tools/testing/kunit/qemu_configs/x86_64_mm.py'
DEBUG_KUNITCONFIG = 'tools/testing/kunit/configs/mm_debug.config'
# kunitconfigs of the functional suites, relative to the tree.
SUITE_KUNITCONFIGS = ['mm/tests/.kunitconfig']
# Added after the suites' kunitconfig for the benchmarks' kernels: the series
# as a distribution would build it, without the test hooks' option.
NOHOOKS_KUNITCONFIG = 'tools/testing/kunit/configs/mm_nohooks.config'
# Added after those for every benchmark kernel: what the suites turn on that
# the benchmarks' reference numbers were measured without.
BENCH_BASE_KUNITCONFIG = 'tools/testing/kunit/configs/mm_bench_base.config'
# Added after the suites' kunitconfig by make run-kcsan (KCSAN excludes KASAN)
KCSAN_KUNITCONFIG = 'tools/testing/kunit/configs/mm_kcsan.config'

def kernel_version(tree: str) -> Optional[Tuple[int, int]]:
	"""(VERSION, PATCHLEVEL) of a kernel tree, None if it is not one."""
	mk = os.path.join(tree, 'Makefile')
	if not (os.path.isfile(mk) and os.path.isdir(os.path.join(tree, 'mm')) and
		os.path.isfile(os.path.join(tree, 'tools/testing/kunit/kunit.py'))):
		return None
	v = {}
	with open(mk, errors='replace') as f:
		for line in f.readlines()[:10]:
			m = re.match(r'^(VERSION|PATCHLEVEL)\s*=\s*(\d+)', line)
			if m:
				v[m.group(1)] = int(m.group(2))
	if 'VERSION' not in v or 'PATCHLEVEL' not in v:
		return None
	return v['VERSION'], v['PATCHLEVEL']


def is_git_tree(tree: str) -> bool:
	return os.path.exists(os.path.join(tree, '.git'))


# Every git command on a user's tree: no index refresh written there, a timeout.
def user_git(tree: str, args: List[str], what: str) -> bytes:
	"""stdout of git @args in the user's tree @tree; Error on failure."""
	try:
		r = subprocess.run(['git', '--no-optional-locks', '-C', tree] + args,
				   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
				   env=dict(os.environ, GIT_CONFIG_NOSYSTEM='1'), timeout=600)
	except subprocess.TimeoutExpired:
		raise Error(f'git {args[0]} in KDIR={tree} ({what}) timed out after 600 s')
	if r.returncode != 0:
		raise Error(f'git {args[0]} in KDIR={tree} ({what}) failed: '
			    f'{r.stderr.decode(errors="replace").strip()}')
	return r.stdout


def untracked_files(tree: str) -> List[str]:
	"""A git tree's untracked files that its ignore rules do not ignore
	(a new source not yet added; build output is ignored)."""
	out = user_git(tree, ['ls-files', '-z', '--others', '--exclude-standard'],
		       'untracked files')
	return sorted(n for n in out.decode(errors='surrogateescape').split('\0') if n)


def tree_state(tree: str) -> str:
	"""A cheap fingerprint of a user's tree, to know when to re-import it.

	A git tree: HEAD, its uncommitted changes and its untracked files (name,
	size, mtime).  Anything else: the number of files and the newest mtime.
	"""
	if is_git_tree(tree):
		head = user_git(tree, ['rev-parse', 'HEAD'], 'HEAD').decode().strip()
		h = hashlib.sha256(user_git(tree, ['diff', '--binary', 'HEAD'], 'changes'))
		for n in untracked_files(tree):
			try:
				st = os.lstat(os.path.join(tree, n))
			except OSError:
				continue
			h.update(f'{n}\0{st.st_size}\0{st.st_mtime_ns}\0'.encode(
				errors='surrogateescape'))
		return head + ':' + h.hexdigest()[:16]
	count, newest = 0, 0
	for root, dirs, files in os.walk(tree):
		dirs[:] = [d for d in dirs if d != '.git']
		for n in files:
			try:
				st = os.lstat(os.path.join(root, n))
			except OSError:
				continue
			count += 1
			newest = max(newest, st.st_mtime_ns)
	return f'{count}:{newest}'


def source_tree() -> Tuple[str, str, bool]:
	"""Return (path, identity, is_user_tree) of the base kernel source."""
	kdir = os.environ.get('KDIR', '')
	if kdir:
		kdir = os.path.abspath(kdir)
		ver = kernel_version(kdir)
		if ver is None:
			raise Error(f'KDIR={kdir} is not a kernel tree '
				    '(no Makefile with VERSION/PATCHLEVEL, mm/ and tools/testing/kunit)')
		if ver != (7, 3):
			info(f'warning: KDIR is Linux {ver[0]}.{ver[1]}, the series is against 7.3')
		depth = os.environ.get('KDIR_DEPTH', '').strip() if is_git_tree(kdir) else ''
		return kdir, f'kdir:{kdir}:{tree_state(kdir)}' + (f':depth={depth}' if depth
								   else ''), True
	env = {}
	tarball = os.environ.get('LINUX_TARBALL', '')
	if tarball:
		tarball = os.path.abspath(tarball)
		if not os.path.isfile(tarball):
			raise Error(f'LINUX_TARBALL={tarball} does not exist')
		env['LINUX_TARBALL'] = tarball
		# A different tarball must not reuse the Debian unpack.
		srcdir = os.path.join(BUILD, 'src-tarball')
		if os.path.exists(os.path.join(srcdir, 'tarball')):
			with open(os.path.join(srcdir, 'tarball')) as f:
				if f.read() != tarball:
					shutil.rmtree(srcdir)
		os.makedirs(srcdir, exist_ok=True)
		with open(os.path.join(srcdir, 'tarball'), 'w') as f:
			f.write(tarball)
	else:
		srcdir = BUILD
	from . import proc		# here: install.py needs none of it
	r = proc.run([os.path.join(REPO, 'scripts/fetch-linux.sh'), srcdir], env=env,
		     echo=True, label='getting linux-source-7.3')
	if not r.ok:
		raise Error('could not get the Linux 7.3 source (see the lines above)')
	path = r.tail.strip().splitlines()[-1]
	if kernel_version(path) is None:
		raise Error(f'{path} is not a kernel tree')
	with open(os.path.join(path, 'Makefile')) as f:
		head = ''.join(f.readlines()[:6])
	ident = ('tarball:' + tarball if tarball else 'debian:') + \
		hashlib.sha256(head.encode()).hexdigest()[:16]
	return path, ident, False


# ---------------------------------------------------------------- assembly

def git(args: List[str], git_dir: str, work: Optional[str] = None, **kw):
	env = dict(GIT_ID, GIT_DIR=git_dir)
	if work:
		env['GIT_WORK_TREE'] = work
	return sh(['git'] + args, cwd=work, env=env, **kw)


def import_add(cmd: List[str], src: str, env: dict, stdin=subprocess.DEVNULL) -> None:
	"""The long git add of an import, in a process group of its own with
	a heartbeat (proc is imported here: install.py needs none of it)."""
	from . import proc
	r = proc.run(cmd, cwd=src, env=env, echo=True, stdin=stdin,
		     label=f'importing {rel(src)}')
	if not r.ok:
		raise Error(f'{" ".join(cmd[:3])} in {src} failed (exit {r.rc})')


# Bump when the way a source is imported changes: cached bases are redone.
IMPORT_VERSION = 3


def import_git_tree(src: str, gd: str, env: dict) -> str:
	"""A git KDIR: its HEAD fetched with its history (KDIR_DEPTH=N: the last
	N commits only), then, when its work tree differs from HEAD, one commit
	on top with its uncommitted changes and its untracked files (those its
	ignore rules do not ignore).  Return the base commit."""
	from . import proc
	depth = os.environ.get('KDIR_DEPTH', '').strip()
	if depth and not depth.isdigit():
		raise Error(f'KDIR_DEPTH={depth!r} is not a number of commits')
	user_git(src, ['rev-parse', '--verify', 'HEAD^{commit}'], 'HEAD: a git tree without commits?')
	fenv = dict(GIT_ID, GIT_DIR=gd)
	r = proc.run(['git', 'fetch', '-q', '--no-tags'] + ([f'--depth={depth}'] if depth else []) +
		     [src, '+HEAD:refs/kdir/head'], env=fenv, echo=True,
		     label=f'fetching the history of {rel(src)}')
	if not r.ok:
		raise Error(f'git fetch of KDIR={src} into {rel(gd)} failed (exit {r.rc})')
	head = git(['rev-parse', 'refs/kdir/head'], gd, capture=True).stdout.strip()
	sh(['git', 'read-tree', head], env=env)
	changed = user_git(src, ['diff', '--name-only', '-z', '--no-renames', head], 'changes')
	changed = [n for n in changed.split(b'\0') if n]
	untracked = untracked_files(src)
	if not changed and not untracked:
		return head
	listing = os.path.join(gd, 'import-files')
	with open(listing, 'wb') as f:
		f.write(b'\0'.join(changed + [n.encode(errors='surrogateescape')
					     for n in untracked]))
	with open(listing, 'rb') as f:
		import_add(['git', 'add', '-A', '-f', '--pathspec-from-file=-',
			    '--pathspec-file-nul'], src, env, stdin=f)
	os.unlink(listing)
	tree = sh(['git', 'write-tree'], cwd=src, env=env, capture=True).stdout.strip()
	return sh(['git', 'commit-tree', tree, '-p', head, '-m',
		   f'mm-kunit: local changes of KDIR={src}: {len(changed)} changed, '
		   f'{len(untracked)} untracked file(s)'],
		  cwd=src, env=env, capture=True).stdout.strip()


def base_commit() -> str:
	"""The base commit in build/linux.git (cached): a git KDIR's HEAD with its
	history (and its local changes on top), anything else as one commit."""
	src, ident, user_tree = source_tree()
	gd = os.path.join(BUILD, 'linux.git')
	idfile = os.path.join(gd, 'mmkunit-source')
	ident = f'{IMPORT_VERSION}:{ident}'
	if os.path.isfile(idfile):
		with open(idfile) as f:
			if f.read() == ident:
				r = git(['rev-parse', 'refs/heads/base'], gd, capture=True, check=False)
				if r.returncode == 0:
					return r.stdout.strip()
	info(f'importing {src} as the base commit (once per source)')
	if not os.path.isdir(gd):
		sh(['git', 'init', '-q', '--bare', gd], env=GIT_ID)
	index = os.path.join(gd, 'import-index')
	if os.path.exists(index):
		os.unlink(index)
	env = dict(GIT_ID, GIT_DIR=gd, GIT_WORK_TREE=src, GIT_INDEX_FILE=index)
	if user_tree and is_git_tree(src):
		commit = import_git_tree(src, gd, env)
	else:
		# A tarball or a plain directory: every file.  (Debian's
		# tarball carries a .gitignore that ignores its whole top
		# level, so ignore rules cannot be used here.)
		if user_tree and (os.path.exists(os.path.join(src, '.config')) or
				  os.path.isdir(os.path.join(src, 'include/config'))):
			raise Error(f'KDIR={src} has been built in-tree (.config); '
				    'run "make mrproper" there or pass a clean tree')
		import_add(['git', 'add', '-A', '-f', '.'], src, env)
		tree = sh(['git', 'write-tree'], cwd=src, env=env, capture=True).stdout.strip()
		commit = sh(['git', 'commit-tree', tree, '-m', f'base: {ident}'], cwd=src,
			    env=env, capture=True).stdout.strip()
	git(['update-ref', 'refs/heads/base', commit], gd)
	os.unlink(index)
	with open(idfile, 'w') as f:
		f.write(ident)
	return commit


def group_of(patch: str) -> str:
	return patch.split('/', 1)[0]


def read_series(path: Optional[str] = None) -> List[str]:
	"""Patch paths (relative to patches/) in apply order; '#' comments."""
	path = path or os.path.join(REPO, 'patches', 'series')
	out = []
	with open(path) as f:
		for line in f:
			line = line.split('#', 1)[0].strip()
			if line:
				out.append(line)
	return out


def known_groups() -> List[str]:
	"""The patch groups of patches/series and patches/expected-before."""
	groups = {group_of(p) for p in read_series()}
	path = os.path.join(REPO, 'patches', 'expected-before')
	if os.path.isfile(path):
		with open(path) as f:
			groups |= {l.split()[1] for l in f
				   if len(l.split('#', 1)[0].split()) == 2}
	return sorted(groups)


def parse_applied(value: str, what: str = 'APPLIED') -> List[str]:
	"""The groups a kernel carries: "series" (all), "none", or a comma list."""
	groups = known_groups()
	value = value.strip()
	if value in ('series', 'all'):
		return groups
	if value == 'none':
		return []
	applied = [g.strip() for g in value.split(',') if g.strip()]
	unknown = [g for g in applied if g not in groups]
	if unknown or not applied:
		raise Error(f'{what}={value}: {", ".join(unknown) or "empty"} is not a group of '
			    f'patches/series ({", ".join(groups)}; or "series" for all, "none")')
	return sorted(set(applied))


# ------------------------------------------------- a posted series (SERIES=)

SERIES_DIR = os.path.join(BUILD, 'series')


def series_mbox() -> str:
	"""SERIES=: the absolute path of an mbox of patch mails, or ''."""
	path = os.environ.get('SERIES', '').strip()
	if not path:
		return ''
	path = os.path.abspath(os.path.expanduser(path))
	if not os.path.isfile(path):
		raise Error(f'SERIES={path} is not a file (an mbox of patch mails, as b4 am writes)')
	return path


def mail_subject(text: str) -> str:
	"""The Subject: of a mail, unfolded, without its [PATCH ...] tag."""
	m = re.search(r'^Subject:(.*(?:\n[ \t].*)*)', text.split('\n\n', 1)[0], re.M | re.I)
	subj = ' '.join(m.group(1).split()) if m else ''
	return re.sub(r'^(\[[^]]*\]\s*)+', '', subj)


def has_diff(text: str) -> bool:
	"""A mail with a patch in it (a cover letter has none)."""
	return bool(re.search(r'^(diff --git |--- \S.*\n\+\+\+ |Index: )', text, re.M))


def split_mbox(mbox: str) -> List[str]:
	"""The mails of @mbox that carry a diff, as files build/series/<hash>/NNNN-
	subject.patch in mbox order (cached by content); the cover letter and
	other mails without a diff are left out and named."""
	with open(mbox, 'rb') as f:
		digest = hashlib.sha256(f.read()).hexdigest()[:16]
	out = os.path.join(SERIES_DIR, digest)
	done = os.path.join(out, '.done')
	if not os.path.isfile(done):
		shutil.rmtree(SERIES_DIR, ignore_errors=True)
		mails = os.path.join(out, 'mails')
		os.makedirs(mails)
		r = sh(['git', 'mailsplit', '-o' + mails, mbox], env=GIT_ID, check=False,
		       capture=True, timeout=300)
		if r.returncode != 0:
			raise Error(f'SERIES={mbox}: git mailsplit failed: {r.stdout.strip()}')
		n = 0
		for name in sorted(os.listdir(mails)):
			with open(os.path.join(mails, name), errors='replace') as f:
				text = f.read()
			subj = mail_subject(text) or '(no subject)'
			if not has_diff(text):
				info(f'SERIES: mail {int(name)} has no diff, left out: {subj}')
				continue
			n += 1
			slug = re.sub(r'[^A-Za-z0-9]+', '-', subj).strip('-')[:52].rstrip('-')
			os.rename(os.path.join(mails, name), os.path.join(out, f'{n:04d}-{slug}.patch'))
		shutil.rmtree(mails)
		if not n:
			raise Error(f'SERIES={mbox}: no mail in it carries a diff')
		open(done, 'w').close()
	return sorted(os.path.join(out, n) for n in os.listdir(out) if n.endswith('.patch'))


def series_patches() -> List[str]:
	"""The patches of the series under test in apply order: those of
	patches/series (relative to patches/), or the mails of SERIES= (absolute)."""
	mbox = series_mbox()
	if not mbox:
		return read_series()
	from . import thread		# a lore thread: b4 takes a version out of it
	return split_mbox(thread.prepare(mbox)[0])


def patch_file(patch: str) -> str:
	return os.path.join(REPO, 'patches', patch)	# an absolute patch stays as it is


def patch_name(patch: str) -> str:
	return os.path.basename(patch) if os.path.isabs(patch) else patch


def patch_label(patch: str) -> str:
	"""A patch as a run names it: patches/... or a mail of SERIES=."""
	if os.path.isabs(patch):
		return f'{os.path.basename(patch)} of SERIES={series_mbox()}'
	return f'patches/{patch}'


def overlay_files() -> List[str]:
	files = []
	for d in OVERLAY_DIRS:
		top = os.path.join(REPO, d)
		for root, _dirs, names in os.walk(top):
			for n in sorted(names):
				if n.endswith(('.pyc', '~')) or '__pycache__' in root:
					continue
				files.append(os.path.relpath(os.path.join(root, n), REPO))
	return sorted(files)


# Hooks that make a kernel tree build our suites; each is (file, line,
# anchor): the line is added once, before the last anchor line (or at the
# end when anchor is None).
HOOKS = [('mm/Kconfig', 'source "mm/tests/Kconfig"', 'endmenu'),
	 ('mm/Makefile', 'obj-y += tests/', None)]


def apply_hooks(tree: str, hooks=HOOKS) -> List[str]:
	"""Idempotently add the Kconfig/Makefile hooks; return what changed."""
	changed = []
	for relp, line, anchor in hooks:
		path = os.path.join(tree, relp)
		with open(path) as f:
			lines = f.read().splitlines()
		if line in (l.strip() for l in lines):
			continue
		pos = len(lines)
		if anchor:
			for i in range(len(lines) - 1, -1, -1):
				if lines[i].strip() == anchor:
					pos = i
					break
		lines[pos:pos] = [line, ''] if anchor else ['', line]
		with open(path, 'w') as f:
			f.write('\n'.join(lines) + '\n')
		changed.append(relp)
	return changed


VARIANTS = 'series, nohooks, pristine, asis, upto:N, before:GROUP, upto:GROUP, alt:NAME'


# ---------------------------------------------- test hooks (patches/*/hooks/)

# Test hooks: the patches of patches/<group>/hooks/ add what only our
# suites use (exports of static functions, our tracepoints, the
# DEBUG_PAGE_RCU_FREE helpers).  HOOKS= says what a run does with them:
#   required  every hook of the groups the kernel carries is in it; a case
#             or a part skipped for a missing hook is a failure (default
#             for series, before:GROUP, upto:GROUP)
#   auto      apply the hooks that apply after SERIES= / on VARIANT=asis and
#             say which did not; a part skipped for a missing hook is a
#             skip (default for SERIES=, asis, upto:N, pristine)
#   none      no hook: the series as the seeds describe it (nohooks)
HOOK_MODES = ('auto', 'none', 'required')


def is_test_hook(patch: str) -> bool:
	"""A patch of patches/<group>/hooks/ (not a mail of SERIES=)."""
	return not os.path.isabs(patch) and '/hooks/' in patch


def hooks_env() -> str:
	mode = os.environ.get('HOOKS', '').strip()
	if mode and mode not in HOOK_MODES:
		raise Error(f'HOOKS={mode}: one of {", ".join(HOOK_MODES)}')
	return mode


def hooks_mode(variant: str) -> str:
	"""What a variant does with the test hooks (HOOKS= or its default)."""
	if variant == 'nohooks':
		return 'none'
	mode = hooks_env()
	if mode:
		return mode
	if variant == 'pristine' or variant.startswith('upto:') and \
			re.match(r'^upto:\d+$', variant) or variant == 'asis' or series_mbox():
		return 'auto'
	return 'required'


def extra_hook_patches(variant: str) -> List[str]:
	"""The hooks to try after the patches of SERIES= or on VARIANT=asis: those
	of the groups APPLIED= names (all groups when it is not given)."""
	if variant not in ('series', 'asis') or not (series_mbox() or variant == 'asis'):
		return []
	if hooks_mode(variant) == 'none':
		return []
	applied = os.environ.get('APPLIED', '').strip()
	groups = parse_applied(applied) if applied else None
	return [p for p in read_series() if is_test_hook(p) and
		(groups is None or group_of(p) in groups)]


def variant_patches(variant: str) -> List[str]:
	"""The patches a variant applies on the base, in order."""
	if variant == 'asis':
		if not os.environ.get('KDIR', '').strip():
			raise Error('VARIANT=asis tests KDIR as it is: set KDIR=/path/to/your/linux')
		if series_mbox():
			raise Error('VARIANT=asis applies no patches: drop SERIES= '
				    '(or use VARIANT=series to apply it on KDIR)')
		return []
	if variant == 'pristine':
		return []
	series = series_patches()
	if variant == 'nohooks':
		if series_mbox():
			raise Error('nohooks is our series without its test hooks: drop SERIES= '
				    '(HOOKS=none keeps the hooks off a posted series)')
		return [p for p in series if not is_test_hook(p)]
	if hooks_mode(variant) == 'none':
		series = [p for p in series if not is_test_hook(p)]
	if variant == 'series':
		return series
	# "upto:N" = the first N patches (per-patch validation)
	m = re.match(r'^upto:(\d+)$', variant)
	if m:
		return series[:int(m.group(1))]
	# "before:GROUP" / "upto:GROUP" = the series without / through a group
	m = re.match(r'^(before|upto):([a-z0-9-]+)$', variant)
	if m:
		if series_mbox():
			raise Error(f'{variant}: the mails of SERIES= have no groups '
				    '(series, pristine or upto:N)')
		idx = [i for i, p in enumerate(series) if group_of(p) == m.group(2)]
		if not idx:
			raise Error(f'{variant}: no patch of group {m.group(2)!r} in patches/series')
		return series[:idx[0]] if m.group(1) == 'before' else series[:idx[-1] + 1]
	# "alt:NAME" = the series and patches/variants/NAME.patch after it
	m = re.match(r'^alt:([A-Za-z0-9._-]+)$', variant)
	if m:
		if series_mbox():
			raise Error(f'{variant}: a variant of our series; drop SERIES=')
		return series + [alt_patch(m.group(1))]
	raise Error(f'unknown variant {variant!r} ({VARIANTS})')


ALT_DIR = 'variants'


def alternatives() -> List[str]:
	"""The names of patches/variants/*.patch: behaviour-preserving
	alternatives to choices of our series that the seeds leave open."""
	d = os.path.join(REPO, 'patches', ALT_DIR)
	if not os.path.isdir(d):
		return []
	return sorted(n[:-len('.patch')] for n in os.listdir(d) if n.endswith('.patch'))


def alt_patch(name: str) -> str:
	"""patches/ path of the alternative NAME (NAME or NAME.patch)."""
	name = name[:-len('.patch')] if name.endswith('.patch') else name
	if name not in alternatives():
		raise Error(f'alt:{name}: no patches/{ALT_DIR}/{name}.patch '
			    f'(there are: {", ".join(alternatives()) or "none"})')
	return f'{ALT_DIR}/{name}.patch'


def variant_groups(variant: str) -> Optional[List[str]]:
	"""The groups a variant's tree carries, which decide what
	patches/expected-before expects; None when nobody said (VARIANT=asis or
	SERIES= without APPLIED=): expected-before is then off.

	APPLIED= says it for what the runner cannot know, the tree of
	VARIANT=asis and the mails of SERIES=; elsewhere patches/series says."""
	patches = variant_patches(variant)
	applied = os.environ.get('APPLIED', '').strip()
	mbox = series_mbox()
	if applied and not mbox and variant != 'asis':
		raise Error(f'APPLIED= is for VARIANT=asis and SERIES=; VARIANT={variant} '
			    'carries the groups of its patches in patches/series')
	if variant == 'asis' or (mbox and patches):
		return parse_applied(applied) if applied else None
	return sorted({group_of(p) for p in patches
		       if not is_test_hook(p) and group_of(p) != ALT_DIR})


def describe_groups(groups: Optional[List[str]]) -> str:
	"""What a run says about the groups it judges a tree by."""
	if groups is None:
		return ('expected-before off: APPLIED= not given, so every case is judged '
			'by its kunit status alone (APPLIED=GROUPS or APPLIED=none to judge '
			'the cases of patches/expected-before)')
	return 'carries ' + (', '.join(groups) or 'none of the groups')


def variant_key(base: str, patches: List[str], salt: str = '') -> str:
	h = hashlib.sha256(base.encode() + salt.encode())
	for p in patches:
		h.update(patch_name(p).encode())
		with open(patch_file(p), 'rb') as f:
			h.update(f.read())
	for relp in overlay_files():
		h.update(relp.encode())
		with open(os.path.join(REPO, relp), 'rb') as f:
			h.update(f.read())
	h.update(repr(HOOKS).encode())
	return h.hexdigest()


# All variants share one worktree.  Compiles run in build/out/<variant>
# with source paths relative to it (../../tree/...), so every variant and
# every clone of the repo sends ccache the same command lines: switching
# variants rewrites only the files that differ and recompiles them from the
# cache.
TREE = os.path.join(BUILD, 'tree')


STALE_LOCKS = ['linux.git/*.lock', 'linux.git/refs/heads/*.lock', 'linux.git/refs/kdir/*.lock',
	       'linux.git/worktrees/*/*.lock']


def clear_stale_git_locks(build: str = '') -> List[str]:
	"""Remove the *.lock files an interrupted git left in build/ (call
	only with build/'s lock held: no other run's git can be running)."""
	build = build or BUILD
	gone = []
	for pat in STALE_LOCKS:
		for path in sorted(glob.glob(os.path.join(build, pat))):
			os.unlink(path)
			gone.append(path)
			info(f'removed stale git lock {rel(path)} (an interrupted run left it)')
	return gone


def read_keyfile(keyfile: str) -> Tuple[str, str]:
	"""(variant key, HEAD after assembly) of build/tree.key."""
	if not os.path.isfile(keyfile):
		return '', ''
	with open(keyfile) as f:
		lines = f.read().splitlines() + ['', '']
	return lines[0], lines[1]


def hook_report(tree_dir: str = '') -> dict:
	"""What the last assembly of build/tree did with the test hooks:
	{mode, applied: [...], not_applied: [...]} (empty before any)."""
	keyfile = (tree_dir or TREE) + '.key'
	if os.path.isfile(keyfile):
		with open(keyfile) as f:
			lines = f.read().splitlines()
		if len(lines) > 2 and lines[2].startswith('{'):
			return json.loads(lines[2])
	return {}


def describe_hook_report(rep: dict) -> str:
	if not rep or not (rep['applied'] or rep['not_applied'] or rep['mode'] == 'none'):
		return ''
	names = lambda ps: ', '.join(os.path.basename(p)[:40] for p in ps) or 'none'
	return (f'test hooks ({rep["mode"]}): applied {len(rep["applied"])} '
		f'({names(rep["applied"])}); did not apply {len(rep["not_applied"])} '
		f'({names(rep["not_applied"])})')


def apply_extra_hooks(tree_dir: str, extra: List[str], mode: str, env: dict) -> dict:
	"""Try each test hook of @extra on the tree after a posted series or
	on KDIR as it is; those that do not apply are left out and named."""
	applied, not_applied = [], []
	# Each hook brings what it needs (its own includes and declarations,
	# docs/hooks.rst): one that does not apply leaves the others alone
	for p in extra:
		r = sh(['git', 'am', '-q', '--3way', patch_file(p)], cwd=tree_dir, env=env,
		       check=False, capture=True, timeout=600)
		if r.returncode != 0:
			sh(['git', 'am', '--abort'], cwd=tree_dir, env=env, check=False, capture=True)
			not_applied.append(p)
			info(f'test hook patches/{p} does not apply: left out')
		else:
			applied.append(p)
	if mode == 'required' and not_applied:
		raise Error(f'HOOKS=required: {len(not_applied)} test hook(s) do not apply: '
			    + ', '.join(f'patches/{p}' for p in not_applied))
	return {'mode': mode, 'applied': applied, 'not_applied': not_applied}


def local_changes(tree: str, assembled_head: str) -> str:
	"""What reassembling @tree would throw away: '' or a description."""
	env = dict(GIT_ID)
	dirty = sh(['git', 'status', '--porcelain', '--untracked-files=no'],
		   cwd=tree, env=env, capture=True, check=False).stdout.split('\n')
	dirty = [l[3:] for l in dirty if l.strip()]
	if dirty:
		return (f'uncommitted changes ({", ".join(dirty[:3])}' +
			(', ...' if len(dirty) > 3 else '') + ')')
	if assembled_head:
		head = sh(['git', 'rev-parse', 'HEAD'], cwd=tree, env=env, capture=True,
			  check=False).stdout.strip()
		if head and head != assembled_head:
			return f'commits after its assembly (HEAD {head[:12]})'
	return ''


def assemble(variant: str) -> str:
	"""Make build/tree = base + the variant's patches + overlay; return its path."""
	patches = variant_patches(variant)
	mode = hooks_mode(variant)
	extra = extra_hook_patches(variant)
	for p in patches + extra:
		if not os.path.isfile(patch_file(p)):
			raise Error(f'patches/series names {p}, which does not exist')
	base = base_commit()
	gd = os.path.join(BUILD, 'linux.git')
	tree = TREE
	if patches and series_mbox():
		from . import thread	# base-commit: of SERIES= (SERIES_BASE=strict refuses)
		thread.check_base(gd, base, thread.series_info())
	key = variant_key(base, patches + extra, salt='hooks=' + mode)
	keyfile = tree + '.key'
	old_key, old_head = read_keyfile(keyfile)
	if os.path.exists(os.path.join(tree, '.git')):
		changes = local_changes(tree, old_head)
		force = bool(os.environ.get('FORCE'))
		if old_key == key and (not changes or
				       (not changes.startswith('uncommitted') and not force)):
			return tree		# commits made in it (a mutation) are kept
		if changes and not force:
			what = ('commit them (git -C build/tree commit -a) to test them, or '
				if changes.startswith('uncommitted') else '')
			raise Error(f'{rel(tree)} has {changes}; assembling {variant} there would '
				    f'drop them: {what}rerun with FORCE=1 to drop them')
		if changes:
			info(f'FORCE=1: dropping the {changes} of {rel(tree)}')
	if os.path.exists(keyfile):
		os.unlink(keyfile)
	if not os.path.isdir(os.path.join(tree, '.git')) and not os.path.isfile(os.path.join(tree, '.git')):
		if os.path.exists(tree):
			shutil.rmtree(tree)
		git(['worktree', 'prune'], gd)
		info(f'creating tree {rel(tree)}')
		git(['worktree', 'add', '-q', '--detach', tree, base], gd, capture=True)
	env = dict(GIT_ID)
	# Only files that differ are rewritten, so unchanged objects stay built.
	sh(['git', 'am', '--abort'], cwd=tree, env=env, check=False, capture=True)
	sh(['git', 'checkout', '-q', '-f', '--detach', base], cwd=tree, env=env, capture=True)
	sh(['git', 'clean', '-q', '-fdx'], cwd=tree, env=env, capture=True)
	for i, p in enumerate(patches, 1):
		r = sh(['git', 'am', '-q', '--3way', patch_file(p)],
		       cwd=tree, env=env, check=False, capture=True, timeout=600)
		if r.returncode != 0:
			sh(['git', 'am', '--abort'], cwd=tree, env=env, check=False, capture=True)
			# Show where it does not apply: the hunks and the context
			# git looked for, against the tree with patches 1..i-1.
			why = sh(['git', 'apply', '--check', '--verbose', patch_file(p)],
				 cwd=tree, env=env, check=False, capture=True, timeout=600).stdout
			print(why.rstrip()[:4000], file=sys.stderr)
			base_desc = 'the base' if i == 1 else f'the base + patches 1-{i - 1}'
			from . import thread	# its own outcome: exit 3, KCIDB valid=false
			files = thread.failed_files(why)
			raise thread.SeriesOutcome(
				'does-not-apply', f'patch {i}/{len(patches)} {patch_label(p)} does not '
				f'apply to {base_desc}' + (f': {", ".join(files)}' if files else ''),
				patch=patch_label(p), files=files)
	if extra:
		rep = apply_extra_hooks(tree, extra, mode, env)
	else:
		rep = {'mode': mode, 'applied': [p for p in patches if is_test_hook(p)],
		       'not_applied': []}
	if describe_hook_report(rep):
		info(describe_hook_report(rep))
	for relp in overlay_files():
		dst = os.path.join(tree, relp)
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		shutil.copy2(os.path.join(REPO, relp), dst)
	apply_hooks(tree)
	sh(['git', 'add', '-A', '-f'] + OVERLAY_DIRS + [h[0] for h in HOOKS], cwd=tree, env=env)
	sh(['git', 'commit', '-q', '--allow-empty', '-m', 'mm-kunit: suites overlay'],
	   cwd=tree, env=env, capture=True)
	head = sh(['git', 'rev-parse', 'HEAD'], cwd=tree, env=env, capture=True).stdout.strip()
	with open(keyfile, 'w') as f:
		f.write(key + '\n' + head + '\n' + json.dumps(rep) + '\n')
	return tree


