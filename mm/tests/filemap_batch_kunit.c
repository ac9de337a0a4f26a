// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the boundaries of filemap_get_folios_contig().
 *
 * Strategy: a shmem file (shmem_file_setup(), small folios) is populated
 * at chosen indices with shmem_read_folio(), leaving holes where a case
 * wants them; then filemap_get_folios_contig() is called with a start and
 * an inclusive end, and the folios it returns and the *start it leaves
 * are compared with what the layout allows; the large layout is a file of
 * PMD-size folios on a private tmpfs mounted huge=always.  7.3 already checks the end
 * after advancing past each folio (seed 004's patch 2, as reviewed); these
 * cases pin that, and the shmem-batch series reads through this function.
 */

#include <kunit/test.h>
#include <linux/falloc.h>
#include <linux/folio_batch.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>

#include "mm_test_util.h"

#define NR_PAGES	(2 * FOLIO_BATCH_SIZE + 8)

/* The large layout: PMD-size folios at 0, 512 and 1024 (x86_64) */
#define PMD_PAGES	(SZ_2M >> PAGE_SHIFT)
#define NR_PMDS		3

struct contig_case {
	const char *desc;
	bool large;		/* the large layout, else small folios */
	pgoff_t hole;		/* small: index left empty; ULONG_MAX for none */
	pgoff_t start;
	pgoff_t end;		/* inclusive */
	unsigned int want_nr;	/* folios returned */
	pgoff_t want_start;	/* *start afterwards */
};

static const struct contig_case contig_cases[] = {
	{ "start-past-end", false, ULONG_MAX, 5, 4, 0, 5 },
	{ "one-folio", false, ULONG_MAX, 3, 3, 1, 4 },
	{ "end-inclusive", false, ULONG_MAX, 0, 4, 5, 5 },
	{ "stops-at-hole", false, 3, 0, 9, 3, 3 },
	{ "starts-on-hole", false, 3, 3, 9, 0, 3 },
	{ "batch-fills-exactly", false, ULONG_MAX, 0, FOLIO_BATCH_SIZE - 1,
	  FOLIO_BATCH_SIZE, FOLIO_BATCH_SIZE },
	{ "batch-full-before-end", false, ULONG_MAX, 0, NR_PAGES - 1,
	  FOLIO_BATCH_SIZE, FOLIO_BATCH_SIZE },
	{ "end-past-eof", false, ULONG_MAX, NR_PAGES - 2, NR_PAGES + 100, 2,
	  NR_PAGES },
	{ "large-folio-crossing-end", true, ULONG_MAX, 3, 100, 1, PMD_PAGES },
	{ "end-on-large-folio-last-page", true, ULONG_MAX, 0, PMD_PAGES - 1, 1,
	  PMD_PAGES },
	{ "end-one-past-large-folio", true, ULONG_MAX, 0, PMD_PAGES, 2,
	  2 * PMD_PAGES },
};

KUNIT_ARRAY_PARAM_DESC(contig, contig_cases, desc);

/* A shmem file with a page cache folio at every index but @hole. */
static struct file *populated_file(struct kunit *test, pgoff_t hole)
{
	struct file *file;
	struct folio *folio;
	pgoff_t i;

	file = shmem_file_setup("filemap_batch", (loff_t)NR_PAGES << PAGE_SHIFT,
				mk_vma_flags(VMA_NORESERVE_BIT));
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "shmem_file_setup: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput, file), 0);
	for (i = 0; i < NR_PAGES; i++) {
		if (i == hole)
			continue;
		folio = shmem_read_folio(file->f_mapping, i);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(folio), "index %lu: %ld", i,
				       PTR_ERR(folio));
		KUNIT_ASSERT_EQ_MSG(test, folio_nr_pages(folio), 1,
				    "index %lu: expected a small folio", i);
		folio_put(folio);
	}
	return file;
}

/*
 * A file on a private tmpfs mounted huge=always, fallocated: NR_PMDS
 * PMD-size folios.  Not getting them is a failure, so that a change that
 * stops tmpfs from allocating large folios shows.
 */
static struct file *large_file(struct kunit *test)
{
	struct vfsmount *mnt;
	loff_t size = (loff_t)NR_PMDS * SZ_2M;
	struct folio *folio;
	struct file *file;
	unsigned int i;
	size_t fsize;

	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) || !IS_ENABLED(CONFIG_TMPFS))
		kunit_skip(test,
			   "config: CONFIG_TRANSPARENT_HUGEPAGE=n or CONFIG_TMPFS=n: no huge= tmpfs");
	mnt = mm_test_mount(test, "tmpfs", "always");
	file = shmem_file_setup_with_mnt(mnt, "filemap_batch", size,
					 mk_vma_flags(VMA_NORESERVE_BIT));
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "tmpfs file: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput, file), 0);
	KUNIT_ASSERT_EQ(test, vfs_fallocate(file, 0, 0, size), 0);
	for (i = 0; i < NR_PMDS; i++) {
		folio = filemap_get_folio(file->f_mapping, i * PMD_PAGES);
		fsize = IS_ERR(folio) ? 0 : folio_size(folio);
		if (!IS_ERR(folio))
			folio_put(folio);
		KUNIT_ASSERT_EQ_MSG(test, fsize, (size_t)SZ_2M,
				    "no PMD-size folio at index %lu",
				    (unsigned long)(i * PMD_PAGES));
	}
	return file;
}

/*
 * filemap_get_folios_contig() returns exactly the contiguous folios from
 * *start up to the inclusive end, a hole or a full batch, in index order
 * (a large folio that crosses the end is the last one), and leaves *start
 * just past the last one returned (unchanged if none).
 */
static void filemap_batch_contig_boundaries(struct kunit *test)
{
	const struct contig_case *c = test->param_value;
	struct folio_batch fbatch;
	struct file *file;
	pgoff_t start = c->start, next = c->start;
	struct folio *folio;
	unsigned int nr, i;

	file = c->large ? large_file(test) : populated_file(test, c->hole);
	folio_batch_init(&fbatch);
	nr = filemap_get_folios_contig(file->f_mapping, &start, c->end, &fbatch);
	KUNIT_EXPECT_EQ_MSG(test, nr, c->want_nr, "start %lu end %lu", c->start, c->end);
	KUNIT_EXPECT_EQ_MSG(test, start, c->want_start, "*start after the call");
	/* Each folio holds the index that follows the one before it */
	for (i = 0; i < folio_batch_count(&fbatch); i++) {
		folio = fbatch.folios[i];
		KUNIT_EXPECT_TRUE_MSG(test, folio->index <= next &&
				      next < folio_next_index(folio),
				      "folio %u of the batch is at %lu (order %u), not at %lu",
				      i, folio->index, folio_order(folio), next);
		next = folio_next_index(folio);
	}
	folio_batch_release(&fbatch);
}

static struct kunit_case filemap_batch_test_cases[] = {
	KUNIT_CASE_PARAM(filemap_batch_contig_boundaries, contig_gen_params),
	{}
};

static struct kunit_suite filemap_batch_test_suite = {
	.name = "filemap_batch",
	.test_cases = filemap_batch_test_cases,
};

kunit_test_suite(filemap_batch_test_suite);

MODULE_DESCRIPTION("KUnit tests for the boundaries of filemap_get_folios_contig()");
MODULE_LICENSE("GPL");
