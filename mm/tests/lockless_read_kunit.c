// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for reads without folio references (rcu-free series, patches
 * 10-18): which folios reads flag PG_rcu_free, how tmpfs counts accesses,
 * f_ra.prev_pos, PG_idle, and that filemap_read() and tmpfs reads return
 * the file's bytes with the lockless_page_cache_read switch on and off.
 * That a flagged folio of a truncated or evicted file waits for its grace
 * period is decided in the lockless_read_aba suite, what a read copies
 * without a reference in the lockless_copy suite.
 *
 * Every case decides on what a user of the kernel sees: the bytes and
 * return values of reads, folio flags, f_ra, the pgfree_rcu_mark counter
 * (looked up by name).  Where a case also proves WHICH path a read took,
 * it counts the bytes copied without a reference from the
 * mm_filemap_read_rcu tracepoint of our patch 13 (a hook: one probe for
 * the suite, filtered to the case's files); on a kernel without it that
 * part is skipped and named, and the rest still decides.  Flagged folios
 * are made the way a workload makes them: by reading them again and again.
 * On a kernel without the series (no CONFIG_PAGE_RCU_FREE) every case
 * skips, saying so.
 */

#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/cacheflush.h>
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
#include "lockless_read.h"
#include "vmstat_by_name.h"

/* ------------------------------------------------------------- marking */

/*
 * Patch 12: reads that keep coming back to a page flag it, and not on the
 * first read; pgfree_rcu_mark counts exactly the pages flagged.
 */
static void lockless_read_flags_reread_page(struct kunit *test)
{
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, 2 * PAGE_SIZE);
	unsigned long ev0 = vm_event(test, "pgfree_rcu_mark");
	unsigned int rounds;

	mm_kunit_file_write(test, lf, 0, lf->size, 1);
	lr_alternate_reads(test, lf, 0, PAGE_SIZE, 1, 16);
	KUNIT_EXPECT_FALSE_MSG(test, lr_index_flagged(lf, 0),
			       "flagged by its first read");
	for (rounds = 1; rounds < 8 && !lr_index_flagged(lf, 0); rounds++)
		lr_alternate_reads(test, lf, 0, PAGE_SIZE, 1, 16);
	KUNIT_EXPECT_TRUE_MSG(test, lr_index_flagged(lf, 0),
			      "not flagged after %u rounds of reads", rounds);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_mark") - ev0,
			lr_pages_flagged(lf, 2));
}

/*
 * Patch 12: a file written once and read once, and a streaming read of
 * 4 MiB, flag nothing and count no mark.
 */
static void lockless_read_leaves_cold_data_unflagged(struct kunit *test)
{
	struct mm_kunit_file *once = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, PAGE_SIZE);
	struct mm_kunit_file *stream = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, SZ_4M);
	unsigned long ev0 = vm_event(test, "pgfree_rcu_mark");
	loff_t off;

	mm_kunit_file_write(test, once, 0, once->size, 2);
	mm_kunit_file_write(test, stream, 0, stream->size, 3);
	KUNIT_ASSERT_GT(test, lr_read_at(test, once, 0, 16), 0);
	for (off = 0; off < stream->size; off += PAGE_SIZE)
		KUNIT_ASSERT_GT(test, lr_read_at(test, stream, off, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, lr_pages_flagged(once, 1), 0);
	KUNIT_EXPECT_EQ(test, lr_pages_flagged(stream, SZ_4M >> PAGE_SHIFT),
			0);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_mark") - ev0, 0);
}

/*
 * Patch 12: flagging a PMD-size tmpfs folio counts its 512 pages in
 * pgfree_rcu_mark, not 1.
 */
static void lockless_read_mark_counts_every_page(struct kunit *test)
{
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS_HUGE, SZ_4M);
	unsigned long ev0;

	mm_kunit_file_write(test, lf, 0, lf->size, 4);
	mm_kunit_need_pmd_folio(test, lf, 0);
	ev0 = vm_event(test, "pgfree_rcu_mark");
	lr_make_hot(test, lf);
	KUNIT_EXPECT_EQ(test, vm_event(test, "pgfree_rcu_mark") - ev0,
			(unsigned long)(SZ_4M >> PAGE_SHIFT));
}

/* @nr reads of @len at @off, @off + @step, ... of a file of two folios */
struct one_access_case {
	const char *name;
	enum mm_kunit_fs fs;
	loff_t size, off, step;
	size_t len;
	unsigned int nr;
};

