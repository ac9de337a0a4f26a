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

static const unsigned int folio_orders[] = { 0, 2 };

static void order_desc(const unsigned int *order, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "order-%u", *order);
}

KUNIT_ARRAY_PARAM(folio_order, folio_orders, order_desc);

/*
 * A flagged folio whose last reference goes is neither free nor reusable
 * until a grace period ends, and is given back after one; nr_free_rcu and
 * pgfree_rcu move by exactly its page count.  A free to this CPU's pcp
 * lists would not show in the buddy allocator: they are drained first.
 */
static void rcu_free_grace_flagged_waits(struct kunit *test)
{
	const unsigned int order = *(const unsigned int *)test->param_value;
	const long nr = 1L << order;
	unsigned long ev0 = vm_event(test, "pgfree_rcu");
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	long waiting_in, waiting_after;
	bool flag_in, buddy_in, same;
	struct folio *folio, *other;

	folio = folio_alloc(GFP_KERNEL, order);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);

	rcu_read_lock();
	migrate_disable();
	rfk_watch(test, &folio->page);
	folio_put(folio);
	flag_in = folio_test_rcu_free(folio);
	waiting_in = zone_stat_sum(nr_free_rcu);
	/* This CPU's pcp lists would hand a freed folio straight back */
	other = folio_alloc(GFP_NOWAIT | __GFP_NOWARN, order);
	same = other == folio;
	if (other)
		folio_put(other);
	/* And keep it out of the buddy allocator's sight */
	drain_local_pages(NULL);
	buddy_in = is_free_buddy_page(&folio->page);
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

/* Tries of the in-flight case, and those that must decide in them */
#define IN_FLIGHT_TRIES		6
#define IN_FLIGHT_DECISIVE	3
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
 * began before the second's put, still ran).  The span fails the case if
 * the second came back inside it.
 */
static bool in_flight_try(struct kunit *test)
{
	unsigned long flags, deadline;
	struct in_flight_try *t;
	bool back = false;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
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
		deadline = jiffies + 10 * HZ;
		while (!(back = in_flight_back(t->first)) &&
		       time_before(jiffies, deadline))
			usleep_range(20, 50);
	}
	rfk_span_end(test, t->span, "the grace-period work, with the batch in flight,");
	if (!t->entered)
		rfk_put_flagged(test, &t->second->page);
	else if (!back)
		kunit_info(test,
			   "the first folio not back in 10 s with its grace period over: its batch did not start at its put");
	back = back && t->overlapped;
	kfree(t);
	return back;
}

/*
 * The two-list rule: a folio freed while a grace period runs for its
 * CPU's batch waits for the next one.  Arranged in every try: the second
 * folio is put from an RCU callback that runs when the first's grace
 * period is over and its batch still in flight, inside a reader that
 * lasts until the first is back in the allocator; the second must not be
 * back inside it.  Each try decides unless the first's batch did not
 * start at its put; no try deciding fails.  Both come back through the
 * grace-period work alone (nothing stranded on the second list).
 */
