// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the range check of alloc_contig_range() and the drain
 * it makes (rcu-free series, patch 7): which pages of a busy range wait
 * for a grace period (rcu_free_range_waiting()), and a rated drain that
 * comes without its turn (a second range allocation right after one that
 * drained, the turn taken by a test hook), which must still free the
 * range, after a normal grace period.  The other cases of
 * alloc_contig_range() are in rcu_free_contig_kunit.c and
 * rcu_free_bound_kunit.c.
 *
 * alloc_contig_range() waits for a grace period itself before it looks
 * (lru_cache_disable()), so what a case frees before the call is past its
 * grace period by the time the range is checked.  The cases free their
 * pages during the call instead: a probe on the test_pages_isolated
 * tracepoint, which reports the range busy just before the range check,
 * puts them flagged.  The busy page is one of the case's, on an LRU and
 * in no mapping with one reference of the case's: isolation takes its
 * pageblock (an LRU page is movable), the migration scan skips it (an
 * unmapped folio with a reference more than its mappings), so it keeps
 * the range busy until the probe drops that reference.  Where the hook
 * is there the lists are held (rcu_free_hold()), so that only a drain
 * frees what waits; without it those parts skip by name.  The range
 * check itself is also called directly, from a probe on mm_page_free
 * while the drain hands pages back.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/swap.h>

#include "rcu_free_helpers.h"

/* Not in the tree (RCU_FREE_KUNIT_HAVE_RANGE_WAITING): never called */
#if !IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_RANGE_WAITING)
static inline bool rcu_free_range_waiting(unsigned long start_pfn,
					  unsigned long end_pfn,
					  bool poisoned_may_wait)
{
	return false;
}

static inline bool range_zone_waiting(struct zone *zone)
{
	return false;
}
#else
/* Whether @zone has pages waiting or being handed back */
static inline bool range_zone_waiting(struct zone *zone)
{
	return zone_rcu_free_waiting(zone);
}
#endif

/*
 * The pages a probe puts flagged when test_pages_isolated() reports the
 * one-page range at @start busy: once, after entering @span if set.
 */
struct busy_put {
	struct kunit *test;
	/* 0: disarmed */
	unsigned long start;
	struct page *pages[2];
	int nr;
	struct rfk_span *span;
	bool span_in;
	bool done;
};

static void busy_put_fn(void *data, unsigned long start_pfn,
			unsigned long end_pfn, unsigned long fin_pfn)
{
	struct busy_put *b = data;
	/* Pairs with busy_put_arm(): the other fields are set */
	unsigned long start = smp_load_acquire(&b->start);
	int i;

	if (!start || start_pfn != start || end_pfn != start + 1 ||
	    fin_pfn >= end_pfn || READ_ONCE(b->done))
		return;
	if (b->span)
		b->span_in = rfk_span_enter(b->span);
	for (i = 0; i < b->nr; i++)
		rfk_put_flagged(b->test, b->pages[i]);
	WRITE_ONCE(b->done, true);
}

/* The probe of @b, attached until the case ends; skips without it */
static void busy_put_attach(struct kunit *test, struct busy_put *b)
{
	b->test = test;
	if (!mm_test_probe(test, "test_pages_isolated", busy_put_fn, b))
		kunit_skip(test, "kernel: no test_pages_isolated tracepoint");
}

/* Arm @b for the range at @pfn: put @nr of @pages, inside @span if set */
static void busy_put_arm(struct busy_put *b, unsigned long pfn,
			 struct page **pages, int nr, struct rfk_span *span)
{
	WRITE_ONCE(b->start, 0);
	memcpy(b->pages, pages, nr * sizeof(*pages));
	b->nr = nr;
	b->span = span;
	b->span_in = false;
	WRITE_ONCE(b->done, false);
	/* The fields above are set before a probe sees the range */
	smp_store_release(&b->start, pfn);
}

static void busy_put_disarm(struct busy_put *b)
{
	WRITE_ONCE(b->start, 0);
}

/*
 * Make @page (the case's: order 0, its only reference) busy for
 * alloc_contig_range() as the top comment says: through @file's page
 * cache (ramfs) onto an LRU, then truncated out of it.  False, with the
 * page freed, if that did not work.
 */
