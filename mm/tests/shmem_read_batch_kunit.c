// SPDX-License-Identifier: GPL-2.0
/*
 * The folio batch of shmem-batch's tmpfs read (suite shmem_read_batch):
 * where the batch that filemap_get_folios_contig() fills for a read
 * stops, what it waits for and what it skips, decided from reads alone.
 *
 * Strategy: the batch takes no folio lock, where 7.3's read, looking
 * every folio up with shmem_get_folio(), locks each one: a read that
 * finds an uptodate folio locked by the case returns through the batch,
 * and sleeps on the folio (PG_waiters) when it looks it up alone.  That
 * is a state, not a time: the case waits for the reader to return or to
 * sleep on the lock (shmem_read_helpers.c).  So each bound of the batch
 * (the read's end and i_size, a hole, a folio that is not uptodate, the
 * FOLIO_BATCH_SIZE folios of one walk, a large folio crossing the end)
 * shows as a read past a locked folio on each side of it, and its bytes
 * and return value.  A folio locked and not uptodate, as migration
 * leaves one, is the opposite: the read waits for it.  Every case runs
 * with the lockless read of rcu-free off, so that all of the read goes
 * through the batch.  No test hook is used.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>

#include "mm_kunit_helpers.h"
#include "mm_test_util.h"
#include "shmem_read_helpers.h"

#define SZ_PAGE		PAGE_SIZE
#define PMD_BYTES	MM_KUNIT_PMD_BYTES
#define PMD_PAGES	(PMD_BYTES >> PAGE_SHIFT)

/* ---- the bounds of the batch --------------------------------------------- */

struct batch_bound {
	const char *desc;	/* one word, as KTAP names a parameter */
	const char *huge;
	loff_t size;
	void (*build)(struct kunit *test, struct mm_kunit_file *sf);
	pgoff_t need_pmd;	/* a PMD folio needed there too; 0: only at 0 */
	loff_t off;		/* the read */
	size_t len;
	pgoff_t locked[3];	/* uptodate folios locked during the read */
	unsigned int nr_locked;
};

/* Written pages 0-9 and 12-23, a hole of two pages between */
static void build_hole(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_write(test, sf, 0, 10 * SZ_PAGE, 2);
	mm_kunit_file_write(test, sf, 12 * SZ_PAGE, 12 * SZ_PAGE, 2);
}

/*
 * Written pages but page 10, fallocated: not uptodate, its memory filled
 * with bytes no read may return (a read of it returns zeroes)
 */
static void build_not_uptodate(struct kunit *test, struct mm_kunit_file *sf)
{
	struct folio *folio;
	u8 *kaddr;

	mm_kunit_file_write(test, sf, 0, 10 * SZ_PAGE, 3);
	mm_kunit_file_write(test, sf, 11 * SZ_PAGE, sf->size - 11 * SZ_PAGE, 3);
	mm_kunit_file_falloc(test, sf, 10 * SZ_PAGE, SZ_PAGE);
	folio = mm_kunit_file_folio(sf, 10);
	KUNIT_ASSERT_NOT_NULL(test, folio);
	if (folio_test_uptodate(folio)) {
		folio_put(folio);
		KUNIT_FAIL_AND_ABORT(test, "the fallocated folio is uptodate");
	}
	kaddr = kmap_local_folio(folio, 0);
	memset(kaddr, 0xee, SZ_PAGE);
	kunmap_local(kaddr);
	flush_dcache_folio(folio);
	folio_put(folio);
}

/* Every byte written */
static void build_written(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_write(test, sf, 0, sf->size, 4);
}

