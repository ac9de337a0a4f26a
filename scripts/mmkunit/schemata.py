# SPDX-License-Identifier: GPL-2.0
"""make mutate MODE=schemata: every mutant in one kernel, each behind a
run-time switch.

The mutants of the selected patches are written into the tree at once:
an expression mutant switches its expression
(``(mm_mutant_on(17) ? (a <= b) : (a < b))``), a statement mutant its
statements (``{ if (mm_mutant_on(17)) { } else { foo(); } }``), an early
return is guarded (``if (mm_mutant_on(17)) return 0;``).  The switch
itself (mm_mutant_on(), CONFIG_MM_MUTANT) is patches/mutate/*.patch,
applied with the mutants in the schemata build only.  A mutant that cannot
be switched (a #define, outside a function body, a header under include/,
a switch that does not compile) keeps its own build (MODE=each's way).

Reach: a boot with mm_mutant=0 activates no mutant and prints, after each
KUnit suite, the ids that ran during it; a mutant no suite reaches needs no
boot.  Cache: a mutant's result is kept under its text and what it ran
against (docs/mutate.rst, "Schemata")."""

import hashlib
import json
import os
import re
import shutil
import signal
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from .common import BUILD, REPO, Error, rel, sh

SWITCH_DIR = os.path.join(REPO, 'patches', 'mutate')
SWITCH_CONFIG = 'tools/testing/kunit/configs/mm_mutant.config'
HEADER = '#include <linux/mm_mutant.h>'
CACHE_FORMAT = 1

EXPR_OPS = {'negate', 'drop-operand', 'cond-true', 'cond-false', 'lt-le', 'le-lt', 'gt-ge',
	    'ge-gt', 'bound+1', 'bound-1', 'and-or', 'plain-access', 'drop-flag', 'order-1'}
COND_OPS = {'negate', 'drop-operand', 'cond-true', 'cond-false'}
DEL_OPS = {'del-barrier', 'del-call', 'del-lock-pair'}
# headers under include/ reach code the switch cannot be in (the vDSO, early
# assembly-offsets files): their mutants keep their own build
NO_SWITCH_DIRS = ('include/',)
# a mutant's boot of its own (its functional suites) is hung when kunit.py
# is silent for OWN_TIMES the baseline boot's time, OWN_FLOOR s at least
OWN_TIMES = 3
OWN_FLOOR = 60


@dataclass
class Switch:
	"""One switched place of mutant @id: the original text [start, end) of
	the file and what the mutant has there instead (@text); @kind is
	'expr' (an expression), 'stmt' (whole statements; '' deletes them) or
	'insert' (a statement put before @start, start == end)."""
	id: int
	start: int
	end: int
	kind: str
	text: str


def line_offsets(lines: List[str]) -> List[int]:
	out, pos = [], 0
	for line in lines:
		out.append(pos)
		pos += len(line) + 1
	return out


def _match(code: str, i: int) -> int:
	"""Offset of the bracket closing the one at @code[i], -1 if none."""
	opening = code[i]
	closing = {'(': ')', '[': ']', '{': '}'}[opening]
	depth = 0
	for j in range(i, len(code)):
		if code[j] == opening:
			depth += 1
		elif code[j] == closing:
			depth -= 1
			if depth == 0:
				return j
	return -1


def _pieces(code: str, lo: int, hi: int, seps: str) -> List[Tuple[int, int]]:
	"""[lo, hi) of @code cut at the top-level @seps."""
	out, depth, start = [], 0, lo
	for i in range(lo, hi):
		ch = code[i]
		if ch in '([{':
			depth += 1
		elif ch in ')]}':
			depth -= 1
		elif depth == 0 and ch in seps:
			out.append((start, i))
			start = i + 1
	out.append((start, hi))
	return out


def _strip(text: str, a: int, b: int) -> Tuple[int, int]:
	while a < b and text[a].isspace():
		a += 1
	while b > a and text[b - 1].isspace():
		b -= 1
	return a, b


def balance(code: str, p: int, q: int) -> Tuple[int, int]:
	"""[p, q) widened until its brackets pair up: an opener inside it
	takes in its closer, a closer inside it its opener."""
	while True:
		depth, np_, nq = 0, p, q
		for i in range(p, q):
			ch = code[i]
			if ch in '([{':
				c = _match(code, i)
				if c >= q:
					nq = max(nq, c + 1)
			elif ch in ')]}':
				# the opener of this closer, looking back from it
				d, j = 0, i
				while j >= 0:
					if code[j] in ')]}':
						d += 1
					elif code[j] in '([{':
						d -= 1
						if d == 0:
							break
					j -= 1
				if 0 <= j < p:
					np_ = min(np_, j)
		if (np_, nq) == (p, q):
			return p, q
		p, q = np_, nq


ASSIGN_RE = re.compile(r'(?<![=!<>+\-*/%&|^])(?:[+\-*/%&|^]|<<|>>)?=(?!=)')