static bool make_busy(struct file *file, struct page *page)
{
	struct folio *folio = page_folio(page);

	if (filemap_add_folio(file->f_mapping, folio, 0, GFP_KERNEL)) {
		folio_put(folio);
		return false;
	}
	folio_mark_uptodate(folio);
	folio_unlock(folio);
	lru_add_drain_all();
	truncate_inode_pages(file->f_mapping, 0);
	if (folio_test_lru(folio) && !folio->mapping &&
	    folio_ref_count(folio) == 1)
		return true;
	folio_put(folio);
	return false;
}

/*
 * A movable pageblock of the case's, its first @nr pages made busy (into
 * @pages), the others free: isolation checks every page of a range's
 * pageblocks, so the rest must be free or movable.  Skips when no free
 * pageblock is there; fails the case if a page could not be made busy.
 */
static void busy_block(struct kunit *test, struct file *file,
		       struct page **pages, int nr)
{
	struct page *block;
	unsigned long i;
	int j;

	block = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NORETRY | __GFP_NOWARN,
			    pageblock_order);
	if (!block)
		kunit_skip(test, "machine: no free movable pageblock");
	split_page(block, pageblock_order);
	for (i = nr; i < pageblock_nr_pages; i++)
		__free_page(block + i);
	for (j = 0; j < nr; j++) {
		if (make_busy(file, block + j)) {
			pages[j] = block + j;
			continue;
		}
		while (++j < nr)
			__free_page(block + j);
		while (j--)
			if (pages[j])
				folio_put(page_folio(pages[j]));
		KUNIT_FAIL_AND_ABORT(test, "no busy page");
	}
}

/* alloc_contig_range() of one page in a kthread of the case's */
struct range_call {
	struct completion done;
	unsigned long pfn;
	int ret;
};

static int range_call_fn(void *data)
{
	struct range_call *call = data;

	call->ret = rfk_alloc_contig(call->pfn, call->pfn + 1);
	complete(&call->done);
	return 0;
}

/* What drain_without_turn's two calls saw */
struct turn_try {
	int ret1, ret2;
	unsigned long drains1, drains2;
	/* The second call seen in a grace-period wait after the put */
	bool waited;
};

/* The turn taken by turn_try() back to the drains */
static void turn_release(void *unused)
{
	rcu_free_turn_take_hook(false);
}

/*
 * Two busy pages of a pageblock of the case's, put while
 * alloc_contig_range() of each checks its range; the first call from
 * this task, with the turn (the fixture waited it out), the second from a
 * kthread on this CPU, with the turn taken before it if @take
 * (rcu_free_turn_take_hook()), while a span (a reader on the other CPU)
 * looks from just before the put until the kthread is seen in a
 * grace-period wait (or returned).  False if the case must stop (no
 * kthread, no span: failed).
 */
static bool turn_try(struct kunit *test, struct file *file,
		     struct busy_put *b, struct turn_try *t, bool take)
{
	struct page *busy[2] = {};
	unsigned long deadline, pfn1, pfn2;
	struct page *first, *second;
	struct task_struct *task;
	struct range_call *call;
	struct rfk_span *span;
	unsigned long ev;

	memset(t, 0, sizeof(*t));
	busy_block(test, file, busy, 2);
	first = busy[0];
	second = busy[1];
	pfn1 = page_to_pfn(first);
	pfn2 = page_to_pfn(second);
	/* Not a kunit allocation: a hung kthread is left behind with it */
	call = kzalloc_obj(*call);
	if (call) {
		init_completion(&call->done);
		call->pfn = pfn2;
	}
	/*
	 * On this CPU until the span ends, with the kthread: the span's
	 * reader spins on the other one
	 */
	migrate_disable();
	span = rfk_span_prepare(test);
	task = call ? kthread_create(range_call_fn, call, "rcu_free_range") :
		      ERR_PTR(-ENOMEM);
	if (!IS_ERR(task))
		kthread_bind(task, smp_processor_id());
	if (!span || IS_ERR(task)) {
		if (!IS_ERR(task))
			kthread_stop(task);
		if (span)
			rfk_span_end(test, span, "nothing");
		migrate_enable();
		kfree(call);
		folio_put(page_folio(second));
		folio_put(page_folio(first));
		KUNIT_FAIL(test, "no kthread or no span");
		return false;
	}
	get_task_struct(task);

