# SPDX-License-Identifier: GPL-2.0
"""The cases a stage should run, read from the suites' sources, so that a
case that did not run is reported missing instead of silently absent.

From mm/tests: the Makefile says which CONFIG_ option builds which file,
the kunitconfigs of the stage which of those options are on; in each built
file the kunit_suite structs give the suite names (.name = "...") and their
case tables (.test_cases = ...), the tables (static struct kunit_case
NAME[] = { KUNIT_CASE*(...), ... }) the cases.  A table entry may also be a
macro that #defines to a KUNIT_CASE*().

Conservative on purpose: a case or a table inside any #if/#ifdef/#else
block is optional (it may not be compiled in this configuration), and so is
a suite defined inside one; a required suite must still run at least one
case.  One exception: a table defined in each branch of an #if/#else (the
same name twice or more, an #else between them) is always compiled in one
form, so a case every definition lists is required.  KUNIT_CASE_SLOW cases (and *_ATTR ones with KUNIT_SPEED_SLOW, and
the cases of a suite whose .attr says slow) are expected only when the
stage runs slow cases; a stage's filter glob (suite[.case], comma list)
keeps only what it names."""

import fnmatch
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

MISSING = 'missing: did not run'


@dataclass
class Case:
	suite: str
	name: str
	optional: bool = False		# under #if: may not be compiled in
	slow: bool = False
	where: str = ''			# file:line


@dataclass
class Suite:
	name: str
	var: str
	table: str
	optional: bool = False
	slow: bool = False
	where: str = ''
	cases: List[Case] = field(default_factory=list)


def strip_comments(text: str) -> str:
	"""C comments and string-free line comments blanked, newlines kept (so
	line numbers stay); string literals are left as they are."""
	out = []
	i, n = 0, len(text)
	while i < n:
		c = text[i]
		if c == '"':
			j = i + 1
			while j < n and text[j] != '"':
				j += 2 if text[j] == '\\' else 1
			out.append(text[i:j + 1])
			i = j + 1
		elif text.startswith('/*', i):
			j = text.find('*/', i + 2)
			j = n if j < 0 else j + 2
			out.append(re.sub(r'[^\n]', ' ', text[i:j]))
			i = j
		elif text.startswith('//', i):
			j = text.find('\n', i)
			j = n if j < 0 else j
			out.append(' ' * (j - i))
			i = j
		else:
			out.append(c)
			i += 1
	return ''.join(out)


def conditional_depth(text: str) -> List[int]:
	"""For each line (0-based) the depth of #if nesting it is in; #else and
	#elif keep the depth (their lines are as conditional as the #if's)."""
	depth, out = 0, []
	for line in text.split('\n'):
		m = re.match(r'\s*#\s*(if|ifdef|ifndef|endif)\b', line)
		if m and m.group(1) == 'endif':
			depth = max(0, depth - 1)
			out.append(depth)
			continue
		out.append(depth)
		if m:
			depth += 1
	return out


def join_continuations(text: str) -> str:
	"""Backslash-newline continuations joined; as many newlines as were
	joined follow the joined line, so line numbers stay right."""
	out, pending = [], 0
	for line in text.split('\n'):
		if line.endswith('\\'):
			out.append(line[:-1] + ' ')
			pending += 1
			continue
		out.append(line + '\n' * (pending + 1))
		pending = 0
	return ''.join(out)[:-1]


def case_macro(entry: str) -> Optional[Tuple[str, bool]]:
	"""(case name, slow) of one KUNIT_CASE*() table entry, or None."""
	m = re.match(r'\s*(KUNIT_CASE(?:_[A-Z_]+)?)\s*\(\s*([A-Za-z_]\w*)', entry)
	if not m:
		return None
	slow = m.group(1) == 'KUNIT_CASE_SLOW' or ('KUNIT_SPEED_SLOW' in entry and
						   m.group(1).endswith('_ATTR'))
	return m.group(2), slow


def split_entries(body: str) -> List[Tuple[int, str]]:
	"""Top-level comma-separated entries of an initializer body, each with
	its offset in @body."""
	out, depth, start = [], 0, 0
	for i, c in enumerate(body):
		if c in '({[':
			depth += 1
		elif c in ')}]':
			depth -= 1
		elif c == ',' and depth == 0:
			out.append((start, body[start:i]))
			start = i + 1
	out.append((start, body[start:]))
	return [(o, e) for o, e in out if e.strip()]


