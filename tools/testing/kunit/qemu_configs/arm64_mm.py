# SPDX-License-Identifier: GPL-2.0
#
# QEMU config for the mm KUnit suites on arm64: QEMU's virt machine, the
# "max" CPU (every feature QEMU emulates, among them the hardware update
# of the access flag and dirty state, FEAT_HAFDBS, that ARM64_HW_AFDBM
# uses), 2 vCPUs, 3 GiB, 4 KiB pages (PMD THP = 2 MiB, as the suites
# assume) and 48-bit virtual addresses (4 levels, as Debian's arm64
# kernels), built with Debian's aarch64-linux-gnu- cross compiler:
#   kunit.py run --kunitconfig=mm/tests \
#     --qemu_config=tools/testing/kunit/qemu_configs/arm64_mm.py \
#     --cross_compile=aarch64-linux-gnu- --filter='speed>slow'
#
# kunit.py always asks QEMU for "-accel kvm -accel hvf -accel tcg".  KVM
# runs an arm64 guest only on an arm64 host whose /dev/kvm works; anywhere
# else this config puts a qemu-system-aarch64 wrapper (arm64_mm.d/) first
# in PATH that drops kvm/hvf and runs multi-threaded TCG.  Importing this
# file is how kunit.py reads it, so the choice also holds for a stock
# kunit.py run.
#
# MMKUNIT_ACCEL=kvm or MMKUNIT_ACCEL=tcg overrides the check.
#
# MMKUNIT_EXACT=1 (with TCG) makes the wrapper run single-threaded TCG
# with "-icount shift=0,sleep=off": exact mode, guest time is instructions
# executed (1 ns each); make bench sets it.  See docs/arm64.rst.

import os
import platform

from ..qemu_config import QemuArchParams


def kvm_usable(dev: str = '/dev/kvm', machine: str = '') -> bool:
	"""True on an arm64 host whose /dev/kvm opens."""
	if (machine or platform.machine()) not in ('aarch64', 'arm64'):
		return False
	try:
		fd = os.open(dev, os.O_RDWR)
		os.close(fd)
		return True
	except OSError:
		return False


def choose_accel() -> str:
	forced = os.environ.get('MMKUNIT_ACCEL', '')
	if forced in ('kvm', 'tcg'):
		return forced
	return 'kvm' if kvm_usable() else 'tcg'


ACCEL = choose_accel()
if ACCEL == 'tcg':
	_wrapper_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)),
				    'arm64_mm.d')
	_path = os.environ.get('PATH', '').split(os.pathsep)
	if _wrapper_dir not in _path:
		os.environ['PATH'] = os.pathsep.join([_wrapper_dir] + _path)
	os.environ['MMKUNIT_ACCEL'] = 'tcg'

# Under TCG "max" with pauth-impdef=on: pointer authentication (the kernel
# signs its return addresses) with QEMU's cheap implementation-defined
# algorithm instead of emulating QARMA, which slows every call down; the
# instructions are the same.  KVM takes the host's CPU.
_CPU = 'host' if ACCEL == 'kvm' else 'max,pauth-impdef=on'

QEMU_ARCH = QemuArchParams(linux_arch='arm64',
			   kconfig='''
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y
CONFIG_ARM64_4K_PAGES=y
CONFIG_ARM64_VA_BITS_48=y
CONFIG_NR_CPUS=8''',
			   qemu_arch='aarch64',
			   kernel_path='arch/arm64/boot/Image',
			   kernel_command_line='console=ttyAMA0 panic=-1',
			   extra_qemu_params=['-machine', 'virt', '-cpu', _CPU,
					      '-smp', '2', '-m', '3072'])
