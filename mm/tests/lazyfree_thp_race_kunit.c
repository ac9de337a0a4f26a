// SPDX-License-Identifier: GPL-2.0
/*
 * GUP-fast pins racing the discard of a clean lazyfree THP (suite
 * lazyfree_thp_race).  The lazyfree-thp patch lets reclaim discard a clean
 * lazyfree PMD-mapped THP whole: unmap_huge_pmd_locked() clears the PMD,
 * flushes the TLB, then compares the folio's references with its mappings
 * and puts the PMD back if there is one more.  pin_user_pages_fast() pins
 * without the mmap lock: it grabs the folio, then re-reads the PMD and
 * backs off if it changed.  Either the discard sees the pin, or the pin
 * backs off; never both a pin and a discard.
 *
 * Strategy: the case maps anonymous memory into its own mm, faults a
 * 2 MiB-aligned THP in with a pattern in its first page and MADV_FREEs it.
 * A pinner kthread on the other CPU shares the mm (kthread_use_mm()).
 * Round by round, the case's thread reclaims the THP with MADV_PAGEOUT
 * while the pinner pins its first page with pin_user_pages_fast()
 * (FOLL_NOFAULT: an address left empty is not faulted in again) and holds
 * the pin until MADV_PAGEOUT has returned.  Every pin must read the
 * pattern and still be the page mapped at the address (looked up under
 * the page table lock).  Where the pinner starts is steered round by round
 * towards the point where the discard happens: later after a round it
 * pinned, earlier after a round the discard left nothing to pin.  The
 * case fails if too few rounds ended either way (race not exercised).
 * After a discard (or, on 7.3, a PMD split) the case faults a new THP.
 *
 * KUNIT_CASE_SLOW, in a suite of its own so that make test's races stage
 * selects it by name ("*_race"): a round takes a few to tens of ms on a
 * loaded TCG guest.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pagewalk.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/swap.h>
#include <linux/uaccess.h>

#include "../internal.h"
#include "mm_kunit_helpers.h"
#include "mm_test_util.h"

#define THP_SIZE	HPAGE_PMD_SIZE
#define SEED		1
#define RACE_ROUNDS	1000
#define RACE_MIN	100		/* rounds of each outcome */
#define RACE_STOP	INT_MAX
#define RACE_GUARD	(120 * HZ)	/* per round, a hang guard only */
#define LEAD_MAX	1000000		/* cpu_relax() spins */

/*
 * The case's thread and the pinner pass round numbers: @round arms a
 * round, @ready says the pinner waits, @started lets it go (MADV_PAGEOUT
 * follows), @done says MADV_PAGEOUT returned, @acked ends the round.
 * @lead is where the pinner starts: > 0 it spins that long after
 * @started, < 0 the case's thread spins that long before MADV_PAGEOUT.
 */
struct gup_race {
	struct mm_struct *mm;
	unsigned long addr;
	u8 *buf;			/* one page of the pattern */
	struct task_struct *task;
	atomic_t round, ready, started, done, acked;
	int lead;
	unsigned int held;	/* rounds with a pin held past MADV_PAGEOUT */
	unsigned int lost;	/* rounds that left nothing to pin */
	unsigned int thps;	/* THPs faulted in */
	bool bad;		/* @why says what a pin saw */
	char why[160];
};

/*
 * race_check_pin() - check that @page, pinned at @r->addr and held across
 * MADV_PAGEOUT, holds the pattern and is the page mapped at @r->addr.
 * Sets @r->bad and @r->why if not.
 */
static void race_check_pin(struct gup_race *r, struct page *page)
{
	struct vm_area_struct *vma;
	struct page *mapped = NULL;
	struct folio_walk fw;
	unsigned long i;
	u8 *p;

	p = kmap_local_page(page);
	for (i = 0; i < PAGE_SIZE; i++)
		if (p[i] != r->buf[i])
			break;
	r->bad = i < PAGE_SIZE;
	if (r->bad)
		snprintf(r->why, sizeof(r->why),
			 "the pinned page reads 0x%02x at offset %lu, want 0x%02x",
			 p[i], i, r->buf[i]);
	kunmap_local(p);
	if (r->bad)
		return;
	mmap_read_lock(r->mm);
	vma = vma_lookup(r->mm, r->addr);
	if (vma && folio_walk_start(&fw, vma, r->addr, 0)) {
		mapped = fw.page;
		folio_walk_end(&fw, vma);
	}
	mmap_read_unlock(r->mm);
	if (mapped != page) {
		snprintf(r->why, sizeof(r->why),
			 "a page pinned during the discard is not the page mapped at the address after it: %s",
			 mapped ? "another page is" : "nothing is");
		r->bad = true;
	}
}

