// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the decisions a read without folio references makes
 * (rcu-free series, patches 13, 14 and 17): which folios it may copy from
 * (filemap_read_rcu_can_copy()), whether the folio it found is still in
 * its slot after the copy (filemap_read_rcu_in_slot()), when it may leave
 * folio_mark_accessed() out, and that a poisoned page of a hot large folio
 * is not copied.  A read stopped inside its RCU section while the file
 * changes is in lockless_copy_window_kunit.c.
 *
 * The first three are unit tests of functions our implementation exports
 * for KUnit (hooks: the seed has them static): on a kernel without the
 * export, those cases skip whole, naming it, but for the rows of
 * filemap_read_rcu_can_copy() that a read can decide: an order-0 folio of
 * an FMODE_RANDOM ramfs file, whose f_ra.prev_pos a read keeps exactly
 * when it copied without a reference (patch 15).  The poisoned page is seen by what a read returns.
 * On a kernel without the series (no CONFIG_PAGE_RCU_FREE) every case
 * skips, saying so.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/page_idle.h>
#include <linux/pagemap.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "../internal.h"
#include "../page_alloc.h"
#include "lockless_read.h"

/* --------------------------------------------- filemap_read_rcu_can_copy */

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

/* A folio of the case's own, its flags, and the index asked about */
struct can_copy_case {
	const char *name;
	unsigned int order;
	pgoff_t index;		/* the folio's index */
	pgoff_t at;		/* the index asked about */
	unsigned long set;	/* LR_* flags to set */
};

static const struct can_copy_case accepted_cases[] = {
	{ "order-0, PG_rcu_free and uptodate", 0, 8, 8, LR_OK },
	{ "order-2, asked at its third page", 2, 8, 10, LR_OK },
	{ "shmem folio with PG_reclaim (not readahead there)", 0, 8, 8,
	  LR_OK | LR_READAHEAD | LR_SWAPBACKED },
	{ "order-9, asked at its last page", 9, 512, 1023, LR_OK },
};

static const struct can_copy_case refused_cases[] = {
	{ "no PG_rcu_free", 0, 8, 8, LR_UPTODATE },
	{ "not uptodate", 0, 8, 8, LR_RCU_FREE },
	{ "readahead folio", 0, 8, 8, LR_OK | LR_READAHEAD },
	{ "dropbehind folio", 0, 8, 8, LR_OK | LR_DROPBEHIND },
	{ "order-0 asked at another index (a split under way)", 0, 8, 9,
	  LR_OK },
	{ "hwpoisoned page", 0, 8, 8, LR_OK | LR_HWPOISON },
	{ "order-2 with PG_has_hwpoisoned", 2, 8, 10,
	  LR_OK | LR_HAS_HWPOISONED },
	{ "order-2 not uptodate", 2, 8, 10, LR_RCU_FREE },
	{ "order-2 readahead folio", 2, 8, 10, LR_OK | LR_READAHEAD },
	{ "order-2 without PG_rcu_free", 2, 8, 10, LR_UPTODATE },
	{ "order-2 with PG_hwpoison on its head", 2, 8, 10,
	  LR_OK | LR_HWPOISON },
};

KUNIT_ARRAY_PARAM_DESC(accepted, accepted_cases, name);
KUNIT_ARRAY_PARAM_DESC(refused, refused_cases, name);

/*
 * What filemap_read_rcu_can_copy() says of a folio of the case's own with
 * the flags of @c set by hand (cleared again before it is freed).
 */
static bool can_copy(struct kunit *test, const struct can_copy_case *c)
{
	struct folio *folio;
	bool got;

	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_CAN_COPY);
	if (c->order > PAGE_ALLOC_COSTLY_ORDER) {
		folio = folio_alloc(GFP_KERNEL | __GFP_NOWARN, c->order);
		if (!folio)
			kunit_skip(test, "machine: no free order-%u block",
				   c->order);
	} else {
		folio = folio_alloc(GFP_KERNEL, c->order);
	}
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

	got = filemap_read_rcu_can_copy_hook(folio, c->at);

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
	return got;
}

