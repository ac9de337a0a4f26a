// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the deferred free of PG_rcu_free folios (rcu-free series,
 * patches 1, 4, 5): a flagged folio goes back to the allocator only after
 * an RCU grace period, expedited when its CPU piles up many pages in a zone
 * short of memory.
 *
 * Nothing sets PG_rcu_free in these patches, so each case sets it on pages
 * of its own and drops the last reference.  No grace period is waited out:
 * cases about the grace period free inside their own rcu_read_lock()
 * section, so none can end before they look (refcount, PageBuddy,
 * PG_rcu_free, nr_free_rcu); then they watch the pages come back, each
 * after a full grace period since its last put (rcu_free_helpers.h).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "rcu_free_helpers.h"

/**
 * struct flagged_case - the folio flagged_waits puts
 * @order: its order
 * @poisoned: its head page has PG_hwpoison (set by hand, cleared again
 *	inside the reader, so that the folio comes back clean)
 */
struct flagged_case {
	unsigned int order;
	bool poisoned;
};

static const struct flagged_case flagged_cases[] = {
	{ 0, false },
	{ 2, false },
	{ 2, true },
};

static void flagged_desc(const struct flagged_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "order-%u%s", c->order,
		 c->poisoned ? ", head poisoned" : "");
}

KUNIT_ARRAY_PARAM(flagged, flagged_cases, flagged_desc);

/*
 * A flagged folio whose last reference goes is neither free nor reusable
 * until a grace period ends, and is given back after one; nr_free_rcu and
 * pgfree_rcu move by exactly its page count.  A free to this CPU's pcp
 * lists would not show in the buddy allocator: they are drained first.
 * So does a large one whose head page is poisoned: a reader may be
 * copying from its other pages (only a poisoned order-0 page is dropped
 * at its free).
 */
static void rcu_free_grace_flagged_waits(struct kunit *test)
{
	const struct flagged_case *c = test->param_value;
	const long nr = 1L << c->order;
	unsigned long ev0 = vm_event(test, "pgfree_rcu");
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	long waiting_in, waiting_after;
	bool flag_in, buddy_in, same;
	struct folio *folio, *other;

	if (c->poisoned)
		rfk_require_memory_failure(test);
	folio = folio_alloc(GFP_KERNEL, c->order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);

	rcu_read_lock();
	migrate_disable();
	rfk_watch(test, &folio->page);
	if (c->poisoned)
		SetPageHWPoison(&folio->page);
	folio_put(folio);
	flag_in = folio_test_rcu_free(folio);
	waiting_in = zone_stat_sum(nr_free_rcu);
	/* This CPU's pcp lists would hand a freed folio straight back */
	other = folio_alloc(GFP_NOWAIT | __GFP_NOWARN, c->order);
	same = other == folio;
	if (other)
		folio_put(other);
	/* And keep it out of the buddy allocator's sight */
	drain_local_pages(NULL);
	buddy_in = is_free_buddy_page(&folio->page);
	if (c->poisoned)
		ClearPageHWPoison(&folio->page);
	migrate_enable();
	rcu_read_unlock();

	KUNIT_EXPECT_TRUE_MSG(test, flag_in, "freed before a grace period");
	KUNIT_EXPECT_FALSE_MSG(test, buddy_in,
			       "in the buddy allocator inside the reader");
	KUNIT_EXPECT_FALSE_MSG(test, same, "handed out again inside the reader");
	KUNIT_EXPECT_EQ(test, waiting_in - waiting0, nr);
	KUNIT_EXPECT_EQ(test, (long)(vm_event(test, "pgfree_rcu") - ev0), nr);

	KUNIT_EXPECT_TRUE_MSG(test, rfk_wait_watched(test, "the grace-period work"),
			      "still waiting after a grace period");
	waiting_after = rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0);
	KUNIT_EXPECT_EQ(test, waiting_after, waiting0);
}

/*
 * A folio without the flag is freed at once (in the buddy allocator once
 * this CPU's pcp lists are drained, or already reallocated), and nothing
 * is counted.
 */
