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
 * (flagged), then punches, truncates, fallocates, splits, migrates or
 * swaps them out, and writes punched ranges back with a new generation.
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
 * case runs until RACE_READS reads have been checked after its first
 * change, and needs 0 bad words and short reads, its change to have
 * happened, reads longer than 512 KiB, and bytes copied without a
 * reference after the first change (counted from the mm_filemap_read_rcu
 * tracepoint of our patch 13, a hook: one probe for the suite, filtered
 * to the case's files), so that it cannot pass on the slow path alone.
 * From the same tracepoint each step that targets ranges watches the
 * ranges it changes, in each file, from just before the change until its
 * rewrite is done (lr_window()); it raced on a file if a copy without a
 * reference overlapped that file's range meanwhile, and each case needs
 * at least half its steps to have raced on A and on B.  Without the
 * tracepoint those checks are skipped, named, and the words and reads
 * still decide.  The warm-up waits of the steps (race_wait_reads()) that
 * run out of time are counted, and so are the warm-ups that end with
 * pages of the ranges not flagged; a case fails if more than half of
 * either did.  On
 * a kernel without the series (no CONFIG_PAGE_RCU_FREE) every case skips,
 * saying so.  The cases log their seed; booting with
 * lockless_read_race_kunit.seed=<seed> replays the choices (not the
 * timing).  The debug run boots with page_poison=1, so that a page freed
 * early also reads as poison.
 *
 * The cases are KUNIT_CASE_SLOW: make run leaves them out with
 * speed>slow, make test runs them in a boot of their own.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "lockless_read.h"

static unsigned int seed;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "seed of the race cases' choices (0: a new one per case)");

/* Reads each case checks after its first change */
#define RACE_READS		250000L
/* Hang guard only: a case that gets nowhere in this time fails */
#define RACE_GIVE_UP_SECS	300
#define RACE_FILES		2
#define RACE_FILE_SIZE		SZ_4M
#define RACE_PAGES		(RACE_FILE_SIZE >> PAGE_SHIFT)
#define RACE_PMD		(PAGE_SIZE << HPAGE_PMD_ORDER)
#define RACE_RANGE		SZ_64K
#define RACE_SMALL_READ		(4 * PAGE_SIZE)
#define RACE_LONG_READ		SZ_64K
#define RACE_MAX_READ		(SZ_1M + 4 * PAGE_SIZE)
#define RACE_LONG_EVERY		32
/* Pages one read can touch */
#define RACE_READ_PAGES		(RACE_MAX_READ / PAGE_SIZE + 2)
#define RACE_MAX_READERS	8
#define RACE_GEN_MASK		0xffffffu
#define RACE_TRUNC_RING		256
/*
 * Reads of the target ranges a step waits for, twice (with an LRU drain
 * between), in each round of its warm-up; the warm-up goes on until every
 * page of the ranges is flagged, or for RACE_WARM_JIFFIES
 */
#define RACE_WARM_READS		32
#define RACE_WARM_JIFFIES	(HZ / 5)
/* How long a step waits for a read of a range in progress before it changes it */
#define RACE_ALIGN_NS		(10 * NSEC_PER_MSEC)

/*
 * The word at @off (8-byte aligned) of file @file as generation @gen wrote
 * it: the file's id in the top byte (0xa1, 0xb2: not 0, not the 0xaa of
 * page poisoning), the generation in the next three, then 0x5a and the
 * word's offset / 8.
 */
static u64 race_tag(unsigned int file, loff_t off, u32 gen)
{
	return (u64)(0xa1 + 0x11 * file) << 56 |
	       (u64)(gen & RACE_GEN_MASK) << 32 | 0x5a000000u | (u32)(off >> 3);
}

