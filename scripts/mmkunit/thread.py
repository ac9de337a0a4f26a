# SPDX-License-Identifier: GPL-2.0
"""SERIES= as what a maintainer downloads: a whole lore thread (cover
letter, replies quoting diffs, trailers, several versions) or the clean
mbox b4 am writes.

A thread goes through Debian's b4 (b4 am -m, offline): the newest
complete version, with the trailers of the replies; an incomplete newest
version (a patch of it missing) falls back to the next older complete
one, and the run says so.  The version's base-commit: and
prerequisite-patch-id: lines are checked against the base we have
(check_base); a series that does not apply is an outcome of its own
(tree.NotApplied, exit 3)."""

import email
import email.policy
import hashlib
import json
import os
import re
import shutil
import subprocess
from typing import Dict, List, Optional, Tuple

from .common import BUILD, GIT_ID, Error, info, rel

THREAD_DIR = os.path.join(BUILD, 'thread')
EXIT_SERIES = 3		# the series could not be put on our base (see check_base)

SUBJ_TAG = re.compile(r'^\s*\[([^]]*)\]')


def read_mails(mbox: str) -> List[email.message.EmailMessage]:
	"""The mails of an mbox file (mboxo/mboxrd "From " separated)."""
	import mailbox
	box = mailbox.mbox(mbox, factory=lambda f: email.message_from_binary_file(
		f, policy=email.policy.default), create=False)
	try:
		return [m for m in box]
	finally:
		box.close()


def body_text(msg) -> str:
	try:
		part = msg.get_body(preferencelist=('plain',))
		return part.get_content() if part is not None else ''
	except (KeyError, LookupError, AttributeError):
		payload = msg.get_payload(decode=True)
		return payload.decode(errors='replace') if isinstance(payload, bytes) else ''


def subject_of(msg) -> str:
	return ' '.join(str(msg.get('subject', '')).split())


def patch_tag(subject: str) -> Optional[Tuple[int, int, int]]:
	"""(version, index, total) of "[PATCH v2 3/5] ..." (index/total 1/1
	for a lone "[PATCH]"), None for a reply or a mail without the tag."""
	if re.match(r'^\s*(re|aw|fwd?)\s*:', subject, re.I):
		return None
	m = SUBJ_TAG.match(subject)
	if not m or not re.search(r'\bPATCH\b', m.group(1), re.I):
		return None
	tag = m.group(1)
	v = re.search(r'\bv(\d+)\b', tag, re.I)
	n = re.search(r'\b(\d+)/(\d+)\b', tag)
	return (int(v.group(1)) if v else 1, int(n.group(1)) if n else 1,
		int(n.group(2)) if n else 1)


def has_diff(text: str) -> bool:
	return bool(re.search(r'^(diff --git |--- \S.*\n\+\+\+ |Index: )', text, re.M))


def is_thread(mails) -> bool:
	"""A thread (replies, or more than one version) rather than a clean
	series mbox (its patches, maybe with its cover letter)."""
	versions = set()
	for m in mails:
		subj = subject_of(m)
		if re.match(r'^\s*(re|aw|fwd?)\s*:', subj, re.I):
			return True			# a reply
		tag = patch_tag(subj)
		if tag:
			versions.add(tag[0])
		elif not has_diff(body_text(m)):
			return True			# a mail that is neither patch nor cover
	return len(versions) > 1


def b4_env(home: str) -> Dict[str, str]:
	"""b4 with no user config, no cache outside @home, no network use:
	our identity (b4 am needs one), attestation off."""
	env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
	env.update(GIT_ID)
	keys = [('gc.auto', '0'), ('user.name', 'mm-kunit'), ('user.email', 'mm-kunit@localhost'),
		('b4.attestation-policy', 'off'), ('b4.attestation-check-dkim', 'no')]
	env['GIT_CONFIG_COUNT'] = str(len(keys))
	for i, (k, v) in enumerate(keys):
		env[f'GIT_CONFIG_KEY_{i}'] = k
		env[f'GIT_CONFIG_VALUE_{i}'] = v
	env.update(HOME=home, XDG_CACHE_HOME=os.path.join(home, 'cache'),
		   XDG_DATA_HOME=os.path.join(home, 'data'), XDG_CONFIG_HOME=os.path.join(home, 'config'))
	return env


