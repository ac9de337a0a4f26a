# SPDX-License-Identifier: GPL-2.0
"""Host packages the commands need: checked, and installed with apt-get
when we are root (otherwise the exact apt-get line is printed)."""

import os
import shutil
from typing import List

from . import arch
from .common import Error, info, sh

# command or header -> Debian package
DEPS = [('gcc', 'gcc'), ('make', 'make'), ('flex', 'flex'), ('bison', 'bison'),
	('bc', 'bc'), ('cpio', 'cpio'), ('perl', 'perl'), ('git', 'git'),
	('ccache', 'ccache'), ('qemu-system-x86_64', 'qemu-system-x86'),
	('rsync', 'rsync'), ('xz', 'xz-utils'), ('dpkg-deb', 'dpkg'),
	('/usr/include/gelf.h', 'libelf-dev'),
	('/usr/include/openssl/opensslv.h', 'libssl-dev'),
	('/usr/share/qemu/qboot.rom', 'qemu-system-data'),
	('/usr/share/keyrings/debian-archive-keyring.gpg', 'debian-archive-keyring'),
	# benchreport.py's plots and make docs
	('/usr/lib/python3/dist-packages/matplotlib/__init__.py', 'python3-matplotlib'),
	('sphinx-build', 'python3-sphinx'),
	# the host test that opens build/results/junit.xml in a JUnit consumer
	('/usr/lib/python3/dist-packages/junitparser/__init__.py', 'python3-junitparser'),
	# make modules-run: the initramfs that loads the suites as modules
	('/bin/busybox', 'busybox-static'),
	# make selftests: the mm selftests linked statically, their ext4 disk
	('/usr/lib/x86_64-linux-gnu/libnuma.a', 'libnuma-dev'),
	('/usr/lib/x86_64-linux-gnu/libcap.a', 'libcap-dev'),
	('/usr/lib/x86_64-linux-gnu/liburing.a', 'liburing-dev'),
	('/sbin/mkfs.ext4', 'e2fsprogs'),
	# SERIES= as a lore thread: b4 picks the newest complete version
	('b4', 'b4'),
	# the host test that validates kcidb.json against kcidb-io's schema
	('/usr/lib/python3/dist-packages/jsonschema/__init__.py', 'python3-jsonschema')]


def arch_deps() -> List:
	"""DEPS and what the run's architecture adds (ARCH=arm64: the cross
	compiler and qemu-system-aarch64)."""
	return DEPS + list(arch.current().deps)


def missing_packages(deps=None, which=shutil.which, exists=os.path.exists) -> List[str]:
	if deps is None:
		deps = arch_deps()
	missing = []
	for what, pkg in deps:
		ok = exists(what) if what.startswith('/') else which(what) is not None
		if not ok and pkg not in missing:
			missing.append(pkg)
	return missing


def wanted() -> list:
	"""DEPS, and distcc when DISTCC_HOSTS asks builds to use it."""
	return arch_deps() + ([('distcc', 'distcc')] if os.environ.get('DISTCC_HOSTS', '').strip() else [])


def cmd_deps(_args) -> int:
	arch.current()		# ARCH= is checked before anything is built
	missing = missing_packages(wanted())
	if not missing:
		return 0
	cmd = ['apt-get', 'install', '-y', '--no-install-recommends'] + missing
	if (os.geteuid() != 0 or shutil.which('apt-get') is None or
	    os.environ.get('MMKUNIT_NO_INSTALL')):
		raise Error('missing packages; run: sudo ' + ' '.join(cmd))
	info('installing ' + ' '.join(missing))
	env = {'DEBIAN_FRONTEND': 'noninteractive'}
	r = sh(['apt-get', 'install', '-y', '--no-install-recommends'] + missing,
	       env=env, check=False, capture=True)
	if r.returncode != 0:
		# The package lists may be stale on a new machine.
		sh(['apt-get', 'update'], env=env, capture=True, check=False)
		sh(cmd, env=env, capture=True)
	still = missing_packages(wanted())
	if still:
		raise Error('still missing after apt-get: ' + ' '.join(still))
	return 0