static const struct one_access_case one_access_cases[] = {
	{ "tmpfs: 15 reads going on in a row", MM_KUNIT_TMPFS, 2 * PAGE_SIZE, 16, 16, 16, 15 },
	{ "tmpfs: bytes 100-199, then 300-399", MM_KUNIT_TMPFS, 2 * PAGE_SIZE, 100, 200, 100, 2 },
	{ "ramfs: bytes 100-199, then 300-399", MM_KUNIT_RAMFS, 2 * PAGE_SIZE, 100, 200, 100, 2 },
	{ "tmpfs huge=always: one read of a whole PMD-size folio",
	  MM_KUNIT_TMPFS_HUGE, SZ_4M, 0, 0, SZ_2M, 1 },
};

KUNIT_ARRAY_PARAM_DESC(one_access, one_access_cases, name);

/*
 * The accesses the classic LRU records for @folio, in folio_mark_accessed()'s
 * steps: none 0, referenced 1, active 2, active and referenced 3, then hot,
 * which flags it: 4; an unevictable folio goes from referenced to hot: 2.
 */
static int access_steps(struct folio *folio)
{
	if (folio_test_rcu_free(folio))
		return folio_test_unevictable(folio) ? 2 : 4;
	return 2 * folio_test_active(folio) + folio_test_referenced(folio);
}

/*
 * Patches 11, 16: reads that enter a folio count one access, as
 * filemap_read() counts them, and tmpfs too (patch 16; 7.3 counted only
 * reads from a folio's first byte): reads going on where the last ended,
 * reads at an offset of the folio the last one ended in, one read of a
 * whole PMD-size folio.  The folio's LRU state (PG_referenced, PG_active,
 * PG_rcu_free) moves one folio_mark_accessed() step.  Reads without
 * references are off: the folio is cold, and only the slow path marks.
 */
static void lockless_read_one_access_within_folio(struct kunit *test)
{
	const struct one_access_case *c = test->param_value;
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, c->fs, c->size);
	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
	struct folio *folio;
	unsigned int i;
	int steps0;

	if (lru_gen_enabled())
		kunit_skip(test,
			   "machine: the multi-gen LRU is on; the case reads the classic LRU's flags");
	if (lr_switch_exists(test))
		lr_switch(test, false);
	mm_kunit_file_write(test, lf, 0, lf->size, 6);
	if (c->fs == MM_KUNIT_TMPFS_HUGE)
		mm_kunit_need_pmd_folio(test, lf, 0);
	/* The last read ends in folio 1, so the first below enters folio 0 */
	KUNIT_ASSERT_GT(test, lr_read_at(test, lf, c->size - 16, 16), 0);
	lru_add_drain_all();
	folio = mm_kunit_file_folio(lf, 0);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_folio_put,
							folio), 0);
	steps0 = access_steps(folio);
	/* Room for two steps, or a second access would not show */
	KUNIT_ASSERT_LE_MSG(test, steps0 + 2,
			    folio_test_unevictable(folio) ? 2 : 4,
			    "%s: the folio is too hot to count accesses", c->name);
	for (i = 0; i < c->nr; i++) {
		loff_t off = c->off + i * c->step;

		KUNIT_ASSERT_EQ(test, mm_kunit_read(test, r, lf, MM_KUNIT_KVEC,
						    off, c->len), (ssize_t)c->len);
		/* See lr_alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_EXPECT_EQ_MSG(test, access_steps(folio) - steps0, 1,
			    "%s: accesses counted (now PG_referenced %d, PG_active %d, PG_rcu_free %d)",
			    c->name, folio_test_referenced(folio),
			    folio_test_active(folio), folio_test_rcu_free(folio));
}

/*
 * Patch 17: a hot tmpfs folio that reclaim deactivated, read again from
 * its first byte by a reader whose last read ended in it, is marked by
 * those reads, as 7.3 marked every read from a first byte: the copy
 * without references leaves such a read to the slow path until marking
 * would change nothing.
 */
static void lockless_read_shmem_reread_marks_deactivated(struct kunit *test)
{
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, 2 * PAGE_SIZE);
	struct folio *folio;
	unsigned int i;

	if (lru_gen_enabled())
		kunit_skip(test,
			   "machine: the multi-gen LRU is on; the case needs the classic LRU");
	mm_kunit_file_write(test, lf, 0, lf->size, 9);
	lr_make_hot(test, lf);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_folio_put,
							folio), 0);
	/* The last read ends within the folio */
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, 0, 16), 16);
	folio_deactivate(folio);
	lru_add_drain_all();
	KUNIT_ASSERT_FALSE_MSG(test, folio_test_active(folio),
			       "the folio was not deactivated");
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, 0, 64), 64);
		/* See lr_alternate_reads() */
		lru_add_drain_all();
	}
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_active(folio),
			      "reads from the first byte did not mark the deactivated folio");
}

/* Whether a case runs with the lockless_page_cache_read switch on or off */
struct switch_case {
	const char *name;
	bool on;
};

static const struct switch_case switch_cases[] = {
	{ "switch on", true },
	{ "switch off", false },
};

