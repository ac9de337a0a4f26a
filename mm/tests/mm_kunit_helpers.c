// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for the mm suites: see mm_kunit_helpers.h.
 */

#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/huge_mm.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/ramfs.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "../internal.h"
#include "mm_kunit_helpers.h"
#include "mm_test_util.h"

void mm_kunit_defer(struct kunit *test, kunit_action_t *action, void *arg)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, action, arg), 0);
}
EXPORT_SYMBOL_GPL(mm_kunit_defer);

void mm_kunit_vfree(void *addr)
{
	vfree(addr);
}
EXPORT_SYMBOL_GPL(mm_kunit_vfree);

static void tracepoint_match(struct tracepoint *tp, void *priv)
{
	const char **name = priv;

	if (*name && !strcmp(tp->name, *name))
		*name = NULL;
}

bool mm_kunit_tracepoint_exists(const char *name)
{
	const char *want = name;

	for_each_kernel_tracepoint(tracepoint_match, &want);
	return !want;
}
EXPORT_SYMBOL_GPL(mm_kunit_tracepoint_exists);

/* ---- a file and the bytes it must read as ---------------------------- */

/* A file on a private mount of @type (tmpfs mounted huge=@huge, or ramfs) */
static struct mm_kunit_file *file_create(struct kunit *test, const char *type,
					 const char *huge, loff_t size)
{
	struct vfsmount *mnt = mm_test_mount(test, type, huge);
	struct mm_kunit_file *kf = kunit_kzalloc(test, sizeof(*kf), GFP_KERNEL);
	struct inode *inode;

	KUNIT_ASSERT_NOT_NULL(test, kf);
	if (!strcmp(type, "ramfs")) {
		inode = ramfs_get_inode(mnt->mnt_sb, NULL, S_IFREG | 0600, 0);
		KUNIT_ASSERT_NOT_NULL(test, inode);
		kf->file = alloc_file_pseudo(inode, mnt, "mm_kunit", O_RDWR,
					     &ramfs_file_operations);
		if (IS_ERR(kf->file))
			iput(inode);
	} else {
		kf->file = shmem_file_setup_with_mnt(mnt, "mm_kunit", size,
						     mk_vma_flags(VMA_NORESERVE_BIT));
	}
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(kf->file), "%s file: %ld", type,
			       PTR_ERR(kf->file));
	mm_kunit_defer(test, mm_test_fput, kf->file);
	kf->size = size;
	kf->want = vzalloc(size);
	KUNIT_ASSERT_NOT_NULL(test, kf->want);
	mm_kunit_defer(test, mm_kunit_vfree, kf->want);
	return kf;
}

struct mm_kunit_file *mm_kunit_file_create(struct kunit *test,
					   const char *huge, loff_t size)
{
	return file_create(test, "tmpfs", huge, size);
}
EXPORT_SYMBOL_GPL(mm_kunit_file_create);

const char *const mm_kunit_fs_name[MM_KUNIT_NR_FS] = {
	[MM_KUNIT_TMPFS] = "tmpfs",
	[MM_KUNIT_TMPFS_HUGE] = "tmpfs huge=always",
	[MM_KUNIT_RAMFS] = "ramfs",
};
EXPORT_SYMBOL_GPL(mm_kunit_fs_name);

struct mm_kunit_file *mm_kunit_fs_file_create(struct kunit *test,
					      enum mm_kunit_fs fs, loff_t size)
{
	if (fs == MM_KUNIT_RAMFS)
		return file_create(test, "ramfs", NULL, size);
	return file_create(test, "tmpfs",
			   fs == MM_KUNIT_TMPFS_HUGE ? "always" : "never", size);
}
EXPORT_SYMBOL_GPL(mm_kunit_fs_file_create);

void mm_kunit_file_drop(struct kunit *test, struct mm_kunit_file *kf)
{
	struct file *file = kf->file;

	kunit_remove_action(test, mm_test_fput, file);
	kf->file = NULL;
	__fput_sync(file);
}
EXPORT_SYMBOL_GPL(mm_kunit_file_drop);

