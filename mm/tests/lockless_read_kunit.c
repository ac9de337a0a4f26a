// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for reads without folio references (rcu-free series, patches
 * 10-18): which folios get PG_rcu_free, when filemap_read_rcu_can_copy()
 * refuses a folio, and that filemap_read() and tmpfs reads copy the right
 * bytes that way, with the lockless_page_cache_read switch on and off.
 *
 * A read only counts as lockless when the mm_filemap_read_rcu tracepoint
 * says so (a probe of the case's own counts its RCU sections and bytes):
 * each correctness case checks that every byte it read was copied without a
 * reference (and in how many RCU sections), so it cannot pass on the slow
 * path alone.  Flagged folios are made the way a workload makes them: by
 * reading them again and again.
 *
 * Counters and the tracepoint are looked up by name (pgfree_rcu_mark,
 * mm_filemap_read_rcu), so a tree without the patch that adds one fails
 * with a message saying so.  Every case's exit waits out the grace period
 * of what it left waiting, and the ABA case holds the deferred frees back,
 * with the helpers of CONFIG_DEBUG_PAGE_RCU_FREE (implied by the suite's
 * Kconfig entry): without it, or without CONFIG_PAGE_RCU_FREE, every case
 * skips and says which is missing.  Before patch 13 the cases that need it
 * fail.
 */

#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mman.h>
#include <linux/namei.h>
#include <linux/page_idle.h>
#include <linux/pagemap.h>
#include <linux/ramfs.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/swap.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "../page_alloc.h"
#include "mm_test_util.h"
#include "lockless_read.h"
#include "vmstat_by_name.h"

#if IS_ENABLED(CONFIG_DEBUG_PAGE_RCU_FREE)

KUNIT_DEFINE_ACTION_WRAPPER(vfree_wrapper, vfree, const void *);

/* Largest read the cases do, plus room for a user buffer's guard */
#define BUF_LEN		(SZ_2M + SZ_64K)

/* Is the folio at @index flagged?  false for a hole */
static bool index_flagged(struct file *file, pgoff_t index)
{
	struct folio *folio = filemap_get_folio(file->f_mapping, index);
	bool ret;

	if (IS_ERR(folio))
		return false;
	ret = folio_test_rcu_free(folio);
	folio_put(folio);
	return ret;
}

/* Pages of flagged folios in [0, @nr_pages) */
static unsigned long pages_flagged(struct file *file, pgoff_t nr_pages)
{
	unsigned long nr = 0;
	pgoff_t index = 0;

	while (index < nr_pages) {
		struct folio *folio = filemap_get_folio(file->f_mapping, index);

		if (IS_ERR(folio)) {
			index++;
			continue;
		}
		if (folio_test_rcu_free(folio))
			nr += folio_nr_pages(folio);
		index = folio_next_index(folio);
		folio_put(folio);
	}
	return nr;
}

/* @len bytes read at @off through a fresh kvec into a scratch buffer */
static ssize_t read_at(struct file *file, loff_t off, size_t len)
{
	static u8 scratch[64];
	loff_t pos = off;

	return kernel_read(file, scratch, min(len, sizeof(scratch)), &pos);
}

/*
 * Read the start of folio @a and folio @b in turn, @rounds times: every read
 * enters a folio the last one did not end in, so each counts as an access.
 * The LRU batches are drained after each round: folio_activate() only
 * queues a folio, and until the batch is drained the folio is not active
 * (nor unevictable, on ramfs), so the next access would queue it again
 * instead of finding it hot.  How long a batch waits depends on what else
 * the CPU does; draining makes the count of accesses the same every run.
 */
static void alternate_reads(struct kunit *test, struct file *file,
			    loff_t a, loff_t b, unsigned int rounds, size_t len)
{
	unsigned int i;

	for (i = 0; i < rounds; i++) {
		KUNIT_ASSERT_GT(test, read_at(file, a, len), 0);
		KUNIT_ASSERT_GT(test, read_at(file, b, len), 0);
		lru_add_drain_all();
	}
}

/*
 * Read the whole file in 4 KiB pieces until every folio is flagged, at most
 * 16 passes; each pass enters each folio once.
 */
static void make_hot(struct kunit *test, struct lr_file *lf)
{
	pgoff_t nr_pages = DIV_ROUND_UP(lf->size, PAGE_SIZE);
	unsigned int pass;
	loff_t off;

	for (pass = 0; pass < 16; pass++) {
		/* >=: a large folio may reach past EOF */
		if (pages_flagged(lf->file, nr_pages) >= nr_pages)
			return;
		for (off = 0; off < lf->size; off += PAGE_SIZE)
			KUNIT_ASSERT_GT(test, read_at(lf->file, off, 16), 0);
		/* See alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_FAIL_AND_ABORT(test, "%lu of %lu pages flagged after 16 passes",
			     pages_flagged(lf->file, nr_pages), nr_pages);
}

/* ------------------------------------------------------------- marking */

/*
 * Patch 12: reads that keep coming back to a page flag it, and not on the
 * first read; pgfree_rcu_mark counts exactly the pages flagged.
 */
static void lockless_mark_repeated_reads(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	unsigned long ev0 = vm_event(test, "pgfree_rcu_mark");
	unsigned int rounds;

	lr_file_write(test, lf, 0, lf->size, 1);
	alternate_reads(test, lf->file, 0, PAGE_SIZE, 1, 16);
	KUNIT_EXPECT_FALSE_MSG(test, index_flagged(lf->file, 0),
			       "flagged by its first read");
	for (rounds = 1; rounds < 8 && !index_flagged(lf->file, 0); rounds++)
		alternate_reads(test, lf->file, 0, PAGE_SIZE, 1, 16);
	KUNIT_EXPECT_TRUE_MSG(test, index_flagged(lf->file, 0),
			      "not flagged after %u rounds of reads", rounds);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_mark") - ev0,
			pages_flagged(lf->file, 2));
}

/*
 * Patch 12: a file written once and read once, and a streaming read of
 * 4 MiB, flag nothing and count no mark.
 */
static void lockless_mark_not_cold_data(struct kunit *test)
{
	struct lr_file *once = lr_file_create(test, LR_TMPFS, PAGE_SIZE);
	struct lr_file *stream = lr_file_create(test, LR_TMPFS, SZ_4M);
	unsigned long ev0 = vm_event(test, "pgfree_rcu_mark");
	loff_t off;

	lr_file_write(test, once, 0, once->size, 2);
	lr_file_write(test, stream, 0, stream->size, 3);
	KUNIT_ASSERT_GT(test, read_at(once->file, 0, 16), 0);
	for (off = 0; off < stream->size; off += PAGE_SIZE)
		KUNIT_ASSERT_GT(test, read_at(stream->file, off, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pages_flagged(once->file, 1), 0);
	KUNIT_EXPECT_EQ(test, pages_flagged(stream->file, SZ_4M >> PAGE_SHIFT),
			0);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_mark") - ev0, 0);
}

/*
 * Patch 12: flagging a PMD-size tmpfs folio counts its 512 pages in
 * pgfree_rcu_mark, not 1.
 */
static void lockless_mark_counts_pages(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_TMPFS_HUGE, SZ_4M);
	unsigned long ev0;

	lr_file_write(test, lf, 0, lf->size, 4);
	lr_need_pmd_folio(test, lf, 0);
	ev0 = vm_event(test, "pgfree_rcu_mark");
	make_hot(test, lf);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_mark") - ev0,
			(unsigned long)(SZ_4M >> PAGE_SHIFT));
}

/*
 * The re-check after i_size, filemap_read_rcu_in_slot(): true for a folio
 * still in its slot (for a PMD folio also from the slot of its last page,
 * a sibling), false once a hole punch has taken an order-0 folio out, and
 * false for every page of a PMD folio once a split has put a node where
 * it was.  False, too, for an index past the node the lookup found (its
 * slot number wraps around to the folio's own slot) and past a one-page
 * file's only entry, which has no node: a split in progress leaves a
 * folio in every slot of a node, so the index a racy order gives must
 * not reach beyond it.  The xa_state is kept across the punch and the
 * split, which sleep, outside RCU: its node stays in the tree, as it
 * still holds the file's other entries.  Only pointers are compared
 * afterwards.
 */
#if IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_IN_SLOT)
static void slot_recheck(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 4 * PAGE_SIZE);
	struct lr_file *huge = lr_file_create(test, LR_TMPFS_HUGE, SZ_4M);
	struct lr_file *one = lr_file_create(test, LR_TMPFS, PAGE_SIZE);
	XA_STATE(xas, &lf->file->f_mapping->i_pages, 0);
	XA_STATE(hxas, &huge->file->f_mapping->i_pages, 0);
	XA_STATE(oxas, &one->file->f_mapping->i_pages, 0);
	XA_STATE(cxas, &huge->file->f_mapping->i_pages, 0);
	XA_STATE(wxas, &lf->file->f_mapping->i_pages, 0);
	struct folio *folio, *pmd, *f;
	bool in, in_first, in_last, past;
	int err = -EBUSY;

	lr_file_write(test, lf, 0, lf->size, 3);
	rcu_read_lock();
	folio = filemap_read_rcu_lookup(&xas, 1);
	in = folio && filemap_read_rcu_in_slot(&xas, 1, folio);
	f = filemap_read_rcu_lookup(&wxas, 1);
	past = f && filemap_read_rcu_in_slot(&wxas, 1 + XA_CHUNK_SIZE, f);
	rcu_read_unlock();
	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_EXPECT_TRUE_MSG(test, in, "order-0 folio not found in its slot");
	KUNIT_EXPECT_FALSE_MSG(test, past,
			       "index past the lookup's node found the folio");

	lr_file_write(test, one, 0, one->size, 4);
	rcu_read_lock();
	f = filemap_read_rcu_lookup(&oxas, 0);
	in = f && filemap_read_rcu_in_slot(&oxas, 0, f);
	past = f && filemap_read_rcu_in_slot(&oxas, 1, f);
	rcu_read_unlock();
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_EXPECT_TRUE_MSG(test, in, "one-page file: folio not found at 0");
	KUNIT_EXPECT_FALSE_MSG(test, past,
			       "one-page file: index 1 found the folio at 0");
	KUNIT_ASSERT_EQ(test, vfs_fallocate(lf->file, FALLOC_FL_PUNCH_HOLE |
					    FALLOC_FL_KEEP_SIZE, PAGE_SIZE,
					    PAGE_SIZE), 0);
	rcu_read_lock();
	in = filemap_read_rcu_in_slot(&xas, 1, folio);
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE_MSG(test, in, "punched-out folio still in its slot");

	lr_file_write(test, huge, 0, huge->size, 5);
	lr_need_pmd_folio(test, huge, 0);
	rcu_read_lock();
	pmd = filemap_read_rcu_lookup(&hxas, 0);
	in = pmd && filemap_read_rcu_in_slot(&hxas, HPAGE_PMD_NR - 1, pmd);
	rcu_read_unlock();
	KUNIT_ASSERT_NOT_NULL(test, pmd);
	KUNIT_EXPECT_TRUE_MSG(test, in,
			      "PMD folio not found from its last page's slot");
	f = filemap_get_folio(huge->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f));
	folio_lock(f);
	if (f == pmd && folio_test_large(f))
		err = split_folio(f);
	folio_unlock(f);
	folio_put(f);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "split of the PMD folio failed");
	rcu_read_lock();
	in_first = filemap_read_rcu_in_slot(&hxas, 0, pmd);
	in_last = filemap_read_rcu_in_slot(&hxas, HPAGE_PMD_NR - 1, pmd);
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE_MSG(test, in_first, "split folio still in slot 0");
	KUNIT_EXPECT_FALSE_MSG(test, in_last,
			       "split folio still in its last page's slot");

	/* A lookup now ends in a node of 64 order-0 slots */
	rcu_read_lock();
	f = filemap_read_rcu_lookup(&cxas, HPAGE_PMD_NR - 12);
	in = f && filemap_read_rcu_in_slot(&cxas, HPAGE_PMD_NR - 12, f);
	past = f && filemap_read_rcu_in_slot(&cxas,
					     HPAGE_PMD_NR - 12 + XA_CHUNK_SIZE,
					     f);
	rcu_read_unlock();
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_EXPECT_TRUE_MSG(test, in, "folio of the split not in its slot");
	KUNIT_EXPECT_FALSE_MSG(test, past,
			       "index past the split's node found the folio");
}
#else
static void slot_recheck(struct kunit *test)
{
}
#endif

