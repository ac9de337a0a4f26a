// SPDX-License-Identifier: GPL-2.0
/*
 * Race suite for reads without folio references (rcu-free series, patches
 * 13-17).  Reader kthreads, one per online CPU, read a tmpfs file at
 * pseudo-random offsets and lengths and check every byte they get: it must
 * be 0 (a hole, a fallocated or a truncated range) or the file's pattern
 * for that offset under one of the two seeds the writer alternates.  Bytes
 * of a freed and reused page fail that check.  Meanwhile the test thread
 * changes the file under them, one kind of change per case: truncate and
 * rewrite, hole punch, fallocate and its undo, folio split, migration,
 * swap-out.  Each case runs until the readers have checked RACE_READS reads
 * and needs 0 bad bytes; it also checks that reads were copied without
 * references while it ran (filemap_read_rcu_stat()), so that it cannot
 * pass on the slow path alone.
 *
 * The cases are KUNIT_CASE_SLOW: make run leaves them out with
 * speed>slow, make test runs them in a boot of their own.
 */

#include <kunit/test.h>
#include <linux/falloc.h>
#include <linux/mm.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/migrate.h>
#include <linux/pagemap.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "../internal.h"
#include "lockless_read.h"

#if defined(CONFIG_PAGE_RCU_FREE) && defined(filemap_read_rcu_can_copy)

/* Reads each case has its readers check */
#define RACE_READS		250000L
/* Hang guard only: a case that gets nowhere in this time fails */
#define RACE_GIVE_UP_SECS	300
#define RACE_FILE_SIZE		SZ_4M
#define RACE_MAX_READ		(2 * PAGE_SIZE)
#define RACE_SEED(gen)		((gen) & 1 ? 41 : 42)
#define RACE_MAX_READERS	8
#define RACE_PUNCH		(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)

struct race {
	struct lr_file *lf;
	atomic_long_t reads;
	atomic_long_t bad;		/* bytes */
	loff_t bad_off;			/* first bad byte */
	u8 bad_byte;
	struct task_struct *readers[RACE_MAX_READERS];
	unsigned int nr_readers;
};

struct race_reader {
	struct race *race;
	u32 rnd;
	u8 buf[RACE_MAX_READ];
};

static u32 race_rand(u32 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static bool race_byte_ok(loff_t off, u8 b)
{
	return !b || b == lr_pattern(off, RACE_SEED(0)) ||
	       b == lr_pattern(off, RACE_SEED(1));
}

static int race_reader_fn(void *data)
{
	struct race_reader *rr = data;
	struct race *race = rr->race;
	struct file *file = race->lf->file;

	while (!kthread_should_stop()) {
		loff_t off = race_rand(&rr->rnd) % race->lf->size;
		size_t len = 1 + race_rand(&rr->rnd) % RACE_MAX_READ;
		loff_t pos = off;
		ssize_t n = kernel_read(file, rr->buf, len, &pos);
		ssize_t i;

		for (i = 0; i < n; i++) {
			if (race_byte_ok(off + i, rr->buf[i]))
				continue;
			if (atomic_long_inc_return(&race->bad) == 1) {
				race->bad_off = off + i;
				race->bad_byte = rr->buf[i];
			}
		}
		atomic_long_inc(&race->reads);
		cond_resched();
	}
	return 0;
}

static void race_stop(struct race *race)
{
	unsigned int i;

	for (i = 0; i < race->nr_readers; i++)
		if (race->readers[i])
			kthread_stop(race->readers[i]);
	race->nr_readers = 0;
}

static void race_stop_action(void *data)
{
	race_stop(data);
}

/*
 * The file, written and read until its folios are flagged, and its readers
 * started.
 */
static struct race *race_start(struct kunit *test, enum lr_kind kind)
{
	struct race *race = kunit_kzalloc(test, sizeof(*race), GFP_KERNEL);
	unsigned int i, pass;
	loff_t off;

	KUNIT_ASSERT_NOT_NULL(test, race);
	race->lf = lr_file_create(test, kind, RACE_FILE_SIZE);
	lr_file_write(test, race->lf, 0, RACE_FILE_SIZE, RACE_SEED(0));
	for (pass = 0; pass < 8; pass++) {
		for (off = 0; off < RACE_FILE_SIZE; off += PAGE_SIZE) {
			u8 b[16];
			loff_t pos = off;

			KUNIT_ASSERT_EQ(test, kernel_read(race->lf->file, b,
							  sizeof(b), &pos),
					(ssize_t)sizeof(b));
		}
		/* Queued activations take effect (see lockless_read_kunit.c) */
		lru_add_drain_all();
	}

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, race_stop_action,
							race), 0);
	for (i = 0; i < min(num_online_cpus(), RACE_MAX_READERS); i++) {
		struct race_reader *rr = kunit_kzalloc(test, sizeof(*rr),
						       GFP_KERNEL);
		struct task_struct *t;

		KUNIT_ASSERT_NOT_NULL(test, rr);
		rr->race = race;
		rr->rnd = 2463534242u + i * 7919;
		t = kthread_run(race_reader_fn, rr, "lockless_race/%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		race->readers[race->nr_readers++] = t;
	}
	return race;
}

