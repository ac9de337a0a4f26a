// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for shmem_file_read_iter(), the tmpfs read path that the
 * shmem-batch series turns into a folio-batch loop.
 *
 * Strategy: every case mounts its own tmpfs (huge=never, huge=always or
 * huge=within_size), builds a file with written data, holes and
 * fallocated (not uptodate) ranges, keeps a copy of what the file must
 * read as (struct mm_kunit_file), and reads it back through the real read
 * path: kernel_read() (a kvec iterator, zeroed with iov_iter_zero()),
 * vfs_iter_read() into a bvec, and vfs_read() into a buffer mapped with
 * kunit_vm_mmap() (a user-backed iterator, zeroed with
 * copy_zero_to_iter()).  Every byte returned is compared with the copy:
 * the bytes decide every case.  Which path a read took is extra proof,
 * from the mm_shmem_read_batch tracepoint, a test hook of ours
 * (mm_hooks.h): without it that part is skipped with its name.
 *
 * The v1 of the series broke fallback_page_copy (a large folio with a
 * hwpoisoned page is copied a page at a time, but the batch moved on a
 * folio at a time) and SGP_NOALLOC's -ENOENT on a hole; both have a case.
 * The truncation race is in shmem_read_race_kunit.c.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/folio_batch.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/swap.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "../internal.h"
#include "mm_hooks.h"
#include "mm_kunit_helpers.h"
#include "mm_test_util.h"
#include "shmem_read_helpers.h"

#define SZ_PAGE		PAGE_SIZE
#define PMD_BYTES	MM_KUNIT_PMD_BYTES

/* ---- layouts ---------------------------------------------------------- */

struct layout {
	const char *name;
	const char *huge;
	loff_t size;
	void (*build)(struct kunit *test, struct mm_kunit_file *sf);
	pgoff_t pmd_index;	/* must hold a PMD folio; ULONG_MAX: none */
};

/* Small folios written up to an EOF inside the last page. */
static void build_small_written(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_write(test, sf, 0, sf->size, 1);
}

/* Small folios around holes of one page up to many pages. */
static void build_small_holes(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_write(test, sf, 0, 4 * SZ_PAGE, 2);
	mm_kunit_file_write(test, sf, 5 * SZ_PAGE + 100, 3 * SZ_PAGE, 2);
	mm_kunit_file_write(test, sf, SZ_64K, SZ_4K, 2);
	mm_kunit_file_write(test, sf, SZ_256K, SZ_256K, 2);
}

/* Fallocated small folios, one of them written (made uptodate). */
static void build_small_fallocated(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_falloc(test, sf, 0, SZ_512K);
	mm_kunit_file_write(test, sf, SZ_128K + 10, SZ_4K, 3);
	mm_kunit_file_write(test, sf, SZ_512K, SZ_128K, 3);
}

/* Large folios written, EOF inside the last large folio. */
static void build_large_written(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_write(test, sf, 0, sf->size, 4);
}

/* Fallocated large folios, one page written in the second one. */
static void build_large_fallocated(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_falloc(test, sf, 0, sf->size);
	mm_kunit_file_write(test, sf, PMD_BYTES + 2 * SZ_4K, SZ_4K, 5);
}

/* All four mixed: large written, large fallocated, small, holes. */
static void build_mixture(struct kunit *test, struct mm_kunit_file *sf)
{
	mm_kunit_file_write(test, sf, 0, PMD_BYTES, 6);
	mm_kunit_file_falloc(test, sf, PMD_BYTES, PMD_BYTES);
	mm_kunit_file_write(test, sf, 2 * PMD_BYTES, SZ_64K, 6);
	/* [+64K, +128K) stays a hole */
	mm_kunit_file_falloc(test, sf, 2 * PMD_BYTES + SZ_128K, SZ_64K);
	mm_kunit_file_write(test, sf, 2 * PMD_BYTES + SZ_256K,
			    sf->size - 2 * PMD_BYTES - SZ_256K, 6);
}

static const struct layout layouts[] = {
	{ "small-written-eof-in-page", "never", SZ_1M + 300,
	  build_small_written, ULONG_MAX },
	{ "small-holes", "never", SZ_1M, build_small_holes, ULONG_MAX },
	{ "small-fallocated", "never", SZ_1M, build_small_fallocated,
	  ULONG_MAX },
	{ "large-written-eof-in-folio", "always", 3 * PMD_BYTES - 1000,
	  build_large_written, 0 },
	{ "large-fallocated", "always", 2 * PMD_BYTES, build_large_fallocated,
	  0 },
	{ "mixture", "within_size", 2 * PMD_BYTES + SZ_512K - 100,
	  build_mixture, 0 },
};

