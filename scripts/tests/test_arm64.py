# SPDX-License-Identifier: GPL-2.0
"""ARCH=arm64 on the host: the architecture chosen from make's ARCH=, the
kunit.py command line (QEMU config, cross compiler), the QEMU config and
its wrapper, the packages, and whole runs on the fake kernel tree
(fakerepo.py) whose stages, directories and results say arm64."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from mmkunit import arch, common, deps, kernel  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakerepo  # noqa: E402

ARM64_CONFIG = 'tools/testing/kunit/qemu_configs/arm64_mm.py'


def arm64_env(**kw):
	return mock.patch.dict(os.environ, dict(MMKUNIT_ARCH='arm64', **kw))


class TestArch(unittest.TestCase):
	def test_default_is_x86_64_without_suffix(self):
		with mock.patch.dict(os.environ, {'MMKUNIT_ARCH': ''}):
			a = arch.current()
		self.assertEqual(a.name, 'x86_64')
		self.assertEqual(a.suffix, '')
		self.assertEqual(a.image, kernel.IMAGE)

	def test_arm64_and_its_aliases(self):
		for name in ('arm64', 'aarch64'):
			with mock.patch.dict(os.environ, {'MMKUNIT_ARCH': name}):
				a = arch.current()
			self.assertEqual((a.name, a.suffix), ('arm64', '-arm64'))
		self.assertEqual(arch.lookup('x86').name, 'x86_64')

	def test_unsupported_arch_is_one_error_naming_the_choices(self):
		with self.assertRaises(common.Error) as e:
			arch.lookup('riscv')
		self.assertIn('ARCH=riscv', str(e.exception))
		self.assertIn('arm64', str(e.exception))

	def test_require_default(self):
		with arm64_env():
			with self.assertRaises(common.Error) as e:
				arch.require_default('make selftests')
		self.assertIn('ARCH=arm64', str(e.exception))
		with mock.patch.dict(os.environ, {'MMKUNIT_ARCH': ''}):
			arch.require_default('make selftests')


class TestKunitCommand(unittest.TestCase):
	def test_arm64_config_and_cross_compiler(self):
		with arm64_env():
			cmd = kernel.kunit_cmd('/t', 'build', '/o', ['mm/tests/.kunitconfig'], 2, [])
			img = kernel.image()
		self.assertIn('--qemu_config=/t/' + ARM64_CONFIG, cmd)
		self.assertIn('--cross_compile=aarch64-linux-gnu-', cmd)
		self.assertEqual(cmd[cmd.index('--make_options') + 1], 'CC=ccache aarch64-linux-gnu-gcc')
		self.assertEqual(img, 'arch/arm64/boot/Image')
		# exec boots with the same config and compiler prefix
		with arm64_env():
			cmd = kernel.kunit_cmd('/t', 'exec', '/o', [], 0, [])
		self.assertIn('--qemu_config=/t/' + ARM64_CONFIG, cmd)
		self.assertIn('--cross_compile=aarch64-linux-gnu-', cmd)

	def test_x86_64_unchanged(self):
		with mock.patch.dict(os.environ, {'MMKUNIT_ARCH': ''}):
			cmd = kernel.kunit_cmd('/t', 'build', '/o', ['mm/tests/.kunitconfig'], 2, [])
		self.assertIn('--qemu_config=/t/tools/testing/kunit/qemu_configs/x86_64_mm.py', cmd)
		self.assertFalse([c for c in cmd if c.startswith('--cross_compile')])
		self.assertEqual(cmd[cmd.index('--make_options') + 1], 'CC=ccache gcc')


class TestDeps(unittest.TestCase):
	def test_arm64_adds_cross_compiler_and_qemu(self):
		none = lambda _: None
		with arm64_env():
			miss = deps.missing_packages(which=none, exists=lambda _: False)
		for p in ('gcc-aarch64-linux-gnu', 'binutils-aarch64-linux-gnu', 'qemu-system-arm'):
			self.assertIn(p, miss)
		with mock.patch.dict(os.environ, {'MMKUNIT_ARCH': ''}):
			miss = deps.missing_packages(which=none, exists=lambda _: False)
		self.assertNotIn('gcc-aarch64-linux-gnu', miss)
		self.assertNotIn('qemu-system-arm', miss)


class TestQemuConfig(unittest.TestCase):
	def setUp(self):
		with arm64_env():
			self.cfg = kernel.load_qemu_config()
		self.tmp = tempfile.TemporaryDirectory()

	def tearDown(self):
		self.tmp.cleanup()

	def test_loads_the_arm64_config(self):
		q = self.cfg.QEMU_ARCH
		self.assertEqual(q['linux_arch'], 'arm64')
		self.assertEqual(q['qemu_arch'], 'aarch64')
		# the image kunit.py boots is the one the runner checks for
		self.assertEqual(q['kernel_path'], arch.ARCHES['arm64'].image)
		self.assertIn('ttyAMA0', q['kernel_command_line'])

	def test_virt_two_cpus_thp_memory(self):
		p = self.cfg.QEMU_ARCH['extra_qemu_params']
		self.assertEqual(p[p.index('-machine') + 1], 'virt')
		self.assertTrue(p[p.index('-cpu') + 1].startswith('max'))
		self.assertEqual(p[p.index('-smp') + 1], '2')
		self.assertGreaterEqual(int(p[p.index('-m') + 1]), 2048)

	# the suites assume a PMD THP of 2 MiB: 4 KiB pages (16K and 64K
	# pages give 32 MiB and 512 MiB PMDs)
	def test_4k_pages(self):
		k = self.cfg.QEMU_ARCH['kconfig']
		self.assertIn('CONFIG_ARM64_4K_PAGES=y', k.split())
		self.assertIn('CONFIG_SERIAL_AMBA_PL011_CONSOLE=y', k.split())

	def test_kvm_only_on_an_arm64_host(self):
		dev = os.path.join(self.tmp.name, 'kvm')
		open(dev, 'w').close()
		self.assertFalse(self.cfg.kvm_usable(dev, 'x86_64'))
		self.assertTrue(self.cfg.kvm_usable(dev, 'aarch64'))
		self.assertFalse(self.cfg.kvm_usable('/nonexistent/kvm', 'aarch64'))

	def wrapper(self, *args, **env):
		fake = os.path.join(self.tmp.name, 'bin')
		os.makedirs(fake, exist_ok=True)
		with open(os.path.join(fake, 'qemu-system-aarch64'), 'w') as f:
			f.write('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
		os.chmod(os.path.join(fake, 'qemu-system-aarch64'), 0o755)
		wrapper = os.path.join(REPO, 'tools/testing/kunit/qemu_configs/arm64_mm.d')
		e = {k: v for k, v in os.environ.items() if k != 'MMKUNIT_EXACT'}
		e.update(env, PATH=os.pathsep.join([wrapper, fake, '/usr/bin', '/bin']))
		r = subprocess.run(['qemu-system-aarch64'] + list(args), env=e,
				   capture_output=True, text=True, timeout=30)
		self.assertEqual(r.returncode, 0, r.stderr)
		return r.stdout.splitlines()

	KUNIT_ARGS = ['-m', '1024', '-accel', 'kvm', '-accel', 'hvf', '-accel', 'tcg',
		      '-append', 'a b', '-machine', 'virt', '-cpu', 'max,pauth-impdef=on']

	def test_wrapper_drops_kvm_and_makes_tcg_multithreaded(self):
		self.assertEqual(self.wrapper(*self.KUNIT_ARGS),
				 ['-m', '1024', '-accel', 'tcg,thread=multi', '-append', 'a b',
				  '-machine', 'virt', '-cpu', 'max,pauth-impdef=on'])

	# exact mode: icount, and no randomness from the CPU (FEAT_RNG of "max")
	# or the device tree, which made two boots differ by 0.009 %
	def test_wrapper_exact_mode_is_icount_without_randomness(self):
		self.assertEqual(self.wrapper(*self.KUNIT_ARGS, MMKUNIT_EXACT='1'),
				 ['-m', '1024', '-accel', 'tcg,thread=single', '-icount',
				  'shift=0,sleep=off', '-append', 'a b',
				  '-machine', 'virt,dtb-randomness=off', '-cpu', 'neoverse-n1'])

	# a CPU or machine other than max and virt is passed as it is
	def test_wrapper_exact_mode_keeps_other_cpus(self):
		self.assertEqual(self.wrapper('-machine', 'sbsa-ref', '-cpu', 'cortex-a57',
					      MMKUNIT_EXACT='1'),
				 ['-machine', 'sbsa-ref', '-cpu', 'cortex-a57'])


class TestMakefile(unittest.TestCase):
	"""make's ARCH= reaches the runner as MMKUNIT_ARCH, for deps too."""

	def make(self, *args):
		with tempfile.TemporaryDirectory() as d:
			py = os.path.join(d, 'py')
			log = os.path.join(d, 'log')
			with open(py, 'w') as f:
				f.write(f'#!/bin/sh\necho "$2 ${{MMKUNIT_ARCH:-unset}}" >> {log}\n')
			os.chmod(py, 0o755)
			# a make above this test (make test ARCH=arm64) passes ARCH= down in MAKEFLAGS
			env = {k: v for k, v in os.environ.items()
			       if k not in ('ARCH', 'MMKUNIT_ARCH', 'MAKEFLAGS', 'MFLAGS', 'MAKELEVEL')}
			r = subprocess.run(['make', '-s', '-C', REPO, 'PYTHON=' + py] + list(args),
					   env=env, capture_output=True, text=True, timeout=60)
			self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
			with open(log) as f:
				return f.read().split()

	def test_arch_reaches_the_runner(self):
		self.assertEqual(self.make('run', 'ARCH=arm64'), ['deps', 'arm64', 'run', 'arm64'])
		self.assertEqual(self.make('bench', 'ARCH=arm64'),
				 ['deps', 'arm64', 'bench', 'arm64'])
		self.assertEqual(self.make('test'), ['deps', 'unset', 'test', 'unset'])


