// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for the mm suites: see mm_kunit_helpers.h.
 */

#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/huge_mm.h>
#include <linux/kdev_t.h>
#include <linux/major.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/ramfs.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/swap.h>
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

/* ---- a swap device ---------------------------------------------------- */

/*
 * The node of the first RAM disk, at the root of the rootfs (no /dev yet);
 * kthreads resolve paths in an empty nullfs, so every path below is looked
 * up with the fs_struct of init (scoped_with_init_fs())
 */
#define MM_KUNIT_SWAP_DEV	"/mmkunit-ram0"

/*
 * swapon() and swapoff() as a task calls them: the kernel has no other way
 * to switch swap on, and the call takes its path from user memory.  Only on
 * the architectures the suites are run on.
 */
#if defined(CONFIG_X86_64)
asmlinkage long __x64_sys_swapon(const struct pt_regs *regs);
asmlinkage long __x64_sys_swapoff(const struct pt_regs *regs);

static long mm_kunit_swap_syscall(bool on, unsigned long path)
{
	struct pt_regs regs = { .di = path };

	return on ? __x64_sys_swapon(&regs) : __x64_sys_swapoff(&regs);
}
#elif defined(CONFIG_ARM64)
asmlinkage long __arm64_sys_swapon(const struct pt_regs *regs);
asmlinkage long __arm64_sys_swapoff(const struct pt_regs *regs);

static long mm_kunit_swap_syscall(bool on, unsigned long path)
{
	/* The wrappers take the first argument from orig_x0 */
	struct pt_regs regs = { .orig_x0 = path, .regs = { path } };

	return on ? __arm64_sys_swapon(&regs) : __arm64_sys_swapoff(&regs);
}
#else
static long mm_kunit_swap_syscall(bool on, unsigned long path)
{
	return -EOPNOTSUPP;
}
#endif

unsigned long mm_kunit_user_page(void)
{
	int ret = kunit_attach_mm();

	if (ret)
		return ret;
	return vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
}
EXPORT_SYMBOL_GPL(mm_kunit_user_page);

/* swapon() (@on) or swapoff() of the RAM disk, from this kthread */
static long mm_kunit_swap_call(bool on)
{
	unsigned long addr;
	long ret;

	addr = mm_kunit_user_page();
	if (IS_ERR_VALUE(addr))
		return addr;
	if (copy_to_user((void __user *)addr, MM_KUNIT_SWAP_DEV,
			 sizeof(MM_KUNIT_SWAP_DEV)))
		ret = -EFAULT;
	else
		scoped_with_init_fs()
			ret = mm_kunit_swap_syscall(on, addr);
	vm_munmap(addr, PAGE_SIZE);
	return ret;
}

/* The block device node of the first RAM disk, unless it is there */
static int mm_kunit_swap_node(void)
{
	struct dentry *dentry;
	struct path path;
	int err;

	scoped_with_init_fs()
		dentry = start_creating_path(AT_FDCWD, MM_KUNIT_SWAP_DEV, &path, 0);
	if (IS_ERR(dentry))
		return PTR_ERR(dentry) == -EEXIST ? 0 : PTR_ERR(dentry);
	err = vfs_mknod(mnt_idmap(path.mnt), d_inode(path.dentry), dentry,
			S_IFBLK | 0600, MKDEV(RAMDISK_MAJOR, 0), NULL);
	end_creating_path(&path, dentry);
	return err;
}