static struct mm_kunit_file *layout_build(struct kunit *test, const struct layout *l)
{
	struct mm_kunit_file *sf = mm_kunit_file_create(test, l->huge, l->size);

	l->build(test, sf);
	if (l->pmd_index != ULONG_MAX)
		mm_kunit_need_pmd_folio(test, sf, l->pmd_index);
	return sf;
}

/* A layout with the switch off or on */
struct layout_run {
	const struct layout *l;
	const struct shmem_lockless_mode *mode;
};

static struct layout_run layout_runs[2 * ARRAY_SIZE(layouts)];

/* The cases that are not about a layout: the switch off and on */
KUNIT_ARRAY_PARAM_DESC(lockless, shmem_lockless_modes, name);

/* Set the switch as the case's parameter (a lockless mode) says */
static void lockless_param(struct kunit *test)
{
	const struct shmem_lockless_mode *m = test->param_value;

	shmem_lockless_set(test, m->on);
}

static const void *layout_run_gen_params(struct kunit *test, const void *prev,
					 char *desc)
{
	struct layout_run *r = prev ? (struct layout_run *)prev + 1 : layout_runs;
	unsigned int i = r - layout_runs;

	if (i >= ARRAY_SIZE(layout_runs))
		return NULL;
	r->l = &layouts[i / 2];
	r->mode = &shmem_lockless_modes[i % 2];
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s,huge=%s,%s", r->l->name,
		 r->l->huge, r->mode->name);
	return r;
}

/* The layout of the case's parameter, built, with its switch set */
static struct mm_kunit_file *layout_run_build(struct kunit *test)
{
	const struct layout_run *r = test->param_value;

	shmem_lockless_set(test, r->mode->on);
	return layout_build(test, r->l);
}

static const size_t read_lens[] = {
	1, 16, SZ_4K, SZ_64K, SZ_1M, 3 * SZ_1M,
};

/* ---- the batched read path --------------------------------------------- */

/* What reads of one file filled their folio batches with */
struct batch_count {
	struct address_space *mapping;
	atomic_long_t batches;
	atomic_long_t folios;
	atomic_long_t bytes;
};

/* On the mm_shmem_read_batch tracepoint (a test hook: mm_hooks.h) */
static void batch_probe(void *data, struct address_space *mapping,
			pgoff_t index, unsigned int nr_folios, size_t bytes)
{
	struct batch_count *bc = data;

	if (mapping != bc->mapping)
		return;
	atomic_long_inc(&bc->batches);
	atomic_long_add(nr_folios, &bc->folios);
	atomic_long_add(bytes, &bc->bytes);
}

/* One read of the whole file, through a kvec; its bytes are checked */
static void read_whole_file(struct kunit *test, struct mm_kunit_file *sf)
{
	loff_t pos = 0;
	ssize_t ret;
	u8 *buf;

	buf = vmalloc(sf->size);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mm_kunit_defer(test, mm_kunit_vfree, buf);
	ret = kernel_read(sf->file, buf, sf->size, &pos);
	KUNIT_ASSERT_EQ_MSG(test, ret, (ssize_t)sf->size,
			    "a read of the whole file");
	mm_kunit_check_bytes(test, buf, sf->want, 0, sf->size,
			     "a read of the whole file");
}

/*
 * Check what the probe counted over one read of the whole file: every
 * folio of the file was in a batch (the one holding the last page may be
 * looked up alone: a read down to its last page with nothing batched does
 * that), and the batches held those folios' bytes.
 */
static void check_batch_count(struct kunit *test, struct mm_kunit_file *sf,
			      struct batch_count *bc)
{
	pgoff_t last = (sf->size - 1) >> PAGE_SHIFT, index = 0;
	unsigned long nr = 0, bytes = 0, last_bytes = 0, got, got_bytes;

