# SPDX-License-Identifier: GPL-2.0
"""make mutate: patch-scoped mutation testing.

For the lines each patch of the series added or changed, as they stand in
the assembled tree after the whole series (git blame of build/tree, which
has one commit per patch), generate mutants with a fixed set of operators,
build each one incrementally in the series build directory, boot the
functional suites (and, for code the race suites exercise, the race
suites), and report per patch which mutants the suites kill.  See
docs/mutate.rst.

A mutant is one edit of one file of build/tree (a few lines at most), named
"PATCH:FILE:LINE:OPERATOR#N".  The tree is restored after each mutant, on
^C and SIGTERM too; a run killed harder leaves build/mutate/applied.json,
and the next make mutate restores the file it names first."""

import difflib
import fnmatch
import hashlib
import json
import os
import random
import re
import signal
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from . import judge, kernel, multiboot, proc, schemata, shard, stages, tce, tree
from .common import (BUILD, GIT_ID, REPO, Error, default_jobs, env_number, info, rel, sh)

MUTATE_DIR = os.path.join(BUILD, 'mutate')
JOURNAL = os.path.join(MUTATE_DIR, 'applied.json')
EQUIVALENT = os.path.join(REPO, 'patches', 'mutants-equivalent')
FORMAT = 1

# What is mutated: C sources and headers under these directories; never
# our suites (the overlay), never Kconfig, Makefiles or documentation.
SCOPE_DIRS = ('mm/', 'fs/', 'include/')
EXCLUDED_DIRS = ('mm/tests/',)

# Patch groups whose code the race suites (lockless_read_race,
# shmem_read_race, lazyfree_thp_race) exercise, and within them the files;
# a surviving mutant there gets a boot of the race suites as well.  For the
# mails of SERIES= (no groups) the files alone decide.
RACE_GROUPS = ('lazyfree-thp', 'rcu-free', 'shmem-batch')
RACE_FILES = ('mm/filemap.c', 'mm/shmem.c', 'mm/page_alloc.c', 'mm/swap.c', 'mm/truncate.c',
	      'mm/migrate.c', 'mm/huge_memory.c', 'mm/rmap.c', 'mm/internal.h',
	      'include/linux/pagemap.h', 'include/linux/page-flags.h', 'include/linux/mm.h')

STATUSES = ('killed', 'survived', 'not reached', 'stillborn', 'equivalent', 'not run')
# A mutant no case runs (MODE=schemata: no switch of it ran in the baseline)
# counts as a survivor in the score and the exit code, listed apart.
UNKILLED = ('survived', 'not reached')
MODES = ('each', 'schemata')
# Reads each lockless_read_race case checks in a mutant's race boot (and
# the baseline's): a tenth of make test's RACE_READS, so that a survivor's
# race boot costs seconds rather than minutes (docs/mutate.rst, "Time")
RACE_READS = 25000
# make test's budgets of the race cases (lockless_read_race.h RACE_READS,
# shmem_read_race_kunit.c RACE_ROUNDS): the truncation rounds of
# shmem_read_race get the same share as the reads
SUITE_RACE_READS = 250000
SUITE_RACE_ROUNDS = 2000


def in_scope(path: str) -> bool:
	return (path.endswith(('.c', '.h')) and path.startswith(SCOPE_DIRS) and
		not path.startswith(EXCLUDED_DIRS))


# ------------------------------------------------------------ patches

_HUNK = re.compile(r'^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@')


def added_lines(text: str) -> Dict[str, Dict[int, str]]:
	"""The lines a patch adds, per file it changes (b/ path): {path:
	{line number in the patched file (1-based): text}}.  A removed line
	adds nothing; a changed line is a removed one plus an added one."""
	out: Dict[str, Dict[int, str]] = {}
	cur = ''
	new = left_old = left_new = 0
	for line in text.split('\n'):
		if left_old > 0 or left_new > 0:
			tag = line[:1]
			if tag == '+':
				out.setdefault(cur, {})[new] = line[1:]
				new += 1
				left_new -= 1
				continue
			if tag == '-':
				left_old -= 1
				continue
			if tag in (' ', ''):
				new += 1
				left_old -= 1
				left_new -= 1
				continue
			if tag == '\\':
				continue
			left_old = left_new = 0
		m = re.match(r'^diff --git a/\S+ b/(\S+)', line)
		if m:
			cur = m.group(1)
			continue
		if line.startswith('+++ '):
			p = line[4:].split('\t')[0]
			cur = p[2:] if p.startswith('b/') else cur
			continue
		m = _HUNK.match(line)
		if m and cur:
			new = int(m.group(1))
			left_new = int(m.group(2) or 1)
			hm = re.match(r'^@@ -\d+(?:,(\d+))?', line)
			left_old = int(hm.group(1) or 1) if hm else 0
	return out


def patch_id(patch: str) -> str:
	"""Short name of a patch in mutant names: group/NNNN for
	patches/series, NNNN for a mail of SERIES=."""
	if os.path.isabs(patch):
		return os.path.basename(patch).split('-', 1)[0]
	m = re.match(r'^([^/]+)/(\d{4})', patch)
	return f'{m.group(1)}/{m.group(2)}' if m else patch


# ------------------------------------------------------------ C scanning

def code_only(lines: List[str]) -> List[str]:
	"""@lines with comments blanked and the insides of string and char
	literals replaced by '_', column for column, so that operators are
	looked for in code only and edit the original text at the same place."""
	out = []
	in_comment = False
	for line in lines:
		chars = list(line)
		i, n = 0, len(chars)
		quote = ''
		while i < n:
			c = chars[i]
			if in_comment:
				if line.startswith('*/', i):
					chars[i] = chars[i + 1] = ' '
					in_comment = False
					i += 2
					continue
				chars[i] = ' '
			elif quote:
				if c == '\\' and i + 1 < n:
					chars[i] = chars[i + 1] = '_'
					i += 2
					continue
				if c == quote:
					quote = ''
				else:
					chars[i] = '_'
			elif line.startswith('/*', i):
				chars[i] = chars[i + 1] = ' '
				in_comment = True
				i += 2
				continue
			elif line.startswith('//', i):
				for j in range(i, n):
					chars[j] = ' '
				break
			elif c in '"\'':
				quote = c
			i += 1
		out.append(''.join(chars))
	return out


def match_paren(code: List[str], li: int, ci: int) -> Optional[Tuple[int, int]]:
	"""(line, column) of the bracket closing the one at @code[li][ci]."""
	opening = code[li][ci]
	closing = {'(': ')', '[': ']', '{': '}'}[opening]
	depth = 0
	for l in range(li, min(len(code), li + 40)):
		start = ci if l == li else 0
		for c in range(start, len(code[l])):
			ch = code[l][c]
			if ch == opening:
				depth += 1
			elif ch == closing:
				depth -= 1
				if depth == 0:
					return l, c
	return None


# What comes before the '{' of a body at depth 0 that is not a function's:
# an enum, struct or union definition, or an initialiser.
NOT_FUNC_BODY_RE = re.compile(r'(\b(enum|struct|union)\b[\w\s]*|=\s*)$')


def functions(code: List[str]) -> List[Tuple[int, int]]:
	"""(first, last) line of each function body: a '{' at depth 0 to its
	'}'.  The bodies of enum, struct and union definitions and of
	initialisers are not functions: a statement mutant there (an early
	return among an enum's constants) cannot compile, and in one switched
	kernel it would break the build of every mutant."""
	out = []
	depth = 0
	start = -1
	for l, line in enumerate(code):
		if line.lstrip().startswith('#'):
			continue
		for i, ch in enumerate(line):
			if ch == '{':
				if depth == 0:
					prev = code[l - 1].strip() if l and not line[:i].strip() else ''
					head = (prev + ' ' + line[:i]).strip()
					start = -1 if NOT_FUNC_BODY_RE.search(head) else l
				depth += 1
			elif ch == '}':
				depth -= 1
				if depth == 0 and start >= 0:
					out.append((start, l))
				if depth <= 0:
					start = -1
				depth = max(depth, 0)
	return out


def return_type(code: List[str], body_start: int) -> str:
	"""The text of a function header before its name's '(' (the return
	type and specifiers), from the lines above its '{'."""
	head = []
	for l in range(body_start, max(-1, body_start - 8), -1):
		text = code[l] if l != body_start else code[l].split('{', 1)[0]
		if l != body_start and (text.rstrip().endswith((';', '}')) or not text.strip()):
			break
		head.insert(0, text)
	joined = ' '.join(h.strip() for h in head)
	m = re.match(r'^(.*?)\b[A-Za-z_]\w*\s*\(', joined)
	return m.group(1) if m else joined


KEYWORDS = {'if', 'while', 'for', 'switch', 'return', 'sizeof', 'else', 'do', 'case',
	    'goto', 'break', 'continue', 'typeof', '__typeof__', 'default'}
# Calls whose deletion changes only diagnostics: not mutated.
DIAGNOSTIC_RE = re.compile(r'^((VM_)?(BUG|WARN)_ON\w*|VM_WARN\w*|WARN\w*|BUILD_BUG\w*|'
			   r'lockdep_\w+|might_\w+|pr_\w+|printk\w*|trace_\w+|kunit_\w+|'
			   r'dump_\w+|__acquire|__release|static_assert)$')
# Macros that declare a variable: deleting one only breaks the build.
DECL_MACRO_RE = re.compile(r'^(LIST_HEAD|HLIST_HEAD|LLIST_HEAD|DEFINE_\w+|DECLARE_\w+|'
			   r'XA_STATE\w*|MA_STATE|VMA_ITERATOR|FOLIO_BATCH)$')