def run_b4(mbox: str, out: str, version: Optional[int]) -> Tuple[int, str]:
	"""b4 am -m @mbox into @out (series.mbx, series.cover); (rc, output)."""
	if shutil.which('b4') is None:
		raise Error(f'SERIES={mbox} is a thread (replies or several versions): b4 is needed '
			    'to take a version out of it; apt-get install b4 (make deps installs it)')
	shutil.rmtree(out, ignore_errors=True)
	os.makedirs(out)
	cmd = ['b4', 'am', '-C', '-m', mbox, '-o', out, '-n', 'series', '-t']
	if version:
		cmd += ['-v', str(version)]
	try:
		r = subprocess.run(cmd, cwd=out, env=b4_env(os.path.join(out, '.b4home')),
				   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
				   timeout=300)
	except subprocess.TimeoutExpired:
		raise Error(f'b4 am on SERIES={mbox} timed out after 300 s')
	shutil.rmtree(os.path.join(out, '.b4home'), ignore_errors=True)
	return r.returncode, r.stdout


def complete(mails) -> Tuple[bool, List[int], int]:
	"""(every patch 1..N there, the indexes there, N) of b4's output."""
	idx, total = [], 0
	for m in mails:
		tag = patch_tag(subject_of(m))
		if tag:
			idx.append(tag[1])
			total = max(total, tag[2])
	return sorted(idx) == list(range(1, total + 1)) and total > 0, sorted(idx), total


def take_version(mbox: str, mails, out: str) -> Dict:
	"""b4 am on the thread: the newest complete version; its info."""
	versions = sorted({t[0] for t in (patch_tag(subject_of(m)) for m in mails) if t},
			  reverse=True)
	if not versions:
		raise Error(f'SERIES={mbox}: no [PATCH] mail in the thread')
	skipped = []
	for v in versions:
		rc, log = run_b4(mbox, out, v)
		mbx = os.path.join(out, 'series.mbx')
		if rc != 0 or not os.path.isfile(mbx):
			skipped.append(f'v{v}: b4 am failed (exit {rc}): '
				       f'{log.strip().splitlines()[-1] if log.strip() else ""}')
			continue
		ok, idx, total = complete(read_mails(mbx))
		if not ok:
			skipped.append(f'v{v}: incomplete, has {len(idx)} of {total} patches')
			continue
		return {'version': v, 'versions': versions, 'skipped': skipped, 'b4_log': log}
	raise Error(f'SERIES={mbox}: no complete version in the thread ({"; ".join(skipped)})')


def trailer_lines(text: str) -> List[str]:
	return re.findall(r'^((?:Reviewed|Acked|Tested|Reported|Suggested)-by: .*)$', text, re.M)


def base_lines(texts: List[str]) -> Tuple[str, List[str]]:
	"""(base-commit, prerequisite-patch-ids) named in @texts."""
	base, prereq = '', []
	for t in texts:
		m = re.search(r'^base-commit:\s*([0-9a-f]{7,40})\s*$', t, re.M)
		if m and not base:
			base = m.group(1)
		for p in re.findall(r'^prerequisite-patch-id:\s*([0-9a-f]{40})\s*$', t, re.M):
			if p not in prereq:
				prereq.append(p)
	return base, prereq


def msgid(msg) -> str:
	return str(msg.get('message-id', '')).strip().strip('<>').strip()