static void rcu_free_grace_unflagged_freed_at_once(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	unsigned long ev0 = vm_event(test, "pgfree_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	bool queue = mm_hook(test, RCU_FREE_HOLD, "the queue count");
	unsigned long queued_in = 0;
	long waiting_in;
	struct page *page;
	bool freed;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);

	rcu_read_lock();
	migrate_disable();
	put_page(page);
	if (queue)
		queued_in = rcu_free_nr_queued();
	waiting_in = zone_stat_sum(nr_free_rcu);
	drain_local_pages(NULL);
	freed = is_free_buddy_page(page) || page_count(page);
	migrate_enable();
	rcu_read_unlock();

	if (queue)
		KUNIT_EXPECT_EQ(test, queued_in, 0);
	KUNIT_EXPECT_TRUE_MSG(test, freed, "not freed inside the reader");
	KUNIT_EXPECT_EQ(test, waiting_in, waiting0);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu"), ev0);
}

/*
 * Tries of the in-flight case, and those that must decide in them.  A try
 * waits for the first folio IN_FLIGHT_WAIT at most (a hang guard), or,
 * once a try decided, a try of the way that has not decided yet
 * IN_FLIGHT_SHORT times the slowest return seen, IN_FLIGHT_FLOOR at least.
 */
#define IN_FLIGHT_TRIES		20
#define IN_FLIGHT_DECISIVE	3
#define IN_FLIGHT_WAIT		(10 * HZ)
#define IN_FLIGHT_SHORT		4
#define IN_FLIGHT_FLOOR		(HZ / 10)
/*
 * The first folio's order: above PAGE_ALLOC_COSTLY_ORDER, so that its free
 * goes straight to the buddy allocator (no pcp list), where the case sees
 * it: after the frees of its batch have all been done, as
 * free_unref_folios() frees a batch together.
 */
#define IN_FLIGHT_FIRST_ORDER	(PAGE_ALLOC_COSTLY_ORDER + 1)

/* One try of the in-flight case */
struct in_flight_try {
	struct rcu_head rcu;
	struct kunit *test;
	struct rfk_span *span;
	struct folio *first, *second;
	struct completion put;
	/* Set by in_flight_put_second() */
	bool entered, overlapped;
};

/*
 * An RCU callback queued right before @first's put, with interrupts off:
 * it shares its grace period with the callback of @first's batch, queued
 * in that put, and runs just before it.  So here the first's grace period
 * is over, its batch is still in flight, and a reader begun now does not
 * hold it up.  Begin one (the span, on the other CPU), and put @second in
 * it: no grace period since that put can end until the span does.
 */
static void in_flight_put_second(struct rcu_head *rcu)
{
	struct in_flight_try *t = container_of(rcu, struct in_flight_try, rcu);

	t->entered = rfk_span_enter(t->span);
	if (t->entered) {
		rfk_watch(t->test, &t->second->page);
		folio_put(t->second);
		t->overlapped = folio_test_rcu_free(t->first);
	}
	complete(&t->put);
}

/* @folio is back in the allocator: in the buddy, or handed out again */
static bool in_flight_back(struct folio *folio)
{
	return !folio_test_rcu_free(folio) &&
	       (is_free_buddy_page(&folio->page) || page_count(&folio->page));
}

/*
 * One try: whether it decided (the first folio back while the span, which
 * began before the second's put, still ran; within @wait jiffies, and
 * @took set to how long it took).  The span fails the case if the second
 * came back inside it.
 */