	/* The folios of the file, their bytes, and the one at the last page */
	while (index <= last) {
		struct folio *folio = mm_kunit_file_folio(sf, index);

		if (!folio) {
			index++;
			continue;
		}
		nr++;
		bytes += folio_size(folio);
		index = folio_next_index(folio);
		if (index > last)
			last_bytes = folio_size(folio);
		folio_put(folio);
	}
	got = atomic_long_read(&bc->folios);
	got_bytes = atomic_long_read(&bc->bytes);
	KUNIT_EXPECT_TRUE_MSG(test, (got == nr && got_bytes == bytes) ||
			      (last_bytes && got == nr - 1 &&
			       got_bytes == bytes - last_bytes),
			      "%lu folios and %lu bytes in %ld batches; the file has %lu folios of %lu bytes, %lu in the one at its last page",
			      got, got_bytes, atomic_long_read(&bc->batches),
			      nr, bytes, last_bytes);
}

/**
 * folios_to_lock() - up to two uptodate folios of @sf to lock for a read
 * @sf: the file
 * @idx: set to their indices: the first uptodate folio and one half way
 *	through the rest (the one holding the last page is looked up
 *	without its lock too, in a batch or alone)
 *
 * Return: how many (0 when the file has no such folio).
 */
static unsigned int folios_to_lock(struct mm_kunit_file *sf, pgoff_t *idx)
{
	pgoff_t last = (sf->size - 1) >> PAGE_SHIFT, index = 0;
	pgoff_t found[64];
	unsigned int nr = 0;

	while (index <= last && nr < ARRAY_SIZE(found)) {
		struct folio *folio = mm_kunit_file_folio(sf, index);

		if (!folio) {
			index++;
			continue;
		}
		index = folio_next_index(folio);
		if (folio_test_uptodate(folio))
			found[nr++] = folio->index;
		folio_put(folio);
	}
	if (!nr)
		return 0;
	idx[0] = found[0];
	idx[1] = found[nr / 2];
	return nr / 2 ? 2 : 1;
}

/*
 * One read of a whole freshly built layout, with uptodate folios of it
 * locked, returns the file's bytes without waiting for those locks: it
 * goes through folio batches, which take no folio lock, where 7.3 looked
 * every folio up alone with shmem_get_folio(), which waits for it.  No
 * folio is hot yet, so with the lockless read on too the read is left to
 * shmem's loop.  Extra proof from the mm_shmem_read_batch tracepoint (a
 * test hook of ours): every folio of the file was in a batch.
 */
static void shmem_read_layout_whole_read_batched(struct kunit *test)
{
	struct mm_kunit_file *sf = layout_run_build(test);
	struct batch_count *bc = kunit_kzalloc(test, sizeof(*bc), GFP_KERNEL);
	struct shmem_locked_read *lr;
	pgoff_t idx[2];
	unsigned int nr;
	bool counting;
	int waits;

	KUNIT_ASSERT_NOT_NULL(test, bc);
	nr = folios_to_lock(sf, idx);
	KUNIT_ASSERT_GT_MSG(test, nr, 0, "the layout has no uptodate folio");
	bc->mapping = sf->file->f_mapping;
	counting = mm_test_probe(test, MM_HOOK_TRACE_SHMEM_READ_BATCH,
				 batch_probe, bc);
	lr = shmem_locked_read_start(test, sf, idx, nr, 0, sf->size);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(lr), "the locked read: %ld",
			       PTR_ERR(lr));
	waits = shmem_locked_read_waits(lr);
	shmem_locked_read_finish(lr);
	KUNIT_ASSERT_NE_MSG(test, waits, -ETIMEDOUT,
			    "hang: the read neither returned nor waited for a locked folio in 60 s");
	KUNIT_EXPECT_EQ_MSG(test, waits, 0,
			    "the read waited for the lock of an uptodate folio (index %lu or %lu): it looked them up one at a time, not through a batch",
			    idx[0], idx[nr - 1]);
	KUNIT_ASSERT_EQ_MSG(test, lr->ret, (ssize_t)sf->size,
			    "a read of the whole file");
	mm_kunit_check_bytes(test, lr->buf, sf->want, 0, sf->size,
			     "a read of the whole file");
	if (mm_hook_trace(test, counting, MM_HOOK_TRACE_SHMEM_READ_BATCH,
			  "that every folio went through a batch"))
		check_batch_count(test, sf, bc);
}

