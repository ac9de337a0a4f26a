// SPDX-License-Identifier: GPL-2.0
/*
 * Race suite for reads without folio references (rcu-free series, patches
 * 13-17): a folio with PG_rcu_free must not be freed, and so not reused,
 * zeroed or poisoned, before an RCU grace period.
 *
 * Two 4 MiB tmpfs files, A (on the case's mount) and B (huge=always),
 * hold tagged data: every 8-byte word says which file it belongs to, its
 * offset in the file and the generation that wrote it (race_tag()).
 * Reader kthreads, one per online CPU, read both; the test thread changes
 * both under them, one kind of change per case.  Each step picks a range
 * in each file, sends half of the reads there until its folios are hot
 * (flagged), then punches, truncates, fallocates, splits, collapses,
 * migrates or swaps them out, and writes punched ranges back with a new
 * generation.
 * A is punched last and B is written first, so a page that A freed too
 * early goes to B, and a read of A that copies from it gets B's file id
 * (the ABA across files).
 *
 * The oracle, per page of each file: before it zeroes anything the
 * writer stores the generation it is about to write in cur[] (then
 * smp_wmb()), and when that is written, in done[] (release).  A reader
 * loads done[] (acquire) before a read, cur[] after it (after smp_rmb()),
 * and demands of every word it got:
 *  - the tag of its own file and offset;
 *  - a generation no older than done[] or the newest this reader has
 *    already seen on that page, and no newer than cur[];
 *  - zero only if cur[] > done[]: a rewrite of the page overlapped the
 *    read.  Then a word may also mix, byte by byte, zero and such tags
 *    (a copy that overlapped the zeroing or the rewrite).
 * Writes only go to punched or truncated ranges, so no word is ever
 * overwritten in place with other data.  A read that returns fewer bytes
 * than asked is a bug, unless a truncation of its file overlapped it and
 * it ended at or past the smallest size those truncations set.
 *
 * Reads are 1 B to 16 KiB; one in 32 is 64 KiB to 1 MiB + 16 KiB (through
 * B's PMD-size folios, across the 512 KiB limit of one RCU section).  Each
 * case runs until RACE_READS reads (or lockless_read_race_kunit.reads=N
 * given at boot: make mutate gives fewer) have been checked after its
 * first change, and needs 0 bad words and short reads, its change to have
 * happened, reads longer than 512 KiB, and bytes copied without a
 * reference after the first change (counted from the mm_filemap_read_rcu
 * tracepoint of our patch 13, a hook: one probe for the suite, filtered
 * to the case's files), so that it cannot pass on the slow path alone.
 * From the same tracepoint each step that targets ranges watches the
 * ranges it changes, in each file, from just before the change until its
 * rewrite is done (lr_window()); it raced on a file if a copy without a
 * reference overlapped that file's range meanwhile, and each case needs
 * at least half its steps to have raced on A and on B (a busy machine
 * gets up to as many steps again until they have).  Without the
 * tracepoint those checks are skipped, named, and the words and reads
 * still decide.  The warm-up waits of the steps (race_wait_reads()) that
 * run out of time are counted, and so are the warm-ups that end with
 * pages of the ranges not flagged; a case fails if more than half of
 * either did.  On
 * a kernel without the series (no CONFIG_PAGE_RCU_FREE) every case skips,
 * saying so.  The cases log their seed; booting with
 * lockless_read_race_kunit.seed=<seed> replays the choices (not the
 * timing).  The debug run boots with page_poison=1, so that a page freed
 * early also reads as poison; the collapse step also takes and fills the
 * pages the allocator hands out next (race_scribble()).
 *
 * The cases are KUNIT_CASE_SLOW: make run leaves them out with
 * speed>slow, make test runs them in a boot of their own.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "lockless_read_race.h"

static unsigned int seed;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "seed of the race cases' choices (0: a new one per case)");

static long race_reads = RACE_READS;
module_param_named(reads, race_reads, long, 0444);
MODULE_PARM_DESC(reads, "reads each case checks after its first change");

/* An aligned range of @len in a file */
static loff_t race_pick(struct race *race, loff_t len)
{
	return (loff_t)(race_rand(&race->rnd) % (RACE_FILE_SIZE / len)) * len;
}

