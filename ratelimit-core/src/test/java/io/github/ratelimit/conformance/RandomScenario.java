package io.github.ratelimit.conformance;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * A random policy and a random sequence of requests against it, for property-based tests.
 *
 * @param algorithm the algorithm
 * @param limit the limit
 * @param windowMillis the window
 * @param burst the burst
 * @param steps the requests, in order
 */
public record RandomScenario(Algorithm algorithm, long limit, long windowMillis, long burst, List<Step> steps) {

	/**
	 * Advance the clock by {@code advanceMillis}, then request {@code cost} units for key {@code key}.
	 */
	public record Step(long advanceMillis, int key, long cost) {
	}

	public RateLimitPolicy policy(String name) {
		return RateLimitPolicy.builder(name)
			.algorithm(this.algorithm)
			.limit(this.limit)
			.window(Duration.ofMillis(this.windowMillis))
			.burst(this.burst)
			.build();
	}

	public static Arbitrary<RandomScenario> scenarios(int maxSteps) {
		return scenarios(maxSteps, 3);
	}

	/**
	 * Scenarios over keys {@code 0} to {@code keys - 1}.
	 * @param maxSteps the most requests
	 * @param keys how many key numbers a step chooses from
	 * @return the scenarios
	 */
	public static Arbitrary<RandomScenario> scenarios(int maxSteps, int keys) {
		Arbitrary<Algorithm> algorithms = Arbitraries.of(Algorithm.class);
		Arbitrary<Long> limits = Arbitraries.longs().between(1, 20);
		Arbitrary<Long> windows = Arbitraries.of(1L, 7L, 100L, 999L, 1_000L, 60_000L, 86_400_000L);
		Arbitrary<Long> bursts = Arbitraries.longs().between(1, 30);
		return Combinators.combine(algorithms, limits, windows, bursts).flatAs((algorithm, limit, window, burst) -> {
			Arbitrary<Long> advances = Arbitraries.frequencyOf(
					net.jqwik.api.Tuple.of(5, Arbitraries.just(0L)),
					net.jqwik.api.Tuple.of(10, Arbitraries.longs().between(0, Math.max(1, window / 4))),
					net.jqwik.api.Tuple.of(2, Arbitraries.longs().between(0, 3 * window)));
			Arbitrary<Step> steps = Combinators.combine(advances, Arbitraries.integers().between(0, keys - 1),
					Arbitraries.longs().between(1, 4)).as(Step::new);
			return steps.list().ofMinSize(1).ofMaxSize(maxSteps)
				.map((list) -> new RandomScenario(algorithm, limit, window, burst, list));
		});
	}

	/**
	 * The most units the algorithm may admit in an interval of one window, and whether the interval is closed.
	 */
	public long bound() {
		return switch (this.algorithm) {
			case FIXED -> 2 * this.limit;
			case SLIDING_LOG, CONCURRENCY -> this.limit;
			case SLIDING_COUNTER -> 2 * this.limit - 1;
			case TOKEN_BUCKET, LEAKY_BUCKET -> this.burst + this.limit;
		};
	}

	public boolean closedWindows() {
		return this.algorithm.isBucket();
	}

}