	/* The first call drains with the turn (the fixture waited it out) */
	ev = vm_event(test, "pgfree_rcu_drain");
	busy_put_arm(b, pfn1, &first, 1, NULL);
	t->ret1 = rfk_alloc_contig(pfn1, pfn1 + 1);
	busy_put_disarm(b);
	rfk_check_freed(test, "alloc_contig_range() with the turn");
	t->drains1 = vm_event(test, "pgfree_rcu_drain") - ev;
	if (!t->ret1)
		rfk_free_contig(pfn1, 1);
	else if (!READ_ONCE(b->done))
		folio_put(page_folio(first));

	/* The second at once, its page put inside the span */
	ev = vm_event(test, "pgfree_rcu_drain");
	busy_put_arm(b, pfn2, &second, 1, span);
	/*
	 * Whatever the time: its drain finds the turn taken.  A KUnit action
	 * gives it back, also when the case dies before it does.
	 */
	if (take && !kunit_add_action_or_reset(test, turn_release, NULL))
		rcu_free_turn_take_hook(true);
	wake_up_process(task);
	/* 10 s are a hang guard */
	deadline = jiffies + 10 * HZ;
	while (!completion_done(&call->done) && time_before(jiffies, deadline)) {
		if (READ_ONCE(b->done) && rfk_in_gp_wait(task)) {
			t->waited = true;
			break;
		}
		usleep_range(50, 100);
	}
	rfk_span_end(test, span, "a range allocation's drain without the turn");
	migrate_enable();
	if (!wait_for_completion_timeout(&call->done, 30 * HZ)) {
		if (take)
			kunit_release_action(test, turn_release, NULL);
		busy_put_disarm(b);
		put_task_struct(task);
		KUNIT_FAIL(test, "the second alloc_contig_range() hung (30 s)");
		return false;
	}
	if (take)
		kunit_release_action(test, turn_release, NULL);
	busy_put_disarm(b);
	put_task_struct(task);
	t->ret2 = call->ret;
	kfree(call);
	rfk_check_freed(test, "alloc_contig_range() without the turn");
	t->drains2 = vm_event(test, "pgfree_rcu_drain") - ev;
	if (!t->ret2)
		rfk_free_contig(pfn2, 1);
	else if (!READ_ONCE(b->done))
		folio_put(page_folio(second));

	KUNIT_EXPECT_TRUE_MSG(test, b->span_in || !b->done,
			      "the span never entered its reader");
	kunit_info(test, "calls %d and %d, %lu and %lu drains, second %s",
		   t->ret1, t->ret2, t->drains1, t->drains2,
		   t->waited ? "seen waiting for a grace period" : "returned");
	return true;
}

/*
 * A range allocation whose drain has no turn (the turn taken by
 * rcu_free_turn_take_hook() just before a second alloc_contig_range(),
 * made at once after one that drained with it) still frees the waiting
 * pages of its range, after a normal grace period: each of two calls
 * finds its one-page range busy and the page, put flagged at that
 * moment, waiting; both calls return 0, and no page of the second is back
 * inside a reader that began before its put (an rfk_span, ended once the
 * call is seen waiting for a grace period).  *held*: one drain each.
 * Without the hook the second call still runs, with or without the turn
 * as the time falls, and that it had none is not checked (named).
 */
static void rcu_free_range_drain_without_turn(struct kunit *test)
{
	struct turn_try t = {};
	struct busy_put *b;
	struct file *file;
	bool held, take;

	rfk_require_sync(test);
	rfk_require_contig(test);
#ifndef RCU_FREE_SYNC_INTERVAL
	kunit_skip(test, "not applied: no RCU_FREE_SYNC_INTERVAL in mm/page_alloc.h");
#endif
	if (num_online_cpus() < 2)
		kunit_skip(test, "machine: one CPU: the span's reader would stall the call");
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE or CONFIG_KALLSYMS is off: the call cannot be seen waiting");
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	busy_put_attach(test, b);
	file = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL), "busy");
	held = rfk_hold(test, "that each call's drain freed its page");
	take = mm_hook(test, RCU_FREE_TURN_TAKE,
		       "that the second call's drain had no turn");

	if (!turn_try(test, file, b, &t, take))
		return;
	KUNIT_EXPECT_EQ_MSG(test, t.ret1, 0,
			    "alloc_contig_range() with the turn, its page waiting");
	KUNIT_EXPECT_EQ_MSG(test, t.ret2, 0,
			    "alloc_contig_range() without the turn, its page waiting");
	if (held) {
		KUNIT_EXPECT_EQ_MSG(test, t.drains1, 1,
				    "drains of the call with the turn");
		KUNIT_EXPECT_EQ_MSG(test, t.drains2, 1,
				    "drains of the call without the turn");
	}
}