struct race_file {
	struct mm_kunit_file *lf;	/* lf->want: the writer's buffer of tags */
	u32 cur[RACE_PAGES];	/* generation being written, or last written */
	u32 done[RACE_PAGES];	/* generation last written in full */
	/*
	 * Odd while a truncation is under way; the size it set is in
	 * trunc_size[trunc_seq / 2 % RACE_TRUNC_RING].
	 */
	unsigned long trunc_seq;
	loff_t trunc_size[RACE_TRUNC_RING];
	/* The range the next change is for: half the reads go there */
	loff_t target, target_len;
	/*
	 * The step's window (lr_window()): open while it changes its range,
	 * the window's hits when it opened, the steps that opened one and
	 * those during which a copy without a reference overlapped it.
	 */
	bool win_open;
	unsigned long win_hits, steps, raced;
	/*
	 * The window's hits when race_align() ended, right before the change
	 * of this file, and the steps whose copies overlapped the range after
	 * that: during the change itself
	 */
	unsigned long win_mark, raced_change;
	/* Readers inside a read that overlaps the target range */
	atomic_t copying;
	/* Changes that waited for such a read, and those that waited in vain */
	unsigned long aligns, align_missed;
};

enum race_bad_kind {
	RACE_BAD_FILE,		/* the other file's tag */
	RACE_BAD_OFFSET,	/* this file, another offset */
	RACE_BAD_OLD,		/* a generation older than one seen done */
	RACE_BAD_NEW,		/* a generation not yet being written */
	RACE_BAD_ZERO,		/* zero with no rewrite in progress */
	RACE_BAD_OTHER,		/* anything else: poison, garbage */
	RACE_BAD_KINDS
};

static const char * const race_bad_name[] = {
	"wrong file", "wrong offset", "old generation", "new generation",
	"zero", "other",
};

struct race {
	struct race_file f[RACE_FILES];
	u32 rnd;			/* the test thread's */
	u32 gen;
	atomic_long_t reads, long_reads, target_reads;
	atomic_long_t zero_words, torn_words, short_reads;
	atomic_long_t bad_words, bad_reads;
	atomic_long_t bad_kind[RACE_BAD_KINDS];
	char first_bad[200];		/* the first bad word */
	char first_short[160];		/* the first bad read */
	struct task_struct *readers[RACE_MAX_READERS];
	unsigned int nr_readers;
	/* The tracepoint is there: the steps' windows are counted */
	bool counted;
	/* race_wait_reads() calls, and those that ran out of time */
	unsigned long warm_waits, warm_timeouts;
	/* Warm-ups, and those that ended with pages of the ranges not flagged */
	unsigned long warm_ups, warm_cold;
};

struct race_reader {
	struct race *race;
	u32 rnd;
	u8 *buf;
	long zero_words, torn_words;
	/* The newest generation this reader has seen on each page */
	u32 seen[RACE_FILES][RACE_PAGES];
	/* done[] before the read and cur[] after it, of the pages it reads */
	u32 done[RACE_READ_PAGES];
	u32 cur[RACE_READ_PAGES];
};