static void lockless_slot_recheck(struct kunit *test)
{
	/* See the LOCKLESS_READ_KUNIT_HAVE_* group in mm/tests/Kconfig */
	if (!IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_IN_SLOT))
		KUNIT_FAIL_AND_ABORT(test,
				     "no filemap_read_rcu_in_slot(): rcu-free patch 14 is not applied");
	slot_recheck(test);
}

/*
 * Patch 14: in a hot PMD-size tmpfs folio, a page with PG_hwpoison whose
 * folio lacks PG_has_hwpoisoned (as while a split runs: it clears the
 * folio's flag before the new folios get theirs) is not copied without a
 * reference; the read of it fails as shmem's own path fails it, and the
 * page before it is read.  The flag is set and cleared by hand.
 */
static void lockless_hwpoison_page_of_large_folio(struct kunit *test)
{
	struct lr_file *lf;
	struct folio *folio;
	ssize_t at, before;

	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "needs MEMORY_FAILURE (PG_hwpoison)");
	lf = lr_file_create(test, LR_TMPFS_HUGE, SZ_2M);
	lr_file_write(test, lf, 0, lf->size, 6);
	lr_need_pmd_folio(test, lf, 0);
	make_hot(test, lf);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	SetPageHWPoison(folio_page(folio, 5));
	at = read_at(lf->file, 5 * PAGE_SIZE, 16);
	before = read_at(lf->file, 4 * PAGE_SIZE, 16);
	ClearPageHWPoison(folio_page(folio, 5));
	folio_put(folio);
	KUNIT_EXPECT_EQ_MSG(test, at, -EIO, "the page with PG_hwpoison was read");
	KUNIT_EXPECT_EQ(test, before, 16);
}

