# SPDX-License-Identifier: GPL-2.0
"""The checkpatch gate's one exception (stages.excuse_trace_event_style()):
CHECK:OPEN_ENDED_LINE and CHECK:PARENTHESIS_ALIGNMENT on the lines of a
patch that change a file under include/trace/events/ are excused, nothing
else.  The checkpatch output here is canned: what 7.3's
scripts/checkpatch.pl --strict --no-tree --terse --no-summary --show-types
printed for these very patches; a fake checkpatch.pl replays it where the
gate itself runs."""

import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from mmkunit import stages, tree  # noqa: E402

MAIL = '''From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <author@example.com>
Date: Mon, 1 Jan 2024 00:00:00 +0000
Subject: [PATCH] mm: add a tracepoint

Add a tracepoint.

Signed-off-by: A U Thor <author@example.com>
---
'''

# Lines 10-39 of a patch, its hunk 15-39; the TRACE_EVENT() block is 17-35.
TRACE_HUNK = '''diff --git a/include/trace/events/x.h b/include/trace/events/x.h
index 1111111..2222222 100644
--- a/include/trace/events/x.h
+++ b/include/trace/events/x.h
@@ -10,5 +10,25 @@ TRACE_EVENT(x_old,
 );

+TRACE_EVENT(x_new,
+
+	TP_PROTO(struct address_space *mapping, pgoff_t index, size_t bytes),
+
+	TP_ARGS(mapping, index, bytes),
+
+	TP_STRUCT__entry(
+		__field(unsigned long, index)
+		__field(size_t, bytes)
+	),
+
+	TP_fast_assign(
+		__entry->index = index;
+		__entry->bytes = bytes;
+	),
+
+	TP_printk("ofs=%lu bytes=%zu",
+		__entry->index << PAGE_SHIFT, __entry->bytes)
+);
+
 #endif /* _TRACE_X_H */

 /* This part must be outside protection */
'''

# Lines 40-52 after TRACE_HUNK, its hunk 45-52; line 48 ends in '('.
FOO_HUNK = '''diff --git a/mm/foo.c b/mm/foo.c
index 3333333..4444444 100644
--- a/mm/foo.c
+++ b/mm/foo.c
@@ -20,6 +20,8 @@ static void foo(void)
 {
 	int a = 0;

+	trace_x_new(
+		NULL, 0, a);
 	bar(a);
 }

'''

SIGNATURE = '--\n2.43.0\n'

TRACE_PATCH = MAIL + TRACE_HUNK + SIGNATURE
FOO_PATCH = MAIL + TRACE_HUNK + FOO_HUNK + SIGNATURE
# A trailing blank on line 30, inside the TRACE_EVENT() block.
OTHER_PATCH = MAIL + TRACE_HUNK.replace('\t__entry->bytes = bytes;\n',
					'\t__entry->bytes = bytes; \n') + SIGNATURE

STYLE = '''{path}:18: CHECK:PARENTHESIS_ALIGNMENT: Alignment should match open parenthesis
{path}:23: CHECK:OPEN_ENDED_LINE: Lines should not end with a '('
{path}:28: CHECK:OPEN_ENDED_LINE: Lines should not end with a '('
{path}:34: CHECK:PARENTHESIS_ALIGNMENT: Alignment should match open parenthesis'''
FOO_FINDING = "{path}:48: CHECK:OPEN_ENDED_LINE: Lines should not end with a '('"
OTHER_FINDING = '{path}:30: ERROR:TRAILING_WHITESPACE: trailing whitespace'

# checkpatch's output for each patch, in its order
OUTPUT = {
	'trace': STYLE,
	'foo': STYLE + '\n' + FOO_FINDING,
	'other': '\n'.join(STYLE.splitlines()[:3] + [OTHER_FINDING] + STYLE.splitlines()[3:]),
}

# Replays OUTPUT[<patch name>] for the patch it is given, exits 1 as
# checkpatch does on a CHECK.
FAKE_CHECKPATCH = '''my $p = $ARGV[-1];
my ($name) = $p =~ m{([a-z]+)\\.[a-z]+$};
my %out = (
%s
);
my $t = $out{$name};
$t =~ s/\\{path\\}/$p/g;
print "$t\\n";
exit 1;
'''