static const struct batch_bound batch_bounds[] = {
	/* the batch goes on after a hole: the folio after it is batched */
	{ "hole", "never", 24 * SZ_PAGE, build_hole, 0,
	  0, 24 * SZ_PAGE, { 5, 12 }, 2 },
	/* a folio that is not uptodate reads as zeroes, the batch goes on */
	{ "not-uptodate", "never", 24 * SZ_PAGE, build_not_uptodate, 0,
	  0, 24 * SZ_PAGE, { 5, 11 }, 2 },
	/* 72 small folios: the last of a full batch, the first two refills */
	{ "full-batches", "never", 72 * SZ_PAGE, build_written, 0,
	  0, 72 * SZ_PAGE, { FOLIO_BATCH_SIZE - 1, FOLIO_BATCH_SIZE,
			     2 * FOLIO_BATCH_SIZE }, 3 },
	/* the read ends 4 pages into the second PMD folio */
	{ "large-folio-crossing-read-end", "always", 2 * PMD_BYTES,
	  build_written, PMD_PAGES,
	  0, PMD_BYTES + 4 * SZ_PAGE + 10, { 0, PMD_PAGES }, 2 },
	/* i_size inside the second PMD folio, the read asks past it */
	{ "large-folio-crossing-i_size", "always", 2 * PMD_BYTES - 1000,
	  build_written, PMD_PAGES,
	  PMD_BYTES - 10, SZ_4M, { 0, PMD_PAGES }, 2 },
	/* i_size inside page 20, the read asks 64 pages from page 3 */
	{ "i_size-in-small-folio", "never", 20 * SZ_PAGE + 300, build_written,
	  0, 3 * SZ_PAGE, 64 * SZ_PAGE, { 4, 20 }, 2 },
};

KUNIT_ARRAY_PARAM_DESC(batch_bound, batch_bounds, desc);

/*
 * A read across each bound of the batch shmem-batch fills with
 * filemap_get_folios_contig() (see batch_bounds[]) returns without
 * waiting for the uptodate folios locked on each side of it, every byte
 * of the file up to i_size and no more: the batch does not stop short of
 * the read's end or of i_size, it is refilled after a hole, a not
 * uptodate folio and a full batch, it takes a large folio crossing the
 * end, and it never copies past i_size or from a folio not uptodate.
 * 7.3, which locks every folio it reads, waits.
 */
static void shmem_read_batch_bounds(struct kunit *test)
{
	const struct batch_bound *b = test->param_value;
	struct shmem_locked_read *lr;
	struct mm_kunit_file *sf;
	ssize_t want;
	int waits;

	shmem_lockless_set(test, false);
	sf = mm_kunit_file_create(test, b->huge, b->size);
	b->build(test, sf);
	if (!strcmp(b->huge, "always"))
		mm_kunit_need_pmd_folio(test, sf, 0);
	if (b->need_pmd)
		mm_kunit_need_pmd_folio(test, sf, b->need_pmd);
	want = min_t(loff_t, b->len, sf->size - b->off);

	lr = shmem_locked_read_start(test, sf, b->locked, b->nr_locked, b->off,
				     b->len);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(lr), "the locked read: %ld",
			       PTR_ERR(lr));
	waits = shmem_locked_read_waits(lr);
	shmem_locked_read_finish(lr);
	KUNIT_ASSERT_NE_MSG(test, waits, -ETIMEDOUT,
			    "hang: the read neither returned nor waited for a locked folio in 60 s");
	KUNIT_EXPECT_EQ_MSG(test, waits, 0,
			    "%s: the read waited for the lock of an uptodate folio: it looked one up alone, outside a batch",
			    b->desc);
	KUNIT_ASSERT_EQ_MSG(test, lr->ret, want, "%s: the read of %zu at %lld",
			    b->desc, b->len, b->off);
	mm_kunit_check_bytes(test, lr->buf, sf->want + b->off, b->off, want,
			     b->desc);
}

/* ---- a folio that is locked and not uptodate --------------------------- */

/* The file one read covers whole, and its page that is locked */
struct locked_case {
	const char *name;
	unsigned int pages;
	pgoff_t locked;
};

static const struct locked_case locked_cases[] = {
	{ "one-page file", 1, 0 },
	{ "8-page file, page 3 locked: in the middle of the read's batch",
	  8, 3 },
};

KUNIT_ARRAY_PARAM_DESC(locked, locked_cases, name);