/*
 * alloc_contig_range() of one busy page whose neighbours, the page just
 * below the range and the page at its end, wait for a grace period
 * (busy too until the call finds the range busy, then put flagged): the
 * call fails with -EBUSY and frees neither neighbour before its grace
 * period.  Where the range check is of [start, end) alone
 * (rcu_free_range_waiting(), our patch 7; the seed drains when anything
 * of the zone waits), nothing of the range waits, so no drain
 * (pgfree_rcu_drain); *held*: both neighbours still wait.
 */
static void rcu_free_range_edges_not_waiting(struct kunit *test)
{
	struct page *busy[3] = {}, *around[2];
	unsigned long pfn, drains0, drains;
	struct busy_put *b;
	struct file *file;
	bool held;
	int ret;

	rfk_require_sync(test);
	rfk_require_contig(test);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	busy_put_attach(test, b);
	file = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL), "busy");
	busy_block(test, file, busy, 3);
	around[0] = busy[0];
	around[1] = busy[2];
	pfn = page_to_pfn(busy[1]);
	held = rfk_hold(test, "that the neighbours still wait");

	drains0 = vm_event(test, "pgfree_rcu_drain");
	busy_put_arm(b, pfn, around, 2, NULL);
	ret = rfk_alloc_contig(pfn, pfn + 1);
	busy_put_disarm(b);
	rfk_check_freed(test, "alloc_contig_range() of a busy page");
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	if (!ret)
		rfk_free_contig(pfn, 1);
	else
		folio_put(page_folio(busy[1]));
	if (!READ_ONCE(b->done)) {
		folio_put(page_folio(around[1]));
		folio_put(page_folio(around[0]));
		KUNIT_FAIL_AND_ABORT(test,
				     "alloc_contig_range() (%d) never found the range busy",
				     ret);
	}

	KUNIT_EXPECT_EQ_MSG(test, ret, -EBUSY,
			    "alloc_contig_range() of a page in use");
	/* The rest only for a range check of [start, end) alone */
	if (!IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_RANGE_WAITING)) {
		if (test->status != KUNIT_FAILURE)
			kunit_skip(test,
				   "not applied: no rcu_free_range_waiting(): the drain may look at the whole zone");
		return;
	}
	KUNIT_EXPECT_EQ_MSG(test, drains, 0,
			    "a drain for the waiting pages just outside [start, end)");
	if (held) {
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_rcu_free(page_folio(around[0])),
				      "the page below the range no longer waits");
		KUNIT_EXPECT_TRUE_MSG(test, folio_test_rcu_free(page_folio(around[1])),
				      "the page at the range's end no longer waits");
	}
}

/*
 * What the mm_page_free probe of free_range_not_waiting saw: the range
 * check of a free MAX_PAGE_ORDER block, at the free of the case's page
 */
struct hand_back {
	struct page *watched;
	struct page *block;
	bool called;
	/* The block was free and whole before and after the check */
	bool whole;
	bool waiting;
};

/* @block heads a free buddy block of MAX_PAGE_ORDER */
static bool block_free_whole(struct page *block)
{
	return PageBuddy(block) && buddy_order_unsafe(block) == MAX_PAGE_ORDER;
}

static void hand_back_fn(void *data, struct page *page, unsigned int order)
{
	struct hand_back *h = data;
	unsigned long pfn;
	bool whole;

	/* Pairs with the case's store: h->block is set */
	if (page != smp_load_acquire(&h->watched) || READ_ONCE(h->called))
		return;
	pfn = page_to_pfn(h->block);
	whole = block_free_whole(h->block);
	h->waiting = rcu_free_range_waiting(pfn, pfn + MAX_ORDER_NR_PAGES,
					    false);
	h->whole = whole && block_free_whole(h->block);
	WRITE_ONCE(h->called, true);
}

/* Tries of free_range_not_waiting, for one with the block intact */
#define HAND_BACK_TRIES	5