def segment(code: str, p: int, q: int) -> Tuple[str, int, int]:
	"""The smallest switchable expression around the changed text [p, q)
	of @code (comments blanked): ('expr', a, b) for an operand of a call
	or a bracketed expression, the expression after 'return' or an
	assignment; ('stmt', a, b) for a whole statement (';' included) when
	there is no such expression; ('', 0, 0) when there is no statement."""
	p, q = balance(code, p, q)
	while True:
		# the innermost bracket before p that closes at or after q
		depth, i = 0, p - 1
		opener = -1
		semi = -1	# the nearest ';' before p: a statement's start, or inside for ( )
		while i >= 0:
			ch = code[i]
			if ch in ')]':
				depth += 1
			elif ch in '([':
				if depth == 0:
					c = _match(code, i)
					if c >= q:
						opener = i
						break
				else:
					depth -= 1
			elif ch == '{' and depth == 0 and code[:i].rstrip().endswith('='):
				# the braces of an initialiser: its fields are operands
				c = _match(code, i)
				if c >= q:
					opener = i
				break
			elif ch == ';' and depth == 0:
				if semi < 0:
					semi = i
			elif ch in '{}' and depth == 0:
				break
			i -= 1
		if opener < 0:
			if semi >= 0:
				i = semi
			break
		close = _match(code, opener)
		before = code[max(0, opener - 8):opener]
		seps = ',;' if re.search(r'\bfor\s*$', before) else ','
		for a, b in _pieces(code, opener + 1, close, seps):
			if a <= p and q <= b:
				if code[opener] == '{':
					d = re.match(r'\s*(\.\w+|\[[^]]*\])\s*=', code[a:b])
					if not d or a + d.end() > p:
						return '', 0, 0
					a += d.end()
				a, b = _strip(code, a, b)
				if a < b:
					return 'expr', a, b
				break
		# the change spans several operands: the bracket as a whole
		p, q = opener, close + 1
	# the statement around it: from the previous ; { } to the next ;
	start = i + 1
	end = q
	depth = 0
	while end < len(code):
		ch = code[end]
		if ch in '([{':
			depth += 1
		elif ch in ')]}':
			depth -= 1
			if depth < 0:
				return '', 0, 0
		elif ch == ';' and depth == 0:
			break
		end += 1
	if end >= len(code):
		return '', 0, 0
	# the expression after a top-level return or assignment before p
	depth, cut = 0, -1
	k = start
	while k < p:
		ch = code[k]
		if ch in '([{':
			depth += 1
		elif ch in ')]}':
			depth -= 1
		elif depth == 0:
			m = re.match(r'\breturn\b', code[k:p]) if (k == 0 or not (code[k - 1].isalnum() or
									 code[k - 1] == '_')) else None
			if m:
				cut = k + m.end()
				k = cut
				continue
			m = ASSIGN_RE.match(code, k)
			if m and m.end() <= p:
				cut = m.end()
				k = cut
				continue
		k += 1
	if cut >= 0:
		a, b = _strip(code, cut, end)
		if a < b:
			return 'expr', a, b
	a, b = _strip(code, start, end + 1)
	m = re.match(r'else\b\s*', code[a:b])
	if m:
		a += m.end()
	if re.match(r'(case\b|default\b|[A-Za-z_]\w*\s*:(?!:))', code[a:b]):
		return '', 0, 0		# a label in front: not one statement
	return 'stmt', a, b


def common_ends(src: str, new: str) -> Tuple[int, int]:
	"""The lengths of the start and of the end that @src and @new share
	(not overlapping): what lies between is the change."""
	p = 0
	while p < min(len(src), len(new)) and src[p] == new[p]:
		p += 1
	s = 0
	while s < min(len(src), len(new)) - p and src[-1 - s] == new[-1 - s]:
		s += 1
	return p, s