/* B's ranges: mostly 64 KiB, sometimes a whole PMD, to get PMD folios back */
static loff_t race_b_len(u32 gen)
{
	return gen % 8 ? RACE_RANGE : RACE_PMD;
}

/*
 * Punch a hot range of A and one of B, then write them back with @gen.  A
 * is punched last and B written right after it, so that B gets the pages
 * A gave back if they were not held back (unless B's punch only zeroed a
 * PMD-size folio in place).  With @falloc, B's range is fallocated and
 * punched again (the undo); A's is fallocated and written over: pages its
 * punch gave back at once would come back as its fallocated folios, in
 * reverse order, and get the data of other offsets.  Fallocated ranges
 * read as zeroes.
 */
static unsigned long
race_punch_step(struct kunit *test, struct race *race, u32 gen, bool falloc)
{
	loff_t len[RACE_FILES] = { RACE_RANGE, race_b_len(gen) };
	loff_t off[RACE_FILES];
	int f;

	off[0] = race_pick(race, len[0]);
	off[1] = race_pick(race, len[1]);
	race_target(race, off[0], len[0], off[1], len[1]);
	for (f = RACE_FILES - 1; f >= 0; f--)
		race_window(test, race, f, off[f], off[f] + len[f]);
	race_align(test, race, 1);
	race_begin(&race->f[1], off[1], off[1] + len[1], gen);
	mm_kunit_file_punch(test, race->f[1].lf, off[1], len[1]);
	if (falloc) {
		mm_kunit_file_falloc(test, race->f[1].lf, off[1], len[1]);
		mm_kunit_file_punch(test, race->f[1].lf, off[1], len[1]);
	}
	race_align(test, race, 0);
	race_begin(&race->f[0], off[0], off[0] + len[0], gen);
	mm_kunit_file_punch(test, race->f[0].lf, off[0], len[0]);
	if (falloc)
		mm_kunit_file_falloc(test, race->f[0].lf, off[0], len[0]);
	race_write(test, race, 1, off[1], off[1] + len[1], gen);
	race_write(test, race, 0, off[0], off[0] + len[0], gen);
	race_window_close(test, race);
	return true;
}

/*
 * Truncate each file to a random 8-byte aligned size (mostly in its last
 * 256 KiB), punch the page holding the new EOF, and write everything from
 * that page on back: reads may come up short, at a plausible EOF only.
 */
static unsigned long
race_truncate_step(struct kunit *test, struct race *race, u32 gen)
{
	loff_t size[RACE_FILES], from[RACE_FILES];
	int f;

	for (f = 0; f < RACE_FILES; f++) {
		u32 r = race_rand(&race->rnd);

		size[f] = r & 3 ? RACE_FILE_SIZE - r % SZ_256K - 8 :
				  r % RACE_FILE_SIZE;
		size[f] = round_down(size[f], 8);
		from[f] = round_down(size[f], PAGE_SIZE);
	}
	race_target(race, from[0], RACE_FILE_SIZE - from[0], from[1],
		    RACE_FILE_SIZE - from[1]);
	for (f = 0; f < RACE_FILES; f++)
		race_window(test, race, f, from[f], RACE_FILE_SIZE);
	for (f = RACE_FILES - 1; f >= 0; f--) {
		race_align(test, race, f);
		race_begin(&race->f[f], from[f], RACE_FILE_SIZE, gen);
		race_trunc_open(&race->f[f], size[f]);
		KUNIT_ASSERT_EQ(test, vfs_truncate(&race->f[f].lf->file->f_path,
						   size[f]), 0);
		if (size[f] != from[f])
			mm_kunit_file_punch(test, race->f[f].lf, from[f], PAGE_SIZE);
	}
	for (f = RACE_FILES - 1; f >= 0; f--) {
		race_write(test, race, f, from[f], RACE_FILE_SIZE, gen);
		race_trunc_close(&race->f[f]);
	}
	race_window_close(test, race);
	return true;
}

/* Truncation: short reads end at a plausible EOF, freed tails stay intact */
static void lockless_read_race_truncate(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "truncations", race_truncate_step, seed,
		 race_reads);
}

