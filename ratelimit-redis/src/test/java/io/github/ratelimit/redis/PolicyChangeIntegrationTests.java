package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.stream.Stream;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy whose limit, window or burst changes while instances of the old and the new configuration share one Redis
 * (an edited {@code application.yml} rolled out one instance at a time): requests alternate between the two. Neither
 * reads the other's state as its own (each counts under its own parameters), so together they admit at most what
 * the two configurations would admit apart, never a remaining count outside {@code [0, capacity]}; and not fewer
 * than the stricter one alone would.
 */
class PolicyChangeIntegrationTests {

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

	static Stream<Arguments> changes() {
		Stream.Builder<Arguments> changes = Stream.builder();
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy perMinute = policy(algorithm, 5, Duration.ofMinutes(1), null);
			changes.add(Arguments.of(perMinute, policy(algorithm, 5, Duration.ofHours(1), null)));
			changes.add(Arguments.of(perMinute, policy(algorithm, 2, Duration.ofMinutes(1), null)));
			if (algorithm.isBucket()) {
				changes.add(Arguments.of(policy(algorithm, 10, Duration.ofHours(1), 10L),
						policy(algorithm, 100, Duration.ofMinutes(1), 1L)));
			}
		}
		return changes.build();
	}

	@ParameterizedTest(name = "{0} and {1}")
	@MethodSource("changes")
	void alternatingInstancesAdmitAtMostWhatTheTwoConfigurationsWouldApart(RateLimitPolicy before,
			RateLimitPolicy after) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "change-" + UUID.randomUUID();
		try (RedisRateLimitStore old = store(prefix, clock); RedisRateLimitStore updated = store(prefix, clock)) {
			// A burst at one instant, then a request a second for ten minutes.
			int admitted = 0;
			for (int i = 0; i < 1_200; i++) {
				boolean first = i % 2 == 0;
				RateLimitPolicy policy = first ? before : after;
				Decision decision = (first ? old : updated).tryAcquire(policy, "client", 1);
				assertThat(decision.remaining()).as("request %d", i).isBetween(0L, policy.capacity());
				admitted += decision.allowed() ? 1 : 0;
				if (i >= 600) {
					clock.advance(Duration.ofSeconds(1));
				}
			}
			// Each instance sees every other request: what each admits is at most what it would alone on all of them.
			assertThat(admitted).isLessThanOrEqualTo((int) (alone(before) + alone(after)));
			assertThat(admitted).isGreaterThanOrEqualTo((int) Math.min(alone(before), alone(after)) / 2);
		}
	}

	/** What a policy alone admits of the same requests. */
	private static long alone(RateLimitPolicy policy) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		RateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).build();
		long admitted = 0;
		for (int i = 0; i < 1_200; i++) {
			admitted += store.tryAcquire(policy, "client", 1).allowed() ? 1 : 0;
			if (i >= 600) {
				clock.advance(Duration.ofSeconds(1));
			}
		}
		return admitted;
	}

	private static RedisRateLimitStore store(String prefix, MutableTimeSource clock) {
		return RedisRateLimitStore.builder(connectionFactory)
			.clock(clock)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window, Long burst) {
		return RateLimitPolicy.builder("changed")
			.algorithm(algorithm)
			.limit(limit)
			.window(window)
			.burst(burst)
			.build();
	}

}