def plan(m, lines: List[str], code: List[str], funcs: List[Tuple[int, int]],
	 in_macro: List[bool], offs: List[int], codetext: str, mid: int
	 ) -> Tuple[List[Switch], str]:
	"""The switches of mutant @m (a mutate.Mutant) as mutant @mid, or
	([], why) when it cannot be switched."""
	if m.file.startswith(NO_SWITCH_DIRS):
		return [], 'a header under include/'
	for l in m.edits:
		if in_macro[l]:
			return [], 'a #define'
		func = next(((a, b) for a, b in funcs if a < l <= b), None)
		if func is None or initialiser(code, func[0]):
			return [], 'outside a function body'
	op = m.operator
	edits = m.edits
	if op == 'variant':
		return plan_variant(m, lines, offs, codetext, mid)
	if op in DEL_OPS:
		out = []
		for l in sorted(edits):
			c = code[l]
			a = len(c) - len(c.lstrip())
			semi = c.rfind(';')
			if semi < a:
				return [], 'no statement on the line'
			out.append(Switch(mid, offs[l] + a, offs[l] + semi + 1, 'stmt', ''))
		return out, ''
	if op == 'early-return':
		(l, new), = edits.items()
		# after a preprocessor line the line may go on an expression
		prev = next((code[k].strip() for k in range(l - 1, -1, -1)
			     if code[k].strip() and not code[k].lstrip().startswith('#')), ';')
		if not prev.endswith((';', '{', '}', ':')) or \
		   prev.endswith('{') and prev[:-1].rstrip().endswith('='):
			return [], 'not at the start of a statement'
		src = lines[l]
		ind = len(src) - len(src.lstrip())
		if not new.endswith(src[ind:]):
			return [], 'unexpected early return'
		ret = new[ind:len(new) - len(src[ind:])].strip()
		return [Switch(mid, offs[l] + ind, offs[l] + ind, 'insert', ret)], ''
	if op == 'swap-next':
		# each of the two statements switched to the other one (neither
		# declares anything): two places, so that the swap of the next
		# pair does not cross this one
		l = min(edits)
		stmts = []
		for k in (l, l + 1):
			c = code[k]
			a = len(c) - len(c.lstrip())
			semi = c.rfind(';')
			stmts.append((offs[k] + a, offs[k] + semi + 1, lines[k][a:semi + 1]))
		(a0, b0, t0), (a1, b1, t1) = stmts
		return [Switch(mid, a0, b0, 'stmt', t1), Switch(mid, a1, b1, 'stmt', t0)], ''
	if op in COND_OPS:
		la = min(edits)
		new = edits[la]
		for cm in re.finditer(r'\b(if|while)\s*\(', code[la]):
			o = cm.end() - 1
			c = _match(codetext, offs[la] + o)
			if c < 0:
				continue
			lb = max(k for k in range(len(offs)) if offs[k] <= c)
			cb = c - offs[lb]
			tail = lines[lb][cb:]
			if not (new.startswith(lines[la][:o + 1]) and new.endswith(tail)):
				continue
			if set(edits) != set(range(la, lb + 1)) or any(edits[k] for k in range(la + 1, lb + 1)):
				continue
			mut = new[o + 1:len(new) - len(tail)]
			return [Switch(mid, offs[la] + o + 1, c, 'expr', mut)], ''
		return [], 'condition not found'
	if op in EXPR_OPS and len(edits) == 1:
		(l, new), = edits.items()
		src = lines[l]
		p, s = common_ends(src, new)
		kind, a, b = segment(codetext, offs[l] + p, offs[l] + len(src) - s)
		if not kind:
			return [], 'no expression or statement around the change'
		delta = len(new) - len(src)
		mutated = '\n'.join(lines[:l] + [new] + lines[l + 1:])
		# the mutated text on one line, so that no line of the file moves
		return [Switch(mid, a, b, kind, re.sub(r'\n\s*', ' ', mutated[a:b + delta]))], ''
	return [], f'operator {op} not switched'


def plan_variant(m, lines: List[str], offs: List[int], codetext: str, mid: int
		 ) -> Tuple[List[Switch], str]:
	"""The switches of a variant (a patch of patches/variants/ as line
	edits): each run of changed lines switches the smallest expression or
	the statements around it, as an expression mutant's single line does."""
	text = '\n'.join(lines)
	runs: List[List[int]] = []
	for l in sorted(m.edits):
		if runs and l == runs[-1][1] + 1:
			runs[-1][1] = l
		else:
			runs.append([l, l])
	out: List[Switch] = []
	for la, lb in runs:
		src = '\n'.join(lines[la:lb + 1])
		new = '\n'.join(m.edits.get(k, lines[k]) for k in range(la, lb + 1))
		p, s = common_ends(src, new)
		pp, qq = offs[la] + p, offs[la] + len(src) - s
		while qq > pp and codetext[qq - 1].isspace():
			qq -= 1
		if qq > pp and codetext[qq - 1] == '}':
			return [], 'a block changed'
		if qq > pp and codetext[qq - 1] == ';':
			qq -= 1		# the statement it ends, not the next one
		kind, a, b = segment(codetext, pp, qq)
		if not kind:
			return [], 'no expression or statement around the change'
		lo, hi = min(a, pp), max(b, qq)
		if text[lo:a].strip() or text[b:hi].strip():
			return [], 'the change is not inside one expression or statement'
		mutated = text[:offs[la]] + new + text[offs[la] + len(src):]
		repl = re.sub(r'\s*\n\s*', ' ', mutated[lo:len(mutated) - (len(text) - hi)]).strip()
		if kind == 'expr' and not repl:
			return [], 'an expression deleted'
		out.append(Switch(mid, a, b, kind, repl))
	out.sort(key=lambda w: w.start)
	if any(x.end > y.start for x, y in zip(out, out[1:])):
		return [], 'its changes share a statement'
	return out, ''


def initialiser(code: List[str], l: int) -> bool:
	"""The '{' that opens a depth-0 block at line @l is a global's
	initialiser (an '=' before it), not a function body."""
	before = code[l].split('{', 1)[0]
	k = l
	while not before.strip() and k > 0:
		k -= 1
		before = code[k]
	return before.rstrip().endswith('=')


@dataclass
class _Node:
	start: int
	end: int
	kind: str
	switches: List[Switch]
	children: List['_Node'] = field(default_factory=list)