/* Stop the readers and judge: 0 bad bytes, and lockless copies happened */
static void race_end(struct kunit *test, struct race *race, const char *what,
		     unsigned long ops, const struct filemap_read_rcu_stat *s0)
{
	struct filemap_read_rcu_stat s1;

	race_stop(race);
	filemap_read_rcu_stat(&s1);
	kunit_info(test, "%s: %ld reads checked, %ld bad bytes, %lu %s, %lu KiB copied without a reference\n",
		   what, atomic_long_read(&race->reads),
		   atomic_long_read(&race->bad), ops, what,
		   (s1.bytes - s0->bytes) >> 10);
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&race->bad), 0L,
			    "first bad byte at %lld: %#x", race->bad_off,
			    race->bad_byte);
	KUNIT_EXPECT_GT_MSG(test, ops, 0UL, "the %s never happened", what);
	KUNIT_EXPECT_GT_MSG(test, s1.bytes - s0->bytes, 0UL,
			    "nothing was copied without a reference");
}

/*
 * One change to the file; @gen counts the rounds (it picks the seed of a
 * rewrite).  Returns whether the change happened (a split or a migration
 * may be refused while a reader holds a reference).
 */
typedef bool (*race_step_t)(struct kunit *test, struct race *race, u32 *rnd,
			    unsigned long gen);

/*
 * Run @step over and over on a file of @kind until the readers have checked
 * RACE_READS reads, then judge.  The deadline is a hang guard, not a speed
 * requirement: a case that never gets there fails and says how far it got.
 */
static void race_run(struct kunit *test, enum lr_kind kind, const char *what,
		     race_step_t step)
{
	struct race *race = race_start(test, kind);
	unsigned long deadline = jiffies + RACE_GIVE_UP_SECS * HZ;
	struct filemap_read_rcu_stat s0;
	unsigned long gen = 0, ops = 0;
	u32 rnd = 2463534242u;

	if (kind == LR_TMPFS_HUGE)
		lr_need_pmd_folio(test, race->lf, 0);
	filemap_read_rcu_stat(&s0);
	while (atomic_long_read(&race->reads) < RACE_READS) {
		if (time_after(jiffies, deadline)) {
			KUNIT_FAIL(test, "only %ld of %ld reads after %d s",
				   atomic_long_read(&race->reads), RACE_READS,
				   RACE_GIVE_UP_SECS);
			break;
		}
		ops += step(test, race, &rnd, ++gen);
		cond_resched();
	}
	race_end(test, race, what, ops, &s0);
}

/* Rewrite [@off, @off + @len) with the pattern of generation @gen */
static void race_rewrite(struct kunit *test, struct race *race, loff_t off,
			 size_t len, unsigned long gen)
{
	lr_file_write(test, race->lf, off, len, RACE_SEED(gen));
}

/* A 64 KiB-aligned range of 64 KiB picked from the file */
static loff_t race_range(u32 *rnd)
{
	return (loff_t)(race_rand(rnd) % (RACE_FILE_SIZE / SZ_64K)) * SZ_64K;
}

static void race_punch(struct kunit *test, struct race *race, loff_t off,
		       loff_t len)
{
	KUNIT_ASSERT_EQ(test, vfs_fallocate(race->lf->file, RACE_PUNCH, off,
					    len), 0);
}

/* Truncate to a random size below the current one, then write it all back */
static bool race_truncate_step(struct kunit *test, struct race *race,
			       u32 *rnd, unsigned long gen)
{
	loff_t size = race_rand(rnd) % RACE_FILE_SIZE;

	KUNIT_ASSERT_EQ(test, vfs_truncate(&race->lf->file->f_path, size), 0);
	race_rewrite(test, race, 0, RACE_FILE_SIZE, gen);
	return true;
}

static void lockless_race_truncate(struct kunit *test)
{
	race_run(test, LR_TMPFS, "truncations", race_truncate_step);
}

/* Punch a 64 KiB hole, then write the range again */
static bool race_hole_punch_step(struct kunit *test, struct race *race,
				 u32 *rnd, unsigned long gen)
{
	loff_t off = race_range(rnd);

	race_punch(test, race, off, SZ_64K);
	race_rewrite(test, race, off, SZ_64K, gen);
	return true;
}

static void lockless_race_hole_punch(struct kunit *test)
{
	race_run(test, LR_TMPFS, "hole punches", race_hole_punch_step);
}

/*
 * Punch a hole, fallocate it (it must read as zeroes), punch it again (the
 * undo), then write it back.
 */
static bool race_fallocate_step(struct kunit *test, struct race *race,
				u32 *rnd, unsigned long gen)
{
	loff_t off = race_range(rnd);

	race_punch(test, race, off, SZ_64K);
	KUNIT_ASSERT_EQ(test, vfs_fallocate(race->lf->file, FALLOC_FL_KEEP_SIZE,
					    off, SZ_64K), 0);
	race_punch(test, race, off, SZ_64K);
	race_rewrite(test, race, off, SZ_64K, gen);
	return true;
}