KUNIT_ARRAY_PARAM_DESC(switch, switch_cases, name);

/*
 * Patches 16, 17: on tmpfs f_ra.prev_pos is where the last read ended,
 * with the switch on (the copy without references did the read whole,
 * and shmem returns at once) and off (shmem's loop did it); a read that
 * copied nothing (at EOF, of no bytes) leaves it at its own position.
 */
static void lockless_read_shmem_prev_pos(struct kunit *test)
{
	const struct switch_case *c = test->param_value;
	struct mm_kunit_file *lf = lr_hot_file(test, MM_KUNIT_TMPFS, 2 * PAGE_SIZE, 10);
	struct file *file = lf->file;
	const loff_t sentinel = PAGE_SIZE + 7;
	struct lr_stat s0, s1;
	bool counted;

	lr_switch(test, c->on);
	counted = lr_watch(test, lf, "which path read");
	file->f_ra.prev_pos = sentinel;
	lr_now(test, &s0);
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, 100, 16), 16);
	lr_now(test, &s1);
	if (counted)
		KUNIT_ASSERT_EQ_MSG(test, s1.bytes - s0.bytes, c->on ? 16UL : 0UL,
				    "%s: bytes copied without a reference",
				    c->name);
	KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, 116,
			    "%s: 16 bytes read at 100", c->name);

	file->f_ra.prev_pos = sentinel;
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, lf->size, 16), 0);
	KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, lf->size,
			    "%s: a read at EOF", c->name);

	file->f_ra.prev_pos = sentinel;
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, 200, 0), 0);
	KUNIT_EXPECT_EQ_MSG(test, file->f_ra.prev_pos, 200,
			    "%s: a read of no bytes at 200", c->name);
}

/* ---------------------------------------------------- read correctness */

struct read_case {
	enum mm_kunit_fs fs;
	enum mm_kunit_iter iter;
};

static const struct read_case read_cases[] = {
	{ MM_KUNIT_TMPFS, MM_KUNIT_KVEC },
	{ MM_KUNIT_TMPFS, MM_KUNIT_BVEC },
	{ MM_KUNIT_TMPFS, MM_KUNIT_UBUF },
	{ MM_KUNIT_TMPFS_HUGE, MM_KUNIT_KVEC },
	{ MM_KUNIT_TMPFS_HUGE, MM_KUNIT_UBUF },
	{ MM_KUNIT_RAMFS, MM_KUNIT_KVEC },
	{ MM_KUNIT_RAMFS, MM_KUNIT_BVEC },
	{ MM_KUNIT_RAMFS, MM_KUNIT_UBUF },
};

static void read_case_desc(const struct read_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %s", mm_kunit_fs_name[c->fs],
		 mm_kunit_iter_name[c->iter]);
}

KUNIT_ARRAY_PARAM(read, read_cases, read_case_desc);

/* The file: 4 MiB and 123 bytes, so that reads end short at EOF */
#define READ_FILE_SIZE	(SZ_4M + 123)

static const size_t read_lens[] = {
	1, 16, PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 1, SZ_64K, SZ_512K,
	SZ_512K + 1, SZ_1M + 3, SZ_2M,
};

/* The last two: at EOF, and past it inside the last folio: 0 bytes */
static const loff_t read_offs[] = {
	0, 1, PAGE_SIZE - 1, 3 * PAGE_SIZE + 17, SZ_2M - 5,
	READ_FILE_SIZE - 100, READ_FILE_SIZE, READ_FILE_SIZE + 50,
};

/* A prev_pos no read of the bytes case ends at */
#define READ_SENTINEL	((loff_t)1)

/*
 * One read of @len at @off, checked against the file and, when the case
 * counts (@counted), against the counts of lockless copies: all of the
 * bytes with the switch on (@lockless), none with it off.  On ramfs the
 * file is FMODE_RANDOM, and a read not cut short by EOF keeps prev_pos if
 * it was done whole without references, else stores it (patch 15): a
 * proof of the path that needs no tracepoint.  false on a failure.
 */