def render(text: str, switches: List[Switch]) -> Tuple[str, Set[int]]:
	"""@text with every switch written in; the ids left out because their
	place crosses another one's (those keep their own build)."""
	groups: Dict[Tuple[int, int, str], List[Switch]] = {}
	for s in switches:
		groups.setdefault((s.start, s.end, 'insert' if s.kind == 'insert' else
				   ('stmt' if s.kind == 'stmt' else 'expr')), []).append(s)
	nodes = [_Node(a, b, k, sorted(v, key=lambda s: s.id)) for (a, b, k), v in groups.items()]
	nodes.sort(key=lambda n: (n.start, 0 if n.kind == 'insert' else 1, -n.end))
	dropped: Set[int] = set()
	roots: List[_Node] = []
	stack: List[_Node] = []
	for n in nodes:
		while stack and (n.start >= stack[-1].end or n.kind == 'insert' and
				 n.start == stack[-1].start):
			stack.pop()
		if stack and n.end > stack[-1].end:
			dropped.update(s.id for s in n.switches)
			continue
		(stack[-1].children if stack else roots).append(n)
		if n.kind != 'insert':
			stack.append(n)
	# a mutant dropped anywhere is dropped everywhere (a lock pair)
	if dropped:
		kept = [s for s in switches if s.id not in dropped]
		if len(kept) < len(switches):
			out, more = render(text, kept)
			return out, dropped | more

	def emit(children: List[_Node], lo: int, hi: int) -> str:
		out, pos = [], lo
		for n in children:
			out.append(text[pos:n.start])
			out.append(wrap(n, emit(n.children, n.start, n.end)))
			pos = n.end
		out.append(text[pos:hi])
		return ''.join(out)

	def wrap(n: _Node, orig: str) -> str:
		if n.kind == 'insert':
			# braced: no -Wmisleading-indentation for the statement after it
			return ''.join(f'if (mm_mutant_on({s.id})) {{ {s.text} }} ' for s in n.switches)
		if n.kind == 'expr':
			return '(' + ''.join(f'mm_mutant_on({s.id}) ? ({s.text}) : '
					     for s in n.switches) + f'({orig}))'
		return '{ ' + ''.join(f'if (mm_mutant_on({s.id})) {{ {s.text} }} else '
				      for s in n.switches) + f'{{ {orig} }} }}'
	return emit(roots, 0, len(text)), dropped


def switched_file(text: str, switches: List[Switch]) -> Tuple[str, Set[int]]:
	"""The file with the switches and the include of the switch's header
	(one line more at the top)."""
	body, dropped = render(text, switches)
	return HEADER + '\n' + body, dropped


def switch_lines(text: str, switches: List[Switch]) -> Dict[int, Tuple[int, int]]:
	"""Per id, the lines (1-based, in the switched file: one more than in
	@text) its switches cover."""
	out: Dict[int, Tuple[int, int]] = {}
	for s in switches:
		a = text.count('\n', 0, s.start) + 2
		b = text.count('\n', 0, s.end) + 2
		lo, hi = out.get(s.id, (a, b))
		out[s.id] = (min(lo, a), max(hi, b))
	return out


def error_ids(log_text: str, files: Dict[str, Dict[int, Tuple[int, int]]]) -> Tuple[Set[int], bool]:
	"""The ids whose switch a compiler error points into, and whether some
	error points elsewhere (then the ids cannot be told)."""
	ids: Set[int] = set()
	other = False
	for m in re.finditer(r'^(?:\S*/)?((?:mm|fs|include|lib)/\S+?):(\d+):(?:\d+:)? (?:fatal )?error:',
			     log_text, re.M):
		path, line = m.group(1), int(m.group(2))
		hit = [i for i, (a, b) in files.get(path, {}).items() if a <= line <= b]
		if hit:
			ids.update(hit)
		else:
			other = True
	return ids, other


# ------------------------------------------------------------ reach

# "SUITE.CASE" after a case, "SUITE" after a suite's init and at its end
REACH_RE = re.compile(r'mm_mutant: reached in (\w+)(?:\.(\w+))?: ([\d,]+)')


def parse_case_reach(log_lines: List[str]) -> Dict[int, Set[str]]:
	"""id -> where it ran, from a boot's kernel log (the lines the switch
	prints): "SUITE.CASE" during a case, "SUITE" during a suite's init or
	exit, or between suites (what no one case owns)."""
	out: Dict[int, Set[str]] = {}
	for line in log_lines:
		m = REACH_RE.search(line)
		if not m:
			continue
		where = m.group(1) + ('.' + m.group(2) if m.group(2) else '')
		for x in m.group(3).split(','):
			if x.isdigit():
				out.setdefault(int(x), set()).add(where)
	return out


def parse_reach(log_lines: List[str]) -> Dict[int, Set[str]]:
	"""id -> the suites during which it ran, from a boot's kernel log."""
	return {i: {w.split('.')[0] for w in ws} for i, ws in parse_case_reach(log_lines).items()}


def boot_only(log_lines: List[str]) -> Set[int]:
	"""The ids that ran only at boot (or in the first suite's init), from a
	kunit.py boot's kernel log: the switch prints what ran before the
	first suite together with that suite's init, in the first block of
	"in SUITE:" lines; an id seen in no later line ran nowhere else."""
	first: Set[int] = set()
	later: Set[int] = set()
	block = ''
	for line in log_lines:
		m = REACH_RE.search(line)
		if not m:
			continue
		ids = {int(x) for x in m.group(3).split(',') if x.isdigit()}
		if block is not None and not m.group(2) and block in ('', m.group(1)):
			block = m.group(1)
			first |= ids
		else:
			block = None
			later |= ids
	return first - later


def reach_order(log_lines: List[str]) -> List[str]:
	"""The suites of a boot's reach lines in the order they ran."""
	out: List[str] = []
	for line in log_lines:
		m = REACH_RE.search(line)
		if m and m.group(1) not in out:
			out.append(m.group(1))
	return out


