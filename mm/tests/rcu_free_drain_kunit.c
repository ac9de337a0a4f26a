// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for what frees the pages waiting for a grace period early
 * (rcu-free series, patches 6 and 7): the drain before OOM, its decision
 * and its bound, and rcu_free_sync().  alloc_contig_range() is in
 * rcu_free_contig_kunit.c, memory offline in rcu_free_offline_kunit.c.
 *
 * Each case frees flagged pages of its own and then drives the path under
 * test.  Where the hook is there, the case holds the lists while it frees
 * (rcu_free_hold()): what it frees then waits with no grace period, normal
 * or expedited, started for it, so only the path under test can free it,
 * and the case also checks that the path did (pgfree_rcu_drain,
 * nr_free_rcu, the buddy lists).  Without the hook those parts are skipped
 * by name and the rest decides: the allocation succeeds or fails as it
 * must, and every page seen back had a full grace period since its last
 * put (rcu_free_helpers.h).  Holding a real reader instead would stall the
 * synchronize_rcu() calls on those paths (lru_cache_disable() in
 * alloc_contig_range(), for one).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/sched/task.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmstat.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

/* Inputs of the drain-before-OOM decision, and what it must decide */
struct drain_case {
	const char *name;
	unsigned int order;
	unsigned long waiting, free, reclaimable;
	bool dying;
	int drains;
	bool helps;
};

/*
 * The zone has a min watermark of 1000 and no free block of any order:
 * a check at order > 0 that wanted one could never pass.
 */
#define MIN_WMARK	1000
static const struct drain_case drain_cases[] = {
	{ "nothing waiting", 0, 0, 5000, 0, false, 0, false },
	{ "waiting+free at min", 0, 400, 600, 0, false, 0, false },
	{ "waiting+free above min", 0, 400, 601, 0, false, 0, true },
	{ "reclaimable counted", 0, 300, 300, 401, false, 0, true },
	{ "waiting alone above min", 0, 1001, 0, 0, false, 0, true },
	{ "order-2 needs its 4 pages", 2, 500, 503, 0, false, 0, false },
	{ "order-2 above min by 4", 2, 500, 504, 0, false, 0, true },
	{ "order-9 counted at order 0", 9, 5000, 0, 0, false, 0, true },
	{ "dying task", 0, 5000, 0, 0, true, 0, false },
	{ "last drain of the streak", 0, 5000, 0, 0, false,
	  RCU_FREE_MAX_DRAINS - 1, true },
	{ "streak bound reached", 0, 5000, 0, 0, false,
	  RCU_FREE_MAX_DRAINS, false },
};

KUNIT_ARRAY_PARAM_DESC(drain, drain_cases, name);

/* The drain-before-OOM decision on constructed inputs */
static void rcu_free_drain_decision(struct kunit *test)
{
	const struct drain_case *c __maybe_unused = test->param_value;

	MM_HOOK_REQUIRE(test, RCU_FREE_DRAIN_HELPS);
#if MM_HOOK(RCU_FREE_DRAIN_HELPS)
	{
		struct rcu_free_drain_query q = {
			.order = c->order,
			.highest_zoneidx = 0,
			.alloc_flags = ALLOC_WMARK_MIN,
			.waiting = c->waiting,
			.free = c->free,
			.reclaimable = c->reclaimable,
			.dying = c->dying,
			.drains = c->drains,
		};

		q.zone = kunit_kzalloc(test, sizeof(*q.zone), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, q.zone);
		q.zone->_watermark[WMARK_MIN] = MIN_WMARK;
		KUNIT_EXPECT_EQ(test, rcu_free_drain_helps_hook(&q), c->helps);
	}
#endif
}

/*
 * ZONE_DMA is filled up to its min watermark and all of it freed with the
 * flag: an allocation from it that may not use the reserves succeeds, by
 * a drain of the waiting pages (held back: nothing else frees them)
 * instead of failing.
 */