static unsigned long
race_hole_punch_step(struct kunit *test, struct race *race, u32 gen)
{
	return race_punch_step(test, race, gen, false);
}

/* Hole punch and rewrite of hot ranges of A and B (64 KiB, or B's PMD) */
static void lockless_read_race_hole_punch(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "hole punches", race_hole_punch_step, seed,
		 race_reads);
}

static unsigned long
race_fallocate_step(struct kunit *test, struct race *race, u32 gen)
{
	return race_punch_step(test, race, gen, true);
}

/* Punch and fallocate hot ranges (zeroes), write over them (A) or undo (B) */
static void lockless_read_race_fallocate(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "fallocations", race_fallocate_step, seed,
		 race_reads);
}

/*
 * Punch RACE_RANGE at @off[f] of each file and write it back with @gen,
 * B first, so that B gets the pages A gives back if they were not held
 * back (the split and collapse steps, after their change to A).
 */
static void race_punch_rewrite(struct kunit *test, struct race *race,
			       const loff_t *off, u32 gen)
{
	int f;

	for (f = RACE_FILES - 1; f >= 0; f--) {
		if (f)
			race_align(test, race, f);
		race_begin(&race->f[f], off[f], off[f] + RACE_RANGE, gen);
		mm_kunit_file_punch(test, race->f[f].lf, off[f], RACE_RANGE);
	}
	for (f = RACE_FILES - 1; f >= 0; f--)
		race_write(test, race, f, off[f], off[f] + RACE_RANGE, gen);
}

/*
 * The targets of a step that changes A's whole PMD range at @pmd (a split
 * or a collapse): 64 KiB in it and 64 KiB of B, to punch and rewrite
 * after the change, in @off; the windows watch all of A's range, as the
 * change touches it all, and B's target.
 */
static void race_pmd_targets(struct kunit *test, struct race *race, loff_t pmd,
			     loff_t *off)
{
	off[0] = pmd + race_pick(race, RACE_RANGE) % RACE_PMD;
	off[1] = race_pick(race, RACE_RANGE);
	race_target(race, off[0], RACE_RANGE, off[1], RACE_RANGE);
	race_window(test, race, 0, pmd, pmd + RACE_PMD);
	race_window(test, race, 1, off[1], off[1] + RACE_RANGE);
	race_align(test, race, 0);
}

/*
 * huge=always A: split a hot PMD-size folio (its data must not change),
 * then punch 64 KiB of it and 64 KiB of B and write them back, B first,
 * so that B gets the pieces A gave back if they were not held back.  A
 * PMD range that holds no PMD-size folio is punched and rewritten whole
 * instead, to get one back for a later step.
 */
static unsigned long
race_split_step(struct kunit *test, struct race *race, u32 gen)
{
	loff_t pmd = race_pick(race, RACE_PMD), off[RACE_FILES];
	struct folio *folio;
	bool split = false;

	folio = mm_kunit_file_folio(race->f[0].lf, pmd >> PAGE_SHIFT);
	if (!folio || !folio_test_large(folio)) {
		if (folio)
			folio_put(folio);
		race_begin(&race->f[0], pmd, pmd + RACE_PMD, gen);
		mm_kunit_file_punch(test, race->f[0].lf, pmd, RACE_PMD);
		race_write(test, race, 0, pmd, pmd + RACE_PMD, gen);
		return 0;
	}
	folio_put(folio);

	race_pmd_targets(test, race, pmd, off);
	/* Fails while a slow-path reader holds a reference */
	split = !mm_kunit_split_folio(race->f[0].lf, pmd >> PAGE_SHIFT, NULL);
	race_punch_rewrite(test, race, off, gen);
	race_window_close(test, race);
	return split;
}

/* Split of hot PMD-size folios under the readers, then punch and rewrite */
static void lockless_read_race_split(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS_HUGE, "splits", race_split_step, seed,
		 race_reads);
}