def case_list(suites: List[str], where: Set[str]) -> List[str]:
	"""What a run of @suites keeps for a mutant that ran at @where
	(parse_case_reach()): a suite whose init, exit or surroundings ran it
	whole, else the cases of it that ran it."""
	out: List[str] = []
	for s in suites:
		cases = sorted(w for w in where if w.startswith(s + '.'))
		out += [s] if s in where or not cases else cases
	return out


def suite_glob(suites: Set[str]) -> str:
	"""A kunit.py filter glob that takes in @suites and as few others as
	it can (KUnit's filter takes one glob): the suite itself, else the
	longest common start and '*', '' (every suite) when there is none."""
	if len(suites) == 1:
		return next(iter(suites))
	prefix = os.path.commonprefix(sorted(suites))
	return prefix + '*' if prefix else ''


# ------------------------------------------------------------ tree changes

class Written:
	"""Files written into build/tree for the schemata build, put back
	(content and mtime: the series build directory sees no change) on exit,
	also on a signal; @journal names them for a run killed harder."""

	def __init__(self, tree_dir: str, journal: str, files: Dict[str, str]):
		self.tree = tree_dir
		self.journal = journal
		self.files = files
		self.saved: Dict[str, Optional[Tuple[bytes, float]]] = {}

	def __enter__(self):
		old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM,
								  signal.SIGHUP})
		try:
			for path in self.files:
				full = os.path.join(self.tree, path)
				if os.path.isfile(full):
					with open(full, 'rb') as f:
						self.saved[path] = (f.read(), os.stat(full).st_mtime)
				else:
					self.saved[path] = None
			os.makedirs(os.path.dirname(self.journal), exist_ok=True)
			with open(self.journal, 'w') as f:
				json.dump({'schemata': sorted(self.files),
					   'added': sorted(p for p, v in self.saved.items() if v is None)}, f)
			for path, text in self.files.items():
				full = os.path.join(self.tree, path)
				os.makedirs(os.path.dirname(full), exist_ok=True)
				with open(full, 'w') as f:
					f.write(text)
		finally:
			signal.pthread_sigmask(signal.SIG_SETMASK, old)
		return self

	def __exit__(self, *exc):
		old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM,
								  signal.SIGHUP})
		try:
			for path, saved in self.saved.items():
				full = os.path.join(self.tree, path)
				if saved is None:
					if os.path.exists(full):
						os.unlink(full)
					continue
				with open(full, 'wb') as f:
					f.write(saved[0])
				os.utime(full, (saved[1], saved[1]))
			if os.path.exists(self.journal):
				os.unlink(self.journal)
		finally:
			signal.pthread_sigmask(signal.SIG_SETMASK, old)
		return False


def patch_files(patch_text: str, tree_dir: str) -> Dict[str, str]:
	"""The files of build/tree that @patch_text (a git format-patch of the
	switch) makes, with their text after it: git apply into a scratch
	index of the tree, then read back."""
	paths = re.findall(r'^diff --git a/\S+ b/(\S+)', patch_text, re.M)
	tmp = os.path.join(BUILD, 'mutate', 'switch-index')
	env = dict(os.environ, GIT_INDEX_FILE=tmp)
	if os.path.exists(tmp):
		os.unlink(tmp)
	os.makedirs(os.path.dirname(tmp), exist_ok=True)
	with open(tmp + '.patch', 'w') as f:
		f.write(patch_text)
	try:
		sh(['git', 'read-tree', 'HEAD'], cwd=tree_dir, env=env)
		sh(['git', 'apply', '--cached', tmp + '.patch'], cwd=tree_dir, env=env, capture=True)
		out = {}
		for p in paths:
			out[p] = sh(['git', 'show', ':' + p], cwd=tree_dir, env=env, capture=True).stdout
	finally:
		for t in (tmp, tmp + '.patch'):
			if os.path.exists(t):
				os.unlink(t)
	return out


def switch_patches() -> List[str]:
	if not os.path.isdir(SWITCH_DIR):
		return []
	return sorted(os.path.join(SWITCH_DIR, n) for n in os.listdir(SWITCH_DIR)
		      if n.endswith('.patch'))


def recover(tree_dir: str, journal: str, git) -> None:
	"""After a run killed hard: the schemata files back as HEAD has them."""
	if not os.path.isfile(journal):
		return
	try:
		with open(journal) as f:
			rec = json.load(f)
	except (OSError, ValueError):
		os.unlink(journal)
		return
	added = set(rec.get('added', []))
	for path in rec.get('schemata', []):
		if path in added:
			full = os.path.join(tree_dir, path)
			if os.path.exists(full):
				os.unlink(full)
		else:
			git(['checkout', 'HEAD', '--', path])
	os.unlink(journal)


# ------------------------------------------------------------ cache

def sha(*parts: str) -> str:
	h = hashlib.sha256()
	for p in parts:
		h.update(p.encode(errors='replace') + b'\0')
	return h.hexdigest()


SUITE_NAME_RE = re.compile(r'struct\s+kunit_suite\s+\w+\s*=\s*\{\s*\.name\s*=\s*"(\w+)"')


def suite_hashes(tests_dir: str, extra: str = '') -> Dict[str, str]:
	"""Suite name -> a hash of its source: its own file, the shared
	helpers of @tests_dir (headers, *_helpers.c, Kconfig, Makefile) and
	@extra (the text of the test hooks' patches)."""
	shared, own = [], {}
	for n in sorted(os.listdir(tests_dir)):
		full = os.path.join(tests_dir, n)
		if not os.path.isfile(full):
			continue
		with open(full, errors='replace') as f:
			text = f.read()
		names = SUITE_NAME_RE.findall(text)
		if names:
			for s in names:
				own[s] = text
		else:
			shared.append(n + '\0' + text)
	common = sha(extra, *shared)
	return {s: sha(common, t) for s, t in own.items()}