static void rcu_free_grace_in_flight_waits_for_next(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0 = zone_stat_sum(nr_free_rcu);
	int try, decisive = 0;

	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: the reader runs on one while the grace-period work frees on the other");
	for (try = 0; try < IN_FLIGHT_TRIES && decisive < IN_FLIGHT_DECISIVE;
	     try++) {
		/* What the last try left, and its callbacks, out of the way */
		rcu_barrier();
		decisive += in_flight_try(test);
		/* Fails if @second was freed before a grace period of its own */
		KUNIT_ASSERT_TRUE_MSG(test,
				      rfk_wait_watched(test, "the grace-period work"),
				      "stranded on the lists after their grace periods");
	}
	kunit_info(test, "%d tries, %d decided", try, decisive);
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

/*
 * Give filled pages back until @zone's free pages sit halfway between its
 * low and high watermarks: short of memory by the seed's rule (below
 * high), though above the watermarks that wake or stall allocations.
 * Counted with the per-CPU deltas (the snapshot): the plain count the
 * kernel reads can lag it by up to each CPU's stat threshold, and catches
 * up later, so aiming it at the middle keeps that view inside the band
 * too.  Frees landing late (other CPUs' pcp lists) only raise it;
 * dma_fill_settle() before the put takes those back.
 */
static void dma_fill_ease(struct zone *zone, struct dma_fill *fill)
{
	unsigned long want;

	rfk_zone_drop_boost(zone);
	want = (low_wmark_pages(zone) + high_wmark_pages(zone)) / 2;
	drain_all_pages(zone);
	while (fill->nr > 0 &&
	       zone_page_state_snapshot(zone, NR_FREE_PAGES) < want) {
		__free_page(fill->pages[--fill->nr]);
		drain_all_pages(zone);
	}
}

/*
 * Right before the put that decides, inside the reader: bring @zone's
 * free pages strictly between its low and high watermarks again, in the
 * plain count the kernel decides on, and below high in the true count
 * (the snapshot, which the plain one moves to when the per-CPU deltas
 * are folded: a fold in between cannot lift it to high).  Kswapd's
 * reclaim after the fill and pcp lists flushed late raise it; a plain
 * count that lagged the ease may sit below low.  One page a step: a page
 * taken back (no reclaim, no kswapd wake) or one more given back, this
 * CPU's pcp list drained after each, so the count moves by that page
 * only (an allocation refills the list with a whole batch), and any
 * watermark boost the allocation raised is dropped.  The plain count it
 * settled on, or 0 when it could not within the steps.
 */
static unsigned long dma_fill_settle(struct zone *zone, struct dma_fill *fill)
{
	unsigned long plain, snap;
	struct page *page;
	int step;

	for (step = 0; step < RFK_DMA_MAX_PAGES; step++) {
		rfk_zone_drop_boost(zone);
		plain = zone_page_state(zone, NR_FREE_PAGES);
		snap = zone_page_state_snapshot(zone, NR_FREE_PAGES);
		if (max(plain, snap) >= high_wmark_pages(zone)) {
			if (fill->nr == RFK_DMA_MAX_PAGES)
				break;
			page = alloc_page(GFP_DMA | __GFP_NOWARN);
			if (!page)
				break;
			fill->pages[fill->nr++] = page;
		} else if (plain <= low_wmark_pages(zone)) {
			if (!fill->nr)
				break;
			__free_page(fill->pages[--fill->nr]);
		} else {
			return plain;
		}
		drain_local_pages(zone);
	}
	return 0;
}

/* Why pile_up() could not free its @nr_during pages where it meant to */
enum during_miss {
	DURING_OK,
	DURING_NOT_TAKEN,	/* the work never took the pile off the lists */
	DURING_NO_GPS,		/* its grace periods not both seen started */
	DURING_UNSETTLED,	/* the short zone not settled, or it moved at the put */
};

/*
 * Defer RCU_FREE_EXPEDITE_PAGES pages on one CPU inside a read-side
 * section (no normal grace period can take any of them meanwhile).  The
 * last one, whose free decides, is in a zone short of memory if
 * @is_short (ZONE_DMA, filled up by the case, eased to between its low
 * and high watermarks and settled there right before that put), else in
 * one with plenty free.  With @nr_during,
 * once the expedite work is seen to have taken that pile off the lists
 * (the queue count: it then waits for a grace period this section holds
 * up) and both the normal grace period of the CPU's batch and that
 * expedited one have started (the RCU cookie), @nr_during more pages are
 * freed in the same section, the last of them in the short zone too:
 * each must wait for a grace period that starts after its put, not for
 * one in flight, which the exit's check of each page's cookie tells.
 * The expedites that ran.
 */
static unsigned long pile_up(struct kunit *test, bool is_short,
			     int nr_during)
{
	const int nr = RCU_FREE_EXPEDITE_PAGES;
	gfp_t last = is_short ? GFP_KERNEL | GFP_DMA : GFP_KERNEL;
	unsigned long ev0, dr0, free_in, free_out = 0, high, queued0 = 0, deadline;
	enum during_miss miss = DURING_OK;
	struct rcu_gp_seq c0;
	struct dma_fill *fill;
	struct page **pages;
	struct zone *zone;
	int i;

	rfk_require_expedite(test);
	if (nr_during) {
		/* Seeing the work take the pile needs the queue count */
		MM_HOOK_REQUIRE(test, RCU_FREE_HOLD);
		if (num_online_cpus() < 2)
			kunit_skip(test,
				   "machine: needs 2 CPUs: the expedite work runs on one while the case holds a reader on the other");
	}
	if (is_short)
		fill = kunit_kzalloc(test, sizeof(*fill), GFP_KERNEL);
	else
		fill = NULL;
	if (is_short) {
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
		fill->nr = rfk_fill_zone_dma(fill->pages, 0, false);
		dma_fill_ease(zone, fill);
	}
	ev0 = vm_event(test, "pgfree_rcu_expedite");
	dr0 = vm_event(test, "pgfree_rcu_drain");
	/* What earlier cases left waiting leaves, no grace period runs */
	if (nr_during)
		rcu_free_wait_grace();

	rcu_read_lock();
	migrate_disable();
	if (nr_during) {
		queued0 = rcu_free_nr_queued();
		get_state_synchronize_rcu_full(&c0);
	}
	if (queued0) {
		migrate_enable();
		rcu_read_unlock();
		for (i = 0; i < nr + nr_during; i++)
			__free_page(pages[i]);
		kunit_skip(test,
			   "machine: %lu pages of others queued: the count could not tell the work took this pile",
			   queued0);
	}
	for (i = 0; i < nr - 1; i++)
		rfk_put_flagged(test, pages[i]);
	/* Right before the put that decides */
	if (is_short)
		free_in = dma_fill_settle(zone, fill);
	else
		free_in = zone_page_state(zone, NR_FREE_PAGES);
	high = high_wmark_pages(zone);
	rfk_put_flagged(test, pages[nr - 1]);
	/* What the kernel read at the put lies between the two */
	if (is_short) {
		free_out = zone_page_state(zone, NR_FREE_PAGES);
		if (!free_in || free_out >= high)
			miss = DURING_UNSETTLED;
	}
	if (nr_during && free_in < high && miss == DURING_OK) {
		/*
		 * The work runs on another CPU (rcu_free_wq is unbound; it
		 * cannot preempt this section without PREEMPT_RCU).  The
		 * 10 s are a hang guard, not a window.
		 */
		deadline = jiffies + 10 * HZ;
		while (rcu_free_nr_queued() >= nr &&
		       time_before(jiffies, deadline))
			cpu_relax();
		while (!rfk_gps_started(&c0, true) && time_before(jiffies, deadline))
			cpu_relax();
		if (rcu_free_nr_queued() >= nr)
			miss = DURING_NOT_TAKEN;
		else if (!rfk_gps_started(&c0, true))
			miss = DURING_NO_GPS;
		for (i = nr; i < nr + nr_during; i++)
			rfk_put_flagged(test, pages[i]);
	}
	migrate_enable();
	rcu_read_unlock();
	/* Not short, or not settled: the others not freed in the section */
	if (nr_during && (free_in >= high || miss == DURING_UNSETTLED))
		for (i = nr; i < nr + nr_during; i++)
			__free_page(pages[i]);

	rfk_wait_watched(test, is_short ? "the expedite" : "the grace-period work");
	if (miss == DURING_UNSETTLED)
		kunit_skip(test,
			   "machine: %s's free pages not held between low %lu and high %lu up to the put (%lu, then %lu)",
			   zone->name, low_wmark_pages(zone), high, free_in,
			   free_out);
	KUNIT_ASSERT_EQ_MSG(test, free_in < high, is_short,
			    "%s: %lu pages free, high watermark %lu",
			    zone->name, free_in, high);
	/*
	 * Not seen taken, or its grace periods not seen, because nothing
	 * took the pile: the verdict, not the machine (a drain, say for an
	 * allocation elsewhere, may take it before the expedite work)
	 */
	if (miss != DURING_OK)
		KUNIT_ASSERT_GE_MSG(test,
				    rfk_event_rise(test, "pgfree_rcu_expedite",
						   ev0, 1) +
				    vm_event(test, "pgfree_rcu_drain") - dr0, 1,
				    "%s: %lu pages free, below high %lu, and neither an expedite nor a drain ran",
				    zone->name, free_in, high);
	if (miss == DURING_NOT_TAKEN)
		kunit_skip(test,
			   "machine: the expedite work did not take its pile within 10 s (not run on another CPU?)");
	if (miss == DURING_NO_GPS)
		kunit_skip(test,
			   "machine: a normal and an expedited grace period not both started within 10 s (rcu_normal, or one in progress before the case)");
	return rfk_event_rise(test, "pgfree_rcu_expedite", ev0,
			      is_short + (nr_during >= nr));
}

/*
 * A CPU's pile-up past the threshold, the last page in a zone between its
 * low and high watermarks, expedites once
 */
static void rcu_free_grace_expedite_when_short(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pile_up(test, true, 0), 1);
}

/*
 * The same pile-up, the last page in a zone with plenty free, waits for a
 * normal grace period
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
 * work has its pile in flight (taken off the lists, its expedited grace
 * period held up by this case's reader) wait for a grace period that
 * starts after their put, whether they wait on the second list or are
 * expedited again.  Every page is checked against the grace-period state
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
	KUNIT_CASE_PARAM(rcu_free_grace_flagged_waits, folio_order_gen_params),
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
