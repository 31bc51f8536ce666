package io.github.ratelimit.integration;

import java.util.UUID;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.web.RateLimitExceededException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rolling deploy that changes a policy: two application contexts share one Redis, one configured with the old
 * limit and window and one with the new, and requests alternate between them. Each counts under its own parameters,
 * never reading the other's state as its own, and a request the new instance decides passes only if both states admit
 * it; so together they admit no more than the larger configuration (5), and no fewer than the smaller (3) (the
 * windows are far too long for an edge or a refill to intervene during the test).
 */
class PolicyChangeAcrossInstancesIntegrationTests {

	private static RedisServer redis;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void oldAndNewInstancesTogetherNeverAdmitMoreThanTheLargerConfiguration(Algorithm algorithm) {
		String prefix = "rollout-" + UUID.randomUUID();
		WebApplicationContextRunner instance = Instances.application("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port(), "ratelimit.redis.key-prefix=" + prefix,
				"ratelimit.redis.timeout=10s", "ratelimit.failure-mode=deny",
				"ratelimit.policies.hot.algorithm=" + algorithm);
		WebApplicationContextRunner before = instance.withPropertyValues("ratelimit.policies.hot.limit=5",
				"ratelimit.policies.hot.window=10000d");
		WebApplicationContextRunner after = instance.withPropertyValues("ratelimit.policies.hot.limit=3",
				"ratelimit.policies.hot.window=20000d");
		before.run((old) -> after.run((updated) -> {
			HotController[] controllers = { old.getBean(HotController.class), updated.getBean(HotController.class) };
			int admitted = 0;
			for (int i = 0; i < 100; i++) {
				try {
					controllers[i % 2].hit("user-1");
					admitted++;
				}
				catch (RateLimitExceededException ex) {
					assertThat(ex.getDecision().remaining()).isBetween(0L, ex.getPolicy().capacity());
				}
			}
			assertThat(admitted).as(algorithm.name()).isBetween(3, 5);
		}));
	}

}
