# SPDX-License-Identifier: GPL-2.0
"""build/results/kcidb.json: a run's results as KCIDB I/O data, schema
5.3 (validated against kcidb-io's published schema, exported from
kernelci/kcidb-io), next to summary.json and junit.xml.

  checkouts  one per distinct base + patches: the series' (patchset_hash,
	     message_id of the thread's cover letter when SERIES= was one,
	     valid=false when it did not apply) and the bare base (pristine);
  builds     one per stage (series, races, pristine, checkpatch, host
	     tools): status FAIL when the kernel did not build, ERROR when the
	     stage could not run for another reason, SKIP when the checkout
	     was not valid; compiler, config and QEMU in misc;
  tests      one per case with our verdict: PASS / FAIL / SKIP, MISS for a
	     case that should have run and did not (expected.py), ERROR for a
	     crashed case; path "kunit.<suite>.<case>[.<param>]" in KCIDB's
	     allowed form; the guest log as an output file; BENCH lines of
	     the guest log as DONE tests with their number.

Ids start with the origin "mmkunit" (MMKUNIT_KCIDB_ORIGIN) and carry a
run id, so a bot submits every run as new objects.  Output files are
file:// URLs under build/ unless MMKUNIT_KCIDB_URL=https://host/dir/
names where build/ was uploaded (docs/kernel-ci.rst)."""

import datetime
import hashlib
import json
import os
import re
import sys
from typing import Dict, List, Optional

from .common import BUILD, REPO, info
from .report import Stage

# The published KCIDB I/O schema is not carried in this repository (this
# workplace commits nothing taken from another repository).  It is looked
# for, in this order: MMKUNIT_KCIDB_SCHEMA (an export of kcidb-io's V5_3
# schema, docs/kernel-ci.rst says how), build/kcidb-io.schema.v5.3.json, and
# the workspace's shared/kcidb/ beside the checkout (where CI finds it).
SCHEMA_NAME = 'kcidb-io.schema.v5.3.json'


def find_schema() -> str:
	"""The first KCIDB 5.3 schema file of the places above that exists, or
	MMKUNIT_KCIDB_SCHEMA (or build/'s path) when none does."""
	env = os.environ.get('MMKUNIT_KCIDB_SCHEMA', '').strip()
	if env:
		return env
	candidates = [os.path.join(BUILD, SCHEMA_NAME),
		      os.path.join(os.path.dirname(REPO), 'shared', 'kcidb', SCHEMA_NAME)]
	for path in candidates:
		if os.path.isfile(path):
			return path
	return candidates[0]


SCHEMA = find_schema()


class NoSchema(Exception):
	pass
VERSION = {'major': 5, 'minor': 3}
PATH_RE = re.compile(r'^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$')


def origin() -> str:
	o = os.environ.get('MMKUNIT_KCIDB_ORIGIN', 'mmkunit').strip() or 'mmkunit'
	return re.sub(r'[^a-z0-9_]', '_', o.lower())


def path_part(text: str) -> str:
	"""One component of a KCIDB path: [a-zA-Z0-9_-]+ (anything else
	becomes _, runs of it one _)."""
	p = re.sub(r'[^a-zA-Z0-9_-]+', '_', text).strip('_')
	return p or '_'


def case_path(name: str, prefix: str = 'kunit') -> str:
	"""KCIDB path of a KUnit case name "suite.case[.param description]":
	suite and case are C identifiers, the rest (a parameter's
	description: spaces, '=', '/', '.', ...) is one component."""
	parts = name.split('.', 2)
	out = [prefix] + [path_part(p) for p in parts]
	return '.'.join(out)


def url_of(path: str) -> str:
	"""An output file's URL: under MMKUNIT_KCIDB_URL when set (build/ as
	uploaded there), else file://."""
	path = os.path.abspath(path)
	base = os.environ.get('MMKUNIT_KCIDB_URL', '').strip()
	if base and path.startswith(BUILD + os.sep):
		return base.rstrip('/') + '/' + os.path.relpath(path, BUILD)
	return 'file://' + path