/* What mkswap writes: a version 1 header over the whole device */
static int mm_kunit_swap_header(void)
{
	union swap_header *hdr;
	loff_t pos = 0, size;
	struct file *file;
	ssize_t written;
	int err;

	scoped_with_init_fs()
		file = filp_open(MM_KUNIT_SWAP_DEV, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	size = i_size_read(file->f_mapping->host);
	hdr = kzalloc_obj(*hdr, GFP_KERNEL);
	if (!hdr) {
		err = -ENOMEM;
		goto out;
	}
	hdr->info.version = 1;
	hdr->info.last_page = (size >> PAGE_SHIFT) - 1;
	memcpy(hdr->magic.magic, "SWAPSPACE2", sizeof(hdr->magic.magic));
	written = kernel_write(file, hdr, sizeof(*hdr), &pos);
	if (written != sizeof(*hdr))
		err = written < 0 ? written : -EIO;
	else
		err = vfs_fsync(file, 0);
	kfree(hdr);
out:
	filp_close(file, NULL);
	return err;
}

static void mm_kunit_swap_off(void *unused)
{
	long ret;

	/*
	 * The case's files first: a kthread's last fput() is deferred, and
	 * swapoff() would swap their pages back in to files about to go
	 */
	flush_delayed_fput();
	ret = mm_kunit_swap_call(false);
	if (ret)
		pr_warn("mm_kunit: swapoff %s: %ld\n", MM_KUNIT_SWAP_DEV, ret);
	/* Until swapoff()'s own fput() ran, the next swapon() is -EBUSY */
	flush_delayed_fput();
}

void mm_kunit_need_swap(struct kunit *test)
{
	long ret;

	if (total_swap_pages)
		return;
	if (!IS_ENABLED(CONFIG_SWAP))
		kunit_skip(test, "config: CONFIG_SWAP is off");
	/* A module could not be loaded before userspace */
	if (!IS_BUILTIN(CONFIG_BLK_DEV_RAM))
		kunit_skip(test, "config: no swap, and no RAM disk for it (BLK_DEV_RAM)");
	if (!IS_ENABLED(CONFIG_X86_64) && !IS_ENABLED(CONFIG_ARM64))
		kunit_skip(test, "machine: no swap; swapon() here: x86_64, arm64 only");
	ret = mm_kunit_swap_node();
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "mknod %s", MM_KUNIT_SWAP_DEV);
	ret = mm_kunit_swap_header();
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "swap header on %s", MM_KUNIT_SWAP_DEV);
	flush_delayed_fput();
	ret = mm_kunit_swap_call(true);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "swapon %s", MM_KUNIT_SWAP_DEV);
	mm_kunit_defer(test, mm_kunit_swap_off, NULL);
	KUNIT_ASSERT_GT(test, total_swap_pages, 0);
	kunit_info(test, "swap: %s, %ld pages\n", MM_KUNIT_SWAP_DEV,
		   total_swap_pages);
}
EXPORT_SYMBOL_GPL(mm_kunit_need_swap);

pgoff_t mm_kunit_nr_swapped(struct mm_kunit_file *kf, pgoff_t first,
			    pgoff_t nr)
{
	struct address_space *mapping = kf->file->f_mapping;
	pgoff_t index, swapped = 0;

	for (index = first; index < first + nr; index++)
		if (xa_is_value(xa_load(&mapping->i_pages, index)))
			swapped++;
	return swapped;
}
EXPORT_SYMBOL_GPL(mm_kunit_nr_swapped);

void mm_kunit_swap_out(struct kunit *test, struct mm_kunit_file *kf,
		       pgoff_t first, pgoff_t nr)
{
	struct address_space *mapping = kf->file->f_mapping;
	unsigned int pass;
	pgoff_t index;

	KUNIT_ASSERT_GT_MSG(test, total_swap_pages, 0, "no swap device");
	/* A folio in a per-CPU batch is not on the LRU yet; a split one is */
	for (pass = 0; pass < 4; pass++) {
		if (mm_kunit_nr_swapped(kf, first, nr) == nr)
			return;
		lru_add_drain_all();
		for (index = first; index < first + nr; index++) {
			struct folio *folio;

			if (xa_is_value(xa_load(&mapping->i_pages, index)))
				continue;
			folio = mm_kunit_isolate_folio(kf, index);
			if (folio)
				mm_kunit_reclaim_folio(folio);
		}
	}
	KUNIT_ASSERT_EQ_MSG(test, mm_kunit_nr_swapped(kf, first, nr), nr,
			    "pages %lu-%lu: not all swapped out after %u reclaim passes",
			    first, first + nr - 1, pass);
}
EXPORT_SYMBOL_GPL(mm_kunit_swap_out);

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