static bool read_one(struct kunit *test, struct mm_kunit_reader *r, bool counted,
		     struct mm_kunit_file *lf, enum mm_kunit_iter iter, bool lockless,
		     loff_t off, size_t len)
{
	size_t want = off >= lf->size ? 0 : min_t(loff_t, len, lf->size - off);
	unsigned long sections = DIV_ROUND_UP(want, SZ_512K);
	unsigned long bytes = lockless ? want : 0;
	struct lr_stat s0, s1;
	char what[96];
	ssize_t n;

	snprintf(what, sizeof(what), "switch %s, %zu at %lld",
		 lockless ? "on" : "off", len, off);
	lf->file->f_ra.prev_pos = READ_SENTINEL;
	inode_set_atime(file_inode(lf->file), 1, 0);
	lr_now(test, &s0);
	n = mm_kunit_read(test, r, lf, iter, off, len);
	lr_now(test, &s1);
	KUNIT_EXPECT_EQ_MSG(test, n, (ssize_t)want, "%s", what);
	if (want)
		KUNIT_EXPECT_GT_MSG(test, inode_get_atime_sec(file_inode(lf->file)), 1,
				    "%s: the read left the file's atime as it was", what);
	if (n != (ssize_t)want ||
	    mm_kunit_check_bytes(test, r->kbuf, lf->want + off, off, n, what))
		return false;
	if ((lf->file->f_mode & FMODE_RANDOM) && want == len) {
		loff_t pos = lockless ? READ_SENTINEL : off + (loff_t)want;

		KUNIT_EXPECT_EQ_MSG(test, lf->file->f_ra.prev_pos, pos,
				    "%s: FMODE_RANDOM prev_pos (kept only after a read done whole without references)",
				    what);
		if (lf->file->f_ra.prev_pos != pos)
			return false;
	}
	if (!counted)
		return true;
	KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, bytes,
			    "%s: bytes copied without a reference", what);
	if (bytes)
		KUNIT_EXPECT_EQ_MSG(test, s1.sections - s0.sections, sections,
				    "%s: RCU sections", what);
	return s1.bytes - s0.bytes == bytes &&
	       (!bytes || s1.sections - s0.sections == sections);
}

/*
 * Patches 13, 14, 17: with every folio flagged, reads of 1 B to 2 MiB at
 * offsets that cross page and folio boundaries and EOF return the file's
 * bytes (none at EOF or past it), with the switch on and off; on, all
 * of them copied without a reference, in one RCU section per 512 KiB;
 * off, none.  Either way a read that returns bytes marks the file
 * accessed, as filemap_read() and shmem always did: its atime moves on.
 */
static void lockless_read_bytes(struct kunit *test)
{
	const struct read_case *c = test->param_value;
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, c->fs, READ_FILE_SIZE);
	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
	unsigned int i, j, sw;
	bool counted;

	mm_kunit_file_write(test, lf, 0, lf->size, 6);
	if (c->fs == MM_KUNIT_TMPFS_HUGE)
		mm_kunit_need_pmd_folio(test, lf, 0);
	lr_make_hot(test, lf);
	counted = lr_watch(test, lf, "bytes and RCU sections copied without a reference");
	if (c->fs == MM_KUNIT_RAMFS)
		lf->file->f_mode |= FMODE_RANDOM;

	for (sw = 0; sw < 2; sw++) {
		lr_switch(test, sw == 0);
		for (i = 0; i < ARRAY_SIZE(read_offs); i++)
			for (j = 0; j < ARRAY_SIZE(read_lens); j++)
				if (!read_one(test, r, counted, lf, c->iter,
					      sw == 0, read_offs[i],
					      read_lens[j]))
					return;
	}
}

/*
 * A read of @len bytes at @off of a 4-page file, FMODE_RANDOM or not,
 * with the switch on or off, the file writably mapped or not
 */
struct prev_pos_case {
	const char *name;
	bool random, on, mapped;
	loff_t off;
	size_t len;
	bool kept;		/* f_ra.prev_pos stays as it was */
};

static const struct prev_pos_case prev_pos_cases[] = {
	{ "FMODE_RANDOM, read without references: kept", true, true, false,
	  PAGE_SIZE, 16, true },
	{ "FMODE_RANDOM, slow path (switch off): stored", true, false, false,
	  PAGE_SIZE, 16, false },
	{ "not FMODE_RANDOM, read without references: stored", false, true,
	  false, PAGE_SIZE, 16, false },
	{ "FMODE_RANDOM, the last byte alone without references: kept", true,
	  true, false, 4 * PAGE_SIZE - 1, 1, true },
	/* Where flush_dcache_page() does something, the slow path reads it */
	{ "FMODE_RANDOM, writably mapped: kept unless flush_dcache_page()",
	  true, true, true, PAGE_SIZE, 16,
	  !ARCH_IMPLEMENTS_FLUSH_DCACHE_PAGE },
};

KUNIT_ARRAY_PARAM_DESC(prev_pos, prev_pos_cases, name);

/* f_ra.prev_pos after a read of @len bytes at @off, set to @sentinel first */
static loff_t prev_pos_after_read(struct kunit *test, struct mm_kunit_file *lf,
				  loff_t sentinel, loff_t off, size_t len)
{
	lf->file->f_ra.prev_pos = sentinel;
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, off, len), (ssize_t)len);
	return lf->file->f_ra.prev_pos;
}

