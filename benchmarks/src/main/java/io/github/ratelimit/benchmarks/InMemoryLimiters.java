package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

import io.github.bucket4j.Bucket;
import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;

/**
 * In-memory limiters configured to the same limit: ours (fixed window and token bucket), Bucket4j's local bucket
 * (token bucket, one per key in a map, as applications hold them) and Resilience4j's {@code RateLimiter} (one per
 * key).
 */
final class InMemoryLimiters {

	private InMemoryLimiters() {
	}

	static Limiter create(String name, long limit, Duration window, int keys) {
		return switch (name) {
			case "ratelimit-fixed" -> ours(Algorithm.FIXED, limit, window, keys);
			case "ratelimit-token-bucket" -> ours(Algorithm.TOKEN_BUCKET, limit, window, keys);
			case "bucket4j" -> bucket4j(limit, window);
			case "resilience4j" -> resilience4j(limit, window);
			default -> throw new IllegalArgumentException("Unknown limiter " + name);
		};
	}

	private static Limiter ours(Algorithm algorithm, long limit, Duration window, int keys) {
		RateLimitPolicy policy = RateLimitPolicy.builder("bench").algorithm(algorithm).limit(limit).window(window).build();
		RateLimiter limiter = RateLimiter.of(InMemoryRateLimitStore.create(Math.max(keys * 2L, 1000)));
		return (key) -> limiter.tryAcquire(policy, key).allowed();
	}

	private static Limiter bucket4j(long limit, Duration window) {
		ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
		return (key) -> {
			Bucket bucket = buckets.get(key);
			if (bucket == null) {
				bucket = buckets.computeIfAbsent(key, (k) -> Bucket.builder()
					.addLimit((bandwidth) -> bandwidth.capacity(limit).refillGreedy(limit, window))
					.build());
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
