package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.test.RespClient;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis full to its {@code maxmemory} with {@code noeviction} refuses every write: each decision then fails as a
 * store failure, so the failure mode decides, listeners hear of it, and the message says what to change.
 */
class RedisOutOfMemoryTests {

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startAFullRedis() {
		redis = RedisServer.spawn("--maxmemory-policy", "noeviction");
		String filler = "x".repeat(64 * 1024);
		try (RespClient client = redis.client()) {
			for (int i = 0; i < 64; i++) {
				client.call("SET", "filler:" + i, filler);
			}
			// Well below what is used, so that no freed buffer brings Redis back under it between two tests.
			String memory = client.callForString("INFO", "memory");
			long used = Long.parseLong(memory.replaceAll("(?s).*used_memory:(\\d+).*", "$1"));
			client.call("CONFIG", "SET", "maxmemory", String.valueOf(used - 2 * 1024 * 1024));
		}
		connectionFactory = RedisConnections.standalone(redis);
	}

	@AfterAll
	static void stopRedis() {
		connectionFactory.destroy();
		redis.close();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRedisOutOfMemoryIsAStoreFailureThatNamesMaxmemory(Algorithm algorithm) {
		List<RuntimeException> failures = new ArrayList<>();
		RateLimitListener listener = new RateLimitListener() {

			@Override
			public void onStoreFailure(RateLimitPolicy policy, @Nullable RuntimeException failure) {
				failures.add(failure);
			}

		};
		RateLimitPolicy policy = RateLimitPolicy.builder("full-" + algorithm)
			.algorithm(algorithm)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.failureMode(FailureMode.DENY)
			.build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("oom")
			.timeout(Duration.ofSeconds(10))
			.build()) {
			RateLimiter limiter = RateLimiter.builder(store).listener(listener).build();
			Decision decision = limiter.tryAcquire(policy, "client");
			assertThat(decision.origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
			assertThat(failures).singleElement()
				.satisfies((failure) -> assertThat(failure.getMessage()).contains("Redis is out of memory")
					.contains("maxmemory-policy")
					.contains("'" + policy.name() + "'"));
		}
	}

}
