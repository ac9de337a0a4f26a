// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for memory failure and soft offline of a flagged folio
 * queued for its grace period around the poisoning (rcu-free series,
 * patch 9, and patch 1's rule for poisoned pages): a folio whose last put
 * comes during memory_failure()'s page lookup, or after its first sync,
 * or after an earlier call poisoned one of its pages, is freed by the
 * call and its poisoned page kept out of the allocator; a soft-offlined
 * folio is not queued while poisoned, and its free after an unpoison
 * waits for a grace period, once.  The other cases of memory_failure()
 * are in rcu_free_poison_kunit.c.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/swap.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

/*
 * Keep a page in this CPU's LRU batch and preemption off: until this
 * thread enables it again, lru_add_drain_all() on another CPU waits for
 * its work here.  False if something drained the batch before preemption
 * was off, every time.  Called with migration disabled; returns with
 * preemption disabled when true.
 */
static bool lru_batch_pending(struct kunit *test, struct file *file)
{
	struct folio *folio;
	pgoff_t index;
	loff_t pos;

	for (index = 0; index < 8; index++) {
		pos = index * PAGE_SIZE;
		KUNIT_ASSERT_EQ(test, kernel_write(file, "x", 1, &pos), 1);
		folio = filemap_get_folio(file->f_mapping, index);
		KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
		preempt_disable();
		if (!folio_test_lru(folio)) {
			folio_put(folio);
			return true;
		}
		preempt_enable();
		folio_put(folio);
	}
	return false;
}

/*
 * memory_failure() of a page of a flagged order-2 folio whose last
 * reference goes after PG_hwpoison is set: the retry of its page lookup
 * frees the queued folio (after a grace period since that put) and takes
 * the poisoned page off the buddy allocator, so it returns 0 with the page
 * poisoned and held.  Left queued, the folio would be handed out again,
 * poisoned page and all.  memory_failure() runs on another CPU; this one
 * keeps a page in its LRU batch with preemption off, so the lookup, which
 * retries an unhandlable page after lru_add_drain_all(), cannot retry
 * before this thread has dropped the folio.
 */
static void rcu_free_poison_queued_during_lookup(struct kunit *test)
{
	bool held, seen_poison, poisoned, buddy;
	unsigned long *left_poisoned, deadline;
	struct task_struct *task;
	struct rfk_mf_call *call;
	unsigned int freed;
	struct folio *folio;
	struct file *batch;
	struct page *page;
	int count;

	rfk_require_memory_failure(test);
	call = rfk_mf_call_setup(test, &left_poisoned);
	KUNIT_ASSERT_NOT_NULL(test, call);
	batch = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
			      "lru_batch");
	folio = folio_alloc(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	folio_set_rcu_free(folio);
	page = folio_page(folio, 1);
	call->pfn = page_to_pfn(page);
	held = rfk_hold(test, "that memory_failure() freed the queued folio");

	migrate_disable();
	task = rfk_mf_call_thread(call);
	if (IS_ERR(task)) {
		migrate_enable();
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	if (!lru_batch_pending(test, batch)) {
		migrate_enable();
		folio_put(folio);
		kthread_stop(task);
		kunit_skip(test,
			   "machine: this CPU's LRU batch was drained before it could be held, 8 times");
	}
	*left_poisoned = call->pfn;
	wake_up_process(task);
	deadline = jiffies + 10 * HZ;
	while (!(seen_poison = PageHWPoison(page)) &&
	       !completion_done(&call->done) && time_before(jiffies, deadline))
		cpu_relax();
	rfk_watch(test, &folio->page);
	folio_put(folio);
	preempt_enable();
	migrate_enable();
	wait_for_completion(&call->done);

	freed = rfk_check_freed(test, "memory_failure");
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (!call->ret && poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(call->pfn), 0);
		*left_poisoned = 0;
	}

	KUNIT_EXPECT_TRUE_MSG(test, seen_poison, "PG_hwpoison never set");
	KUNIT_EXPECT_EQ_MSG(test, call->ret, 0,
			    "memory_failure() failed on the queued folio");
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, freed, 1,
				    "the folio still waits: memory_failure() left it queued");
}