/*
 * Patch 15: after a read done without references, an FMODE_RANDOM file
 * keeps its f_ra.prev_pos; other files, and reads on the slow path, store
 * it (on ramfs, where filemap_read() does the read).  A read of the last
 * byte alone is one without references too, and so is one of a file
 * mapped writable where flush_dcache_page() is a no-op (not elsewhere).
 */
static void lockless_read_fmode_random_prev_pos(struct kunit *test)
{
	const struct prev_pos_case *c = test->param_value;
	struct mm_kunit_file *lf = lr_hot_file(test, MM_KUNIT_RAMFS, 4 * PAGE_SIZE, 7);
	const loff_t sentinel = 3 * PAGE_SIZE + 7;
	unsigned long addr = 0;
	bool writable = false;
	ssize_t ret;

	lr_switch(test, c->on);
	if (c->random)
		lf->file->f_mode |= FMODE_RANDOM;
	if (c->mapped) {
		addr = kunit_vm_mmap(test, lf->file, 0, lf->size,
				     PROT_READ | PROT_WRITE, MAP_SHARED, 0);
		KUNIT_ASSERT_FALSE_MSG(test, !addr || IS_ERR_VALUE(addr),
				       "kunit_vm_mmap of the file failed");
		writable = mapping_writably_mapped(lf->file->f_mapping);
	}
	lf->file->f_ra.prev_pos = sentinel;
	ret = lr_read_at(test, lf, c->off, c->len);
	/*
	 * Unmapped here, not when the case's mm goes: the file's last
	 * reference must not be the mapping's, put after the case ends
	 */
	if (addr)
		vm_munmap(addr, lf->size);
	KUNIT_ASSERT_TRUE_MSG(test, !c->mapped || writable,
			      "the shared writable mapping did not count");
	KUNIT_ASSERT_EQ(test, ret, (ssize_t)c->len);
	KUNIT_EXPECT_EQ_MSG(test, lf->file->f_ra.prev_pos,
			    c->kept ? sentinel : c->off + (loff_t)c->len,
			    "%s", c->name);
}

/* 16 bytes of folio 1, then of folio 0: the second read enters folio 0 */
static void enter_folio0(struct kunit *test, struct mm_kunit_file *lf)
{
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, PAGE_SIZE, 16), 16);
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, 0, 16), 16);
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
	struct folio *folio;
	struct mm_kunit_file *lf;
	bool idle, counted;

	if (!IS_ENABLED(CONFIG_PAGE_IDLE_FLAG))
		kunit_skip(test, "config: CONFIG_PAGE_IDLE_FLAG is off (IDLE_PAGE_TRACKING)");
	lf = lr_hot_file(test, MM_KUNIT_TMPFS, 2 * PAGE_SIZE, 5);
	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	folio_set_idle(folio);
	/* The file holds the folio; no reference of ours to leak */
	folio_put(folio);

	enter_folio0(test, lf);
	idle = folio_test_idle(folio);
	KUNIT_EXPECT_FALSE_MSG(test, idle, "a read left the hot folio idle");

	counted = lr_watch(test, lf, "lockless again once PG_idle was cleared");
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, PAGE_SIZE, 16), 16);
	lr_now(test, &s0);
	KUNIT_ASSERT_EQ(test, lr_read_at(test, lf, 0, 16), 16);
	lr_now(test, &s1);
	if (counted)
		KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 16,
				    "not lockless once PG_idle was cleared");
}

/*
 * Patch 17: a read of a hot tmpfs file whose middle pages were swapped out
 * copies without references up to the first swap entry, and no further;
 * the slow path brings the swapped pages back, and every byte equals the
 * file.  A read that starts at a swap entry copies nothing without one.
 */
static void lockless_read_shmem_swapped_out(struct kunit *test)
{
	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
	struct mm_kunit_file *lf;
	struct lr_stat s0, s1;
	bool counted;

	mm_kunit_need_swap(test);
	lf = lr_hot_file(test, MM_KUNIT_TMPFS, 16 * PAGE_SIZE, 9);
	mm_kunit_swap_out(test, lf, 4, 4);
	counted = lr_watch(test, lf, "copies without references up to the swap entry");

	lr_now(test, &s0);
	mm_kunit_read_and_check(test, r, lf, MM_KUNIT_KVEC, 0, lf->size);
	lr_now(test, &s1);
	if (counted)
		KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 4 * PAGE_SIZE,
				    "lockless bytes of a read from page 0, swap entries at 4-7");
	KUNIT_EXPECT_EQ_MSG(test, mm_kunit_nr_swapped(lf, 0, 16), 0,
			    "the read left pages swapped out");

	mm_kunit_swap_out(test, lf, 4, 4);
	lr_now(test, &s0);
	mm_kunit_read_and_check(test, r, lf, MM_KUNIT_KVEC, 4 * PAGE_SIZE + 10,
				2 * PAGE_SIZE);
	lr_now(test, &s1);
	if (counted)
		KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 0,
				    "lockless bytes of a read from a swap entry");
}