def rfc3339(stamp: str) -> Optional[str]:
	"""A stage's local "%Y-%m-%dT%H:%M:%S" as RFC 3339 with its offset."""
	try:
		t = datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%S')
	except (TypeError, ValueError):
		return None
	return t.astimezone().isoformat()


def base_desc(stage) -> Dict:
	"""The base the stage's tree was assembled on: from the series' base
	check when there is one, else what the environment says."""
	s = stage.series or {}
	b = (s.get('base') or {}) if isinstance(s, dict) else {}
	rep = stage.repro or {}
	# a git KDIR's HEAD is a real commit (when it is the base: no local
	# changes on top); an imported tarball's commit is ours alone (misc)
	real = rep.get('kdir_head', '') if rep.get('kdir_head') and \
		rep.get('kdir_head') == rep.get('base_commit') else ''
	if b.get('used'):
		return {'commit': real if b['used'] == rep.get('base_commit') else '',
			'source': b.get('used_source', ''), 'import': b['used']}
	if os.environ.get('KDIR'):
		return {'commit': real, 'source': f'KDIR={os.environ["KDIR"]}',
			'import': rep.get('base_commit', '')}
	if os.environ.get('LINUX_TARBALL'):
		return {'commit': '', 'source': f'LINUX_TARBALL={os.environ["LINUX_TARBALL"]}',
			'import': rep.get('base_commit', '')}
	return {'commit': '', 'source': "Debian's linux-source-7.3",
		'import': rep.get('base_commit', '')}


def checkout_of(stage, run_id: str) -> Dict:
	"""The KCIDB checkout of a stage: its base and its patches."""
	rep = stage.repro or {}
	phash = rep.get('patchset_hash', '')
	base = base_desc(stage)
	key = hashlib.sha256(f'{base["source"]}\0{base.get("import", "")}\0{phash}'.encode()
			     ).hexdigest()
	c = {'id': f'{origin()}:{run_id}-{key[:16]}', 'origin': origin(),
	     'tree_name': 'linux-7.3', 'patchset_hash': phash,
	     'valid': stage.outcome == '',
	     'comment': ('base ' + base['source'] +
			 (f' + {len(rep.get("patches", []))} patch(es)' if phash else ''))}
	if re.fullmatch(r'[0-9a-f]{40}', base['commit'] or ''):
		c['git_commit_hash'] = base['commit']
	ser = stage.series if isinstance(stage.series, dict) else None
	if ser and ser.get('message_id') and phash:
		c['message_id'] = ser['message_id']
		if ser.get('subject'):
			c['comment'] += f'; series {ser["subject"]}'
	if rep.get('patches'):
		c['patchset_files'] = [{'name': os.path.basename(p['file']) or 'patch',
					'url': url_of(os.path.join(REPO, p['file']))}
				       for p in rep['patches']]
	misc = {'base_source': base['source'], 'base_import_commit': base.get('import', ''),
		'patches': [{k: p[k] for k in ('patch', 'patch_id', 'sha256')}
			    for p in rep.get('patches', [])]}
	if ser:
		misc['series'] = ser
	if stage.outcome:
		misc['outcome'] = stage.outcome
		misc['not_applied'] = rep.get('not_applied', {})
		c['log_excerpt'] = stage.error[:16000]
	c['misc'] = misc
	return c


def build_status(stage) -> str:
	if stage.outcome:
		return 'SKIP'
	if stage.error:
		return 'FAIL' if re.search(r'kunit\.py (config|build) failed|left no', stage.error) \
			else 'ERROR'
	return 'PASS'


def test_status(c: dict) -> str:
	if c['verdict'] == 'pass':
		return 'PASS'
	if c['verdict'] == 'skip':
		return 'SKIP'
	if c['status'] == 'NOT RUN':
		return 'MISS'
	if c['status'] in ('ERROR', 'CRASHED', 'STOPPED'):
		return 'ERROR'
	return 'FAIL'


def stage_prefix(stage) -> str:
	if stage.name.startswith('host tools'):
		return 'mmkunit_host'
	if stage.name.startswith('checkpatch'):
		return 'checkpatch'
	return 'kunit'


