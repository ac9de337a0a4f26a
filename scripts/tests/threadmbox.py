# SPDX-License-Identifier: GPL-2.0
"""Lore-like thread mboxes for the host tests of SERIES= as a thread:
a cover letter per version, the patches as replies to it, replies that
quote a diff and carry a trailer, two (or more) versions."""

import email.utils
import re
from typing import List, Optional, Tuple

Patch = Tuple[str, str, str]		# (subject without [PATCH], From:, body)


def read_patch(path: str) -> Patch:
	"""A git format-patch file as (subject, from, body)."""
	with open(path) as f:
		text = f.read()
	head, body = text.split('\n\n', 1)
	subj = re.search(r'^Subject: (.*(?:\n[ \t].*)*)', head, re.M).group(1)
	subj = re.sub(r'^\[PATCH[^]]*\]\s*', '', ' '.join(subj.split()))
	frm = re.search(r'^From: (.*)$', head, re.M).group(1)
	return subj, frm, body


def mail(mid: str, subject: str, frm: str, body: str, irt: Optional[str] = None,
	 minute: int = 0) -> str:
	date = email.utils.formatdate(1764000000 + minute * 60)
	head = (f'From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: {frm}\nDate: {date}\n'
		f'Subject: {subject}\nMessage-Id: <{mid}>\n')
	if irt:
		head += f'In-Reply-To: <{irt}>\nReferences: <{irt}>\n'
	head += 'MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n'
	# mboxrd: a body line starting with "From " (or >From ) gets one more >
	body = re.sub(r'^(>*From )', r'>\1', body.rstrip('\n'), flags=re.M)
	return head + body + '\n\n'


REVIEWER = 'Rev Iewer <rev@example.org>'
TESTER = 'Tes Ter <tes@example.org>'


def version(patches: List[Patch], v: int, minute: int, base: str = '',
	    prereq: Optional[List[str]] = None, only: Optional[List[int]] = None,
	    review: bool = True) -> str:
	"""Version @v: a cover letter (with base-commit: / prerequisite-patch-id:
	lines), its patches (only the indexes @only when given), a reply to
	patch 1 quoting its diff with a Reviewed-by, and a reply to the cover
	letter with a Tested-by (for every patch)."""
	tag = 'PATCH' if v == 1 else f'PATCH v{v}'
	n = len(patches)
	cover = f'v{v}-0@example.org'
	tail = ''
	if base:
		tail += f'base-commit: {base}\n'
	for p in prereq or []:
		tail += f'prerequisite-patch-id: {p}\n'
	out = mail(cover, f'[{tag} 0/{n}] the series, version {v}', patches[0][1],
		   f'What the series does (v{v}).\n\n---\n' + tail, minute=minute)
	for i, (subj, frm, body) in enumerate(patches, 1):
		if only is None or i in only:
			out += mail(f'v{v}-{i}@example.org', f'[{tag} {i}/{n}] {subj}', frm, body,
				    irt=cover, minute=minute + i)
	if review:
		subj, frm, body = patches[0]
		quoted = '\n'.join('> ' + l for l in body.splitlines()[:60])
		out += mail(f'v{v}-r1@example.org', f'Re: [{tag} 1/{n}] {subj}', REVIEWER,
			    f'On a day, {frm} wrote:\n{quoted}\n\nLooks right to me.\n\n'
			    f'Reviewed-by: {REVIEWER}\n', irt=f'v{v}-1@example.org',
			    minute=minute + 50)
		out += mail(f'v{v}-r0@example.org', f'Re: [{tag} 0/{n}] the series, version {v}',
			    TESTER, f'Ran it.\n\nTested-by: {TESTER}\n', irt=cover,
			    minute=minute + 60)
	return out


def thread(v1: List[Patch], v2: List[Patch], base: str = '',
	   prereq: Optional[List[str]] = None, v3_only: Optional[List[int]] = None) -> str:
	"""v1, then v2 (the newest complete version, with @base / @prereq);
	with @v3_only an incomplete v3 of just those patches of v2."""
	out = version(v1, 1, 0) + version(v2, 2, 100, base, prereq)
	if v3_only:
		out += version(v2, 3, 200, base, prereq, only=v3_only, review=False)
	return out