BARRIER_RE = re.compile(r'^(smp_\w+|barrier|mb|rmb|wmb|dma_\w*mb)$')
# A lock call and the name of the unlock that pairs with it.
UNLOCKS = {'spin_lock_irqsave': 'spin_unlock_irqrestore',
	   'raw_spin_lock_irqsave': 'raw_spin_unlock_irqrestore',
	   'xa_lock_irqsave': 'xa_unlock_irqrestore', 'xas_lock_irqsave': 'xas_unlock_irqrestore',
	   'read_lock_irqsave': 'read_unlock_irqrestore',
	   'write_lock_irqsave': 'write_unlock_irqrestore',
	   'local_irq_save': 'local_irq_restore', 'local_irq_disable': 'local_irq_enable',
	   'preempt_disable': 'preempt_enable', 'migrate_disable': 'migrate_enable',
	   'pagefault_disable': 'pagefault_enable', 'local_bh_disable': 'local_bh_enable',
	   'down_read': 'up_read', 'down_write': 'up_write', 'lock_page': 'unlock_page',
	   'rcu_read_lock': 'rcu_read_unlock', 'rcu_read_lock_bh': 'rcu_read_unlock_bh',
	   'rcu_read_lock_sched': 'rcu_read_unlock_sched'}


def unlock_of(name: str) -> str:
	"""The unlock paired with the lock call @name, '' if it is none."""
	if name in UNLOCKS:
		return UNLOCKS[name]
	if re.search(r'(^|_)lock(_\w+)?$', name) and 'unlock' not in name and 'trylock' not in name \
	   and not name.startswith(('is_', 'assert_')) and 'held' not in name:
		return re.sub(r'(^|_)lock((_\w+)?)$', r'\1unlock\2', name)
	return ''


def is_unlock(name: str) -> bool:
	return 'unlock' in name or name in UNLOCKS.values()


def split_args(args: str) -> List[str]:
	out, depth, cur = [], 0, ''
	for ch in args:
		if ch in '([{':
			depth += 1
		elif ch in ')]}':
			depth -= 1
		if ch == ',' and depth == 0:
			out.append(cur.strip())
			cur = ''
		else:
			cur += ch
	if cur.strip():
		out.append(cur.strip())
	return out


CALL_STMT = re.compile(r'^(\s*)([A-Za-z_]\w*)\s*\((.*)\)\s*;\s*$')
STMT_STARTERS = (';', '{', '}', ':')
DECL_RE = re.compile(r'^\s*(?!(return|goto|case|else|do)\b)(const\s+|static\s+|unsigned\s+|signed\s+|struct\s+|enum\s+|union\s+)*'
		     r'[A-Za-z_]\w*(\s+|\s*\*+\s*)\**[A-Za-z_]\w*\s*(\[.*\])?\s*(=|;)')
SHARED_RE = re.compile(r'->|^\s*\*|\b[A-Za-z_]\w*\s*\(')


def starts_statement(code: List[str], l: int) -> bool:
	"""The line @l starts a statement: the code line before it ends one."""
	for p in range(l - 1, -1, -1):
		s = code[p].strip()
		if s:
			return s.endswith(STMT_STARTERS) or s.startswith('#')
	return True


def simple_statement(code: List[str], l: int) -> bool:
	"""@l holds one whole statement: it starts one, ends with ';' and its
	brackets balance."""
	s = code[l].strip()
	if not s.endswith(';') or s.startswith(('#', 'case ', 'default')) or not starts_statement(code, l):
		return False
	return all(s.count(a) == s.count(b) for a, b in ('()', '[]', '{}'))


@dataclass
class Mutant:
	name: str
	patch: str		# patch as patches/series names it (or a mail's path)
	file: str
	line: int		# 1-based, in the file after the whole series
	operator: str
	edits: Dict[int, str]	# 0-based line -> new text
	races: bool = False
	alt: str = ''		# a variant: its patch (variants/NAME.patch)

	def apply(self, lines: List[str]) -> List[str]:
		out = list(lines)
		for l, text in self.edits.items():
			out[l] = text
		return out

	def diff(self, lines: List[str]) -> str:
		"""A unified diff of the mutant against @lines (the file)."""
		out = [f'--- a/{self.file}', f'+++ b/{self.file}']
		for l in sorted(self.edits):
			out.append(f'@@ -{l + 1} +{l + 1} @@')
			out.append('-' + lines[l])
			out.append('+' + self.edits[l])
		return '\n'.join(out)


def _span(lines: List[str], a: Tuple[int, int], b: Tuple[int, int], text: str) -> Dict[int, str]:
	"""Edits that replace lines[a..b) (line, column pairs) by @text: the
	first line gets it, the lines after up to b's are emptied."""
	(la, ca), (lb, cb) = a, b
	edits = {la: lines[la][:ca] + text + lines[lb][cb:]}
	for l in range(la + 1, lb + 1):
		edits[l] = ''
	return edits


def _text(lines: List[str], a: Tuple[int, int], b: Tuple[int, int]) -> str:
	(la, ca), (lb, cb) = a, b
	if la == lb:
		return lines[la][ca:cb]
	parts = [lines[la][ca:]] + lines[la + 1:lb] + [lines[lb][:cb]]
	return ' '.join(p.strip() for p in parts if p.strip())


def _top_level(code: str, ops: Tuple[str, ...]) -> List[Tuple[int, str]]:
	"""Positions of @ops at bracket depth 0 of @code."""
	out, depth, i = [], 0, 0
	while i < len(code):
		ch = code[i]
		if ch in '([{':
			depth += 1
		elif ch in ')]}':
			depth -= 1
		elif depth == 0:
			for op in ops:
				if code.startswith(op, i):
					out.append((i, op))
					i += len(op) - 1
					break
		i += 1
	return out


def _operand_end(code: str, i: int) -> int:
	"""End of the simple operand starting at @code[i] (an identifier or
	number with ->, ., calls and subscripts), or @i when there is none."""
	m = re.match(r'\s*', code[i:])
	j = i + m.end()
	m = re.match(r'[A-Za-z_0-9]\w*', code[j:])
	if not m:
		return i
	j += m.end()
	while j < len(code):
		m = re.match(r'\s*(->|\.)\s*[A-Za-z_]\w*', code[j:])
		if m:
			j += m.end()
			continue
		if code[j] in '([':
			depth = 0
			k = j
			while k < len(code):
				if code[k] in '([':
					depth += 1
				elif code[k] in ')]':
					depth -= 1
					if depth == 0:
						break
				k += 1
			if k >= len(code):
				return i
			j = k + 1
			continue
		break
	return j


REL_RE = re.compile(r'(?<![<>\-=!])(<=|>=|<|>)(?![<>=])')


def line_mutants(lines: List[str], code: List[str], l: int, funcs: List[Tuple[int, int]],
		 in_macro: bool, first_of_block: bool) -> List[Tuple[str, Dict[int, str]]]:
	"""(operator, edits) of every mutant of line @l (0-based)."""
	out: List[Tuple[str, Dict[int, str]]] = []
	src, c = lines[l], code[l]
	stripped = c.strip()
	if not stripped:
		return out
	if stripped.startswith('#') and not re.match(r'#\s*define\b', stripped):
		return out
	dm = re.match(r'\s*([A-Za-z_]\w*)\s*\(', c)
	if dm and DIAGNOSTIC_RE.match(dm.group(1)):
		return out	# a check that only debug kernels make, or a message
	func = next(((a, b) for a, b in funcs if a < l <= b), None)

	# conditions of if / while
	for m in re.finditer(r'\b(if|while)\s*\(', c):
		op = m.end() - 1
		close = match_paren(code, l, op)
		if not close:
			continue
		a, b = (l, op + 1), close
		cond = _text(lines, a, b)
		ccond = _text(code, a, b)
		if len(cond) != len(ccond):
			continue	# a comment inside: joined, it could swallow code
		out.append(('negate', _span(lines, a, b, f'!({cond})')))
		if m.group(1) == 'if':
			parts = _top_level(ccond, ('&&', '||'))
			if parts:
				bounds = [0] + [p + len(o) for p, o in parts]
				ends = [p for p, _ in parts] + [len(ccond)]
				for k in range(len(bounds)):
					if k == 0:
						rest = cond[bounds[1]:]
					else:
						rest = cond[:parts[k - 1][0]] + cond[ends[k]:]
					out.append(('drop-operand', _span(lines, a, b,
									   ' '.join(rest.split()))))
			else:
				out.append(('cond-true', _span(lines, a, b, '1')))
				out.append(('cond-false', _span(lines, a, b, '0')))

	# < <-> <=, > <-> >=, and the bound of each +- 1
	for m in REL_RE.finditer(c):
		op = m.group(1)
		if op in ('<', '>') and re.match(r'\s*#\s*include', c):
			continue
		swap = {'<': '<=', '<=': '<', '>': '>=', '>=': '>'}[op]
		name = {'<': 'lt-le', '<=': 'le-lt', '>': 'gt-ge', '>=': 'ge-gt'}[op]
		out.append((name, {l: src[:m.start()] + swap + src[m.end():]}))
		j = m.end()
		end = _operand_end(c, j)
		if end > j:
			k = j + (len(c[j:]) - len(c[j:].lstrip()))
			operand = src[k:end]
			for sign, oname in (('+', 'bound+1'), ('-', 'bound-1')):
				out.append((oname, {l: src[:k] + f'({operand} {sign} 1)' + src[end:]}))

	# && <-> ||
	for m in re.finditer(r'&&|\|\|', c):
		other = '||' if m.group() == '&&' else '&&'
		out.append(('and-or', {l: src[:m.start()] + other + src[m.end():]}))

	# READ_ONCE / WRITE_ONCE / smp_load_acquire / smp_store_release -> plain
	for m in re.finditer(r'\b(READ_ONCE|WRITE_ONCE|smp_load_acquire|smp_store_release)\s*\(', c):
		p = m.end() - 1
		close = match_paren(code, l, p)
		if not close or close[0] != l:
			continue
		args = split_args(src[p + 1:close[1]])
		macro = m.group(1)
		if macro == 'READ_ONCE' and len(args) == 1:
			new = f'({args[0]})'
		elif macro == 'smp_load_acquire' and len(args) == 1:
			new = f'(*({args[0]}))'
		elif macro == 'WRITE_ONCE' and len(args) == 2:
			new = f'({args[0]} = {args[1]})'
		elif macro == 'smp_store_release' and len(args) == 2:
			new = f'(*({args[0]}) = {args[1]})'
		else:
			continue
		out.append(('plain-access', {l: src[:m.start()] + new + src[close[1] + 1:]}))

	# a flag dropped from an a | B | C, an order one less
	for m in re.finditer(r'\b_*[A-Z][A-Z0-9_]{2,}\b', c):
		before, after = c[:m.start()].rstrip(), c[m.end():].lstrip()
		bar_before = before.endswith('|') and not before.endswith('||')
		bar_after = after.startswith('|') and not after.startswith('||')
		if bar_after and not after.startswith('|='):
			j = m.end() + (len(c[m.end():]) - len(after)) + 1
			j += len(c[j:]) - len(c[j:].lstrip())
			out.append(('drop-flag', {l: src[:m.start()] + src[j:]}))
		elif bar_before:
			i = len(before) - 1
			out.append(('drop-flag', {l: src[:i].rstrip() + src[m.end():]}))
		if re.search(r'ORDER$', m.group()):
			out.append(('order-1', {l: src[:m.start()] + f'({m.group()} - 1)' +
						src[m.end():]}))

	if in_macro or func is None or stripped.startswith('#'):
		return out

	# statements
	cm = CALL_STMT.match(c)
	if cm and cm.group(2) not in KEYWORDS and simple_statement(code, l):
		fname = cm.group(2)
		if BARRIER_RE.match(fname) and fname not in ('smp_store_release',):
			out.append(('del-barrier', {l: cm.group(1)}))
		elif unlock_of(fname):
			pair = lock_pair(code, l, fname, split_args(cm.group(3)), func)
			if pair:
				out.append(('del-lock-pair', {p: re.match(r'\s*', lines[p]).group()
							     for p in pair}))
		elif is_unlock(fname) or DIAGNOSTIC_RE.match(fname) or DECL_MACRO_RE.match(fname) or \
		     fname in ('WRITE_ONCE', 'smp_store_release'):
			pass
		else:
			out.append(('del-call', {l: cm.group(1)}))

	if first_of_block and starts_statement(code, l) and \
	   not re.match(r'\s*(\}|\{|else\b|case\b|default\b|[A-Za-z_]\w*\s*:(?!:))', c) and \
	   not DECL_RE.match(c) and l > func[0]:
		rt = return_type(code, func[0])
		ret = 'return;' if re.search(r'\bvoid\b', rt) and '*' not in rt else 'return 0;'
		ind = re.match(r'\s*', src).group()
		# not before a return of the same value: that mutant is the original
		same = SAME_RETURN.match(c)
		if not same or (ret == 'return;') != (same.group(1) is None):
			out.append(('early-return', {l: ind + ret + ' ' + src[len(ind):]}))
	return out