void mm_kunit_file_write(struct kunit *test, struct mm_kunit_file *kf,
			 loff_t off, size_t len, u8 seed)
{
	loff_t pos = off;
	ssize_t ret;
	size_t i;

	KUNIT_ASSERT_LE(test, off + (loff_t)len, kf->size);
	for (i = 0; i < len; i++)
		kf->want[off + i] = mm_test_pattern(off + i, seed);
	ret = kernel_write(kf->file, kf->want + off, len, &pos);
	KUNIT_ASSERT_EQ_MSG(test, ret, (ssize_t)len, "write %lld+%zu", off, len);
}
EXPORT_SYMBOL_GPL(mm_kunit_file_write);

void mm_kunit_file_falloc(struct kunit *test, struct mm_kunit_file *kf,
			  loff_t off, loff_t len)
{
	KUNIT_ASSERT_EQ_MSG(test, vfs_fallocate(kf->file, FALLOC_FL_KEEP_SIZE,
						off, len), 0,
			    "fallocate %lld+%lld", off, len);
}
EXPORT_SYMBOL_GPL(mm_kunit_file_falloc);

void mm_kunit_file_punch(struct kunit *test, struct mm_kunit_file *kf,
			 loff_t off, loff_t len)
{
	KUNIT_ASSERT_EQ_MSG(test, vfs_fallocate(kf->file, FALLOC_FL_PUNCH_HOLE |
						FALLOC_FL_KEEP_SIZE, off, len), 0,
			    "punch %lld+%lld", off, len);
}
EXPORT_SYMBOL_GPL(mm_kunit_file_punch);

struct folio *mm_kunit_file_folio(struct mm_kunit_file *kf, pgoff_t index)
{
	struct folio *folio = filemap_get_folio(kf->file->f_mapping, index);

	return IS_ERR(folio) ? NULL : folio;
}
EXPORT_SYMBOL_GPL(mm_kunit_file_folio);

void mm_kunit_need_pmd_folio(struct kunit *test, struct mm_kunit_file *kf,
			     pgoff_t index)
{
	struct folio *folio = mm_kunit_file_folio(kf, index);
	size_t size = folio ? folio_size(folio) : 0;

	if (folio)
		folio_put(folio);
	KUNIT_ASSERT_GE_MSG(test, size, (size_t)MM_KUNIT_PMD_BYTES,
			    "no PMD-size folio at index %lu", index);
}
EXPORT_SYMBOL_GPL(mm_kunit_need_pmd_folio);

int mm_kunit_split_folio(struct mm_kunit_file *kf, pgoff_t index,
			 struct folio *expect)
{
	struct folio *folio = mm_kunit_file_folio(kf, index);
	int err = -EINVAL;

	if (!folio)
		return -ENOENT;
	folio_lock(folio);
	if (folio_test_large(folio) && (!expect || folio == expect))
		err = split_folio(folio);
	folio_unlock(folio);
	folio_put(folio);
	return err;
}
EXPORT_SYMBOL_GPL(mm_kunit_split_folio);

struct folio *mm_kunit_isolate_folio(struct mm_kunit_file *kf, pgoff_t index)
{
	struct folio *folio = mm_kunit_file_folio(kf, index);
	bool isolated;

	if (!folio)
		return NULL;
	isolated = folio_isolate_lru(folio);
	folio_put(folio);
	return isolated ? folio : NULL;
}
EXPORT_SYMBOL_GPL(mm_kunit_isolate_folio);

bool mm_kunit_migrate_folio(struct folio *folio)
{
	struct migration_target_control mtc = {
		.nid = NUMA_NO_NODE,
		.gfp_mask = GFP_HIGHUSER_MOVABLE,
		.reason = MR_SYSCALL,
	};
	unsigned int moved = 0;
	LIST_HEAD(list);

	list_add(&folio->lru, &list);
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    folio_nr_pages(folio));
	if (migrate_pages(&list, alloc_migration_target, NULL,
			  (unsigned long)&mtc, MIGRATE_SYNC, MR_SYSCALL,
			  &moved))
		putback_movable_pages(&list);
	return moved;
}
EXPORT_SYMBOL_GPL(mm_kunit_migrate_folio);