static u32 race_rand(u32 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Can byte @k of a generation in [@lo, @hi] be @b? */
static bool race_gen_byte_ok(u8 b, unsigned int k, u32 lo, u32 hi)
{
	u32 a = lo >> (8 * k), z = hi >> (8 * k);

	return z - a >= 255 || (u8)(b - a) <= z - a;
}

static enum race_bad_kind race_classify(unsigned int file, loff_t off,
					u64 val, u64 mask, u32 lo, u32 hi)
{
	u64 own = race_tag(file, off, 0), top = 0xffull << 56;
	u32 gen = (val >> 32) & RACE_GEN_MASK;

	if (!(val & mask))
		return RACE_BAD_ZERO;
	if (mask & top) {
		if (!((val ^ race_tag(!file, off, 0)) & top))
			return RACE_BAD_FILE;
		if ((val ^ own) & top)
			return RACE_BAD_OTHER;
	}
	if ((val ^ own) & mask & 0xffffffffull)
		return RACE_BAD_OFFSET;
	if (((mask >> 32) & RACE_GEN_MASK) == RACE_GEN_MASK) {
		if (gen < lo)
			return RACE_BAD_OLD;
		if (gen > hi)
			return RACE_BAD_NEW;
	}
	return RACE_BAD_OTHER;
}

static void race_bad_word(struct race_reader *rr, unsigned int file,
			  loff_t w, u64 val, u64 mask, u32 lo, u32 hi,
			  bool zero_ok, loff_t off, size_t want)
{
	struct race *race = rr->race;
	enum race_bad_kind kind = race_classify(file, w, val, mask, lo, hi);

	atomic_long_inc(&race->bad_kind[kind]);
	if (atomic_long_inc_return(&race->bad_words) > 1)
		return;
	snprintf(race->first_bad, sizeof(race->first_bad),
		 "file %c word %lld (page %lld): %016llx mask %016llx (%s), want %016llx gen %u..%u%s; read %lld+%zu",
		 'A' + file, w, w >> PAGE_SHIFT, val, mask, race_bad_name[kind],
		 race_tag(file, w, hi), lo, hi, zero_ok ? " or zero" : "", off,
		 want);
}

/*
 * A word of a page a rewrite overlapped the read of: a tag with a
 * generation in [@lo, @hi], zero, or bytes of those mixed.
 */
static bool race_word_in_rewrite(struct race_reader *rr, unsigned int file,
				 loff_t w, u64 val, u64 mask, u32 lo, u32 hi,
				 u32 *seen)
{
	u64 own = race_tag(file, w, 0);
	u32 gen = (val >> 32) & RACE_GEN_MASK;
	unsigned int i;

	if (!(val & mask)) {
		rr->zero_words++;
		return true;
	}
	if (mask == ~0ull && val == race_tag(file, w, gen) && gen >= lo &&
	    gen <= hi) {
		if (gen > *seen)
			*seen = gen;
		return true;
	}
	for (i = 0; i < 8; i++) {
		u8 b = val >> (8 * i);

		if (!((mask >> (8 * i)) & 0xff) || !b)
			continue;
		if (i >= 4 && i < 7) {
			if (!race_gen_byte_ok(b, i - 4, lo, hi))
				return false;
		} else if (b != (u8)(own >> (8 * i))) {
			return false;
		}
	}
	if (mask == ~0ull)
		rr->torn_words++;
	return true;
}

/* Check the @n bytes a read of [@off, @off + @want) of @file returned */
static void race_check_words(struct race_reader *rr, unsigned int file,
			     loff_t off, size_t want, size_t n)
{
	const u8 *b = rr->buf + (off & 7);	/* where file offset @off is */
	pgoff_t first = off >> PAGE_SHIFT;
	loff_t end = off + n, w = round_down(off, 8);

	while (w < end) {
		pgoff_t i = (w >> PAGE_SHIFT) - first;
		loff_t page_end = min(end, (loff_t)(first + i + 1) << PAGE_SHIFT);
		u32 done = rr->done[i], hi = rr->cur[i];
		u32 *seen = &rr->seen[file][first + i];
		u32 lo = max(done, *seen);
		bool zero_ok = hi > done;
		u64 want_word = race_tag(file, w, hi);

		for (; w < page_end; w += 8, want_word++) {
			u64 val = 0, mask = 0;
			loff_t x;

			if (w >= off && w + 8 <= end) {
				val = *(const u64 *)(b + (w - off));
				mask = ~0ull;
			} else {
				for (x = max(w, off); x < min(w + 8, end); x++) {
					val |= (u64)b[x - off] << (8 * (x - w));
					mask |= 0xffull << (8 * (x - w));
				}
			}
			/* No rewrite overlapped: exactly generation done[] */
			if (!zero_ok) {
				if (unlikely((val ^ want_word) & mask))
					race_bad_word(rr, file, w, val, mask, lo,
						      hi, false, off, want);
				continue;
			}
			if (!race_word_in_rewrite(rr, file, w, val, mask, lo, hi,
						  seen))
				race_bad_word(rr, file, w, val, mask, lo, hi,
					      true, off, want);
		}
	}
}

/*
 * A read of [@off, @off + @want) returned @n < @want bytes: only at or
 * past the smallest size a truncation that overlapped it set.
 */
static bool race_short_ok(struct race_file *rf, loff_t off, ssize_t n,
			  unsigned long seq1, unsigned long seq2)
{
	unsigned long w, first = seq1 / 2, last;
	loff_t smallest = RACE_FILE_SIZE;

	if (n < 0 || (seq1 == seq2 && !(seq1 & 1)))
		return false;
	last = (seq2 - 1) / 2;
	if (last - first >= RACE_TRUNC_RING)
		return true;		/* too many to tell */
	for (w = first; w <= last; w++)
		smallest = min(smallest,
			       READ_ONCE(rf->trunc_size[w % RACE_TRUNC_RING]));
	smp_rmb();	/* the sizes before the check that none was reused */
	if (READ_ONCE(rf->trunc_seq) / 2 - first >= RACE_TRUNC_RING)
		return true;
	return off + n >= smallest;
}

/* Page @p's done[]: a read after this sees all of that generation */
static u32 race_done(struct race_file *rf, pgoff_t p)
{
	/* Pairs with race_set_done() */
	return smp_load_acquire(&rf->done[p]);
}

static void race_set_done(struct race_file *rf, pgoff_t p, u32 gen)
{
	/* The data written before done[]; pairs with race_done() */
	smp_store_release(&rf->done[p], gen);
}

/* One read, at a random place or in the target range, and its checks */
static void race_read_one(struct race_reader *rr)
{
	struct race *race = rr->race;
	unsigned int file = race_rand(&rr->rnd) & 1;
	struct race_file *rf = &race->f[file];
	loff_t target = READ_ONCE(rf->target), tlen = READ_ONCE(rf->target_len);
	bool long_read = !(race_rand(&rr->rnd) % RACE_LONG_EVERY);
	bool on_target = tlen && (race_rand(&rr->rnd) & 1);
	bool in_target;
	unsigned long seq1, seq2;
	pgoff_t p, first, last;
	size_t len, want;
	loff_t off, pos;
	ssize_t n;

	if (long_read)
		len = RACE_LONG_READ + race_rand(&rr->rnd) %
		      (RACE_MAX_READ - RACE_LONG_READ + 1);
	else
		len = 1 + race_rand(&rr->rnd) % RACE_SMALL_READ;
	/* % RACE_FILE_SIZE: @target and @tlen may be of different targets */
	if (on_target)
		off = (target + race_rand(&rr->rnd) % tlen) % RACE_FILE_SIZE;
	else
		off = race_rand(&rr->rnd) % RACE_FILE_SIZE;
	if (long_read) {
		/* Across the target, and never cut short by the file's end */
		off = clamp_t(loff_t, off - (loff_t)(race_rand(&rr->rnd) % len),
			      0, RACE_FILE_SIZE - len);
	}
	want = min_t(loff_t, len, RACE_FILE_SIZE - off);
	first = off >> PAGE_SHIFT;
	last = (off + want - 1) >> PAGE_SHIFT;

	for (p = first; p <= last; p++)
		rr->done[p - first] = race_done(rf, p);
	/* Pairs with race_trunc_close(): i_size is back once it is even */
	seq1 = smp_load_acquire(&rf->trunc_seq);
	pos = off;
	/* Tells race_align() that a read of the target range is under way */
	in_target = tlen && off < target + tlen && off + (loff_t)want > target;
	if (in_target)
		atomic_inc(&rf->copying);
	n = kernel_read(rf->lf->file, rr->buf + (off & 7), want, &pos);
	if (in_target)
		atomic_dec(&rf->copying);
	/* Pairs with the smp_wmb()s of race_begin() and race_trunc_open() */
	smp_rmb();
	seq2 = READ_ONCE(rf->trunc_seq);
	for (p = first; p <= last; p++)
		rr->cur[p - first] = READ_ONCE(rf->cur[p]);

	if (n != want && race_short_ok(rf, off, n, seq1, seq2))
		atomic_long_inc(&race->short_reads);
	else if (n != want && atomic_long_inc_return(&race->bad_reads) == 1)
		snprintf(race->first_short, sizeof(race->first_short),
			 "file %c: read %lld+%zu returned %zd (truncation seq %lu..%lu)",
			 'A' + file, off, want, n, seq1, seq2);
	if (n > 0)
		race_check_words(rr, file, off, want, min_t(size_t, n, want));

	atomic_long_inc(&race->reads);
	if (want > SZ_512K && n == want)
		atomic_long_inc(&race->long_reads);
	if (on_target)
		atomic_long_inc(&race->target_reads);
}

static int race_reader_fn(void *data)
{
	struct race_reader *rr = data;

	while (!kthread_should_stop()) {
		race_read_one(rr);
		cond_resched();
	}
	atomic_long_add(rr->zero_words, &rr->race->zero_words);
	atomic_long_add(rr->torn_words, &rr->race->torn_words);
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

KUNIT_DEFINE_ACTION_WRAPPER(race_stop_action, race_stop, struct race *);
KUNIT_DEFINE_ACTION_WRAPPER(race_kvfree, kvfree, const void *);

/* Before a change of [@start, @end): zeroes may show there from now on */
static void race_begin(struct race_file *rf, loff_t start, loff_t end,
		       u32 gen)
{
	pgoff_t p;

	for (p = start >> PAGE_SHIFT; p < DIV_ROUND_UP(end, PAGE_SIZE); p++)
		WRITE_ONCE(rf->cur[p], gen);
	/* cur[] before any zero; pairs with the readers' smp_rmb() */
	smp_wmb();
}

/* Write generation @gen of [@start, @end) (whole pages) of @file */
static void race_write(struct kunit *test, struct race *race,
		       unsigned int file, loff_t start, loff_t end, u32 gen)
{
	struct race_file *rf = &race->f[file];
	u64 *tags = (u64 *)rf->lf->want;
	loff_t w, pos = start;
	pgoff_t p;

	for (w = start; w < end; w += 8)
		tags[w >> 3] = race_tag(file, w, gen);
	KUNIT_ASSERT_EQ_MSG(test, kernel_write(rf->lf->file, (u8 *)tags + start,
					       end - start, &pos),
			    (ssize_t)(end - start), "file %c: write %lld..%lld",
			    'A' + file, start, end);
	for (p = start >> PAGE_SHIFT; p < end >> PAGE_SHIFT; p++)
		race_set_done(rf, p, gen);
}

/* Before i_size goes down to @size */
static void race_trunc_open(struct race_file *rf, loff_t size)
{
	unsigned long seq = rf->trunc_seq;

	WRITE_ONCE(rf->trunc_size[seq / 2 % RACE_TRUNC_RING], size);
	smp_wmb();	/* the size before the sequence that points to it */
	WRITE_ONCE(rf->trunc_seq, seq + 1);
	/* The sequence before i_size; pairs with the readers' smp_rmb() */
	smp_wmb();
}

/* After i_size is back at RACE_FILE_SIZE */
static void race_trunc_close(struct race_file *rf)
{
	/* i_size restored before the sequence; pairs with race_read_one() */
	smp_store_release(&rf->trunc_seq, rf->trunc_seq + 1);
}

/*
 * Wait for @nr reads of the targets, at most HZ / 10; counts the waits
 * that ran out of time (warm-up timeouts).
 */
static void race_wait_reads(struct race *race, long nr)
{
	long until = atomic_long_read(&race->target_reads) + nr;
	unsigned long deadline = jiffies + HZ / 10;

	race->warm_waits++;
	while (atomic_long_read(&race->target_reads) < until) {
		if (!time_before(jiffies, deadline)) {
			race->warm_timeouts++;
			return;
		}
		usleep_range(50, 100);
	}
}

/*
 * From now until race_window_close(), count the copies without references
 * that overlap [@start, @end) of file @f: the range the step changes.  A
 * second call widens the window (a large folio the step found).
 */
static void race_window(struct kunit *test, struct race *race,
			unsigned int f, loff_t start, loff_t end)
{
	struct race_file *rf = &race->f[f];

	if (!race->counted)
		return;
	if (!rf->win_open) {
		rf->win_hits = lr_window_hits(test, rf->lf);
		rf->win_mark = rf->win_hits;
		rf->win_open = true;
	}
	lr_window(test, rf->lf, start, end);
}

/*
 * Before the step changes file @f: wait, at most RACE_ALIGN_NS, until a
 * reader is inside a read that overlaps the target range of @f, so that
 * the change meets a copy in progress.  Counts the waits in vain, and
 * notes the window's hits so far: those after it came during the change.
 */
static void race_align(struct kunit *test, struct race *race, unsigned int f)
{
	struct race_file *rf = &race->f[f];
	u64 deadline = ktime_get_ns() + RACE_ALIGN_NS;

	rf->aligns++;
	while (!atomic_read(&rf->copying)) {
		if (ktime_get_ns() > deadline) {
			rf->align_missed++;
			break;
		}
		cpu_relax();
	}
	if (rf->win_open)
		rf->win_mark = lr_window_hits(test, rf->lf);
}

/* The step is done: did a copy without a reference overlap its ranges? */
static void race_window_close(struct kunit *test, struct race *race)
{
	unsigned int f;

	for (f = 0; f < RACE_FILES; f++) {
		struct race_file *rf = &race->f[f];

		if (!rf->win_open)
			continue;
		lr_window(test, rf->lf, 0, 0);
		rf->win_open = false;
		rf->steps++;
		if (lr_window_hits(test, rf->lf) != rf->win_hits)
			rf->raced++;
		if (lr_window_hits(test, rf->lf) != rf->win_mark)
			rf->raced_change++;
	}
}

/* Pages of [@start, @end) of @rf that are not flagged (holes too) */
static pgoff_t race_cold_pages(struct race_file *rf, loff_t start, loff_t end)
{
	pgoff_t index = start >> PAGE_SHIFT, last = DIV_ROUND_UP(end, PAGE_SIZE);
	pgoff_t nr = 0;

	while (index < last) {
		struct folio *folio = mm_kunit_file_folio(rf->lf, index);
		pgoff_t next;

		if (!folio) {
			nr++;
			index++;
			continue;
		}
		next = min(folio_next_index(folio), last);
		if (!folio_test_rcu_free(folio))
			nr += next - index;
		folio_put(folio);
		index = next;
	}
	return nr;
}

/*
 * Send half of the reads to [@a, @a + @alen) of A and [@b, @b + @blen) of
 * B, and wait until they are hot: read, activated (the LRU drain), read
 * again (flagged PG_rcu_free), in rounds until every page of both ranges
 * is flagged or RACE_WARM_JIFFIES have passed (counted as a cold start).
 */
static void race_target(struct race *race, loff_t a, loff_t alen, loff_t b,
			loff_t blen)
{
	unsigned long deadline = jiffies + RACE_WARM_JIFFIES;

	WRITE_ONCE(race->f[0].target, a);
	WRITE_ONCE(race->f[0].target_len, alen);
	WRITE_ONCE(race->f[1].target, b);
	WRITE_ONCE(race->f[1].target_len, blen);
	race->warm_ups++;
	for (;;) {
		race_wait_reads(race, RACE_WARM_READS);
		lru_add_drain_all();
		race_wait_reads(race, RACE_WARM_READS);
		if (!race_cold_pages(&race->f[0], a, a + alen) &&
		    !race_cold_pages(&race->f[1], b, b + blen))
			return;
		if (time_after(jiffies, deadline)) {
			race->warm_cold++;
			return;
		}
	}
}

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
 * The file with hot folios and generation 1 everywhere, and its readers
 * started.
 */
static struct race *race_start(struct kunit *test, enum mm_kunit_fs kind,
			       u32 s)
{
	struct race *race = kunit_kzalloc(test, sizeof(*race), GFP_KERNEL);
	unsigned int f, i, pass;
	loff_t off;

	KUNIT_ASSERT_NOT_NULL(test, race);
	race->rnd = s;
	race->gen = 1;
	for (f = 0; f < RACE_FILES; f++) {
		struct race_file *rf = &race->f[f];

		rf->lf = mm_kunit_fs_file_create(test, f ? MM_KUNIT_TMPFS_HUGE : kind,
						 RACE_FILE_SIZE);
		race_begin(rf, 0, RACE_FILE_SIZE, race->gen);
		race_write(test, race, f, 0, RACE_FILE_SIZE, race->gen);
	}
	for (pass = 0; pass < 8; pass++) {
		for (f = 0; f < RACE_FILES; f++)
			for (off = 0; off < RACE_FILE_SIZE; off += PAGE_SIZE)
				KUNIT_ASSERT_EQ(test, lr_read_at(test, race->f[f].lf, off, 16),
						16);
		/* Queued activations take effect (see lr_alternate_reads()) */
		lru_add_drain_all();
	}
	if (kind == MM_KUNIT_TMPFS_HUGE)
		mm_kunit_need_pmd_folio(test, race->f[0].lf, 0);
	mm_kunit_need_pmd_folio(test, race->f[1].lf, 0);

	mm_kunit_defer(test, race_stop_action, race);
	for (i = 0; i < min(num_online_cpus(), RACE_MAX_READERS); i++) {
		struct race_reader *rr = kunit_kzalloc(test, sizeof(*rr),
						       GFP_KERNEL);
		struct task_struct *t;

		KUNIT_ASSERT_NOT_NULL(test, rr);
		rr->race = race;
		rr->rnd = (s ^ (i + 1) * 2654435761u) ?: 1;
		rr->buf = kvmalloc(RACE_MAX_READ + 8, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, rr->buf);
		mm_kunit_defer(test, race_kvfree, rr->buf);
		t = kthread_run(race_reader_fn, rr, "lockless_race/%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		race->readers[race->nr_readers++] = t;
	}
	return race;
}

/* Stop the readers and judge */
static void race_end(struct kunit *test, struct race *race, const char *what,
		     unsigned long ops, long reads, bool counted,
		     const struct lr_stat *s0)
{
	struct lr_stat s1;
	int i;

	race_stop(race);
	lr_now(test, &s1);
	reads = atomic_long_read(&race->reads) - reads;
	kunit_info(test, "%s: %lu in %u steps; %ld reads checked after the first (%ld longer than 512 KiB); %lu KiB copied without a reference\n",
		   what, ops, race->gen - 1, reads,
		   atomic_long_read(&race->long_reads),
		   (s1.bytes - s0->bytes) >> 10);
	kunit_info(test, "%ld bad words, %ld bad short reads; legal: %ld zero and %ld mixed words in rewrites, %ld short reads at a plausible EOF\n",
		   atomic_long_read(&race->bad_words),
		   atomic_long_read(&race->bad_reads),
		   atomic_long_read(&race->zero_words),
		   atomic_long_read(&race->torn_words),
		   atomic_long_read(&race->short_reads));
	for (i = 0; i < RACE_BAD_KINDS; i++)
		if (atomic_long_read(&race->bad_kind[i]))
			kunit_info(test, "bad words, %s: %ld\n",
				   race_bad_name[i], atomic_long_read(&race->bad_kind[i]));
	kunit_info(test, "warm-up: %lu of %lu waits for %d reads of the targets timed out (HZ/10); %lu of %lu warm-ups left pages of the ranges unflagged\n",
		   race->warm_timeouts, race->warm_waits, RACE_WARM_READS,
		   race->warm_cold, race->warm_ups);
	kunit_info(test, "%lu of %lu changes of A and %lu of %lu of B waited in vain for a read of their range in progress\n",
		   race->f[0].align_missed, race->f[0].aligns,
		   race->f[1].align_missed, race->f[1].aligns);
	if (counted)
		kunit_info(test, "%lu of %lu steps raced on A, %lu of %lu on B (a copy without a reference of the range ended between the wait for a read in progress and the end of the rewrite); after the wait, during the change: %lu on A, %lu on B\n",
			   race->f[0].raced, race->f[0].steps,
			   race->f[1].raced, race->f[1].steps,
			   race->f[0].raced_change, race->f[1].raced_change);
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&race->bad_words), 0L,
			    "first bad word: %s", race->first_bad);
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&race->bad_reads), 0L,
			    "first bad short read: %s", race->first_short);
	KUNIT_EXPECT_GT_MSG(test, ops, 0UL, "the %s never happened", what);
	KUNIT_EXPECT_GT_MSG(test, atomic_long_read(&race->long_reads), 0L,
			    "no read longer than 512 KiB was checked");
	KUNIT_EXPECT_LE_MSG(test, 2 * race->warm_timeouts, race->warm_waits,
			    "more than half the warm-up waits timed out (%lu of %lu): the readers did not read the targets",
			    race->warm_timeouts, race->warm_waits);
	KUNIT_EXPECT_LE_MSG(test, 2 * race->warm_cold, race->warm_ups,
			    "more than half the warm-ups left pages unflagged (%lu of %lu): the steps ran on cold folios",
			    race->warm_cold, race->warm_ups);
	if (!counted)
		return;
	KUNIT_EXPECT_GT_MSG(test, s1.bytes - s0->bytes, 0UL,
			    "nothing was copied without a reference after the first of the %s",
			    what);
	for (i = 0; i < RACE_FILES; i++)
		KUNIT_EXPECT_GE_MSG(test, 2 * race->f[i].raced, race->f[i].steps,
				    "fewer than half the steps raced on %c: %lu of %lu",
				    'A' + i, race->f[i].raced, race->f[i].steps);
}

