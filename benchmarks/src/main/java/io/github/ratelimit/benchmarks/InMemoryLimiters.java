package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;

/**
 * In-memory limiters configured to the same limit: ours (fixed window and token bucket), Bucket4j's local bucket
 * (token bucket, one per key in a map, as applications hold them) and Resilience4j's {@code RateLimiter} (one per
 * key). Two shapes of answer are compared like for like: whether the request passes ({@code ratelimit-fixed},
 * {@code bucket4j}, {@code resilience4j}), and the whole answer a header writer needs
 * ({@code ratelimit-fixed-decision}, {@code bucket4j-probe}).
 */
final class InMemoryLimiters {

	private InMemoryLimiters() {
	}

	static Limiter create(String name, long limit, Duration window, int keys) {
		return switch (name) {
			case "ratelimit-fixed" -> ours(Algorithm.FIXED, limit, window, keys);
			case "ratelimit-token-bucket" -> ours(Algorithm.TOKEN_BUCKET, limit, window, keys);
			case "ratelimit-fixed-decision" -> oursWithDecision(limit, window, keys);
			case "bucket4j" -> bucket4j(limit, window, false);
			case "bucket4j-probe" -> bucket4j(limit, window, true);
			case "resilience4j" -> resilience4j(limit, window);
			default -> throw new IllegalArgumentException("Unknown limiter " + name);
		};
	}

	/** Whether the request passes, as Bucket4j's {@code tryConsume} answers, from the decision requests take. */
	private static Limiter ours(Algorithm algorithm, long limit, Duration window, int keys) {
		RateLimitPolicy policy = policy(algorithm, limit, window);
		RateLimiter limiter = RateLimiter.of(InMemoryRateLimitStore.create(Math.max(keys * 2L, 1000)));
		return (key) -> limiter.tryAcquire(policy, key).allowed();
	}

	/** The whole decision, with what the headers need, as the annotation asks for it. */
	private static Limiter oursWithDecision(long limit, Duration window, int keys) {
		RateLimitPolicy policy = policy(Algorithm.FIXED, limit, window);
		RateLimiter limiter = RateLimiter.of(InMemoryRateLimitStore.create(Math.max(keys * 2L, 1000)));
		return (key) -> {
			Decision decision = limiter.tryAcquire(policy, key);
			return decision.allowed() && decision.remaining() >= 0;
		};
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder("bench").algorithm(algorithm).limit(limit).window(window).build();
	}

	/**
	 * One bucket per key. With {@code probe}, {@code tryConsumeAndReturnRemaining}: what headers would need (the
	 * tokens left and the wait), as ours with its decision.
	 */
	private static Limiter bucket4j(long limit, Duration window, boolean probe) {
		ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
		return (key) -> {
			Bucket bucket = buckets.get(key);
			if (bucket == null) {
				bucket = buckets.computeIfAbsent(key, (k) -> Bucket.builder()
					.addLimit((bandwidth) -> bandwidth.capacity(limit).refillGreedy(limit, window))
					.build());
			}
			if (probe) {
				ConsumptionProbe result = bucket.tryConsumeAndReturnRemaining(1);
				return result.isConsumed() && result.getRemainingTokens() >= 0;
			}
			return bucket.tryConsume(1);
		};
	}

	private static Limiter resilience4j(long limit, Duration window) {
		RateLimiterConfig config = RateLimiterConfig.custom()
			.limitForPeriod((int) Math.min(limit, Integer.MAX_VALUE))
			.limitRefreshPeriod(window)
			.timeoutDuration(Duration.ZERO)
			.build();
		ConcurrentHashMap<String, io.github.resilience4j.ratelimiter.RateLimiter> limiters = new ConcurrentHashMap<>();
		return (key) -> {
			io.github.resilience4j.ratelimiter.RateLimiter limiter = limiters.get(key);
			if (limiter == null) {
				limiter = limiters.computeIfAbsent(key,
						(k) -> io.github.resilience4j.ratelimiter.RateLimiter.of(k, config));
			}
			return limiter.acquirePermission();
		};
	}

}
