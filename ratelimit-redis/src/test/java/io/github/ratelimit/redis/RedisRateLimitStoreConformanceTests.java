package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.UUID;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.conformance.RateLimitStoreConformanceTests;
import io.github.ratelimit.store.RateLimitStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;


/**
 * The whole conformance suite on a real Redis, with the scripts driven by the test clock.
 */
class RedisRateLimitStoreConformanceTests extends RateLimitStoreConformanceTests {

	@RegisterExtension
	static final StandaloneRedis redis = new StandaloneRedis();

	@Override
	protected RateLimitStore createStore(TimeSource clock) {
		return RedisRateLimitStore.builder(redis.connectionFactory())
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