/*
 * What a read says of the same flags on a folio of a hot ramfs file that
 * is FMODE_RANDOM (filemap_read(), order-0 folios only): patch 15 keeps
 * f_ra.prev_pos exactly when the read was done whole without a reference,
 * and stores it when the slow path did any of it.  So a 16-byte read of
 * the folio with f_ra.prev_pos set to a sentinel tells, from the outside,
 * whether filemap_read_rcu_can_copy() accepted it.  Only for rows of an
 * order-0 folio asked at its own index: ramfs has no large folios, and no
 * read asks a folio about another index.  Sets *@accepted; false when the
 * row has no such read.
 */
#define CAN_COPY_SENTINEL	((loff_t)3)

static bool can_copy_read(struct kunit *test, const struct can_copy_case *c,
			  bool *accepted)
{
	const loff_t pos = (loff_t)c->index * PAGE_SIZE;
	struct mm_kunit_file *lf;
	struct folio *folio;
	ssize_t n;

	if (c->order || c->at != c->index)
		return false;
	lf = lr_hot_file(test, MM_KUNIT_RAMFS, (c->index + 2) * PAGE_SIZE, 7);
	lf->file->f_mode |= FMODE_RANDOM;
	folio = mm_kunit_file_folio(lf, c->index);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_ASSERT_TRUE_MSG(test, folio_test_rcu_free(folio) &&
			      folio_test_uptodate(folio),
			      "the hot folio is not flagged and uptodate");
	if (!(c->set & LR_RCU_FREE))
		folio_clear_rcu_free(folio);
	if (!(c->set & LR_UPTODATE))
		folio_clear_uptodate(folio);
	if (c->set & LR_SWAPBACKED)
		folio_set_swapbacked(folio);
	if (c->set & LR_READAHEAD)
		folio_set_readahead(folio);
	if (c->set & LR_DROPBEHIND)
		folio_set_dropbehind(folio);
	if (c->set & LR_HWPOISON)
		folio_set_hwpoison(folio);

	lf->file->f_ra.prev_pos = CAN_COPY_SENTINEL;
	n = lr_read_at(test, lf, pos, 16);

	folio_clear_hwpoison(folio);
	folio_clear_dropbehind(folio);
	folio_clear_readahead(folio);
	folio_clear_swapbacked(folio);
	folio_put(folio);
	/* A refusal may also fail the read (-EIO): it copied nothing */
	*accepted = n == 16 && lf->file->f_ra.prev_pos == CAN_COPY_SENTINEL;
	if (n == 16 && !*accepted)
		KUNIT_EXPECT_EQ_MSG(test, lf->file->f_ra.prev_pos, pos + 16,
				    "%s: f_ra.prev_pos after the slow path",
				    c->name);
	return true;
}

/*
 * Patches 13, 14, 17: a flagged, uptodate folio may be copied from.  An
 * order-0 row is decided by a read (can_copy_read()) on every kernel of
 * the series; every row also by filemap_read_rcu_can_copy() itself where
 * our hook exports it, and a row no read can ask skips without it.
 */
static void lockless_copy_accepts(struct kunit *test)
{
	const struct can_copy_case *c = test->param_value;
	bool accepted, read;

	read = can_copy_read(test, c, &accepted);
	if (read)
		KUNIT_EXPECT_TRUE_MSG(test, accepted,
				      "a read did not copy without a reference: %s",
				      c->name);
	if (read && !MM_HOOK(FILEMAP_READ_RCU_CAN_COPY))
		return;
	KUNIT_EXPECT_TRUE_MSG(test, can_copy(test, c), "refused: %s", c->name);
}