def bench_tests(stage, log: str) -> List[Dict]:
	"""(path, number, comment) of the BENCH lines of a guest log."""
	out: List[Dict] = []
	try:
		sys.path.insert(0, os.path.join(REPO, 'scripts'))
		import benchreport
	except ImportError:
		return out
	finally:
		sys.path.pop(0)
	try:
		with open(log, errors='replace') as f:
			lines = f.readlines()
	except OSError:
		return out
	for n, line in enumerate(lines, 1):
		m = benchreport.BENCH_RE.match(re.sub(r'^\[\s*\d+\.\d+\]\s*', '', line))
		if not m:
			continue
		try:
			bench, config, variant, rnd, value, unit = benchreport.parse_bench(
				m.group(1), f'{log}:{n}')
		except benchreport.Error:
			continue
		cfg = '.'.join(path_part(f'{k}-{v}') for k, v in sorted(config.items()))
		out.append({'path': '.'.join(p for p in ('bench', path_part(bench), cfg,
							 f'round{rnd}') if p),
			    'number': {'value': value, 'unit': unit},
			    'comment': m.group(1).strip()[:1000]})
	return out


def document(command: str, stages, seconds: float, code: int,
	     run_id: Optional[str] = None) -> Dict:
	"""The KCIDB I/O document of a run."""
	run_id = run_id or datetime.datetime.now().strftime('%Y%m%d%H%M%S') + \
		f'-{os.getpid()}'
	checkouts: Dict[str, Dict] = {}
	builds, tests = [], []
	series_checkout = None
	for s in stages:
		if s.variant:		# a kernel stage: its base and its patches
			co = checkout_of(s, run_id)
			checkouts.setdefault(co['id'], co)
			if (s.repro or {}).get('patchset_hash') and series_checkout is None:
				series_checkout = co['id']
	# the stages without a kernel of their own (host tools, checkpatch,
	# judge of a log) go with the series' checkout, else the first, else
	# one of the base alone
	fallback = series_checkout or next(iter(checkouts), None)
	if fallback is None:
		co = checkout_of(Stage(name='base'), run_id)
		checkouts[co['id']] = co
		fallback = co['id']
	for s in stages:
		co_id = checkout_of(s, run_id)['id'] if s.variant else fallback
		bid = f'{origin()}:{run_id}-{path_part(s.name)}'
		rep = s.repro or {}
		b = {'id': bid, 'origin': origin(), 'checkout_id': co_id,
		     'status': build_status(s), 'comment': f'mm-kunit stage "{s.name}"' +
		     (f' (variant {s.variant})' if s.variant else '')}
		if s.variant:
			b['architecture'] = 'x86_64'
			b['config_name'] = 'kunit mm/tests/.kunitconfig' + \
				(' + mm_debug.config' if s.name.endswith('-debug') else '')
			if rep.get('compiler'):
				b['compiler'] = rep['compiler']
			if rep.get('kernel_config'):
				b['config_url'] = url_of(os.path.join(REPO, rep['kernel_config']))
		if s.build_seconds is not None:
			b['duration'] = round(s.build_seconds, 1)
		st = rfc3339(s.started)
		if st:
			b['start_time'] = st
		if s.out_dir and os.path.isfile(os.path.join(REPO, s.out_dir, 'mmkunit.log')):
			b['log_url'] = url_of(os.path.join(REPO, s.out_dir, 'mmkunit.log'))
		if s.error:
			b['log_excerpt'] = s.error[:16000]
		b['misc'] = {'stage': s.name, 'counts': s.counts,
			     'repro': {k: v for k, v in rep.items() if k not in ('patches',)},
			     'applied': s.applied}
		builds.append(b)
		prefix = stage_prefix(s)
		guest_log = os.path.join(REPO, s.out_dir, 'test.log') if s.out_dir else ''
		outputs = ([{'name': 'test.log', 'url': url_of(guest_log)}]
			   if guest_log and os.path.isfile(guest_log) else [])
		seen: Dict[str, int] = {}
		env = {'comment': f'QEMU {rep.get("accel", "")}'.strip(),
		       'misc': {k: rep[k] for k in ('qemu', 'qemu_command', 'exact_mode')
				if k in rep}} if s.variant else None
		for n, c in enumerate(s.cases):
			path = case_path(c['name'], prefix) if prefix == 'kunit' else \
				prefix + '.' + '.'.join(path_part(p) for p in
							re.split(r'[./]', c['name']) if p)
			if path in seen:	# two names mapped to one path
				seen[path] += 1
				path = f'{path}-{seen[path]}'
			else:
				seen[path] = 1
			t = {'id': f'{bid}-{n}', 'origin': origin(), 'build_id': bid, 'path': path,
			     'status': test_status(c),
			     'misc': {'name': c['name'], 'kunit_status': c['status'],
				      'verdict': c['verdict'], 'reason': c['reason']}}
			if c['reason']:
				t['comment'] = c['reason'][:1000]
			if st:
				t['start_time'] = st
			if outputs:
				t['output_files'] = outputs
			if env:
				t['environment'] = env
			seeds = [x['seed'] for x in rep.get('seeds', [])
				 if c['name'].split('.')[1:2] == [x['case']]]
			if seeds:
				t['misc']['seeds'] = seeds
			tests.append(t)
		if guest_log and os.path.isfile(guest_log):
			for n, bt in enumerate(bench_tests(s, guest_log)):
				t = {'id': f'{bid}-bench-{n}', 'origin': origin(), 'build_id': bid,
				     'path': bt['path'], 'status': 'DONE', 'number': bt['number'],
				     'comment': bt['comment'], 'output_files': outputs}
				if env:
					t['environment'] = env
				tests.append(t)
	return {'version': dict(VERSION), 'checkouts': list(checkouts.values()),
		'builds': builds, 'tests': tests}