bool mm_kunit_reclaim_folio(struct folio *folio)
{
	LIST_HEAD(list);

	list_add(&folio->lru, &list);
	return reclaim_pages(&list) > 0;
}
EXPORT_SYMBOL_GPL(mm_kunit_reclaim_folio);

const struct mm_kunit_cut_mode mm_kunit_cut_modes[2] = {
	{ "truncate-shrink-regrow", MM_KUNIT_CUT_SHRINK },
	{ "punch-hole", MM_KUNIT_CUT_PUNCH },
};
EXPORT_SYMBOL_GPL(mm_kunit_cut_modes);

int mm_kunit_file_cut(struct mm_kunit_file *kf, loff_t from,
		      enum mm_kunit_cut cut)
{
	int ret;

	if (cut == MM_KUNIT_CUT_PUNCH)
		return vfs_fallocate(kf->file,
				     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				     from, kf->size - from);
	ret = vfs_truncate(&kf->file->f_path, from);
	return ret ?: vfs_truncate(&kf->file->f_path, kf->size);
}
EXPORT_SYMBOL_GPL(mm_kunit_file_cut);

/* ---- readers --------------------------------------------------------- */

const char *const mm_kunit_iter_name[MM_KUNIT_NR_ITERS] = {
	[MM_KUNIT_KVEC] = "kvec",
	[MM_KUNIT_BVEC] = "bvec",
	[MM_KUNIT_UBUF] = "ubuf",
};
EXPORT_SYMBOL_GPL(mm_kunit_iter_name);

struct mm_kunit_reader *mm_kunit_reader_create(struct kunit *test)
{
	struct mm_kunit_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->kbuf = vmalloc(MM_KUNIT_READER_LEN);
	KUNIT_ASSERT_NOT_NULL(test, r->kbuf);
	mm_kunit_defer(test, mm_kunit_vfree, r->kbuf);
	r->ubuf = kunit_vm_mmap(test, NULL, 0, MM_KUNIT_READER_LEN,
				PROT_READ | PROT_WRITE,
				MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, r->ubuf, 0, "kunit_vm_mmap failed");
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(r->ubuf));
	KUNIT_ASSERT_EQ(test, vm_munmap(r->ubuf + MM_KUNIT_READER_USABLE,
					MM_KUNIT_READER_LEN -
					MM_KUNIT_READER_USABLE), 0);
	return r;
}
EXPORT_SYMBOL_GPL(mm_kunit_reader_create);

/* A read into the pages of r->kbuf, described by a bio_vec array */
static ssize_t read_bvec(struct kunit *test, struct mm_kunit_reader *r,
			 struct file *file, loff_t *pos, size_t len)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE), i;
	struct iov_iter iter;
	struct bio_vec *bv;
	ssize_t ret;

	bv = kvmalloc_array(nr, sizeof(*bv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bv);
	for (i = 0; i < nr; i++)
		bvec_set_page(&bv[i], vmalloc_to_page(r->kbuf + i * PAGE_SIZE),
			      min_t(size_t, PAGE_SIZE, len - i * PAGE_SIZE), 0);
	iov_iter_bvec(&iter, ITER_DEST, bv, nr, len);
	ret = vfs_iter_read(file, &iter, pos, 0);
	kvfree(bv);
	return ret;
}

ssize_t mm_kunit_read(struct kunit *test, struct mm_kunit_reader *r,
		      struct mm_kunit_file *kf, enum mm_kunit_iter iter,
		      loff_t off, size_t len)
{
	loff_t pos = off;
	u8 scratch[64];
	ssize_t ret;

	if (!r)
		return kernel_read(kf->file, scratch, min(len, sizeof(scratch)),
				   &pos);
	KUNIT_ASSERT_LE(test, len, (size_t)MM_KUNIT_READER_USABLE);
	memset(r->kbuf, 0xa5, len);
	switch (iter) {
	case MM_KUNIT_KVEC:
		return kernel_read(kf->file, r->kbuf, len, &pos);
	case MM_KUNIT_BVEC:
		return read_bvec(test, r, kf->file, &pos, len);
	case MM_KUNIT_UBUF:
		KUNIT_ASSERT_EQ(test, clear_user((void __user *)r->ubuf, len), 0);
		ret = vfs_read(kf->file, (char __user *)r->ubuf, len, &pos);
		if (ret > 0)
			KUNIT_ASSERT_EQ(test,
					copy_from_user(r->kbuf, (const void __user *)r->ubuf,
						       ret), 0);
		return ret;
	default:
		KUNIT_FAIL_AND_ABORT(test, "no reader %d", iter);
	}
	return -EINVAL;
}
EXPORT_SYMBOL_GPL(mm_kunit_read);

