// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for shmem_file_read_iter(), the tmpfs read path that the
 * shmem-batch series turns into a folio-batch loop.
 *
 * Strategy: every case mounts its own tmpfs (huge=never, huge=always or
 * huge=within_size), builds a file with written data, holes and
 * fallocated (not uptodate) ranges, keeps a copy of what the file must
 * read as, and reads it back through the real read path: kernel_read()
 * (a kvec iterator, zeroed with iov_iter_zero()) and vfs_read() into a
 * buffer mapped with kunit_vm_mmap() (a user-backed iterator, zeroed with
 * copy_zero_to_iter()).  Every byte returned is compared with the copy.
 *
 * The v1 of the series broke fallback_page_copy (a large folio with a
 * hwpoisoned page is copied a page at a time, but the batch moved on a
 * folio at a time) and SGP_NOALLOC's -ENOENT on a hole; both have a case.
 */

#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/completion.h>
#include <linux/falloc.h>
#include <linux/folio_batch.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "../internal.h"
#include "mm_test_util.h"

#define SZ_PAGE		PAGE_SIZE
#define PMD_BYTES	(SZ_1M * 2)
#define UBUF_LEN	(SZ_1M * 4)
/* the last 64 KiB of the user buffer are unmapped: a copy there faults */
#define UBUF_USABLE	(UBUF_LEN - SZ_64K)

KUNIT_DEFINE_ACTION_WRAPPER(vfree_wrapper, vfree, const void *);

/* Run @action(@arg) when the case ends; abort the case if that fails. */
static void defer(struct kunit *test, kunit_action_t *action, void *arg)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, action, arg), 0);
}

/* A file under test and the bytes it must read as. */
struct sfile {
	struct file *file;
	loff_t size;
	u8 *want;		/* size bytes */
};

/* A file of @size (all hole) on a private tmpfs mounted with huge=@huge. */
static struct sfile *sfile_create(struct kunit *test, const char *huge,
				  loff_t size)
{
	struct vfsmount *mnt = mm_test_mount(test, "tmpfs", huge);
	struct sfile *sf = kunit_kzalloc(test, sizeof(*sf), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sf);
	sf->file = shmem_file_setup_with_mnt(mnt, "shmem_read", size,
					     mk_vma_flags(VMA_NORESERVE_BIT));
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(sf->file), "shmem file: %ld",
			       PTR_ERR(sf->file));
	defer(test, mm_test_fput, sf->file);
	sf->size = size;
	sf->want = vzalloc(size);
	KUNIT_ASSERT_NOT_NULL(test, sf->want);
	defer(test, vfree_wrapper, sf->want);
	return sf;
}

/* Write the pattern (with @seed) over [@off, @off + @len). */
static void sfile_write(struct kunit *test, struct sfile *sf, loff_t off,
			size_t len, u8 seed)
{
	loff_t pos = off;
	size_t i;
	ssize_t ret;

	KUNIT_ASSERT_LE(test, off + (loff_t)len, sf->size);
	for (i = 0; i < len; i++)
		sf->want[off + i] = mm_test_pattern(off + i, seed);
	ret = kernel_write(sf->file, sf->want + off, len, &pos);
	KUNIT_ASSERT_EQ_MSG(test, ret, (ssize_t)len, "write %lld+%zu", off, len);
}

/* Allocate [@off, @off + @len) without writing: it must read as zeroes. */
static void sfile_falloc(struct kunit *test, struct sfile *sf, loff_t off,
			 loff_t len)
{
	KUNIT_ASSERT_EQ(test, vfs_fallocate(sf->file, FALLOC_FL_KEEP_SIZE,
					    off, len), 0);
}

static struct folio *sfile_folio(struct sfile *sf, pgoff_t index)
{
	struct folio *folio = filemap_get_folio(sf->file->f_mapping, index);

	return IS_ERR(folio) ? NULL : folio;
}

/*
 * The case needs a PMD-size folio at @index.  In a freshly booted guest with
 * 3 GiB a huge= mount gets one; not getting it is a failure, not a skip, so
 * that a change that stops tmpfs from allocating large folios shows up.
 */
static void need_pmd_folio(struct kunit *test, struct sfile *sf,
			   pgoff_t index)
{
	struct folio *folio = sfile_folio(sf, index);
	size_t size = folio ? folio_size(folio) : 0;

	if (folio)
		folio_put(folio);
	KUNIT_ASSERT_GE_MSG(test, size, (size_t)PMD_BYTES,
			    "no PMD-size folio at index %lu", index);
}

enum iter_kind { ITER_KIND_KVEC, ITER_KIND_UBUF };

static const char * const iter_name[] = { "kvec", "ubuf" };

struct reader {
	u8 *kbuf;		/* UBUF_LEN */
	unsigned long ubuf;	/* UBUF_LEN, user-backed */
};

static const void __user *user_ptr(unsigned long addr)
{
	return (const void __user *)addr;
}

static struct reader *reader_create(struct kunit *test)
{
	struct reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->kbuf = vmalloc(UBUF_LEN);
	KUNIT_ASSERT_NOT_NULL(test, r->kbuf);
	defer(test, vfree_wrapper, r->kbuf);
	r->ubuf = kunit_vm_mmap(test, NULL, 0, UBUF_LEN, PROT_READ | PROT_WRITE,
				MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, r->ubuf, 0, "kunit_vm_mmap failed");
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(r->ubuf));
	KUNIT_ASSERT_EQ(test, vm_munmap(r->ubuf + UBUF_USABLE,
					UBUF_LEN - UBUF_USABLE), 0);
	return r;
}