/* Patches 13, 14, 17: each reason not to copy without a reference */
static void lockless_copy_refuses(struct kunit *test)
{
	const struct can_copy_case *c = test->param_value;
	bool accepted, read;

	read = can_copy_read(test, c, &accepted);
	if (read)
		KUNIT_EXPECT_FALSE_MSG(test, accepted,
				       "a read copied without a reference: %s",
				       c->name);
	if (read && !MM_HOOK(FILEMAP_READ_RCU_CAN_COPY))
		return;
	KUNIT_EXPECT_FALSE_MSG(test, can_copy(test, c), "accepted: %s",
			       c->name);
}

/*
 * A read of 16 bytes at @at of folio 0 of a hot FMODE_RANDOM ramfs file,
 * after a last read that ended at @last (f_ra.prev_pos)
 */
struct no_access_case {
	const char *name;
	loff_t last, at;
	bool access;		/* the read enters the folio: one access */
};

static const struct no_access_case no_access_cases[] = {
	{ "inside the folio the last read ended in", 50, 100, false },
	{ "from the first byte of the folio the last read ended in", 50, 0,
	  false },
	{ "entering the folio from the next one", PAGE_SIZE + 50, 100, true },
};

KUNIT_ARRAY_PARAM_DESC(no_access, no_access_cases, name);

static void lru_gen_switch(struct kunit *test, bool on);

/*
 * Patches 13, 17: a read inside the folio the last read ended in is no
 * access (filemap_read() leaves folio_mark_accessed() out, also from the
 * folio's first byte, which only shmem counts), so it is copied without a
 * reference even where marking the folio would change something (here
 * PG_referenced, cleared by hand); a read that enters the folio is left to
 * the slow path, which marks it.  The path is told by f_ra.prev_pos, kept
 * by an FMODE_RANDOM read done without a reference (patch 15).  Under the
 * classic LRU: the multi-gen one (switched off for the case, restored by
 * an action) leaves PG_referenced of an unevictable (ramfs) folio alone.
 */
static void lockless_copy_no_access_copied(struct kunit *test)
{
	const struct no_access_case *c = test->param_value;
	struct mm_kunit_file *lf;
	struct folio *folio;

	if (lru_gen_enabled())
		lru_gen_switch(test, false);
	lf = lr_hot_file(test, MM_KUNIT_RAMFS, 2 * PAGE_SIZE, 8);
	lf->file->f_mode |= FMODE_RANDOM;
	folio = mm_kunit_file_folio(lf, 0);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_folio_put,
							folio), 0);
	KUNIT_ASSERT_TRUE_MSG(test, folio_test_rcu_free(folio),
			      "the hot folio is not flagged");
	folio_clear_referenced(folio);
	lf->file->f_ra.prev_pos = c->last;
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, c->at, 16), 16);
	KUNIT_EXPECT_EQ_MSG(test, folio_test_referenced(folio), c->access,
			    "%s: PG_referenced after the read", c->name);
	KUNIT_EXPECT_EQ_MSG(test, lf->file->f_ra.prev_pos,
			    c->access ? c->at + 16 : c->last,
			    "%s: f_ra.prev_pos (kept by a read without a reference)",
			    c->name);
}

/* ------------------------------------------------ filemap_read_rcu_in_slot */

/* A fresh xa_state of @lf's page cache */
#define LR_XAS(lf)	\
	((struct xa_state)__XA_STATE(&(lf)->file->f_mapping->i_pages, 0, 0, 0))

enum slot_layout {
	SLOT_FOUR_PAGES,	/* a 4-page tmpfs file of order-0 folios */
	SLOT_ONE_PAGE,		/* a 1-page tmpfs file: its entry has no node */
	SLOT_PMD,		/* a PMD-size folio at 0 of a huge=always file */
};