static bool in_flight_try(struct kunit *test, unsigned long wait,
			  unsigned long *took)
{
	unsigned long flags, deadline, start;
	struct in_flight_try *t;
	bool back = false;

	t = kzalloc_obj(*t);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->test = test;
	init_completion(&t->put);
	t->first = folio_alloc(GFP_KERNEL, IN_FLIGHT_FIRST_ORDER);
	t->second = folio_alloc(GFP_KERNEL, 0);
	if (!t->first || !t->second) {
		if (t->first)
			folio_put(t->first);
		if (t->second)
			folio_put(t->second);
		kfree(t);
		KUNIT_FAIL_AND_ABORT(test, "could not allocate the folios");
	}
	folio_set_rcu_free(t->first);
	folio_set_rcu_free(t->second);

	migrate_disable();
	t->span = rfk_span_prepare(test);
	if (!t->span) {
		migrate_enable();
		folio_put(t->first);
		folio_put(t->second);
		kfree(t);
		KUNIT_FAIL_AND_ABORT(test, "could not create the span's thread");
	}
	rfk_watch(test, &t->first->page);
	local_irq_save(flags);
	call_rcu_hurry(&t->rcu, in_flight_put_second);
	folio_put(t->first);
	local_irq_restore(flags);
	migrate_enable();

	/* A hang guard: a grace period has to end */
	if (!wait_for_completion_timeout(&t->put, 60 * HZ))
		/* @t and the span are left to the callback: a hang */
		KUNIT_FAIL_AND_ABORT(test, "no grace period ended in 60 s");
	if (t->entered) {
		/*
		 * The grace-period work runs now, the span still holding
		 * up every grace period since @second's put.  A hang guard
		 * only: @first's grace period is over.
		 */
		start = jiffies;
		deadline = start + wait;
		while (!(back = in_flight_back(t->first)) &&
		       time_before(jiffies, deadline))
			usleep_range(20, 50);
		*took = jiffies - start;
	}
	rfk_span_end(test, t->span, "the grace-period work, with the batch in flight,");
	if (!t->entered)
		rfk_put_flagged(test, &t->second->page);
	else if (!back)
		kunit_info(test,
			   "the first folio not back in %u ms with its grace period over: its batch did not start at its put",
			   jiffies_to_msecs(wait));
	back = back && t->overlapped;
	kfree(t);
	return back;
}

/*
 * The other arrangement, for a series that waits for a batch's grace
 * period in a task or by polling, not in an RCU callback: @first is put,
 * then this task waits until a grace period has begun since (the cookie
 * of a put now differs from the one taken right after @first's) with
 * @first still waiting, enters the span and puts @second in it.  That
 * grace period, which @first's batch waits for, began before the span
 * and may end while it runs; @second's cannot.  Whether it decided, as
 * in_flight_try().
 */
static bool in_flight_try_started(struct kunit *test, unsigned long wait,
				  unsigned long *took)
{
	struct folio *first, *second;
	bool entered = false, waiting = false, back = false;
	unsigned long cookie, deadline, start;
	struct rfk_span *span;

	first = folio_alloc(GFP_KERNEL, IN_FLIGHT_FIRST_ORDER);
	second = folio_alloc(GFP_KERNEL, 0);
	if (!first || !second) {
		if (first)
			folio_put(first);
		if (second)
			folio_put(second);
		KUNIT_FAIL_AND_ABORT(test, "could not allocate the folios");
	}
	folio_set_rcu_free(first);
	folio_set_rcu_free(second);

	/* Both puts on this CPU: its lists */
	migrate_disable();
	span = rfk_span_prepare(test);
	if (!span) {
		migrate_enable();
		folio_put(first);
		folio_put(second);
		KUNIT_FAIL_AND_ABORT(test, "could not create the span's thread");
	}
	rfk_watch(test, &first->page);
	folio_put(first);
	cookie = get_state_synchronize_rcu();
	/* A hang guard: a grace period has to begin */
	deadline = jiffies + 10 * HZ;
	while (get_state_synchronize_rcu() == cookie &&
	       time_before(jiffies, deadline))
		cpu_relax();
	if (get_state_synchronize_rcu() != cookie &&
	    !in_flight_back(first)) {
		entered = rfk_span_enter(span);
		if (entered) {
			rfk_watch(test, &second->page);
			folio_put(second);
			waiting = folio_test_rcu_free(first);
		}
	}
	migrate_enable();
	if (entered) {
		/* A hang guard only: what @first waits for can end */
		start = jiffies;
		deadline = start + wait;
		while (!(back = in_flight_back(first)) &&
		       time_before(jiffies, deadline))
			usleep_range(20, 50);
		*took = jiffies - start;
	}
	rfk_span_end(test, span, "the grace-period work, with the batch in flight,");
	if (!entered)
		rfk_put_flagged(test, &second->page);
	return back && waiting;
}