/*
 * Patches 12, 17: in a tmpfs file with hot folios, a fallocated folio is
 * never flagged however often it is read, reads as zeroes, and is never
 * copied without a reference; a hole reads as zeroes too.
 */
static void lockless_read_shmem_falloc_and_holes(struct kunit *test)
{
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, MM_KUNIT_TMPFS, 8 * PAGE_SIZE);
	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
	struct lr_stat s0, s1;
	unsigned int i;
	bool counted;

	/* pages 0-1 and 4-7 written, 2 fallocated, 3 a hole */
	mm_kunit_file_write(test, lf, 0, 2 * PAGE_SIZE, 8);
	mm_kunit_file_write(test, lf, 4 * PAGE_SIZE, 4 * PAGE_SIZE, 8);
	mm_kunit_file_falloc(test, lf, 2 * PAGE_SIZE, PAGE_SIZE);
	/*
	 * Pages 0-1 read in turn get hot.  Page 2 is entered by reads that
	 * span pages 1-3 (the batch path of shmem reads) and by reads of it
	 * alone, each after a read of page 4; a fallocated folio is read as
	 * zeroes and never marked, whatever prev_pos says.
	 */
	for (i = 0; i < 16; i++) {
		lr_alternate_reads(test, lf, 0, PAGE_SIZE, 1, 16);
		lr_alternate_reads(test, lf, 2 * PAGE_SIZE,
				   4 * PAGE_SIZE, 1, 16);
		KUNIT_ASSERT_EQ(test, mm_kunit_read(test, r, lf, MM_KUNIT_KVEC,
						    PAGE_SIZE + 100, 2 * PAGE_SIZE),
				(ssize_t)(2 * PAGE_SIZE));
		KUNIT_EXPECT_EQ(test, mm_kunit_check_bytes(test, r->kbuf,
							   lf->want + PAGE_SIZE + 100,
							   PAGE_SIZE + 100, 2 * PAGE_SIZE,
							   "pages 1-3"), 0);
		KUNIT_ASSERT_GT(test, lr_read_at(test, lf, 4 * PAGE_SIZE, 16), 0);
	}
	KUNIT_EXPECT_TRUE(test, lr_index_flagged(lf, 0));
	KUNIT_EXPECT_FALSE_MSG(test, lr_index_flagged(lf, 2),
			       "fallocated folio flagged");

	counted = lr_watch(test, lf, "fallocated folio and hole not copied without a reference");
	lr_now(test, &s0);
	KUNIT_ASSERT_EQ(test, mm_kunit_read(test, r, lf, MM_KUNIT_KVEC,
					    2 * PAGE_SIZE, 2 * PAGE_SIZE),
			(ssize_t)(2 * PAGE_SIZE));
	lr_now(test, &s1);
	KUNIT_EXPECT_EQ(test, mm_kunit_check_bytes(test, r->kbuf,
						   lf->want + 2 * PAGE_SIZE,
						   2 * PAGE_SIZE, 2 * PAGE_SIZE,
						   "fallocated and hole"), 0);
	if (counted)
		KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, 0UL,
				    "fallocated folio or hole copied without a reference");

	/* A read across all of it: right bytes, zeroes where nothing was written */
	KUNIT_ASSERT_EQ(test, mm_kunit_read(test, r, lf, MM_KUNIT_KVEC, 0,
					    lf->size), (ssize_t)lf->size);
	KUNIT_EXPECT_EQ(test, mm_kunit_check_bytes(test, r->kbuf, lf->want, 0,
						   lf->size, "whole file"), 0);
}

/* A tmpfs file of fallocated folios only: order-0 or PMD-size */
struct not_uptodate_case {
	const char *name;
	enum mm_kunit_fs fs;
	loff_t size;		/* two folios */
};

static const struct not_uptodate_case not_uptodate_cases[] = {
	{ "tmpfs, order-0 folios", MM_KUNIT_TMPFS, 2 * PAGE_SIZE },
	{ "tmpfs huge=always, PMD-size folios", MM_KUNIT_TMPFS_HUGE, SZ_4M },
};

KUNIT_ARRAY_PARAM_DESC(not_uptodate, not_uptodate_cases, name);

/*
 * Patches 12, 16: a read never flags a folio that is not uptodate.  Two
 * fallocated tmpfs folios, read in turn 16 times from their first bytes
 * and 16 times at offset 100 (each read enters a folio, what makes an
 * uptodate folio hot), and whole: zeroes, the folios still
 * not uptodate, none flagged, no pgfree_rcu_mark counted.
 */
