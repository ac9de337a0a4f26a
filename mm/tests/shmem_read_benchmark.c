// SPDX-License-Identifier: GPL-2.0
/*
 * Sequential tmpfs read throughput, the fio job of the shmem-batch series
 * (fio --rw=read --ioengine=sync) done in the kernel: a file on a private
 * tmpfs mount is read start to end with read(2)-sized requests into a
 * user buffer (vfs_read() on a kunit_vm_mmap() area, as fio's sync engine
 * does), for 4 KiB, 64 KiB and 1 MiB blocks, huge=never and huge=always,
 * and written, fallocated and hole files.
 *
 * shmem_seq_read_throughput measures shmem's own read path: on a kernel
 * with the rcu-free series' lockless_page_cache_read switch it runs with
 * the switch off (and fails if a read was copied without references
 * anyway), so that a written file's folios, which become hot and get
 * PG_rcu_free after two passes, are still read by shmem_file_read_iter()'s
 * loop.  Its comparison is between kernels (with and without shmem-batch),
 * so every line has variant=-; run it with make bench-compare.
 *
 * shmem_seq_read_lockless reads the same files with the switch on
 * (variant=lockless) and reports, per sample, the MiB that were copied
 * without folio references (bench=shmem_seq_read_lockless_mib); it skips
 * on kernels without the switch.  Both count those bytes with a probe on
 * the mm_filemap_read_rcu tracepoint, attached only for one more, untimed
 * sample of every configuration after the rounds: the timed reads run
 * with nobody listening to the tracepoint.  That tracepoint is a test hook
 * of ours (mm_hooks.h): without it the MiB/s are still reported, and the
 * untimed sample is left out with a "hook absent:" line.
 *
 * Rounds are interleaved over the configurations so drift spreads
 * evenly; round 0, a warm-up, is not reported.
 */

#include <kunit/test.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

#include "../internal.h"
#include "lockless_read.h"
#include "mm_hooks.h"
#include "mm_kunit_helpers.h"
#include "mm_test_util.h"
#include "mm_bench.h"

#define FILE_SIZE	(SZ_1M * 64)
/* passes over the file per sample: 256 MiB, long enough to ride out noise */
#define PASSES		4
#define SAMPLE_BYTES	((u64)FILE_SIZE * PASSES)

enum layout { WRITTEN, FALLOCATED, HOLE, NR_LAYOUTS };

static const char * const layout_name[] = { "written", "fallocated", "hole" };
static const char * const huge_opt[] = { "never", "always" };
static const size_t block_sizes[] = { SZ_4K, SZ_64K, SZ_1M };

static struct file *make_file(struct kunit *test, struct vfsmount *mnt,
			      enum layout layout, u8 *chunk)
{
	struct file *file;
	loff_t pos = 0;

	file = shmem_file_setup_with_mnt(mnt, "seqread", FILE_SIZE,
					 mk_vma_flags(VMA_NORESERVE_BIT));
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mm_test_fput, file),
			0);
	if (layout == FALLOCATED)
		KUNIT_ASSERT_EQ(test, vfs_fallocate(file, FALLOC_FL_KEEP_SIZE,
						    0, FILE_SIZE), 0);
	while (layout == WRITTEN && pos < FILE_SIZE)
		KUNIT_ASSERT_EQ(test, kernel_write(file, chunk, SZ_1M, &pos),
				SZ_1M);
	return file;
}

/* Read the whole file PASSES times in @bs requests; nanoseconds taken. */
static u64 read_file(struct kunit *test, struct file *file,
		     unsigned long ubuf, size_t bs)
{
	u64 t0 = ktime_get_ns();
	unsigned int pass;
	ssize_t ret;
	loff_t pos;

	for (pass = 0; pass < PASSES; pass++) {
		for (pos = 0; pos < FILE_SIZE;) {
			ret = vfs_read(file, (char __user *)ubuf, bs, &pos);
			if (ret != bs) {
				KUNIT_FAIL(test, "read %zu at %lld returned %zd",
					   bs, pos, ret);
				return 0;
			}
		}
	}
	return ktime_get_ns() - t0;
}

/* Bytes copied without folio references so far */
static u64 lockless_bytes(struct lr_count *cnt)
{
	struct lr_stat s;

	lr_count_now(cnt, &s);
	return s.bytes;
}

static void lr_switch_on(void *test)
{
	lr_switch(test, true);
}

/*
 * MiB/s of sequential reads for every block size, huge= mode and layout;
 * BENCH_ROUNDS rounds each after a warm-up.  With @lockless the
 * lockless_page_cache_read switch is on and the MiB one sample copies
 * without references are reported, counted in an untimed sample after the
 * rounds; otherwise it is off, where it exists, and that sample may copy
 * no byte that way.
 */