static void rcu_free_drain_before_oom(struct kunit *test)
{
	struct page **pages = rfk_dma_pages(test);
	/* Counters first: a missing one must not leave the zone filled */
	long waiting0 = zone_stat(test, "nr_free_rcu");
	unsigned long ev0 = vm_event(test, "pgfree_rcu_drain");
	unsigned long drains;
	struct page *page;
	bool held;
	long left;
	int i, n;

	n = rfk_fill_zone_dma(pages, 0, false);
	KUNIT_ASSERT_GT(test, n, 0);

	held = rfk_hold(test, "that a drain freed them");
	for (i = 0; i < n; i++)
		rfk_put_flagged(test, pages[i]);
	page = alloc_page(GFP_KERNEL | GFP_DMA | __GFP_RETRY_MAYFAIL |
			  __GFP_NOWARN);
	rfk_check_freed(test, "the drain before OOM");
	left = zone_stat(test, "nr_free_rcu") - waiting0;
	drains = vm_event(test, "pgfree_rcu_drain") - ev0;
	if (page)
		__free_page(page);

	KUNIT_EXPECT_NOT_NULL_MSG(test, page, "%d pages waiting in ZONE_DMA", n);
	if (held) {
		KUNIT_EXPECT_EQ_MSG(test, left, 0,
				    "the waiting pages were not drained");
		KUNIT_EXPECT_GE(test, drains, 1);
	}
}

/*
 * ZONE_DMA is emptied, reserves included, and only its even pages are
 * freed with the flag: after the drain no two free pages are buddies, so
 * an order-3 allocation still fails.  It must fail after exactly one
 * drain, which frees every waiting page, rather than drain again for
 * nothing, retry forever or OOM-kill.  The even pages wait until the
 * allocation drains them: the lists are held, or, without that hook, the
 * gate holds their grace period back until the allocation waits for one
 * (rcu_free_gate.h).
 */
static void rcu_free_drain_that_cannot_help_ends(struct kunit *test)
{
	struct page **pages = rfk_dma_pages(test);
	/* Counters first: a missing one must not leave the zone filled */
	long waiting0 = zone_stat(test, "nr_free_rcu");
	unsigned long ev0 = vm_event(test, "pgfree_rcu_drain");
	const char *part = "that the drain alone freed the waiting pages";
	struct rfg_gate *gate = NULL;
	unsigned long drains;
	unsigned int waits = 0;
	bool hung = false;
	struct page *page;
	int i, n, held = 0;
	long left;

	/* Before the fill: it may end the case */
	gate = rfg_hold(test, part);
	drain_all_pages(NULL);
	n = rfk_fill_zone_dma(pages, 0, false);
	n = rfk_fill_zone_dma(pages, n, true);
	rfg_inside(gate);
	for (i = 0; i < n; i++) {
		if (page_to_pfn(pages[i]) & 1)
			pages[held++] = pages[i];
		else
			rfk_put_flagged(test, pages[i]);
	}
	page = n ? alloc_pages(GFP_KERNEL | GFP_DMA | __GFP_RETRY_MAYFAIL |
			       __GFP_NOWARN, 3) : NULL;
	/* Before the gate lets a normal grace period end */
	left = zone_stat(test, "nr_free_rcu") - waiting0;
	drains = vm_event(test, "pgfree_rcu_drain") - ev0;
	rfg_stop(gate, &waits, &hung);
	rfk_check_freed(test, "the drain before OOM");
	if (page)
		__free_pages(page, 3);
	for (i = 0; i < held; i++)
		__free_page(pages[i]);

	KUNIT_ASSERT_GT(test, n, 0);
	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the allocation did not wait for a grace period in 10 s with %d pages waiting",
			       n - held);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ_MSG(test, drains, 1,
			    "drains of %d waiting pages that cannot give an order-3 block",
			    n - held);
	KUNIT_EXPECT_EQ_MSG(test, left, 0, "the waiting pages were not drained");
}

/* Pages a batch of the drain streak case queues */
#define STREAK_BATCH	128

/* A drain streak case: whether a second streak starts after progress */
struct streak_case {
	const char *name;
	bool progress;
};

static const struct streak_case streak_cases[] = {
	{ "no progress: the streak ends", false },
	{ "progress after the streak ended: a new one", true },
};

KUNIT_ARRAY_PARAM_DESC(streak, streak_cases, name);