/*
 * One change to the files, generation @gen (a rewrite writes it).
 * Returns how many changes happened (a split or a migration may be
 * refused while a reader holds a reference).
 */
typedef unsigned long (*race_step_t)(struct kunit *test, struct race *race,
				     u32 gen);

/*
 * Run @step over and over on A of @kind and B until the readers have
 * checked RACE_READS reads after the first step, then judge.  The
 * deadline is a hang guard, not a speed requirement: a case that never
 * gets there fails and says how far it got.
 */
static void race_run(struct kunit *test, enum mm_kunit_fs kind, const char *what,
		     race_step_t step)
{
	unsigned long deadline = jiffies + RACE_GIVE_UP_SECS * HZ;
	u32 s = seed ?: get_random_u32() ?: 1;
	struct lr_stat s0;
	unsigned long ops;
	struct race *race;
	bool counted;
	long reads;

	if (num_online_cpus() < 2)
		kunit_skip(test, "machine: %u CPU online: the readers need CPUs to race on",
			   num_online_cpus());
	kunit_info(test, "seed %u (boot with lockless_read_race_kunit.seed=%u to make the same choices)\n",
		   s, s);
	race = race_start(test, kind, s);
	counted = lr_watch(test, race->f[0].lf,
			   "bytes copied without a reference, steps raced") &&
		  lr_watch(test, race->f[1].lf,
			   "bytes copied without a reference, steps raced");
	race->counted = counted;
	ops = step(test, race, ++race->gen);
	lr_now(test, &s0);
	reads = atomic_long_read(&race->reads);
	while (atomic_long_read(&race->reads) - reads < RACE_READS) {
		if (time_after(jiffies, deadline)) {
			KUNIT_FAIL(test, "only %ld of %ld reads after %d s",
				   atomic_long_read(&race->reads) - reads,
				   RACE_READS, RACE_GIVE_UP_SECS);
			break;
		}
		KUNIT_ASSERT_LT(test, race->gen, RACE_GEN_MASK);
		ops += step(test, race, ++race->gen);
		cond_resched();
	}
	race_end(test, race, what, ops, reads, counted, &s0);
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
	race_run(test, MM_KUNIT_TMPFS, "truncations", race_truncate_step);
}