/*
 * Read @len bytes at @off through @kind; the bytes land in r->kbuf.
 * Returns what the read returned.
 */
static ssize_t do_read(struct kunit *test, struct reader *r, struct sfile *sf,
		       enum iter_kind kind, loff_t off, size_t len)
{
	loff_t pos = off;
	ssize_t ret;

	KUNIT_ASSERT_LE(test, len, UBUF_USABLE);
	memset(r->kbuf, 0xa5, len);
	if (kind == ITER_KIND_KVEC)
		return kernel_read(sf->file, r->kbuf, len, &pos);

	ret = vfs_read(sf->file, (char __user *)r->ubuf, len, &pos);
	if (ret > 0)
		KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, user_ptr(r->ubuf),
						     ret), 0);
	return ret;
}

/* Check r->kbuf[0, @n) against the file's bytes at @off; 0 if equal. */
static int check_bytes(struct kunit *test, struct reader *r, struct sfile *sf,
		       const char *what, loff_t off, size_t n)
{
	size_t i;

	if (!memcmp(r->kbuf, sf->want + off, n))
		return 0;
	for (i = 0; i < n && r->kbuf[i] == sf->want[off + i]; i++)
		;
	KUNIT_FAIL(test, "%s: byte at %lld is %#x, want %#x", what, off + i,
		   r->kbuf[i], sf->want[off + i]);
	return -EINVAL;
}

/* Read and compare; returns 0 when the read returned what it must. */
static int read_and_check(struct kunit *test, struct reader *r,
			  struct sfile *sf, enum iter_kind kind, loff_t off,
			  size_t len)
{
	size_t want = off >= sf->size ? 0 : min_t(loff_t, len, sf->size - off);
	char what[96];
	ssize_t ret;

	snprintf(what, sizeof(what), "%s read %zu at %lld", iter_name[kind],
		 len, off);
	ret = do_read(test, r, sf, kind, off, len);
	if (ret != (ssize_t)want) {
		KUNIT_FAIL(test, "%s returned %zd, want %zu", what, ret, want);
		return -EINVAL;
	}
	return check_bytes(test, r, sf, what, off, want);
}

/* ---- layouts ---------------------------------------------------------- */

struct layout {
	const char *name;
	const char *huge;
	loff_t size;
	void (*build)(struct kunit *test, struct sfile *sf);
	pgoff_t pmd_index;	/* must hold a PMD folio; ULONG_MAX: none */
};

/* Small folios written up to an EOF inside the last page. */
static void build_small_written(struct kunit *test, struct sfile *sf)
{
	sfile_write(test, sf, 0, sf->size, 1);
}

/* Small folios around holes of one page up to many pages. */
static void build_small_holes(struct kunit *test, struct sfile *sf)
{
	sfile_write(test, sf, 0, 4 * SZ_PAGE, 2);
	sfile_write(test, sf, 5 * SZ_PAGE + 100, 3 * SZ_PAGE, 2);
	sfile_write(test, sf, SZ_64K, SZ_4K, 2);
	sfile_write(test, sf, SZ_256K, SZ_256K, 2);
}

/* Fallocated small folios, one of them written (made uptodate). */
static void build_small_fallocated(struct kunit *test, struct sfile *sf)
{
	sfile_falloc(test, sf, 0, SZ_512K);
	sfile_write(test, sf, SZ_128K + 10, SZ_4K, 3);
	sfile_write(test, sf, SZ_512K, SZ_128K, 3);
}

/* Large folios written, EOF inside the last large folio. */
static void build_large_written(struct kunit *test, struct sfile *sf)
{
	sfile_write(test, sf, 0, sf->size, 4);
}

/* Fallocated large folios, one page written in the second one. */
static void build_large_fallocated(struct kunit *test, struct sfile *sf)
{
	sfile_falloc(test, sf, 0, sf->size);
	sfile_write(test, sf, PMD_BYTES + 2 * SZ_4K, SZ_4K, 5);
}