/*
 * The two-list rule: a folio freed while a grace period runs for its
 * CPU's batch waits for the next one.  Arranged in every try: the second
 * folio is put, while the first's batch is in flight, inside a reader
 * that lasts until the first is back in the allocator; the second must
 * not be back inside it.  There are two ways of catching the batch in
 * flight: from an RCU callback that runs when the first's grace period is
 * over (in_flight_try(), for a batch waited for by a callback), and once
 * that grace period has begun (in_flight_try_started(), for one waited
 * for by a task or by polling).  Tries begin with the callback way and
 * keep to the way that decided; a try that does not decide hands over to
 * the other way, and both ways are tried before the case ends.  A try of
 * a way that has not decided yet, once the other did, waits only a few
 * times the slowest return seen (a try of the way that does not fit a
 * series would wait out the hang guard).  A try decides when the first
 * comes back inside the reader; no try deciding fails.  Both come back
 * through the grace-period work alone (nothing stranded on the second
 * list).
 */
static void rcu_free_grace_in_flight_waits_for_next(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	int try, decisive = 0, by_callback = 0;
	bool decided, callback_way = true, tried[2] = {}, won[2] = {};
	unsigned long took, slowest = 0, wait;

	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: the reader runs on one while the grace-period work frees on the other");
	for (try = 0; try < IN_FLIGHT_TRIES &&
	     (decisive < IN_FLIGHT_DECISIVE || !tried[0] || !tried[1]); try++) {
		/* Enough decided: the way not tried yet */
		if (decisive >= IN_FLIGHT_DECISIVE)
			callback_way = !tried[1];
		wait = IN_FLIGHT_WAIT;
		if (decisive && !won[callback_way])
			wait = min(wait, max(IN_FLIGHT_SHORT * slowest,
					     (unsigned long)IN_FLIGHT_FLOOR));
		/* What the last try left, and its callbacks, out of the way */
		rcu_barrier();
		took = 0;
		decided = callback_way ? in_flight_try(test, wait, &took) :
					 in_flight_try_started(test, wait, &took);
		tried[callback_way] = true;
		won[callback_way] |= decided;
		if (decided)
			slowest = max(slowest, took);
		decisive += decided;
		by_callback += decided && callback_way;
		if (!decided)
			callback_way = !callback_way;
		/* Fails if @second was freed before a grace period of its own */
		KUNIT_ASSERT_TRUE_MSG(test,
				      rfk_wait_watched(test, "the grace-period work"),
				      "stranded on the lists after their grace periods");
	}
	kunit_info(test, "%d tries, %d decided (%d after an RCU callback, %d once a grace period began)",
		   try, decisive, by_callback, decisive - by_callback);
	KUNIT_EXPECT_GT_MSG(test, decisive, 0,
			    "no try decided in %d: the first folio's batch never in flight at the second's put",
			    try);
	if (mm_hook(test, RCU_FREE_HOLD, "the queue count")) {
		rcu_free_wait_grace();
		KUNIT_EXPECT_EQ(test, rcu_free_nr_queued(), 0);
	}
	KUNIT_EXPECT_EQ(test, rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0),
			waiting0);
}

/*
 * A reader inside rcu_read_lock() keeps reading the old contents while the
 * freeing CPU allocates and overwrites pages; they differ from the old one.
 */
static void rcu_free_grace_reader_sees_old_contents(struct kunit *test)
{
	const int nr_new = 64;
	struct page *page, **new;
	unsigned long bad;
	int i, reused = 0;

	new = kunit_kcalloc(test, nr_new, sizeof(*new), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, new);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	rfk_fill_pattern(page, 1);

	rcu_read_lock();
	migrate_disable();
	rfk_put_flagged(test, page);
	for (i = 0; i < nr_new; i++) {
		new[i] = alloc_page(GFP_NOWAIT | __GFP_NOWARN);
		if (!new[i])
			break;
		reused += new[i] == page;
		memset(page_address(new[i]), 0xff, PAGE_SIZE);
	}
	bad = rfk_bad_bytes(page, 1);
	for (i = 0; i < nr_new && new[i]; i++)
		__free_page(new[i]);
	migrate_enable();
	rcu_read_unlock();

	KUNIT_EXPECT_EQ(test, reused, 0);
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "the reader saw changed bytes");
}

