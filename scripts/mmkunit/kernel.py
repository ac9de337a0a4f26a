# SPDX-License-Identifier: GPL-2.0
"""Building and booting kernels: kunit.py config/build/exec in a build
directory, and the one QEMU command line for the initramfs boots
(modules-run, selftests).  Everything runs through proc.run()."""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, TextIO

from . import arch, proc
from .common import REPO, Error, env_number, rel

IMAGE = 'arch/x86/boot/bzImage'	# x86_64's; image() is the run's architecture's
BUSYBOX = '/bin/busybox'
OBJ_COUNT = '.mmkunit-objects'


def ccache_env() -> Dict[str, str]:
	env = {'CCACHE_BASEDIR': REPO, 'CCACHE_NOHASHDIR': '1',
	       'CCACHE_SLOPPINESS': 'time_macros,include_file_mtime,include_file_ctime'}
	if 'CCACHE_DIR' not in os.environ:
		env['CCACHE_DIR'] = os.path.join(os.path.expanduser('~'), '.cache', 'mmkunit-ccache')
	if os.environ.get('DISTCC_HOSTS', '').strip():
		# a ccache miss compiles on the distcc hosts (Debian's distcc)
		env['CCACHE_PREFIX'] = 'distcc'
	return env


def image() -> str:
	"""The kernel image kunit.py builds and boots, relative to O=."""
	return arch.current().image


# Fragments that turn off what a kunitconfig before them turns on: kunit.py
# refuses two kunitconfigs that set one option two ways, so their entries
# go in as --kconfig_add, which overrides.
OVERRIDE_CONFIGS = ('mm_nohooks.config', 'mm_bench_base.config')


def config_entries(path: str) -> List[str]:
	"""The CONFIG_X=v and "# CONFIG_X is not set" lines of a config fragment."""
	with open(path) as f:
		return [ln.strip() for ln in f
			if re.match(r'^(CONFIG_\w+=\S+|# CONFIG_\w+ is not set)\s*$', ln)]


def kunit_cmd(tree: str, sub: str, out: str, kunitconfigs: List[str], jobs: int,
	      extra: List[str]) -> List[str]:
	a = arch.current()
	cmd = [sys.executable, os.path.join(tree, 'tools/testing/kunit/kunit.py'), sub,
	       '--build_dir=' + out,
	       '--qemu_config=' + os.path.join(tree, a.qemu_config)]
	if a.cross_compile:
		cmd.append('--cross_compile=' + a.cross_compile)
	if sub in ('config', 'build', 'run'):
		for k in kunitconfigs:
			if os.path.basename(k) in OVERRIDE_CONFIGS:
				cmd += ['--kconfig_add=' + e for e in config_entries(os.path.join(tree, k))]
			else:
				cmd.append('--kunitconfig=' + os.path.join(tree, k))
		cmd += ['--make_options', 'CC=' + a.cc]
	if sub in ('build', 'run'):
		cmd += [f'--jobs={jobs}']
	return cmd + extra


def count_objects(out: str) -> int:
	n = 0
	for _root, _dirs, files in os.walk(out):
		n += sum(1 for f in files if f.endswith('.o'))
	return n


def build_progress(out: str) -> str:
	"""Objects in @out against the count the last complete build left."""
	now = count_objects(out)
	try:
		with open(os.path.join(out, OBJ_COUNT)) as f:
			last = int(f.read())
	except (OSError, ValueError):
		last = 0
	return f'{now} objects' + (f' of {last} last time' if last else '')


def build_timeout() -> int:
	return int(env_number('BUILD_TIMEOUT', 3600))


