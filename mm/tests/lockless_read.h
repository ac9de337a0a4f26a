/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What only reads without folio references need, shared by the lockless
 * suites and the pread16 and shmem_read benchmarks and built once
 * (lockless_read_helpers.c): the debugfs lockless_page_cache_read switch
 * and the count of what reads copied without folio references (from the
 * mm_filemap_read_rcu tracepoint); for the suites also what a kernel has
 * of the rcu-free series (stand-ins where it has none), the suite-wide
 * probe each case filters by its files, and how reads make folios hot.
 * Files and readers are mm_kunit_helpers'.
 */
#ifndef MM_TESTS_LOCKLESS_READ_H
#define MM_TESTS_LOCKLESS_READ_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/types.h>

#include "../page_alloc.h"
#include "mm_hooks.h"
#include "mm_kunit_helpers.h"
#include "mm_test_util.h"

/* ---------------------------------------------------------- the feature */

/*
 * PG_rcu_free is the series' (rcu-free patch 1, CONFIG_PAGE_RCU_FREE):
 * without it (7.3) these stand-ins let the suites build, and every case
 * skips before it gets to them (lr_require_rcu_free()).
 */
#ifndef CONFIG_PAGE_RCU_FREE
#define folio_test_rcu_free(folio)	((void)(folio), false)
#define folio_set_rcu_free(folio)	((void)(folio))
#define folio_clear_rcu_free(folio)	((void)(folio))
#endif

/* The top of every case: skip, saying so, on a kernel without rcu-free */
void lr_require_rcu_free(struct kunit *test);
/*
 * Wait until what the case left waiting for a grace period is freed: with
 * our rcu_free_wait_grace() (a hook), else a grace period at least.
 */
void lr_wait_deferred(void);

/* ------------------------------------------- lockless_page_cache_read */

/* Does this kernel have the switch?  For benchmarks that skip without it */
bool lr_switch_exists(struct kunit *test);
/*
 * Write @on to the switch through debugfs, for the rest of the case: the
 * value found before the case's first write is restored when it ends.
 */
void lr_switch(struct kunit *test, bool on);
/* What the switch reads back as */
int lr_switch_get(struct kunit *test);

/* ------------------------------------------------- mm_filemap_read_rcu */

#define LR_TRACEPOINT	MM_HOOK_TRACE_FILEMAP_READ_RCU

/*
 * What reads copied without folio references while a case counts: the
 * mm_filemap_read_rcu tracepoint (rcu-free patch 13) fires once per RCU
 * read-side critical section that copied something, with the bytes it
 * copied.  Its probe runs inside rcu_read_lock(), on any CPU: atomics.
 */
struct lr_count {
	atomic_long_t sections;
	atomic_long_t bytes;
};

/* A snapshot of the counts, for the difference over a read */
struct lr_stat {
	unsigned long sections;
	unsigned long bytes;
};

/*
 * For the benchmarks: count from now until the case ends (a KUnit action
 * detaches the probe, also when an assertion ends the case early).  Fails
 * the case on a kernel without the tracepoint.
 */
struct lr_count *lr_count_start(struct kunit *test);
void lr_count_now(struct lr_count *c, struct lr_stat *s);

/*
 * The suites' probe: one for the whole suite, attached in .suite_init (as
 * kfence_test attaches its console probe), counting only the reads of the
 * files the running case watches (lr_watch()); .init clears it
 * (lr_trace_case_init()).  The tracepoint is a hook of ours: without it,
 * what a case would have read from it is skipped, named, and the rest
 * decides.  lr_suite_init() and lr_suite_exit() are the suite's
 * .suite_init and .suite_exit.
 */
int lr_suite_init(struct kunit_suite *suite);
void lr_suite_exit(struct kunit_suite *suite);
/* In .init: nothing watched, nothing counted, test->priv the probe's data */
void lr_trace_case_init(struct kunit *test);
/*
 * Count the copies without references from reads of @lf from now on, for
 * the part of the case @part says; false, logged as a skipped part that
 * names the tracepoint, on a kernel without it.
 */
bool lr_watch(struct kunit *test, struct mm_kunit_file *lf,
	      const char *part);
/* What the watched reads copied without references so far */
void lr_now(struct kunit *test, struct lr_stat *s);
/*
 * Watch [@start, @end) of @lf (watched with lr_watch()) from now on, in
 * whole pages: the sections that copy from it without references are
 * counted (lr_window_hits()); an empty range stops.  A section counts when
 * the pages it surely copied, from its first index on for its bytes,
 * overlap the window when it ends (the tracepoint fires at its end).
 */
void lr_window(struct kunit *test, struct mm_kunit_file *lf, loff_t start,
	       loff_t end);
/* Sections that copied from a window of @lf so far in the case */
unsigned long lr_window_hits(struct kunit *test, struct mm_kunit_file *lf);

/* ------------------------------------------------------- hot folios */

/* Is the folio at @index flagged?  false for a hole */
bool lr_index_flagged(struct mm_kunit_file *kf, pgoff_t index);
/*
 * Has @page PG_rcu_free?  Read from its own flags, without folio_flags()'
 * check: for a page that may have been freed and reused (as a tail page
 * too) since the case looked it up.  false without CONFIG_PAGE_RCU_FREE.
 */
bool lr_page_rcu_free(struct page *page);
/* Pages of flagged folios in [0, @nr_pages) */
unsigned long lr_pages_flagged(struct mm_kunit_file *kf, pgoff_t nr_pages);
/* @len (at most 64) bytes read at @off for the access (mm_kunit_read()) */
ssize_t lr_read_at(struct kunit *test, struct mm_kunit_file *kf, loff_t off,
		   size_t len);
/*
 * Read the start of folio @a and folio @b in turn, @rounds times: every read
 * enters a folio the last one did not end in, so each counts as an access.
 * The LRU batches are drained after each round: folio_activate() only
 * queues a folio, and until the batch is drained the folio is not active
 * (nor unevictable, on ramfs), so the next access would queue it again
 * instead of finding it hot.  How long a batch waits depends on what else
 * the CPU does; draining makes the count of accesses the same every run.
 */
void lr_alternate_reads(struct kunit *test, struct mm_kunit_file *kf,
			loff_t a, loff_t b, unsigned int rounds, size_t len);
/*
 * Read the whole file in 4 KiB pieces until every folio is flagged, at most
 * 16 passes; each pass enters each folio once.
 */
void lr_make_hot(struct kunit *test, struct mm_kunit_file *lf);
/* A file of @size on @fs, written with the pattern of @seed, made hot */
struct mm_kunit_file *lr_hot_file(struct kunit *test, enum mm_kunit_fs fs,
				  loff_t size, u8 seed);

#endif /* MM_TESTS_LOCKLESS_READ_H */
