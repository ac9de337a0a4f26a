// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for memory offline of the pages waiting for a grace period
 * (rcu-free series, patch 7): a block it offlines holds flagged folios it
 * migrates (whose old copies then wait) or a poisoned page still waiting,
 * and it must free them, but only where a pass migrated something.
 * alloc_contig_range(), the other path that needs a range free, is in
 * rcu_free_contig_kunit.c.
 *
 * Each case frees flagged pages of its own, or flags tmpfs folios in the
 * block, and then offlines it.  Where the hook is there, the case holds
 * the lists while it frees (rcu_free_hold()): what it frees then waits
 * with no grace period, normal or expedited, started for it, so only
 * offline can free it, and the case also checks that it did, or did not
 * (pgfree_rcu_drain).  Without the hook those parts are skipped by name
 * and the rest decides: the block offlined, the file reads back the
 * same, and every page seen back had a full grace period since its last
 * put (rcu_free_helpers.h).  The poisoned page of poisoned_waiting is
 * kept waiting by a reader of the case's instead, hook or not (the gate,
 * rcu_free_gate.h).  Memory offline runs in a kthread that a signal stops
 * (a 30 s hang guard), on a block the case found offlinable; the block is
 * online again when the case ends.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/memory.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include "rcu_free_gate.h"
#include "rcu_free_helpers.h"

#ifdef CONFIG_MEMORY_HOTREMOVE
/* device_offline() of a memory block, in a kthread that SIGKILL stops */
struct offline_call {
	struct memory_block *mem;
	int ret;
	struct completion done;
	struct task_struct *task;
};

static int offline_fn(void *data)
{
	struct offline_call *call = data;

	allow_signal(SIGKILL);
	lock_device_hotplug();
	call->ret = device_offline(&call->mem->dev);
	unlock_device_hotplug();
	complete(&call->done);
	return 0;
}

/*
 * The thread that offlines @mem, not woken yet: 0 or an error;
 * wake_up_process(@call->task) starts it, offline_end() ends it.
 */
static int offline_create(struct offline_call *call, struct memory_block *mem)
{
	struct task_struct *task;

	call->mem = mem;
	init_completion(&call->done);
	task = kthread_create(offline_fn, call, "rcu_free_offline");
	if (IS_ERR(task))
		return PTR_ERR(task);
	/* Signalled until it has returned */
	call->task = get_task_struct(task);
	return 0;
}

/* Start offlining @mem: 0 or an error; offline_end() ends it */
static int offline_start(struct offline_call *call, struct memory_block *mem)
{
	int ret = offline_create(call, mem);

	if (!ret)
		wake_up_process(call->task);
	return ret;
}

/*
 * Wait for the offline of @call, @timeout at most (offline retries until
 * a signal), then kill it: its result, or -ETIMEDOUT if it was killed
 * and returned -EINTR.
 */
static int offline_end(struct offline_call *call, unsigned long timeout)
{
	bool killed = false;

	if (!wait_for_completion_timeout(&call->done, timeout)) {
		send_sig(SIGKILL, call->task, 1);
		wait_for_completion(&call->done);
		killed = true;
	}
	put_task_struct(call->task);
	return killed && call->ret == -EINTR ? -ETIMEDOUT : call->ret;
}

/* Offline @mem, killed after 30 s (a hang guard): 0 or an error */
static int offline_block(struct memory_block *mem)
{
	struct offline_call call;
	int ret;

	ret = offline_start(&call, mem);
	return ret ?: offline_end(&call, 30 * HZ);
}

/* Online @mem if it is offline: 0 or an error */
static int block_online(struct memory_block *mem)
{
	int ret = 0;

	lock_device_hotplug();
	if (mem->state == MEM_OFFLINE)
		ret = device_online(&mem->dev);
	unlock_device_hotplug();
	return ret;
}

/* The case's action: the block online again, its reference dropped */
static void online_block(void *data)
{
	struct memory_block *mem = data;
	int ret = block_online(mem);

	WARN(ret < 0, "rcu_free_offline: memory block %lu left offline: %d\n",
	     memory_block_id(mem->start_section_nr), ret);
	memory_block_put(mem);
}