def prepare(mbox: str) -> Tuple[str, Dict]:
	"""The mbox of patches to apply for SERIES=@mbox and what we know of
	it (cached by content in build/thread/<hash>/info.json): kind
	(thread / mbox), version, message_id (the cover letter's, else the
	first patch's), subject, base_commit, prerequisite_patch_ids,
	trailers added, versions skipped."""
	with open(mbox, 'rb') as f:
		digest = hashlib.sha256(f.read()).hexdigest()[:16]
	out = os.path.join(THREAD_DIR, digest)
	ipath = os.path.join(out, 'info.json')
	if os.path.isfile(ipath):
		with open(ipath) as f:
			meta = json.load(f)
		return meta['mbox'], meta
	mails = read_mails(mbox)
	if not mails:
		raise Error(f'SERIES={mbox}: no mail in it (an mbox of patch mails, or a thread)')
	if is_thread(mails):
		shutil.rmtree(THREAD_DIR, ignore_errors=True)
		meta = take_version(mbox, mails, out)
		patches_mbox = os.path.join(out, 'series.mbx')
		pmails = read_mails(patches_mbox)
		cover_path = os.path.join(out, 'series.cover')
		cover = None
		if os.path.isfile(cover_path):
			with open(cover_path, 'rb') as f:
				raw = f.read()
			if raw.startswith(b'From '):
				raw = raw.split(b'\n', 1)[1]
			cover = email.message_from_bytes(raw, policy=email.policy.default)
		meta['kind'] = 'thread'
	else:
		meta = {'version': (patch_tag(subject_of(mails[0])) or (1,))[0], 'versions': [],
			'skipped': [], 'b4_log': ''}
		patches_mbox = mbox
		pmails = [m for m in mails if has_diff(body_text(m))]
		covers = [m for m in mails if not has_diff(body_text(m))]
		cover = covers[0] if covers else None
		meta['kind'] = 'mbox'
	texts = [body_text(cover)] if cover is not None else []
	texts += [body_text(m) for m in pmails]
	base, prereq = base_lines(texts)
	first = cover if cover is not None else (pmails[0] if pmails else None)
	meta.update(mbox=patches_mbox, source=mbox, base_commit=base,
		    prerequisite_patch_ids=prereq,
		    message_id=msgid(first) if first is not None else '',
		    subject=subject_of(first) if first is not None else '',
		    patches=[{'subject': subject_of(m), 'message_id': msgid(m),
			      'trailers': trailer_lines(body_text(m))} for m in pmails])
	os.makedirs(out, exist_ok=True)
	with open(ipath, 'w') as f:
		json.dump(meta, f, indent=1)
	if meta['kind'] == 'thread':
		info(f'SERIES: a thread: took v{meta["version"]} of '
		     f'{", ".join("v" + str(v) for v in meta["versions"])} with b4 am '
		     f'({len(pmails)} patches, {sum(len(p["trailers"]) for p in meta["patches"])} '
		     f'trailers from the replies) -> {rel(patches_mbox)}')
		for s in meta['skipped']:
			info(f'SERIES: passed over {s}')
	return patches_mbox, meta


def series_info() -> Optional[Dict]:
	"""prepare()'s info of SERIES=, None without SERIES=."""
	from . import tree
	mbox = tree.series_mbox()
	return prepare(mbox)[1] if mbox else None


# ------------------------------------------------------------- the base

def our_patch_ids() -> Dict[str, str]:
	"""patch-id -> patches/<file> of patches/series."""
	from . import tree
	from .repro import patch_id
	out = {}
	for p in tree.read_series():
		path = tree.patch_file(p)
		if os.path.isfile(path):
			pid = patch_id(path)
			if pid:
				out[pid] = 'patches/' + p
	return out


def describe_base(gd: str, base: str) -> Dict[str, str]:
	"""What our base is: commit, KDIR HEAD (git KDIR), the source."""
	from . import tree
	d = {'commit': base}
	r = tree.git(['rev-parse', '--verify', '-q', 'refs/kdir/head'], gd, capture=True,
		     check=False)
	if r.returncode == 0 and os.environ.get('KDIR'):
		d['kdir_head'] = r.stdout.strip()
		d['source'] = f'KDIR={os.environ["KDIR"]} (HEAD {d["kdir_head"][:12]})'
	elif os.environ.get('KDIR'):
		d['source'] = f'KDIR={os.environ["KDIR"]} (not git: imported as one commit)'
	elif os.environ.get('LINUX_TARBALL'):
		d['source'] = f'LINUX_TARBALL={os.environ["LINUX_TARBALL"]} (imported as one commit)'
	else:
		d['source'] = "Debian's linux-source-7.3 (imported as one commit)"
	return d