enum slot_cut {
	SLOT_NO_CUT,
	SLOT_PUNCH_AFTER,	/* the looked-up page punched after the lookup */
	SLOT_SPLIT_AFTER,	/* the PMD folio split after the lookup */
	SLOT_SPLIT_BEFORE,	/* the PMD folio split before the lookup */
};

/*
 * One question to filemap_read_rcu_in_slot(): a lookup of @index
 * (filemap_read_rcu_lookup()), then @cut, then whether the folio found is
 * in the slot of @at, with the lookup's xa_state.
 */
struct in_slot_case {
	const char *name;
	enum slot_layout layout;
	enum slot_cut cut;
	pgoff_t index;
	pgoff_t at;
	bool want;
};

static const struct in_slot_case in_slot_cases[] = {
	{ "order-0 folio, its own slot", SLOT_FOUR_PAGES, SLOT_NO_CUT, 1, 1, true },
	/* its slot number would wrap around to the folio's own slot */
	{ "index past the lookup's node", SLOT_FOUR_PAGES, SLOT_NO_CUT, 1,
	  1 + XA_CHUNK_SIZE, false },
	{ "one-page file, at 0", SLOT_ONE_PAGE, SLOT_NO_CUT, 0, 0, true },
	{ "one-page file, index 1", SLOT_ONE_PAGE, SLOT_NO_CUT, 0, 1, false },
	{ "order-0 folio punched out", SLOT_FOUR_PAGES, SLOT_PUNCH_AFTER, 1, 1,
	  false },
	{ "PMD folio, from its last page's slot (a sibling)", SLOT_PMD,
	  SLOT_NO_CUT, 0, HPAGE_PMD_NR - 1, true },
	{ "PMD folio split, its first slot", SLOT_PMD, SLOT_SPLIT_AFTER, 0, 0,
	  false },
	{ "PMD folio split, its last page's slot", SLOT_PMD, SLOT_SPLIT_AFTER,
	  0, HPAGE_PMD_NR - 1, false },
	/* a lookup after a split ends in a node of 64 order-0 slots */
	{ "after a split, a new folio in its slot", SLOT_PMD, SLOT_SPLIT_BEFORE,
	  HPAGE_PMD_NR - 12, HPAGE_PMD_NR - 12, true },
	{ "after a split, an index past the new folio's node", SLOT_PMD,
	  SLOT_SPLIT_BEFORE, HPAGE_PMD_NR - 12,
	  HPAGE_PMD_NR - 12 + XA_CHUNK_SIZE, false },
};

KUNIT_ARRAY_PARAM_DESC(in_slot, in_slot_cases, name);

/*
 * A tmpfs file of @layout, written; for SLOT_PMD its folio at 0 must be
 * PMD-size (the case skips, saying why, when the machine has none).
 */
static struct mm_kunit_file *slot_file(struct kunit *test,
				       enum slot_layout layout)
{
	struct mm_kunit_file *lf;

	switch (layout) {
	case SLOT_ONE_PAGE:
		lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, PAGE_SIZE);
		break;
	case SLOT_PMD:
		lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS_HUGE, SZ_4M);
		break;
	default:
		lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, 4 * PAGE_SIZE);
		break;
	}
	mm_kunit_file_write(test, lf, 0, lf->size, 3 + layout);
	if (layout == SLOT_PMD)
		mm_kunit_need_pmd_folio(test, lf, 0);
	return lf;
}

/* Split the PMD folio at 0 of @lf (@expect, when not NULL) */
static void slot_split(struct kunit *test, struct mm_kunit_file *lf,
		       struct folio *expect)
{
	KUNIT_ASSERT_EQ_MSG(test, mm_kunit_split_folio(lf, 0, expect), 0,
			    "split of the PMD folio failed");
}

