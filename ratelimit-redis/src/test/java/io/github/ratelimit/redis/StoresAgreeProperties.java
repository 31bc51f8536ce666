package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.conformance.RandomScenario;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.test.RedisServer;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory store and the Redis store, fed the same random sequence of (time, key, cost), make the same
 * decision every time: allowed, remaining, reset and retry-after alike.
 */
class StoresAgreeProperties {

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	private static RedisRateLimitStore redisStore;

	private static final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	@BeforeContainer
	static void startRedis() {
		redis = RedisServer.start();
		connectionFactory = RedisConnections.standalone(redis);
		redisStore = RedisRateLimitStore.builder(connectionFactory)
			.clock(clock)
			.keyPrefix("agree-" + UUID.randomUUID())
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	@AfterContainer
	static void stopRedis() {
		redisStore.close();
		connectionFactory.destroy();
		redis.close();
	}

	@Property(tries = 300)
	void memoryAndRedisDecideAlikeDecisionByDecision(@ForAll("scenarios") RandomScenario scenario) {
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
		RateLimitPolicy policy = scenario.policy("agree-" + UUID.randomUUID());
		int step = 0;
		for (RandomScenario.Step request : scenario.steps()) {
			clock.advanceMillis(request.advanceMillis());
			String key = "key-" + request.key();
			Decision inMemory = memory.tryAcquire(policy, key, request.cost());
			Decision inRedis = redisStore.tryAcquire(policy, key, request.cost());
			assertThat(inRedis).as("step %d of %s: %s", step, policy, request).isEqualTo(inMemory);
			step++;
		}
	}

	@Property(tries = 150)
	void theAllOrNothingScriptDecidesAsTheMemoryStoreDecisionByDecision(
			@ForAll("scenarios") RandomScenario scenario) {
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
		RateLimitPolicy policy = scenario.policy("together-" + UUID.randomUUID());
		int step = 0;
		for (RandomScenario.Step request : scenario.steps()) {
			clock.advanceMillis(request.advanceMillis());
			Acquisition acquisition = new Acquisition(policy, "key-" + request.key(), request.cost());
			Decision inMemory = memory.tryAcquireAll(List.of(acquisition)).decisions().get(0);
			Decision inRedis = redisStore.tryAcquireAll(List.of(acquisition)).decisions().get(0);
			assertThat(inRedis).as("step %d of %s: %s", step, policy, request).isEqualTo(inMemory);
			step++;
		}
	}

	@Provide
	Arbitrary<RandomScenario> scenarios() {
		return RandomScenario.scenarios(60);
	}

}