static unsigned long
race_hole_punch_step(struct kunit *test, struct race *race, u32 gen)
{
	return race_punch_step(test, race, gen, false);
}

/* Hole punch and rewrite of hot ranges of A and B (64 KiB, or B's PMD) */
static void lockless_read_race_hole_punch(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "hole punches", race_hole_punch_step);
}

static unsigned long
race_fallocate_step(struct kunit *test, struct race *race, u32 gen)
{
	return race_punch_step(test, race, gen, true);
}

/* Punch and fallocate hot ranges (zeroes), write over them (A) or undo (B) */
static void lockless_read_race_fallocate(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS, "fallocations", race_fallocate_step);
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
	int f;

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

	off[0] = pmd + race_pick(race, RACE_RANGE) % RACE_PMD;
	off[1] = race_pick(race, RACE_RANGE);
	race_target(race, off[0], RACE_RANGE, off[1], RACE_RANGE);
	/* The split changes A's whole PMD-size folio */
	race_window(test, race, 0, pmd, pmd + RACE_PMD);
	race_window(test, race, 1, off[1], off[1] + RACE_RANGE);
	race_align(test, race, 0);
	/* Fails while a slow-path reader holds a reference */
	split = !mm_kunit_split_folio(race->f[0].lf, pmd >> PAGE_SHIFT, NULL);
	for (f = RACE_FILES - 1; f >= 0; f--) {
		if (f)
			race_align(test, race, f);
		race_begin(&race->f[f], off[f], off[f] + RACE_RANGE, gen);
		mm_kunit_file_punch(test, race->f[f].lf, off[f], RACE_RANGE);
	}
	for (f = RACE_FILES - 1; f >= 0; f--)
		race_write(test, race, f, off[f], off[f] + RACE_RANGE, gen);
	race_window_close(test, race);
	return split;
}

/* Split of hot PMD-size folios under the readers, then punch and rewrite */
static void lockless_read_race_split(struct kunit *test)
{
	race_run(test, MM_KUNIT_TMPFS_HUGE, "splits", race_split_step);
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
	race_run(test, MM_KUNIT_TMPFS, "migrations", race_migration_step);
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
	race_run(test, MM_KUNIT_TMPFS, "swap-outs", race_swap_out_step);
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