/*
 * Every read of 1 B .. 3 MiB (more than a folio batch of small folios) at
 * aligned, unaligned, folio-straddling and near-EOF offsets (down to the
 * last byte alone) returns the file's bytes, through a kvec, a bvec and a
 * user-backed buffer; first one read of the whole file, as a reader going
 * through it would.
 */
static void shmem_read_layout_bytes_match(struct kunit *test)
{
	struct mm_kunit_file *sf = layout_run_build(test);
	struct mm_kunit_reader *r = test->priv;
	const loff_t offs[] = { 0, 1, SZ_4K - 1, SZ_4K + 17, PMD_BYTES - 3,
				sf->size - 5000, sf->size - 10, sf->size - 1,
				sf->size };
	unsigned int bad = 0, reads = 0, i, j, k;

	read_whole_file(test, sf);

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		if (offs[i] < 0 || offs[i] > sf->size)
			continue;
		for (j = 0; j < ARRAY_SIZE(read_lens); j++)
			for (k = 0; k < MM_KUNIT_NR_ITERS; k++) {
				reads++;
				if (mm_kunit_read_and_check(test, r, sf, k,
							    offs[i],
							    read_lens[j]) &&
				    ++bad > 4)
					return;
			}
	}
	kunit_info(test, "%u reads checked", reads);
}

/* ---- fallback_page_copy ---------------------------------------------- */

#define POISONED_PAGE	5

struct poison {
	struct folio *folio;
	struct page *page;
};

static void poison_undo(void *arg)
{
	struct poison *p = arg;

	ClearPageHWPoison(p->page);
	folio_clear_has_hwpoisoned(p->folio);
	folio_put(p->folio);
}

/*
 * Two written PMD folios; page POISONED_PAGE of the first is marked
 * hwpoisoned and the folio PG_has_hwpoisoned, as memory_failure() leaves
 * a large folio it could not split.  Undone when the case ends.
 */
static struct mm_kunit_file *poisoned_file(struct kunit *test, struct poison **pp)
{
	struct mm_kunit_file *sf;
	struct poison *p;

	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "config: CONFIG_MEMORY_FAILURE=n: no PG_hwpoison");
	lockless_param(test);
	sf = mm_kunit_file_create(test, "always", 2 * PMD_BYTES);
	mm_kunit_file_write(test, sf, 0, sf->size, 7);
	mm_kunit_need_pmd_folio(test, sf, 0);
	mm_kunit_need_pmd_folio(test, sf, PMD_BYTES >> PAGE_SHIFT);

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->folio = mm_kunit_file_folio(sf, 0);
	p->page = folio_page(p->folio, POISONED_PAGE);
	SetPageHWPoison(p->page);
	folio_set_has_hwpoisoned(p->folio);
	mm_kunit_defer(test, poison_undo, p);
	*pp = p;
	return sf;
}

/*
 * fallback_page_copy: reads inside the hwpoisoned large folio that end
 * before the poisoned page, and reads that start after it and run into
 * the next folio, return exactly the file's bytes.
 */
static void shmem_read_hwpoison_fallback_exact_bytes(struct kunit *test)
{
	struct poison *p;
	struct mm_kunit_file *sf = poisoned_file(test, &p);
	struct mm_kunit_reader *r = test->priv;
	const loff_t after = (POISONED_PAGE + 1) * SZ_PAGE;
	int k;

	for (k = 0; k < MM_KUNIT_NR_ITERS; k++) {
		mm_kunit_read_and_check(test, r, sf, k, 0, POISONED_PAGE * SZ_PAGE);
		mm_kunit_read_and_check(test, r, sf, k, SZ_4K + 100,
					(POISONED_PAGE - 1) * SZ_PAGE - 100);
		mm_kunit_read_and_check(test, r, sf, k, after, PMD_BYTES);
		mm_kunit_read_and_check(test, r, sf, k, after + 3, 3 * SZ_1M);
	}
}

/*
 * fallback_page_copy: a read across the poisoned page returns the bytes
 * before it (a short read), and the next read, at the poisoned page,
 * fails with -EIO; so does a one-byte read of it, while one of the last
 * byte before it succeeds.  The v1 batch moved to the next folio after one page
 * here and returned that folio's bytes instead.
 */
