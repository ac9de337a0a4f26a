# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of scripts/install.py (make install / make uninstall).

Each test builds a small fake kernel tree in a tempdir and installs from a
copy of this repo's overlay (mmkunit.tree.REPO is pointed at the copy, so a test
can change a "repo" file without touching the real one).
"""

import contextlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
import install  # noqa: E402
from mmkunit import common as mmcommon  # noqa: E402
from mmkunit import tree as mmkunit  # noqa: E402

INSTALL_PY = os.path.join(REPO, 'scripts', 'install.py')

# Files of the fake tree that are not ours; install must leave them be.
USER_FILES = {
	'mm/tests/lazy_mmu_mode_kunit.c': '// 7.3\'s own suite\n',
	'fs/tests/exec_kunit.c': '// 7.3\'s own suite\n',
	'tools/testing/kunit/configs/default.config': 'CONFIG_KUNIT=y\n',
	'tools/testing/kunit/kunit.py': '#!/usr/bin/env python3\n',
}


def make_tree(top, version=7, patchlevel=3):
	"""A fake kernel tree: what install.py looks at, and no more."""
	files = {
		'Makefile': f'# SPDX-License-Identifier: GPL-2.0\nVERSION = {version}\n'
			    f'PATCHLEVEL = {patchlevel}\nSUBLEVEL = 0\n',
		'mm/Kconfig': 'menu "Memory Management options"\n\nconfig MMU\n'
			      '\tbool\n\nsource "mm/damon/Kconfig"\n\nendmenu\n',
		'mm/Makefile': 'obj-y := filemap.o\n'
			       'obj-$(CONFIG_LAZY_MMU_MODE_KUNIT_TEST) += tests/lazy_mmu_mode_kunit.o\n',
		'fs/Kconfig': 'menu "File systems"\n\nconfig IO_WQ\n\tbool\n\nendmenu\n',
		'fs/Makefile': 'obj-y := open.o read_write.o\n',
	}
	files.update(USER_FILES)
	# Whatever file a hook names (HOOKS grows), with its anchor line.
	for rel, _line, anchor in mmkunit.HOOKS:
		files.setdefault(rel, f'# {rel}\n' + (f'{anchor}\n' if anchor else ''))
	for rel, text in files.items():
		path = os.path.join(top, rel)
		os.makedirs(os.path.dirname(path), exist_ok=True)
		with open(path, 'w') as f:
			f.write(text)
	os.chmod(os.path.join(top, 'tools/testing/kunit/kunit.py'), 0o755)
	return top


def snapshot(top, mtimes=False):
	"""Every file and directory under top: bytes, mode (and mtime)."""
	snap = {}
	for root, dirs, files in os.walk(top):
		dirs[:] = [d for d in dirs if d != '.git']
		for n in dirs + files:
			path = os.path.join(root, n)
			st = os.lstat(path)
			rel = os.path.relpath(path, top)
			if stat.S_ISDIR(st.st_mode):
				snap[rel + '/'] = stat.S_IMODE(st.st_mode)
				continue
			with open(path, 'rb') as f:
				data = f.read()
			snap[rel] = (data, stat.S_IMODE(st.st_mode),
				     st.st_mtime_ns if mtimes else None)
	return snap


class InstallTest(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.mkdtemp(prefix='mmkunit-install-')
		self.addCleanup(shutil.rmtree, self.tmp)
		# A copy of the repo's overlay, to stand in for the repo.
		self.repo = os.path.join(self.tmp, 'repo')
		for d in mmkunit.OVERLAY_DIRS:
			src = os.path.join(REPO, d)
			if os.path.isdir(src):
				shutil.copytree(src, os.path.join(self.repo, d),
						ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
			else:
				os.makedirs(os.path.join(self.repo, d))
		p = mock.patch.object(mmkunit, 'REPO', self.repo)
		p.start()
		self.addCleanup(p.stop)
		self.kdir = make_tree(os.path.join(self.tmp, 'linux'))
		self.ours = mmkunit.overlay_files()
		self.assertTrue(self.ours, 'the repo overlay is empty')

	def run_cmd(self, cmd, kdir=None):
		"""install.main() with its output captured: (rc, stdout, stderr)."""
		o, e = io.StringIO(), io.StringIO()
		with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
			rc = install.main([cmd, kdir or self.kdir])
		return rc, o.getvalue(), e.getvalue()

	def install_ok(self):
		rc, outp, err = self.run_cmd('install')
		self.assertEqual(rc, 0, outp + err)
		return outp

	def read(self, rel, top=None):
		with open(os.path.join(top or self.kdir, rel), 'rb') as f:
			return f.read()

	# Catches: a file of the overlay not copied, copied wrong, or without
	# its exec bit; a hook line missing or not before "endmenu".
	def test_install_adds_files_and_hooks(self):
		outp = self.install_ok()
		for rel in self.ours:
			self.assertEqual(self.read(rel), self.read(rel, self.repo), rel)
			self.assertEqual(install.file_mode(os.path.join(self.kdir, rel)),
					 install.file_mode(os.path.join(self.repo, rel)), rel)
			self.assertIn(f'added     {rel}', outp)
		wrapper = 'tools/testing/kunit/qemu_configs/x86_64_mm.d/qemu-system-x86_64'
		if wrapper in self.ours:
			self.assertTrue(os.access(os.path.join(self.kdir, wrapper), os.X_OK))
		for rel, line, anchor in mmkunit.HOOKS:
			lines = self.read(rel).decode().splitlines()
			self.assertEqual([x.strip() for x in lines].count(line), 1, rel)
			if anchor:
				self.assertLess(lines.index(line), len(lines) - 1 -
						lines[::-1].index(anchor), rel)
			self.assertIn(f'{rel}: + {line}', outp)
		for rel, text in USER_FILES.items():
			self.assertEqual(self.read(rel).decode(), text, rel)
		self.assertTrue(os.path.isfile(os.path.join(self.kdir, install.MANIFEST)))
		# the printed command leaves out the slow suites (old: no filter,
		# so it ran the benchmarks under kunit.py's 300 s timeout)
		self.assertIn("--filter='speed>slow'", outp)

	# Catches: a second install that rewrites files (new mtimes, so kbuild
	# rebuilds), adds a hook line twice or rewrites the manifest.
	def test_second_install_changes_nothing(self):
		self.install_ok()
		before = snapshot(self.kdir, mtimes=True)
		outp = self.install_ok()
		self.assertEqual(snapshot(self.kdir, mtimes=True), before)
		self.assertIn('nothing changed', outp)

	# Catches: a directory that is not a kernel tree accepted (none of the
	# kernel's files; or all but a Makefile with VERSION/PATCHLEVEL), a
	# non-2 exit, or a refusal that is not one line or changes the directory.
	def test_non_kernel_dir_refused(self):
		bare = os.path.join(self.tmp, 'notlinux')
		os.makedirs(os.path.join(bare, 'mm'))
		with open(os.path.join(bare, 'Makefile'), 'w') as f:
			f.write('all:\n\techo hi\n')
		noversion = make_tree(os.path.join(self.tmp, 'noversion'))
		with open(os.path.join(noversion, 'Makefile'), 'w') as f:
			f.write('all:\n\techo hi\n')
		for other in (bare, noversion):
			before = snapshot(other)
			p = subprocess.run([sys.executable, INSTALL_PY, 'install', other],
					   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
			self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
			self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
			self.assertIn('not a kernel tree', p.stderr)
			self.assertEqual(snapshot(other), before)

	# Catches: another major version installed into, or the refusal not
	# naming the version it found.
	def test_other_major_version_refused_with_its_version(self):
		old = make_tree(os.path.join(self.tmp, 'linux6'), 6, 12)
		before = snapshot(old)
		rc, _outp, err = self.run_cmd('install', old)
		self.assertEqual(rc, 2)
		self.assertIn('6.12', err)
		self.assertEqual(snapshot(old), before)

	# Catches: another 7.x refused, or installed without a warning.
	def test_other_minor_version_warns_and_installs(self):
		newer = make_tree(os.path.join(self.tmp, 'linux74'), 7, 4)
		rc, outp, err = self.run_cmd('install', newer)
		self.assertEqual(rc, 0, outp + err)
		self.assertIn('warning: ', outp)
		self.assertIn('7.4', outp)
		self.assertTrue(os.path.isfile(os.path.join(newer, self.ours[0])))

	# Catches: uninstall leaving a file, a hook line, a blank line, a
	# created directory or the manifest behind, or removing a user's file.
	def test_uninstall_restores_tree(self):
		before = snapshot(self.kdir)
		self.install_ok()
		self.assertNotEqual(snapshot(self.kdir), before)
		rc, outp, err = self.run_cmd('uninstall')
		self.assertEqual(rc, 0, outp + err)
		self.assertEqual(snapshot(self.kdir), before)

	# Catches: uninstall removing a file the user edited after install.
	def test_user_edited_file_kept_on_uninstall(self):
		self.install_ok()
		rel = 'mm/tests/Kconfig'
		with open(os.path.join(self.kdir, rel), 'a') as f:
			f.write('# my change\n')
		rc, outp, _err = self.run_cmd('uninstall')
		self.assertEqual(rc, 0)
		self.assertTrue(self.read(rel).endswith(b'# my change\n'))
		self.assertIn(f'kept      {rel}', outp)
		self.assertFalse(os.path.exists(os.path.join(self.kdir, install.MANIFEST)))

	# Catches: a reinstall overwriting a file the user edited after install.
	def test_user_edited_file_kept_on_reinstall(self):
		self.install_ok()
		rel = 'mm/tests/Makefile'
		with open(os.path.join(self.kdir, rel), 'a') as f:
			f.write('# my change\n')
		outp = self.install_ok()
		self.assertTrue(self.read(rel).endswith(b'# my change\n'))
		self.assertIn(f'kept      {rel}', outp)

	# Catches: a reinstall that misses a changed repo file, or a manifest
	# not updated with its new hash (then uninstall would keep it).
	def test_reinstall_updates_changed_repo_file(self):
		before = snapshot(self.kdir)
		self.install_ok()
		rel = 'mm/tests/Kconfig'
		with open(os.path.join(self.repo, rel), 'a') as f:
			f.write('# changed in the repo\n')
		outp = self.install_ok()
		self.assertEqual(self.read(rel), self.read(rel, self.repo))
		self.assertIn(f'updated   {rel}', outp)
		self.assertIn('1 updated', outp)
		self.run_cmd('uninstall')
		self.assertEqual(snapshot(self.kdir), before)

	# Catches: a file dropped from the repo left behind by a reinstall.
	def test_reinstall_removes_file_gone_from_repo(self):
		rel = 'mm/tests/old_kunit.c'
		with open(os.path.join(self.repo, rel), 'w') as f:
			f.write('// removed later\n')
		self.install_ok()
		self.assertTrue(os.path.isfile(os.path.join(self.kdir, rel)))
		os.unlink(os.path.join(self.repo, rel))
		outp = self.install_ok()
		self.assertFalse(os.path.exists(os.path.join(self.kdir, rel)))
		self.assertIn(f'removed   {rel}', outp)

	# An install made before the shmem suites moved from fs/tests to
	# mm/tests (fs/tests files, hook lines in fs/Kconfig and fs/Makefile),
	# then a reinstall from the current repo.  Catches: the old fs/tests
	# files or the fs hook lines left behind, 7.3's own fs/tests touched,
	# or an uninstall that does not give back the tree of before.
	def test_reinstall_over_install_with_fs_tests(self):
		before = snapshot(self.kdir)
		old_files = {'fs/tests/Kconfig': 'config SHMEM_READ_KUNIT_TEST\n\tbool\n',
			     'fs/tests/Makefile': 'obj-y += shmem_read_kunit.o\n',
			     'fs/tests/shmem_read_kunit.c': '// before the move\n'}
		for rel, text in old_files.items():
			os.makedirs(os.path.join(self.repo, os.path.dirname(rel)), exist_ok=True)
			with open(os.path.join(self.repo, rel), 'w') as f:
				f.write(text)
		old_hooks = list(mmkunit.HOOKS) + [
			('fs/Kconfig', 'source "fs/tests/Kconfig"', 'endmenu'),
			('fs/Makefile', 'obj-y += tests/', None)]
		with mock.patch.object(mmkunit, 'OVERLAY_DIRS', mmkunit.OVERLAY_DIRS + ['fs/tests']), \
		     mock.patch.object(mmkunit, 'HOOKS', old_hooks):
			self.install_ok()
		self.assertEqual(self.read('fs/tests/shmem_read_kunit.c'), b'// before the move\n')
		self.assertIn(b'source "fs/tests/Kconfig"', self.read('fs/Kconfig'))
		shutil.rmtree(os.path.join(self.repo, 'fs'))
		outp = self.install_ok()
		for rel in old_files:
			self.assertFalse(os.path.exists(os.path.join(self.kdir, rel)), rel)
			self.assertIn(f'removed   {rel}', outp)
		for rel in ('fs/Kconfig', 'fs/Makefile'):
			self.assertEqual(self.read(rel), before[rel][0], rel)
		self.assertIn('2 removed', outp)
		self.assertEqual(self.read('fs/tests/exec_kunit.c').decode(),
				 USER_FILES['fs/tests/exec_kunit.c'])
		self.assertTrue(os.path.isfile(os.path.join(self.kdir, 'mm/tests/shmem_read_kunit.c')))
		self.run_cmd('uninstall')
		self.assertEqual(snapshot(self.kdir), before)

	# Catches: a user's own file at one of our paths overwritten, or a
	# half-done install before the refusal.
	def test_conflicting_user_file_refused(self):
		rel = 'mm/tests/Makefile'
		with open(os.path.join(self.kdir, rel), 'w') as f:
			f.write('obj-y += mine.o\n')
		before = snapshot(self.kdir)
		rc, _outp, err = self.run_cmd('install')
		self.assertEqual(rc, 2)
		self.assertIn('not ours', _outp)
		self.assertEqual(len(err.splitlines()), 1, err)
		self.assertEqual(snapshot(self.kdir), before)

	# Catches: a file that was there (identical) before install, or a hook
	# line the user had added by hand, removed by uninstall.
	def test_preexisting_copy_and_hook_left_on_uninstall(self):
		rel = 'mm/tests/Kconfig'
		shutil.copyfile(os.path.join(self.repo, rel), os.path.join(self.kdir, rel))
		hrel, line, _anchor = mmkunit.HOOKS[0]
		with open(os.path.join(self.kdir, hrel), 'a') as f:
			f.write(line + '\n')
		before = snapshot(self.kdir)
		self.install_ok()
		self.run_cmd('uninstall')
		self.assertEqual(snapshot(self.kdir), before)

	# Catches: a hook removed by its recorded line number only, which
	# after a user's edit above it would delete the wrong lines.
	def test_uninstall_finds_hook_after_user_edit(self):
		self.install_ok()
		rel = 'mm/Kconfig'
		with open(os.path.join(self.kdir, rel)) as f:
			text = f.read()
		with open(os.path.join(self.kdir, rel), 'w') as f:
			f.write('# my line\n# another\n' + text)
		self.run_cmd('uninstall')
		lines = self.read(rel).decode().splitlines()
		self.assertEqual(lines[:2], ['# my line', '# another'])
		self.assertNotIn('source "mm/tests/Kconfig"', lines)
		make_tree(os.path.join(self.tmp, 'fresh'))
		self.assertEqual(lines[2:], self.read(rel, os.path.join(self.tmp, 'fresh'))
				 .decode().splitlines())

	# Catches: install or uninstall changing a git tree's index or commits
	# (git add/commit), or leaving anything git can see.
	def test_git_tree_left_clean(self):
		def git(*args):
			return subprocess.run(['git', '-C', self.kdir] + list(args), check=True,
					      stdout=subprocess.PIPE, text=True,
					      env=dict(os.environ, **mmcommon.GIT_ID)).stdout
		git('init', '-q')
		git('add', '-A')
		git('commit', '-q', '-m', 'base')
		head, index = git('rev-parse', 'HEAD'), self.read('.git/index')
		self.install_ok()
		self.assertEqual(self.read('.git/index'), index)
		self.assertIn('mm/Kconfig', git('status', '--porcelain'))
		self.run_cmd('uninstall')
		self.assertEqual(git('rev-parse', 'HEAD'), head)
		self.assertEqual(git('status', '--porcelain', '--ignored'), '')

	# Catches: uninstall on a tree that never had an install failing or
	# removing something.
	def test_uninstall_without_manifest_says_nothing_to_remove(self):
		before = snapshot(self.kdir)
		rc, outp, _err = self.run_cmd('uninstall')
		self.assertEqual(rc, 0)
		self.assertIn('nothing to remove', outp)
		self.assertEqual(snapshot(self.kdir), before)


if __name__ == '__main__':
	unittest.main()