/*
 * A memory block that offlines (so it holds nothing unmovable) and is
 * online again, emptied: the first of the top 8 of the node that does;
 * held until the case ends, when it is online again.  Skips if none does.
 */
static struct memory_block *offlinable_block(struct kunit *test)
{
	unsigned long id = pfn_to_block_id(node_end_pfn(first_online_node) - 1);
	unsigned long last = id > 8 ? id - 8 : 0;
	struct memory_block *mem;
	int ret;

	for (; id > last; id--) {
		lock_device_hotplug();
		mem = memory_block_get(id);
		unlock_device_hotplug();
		if (!mem)
			continue;
		if (mem->state != MEM_ONLINE || offline_block(mem)) {
			memory_block_put(mem);
			continue;
		}
		ret = kunit_add_action_or_reset(test, online_block, mem);
		KUNIT_ASSERT_EQ(test, ret, 0);
		ret = block_online(mem);
		KUNIT_ASSERT_EQ_MSG(test, ret, 0, "memory block %lu: online: %d",
				    id, ret);
		return mem;
	}
	kunit_skip(test, "machine: none of the top 8 memory blocks of node %d offlines",
		   first_online_node);
	return NULL;
}

/*
 * Online @mem again, then check the watched pages handed back by the
 * offline: the struct pages of an offline block are poisoned
 * (CONFIG_DEBUG_VM), so nothing between offline and this may end the
 * case, and if the block stays offline nothing looks at them at all.
 */
static void online_and_check(struct kunit *test, struct memory_block *mem)
{
	int ret = block_online(mem);

	if (ret)
		rfk_unwatch_all(test);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "online again");
	rfk_check_freed(test, "memory offline");
}
#endif

/* What a case sees of the offline: range checks, folios moved */
struct offline_trace {
	unsigned long start;
	atomic_t checks;
	atomic_long_t moved, failed;
};

/* test_pages_isolated() on the range that starts at @start */
static void count_range_check(void *data, unsigned long start_pfn,
			      unsigned long end_pfn, unsigned long fin_pfn)
{
	struct offline_trace *t = data;

	if (start_pfn == t->start)
		atomic_inc(&t->checks);
}

/* migrate_pages() for memory hotplug: what it moved, what it could not */
static void count_hotplug_moved(void *data, unsigned long succeeded,
				unsigned long failed,
				unsigned long thp_succeeded,
				unsigned long thp_failed,
				unsigned long thp_split,
				unsigned long large_folio_split,
				enum migrate_mode mode,
				enum migrate_reason reason)
{
	struct offline_trace *t = data;

	if (reason != MR_MEMORY_HOTPLUG)
		return;
	atomic_long_add(succeeded, &t->moved);
	atomic_long_add(failed, &t->failed);
}

/* offline_migrated: the file's folios in the block */
static const unsigned int migrated_cases[] = { RFK_MOVED_FOLIOS, 1 };

static void migrated_desc(const unsigned int *nr, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u folio%s in the block", *nr,
		 *nr == 1 ? "" : "s");
}

KUNIT_ARRAY_PARAM(migrated, migrated_cases, migrated_desc);

/*
 * Memory offline of a block holding flagged tmpfs folios in use: it
 * migrates them, their old copies wait for a grace period, and the block
 * is free only once the offline has freed them (a drain, where they are
 * held back: without it the offline would retry until its hang guard).
 * The file reads back the same.  The block is one the case found
 * offlinable (and emptied); it is online again when the case ends.
 * "1 folio in the block": a file of one page, and a pass that migrated
 * that folio alone migrated all the same (the mm_migrate_pages
 * tracepoint says offline moved just that one, else the case skips: it
 * did not decide that); only where the lists are held does a pass that
 * does not drain for it hang, the old copy's grace period otherwise
 * frees it.
 */
