package io.github.ratelimit.conformance;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * The adversarial workload for each algorithm's worst case, and the largest number of units admitted in any
 * interval of one window, measured in limiter time.
 * <ul>
 * <li>{@code FIXED}: {@code L} just before a window edge and {@code L} just after: {@code 2L}.
 * <li>{@code SLIDING_LOG}: the same, then steady overload: never more than {@code L}.
 * <li>{@code SLIDING_COUNTER}: {@code L} at the very end of a window, then one request every {@code W/10L}: exactly
 * {@code 2L - 1}.
 * <li>{@code TOKEN_BUCKET}, {@code LEAKY_BUCKET}: a full bucket emptied at once, then a poll every {@code W/10L}:
 * {@code B + L} in a closed interval.
 * </ul>
 */
public final class BoundaryBurst {

	static final long LIMIT = 10;

	static final Duration WINDOW = Duration.ofSeconds(1);

	private BoundaryBurst() {
	}

	public static Result measure(Algorithm algorithm, Taker taker, MutableTimeSource clock, String name) {
		RateLimitPolicy policy = RateLimitPolicy.builder(name)
			.algorithm(algorithm)
			.limit(LIMIT)
			.window(WINDOW)
			.build();
		long window = policy.windowMillis();
		AdmissionLog log = new AdmissionLog();
		Runnable send = () -> {
			if (taker.take(policy, "attacker", 1).allowed()) {
				log.admitted(clock.currentTimeMillis(), 1);
			}
		};
		// Two windows of quiet first, so nothing from before counts.
		clock.alignTo(WINDOW, 0);
		clock.advanceMillis(2 * window);
		switch (algorithm) {
			case FIXED, SLIDING_LOG, CONCURRENCY -> {
				clock.advanceMillis(window - 10);
				repeat(LIMIT + 5, send);
				clock.advanceMillis(20);
				repeat(LIMIT + 5, send);
				pollFor(3 * window, 10, clock, send);
			}
			case SLIDING_COUNTER -> {
				clock.advanceMillis(window - 1);
				repeat(LIMIT, send);
				clock.advanceMillis(1);
				pollFor(2 * window, window / (10 * LIMIT), clock, send);
			}
			case TOKEN_BUCKET, LEAKY_BUCKET -> {
				repeat(LIMIT + 5, send);
				pollFor(2 * window, window / (10 * LIMIT), clock, send);
			}
		}
		boolean closed = algorithm.isBucket();
		AdmissionLog.Witness witness = log.maxInWindow(window, closed);
		long bound = switch (algorithm) {
			case FIXED -> 2 * LIMIT;
			case SLIDING_LOG, CONCURRENCY -> LIMIT; // slots never given back: each holds for a whole hold
			case SLIDING_COUNTER -> 2 * LIMIT - 1;
			case TOKEN_BUCKET, LEAKY_BUCKET -> policy.burst() + LIMIT;
		};
		return new Result(algorithm, witness.count(), bound, bound, closed, witness);
	}

	private static void repeat(long times, Runnable action) {
		for (long i = 0; i < times; i++) {
			action.run();
		}
	}

	private static void pollFor(long duration, long period, MutableTimeSource clock, Runnable send) {
		for (long elapsed = 0; elapsed < duration; elapsed += period) {
			clock.advanceMillis(period);
			send.run();
		}
	}

	/**
	 * Takes units from the store under test.
	 */
	@FunctionalInterface
	public interface Taker {

		Decision take(RateLimitPolicy policy, String key, long cost);

	}

	/**
	 * What was measured: the most units admitted in any interval of one window, the bound the algorithm promises,
	 * and the value the adversarial workload is expected to reach.
	 */
	public record Result(Algorithm algorithm, long maxInAnyWindow, long bound, long reachable, boolean closed,
			AdmissionLog.Witness witness) {

		@Override
		public String toString() {
			return algorithm + " limit " + LIMIT + " per " + WINDOW.toMillis() + "ms: max " + this.maxInAnyWindow
					+ " in any " + (this.closed ? "closed" : "half-open") + " window (bound " + this.bound
					+ "), between t=" + this.witness.first() % 100_000 + " and t=" + this.witness.last() % 100_000;
		}

	}

}
