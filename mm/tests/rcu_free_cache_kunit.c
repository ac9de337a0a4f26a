// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for flagged page cache folios (rcu-free series, patches 1
 * and 2): a split passes PG_rcu_free on to every new folio, splice no
 * longer steals a page cache folio, which a reader without a reference
 * may still be copying from, and a folio that waits for its grace period
 * is no longer charged to a memory cgroup.
 */

#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/pagemap.h>
#include <linux/pipe_fs_i.h>
#include <linux/splice.h>
#include <linux/swap.h>

#include "rcu_free_helpers.h"

/* The new file @name on @mnt, @size bytes of @byte written to it */
static struct file *write_file(struct kunit *test, struct vfsmount *mnt,
			       const char *name, size_t size, u8 byte)
{
	struct file *file = rfk_case_file(test, mnt, name);
	loff_t pos = 0;
	void *data;

	data = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	memset(data, byte, size);
	KUNIT_ASSERT_EQ(test, kernel_write(file, data, size, &pos), size);
	return file;
}

/*
 * Write a PMD size of bytes to the new file @name on @mnt (huge=always):
 * its first folio, locked, and that folio's order.
 */
static struct folio *write_huge(struct kunit *test, struct vfsmount *mnt,
				const char *name, unsigned int *order)
{
	struct file *file = write_file(test, mnt, name, HPAGE_PMD_SIZE, 0x3c);
	struct folio *folio;

	lru_add_drain_all();
	folio = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	*order = folio_order(folio);
	return folio;
}

/* The most free pages a populated zone of the machine has */
static unsigned long most_free_in_a_zone(void)
{
	unsigned long most = 0;
	struct zone *zone;

	for_each_populated_zone(zone)
		most = max(most, zone_page_state(zone, NR_FREE_PAGES));
	return most;
}

/*
 * Splitting a flagged PMD-size tmpfs folio flags every new folio.  When
 * the write does not get a PMD-size folio, the pages waiting for a grace
 * period (which can fragment memory themselves) are freed and memory is
 * compacted (/proc/sys/vm/compact_memory), and the write is done again:
 * still none fails, if a zone has room for 4 of them (else the machine
 * is too small: skipped).
 */
static void rcu_free_cache_split_inherits_flag(struct kunit *test)
{
	struct address_space *mapping;
	struct vfsmount *mnt;
	struct folio *folio;
	struct file *proc;
	pgoff_t index, nr, flagged = 0;
	unsigned long room;
	unsigned int order;
	loff_t pos = 0;
	ssize_t ret;
	int split;

	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		kunit_skip(test, "config: CONFIG_TRANSPARENT_HUGEPAGE is off");
	nr = HPAGE_PMD_NR;
	mnt = mm_test_mount(test, "tmpfs", "always");
	folio = write_huge(test, mnt, "split", &order);
	if (order != HPAGE_PMD_ORDER) {
		folio_unlock(folio);
		folio_put(folio);
		rcu_free_sync();
		proc = file_open_root_mnt(mm_test_mount(test, "proc", NULL),
					  "sys/vm/compact_memory", O_WRONLY, 0);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(proc),
				       "open compact_memory: %ld", PTR_ERR(proc));
		ret = kernel_write(proc, "1", 1, &pos);
		fput(proc);
		KUNIT_ASSERT_EQ_MSG(test, ret, 1, "compact_memory");
		folio = write_huge(test, mnt, "split-compacted", &order);
	}
	if (order != HPAGE_PMD_ORDER) {
		folio_unlock(folio);
		folio_put(folio);
		room = most_free_in_a_zone();
		if (room < 4 * HPAGE_PMD_NR)
			kunit_skip(test,
				   "machine: no PMD-size folio after a compaction, %lu pages free in the roomiest zone",
				   room);
		KUNIT_FAIL_AND_ABORT(test,
				     "no PMD-size folio (order %u) after freeing what waited and compacting, %lu pages free in a zone",
				     order, room);
	}
	mapping = folio->mapping;
	folio_set_rcu_free(folio);
	split = split_folio(folio);
	folio_unlock(folio);
	folio_put(folio);

	for (index = 0; !split && index < nr; index++) {
		folio = filemap_get_folio(mapping, index);
		if (IS_ERR(folio))
			continue;
		flagged += folio_test_rcu_free(folio) && !folio_test_large(folio);
		folio_put(folio);
	}

	KUNIT_ASSERT_EQ_MSG(test, split, 0, "the split failed");
	KUNIT_EXPECT_EQ_MSG(test, flagged, nr,
			    "order-0 folios flagged after the split");
}

/*
 * SPLICE_F_MOVE from the page cache: the receiving end cannot steal the
 * folio from its file, so it copies; the folio stays in the page cache.
 */