/*
 * A read of the whole file that finds one of its folios locked and not
 * uptodate, as migration leaves the new folio until it has copied the
 * data, waits for the lock and returns the data, not zeroes: the reader
 * sleeps on the folio while the case holds the lock, and after the case
 * fills the folio, marks it uptodate and unlocks it, the read returns
 * every byte of the file.  In the 8-page file the locked folio is the
 * fourth of the folio batch the read looks up in one walk (the one-page
 * read looks its folio up alone).
 */
static void shmem_read_batch_waits_for_locked_folio(struct kunit *test)
{
	const struct locked_case *c = test->param_value;
	const loff_t at = (loff_t)c->locked * SZ_4K;
	struct shmem_locked_read *lr;
	struct mm_kunit_file *sf;
	struct folio *folio;
	void *kaddr;
	int waits;

	shmem_lockless_set(test, false);
	sf = mm_kunit_file_create(test, "never", (loff_t)c->pages * SZ_4K);
	if (at)
		mm_kunit_file_write(test, sf, 0, at, 7);
	if (at + SZ_4K < sf->size)
		mm_kunit_file_write(test, sf, at + SZ_4K, sf->size - at - SZ_4K,
				    7);
	mm_kunit_file_falloc(test, sf, at, SZ_4K);
	lr = shmem_locked_read_start(test, sf, &c->locked, 1, 0, sf->size);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(lr), "the locked read: %ld",
			       PTR_ERR(lr));
	folio = lr->folios[0];
	/* no assert while the folio is locked: the action unlocks it */
	KUNIT_EXPECT_FALSE_MSG(test, folio_test_uptodate(folio),
			       "the fallocated folio is uptodate");
	waits = shmem_locked_read_waits(lr);
	KUNIT_EXPECT_EQ_MSG(test, waits, 1,
			    "%s: read returned %zd while the folio was locked and not uptodate (-110: hang)",
			    c->name, lr->ret);

	kaddr = kmap_local_folio(folio, 0);
	memset(kaddr, 0x5a, SZ_4K);
	kunmap_local(kaddr);
	memset(sf->want + at, 0x5a, SZ_4K);
	flush_dcache_folio(folio);
	folio_mark_uptodate(folio);
	folio_mark_dirty(folio);
	shmem_locked_read_finish(lr);

	KUNIT_EXPECT_EQ_MSG(test, lr->ret, (ssize_t)sf->size, "%s", c->name);
	if (lr->ret > 0)
		mm_kunit_check_bytes(test, lr->buf, sf->want, 0, lr->ret,
				     c->name);
}

/* ---- swapped-out pages ------------------------------------------------ */

struct swapped_case {
	const char *name;
	const char *huge;
	loff_t size;
	pgoff_t hole, nr_hole;		/* left unwritten */
	pgoff_t out[3][2];		/* swapped out: first page, pages */
};

static const struct swapped_case swapped_cases[] = {
	{ "small folios, a hole before swapped pages, last page swapped",
	  "never", 16 * SZ_PAGE + 100, 2, 2, { { 4, 4 }, { 9, 4 }, { 16, 1 } } },
	{ "PMD folio swapped, small tail", "always",
	  PMD_BYTES + 5 * SZ_PAGE + 100, 0, 0,
	  { { 0, HPAGE_PMD_NR }, { HPAGE_PMD_NR + 5, 1 } } },
};

KUNIT_ARRAY_PARAM_DESC(swapped, swapped_cases, name);

static pgoff_t swapped_out(struct kunit *test, const struct swapped_case *c,
			   struct mm_kunit_file *sf)
{
	pgoff_t n = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->out) && c->out[i][1]; i++) {
		mm_kunit_swap_out(test, sf, c->out[i][0], c->out[i][1]);
		n += c->out[i][1];
	}
	return n;
}

/*
 * Reads of a file whose slots hold swap entries (after a hole, at the last
 * page, a whole PMD folio) return the file's bytes and bring the pages back:
 * neither the batch lookup nor the one-lookup path for a read's last page
 * takes a swap entry for a folio or a hole.
 */