/*
 * race_pin_round() - pin the THP's first page during round @round, hold
 * the pin until MADV_PAGEOUT returned, check it and unpin it.
 * Returns true if a pin was taken, false if MADV_PAGEOUT returned with
 * nothing left to pin.
 */
static bool race_pin_round(struct gup_race *r, int round)
{
	struct page *page;

	for (;;) {
		if (atomic_read_acquire(&r->done) == round) {
			r->lost++;
			return false;
		}
		if (pin_user_pages_fast(r->addr, 1, FOLL_NOFAULT, &page) == 1)
			break;
		cpu_relax();
	}
	while (atomic_read_acquire(&r->done) != round && !kthread_should_stop())
		cpu_relax();
	r->held++;
	race_check_pin(r, page);
	unpin_user_page(page);
	return true;
}

/* Wait until @v reads @want; false if the thread is told to stop first */
static bool race_wait(atomic_t *v, int want, bool spin)
{
	while (atomic_read_acquire(v) != want) {
		if (kthread_should_stop())
			return false;
		if (spin)
			cpu_relax();
		else
			cond_resched();
	}
	return true;
}

/*
 * race_pinner() - the pinner kthread, in @arg's mm on the other CPU.
 * After each round it moves its start: later by @step when it pinned,
 * earlier when it did not, the step doubling while the outcome repeats
 * and halving when it changes, so that its pins land on the discard;
 * a random jitter spreads them around it.
 */
static int race_pinner(void *arg)
{
	struct gup_race *r = arg;
	int lead = 0, step = 16, spin, round;
	bool pinned, last = true;

	kthread_use_mm(r->mm);
	for (round = 1; !kthread_should_stop(); round++) {
		if (!race_wait(&r->round, round, false))
			break;
		atomic_set_release(&r->ready, round);
		if (!race_wait(&r->started, round, true))
			break;
		for (spin = max(lead, 0) + get_random_u32_below(64); spin > 0; spin--)
			cpu_relax();
		pinned = race_pin_round(r, round);
		step = pinned == last ? min(2 * step, LEAD_MAX / 8) : max(step / 2, 16);
		last = pinned;
		lead = clamp(pinned ? lead + step : lead - step, -LEAD_MAX, LEAD_MAX);
		WRITE_ONCE(r->lead, lead);
		atomic_set_release(&r->acked, round);
	}
	kthread_unuse_mm(r->mm);
	return 0;
}

/*
 * race_rearm() - make the range a clean lazyfree PMD-mapped THP again if
 * the last round did not leave one (discarded, or split on 7.3).
 * Returns 0, -EAGAIN when the fault gave no PMD-mapped THP, or an errno.
 */
static int race_rearm(struct gup_race *r)
{
	struct folio *folio = mm_kunit_pmd_folio(r->mm, r->addr);
	bool armed = folio && folio_test_lazyfree(folio) && folio_test_lru(folio);
	int ret;

	if (folio)
		folio_put(folio);
	if (armed)
		return 0;
	ret = do_madvise(r->mm, r->addr, THP_SIZE, MADV_DONTNEED);
	if (ret)
		return ret;
	if (copy_to_user((void __user *)r->addr, r->buf, PAGE_SIZE))
		return -EFAULT;
	if (mm_kunit_pmd_state(r->mm, r->addr) != MM_KUNIT_PMD_HUGE)
		return -EAGAIN;
	r->thps++;
	lru_add_drain();	/* MADV_FREE moves only folios on the LRU */
	ret = do_madvise(r->mm, r->addr, THP_SIZE, MADV_FREE);
	lru_add_drain();	/* and it moves them through a per-CPU batch */
	return ret;
}

/*
 * race_rounds() - run the rounds on this CPU against the pinner.
 * Returns the number of rounds run, or a negative errno: from race_rearm()
 * or madvise, or -ETIMEDOUT when the pinner did not answer (hang guard).
 */