def matching_brace(text: str, i: int) -> int:
	"""Index of the } closing the { at @i."""
	depth = 0
	for j in range(i, len(text)):
		if text[j] == '{':
			depth += 1
		elif text[j] == '}':
			depth -= 1
			if depth == 0:
				return j
	return len(text)


def parse_source(path: str, text: Optional[str] = None) -> List[Suite]:
	"""The suites of one C file with their cases."""
	if text is None:
		with open(path, errors='replace') as f:
			text = f.read()
	text = join_continuations(strip_comments(text))
	depth = conditional_depth(text)
	base = os.path.basename(path)

	def line_of(pos: int) -> int:
		return text.count('\n', 0, pos)

	def cond(pos: int) -> bool:
		return depth[line_of(pos)] > 0

	macros: Dict[str, Tuple[str, bool]] = {}
	for m in re.finditer(r'^[ \t]*#\s*define\s+([A-Za-z_]\w*)[ \t]+(KUNIT_CASE[^\n]*)',
			     text, re.M):
		c = case_macro(m.group(2))
		if c:
			macros[m.group(1)] = c
	# each definition of a table: (its position, its cases); a case under
	# an #if inside the definition is optional in it
	defs: Dict[str, List[Tuple[int, List[Case]]]] = {}
	for m in re.finditer(r'\bstruct\s+kunit_case\s+([A-Za-z_]\w*)\s*\[\s*\]\s*=\s*\{', text):
		start = m.end() - 1
		body = text[start + 1:matching_brace(text, start)]
		d0 = depth[line_of(m.start())]
		cases = []
		for off, entry in split_entries(body):
			# an #if/#else/#endif line between entries goes with the next
			lines = entry.split('\n')
			while lines and re.match(r'\s*(#|$)', lines[0]):
				off += len(lines.pop(0)) + 1
			entry = '\n'.join(lines)
			pos = start + 1 + off + (len(entry) - len(entry.lstrip()))
			e = re.sub(r'\n\s*#.*', '', entry).strip()
			c = case_macro(e) or macros.get(e)
			if not c:
				continue	# {} terminator, or something we cannot read
			cases.append(Case(suite='', name=c[0], slow=c[1],
					  optional=depth[line_of(pos)] > d0,
					  where=f'{base}:{line_of(pos) + 1}'))
		defs.setdefault(m.group(1), []).append((m.start(), cases))
	tables: Dict[str, List[Case]] = {}
	for name, dl in defs.items():
		if len(dl) == 1:
			# one definition: under an #if it may not be compiled at all
			pos, cases = dl[0]
			for c in cases:
				c.optional = c.optional or cond(pos)
			tables[name] = cases
			continue
		# the table in the branches of an #if/#else: one of them is always
		# compiled, so a case every branch has (unconditionally) is required
		between = text[dl[0][0]:dl[-1][0]]
		has_else = bool(re.search(r'^\s*#\s*else\b', between, re.M))
		always = set.intersection(*[{c.name for c in cases if not c.optional}
					    for _, cases in dl]) if has_else else set()
		merged = []
		for _, cases in dl:
			for c in cases:
				c.optional = c.name not in always
				merged.append(c)
		tables[name] = merged
	suites: List[Suite] = []
	for m in re.finditer(r'\bstruct\s+kunit_suite\s+([A-Za-z_]\w*)\s*=\s*\{', text):
		start = m.end() - 1
		body = text[start + 1:matching_brace(text, start)]
		nm = re.search(r'\.name\s*=\s*"([^"]+)"', body)
		tc = re.search(r'\.test_cases\s*=\s*([A-Za-z_]\w*)', body)
		if not nm or not tc:
			continue
		attr = re.search(r'\.attr\s*=\s*\{[^}]*KUNIT_SPEED_SLOW', body)
		s = Suite(name=nm.group(1), var=m.group(1), table=tc.group(1),
			  optional=cond(m.start()), slow=bool(attr),
			  where=f'{base}:{line_of(m.start()) + 1}')
		# tables of one name in #if/#else branches: every branch's cases
		# (each optional, as the branches are under #if)
		seen: Set[str] = set()
		for c in tables.get(s.table, []):
			if c.name in seen:
				continue
			seen.add(c.name)
			s.cases.append(Case(suite=s.name, name=c.name, optional=c.optional,
					    slow=c.slow or s.slow, where=c.where))
		suites.append(s)
	# only registered suites run: kunit_test_suite(var) / kunit_test_suites(&a, &b)
	registered: Dict[str, bool] = {}
	for m in re.finditer(r'\bkunit_test_suites?\s*\(([^;]*)\)\s*;', text):
		for v in re.findall(r'[A-Za-z_]\w*', m.group(1)):
			registered[v] = registered.get(v, False) or not cond(m.start())
	out = []
	for s in suites:
		if s.var not in registered:
			continue
		if not registered[s.var]:
			s.optional = True
		out.append(s)
	return out