/*
 * Patch 16: tmpfs counts an access when a read enters a folio, also at an
 * offset (7.3 counted only reads of a folio's first byte).
 */
static void lockless_shmem_counts_accesses(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	unsigned int rounds;

	lr_file_write(test, lf, 0, lf->size, 5);
	for (rounds = 0; rounds < 8 && !index_flagged(lf->file, 0); rounds++)
		alternate_reads(test, lf->file, 100, PAGE_SIZE + 100, 1, 16);
	KUNIT_EXPECT_TRUE_MSG(test, index_flagged(lf->file, 0),
			      "reads at offset 100 never flagged the folio");
}

/*
 * Patch 16: tmpfs reads that go on within a folio, at offsets, count one
 * access between them, however many they are.
 */
static void lockless_shmem_stays_in_folio(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	loff_t off;

	lr_file_write(test, lf, 0, lf->size, 6);
	/* The last read ends in folio 1, so the first below enters folio 0 */
	KUNIT_ASSERT_GT(test, read_at(lf->file, PAGE_SIZE + 100, 16), 0);
	for (off = 16; off < 256; off += 16) {
		KUNIT_ASSERT_EQ(test, read_at(lf->file, off, 16), 16);
		/* See alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_EXPECT_FALSE_MSG(test, index_flagged(lf->file, 0),
			       "reads that stayed within the folio flagged it");
}

/*
 * Patch 17: a hot tmpfs folio that reclaim deactivated, read again from
 * its first byte by a reader whose last read ended in it, is marked by
 * those reads, as 7.3 marked every read from a first byte: the copy
 * without references leaves such a read to the slow path until marking
 * would change nothing.
 */
static void lockless_shmem_rereads_from_start(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	struct folio *folio;
	unsigned int i;

	if (lru_gen_enabled())
		kunit_skip(test, "classic LRU only: MGLRU ages folios differently");
	lr_file_write(test, lf, 0, lf->size, 9);
	make_hot(test, lf);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_folio_put,
							folio), 0);
	/* The last read ends within the folio */
	KUNIT_ASSERT_EQ(test, read_at(lf->file, 0, 16), 16);
	folio_deactivate(folio);
	lru_add_drain_all();
	KUNIT_ASSERT_FALSE_MSG(test, folio_test_active(folio),
			       "the folio was not deactivated");
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, read_at(lf->file, 0, 64), 64);
		/* See alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_active(folio),
			      "reads from the first byte did not mark the deactivated folio");
}

/*
 * Patches 16, 17: on tmpfs f_ra.prev_pos is where the last read ended,
 * with the switch on (the copy without references did the read whole,
 * and shmem returns at once) and off (shmem's loop did it); a read that
 * copied nothing (at EOF, of no bytes) leaves it at its own position.
 */
static void lockless_shmem_prev_pos(struct kunit *test)
{
	struct lr_count *cnt = lr_count_start(test);
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	struct file *file = lf->file;
	const loff_t sentinel = PAGE_SIZE + 7;
	struct lr_stat s0, s1;
	int on;

	lr_file_write(test, lf, 0, lf->size, 10);
	make_hot(test, lf);
	for (on = 1; on >= 0; on--) {
		lr_switch(test, on);
		file->f_ra.prev_pos = sentinel;
		lr_count_now(cnt, &s0);
		KUNIT_ASSERT_EQ(test, read_at(file, 100, 16), 16);
		lr_count_now(cnt, &s1);
		KUNIT_ASSERT_EQ_MSG(test, s1.bytes - s0.bytes, on ? 16UL : 0UL,
				    "switch %d: bytes copied without a reference", on);
		KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, 116,
				    "switch %d: 16 bytes read at 100", on);

		file->f_ra.prev_pos = sentinel;
		KUNIT_ASSERT_EQ(test, read_at(file, lf->size, 16), 0);
		KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, lf->size,
				    "switch %d: a read at EOF", on);

		file->f_ra.prev_pos = sentinel;
		KUNIT_ASSERT_EQ(test, read_at(file, 200, 0), 0);
		KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, 200,
				    "switch %d: a read of no bytes at 200", on);
	}
}

/* --------------------------------------------- filemap_read_rcu_can_copy */

