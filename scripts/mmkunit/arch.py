# SPDX-License-Identifier: GPL-2.0
"""The guest architecture of a run: x86_64 (the default) or arm64.

make passes ARCH= to the runner as MMKUNIT_ARCH (Makefile).  Everything
that depends on the architecture comes from here: the QEMU config kunit.py
boots with, the kernel image it builds, the cross compiler, the packages
that has to be installed, and the suffix of the stage names (build/out/
series-arm64), so that an arm64 run never reuses or overwrites an x86_64
kernel and every result says which architecture it is."""

import os
from dataclasses import dataclass
from typing import List, Tuple

from .common import Error

QEMU_CONFIGS = 'tools/testing/kunit/qemu_configs'


@dataclass(frozen=True)
class Arch:
	name: str		# ARCH= of the kernel and of make test ARCH=
	qemu_config: str	# relative to the repo and to the tree
	image: str		# what kunit.py builds and boots, relative to O=
	cross_compile: str	# CROSS_COMPILE= ('' native)
	qemu: str		# the QEMU binary
	# (command or file, Debian package) needed for this architecture only
	deps: Tuple[Tuple[str, str], ...] = ()

	@property
	def suffix(self) -> str:
		"""Appended to stage names and their build/out directories;
		empty for the default architecture, so its paths do not change."""
		return '' if self.name == DEFAULT else '-' + self.name

	@property
	def cc(self) -> str:
		"""CC= for kbuild: ccache in front of the (cross) compiler."""
		return 'ccache ' + self.cross_compile + 'gcc'


DEFAULT = 'x86_64'

ARCHES = {
	'x86_64': Arch('x86_64', QEMU_CONFIGS + '/x86_64_mm.py', 'arch/x86/boot/bzImage', '',
		       'qemu-system-x86_64'),
	'arm64': Arch('arm64', QEMU_CONFIGS + '/arm64_mm.py', 'arch/arm64/boot/Image',
		      'aarch64-linux-gnu-', 'qemu-system-aarch64',
		      deps=(('aarch64-linux-gnu-gcc', 'gcc-aarch64-linux-gnu'),
			    ('aarch64-linux-gnu-ld', 'binutils-aarch64-linux-gnu'),
			    ('qemu-system-aarch64', 'qemu-system-arm'))),
}

# Other spellings of the same architecture (the kernel's ARCH=x86, uname -m)
ALIASES = {'x86': 'x86_64', 'amd64': 'x86_64', 'aarch64': 'arm64'}


def lookup(name: str) -> Arch:
	"""The Arch of @name ('' is the default); an Error naming the choices."""
	key = ALIASES.get(name, name) or DEFAULT
	if key not in ARCHES:
		raise Error(f'ARCH={name}: not supported; choose one of {", ".join(ARCHES)}')
	return ARCHES[key]


def current() -> Arch:
	"""The architecture of this run: MMKUNIT_ARCH (make's ARCH=)."""
	return lookup(os.environ.get('MMKUNIT_ARCH', '').strip())


def require_default(what: str) -> None:
	"""Refuse a command that only knows the default architecture."""
	a = current()
	if a.name != DEFAULT:
		raise Error(f'{what} runs on {DEFAULT} only, not ARCH={a.name}; '
			    f'run it without ARCH=')


def names() -> List[str]:
	return list(ARCHES)