# ------------------------------------------------------------ the build

def read_kunitconfigs(paths: List[str]) -> Dict[str, str]:
	"""CONFIG_X -> value of the kunitconfigs (later ones win)."""
	out: Dict[str, str] = {}
	for p in paths:
		with open(p, errors='replace') as f:
			for line in f:
				m = re.match(r'\s*(CONFIG_\w+)=(\S+)', line)
				if m:
					out[m.group(1)] = m.group(2)
				m = re.match(r'\s*#\s*(CONFIG_\w+) is not set', line)
				if m:
					out[m.group(1)] = 'n'
	return out


def built_files(tests_dir: str, config: Dict[str, str]) -> List[str]:
	"""The .c files of @tests_dir its Makefile builds under @config."""
	mk = os.path.join(tests_dir, 'Makefile')
	out = []
	with open(mk, errors='replace') as f:
		text = join_continuations(f.read())
		for line in text.splitlines():
			m = re.match(r'\s*obj-(\$\((CONFIG_\w+)\)|y|m)\s*\+?=\s*(.*)', line)
			if not m:
				continue
			if m.group(2) and config.get(m.group(2), 'n') not in ('y', 'm'):
				continue
			for obj in m.group(3).split():
				c = os.path.join(tests_dir, obj[:-2] + '.c') if obj.endswith('.o') else ''
				if c and os.path.isfile(c):
					out.append(c)
	return out


def glob_keeps(glob: str, suite: str, case: str) -> bool:
	"""Whether kunit's filter glob (suite[.case], comma-separated) keeps it."""
	if not glob:
		return True
	for g in glob.split(','):
		g = g.strip()
		if not g:
			continue
		sg, _, cg = g.partition('.')
		if fnmatch.fnmatchcase(suite, sg) and (not cg or fnmatch.fnmatchcase(case, cg)):
			return True
	return False


def expected_suites(tests_dir: str, kunitconfigs: List[str], filter_glob: str = '',
		    with_slow=False) -> List[Suite]:
	"""The suites (with the cases) a stage should run.  @with_slow: False
	(speed>slow), True (all) or 'only' (speed=slow)."""
	config = read_kunitconfigs(kunitconfigs)
	out = []
	for path in built_files(tests_dir, config):
		for s in parse_source(path):
			keep = []
			for c in s.cases:
				if with_slow == 'only' and not c.slow:
					continue
				if not with_slow and c.slow:
					continue
				if not glob_keeps(filter_glob, s.name, c.name):
					continue
				keep.append(c)
			if keep:
				s.cases = keep
				out.append(s)
	return out


def ran(results: Dict[str, str], suite: str, case: str = '') -> bool:
	key = f'{suite}.{case}' if case else suite
	return any(r == key or r.startswith(key + '.') for r in results)


def missing_cases(suites: List[Suite], results: Dict[str, str]) -> List[dict]:
	"""A failed case per expected case that did not run, and per required
	suite that ran no case at all."""
	from .judge import case
	out = []
	for s in suites:
		if s.optional and not ran(results, s.name):
			continue
		if not ran(results, s.name):
			out.append(case(s.name, 'NOT RUN', 'fail',
					f'{MISSING}: suite {s.name} ({s.where}) ran no case'))
		for c in s.cases:
			if c.optional or ran(results, s.name, c.name):
				continue
			if not ran(results, s.name):
				continue	# the suite's line above says it
			out.append(case(f'{s.name}.{c.name}', 'NOT RUN', 'fail',
					f'{MISSING} (KUNIT_CASE at {c.where})'))
	return out


def describe(suites: List[Suite]) -> str:
	req = sum(1 for s in suites for c in s.cases if not c.optional and not s.optional)
	opt = sum(1 for s in suites for c in s.cases) - req
	return (f'{len(suites)} suite(s), {req} case(s) expected, {opt} optional '
		'(under #if)')