static void read_bench(struct kunit *test, bool lockless)
{
	const char *variant = lockless ? "lockless" : "-";
	struct file *files[ARRAY_SIZE(huge_opt)][NR_LAYOUTS];
	bool has_switch = lr_switch_exists(test);
	unsigned int h, l, b, round;
	struct lr_count *cnt;
	unsigned long ubuf;
	char config[64], line[96];
	u64 ns, bytes;
	u8 *chunk;

	bench_env(test);
	if (has_switch) {
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, lr_switch_on,
								test), 0);
		lr_switch(test, lockless);
	} else if (lockless) {
		kunit_skip(test,
			   "not applied: no lockless_page_cache_read switch (rcu-free patch 18)");
	}
	chunk = kunit_kmalloc(test, SZ_1M, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, chunk);
	memset(chunk, 0x5a, SZ_1M);
	ubuf = kunit_vm_mmap(test, NULL, 0, SZ_1M, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, 0);
	KUNIT_ASSERT_NE(test, ubuf, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(ubuf));

	for (h = 0; h < ARRAY_SIZE(huge_opt); h++) {
		struct vfsmount *mnt = mm_test_mount(test, "tmpfs", huge_opt[h]);

		for (l = 0; l < NR_LAYOUTS; l++)
			files[h][l] = make_file(test, mnt, l, chunk);
	}

	for (round = 0; round <= BENCH_ROUNDS; round++) {
		for (h = 0; h < ARRAY_SIZE(huge_opt); h++) {
			for (l = 0; l < NR_LAYOUTS; l++) {
				for (b = 0; b < ARRAY_SIZE(block_sizes); b++) {
					ns = read_file(test, files[h][l], ubuf,
						       block_sizes[b]);
					if (!ns)
						return;
					cond_resched();
					if (!round)
						continue;	/* warm-up */
					snprintf(line, sizeof(line),
						 "bench=shmem_seq_read huge=%s layout=%s bs=%zu",
						 huge_opt[h], layout_name[l],
						 block_sizes[b]);
					bench_line(test, line, variant, round,
						   bench_rate_milli(SAMPLE_BYTES, ns, SZ_1M),
						   "MiB/s");
				}
			}
		}
	}
	if (!has_switch)
		return;
	/* Counted on a tracepoint of ours: without it, named and not counted */
	if (!mm_hook_trace(test, mm_kunit_tracepoint_exists(LR_TRACEPOINT),
			   LR_TRACEPOINT, lockless ?
			   "the MiB copied without references (not counted)" :
			   "that the switch off copies nothing without references"))
		return;

	/* The untimed sample: what each configuration copies without refs */
	cnt = lr_count_start(test);
	for (h = 0; h < ARRAY_SIZE(huge_opt); h++) {
		for (l = 0; l < NR_LAYOUTS; l++) {
			for (b = 0; b < ARRAY_SIZE(block_sizes); b++) {
				snprintf(config, sizeof(config),
					 "huge=%s layout=%s bs=%zu", huge_opt[h],
					 layout_name[l], block_sizes[b]);
				bytes = lockless_bytes(cnt);
				if (!read_file(test, files[h][l], ubuf,
					       block_sizes[b]))
					return;
				bytes = lockless_bytes(cnt) - bytes;
				if (!lockless) {
					KUNIT_EXPECT_EQ_MSG(test, bytes, 0ULL,
							    "switch off, yet %llu bytes read without references (%s)",
							    bytes, config);
					continue;
				}
				snprintf(line, sizeof(line),
					 "bench=shmem_seq_read_lockless_mib %s",
					 config);
				bench_line(test, line, variant, 1,
					   div_u64(bytes * 1000, SZ_1M), "MiB");
			}
		}
	}
}

static void shmem_seq_read_throughput(struct kunit *test)
{
	read_bench(test, false);
}

static void shmem_seq_read_lockless(struct kunit *test)
{
	read_bench(test, true);
}

static struct kunit_case shmem_read_benchmark_cases[] = {
	KUNIT_CASE_SLOW(shmem_seq_read_throughput),
	KUNIT_CASE_SLOW(shmem_seq_read_lockless),
	{}
};

static struct kunit_suite shmem_read_benchmark_suite = {
	.name = "shmem_read_benchmark",
	.test_cases = shmem_read_benchmark_cases,
};

kunit_test_suite(shmem_read_benchmark_suite);

MODULE_DESCRIPTION("Sequential tmpfs read throughput (shmem-batch)");
MODULE_LICENSE("GPL");