/*
 * What the drain streak case's shrinker works with.  Direct reclaim calls
 * it, in the allocating task, in every round before the allocator decides
 * whether to drain: each round after a drain it frees a new batch of even
 * ZONE_DMA pages flagged (held, or inside the gate's section: they wait),
 * so that every round finds pages worth draining; in round
 * @progress_round it also frees one page and reports it reclaimed.
 */
struct streak {
	struct kunit *test;
	struct shrinker *shrinker;
	struct task_struct *task;
	struct rfg_gate *gate;
	/* The held ZONE_DMA pages: @nr_even even ones first, then the odd */
	struct page **pages;
	int nr, nr_even;
	struct page *last;	/* first page of the last batch queued */
	int queued;		/* batches queued, every allocation */
	int rounds;		/* batches queued, this allocation */
	int progress_round;
	bool ran_out;		/* a round found no batch left to queue */
};

static unsigned long streak_count(struct shrinker *shrinker,
				  struct shrink_control *sc)
{
	struct streak *s = shrinker->private_data;

	if (current != s->task)
		return 0;
	/* With seeks 0 and batch 1: one scan in every call, at any priority */
	return 2;
}

static unsigned long streak_scan(struct shrinker *shrinker,
				 struct shrink_control *sc)
{
	struct streak *s = shrinker->private_data;
	struct page **batch;
	int i;

	if (current != s->task)
		return SHRINK_STOP;
	/* The last batch still waits: this round has its pages already */
	if (s->last && folio_test_rcu_free(page_folio(s->last)))
		return 0;
	/* The last even page is the progress one */
	if ((s->queued + 1) * STREAK_BATCH >= s->nr_even) {
		s->ran_out = true;
		return SHRINK_STOP;
	}
	batch = s->pages + s->queued * STREAK_BATCH;
	s->last = batch[0];
	rfg_inside(s->gate);
	for (i = 0; i < STREAK_BATCH; i++) {
		rfk_put_flagged(s->test, batch[i]);
		batch[i] = NULL;
	}
	s->queued++;
	if (++s->rounds == s->progress_round) {
		__free_page(s->pages[s->nr_even - 1]);
		s->pages[s->nr_even - 1] = NULL;
		mm_account_reclaimed_pages(1);
	}
	return 0;
}

static void streak_release(void *data)
{
	struct streak *s = data;
	int i;

	shrinker_free(s->shrinker);
	for (i = 0; i < s->nr; i++)
		if (s->pages[i])
			__free_page(s->pages[i]);
}

/*
 * One order-3 allocation from ZONE_DMA, whose free pages can never form an
 * order-3 block, reporting progress in round @progress_round (0: never):
 * the drains it made (each counted in pgfree_rcu_drain).
 */
static unsigned long streak_alloc(struct kunit *test, struct streak *s,
				  int progress_round)
{
	unsigned long ev0 = vm_event(test, "pgfree_rcu_drain");
	struct page *page;

	s->rounds = 0;
	s->last = NULL;
	s->progress_round = progress_round;
	/*
	 * Without __GFP_FS and __GFP_IO: no compaction, and no other shrinker
	 * frees slab pages for this reclaim to count as progress.
	 */
	page = alloc_pages((GFP_NOIO & ~__GFP_KSWAPD_RECLAIM) | GFP_DMA |
			   __GFP_RETRY_MAYFAIL | __GFP_NOWARN, 3);
	rfk_check_freed(test, "the drain before OOM");
	if (page) {
		__free_pages(page, 3);
		KUNIT_FAIL(test, "an order-3 block of ZONE_DMA came free");
	}
	return vm_event(test, "pgfree_rcu_drain") - ev0;
}

/*
 * The drain before OOM through a real allocation: an order-3 allocation
 * from ZONE_DMA, whose free pages can never form an order-3 block, with
 * pages waiting again before each decision.  It fails in the end.  A
 * streak of reclaim rounds without progress drains a bounded number of
 * times: at least once, and it ends while the shrinker still has pages
 * waiting to offer (every round but the last drained, each counted in
 * pgfree_rcu_drain).  How many drains a streak allows is the series'
 * choice, not pinned here.  With progress in the round after a streak
 * ended (a second allocation), a new streak starts: twice the drains.
 * The shrinker queues one batch more than was drained: the round that
 * found the streak over.  The batches wait until a drain frees them: the
 * lists are held, or, without that hook, the gate holds their grace
 * period back until the allocation waits for one (rcu_free_gate.h).
 */
