// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the boundaries of filemap_get_folios_contig().
 *
 * Strategy: a shmem file (shmem_file_setup(), small folios) is populated
 * at chosen indices with shmem_read_folio(), leaving holes where a case
 * wants them; then filemap_get_folios_contig() is called with a start and
 * an inclusive end, and the folios it returns and the *start it leaves
 * are compared with what the layout allows.  7.3 already checks the end
 * after advancing past each folio (seed 004's patch 2, as reviewed); these
 * cases pin that, and the shmem-batch series reads through this function.
 */

#include <kunit/test.h>
#include <linux/folio_batch.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>

#include "mm_test_util.h"

#define NR_PAGES	(2 * FOLIO_BATCH_SIZE + 8)

struct contig_case {
	const char *desc;
	pgoff_t hole;		/* index left empty; ULONG_MAX for none */
	pgoff_t start;
	pgoff_t end;		/* inclusive */
	unsigned int want_nr;	/* folios returned */
	pgoff_t want_start;	/* *start afterwards */
};

static const struct contig_case contig_cases[] = {
	{ "start-past-end", ULONG_MAX, 5, 4, 0, 5 },
	{ "one-folio", ULONG_MAX, 3, 3, 1, 4 },
	{ "end-inclusive", ULONG_MAX, 0, 4, 5, 5 },
	{ "stops-at-hole", 3, 0, 9, 3, 3 },
	{ "starts-on-hole", 3, 3, 9, 0, 3 },
	{ "batch-fills-exactly", ULONG_MAX, 0, FOLIO_BATCH_SIZE - 1,
	  FOLIO_BATCH_SIZE, FOLIO_BATCH_SIZE },
	{ "batch-full-before-end", ULONG_MAX, 0, NR_PAGES - 1,
	  FOLIO_BATCH_SIZE, FOLIO_BATCH_SIZE },
	{ "end-past-eof", ULONG_MAX, NR_PAGES - 2, NR_PAGES + 100, 2, NR_PAGES },
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
 * filemap_get_folios_contig() returns exactly the contiguous folios from
 * *start up to the inclusive end, a hole or a full batch, in index order,
 * and leaves *start just past the last one returned (unchanged if none).
 */
static void filemap_batch_contig_boundaries(struct kunit *test)
{
	const struct contig_case *c = test->param_value;
	struct folio_batch fbatch;
	struct file *file;
	pgoff_t start = c->start;
	unsigned int nr, i;

	file = populated_file(test, c->hole);
	folio_batch_init(&fbatch);
	nr = filemap_get_folios_contig(file->f_mapping, &start, c->end, &fbatch);
	KUNIT_EXPECT_EQ_MSG(test, nr, c->want_nr, "start %lu end %lu", c->start, c->end);
	KUNIT_EXPECT_EQ_MSG(test, start, c->want_start, "*start after the call");
	for (i = 0; i < folio_batch_count(&fbatch); i++)
		KUNIT_EXPECT_EQ_MSG(test, fbatch.folios[i]->index, c->start + i,
				    "folio %u of the batch", i);
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