# A return of what the early return returns: nothing, or 0 by another name
SAME_RETURN = re.compile(r'\s*return\s*(?:(\(?\s*(?:0|false|NULL)\s*\)?))?\s*;\s*$')


def lock_pair(code: List[str], l: int, name: str, args: List[str],
	      func: Tuple[int, int]) -> List[int]:
	"""The lock call at @l and the unlock calls that release it in its
	function (up to the next lock of the same lock); [] when there is none:
	a lock is deleted with its unlocks or not at all."""
	unlock = unlock_of(name)
	key = ''.join(args[0].split()) if args else ''
	found = [l]
	for p in range(l + 1, func[1] + 1):
		m = CALL_STMT.match(code[p])
		if not m:
			continue
		pargs = split_args(m.group(3))
		pkey = ''.join(pargs[0].split()) if pargs else ''
		if m.group(2) == name and pkey == key:
			break
		if m.group(2) == unlock and pkey == key:
			found.append(p)
	return found if len(found) > 1 else []


def generate(patch: str, path: str, lines: List[str], mutable: Set[int]) -> List[Mutant]:
	"""The mutants of the lines @mutable (0-based) of @path, whose whole
	text after the series is @lines, in line and operator order."""
	code = code_only(lines)
	funcs = functions(code)
	in_macro = [False] * len(lines)
	cont = False
	for l, line in enumerate(code):
		s = line.strip()
		in_macro[l] = cont or bool(re.match(r'#\s*define\b', s))
		cont = in_macro[l] and lines[l].rstrip().endswith('\\')
	pid = patch_id(patch)
	out: List[Mutant] = []
	counter: Dict[Tuple[int, str], int] = {}
	starts = {a for a, _ in funcs}
	first = True
	for l in sorted(mutable):
		if l >= len(lines):
			continue
		# one early return per run of added lines: before its first statement
		prev = next((p for p in range(l - 1, -1, -1) if code[p].strip()), -1)
		if prev not in mutable or prev in starts:
			first = True
		found = line_mutants(lines, code, l, funcs, in_macro[l], first)
		if any(op == 'early-return' for op, _ in found):
			first = False
		# swap with the next line: both one whole statement touching shared state
		if l + 1 in mutable and l + 1 < len(lines) and not in_macro[l] and \
		   simple_statement(code, l) and simple_statement(code, l + 1) and \
		   any(a < l and l + 1 <= b for a, b in funcs):
			a, b = code[l], code[l + 1]
			plain = re.compile(r'^\s*(return|break|continue|goto)\b')
			diag = [(re.match(r'\s*(\w*)', x).group(1)) for x in (a, b)]
			if not any(d and DIAGNOSTIC_RE.match(d) for d in diag) and \
			   not plain.match(a) and not plain.match(b) and not DECL_RE.match(a) and \
			   not DECL_RE.match(b) and SHARED_RE.search(a) and SHARED_RE.search(b):
				found.append(('swap-next', {l: lines[l + 1], l + 1: lines[l]}))
		for op, edits in found:
			if all(edits.get(k) == lines[k] for k in edits):
				continue
			n = counter.get((l, op), 0) + 1
			counter[(l, op)] = n
			out.append(Mutant(name=f'{pid}:{path}:{l + 1}:{op}#{n}', patch=patch,
					  file=path, line=l + 1, operator=op, edits=edits))
	return out


# ------------------------------------------------------------ mapping to the tree

def tree_git(args: List[str], capture: bool = True, check: bool = True):
	return sh(['git'] + args, cwd=tree.TREE, env=dict(GIT_ID), capture=capture, check=check)


def patch_commits(patches: List[str]) -> List[str]:
	"""The commits of build/tree that git am made of @patches, in order."""
	_key, head = tree.read_keyfile(tree.TREE + '.key')
	head = head or 'HEAD'
	revs = tree_git(['rev-list', '--first-parent', f'-n{len(patches) + 1}', head]
			).stdout.split()[::-1]
	if len(revs) != len(patches) + 1:
		raise Error(f'{rel(tree.TREE)} has {len(revs)} commits, not the base '
			    f'+ {len(patches)} patches + the overlay')
	return revs[:-1]


def blame(path: str, base: str) -> List[str]:
	"""The commit of each line of @path in build/tree (base..HEAD)."""
	r = tree_git(['blame', '--porcelain', f'{base}..HEAD', '--', path])
	out: List[str] = []
	for line in r.stdout.split('\n'):
		m = re.match(r'^([0-9a-f]{40}) \d+ (\d+)', line)
		if m:
			n = int(m.group(2))
			while len(out) < n:
				out.append('')
			out[n - 1] = m.group(1)
	return out


def all_mutants(patches: List[str], selected: List[str]) -> Tuple[List[Mutant],
								   Dict[str, List[str]]]:
	"""The mutants of the @selected patches in generation order, and the
	text of each file they touch (as it is after the series)."""
	commits = patch_commits(patches)
	base = tree_git(['rev-parse', commits[0] + '^']).stdout.strip() if commits else 'HEAD'
	texts: Dict[str, List[str]] = {}
	blames: Dict[str, List[str]] = {}
	mutants: List[Mutant] = []
	for p, commit in zip(patches, commits):
		if p not in selected:
			continue
		with open(tree.patch_file(p), errors='replace') as f:
			files = sorted(f for f in added_lines(f.read()) if in_scope(f))
		for path in files:
			full = os.path.join(tree.TREE, path)
			if not os.path.isfile(full):
				continue	# a later patch removed it
			if path not in texts:
				with open(full, errors='replace') as f:
					texts[path] = f.read().split('\n')
				blames[path] = blame(path, base)
			mutable = {i for i, c in enumerate(blames[path]) if c == commit}
			for m in generate(p, path, texts[path], mutable):
				m.races = (tree.group_of(p) in RACE_GROUPS if not os.path.isabs(p)
					   else True) and path in RACE_FILES
				mutants.append(m)
	return mutants, texts


# ------------------------------------------------------------ variants

VARIANT_OP = 'variant'


def variant_edits(old: List[str], new: List[str], name: str) -> Dict[int, str]:
	"""Line edits (0-based line -> text) that turn @old into @new without
	moving a line, as a mutant's: a changed run of lines is written on its
	first line and the others are emptied; inserted lines go in front of
	the line after them.  Lines that cannot share a line with others (a
	preprocessor line, a // comment) make it an Error, but a line that
	replaces one line."""
	edits: Dict[int, str] = {}
	sm = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
	for tag, i1, i2, j1, j2 in sm.get_opcodes():
		if tag == 'equal':
			continue
		added = [x.strip() for x in new[j1:j2] if x.strip()]
		alone = tag == 'replace' and i2 - i1 == 1 and j2 - j1 == 1
		if not alone and any(x.startswith('#') or '//' in x for x in added):
			raise Error(f'variant {name}: a preprocessor line or a // comment among '
				    'several changed lines cannot be written on one line')
		if i1 == i2:
			if i1 >= len(old) or old[i1].lstrip().startswith('#'):
				raise Error(f'variant {name}: lines inserted before a preprocessor '
					    'line or at the end of a file')
			nxt = old[i1]
			ind = nxt[:len(nxt) - len(nxt.lstrip())]
			edits[i1] = ind + ' '.join(added + ([nxt.lstrip()] if nxt.strip() else []))
			continue
		ind = old[i1][:len(old[i1]) - len(old[i1].lstrip())]
		edits[i1] = ind + ' '.join(added) if added else ''
		for k in range(i1 + 1, i2):
			edits[k] = ''
	return edits