class Cache:
	"""build/mutate/cache.json: mutant key -> its result and what it ran
	against (the suites that reached it and their hashes)."""

	def __init__(self, path: str):
		self.path = path
		self.data: Dict[str, dict] = {}
		try:
			with open(path) as f:
				d = json.load(f)
			if d.get('format') == CACHE_FORMAT:
				self.data = d['entries']
		except (OSError, ValueError, KeyError):
			pass

	def get(self, key: str) -> Optional[dict]:
		return self.data.get(key)

	def put(self, key: str, entry: dict) -> None:
		self.data[key] = entry

	def save(self) -> None:
		os.makedirs(os.path.dirname(self.path), exist_ok=True)
		tmp = self.path + '.tmp'
		with open(tmp, 'w') as f:
			json.dump({'format': CACHE_FORMAT, 'entries': self.data}, f, indent=0)
		os.replace(tmp, self.path)


def mutant_key(env: str, patch_text: str, m, lines: List[str]) -> str:
	"""A mutant's key: its patch's text, its file and place, its edits and
	three lines of context around them, and @env (the configs, the base
	tree, the switch, the mode, SUITE)."""
	lo = max(0, min(m.edits) - 3)
	hi = min(len(lines), max(m.edits) + 4)
	return sha(env, patch_text, m.file, m.operator, json.dumps(m.edits, sort_keys=True),
		   '\n'.join(lines[lo:hi]))


def reusable(entry: Optional[dict], suites_now: Dict[str, str],
	     reach_now: Optional[Set[str]]) -> bool:
	"""Whether a cached @entry still holds: without a reach (nothing
	booted yet, or a mutant of its own build) every suite must be as it
	was; with one, the suites that reach the mutant now must be those
	that reached it then, each unchanged."""
	if not entry:
		return False
	then = entry.get('suites', {})
	if reach_now is None or entry.get('reach') is None:
		return then == suites_now
	if killed_still(entry, suites_now, reach_now):
		return True
	if set(entry['reach']) != set(reach_now):
		return False
	# a suite whose source is not under mm/tests (hash '') counts as unchanged
	return all(then.get(s, '') == suites_now.get(s, '') for s in reach_now)


def killed_still(entry: dict, suites_now: Dict[str, str], reach_now: Set[str]) -> bool:
	"""Whether a cached kill holds whatever else changed: its killer is a
	suite's case (not a splat or a hang, which any suite may have caused),
	and that suite still reaches the mutant and is unchanged.  A new or
	changed suite can add kills, never take that one away."""
	r = entry.get('result') or {}
	if r.get('status') != 'killed':
		return False
	suite = (r.get('killer') or '').split('.')[0]
	then = entry.get('suites', {})
	return bool(suite) and suite in reach_now and suite in then and \
		then[suite] == suites_now.get(suite)


# ------------------------------------------------------------ a whole file

def switch_file(mutants: list, lines: List[str], ids: Dict[str, int]
		) -> Tuple[Optional[str], Dict[int, Tuple[int, int]], Dict[str, str]]:
	"""The switched text of a file whose text after the series is @lines,
	with @mutants (of that file; mutate.Mutant) as the ids @ids name;
	the lines each id covers; and the mutants left to their own build,
	with why.  None when no mutant of the file could be switched."""
	from .mutate import code_only, functions
	code = code_only(lines)
	funcs = functions(code)
	in_macro = [False] * len(lines)
	cont = False
	for l, line in enumerate(code):
		in_macro[l] = cont or bool(re.match(r'#\s*define\b', line.strip()))
		cont = in_macro[l] and lines[l].rstrip().endswith('\\')
	offs = line_offsets(lines)
	text = '\n'.join(lines)
	codetext = '\n'.join(code)
	switches: List[Switch] = []
	own: Dict[str, str] = {}
	for m in mutants:
		sw, why = plan(m, lines, code, funcs, in_macro, offs, codetext, ids[m.name])
		if sw:
			switches += sw
		else:
			own[m.name] = why
	out, dropped = switched_file(text, switches)
	by_id = {ids[m.name]: m.name for m in mutants}
	for i in dropped:
		own[by_id[i]] = 'its place crosses another mutant\'s'
	kept = [s for s in switches if s.id not in dropped]
	if not kept:
		return None, {}, own
	return out, switch_lines(text, kept), own


# ------------------------------------------------------------ building and booting