/* Pages a case took to make ZONE_DMA short, given back when it ends */
struct dma_fill {
	struct page **pages;
	int nr;
};

static void dma_fill_free(void *data)
{
	struct dma_fill *fill = data;

	while (fill->nr > 0)
		__free_page(fill->pages[--fill->nr]);
}

/* Hang guard of the waits inside a reader: what they wait for is quick */
#define PILE_HANG	(10 * HZ)

#ifdef CONFIG_TREE_RCU
static void reexpedite_gps(void *unused)
{
	rcu_expedite_gp();
}
#endif

/*
 * An expedited grace period told from a normal one, or the case skipped:
 * until the in-kernel boot ends, when built-in suites run, every
 * synchronize_rcu() is expedited (rcu_expedite_gp() at boot): that is
 * undone for the case, and redone after it.  With rcupdate.rcu_normal,
 * synchronize_rcu_expedited() waits for a normal one, and the expedited
 * sequence never moves.
 */
static void require_expedited_gps(struct kunit *test)
{
#ifdef CONFIG_TREE_RCU
	struct rcu_gp_seq c0;

	if (!rcu_inkernel_boot_has_ended() && rcu_gp_is_expedited()) {
		rcu_unexpedite_gp();
		KUNIT_ASSERT_EQ(test,
				kunit_add_action_or_reset(test, reexpedite_gps, NULL),
				0);
	}
	if (rcu_gp_is_expedited())
		kunit_skip(test,
			   "config: rcupdate.rcu_expedited: every grace period is expedited, the expedite's not told apart");
	get_state_synchronize_rcu_full(&c0);
	synchronize_rcu_expedited();
	if (!rfk_exp_gp_started(&c0))
		kunit_skip(test,
			   "config: rcupdate.rcu_normal: an expedited grace period is a normal one");
#else
	kunit_skip(test, "config: no expedited grace periods without Tree RCU");
#endif
}

/*
 * Wait, inside the reader that spans the pile's puts (@w: the last one's
 * grace-period state), until an expedited grace period has started since
 * then, or a page of the pile is back (early: no grace period since its
 * put can end inside that reader; marked, reported after it).  Whether one started; a hang guard
 * only, as the expedite work runs on the other CPU.
 */
static bool pile_wait_expedited(struct kunit *test, const struct rcu_gp_seq *w)
{
	unsigned long deadline = jiffies + PILE_HANG;

	while (!rfk_exp_gp_started(w) && !rfk_look_freed(test) &&
	       time_before(jiffies, deadline))
		cpu_relax();
	return rfk_exp_gp_started(w);
}

/* The index of vm event @name; the case fails if there is none */
static int event_item(struct kunit *test, const char *name)
{
	int i;

	for (i = 0; i < NR_VM_EVENT_ITEMS; i++)
		if (!strcmp(vm_event_name(i), name))
			break;
	KUNIT_ASSERT_LT_MSG(test, i, NR_VM_EVENT_ITEMS, "no %s in vmstat", name);
	return i;
}

/* vm event @item summed over the CPUs: any context, nothing allocated */
static unsigned long event_sum(int item)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(vm_event_states, cpu).event[item];
	return sum;
}

/*
 * After the reader of the pile's puts: once the pile's expedited grace
 * period has ended (@gp: the last put's state, complete then), a second
 * reader at once, in which no grace period that starts from then on can
 * end.  Inside it, wait until the work has counted its run (after its
 * frees) and check the pages seen back then against their cookies: a page
 * put during the first reader and freed with the pile is seen before a
 * later grace period could make its free look right.  Hang guards only.
 */
static void pile_look_back(struct kunit *test, unsigned long ev0,
			   struct rcu_gp_seq *gp)
{
	unsigned long deadline = jiffies + PILE_HANG;
	int item = event_item(test, "pgfree_rcu_expedite");