struct can_copy_case {
	const char *name;
	unsigned int order;
	pgoff_t index;		/* the folio's index */
	pgoff_t at;		/* the index asked about */
	unsigned long set;	/* LR_* flags to set */
	bool want;
};

enum {
	LR_RCU_FREE = BIT(0),
	LR_UPTODATE = BIT(1),
	LR_READAHEAD = BIT(2),	/* PG_reclaim on a swap-backed folio */
	LR_DROPBEHIND = BIT(3),
	LR_HWPOISON = BIT(4),
	LR_HAS_HWPOISONED = BIT(5),
	LR_SWAPBACKED = BIT(6),
};

#define LR_OK	(LR_RCU_FREE | LR_UPTODATE)

static const struct can_copy_case can_copy_cases[] = {
	{ "order-0 flagged uptodate: accepted", 0, 8, 8, LR_OK, true },
	{ "no PG_rcu_free", 0, 8, 8, LR_UPTODATE, false },
	{ "not uptodate", 0, 8, 8, LR_RCU_FREE, false },
	{ "readahead", 0, 8, 8, LR_OK | LR_READAHEAD, false },
	{ "dropbehind", 0, 8, 8, LR_OK | LR_DROPBEHIND, false },
	{ "order-0 at another index (split under way)", 0, 8, 9, LR_OK, false },
	{ "hwpoisoned page", 0, 8, 8, LR_OK | LR_HWPOISON, false },
	{ "order-2 at its third page: accepted", 2, 8, 10, LR_OK, true },
	{ "order-2 with PG_has_hwpoisoned", 2, 8, 10,
	  LR_OK | LR_HAS_HWPOISONED, false },
	{ "shmem folio with PG_reclaim: accepted", 0, 8, 8,
	  LR_OK | LR_READAHEAD | LR_SWAPBACKED, true },
};

KUNIT_ARRAY_PARAM_DESC(can_copy, can_copy_cases, name);

/*
 * Patches 13, 14, 17: one case per refusal and per acceptance of
 * filemap_read_rcu_can_copy(), on a folio of the case's own with the flags
 * set by hand (cleared again before it is freed).
 */
static void lockless_can_copy(struct kunit *test)
{
	const struct can_copy_case *c = test->param_value;
	struct folio *folio;
	bool got = false;

	/* See the LOCKLESS_READ_KUNIT_HAVE_* group in mm/tests/Kconfig */
	if (!IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_CAN_COPY))
		KUNIT_FAIL_AND_ABORT(test,
				     "no filemap_read_rcu_can_copy(): rcu-free patch 13 is not applied");
	folio = folio_alloc(GFP_KERNEL, c->order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio->index = c->index;
	if (c->set & LR_RCU_FREE)
		folio_set_rcu_free(folio);
	if (c->set & LR_UPTODATE)
		folio_mark_uptodate(folio);
	if (c->set & LR_SWAPBACKED)
		__folio_set_swapbacked(folio);
	if (c->set & LR_READAHEAD)
		folio_set_readahead(folio);
	if (c->set & LR_DROPBEHIND)
		folio_set_dropbehind(folio);
	if (c->set & LR_HWPOISON)
		folio_set_hwpoison(folio);
	if (c->set & LR_HAS_HWPOISONED)
		folio_set_has_hwpoisoned(folio);

#if IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_CAN_COPY)
	got = filemap_read_rcu_can_copy(folio, c->at);
#endif

	folio_clear_rcu_free(folio);
	folio_clear_uptodate(folio);
	__folio_clear_swapbacked(folio);
	folio_clear_readahead(folio);
	folio_clear_dropbehind(folio);
	folio_clear_hwpoison(folio);
	if (folio_test_large(folio))
		folio_clear_has_hwpoisoned(folio);
	folio->index = 0;
	folio_put(folio);
	KUNIT_EXPECT_EQ_MSG(test, got, c->want, "%s", c->name);
}

/* The LRU a skip case runs under */
struct lru_mode {
	const char *name;
	bool lru_gen;
};

static const struct lru_mode lru_modes[] = {
	{ "classic LRU", false },
	{ "multi-gen LRU", true },
};

KUNIT_ARRAY_PARAM_DESC(lru_mode, lru_modes, name);

/* /sys/kernel/mm/lru_gen/enabled as a case found it */
struct lru_gen_saved {
	struct file *file;
	char caps[16];
	ssize_t len;
	bool was_enabled;
};

/* A restore that fails leaves the system in the other LRU: say so loudly */
static void lru_gen_restore(void *arg)
{
	struct lru_gen_saved *sv = arg;
	loff_t pos = 0;
	ssize_t ret;

	ret = kernel_write(sv->file, sv->caps, sv->len, &pos);
	WARN(ret != sv->len || lru_gen_enabled() != sv->was_enabled,
	     "lockless_read: lru_gen/enabled not restored to %.*s (%zd)\n",
	     (int)sv->len, sv->caps, ret);
}

/*
 * Switch the multi-gen LRU on or off for the case, through its sysfs file,
 * as an administrator would: lru_gen_change_state() moves every folio to
 * the other LRU while the system runs, which the kernel supports at any
 * time.  A KUnit action writes back the value found when the case ends
 * (and warns if that fails).
 */
static void lru_gen_switch(struct kunit *test, bool on)
{
	struct lru_gen_saved *sv;
	struct vfsmount *mnt;
	loff_t pos = 0;

	if (!IS_ENABLED(CONFIG_LRU_GEN))
		kunit_skip(test, "needs CONFIG_LRU_GEN to switch the multi-gen LRU on");
	sv = kunit_kzalloc(test, sizeof(*sv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sv);
	mnt = mm_test_mount(test, "sysfs", NULL);
	sv->file = file_open_root_mnt(mnt, "kernel/mm/lru_gen/enabled", O_RDWR, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(sv->file), "open lru_gen/enabled: %ld",
			       PTR_ERR(sv->file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput,
							sv->file), 0);
	sv->len = kernel_read(sv->file, sv->caps, sizeof(sv->caps) - 1, &pos);
	KUNIT_ASSERT_GT(test, sv->len, 0);
	sv->was_enabled = lru_gen_enabled();
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, lru_gen_restore,
							sv), 0);
	pos = 0;
	KUNIT_ASSERT_EQ(test, kernel_write(sv->file, on ? "y" : "n", 1, &pos), 1);
	KUNIT_ASSERT_EQ(test, lru_gen_enabled(), on);
}