static void rcu_free_offline_migrated(struct kunit *test)
{
#ifdef CONFIG_MEMORY_HOTREMOVE
	const unsigned int nr = *(const unsigned int *)test->param_value;
	struct offline_trace *trace;
	struct rfk_moved_file *mf;
	struct memory_block *mem;
	unsigned long start, moved;
	int ret;

	rfk_require_contig(test);
	trace = kunit_kzalloc(test, sizeof(*trace), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, trace);
	if (nr == 1 && !mm_test_probe(test, "mm_migrate_pages",
				      count_hotplug_moved, trace))
		kunit_skip(test, "kernel: no mm_migrate_pages tracepoint");
	mf = rfk_moved_file_create(test, "offlined");
	KUNIT_ASSERT_NOT_NULL(test, mf);
	mem = offlinable_block(test);
	start = section_nr_to_pfn(mem->start_section_nr);
	ret = rfk_alloc_contig(start + pageblock_nr_pages,
			       start + pageblock_nr_pages + nr);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "alloc_contig_range() in the block");
	ret = rfk_moved_file_write(mf, pfn_to_page(start + pageblock_nr_pages),
				   nr);
	KUNIT_ASSERT_EQ(test, ret, 0);

	ret = rfk_moved_file_flag(test, mf, start,
				  start + (memory_block_size_bytes() >> PAGE_SHIFT));
	KUNIT_ASSERT_EQ(test, ret, 0);
	/* Not what offlinable_block()'s trial offline moved */
	atomic_long_set(&trace->moved, 0);
	ret = offline_block(mem);
	online_and_check(test, mem);
	rfk_moved_file_check(test, mf, ret);
	moved = atomic_long_read(&trace->moved);
	if (nr == 1 && moved != 1 && test->status != KUNIT_FAILURE)
		kunit_skip(test, "machine: offline migrated %lu folios, not the case's one alone",
			   moved);
#else
	kunit_skip(test, "config: CONFIG_MEMORY_HOTREMOVE is off");
#endif
}

#if defined(CONFIG_MEMORY_HOTREMOVE) && defined(CONFIG_MEMORY_FAILURE)
/* What poisoned_waiting does to its page during offline, and sees of it */
struct poisoned_watch {
	/* At MEM_GOING_OFFLINE, last: the put; at MEM_OFFLINE, first: a look */
	struct notifier_block put_nb, look_nb;
	struct kunit *test;
	/* Inside from before the put until offline waits for a grace period */
	struct rfg_gate *gate;
	struct page *page;
	struct zone *zone;
	int nr_free_rcu;
	long waiting0, waiting_in;
	bool put;
	bool gate_in;
	bool offlined;
	bool flagged;
	long waiting;
};

/* Whether @mn, a memory_notify, covers the page of @w */
static bool poisoned_watch_covers(struct poisoned_watch *w,
				  struct memory_notify *mn)
{
	unsigned long pfn = page_to_pfn(w->page);

	return pfn >= mn->start_pfn && pfn < mn->start_pfn + mn->nr_pages;
}

/*
 * At MEM_GOING_OFFLINE, after every other notifier and after offline's
 * own grace-period waits before it (lru_cache_disable()), with the gate
 * inside: the last put of the page, flagged (its refcount frozen at 0
 * until now: no reference, nothing to migrate), then PG_hwpoison, as a
 * memory_failure() that races with the put leaves it.
 */
static int poisoned_put_fn(struct notifier_block *nb, unsigned long action,
			   void *arg)
{
	struct poisoned_watch *w = container_of(nb, struct poisoned_watch,
						put_nb);

	if (action != MEM_GOING_OFFLINE || w->put ||
	    !poisoned_watch_covers(w, arg))
		return NOTIFY_OK;
	w->gate_in = rfg_inside(w->gate);
	w->waiting0 = zone_page_state_snapshot(w->zone, w->nr_free_rcu);
	page_ref_unfreeze(w->page, 1);
	rfk_put_flagged(w->test, w->page);
	SetPageHWPoison(w->page);
	w->waiting_in = zone_page_state_snapshot(w->zone, w->nr_free_rcu);
	w->put = true;
	return NOTIFY_OK;
}