class TestFakeRuns(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.fr = fakerepo.FakeRepo(self.tmp.name)

	def tearDown(self):
		self.tmp.cleanup()

	def summary(self):
		with open(os.path.join(self.fr.build, 'results', 'summary.json')) as f:
			return json.load(f)

	def test_arm64_test_stages_dirs_and_results(self):
		r = self.fr.run('test', MMKUNIT_ARCH='arm64')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		for c in self.fr.calls():
			if c[2] in ('config', 'build', 'exec'):
				self.assertIn('--cross_compile=aarch64-linux-gnu-', c)
				self.assertTrue([a for a in c if a.startswith('--qemu_config=')
						 and a.endswith('/' + ARM64_CONFIG)], c)
		s = self.summary()
		self.assertEqual(s['arch'], 'arm64')
		stages = {st['name']: st for st in s['stages']}
		self.assertEqual(list(stages), ['host tools', 'checkpatch', 'series-arm64',
						'races-arm64', 'pristine-arm64'])
		for n in ('series-arm64', 'races-arm64', 'pristine-arm64'):
			self.assertEqual(stages[n]['arch'], 'arm64')
			self.assertEqual(stages[n]['out_dir'], 'build/out/' + n)
			self.assertTrue(os.path.isfile(os.path.join(self.fr.repo, stages[n]['out_dir'],
								    'test.log')), n)
		# the races boot the series-arm64 kernel, not an x86_64 one
		out = os.path.join(self.fr.build, 'out')
		self.assertTrue(os.path.isfile(os.path.join(out, 'series-arm64', 'arch/arm64/boot/Image')))
		self.assertFalse(os.path.exists(os.path.join(out, 'series')))
		self.assertFalse(os.path.exists(os.path.join(out, 'races')))
		with open(os.path.join(self.fr.build, 'results', 'junit.xml')) as f:
			self.assertIn('name="arch" value="arm64"', f.read())

	def test_x86_64_stages_keep_their_names(self):
		r = self.fr.run('run', 'series')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		s = self.summary()
		self.assertEqual(s['arch'], 'x86_64')
		self.assertEqual([(st['name'], st['arch'], st['out_dir']) for st in s['stages']],
				 [('series', 'x86_64', 'build/out/series')])

	# an x86_64 kernel in build/out/series is never booted as arm64's
	def test_arm64_run_does_not_boot_an_x86_64_kernel(self):
		r = self.fr.run('run', 'series', FAKE_KERNEL_ID='x86')
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		r = self.fr.run('run', 'series', MMKUNIT_ARCH='arm64', FAKE_KERNEL_ID='arm64',
				FAKE_BUILD_FAIL='1')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertEqual([b.split()[0] for b in self.fr.booted()], ['x86'])

	def test_unsupported_arch_is_exit_2_before_building(self):
		r = self.fr.run('deps', MMKUNIT_ARCH='sparc')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('ARCH=sparc: not supported', r.stderr)

	def test_modules_run_refuses_arm64(self):
		r = self.fr.run('modules-run', MMKUNIT_ARCH='arm64')
		self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
		self.assertIn('x86_64 only', r.stderr)
		self.assertEqual(self.fr.calls(), [])

	def test_bench_boot_says_arm64(self):
		self.fr.run('bench', MMKUNIT_ARCH='arm64')
		execs = [c for c in self.fr.calls() if c[2] == 'exec']
		self.assertTrue(execs)
		self.assertIn('--kernel_args=mm_bench.arch=arm64', execs[0])
		# the benchmarks' kernel: without the hooks' option, in a directory of its own
		self.assertTrue(os.path.isdir(os.path.join(self.fr.build, 'out', 'series-bench-arm64')))
		configs = [c for c in self.fr.calls() if c[2] == 'config']
		self.assertTrue(configs and all(
			'--kconfig_add=# CONFIG_MM_KUNIT_HOOKS is not set' in ' '.join(c)
			for c in configs), configs)
		bench = os.listdir(os.path.join(self.fr.build, 'bench'))
		self.assertTrue(bench and all(d.endswith('-series-arm64') for d in bench), bench)


if __name__ == '__main__':
	unittest.main()