/*
 * rcu_free_range_waiting() over free pages only, a free MAX_PAGE_ORDER
 * block, called while pages taken off the lists are handed back (from a
 * probe on mm_page_free, at the free of a flagged page of the case's by
 * rcu_free_sync()): false; free pages never wait, however the hand-back
 * stands.  A try whose block was not free and whole around the call
 * decides nothing and is made again; none in HAND_BACK_TRIES skips.
 */
static void rcu_free_range_free_not_waiting(struct kunit *test)
{
	struct hand_back *h;
	int i, decisive = 0;

	rfk_require_sync(test);
	if (!IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_RANGE_WAITING))
		kunit_skip(test, "not applied: no rcu_free_range_waiting() in mm/page_alloc.h");
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	if (!mm_test_probe(test, "mm_page_free", hand_back_fn, h))
		kunit_skip(test, "kernel: no mm_page_free tracepoint");

	for (i = 0; i < HAND_BACK_TRIES && !decisive; i++) {
		struct page *block, *page;

		block = alloc_pages(GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN,
				    MAX_PAGE_ORDER);
		page = alloc_page(GFP_KERNEL);
		if (!block || !page) {
			if (page)
				__free_page(page);
			if (block)
				__free_pages(block, MAX_PAGE_ORDER);
			kunit_skip(test, "machine: no free MAX_PAGE_ORDER block");
		}
		WRITE_ONCE(h->called, false);
		h->block = block;
		/* Free (nothing above it to merge with) until someone takes it */
		__free_pages(block, MAX_PAGE_ORDER);
		/* h->block and h->called are set before the probe looks */
		smp_store_release(&h->watched, page);
		rfk_put_flagged(test, page);
		rcu_free_sync();
		rfk_wait_watched(test, "rcu_free_sync()");
		WRITE_ONCE(h->watched, NULL);
		/* Only the probe of a hand-back decides */
		KUNIT_ASSERT_TRUE_MSG(test, READ_ONCE(h->called),
				      "the flagged page was never freed");
		if (!h->whole)
			continue;
		decisive++;
		KUNIT_EXPECT_FALSE_MSG(test, h->waiting,
				       "a free MAX_PAGE_ORDER block counted as waiting while pages were handed back");
	}
	if (!decisive)
		kunit_skip(test,
			   "machine: in %d tries the MAX_PAGE_ORDER block was never free and whole around the check",
			   HAND_BACK_TRIES);
}

/**
 * struct page_state - a one-folio range as rcu_free_range_waiting() finds it
 * @desc: the row's name
 * @order: the folio's order; the range is its head page alone
 * @flagged: PG_rcu_free set
 * @poisoned: PG_hwpoison set on the head page
 * @in_use: its reference kept (else frozen at 0: not free, not in use)
 * @zone_waiting: a flagged page of the same zone waits meanwhile
 * @may_wait: the call's @poisoned_may_wait
 * @want: what the call must return
 */
struct page_state {
	const char *desc;
	unsigned int order;
	bool flagged, poisoned, in_use, zone_waiting, may_wait, want;
};

static const struct page_state page_states[] = {
	{ "in use, flagged", 0, true, false, true, true, false, false },
	{ "frozen, unflagged, nothing waiting", 0, false, false, false, false, false, false },
	{ "frozen, flagged", 0, true, false, false, false, false, true },
	{ "poisoned head, frozen flagged large folio", 2, true, true, false, false, false, true },
	{ "poisoned, flagged, zone waiting, may wait", 0, true, true, false, true, true, true },
	{ "poisoned, flagged, zone waiting", 0, true, true, false, true, false, false },
	{ "poisoned, flagged, none waiting, may wait", 0, true, true, false, false, true, false },
	{ "poisoned, unflagged, zone waiting, may wait", 0, false, true, false, true, true, false },
};