/* All four mixed: large written, large fallocated, small, holes. */
static void build_mixture(struct kunit *test, struct sfile *sf)
{
	sfile_write(test, sf, 0, PMD_BYTES, 6);
	sfile_falloc(test, sf, PMD_BYTES, PMD_BYTES);
	sfile_write(test, sf, 2 * PMD_BYTES, SZ_64K, 6);
	/* [+64K, +128K) stays a hole */
	sfile_falloc(test, sf, 2 * PMD_BYTES + SZ_128K, SZ_64K);
	sfile_write(test, sf, 2 * PMD_BYTES + SZ_256K,
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

static void layout_desc(const struct layout *l, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s,huge=%s", l->name, l->huge);
}

KUNIT_ARRAY_PARAM(layout, layouts, layout_desc);

static struct sfile *layout_build(struct kunit *test, const struct layout *l)
{
	struct sfile *sf = sfile_create(test, l->huge, l->size);

	l->build(test, sf);
	if (l->pmd_index != ULONG_MAX)
		need_pmd_folio(test, sf, l->pmd_index);
	return sf;
}

static const size_t read_lens[] = {
	1, 16, SZ_4K, SZ_64K, SZ_1M, 3 * SZ_1M,
};

/* ---- the batched read path --------------------------------------------- */

#define BATCH_TRACEPOINT	"mm_shmem_read_batch"

/* What reads of one file filled their folio batches with */
struct batch_count {
	struct address_space *mapping;
	atomic_long_t batches;
	atomic_long_t folios;
	atomic_long_t bytes;
};

/* On the mm_shmem_read_batch tracepoint of shmem-batch patch 3 */
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

/*
 * Read all of a freshly built layout in one read and check its bytes, and
 * that the read went through folio batches: every folio of the file was
 * in a batch (the one holding the last page may be looked up alone: a
 * read down to its last page with nothing batched does that), and the
 * batches held those folios' bytes.  No folio is hot yet, so the rcu-free
 * copy without references leaves the whole read to shmem's loop.  7.3's
 * loop looks every folio up alone and fills no batch.
 */
static void check_batched_read(struct kunit *test, struct sfile *sf)
{
	struct batch_count *bc = kunit_kzalloc(test, sizeof(*bc), GFP_KERNEL);
	pgoff_t last = (sf->size - 1) >> PAGE_SHIFT, index = 0;
	unsigned long nr = 0, bytes = 0, last_bytes = 0, got, got_bytes;
	bool counting;
	loff_t pos = 0;
	u8 *buf;

	KUNIT_ASSERT_NOT_NULL(test, bc);
	bc->mapping = sf->file->f_mapping;
	counting = mm_test_probe(test, BATCH_TRACEPOINT, batch_probe, bc);
	if (!counting)
		KUNIT_FAIL(test, "no tracepoint " BATCH_TRACEPOINT
			   ": shmem-batch patch 3 is not applied");
	buf = vmalloc(sf->size);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	defer(test, vfree_wrapper, buf);
	KUNIT_ASSERT_EQ(test, kernel_read(sf->file, buf, sf->size, &pos),
			(ssize_t)sf->size);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(buf, sf->want, sf->size), 0,
			    "a read of the whole file");
	if (!counting)
		return;

	/* The folios of the file, their bytes, and the one at the last page */
	while (index <= last) {
		struct folio *folio = sfile_folio(sf, index);

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

/*
 * The first read of the whole file goes through folio batches (see
 * check_batched_read()); then every read of 1 B .. 3 MiB (more than a
 * folio batch of small folios) at aligned, unaligned, folio-straddling
 * and near-EOF offsets returns the file's bytes, through a kvec and
 * through a user-backed buffer.
 */
static void shmem_read_layout_bytes_match(struct kunit *test)
{
	const struct layout *l = test->param_value;
	struct sfile *sf = layout_build(test, l);
	struct reader *r = reader_create(test);
	const loff_t offs[] = { 0, 1, SZ_4K - 1, SZ_4K + 17, PMD_BYTES - 3,
				sf->size - 5000, sf->size - 10, sf->size };
	unsigned int bad = 0, reads = 0, i, j, k;

	check_batched_read(test, sf);

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		if (offs[i] < 0 || offs[i] > sf->size)
			continue;
		for (j = 0; j < ARRAY_SIZE(read_lens); j++)
			for (k = ITER_KIND_KVEC; k <= ITER_KIND_UBUF; k++) {
				reads++;
				if (read_and_check(test, r, sf, k, offs[i],
						   read_lens[j]) && ++bad > 4)
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
static struct sfile *poisoned_file(struct kunit *test, struct poison **pp)
{
	struct sfile *sf;
	struct poison *p;

	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		kunit_skip(test, "CONFIG_MEMORY_FAILURE=n: no PG_hwpoison");
	sf = sfile_create(test, "always", 2 * PMD_BYTES);
	sfile_write(test, sf, 0, sf->size, 7);
	need_pmd_folio(test, sf, 0);
	need_pmd_folio(test, sf, PMD_BYTES >> PAGE_SHIFT);

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->folio = sfile_folio(sf, 0);
	p->page = folio_page(p->folio, POISONED_PAGE);
	SetPageHWPoison(p->page);
	folio_set_has_hwpoisoned(p->folio);
	defer(test, poison_undo, p);
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
	struct sfile *sf = poisoned_file(test, &p);
	struct reader *r = reader_create(test);
	const loff_t after = (POISONED_PAGE + 1) * SZ_PAGE;
	int k;

	for (k = ITER_KIND_KVEC; k <= ITER_KIND_UBUF; k++) {
		read_and_check(test, r, sf, k, 0, POISONED_PAGE * SZ_PAGE);
		read_and_check(test, r, sf, k, SZ_4K + 100,
			       (POISONED_PAGE - 1) * SZ_PAGE - 100);
		read_and_check(test, r, sf, k, after, PMD_BYTES);
		read_and_check(test, r, sf, k, after + 3, 3 * SZ_1M);
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
	struct sfile *sf = poisoned_file(test, &p);
	struct reader *r = reader_create(test);
	const size_t before = POISONED_PAGE * SZ_PAGE;
	int refs = folio_ref_count(p->folio);
	ssize_t ret;
	int k;

	for (k = ITER_KIND_KVEC; k <= ITER_KIND_UBUF; k++) {
		ret = do_read(test, r, sf, k, 0, 3 * SZ_1M);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)before,
				    "%s read across the poisoned page",
				    iter_name[k]);
		if (ret > 0)
			check_bytes(test, r, sf, iter_name[k], 0,
				    min_t(size_t, ret, before));
		ret = do_read(test, r, sf, k, before, SZ_64K);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)-EIO,
				    "%s read at the poisoned page", iter_name[k]);
		/* The same, one page at a time: the lone-page lookup */
		ret = do_read(test, r, sf, k, before, 1);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)-EIO,
				    "%s one-byte read of the poisoned page",
				    iter_name[k]);
		ret = do_read(test, r, sf, k, before - 1, 1);
		KUNIT_EXPECT_EQ_MSG(test, ret, (ssize_t)1,
				    "%s one-byte read before the poisoned page",
				    iter_name[k]);
		if (ret == 1)
			check_bytes(test, r, sf, iter_name[k], before - 1, 1);
	}
	KUNIT_EXPECT_EQ_MSG(test, folio_ref_count(p->folio), refs,
			    "the poisoned folio's references changed");
}

