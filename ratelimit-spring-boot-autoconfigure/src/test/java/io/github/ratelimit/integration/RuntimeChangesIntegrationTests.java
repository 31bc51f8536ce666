package io.github.ratelimit.integration;

import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.web.RateLimitExceededException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Changes of a policy while the application runs: made through one instance, kept in the shared Redis, applied by
 * every instance within about a second and by an instance that starts later; and, with Spring Cloud, a refresh of
 * {@code ratelimit.policies} applied without a restart. Counts carry over a changed limit.
 */
class RuntimeChangesIntegrationTests {

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
	void aChangeThroughOneInstanceReachesTheOthersWithinTwoSecondsAndOnesThatStartLater() {
		WebApplicationContextRunner instance = onRedis("changes-" + UUID.randomUUID());
		instance.run((first) -> instance.run((second) -> {
			HotController other = second.getBean(HotController.class);
			for (int i = 0; i < 3; i++) {
				first.getBean(HotController.class).hit("shared");
			}
			first.getBean(RuntimeChanges.class).change("hot", Map.of("limit", "5"));
			long deadline = System.nanoTime() + 2_000_000_000L;
			while (second.getBean(PolicyCatalog.class).policy("hot").policy().limit() != 5
					&& System.nanoTime() < deadline) {
				Thread.sleep(20);
			}
			assertThat(second.getBean(PolicyCatalog.class).policy("hot").policy().limit())
				.as("applied on the other instance within 2 s").isEqualTo(5);
			assertThat(second.getBean(PolicyCatalog.class).policy("hot").sources()).containsEntry("limit", "runtime");
			other.hit("shared");
			other.hit("shared");
			assertThatExceptionOfType(RateLimitExceededException.class).as("3 used of 5, then 2: the count carried over")
				.isThrownBy(() -> other.hit("shared"));
			instance.run((later) -> assertThat(later.getBean(PolicyCatalog.class).policy("hot").policy().limit())
				.as("an instance that starts later starts with the change").isEqualTo(5));
			second.getBean(RuntimeChanges.class).change("hot", Map.of());
			deadline = System.nanoTime() + 2_000_000_000L;
			while (first.getBean(PolicyCatalog.class).policy("hot").policy().limit() != 3
					&& System.nanoTime() < deadline) {
				Thread.sleep(20);
			}
			assertThat(first.getBean(PolicyCatalog.class).policy("hot").policy().limit())
				.as("dropped everywhere").isEqualTo(3);
		}));
	}

	@Test
	void aRefreshOfTheConfigurationAppliesWithoutARestartUnderAnOperatorsChange() {
		Instances.application("ratelimit.store=memory", "ratelimit.policies.hot.limit=3", "ratelimit.policies.hot.window=1h")
			.run((context) -> {
				HotController hot = context.getBean(HotController.class);
				for (int i = 0; i < 3; i++) {
					hot.hit("refreshed");
				}
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> hot.hit("refreshed"));
				TestPropertyValues.of("ratelimit.policies.hot.limit=4").applyTo(context);
				context.publishEvent(new EnvironmentChangeEvent(context, Set.of("ratelimit.policies.hot.limit")));
				hot.hit("refreshed");
				assertThatExceptionOfType(RateLimitExceededException.class).as("3 used of 4, then 1")
					.isThrownBy(() -> hot.hit("refreshed"));
				assertThat(context.getBean(PolicyCatalog.class).policy("hot").sources())
					.containsEntry("limit", "ratelimit.policies.hot.limit");
				context.getBean(RuntimeChanges.class).change("hot", Map.of("limit", "6"));
				TestPropertyValues.of("ratelimit.policies.hot.limit=2").applyTo(context);
				context.publishEvent(new EnvironmentChangeEvent(context, Set.of("ratelimit.policies.hot.limit")));
				assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit())
					.as("the operator's change wins").isEqualTo(6);
				context.getBean(RuntimeChanges.class).change("hot", Map.of());
				assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit())
					.as("then the refreshed configuration").isEqualTo(2);
			});
	}

	@Test
	void aChangeKeptInTheStoreThatThisInstanceFindsInvalidIsLeftOut() {
		String prefix = "invalid-" + UUID.randomUUID();
		redis.call("HSET", prefix + ":changes", "hot", "limit=0");
		onRedis(prefix).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit()).isEqualTo(3);
		});
	}

	private static WebApplicationContextRunner onRedis(String prefix) {
		return Instances.application("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				"ratelimit.redis.key-prefix=" + prefix, "ratelimit.redis.timeout=5s", "ratelimit.policies.hot.limit=3",
				"ratelimit.policies.hot.window=1h");
	}

	static boolean started(ConfigurableApplicationContext context) {
		return context.isRunning();
	}

}
