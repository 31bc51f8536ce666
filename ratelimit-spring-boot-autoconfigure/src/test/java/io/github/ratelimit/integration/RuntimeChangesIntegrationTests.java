package io.github.ratelimit.integration;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.web.RateLimitExceededException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
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

	/**
	 * Whoever writes into the store's hash is no operator: a change that sets what the endpoint refuses, or does not
	 * say who made it, is refused and logged; one that looks like an operator's applies, without a secret, logged at
	 * WARN with its author on the instance applying it, and a WARN at start-up says that the store is trusted.
	 */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aChangeWrittenIntoTheStoreAppliesOnlyWithTheEndpointsAttributesAndItsAuthorAndIsLoggedAtWarn(
			CapturedOutput output) {
		String anonymous = "anonymous-" + UUID.randomUUID();
		redis.call("HSET", anonymous + ":changes", "hot", "mode=shadow");
		onRedis(anonymous).run((context) -> {
			assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().mode().name()).isEqualTo("ENFORCE");
			assertThat(context.getBean(RuntimeChanges.class).storedChanges().get("hot").refused())
				.isEqualTo("it does not say who made it, on which instance and when");
		});
		String refusedAttribute = "attribute-" + UUID.randomUUID();
		redis.call("HSET", refusedAttribute + ":changes", "hot",
				"limit=5&failure-mode=deny&changed-by=mallory&changed-on=1%40h&changed-at=2026-12-05T00%3A00%3A00Z");
		onRedis(refusedAttribute).run((context) -> {
			assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit()).isEqualTo(3);
			assertThat(context.getBean(RuntimeChanges.class).storedChanges().get("hot").refused())
				.isEqualTo("'failure-mode' cannot be changed at run time");
		});
		String stamped = "stamped-" + UUID.randomUUID();
		redis.call("HSET", stamped + ":changes", "hot",
				"limit=5&changed-by=mallory&changed-on=1%40h&changed-at=2026-12-05T00%3A00%3A00Z");
		onRedis(stamped).run((context) -> assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit())
			.isEqualTo(5));
		assertThat(output).contains("ratelimit.changes.secret is not set")
			.contains("kept in the store is refused, as not an operator's: 'failure-mode' cannot be changed at run time")
			.contains("WARN")
			.contains("Rate limit policy 'hot' changed at run time {limit=5} by mallory on 1@h at "
					+ "2026-12-05T00:00:00Z, as read from the store");
	}

	/**
	 * With a secret, instances apply only the changes signed with it: one made through an instance sharing the secret
	 * applies, one written into the store, or signed with another secret, is refused; the endpoint's read lists them
	 * with who made them.
	 */
	@Test
	void withASecretOnlyTheChangesSignedWithItApplyFromTheStore() {
		String prefix = "signed-" + UUID.randomUUID();
		WebApplicationContextRunner signed = onRedis(prefix).withPropertyValues("ratelimit.changes.secret=s3cret");
		signed.run((first) -> {
			first.getBean(RuntimeChanges.class).change("hot", Map.of("limit", "5"), "alice");
			signed.run((later) -> {
				assertThat(later.getBean(PolicyCatalog.class).policy("hot").policy().limit()).isEqualTo(5);
				RuntimeChanges.StoredChange change = endpoint(later).rateLimits().changes().get("hot");
				assertThat(change.values()).isEqualTo(Map.of("limit", "5"));
				assertThat(change.changedBy()).isEqualTo("alice");
				assertThat(change.changedOn()).contains("@");
				assertThat(change.signed()).isTrue();
				assertThat(change.applied()).isTrue();
			});
			onRedis(prefix).withPropertyValues("ratelimit.changes.secret=other").run((other) -> {
				assertThat(other.getBean(PolicyCatalog.class).policy("hot").policy().limit()).isEqualTo(3);
				assertThat(other.getBean(RuntimeChanges.class).storedChanges().get("hot").refused())
					.isEqualTo("its signature is not that of ratelimit.changes.secret");
			});
		});
		redis.call("HSET", prefix + ":changes", "hot",
				"limit=7&changed-by=mallory&changed-on=1%40h&changed-at=2026-12-05T00%3A00%3A00Z");
		signed.run((context) -> {
			assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit()).isEqualTo(3);
			assertThat(context.getBean(RuntimeChanges.class).storedChanges().get("hot").refused())
				.isEqualTo("it is unsigned, while ratelimit.changes.secret is set");
		});
	}

	/**
	 * A window, limit or burst out of the bounds, or a limit below the lease, is refused through the endpoint (a bad
	 * request) naming the value, and nothing changes; so is an attribute the endpoint does not change.
	 */
	@Test
	void aChangeOutOfBoundsIsRefusedNamingTheValue() {
		onRedis("bounds-" + UUID.randomUUID()).withPropertyValues("ratelimit.policies.hot.lease=2").run((context) -> {
			RateLimitsEndpoint endpoint = endpoint(context);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", null, "1ms", null, null, null, null))
				.withMessageContaining("'window' 1ms is out of bounds");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", null, "PT9999999H", null, null, null,
						null))
				.withMessageContaining("'window' PT9999999H is out of bounds");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", 2_251_799_813_685_248L, null, null, null,
						null, null))
				.withMessageContaining("'limit' 2251799813685248 is out of bounds");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", null, null, 2_000_000_000L,
						"token-bucket", null, null))
				.withMessageContaining("'burst' 2000000000 is out of bounds");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", 1L, null, null, null, null, null))
				.withMessageContaining("'lease' must be at most the limit (1) but was 2");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", null, "99999999", null, null, null,
						null))
				.withMessageContaining("'window' must have a unit");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.change(SecurityContext.NONE, "hot", null, null, 5L, null, null, null))
				.withMessageContaining("'burst' applies to TOKEN_BUCKET and LEAKY_BUCKET only; FIXED counts no burst");
			assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
				.isThrownBy(() -> context.getBean(RuntimeChanges.class).change("hot", Map.of("lease", "1")))
				.withMessageContaining("'lease' cannot be changed at run time");
			assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().window()).hasHours(1);
			assertThat(context.getBean(PolicyCatalog.class).policy("hot").policy().limit()).isEqualTo(3);
		});
	}

	/**
	 * The store's keys expire by the policy in force when they were written (a key lives at most two of its windows):
	 * once a change to a 2-minute sliding counter is dropped, its keys are gone within 4 minutes, not the
	 * configuration's hour.
	 */
	@Test
	@SuppressWarnings("unchecked")
	void keysWrittenUnderAChangeExpireByItsWindowNotTheConfigurations() {
		String prefix = "ttl-" + UUID.randomUUID();
		onRedis(prefix).run((context) -> {
			RuntimeChanges changes = context.getBean(RuntimeChanges.class);
			changes.change("hot", Map.of("window", "2m", "algorithm", "sliding-counter"));
			context.getBean(HotController.class).hit("client");
			changes.change("hot", Map.of());
			List<String> keys = (List<String>) redis.call("KEYS", prefix + ":{*");
			assertThat(keys).isNotEmpty();
			for (String key : keys) {
				assertThat((Long) redis.call("PTTL", key)).as(key).isBetween(0L, 4 * 60_000L);
			}
		});
	}

	private static RateLimitsEndpoint endpoint(ConfigurableApplicationContext context) {
		return new RateLimitsEndpoint(context.getBean(PolicyCatalog.class), context.getBean(RateLimiter.class),
				context.getBean(RuntimeChanges.class), null,
				io.github.ratelimit.actuate.KeyDisplay.fingerprinted(null), null);
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