/*
 * Spin with preemption off until @page is poisoned or @call is done (10 s
 * at most, a hang guard), reporting a quiescent state on each turn: the
 * memory_failure() of @call waits for a grace period before it sets
 * PG_hwpoison, and this CPU, which keeps a page in its LRU batch, cannot
 * schedule.  Whether the page was seen poisoned.
 */
static bool wait_poisoned_quiescent(struct page *page, struct rfk_mf_call *call)
{
	unsigned long deadline = jiffies + 10 * HZ;

	while (!PageHWPoison(page)) {
		if (completion_done(&call->done) ||
		    time_after(jiffies, deadline))
			return false;
		local_irq_disable();
		rcu_momentary_eqs();
		local_irq_enable();
		cpu_relax();
	}
	return true;
}

/*
 * memory_failure() of page 1 of a flagged order-2 folio whose last put
 * has frozen its refcount at 0, but which is queued only after
 * PG_hwpoison is set, while another page waits in its zone: the call's
 * look before PG_hwpoison frees what waits then (the folio is not among
 * it), and a retry of its page lookup must free the folio once it is
 * queued, and take the poisoned page off the buddy allocator: it returns
 * 0, the page poisoned and held, nothing left waiting.  Left queued, the
 * folio reaches the buddy allocator after its grace period, poisoned page
 * and all.  memory_failure() runs on another CPU; this one keeps a page
 * in its LRU batch with preemption off, so the first retry waits in
 * lru_add_drain_all() until the folio is queued.  Both pages are freed
 * inside a reader of the case's (the gate, rcu_free_gate.h, on the
 * call's CPU), which leaves only while the call is seen in a wait for a
 * grace period: the other page still waits at the first look, which must
 * free it, and the folio at the retries, hook or not.  The gate never
 * ends a section by its hang guard.
 */
static void rcu_free_poison_queued_after_sync(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	bool seen_poison, synced_first, poisoned, buddy, waits, buddy_later;
	bool gate_in, hung;
	unsigned long *left_poisoned;
	struct task_struct *task;
	long waiting0, waiting;
	struct rfg_gate *gate;
	struct rfk_mf_call *call;
	struct folio *folio;
	struct page *page, *other;
	unsigned int gate_waits;
	struct file *batch;
	int count;

	rfk_require_memory_failure(test);
	call = rfk_mf_call_setup(test, &left_poisoned);
	KUNIT_ASSERT_NOT_NULL(test, call);
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE or CONFIG_KALLSYMS is off: the reader cannot see memory_failure() wait");
	batch = rfk_case_file(test, mm_test_mount(test, "ramfs", NULL),
			      "lru_batch");
	other = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	folio = folio_alloc(GFP_KERNEL, 2);
	if (!folio)
		put_page(other);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	if (page_zone(other) != folio_zone(folio)) {
		put_page(other);
		folio_put(folio);
		kunit_skip(test,
			   "machine: the order-2 folio and the page came from different zones");
	}
	folio_set_rcu_free(folio);
	page = folio_page(folio, 1);
	call->pfn = page_to_pfn(page);
	waiting0 = zone_stat_sum(nr_free_rcu);
	/* The last put, up to the folio's free */
	KUNIT_ASSERT_TRUE(test, folio_ref_freeze(folio, 1));

	migrate_disable();
	task = rfk_mf_call_thread(call);
	if (IS_ERR(task)) {
		migrate_enable();
		folio_ref_unfreeze(folio, 1);
		folio_put(folio);
		put_page(other);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %ld", PTR_ERR(task));
	}
	/* Not let out by the call's lru_add_drain_all(), which waits here */
	gate = rfg_start_for(test, task, false,
			     "that the pages wait when memory_failure() looks");
	rfk_put_flagged(test, other);
	if (!lru_batch_pending(test, batch)) {
		migrate_enable();
		folio_ref_unfreeze(folio, 1);
		folio_put(folio);
		kthread_stop(task);
		kunit_skip(test,
			   "machine: this CPU's LRU batch was drained before it could be held, 8 times");
	}
	*left_poisoned = call->pfn;
	wake_up_process(task);
	seen_poison = wait_poisoned_quiescent(page, call);
	synced_first = !folio_test_rcu_free(page_folio(other));
	/* Back inside once the first sync's wait is over (10 s: a hang) */
	gate_in = rfg_inside_quiescent(gate, 10 * HZ);
	/* The rest of the free: the folio is queued */
	rfk_watch(test, &folio->page);
	folio_ref_unfreeze(folio, 1);
	folio_put(folio);
	preempt_enable();
	migrate_enable();
	wait_for_completion(&call->done);
	rfg_stop(gate, &gate_waits, &hung);

	rfk_check_freed(test, "memory_failure");
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	waits = folio_test_rcu_free(folio);
	waiting = rfk_zone_stat_settle(NULL, nr_free_rcu, waiting0);
	if (!call->ret && poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(call->pfn), 0);
		*left_poisoned = 0;
	}
	/* What a folio left queued does after its grace period */
	rfk_wait_watched(test, "the grace-period work");
	drain_all_pages(page_zone(page));
	buddy_later = *left_poisoned && PageHWPoison(page) &&
		      is_free_buddy_page(page);
	kunit_info(test, "memory_failure() let the reader out %u times",
		   gate_waits);

	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the reader ended by its 10 s hang guard: memory_failure() blocked, not in a grace-period wait");
	KUNIT_EXPECT_TRUE_MSG(test, gate_in,
			      "the reader not back inside in 10 s when the folio was queued");
	KUNIT_EXPECT_TRUE_MSG(test, seen_poison, "PG_hwpoison never set");
	KUNIT_EXPECT_TRUE_MSG(test, synced_first,
			      "memory_failure() did not free what waited before PG_hwpoison was set");
	KUNIT_EXPECT_EQ_MSG(test, call->ret, 0,
			    "memory_failure() failed on the folio queued after its sync");
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_FALSE_MSG(test, waits,
			       "the folio still waits: memory_failure() left it queued");
	KUNIT_EXPECT_EQ_MSG(test, waiting, waiting0,
			    "nr_free_rcu: still counted as waiting");
	KUNIT_EXPECT_FALSE_MSG(test, buddy_later,
			       "the poisoned page reached the buddy allocator after the grace period");
}