def build(name: str, tree: str, out: str, configs: List[str], jobs: int,
	  log: TextIO, echo: bool = True, make_options: List[str] = ()) -> float:
	"""kunit.py config + build into @out; raise Error when either fails or
	the build runs past BUILD_TIMEOUT.  The kernel image is removed first,
	so a failed build can never leave an older kernel to boot."""
	img = os.path.join(out, image())
	if os.path.exists(img):
		os.unlink(img)
	t0 = time.monotonic()
	limit = build_timeout()
	for sub in ('config', 'build'):
		extra = ['--make_options=' + o for o in make_options] if sub == 'build' else []
		r = proc.run(kunit_cmd(tree, sub, out, configs, jobs, extra), cwd=tree,
			     env=ccache_env(), log=log, echo=echo,
			     timeout=limit - (time.monotonic() - t0),
			     label=f'{name}: {"building" if sub == "build" else "configuring"}',
			     progress=(lambda: build_progress(out)) if sub == 'build' else None)
		if r.timed_out:
			raise Error(f'{name}: kunit.py {sub} timed out after {limit} s (BUILD_TIMEOUT); '
				    f'log: {rel(log.name)}')
		if r.rc != 0:
			raise Error(f'{name}: kunit.py {sub} failed (exit {r.rc}); log: {rel(log.name)}')
	if not os.path.isfile(img):
		raise Error(f'{name}: kunit.py build left no {image()}; log: {rel(log.name)}')
	try:
		with open(os.path.join(out, OBJ_COUNT), 'w') as f:
			f.write(str(count_objects(out)))
	except OSError:
		pass
	return time.monotonic() - t0


def build_objects(name: str, tree: str, out: str, configs: List[str], objs: List[str],
		  jobs: int, log: TextIO) -> None:
	"""kunit.py config of @configs into @out, then make of the objects
	@objs alone (no kernel image); raise Error when either fails."""
	a = arch.current()
	t0 = time.monotonic()
	limit = build_timeout()
	r = proc.run(kunit_cmd(tree, 'config', out, configs, jobs, []), cwd=tree,
		     env=ccache_env(), log=log, echo=False, timeout=limit,
		     label=f'{name}: configuring')
	if r.timed_out or r.rc != 0:
		raise Error(f'{name}: kunit.py config failed (exit {r.rc}); log: {rel(log.name)}')
	cmd = ['make', f'ARCH={a.name}', f'O={out}', f'--jobs={jobs}', f'CC={a.cc}'] + \
		([f'CROSS_COMPILE={a.cross_compile}'] if a.cross_compile else []) + objs
	r = proc.run(cmd, cwd=tree, env=ccache_env(), log=log, echo=False,
		     timeout=limit - (time.monotonic() - t0), label=f'{name}: building {len(objs)} objects')
	if r.timed_out or r.rc != 0:
		raise Error(f'{name}: make {" ".join(objs)} failed (exit {r.rc}); log: {rel(log.name)}')


@dataclass
class Boot:
	"""A kunit.py exec of a built kernel."""
	result: proc.Result
	log_lines: List[str] = field(default_factory=list)
	json_path: str = ''


def boot(name: str, tree: str, build_dir: str, stage_dir: str, configs: List[str],
	 extra: List[str], timeout: int, log: TextIO, echo: bool = True,
	 stop_on=None, stall: float = 0) -> Boot:
	"""kunit.py exec of the kernel in @build_dir; its test.log and
	results.json end up in @stage_dir.  When @stage_dir is not @build_dir
	(a second boot of the same kernel), the build dir's own test.log is
	kept as it was.  A line @stop_on says yes to stops the guest a few
	seconds later (proc.run()); make mutate gives is_splat_line: a splat
	kills the mutant whatever follows.  @stall: kunit.py silent that long
	(it prints each case as the guest ends it) is a hang too."""
	if not os.path.isfile(os.path.join(build_dir, image())):
		raise Error(f'{name}: no kernel in {rel(build_dir)} (its build failed or never ran)')
	jsonpath = os.path.join(stage_dir, 'results.json')
	guest_log = os.path.join(stage_dir, 'test.log')
	for stale in (jsonpath, guest_log):
		if os.path.exists(stale):
			os.unlink(stale)
	own_log = os.path.join(build_dir, 'test.log')
	stash = os.path.join(stage_dir, '.build-dir-test.log')
	if stage_dir != build_dir and os.path.exists(own_log):
		shutil.move(own_log, stash)
	try:
		# unbuffered: kunit.py prints each case as the guest ends it, and
		# @stall judges that output, not 8 KB blocks of it
		r = proc.run(kunit_cmd(tree, 'exec', build_dir, configs, 0,
				       [f'--timeout={timeout}', '--json=' + jsonpath] + extra),
			     cwd=tree, env=dict(ccache_env(), PYTHONUNBUFFERED='1'), log=log,
			     echo=echo, timeout=timeout + 120,
			     label=f'{name}: guest running',
			     stop_on=stop_on, stall=stall or None)
	finally:
		if stage_dir != build_dir:
			if os.path.exists(own_log):
				shutil.move(own_log, guest_log)
			if os.path.exists(stash):
				shutil.move(stash, own_log)
	lines = []
	if os.path.isfile(guest_log):
		with open(guest_log, errors='replace') as f:
			lines = f.readlines()
	return Boot(result=r, log_lines=lines, json_path=jsonpath)


