// SPDX-License-Identifier: GPL-2.0
/*
 * The engine of the lockless_read_race suite: see lockless_read_race.h,
 * and the top of lockless_read_race_kunit.c for the oracle.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/pagemap.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "lockless_read_race.h"

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

static const char * const race_bad_name[] = {
	"wrong file", "wrong offset", "old generation", "new generation",
	"zero", "other",
};

u32 race_rand(u32 *x)
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
void race_begin(struct race_file *rf, loff_t start, loff_t end,
		u32 gen)
{
	pgoff_t p;

	for (p = start >> PAGE_SHIFT; p < DIV_ROUND_UP(end, PAGE_SIZE); p++)
		WRITE_ONCE(rf->cur[p], gen);
	/* cur[] before any zero; pairs with the readers' smp_rmb() */
	smp_wmb();
}

/* Write generation @gen of [@start, @end) (whole pages) of @file */
void race_write(struct kunit *test, struct race *race,
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
void race_trunc_open(struct race_file *rf, loff_t size)
{
	unsigned long seq = rf->trunc_seq;

	WRITE_ONCE(rf->trunc_size[seq / 2 % RACE_TRUNC_RING], size);
	smp_wmb();	/* the size before the sequence that points to it */
	WRITE_ONCE(rf->trunc_seq, seq + 1);
	/* The sequence before i_size; pairs with the readers' smp_rmb() */
	smp_wmb();
}

/* After i_size is back at RACE_FILE_SIZE */
void race_trunc_close(struct race_file *rf)
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
void race_window(struct kunit *test, struct race *race,
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
void race_align(struct kunit *test, struct race *race, unsigned int f)
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
void race_window_close(struct kunit *test, struct race *race)
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
void race_target(struct race *race, loff_t a, loff_t alen, loff_t b,
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
 * Whether at least half the steps on each file raced with a copy without
 * a reference (always true when the tracepoint that counts them is
 * missing: then nothing is counted)
 */
static bool race_half_raced(const struct race *race)
{
	int i;

	if (!race->counted)
		return true;
	for (i = 0; i < RACE_FILES; i++)
		if (2 * race->f[i].raced < race->f[i].steps)
			return false;
	return true;
}

/*
 * Whether race_run() can stop: the readers checked @reads reads after the
 * first step and, at that step (*@at), at least half the steps on each
 * file raced; if not, once as many steps again were taken.  A slow or
 * busy machine gets twice the sample rather than failing, and
 * race_end() judges the whole of it, not the first moment it looks good.
 */
static bool race_can_stop(const struct race *race, long first, long reads,
			  unsigned long *at)
{
	if (*at)
		return race->gen >= 2 * *at;
	if (atomic_long_read(&race->reads) - first < reads)
		return false;
	*at = race->gen;
	return race_half_raced(race);
}

/*
 * Run @step over and over on A of @kind and B until race_can_stop(), then
 * judge.  The deadline is a hang guard, not a speed requirement: a case
 * that never gets there fails and says how far it got.
 */
void race_run(struct kunit *test, enum mm_kunit_fs kind, const char *what,
	      race_step_t step, u32 seed, long reads)
{
	unsigned long deadline = jiffies + RACE_GIVE_UP_SECS * HZ;
	u32 s = seed ?: get_random_u32() ?: 1;
	struct lr_stat s0;
	unsigned long ops, at = 0;
	struct race *race;
	bool counted;
	long first;

	if (num_online_cpus() < 2)
		kunit_skip(test, "machine: %u CPU online: the readers need CPUs to race on",
			   num_online_cpus());
	kunit_info(test, "seed %u (boot with lockless_read_race_kunit.seed=%u to make the same choices)\n",
		   s, s);
	if (reads < 1)
		kunit_skip(test, "config: lockless_read_race_kunit.reads=%ld: no read to check",
			   reads);
	if (reads != RACE_READS)
		kunit_info(test, "%ld reads, not %ld (lockless_read_race_kunit.reads)\n",
			   reads, RACE_READS);
	race = race_start(test, kind, s);
	counted = lr_watch(test, race->f[0].lf,
			   "bytes copied without a reference, steps raced") &&
		  lr_watch(test, race->f[1].lf,
			   "bytes copied without a reference, steps raced");
	race->counted = counted;
	ops = step(test, race, ++race->gen);
	lr_now(test, &s0);
	first = atomic_long_read(&race->reads);
	while (!race_can_stop(race, first, reads, &at)) {
		if (time_after(jiffies, deadline)) {
			/* Too few races: race_end() says so */
			if (atomic_long_read(&race->reads) - first < reads)
				KUNIT_FAIL(test, "only %ld of %ld reads after %d s",
					   atomic_long_read(&race->reads) - first,
					   reads, RACE_GIVE_UP_SECS);
			break;
		}
		KUNIT_ASSERT_LT(test, race->gen, RACE_GEN_MASK);
		ops += step(test, race, ++race->gen);
		cond_resched();
	}
	race_end(test, race, what, ops, first, counted, &s0);
}