/*
 * memory_failure() of a page already poisoned by an earlier call that
 * could not handle its order-2 folio (in use, on no LRU), once the folio
 * was freed flagged: the call frees the queued folio (after a grace
 * period since its put) and keeps the poisoned page out of the allocator,
 * taken off the buddy allocator with one reference.  Left queued, the
 * folio would reach the buddy allocator, poisoned page and all.
 */
static void rcu_free_poison_queued_folio_of_poisoned_page(struct kunit *test)
{
	unsigned long *left_poisoned, pfn;
	bool held, poisoned, buddy;
	int first, second, count;
	struct folio *folio;
	unsigned int freed;
	struct page *page;

	rfk_require_memory_failure(test);
	left_poisoned = kunit_kzalloc(test, sizeof(*left_poisoned), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, left_poisoned);
	/* Runs after the exit has let a folio left queued go */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rfk_unpoison_pfn,
							left_poisoned), 0);
	folio = folio_alloc(GFP_KERNEL, 2);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	page = folio_page(folio, 1);
	pfn = page_to_pfn(page);
	*left_poisoned = pfn;
	first = memory_failure(pfn, MF_SW_SIMULATED);
	if (!PageHWPoison(page)) {
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test,
				     "memory_failure() of a folio in use left it unpoisoned (%d)",
				     first);
	}

	held = rfk_hold(test, "that the call freed the queued folio");
	folio_set_rcu_free(folio);
	rfk_watch(test, &folio->page);
	folio_put(folio);
	second = memory_failure(pfn, MF_SW_SIMULATED);
	freed = rfk_check_freed(test, "memory_failure");
	poisoned = PageHWPoison(page);
	buddy = is_free_buddy_page(page);
	count = page_count(page);
	if (poisoned && count == 1) {
		KUNIT_EXPECT_EQ(test, unpoison_memory(pfn), 0);
		*left_poisoned = 0;
	}

	KUNIT_EXPECT_EQ(test, second, -EHWPOISON);
	KUNIT_EXPECT_TRUE(test, poisoned);
	KUNIT_EXPECT_FALSE_MSG(test, buddy, "a poisoned page is free");
	KUNIT_EXPECT_EQ(test, count, 1);
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, freed, 1,
				    "the folio still waits: memory_failure() left it queued");
}

