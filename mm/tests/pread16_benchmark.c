// SPDX-License-Identifier: GPL-2.0
/*
 * 16-byte reads from many threads, will-it-scale's pread2/pread3 in the
 * kernel: the workload behind the rcu-free series (tmpfs 1.5-1.9 M reads/s
 * at 64 threads before, 68-70 M after; ext4 17 -> 70 M).
 *
 * One kthread per CPU (1, 2, 4, ... threads up to nr_online_cpus, each
 * bound to its own CPU) reads 16 bytes at a fixed offset through the real
 * read path (kernel_read()) for about RUN_NS; the sum of each thread's
 * reads over its own measured time is one sample.  The threads wait for
 * the start with cond_resched() as well as cpu_relax(), so a thread that
 * shares a CPU with the test's kthread cannot keep it from starting them
 * on a kernel without preemption.  (A sleeping start, a completion, was
 * tried: under QEMU's exact mode the idle second vCPU then answered late,
 * with RCU stall warnings in every round.)  Round 0, a warm-up, is not
 * reported.  Modes:
 * each thread its own struct file on one inode
 * (own-file), one struct file shared by all (shared-file), and each
 * thread its own page of the file (own-page).  File systems: tmpfs
 * (shmem_file_read_iter()) and ramfs (filemap_read()).
 *
 * pread16_base measures the kernel as built (variant=-, the switch as
 * the kernel left it), for make bench-compare.  pread16_lockless
 * alternates the rcu-free series' lockless_page_cache_read switch off
 * (variant=refs: every read takes a folio reference) and on
 * (variant=lockless) in the same boot; it skips while that switch does
 * not exist (rcu-free part 2 not applied).  Each side has its own name,
 * so that both cases can run in one boot.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/ramfs.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/swap.h>

#include "../internal.h"
#include "mm_test_util.h"
#include "lockless_read.h"
#include "mm_hooks.h"
#include "mm_kunit_helpers.h"
#include "mm_bench.h"

#define RUN_NS		(200 * NSEC_PER_MSEC)
#define MAX_THREADS	64

enum mode { OWN_FILE, SHARED_FILE, OWN_PAGE, NR_MODES };
static const char * const mode_name[] = { "own-file", "shared-file",
					  "own-page" };

enum fs { FS_TMPFS, FS_RAMFS, NR_FS };
static const char * const fs_name[] = { "tmpfs", "ramfs" };

struct pread_run {
	struct file *files[MAX_THREADS];
	loff_t offsets[MAX_THREADS];
	u64 reads[MAX_THREADS];
	u64 elapsed_ns[MAX_THREADS];
	atomic_t ready;
	atomic_t go;
	atomic_t errors;
	struct completion done[MAX_THREADS];
};

struct pread_thread {
	struct pread_run *run;
	int id;
};

static int pread_fn(void *arg)
{
	struct pread_thread *t = arg;
	struct pread_run *run = t->run;
	struct file *file = run->files[t->id];
	u64 n = 0, t0, deadline;
	char buf[16];

	atomic_inc(&run->ready);
	/*
	 * cond_resched() lets the starter run on this CPU without preemption;
	 * cpu_relax() (PAUSE) is what makes QEMU's TCG move to another vCPU.
	 */
	while (!atomic_read_acquire(&run->go)) {
		cpu_relax();
		cond_resched();
	}
	t0 = ktime_get_ns();
	deadline = t0 + RUN_NS;
	do {
		unsigned int i;

		for (i = 0; i < 256; i++) {
			loff_t pos = run->offsets[t->id];

			if (kernel_read(file, buf, sizeof(buf), &pos) !=
			    sizeof(buf)) {
				atomic_inc(&run->errors);
				goto out;
			}
		}
		n += 256;
		cond_resched();
	} while (ktime_get_ns() < deadline);
out:
	run->elapsed_ns[t->id] = ktime_get_ns() - t0;
	run->reads[t->id] = n;
	complete(&run->done[t->id]);
	return 0;
}

/* A file of MAX_THREADS pages, written, on @fs. */
static struct file *make_file(struct kunit *test, enum fs fs)
{
	struct mm_kunit_file *lf;

	lf = mm_kunit_fs_file_create(test, fs == FS_TMPFS ? MM_KUNIT_TMPFS :
				     MM_KUNIT_RAMFS, MAX_THREADS * PAGE_SIZE);

	mm_kunit_file_write(test, lf, 0, lf->size, 1);
	return lf->file;
}

/* Reads per second of @nr threads in @mode on @file; 0 on error. */
static u64 pread_sample(struct kunit *test, struct file *file, enum mode mode,
			unsigned int nr)
{
	struct task_struct *tasks[MAX_THREADS];
	struct pread_thread threads[MAX_THREADS];
	struct pread_run *run;
	u64 rate = 0;
	unsigned int i, cpu = 0;

	run = kzalloc_obj(*run, GFP_KERNEL);
	if (!run)
		return 0;
	for (i = 0; i < nr; i++) {
		run->files[i] = file;
		if (mode == OWN_FILE && i) {
			run->files[i] = dentry_open(&file->f_path, O_RDONLY,
						    current_cred());
			if (IS_ERR(run->files[i])) {
				KUNIT_FAIL(test, "dentry_open: %ld",
					   PTR_ERR(run->files[i]));
				nr = i;
				goto out;
			}
		}
		run->offsets[i] = mode == OWN_PAGE ? i * PAGE_SIZE : 0;
		init_completion(&run->done[i]);
	}
	for (i = 0; i < nr; i++) {
		cpu = cpumask_next(i ? cpu : -1, cpu_online_mask);
		threads[i].run = run;
		threads[i].id = i;
		tasks[i] = kthread_create_on_cpu(pread_fn, &threads[i], cpu,
						 "pread16/%u");
		if (IS_ERR(tasks[i])) {
			KUNIT_FAIL(test, "kthread: %ld", PTR_ERR(tasks[i]));
			/* let the ones started run out */
			atomic_set_release(&run->go, 1);
			while (i--)
				wait_for_completion(&run->done[i]);
			nr = 0;
			goto out;
		}
		wake_up_process(tasks[i]);
	}
	while (atomic_read(&run->ready) < nr)
		cond_resched();
	atomic_set_release(&run->go, 1);
	for (i = 0; i < nr; i++) {
		wait_for_completion(&run->done[i]);
		/* reads per second over the time this thread measured */
		rate += div64_u64(run->reads[i] * NSEC_PER_SEC,
				  max_t(u64, run->elapsed_ns[i], 1));
	}
	if (atomic_read(&run->errors))
		KUNIT_FAIL(test, "%d threads saw a short read",
			   atomic_read(&run->errors));
out:
	for (i = 1; i < nr; i++)
		if (mode == OWN_FILE)
			fput(run->files[i]);
	kfree(run);
	return rate;
}