/* ---- references ------------------------------------------------------ */

/*
 * Reads leave every folio's reference count as they found it: one-page
 * reads of each kind of page, complete reads, reads cut short by a fault
 * in the user buffer and a read that stops at EOF.  A leaked or an extra
 * folio_put() shows here.
 */
struct held_folios {
	struct folio *folios[64];
	int refs[64];
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
	struct sfile *sf = layout_build(test, &layouts[5]);
	struct reader *r = reader_create(test);
	struct folio_batch fbatch;
	struct held_folios *h;
	pgoff_t start = 0;
	unsigned int i;
	char __user *fault_buf;
	loff_t pos;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	/* The references taken here go when the case ends, however it ends */
	defer(test, held_folios_put, h);
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
	for (i = 0; i < h->nr; i++)
		h->refs[i] = folio_ref_count(h->folios[i]);

	/*
	 * One-page reads first, while no folio is hot yet (a hot one would
	 * be copied without references): the lookup of a lone last page,
	 * inside the written PMD folio, in the fallocated PMD folio, in a
	 * hole, in a small fallocated folio, and one cut short by a fault.
	 */
	read_and_check(test, r, sf, ITER_KIND_KVEC, SZ_4K + 17, 16);
	read_and_check(test, r, sf, ITER_KIND_KVEC, PMD_BYTES + SZ_4K + 17, 16);
	read_and_check(test, r, sf, ITER_KIND_UBUF, 2 * PMD_BYTES + SZ_64K + 17,
		       16);
	read_and_check(test, r, sf, ITER_KIND_KVEC,
		       2 * PMD_BYTES + SZ_128K + 17, 16);
	pos = 3 * SZ_4K;
	fault_buf = (char __user *)(r->ubuf + UBUF_USABLE - 100);
	KUNIT_EXPECT_EQ(test, vfs_read(sf->file, fault_buf, SZ_4K, &pos),
			(ssize_t)100);

	read_and_check(test, r, sf, ITER_KIND_KVEC, 0, 3 * SZ_1M);
	read_and_check(test, r, sf, ITER_KIND_UBUF, SZ_1M + 1, 3 * SZ_1M);
	read_and_check(test, r, sf, ITER_KIND_KVEC, sf->size - 100, SZ_64K);
	/* the user buffer ends 8 KiB into the file: a fault stops the copy */
	pos = 0;
	fault_buf = (char __user *)(r->ubuf + UBUF_USABLE - 2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, vfs_read(sf->file, fault_buf, 4 * SZ_4K, &pos),
			(ssize_t)2 * SZ_4K);

	for (i = 0; i < h->nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, folio_ref_count(h->folios[i]), h->refs[i],
				    "folio at index %lu (order %u)",
				    h->folios[i]->index, folio_order(h->folios[i]));
}

/* ---- a folio that is locked and not uptodate --------------------------- */

struct locked_read {
	struct file *file;
	struct folio *folio;	/* locked by the case until it is filled */
	bool locked;		/* the case still holds that lock */
	struct task_struct *task;
	struct completion done;
	u8 *buf;
	ssize_t ret;
};