static void rcu_free_drain_streak(struct kunit *test)
{
	const struct streak_case *c = test->param_value;
	struct page **pages = rfk_dma_pages(test);
	const char *part = "that each batch waited until a drain";
	unsigned long drains, again = 0;
	unsigned int waits;
	struct streak *s;
	int i, n, odd = 0, first_rounds;
	bool hung, ran_out;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	s->task = current;
	s->shrinker = shrinker_alloc(0, "rcu_free-kunit-streak");
	KUNIT_ASSERT_NOT_NULL(test, s->shrinker);
	s->shrinker->count_objects = streak_count;
	s->shrinker->scan_objects = streak_scan;
	s->shrinker->seeks = 0;
	s->shrinker->batch = 1;
	s->shrinker->private_data = s;
	s->pages = pages;
	/* Before the fill: it may end the case */
	s->gate = rfg_hold(test, part);

	drain_all_pages(NULL);
	n = rfk_fill_zone_dma(pages, 0, false);
	n = rfk_fill_zone_dma(pages, n, true);
	/* Even pages first, for the batches; the odd ones stay held */
	for (i = 0; i < n - odd; ) {
		if (page_to_pfn(pages[i]) & 1) {
			swap(pages[i], pages[n - 1 - odd]);
			odd++;
		} else {
			i++;
		}
	}
	s->nr = n;
	s->nr_even = n - odd;
	if (n)
		rfk_zone_drop_boost(page_zone(pages[0]));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, streak_release, s),
			0);
	KUNIT_ASSERT_GT_MSG(test, s->nr_even, 8 * STREAK_BATCH,
			    "even pages of ZONE_DMA");
	shrinker_register(s->shrinker);

	drains = streak_alloc(test, s, 0);
	first_rounds = s->rounds;
	ran_out = s->ran_out;
	/* A second streak, after progress where the first one ended */
	if (c->progress && !ran_out) {
		if ((s->queued + 2 * drains + 1) * STREAK_BATCH >= s->nr_even) {
			rfg_stop(s->gate, NULL, NULL);
			kunit_skip(test,
				   "machine: ZONE_DMA has %d even pages, too few for a second streak of %lu drains and a third",
				   s->nr_even, drains);
		}
		again = streak_alloc(test, s, drains + 1);
	}
	rfg_stop(s->gate, &waits, &hung);

	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the allocation did not wait for a grace period in 10 s with a batch waiting");
	KUNIT_EXPECT_GE_MSG(test, drains, 1, "no drain in %d rounds",
			    first_rounds);
	KUNIT_EXPECT_FALSE_MSG(test, ran_out,
			       "the streak did not end: %lu drains, %d batches of %d pages queued",
			       drains, s->queued, STREAK_BATCH);
	KUNIT_EXPECT_EQ_MSG(test, first_rounds, drains + 1,
			    "batches queued: one per drain and the last");
	if (!c->progress || ran_out)
		return;
	KUNIT_EXPECT_FALSE_MSG(test, s->ran_out,
			       "the second streak ran out of batches");
	KUNIT_EXPECT_EQ_MSG(test, again, 2 * drains,
			    "drains with progress in round %lu, after %lu without",
			    drains + 1, drains);
	KUNIT_EXPECT_EQ_MSG(test, s->rounds, (int)again + 1,
			    "batches queued: one per drain and the last");
}

/*
 * rcu_free_sync() returns with every waiting page back, on the buddy
 * lists, where the next watermark check sees it, not on a per-CPU list.
 * ZONE_DMA, which nothing else allocates from here, keeps the pages where
 * the drain put them.
 */
