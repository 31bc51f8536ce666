package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.UUID;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.conformance.RateLimitStoreConformanceTests;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The whole conformance suite on a real Redis, with the scripts driven by the test clock.
 */
class RedisRateLimitStoreConformanceTests extends RateLimitStoreConformanceTests {

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
		connectionFactory = RedisConnections.standalone(redis);
	}

	@AfterAll
	static void stopRedis() {
		connectionFactory.destroy();
		redis.close();
	}

	@Override
	protected RateLimitStore createStore(TimeSource clock) {
		return RedisRateLimitStore.builder(connectionFactory)
			.clock(clock)
			.keyPrefix("conformance-" + UUID.randomUUID())
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	@AfterEach
	void closeStore() {
		((RedisRateLimitStore) this.store).close();
	}

}