static int race_rounds(struct gup_race *r)
{
	unsigned long guard;
	int round, spin, ret = 0;

	for (round = 1; round <= RACE_ROUNDS && !r->bad; round++) {
		ret = race_rearm(r);
		if (ret)
			break;
		guard = jiffies + RACE_GUARD;
		atomic_set_release(&r->round, round);
		while (atomic_read_acquire(&r->ready) != round && time_before(jiffies, guard))
			cond_resched();
		atomic_set_release(&r->started, round);
		for (spin = -READ_ONCE(r->lead); spin > 0; spin--)
			cpu_relax();
		ret = do_madvise(r->mm, r->addr, THP_SIZE, MADV_PAGEOUT);
		atomic_set_release(&r->done, round);
		while (atomic_read_acquire(&r->acked) != round && time_before(jiffies, guard))
			cond_resched();
		if (!ret && atomic_read(&r->acked) != round)
			ret = -ETIMEDOUT;
		if (ret)
			break;
	}
	atomic_set_release(&r->round, RACE_STOP);
	return ret ? ret : round - 1;
}

/*
 * GUP-fast pins racing the discard of a clean lazyfree THP: every pin
 * pin_user_pages_fast() returned during MADV_PAGEOUT, held past it, reads
 * the pattern and is still the page mapped at the address (the discard
 * saw the pin and put the PMD back, or GUP-fast backed off).  Decisive:
 * at least RACE_MIN rounds with such a pin and RACE_MIN rounds whose
 * discard left nothing to pin.
 */
static void lazyfree_thp_gup_fast_race_pin_keeps_data(struct kunit *test)
{
	struct gup_race *r = test->priv;
	unsigned long map, i;
	int cpu, ret;

	if (num_online_cpus() < 2)
		kunit_skip(test, "machine: needs 2 online CPUs: pins on one, reclaim on the other");
	if (!hugepage_global_enabled())
		kunit_skip(test, "config: transparent_hugepage is never");
	map = kunit_vm_mmap(test, NULL, 0, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_TRUE_MSG(test, map && map < TASK_SIZE, "kunit_vm_mmap: %ld", (long)map);
	r->mm = current->mm;
	r->addr = ALIGN(map, THP_SIZE);
	for (i = 0; i < PAGE_SIZE; i++)
		r->buf[i] = mm_test_pattern(i, SEED);
	KUNIT_ASSERT_EQ(test, do_madvise(r->mm, r->addr, THP_SIZE, MADV_HUGEPAGE), 0);
	ret = race_rearm(r);
	if (ret == -EAGAIN)
		kunit_skip(test, "machine: no PMD-mapped THP could be faulted in");
	KUNIT_ASSERT_EQ(test, ret, 0);

	migrate_disable();	/* reclaim stays on this CPU, the pins on another */
	cpu = cpumask_any_but(cpu_online_mask, smp_processor_id());
	r->task = kthread_create_on_cpu(race_pinner, r, cpu, "lazyfree_pin/%u");
	if (IS_ERR(r->task)) {
		migrate_enable();
		KUNIT_FAIL_AND_ABORT(test, "kthread_create_on_cpu: %ld", PTR_ERR(r->task));
	}
	get_task_struct(r->task);
	wake_up_process(r->task);
	ret = race_rounds(r);
	migrate_enable();
	kthread_stop_put(r->task);

	KUNIT_ASSERT_FALSE_MSG(test, r->bad, "round %u: %s", r->held + r->lost, r->why);
	KUNIT_ASSERT_GE_MSG(test, ret, 0, "after %u rounds: %s", r->held + r->lost,
			    ret == -ETIMEDOUT ? "the pinner did not answer (hang guard)" :
			    ret == -EAGAIN ? "no PMD-mapped THP faulted in again" :
			    "madvise or copy_to_user failed");
	kunit_info(test, "%d rounds, %u THPs: %u with a pin held past MADV_PAGEOUT, %u left nothing to pin",
		   ret, r->thps, r->held, r->lost);
	KUNIT_EXPECT_GE_MSG(test, r->held, RACE_MIN, "race not exercised: few pins held");
	KUNIT_EXPECT_GE_MSG(test, r->lost, RACE_MIN, "race not exercised: few discards won");
}

static int lazyfree_thp_race_init(struct kunit *test)
{
	struct gup_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	if (!r)
		return -ENOMEM;
	r->buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	if (!r->buf)
		return -ENOMEM;
	test->priv = r;
	return 0;
}

static struct kunit_case lazyfree_thp_race_cases[] = {
	KUNIT_CASE_SLOW(lazyfree_thp_gup_fast_race_pin_keeps_data),
	{}
};

static struct kunit_suite lazyfree_thp_race_suite = {
	.name = "lazyfree_thp_race",
	.init = lazyfree_thp_race_init,
	.test_cases = lazyfree_thp_race_cases,
};

kunit_test_suite(lazyfree_thp_race_suite);

MODULE_DESCRIPTION("KUnit tests: GUP-fast pins racing the discard of a lazyfree THP");
MODULE_LICENSE("GPL");
