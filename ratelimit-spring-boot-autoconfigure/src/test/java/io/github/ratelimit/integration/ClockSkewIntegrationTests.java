package io.github.ratelimit.integration;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.redis.RedisConnections;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Instances whose clocks disagree by minutes still share windows, because the scripts take the time from Redis.
 * Scripts driven by each instance's own clock (as some gateways once did) would not.
 */
class ClockSkewIntegrationTests {

	private static RedisServer redis;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void instancesWithSkewedClocksShareTheSameWindows() {
		awaitAwayFromAnHourEdge();
		String prefix = "skew-" + UUID.randomUUID();
		WebApplicationContextRunner instance = Instances.application("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port(), "ratelimit.redis.key-prefix=" + prefix,
				"ratelimit.redis.timeout=10s", "ratelimit.policies.hot.window=1h", "ratelimit.policies.hot.limit=10");
		long now = System.currentTimeMillis();
		instance.withBean(TimeSource.class, () -> () -> now + Duration.ofMinutes(90).toMillis())
			.run((ahead) -> instance.withBean(TimeSource.class, () -> () -> now - Duration.ofMinutes(90).toMillis())
				.run((behind) -> {
					Instances.Result result = Instances.hammer(List.of(ahead, behind), 8, 10, "user-1");
					assertThat(result.admitted()).isEqualTo(10);
				}));
	}

	@Test
	void scriptsDrivenByEachInstancesOwnClockWouldOverAdmit() {
		LettuceConnectionFactory connectionFactory = RedisConnections.standalone(redis);
		String prefix = "skew-" + UUID.randomUUID();
		RateLimitPolicy policy = RateLimitPolicy.builder("hot").algorithm(Algorithm.FIXED).limit(10)
			.window(Duration.ofMinutes(1)).build();
		MutableTimeSource early = MutableTimeSource.at("2030-01-01T00:00:30Z");
		MutableTimeSource late = MutableTimeSource.at("2030-01-01T00:01:30Z");
		try (RedisRateLimitStore first = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix).clock(early).build();
				RedisRateLimitStore second = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix).clock(late).build()) {
			int admitted = 0;
			for (int i = 0; i < 40; i++) {
				if (((i < 20) ? first : second).tryAcquire(policy, "user-1", 1).allowed()) {
					admitted++;
				}
			}
			// The instance whose clock is a minute later counts in the next window: twice the limit at once.
			// (Each key's time never runs backwards, so the early one cannot reopen its window afterwards.)
			assertThat(admitted).isEqualTo(20);
			assertThat(first.tryAcquire(policy, "user-1", 1).allowed()).isFalse();
		}
		finally {
			connectionFactory.destroy();
		}
	}

	private static void awaitAwayFromAnHourEdge() {
		while (true) {
			@SuppressWarnings("unchecked")
			List<String> time = (List<String>) redis.call("TIME");
			long millis = Long.parseLong(time.get(0)) * 1000 % Duration.ofHours(1).toMillis();
			if (millis > 5_000 && millis < Duration.ofHours(1).toMillis() - 30_000) {
				return;
			}
			try {
				Thread.sleep(1_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