/**
 * race_collapse() - MADV_COLLAPSE of one PMD-size range of a file
 * @lf: the file
 * @pos: the range's offset, PMD-aligned
 *
 * Maps just [@pos, @pos + RACE_PMD) of @lf shared and read-only, at a
 * PMD-aligned address of the case's mm (attached first: the case runs in
 * a kthread), so that collapse_file() may collapse it, calls madvise() on
 * it as a process would, and unmaps it again.  MADV_COLLAPSE ignores the
 * mount's huge= option, so a huge=never tmpfs gets the PMD-size folio too.
 *
 * Return: what madvise() returned (0: collapsed and mapped; it also fails
 * when only the PMD mapping could not be made), or a negative errno of
 * the mapping.
 */
static int race_collapse(struct mm_kunit_file *lf, loff_t pos)
{
	unsigned long room, addr;
	int ret = kunit_attach_mm();

	if (ret)
		return ret;
	/* Twice the size, for an aligned address inside */
	room = vm_mmap(NULL, 0, 2 * RACE_PMD, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(room))
		return room;
	addr = vm_mmap(lf->file, ALIGN(room, RACE_PMD), RACE_PMD, PROT_READ,
		       MAP_SHARED | MAP_FIXED, pos);
	if (IS_ERR_VALUE(addr))
		ret = addr;
	else
		ret = do_madvise(current->mm, addr, RACE_PMD, MADV_COLLAPSE);
	vm_munmap(room, 2 * RACE_PMD);
	return ret;
}

/* What race_scribble() fills pages with: "other" to the oracle */
#define RACE_SCRIBBLE	0x6b

/**
 * race_scribble() - Reuse the pages the allocator has just been given
 * @nr: how many
 *
 * Takes @nr movable pages, as the next page cache allocations on this CPU
 * would (the pages freed last come first), fills them with RACE_SCRIBBLE
 * and frees them again, all without sleeping: a page a change freed
 * before the readers that may copy from it were done reads as that, even
 * if no rewrite of the case happens to get it.
 */
static void race_scribble(unsigned int nr)
{
	struct page *page, *next;
	LIST_HEAD(pages);

	while (nr--) {
		page = alloc_page((GFP_HIGHUSER_MOVABLE & ~__GFP_DIRECT_RECLAIM) |
				  __GFP_NOWARN);
		if (!page)
			break;
		memset_page(page, 0, RACE_SCRIBBLE, PAGE_SIZE);
		list_add(&page->lru, &pages);
	}
	list_for_each_entry_safe(page, next, &pages, lru)
		__free_page(page);
}

/* Is the folio at @pos of A large?  Its size (0: none) in *@size */
static bool race_a_large(struct race *race, loff_t pos, size_t *size)
{
	struct folio *folio = mm_kunit_file_folio(race->f[0].lf,
						  pos >> PAGE_SHIFT);

	*size = folio ? folio_size(folio) : 0;
	if (folio)
		folio_put(folio);
	return *size > PAGE_SIZE;
}

/*
 * huge=never A: collapse a PMD-size range of small folios, 64 KiB of them
 * hot, with MADV_COLLAPSE (collapse_file() copies them into a new PMD-size
 * folio, puts it in their slots and frees them: the data must not
 * change), take and scribble over as many pages as it freed
 * (race_scribble()), then punch 64 KiB of that range and of B and write
 * them back, B first.  Pages the collapse gave back at once are reused
 * while readers may still copy from them.  The punch splits the new
 * folio; if a reader's reference kept it whole, it is split here, or, in
 * a later step that finds it, instead of a collapse (no range targeted,
 * not counted among the steps).
 */
static unsigned long
race_collapse_step(struct kunit *test, struct race *race, u32 gen)
{
	loff_t pmd = race_pick(race, RACE_PMD), off[RACE_FILES];
	bool collapsed;
	size_t size;

	if (race_a_large(race, pmd, &size)) {
		mm_kunit_split_folio(race->f[0].lf, pmd >> PAGE_SHIFT, NULL);
		return 0;
	}
	race_pmd_targets(test, race, pmd, off);
	/* Refused while a slow-path reader holds a reference */
	race_collapse(race->f[0].lf, pmd);
	/* The old folios, if they were freed at once */
	race_scribble(RACE_PMD / PAGE_SIZE);
	collapsed = race_a_large(race, pmd, &size) && size >= RACE_PMD;
	race_punch_rewrite(test, race, off, gen);
	if (race_a_large(race, pmd, &size))
		mm_kunit_split_folio(race->f[0].lf, pmd >> PAGE_SHIFT, NULL);
	race_window_close(test, race);
	return collapsed;
}