static void shmem_read_hwpoison_fallback_stops_at_poison(struct kunit *test)
{
	struct poison *p;
	struct mm_kunit_file *sf = poisoned_file(test, &p);
	struct mm_kunit_reader *r = test->priv;
	const size_t before = POISONED_PAGE * SZ_PAGE;
	int refs = folio_ref_count(p->folio);
	ssize_t ret;
	int k;

	for (k = 0; k < MM_KUNIT_NR_ITERS; k++) {
		ret = mm_kunit_read(test, r, sf, k, 0, 3 * SZ_1M);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)before,
				    "%s read across the poisoned page",
				    mm_kunit_iter_name[k]);
		if (ret > 0)
			mm_kunit_check_bytes(test, r->kbuf, sf->want, 0,
					     min_t(size_t, ret, before),
					     mm_kunit_iter_name[k]);
		ret = mm_kunit_read(test, r, sf, k, before, SZ_64K);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)-EIO,
				    "%s read at the poisoned page", mm_kunit_iter_name[k]);
		/* The same, one page at a time: the lone-page lookup */
		ret = mm_kunit_read(test, r, sf, k, before, 1);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)-EIO,
				    "%s one-byte read of the poisoned page",
				    mm_kunit_iter_name[k]);
		ret = mm_kunit_read(test, r, sf, k, before - 1, 1);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)1,
				    "%s one-byte read before the poisoned page",
				    mm_kunit_iter_name[k]);
		if (ret == 1)
			mm_kunit_check_bytes(test, r->kbuf,
					     sf->want + before - 1, before - 1,
					     1, mm_kunit_iter_name[k]);
	}
	KUNIT_EXPECT_EQ_MSG(test, folio_ref_count(p->folio), refs,
			    "the poisoned folio's references changed");
}

/* ---- references ------------------------------------------------------ */

/**
 * settled_refs() - @folio's reference count once transient holders are gone
 * @folio: a page cache folio, not mapped, that the caller holds
 * @want: the count it should settle at
 *
 * Drains the per-CPU LRU batches and looks again, a bounded number of
 * times, while the count is above @want: compaction or reclaim may hold
 * the folio for a moment on a busy host, and a folio put back parks a
 * reference in a batch.  A leaked reference stays.
 *
 * Return: the last count seen.
 */
static int settled_refs(struct folio *folio, int want)
{
	int tries, refs = folio_ref_count(folio);

	for (tries = 0; tries < 100 && refs > want; tries++) {
		lru_add_drain_all();
		cond_resched();
		refs = folio_ref_count(folio);
	}
	return refs;
}

/*
 * Reads leave every folio with the references of the page cache (one a
 * page) and of the case, as they found it: one-page reads of each kind of
 * page, complete reads, reads cut short by a fault in the user buffer and
 * a read that stops at EOF.  A leaked or an extra folio_put() shows here.
 */
struct held_folios {
	struct folio *folios[64];
	unsigned int nr;
};

static void held_folios_put(void *arg)
{
	struct held_folios *h = arg;
	unsigned int i;

	for (i = 0; i < h->nr; i++)
		folio_put(h->folios[i]);
}