def check_base(gd: str, base: str, meta: Dict) -> Dict:
	"""Compare the series' base-commit / prerequisite-patch-id with our
	base; returns the verdict (also in summary.json and KCIDB).  Without
	SERIES_BASE=strict a mismatch is applied on our base and said;
	with it the run refuses (SeriesOutcome, exit 3)."""
	from . import tree
	key = (base, meta.get('source', ''), os.environ.get('SERIES_BASE', ''))
	if key in _CHECKED:
		return _CHECKED[key]
	ours = describe_base(gd, base)
	want = meta.get('base_commit', '')
	res = {'requested': want, 'used': base, 'used_source': ours['source'], 'match': None,
	       'prerequisites': [], 'notes': []}
	if want:
		cands = [base, ours.get('kdir_head', '')]
		res['match'] = any(c and c.startswith(want) for c in cands)
		if res['match']:
			info(f'SERIES: base-commit {want[:12]} named by the series is our base '
			     f'({ours["source"]})')
		else:
			r = tree.git(['rev-parse', '--verify', '-q', want + '^{commit}'], gd,
				     capture=True, check=False)
			known = r.returncode == 0
			res['notes'].append(
				f'base-commit {want[:12]} named by the series is not our base'
				+ (' (it is in our history, not at its HEAD)' if known else
				   ' (not in our tree)') +
				f'; applied on {ours["source"]} = {base[:12]} instead')
	else:
		res['notes'].append(f'the series names no base-commit; applied on {ours["source"]}')
	if meta.get('prerequisite_patch_ids'):
		mine = our_patch_ids()
		for p in meta['prerequisite_patch_ids']:
			res['prerequisites'].append({'patch_id': p, 'ours': mine.get(p, '')})
			res['notes'].append(
				f'prerequisite-patch-id {p[:12]}: ' +
				(f'{mine[p]} of ours, not applied (the series is applied on the bare '
				 'base)' if p in mine else 'a patch we do not have, not applied'))
	strict = os.environ.get('SERIES_BASE', '').strip() == 'strict'
	bad = (want and not res['match']) or meta.get('prerequisite_patch_ids')
	for n in res['notes']:
		info(f'SERIES: {n}')
	if strict and bad:
		raise SeriesOutcome('wrong-base', 'SERIES_BASE=strict: refusing: ' +
				    '; '.join(res['notes']))
	res['strict'] = strict
	_CHECKED[key] = res
	_CHECKED['last'] = res
	return res


def stage_record() -> Optional[Dict]:
	"""What summary.json and KCIDB say of SERIES= for a stage: kind,
	version, message-id, subject, the base check; None without SERIES=."""
	meta = series_info()
	if meta is None:
		return None
	keep = ('kind', 'source', 'version', 'versions', 'skipped', 'message_id', 'subject',
		'base_commit', 'prerequisite_patch_ids')
	rec = {k: meta.get(k) for k in keep}
	rec['trailers'] = {p['subject']: p['trailers'] for p in meta.get('patches', [])
			   if p.get('trailers')}
	rec['base'] = _CHECKED.get('last')
	return rec


_CHECKED: Dict[tuple, Dict] = {}	# check_base() once per base and series


class SeriesOutcome(Error):
	"""The series could not be put on our base: it does not apply
	(does-not-apply: the patch and the files), or SERIES_BASE=strict and
	it names another base (wrong-base).  Exit 3, not 2: nothing broke,
	the series is what it is."""
	exit_code = EXIT_SERIES

	def __init__(self, outcome: str, msg: str, patch: str = '', files=None):
		super().__init__(msg)
		self.outcome = outcome
		self.patch = patch
		self.files = files or []


def failed_files(apply_output: str) -> List[str]:
	"""The files (file:line when known) git apply could not patch."""
	out = []
	for line in apply_output.splitlines():
		m = re.match(r'^error: patch failed: (\S+):(\d+)', line)
		if m:
			out.append(f'{m.group(1)}:{m.group(2)}')
			continue
		m = re.match(r'^error: (\S+): (does not exist in index|No such file or directory|'
			     r'already exists in (index|working directory)|patch does not apply)', line)
		if m and not any(o.split(':')[0] == m.group(1) for o in out):
			out.append(m.group(1))
	return out