/*
 * Collapse of hot small folios into a PMD-size folio under the readers
 * (the old folios must not be freed before the readers that found them
 * are done), then punch and rewrite part of it and of B
 */
static void lockless_read_race_collapse(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "collapses", race_collapse_step, seed,
		 race_reads);
}

/* Apply @fn to the folios of a hot 64 KiB range of A and of B */
static unsigned long
race_each_folio(struct kunit *test, struct race *race,
		bool (*fn)(struct folio *folio))
{
	loff_t off[RACE_FILES];
	unsigned long nr = 0;
	unsigned int f;
	pgoff_t index;

	off[0] = race_pick(race, RACE_RANGE);
	off[1] = race_pick(race, RACE_RANGE);
	race_target(race, off[0], RACE_RANGE, off[1], RACE_RANGE);
	for (f = 0; f < RACE_FILES; f++)
		race_window(test, race, f, off[f], off[f] + RACE_RANGE);
	for (f = 0; f < RACE_FILES; f++) {
		race_align(test, race, f);
		for (index = off[f] >> PAGE_SHIFT;
		     index < (off[f] + RACE_RANGE) >> PAGE_SHIFT; index++) {
			struct folio *folio = mm_kunit_isolate_folio(race->f[f].lf, index);
			pgoff_t last;

			if (!folio)
				continue;
			/* The rest of a large folio goes with it */
			last = folio->index + folio_nr_pages(folio) - 1;
			race_window(test, race, f,
				    min(off[f], folio_pos(folio)),
				    max(off[f] + RACE_RANGE,
					folio_pos(folio) + (loff_t)folio_size(folio)));
			nr += fn(folio);
			index = max(index, last);
		}
	}
	race_window_close(test, race);
	return nr;
}

static unsigned long
race_migration_step(struct kunit *test, struct race *race, u32 gen)
{
	return race_each_folio(test, race, mm_kunit_migrate_folio);
}

/*
 * Migration of hot folios of A and B (PMD-size ones in B) while they are
 * read; no rewrite, so every word must be exactly generation 1.
 */
static void lockless_read_race_migration(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "migrations", race_migration_step, seed,
		 race_reads);
}

static unsigned long
race_swap_out_step(struct kunit *test, struct race *race, u32 gen)
{
	return race_each_folio(test, race, mm_kunit_reclaim_folio);
}

/*
 * Swap-out of hot folios while they are read, to the guest's swap device or
 * to a RAM disk switched on for the case
 */
static void lockless_read_race_swap_out(struct kunit *test)
{
	mm_kunit_need_swap(test);
	race_run(test, MM_KUNIT_TMPFS, "swap-outs", race_swap_out_step, seed,
		 race_reads);
}

/*
 * The races need reads without references: switch them on for the case;
 * the value found is written back when the case ends.
 */
static int lockless_race_init(struct kunit *test)
{
	lr_trace_case_init(test);
	lr_require_rcu_free(test);
	if (lr_switch_exists(test))
		lr_switch(test, true);
	return 0;
}

static struct kunit_case lockless_read_race_cases[] = {
	KUNIT_CASE_SLOW(lockless_read_race_truncate),
	KUNIT_CASE_SLOW(lockless_read_race_hole_punch),
	KUNIT_CASE_SLOW(lockless_read_race_fallocate),
	KUNIT_CASE_SLOW(lockless_read_race_split),
	KUNIT_CASE_SLOW(lockless_read_race_collapse),
	KUNIT_CASE_SLOW(lockless_read_race_migration),
	KUNIT_CASE_SLOW(lockless_read_race_swap_out),
	{}
};

static struct kunit_suite lockless_read_race_suite = {
	.name = "lockless_read_race",
	.suite_init = lr_suite_init,
	.suite_exit = lr_suite_exit,
	.init = lockless_race_init,
	.test_cases = lockless_read_race_cases,
};

kunit_test_suite(lockless_read_race_suite);

MODULE_DESCRIPTION("Race tests for page cache reads without folio references");
MODULE_LICENSE("GPL");