static void rcu_free_drain_sync_frees_to_buddy(struct kunit *test)
{
	const int nr = 64;
	struct page **pages = rfk_dma_pages(test);
	int i, in_buddy = 0, back;
	bool held;

	rfk_require_sync(test);
	rfk_alloc_all(test, pages, nr, GFP_KERNEL | GFP_DMA | __GFP_NOWARN,
		      GFP_KERNEL | GFP_DMA | __GFP_NOWARN);
	held = rfk_hold(test, "that rcu_free_sync() put them on the buddy lists");
	for (i = 0; i < nr; i++)
		rfk_put_flagged(test, pages[i]);
	rcu_free_sync();
	back = rfk_check_freed(test, "rcu_free_sync()");
	for (i = 0; i < nr; i++)
		in_buddy += is_free_buddy_page(pages[i]);

	KUNIT_EXPECT_EQ_MSG(test, back, nr, "still waiting after rcu_free_sync()");
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, in_buddy, nr,
				    "drained pages not on the buddy lists");
}

/* rcu_free_sync() in a kthread, and whether it has returned */
struct sync_call {
	struct completion done;
	/* Set just before rcu_free_sync() is called */
	bool entered;
	/* sync_turn_fn(): what rcu_free_sync_turn() returned */
	bool freed;
};

static int sync_fn(void *data)
{
	struct sync_call *call = data;

	WRITE_ONCE(call->entered, true);
	rcu_free_sync();
	complete(&call->done);
	return 0;
}

/*
 * rcu_free_sync_turn(), compaction's call, in a kthread: only with our
 * turn hook, which implies every feature patch (never called without)
 */
static int sync_turn_fn(void *data)
{
	struct sync_call *call = data;

	WRITE_ONCE(call->entered, true);
#if MM_HOOK(RCU_FREE_TURN_TAKE)
	call->freed = rcu_free_sync_turn();
#endif
	complete(&call->done);
	return 0;
}

/* Pages of each set drain_in_flight frees */
#define IN_FLIGHT_PAGES	8

/*
 * The two-list rule on the drain, and nothing lost: pages freed while a
 * drain has its pages in flight (taken off the lists, its expedited grace
 * period held up by this case's reader) wait for a grace period that
 * starts after their put; the drain does not hand them back with what it
 * took, and what it took all comes back.  The first set is freed inside
 * the reader, on this CPU (no hold): its first page starts the CPU's
 * batch, whose grace period the reader holds up, the others wait on the
 * next list, so the drain takes both lists.  rcu_free_sync() runs in a
 * kthread on the other CPU, and the second set is freed once that
 * kthread is seen asleep in a grace-period wait with an expedited grace
 * period started since the reader began (the RCU cookie): the one the
 * drain waits for, which cannot count for the second set (10 s are a hang
 * guard; not seen by then fails).  When rcu_free_sync() returns, the
 * first set is back (only the drain could free it: its grace period
 * needed the reader gone, and the drain took it before); every page is
 * checked against the grace-period state of its last put (and patch 19's
 * count at the exit), and once the second set has had its grace period
 * nr_free_rcu is back where it was.  With the turn hook, the turn of the
 * rated drains is forced taken throughout: rcu_free_sync(), the drain
 * before OOM, waits for an expedited grace period whoever drained last.
 */