/* What folio_mark_accessed() may change, besides PG_idle */
#define MARK_ACCESSED_FLAGS	(BIT(PG_referenced) | BIT(PG_active) | \
				 BIT(PG_workingset) | LRU_REFS_MASK)
/* What the skip case sets: the above, PG_unevictable and PG_dropbehind */
#define SKIP_CASE_FLAGS		(MARK_ACCESSED_FLAGS | BIT(PG_unevictable) | \
				 BIT(PG_dropbehind))

/* The bits of a combination the skip case tries */
enum {
	SK_REF, SK_ACTIVE, SK_UNEVICTABLE, SK_IDLE, SK_DROPBEHIND,
	SK_WORKINGSET, SK_REFS_FULL, NR_SK
};

/*
 * Patch 13: a read without references leaves folio_mark_accessed() out only
 * where the call would change nothing.  For every combination of the flags
 * folio_may_skip_mark_accessed() reads, under the classic and the
 * multi-gen LRU: where it says skip, folio_mark_accessed() on the same
 * folio leaves the LRU flags, the refs counter and PG_idle as they were
 * (so an access recorded the slow way is never lost); and some
 * combinations do skip (the case is not passed by never skipping).
 */
static void lockless_skip_mark_accessed(struct kunit *test)
{
	const struct lru_mode *m = test->param_value;
	struct folio *folio;
	unsigned int combo, skipped = 0;

	if (!IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_CAN_COPY))
		KUNIT_FAIL_AND_ABORT(test,
				     "no folio_may_skip_mark_accessed(): rcu-free patch 13 is not applied");
	if (lru_gen_enabled() != m->lru_gen)
		lru_gen_switch(test, m->lru_gen);
	folio = folio_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, folio);

	for (combo = 0; combo < BIT(NR_SK); combo++) {
		unsigned long set = 0, before, after;
		bool skip = false, idle_before, idle_after;

		if ((combo & BIT(SK_ACTIVE)) && (combo & BIT(SK_UNEVICTABLE)))
			continue;	/* never both */
		if (combo & BIT(SK_REF))
			set |= BIT(PG_referenced);
		if (combo & BIT(SK_ACTIVE))
			set |= BIT(PG_active);
		if (combo & BIT(SK_UNEVICTABLE))
			set |= BIT(PG_unevictable);
		if (combo & BIT(SK_DROPBEHIND))
			set |= BIT(PG_dropbehind);
		if (combo & BIT(SK_WORKINGSET))
			set |= BIT(PG_workingset);
		if (combo & BIT(SK_REFS_FULL))
			set |= LRU_REFS_MASK;
		set_mask_bits(&folio->flags.f, SKIP_CASE_FLAGS, set);
		if (combo & BIT(SK_IDLE))
			folio_set_idle(folio);
		else
			folio_clear_idle(folio);

		before = folio->flags.f & MARK_ACCESSED_FLAGS;
		idle_before = folio_test_idle(folio);
#if IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_CAN_COPY)
		skip = folio_may_skip_mark_accessed(folio);
#endif
		if (!skip)
			continue;
		skipped++;
		folio_mark_accessed(folio);
		after = folio->flags.f & MARK_ACCESSED_FLAGS;
		idle_after = folio_test_idle(folio);
		KUNIT_EXPECT_EQ_MSG(test, after, before,
				    "%s: skipped, but the access would change flags %#lx (set %#x)",
				    m->name, after ^ before, combo);
		KUNIT_EXPECT_EQ_MSG(test, idle_after, idle_before,
				    "%s: skipped, but the access would clear PG_idle (set %#x)",
				    m->name, combo);
	}
	set_mask_bits(&folio->flags.f, SKIP_CASE_FLAGS, 0);
	folio_clear_idle(folio);
	folio_put(folio);
	KUNIT_EXPECT_GT_MSG(test, skipped, 0U, "%s: no combination skipped",
			    m->name);
}

/* ---------------------------------------------------- read correctness */

enum lr_iter { LR_KVEC, LR_BVEC, LR_UBUF };
static const char * const lr_iter_name[] = { "kvec", "bvec", "ubuf" };

struct reader {
	u8 *kbuf;
	struct page **pages;	/* BUF_LEN of them, for bvec */
	struct bio_vec *bvec;
	unsigned long ubuf;
};

static void reader_free_pages(void *data)
{
	struct reader *r = data;
	unsigned int i;

	for (i = 0; i < BUF_LEN >> PAGE_SHIFT; i++)
		if (r->pages[i])
			__free_page(r->pages[i]);
}

static struct reader *reader_create(struct kunit *test)
{
	struct reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i, nr = BUF_LEN >> PAGE_SHIFT;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->kbuf = vmalloc(BUF_LEN);
	KUNIT_ASSERT_NOT_NULL(test, r->kbuf);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vfree_wrapper,
							r->kbuf), 0);
	r->pages = kunit_kcalloc(test, nr, sizeof(*r->pages), GFP_KERNEL);
	r->bvec = kunit_kcalloc(test, nr, sizeof(*r->bvec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->pages);
	KUNIT_ASSERT_NOT_NULL(test, r->bvec);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, reader_free_pages,
							r), 0);
	for (i = 0; i < nr; i++) {
		r->pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, r->pages[i]);
	}
	r->ubuf = kunit_vm_mmap(test, NULL, 0, BUF_LEN, PROT_READ | PROT_WRITE,
				MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, r->ubuf, 0, "kunit_vm_mmap failed");
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(r->ubuf));
	return r;
}

/*
 * Read @len bytes at @off of @file through @kind; the bytes land in
 * r->kbuf.  The user buffer is faulted in first: a fault under
 * rcu_read_lock() ends the lockless copy, and the case wants all of it.
 */