static void lockless_read_not_uptodate_never_flagged(struct kunit *test)
{
	const struct not_uptodate_case *c = test->param_value;
	struct mm_kunit_file *lf = mm_kunit_fs_file_create(test, c->fs, c->size);
	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
	unsigned long ev0 = vm_event(test, "pgfree_rcu_mark");
	const loff_t half = c->size / 2;
	struct folio *folio;
	unsigned int i;
	bool uptodate;
	loff_t off;

	mm_kunit_file_falloc(test, lf, 0, lf->size);
	if (c->fs == MM_KUNIT_TMPFS_HUGE)
		mm_kunit_need_pmd_folio(test, lf, 0);
	for (i = 0; i < 16; i++) {
		lr_alternate_reads(test, lf, 0, half, 1, 16);
		lr_alternate_reads(test, lf, 100, half + 100, 1, 16);
	}
	for (off = 0; off < lf->size; off += half) {
		KUNIT_ASSERT_EQ(test, mm_kunit_read(test, r, lf, MM_KUNIT_KVEC,
						    off, half), (ssize_t)half);
		KUNIT_EXPECT_EQ(test, mm_kunit_check_bytes(test, r->kbuf,
							   lf->want + off, off,
							   half, c->name), 0);
	}

	folio = mm_kunit_file_folio(lf, 0);
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "%s: no folio at 0", c->name);
	uptodate = folio_test_uptodate(folio);
	folio_put(folio);
	KUNIT_ASSERT_FALSE_MSG(test, uptodate,
			       "%s: the fallocated folio became uptodate: nothing tested",
			       c->name);
	KUNIT_EXPECT_EQ_MSG(test, lr_pages_flagged(lf, lf->size >> PAGE_SHIFT), 0,
			    "%s: a folio that is not uptodate was flagged", c->name);
	KUNIT_EXPECT_EQ_MSG(test, vm_event(test, "pgfree_rcu_mark") - ev0, 0,
			    "%s: pages counted as flagged", c->name);
}

/*
 * Patch 18: writing 0 to debugfs lockless_page_cache_read stops the copies
 * without references, 1 brings them back; the file reads back what was
 * written.  Which path a read took: from the tracepoint, else from the
 * FMODE_RANDOM rule of patch 15 (a read without references keeps
 * f_ra.prev_pos, the slow path stores it).
 */
static void lockless_read_switch(struct kunit *test)
{
	const struct switch_case *c = test->param_value;
	struct mm_kunit_file *lf = lr_hot_file(test, MM_KUNIT_RAMFS, 2 * PAGE_SIZE, 9);
	const loff_t sentinel = PAGE_SIZE + 7;
	struct lr_stat s0, s1;
	bool counted;

	lr_switch(test, !c->on);
	lr_switch(test, c->on);
	KUNIT_EXPECT_EQ(test, lr_switch_get(test), c->on);

	counted = lr_watch(test, lf,
			   "bytes copied without a reference (FMODE_RANDOM prev_pos decides)");
	lf->file->f_mode |= FMODE_RANDOM;
	lr_now(test, &s0);
	KUNIT_EXPECT_EQ(test, prev_pos_after_read(test, lf, sentinel,
						  PAGE_SIZE, 16),
			c->on ? sentinel : PAGE_SIZE + 16);
	lr_now(test, &s1);
	if (counted)
		KUNIT_EXPECT_EQ_MSG(test, s1.bytes - s0.bytes, c->on ? 16UL : 0UL,
				    "%s: bytes copied without a reference",
				    c->name);
}

/* The file system a case reads from */
static const enum mm_kunit_fs fs_cases[] = { MM_KUNIT_TMPFS, MM_KUNIT_RAMFS };