static void shmem_read_batch_swapped_out_bytes(struct kunit *test)
{
	const struct swapped_case *c = test->param_value;
	struct mm_kunit_reader *r = test->priv;
	pgoff_t last = (c->size - 1) >> PAGE_SHIFT;
	struct mm_kunit_file *sf;
	pgoff_t nr_out;

	mm_kunit_need_swap(test);
	shmem_lockless_set(test, false);
	sf = mm_kunit_file_create(test, c->huge, c->size);
	mm_kunit_file_write(test, sf, 0, c->hole * SZ_PAGE, 5);
	mm_kunit_file_write(test, sf, (c->hole + c->nr_hole) * SZ_PAGE,
			    c->size - (c->hole + c->nr_hole) * SZ_PAGE, 6);

	/* The last page alone: the read's one lookup meets a swap entry */
	nr_out = swapped_out(test, c, sf);
	KUNIT_ASSERT_EQ(test, mm_kunit_nr_swapped(sf, last, 1), 1);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC, last * SZ_PAGE, SZ_PAGE);

	/* The whole file, into a kernel and into a user buffer */
	KUNIT_ASSERT_EQ(test, swapped_out(test, c, sf), nr_out);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC, 0, c->size);
	KUNIT_EXPECT_EQ_MSG(test, mm_kunit_nr_swapped(sf, 0, last + 1), 0,
			    "a read left pages swapped out");
	swapped_out(test, c, sf);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_UBUF, 0, c->size);
}

/* ---- zeroes of a hole ------------------------------------------------- */

/*
 * Reads from the start of a hole of a tmpfs file, of lengths around the
 * steps of copy_zero_to_iter() (shmem-batch patch 1): a page, the largest
 * zero folio (PMD size where the huge zero folio stays, else a page), one
 * byte either side, and two pages and a byte, into a user buffer (the
 * zeroes of a kernel buffer are cleared instead).  Each returns its
 * length of zeroes (a step too long would read past the zero page; one
 * short, end the read a byte early).
 */
static void shmem_read_batch_hole_lengths(struct kunit *test)
{
	const size_t zero = folio_size(largest_zero_folio());
	const size_t lens[] = {
		SZ_PAGE - 1, SZ_PAGE, SZ_PAGE + 1, 2 * SZ_PAGE + 1,
		zero - 1, zero, zero + 1,
	};
	struct mm_kunit_reader *r = test->priv;
	loff_t size = zero + 2 * SZ_PAGE;
	struct mm_kunit_file *sf;
	unsigned int i;

	KUNIT_ASSERT_LE(test, zero + 1, (size_t)MM_KUNIT_READER_USABLE);
	shmem_lockless_set(test, false);
	sf = mm_kunit_file_create(test, "never", size);
	/* All a hole but the last page */
	mm_kunit_file_write(test, sf, size - SZ_PAGE, SZ_PAGE, 8);
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		mm_kunit_read_and_check(test, r, sf, MM_KUNIT_UBUF, 0, lens[i]);
}

/* Each case gets a reader (test->priv) */
static int shmem_read_batch_test_init(struct kunit *test)
{
	test->priv = mm_kunit_reader_create(test);
	return 0;
}

static struct kunit_case shmem_read_batch_cases[] = {
	KUNIT_CASE_PARAM(shmem_read_batch_bounds, batch_bound_gen_params),
	KUNIT_CASE_PARAM(shmem_read_batch_waits_for_locked_folio,
			 locked_gen_params),
	KUNIT_CASE(shmem_read_batch_hole_lengths),
	KUNIT_CASE_PARAM(shmem_read_batch_swapped_out_bytes,
			 swapped_gen_params),
	{}
};

static struct kunit_suite shmem_read_batch_suite = {
	.name = "shmem_read_batch",
	.init = shmem_read_batch_test_init,
	.test_cases = shmem_read_batch_cases,
};

kunit_test_suite(shmem_read_batch_suite);

MODULE_DESCRIPTION("KUnit tests for the folio batch of the tmpfs read (shmem-batch)");
MODULE_LICENSE("GPL");