/*
 * The re-check after i_size, filemap_read_rcu_in_slot() (patch 14), against
 * what a racing truncation, hole punch or split does to the slot a lookup
 * found (one row of in_slot_cases each).  It is a unit test of a function
 * the seed keeps static (hooks filemap_read_rcu_lookup_hook() and
 * filemap_read_rcu_in_slot_hook()): a read that comes to the re-check
 * after such a cut is only seen in a race, which lockless_read_race checks
 * by its bytes.  An xa_state is kept across a punch or a split, which
 * sleep, outside RCU: its node stays in the tree, as it still holds the
 * file's other entries.  Only pointers are compared afterwards.
 */
static void lockless_copy_in_slot(struct kunit *test)
{
	const struct in_slot_case *c = test->param_value;
	struct mm_kunit_file *lf;
	struct folio *folio;
	struct xa_state xas;
	bool in;

	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_LOOKUP);
	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_IN_SLOT);
	lf = slot_file(test, c->layout);
	if (c->cut == SLOT_SPLIT_BEFORE)
		slot_split(test, lf, NULL);
	xas = LR_XAS(lf);

	rcu_read_lock();
	folio = filemap_read_rcu_lookup_hook(&xas, c->index);
	rcu_read_unlock();
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "no folio found at %lu", c->index);

	if (c->cut == SLOT_PUNCH_AFTER)
		mm_kunit_file_punch(test, lf, c->index * PAGE_SIZE, PAGE_SIZE);
	else if (c->cut == SLOT_SPLIT_AFTER)
		slot_split(test, lf, folio);

	rcu_read_lock();
	in = filemap_read_rcu_in_slot_hook(&xas, c->at, folio);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ_MSG(test, in, c->want,
			    "%s: the folio found at %lu is%s in the slot of %lu",
			    c->name, c->index, in ? "" : " not", c->at);
}

/* The stops after the slot re-check in the case's file (test->priv) */
struct recheck_count {
	struct address_space *mapping;
	unsigned int checks;
	pgoff_t index, end;	/* what the last one was to copy */
};

/* The stub of filemap_read_rcu_window(): count the re-checks passed */
static void recheck_count_fn(struct folio *folio, pgoff_t index, pgoff_t end,
			     bool checked)
{
	struct kunit *test = kunit_get_current_test();
	struct recheck_count *rc = test ? test->priv : NULL;

	if (!rc || !checked || READ_ONCE(folio->mapping) != rc->mapping)
		return;
	rc->checks++;
	rc->index = index;
	rc->end = end;
}

/* Every other read skips the stub again, however the case ends */
static void recheck_key_off(void *unused)
{
	static_branch_disable(&filemap_read_rcu_window_on);
}

/**
 * pmd_folio_at() - the PMD-size folio at @index of @lf, or NULL
 * @lf: the case's file
 * @index: the page index
 *
 * Returns the folio (no reference kept: for comparing pointers only) when
 * the page cache holds a PMD-size one at @index, else NULL.
 */
static struct folio *pmd_folio_at(struct mm_kunit_file *lf, pgoff_t index)
{
	struct folio *folio = mm_kunit_file_folio(lf, index);
	bool pmd;

	if (!folio)
		return NULL;
	pmd = folio_size(folio) >= MM_KUNIT_PMD_BYTES;
	folio_put(folio);
	return pmd ? folio : NULL;
}

/*
 * Patch 14: a read of 16 pages inside a hot PMD-size tmpfs folio (no
 * access: the last read ended in it) is copied after one lookup and one
 * slot re-check for the folio, of the slot of the last page ("one more
 * lookup per folio"), not one per page.  The re-checks passed are counted
 * by our test hook filemap_read_rcu_window(); without it the case skips.
 * A folio split during the read (reclaim) is read per smaller folio: then
 * the case skips, seeing the folio at 0 no longer the one it was.
 */