def load_qemu_config():
	"""Load the repo's QEMU config of the run's architecture (x86_64_mm.py,
	arm64_mm.py) outside kunit_tool's package, for its accelerator choice;
	undo the PATH change it makes."""
	a = arch.current()
	path = os.path.join(REPO, a.qemu_config)
	with open(path) as f:
		src = f.read()
	src = src.replace('from ..qemu_config import QemuArchParams',
			  'QemuArchParams = lambda **kw: kw')
	mod = type(sys)(os.path.basename(path)[:-3])
	mod.__file__ = path
	saved = dict(os.environ)
	try:
		exec(compile(src, path, 'exec'), mod.__dict__)
	finally:
		os.environ.clear()
		os.environ.update(saved)
	return mod



def choose_accel() -> str:
	"""The accelerator the repo's QEMU config chooses (KVM only where it
	can run guests).  It rewrites os.environ for a moment: call it from
	one thread only."""
	return load_qemu_config().choose_accel()


def qemu_cmd(kernel: str, initrd: str, append: str, mem_mb: int = 3072,
	     smp: int = 2, accel: str = '') -> List[str]:
	"""The QEMU command line of an initramfs boot, with @accel or the
	accelerator choose_accel() gives."""
	accel = accel or choose_accel()
	return ['qemu-system-x86_64', '-nodefaults', '-nographic', '-no-reboot',
		'-m', str(mem_mb), '-smp', str(smp), '-serial', 'stdio', '-bios', 'qboot.rom',
		'-accel', 'kvm' if accel == 'kvm' else 'tcg,thread=multi',
		'-kernel', kernel, '-initrd', initrd, '-append', append]


def is_splat_line(line: str) -> bool:
	"""A console line that judge.scan_splats() counts as a splat."""
	from . import judge
	return bool(judge.scan_splats([line]))


def boot_initramfs(cmd: List[str], console: str, timeout: int, nice: int = 0,
		   stall: float = 0, stall_on: str = '', label: str = '',
		   stop_on=None, stop_grace: float = 5.0, stall_of=None) -> proc.Result:
	"""Run a QEMU command (qemu_cmd) with its console in @console; with
	@stall, a console without a line (holding @stall_on) that long stops
	it too, and a line @stop_on says yes to @stop_grace seconds later
	(proc.run())."""
	with open(console, 'w') as logf:
		return proc.run(cmd, log=logf, echo=False, timeout=timeout, nice=nice,
				stall=stall or None, stall_on=stall_on, label=label, stop_on=stop_on,
				stop_grace=stop_grace, stall_of=stall_of)


def pack_initramfs(root: str, init: str, cpio: str) -> str:
	"""Write @init as @root/init and pack @root into the newc archive @cpio."""
	with open(os.path.join(root, 'init'), 'w') as f:
		f.write(init)
	os.chmod(os.path.join(root, 'init'), 0o755)
	with open(cpio, 'wb') as f:
		names = subprocess.run(['find', '.'], cwd=root, stdout=subprocess.PIPE,
				       check=True).stdout
		subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet'], cwd=root,
			       input=names, stdout=f, check=True)
	return cpio