static void rcu_free_drain_in_flight_waits_for_next(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	struct page *pages[2 * IN_FLIGHT_PAGES];
	bool returned, waiting = false, started = false;
	unsigned long deadline;
	struct task_struct *task;
	struct sync_call *call;
	long waiting0, waiting_later;
	struct rcu_gp_seq c0;
	unsigned int back;
	int i;

	rfk_require_sync(test);
	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: the drain runs on one while the case holds a reader on the other");
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS) ||
	    !IS_ENABLED(CONFIG_TREE_RCU))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE, CONFIG_KALLSYMS or CONFIG_TREE_RCU is off: the drain cannot be seen waiting");
	call = kunit_kzalloc(test, sizeof(*call), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, call);
	init_completion(&call->done);
	if (mm_hook(test, RCU_FREE_TURN_TAKE,
		    "an expedited grace period with the turn taken"))
		rfk_turn_force(test, RCU_FREE_TURN_TAKEN);
	rfk_alloc_all(test, pages, ARRAY_SIZE(pages), GFP_KERNEL, GFP_KERNEL);
	waiting0 = zone_stat_sum(nr_free_rcu);

	migrate_disable();
	task = rfk_other_cpu_thread(sync_fn, call, "rcu_free_sync");
	if (IS_ERR(task)) {
		migrate_enable();
		for (i = 0; i < ARRAY_SIZE(pages); i++)
			__free_page(pages[i]);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	/* Its stack is looked at until this thread has left the section */
	get_task_struct(task);
	rcu_read_lock();
	get_state_synchronize_rcu_full(&c0);
	for (i = 0; i < IN_FLIGHT_PAGES; i++)
		rfk_put_flagged(test, pages[i]);
	wake_up_process(task);
	deadline = jiffies + 10 * HZ;
	while (!(returned = completion_done(&call->done)) &&
	       !((waiting = rfk_in_gp_wait(task)) &&
		 (started = rfk_exp_gp_started(&c0))) &&
	       time_before(jiffies, deadline))
		cpu_relax();
	for (i = IN_FLIGHT_PAGES; i < ARRAY_SIZE(pages); i++)
		rfk_put_flagged(test, pages[i]);
	rcu_read_unlock();
	migrate_enable();
	wait_for_completion(&call->done);
	put_task_struct(task);
	back = rfk_check_freed(test, "a drain with pages in flight");
	rfk_wait_watched(test, "the grace-period work");
	waiting_later = rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0);

	KUNIT_EXPECT_FALSE_MSG(test, returned,
			       "rcu_free_sync() returned inside a reader's section");
	KUNIT_EXPECT_TRUE_MSG(test, returned || (waiting && started),
			      "the drain not seen in a synchronize_rcu*() or wait_rcu_gp() wait with an expedited grace period started (%d, %d) in 10 s",
			      waiting, started);
	KUNIT_EXPECT_GE_MSG(test, back, IN_FLIGHT_PAGES,
			    "the drain left pages it took waiting");
	KUNIT_EXPECT_EQ_MSG(test, waiting_later, waiting0,
			    "nr_free_rcu not back after every page came back");
}

/*
 * Whether @task, running sync_fn() of @call, sleeps inside rcu_free_sync():
 * it has called it, is off its CPU and not runnable, and waits for a
 * mutex (->blocked_on, set by the mutex's slow path; ->pi_blocked_on on
 * PREEMPT_RT) or for a grace period.  Which function took the mutex is
 * not looked at: the listed check decides whether it was the drain's.
 */
static bool asleep_in_drain(struct task_struct *task, struct sync_call *call)
{
	bool blocked;

	if (!READ_ONCE(call->entered) || task_is_running(task) ||
	    READ_ONCE(task->on_cpu))
		return false;
#ifdef CONFIG_PREEMPT_RT
	blocked = READ_ONCE(task->pi_blocked_on);
#else
	blocked = READ_ONCE(task->blocked_on);
#endif
	return blocked || rfk_in_gp_wait(task);
}

/*
 * A second rcu_free_sync() that comes while a drain is in flight (taken
 * its lists, its expedited grace period held up by this case's reader, as
 * in_flight_waits_for_next) waits for that drain before it runs the next
 * one: once it is seen asleep in the drain (on its mutex; a drain of its
 * own would sleep in a grace-period wait), the pages freed after the
 * first drain took its lists are still on the lists (*listed*:
 * rcu_free_nr_listed(), read inside the reader).  A third call that comes
 * meanwhile, rcu_free_sync_turn() (compaction's: with its turn due when it
 * is called, forced by rcu_free_turn_hook(), not waited for: a background
 * rated drain may take it any time), shares the second's drain, the first
 * to start after its call: it returns true (freed) even though the turn is
 * forced taken once it is seen asleep behind the drain in flight; a drain
 * of its own would find no turn and return false.  Every
 * call returns once the reader ends, every page back after its grace
 * period.
 */