static void fs_case_desc(const enum mm_kunit_fs *fs, char *desc)
{
	strscpy(desc, mm_kunit_fs_name[*fs], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fs, fs_cases, fs_case_desc);

/*
 * Patches 13, 17: a hot folio whose PG_rcu_free was cleared (by hand here)
 * is not copied without a reference: a read that enters it takes the slow
 * path, which finds it hot and flags it again.  A copy without a reference
 * would leave it unflagged, and free to be freed under a reader.
 */
static void lockless_read_unflagged_folio_not_copied(struct kunit *test)
{
	const enum mm_kunit_fs *fs = test->param_value;
	struct mm_kunit_file *lf = lr_hot_file(test, *fs, 2 * PAGE_SIZE, 11);
	struct folio *folio;

	folio = filemap_get_folio(lf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
	folio_clear_rcu_free(folio);
	folio_put(folio);
	enter_folio0(test, lf);
	KUNIT_EXPECT_TRUE_MSG(test, lr_index_flagged(lf, 0),
			      "%s: the unflagged folio was read without a reference",
			      mm_kunit_fs_name[*fs]);
}

/* Tries of rest_after_unflagged for a read that copied without a reference */
#define REST_TRIES	3

/*
 * Patches 13, 17: a read of a file whose last folio lost PG_rcu_free (by
 * hand here) returns every byte: what was copied without a reference,
 * then the rest by the slow path.  On ramfs that is filemap_read()
 * going on after filemap_read_rcu(); tmpfs reads through shmem's own
 * path.  Where the tracepoint is there, at most the first two pages were
 * copied without one, and a try in which none was (the folios no longer
 * hot: reclaim on a busy host) is made again, REST_TRIES at most, else
 * the case skips; without it the bytes decide.
 */
static void lockless_read_rest_after_unflagged(struct kunit *test)
{
	const enum mm_kunit_fs *fs = test->param_value;
	struct mm_kunit_file *lf = lr_hot_file(test, *fs, 3 * PAGE_SIZE, 12);
	struct mm_kunit_reader *r = mm_kunit_reader_create(test);
	struct lr_stat s0, s1;
	struct folio *folio;
	bool counted;
	ssize_t n;
	int i;

	counted = lr_watch(test, lf, "what was copied without a reference");
	for (i = 0; i < REST_TRIES; i++) {
		if (i)
			lr_make_hot(test, lf);
		folio = filemap_get_folio(lf->file->f_mapping, 2);
		KUNIT_ASSERT_FALSE(test, IS_ERR(folio));
		if (folio_test_large(folio)) {
			folio_put(folio);
			kunit_skip(test, "machine: the file's last page is in a large folio");
		}
		folio_clear_rcu_free(folio);
		folio_put(folio);

		lr_now(test, &s0);
		n = mm_kunit_read(test, r, lf, MM_KUNIT_KVEC, 0, 3 * PAGE_SIZE);
		lr_now(test, &s1);
		KUNIT_EXPECT_EQ_MSG(test, n, (ssize_t)(3 * PAGE_SIZE),
				    "%s: a read of three pages, the last unflagged",
				    mm_kunit_fs_name[*fs]);
		/* A failure decides: no try again, no skip over it */
		if (n != 3 * PAGE_SIZE ||
		    mm_kunit_check_bytes(test, r->kbuf, lf->want, 0, n, "the read"))
			return;
		if (!counted)
			return;
		KUNIT_EXPECT_LE_MSG(test, s1.bytes - s0.bytes, 2 * PAGE_SIZE,
				    "the unflagged page copied without a reference");
		if (s1.bytes != s0.bytes)
			return;
	}
	kunit_skip(test, "machine: in %d tries nothing was copied without a reference",
		   REST_TRIES);
}

static int lockless_read_test_init(struct kunit *test)
{
	lr_trace_case_init(test);
	lr_require_rcu_free(test);
	lr_wait_deferred();
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
	lr_wait_deferred();
}

static struct kunit_case lockless_read_cases[] = {
	KUNIT_CASE(lockless_read_flags_reread_page),
	KUNIT_CASE(lockless_read_leaves_cold_data_unflagged),
	KUNIT_CASE(lockless_read_mark_counts_every_page),
	KUNIT_CASE_PARAM(lockless_read_one_access_within_folio,
			 one_access_gen_params),
	KUNIT_CASE(lockless_read_shmem_reread_marks_deactivated),
	KUNIT_CASE_PARAM(lockless_read_shmem_prev_pos, switch_gen_params),
	KUNIT_CASE_PARAM(lockless_read_bytes, read_gen_params),
	KUNIT_CASE_PARAM(lockless_read_fmode_random_prev_pos,
			 prev_pos_gen_params),
	KUNIT_CASE(lockless_read_clears_idle),
	KUNIT_CASE(lockless_read_shmem_falloc_and_holes),
	KUNIT_CASE(lockless_read_shmem_swapped_out),
	KUNIT_CASE_PARAM(lockless_read_not_uptodate_never_flagged,
			 not_uptodate_gen_params),
	KUNIT_CASE_PARAM(lockless_read_switch, switch_gen_params),
	KUNIT_CASE_PARAM(lockless_read_unflagged_folio_not_copied,
			 fs_gen_params),
	KUNIT_CASE_PARAM(lockless_read_rest_after_unflagged, fs_gen_params),
	{}
};

static struct kunit_suite lockless_read_suite = {
	.name = "lockless_read",
	.suite_init = lr_suite_init,
	.suite_exit = lr_suite_exit,
	.init = lockless_read_test_init,
	.exit = lockless_read_test_exit,
	.test_cases = lockless_read_cases,
};

kunit_test_suite(lockless_read_suite);

MODULE_DESCRIPTION("KUnit tests for page cache reads without folio references");
MODULE_LICENSE("GPL");