class SchemataRunner:
	"""The switched tree: written into build/tree only while it builds, in
	a build directory of its own (build/out/mutate-schemata, first copied
	from the series one so that only the switched files, the switch and
	the link are redone); boots with mm_mutant=ID."""

	def __init__(self, base, mutants: list, texts: Dict[str, List[str]], ids: Dict[str, int]):
		from . import stages, tree
		self.base = base		# the mutate.Runner: jobs, configs, judging, timeouts
		self.tree_dir = tree.TREE
		self.build_dir = os.path.join(BUILD, 'out', 'mutate-schemata')
		self.series_dir = stages.out_dir('series')
		self.stage_dir = os.path.join(BUILD, 'out', 'mutate-schemata-boot')
		self.journal = os.path.join(BUILD, 'mutate', 'schemata.json')
		self.ids = ids
		self.own: Dict[str, str] = {}		# mutant -> why it has its own build
		self.files: Dict[str, str] = {}		# path -> switched text
		self.lines: Dict[str, Dict[int, Tuple[int, int]]] = {}
		self.mutants = {m.name: m for m in mutants}
		self.reach: Dict[int, Set[str]] = {}
		self.boot_only: Set[int] = set()	# ids that ran only at boot
		# id -> "SUITE.CASE" / "SUITE" where it ran (parse_case_reach())
		self.case_reach: Dict[int, Set[str]] = {}
		self.suite_order: List[str] = []	# the suites of the baseline in run order
		self.race_reach: Dict[int, Set[str]] = {}
		self.base_fail: Set[str] = set()
		self.base_pass: Set[str] = set()
		self.base_race_fail: Optional[Set[str]] = None
		self.base_seconds = 0.0			# the baseline boot's guest time
		self.switch_text = ''
		for p in switch_patches():
			with open(p) as f:
				self.switch_text += f.read()
		by_file: Dict[str, list] = {}
		for m in mutants:
			by_file.setdefault(m.file, []).append(m)
		for path, ms in by_file.items():
			text, lines, own = switch_file(ms, texts[path], ids)
			self.own.update(own)
			if text is not None:
				self.files[path] = text
				self.lines[path] = lines
		self.texts = texts
		os.makedirs(self.stage_dir, exist_ok=True)

	def switched(self, name: str) -> bool:
		return name not in self.own

	def configs(self) -> List[str]:
		return self.base.configs + [SWITCH_CONFIG]

	def written(self) -> Dict[str, str]:
		out = patch_files(self.switch_text, self.tree_dir) if self.switch_text else {}
		out.update(self.files)
		return out

	def build(self, log) -> float:
		"""Build the switched tree; a mutant whose switch does not compile
		goes to its own build and the build is tried again."""
		from . import kernel
		if not os.path.isdir(self.build_dir) and os.path.isfile(
				os.path.join(self.series_dir, '.config')):
			shutil.copytree(self.series_dir, self.build_dir, symlinks=True)
		t0 = time.monotonic()
		for attempt in range(6):
			start = log.tell()
			try:
				with Written(self.tree_dir, self.journal, self.written()):
					# -k: every switch that does not compile in one build
					kernel.build('mutate', self.tree_dir, self.build_dir, self.configs(),
						     self.base.jobs, log, echo=False, make_options=['-k'])
				return time.monotonic() - t0
			except Error:
				log.flush()
				with open(log.name, errors='replace') as f:
					f.seek(start)
					text = f.read()
				bad, other = error_ids(text, self.lines)
				if other or not bad:
					raise Error('mutate: the switched tree does not build and the '
						    'errors are not in a mutant\'s switch; log: ' + rel(log.name))
				names = [n for n, i in self.ids.items() if i in bad and n in self.mutants]
				for n in names:
					self.own[n] = 'its switch does not compile'
				log.write(f'mutate: switches that do not compile: {", ".join(names)}\n')
				self._refresh()
		raise Error('mutate: the switched tree still does not build after 6 tries')

	def _refresh(self) -> None:
		by_file: Dict[str, list] = {}
		for m in self.mutants.values():
			if m.name not in self.own:
				by_file.setdefault(m.file, []).append(m)
		self.files, self.lines = {}, {}
		for path, ms in by_file.items():
			text, lines, own = switch_file(ms, self.texts[path], self.ids)
			self.own.update(own)
			if text is not None:
				self.files[path] = text
				self.lines[path] = lines

	def boot(self, races: bool, active: int, log, glob: str = '', whole: bool = False):
		"""kunit.py exec of the switched kernel with mutant @active (0: none,
		but recording); (judged cases, guest seconds, the boot).  A
		mutant's functional suites are hung when kunit.py says nothing
		for OWN_TIMES the baseline boot's time (OWN_FLOOR s at least),
		sooner than the mutant timeout; a splat stops the guest.  @whole
		(a variant: every case it fails is named): neither."""
		from . import judge, kernel, stages
		base = self.base
		extra = (['--filter=speed=slow', glob or stages.RACE_GLOB] if races
			 else ['--filter=speed>slow'] + ([glob] if glob else
							  ([base.glob] if base.glob else [])))
		extra.append(f'--kernel_args=mm_mutant={active}')
		if races:
			extra += base.race_args()
		timeout = (base.race_timeout if races else base.timeout) or 600
		stall = 0
		if active > 0 and not whole and not races and getattr(self, 'base_seconds', 0.0):
			# silence, not the boot's length: a guest still printing
			# is not hung, however loaded the host
			stall = int(min(timeout, max(OWN_FLOOR, OWN_TIMES * self.base_seconds)))
		fails = self.base_race_fail if races else self.base_fail
		b = kernel.boot('mutate', self.tree_dir, self.build_dir, self.stage_dir, self.configs(),
				extra, timeout, log, echo=False,
				stop_on=kernel.is_splat_line if active > 0 and not whole and
				'guest.splat' not in (fails or ()) else None, stall=stall)
		results = judge.read_results(b.json_path)
		cases = judge.judge_cases(results, base.groups, base.expected)
		cases += judge.judge_guest(b.log_lines, results, b.result.timed_out,
					   stall if b.result.stalled else timeout)
		return cases, b.result.seconds, b

	def baseline(self, races: bool, log) -> Tuple[float, float]:
		"""The switched kernel with no mutant active (mm_mutant=0): what
		fails there kills no mutant; which suites reach which ids."""
		base = self.base
		cases, g, b = self.boot(False, 0, log)
		self.base_seconds = g
		self.base_fail = set(base.failed(cases))
		# what passes at boot: a boot of several must not find it skipped
		self.base_pass = {c['name'] for c in cases if c['verdict'] == 'pass'}
		self.reach = parse_reach(b.log_lines)
		self.case_reach = parse_case_reach(b.log_lines)
		self.suite_order = reach_order(b.log_lines)
		# every suite of the boot, those no switch ran in too, in run order
		ran = [c['name'].split('.')[0] for c in cases if not c['name'].startswith('guest.')]
		every = list(dict.fromkeys(ran))
		self.suite_order += [x for x in every if x not in self.suite_order]
		# code that ran only at boot can change what any suite sees: a
		# boot of its own (mutant active from the start), every suite
		self.boot_only = boot_only(b.log_lines)
		for i in self.boot_only:
			self.reach[i] = set(every) | self.reach.get(i, set())
			self.case_reach[i] = set(self.reach[i])
		if not base.timeout:
			base.timeout = int(min(300, max(120, 5 * g)))
			base.race_timeout = int(max(300, 3 * g))
		rg = 0.0
		if races:
			cases, rg, b = self.boot(True, 0, log)
			self.base_race_fail = set(base.failed(cases))
			self.base_pass |= {c['name'] for c in cases if c['verdict'] == 'pass'}
			self.race_reach = parse_reach(b.log_lines)
		return g, rg

	def run(self, m, log):
		"""Mutant @m booted with its switch on, in the suites that reach it."""
		from .mutate import Outcome
		base = self.base
		i = self.ids[m.name]
		o = Outcome('survived')
		fun = self.reach.get(i, set())
		race = self.race_reach.get(i, set()) if m.races else set()
		if not fun and not race:
			o.status = 'not reached'
			o.reason = 'no case runs it'
			return o
		kills: Dict[str, str] = {}
		if fun:
			glob = '' if base.glob else suite_glob(fun)
			whole = bool(getattr(m, 'alt', ''))
			cases, o.guest_seconds, b = self.boot(False, i, log, glob, whole)
			# a boot silent past its limit hung (guest.stopped kills it);
			# one that ended with no case may have failed for another cause
			if not any(not c['name'].startswith('guest.') for c in cases) and \
			   not b.result.stalled:
				log.write('mutate: no case ran; booting again\n')
				cases, again, _b = self.boot(False, i, log, glob, whole)
				o.guest_seconds += again
				o.reboots = 1
			kills = {k: v for k, v in base.failed(cases).items() if k not in self.base_fail}
		return self.conclude(m, o, kills, log)

	def conclude(self, m, o, kills: Dict[str, str], log, races_done: bool = False):
		"""Outcome @o of mutant @m from @kills, the new failures of its
		functional suites (and of its race suites when @races_done: a boot
		of several ran them): when there are none and it is a mutant for the
		race suites that they reach, the race suites boot too."""
		base = self.base
		i = self.ids[m.name]
		race = self.race_reach.get(i, set())
		if self.race_boot_needed(m, kills, races_done):
			# the one race suite that reaches it, or all of them
			cases, o.races_seconds, _b = self.boot(True, i, log,
							       next(iter(race)) if len(race) == 1 else '',
							       bool(getattr(m, 'alt', '')))
			kills = {k: v for k, v in base.failed(cases).items()
				 if k not in self.base_race_fail}
		if kills:
			o.status = 'killed'
			o.killer = base.killer(kills)
			o.reason = kills[o.killer]
			o.killers = sorted(kills)[:20]
		return o

	def race_boot_needed(self, m, kills: Dict[str, str], races_done: bool = False) -> bool:
		"""Whether conclude() boots the race suites of mutant @m: nothing
		killed it, they reach it, did not run yet (@races_done) and have a
		baseline."""
		return bool(not kills and m.races and not races_done and self.base_race_fail is not None
			    and self.race_reach.get(self.ids[m.name]))

	def cases_of(self, m, suites: List[str]) -> List[str]:
		"""What a boot of several keeps of @suites for mutant @m
		(case_list()): the functional cases that reached it; its race
		suites, which have no case lines in the functional baseline, whole
		(which race case reaches a line depends on timing)."""
		return case_list(suites, self.case_reach.get(self.ids[m.name], set()))

	def reach_key(self, m) -> Set[str]:
		"""What a cached result of @m depends on: the suites that reach it
		and, where a boot of several keeps only some cases, those cases (its
		race suites always run whole)."""
		return self.reach_of(m) | self.case_reach.get(self.ids[m.name], set())

	def reach_of(self, m) -> Set[str]:
		"""The suites that reach mutant @m: functional, and the race ones
		when it is a mutant the race suites may kill."""
		i = self.ids[m.name]
		return self.reach.get(i, set()) | (self.race_reach.get(i, set()) if m.races else set())