static ssize_t reader_read(struct kunit *test, struct reader *r,
			   struct file *file, enum lr_iter kind, loff_t off,
			   size_t len)
{
	struct iov_iter iter;
	struct kiocb kiocb;
	unsigned int i, nr;
	loff_t pos = off;
	ssize_t ret;

	KUNIT_ASSERT_LE(test, len, (size_t)BUF_LEN);
	memset(r->kbuf, 0xa5, len);
	switch (kind) {
	case LR_KVEC:
		return kernel_read(file, r->kbuf, len, &pos);
	case LR_BVEC:
		nr = DIV_ROUND_UP(len, PAGE_SIZE);
		for (i = 0; i < nr; i++)
			bvec_set_page(&r->bvec[i], r->pages[i],
				      min_t(size_t, PAGE_SIZE,
					    len - i * PAGE_SIZE), 0);
		iov_iter_bvec(&iter, ITER_DEST, r->bvec, nr, len);
		init_sync_kiocb(&kiocb, file);
		kiocb.ki_pos = off;
		ret = file->f_op->read_iter(&kiocb, &iter);
		for (i = 0; ret > 0 && i < DIV_ROUND_UP(ret, PAGE_SIZE); i++)
			memcpy_from_page(r->kbuf + i * PAGE_SIZE, r->pages[i], 0,
					 min_t(size_t, PAGE_SIZE,
					       ret - i * PAGE_SIZE));
		return ret;
	case LR_UBUF:
		KUNIT_ASSERT_EQ(test, clear_user((void __user *)r->ubuf, len),
				0);
		ret = vfs_read(file, (char __user *)r->ubuf, len, &pos);
		if (ret > 0)
			KUNIT_ASSERT_EQ(test,
					copy_from_user(r->kbuf,
						       (void __user *)r->ubuf,
						       ret), 0);
		return ret;
	}
	return -EINVAL;
}

/* 0 if r->kbuf[0, @n) holds the file's bytes at @off, else fail */
static int check_bytes(struct kunit *test, struct reader *r,
		       struct lr_file *lf, const char *what, loff_t off,
		       size_t n)
{
	size_t i;

	if (!memcmp(r->kbuf, lf->want + off, n))
		return 0;
	for (i = 0; i < n && r->kbuf[i] == lf->want[off + i]; i++)
		;
	KUNIT_FAIL(test, "%s: byte at %lld is %#x, want %#x", what, off + i,
		   r->kbuf[i], lf->want[off + i]);
	return -EINVAL;
}

struct read_case {
	enum lr_kind fs;
	enum lr_iter iter;
};

static const struct read_case read_cases[] = {
	{ LR_TMPFS, LR_KVEC }, { LR_TMPFS, LR_BVEC }, { LR_TMPFS, LR_UBUF },
	{ LR_TMPFS_HUGE, LR_KVEC }, { LR_TMPFS_HUGE, LR_UBUF },
	{ LR_RAMFS, LR_KVEC }, { LR_RAMFS, LR_BVEC }, { LR_RAMFS, LR_UBUF },
};

static void read_case_desc(const struct read_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %s", lr_kind_name[c->fs],
		 lr_iter_name[c->iter]);
}

KUNIT_ARRAY_PARAM(read, read_cases, read_case_desc);

/* The file: 4 MiB and 123 bytes, so that reads end short at EOF */
#define READ_FILE_SIZE	(SZ_4M + 123)

static const size_t read_lens[] = {
	1, 16, PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 1, SZ_64K, SZ_512K,
	SZ_512K + 1, SZ_1M + 3, SZ_2M,
};

static const loff_t read_offs[] = {
	0, 1, PAGE_SIZE - 1, 3 * PAGE_SIZE + 17, SZ_2M - 5,
	READ_FILE_SIZE - 100, READ_FILE_SIZE,
};

/*
 * One read of @len at @off, checked against the file and, with the switch
 * on (@lockless), against the counts of lockless copies; false on failure.
 */
static bool read_one(struct kunit *test, struct reader *r, struct lr_count *cnt,
		     struct lr_file *lf, enum lr_iter iter, bool lockless,
		     loff_t off, size_t len)
{
	size_t want = off >= lf->size ? 0 : min_t(loff_t, len, lf->size - off);
	unsigned long sections = DIV_ROUND_UP(want, SZ_512K);
	struct lr_stat s0, s1;
	char what[96];
	ssize_t n;

	snprintf(what, sizeof(what), "switch %s, %zu at %lld",
		 lockless ? "on" : "off", len, off);
	lr_count_now(cnt, &s0);
	n = reader_read(test, r, lf->file, iter, off, len);
	lr_count_now(cnt, &s1);
	KUNIT_EXPECT_EQ_MSG(test, n, (ssize_t)want, "%s", what);
	if (n != (ssize_t)want || check_bytes(test, r, lf, what, off, n))
		return false;
	if (!lockless) {
		KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 0UL,
				    "%s: copied without a reference", what);
		return s1.bytes == s0.bytes;
	}
	KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, (unsigned long)want,
			    "%s: bytes copied without a reference", what);
	if (want)
		KUNIT_EXPECT_EQ_MSG(test, s1.sections - s0.sections, sections,
				    "%s: RCU sections", what);
	return s1.bytes - s0.bytes == want &&
	       (!want || s1.sections - s0.sections == sections);
}

/*
 * Patches 13, 14, 17: with every folio flagged, reads of 1 B to 2 MiB at
 * offsets that cross page and folio boundaries and EOF return the file's
 * bytes, all of them copied without a reference, in one RCU section per
 * 512 KiB; with the switch off the same reads copy none that way and
 * return the same bytes.
 */
static void lockless_read_bytes(struct kunit *test)
{
	const struct read_case *c = test->param_value;
	struct lr_count *cnt = lr_count_start(test);
	struct lr_file *lf = lr_file_create(test, c->fs, READ_FILE_SIZE);
	struct reader *r = reader_create(test);
	unsigned int i, j, sw;

	lr_file_write(test, lf, 0, lf->size, 6);
	if (c->fs == LR_TMPFS_HUGE)
		lr_need_pmd_folio(test, lf, 0);
	make_hot(test, lf);

	for (sw = 0; sw < 2; sw++) {
		lr_switch(test, sw == 0);
		for (i = 0; i < ARRAY_SIZE(read_offs); i++)
			for (j = 0; j < ARRAY_SIZE(read_lens); j++)
				if (!read_one(test, r, cnt, lf, c->iter,
					      sw == 0, read_offs[i],
					      read_lens[j]))
					return;
	}
}