static void rcu_free_drain_in_flight_second_caller(struct kunit *test)
{
	struct page *pages[2 * IN_FLIGHT_PAGES];
	struct sync_call *call[3];
	struct task_struct *task[3];
	bool first_waits = false, asleep = false, third_asleep = false;
	bool third_freed = false;
	unsigned long deadline, listed = 0;
	struct rcu_gp_seq c0;
	int i, j, nr;

	rfk_require_sync(test);
	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: needs 2 CPUs: the drains run on one while the case holds a reader on the other");
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS) ||
	    !IS_ENABLED(CONFIG_TREE_RCU))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE, CONFIG_KALLSYMS or CONFIG_TREE_RCU is off: the calls cannot be seen waiting");
	/* The third call, and its turn, only with the turn hook */
	nr = mm_hook(test, RCU_FREE_TURN_TAKE,
		     "a third call sharing the drain after the first") ? 3 : 2;
	/* The third call finds its turn due, whoever drained last */
	if (nr == 3)
		rfk_turn_force(test, RCU_FREE_TURN_DUE);
	/* Not kunit allocations: a hung kthread is left behind with its own */
	for (j = 0; j < nr; j++) {
		call[j] = kzalloc_obj(*call[j]);
		if (!call[j]) {
			while (j--)
				kfree(call[j]);
			KUNIT_FAIL_AND_ABORT(test, "no memory for the calls");
		}
		init_completion(&call[j]->done);
	}
	rfk_alloc_all(test, pages, ARRAY_SIZE(pages), GFP_KERNEL, GFP_KERNEL);

	migrate_disable();
	for (j = 0; j < nr; j++) {
		task[j] = rfk_other_cpu_thread(j < 2 ? sync_fn : sync_turn_fn,
					       call[j], "rcu_free_sync");
		if (IS_ERR(task[j]))
			break;
		/* Its stack is looked at until this thread has left the section */
		get_task_struct(task[j]);
	}
	if (j < nr) {
		long err = PTR_ERR(task[j]);

		for (i = 0; i < j; i++) {
			kthread_stop(task[i]);
			put_task_struct(task[i]);
		}
		migrate_enable();
		for (i = 0; i < ARRAY_SIZE(pages); i++)
			__free_page(pages[i]);
		for (i = 0; i < nr; i++)
			kfree(call[i]);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", err);
	}
	rcu_read_lock();
	get_state_synchronize_rcu_full(&c0);
	for (i = 0; i < IN_FLIGHT_PAGES; i++)
		rfk_put_flagged(test, pages[i]);
	wake_up_process(task[0]);
	/* 10 s are a hang guard */
	deadline = jiffies + 10 * HZ;
	while (!completion_done(&call[0]->done) &&
	       time_before(jiffies, deadline)) {
		if (rfk_in_gp_wait(task[0]) && rfk_exp_gp_started(&c0)) {
			first_waits = true;
			break;
		}
		cpu_relax();
	}
	for (i = IN_FLIGHT_PAGES; i < ARRAY_SIZE(pages); i++)
		rfk_put_flagged(test, pages[i]);
	wake_up_process(task[1]);
	while (first_waits && !completion_done(&call[1]->done) &&
	       time_before(jiffies, deadline)) {
		if (asleep_in_drain(task[1], call[1])) {
			asleep = true;
			break;
		}
		cpu_relax();
	}
	if (nr == 3)
		wake_up_process(task[2]);
	while (nr == 3 && asleep && !completion_done(&call[2]->done) &&
	       time_before(jiffies, deadline)) {
		if (asleep_in_drain(task[2], call[2])) {
			third_asleep = true;
			/* Its drain of its own would find no turn */
			rcu_free_turn_hook(RCU_FREE_TURN_TAKEN);
			break;
		}
		cpu_relax();
	}
	if (MM_HOOK(RCU_FREE_HOLD))
		listed = rcu_free_nr_listed();
	rcu_read_unlock();
	migrate_enable();
	/* 30 s are a hang guard: a hung call keeps its task and call */
	for (j = 0; j < nr; j++) {
		if (!wait_for_completion_timeout(&call[j]->done, 30 * HZ)) {
			KUNIT_FAIL(test, "rcu_free_sync() %d hung (30 s)", j + 1);
			return;
		}
		put_task_struct(task[j]);
	}
	if (nr == 3)
		rfk_turn_release(test);
	third_freed = nr == 3 && call[2]->freed;
	for (j = 0; j < nr; j++)
		kfree(call[j]);
	rfk_check_freed(test, "two drains, the second called during the first");
	rfk_wait_watched(test, "the grace-period work");

	KUNIT_ASSERT_TRUE_MSG(test, first_waits,
			      "the first drain not seen in a grace-period wait with an expedited grace period started in 10 s");
	KUNIT_EXPECT_TRUE_MSG(test, asleep,
			      "the second rcu_free_sync() not seen asleep in the drain in 10 s (or it returned first)");
	if (mm_hook(test, RCU_FREE_HOLD, "the pages still listed during the first drain"))
		KUNIT_EXPECT_GE_MSG(test, listed, IN_FLIGHT_PAGES,
				    "pages freed after the first drain took its lists were taken off them before it ended");
	if (nr < 3)
		return;
	KUNIT_ASSERT_TRUE_MSG(test, third_asleep,
			      "the third call, rcu_free_sync_turn(), not seen asleep in the drain in 10 s (or it returned first)");
	KUNIT_EXPECT_TRUE_MSG(test, third_freed,
			      "rcu_free_sync_turn() behind the drain in flight returned false: it did not share the next drain");
}