static void page_state_desc(const struct page_state *s, char *desc)
{
	strscpy(desc, s->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(page_state, page_states, page_state_desc);

/*
 * Calls of a row that must return false with nothing waiting: a hand-back
 * of another zone's pages (rcu_free_handing_back is global) can make one
 * true; the mutants these rows catch return true every time
 */
#define QUIET_TRIES	8
/* Tries of page_ref_freeze() past a passing PFN walker's reference */
#define FREEZE_TRIES	100

/* Undo what page_states_set() did to @folio and drop the case's reference */
static void page_states_undo(struct folio *folio, bool frozen)
{
	ClearPageHWPoison(&folio->page);
	if (frozen)
		folio_ref_unfreeze(folio, 1);
	folio_clear_rcu_free(folio);
	folio_put(folio);
}

/*
 * Put @folio, with only the case's reference, into state @s; false (all
 * undone) if another reference kept it from being frozen
 */
static bool page_states_set(struct folio *folio, const struct page_state *s)
{
	int i;

	if (s->flagged)
		folio_set_rcu_free(folio);
	if (s->poisoned)
		SetPageHWPoison(&folio->page);
	if (s->in_use)
		return true;
	for (i = 0; i < FREEZE_TRIES; i++) {
		if (folio_ref_freeze(folio, 1))
			return true;
		cond_resched();
	}
	page_states_undo(folio, false);
	return false;
}

/*
 * rcu_free_range_waiting() of one folio in each state the range walk
 * tells apart (page_states): a folio in use never waits; a frozen one
 * (no reference, not free) waits when flagged, else only while pages are
 * handed back; the head page of a large flagged folio waits even when
 * poisoned (only order-0 pages are dropped at their free); a poisoned
 * order-0 page counts only for a @poisoned_may_wait caller, only when
 * flagged and only while its zone has pages waiting.  The states are
 * made by hand (page_ref_freeze(), SetPageHWPoison()) and undone after
 * the call.  A waiting zone is one flagged page put inside the reader
 * the call runs in; "nothing waiting" follows rcu_free_sync(), and as a
 * hand-back elsewhere may still make a call true, such a row passes on
 * the first of QUIET_TRIES calls that returns false.
 */
static void rcu_free_range_page_states(struct kunit *test)
{
	const struct page_state *s = test->param_value;
	int i, tries = s->zone_waiting || s->want ? 1 : QUIET_TRIES;
	struct folio *folio, *other = NULL;
	bool ret = false, waiting = true;
	unsigned long pfn;

	rfk_require_sync(test);
	if (!IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_RANGE_WAITING))
		kunit_skip(test, "not applied: no rcu_free_range_waiting() in mm/page_alloc.h");
	if (s->poisoned)
		rfk_require_memory_failure(test);
	folio = folio_alloc(GFP_KERNEL, s->order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	if (s->zone_waiting) {
		other = folio_alloc(GFP_KERNEL, 0);
		if (!other || folio_zone(other) != folio_zone(folio)) {
			if (other)
				folio_put(other);
			folio_put(folio);
			kunit_skip(test, "machine: no second page from the folio's zone");
		}
		folio_set_rcu_free(other);
	}
	pfn = folio_pfn(folio);
	if (!page_states_set(folio, s)) {
		if (other) {
			folio_clear_rcu_free(other);
			folio_put(other);
		}
		kunit_skip(test, "machine: a reference besides the case's, %d tries",
			   FREEZE_TRIES);
	}

	for (i = 0; i < tries; i++) {
		if (!s->zone_waiting)
			rcu_free_sync();
		rcu_read_lock();
		if (other) {
			/* Waits past the reader: no grace period can end in it */
			rfk_watch(test, &other->page);
			folio_put(other);
			other = NULL;
			waiting = range_zone_waiting(folio_zone(folio));
		}
		ret = rcu_free_range_waiting(pfn, pfn + 1, s->may_wait);
		rcu_read_unlock();
		if (ret == s->want)
			break;
	}
	page_states_undo(folio, !s->in_use);

	KUNIT_EXPECT_TRUE_MSG(test, waiting,
			      "a flagged page put inside the reader did not wait");
	KUNIT_EXPECT_EQ_MSG(test, ret, s->want, "%s, %d call(s)", s->desc, i);
	if (s->zone_waiting)
		rfk_wait_watched(test, "the grace-period work");
}

static struct kunit_case rcu_free_range_cases[] = {
	KUNIT_CASE(rcu_free_range_drain_without_turn),
	KUNIT_CASE(rcu_free_range_edges_not_waiting),
	KUNIT_CASE(rcu_free_range_free_not_waiting),
	KUNIT_CASE_PARAM(rcu_free_range_page_states, page_state_gen_params),
	{}
};

static struct kunit_suite rcu_free_range_suite = {
	.name = "rcu_free_range",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_range_cases,
};

kunit_test_suite(rcu_free_range_suite);

MODULE_DESCRIPTION("KUnit tests for the range check of alloc_contig_range() and its drain without the turn");
MODULE_LICENSE("GPL");