class TestTraceEventStyle(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		self.paths = {}
		for name, text in (('trace', TRACE_PATCH), ('foo', FOO_PATCH),
				   ('other', OTHER_PATCH)):
			self.paths[name] = os.path.join(self.tmp.name, name + '.patch')
			with open(self.paths[name], 'w') as f:
				f.write(text)

	def excuse(self, name):
		path = self.paths[name]
		return stages.excuse_trace_event_style(OUTPUT[name].format(path=path), path)

	# Catches lines mapped to the wrong file: every line of the x.h hunk
	# (15-39, after its @@ line) is x.h's, every line of the foo.c hunk is
	# foo.c's; the mail, the diff headers and the signature are no file's.
	def test_patch_lines_map_to_the_file_of_their_hunk(self):
		files = stages.patch_line_files(FOO_PATCH)
		x, foo = 'include/trace/events/x.h', 'mm/foo.c'
		self.assertEqual({n for n, f in files.items() if f == x}, set(range(15, 40)))
		self.assertEqual({n for n, f in files.items() if f == foo}, set(range(45, 53)))
		self.assertEqual(set(files), set(range(15, 40)) | set(range(45, 53)))

	# Catches the exception not applying: a TRACE_EVENT() block added to
	# include/trace/events/x.h, with checkpatch's two CHECKs on it, is clean.
	def test_trace_event_block_in_a_trace_header_is_excused(self):
		self.assertEqual(self.excuse('trace'), ('', 4))

	# Catches the exception applying by type alone: the same open-ended
	# line in an mm/foo.c hunk of the same patch still fails.
	def test_open_ended_line_in_mm_c_still_fails(self):
		found, n = self.excuse('foo')
		self.assertEqual(found, FOO_FINDING.format(path=self.paths['foo']))
		self.assertEqual(n, 4)

	# Catches the exception applying by path alone: another finding inside
	# the TRACE_EVENT() block of include/trace/events/x.h still fails.
	def test_other_finding_in_a_trace_header_still_fails(self):
		found, n = self.excuse('other')
		self.assertEqual(found, OTHER_FINDING.format(path=self.paths['other']))
		self.assertEqual(n, 4)

	def fake_src(self):
		src = os.path.join(self.tmp.name, 'src')
		os.makedirs(os.path.join(src, 'scripts'))
		out = ',\n'.join(f"{k} => <<'EOT'\n{v}\nEOT\n" for k, v in OUTPUT.items())
		with open(os.path.join(src, 'scripts/checkpatch.pl'), 'w') as f:
			f.write(FAKE_CHECKPATCH.replace('%s', out))
		return src

	# Catches checkpatch's exit status 1 (it exits 1 on a CHECK) failing a
	# patch whose findings were all excused, and the exception reaching
	# source files: with --file the same output is kept whole.
	def test_findings_all_excused_is_clean_despite_the_exit_status(self):
		src = self.fake_src()
		path = self.paths['trace']
		self.assertEqual(stages.checkpatch_findings(src, path), ('', 4))
		self.assertEqual(stages.checkpatch_findings(src, path, ['--file']),
				 (STYLE.format(path=path), 0))

	# Catches the gate hiding what it excused or letting foo.c through:
	# trace.patch passes, foo.patch and other.patch fail, and one info line
	# says how many findings were excused and why.
	def test_gate_counts_and_says_what_it_excused(self):
		src = self.fake_src()
		targets = [(self.paths[n], []) for n in ('trace', 'foo', 'other')]
		out = io.StringIO()
		with mock.patch.object(tree, 'assemble', return_value=src), \
		     mock.patch.object(stages, 'checkpatch_targets', return_value=targets), \
		     contextlib.redirect_stdout(out):
			st = stages.checkpatch()
		self.assertEqual(st.counts['passed'], 1)
		self.assertEqual(st.counts['failed'], 2)
		self.assertEqual([c['verdict'] for c in st.cases], ['pass', 'fail', 'fail'])
		self.assertIn('4 excused: OPEN_ENDED_LINE/PARENTHESIS_ALIGNMENT on '
			      'include/trace/events/ lines', st.cases[0]['reason'])
		lines = [ln for ln in out.getvalue().splitlines() if 'excused' in ln]
		self.assertEqual(len(lines), 1, out.getvalue())
		self.assertIn('checkpatch: excused 12 finding(s) in 3 patch(es): '
			      'OPEN_ENDED_LINE/PARENTHESIS_ALIGNMENT on include/trace/events/ '
			      'lines, the TRACE_EVENT() header style checkpatch does not know',
			      lines[0])


if __name__ == '__main__':
	unittest.main()