/*
 * Patch 15: after a read done without references, an FMODE_RANDOM file
 * keeps its f_ra.prev_pos; other files, and reads on the slow path, store
 * it.
 */
static void lockless_fmode_random_prev_pos(struct kunit *test)
{
	struct lr_file *lf = lr_file_create(test, LR_RAMFS, 4 * PAGE_SIZE);
	struct file *file = lf->file;
	const loff_t sentinel = 3 * PAGE_SIZE + 7;

	lr_file_write(test, lf, 0, lf->size, 7);
	make_hot(test, lf);

	file->f_mode |= FMODE_RANDOM;
	file->f_ra.prev_pos = sentinel;
	KUNIT_ASSERT_EQ(test, read_at(file, PAGE_SIZE, 16), 16);
	KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, sentinel,
			    "FMODE_RANDOM, lockless read: prev_pos stored");

	lr_switch(test, false);
	file->f_ra.prev_pos = sentinel;
	KUNIT_ASSERT_EQ(test, read_at(file, PAGE_SIZE, 16), 16);
	KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, PAGE_SIZE + 16,
			    "FMODE_RANDOM, slow path: prev_pos not stored");
	lr_switch(test, true);

	file->f_mode &= ~FMODE_RANDOM;
	file->f_ra.prev_pos = sentinel;
	KUNIT_ASSERT_EQ(test, read_at(file, PAGE_SIZE, 16), 16);
	KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, PAGE_SIZE + 16,
			    "not FMODE_RANDOM: prev_pos not stored");
}

/*
 * Patch 13: a hot folio that idle page tracking marked idle is not read
 * without a reference until an access has cleared PG_idle, so a folio
 * read only that way does not stay idle; once cleared, reads of it are
 * lockless again.
 */
static void lockless_read_clears_idle(struct kunit *test)
{
	struct lr_stat s0, s1;
	struct lr_count *cnt;
	struct folio *folio;
	struct lr_file *lf;
	bool idle;

	if (!IS_ENABLED(CONFIG_PAGE_IDLE_FLAG))
		kunit_skip(test, "needs IDLE_PAGE_TRACKING");
	cnt = lr_count_start(test);
	lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	lr_file_write(test, lf, 0, lf->size, 5);
	make_hot(test, lf);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	folio_set_idle(folio);
	/* The file holds the folio; no reference of ours to leak */
	folio_put(folio);

	/* Each read enters the folio the previous one did not end in */
	KUNIT_ASSERT_EQ(test, read_at(lf->file, PAGE_SIZE, 16), 16);
	KUNIT_ASSERT_EQ(test, read_at(lf->file, 0, 16), 16);
	idle = folio_test_idle(folio);
	KUNIT_ASSERT_EQ(test, read_at(lf->file, PAGE_SIZE, 16), 16);
	lr_count_now(cnt, &s0);
	KUNIT_ASSERT_EQ(test, read_at(lf->file, 0, 16), 16);
	lr_count_now(cnt, &s1);

	KUNIT_EXPECT_FALSE_MSG(test, idle, "a read left the hot folio idle");
	KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 16,
			    "not lockless once PG_idle was cleared");
}

/*
 * Patches 12, 17: in a tmpfs file with hot folios, a fallocated folio is
 * never flagged however often it is read, reads as zeroes, and is never
 * copied without a reference; a hole reads as zeroes too.
 */
static void lockless_shmem_falloc_and_holes(struct kunit *test)
{
	struct lr_count *cnt = lr_count_start(test);
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 8 * PAGE_SIZE);
	struct reader *r = reader_create(test);
	struct lr_stat s0, s1;
	unsigned int i;

	/* pages 0-1 and 4-7 written, 2 fallocated, 3 a hole */
	lr_file_write(test, lf, 0, 2 * PAGE_SIZE, 8);
	lr_file_write(test, lf, 4 * PAGE_SIZE, 4 * PAGE_SIZE, 8);
	KUNIT_ASSERT_EQ(test, vfs_fallocate(lf->file, FALLOC_FL_KEEP_SIZE,
					    2 * PAGE_SIZE, PAGE_SIZE), 0);
	/*
	 * Pages 0-1 read in turn get hot.  Page 2 is entered by reads that
	 * span pages 1-3 (the batch path of shmem reads) and by reads of it
	 * alone, each after a read of page 4; a fallocated folio is read as
	 * zeroes and never marked, whatever prev_pos says.
	 */
	for (i = 0; i < 16; i++) {
		alternate_reads(test, lf->file, 0, PAGE_SIZE, 1, 16);
		alternate_reads(test, lf->file, 2 * PAGE_SIZE, 4 * PAGE_SIZE,
				1, 16);
		KUNIT_ASSERT_EQ(test, reader_read(test, r, lf->file, LR_KVEC,
						  PAGE_SIZE + 100,
						  2 * PAGE_SIZE),
				(ssize_t)(2 * PAGE_SIZE));
		KUNIT_EXPECT_EQ(test, check_bytes(test, r, lf, "pages 1-3",
						  PAGE_SIZE + 100,
						  2 * PAGE_SIZE), 0);
		KUNIT_ASSERT_GT(test, read_at(lf->file, 4 * PAGE_SIZE, 16), 0);
	}
	KUNIT_EXPECT_TRUE(test, index_flagged(lf->file, 0));
	KUNIT_EXPECT_FALSE_MSG(test, index_flagged(lf->file, 2),
			       "fallocated folio flagged");

	lr_count_now(cnt, &s0);
	KUNIT_ASSERT_EQ(test, reader_read(test, r, lf->file, LR_KVEC,
					  2 * PAGE_SIZE, 2 * PAGE_SIZE),
			(ssize_t)(2 * PAGE_SIZE));
	lr_count_now(cnt, &s1);
	KUNIT_EXPECT_EQ(test, check_bytes(test, r, lf, "fallocated and hole",
					  2 * PAGE_SIZE, 2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 0UL,
			    "fallocated folio or hole copied without a reference");

	/* A read across all of it: right bytes, zeroes where nothing was written */
	KUNIT_ASSERT_EQ(test, reader_read(test, r, lf->file, LR_KVEC, 0,
					  lf->size), (ssize_t)lf->size);
	KUNIT_EXPECT_EQ(test, check_bytes(test, r, lf, "whole file", 0,
					  lf->size), 0);
}