static void pread16_measure(struct kunit *test, const char *variant,
			    unsigned int round, struct file **files)
{
	unsigned int cpus = min_t(unsigned int, num_online_cpus(),
				  MAX_THREADS);
	unsigned int fs, mode, nr;
	char config[80];
	u64 rate;

	for (fs = 0; fs < NR_FS; fs++) {
		for (mode = 0; mode < NR_MODES; mode++) {
			/* 1, 2, 4, ... threads, and all CPUs */
			for (nr = 1; nr <= cpus;
			     nr = nr < cpus ? min(nr * 2, cpus) : cpus + 1) {
				rate = pread_sample(test, files[fs], mode, nr);
				if (!round)
					continue;	/* warm-up */
				snprintf(config, sizeof(config),
					 "bench=pread16 fs=%s mode=%s threads=%u",
					 fs_name[fs], mode_name[mode], nr);
				/* reads/s = thousandths of M reads/s * 1000 */
				bench_line(test, config, variant, round,
					   div_u64(rate, 1000), "Mreads/s");
			}
		}
	}
}

/*
 * M reads/s for 1..nr_cpus threads, every mode and file system, on the
 * kernel as built (variant=-).
 */
static void pread16_base(struct kunit *test)
{
	struct file *files[NR_FS];
	unsigned int round, fs;

	bench_env(test);
	for (fs = 0; fs < NR_FS; fs++)
		files[fs] = make_file(test, fs);
	for (round = 0; round <= BENCH_ROUNDS; round++)
		pread16_measure(test, "-", round, files);
}

/*
 * Read every page of @file, in turn, @passes times: each read enters a
 * folio, so the folios become hot and get PG_rcu_free.
 */
static void pread16_warm(struct kunit *test, struct file *file,
			 unsigned int passes)
{
	unsigned int pass, i;
	char buf[16];

	for (pass = 0; pass < passes; pass++) {
		for (i = 0; i < MAX_THREADS; i++) {
			loff_t pos = i * PAGE_SIZE;

			KUNIT_ASSERT_EQ(test, kernel_read(file, buf, sizeof(buf),
							  &pos), 16);
		}
		/* Queued activations take effect before the next pass */
		lru_add_drain_all();
	}
}

/*
 * The same with lockless_page_cache_read off (refs) and on (lockless),
 * alternated round by round in this boot.  Fails if, after the rounds, a
 * pass over the files with the switch on copies nothing without a
 * reference: counted then rather than during the rounds, so that the
 * lockless rounds do not pay for the tracepoint probe that counts.  The
 * count needs the mm_filemap_read_rcu tracepoint, a test hook of ours
 * (mm_hooks.h): without it the rounds are still reported and the count is
 * left out with a "hook absent:" line.
 */
static void pread16_lockless(struct kunit *test)
{
	struct file *files[NR_FS];
	unsigned int round, fs;
	struct lr_count *cnt;
	struct lr_stat s;

	bench_env(test);
	if (!lr_switch_exists(test))
		kunit_skip(test,
			   "not applied: no lockless_page_cache_read switch (rcu-free patch 18)");
	for (fs = 0; fs < NR_FS; fs++) {
		files[fs] = make_file(test, fs);
		pread16_warm(test, files[fs], 8);
	}
	for (round = 0; round <= BENCH_ROUNDS; round++) {
		lr_switch(test, false);
		pread16_measure(test, "refs", round, files);
		lr_switch(test, true);
		pread16_measure(test, "lockless", round, files);
	}
	if (!mm_hook_trace(test, mm_kunit_tracepoint_exists(LR_TRACEPOINT),
			   LR_TRACEPOINT,
			   "that the switch on copies without references (not counted)"))
		return;
	cnt = lr_count_start(test);
	for (fs = 0; fs < NR_FS; fs++)
		pread16_warm(test, files[fs], 1);
	lr_count_now(cnt, &s);
	KUNIT_EXPECT_GT_MSG(test, s.bytes, 0UL,
			    "with the switch on, nothing was copied without a reference");
}

static struct kunit_case pread16_benchmark_cases[] = {
	KUNIT_CASE_SLOW(pread16_base),
	KUNIT_CASE_SLOW(pread16_lockless),
	{}
};

static struct kunit_suite pread16_benchmark_suite = {
	.name = "pread16_benchmark",
	.test_cases = pread16_benchmark_cases,
};

kunit_test_suite(pread16_benchmark_suite);

MODULE_DESCRIPTION("16-byte pread scaling (rcu-free)");
MODULE_LICENSE("GPL");