def write(command: str, stages, seconds: float, code: int, results: str) -> str:
	"""kcidb.json in @results; its path.  A failure here is said, and the
	other results stand."""
	path = os.path.join(results, 'kcidb.json')
	try:
		doc = document(command, stages, seconds, code)
		with open(path, 'w') as f:
			json.dump(doc, f, indent=1)
			f.write('\n')
	except (OSError, ValueError, KeyError, TypeError) as e:
		info(f'kcidb.json not written: {type(e).__name__}: {e}')
	return path


# ------------------------------------------------------------ validation

def validate(doc: Dict, schema_path: str = SCHEMA) -> List[str]:
	"""The schema errors of @doc (empty: valid), with jsonschema (Debian's
	python3-jsonschema; Draft 7, as kcidb-io validates) checking formats."""
	import jsonschema
	if not os.path.isfile(schema_path):
		raise NoSchema(f'no KCIDB schema at {schema_path}: export kcidb-io\'s V5_3 schema '
			       'there or set MMKUNIT_KCIDB_SCHEMA (docs/kernel-ci.rst)')
	with open(schema_path) as f:
		schema = json.load(f)
	cls = jsonschema.Draft7Validator
	checker = getattr(cls, 'FORMAT_CHECKER', None) or jsonschema.draft7_format_checker
	v = cls(schema, format_checker=checker)
	errs = [f'{"/".join(str(p) for p in e.absolute_path) or "(top)"}: {e.message}'
		for e in v.iter_errors(doc)]
	for t in doc.get('tests', []):
		if not PATH_RE.match(t.get('path', '')):
			errs.append(f'tests/{t.get("id")}: path {t.get("path")!r}')
	return errs


def main(argv: List[str]) -> int:
	"""python3 -m mmkunit.kcidb FILE: validate a kcidb.json; exit 1 on errors."""
	with open(argv[0]) as f:
		doc = json.load(f)
	try:
		errs = validate(doc)
	except NoSchema as e:
		print(f'{argv[0]}: not validated: {e}')
		return 2
	for e in errs[:50]:
		print(e)
	print(f'{argv[0]}: {"valid" if not errs else str(len(errs)) + " error(s)"} against '
	      f'KCIDB schema {VERSION["major"]}.{VERSION["minor"]} '
	      f'({len(doc.get("checkouts", []))} checkouts, {len(doc.get("builds", []))} builds, '
	      f'{len(doc.get("tests", []))} tests)')
	return 1 if errs else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