static void shmem_read_refcounts_unchanged(struct kunit *test)
{
	struct mm_kunit_file *sf;
	struct mm_kunit_reader *r = test->priv;
	struct folio_batch fbatch;
	struct held_folios *h;
	pgoff_t start = 0;
	unsigned int i;
	char __user *fault_buf;
	ssize_t ret;
	loff_t pos;

	lockless_param(test);
	sf = layout_build(test, &layouts[5]);
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	/* The references taken here go when the case ends, however it ends */
	mm_kunit_defer(test, held_folios_put, h);
	folio_batch_init(&fbatch);
	while (h->nr < ARRAY_SIZE(h->folios) &&
	       filemap_get_folios(sf->file->f_mapping, &start, ULONG_MAX,
				  &fbatch)) {
		for (i = 0; i < folio_batch_count(&fbatch); i++) {
			if (h->nr < ARRAY_SIZE(h->folios))
				h->folios[h->nr++] = fbatch.folios[i];
			else
				folio_put(fbatch.folios[i]);
		}
		folio_batch_reinit(&fbatch);
	}
	KUNIT_ASSERT_GT(test, h->nr, 2);
	for (i = 0; i < h->nr; i++) {
		int want = folio_nr_pages(h->folios[i]) + 1;

		if (settled_refs(h->folios[i], want) != want)
			kunit_skip(test,
				   "machine: the folio at index %lu holds %d references before the reads, not %d",
				   h->folios[i]->index,
				   folio_ref_count(h->folios[i]), want);
	}

	/*
	 * One-page reads first, while no folio is hot yet (a hot one would
	 * be copied without references): the lookup of a lone last page,
	 * inside the written PMD folio, in the fallocated PMD folio, in a
	 * hole, in a small fallocated folio, and one cut short by a fault.
	 */
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC, SZ_4K + 17, 16);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC, PMD_BYTES + SZ_4K + 17, 16);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_UBUF,
				2 * PMD_BYTES + SZ_64K + 17, 16);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC,
				2 * PMD_BYTES + SZ_128K + 17, 16);
	/* 100 bytes before the fault (fewer where a copy stops short of it) */
	pos = 3 * SZ_4K;
	fault_buf = (char __user *)(r->ubuf + MM_KUNIT_READER_USABLE - 100);
	ret = vfs_read(sf->file, fault_buf, SZ_4K, &pos);
	KUNIT_EXPECT_GT(test, ret, (ssize_t)0);
	KUNIT_EXPECT_LE(test, ret, (ssize_t)100);

	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC, 0, 3 * SZ_1M);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_UBUF, SZ_1M + 1, 3 * SZ_1M);
	mm_kunit_read_and_check(test, r, sf, MM_KUNIT_KVEC, sf->size - 100, SZ_64K);
	/* the user buffer ends 8 KiB into the file: a fault stops the copy */
	pos = 0;
	fault_buf = (char __user *)(r->ubuf + MM_KUNIT_READER_USABLE - 2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, vfs_read(sf->file, fault_buf, 4 * SZ_4K, &pos),
			(ssize_t)2 * SZ_4K);

	for (i = 0; i < h->nr; i++) {
		int want = folio_nr_pages(h->folios[i]) + 1;

		KUNIT_EXPECT_GE_MSG(test, folio_ref_count(h->folios[i]), want,
				    "folio at index %lu (order %u): a reference put too many",
				    h->folios[i]->index, folio_order(h->folios[i]));
		KUNIT_EXPECT_EQ_MSG(test, settled_refs(h->folios[i], want), want,
				    "folio at index %lu (order %u)",
				    h->folios[i]->index, folio_order(h->folios[i]));
	}
}

/*
 * A read of four small folios into a user buffer that ends after two
 * returns those two pages, and leaves every folio of the file with the
 * references of the page cache and of the case, no more, no less: copies
 * fall short while the batch holds more than the folio copied from (the
 * buffer is fresh, then it ends), and the batch keeps only that folio.  A
 * reference dropped from, or left on, any of them shows here.
 */
static void shmem_read_fault_drops_batch_references(struct kunit *test)
{
	struct mm_kunit_reader *r = test->priv;
	unsigned long ubuf = r->ubuf + MM_KUNIT_READER_USABLE - 2 * SZ_4K;
	struct mm_kunit_file *sf;
	struct held_folios *h;
	loff_t pos = 0;
	unsigned int i;
	ssize_t ret;

	lockless_param(test);
	sf = mm_kunit_file_create(test, "never", 8 * SZ_PAGE);
	mm_kunit_file_write(test, sf, 0, sf->size, 9);
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	mm_kunit_defer(test, held_folios_put, h);
	for (i = 0; i < 8; i++) {
		h->folios[i] = mm_kunit_file_folio(sf, i);
		KUNIT_ASSERT_NOT_NULL(test, h->folios[i]);
		h->nr++;
		KUNIT_ASSERT_EQ(test, folio_nr_pages(h->folios[i]), 1);
	}
	/* The page cache's reference and the case's */
	for (i = 0; i < h->nr; i++)
		if (settled_refs(h->folios[i], 2) != 2)
			kunit_skip(test,
				   "machine: folio %u holds %d references before the read, not 2",
				   i, folio_ref_count(h->folios[i]));

	ret = vfs_read(sf->file, (char __user *)ubuf, 4 * SZ_PAGE, &pos);
	KUNIT_EXPECT_EQ(test, ret, (ssize_t)2 * SZ_PAGE);
	KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, (const void __user *)ubuf,
					     2 * SZ_PAGE), 0);
	mm_kunit_check_bytes(test, r->kbuf, sf->want, 0, 2 * SZ_PAGE,
			     "a read cut short by a fault");
	for (i = 0; i < h->nr; i++) {
		KUNIT_EXPECT_GE_MSG(test, folio_ref_count(h->folios[i]), 2,
				    "folio at index %u: a reference put too many", i);
		KUNIT_EXPECT_EQ_MSG(test, settled_refs(h->folios[i], 2), 2,
				    "folio at index %u", i);
	}
}