static void lockless_copy_one_recheck_per_folio(struct kunit *test)
{
	struct folio *before, *after;
	struct mm_kunit_reader *r;
	struct recheck_count *rc;
	struct mm_kunit_file *lf;

	MM_HOOK_REQUIRE(test, FILEMAP_READ_RCU_WINDOW);
	lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS_HUGE, SZ_4M);
	mm_kunit_file_write(test, lf, 0, lf->size, 5);
	mm_kunit_need_pmd_folio(test, lf, 0);
	lr_make_hot(test, lf);
	r = mm_kunit_reader_create(test);
	rc = kunit_kzalloc(test, sizeof(*rc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rc);
	rc->mapping = lf->file->f_mapping;

	test->priv = rc;
	kunit_activate_static_stub(test, filemap_read_rcu_window,
				   recheck_count_fn);
	static_branch_enable(&filemap_read_rcu_window_on);
	mm_kunit_defer(test, recheck_key_off, NULL);
	lf->file->f_ra.prev_pos = 100;
	before = pmd_folio_at(lf, 0);
	mm_kunit_read_and_check(test, r, lf, MM_KUNIT_KVEC, PAGE_SIZE,
				16 * PAGE_SIZE);
	static_branch_disable(&filemap_read_rcu_window_on);
	kunit_deactivate_static_stub(test, filemap_read_rcu_window);
	test->priv = NULL;
	after = pmd_folio_at(lf, 0);
	if (!before || after != before)
		kunit_skip(test, "machine: the PMD folio was split during the read");

	KUNIT_ASSERT_GT_MSG(test, rc->checks, 0U,
			    "the read was not copied without a reference");
	KUNIT_EXPECT_EQ_MSG(test, rc->checks, 1U,
			    "slot re-checks of one read of pages 1-16 of a PMD folio");
	KUNIT_EXPECT_EQ(test, rc->index, 1UL);
	KUNIT_EXPECT_EQ(test, rc->end, 17UL);
}

/* ------------------------------------------- folio_may_skip_mark_accessed */

/* Not in the tree (LOCKLESS_READ_KUNIT_HAVE_SKIP_MARK_ACCESSED): never called */
#if !IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_SKIP_MARK_ACCESSED)
static inline bool folio_may_skip_mark_accessed(struct folio *folio)
{
	return false;
}
#endif

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
	     "lockless_copy: lru_gen/enabled not restored to %.*s (%zd)\n",
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
		kunit_skip(test, "config: CONFIG_LRU_GEN is off: no multi-gen LRU to switch on");
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

/* Set the flags of combination @combo on @folio */
static void skip_combo_set(struct folio *folio, unsigned int combo)
{
	unsigned long set = 0;

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
}

/*
 * Patch 13: a read without references leaves folio_mark_accessed() out only
 * where the call would change nothing.  For every combination of the flags
 * folio_may_skip_mark_accessed() reads, under the classic and the
 * multi-gen LRU: where it says skip, folio_mark_accessed() on the same
 * folio leaves the LRU flags, the refs counter and PG_idle as they were
 * (so an access recorded the slow way is never lost); and some
 * combinations do skip (the case is not passed by never skipping).
 */
