#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""hook_coverage: how many behavioural assertions of the functional KUnit
suites still run when every test hook (mm/tests/mm_hooks.h) is absent.

  hook_coverage.py [--list] [--json] [PATH...]

A static count over mm/tests/*.c and *.h (or the PATHs): each use of
KUNIT_EXPECT_*, KUNIT_ASSERT_* and KUNIT_FAIL* outside the benchmarks
(*_benchmark.c, mm_bench.h, still read for calls) and mm_hooks.h is a site,
run or hook-only.  The rules are in docs/hooks.rst ("How much runs without
the hooks"); where unsure a site is hook-only.  --list says why for each.
"""

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from types import SimpleNamespace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = re.compile(r'KUNIT_(?:EXPECT|ASSERT)_\w+|KUNIT_FAIL\w*')
LEX = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
TOK = re.compile(r'"\.\.\."|\w+|->|&&|\|\||[=!<>]=|\S')
CHAIN = re.compile(r'\w+((->|\.)\w+)*')
HOOK_IF = re.compile(r'(!?)\s*(?:MM_HOOK\((\w+)\)|IS_ENABLED\(CONFIG_MM_KUNIT_HOOK_(\w+)\))')
OPEN, CLOSE = ('(', '[', '{'), (')', ']', '}')


def excluded(name):
	return name.endswith('_benchmark.c') or name in ('mm_bench.h', 'mm_hooks.h')


def word(t):
	return t[:1].isalpha() or t[:1] == '_'


def close(e, i):
	"""Index of the bracket that closes e[i] (e: token strings)"""
	depth = 0
	for j in range(i, len(e)):
		depth += (e[j] in OPEN) - (e[j] in CLOSE)
		if depth == 0:
			return j
	return len(e) - 1


def split(e, sep):
	parts, depth, s = [], 0, 0
	for j, t in enumerate(e):
		depth += (t in OPEN) - (t in CLOSE)
		if t == sep and depth == 0:
			parts, s = parts + [e[s:j]], j + 1
	return parts + [e[s:]]


def strip(e):
	while len(e) > 1 and e[0] == '(' and close(e, 0) == len(e) - 1:
		e = e[1:-1]
	return e


def show(e):
	s = ''
	for t in e:
		s += (' ' if s and word(s[-1]) and word(t) else '') + t
	return s.replace('&&', ' && ').replace('||', ' || ').replace(',', ', ')


def lex(text):
	"""Tokens (text, line); {line: why} inside #if MM_HOOK(); #define lines"""
	text = LEX.sub(lambda m: ' ' + '\n' * m.group().count('\n') if m.group()[0] == '/'
		       else '"..."', text)
	toks, hooked, defines, stack, cont = [], {}, [], [], None
	for n, line in enumerate(text.split('\n'), 1):
		m = re.match(r'\s*#\s*(\w+)(.*)', line)
		if cont or m:
			d = cont or m.group(1)
			if not cont and d in ('if', 'ifdef', 'ifndef'):
				h = HOOK_IF.search(m.group(2))
				stack.append([h and '#if %sMM_HOOK(%s)' % (h.group(1), h.group(2) or h.group(3)),
					      bool(h and h.group(1)), False])
			elif not cont and d in ('elif', 'else') and stack:
				stack[-1][2] = True
			elif not cont and d == 'endif' and stack:
				stack.pop()
			defines += [(n, line)] if d == 'define' else []
			cont, line = d if line.rstrip().endswith('\\') else None, ''
		active = [why + (', its #else' if neg else '') for why, neg, els in stack if why and neg == els]
		hooked.update({n: active[-1]} if active else {})
		toks += [(t, n) for t in TOK.findall(line)]
	return toks, hooked, defines


class Coverage:
	"""Each function is walked statement by statement, its sites and its
	references (calls, pointers) noted with the reason they are hook-only, if
	any; then what that teaches (functions that skip or return false without
	a hook, variables, fields and parameters false without one, functions
	used only from hook-only code) is used to walk again, until nothing new."""

	def __init__(self, files):
		self.files, self.funcs, self.scope_refs, self.suites = {}, {}, [], []
		for rel, text in files:
			self.files[rel] = lex(text)
			self.parse(rel)
		# requiring: functions that skip the case without a hook; preds:
		# that return false without one; fields: false without one
		self.requiring, self.preds, self.fields, self.hook_only, state = {}, {}, {}, {}, None
		while state != self.state():	# to a fixed point: every set only grows
			state, self.sites, self.refs = self.state(), [], list(self.scope_refs)
			for f in self.funcs.values():
				self.walk(f)
			self.settle()

	def state(self):
		return (len(self.requiring), len(self.preds), len(self.fields), len(self.hook_only),
			sum(len(f.vars) for f in self.funcs.values()))

	def parse(self, rel):
		"""Function definitions; references outside them (case arrays, ops)"""
		toks, _, defines = self.files[rel]
		e, i, start = [t for t, _ in toks], 0, 0
		ref = lambda k, scope=None: (e[k], None, f'{rel}:{toks[k][1]}', None, scope)
		self.scope_refs += [(w, None, f'{rel}:{n}', None, None) for n, line in defines
				    for w in TOK.findall(line)]
		while i < len(e):
			if e[i] == ';':
				start = i + 1
			elif e[i] == '{':
				j, decl = close(e, i), e[start:i]
				name = ([t for t in decl if word(t) and t not in ('const', 'static')] or [''])[-1]
				self.scope_refs += [ref(k, name) for k in range(i, j) if word(e[k])]
				val = {e[k - 1]: e[k + 1] for k in range(i, j) if e[k] == '='}
				if 'kunit_suite' in decl:
					self.suites.append((rel, [val.get('init'), val.get('suite_init')],
							    val.get('test_cases')))
				i = j
			elif word(e[i]) and e[i + 1:i + 2] == ['(']:
				j = close(e, i + 1)
				if e[j + 1:j + 2] != ['{']:
					self.scope_refs += [ref(k) for k in range(i + 2, j) if word(e[k])]
					i = j
				else:
					params = [p[-1] if p and word(p[-1]) else None for p in split(e[i + 2:j], ',')]
					key = (rel, e[i]) if 'static' in e[start:i] and rel.endswith('.c') else e[i]
					if key in self.funcs:
						# defined again (#if/#else): walked too, named
						# by the first definition
						key = (rel, e[i], toks[i][1])
					self.funcs[key] = SimpleNamespace(name=e[i], key=key, rel=rel, a=j + 2,
						b=close(e, j + 1), params=[] if params == ['void'] else params, vars={})
					i = start = self.funcs[key].b
			i += 1

	def resolve(self, name, rel):
		return (rel, name) if (rel, name) in self.funcs else name if name in self.funcs else None

	def hook(self, e, neg=False):
		"""The hook without which expression e is false (neg: true), or None"""
		e = strip(e)
		for sep, one in (('||', neg), ('&&', not neg)):	# one false (true) operand will do
			parts = split(e, sep)
			if len(parts) > 1:
				hooks = [self.hook(p, neg) for p in parts]
				return next(filter(None, hooks), None) if one else hooks[0] if all(hooks) else None
		if e[:1] == ['!'] or neg:
			return self.hook(e[1:]) if e[:1] == ['!'] and neg else None
		if len(e) > 2 and e[1] == '(' and close(e, 1) == len(e) - 1:
			args, key = split(e[2:-1], ','), self.resolve(e[0], self.f.rel)
			if e[0] == 'MM_HOOK' or e[0] == 'mm_hook' and len(args) > 1:
				return show(args[e[0] == 'mm_hook'])
			if e[0] == 'mm_hook_trace' and len(args) > 2:
				return 'tracepoint ' + show(args[2])
			if e[0] == 'IS_ENABLED' and show(args[0]).startswith('CONFIG_MM_KUNIT_HOOK_'):
				return show(args[0])[len('CONFIG_MM_KUNIT_HOOK_'):]
			return f'{e[0]}(): {self.preds[key]}' if key in self.preds else None
		path = re.split(r'->|\.', show(e))
		if CHAIN.fullmatch(show(e)):
			return self.f.vars.get(path[0]) if len(path) == 1 else self.fields.get(path[-1])
		return None

	def mark(self, lvalue, why):
		"""Variable or field lvalue is false without hook why"""
		path = re.split(r'->|\.', lvalue)
		if why and CHAIN.fullmatch(lvalue):
			(self.fields if len(path) > 1 else self.f.vars).setdefault(path[-1], why)

	def walk(self, f):
		self.f, self.rest, self.ret_seen = f, None, False
		self.toks, self.hooked, _ = self.files[f.rel]
		self.e = [t for t, _ in self.toks]
		self.stmt(f.a - 1, f.b + 1, self.hook_only.get(f.key))

	def end_of(self, i, end):
		depth = 0
		for j in range(i, end):
			depth += (self.e[j] in OPEN) - (self.e[j] in CLOSE)
			if depth < 0 or depth == 0 and self.e[j] == ';':
				return j
		return end

	def stmt(self, i, end, ctx):
		"""Walk the statement at i, ctx the reason it is hook-only; its end"""
		e, t = self.e, self.e[i]
		if t == '{':
			j = close(e, i)
			while i + 1 < j:
				i = self.stmt(i + 1, j, ctx) - 1
			return j + 1
		if t in ('case', 'default') or word(t) and e[i + 1] == ':':
			return e.index(':', i) + 1
		if t == 'do':
			k = self.stmt(i + 1, end, ctx)
			j = self.end_of(k, end)
			self.expr(k, j, ctx)
			return j + 1
		loop_macro = word(t) and e[i + 1] == '(' and e[close(e, i + 1) + 1] == '{'
		if t in ('if', 'while', 'for', 'switch') or loop_macro:
			j, seen = close(e, i + 1), self.ret_seen
			self.expr(i + 2, j, ctx)
			cond = e[i + 2:j]
			kind = t in ('if', 'while') and not (ctx or self.rest) and (
				self.hook(cond) and 'hook' or self.hook(cond, True) and 'neg')
			why = kind and f'if ({show(cond)}): ' + (self.hook(cond) or self.hook(cond, True))
			k = self.stmt(j + 1, end, ctx or kind == 'hook' and why or None)
			fallback = e[j + 1:k] if kind == 'neg' else []	# what runs without the hook
			if t == 'if' and k < end and e[k] == 'else':
				k2 = self.stmt(k + 1, end, ctx or kind == 'neg' and f'else of {why}' or None)
				fallback, k = e[k + 1:k2] if kind == 'hook' else fallback, k2
			out = [x for x in ('kunit_skip', 'return', 'goto', 'break', 'continue') if x in fallback]
			if out:		# the fallback leaves: the rest of the function needs the hook
				self.rest = f'after {why} ... {out[0]}'
				self.requiring.update({self.f.key: why} if out[0] == 'kunit_skip' else {})
				if kind == 'neg' and [t for t in fallback if t != '{'][:2] == ['return', 'false'] and not seen:
					self.preds.setdefault(self.f.key, why.split(': ', 1)[1])
			return k
		j = self.end_of(i, end)
		self.expr(i, j, ctx)
		for p in split(e[i:j], ','):	# assignments, initialisers
			k = p.index('=') if '=' in p else 0
			if k and word(p[k - 1]):
				self.mark(re.search(r'\w+((->|\.)\w+)*$', show(p[:k])).group(), self.hook(p[k + 1:]))
		return j + 1

	def expr(self, a, b, ctx):
		e, rel = self.e, self.f.rel
		for j in range(a, b):	# what skips the case: the rest is hook-only
			if ctx or self.rest or self.hooked.get(self.toks[j][1]) or e[j + 1] != '(':
				continue
			args, key = split(e[j + 2:close(e, j + 1)], ','), self.resolve(e[j], rel)
			if e[j] == 'MM_HOOK_REQUIRE':
				self.rest = f'after MM_HOOK_REQUIRE({show(args[-1])})'
			elif e[j] == 'kunit_skip' and any('MM_HOOK_ABSENT' in x for x in args):
				self.rest = f'after kunit_skip(MM_HOOK_ABSENT) at line {self.toks[j][1]}'
			elif key in self.requiring and key != self.f.key:
				self.rest = f'after {e[j]}(), which skips: {self.requiring[key]}'
			if self.rest:
				self.requiring.setdefault(self.f.key, self.rest)
		for j in range(a, b):
			(t, line), call = self.toks[j], e[j + 1] == '('
			why = ctx or self.rest or self.hooked.get(line)
			args = call and split(e[j + 2:close(e, j + 1)], ',')
			self.ret_seen |= t == 'return'
			if call and SITE.fullmatch(t):
				self.sites.append((rel, line, t, why))
			if t == 'mm_hook_trace' and call and len(args) > 2:	# its found flag
				self.mark(show(args[1]), 'tracepoint ' + show(args[2]))
			key = self.resolve(t, rel)
			if key and key != self.f.key and e[j - 1] not in ('.', '->'):
				self.refs.append((t, rel, f'{rel}:{line}', why, [self.hook(x) for x in args] if call else None))

	def settle(self):
		"""Functions used only from hook-only code; parameters always passed a hook"""
		inits = {(rel, c): [self.resolve(n, rel) for n in ns] for rel, ns, c in self.suites}
		refs = defaultdict(list)
		for name, rel, where, why, args in self.refs:
			rel = rel or where.rsplit(':', 1)[0]
			if isinstance(args, str):	# in an array: a suite's cases?
				init = next((k for k in inits.get((rel, args), []) if k in self.requiring), None)
				init = init and f'suite init {self.funcs[init].name}() skips: {self.requiring[init]}'
				why, args = why or init, None
			refs[self.resolve(name, rel)].append((where, why, args))
		for key, f in self.funcs.items():
			rs = refs.get(key, [])
			if rs and all(why for _, why, _ in rs):
				self.hook_only.setdefault(key, f'{f.name}() used only in hook-only code '
							  f'({rs[0][0]}: {rs[0][1]})')
			calls = [args for _, why, args in rs if not why]
			for n, p in enumerate(f.params if calls and None not in calls else []):
				hooks = [args[n] if n < len(args) else None for args in calls]
				if p and all(hooks):
					f.vars.setdefault(p, hooks[0])


def sources(paths):
	for p in paths:
		for n in sorted(os.listdir(p)) if os.path.isdir(p) else [os.path.basename(p)]:
			if n.endswith(('.c', '.h')) and n != 'mm_hooks.h':
				with open(os.path.join(p, n) if os.path.isdir(p) else p) as fh:
					yield n, fh.read()


def count(paths):
	cov = Coverage(list(sources(paths)))
	sites = [s for s in cov.sites if not excluded(s[0])]
	sites += [(rel, n, m, 'in a #define (not analysed)') for rel, (_, _, defines) in cov.files.items()
		  if not excluded(rel) for n, line in defines
		  for m in re.findall(r'\b(%s)\s*\(' % SITE.pattern, line)]
	files = defaultdict(lambda: {'sites': 0, 'run': 0, 'hook_only': 0})
	for rel, _, _, why in sites:
		files[rel]['sites'] += 1
		files[rel]['hook_only' if why else 'run'] += 1
	run = sum(f['run'] for f in files.values())
	return {'files': dict(sorted(files.items())), 'sites': len(sites), 'run': run,
		'hook_only': len(sites) - run, 'percent': round(100.0 * run / len(sites), 1) if sites else 0.0,
		'hook_only_sites': [{'file': rel, 'line': n, 'macro': m, 'reason': why}
				    for rel, n, m, why in sorted(sites, key=lambda s: s[:3]) if why]}


def main(argv=None):
	ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
	ap.add_argument('paths', nargs='*', default=[os.path.join(REPO, 'mm', 'tests')])
	ap.add_argument('--list', action='store_true', help='every hook-only site and why')
	ap.add_argument('--json', action='store_true', help='the counts and the list as JSON')
	args = ap.parse_args(argv)
	r = count(args.paths)
	if args.json:
		print(json.dumps(r, indent=1))
		return 0
	print(f'{"file":32} {"sites":>6} {"run":>6} {"hook-only":>10}')
	for rel, f in list(r['files'].items()) + [('total', r)]:
		print(f'{rel:32} {f["sites"]:6} {f["run"]:6} {f["hook_only"]:10}')
	print(f'{r["run"]} of {r["sites"]} assertion sites ({r["percent"]} %) run without the test hooks')
	for s in r['hook_only_sites'] if args.list else []:
		print(f'{s["file"]}:{s["line"]}: {s["macro"]} (reason: {s["reason"]})')
	return 0


if __name__ == '__main__':
	sys.exit(main())