/**
 * struct turn_case - the turn rcu_free_sync_turn() finds, and what it does
 * @desc: the row's name
 * @how: the turn forced by rcu_free_turn_hook()
 * @drains: the call frees what waits and returns true
 */
struct turn_case {
	const char *desc;
	enum rcu_free_turn_hook how;
	bool drains;
};

static const struct turn_case turn_cases[] = {
	{ "turn due", RCU_FREE_TURN_DUE, true },
	{ "turn taken", RCU_FREE_TURN_TAKEN, false },
};

static void turn_case_desc(const struct turn_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(turn_case, turn_cases, turn_case_desc);

/*
 * rcu_free_sync_turn(), compaction's drain, with its turn forced by the
 * turn hook: due, it frees the page that waits (held, so only a drain can)
 * and returns true; taken, it returns false and the page still waits.
 */
static void rcu_free_drain_turn_only(struct kunit *test)
{
	const struct turn_case *c = test->param_value;
	bool ret = false, waits;
	struct page *page;

	rfk_require_sync(test);
	MM_HOOK_REQUIRE(test, RCU_FREE_TURN_TAKE);
	if (!rfk_hold(test, "that only the drain frees the page"))
		kunit_skip(test, MM_HOOK_ABSENT "%s", mm_hook_name_RCU_FREE_HOLD);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	rfk_put_flagged(test, page);

	rfk_turn_force(test, c->how);
#if MM_HOOK(RCU_FREE_TURN_TAKE)
	ret = rcu_free_sync_turn();
#endif
	rfk_turn_release(test);
	waits = folio_test_rcu_free(page_folio(page));
	rfk_check_freed(test, "rcu_free_sync_turn()");

	KUNIT_EXPECT_EQ_MSG(test, ret, c->drains, "what rcu_free_sync_turn() returned");
	KUNIT_EXPECT_EQ_MSG(test, waits, !c->drains,
			    c->drains ? "the page still waits after the drain" :
			    "the page was freed without the turn");
}

static struct kunit_case rcu_free_drain_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_drain_decision, drain_gen_params),
	KUNIT_CASE(rcu_free_drain_before_oom),
	KUNIT_CASE(rcu_free_drain_that_cannot_help_ends),
	KUNIT_CASE_PARAM(rcu_free_drain_streak, streak_gen_params),
	KUNIT_CASE(rcu_free_drain_sync_frees_to_buddy),
	KUNIT_CASE(rcu_free_drain_in_flight_waits_for_next),
	KUNIT_CASE(rcu_free_drain_in_flight_second_caller),
	KUNIT_CASE_PARAM(rcu_free_drain_turn_only, turn_case_gen_params),
	{}
};

static struct kunit_suite rcu_free_drain_suite = {
	.name = "rcu_free_drain",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_drain_cases,
};

kunit_test_suite(rcu_free_drain_suite);

MODULE_DESCRIPTION("KUnit tests for the drain before OOM of the pages waiting for a grace period");
MODULE_LICENSE("GPL");