/*
 * At MEM_OFFLINE, first, before the block's struct pages are poisoned
 * (CONFIG_DEBUG_VM): the zone's waiting pages, and a rescue if the page
 * is still on a list (a poisoned page is dropped there, not freed; the
 * gate lets the rescue's grace period end).
 */
static int poisoned_look_fn(struct notifier_block *nb, unsigned long action,
			    void *arg)
{
	struct poisoned_watch *w = container_of(nb, struct poisoned_watch,
						look_nb);

	if (action != MEM_OFFLINE || !poisoned_watch_covers(w, arg))
		return NOTIFY_OK;
	w->offlined = true;
	w->waiting = zone_page_state_snapshot(w->zone, w->nr_free_rcu);
	w->flagged = folio_test_rcu_free(page_folio(w->page));
	if (w->flagged)
		rcu_free_sync();
	return NOTIFY_OK;
}

/*
 * Give the page back if the block never went offline (a failed case):
 * still frozen if offline never got to the put; else it leaves the lists
 * poisoned, is dropped there, and is freed here.
 */
static void poisoned_watch_end(void *data)
{
	struct poisoned_watch *w = data;

	unregister_memory_notifier(&w->look_nb);
	unregister_memory_notifier(&w->put_nb);
	if (!w->put) {
		page_ref_unfreeze(w->page, 1);
		__free_page(w->page);
		return;
	}
	if (w->offlined || !PageHWPoison(w->page))
		return;
	/* Frees the lists, whatever held them */
	rcu_free_sync();
	ClearPageHWPoison(w->page);
	if (!page_count(w->page) && !PageBuddy(w->page)) {
		set_page_count(w->page, 1);
		__free_page(w->page);
	}
}

/* The page at @pfn, frozen, and the notifiers that put it and look at it */
static struct poisoned_watch *poisoned_watch_start(struct kunit *test,
						   unsigned long pfn)
{
	struct poisoned_watch *w;
	int ret;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->test = test;
	w->nr_free_rcu = zone_stat_item(test, "nr_free_rcu");
	ret = rfk_alloc_contig(pfn, pfn + 1);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "alloc_contig_range() in the block");
	w->page = pfn_to_page(pfn);
	w->zone = page_zone(w->page);
	if (!page_ref_freeze(w->page, 1)) {
		__free_page(w->page);
		KUNIT_FAIL_AND_ABORT(test, "the page's refcount is not 1");
	}
	w->put_nb.notifier_call = poisoned_put_fn;
	w->put_nb.priority = INT_MIN;
	w->look_nb.notifier_call = poisoned_look_fn;
	w->look_nb.priority = INT_MAX;
	ret = register_memory_notifier(&w->put_nb);
	if (!ret) {
		ret = register_memory_notifier(&w->look_nb);
		if (ret)
			unregister_memory_notifier(&w->put_nb);
	}
	if (ret) {
		page_ref_unfreeze(w->page, 1);
		__free_page(w->page);
		KUNIT_FAIL_AND_ABORT(test, "register_memory_notifier: %d", ret);
	}
	/* Frees the lists itself if needed */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, poisoned_watch_end,
							w), 0);
	return w;
}
#endif

/*
 * Memory offline of a block holding a poisoned page that still waits for
 * a grace period (poisoned after its last put, as memory_failure() racing
 * with that put leaves it): offline accepts a poisoned page in any state,
 * so before the block's struct pages go it must take the page off the
 * lists.  The page is put, flagged, and poisoned during offline, at
 * MEM_GOING_OFFLINE (a memory notifier, the last), inside a reader of the
 * case's (the gate, rcu_free_gate.h) that leaves only when the offline
 * thread is seen in a wait for a grace period: so the page still waits
 * when offline next waits, and nothing but offline frees it before then.
 * When the block goes offline (MEM_OFFLINE, a memory notifier, the first)
 * the page no longer has PG_rcu_free, or at least nr_free_rcu of the zone
 * is back where it was before the put (a page off the lists whose flag
 * stays is no fault; a free of someone else's meanwhile alone is no fault
 * either).  Offline returns 0; the gate never ends a section by its hang
 * guard.  The block is online again when the case ends.
 */