static void rcu_free_cache_splice_move_copies(struct kunit *test)
{
	struct vfsmount *mnt = mm_test_mount(test, "ramfs", NULL);
	struct pipe_inode_info *pipe;
	struct folio *spliced, *cached;
	struct pipe_buffer *buf;
	struct file *file, *pipes[2];
	loff_t pos = 0;
	ssize_t ret;
	bool stolen;

	file = write_file(test, mnt, "spliced", PAGE_SIZE, 0x5a);
	KUNIT_ASSERT_EQ(test, create_pipe_files(pipes, 0), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput,
							pipes[0]), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput,
							pipes[1]), 0);
	pipe = get_pipe_info(pipes[1], false);

	/*
	 * Make the folio one that stealing used to take: clean, as after
	 * writeback (ramfs keeps its folios dirty, and a dirty folio cannot
	 * leave the cache), and without the extra reference of a per-CPU
	 * LRU batch.
	 */
	cached = filemap_lock_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cached));
	folio_clear_dirty_for_io(cached);
	folio_unlock(cached);
	folio_put(cached);
	lru_add_drain_all();

	pos = 0;
	pipe_lock(pipe);
	ret = vfs_splice_read(file, &pos, pipe, PAGE_SIZE, SPLICE_F_MOVE);
	stolen = false;
	spliced = NULL;
	if (ret == PAGE_SIZE) {
		buf = pipe_buf(pipe, pipe->tail);
		spliced = page_folio(buf->page);
		if (!pipe_buf_confirm(pipe, buf))
			stolen = pipe_buf_try_steal(pipe, buf);
		if (stolen)
			folio_unlock(spliced);
	}
	pipe_unlock(pipe);
	cached = filemap_get_folio(file->f_mapping, 0);

	KUNIT_EXPECT_EQ(test, ret, PAGE_SIZE);
	KUNIT_EXPECT_FALSE_MSG(test, stolen, "a page cache folio was stolen");
	KUNIT_EXPECT_PTR_EQ(test, cached, spliced);
	if (!IS_ERR(cached))
		folio_put(cached);
}

/*
 * A flagged page cache folio is uncharged from its memory cgroup when it
 * leaves the page cache, before it waits for a grace period (the seed:
 * "for a grace period it counts towards no cgroup").  A ramfs folio,
 * flagged, is truncated away inside a reader held on another CPU (a
 * span), so its grace period cannot end: there it must wait (freed, not
 * back in the allocator), and the cgroup /proc/kpagecgroup reports for
 * it (page_cgroup_ino()) must be none.  Its free is then checked against
 * its grace period as every flagged free is.
 */
static void rcu_free_cache_uncharged_while_waiting(struct kunit *test)
{
	struct rfk_span *span;
	struct folio *folio;
	struct file *file;
	bool entered, waiting = false;
	ino_t charged, waiting_ino = 0;
	int refs = -1;

	if (!IS_ENABLED(CONFIG_MEMCG))
		kunit_skip(test, "config: CONFIG_MEMCG is off");
	if (mem_cgroup_disabled())
		kunit_skip(test, "config: the memory cgroup is disabled at boot");

	file = write_file(test, mm_test_mount(test, "ramfs", NULL), "charged",
			  PAGE_SIZE, 0x6b);
	/* No reference of a per-CPU LRU batch: the truncate puts the last */
	lru_add_drain_all();
	folio = filemap_get_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	folio_set_rcu_free(folio);
	charged = page_cgroup_ino(&folio->page);

	migrate_disable();
	span = rfk_span_prepare(test);
	if (!span) {
		migrate_enable();
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "could not create the span's thread");
	}
	rfk_watch(test, &folio->page);
	folio_put(folio);
	entered = rfk_span_enter(span);
	if (entered && !vfs_truncate(&file->f_path, 0)) {
		refs = folio_ref_count(folio);
		waiting = folio_test_rcu_free(folio);
		waiting_ino = page_cgroup_ino(&folio->page);
	}
	migrate_enable();
	rfk_span_end(test, span, "truncate");
	rfk_wait_watched(test, "the grace-period work");

	KUNIT_ASSERT_NE_MSG(test, charged, 0,
			    "a page cache folio charged to no memory cgroup");
	KUNIT_ASSERT_TRUE_MSG(test, entered, "the span's reader never began");
	KUNIT_ASSERT_EQ_MSG(test, refs, 0,
			    "the truncate did not free the folio (-1: it failed)");
	KUNIT_ASSERT_TRUE_MSG(test, waiting,
			      "the freed folio did not wait for its grace period");
	KUNIT_EXPECT_EQ_MSG(test, waiting_ino, 0,
			    "a folio waiting for its grace period is still charged (cgroup inode %lu, was %lu)",
			    (unsigned long)waiting_ino, (unsigned long)charged);
}

static struct kunit_case rcu_free_cache_cases[] = {
	KUNIT_CASE(rcu_free_cache_split_inherits_flag),
	KUNIT_CASE(rcu_free_cache_splice_move_copies),
	KUNIT_CASE(rcu_free_cache_uncharged_while_waiting),
	{}
};

static struct kunit_suite rcu_free_cache_suite = {
	.name = "rcu_free_cache",
	.init = rfk_init,
	.exit = rfk_exit,
	.test_cases = rcu_free_cache_cases,
};

kunit_test_suite(rcu_free_cache_suite);

MODULE_DESCRIPTION("KUnit tests for page cache folios with PG_rcu_free");
MODULE_LICENSE("GPL");
