package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A script call deciding a batch of requests (as coalescing sends them: runs of one hot key, keys interleaved)
 * decides each exactly as the in-memory store decides the same requests one by one.
 */
class BatchedScriptIntegrationTests {

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	private static LettuceScriptExecutor executor;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
		connectionFactory = RedisConnections.standalone(redis);
		executor = new LettuceScriptExecutor(connectionFactory);
	}

	@AfterAll
	static void stopRedis() {
		executor.close();
		connectionFactory.destroy();
		redis.close();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aBatchDecidesLikeTheSameRequestsOneByOne(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.builder("batch-" + UUID.randomUUID())
			.algorithm(algorithm)
			.limit(7)
			.window(Duration.ofSeconds(3))
			.burst(9L)
			.build();
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(clock).build();
		RedisKeys.Layout layout = new RedisKeys("batch").layout(policy);
		Random random = new Random(algorithm.ordinal());
		for (int batch = 0; batch < 300; batch++) {
			clock.advanceMillis(random.nextInt(1500));
			int size = 1 + random.nextInt(12);
			List<String> keys = new ArrayList<>();
			List<byte[]> redisKeys = new ArrayList<>();
			List<byte[]> args = new ArrayList<>(List.of(bytes(clock.currentTimeMillis()), bytes(policy.limit()),
					bytes(policy.windowMillis()), bytes(policy.burst()), bytes(policy.unitsPerToken()),
					bytes(policy.unitsPerMilli()), bytes(3_600_000)));
			List<Long> costs = new ArrayList<>();
			String key = "k0";
			for (int i = 0; i < size; i++) {
				if (random.nextInt(3) == 0) {
					key = "k" + random.nextInt(3); // mostly runs of one key, sometimes another
				}
				long cost = 1 + random.nextInt(4);
				keys.add(key);
				costs.add(cost);
				redisKeys.addAll(List.of(layout.keys(key)));
				args.add(bytes(cost));
			}
			List<Object> answers = executor
				.execute(RateLimitScript.of(algorithm), redisKeys.toArray(new byte[0][]), args.toArray(new byte[0][]))
				.get();
			for (int i = 0; i < size; i++) {
				Decision expected = memory.tryAcquire(policy, keys.get(i), costs.get(i));
				Decision actual = new Decision(((Long) answers.get(5 * i)) == 1, policy.capacity(),
						(Long) answers.get(5 * i + 1), (Long) answers.get(5 * i + 2), (Long) answers.get(5 * i + 3),
						(Long) answers.get(5 * i + 4), Decision.Origin.STORE);
				assertThat(actual).as("batch %d, request %d (%s, cost %d)", batch, i, keys.get(i), costs.get(i))
					.isEqualTo(expected);
			}
		}
	}

	private static byte[] bytes(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

}