static void rcu_free_offline_poisoned_waiting(struct kunit *test)
{
#if defined(CONFIG_MEMORY_HOTREMOVE) && defined(CONFIG_MEMORY_FAILURE)
	struct poisoned_watch *w;
	struct offline_call call;
	struct memory_block *mem;
	unsigned int waits;
	unsigned long pfn;
	bool hung;
	int ret;

	rfk_require_sync(test);
	rfk_require_contig(test);
	if (num_online_cpus() < 2)
		kunit_skip(test,
			   "machine: one CPU: the reader that keeps the page waiting would stall offline");
	if (!IS_ENABLED(CONFIG_STACKTRACE) || !IS_ENABLED(CONFIG_KALLSYMS))
		kunit_skip(test,
			   "config: CONFIG_STACKTRACE or CONFIG_KALLSYMS is off: the reader cannot see offline wait");
	mem = offlinable_block(test);
	pfn = section_nr_to_pfn(mem->start_section_nr) + pageblock_nr_pages;
	w = poisoned_watch_start(test, pfn);

	ret = offline_create(&call, mem);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "kthread_create");
	w->gate = rfg_start_for(test, call.task, true,
				"that the page waited when offline began");
	if (!w->gate) {
		kthread_stop(call.task);
		put_task_struct(call.task);
		KUNIT_FAIL_AND_ABORT(test, "no reader");
	}
	wake_up_process(call.task);
	ret = offline_end(&call, 30 * HZ);
	rfg_stop(w->gate, &waits, &hung);
	online_and_check(test, mem);
	kunit_info(test, "offline let the reader out %u times", waits);

	KUNIT_ASSERT_TRUE_MSG(test, w->put,
			      "offline (%d) never reached MEM_GOING_OFFLINE", ret);
	KUNIT_EXPECT_FALSE_MSG(test, hung,
			       "the reader ended by its 10 s hang guard: offline blocked, not in a grace-period wait");
	KUNIT_ASSERT_TRUE_MSG(test, w->gate_in,
			      "the reader was not inside at the put");
	KUNIT_ASSERT_GT_MSG(test, w->waiting_in, w->waiting0,
			    "the poisoned page did not wait");
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "offline");
	KUNIT_ASSERT_TRUE_MSG(test, w->offlined,
			      "the block never reached MEM_OFFLINE");
	KUNIT_EXPECT_FALSE_MSG(test, w->flagged && w->waiting > w->waiting0,
			       "the block went offline with the poisoned page still waiting on a list (nr_free_rcu %ld, %ld before its put)",
			       w->waiting, w->waiting0);
#else
	kunit_skip(test, "config: CONFIG_MEMORY_HOTREMOVE or CONFIG_MEMORY_FAILURE is off");
#endif
}

/* moved_nothing: whether the pass migrates one unflagged folio */
static const bool moved_cases[] = { false, true };