static void lockless_copy_skip_mark_accessed_changes_nothing(struct kunit *test)
{
	const struct lru_mode *m = test->param_value;
	unsigned int combo, skipped = 0;
	struct folio *folio;

	if (!IS_ENABLED(CONFIG_LOCKLESS_READ_KUNIT_HAVE_SKIP_MARK_ACCESSED))
		kunit_skip(test,
			   "not applied: no folio_may_skip_mark_accessed() (our rcu-free 13) in mm/internal.h");
	if (lru_gen_enabled() != m->lru_gen)
		lru_gen_switch(test, m->lru_gen);
	folio = folio_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, folio);

	for (combo = 0; combo < BIT(NR_SK); combo++) {
		unsigned long before, after;
		bool idle_before, idle_after;

		if ((combo & BIT(SK_ACTIVE)) && (combo & BIT(SK_UNEVICTABLE)))
			continue;	/* never both */
		skip_combo_set(folio, combo);
		before = folio->flags.f & MARK_ACCESSED_FLAGS;
		idle_before = folio_test_idle(folio);
		if (!folio_may_skip_mark_accessed(folio))
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

/* ------------------------------------------------------------ hwpoison */

/* A tmpfs file with a poisoned page: in a PMD-size folio or alone */
struct hwpoison_case {
	const char *name;
	enum mm_kunit_fs kind;
};

static const struct hwpoison_case hwpoison_cases[] = {
	{ "page of a PMD folio without PG_has_hwpoisoned", MM_KUNIT_TMPFS_HUGE },
	{ "order-0 folio", MM_KUNIT_TMPFS },
};

KUNIT_ARRAY_PARAM_DESC(hwpoison, hwpoison_cases, name);

/*
 * Patches 13, 14: in a hot tmpfs file, a page with PG_hwpoison is not
 * copied without a reference; the read of it fails as shmem's own path
 * fails it, and the page before it is read.  In a PMD-size folio the
 * folio lacks PG_has_hwpoisoned (as while a split runs: it clears the
 * folio's flag before the new folios get theirs).  The flag is set and
 * cleared by hand.
 */
static void lockless_copy_hwpoison_page_not_read(struct kunit *test)
{
	const struct hwpoison_case *c = test->param_value;
	struct mm_kunit_file *lf;
	struct page *page;
	ssize_t at, before;

	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "config: CONFIG_MEMORY_FAILURE is off (no PG_hwpoison)");
	lf = mm_kunit_fs_file_create(test, c->kind, SZ_2M);
	mm_kunit_file_write(test, lf, 0, lf->size, 6);
	if (c->kind == MM_KUNIT_TMPFS_HUGE)
		mm_kunit_need_pmd_folio(test, lf, 0);
	lr_make_hot(test, lf);
	page = find_get_page(lf->file->f_mapping, 5);
	KUNIT_ASSERT_NOT_NULL(test, page);
	SetPageHWPoison(page);
	at = lr_read_at(test, lf, 5 * PAGE_SIZE, 16);
	before = lr_read_at(test, lf, 4 * PAGE_SIZE, 16);
	ClearPageHWPoison(page);
	put_page(page);
	KUNIT_EXPECT_EQ_MSG(test, at, -EIO, "%s: the page with PG_hwpoison was read",
			    c->name);
	KUNIT_EXPECT_EQ(test, before, 16);
}

static int lockless_copy_test_init(struct kunit *test)
{
	lr_require_rcu_free(test);
	lr_wait_deferred();
	if (lr_switch_exists(test))
		lr_switch(test, true);
	return 0;
}

static void lockless_copy_test_exit(struct kunit *test)
{
	lr_wait_deferred();
}

static struct kunit_case lockless_copy_cases[] = {
	KUNIT_CASE_PARAM(lockless_copy_accepts, accepted_gen_params),
	KUNIT_CASE_PARAM(lockless_copy_refuses, refused_gen_params),
	KUNIT_CASE_PARAM(lockless_copy_no_access_copied, no_access_gen_params),
	KUNIT_CASE_PARAM(lockless_copy_in_slot, in_slot_gen_params),
	KUNIT_CASE(lockless_copy_one_recheck_per_folio),
	KUNIT_CASE_PARAM(lockless_copy_skip_mark_accessed_changes_nothing,
			 lru_mode_gen_params),
	KUNIT_CASE_PARAM(lockless_copy_hwpoison_page_not_read,
			 hwpoison_gen_params),
	{}
};

static struct kunit_suite lockless_copy_suite = {
	.name = "lockless_copy",
	.init = lockless_copy_test_init,
	.exit = lockless_copy_test_exit,
	.test_cases = lockless_copy_cases,
};

kunit_test_suite(lockless_copy_suite);

MODULE_DESCRIPTION("KUnit tests of what a read without folio references may copy");
MODULE_LICENSE("GPL");