static int locked_read_fn(void *arg)
{
	struct locked_read *lr = arg;
	loff_t pos = 0;

	lr->ret = kernel_read(lr->file, lr->buf, SZ_4K, &pos);
	complete(&lr->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

/* However the case ends: the folio unlocked, the reader finished */
static void locked_read_end(void *arg)
{
	struct locked_read *lr = arg;

	if (lr->locked)
		folio_unlock(lr->folio);
	kthread_stop(lr->task);
	folio_put(lr->folio);
}

/*
 * A one-page read that finds its folio locked and not uptodate, as
 * migration leaves the new folio until it has copied the data, waits for
 * the lock and returns the data, not zeroes: the reader must not return
 * while the case holds the lock, and after the case fills the folio,
 * marks it uptodate and unlocks it, the read returns those bytes.
 */
static void shmem_read_waits_for_locked_folio(struct kunit *test)
{
	struct sfile *sf = sfile_create(test, "never", SZ_4K);
	struct locked_read *lr;
	unsigned long deadline;
	void *kaddr;
	size_t i;

	lr = kunit_kzalloc(test, sizeof(*lr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lr);
	lr->buf = kunit_kzalloc(test, SZ_4K, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lr->buf);
	sfile_falloc(test, sf, 0, SZ_4K);
	lr->folio = filemap_lock_folio(sf->file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(lr->folio));
	if (folio_test_uptodate(lr->folio)) {
		/* no assert here: it would leave the folio locked */
		folio_unlock(lr->folio);
		folio_put(lr->folio);
		KUNIT_FAIL(test, "the fallocated folio is uptodate");
		return;
	}
	lr->file = sf->file;
	init_completion(&lr->done);
	lr->task = kthread_run(locked_read_fn, lr, "shmem_locked_read");
	if (IS_ERR(lr->task)) {
		folio_unlock(lr->folio);
		folio_put(lr->folio);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(lr->task));
		return;
	}
	lr->locked = true;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, locked_read_end,
							lr), 0);

	/* The reader sleeps on the folio (PG_waiters) or has returned */
	deadline = jiffies + 10 * HZ;
	while (!folio_test_waiters(lr->folio) && !completion_done(&lr->done) &&
	       time_before(jiffies, deadline))
		schedule_timeout_uninterruptible(1);
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&lr->done),
			       "read returned %zd while the folio was locked and not uptodate",
			       lr->ret);
	KUNIT_EXPECT_TRUE_MSG(test, folio_test_waiters(lr->folio),
			      "reader did not wait for the folio lock in 10 s");

	kaddr = kmap_local_folio(lr->folio, 0);
	memset(kaddr, 0x5a, SZ_4K);
	kunmap_local(kaddr);
	flush_dcache_folio(lr->folio);
	folio_mark_uptodate(lr->folio);
	folio_mark_dirty(lr->folio);
	lr->locked = false;
	folio_unlock(lr->folio);

	KUNIT_ASSERT_TRUE_MSG(test, wait_for_completion_timeout(&lr->done,
								10 * HZ),
			      "reader not done 10 s after the unlock");
	KUNIT_EXPECT_EQ(test, lr->ret, (ssize_t)SZ_4K);
	for (i = 0; i < SZ_4K && lr->buf[i] == 0x5a; i++)
		;
	KUNIT_EXPECT_EQ_MSG(test, i, (size_t)SZ_4K,
			    "byte %zu is %#x, not the 0x5a written before the unlock",
			    i, i < SZ_4K ? lr->buf[i] : 0);
}

/* ---- zero fill -------------------------------------------------------- */

/*
 * A read of a fallocated PMD folio into a user buffer that faults after
 * two pages is a short read of exactly two pages of zeroes: the zero
 * fill reports how far it got instead of the size it was asked for.
 */
static void shmem_read_zero_fill_fault_is_short(struct kunit *test)
{
	struct sfile *sf = sfile_create(test, "always", PMD_BYTES);
	struct reader *r = reader_create(test);
	unsigned long ubuf = r->ubuf + UBUF_USABLE - 2 * SZ_4K;
	loff_t pos = SZ_4K;
	ssize_t ret;

	sfile_falloc(test, sf, 0, PMD_BYTES);
	need_pmd_folio(test, sf, 0);
	ret = vfs_read(sf->file, (char __user *)ubuf, 16 * SZ_4K, &pos);
	KUNIT_EXPECT_EQ(test, ret, (ssize_t)2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, pos, (loff_t)3 * SZ_4K);
	KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, (const void __user *)ubuf,
					     2 * SZ_4K), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(r->kbuf, 0, 2 * SZ_4K));
}

/* ---- shmem_get_folio(SGP_NOALLOC) ------------------------------------ */

/*
 * SGP_NOALLOC still fails with -ENOENT on a hole (userfaultfd's
 * UFFDIO_CONTINUE relies on it) and returns written and fallocated
 * folios; v1 made it succeed with no folio on a hole.
 */