static void moved_desc(const bool *one_moved, char *desc)
{
	strscpy(desc, *one_moved ? "one unflagged moved" : "none moved",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(moved, moved_cases, moved_desc);

/* Flagged pages the moved_nothing case frees while offline runs */
#define STREAM_PAGES	1024

/*
 * Free one more flagged page of the stream, if any is left: while the
 * case frees one every turn of its waits, some page always waits, and a
 * drain then frees something and counts in pgfree_rcu_drain, held lists
 * or not.
 */
static void stream_one(struct kunit *test, int *streamed, gfp_t gfp)
{
	struct page *page;

	if (*streamed >= STREAM_PAGES)
		return;
	page = alloc_page(gfp | __GFP_NOWARN);
	if (!page)
		return;
	rfk_put_flagged(test, page);
	(*streamed)++;
}

/*
 * An offline pass that tried to migrate but moved nothing does not free
 * the pages waiting for a grace period: only the old copies of folios it
 * migrated give it a reason to, and a pass stuck on a busy page would
 * otherwise expedite a grace period on every retry.  The block holds a
 * tmpfs folio the case keeps a reference on (its migration fails) and a
 * page waiting (on the held lists where the hook is).  Once offline has
 * failed to migrate the folio (the mm_migrate_pages tracepoint, for
 * hotplug), the case takes the folio off the LRU, so that the pass ends
 * with nothing migrated and the range still busy; after two more checks
 * of the range (the test_pages_isolated tracepoint) offline is stopped.
 * Meanwhile the case keeps freeing flagged pages, so that something
 * always waits: no drain may have run (pgfree_rcu_drain, which counts a
 * drain that freed something), hooks or not; held, the waiting page must
 * still wait.  An offline that migrated folios not the case's may drain
 * for them: then the case skips, whatever the drains.  "one unflagged
 * moved": the block also holds an unflagged tmpfs folio of no reference
 * of the case's, which the pass migrates (so it migrated, but nothing of
 * it waits), and the pages that wait are of ZONE_DMA (a posting may drain
 * for a zone where pages wait): no drain either.
 */
static void rcu_free_offline_moved_nothing(struct kunit *test)
{
#ifdef CONFIG_MEMORY_HOTREMOVE
	const bool one_moved = *(const bool *)test->param_value;
	gfp_t gfp = one_moved ? GFP_KERNEL | GFP_DMA : GFP_KERNEL;
	bool moved_in = !one_moved;
	struct folio *moved_folio;
	unsigned long start, pfn, deadline, drains0, drains, moved;
	struct offline_trace *trace;
	struct offline_call call;
	struct memory_block *mem;
	struct page *wait_page;
	bool isolated = false, held;
	int streamed = 0;
	struct folio *folio;
	struct file *file;
	int ret, checks0, nr_checks;
	loff_t pos = 0;
	void *data;

	rfk_require_contig(test);
	if (one_moved && !IS_ENABLED(CONFIG_ZONE_DMA))
		kunit_skip(test, "config: CONFIG_ZONE_DMA is off");
	trace = kunit_kzalloc(test, sizeof(*trace), GFP_KERNEL);
	data = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, trace);
	KUNIT_ASSERT_NOT_NULL(test, data);
	if (!mm_test_probe(test, "test_pages_isolated", count_range_check,
			   trace))
		kunit_skip(test, "kernel: no test_pages_isolated tracepoint");
	if (!mm_test_probe(test, "mm_migrate_pages", count_hotplug_moved,
			   trace))
		kunit_skip(test, "kernel: no mm_migrate_pages tracepoint");
	file = rfk_case_file(test, mm_test_mount(test, "tmpfs", "never"),
			     "busy");
	/* Before the pages: it may end the case */
	held = rfk_hold(test, "that the page in the block still waits");
	mem = offlinable_block(test);
	start = section_nr_to_pfn(mem->start_section_nr);
	trace->start = start;
	pfn = start + pageblock_nr_pages;
	ret = rfk_alloc_contig(pfn, pfn + 3);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "alloc_contig_range() in the block");
	wait_page = pfn_to_page(pfn);
	if (one_moved) {
		__free_page(wait_page);
		wait_page = alloc_page(gfp);
		KUNIT_ASSERT_NOT_NULL(test, wait_page);
		if (page_zone(wait_page) == page_zone(pfn_to_page(pfn))) {
			__free_page(wait_page);
			kunit_skip(test, "machine: the block is in ZONE_DMA");
		}
	}

	/* The file's folios from this CPU's pcp list, where their pages went */
	migrate_disable();
	__free_page(pfn_to_page(pfn + 2));
	__free_page(pfn_to_page(pfn + 1));
	ret = kernel_write(file, data, PAGE_SIZE, &pos);
	if (one_moved && ret == PAGE_SIZE)
		ret = kernel_write(file, data, PAGE_SIZE, &pos);
	migrate_enable();
	moved_folio = one_moved ? filemap_get_folio(file->f_mapping, 1) : NULL;
	if (!IS_ERR_OR_NULL(moved_folio)) {
		moved_in = folio_pfn(moved_folio) == pfn + 2;
		folio_put(moved_folio);
	}
	folio = filemap_get_folio(file->f_mapping, 0);
	if (ret != PAGE_SIZE || IS_ERR(folio)) {
		if (!IS_ERR(folio))
			folio_put(folio);
		__free_page(wait_page);
		KUNIT_FAIL_AND_ABORT(test, "write of the file: %d, folio: %d",
				     ret, PTR_ERR_OR_ZERO(folio));
	}
	if (folio_pfn(folio) != pfn + 1 || !moved_in) {
		folio_put(folio);
		__free_page(wait_page);
		kunit_skip(test, "machine: the file's folios are not in the block");
	}
	lru_add_drain_all();

	rfk_put_flagged(test, wait_page);
	drains0 = vm_event(test, "pgfree_rcu_drain");
	ret = offline_start(&call, mem);
	if (ret) {
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "kthread_create: %d", ret);
	}
	/* 30 s are a hang guard */
	deadline = jiffies + 30 * HZ;
	while (!atomic_long_read(&trace->failed) &&
	       !completion_done(&call.done) && time_before(jiffies, deadline)) {
		stream_one(test, &streamed, gfp);
		usleep_range(100, 200);
	}
	while (!(isolated = folio_isolate_lru(folio)) &&
	       !completion_done(&call.done) && time_before(jiffies, deadline))
		cond_resched();
	checks0 = atomic_read(&trace->checks);
	while ((nr_checks = atomic_read(&trace->checks) - checks0) < 2 &&
	       !completion_done(&call.done) && time_before(jiffies, deadline)) {
		stream_one(test, &streamed, gfp);
		usleep_range(100, 200);
	}
	ret = offline_end(&call, 0);
	if (isolated)
		folio_putback_lru(folio);
	folio_put(folio);
	rfk_check_freed(test, "an offline that moved nothing");
	drains = vm_event(test, "pgfree_rcu_drain") - drains0;
	moved = atomic_long_read(&trace->moved);

	/* A folio the case holds is busy: offline must retry, not end */
	KUNIT_ASSERT_TRUE_MSG(test, isolated || ret == -ETIMEDOUT,
			      "offline of a block with a busy folio ended (%d) before the case took the folio off the LRU",
			      ret);
	KUNIT_ASSERT_TRUE_MSG(test, isolated,
			      "offline never let go of the folio it could not migrate");
	KUNIT_ASSERT_GE_MSG(test, nr_checks, 2,
			    "offline not seen checking the range twice after the folio left the LRU");
	/* Whatever the drains: a drain for those is no fault */
	if (moved != one_moved)
		kunit_skip(test,
			   "machine: offline migrated %lu folios, %d of them the case's",
			   moved, one_moved);
	KUNIT_EXPECT_EQ_MSG(test, ret, -ETIMEDOUT,
			    "offline of a block with a busy folio did not retry");
	KUNIT_EXPECT_EQ_MSG(test, drains, 0,
			    "drains by an offline with no migrated folio waiting, %d flagged pages freed meanwhile",
			    streamed);
	if (held)
		KUNIT_EXPECT_TRUE_MSG(test,
				      folio_test_rcu_free(page_folio(wait_page)),
				      "an offline pass with no migrated folio waiting freed the waiting pages");
#else
	kunit_skip(test, "config: CONFIG_MEMORY_HOTREMOVE is off");
#endif
}

static struct kunit_case rcu_free_offline_cases[] = {
	KUNIT_CASE_PARAM(rcu_free_offline_migrated, migrated_gen_params),
	KUNIT_CASE(rcu_free_offline_poisoned_waiting),
	KUNIT_CASE_PARAM(rcu_free_offline_moved_nothing, moved_gen_params),
	{}
};

static struct kunit_suite rcu_free_offline_suite = {
	.name = "rcu_free_offline",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_offline_cases,
};

kunit_test_suite(rcu_free_offline_suite);

MODULE_DESCRIPTION("KUnit tests for memory offline of the pages waiting for a grace period");
MODULE_LICENSE("GPL");
