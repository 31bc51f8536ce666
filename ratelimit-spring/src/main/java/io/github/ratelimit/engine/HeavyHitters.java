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
 * periods of {@value #PERIOD_SECONDS} seconds (what is shown covers the current period and the one before it).
 * <p>
 * Space-Saving's bound: a key's count is over-estimated by at most its {@code error}, itself at most the period's
 * total divided by {@value #COUNTERS}; every key with more than that share is in the sketch. Rejections are all
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
			sketches = this.policies.computeIfAbsent(policy, (name) -> new PolicySketches());
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

	private static final class PolicySketches {

		private final long periodNanos = PERIOD_SECONDS * 1_000_000_000L;

		private long periodStart = Long.MIN_VALUE;

		private SpaceSaving rejected = new SpaceSaving();

		private SpaceSaving admitted = new SpaceSaving();

		private SpaceSaving previousRejected = new SpaceSaving();

		private SpaceSaving previousAdmitted = new SpaceSaving();

		synchronized void record(String key, boolean allowed, long now) {
			rotate(now);
			(allowed ? this.admitted : this.rejected).add(key, allowed ? ADMISSION_SAMPLING : 1);
		}

		synchronized Heaviest heaviest(int limit, long now) {
			rotate(now);
			return new Heaviest(SpaceSaving.top(limit, this.rejected, this.previousRejected),
					SpaceSaving.top(limit, this.admitted, this.previousAdmitted), 2 * PERIOD_SECONDS);
		}

		private void rotate(long now) {
			if (this.periodStart == Long.MIN_VALUE) {
				this.periodStart = now;
				return;
			}
			long elapsed = now - this.periodStart;
			if (elapsed < this.periodNanos) {
				return;
			}
			boolean skippedOne = elapsed >= 2 * this.periodNanos;
			this.previousRejected = skippedOne ? new SpaceSaving() : this.rejected;
			this.previousAdmitted = skippedOne ? new SpaceSaving() : this.admitted;
			this.rejected = new SpaceSaving();
			this.admitted = new SpaceSaving();
			this.periodStart = now;
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

		/** The heaviest keys of both sketches together, their counts and errors summed. */
		static List<Count> top(int limit, SpaceSaving current, SpaceSaving previous) {
			Map<String, long[]> merged = new HashMap<>();
			for (SpaceSaving sketch : List.of(current, previous)) {
				sketch.counters.forEach((key, counter) -> {
					long[] sum = merged.computeIfAbsent(key, (k) -> new long[2]);
					sum[0] += counter[0];
					sum[1] += counter[1];
				});
			}
			List<Count> counts = new ArrayList<>(merged.size());
			merged.forEach((key, sum) -> counts.add(new Count(key, sum[0], sum[1])));
			counts.sort(Comparator.comparingLong(Count::count).reversed().thenComparing(Count::key));
			return List.copyOf(counts.subList(0, Math.min(limit, counts.size())));
		}

	}

}