/* ---- zero fill -------------------------------------------------------- */

/*
 * A read of a fallocated PMD folio into a user buffer that faults after
 * two pages is a short read of exactly two pages of zeroes: the zero
 * fill reports how far it got instead of the size it was asked for.  So
 * is a read of two pages into a buffer that faults one byte before their
 * end: the fill stops short of the fault, and returns.
 */
static void shmem_read_zero_fill_fault_is_short(struct kunit *test)
{
	struct mm_kunit_reader *r = test->priv;
	unsigned long ubuf = r->ubuf + MM_KUNIT_READER_USABLE - 2 * SZ_4K;
	struct mm_kunit_file *sf;
	loff_t pos = SZ_4K;
	ssize_t ret;

	lockless_param(test);
	sf = mm_kunit_file_create(test, "always", PMD_BYTES);
	mm_kunit_file_falloc(test, sf, 0, PMD_BYTES);
	mm_kunit_need_pmd_folio(test, sf, 0);
	ret = vfs_read(sf->file, (char __user *)ubuf, 16 * SZ_4K, &pos);
	KUNIT_EXPECT_EQ(test, ret, (ssize_t)2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, pos, (loff_t)3 * SZ_4K);
	KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, (const void __user *)ubuf,
					     2 * SZ_4K), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(r->kbuf, 0, 2 * SZ_4K));

	/*
	 * Two pages asked for, the buffer one byte short of them: short by
	 * that byte where a copy to user memory stops exactly at a fault
	 * (x86), by up to a copy's step elsewhere, never a page or more.
	 */
	ubuf = r->ubuf + MM_KUNIT_READER_USABLE - (2 * SZ_4K - 1);
	pos = SZ_4K;
	ret = vfs_read(sf->file, (char __user *)ubuf, 2 * SZ_4K, &pos);
	KUNIT_EXPECT_GT(test, ret, (ssize_t)SZ_4K);
	KUNIT_EXPECT_LE(test, ret, (ssize_t)2 * SZ_4K - 1);
	if (ret <= 0)
		return;
	KUNIT_EXPECT_EQ(test, pos, (loff_t)SZ_4K + ret);
	KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, (const void __user *)ubuf,
					     ret), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(r->kbuf, 0, ret));
}

/*
 * How many of the first @nr folios of @sf have PG_rcu_free: the folios the
 * lockless read copies from (0 without CONFIG_PAGE_RCU_FREE)
 */
static pgoff_t nr_hot(struct mm_kunit_file *sf, pgoff_t nr)
{
	pgoff_t i, hot = 0;

	for (i = 0; i < nr; i++) {
		struct folio *folio = mm_kunit_file_folio(sf, i);

		if (!folio)
			continue;
#ifdef CONFIG_PAGE_RCU_FREE
		hot += folio_test_rcu_free(folio);
#endif
		folio_put(folio);
	}
	return hot;
}

/*
 * A read made with page faults disabled, as a caller that must not take
 * them makes it, into a user buffer nothing is mapped at yet, fails with
 * -EFAULT and writes nothing there, as in 7.3: the read does not fault the
 * buffer in itself.  The file has 8 small folios, so the batch holds more
 * than the folio copied from when the copy falls short.  With the
 * lockless read on, the folios are made hot first (read a page at a time,
 * the LRU batches drained after each pass, until all 8 have PG_rcu_free),
 * so the read starts without references and falls back from there.
 */