int mm_kunit_check_bytes(struct kunit *test, const u8 *got, const u8 *want,
			 loff_t off, size_t n, const char *what)
{
	size_t i;

	if (!memcmp(got, want, n))
		return 0;
	for (i = 0; i < n && got[i] == want[i]; i++)
		;
	KUNIT_FAIL(test, "%s: byte at file offset %lld is %#x, want %#x",
		   what, off + i, got[i], want[i]);
	return -EINVAL;
}
EXPORT_SYMBOL_GPL(mm_kunit_check_bytes);

int mm_kunit_read_and_check(struct kunit *test, struct mm_kunit_reader *r,
			    struct mm_kunit_file *kf, enum mm_kunit_iter iter,
			    loff_t off, size_t len)
{
	size_t want = off >= kf->size ? 0 : min_t(loff_t, len, kf->size - off);
	char what[96];
	ssize_t ret;

	snprintf(what, sizeof(what), "%s read %zu at %lld",
		 mm_kunit_iter_name[iter], len, off);
	ret = mm_kunit_read(test, r, kf, iter, off, len);
	if (ret != (ssize_t)want) {
		KUNIT_FAIL(test, "%s returned %zd, want %zu", what, ret, want);
		return -EINVAL;
	}
	return mm_kunit_check_bytes(test, r->kbuf, kf->want + off, off, want,
				    what);
}
EXPORT_SYMBOL_GPL(mm_kunit_read_and_check);

/* ---- user mappings: THPs and their PMDs ------------------------------ */

pmd_t *mm_kunit_user_pmd(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd = pgd_offset(mm, addr);
	p4d_t *p4d;
	pud_t *pud;

	if (pgd_none(pgdp_get(pgd)))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(p4dp_get(p4d)))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(pudp_get(pud)) || !pud_present(pudp_get(pud)))
		return NULL;
	return pmd_offset(pud, addr);
}
EXPORT_SYMBOL_GPL(mm_kunit_user_pmd);

enum mm_kunit_pmd mm_kunit_pmd_state(struct mm_struct *mm, unsigned long addr)
{
	enum mm_kunit_pmd state = MM_KUNIT_PMD_NONE;
	pmd_t *pmdp, pmd;

	mmap_read_lock(mm);
	pmdp = mm_kunit_user_pmd(mm, addr);
	if (pmdp) {
		pmd = pmdp_get_lockless(pmdp);
		if (pmd_present(pmd) && pmd_trans_huge(pmd))
			state = MM_KUNIT_PMD_HUGE;
		else if (!pmd_none(pmd) && pmd_present(pmd))
			state = MM_KUNIT_PMD_TABLE;
	}
	mmap_read_unlock(mm);
	return state;
}
EXPORT_SYMBOL_GPL(mm_kunit_pmd_state);

struct folio *mm_kunit_pmd_folio(struct mm_struct *mm, unsigned long addr)
{
	struct folio *folio = NULL;
	spinlock_t *ptl;	/* the PMD's page table lock */
	pmd_t *pmdp;

	mmap_read_lock(mm);
	pmdp = mm_kunit_user_pmd(mm, addr);
	if (pmdp) {
		ptl = pmd_lock(mm, pmdp);
		if (pmd_present(*pmdp) && pmd_trans_huge(*pmdp)) {
			folio = page_folio(pmd_page(*pmdp));
			folio_get(folio);
		}
		spin_unlock(ptl);
	}
	mmap_read_unlock(mm);
	return folio;
}
EXPORT_SYMBOL_GPL(mm_kunit_pmd_folio);

MODULE_DESCRIPTION("Helpers for the mm KUnit suites");
MODULE_LICENSE("GPL");
