// SPDX-License-Identifier: GPL-2.0
/*
 * Time to reclaim lazyfree THPs, the measurement behind the lazyfree-thp
 * series (1 GiB: 0.683 s split-and-discard vs 0.049 s discarded whole).
 *
 * Each round maps SIZE_MIB of anonymous memory into the test's own mm,
 * faults it in as PMD-mapped THPs, makes it lazyfree with MADV_FREE and
 * times MADV_PAGEOUT over the whole range, which hands every folio to
 * reclaim.  For contrast the same is done with the THPs written again
 * after MADV_FREE (dirty: reclaim must keep them, there is no swap).
 *
 * Each round checks that reclaim did what is timed: a clean range must
 * leave the mm (RSS down by its pages, pglazyfreed up by as many), a
 * redirtied one must stay (neither moves).  A MADV_PAGEOUT that reclaims
 * nothing would otherwise look like a speed-up.
 *
 * The comparison is between kernels (with and without the lazyfree-thp
 * patch), so every line has variant=-; run it with make bench-compare.
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sizes.h>
#include <linux/swap.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

#include "mm_bench.h"
#include "mm_kunit_helpers.h"

#define SIZE_MIB	1024
#define SIZE_BYTES	((unsigned long)SIZE_MIB * SZ_1M)

enum state { CLEAN, REDIRTIED, NR_STATES };

static const char * const state_name[] = { "clean", "redirtied" };

/* Write one byte per page of [addr, addr + len): faults or dirties it. */
static int touch(unsigned long addr, unsigned long len, u8 val)
{
	unsigned long off;

	for (off = 0; off < len; off += PAGE_SIZE)
		if (put_user(val, (u8 __user *)(addr + off)))
			return -EFAULT;
	return 0;
}

/* How many HPAGE_PMD_SIZE steps of [addr, addr + len) are PMD-mapped THPs. */
static unsigned long count_thps(unsigned long addr, unsigned long len)
{
	unsigned long off, nr = 0;

	for (off = 0; off < len; off += HPAGE_PMD_SIZE)
		nr += mm_kunit_pmd_state(current->mm, addr + off) ==
		      MM_KUNIT_PMD_HUGE;
	return nr;
}

/* The pglazyfreed event count, summed over the CPUs. */
static unsigned long pglazyfreed(struct kunit *test)
{
	unsigned long *events, n;

	events = kcalloc(NR_VM_EVENT_ITEMS, sizeof(*events), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, events);
	all_vm_events(events);
	n = events[PGLAZYFREED];
	kfree(events);
	return n;
}

/* One round for @state; returns the MADV_PAGEOUT time in ns, 0 on error. */
static u64 reclaim_round(struct kunit *test, enum state state)
{
	const unsigned long pages = SIZE_BYTES / PAGE_SIZE;
	unsigned long map, addr, thps, rss0, rss1, freed0, freed1;
	u64 t0, ns;

	map = vm_mmap(NULL, 0, SIZE_BYTES + HPAGE_PMD_SIZE,
		      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(map), "vm_mmap: %ld",
			       (long)map);
	addr = ALIGN(map, HPAGE_PMD_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr, SIZE_BYTES,
					 MADV_HUGEPAGE), 0);
	KUNIT_ASSERT_EQ(test, touch(addr, SIZE_BYTES, 1), 0);
	thps = count_thps(addr, SIZE_BYTES);
	if (thps < SIZE_BYTES / HPAGE_PMD_SIZE) {
		vm_munmap(map, SIZE_BYTES + HPAGE_PMD_SIZE);
		kunit_skip(test, "machine: only %lu of %lu THPs could be faulted in",
			   thps, SIZE_BYTES / HPAGE_PMD_SIZE);
	}
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr, SIZE_BYTES,
					 MADV_FREE), 0);
	if (state == REDIRTIED)
		KUNIT_ASSERT_EQ(test, touch(addr, SIZE_BYTES, 2), 0);
	lru_add_drain_all();
	rss0 = get_mm_counter(current->mm, MM_ANONPAGES);
	freed0 = pglazyfreed(test);

	t0 = ktime_get_ns();
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, addr, SIZE_BYTES,
					 MADV_PAGEOUT), 0);
	ns = ktime_get_ns() - t0;

	rss1 = get_mm_counter(current->mm, MM_ANONPAGES);
	freed1 = pglazyfreed(test);
	vm_munmap(map, SIZE_BYTES + HPAGE_PMD_SIZE);
	if (state == CLEAN) {
		KUNIT_EXPECT_LE_MSG(test, rss1 + pages, rss0,
				    "clean: RSS %lu -> %lu pages, %lu should have been reclaimed",
				    rss0, rss1, pages);
		KUNIT_EXPECT_GE_MSG(test, freed1 - freed0, pages,
				    "clean: pglazyfreed +%lu, expected +%lu",
				    freed1 - freed0, pages);
	} else {
		KUNIT_EXPECT_EQ_MSG(test, rss1, rss0,
				    "redirtied: RSS %lu -> %lu pages, reclaim must keep them",
				    rss0, rss1);
		KUNIT_EXPECT_EQ_MSG(test, freed1 - freed0, 0UL,
				    "redirtied: pglazyfreed +%lu, expected +0",
				    freed1 - freed0);
	}
	return ns;
}

/*
 * Milliseconds to reclaim SIZE_MIB of clean lazyfree THP, and of THP
 * redirtied after MADV_FREE; BENCH_ROUNDS rounds each after a warm-up.
 */
static void lazyfree_thp_reclaim_time(struct kunit *test)
{
	unsigned int round, s;
	char config[80];

	bench_env(test);
	KUNIT_ASSERT_EQ(test, kunit_attach_mm(), 0);
	/* round 0 is a warm-up, not reported */
	for (round = 0; round <= BENCH_ROUNDS; round++) {
		for (s = 0; s < NR_STATES; s++) {
			u64 ns = reclaim_round(test, s);

			if (!round)
				continue;
			snprintf(config, sizeof(config),
				 "bench=lazyfree_thp_reclaim size_mib=%d state=%s",
				 SIZE_MIB, state_name[s]);
			/* thousandths of a millisecond: microseconds */
			bench_line(test, config, "-", round,
				   div_u64(ns, NSEC_PER_USEC), "ms");
		}
	}
}

static struct kunit_case lazyfree_thp_benchmark_cases[] = {
	KUNIT_CASE_SLOW(lazyfree_thp_reclaim_time),
	{}
};

static struct kunit_suite lazyfree_thp_benchmark_suite = {
	.name = "lazyfree_thp_benchmark",
	.test_cases = lazyfree_thp_benchmark_cases,
};

kunit_test_suite(lazyfree_thp_benchmark_suite);

MODULE_DESCRIPTION("Reclaim time of lazyfree THPs (lazyfree-thp)");
MODULE_LICENSE("GPL");