	while (!poll_state_synchronize_rcu_full(gp) &&
	       time_before(jiffies, deadline))
		cond_resched();
	rcu_read_lock();
	while (event_sum(item) == ev0 && time_before(jiffies, deadline))
		cpu_relax();
	rfk_look_freed(test);
	rcu_read_unlock();
	rfk_check_freed(test, "the expedite");
}

/*
 * The expedites that ran since @ev0, all of them counted: the expedite
 * work counts after it has handed its pages back, so once they are all
 * back, rcu_free_sync() (patch 7), which flushes any expedite work in
 * flight, leaves nothing to come.  Without it (a prefix of the series),
 * the count is waited for up to @want.
 */
static unsigned long pile_expedites(struct kunit *test, unsigned long ev0,
				    unsigned long want)
{
	if (IS_ENABLED(CONFIG_RCU_FREE_KUNIT_HAVE_SYNC)) {
		rcu_free_sync();
		return vm_event(test, "pgfree_rcu_expedite") - ev0;
	}
	return rfk_event_rise(test, "pgfree_rcu_expedite", ev0, want);
}

/*
 * Defer RCU_FREE_EXPEDITE_PAGES pages on one CPU inside a read-side
 * section (no grace period since their put can end in it).  The last
 * one, whose free decides, is in a zone far below its min watermark if
 * @is_short (ZONE_DMA, filled up with the reserves), where every
 * reasonable rule says memory is short, else in one with more than twice
 * its high watermark free, where none does.  When short, the expedite
 * work must start an expedited grace period (the expedited sequence moves)
 * while the section still runs, with no page of the pile back in it.
 * Then @nr_during more pages are freed in the same section, the last of
 * them in the short zone too: each must wait for a grace period that
 * starts after its put, not for the one in flight, which the exit's check
 * of each page's cookie tells.  The expedites that ran.
 */
static unsigned long pile_up(struct kunit *test, bool is_short,
			     int nr_during)
{
	const int nr = RCU_FREE_EXPEDITE_PAGES;
	gfp_t last = is_short ? GFP_KERNEL | GFP_DMA : GFP_KERNEL;
	unsigned long ev0, free, wmark;
	struct rfk_ctx *ctx = rfk_ctx(test);
	struct rcu_gp_seq gp_last;
	struct dma_fill *fill = NULL;
	bool expedited = false;
	struct page **pages;
	struct zone *zone;
	int i;

	rfk_require_expedite(test);
	if (is_short)
		require_expedited_gps(test);
	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: the expedite work runs on one while the case holds a reader on the other");
	if (is_short) {
		fill = kunit_kzalloc(test, sizeof(*fill), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, fill);
		fill->pages = rfk_dma_pages(test);
		KUNIT_ASSERT_EQ(test,
				kunit_add_action_or_reset(test, dma_fill_free, fill),
				0);
	}
	pages = kunit_kcalloc(test, nr + nr_during, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	rfk_alloc_all(test, pages, nr, GFP_KERNEL, last);
	if (nr_during &&
	    !rfk_try_alloc_all(pages + nr, nr_during, GFP_KERNEL, last)) {
		for (i = 0; i < nr; i++)
			__free_page(pages[i]);
		KUNIT_FAIL_AND_ABORT(test, "could not allocate %d pages",
				     nr_during);
	}
	zone = page_zone(pages[nr - 1]);
	if (is_short) {
		fill->nr = rfk_fill_zone_dma(fill->pages, 0, true);
		rfk_zone_drop_boost(zone);
	}
	/* Both views of the count the kernel may read, in the band */
	free = max(zone_page_state(zone, NR_FREE_PAGES),
		   zone_page_state_snapshot(zone, NR_FREE_PAGES));
	wmark = is_short ? min_wmark_pages(zone) : 2 * high_wmark_pages(zone);
	if (is_short ? free >= wmark : free <= wmark) {
		for (i = 0; i < nr + nr_during; i++)
			__free_page(pages[i]);
		kunit_skip(test, "machine: %s has %lu pages free, not %s %lu",
			   zone->name, free, is_short ? "below its min watermark" :
			   "above twice its high watermark", wmark);
	}
	ev0 = vm_event(test, "pgfree_rcu_expedite");

	rcu_read_lock();
	migrate_disable();
	for (i = 0; i < nr; i++)
		rfk_put_flagged(test, pages[i]);
	gp_last = ctx->watch[ctx->nr_watch - 1].gp;
	if (is_short)
		expedited = pile_wait_expedited(test, &gp_last);
	if (expedited)
		for (i = nr; i < nr + nr_during; i++)
			rfk_put_flagged(test, pages[i]);
	migrate_enable();
	rcu_read_unlock();
	if (expedited)
		pile_look_back(test, ev0, &gp_last);
	if (nr_during && !expedited)
		for (i = nr; i < nr + nr_during; i++)
			__free_page(pages[i]);
	/* ZONE_DMA need not be short any more */
	if (fill)
		dma_fill_free(fill);

	rfk_wait_watched(test, is_short ? "the expedite" : "the grace-period work");
	if (is_short)
		KUNIT_EXPECT_TRUE_MSG(test, expedited,
				      "%s: %lu pages free, below min %lu: no expedited grace period seen started for the pile before it came back or 10 s passed",
				      zone->name, free, wmark);
	return pile_expedites(test, ev0, is_short + (nr_during >= nr));
}

/*
 * A CPU's pile-up past the threshold, the last page in a zone far below
 * its min watermark, expedites once, with an expedited grace period
 */
static void rcu_free_grace_expedite_when_short(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, true, 0), 1);
}