/*
 * A one-page ramfs file whose folio is clean, on the LRU and flagged: what
 * soft offline invalidates.  ramfs keeps its folios dirty; clearing that
 * stands in for writeback.
 */
static struct file *cached_flagged_folio(struct kunit *test, const char *name,
					 struct folio **folio)
{
	struct vfsmount *mnt = mm_test_mount(test, "ramfs", NULL);
	struct file *file;
	loff_t pos = 0;
	ssize_t ret;
	void *data;

	file = rfk_case_file(test, mnt, name);
	data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, 0x5a, PAGE_SIZE);
	ret = kernel_write(file, data, PAGE_SIZE, &pos);
	KUNIT_ASSERT_EQ(test, ret, PAGE_SIZE);

	*folio = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(*folio));
	folio_clear_dirty_for_io(*folio);
	folio_set_rcu_free(*folio);
	folio_unlock(*folio);
	folio_put(*folio);
	lru_add_drain_all();
	return file;
}

/*
 * Soft offline of a hot, clean page cache folio drops its last reference
 * and takes a hwpoison reference at once: the folio must not wait for a
 * grace period in between (nr_free_rcu unchanged), and its free after an
 * unpoison waits for one, once (a folio still queued would be added to a
 * list a second time).
 */
static void rcu_free_poison_queued_once_after_unpoison(struct kunit *test)
{
	const int nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	long waiting0, waiting_poisoned, waiting_unpoisoned;
	int ret, unpoisoned = -1, count;
	unsigned long *left_poisoned, pfn;
	struct folio *folio;
	bool poisoned, held;

	rfk_require_memory_failure(test);
	left_poisoned = kunit_kzalloc(test, sizeof(*left_poisoned), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, left_poisoned);
	cached_flagged_folio(test, "offlined", &folio);
	pfn = folio_pfn(folio);
	/*
	 * A folio poisoned while queued is not unpoisoned below: the action
	 * does it once the exit has let it through its grace period.
	 */
	*left_poisoned = pfn;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rfk_unpoison_pfn,
							left_poisoned), 0);
	waiting0 = zone_stat_sum(nr_free_rcu);

	held = rfk_hold(test, "that the free after the unpoison still waits");
	ret = soft_offline_page(pfn, 0);
	poisoned = PageHWPoison(&folio->page);
	waiting_poisoned = zone_stat_sum(nr_free_rcu);
	count = page_count(&folio->page);
	/* An unpoison of a queued folio would corrupt the list: not then */
	if (poisoned && waiting_poisoned == waiting0) {
		/* The unpoison drops the hwpoison reference: the last put */
		rfk_watch(test, &folio->page);
		unpoisoned = unpoison_memory(pfn);
	}
	waiting_unpoisoned = zone_stat_sum(nr_free_rcu);

	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_TRUE(test, poisoned);
	KUNIT_EXPECT_EQ_MSG(test, waiting_poisoned, waiting0,
			    "queued with the hwpoison reference taken");
	KUNIT_EXPECT_EQ(test, count, 1);
	KUNIT_EXPECT_EQ(test, unpoisoned, 0);
	KUNIT_EXPECT_LE_MSG(test, waiting_unpoisoned, waiting0 + 1,
			    "the free after the unpoison queued it twice");
	if (held)
		KUNIT_EXPECT_EQ_MSG(test, waiting_unpoisoned, waiting0 + 1,
				    "the free after the unpoison did not wait once");
}

static struct kunit_case rcu_free_poison_queued_cases[] = {
	KUNIT_CASE(rcu_free_poison_queued_during_lookup),
	KUNIT_CASE(rcu_free_poison_queued_after_sync),
	KUNIT_CASE(rcu_free_poison_queued_folio_of_poisoned_page),
	KUNIT_CASE(rcu_free_poison_queued_once_after_unpoison),
	{}
};

static struct kunit_suite rcu_free_poison_queued_suite = {
	.name = "rcu_free_poison_queued",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_poison_queued_cases,
};

kunit_test_suite(rcu_free_poison_queued_suite);

MODULE_DESCRIPTION("KUnit tests for memory failure of flagged folios queued for their grace period");
MODULE_LICENSE("GPL");