static void shmem_read_sgp_noalloc_hole_enoent(struct kunit *test)
{
	struct sfile *sf = layout_build(test, &layouts[2]);
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

/* ---- batch lookups ----------------------------------------------------- */

/*
 * filemap_get_read_batch() is static unless shmem-batch's first patch made
 * it visible to KUnit (SHMEM_READ_KUNIT_HAVE_READ_BATCH in Kconfig): before
 * that patch the cases that call it fail here, before they hold a folio.
 */
static void read_batch(struct kunit *test, struct address_space *mapping,
		       pgoff_t index, pgoff_t max, struct folio_batch *fbatch)
{
#if IS_ENABLED(CONFIG_SHMEM_READ_KUNIT_HAVE_READ_BATCH)
	filemap_get_read_batch(mapping, index, max, fbatch);
#else
	KUNIT_FAIL_AND_ABORT(test,
			     "filemap_get_read_batch() is static: shmem-batch patch 1 is not applied");
#endif
}

static unsigned int batch_put(struct folio_batch *fbatch)
{
	unsigned int nr = folio_batch_count(fbatch), i;

	for (i = 0; i < nr; i++)
		folio_put(fbatch->folios[i]);
	folio_batch_reinit(fbatch);
	return nr;
}

/* filemap_get_read_batch() returns nothing when the start is past max. */
static void shmem_read_batch_start_past_max_empty(struct kunit *test)
{
	struct sfile *sf = layout_build(test, &layouts[0]);
	struct folio_batch fbatch;

	folio_batch_init(&fbatch);
	read_batch(test, sf->file->f_mapping, 10, 9, &fbatch);
	KUNIT_EXPECT_EQ(test, batch_put(&fbatch), 0);
}

/*
 * A large folio crossing max ends the batch: filemap_get_read_batch()
 * and filemap_get_folios_contig() return it alone, not the folio after
 * it, and the latter moves *start to the end of that folio.
 */
static void shmem_read_batch_large_folio_crossing_max(struct kunit *test)
{
	struct sfile *sf = layout_build(test, &layouts[3]);
	struct address_space *mapping = sf->file->f_mapping;
	const pgoff_t next = PMD_BYTES >> PAGE_SHIFT;
	struct folio_batch fbatch;
	pgoff_t start = 3;

	need_pmd_folio(test, sf, next);
	folio_batch_init(&fbatch);
	read_batch(test, mapping, 3, 100, &fbatch);
	KUNIT_EXPECT_EQ(test, folio_batch_count(&fbatch), 1);
	if (folio_batch_count(&fbatch))
		KUNIT_EXPECT_EQ(test, fbatch.folios[0]->index, 0);
	batch_put(&fbatch);

	KUNIT_EXPECT_EQ(test, filemap_get_folios_contig(mapping, &start, 100,
							&fbatch), 1);
	KUNIT_EXPECT_EQ(test, start, next);
	batch_put(&fbatch);

	/* max on the folio's last page still stops there */
	read_batch(test, mapping, 0, next - 1, &fbatch);
	KUNIT_EXPECT_EQ(test, batch_put(&fbatch), 1);
	/* one past it takes the next folio too */
	read_batch(test, mapping, 0, next, &fbatch);
	KUNIT_EXPECT_EQ(test, batch_put(&fbatch), 2);
}

/*
 * filemap_get_read_batch() fills a batch exactly when max is the last
 * index that fits, and stops after a folio that is not uptodate.
 */
static void shmem_read_batch_fills_exactly(struct kunit *test)
{
	struct sfile *sf = layout_build(test, &layouts[0]);
	struct address_space *mapping = sf->file->f_mapping;
	struct folio_batch fbatch;

	folio_batch_init(&fbatch);
	read_batch(test, mapping, 0, FOLIO_BATCH_SIZE - 1, &fbatch);
	KUNIT_EXPECT_EQ(test, folio_batch_count(&fbatch), FOLIO_BATCH_SIZE);
	if (folio_batch_count(&fbatch) == FOLIO_BATCH_SIZE)
		KUNIT_EXPECT_EQ(test, fbatch.folios[FOLIO_BATCH_SIZE - 1]->index,
				FOLIO_BATCH_SIZE - 1);
	batch_put(&fbatch);
	read_batch(test, mapping, 0, FOLIO_BATCH_SIZE - 2, &fbatch);
	KUNIT_EXPECT_EQ(test, batch_put(&fbatch), FOLIO_BATCH_SIZE - 1);

	sf = layout_build(test, &layouts[2]);
	/* pages 0..31 are fallocated (not uptodate): the first one ends it */
	read_batch(test, sf->file->f_mapping, 0, 20, &fbatch);
	KUNIT_EXPECT_EQ(test, batch_put(&fbatch), 1);
}

/* ---- truncation racing reads ------------------------------------------ */

#define RACE_PAGES	16
#define RACE_CUT	(10 * SZ_PAGE + 100)
#define RACE_ROUNDS	2000
/*
 * Rounds go on past RACE_ROUNDS, up to this many, until a read has
 * overlapped a cut: reads done without folio references (rcu-free) never
 * wait for the truncation, so they overlap one rarely.
 */
#define RACE_MAX_ROUNDS	(20 * RACE_ROUNDS)

enum race_mode { RACE_SHRINK, RACE_PUNCH };

struct race {
	struct sfile *sf;
	enum race_mode mode;
	atomic_t phase;		/* 4 * round + 0 full, 1 cutting, 2 cut, 3 refill */
	atomic_t judged_cut;	/* reads judged entirely inside phase 2 */
	wait_queue_head_t wq;
	u8 *buf;
	unsigned long reads, judged, overlapped, bad;
	loff_t bad_off;
	u8 bad_got;
	struct task_struct *reader;
	struct completion exited;
};

/*
 * One read of the whole file, judged against the phase it ran in: bytes
 * below the cut are always the pattern, every byte is the pattern or
 * zero, and a read that began after the cut completed sees zeroes from
 * the cut on.  (Which folio a read overlapping the cut may still copy is
 * pinned deterministically by shmem_read_cut_during_copy_no_stale_bytes.)
 */
static void race_judge(struct race *rc, int p0, int p1, ssize_t n)
{
	const u8 *want = rc->sf->want;
	loff_t i;

	if (p0 / 4 != p1 / 4 || p1 % 4 == 3 || n < 0)
		return;
	rc->judged++;
	if (p0 % 4 != p1 % 4)
		rc->overlapped++;
	for (i = 0; i < n; i++) {
		u8 got = rc->buf[i];
		bool ok;

		if (i < RACE_CUT)
			ok = got == want[i];
		else if (p0 % 4 == 2)
			ok = !got;
		else
			ok = !got || got == want[i];
		if (!ok) {
			if (!rc->bad++) {
				rc->bad_off = i;
				rc->bad_got = got;
			}
			break;
		}
	}
	if (p0 % 4 == 2 && p1 % 4 == 2) {
		atomic_inc(&rc->judged_cut);
		wake_up(&rc->wq);
	}
}

static int race_reader(void *arg)
{
	struct race *rc = arg;

	while (!kthread_should_stop()) {
		loff_t pos = 0;
		int p0 = atomic_read_acquire(&rc->phase);
		ssize_t n = kernel_read(rc->sf->file, rc->buf, rc->sf->size,
					&pos);
		int p1 = atomic_read_acquire(&rc->phase);

		rc->reads++;
		race_judge(rc, p0, p1, n);
		cond_resched();
	}
	complete(&rc->exited);
	return 0;
}

/* Stop the reader; an action, so that a failed assertion stops it too. */
static void race_stop_reader(void *arg)
{
	struct race *rc = arg;

	kthread_stop(rc->reader);
	wait_for_completion(&rc->exited);
	put_task_struct(rc->reader);
}

/* Cut the file's tail from RACE_CUT on: truncate down and up, or punch. */
static int cut_tail(struct sfile *sf, enum race_mode mode)
{
	int ret;

	if (mode == RACE_PUNCH)
		return vfs_fallocate(sf->file,
				     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				     RACE_CUT, sf->size - RACE_CUT);
	ret = vfs_truncate(&sf->file->f_path, RACE_CUT);
	return ret ?: vfs_truncate(&sf->file->f_path, sf->size);
}

static void race_cut(struct kunit *test, struct race *rc)
{
	KUNIT_ASSERT_EQ(test, cut_tail(rc->sf, rc->mode), 0);
}

/* How a race case cuts off the file's tail */
struct race_case {
	const char *name;
	enum race_mode mode;
};

static const struct race_case race_cases[] = {
	{ "truncate-shrink-regrow", RACE_SHRINK },
	{ "punch-hole", RACE_PUNCH },
};

KUNIT_ARRAY_PARAM_DESC(race, race_cases, name);

/*
 * A reader kthread reads the whole file in a loop while this thread cuts
 * off its tail (truncate down and up again, or punch a hole) and writes
 * it back, RACE_ROUNDS times (more, up to RACE_MAX_ROUNDS, until a read
 * overlapped a cut); no read may return a byte from a folio the cut had
 * removed.  Bounded by the round count; reads are counted.  Slow (up to
 * 40 000 rounds): make test runs it in its races stage.  It needs a
 * second CPU: on one, a non-preemptible kernel may never run the reader
 * in the middle of a cut.
 */
static void shmem_read_truncate_race_no_stale_bytes(struct kunit *test)
{
	const struct race_case *c = test->param_value;
	struct task_struct *task;
	struct race *rc;
	int round, seen;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 CPUs for the reader to overlap a cut, %u online",
			   num_online_cpus());

	rc = kunit_kzalloc(test, sizeof(*rc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rc);
	rc->mode = c->mode;
	rc->sf = sfile_create(test, "never", RACE_PAGES * SZ_PAGE);
	sfile_write(test, rc->sf, 0, rc->sf->size, 8);
	rc->buf = kunit_kmalloc(test, rc->sf->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rc->buf);
	init_waitqueue_head(&rc->wq);
	init_completion(&rc->exited);

	task = kthread_run(race_reader, rc, "shmem_read_race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	rc->reader = task;
	defer(test, race_stop_reader, rc);

	for (round = 0; (round < RACE_ROUNDS || !rc->overlapped) &&
	     round < RACE_MAX_ROUNDS && !rc->bad; round++) {
		atomic_set_release(&rc->phase, 4 * round + 1);
		race_cut(test, rc);
		seen = atomic_read(&rc->judged_cut);
		atomic_set_release(&rc->phase, 4 * round + 2);
		/* let the reader judge at least one read of the cut file */
		if (!wait_event_timeout(rc->wq,
					atomic_read(&rc->judged_cut) != seen,
					30 * HZ)) {
			KUNIT_FAIL(test, "reader made no progress in round %d",
				   round);
			break;
		}
		atomic_set_release(&rc->phase, 4 * round + 3);
		sfile_write(test, rc->sf, RACE_CUT, rc->sf->size - RACE_CUT, 8);
		atomic_set_release(&rc->phase, 4 * round + 4);
	}
	kunit_release_action(test, race_stop_reader, rc);

	kunit_info(test, "%s: %d rounds, %lu reads, %lu judged, %lu overlapped a cut, %lu bad",
		   c->name, round, rc->reads, rc->judged, rc->overlapped, rc->bad);
	KUNIT_EXPECT_EQ_MSG(test, rc->bad, 0,
			    "first bad byte at %lld: %#x, want %#x or 0",
			    rc->bad_off, rc->bad_got, rc->sf->want[rc->bad_off]);
	KUNIT_EXPECT_GT_MSG(test, rc->overlapped, 0,
			    "no read overlapped a cut: the race was not exercised");
}

/* ---- a cut in the middle of a read ---------------------------------- */

/*
 * The reader's user buffer is a private mapping of a file whose fault
 * handler, on the first fault of buffer page PAUSE_PAGE, lets a kthread
 * cut the file and waits for it.  The read is then stopped right inside
 * the copy of the page holding RACE_CUT, with the rest of its batch
 * looked up and referenced, for as long as the cut takes.
 */
#define PAUSE_PAGE	(RACE_CUT >> PAGE_SHIFT)

struct pause {
	struct sfile *sf;
	enum race_mode mode;
	bool paused;
	int cut_ret;
	struct completion at_pause, resume, exited;
};

static vm_fault_t pause_fault(struct vm_fault *vmf)
{
	struct pause *pz = vmf->vma->vm_file->private_data;
	struct page *page;

	if (vmf->pgoff == PAUSE_PAGE && !pz->paused) {
		pz->paused = true;
		complete(&pz->at_pause);
		wait_for_completion(&pz->resume);
	}
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return VM_FAULT_OOM;
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct pause_vm_ops = {
	.fault = pause_fault,
};

static int pause_mmap_prepare(struct vm_area_desc *desc)
{
	desc->vm_ops = &pause_vm_ops;
	return 0;
}

static const struct file_operations pause_fops = {
	.mmap_prepare = pause_mmap_prepare,
};

static int pause_cutter(void *arg)
{
	struct pause *pz = arg;

	if (wait_for_completion_timeout(&pz->at_pause, 60 * HZ))
		pz->cut_ret = cut_tail(pz->sf, pz->mode);
	else
		pz->cut_ret = -ETIMEDOUT;
	complete(&pz->resume);
	complete(&pz->exited);
	return 0;
}

/*
 * A read that is inside the copy of the folio holding the cut when the
 * tail is truncated (down and up again) or punched returns the pattern
 * below the cut and zeroes after it: the folios past the cut, removed
 * while the read held them in its batch, are not copied.  v1's batch,
 * which never looked at folio->mapping, returned their old bytes.
 */
static void shmem_read_cut_during_copy_no_stale_bytes(struct kunit *test)
{
	const struct race_case *c = test->param_value;
	struct task_struct *task;
	struct reader *r = reader_create(test);
	struct file *bufile;
	struct pause *pz;
	unsigned long ubuf;
	loff_t pos = 0;
	ssize_t n;

	pz = kunit_kzalloc(test, sizeof(*pz), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pz);
	pz->mode = c->mode;
	pz->sf = sfile_create(test, "never", RACE_PAGES * SZ_PAGE);
	sfile_write(test, pz->sf, 0, pz->sf->size, 9);
	memset(pz->sf->want + RACE_CUT, 0, pz->sf->size - RACE_CUT);
	init_completion(&pz->at_pause);
	init_completion(&pz->resume);
	init_completion(&pz->exited);

	bufile = anon_inode_getfile("shmem_read_pause", &pause_fops, pz, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(bufile));
	defer(test, mm_test_fput, bufile);
	ubuf = kunit_vm_mmap(test, bufile, 0, pz->sf->size,
			     PROT_READ | PROT_WRITE, MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, !ubuf || IS_ERR_VALUE(ubuf));

	task = kthread_run(pause_cutter, pz, "shmem_read_cut");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	n = vfs_read(pz->sf->file, (char __user *)ubuf, pz->sf->size, &pos);
	if (!pz->paused) {
		KUNIT_FAIL(test, "the read never faulted on buffer page %lu",
			   (unsigned long)PAUSE_PAGE);
		complete(&pz->at_pause);
	}
	wait_for_completion(&pz->exited);
	KUNIT_ASSERT_EQ_MSG(test, pz->cut_ret, 0, "cutting the tail failed");
	KUNIT_ASSERT_EQ(test, n, (ssize_t)pz->sf->size);
	KUNIT_ASSERT_EQ(test, copy_from_user(r->kbuf, (const void __user *)ubuf,
					     n), 0);
	check_bytes(test, r, pz->sf, c->name, 0, n);
}

static struct kunit_case shmem_read_cases[] = {
	KUNIT_CASE_PARAM(shmem_read_layout_bytes_match, layout_gen_params),
	KUNIT_CASE(shmem_read_hwpoison_fallback_exact_bytes),
	KUNIT_CASE(shmem_read_hwpoison_fallback_stops_at_poison),
	KUNIT_CASE(shmem_read_refcounts_unchanged),
	KUNIT_CASE(shmem_read_waits_for_locked_folio),
	KUNIT_CASE(shmem_read_zero_fill_fault_is_short),
	KUNIT_CASE(shmem_read_sgp_noalloc_hole_enoent),
	KUNIT_CASE(shmem_read_batch_start_past_max_empty),
	KUNIT_CASE(shmem_read_batch_large_folio_crossing_max),
	KUNIT_CASE(shmem_read_batch_fills_exactly),
	KUNIT_CASE_PARAM(shmem_read_cut_during_copy_no_stale_bytes,
			 race_gen_params),
	{}
};

static struct kunit_suite shmem_read_suite = {
	.name = "shmem_read",
	.test_cases = shmem_read_cases,
};

/*
 * The slow race, in a suite of its own so that make test's races stage can
 * select it by suite name ("*_race") next to lockless_read_race.
 */
static struct kunit_case shmem_read_race_cases[] = {
	KUNIT_CASE_PARAM_ATTR(shmem_read_truncate_race_no_stale_bytes,
			      race_gen_params, { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite shmem_read_race_suite = {
	.name = "shmem_read_race",
	.test_cases = shmem_read_race_cases,
};

kunit_test_suites(&shmem_read_suite, &shmem_read_race_suite);

MODULE_DESCRIPTION("KUnit tests for the tmpfs read path (shmem-batch)");
MODULE_LICENSE("GPL");