static void lockless_race_fallocate(struct kunit *test)
{
	race_run(test, LR_TMPFS, "fallocations", race_fallocate_step);
}

/*
 * huge=always: split a PMD-size folio the readers copy from, then punch
 * and rewrite its range so that a later round has a PMD-size folio again.
 */
static bool race_split_step(struct kunit *test, struct race *race, u32 *rnd,
			    unsigned long gen)
{
	const loff_t pmd = PAGE_SIZE << HPAGE_PMD_ORDER;
	loff_t off = (race_rand(rnd) % (RACE_FILE_SIZE / pmd)) * pmd;
	struct folio *folio;
	bool split = false;

	folio = filemap_get_folio(race->lf->file->f_mapping, off >> PAGE_SHIFT);
	if (!IS_ERR(folio)) {
		folio_lock(folio);
		/* Fails while a slow-path reader holds a reference */
		split = folio_test_large(folio) && !split_folio(folio);
		folio_unlock(folio);
		folio_put(folio);
	}
	race_punch(test, race, off, pmd);
	race_rewrite(test, race, off, pmd, gen);
	return split;
}

static void lockless_race_split(struct kunit *test)
{
	race_run(test, LR_TMPFS_HUGE, "splits", race_split_step);
}

/*
 * Take a reference-less folio of the file off the LRU: the caller's lookup
 * reference is dropped, migration and reclaim want none but the
 * isolation's.  NULL if it is not on the LRU (an LRU batch has it).
 */
static struct folio *race_isolate(struct race *race, u32 *rnd)
{
	pgoff_t index = race_rand(rnd) % (RACE_FILE_SIZE >> PAGE_SHIFT);
	struct folio *folio;
	bool isolated;

	folio = filemap_get_folio(race->lf->file->f_mapping, index);
	if (IS_ERR(folio))
		return NULL;
	isolated = folio_isolate_lru(folio);
	folio_put(folio);
	return isolated ? folio : NULL;
}

/* Move one folio of the file to a new page, while it is read */
static bool race_migration_step(struct kunit *test, struct race *race,
				u32 *rnd, unsigned long gen)
{
	struct migration_target_control mtc = {
		.nid = NUMA_NO_NODE,
		.gfp_mask = GFP_HIGHUSER_MOVABLE,
		.reason = MR_SYSCALL,
	};
	struct folio *folio = race_isolate(race, rnd);
	unsigned int moved = 0;
	LIST_HEAD(list);

	if (!(gen % 64))
		lru_add_drain_all();
	if (!folio)
		return false;
	list_add(&folio->lru, &list);
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    folio_nr_pages(folio));
	if (migrate_pages(&list, alloc_migration_target, NULL,
			  (unsigned long)&mtc, MIGRATE_SYNC, MR_SYSCALL,
			  &moved))
		putback_movable_pages(&list);
	return moved;
}

static void lockless_race_migration(struct kunit *test)
{
	race_run(test, LR_TMPFS, "migrations", race_migration_step);
}

/* Swap one tmpfs folio out while it is read; needs a swap device */
static bool race_swap_out_step(struct kunit *test, struct race *race,
			       u32 *rnd, unsigned long gen)
{
	struct folio *folio = race_isolate(race, rnd);
	LIST_HEAD(list);

	if (!(gen % 64))
		lru_add_drain_all();
	if (!folio)
		return false;
	list_add(&folio->lru, &list);
	return reclaim_pages(&list) > 0;
}

static void lockless_race_swap_out(struct kunit *test)
{
	if (!total_swap_pages)
		kunit_skip(test, "no swap device in this guest (total_swap_pages is 0)");
	race_run(test, LR_TMPFS, "swap-outs", race_swap_out_step);
}

/* A lockless_read case that failed with the switch off left it off */
static int lockless_race_init(struct kunit *test)
{
	if (lr_switch_exists(test))
		lr_switch(test, true);
	return 0;
}

static struct kunit_case lockless_read_race_cases[] = {
	KUNIT_CASE_SLOW(lockless_race_truncate),
	KUNIT_CASE_SLOW(lockless_race_hole_punch),
	KUNIT_CASE_SLOW(lockless_race_fallocate),
	KUNIT_CASE_SLOW(lockless_race_split),
	KUNIT_CASE_SLOW(lockless_race_migration),
	KUNIT_CASE_SLOW(lockless_race_swap_out),
	{}
};

#else

static int lockless_race_init(struct kunit *test)
{
	return 0;
}

static void lockless_race_skipped(struct kunit *test)
{
	kunit_skip(test, "no reads without references: rcu-free patch 13 not applied");
}

static struct kunit_case lockless_read_race_cases[] = {
	KUNIT_CASE_SLOW(lockless_race_skipped),
	{}
};

#endif

static struct kunit_suite lockless_read_race_suite = {
	.name = "lockless_read_race",
	.init = lockless_race_init,
	.test_cases = lockless_read_race_cases,
};

kunit_test_suite(lockless_read_race_suite);

MODULE_DESCRIPTION("Race tests for page cache reads without folio references");
MODULE_LICENSE("GPL");