static void shmem_read_faults_disabled_not_faulted_in(struct kunit *test)
{
	struct mm_kunit_reader *r = test->priv;
	const size_t len = 8 * SZ_PAGE;
	struct mm_kunit_file *sf;
	unsigned long ubuf;
	loff_t pos = 0;
	ssize_t ret;

	lockless_param(test);
	sf = mm_kunit_file_create(test, "never", len);
	mm_kunit_file_write(test, sf, 0, len, 8);
	if (((const struct shmem_lockless_mode *)test->param_value)->on) {
		int pass;

		for (pass = 0; pass < 16 && nr_hot(sf, 8) < 8; pass++) {
			for (pos = 0; pos < len; pos += SZ_PAGE)
				KUNIT_ASSERT_GT(test, mm_kunit_read(test, NULL, sf,
								    MM_KUNIT_KVEC,
								    pos, 16), 0);
			lru_add_drain_all();
		}
		KUNIT_ASSERT_EQ_MSG(test, nr_hot(sf, 8), (pgoff_t)8,
				    "folios with PG_rcu_free after %d passes of reads",
				    pass);
		pos = 0;
	}
	ubuf = kunit_vm_mmap(test, NULL, 0, len, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, ubuf, 0, "kunit_vm_mmap failed");
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(ubuf));
	pagefault_disable();
	ret = vfs_read(sf->file, (char __user *)ubuf, len, &pos);
	pagefault_enable();
	KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)-EFAULT,
			    "a read with page faults disabled into an unmapped buffer");
	KUNIT_EXPECT_EQ(test, pos, 0);
	/* Now faulted in: zeroes, unless the read wrote the file's bytes */
	KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, (const void __user *)ubuf,
					     len), 0);
	KUNIT_EXPECT_NULL_MSG(test, memchr_inv(r->kbuf, 0, len),
			      "the read wrote to the buffer with page faults disabled");
}

/* ---- shmem_get_folio(SGP_NOALLOC) ------------------------------------ */

/*
 * SGP_NOALLOC still fails with -ENOENT on a hole (userfaultfd's
 * UFFDIO_CONTINUE relies on it) and returns written and fallocated
 * folios; v1 made it succeed with no folio on a hole.
 */
static void shmem_read_sgp_noalloc_hole_enoent(struct kunit *test)
{
	struct mm_kunit_file *sf = layout_build(test, &layouts[2]);
	struct inode *inode = file_inode(sf->file);
	const pgoff_t idx[] = { (SZ_128K + 10) >> PAGE_SHIFT, 3,
				(SZ_1M >> PAGE_SHIFT) - 2 };
	const int want[] = { 0, 0, -ENOENT };
	struct folio *folio;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		folio = NULL;
		ret = shmem_get_folio(inode, idx[i], 0, &folio, SGP_NOALLOC);
		KUNIT_EXPECT_EQ_MSG(test, ret, want[i], "index %lu", idx[i]);
		if (ret) {
			KUNIT_EXPECT_NULL_MSG(test, folio, "index %lu", idx[i]);
			continue;
		}
		KUNIT_EXPECT_NOT_NULL_MSG(test, folio, "index %lu", idx[i]);
		if (folio) {
			folio_unlock(folio);
			folio_put(folio);
		}
	}
}

/* Each case gets a reader (test->priv) */
static int shmem_read_test_init(struct kunit *test)
{
	test->priv = mm_kunit_reader_create(test);
	return 0;
}

static struct kunit_case shmem_read_cases[] = {
	KUNIT_CASE_PARAM(shmem_read_layout_bytes_match, layout_run_gen_params),
	KUNIT_CASE_PARAM(shmem_read_layout_whole_read_batched,
			 layout_run_gen_params),
	KUNIT_CASE_PARAM(shmem_read_hwpoison_fallback_exact_bytes,
			 lockless_gen_params),
	KUNIT_CASE_PARAM(shmem_read_hwpoison_fallback_stops_at_poison,
			 lockless_gen_params),
	KUNIT_CASE_PARAM(shmem_read_refcounts_unchanged, lockless_gen_params),
	KUNIT_CASE_PARAM(shmem_read_fault_drops_batch_references,
			 lockless_gen_params),
	KUNIT_CASE_PARAM(shmem_read_zero_fill_fault_is_short,
			 lockless_gen_params),
	KUNIT_CASE_PARAM(shmem_read_faults_disabled_not_faulted_in,
			 lockless_gen_params),
	KUNIT_CASE(shmem_read_sgp_noalloc_hole_enoent),
	{}
};

static struct kunit_suite shmem_read_suite = {
	.name = "shmem_read",
	.init = shmem_read_test_init,
	.test_cases = shmem_read_cases,
};

kunit_test_suite(shmem_read_suite);

MODULE_DESCRIPTION("KUnit tests for the tmpfs read path (shmem-batch)");
MODULE_LICENSE("GPL");
