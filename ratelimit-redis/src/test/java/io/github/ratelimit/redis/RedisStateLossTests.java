package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.ResetListener;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis that loses its data (here, restarted without persistence) no longer holds the counters that this instance's
 * cached denials came from: the instance notices at its next check, about a second later, and forgets them, so a
 * client that the empty Redis admits is admitted, not rejected until the old window ends.
 */
class RedisStateLossTests {

	private RedisServer redis;

	private LettuceConnectionFactory connectionFactory;

	@BeforeEach
	void startRedis() {
		this.redis = RedisServer.spawn();
		this.connectionFactory = RedisConnections.standalone(this.redis);
	}

	@AfterEach
	void stop() {
		this.connectionFactory.destroy();
		this.redis.close();
	}

	@Test
	void aCheckAfterRedisLostItsDataTellsTheListenersOnceAndNotBefore() {
		StateLossWatch watch = new StateLossWatch(this.connectionFactory, "lost-" + UUID.randomUUID());
		AtomicInteger clears = new AtomicInteger();
		ResetListener listener = new ResetListener() {

			@Override
			public void onReset(String policy, String variant, String key) {
			}

			@Override
			public void onClear() {
				clears.incrementAndGet();
			}

		};
		watch.listenWithoutWatching(listener);
		watch.check();
		watch.check();
		assertThat(clears).as("Redis kept its data").hasValue(0);
		this.redis.restart();
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (clears.get() == 0 && System.nanoTime() < deadline) {
			watch.check(); // fails until the connection is back
		}
		assertThat(clears).as("told once Redis answers again").hasValue(1);
		watch.check();
		assertThat(clears).hasValue(1);
	}

	@Test
	void aDenialCachedBeforeRedisLostItsDataIsForgottenAndTheEmptyRedisDecides() throws InterruptedException {
		RateLimitPolicy policy = RateLimitPolicy.builder("lost")
			.algorithm(Algorithm.FIXED)
			.limit(1)
			.window(Duration.ofHours(1))
			.failureMode(FailureMode.DENY)
			.build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(this.connectionFactory)
			.keyPrefix("lost-" + UUID.randomUUID())
			.coalesce(false)
			.build()) {
			RateLimiter limiter = RateLimiter.builder(store).build();
			assertThat(limiter.tryAcquire(policy, "client").allowed()).isTrue();
			assertThat(limiter.tryAcquire(policy, "client").allowed()).isFalse();
			assertThat(limiter.tryAcquire(policy, "client").origin()).as("cached for the hour")
				.isEqualTo(Decision.Origin.DENY_CACHE);
			this.redis.restart();
			// The watch checks once a second; the deadline only allows for the reconnection on a shared machine.
			long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			Decision decision = limiter.tryAcquire(policy, "client");
			while (decision.origin() != Decision.Origin.STORE && System.nanoTime() < deadline) {
				Thread.sleep(100);
				decision = limiter.tryAcquire(policy, "client");
			}
			assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
			assertThat(decision.allowed()).as("the empty Redis admits the client").isTrue();
		}
	}

}