/*
 * The same pile-up, the last page in a zone with more than twice its high
 * watermark free, waits for a normal grace period: no expedite, counted
 * once every page is back and any expedite work has finished
 */
static void rcu_free_grace_no_expedite_when_plentiful(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, false, 0), 0);
}

/* What a case frees while the expedite work waits out its grace period */
struct in_flight_case {
	const char *name;
	int nr;
};

static const struct in_flight_case in_flight_cases[] = {
	/* It waits on the second list, for the grace-period work */
	{ "one page", 1 },
	/* Another pile, expedited again: by a second run of the work */
	{ "another pile", RCU_FREE_EXPEDITE_PAGES },
};

KUNIT_ARRAY_PARAM_DESC(in_flight, in_flight_cases, name);

/*
 * The two-list rule on the expedite path: pages freed while the expedite
 * work has its pile in flight (its expedited grace period seen started,
 * so the pile is off the lists, and held up by this case's reader) wait
 * for a grace period that
 * starts after their put, whether they wait on the second list or are
 * expedited again.  No hook needed.  Every page is checked against the grace-period state
 * of its last put (and patch 19's count at the exit); a second pile is
 * expedited by a second run of the work.
 */
static void rcu_free_grace_expedite_waits_for_next(struct kunit *test)
{
	const struct in_flight_case *c = test->param_value;
	const int nr = RCU_FREE_EXPEDITE_PAGES;

	KUNIT_EXPECT_EQ(test, pile_up(test, true, c->nr),
			1 + (c->nr >= nr));
}

static struct kunit_case rcu_free_grace_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_grace_flagged_waits, flagged_gen_params),
	KUNIT_CASE(rcu_free_grace_unflagged_freed_at_once),
	KUNIT_CASE(rcu_free_grace_in_flight_waits_for_next),
	KUNIT_CASE(rcu_free_grace_reader_sees_old_contents),
	KUNIT_CASE(rcu_free_grace_expedite_when_short),
	KUNIT_CASE(rcu_free_grace_no_expedite_when_plentiful),
	KUNIT_CASE_PARAM(rcu_free_grace_expedite_waits_for_next,
			 in_flight_gen_params),
	{}
};

static struct kunit_suite rcu_free_grace_suite = {
	.name = "rcu_free_grace",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_grace_cases,
};

kunit_test_suite(rcu_free_grace_suite);

MODULE_DESCRIPTION("KUnit tests for the grace period of PG_rcu_free folios");
MODULE_LICENSE("GPL");
