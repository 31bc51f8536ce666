package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The heaviest keys of a policy from a Space-Saving sketch: found among floods of other keys in any order, counted
 * within the documented error, and forgotten after two periods.
 */
class HeavyHittersTests {

	private final AtomicLong now = new AtomicLong();

	private final HeavyHitters heavyHitters = new HeavyHitters(this.now::get);

	@Test
	void theClientHittingALimitHardestLeadsTheRejectionsWhateverFloodsAroundIt() {
		for (int i = 0; i < 10_000; i++) {
			this.heavyHitters.record("orders", "one-shot-" + i, false);
			if (i % 10 == 0) {
				this.heavyHitters.record("orders", "abuser", false);
			}
			if (i % 25 == 0) {
				this.heavyHitters.record("orders", "second", false);
			}
		}
		HeavyHitters.Heaviest heaviest = this.heavyHitters.heaviest("orders", 3);
		assertThat(heaviest).isNotNull();
		assertThat(heaviest.rejected().get(0).key()).isEqualTo("abuser");
		HeavyHitters.Count abuser = heaviest.rejected().get(0);
		assertThat(abuser.count()).isGreaterThanOrEqualTo(1_000);
		assertThat(abuser.count() - abuser.error()).as("never under-counted").isLessThanOrEqualTo(1_000);
		// Space-Saving's bound: over-estimated by at most the total over the counters.
		assertThat(abuser.error()).isLessThanOrEqualTo(11_400 / HeavyHitters.COUNTERS);
		assertThat(heaviest.rejected()).as("400 > 11,400 / 32: always kept").extracting(HeavyHitters.Count::key)
			.contains("second");
		assertThat(this.heavyHitters.heaviest("other", 3)).isNull();
	}

	@Test
	void everyKeyAboveTheSketchsShareIsKeptWhateverTheOrderOfRequests() {
		// Adversarial order: the heavy key's requests all come first, then a flood of new keys evicts the smallest.
		for (int i = 0; i < 400; i++) {
			this.heavyHitters.record("orders", "early", false);
		}
		for (int i = 0; i < 10_000; i++) {
			this.heavyHitters.record("orders", "flood-" + i, false);
		}
		// 400 > 10,400 / 32 = 325: Space-Saving never drops it.
		assertThat(this.heavyHitters.heaviest("orders", 1).rejected().get(0).key()).isEqualTo("early");
	}

	@Test
	void countsOlderThanTwoPeriodsAreForgotten() {
		this.heavyHitters.record("orders", "old", false);
		this.now.addAndGet(HeavyHitters.PERIOD_SECONDS * 1_000_000_000L);
		this.heavyHitters.record("orders", "recent", false);
		assertThat(this.heavyHitters.heaviest("orders", 5).rejected()).extracting(HeavyHitters.Count::key)
			.containsExactlyInAnyOrder("old", "recent");
		this.now.addAndGet(HeavyHitters.PERIOD_SECONDS * 1_000_000_000L);
		assertThat(this.heavyHitters.heaviest("orders", 5).rejected()).extracting(HeavyHitters.Count::key)
			.containsExactly("recent");
		this.now.addAndGet(2 * HeavyHitters.PERIOD_SECONDS * 1_000_000_000L);
		assertThat(this.heavyHitters.heaviest("orders", 5).rejected()).isEmpty();
	}

	@Test
	void rejectionsRecordedOnManyThreadsAtOnceAreAllCountedWithinTheBound() throws InterruptedException {
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < 12; t++) {
			int thread = t;
			Thread recorder = new Thread(() -> {
				for (int i = 0; i < 2_000; i++) {
					this.heavyHitters.record("orders", "abuser", false);
					this.heavyHitters.record("orders", "flood-" + thread + "-" + i, false);
				}
			});
			recorder.start();
			threads.add(recorder);
		}
		for (Thread thread : threads) {
			thread.join();
		}
		HeavyHitters.Count abuser = this.heavyHitters.heaviest("orders", 1).rejected().get(0);
		assertThat(abuser.key()).isEqualTo("abuser");
		assertThat(abuser.count()).as("never under the truth").isGreaterThanOrEqualTo(24_000);
		assertThat(abuser.error()).as("at most the total over the counters").isLessThanOrEqualTo(48_000 / HeavyHitters.COUNTERS);
	}

	@Test
	void admissionsAreSampledAndWeighted() {
		for (int i = 0; i < 16_000; i++) {
			this.heavyHitters.record("orders", "busy", true);
		}
		long count = this.heavyHitters.heaviest("orders", 1).admitted().get(0).count();
		assertThat(count).as("about 16,000, in steps of %d", HeavyHitters.ADMISSION_SAMPLING).isBetween(12_000L, 20_000L);
	}

}