def all_variants(patches: List[str], selected: List[str], names: Optional[List[str]],
		 texts: Dict[str, List[str]]) -> List[Mutant]:
	"""The alternatives of patches/variants/ (docs/variants.rst) as
	mutants of operator 'variant', each owned by the patch that wrote the
	first line it changes: @names, or (None) every one whose owner is
	among the @selected patches.  @texts gets the files they touch."""
	if not tree.alternatives():
		return []
	commits = patch_commits(patches)
	base = tree_git(['rev-parse', commits[0] + '^']).stdout.strip() if commits else 'HEAD'
	owner_of = dict(zip(commits, patches))
	out: List[Mutant] = []
	for n in (names if names is not None else tree.alternatives()):
		alt = tree.alt_patch(n)
		path_ = tree.patch_file(alt)
		with open(path_, errors='replace') as f:
			try:
				after = schemata.patch_files(f.read(), tree.TREE)
			except Error as e:
				raise Error(f'variant {n}: {rel(path_)} does not apply to the series: '
					    f'{str(e).splitlines()[0]}') from None
		if len(after) != 1:
			raise Error(f'variant {n}: changes {len(after)} files; a variant is one '
				    'file\'s change')
		(path, new_text), = after.items()
		if path not in texts:
			with open(os.path.join(tree.TREE, path), errors='replace') as f:
				texts[path] = f.read().split('\n')
		edits = variant_edits(texts[path], new_text.split('\n'), n)
		if not edits:
			raise Error(f'variant {n}: changes nothing in the series\' {path}')
		first = min(edits)
		owner = owner_of.get((blame(path, base) + [''] * (first + 1))[first], '')
		if names is None and owner not in selected:
			continue
		out.append(Mutant(name=f'{VARIANT_OP}:{n}', patch=owner or alt, file=path,
				  line=first + 1, operator=VARIANT_OP, edits=edits,
				  races=path in RACE_FILES, alt=alt))
	return out


def run_order(mutants: List[Mutant], seed: str) -> List[Mutant]:
	"""The order mutants run in: patch by patch, a seeded shuffle of each
	patch's mutants, those of .c files before those of headers (a header
	rebuilds much more); a BUDGET that stops early has then sampled each
	patch it reached evenly."""
	out: List[Mutant] = []
	patches: List[str] = []
	for m in mutants:
		if m.patch not in patches:
			patches.append(m.patch)
	for p in patches:
		mine = [m for m in mutants if m.patch == p]
		rng = random.Random(f'{seed}:{patch_id(p)}')
		rng.shuffle(mine)
		out += sorted(mine, key=lambda m: m.file.endswith('.h'))
	return out


def parse_shard(spec: str) -> Tuple[int, int]:
	return shard.parse(spec)


def shard_of(mutants: List[Mutant], i: int, n: int) -> List[Mutant]:
	"""Shard i of n (1-based): every n-th mutant of the run order."""
	return [m for k, m in enumerate(mutants) if k % n == i - 1]


def select_patches(series: List[str], spec: str) -> List[str]:
	"""PATCH=: numbers (1-based in the series) or names (a patch path, its
	file name, group/NNNN, a group), comma-separated; empty = all."""
	if not spec.strip():
		return list(series)
	out: List[str] = []
	for s in (x.strip() for x in spec.split(',') if x.strip()):
		if s.isdigit():
			k = int(s)
			if not 1 <= k <= len(series):
				raise Error(f'PATCH={s}: the series has patches 1-{len(series)}')
			hits = [series[k - 1]]
		else:
			hits = [p for p in series if s in (p, tree.patch_name(p), patch_id(p),
							   tree.group_of(p)) or
				tree.patch_name(p).startswith(s) or
				os.path.basename(p).startswith(s)]
		if not hits:
			raise Error(f'PATCH={s}: no patch of the series matches (a number 1-'
				    f'{len(series)}, a file name, group/NNNN or a group)')
		out += [h for h in hits if h not in out]
	return [p for p in series if p in out]


# ------------------------------------------------------------ equivalents

def load_equivalent(path: str = '') -> Dict[str, str]:
	"""patches/mutants-equivalent: mutant name -> the reason it changes
	no behaviour ('#' comments; a name without a reason is refused)."""
	path = path or EQUIVALENT
	out: Dict[str, str] = {}
	if not os.path.isfile(path):
		return out
	with open(path) as f:
		for n, line in enumerate(f, 1):
			line = line.strip()
			if not line or line.startswith('#'):
				continue
			parts = line.split(None, 1)
			if len(parts) < 2:
				raise Error(f'{rel(path)}:{n}: {parts[0]} has no reason (one line: '
					    'NAME REASON)')
			out[parts[0]] = parts[1]
	return out


# ------------------------------------------------------------ tree changes

