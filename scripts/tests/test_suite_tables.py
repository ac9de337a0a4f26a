# SPDX-License-Identifier: GPL-2.0
"""Host tests of the suites' shape: each suite has one case table, with no
#if around its entries and no second table for kernels without the
feature (a missing feature or hook is a skip inside the case), and every
case in it is named in the docs, so that adding a case is one function,
one table line and one docs line."""

import glob
import os
import re
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def suites():
	"""(file, suite name, case table name, [case names]) of mm/tests."""
	out = []
	for path in sorted(glob.glob(os.path.join(REPO, 'mm/tests/*.c'))):
		with open(path) as f:
			src = f.read()
		tables = {m.group(1): m.group(2) for m in re.finditer(
			r'static struct kunit_case (\w+)\[\] = \{(.*?)\n\};', src, re.S)}
		for m in re.finditer(r'static struct kunit_suite \w+ = \{(.*?)\n\};', src, re.S):
			body = m.group(1)
			name = re.search(r'\.name\s*=\s*"(\w+)"', body).group(1)
			table = re.search(r'\.test_cases\s*=\s*(\w+)', body).group(1)
			cases = re.findall(r'KUNIT_CASE\w*\(\s*(\w+)', tables.get(table, ''))
			out.append((os.path.relpath(path, REPO), name, table, tables.get(table), cases))
	return out


def docs_text():
	text = ''
	for p in glob.glob(os.path.join(REPO, 'docs/*.rst')):
		with open(p) as f:
			text += f.read()
	return text


class TestSuiteTables(unittest.TestCase):
	def test_found_the_suites(self):
		names = [s[1] for s in suites()]
		for want in ('lazyfree_thp', 'shmem_read', 'filemap_batch'):
			self.assertIn(want, names)
		self.assertGreaterEqual(len(names), 8)

	def test_one_table_per_suite_without_conditionals(self):
		for path, name, table, body, cases in suites():
			self.assertIsNotNone(body, f'{path}: suite {name}: no table {table}')
			self.assertNotIn('#if', body, f'{path}: {table} has #if around its cases')
			self.assertTrue(cases, f'{path}: {table} is empty')
			with open(os.path.join(REPO, path)) as f:
				src = f.read()
			n = len(re.findall(r'static struct kunit_case \w+\[\] = \{', src))
			nsuites = len(re.findall(r'static struct kunit_suite \w+ = \{', src))
			self.assertEqual(n, nsuites, f'{path}: {n} case tables for {nsuites} suites')

	def test_every_case_named_in_the_docs(self):
		docs = docs_text()
		missing = []
		for path, name, _table, _body, cases in suites():
			for c in cases:
				# docs tables drop the part the case shares with its suite
				common = os.path.commonprefix([c, name + '_'])
				short = c[common.rfind('_') + 1:] if '_' in common else c
				if not re.search(r'\b(%s|%s)\b' % (re.escape(c), re.escape(short)), docs):
					missing.append(f'{name}.{c}')
		self.assertEqual(missing, [], 'cases no docs page names (add a line to '
				 'the suite\'s table in docs/)')


if __name__ == '__main__':
	unittest.main()
