package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Who is being limited: per policy, the keys with the most rejected and the most admitted requests of the last few
 * minutes, from a Space-Saving sketch of fixed size, so that an operator can see which client hits a limit without a
 * metric per key. Each policy keeps {@value #COUNTERS} counters for rejections and as many for admissions, in two
 * periods of {@value #PERIOD_SECONDS} seconds (what is shown covers the current period and the one before it), in
 * each of {@value #STRIPES} stripes: a thread records into its own stripe, so that concurrent rejections do not wait
 * on one lock.
 * <p>
 * Space-Saving's bound: a key's count is over-estimated by at most its {@code error}, itself at most the period's
 * total divided by {@value #COUNTERS} (summed over the stripes); every key with more than that share is in the sketch.
 * Keys are kept as the limiter sees them: what shows them must hide what is secret ({@code RateLimitsEndpoint}). Rejections are all
 * counted; admissions are sampled one in {@value #ADMISSION_SAMPLING} (each counting as many), so that the common
 * path stays cheap: admitted counts are estimates to that grain.
 *
 * @since 0.3.0
 */
public final class HeavyHitters {

	/** Counters per policy and outcome. */
	static final int COUNTERS = 32;

	/** How long a period lasts. */
	static final long PERIOD_SECONDS = 150;

	/** Stripes per policy, by thread: a power of two. */
	static final int STRIPES = 8;

	/** One admission in this many is recorded, counting as this many. */
	static final int ADMISSION_SAMPLING = 16;

	private final LongSupplier nanoTime;

	private final ConcurrentHashMap<String, PolicySketches> policies = new ConcurrentHashMap<>();

	/**
	 * Create the sketches, on the system's clock.
	 */
	public HeavyHitters() {
		this(System::nanoTime);
	}

	HeavyHitters(LongSupplier nanoTime) {
		this.nanoTime = nanoTime;
	}

	/** Record a decision on a key; admissions sampled. */
	void record(String policy, String key, boolean allowed) {
		if (allowed && ThreadLocalRandom.current().nextInt(ADMISSION_SAMPLING) != 0) {
			return;
		}
		PolicySketches sketches = this.policies.get(policy);
		if (sketches == null) {
			long now = this.nanoTime.getAsLong();
			sketches = this.policies.computeIfAbsent(policy, (name) -> new PolicySketches(now));
		}
		sketches.record(key, allowed, this.nanoTime.getAsLong());
	}

	/**
	 * Return the heaviest keys of a policy over the current period and the one before.
	 * @param policy the policy's name
	 * @param limit how many keys of each outcome
	 * @return the keys, most first, or {@code null} if the policy decided nothing lately
	 */
	public @Nullable Heaviest heaviest(String policy, int limit) {
		PolicySketches sketches = this.policies.get(policy);
		return (sketches != null) ? sketches.heaviest(limit, this.nanoTime.getAsLong()) : null;
	}

	/**
	 * The heaviest keys of one policy.
	 * @param rejected the keys with the most rejected requests, most first
	 * @param admitted the keys with the most admitted requests, most first (estimates: admissions are sampled)
	 * @param periodSeconds how many seconds the counts cover
	 */
	public record Heaviest(List<Count> rejected, List<Count> admitted, long periodSeconds) {
	}

	/**
	 * One key's count.
	 * @param key the key, as the limiter sees it
	 * @param count its count, an over-estimate by at most {@code error}
	 * @param error the most the count may be over
	 */
	public record Count(String key, long count, long error) {
	}

	/**
	 * One policy's sketches, striped by thread: a request records into its thread's stripe under that stripe's lock
	 * alone, so that a flood of rejections on several event loops never queues them on one monitor. What is shown
	 * merges the stripes, which keeps Space-Saving's bound: the errors add up to at most the total over the counters.
	 */
	private static final class PolicySketches {

		private final long origin;

		private final Stripe[] stripes = new Stripe[STRIPES];

		PolicySketches(long now) {
			this.origin = now;
			for (int i = 0; i < STRIPES; i++) {
				this.stripes[i] = new Stripe();
			}
		}

		void record(String key, boolean allowed, long now) {
			Stripe stripe = this.stripes[(int) Thread.currentThread().getId() & (STRIPES - 1)];
			synchronized (stripe) {
				stripe.rotate(period(now));
				(allowed ? stripe.admitted : stripe.rejected).add(key, allowed ? ADMISSION_SAMPLING : 1);
			}
		}

		Heaviest heaviest(int limit, long now) {
			long period = period(now);
			List<SpaceSaving> rejected = new ArrayList<>(2 * STRIPES);
			List<SpaceSaving> admitted = new ArrayList<>(2 * STRIPES);
			for (Stripe stripe : this.stripes) {
				synchronized (stripe) {
					stripe.rotate(period);
					rejected.add(stripe.rejected.copy());
					rejected.add(stripe.previousRejected.copy());
					admitted.add(stripe.admitted.copy());
					admitted.add(stripe.previousAdmitted.copy());
				}
			}
			return new Heaviest(SpaceSaving.top(limit, rejected), SpaceSaving.top(limit, admitted),
					2 * PERIOD_SECONDS);
		}

		/** Periods count from the policy's first decision, the same for every stripe. */
		private long period(long now) {
			return (now - this.origin) / (PERIOD_SECONDS * 1_000_000_000L);
		}

	}

	/** One thread stripe's sketches of the current period and the one before. */
	private static final class Stripe {

		private long period;

		private SpaceSaving rejected = new SpaceSaving();

		private SpaceSaving admitted = new SpaceSaving();

		private SpaceSaving previousRejected = new SpaceSaving();

		private SpaceSaving previousAdmitted = new SpaceSaving();

		void rotate(long now) {
			if (now == this.period) {
				return;
			}
			boolean skippedOne = now > this.period + 1;
			this.previousRejected = skippedOne ? new SpaceSaving() : this.rejected;
			this.previousAdmitted = skippedOne ? new SpaceSaving() : this.admitted;
			this.rejected = new SpaceSaving();
			this.admitted = new SpaceSaving();
			this.period = now;
		}

	}

	/** Metwally, Agrawal and El Abbadi's Space-Saving: {@value #COUNTERS} counters, the smallest replaced. */
	static final class SpaceSaving {

		private final Map<String, long[]> counters = new HashMap<>();

		void add(String key, long weight) {
			long[] counter = this.counters.get(key);
			if (counter != null) {
				counter[0] += weight;
				return;
			}
			if (this.counters.size() < COUNTERS) {
				this.counters.put(key, new long[] { weight, 0 });
				return;
			}
			String smallest = null;
			long[] min = null;
			for (Map.Entry<String, long[]> entry : this.counters.entrySet()) {
				if (min == null || entry.getValue()[0] < min[0]) {
					smallest = entry.getKey();
					min = entry.getValue();
				}
			}
			if (smallest == null || min == null) {
				return;
			}
			this.counters.remove(smallest);
			// The newcomer inherits the smallest count as its possible error.
			this.counters.put(key, new long[] { min[0] + weight, min[0] });
		}

		SpaceSaving copy() {
			SpaceSaving copy = new SpaceSaving();
			this.counters.forEach((key, counter) -> copy.counters.put(key, counter.clone()));
			return copy;
		}

		/**
		 * The heaviest keys of several sketches together, their counts and errors summed. A full sketch that lacks a
		 * key may have evicted it at up to its smallest count: that count is added to the key's count and error, so
		 * that a count is never under the truth.
		 */
		static List<Count> top(int limit, List<SpaceSaving> sketches) {
			Map<String, long[]> merged = new HashMap<>();
			for (SpaceSaving sketch : sketches) {
				sketch.counters.forEach((key, counter) -> merged.computeIfAbsent(key, (k) -> new long[2]));
			}
			for (SpaceSaving sketch : sketches) {
				long smallest = (sketch.counters.size() < COUNTERS) ? 0
						: sketch.counters.values().stream().mapToLong((counter) -> counter[0]).min().orElse(0);
				merged.forEach((key, sum) -> {
					long[] counter = sketch.counters.get(key);
					sum[0] += (counter != null) ? counter[0] : smallest;
					sum[1] += (counter != null) ? counter[1] : smallest;
				});
			}
			List<Count> counts = new ArrayList<>(merged.size());
			merged.forEach((key, sum) -> counts.add(new Count(key, sum[0], sum[1])));
			counts.sort(Comparator.comparingLong(Count::count).reversed().thenComparing(Count::key));
			return List.copyOf(counts.subList(0, Math.min(limit, counts.size())));
		}

	}

}
