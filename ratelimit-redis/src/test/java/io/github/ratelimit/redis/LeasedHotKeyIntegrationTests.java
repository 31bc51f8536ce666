package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases on one hot key on Redis, as Redis counts the script calls (INFO commandstats), the clock moving 1 ms a
 * request: {@code limit = 1_000_000_000, window = 1s, lease = auto} is admitted from blocks as its windows turn, by
 * one thread or 16; a bucket used at half its rate leases nothing, and each request costs the one call an unleased one
 * would.
 */
class LeasedHotKeyIntegrationTests {

	@RegisterExtension
	static final StandaloneRedis redis = new StandaloneRedis();

	/**
	 * 8,000 requests, one a millisecond, over nine 1-second windows (the first and last in part), by one thread and
	 * by 16 at once. Measured: 32 to 34 script calls, 7,973 to 7,975 requests from blocks (about 4 calls a window:
	 * the block doubles from what the last window used).
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER" })
	void aHotKeyOfAHugeLimitInOneSecondWindowsIsAdmittedFromBlocksAsTheWindowsTurn(Algorithm algorithm)
			throws InterruptedException {
		RateLimitPolicy policy = RateLimitPolicy.builder("bench").algorithm(algorithm).limit(1_000_000_000L)
			.window(Duration.ofSeconds(1)).lease(RateLimitPolicy.LEASE_AUTO).build();
		for (int threads : List.of(1, 16)) {
			MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00.123Z");
			try (RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
				.keyPrefix("hot-" + UUID.randomUUID()).clock(clock).timeout(Duration.ofSeconds(10)).build()) {
				RateLimiter limiter = RateLimiter.builder(store).clock(clock).build();
				limiter.tryAcquire(policy, "warm-up"); // loads the scripts, says the policy's parameters
				redis.server().resetStats();
				AtomicLong admitted = new AtomicLong();
				AtomicLong leased = new AtomicLong();
				List<Thread> running = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					Thread thread = new Thread(() -> {
						for (int i = 0; i < 8_000 / threads; i++) {
							Decision decision = limiter.tryAcquire(policy, "hot");
							admitted.addAndGet(decision.allowed() ? 1 : 0);
							leased.addAndGet((decision.origin() == Decision.Origin.LEASE) ? 1 : 0);
							clock.advanceMillis(1);
						}
					});
					running.add(thread);
					thread.start();
				}
				for (Thread thread : running) {
					thread.join();
				}
				long calls = redis.server().commandCalls("evalsha") + redis.server().commandCalls("eval");
				System.out.printf("%s, %d thread(s): %d script calls, %d of %d from blocks%n", algorithm, threads, calls,
						leased.get(), admitted.get());
				assertThat(admitted.get()).isEqualTo(8_000);
				assertThat(leased.get()).as("%d thread(s): admitted from blocks", threads).isGreaterThanOrEqualTo(7_900);
				assertThat(calls).as("%d thread(s): script calls for 8,000 admitted, at most 5 per 1,000", threads)
					.isLessThanOrEqualTo(40);
			}
		}
	}

	/**
	 * A token or leaky bucket of 1,000 a second, burst 100, {@code lease: auto}, asked every 2 ms by one thread: full
	 * before each request, so no block is taken (one would over-admit, {@code LeasedHotKeyTests}); each request is
	 * one script call, through the store's decision of one request as without a lease (LeasedHotKeyTests). Measured: 1,001 calls (one says the policy's parameters), none from a block.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aBucketUsedAtHalfItsRateLeasesNothingAndEachRequestCostsTheCallOfAnUnleasedOne(Algorithm algorithm) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00.123Z");
		RateLimitPolicy policy = RateLimitPolicy.builder("bucket").algorithm(algorithm).limit(1_000)
			.window(Duration.ofSeconds(1)).burst(100L).lease(RateLimitPolicy.LEASE_AUTO).build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(redis.connectionFactory())
			.keyPrefix("bucket-" + UUID.randomUUID()).clock(clock).timeout(Duration.ofSeconds(10)).build()) {
			RateLimiter limiter = RateLimiter.builder(store).clock(clock).build();
			limiter.tryAcquire(policy, "warm-up");
			redis.server().resetStats();
			long leased = 0;
			for (int i = 0; i < 1_000; i++) {
				Decision decision = limiter.tryAcquire(policy, "hot");
				assertThat(decision.allowed()).isTrue();
				leased += (decision.origin() == Decision.Origin.LEASE) ? 1 : 0;
				clock.advanceMillis(2);
			}
			assertThat(leased).isZero();
			// One call a request, and the policy's parameters said again about once a second.
			assertThat(redis.server().commandCalls("evalsha") + redis.server().commandCalls("eval")).isBetween(1_000L, 1_003L);
		}
	}

}
