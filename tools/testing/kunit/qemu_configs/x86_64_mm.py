# SPDX-License-Identifier: GPL-2.0
#
# QEMU config for the mm KUnit suites: x86_64, 2 vCPUs, 3 GiB (room for
# THP and migration work), and an accelerator chosen for this machine.
#
# kunit.py always asks QEMU for "-accel kvm -accel hvf -accel tcg".  Where
# /dev/kvm exists but KVM cannot run guests (no vmx/svm in the CPU flags,
# e.g. nested virtualisation missing), QEMU picks KVM and the guest hangs.
# So, when KVM is not usable, this config puts a qemu-system-x86_64 wrapper
# first in PATH that drops kvm/hvf and runs multi-threaded TCG.  Importing
# this file is how kunit.py reads it, so the choice also holds for a stock
# "kunit.py run --qemu_config=<this file>".
#
# MMKUNIT_ACCEL=kvm or MMKUNIT_ACCEL=tcg overrides the check.
#
# MMKUNIT_EXACT=1 (with TCG) makes the wrapper run single-threaded TCG
# with "-icount shift=0,sleep=off" instead: exact mode, in which guest
# time is instructions executed (1 ns each).  The runner's benchmark
# commands set it where KVM is not usable; see docs/benchmarks.rst.

import os

from ..qemu_config import QemuArchParams


def kvm_usable(dev: str = '/dev/kvm', cpuinfo: str = '/proc/cpuinfo') -> bool:
	"""True when /dev/kvm opens and the CPU advertises vmx or svm."""
	try:
		fd = os.open(dev, os.O_RDWR)
		os.close(fd)
		with open(cpuinfo) as f:
			for line in f:
				if line.startswith('flags'):
					flags = line.split(':', 1)[1].split()
					return 'vmx' in flags or 'svm' in flags
	except OSError:
		pass
	return False


def choose_accel() -> str:
	forced = os.environ.get('MMKUNIT_ACCEL', '')
	if forced in ('kvm', 'tcg'):
		return forced
	return 'kvm' if kvm_usable() else 'tcg'


ACCEL = choose_accel()
if ACCEL == 'tcg':
	_wrapper_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)),
				    'x86_64_mm.d')
	_path = os.environ.get('PATH', '').split(os.pathsep)
	if _wrapper_dir not in _path:
		os.environ['PATH'] = os.pathsep.join([_wrapper_dir] + _path)
	os.environ['MMKUNIT_ACCEL'] = 'tcg'

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_SMP=y
CONFIG_NR_CPUS=8''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0 panic=-1',
			   extra_qemu_params=['-bios', 'qboot.rom',
					      '-smp', '2', '-m', '3072'])
