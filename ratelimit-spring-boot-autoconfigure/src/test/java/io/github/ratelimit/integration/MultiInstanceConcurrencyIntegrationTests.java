package io.github.ratelimit.integration;

import java.util.List;
import java.util.UUID;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.test.RedisCluster;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application contexts (two instances of one application) sharing one Redis, or one Redis Cluster, with 64
 * threads on one key: exactly the limit is admitted, for every algorithm. (At one instant every algorithm's bound is
 * its capacity, and the window is long enough that no refill or edge intervenes.)
 */
class MultiInstanceConcurrencyIntegrationTests {

	private static RedisServer redis;

	private static RedisCluster cluster;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
		cluster = RedisCluster.start(3);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
		cluster.close();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void twoInstancesOnOneRedisAdmitExactlyTheLimit(Algorithm algorithm) {
		assertExactlyTheLimitIsAdmitted(algorithm, "spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port());
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void twoInstancesOnARedisClusterAdmitExactlyTheLimit(Algorithm algorithm) {
		assertExactlyTheLimitIsAdmitted(algorithm, "spring.data.redis.cluster.nodes=" + cluster.nodeAddresses());
	}

	@Test
	void oneInstanceInMemoryAdmitsExactlyTheLimit() {
		Instances.application("ratelimit.store=memory").run((context) -> {
			Instances.Result result = Instances.hammer(List.of(context), 64, 10, "user-1");
			assertThat(result.admitted()).isEqualTo(100);
			assertThat(result.rejected()).isEqualTo(540);
		});
	}

	private void assertExactlyTheLimitIsAdmitted(Algorithm algorithm, String... redisProperties) {
		String prefix = "concurrency-" + UUID.randomUUID();
		WebApplicationContextRunner instance = Instances.application(redisProperties)
			.withPropertyValues("ratelimit.policies.hot.algorithm=" + algorithm, "ratelimit.redis.key-prefix=" + prefix,
					// Generous for slow CI machines, and fail closed: a timeout must never look like an admission.
					"ratelimit.redis.timeout=10s", "ratelimit.failure-mode=deny");
		instance.run((first) -> instance.run((second) -> {
			assertThat(first.getBean(RedisRateLimitStore.class)).isNotSameAs(second.getBean(RedisRateLimitStore.class));
			Instances.Result result = Instances.hammer(List.of(first, second), 32, 10, "user-1");
			assertThat(result.admitted()).as(algorithm.name()).isEqualTo(100);
			assertThat(result.rejected()).as(algorithm.name()).isEqualTo(540);
		}));
	}

}