def _block_signals():
	return signal.pthread_sigmask(signal.SIG_BLOCK,
				      {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


def recover() -> None:
	"""Restore a file a run killed hard (SIGKILL, power) left mutated."""
	if not os.path.isfile(JOURNAL):
		return
	try:
		with open(JOURNAL) as f:
			rec = json.load(f)
		path = rec['file']
	except (OSError, ValueError, KeyError):
		os.unlink(JOURNAL)
		return
	full = os.path.join(tree.TREE, path)
	with open(full, 'rb') as f:
		now = hashlib.sha256(f.read()).hexdigest()
	if now != rec.get('original_sha'):
		tree_git(['checkout', 'HEAD', '--', path])
		info(f'mutate: restored {path} in {rel(tree.TREE)}: an interrupted run left '
		     f'mutant {rec.get("mutant")} in it')
	os.unlink(JOURNAL)


class Applied:
	"""A mutant written into build/tree; the file is put back on exit,
	also when a signal unwinds through it (signals are held while it is
	written back, so a second ^C cannot cut that short)."""

	def __init__(self, m: Mutant, original: List[str]):
		self.m = m
		self.path = os.path.join(tree.TREE, m.file)
		self.original = '\n'.join(original)

	def __enter__(self):
		os.makedirs(MUTATE_DIR, exist_ok=True)
		old = _block_signals()
		try:
			with open(JOURNAL, 'w') as f:
				json.dump({'mutant': self.m.name, 'file': self.m.file, 'original_sha':
					   hashlib.sha256(self.original.encode()).hexdigest()}, f)
			with open(self.path, 'w') as f:
				f.write('\n'.join(self.m.apply(self.original.split('\n'))))
		finally:
			signal.pthread_sigmask(signal.SIG_SETMASK, old)
		return self

	def __exit__(self, *exc):
		old = _block_signals()
		try:
			with open(self.path, 'w') as f:
				f.write(self.original)	# a new mtime: make rebuilds it
			if os.path.exists(JOURNAL):
				os.unlink(JOURNAL)
		finally:
			signal.pthread_sigmask(signal.SIG_SETMASK, old)
		return False


# ------------------------------------------------------------ building and booting

@dataclass
class Outcome:
	status: str
	killer: str = ''
	reason: str = ''
	build_seconds: float = 0.0
	guest_seconds: float = 0.0
	races_seconds: float = 0.0
	killers: List[str] = field(default_factory=list)	# every kill, sorted
	reboots: int = 0		# boots again after one in which no case ran


class Runner:
	"""Builds and boots the tree as it is, in the series build directory."""

	def __init__(self, jobs: int, timeout: int, glob: str = '', race_reads: int = RACE_READS):
		self.glob = glob
		self.race_reads = race_reads
		self.jobs = jobs or default_jobs()
		self.timeout = timeout
		self.race_timeout = timeout
		self.build_dir = stages.out_dir('series')
		self.stage_dir = os.path.join(BUILD, 'out', 'mutate')
		self.race_dir = os.path.join(BUILD, 'out', 'mutate-races')
		self.logs = os.path.join(MUTATE_DIR, 'logs')
		self.groups = tree.variant_groups('series')
		self.expected = judge.load_expected_before()
		self.configs = list(tree.SUITE_KUNITCONFIGS)
		self.base_fail: Set[str] = set()
		self.base_race_fail: Optional[Set[str]] = None
		for d in (self.build_dir, self.stage_dir, self.race_dir, self.logs):
			os.makedirs(d, exist_ok=True)

	def build(self, log) -> float:
		return kernel.build('mutate', tree.TREE, self.build_dir, self.configs, self.jobs, log,
				    echo=False)

	def boot(self, races: bool, log, mutant: bool = False) -> Tuple[List[dict], float]:
		"""A boot of the tree as built; @mutant: a mutant's (not the
		baseline's), stopped soon after a splat when the baseline has none."""
		extra = (['--filter=speed=slow', stages.RACE_GLOB] + self.race_args() if races
			 else ['--filter=speed>slow'] + ([self.glob] if self.glob else []))
		timeout = (self.race_timeout if races else self.timeout) or 600
		base = self.base_race_fail if races else self.base_fail
		b = kernel.boot('mutate', tree.TREE, self.build_dir,
				self.race_dir if races else self.stage_dir, self.configs, extra,
				timeout, log, echo=False,
				stop_on=kernel.is_splat_line if mutant and 'guest.splat' not in (base or ())
				else None)
		results = judge.read_results(b.json_path)
		cases = judge.judge_cases(results, self.groups, self.expected)
		cases += judge.judge_guest(b.log_lines, results, b.result.timed_out, timeout)
		return cases, b.result.seconds

	def race_args(self) -> List[str]:
		"""kunit.py arguments of a race boot: the read budget of the
		lockless_read_race cases and the same share of shmem_read_race's
		truncation rounds (0: theirs, the suites' own budgets)."""
		if self.race_reads <= 0:
			return []
		rounds = max(1, self.race_reads * SUITE_RACE_ROUNDS // SUITE_RACE_READS)
		return [f'--kernel_args=lockless_read_race_kunit.reads={self.race_reads}',
			f'--kernel_args=shmem_read_race_kunit.rounds={rounds}']

	@staticmethod
	def failed(cases: List[dict]) -> Dict[str, str]:
		return {c['name']: c['reason'] or c['status'] for c in cases if c['verdict'] == 'fail'}

	@staticmethod
	def killer(kills: Dict[str, str]) -> str:
		"""The kill to name: a case that failed its checks, else a splat,
		else the stopped guest, else a crashed case (kunit.py names the
		cases after a crash '' : suite.)"""
		def rank(name):
			why = kills[name]
			if name.startswith('guest.'):
				return (1, ['guest.splat', 'guest.stopped'].index(name)
					if name in ('guest.splat', 'guest.stopped') else 2)
			if name.endswith('.') or not name:
				return (3, 0)
			return (0 if why == 'kunit: FAIL' else 2, 0)
		return sorted(kills, key=lambda n: (rank(n), n))[0]

	def baseline(self, races: bool) -> None:
		"""The unmutated tree, built and booted: what fails there already
		kills no mutant (said, not hidden)."""
		with open(os.path.join(self.logs, 'baseline.log'), 'w') as log:
			t = self.build(log)
			cases, g = self.boot(False, log)
			self.base_fail = set(self.failed(cases))
			if not self.timeout:
				# a mutant that hangs the guest costs this much: a few
				# times the baseline, not the 600 s of make run
				self.timeout = int(min(300, max(120, 5 * g)))
				self.race_timeout = int(max(300, 3 * g))
			info(f'mutate: baseline: build {t:.0f} s, guest {g:.0f} s, {len(cases)} cases, '
			     f'{len(self.base_fail)} failing' +
			     (f' (they kill no mutant: {", ".join(sorted(self.base_fail))})'
			      if self.base_fail else ''))
			if races:
				cases, g = self.boot(True, log)
				self.base_race_fail = set(self.failed(cases))
				if not self.race_timeout:
					self.race_timeout = int(max(300, 3 * g))
				info(f'mutate: baseline races: guest {g:.0f} s, '
				     f'{len(self.base_race_fail)} failing')

	def run(self, m: Mutant, log) -> Outcome:
		o = Outcome('survived')
		t0 = time.monotonic()
		try:
			o.build_seconds = self.build(log)
		except Error as e:
			o.build_seconds = time.monotonic() - t0
			o.status = 'stillborn'
			o.reason = compile_error(log.name) or str(e).splitlines()[0]
			return o
		cases, o.guest_seconds = self.boot(False, log, True)
		if not any(not c['name'].startswith('guest.') for c in cases):
			# No case ran: a boot that died before the suites.  Under
			# TCG on a loaded host that happens without any mutant
			# ("IO-APIC + timer doesn't work!"), so one more boot
			# decides; a mutant that breaks the boot breaks it twice.
			first = self.failed(cases)
			log.write(f'mutate: no case ran ({", ".join(sorted(first))}); booting again\n')
			info(f'mutate: {m.name}: no case ran in the guest '
			     f'({first.get("guest.splat", "") or ", ".join(sorted(first))}); booting again')
			cases, again = self.boot(False, log, True)
			o.guest_seconds += again
			o.reboots = 1
		kills = {k: v for k, v in self.failed(cases).items() if k not in self.base_fail}
		if not kills and m.races and self.base_race_fail is not None:
			cases, o.races_seconds = self.boot(True, log, True)
			kills = {k: v for k, v in self.failed(cases).items()
				 if k not in self.base_race_fail}
		if kills:
			o.status = 'killed'
			o.killer = self.killer(kills)
			o.reason = kills[o.killer]
			o.killers = sorted(kills)[:20]
		return o


def compile_error(logpath: str) -> str:
	try:
		with open(logpath, errors='replace') as f:
			for line in f:
				if ': error: ' in line:
					return line.strip()[:300]
	except OSError:
		pass
	return ''


# ------------------------------------------------------------ reports

def table(data: dict) -> str:
	"""The per-patch table and the survivors: the same text for one run
	and for merged shards (no times, no shard numbers in it)."""
	rows: Dict[str, Dict[str, int]] = {}
	order: List[str] = []
	alts = [m for m in data['mutants'] if m.get('variant')]
	data = dict(data, mutants=[m for m in data['mutants'] if not m.get('variant')])
	for m in data['mutants']:
		pid = patch_id(m['patch'])
		if pid not in rows:
			rows[pid] = {s: 0 for s in STATUSES}
			order.append(pid)
		rows[pid][m['status']] += 1
	w = max([len(p) for p in order] + [5])
	head = (f'{"patch":<{w}}  mutants  killed  survived  not reached  stillborn  equivalent  '
		'not run  score')
	lines = [head, '-' * len(head)]
	tot = {s: 0 for s in STATUSES}

	def row(name, r):
		n = sum(r.values())
		judged = r['killed'] + r['survived'] + r['not reached']
		score = f'{100.0 * r["killed"] / judged:5.1f} %' if judged else '    -'
		return (f'{name:<{w}}  {n:>7}  {r["killed"]:>6}  {r["survived"]:>8}  '
			f'{r["not reached"]:>11}  {r["stillborn"]:>9}  {r["equivalent"]:>10}  '
			f'{r["not run"]:>7}  {score}')
	for p in order:
		lines.append(row(p, rows[p]))
		for s in STATUSES:
			tot[s] += rows[p][s]
	lines.append('-' * len(head))
	groups: Dict[str, Dict[str, int]] = {}
	for p in order:
		g = groups.setdefault(p.split('/')[0], {s: 0 for s in STATUSES})
		for s in STATUSES:
			g[s] += rows[p][s]
	if len(groups) > 1:
		# the feature groups: the score each must reach
		for g, r in groups.items():
			lines.append(row(f'{g}/*', r))
		lines.append('-' * len(head))
	lines.append(row('total', tot))
	lines.append('score = killed / (killed + survived + not reached); equivalent mutants '
		     '(patches/mutants-equivalent, or TCE) and stillborn ones are not counted')
	tinfo = data.get('tce')
	without = tinfo.get('shards_without', 0) if tinfo else 0
	if any(m['status'] in UNKILLED for m in data['mutants']) and (not tinfo or without):
		lines.append('TCE was not run' + (f' in {without} shard(s)' if without else '') +
			     ' (BUDGET= or interrupted): their survivors were not compiled alone')
	listed = sum(1 for m in data['mutants'] if m.get('run') == 'listed')
	if listed:
		lines.append(f'{listed} of the equivalent ones are listed and were not run '
			     '(EQUIVALENT=check runs them)')
	same = [m for m in data['mutants'] if m.get('tce') == 'identical' and
		m['status'] == 'equivalent']
	if same:
		lines.append(f'{len(same)} of the equivalent ones compile to the original\'s object '
			     '(TCE), in the suites\' kernel; listed below')
	surv = [m for m in data['mutants'] if m['status'] == 'survived']
	if surv:
		lines += ['', f'survivors ({len(surv)}):']
		for m in surv:
			lines.append(f'  {m["name"]}')
			lines += ['    ' + d for d in m['diff'].split('\n')]
	unreached = [m for m in data['mutants'] if m['status'] == 'not reached']
	if unreached:
		lines += ['', f'not reached: no case runs these lines ({len(unreached)}):']
		seen = []
		for m in unreached:
			where = f'{m["file"]}:{m["line"]}'
			if where not in seen:
				seen.append(where)
				lines.append(f'  {patch_id(m["patch"])} {where}')
	if same:
		lines += ['', f'equivalent by their object code (TCE, {len(same)}): no case of this '
			  'kernel can tell them from the original']
		for m in same:
			lines.append(f'  {m["name"]}')
			lines += ['    ' + d for d in m['diff'].split('\n')[2:]]
	killed = [m for m in data['mutants'] if m['status'] == 'killed']
	if killed:
		lines += ['', 'killed by:']
		lines += [f'  {m["name"]}: {m["killer"]}' +
			  (f' ({m["reason"][:120]})' if m['killer'].startswith('guest.') else '')
			  for m in killed]
	for m in data['mutants']:
		if m.get('listed_equivalent'):
			lines.append(f'note: {m["name"]} is listed in patches/mutants-equivalent '
				     f'but {m["killer"]} killed it: not equivalent')
	if alts:
		pinned = sum(1 for m in alts if m['status'] == 'killed')
		lines += ['', f'variants ({len(alts)}, {pinned} pinning a case): a case that fails '
			  'on one decides on a choice the seeds leave open']
		w = max(len(m['name']) for m in alts) - len(VARIANT_OP) - 1
		for m in alts:
			lines.append(f'  {m["name"][len(VARIANT_OP) + 1:]:<{w}}  {patch_id(m["patch"])}, '
				     f'{m.get("run") or "-"}: {variant_state(m)}')
	return '\n'.join(lines)


def variant_state(r: dict) -> str:
	"""What the result of a variant says: the cases it pins, or why none."""
	st = r['status']
	if st == 'killed':
		return 'PINNED: ' + ', '.join(r.get('killers') or [r['killer']])
	return {'survived': 'nothing pinned',
		'not reached': 'nothing pinned, and no case runs its lines',
		'stillborn': f'does not build: {r.get("reason", "")}'}.get(st, st)


def junit(data: dict) -> str:
	"""One testsuite per patch, one testcase per mutant: a survivor is a
	failure (with its diff), stillborn / equivalent / not run are skips."""
	root = ET.Element('testsuites', name='mm-kunit mutate')
	by: Dict[str, List[dict]] = {}
	alts = []
	for m in data['mutants']:
		if m.get('variant'):
			alts.append(m)
		else:
			by.setdefault(patch_id(m['patch']), []).append(m)
	if alts:
		bad = [m for m in alts if m['status'] in ('killed', 'stillborn')]
		ts = ET.SubElement(root, 'testsuite', name='mutate variants', tests=str(len(alts)),
				   failures=str(len(bad)), skipped=str(sum(m['status'] == 'not run'
									   for m in alts)))
		for m in alts:
			tc = ET.SubElement(ts, 'testcase', classname='mutate.variants', name=m['name'],
					   time=f'{m.get("seconds", 0):.1f}')
			if m in bad:
				ET.SubElement(tc, 'failure', message=variant_state(m)[:200],
					      type='pinned' if m['status'] == 'killed' else 'stillborn'
					      ).text = m['diff']
			elif m['status'] == 'not run':
				ET.SubElement(tc, 'skipped', message='not run')
			else:
				ET.SubElement(tc, 'system-out').text = variant_state(m)
	for pid, ms in by.items():
		ts = ET.SubElement(root, 'testsuite', name=f'mutate {pid}', tests=str(len(ms)),
				   failures=str(sum(m['status'] in UNKILLED for m in ms)),
				   skipped=str(sum(m['status'] in ('stillborn', 'equivalent', 'not run')
						   for m in ms)))
		for m in ms:
			tc = ET.SubElement(ts, 'testcase', classname=f'mutate.{pid}', name=m['name'],
					   time=f'{m.get("seconds", 0):.1f}')
			if m['status'] == 'survived':
				ET.SubElement(tc, 'failure', message='survived: no case failed',
					      type='survived').text = m['diff']
			elif m['status'] == 'not reached':
				ET.SubElement(tc, 'failure', message='not reached: no case runs it',
					      type='not reached').text = m['diff']
			elif m['status'] == 'killed':
				ET.SubElement(tc, 'system-out').text = f'killed by {m["killer"]}: {m["reason"]}'
			else:
				listed = ' (listed, not run)' if m.get('run') == 'listed' else ''
				ET.SubElement(tc, 'skipped', message=f'{m["status"]}{listed}: '
					      f'{m["reason"]}'.strip(': '))
	ET.indent(root)
	return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def write_reports(data: dict, stem: str) -> str:
	"""@stem.json, @stem.txt, @stem-junit.xml; return the text report."""
	os.makedirs(os.path.dirname(stem), exist_ok=True)
	with open(stem + '.json', 'w') as f:
		json.dump(data, f, indent=1)
		f.write('\n')
	text = table(data)
	with open(stem + '.txt', 'w') as f:
		f.write(text + '\n')
	with open(stem + '-junit.xml', 'w') as f:
		f.write(junit(data))
	return text


def fingerprint(mutants: List[Mutant], seed: str) -> str:
	h = hashlib.sha256(seed.encode())
	for m in mutants:
		h.update(m.name.encode() + b'\0' + json.dumps(m.edits, sort_keys=True).encode())
	return h.hexdigest()[:16]


def fmt_time(s: float) -> str:
	return f'{s / 60:.0f} min' if s >= 90 else f'{s:.0f} s'


CACHE = os.path.join(MUTATE_DIR, 'cache.json')
SCHEMATA_JOURNAL = os.path.join(MUTATE_DIR, 'schemata.json')


def cache_env(mode: str, glob: str, race_reads: int = RACE_READS, reach: str = 'case',
	      per_boot: int = 1) -> str:
	"""What every mutant's result depends on besides its own patch and the
	suites: the mode, SUITE=, the race suites' read budget, whether a
	mutant ran only the cases that reach it (REACH=case in boots of
	several), the base kernel, the kunitconfigs, the switch
	(MODE=schemata), the architecture."""
	from . import arch
	_key, head = tree.read_keyfile(tree.TREE + '.key')
	narrow = mode == 'schemata' and per_boot > 1 and reach == 'case'
	parts = [str(FORMAT), mode, glob, str(race_reads), arch.current().name] + \
		(['reach=case'] if narrow else [])
	# the base by its content (a tree hash), not by the commit an import
	# made: the same kernel imported again, or from another source of the
	# same version, keeps every result
	try:
		series = tree.series_patches()
		base = patch_commits(series)[0] + '^' if series else head
		parts.append(tree_git(['rev-parse', base + '^{tree}']).stdout.strip())
	except Error:
		parts.append(head or '')
	for c in tree.SUITE_KUNITCONFIGS:
		full = os.path.join(tree.TREE, c)
		if os.path.isfile(full):
			with open(full, errors='replace') as f:
				parts.append(f.read())
	if mode == 'schemata':
		for p in schemata.switch_patches():
			with open(p, errors='replace') as f:
				parts.append(f.read())
	return schemata.sha(*parts)


def suites_now() -> Dict[str, str]:
	"""Suite name -> hash of its source, the shared test helpers and the
	test hooks' patches."""
	tests = os.path.join(REPO, 'mm', 'tests')
	if not os.path.isdir(tests):
		return {}
	hooks = ''
	for p in tree.series_patches():
		if tree.is_test_hook(p):
			with open(tree.patch_file(p), errors='replace') as f:
				hooks += f.read()
	return schemata.suite_hashes(tests, hooks)


RESULT_KEYS = ('status', 'killer', 'killers', 'reason')


def cmd_mutate(args) -> int:
	t0 = time.monotonic()
	mode = getattr(args, 'mode', '') or 'each'
	if mode not in MODES:
		raise Error(f'MODE={mode}: one of {", ".join(MODES)}')
	recover()
	if os.path.isdir(tree.TREE):
		schemata.recover(tree.TREE, SCHEMATA_JOURNAL, lambda a: tree_git(a))
	series = tree.series_patches()
	# The test hooks (patches/*/hooks/) are what only the suites use:
	# their lines are not the feature's, so they get no mutants
	selected = [p for p in select_patches(series, args.patch) if not tree.is_test_hook(p)]
	budget = args.budget * 60 if args.budget else 0
	shard = parse_shard(args.shard) if args.shard else (1, 1)
	tree.assemble('series')
	mutants, texts = all_mutants(series, selected)
	alt = getattr(args, 'alt', '') or ''
	names = [] if alt == 'none' or tree.series_mbox() else \
		([n for n in alt.split(',') if n] if alt else None)
	variants = all_variants(series, selected, names, texts)
	order = run_order(mutants, args.seed) + variants
	mine = shard_of(order, *shard)
	only = [g for g in (getattr(args, 'only', '') or '').split(',') if g]
	if only:
		mine = [m for m in mine if any(fnmatch.fnmatchcase(m.name, g) for g in only)]
		if not mine:
			raise Error(f'MUTANTS={args.only}: no mutant of the selection has such a name')
	equivalent = load_equivalent()
	data = {'format': FORMAT, 'fingerprint': fingerprint(mutants + variants, args.seed),
		'seed': args.seed,
		'tree_head': tree_git(['rev-parse', 'HEAD']).stdout.strip(),
		'patches': [p for p in series if p in selected],
		'shard': f'{shard[0]}/{shard[1]}', 'shards': [shard[0]], 'shard_count': shard[1],
		'total_mutants': len(mutants), 'total_variants': len(variants),
		'budget_minutes': args.budget,
		'suite': args.filter_glob, 'mode': mode,
		'equivalent_mode': getattr(args, 'equivalent', 'skip'),
		'complete': False, 'seconds': 0.0, 'mutants': []}
	results: Dict[str, dict] = {}
	gen_index = {m.name: k for k, m in enumerate(mutants + variants)}
	for m in mine:
		results[m.name] = {
			'name': m.name, 'index': gen_index[m.name], 'patch': m.patch, 'file': m.file, 'line': m.line,
			'operator': m.operator, 'races': m.races, 'diff': m.diff(texts[m.file]),
			'variant': m.alt,
			'status': 'not run', 'killer': '', 'killers': [], 'reason': '', 'seconds': 0.0,
			'reboots': 0, 'run': '', 'reach': [], 'reused': False,
			'build_seconds': 0.0, 'guest_seconds': 0.0, 'races_seconds': 0.0}
	stem = os.path.join(MUTATE_DIR, 'results' if shard == (1, 1) else
			    f'shard-{shard[0]}-of-{shard[1]}')

	def finish(complete: bool) -> str:
		data['mutants'] = sorted(results.values(), key=lambda r: gen_index[r['name']])
		data['complete'] = complete
		data['seconds'] = round(time.monotonic() - t0, 1)
		return write_reports(data, stem)

	def settle(m: Mutant, r: dict) -> None:
		"""A listed equivalent mutant that no case kills is equivalent."""
		if r['status'] in UNKILLED and m.name in equivalent:
			r['status'] = 'equivalent'
			r['reason'] = equivalent[m.name]
		elif r['status'] == 'killed' and m.name in equivalent:
			r['listed_equivalent'] = equivalent[m.name]	# noted as wrong

	per_patch = {}
	for m in mutants:
		per_patch[patch_id(m.patch)] = per_patch.get(patch_id(m.patch), 0) + 1
	info(f'mutate: {len(mutants)} mutants of {len(selected)} patch(es) '
	     f'({", ".join(f"{p}: {n}" for p, n in per_patch.items()) or "none"})' +
	     (f'; {len(variants)} variant(s) ({", ".join(m.name[len(VARIANT_OP) + 1:] for m in variants)})'
	      if variants else '') +
	     (f'; shard {shard[0]}/{shard[1]}: {len(mine)}' if shard != (1, 1) else '') +
	     (f'; budget {args.budget:g} min' if budget else '') + f'; seed {args.seed}; MODE={mode}')
	if not mine:
		text = finish(True)
		print(text)
		return 0

	# results kept from an earlier run: the same mutant, patch, configs,
	# and every suite as it was (with a baseline, below: the suites that
	# reach it as they were)
	cache = schemata.Cache(CACHE)
	race_reads = getattr(args, 'race_reads', RACE_READS)
	reach_by = getattr(args, 'reach', 'case')
	env = cache_env(mode, args.filter_glob, race_reads, reach_by,
			max(1, getattr(args, 'per_boot', 1) or 1))
	suites = suites_now()
	patch_texts: Dict[str, str] = {}
	for p in {m.patch for m in mine} | {m.alt for m in mine if m.alt}:
		with open(tree.patch_file(p), errors='replace') as f:
			patch_texts[p] = f.read()
	keys = {m.name: schemata.mutant_key(env, patch_texts[m.patch] + (patch_texts[m.alt] if m.alt
									 else ''), m, texts[m.file])
		for m in mine}

	def reuse(m: Mutant, entry: dict) -> None:
		r = results[m.name]
		r.update({k: entry['result'][k] for k in RESULT_KEYS})
		r['reused'] = True
		r['run'] = entry.get('run', '')
		r['reach'] = [x for x in entry.get('reach') or [] if '.' not in x]
		settle(m, r)

	todo: List[Mutant] = []
	reused = 0
	listed = 0
	check_listed = getattr(args, 'equivalent', 'skip') == 'check'
	for m in mine:
		entry = None if getattr(args, 'fresh', False) else cache.get(keys[m.name])
		if schemata.reusable(entry, suites, None):
			reuse(m, entry)
			reused += 1
		elif entry and m.name in equivalent and \
			schemata.killed_still(entry, suites, set(entry.get('reach') or ())):
			# a listed one killed by a case whose suite is unchanged:
			# reported as wrongly listed
			reuse(m, entry)
			reused += 1
		elif m.name in equivalent and not m.alt and not check_listed:
			# a reviewed claim: not booted unless EQUIVALENT=check
			r = results[m.name]
			r.update(status='equivalent', reason=equivalent[m.name], run='listed')
			listed += 1
		else:
			todo.append(m)
	if reused:
		info(f'mutate: {reused} of {len(mine) - listed} result(s) reused from {rel(CACHE)} '
		     '(same mutant, patch, configs and suites)')
	if listed:
		info(f'mutate: {listed} mutant(s) listed in patches/mutants-equivalent not run '
		     '(EQUIVALENT=check runs them: a listed one a case kills is reported)')
	runner = Runner(args.jobs, args.timeout or int(env_number('MMKUNIT_MUTATE_TIMEOUT', 0)),
			args.filter_glob, race_reads)
	sch: Optional[schemata.SchemataRunner] = None
	times = {'schemata_build': 0.0, 'baseline_guest': 0.0, 'baseline_races': 0.0}
	if todo and mode == 'schemata':
		ids = {m.name: gen_index[m.name] + 1 for m in mutants + variants}
		sch = schemata.SchemataRunner(runner, mine, texts, ids)
		with open(os.path.join(runner.logs, 'schemata.log'), 'w') as log:
			times['schemata_build'] = sch.build(log)
			races = any(m.races for m in todo if sch.switched(m.name))
			times['baseline_guest'], times['baseline_races'] = sch.baseline(races, log)
		n_own = sum(1 for m in mine if not sch.switched(m.name))
		why: Dict[str, int] = {}
		for n, w in sch.own.items():
			if n in results:
				why[w] = why.get(w, 0) + 1
		info(f'mutate: schemata: {len(mine) - n_own} mutant(s) switched in one kernel, '
		     f'{n_own} with a build of their own' +
		     (f' ({"; ".join(f"{w}: {k}" for w, k in sorted(why.items()))})' if why else '') +
		     f'; build {times["schemata_build"]:.0f} s, baseline guest '
		     f'{times["baseline_guest"]:.0f} s' +
		     (f', races {times["baseline_races"]:.0f} s' if times['baseline_races'] else '') +
		     f'; {len(sch.base_fail)} failing' +
		     (f' (they kill no mutant: {", ".join(sorted(sch.base_fail))})' if sch.base_fail
		      else ''))
		still = []
		for m in todo:
			if sch.switched(m.name):
				reach = sch.reach_key(m) if reach_by == 'case' else sch.reach_of(m)
				entry = None if getattr(args, 'fresh', False) else cache.get(keys[m.name])
				if schemata.reusable(entry, suites, reach):
					reuse(m, entry)
					reused += 1
					continue
			still.append(m)
		if len(still) < len(todo):
			info(f'mutate: {len(todo) - len(still)} more result(s) reused: the suites that '
			     'reach them are as they were')
		todo = still
	data['schemata'] = ({'switched': sum(1 for m in mine if sch.switched(m.name)),
			     'own_build': {n: w for n, w in sch.own.items() if n in results},
			     **{k: round(v, 1) for k, v in times.items()}} if sch else None)
	data['reused'] = reused
	data['listed_not_run'] = listed
	done = 0
	spent: List[float] = []
	stopped = ''
	own = [m for m in todo if sch is None or not sch.switched(m.name)]
	per_boot = max(1, getattr(args, 'per_boot', 1) or 1)
	guests = max(1, getattr(args, 'guests', 1) or 1)
	mb: Optional[multiboot.MultiBoot] = None
	recorded: Set[str] = set()

	def logpath_of(m: Mutant) -> str:
		return os.path.join(runner.logs, f'{gen_index[m.name]:05d}.log')

	def record(k: int, m: Mutant, o: Outcome, seconds: float, switched: bool) -> None:
		nonlocal done
		r = results[m.name]
		r.update(asdict(o))
		r['run'] = 'switched' if switched else ('own build' if sch else 'build')
		r['reach'] = sorted(sch.reach_of(m)) if switched else []
		r['seconds'] = round(seconds, 1)
		for key in ('build_seconds', 'guest_seconds', 'races_seconds'):
			r[key] = round(r[key], 1)
		cache.put(keys[m.name], {'name': m.name, 'run': r['run'],
					 'result': {x: r[x] for x in RESULT_KEYS},
					 'reach': (sorted(sch.reach_key(m)) if reach_by == 'case' else r['reach'])
					 if switched else None,
					 'suites': suites})
		cache.save()
		settle(m, r)
		spent.append(r['seconds'])
		done += 1
		finish(False)		# results so far, for a run killed hard
		counts = {s: sum(1 for x in results.values() if x['status'] == s and not x['variant'])
			  for s in STATUSES}
		pinned = sum(1 for x in results.values() if x['variant'] and x['status'] == 'killed')
		# wall time per mutant since the first one began: boots overlap
		eta = (time.monotonic() - t_loop) / done * (len(todo) - done)
		what = {'killed': f'killed by {o.killer}', 'stillborn': 'stillborn (no build)'
			}.get(r['status'], r['status'])
		if m.alt:
			what = variant_state(r)
		info(f'mutate: [{k}/{len(todo)}] {m.name}: {what} ('
		     + (f'switch {sch.ids[m.name]}' if switched else
			f'build {o.build_seconds:.0f} s')
		     + (f', guest {o.guest_seconds:.0f} s' if o.guest_seconds else '')
		     + (f', races {o.races_seconds:.0f} s' if o.races_seconds else '')
		     + f'); {counts["killed"]} killed, {counts["survived"]} survived, '
		     + (f'{counts["not reached"]} not reached, ' if sch else '')
		     + f'{counts["stillborn"]} stillborn'
		     + (f', {pinned} variant(s) pinning a case' if m.alt or pinned else '')
		     + f'; ETA {fmt_time(eta)}'
		     + (f' (budget left {fmt_time(max(0, budget - (time.monotonic() - t0)))})'
			if budget else ''))

	try:
		if own:
			runner.baseline(any(m.races for m in own))
		if sch is not None and per_boot > 1:
			# a line that ran only at boot needs a boot of its own
			several = [m for m in todo if sch.switched(m.name) and not m.alt and
				   sch.reach.get(sch.ids[m.name]) and
				   sch.ids[m.name] not in sch.boot_only]
			if several:
				mb = multiboot.MultiBoot(sch, per_boot, runner.logs, reach_by == 'case')
				mb.guests = guests
				used = {s for m in several for s in sch.reach[sch.ids[m.name]]}
				# the race suites too: a survivor runs them in its boot
				used |= {s for m in several for s in mb.races_of(m)}
				order = sch.suite_order
				mb.baseline(sorted(used, key=lambda s: (order.index(s) if s in order
									else len(order), s)))
		t_loop = time.monotonic()
		for k, m in enumerate(todo, 1):
			if m.name in recorded:
				continue
			elapsed = time.monotonic() - t0
			# wall time per mutant (guests overlap: not the mean of spent)
			mean = (time.monotonic() - t_loop) / done if done else 0.0
			if budget and (elapsed >= budget or (spent and elapsed + mean > budget)):
				stopped = (f'BUDGET={args.budget:g} min reached after {fmt_time(elapsed)}: '
					   f'{len(todo) - done} mutant(s) not run')
				break
			switched = sch is not None and sch.switched(m.name)
			if mb is not None and (mb.eligible(m) or (not budget and switched and
								    bool(sch.reach_of(m)))):
				rest = [x for x in todo[k - 1:] if x.name not in recorded]
				batch = [x for x in rest if mb.eligible(x)]
				lane: List[Mutant] = []
				if budget:
					# with guests, two boots' worth each: they stay busy
					# to the end of the batch; one guest keeps a boot's worth
					batch = batch[:per_boot * (2 * guests if guests > 1 else 1)]
					if spent:
						batch = batch[:max(1, int((budget - elapsed) / max(1.0, mean)))]
				else:
					# the switched mutants that boot on their own (a line
					# run only at boot, a variant) take a guest's turn
					# beside the boots of several, not one after another
					lane = [x for x in rest if not mb.eligible(x) and
						sch.switched(x.name) and sch.reach_of(x)]
				for x in batch + lane:
					with open(logpath_of(x), 'w') as log:
						log.write(results[x.name]['diff'] + '\n')
						log.write(f'mutate: switched, mm_mutant={sch.ids[x.name]}' +
							  (', in boots of several mutants\n' if x in batch
							   else '\n'))
				at = {x.name: todo.index(x) + 1 for x in batch + lane}

				def got(x, o, seconds):
					record(at[x.name], x, o, seconds, True)
					recorded.add(x.name)
				mb.run(batch, logpath_of, own=lane, on_result=got)
				continue
			r = results[m.name]
			ts = time.monotonic()
			with open(logpath_of(m), 'w') as log:
				log.write(r['diff'] + '\n')
				if switched:
					log.write(f'mutate: switched, mm_mutant={sch.ids[m.name]}\n')
					o = sch.run(m, log)
				else:
					with Applied(m, texts[m.file]):
						o = runner.run(m, log)
			record(k, m, o, time.monotonic() - ts, switched)
			recorded.add(m.name)
		if not stopped:
			try:
				data['tce'] = settle_tce(mine, results, texts, runner, sch)
			except (Error, OSError) as e:
				info(f'mutate: TCE not done: {e}')
	except BaseException as e:
		finish(False)
		what = 'interrupted' if isinstance(e, (KeyboardInterrupt, proc.Interrupted)) \
			else 'stopped by an error'
		info(f'mutate: {what} after {done} mutant(s); the tree is restored; partial '
		     f'results in {rel(stem)}.json')
		raise
	if mb is not None and data['schemata'] is not None:
		data['schemata'].update({'per_boot': per_boot, 'several_boots': mb.boots,
					 'several_boot_seconds': round(mb.boot_seconds, 1),
					 'several_wall_seconds': round(mb.wall_seconds, 1), 'guests': guests,
					 'lane_boots': mb.lane_boots,
					 'lane_seconds': round(mb.lane_seconds, 1),
					 'several_alone': sorted(mb.alone)})
	text = finish(not stopped)
	print(text)
	if stopped:
		info(f'mutate: {stopped}')
	total = time.monotonic() - t0
	ran = [r for r in results.values() if r['status'] != 'not run' and not r['reused'] and
	       r['run'] != 'listed']
	mean = (lambda k: sum(r[k] for r in ran) / len(ran)) if ran else (lambda k: 0)
	booted = [r for r in ran if r['guest_seconds'] or r['races_seconds']]
	unreached = sum(1 for r in ran if r['run'] == 'switched' and r['status'] in
			('not reached', 'equivalent') and not r['guest_seconds'])
	info(f'mutate: {done} mutant(s) in {fmt_time(total)}' +
	     (f', {sum(spent) / len(spent):.0f} s per mutant (build {mean("build_seconds"):.0f} s, '
	      f'guest {mean("guest_seconds"):.0f} s, races {mean("races_seconds"):.0f} s on '
	      'average)' if spent else '') +
	     (f'; schemata build {times["schemata_build"]:.0f} s, baseline '
	      f'{times["baseline_guest"] + times["baseline_races"]:.0f} s, '
	      f'{len(booted)} booted in {sum(r["guest_seconds"] + r["races_seconds"] for r in booted):.0f} s, '
	      f'{unreached} not reached (no boot)' if sch else '') +
	     (f'; {mb.boots} boot(s) of several mutants ({mb.boot_seconds:.0f} s of guests) and '
	      f'{mb.lane_boots} of their own beside them ({mb.lane_seconds:.0f} s) in '
	      f'{mb.wall_seconds:.0f} s (GUESTS={guests}; debugfs baseline included), '
	      f'{len(mb.alone)} mutant(s) on their own after one of several'
	      if mb is not None else '') +
	     f'; {reused} reused' + (f', {listed} listed equivalent not run' if listed else '') +
	     f'; reports {rel(stem)}.txt, .json, -junit.xml')
	return exit_code(list(results.values()))


def settle_tce(mine: List[Mutant], results: Dict[str, dict], texts: Dict[str, List[str]],
	       runner: 'Runner', sch) -> dict:
	"""Each mutant no case killed (not a variant) compiled alone: one whose
	object is the original's is equivalent (docs/mutate.rst, "Equivalent
	by their object code").  The compile commands are the series build's
	(the suites' kernel), once its config is checked to be the schemata
	build's but for the switch.  Returns what the JSON says of it."""
	cands = [m for m in mine if results[m.name]['status'] in UNKILLED and not m.alt]
	info_ = {'checked': len(cands), 'identical': 0, 'compiled': 0, 'not_compared': {},
		 'config': tce.config_hash(runner.build_dir)}
	if not cands:
		return info_
	t0 = time.monotonic()
	why_not: Dict[str, int] = info_['not_compared']
	sch_dir = sch.build_dir if sch is not None else os.path.join(BUILD, 'out', 'mutate-schemata')
	res: Dict[str, Tuple[Optional[bool], str]] = {}
	if any(results[m.name]['run'] == 'switched' for m in cands) and \
		os.path.isfile(os.path.join(sch_dir, '.config')) and \
		not tce.config_matches(runner.build_dir, sch_dir):
		res = {m.name: (None, 'the series build\'s config is not the schemata build\'s '
				'(make run, then make mutate again)') for m in cands}
		t = None
	else:
		t = tce.TCE(tree.TREE, runner.build_dir, os.path.join(MUTATE_DIR, 'tce'),
			    kernel.ccache_env(), runner.jobs)
		res = t.check([(m.name, m.file, texts[m.file], m.apply(texts[m.file]))
			       for m in cands])
		info_['compiled'] = t.compiled
	for m in cands:
		verdict, where = res[m.name]
		r = results[m.name]
		r['tce'] = {True: 'identical', False: 'differs', None: 'not compared'}[verdict]
		if verdict:
			r['status'] = 'equivalent'
			r['reason'] = f'TCE: compiles to the original\'s object ({where}, debug information aside)'
			info_['identical'] += 1
		elif verdict is None:
			why_not[where] = why_not.get(where, 0) + 1
	info(f'mutate: TCE: {info_["identical"]} of {len(cands)} mutant(s) no case killed compile '
	     f'to the original\'s object: equivalent ({info_["compiled"]} compile(s), '
	     f'{time.monotonic() - t0:.0f} s)' +
	     (f'; not compared: {"; ".join(f"{w}: {k}" for w, k in sorted(why_not.items()))}'
	      if why_not else ''))
	return info_


def exit_code(results: List[dict]) -> int:
	"""1 when a mutant survived or was not reached (and is not listed as
	equivalent), or a case is pinned by a variant or one does not build."""
	bad = any(r['status'] in UNKILLED for r in results if not r.get('variant')) or \
		any(r['status'] in ('killed', 'stillborn') for r in results if r.get('variant'))
	return 1 if bad else 0


# ------------------------------------------------------------ merge

def merge(datas: List[dict]) -> dict:
	"""One report from the JSON of shards of the same mutant set."""
	if not datas:
		raise Error('mutate-merge: no shard results given')
	fp = {d['fingerprint'] for d in datas}
	if len(fp) > 1:
		raise Error('mutate-merge: the shards are of different mutant sets (tree, patches '
			    f'or seed differ: fingerprints {", ".join(sorted(fp))})')
	suites = {d.get('suite', '') for d in datas}
	if len(suites) > 1:
		raise Error('mutate-merge: the shards booted different suites (SUITE='
			    f'{", ".join(repr(x) for x in sorted(suites))})')
	counts = {d['shard_count'] for d in datas}
	if len(counts) > 1:
		raise Error(f'mutate-merge: shards of different N ({sorted(counts)})')
	modes = {d.get('equivalent_mode', 'check') for d in datas}
	if len(modes) > 1:
		raise Error('mutate-merge: the shards treated the listed equivalents differently '
			    '(EQUIVALENT=check in some, not in others)')
	seen: Dict[str, dict] = {}
	shards: List[int] = []
	for d in datas:
		for s in d['shards']:
			if s in shards:
				raise Error(f'mutate-merge: shard {s}/{d["shard_count"]} given twice')
			shards.append(s)
		for m in d['mutants']:
			if m['name'] in seen:
				raise Error(f'mutate-merge: {m["name"]} is in two shards')
			seen[m['name']] = m
	n = counts.pop()
	missing = sorted(set(range(1, n + 1)) - set(shards))
	first = datas[0]
	out = dict(first, shards=sorted(shards), shard='merged',
		   complete=all(d['complete'] for d in datas) and not missing,
		   seconds=round(sum(d['seconds'] for d in datas), 1), missing_shards=missing,
		   reused=sum(d.get('reused', 0) for d in datas),
		   listed_not_run=sum(d.get('listed_not_run', 0) for d in datas))
	# the generation order, as one run lists them
	out['mutants'] = sorted(seen.values(), key=lambda m: m['index'])
	out['tce'] = merge_tce([d.get('tce') for d in datas])
	return out


def merge_tce(parts: List[Optional[dict]]) -> dict:
	"""The TCE summaries of shards summed; a shard that stopped before
	its TCE (BUDGET=, ^C) is counted in shards_without."""
	out = {'checked': 0, 'identical': 0, 'compiled': 0, 'not_compared': {},
	       'config': '', 'shards_without': sum(1 for p in parts if not p)}
	configs = sorted({p.get('config', '') for p in parts if p})
	out['config'] = ','.join(c for c in configs if c)
	for p in parts:
		for k in ('checked', 'identical', 'compiled'):
			out[k] += (p or {}).get(k, 0)
		for w, n in ((p or {}).get('not_compared') or {}).items():
			out['not_compared'][w] = out['not_compared'].get(w, 0) + n
	return out


def cmd_mutate_merge(args) -> int:
	# a mutate shard carries no "command" (older ones) but always "mutants"
	shards = shard.load(list(args.files), MUTATE_DIR, 'mutate',
			    lambda d: d.get('command', 'mutate') == 'mutate' and 'mutants' in d)
	paths = [p for p, _ in shards]
	datas = [d for _, d in shards]
	out = merge(datas)
	stem = os.path.join(MUTATE_DIR, 'merged')
	text = write_reports(out, stem)
	print(text)
	if out['missing_shards']:
		info(f'mutate-merge: shard(s) {", ".join(map(str, out["missing_shards"]))} of '
		     f'{out["shard_count"]} missing: their mutants count nowhere')
	info(f'mutate-merge: {len(paths)} shard file(s) -> {rel(stem)}.txt, .json, -junit.xml')
	return exit_code(out['mutants'])