/*
 * Patch 18: writing 0 to debugfs lockless_page_cache_read stops the copies
 * without references, 1 brings them back; the file reads back what was
 * written.
 */
static void lockless_debugfs_switch(struct kunit *test)
{
	struct lr_count *cnt = lr_count_start(test);
	struct lr_file *lf = lr_file_create(test, LR_RAMFS, 2 * PAGE_SIZE);
	struct lr_stat s0, s1;

	lr_file_write(test, lf, 0, lf->size, 9);
	make_hot(test, lf);

	lr_switch(test, false);
	KUNIT_EXPECT_EQ(test, lr_switch_get(test), 0);
	lr_count_now(cnt, &s0);
	KUNIT_ASSERT_EQ(test, read_at(lf->file, 0, 16), 16);
	lr_count_now(cnt, &s1);
	KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 0UL,
			    "switch 0: still copied without a reference");

	lr_switch(test, true);
	KUNIT_EXPECT_EQ(test, lr_switch_get(test), 1);
	lr_count_now(cnt, &s0);
	KUNIT_ASSERT_EQ(test, read_at(lf->file, 0, 16), 16);
	lr_count_now(cnt, &s1);
	KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 16UL,
			    "switch 1: not copied without a reference");
}

/* How the ABA case lets go of the file while a reader may hold its folio */
struct aba_case {
	const char *name;
	bool evict;	/* delete the file and evict its inode; else truncate */
};

static const struct aba_case aba_cases[] = {
	{ "truncated", false },
	{ "evicted", true },
};

KUNIT_ARRAY_PARAM_DESC(aba, aba_cases, name);

static void hold_release(void *unused)
{
	rcu_free_release();
}

/*
 * The v1 ABA: a reader may hold a pointer to a flagged folio while its
 * file is truncated, or deleted and its inode evicted.  Its free must stay
 * deferred: with the grace period held back (rcu_free_hold())
 * the page is neither free nor in use again afterwards.  Fails if eviction
 * or truncation clears PG_rcu_free before the free.
 */
static void lockless_evicted_folio_free_deferred(struct kunit *test)
{
	const struct aba_case *c = test->param_value;
	struct lr_file *lf = lr_file_create(test, LR_TMPFS, 2 * PAGE_SIZE);
	struct folio *folio;
	struct page *page;

	lr_file_write(test, lf, 0, lf->size, 10);
	make_hot(test, lf);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	page = &folio->page;
	folio_put(folio);

	lru_add_drain_all();
	rcu_free_hold();
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, hold_release,
							NULL), 0);
	if (c->evict)
		lr_file_drop(test, lf);
	else
		KUNIT_ASSERT_EQ(test, vfs_truncate(&lf->file->f_path, 0), 0);
	/* A page freed at once would be on a per-CPU list: move it to buddy */
	drain_all_pages(NULL);
	KUNIT_EXPECT_FALSE_MSG(test, PageBuddy(page),
			       "%s: flagged folio freed at once", c->name);
	KUNIT_EXPECT_EQ_MSG(test, page_ref_count(page), 0,
			    "%s: page in use again (or never freed)", c->name);
}

static int lockless_read_test_init(struct kunit *test)
{
	rcu_free_wait_grace();
	/*
	 * The cases expect reads without references: switch them on for the
	 * case; the value found is written back when the case ends.
	 */
	if (lr_switch_exists(test))
		lr_switch(test, true);
	return 0;
}

static void lockless_read_test_exit(struct kunit *test)
{
	/* A hold of the case ends before the wait for what it left */
	kunit_release_action(test, hold_release, NULL);
	rcu_free_wait_grace();
}

static struct kunit_case lockless_read_cases[] = {
	KUNIT_CASE(lockless_mark_repeated_reads),
	KUNIT_CASE(lockless_mark_not_cold_data),
	KUNIT_CASE(lockless_mark_counts_pages),
	KUNIT_CASE(lockless_slot_recheck),
	KUNIT_CASE(lockless_hwpoison_page_of_large_folio),
	KUNIT_CASE(lockless_shmem_counts_accesses),
	KUNIT_CASE(lockless_shmem_stays_in_folio),
	KUNIT_CASE(lockless_shmem_rereads_from_start),
	KUNIT_CASE(lockless_shmem_prev_pos),
	KUNIT_CASE_PARAM(lockless_can_copy, can_copy_gen_params),
	KUNIT_CASE_PARAM(lockless_skip_mark_accessed, lru_mode_gen_params),
	KUNIT_CASE_PARAM(lockless_read_bytes, read_gen_params),
	KUNIT_CASE(lockless_fmode_random_prev_pos),
	KUNIT_CASE(lockless_read_clears_idle),
	KUNIT_CASE(lockless_shmem_falloc_and_holes),
	KUNIT_CASE(lockless_debugfs_switch),
	KUNIT_CASE_PARAM(lockless_evicted_folio_free_deferred, aba_gen_params),
	{}
};

#else /* !CONFIG_DEBUG_PAGE_RCU_FREE */

static void lockless_read_skipped(struct kunit *test)
{
	kunit_skip(test, IS_ENABLED(CONFIG_PAGE_RCU_FREE) ?
		   "needs CONFIG_DEBUG_PAGE_RCU_FREE: the hold and wait helpers" :
		   "CONFIG_PAGE_RCU_FREE is off (rcu-free not applied)");
}

static int lockless_read_test_init(struct kunit *test)
{
	return 0;
}

static void lockless_read_test_exit(struct kunit *test)
{
}

static struct kunit_case lockless_read_cases[] = {
	KUNIT_CASE(lockless_read_skipped),
	{}
};

#endif /* CONFIG_DEBUG_PAGE_RCU_FREE */

static struct kunit_suite lockless_read_suite = {
	.name = "lockless_read",
	.init = lockless_read_test_init,
	.exit = lockless_read_test_exit,
	.test_cases = lockless_read_cases,
};

kunit_test_suite(lockless_read_suite);

MODULE_DESCRIPTION("KUnit tests for page cache reads without folio references");
MODULE_LICENSE("GPL");
