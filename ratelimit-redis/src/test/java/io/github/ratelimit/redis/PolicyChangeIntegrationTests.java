package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.RedisServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A policy whose algorithm, limit, window or burst changes while instances of the old and the new configuration
 * share one Redis (an edited {@code application.yml} rolled out one instance at a time): requests alternate between
 * the two. A change of limit or burst keeps the state, each configuration deciding on it with its own limit; after a
 * change of algorithm or window neither reads the other's state as its own (each counts under its own parameters),
 * and while both are in use a request passes only if it passes under both. Either way together they never admit more
 * than the larger configuration would alone, and never report a remaining count outside {@code [0, capacity]}.
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
		// A change of algorithm.
		changes.add(Arguments.of(policy(Algorithm.FIXED, 5, Duration.ofMinutes(1), null),
				policy(Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1), null)));
		changes.add(Arguments.of(policy(Algorithm.SLIDING_LOG, 5, Duration.ofMinutes(1), null),
				policy(Algorithm.SLIDING_COUNTER, 10, Duration.ofHours(1), null)));
		return changes.build();
	}

	@ParameterizedTest(name = "{0} and {1}")
	@MethodSource("changes")
	void alternatingInstancesNeverAdmitMoreThanTheLargerConfigurationWould(RateLimitPolicy before,
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
			assertThat(admitted).isLessThanOrEqualTo((int) Math.max(alone(before), alone(after)));
			// Once both know of each other, a request passes only if both states admit it. The old instance learns
			// of the new one when it next says which parameters it uses (a second later; here, where the clock
			// stands still for the burst, only after it): until then it decides alone, within its capacity.
			// (Sets that keep one state, like sliding logs of one window, decide on it each with its own limit.)
			if (!RedisKeys.sameState(before, after)) {
				assertThat(admitted)
					.isLessThanOrEqualTo((int) (Math.min(alone(before), alone(after)) + before.capacity()));
			}
			assertThat(admitted).isGreaterThanOrEqualTo((int) Math.min(alone(before), alone(after)) / 2);
		}
	}

	@Test
	void anInstanceThatLearnsOfAnotherConfigurationEnforcesItsLimitToo() {
		learningOfAnotherConfiguration(connectionFactory);
	}

	/**
	 * The old configuration allows 10 an hour, the new one 3 in two hours. The new instance, seeing the old one in use, counts
	 * in both; the old one, once it says again which parameters it uses (it has been idle for more than half
	 * the life of a registration, so it waits for the answer), learns of the new one and rejects what the new
	 * state would.
	 */
	static void learningOfAnotherConfiguration(RedisConnectionFactory connectionFactory) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "learn-" + UUID.randomUUID();
		RateLimitPolicy before = policy(Algorithm.FIXED, 10, Duration.ofHours(1), null);
		RateLimitPolicy after = policy(Algorithm.FIXED, 3, Duration.ofHours(2), null);
		try (RedisRateLimitStore old = store(connectionFactory, prefix, clock);
				RedisRateLimitStore updated = store(connectionFactory, prefix, clock)) {
			assertThat(old.tryAcquire(before, "client", 1).allowed()).isTrue();
			for (int i = 0; i < 3; i++) {
				Decision decision = updated.tryAcquire(after, "client", 1);
				assertThat(decision.allowed()).isTrue();
				assertThat(decision.remaining()).isEqualTo(2 - i);
			}
			Decision rejected = updated.tryAcquire(after, "client", 1);
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.retryAfterMillis()).isPositive();
			clock.advance(Duration.ofSeconds(6));
			Decision old4 = old.tryAcquire(before, "client", 1);
			assertThat(old4.allowed()).isFalse();
			assertThat(old4.limit()).isEqualTo(10);
			assertThat(old4.remaining()).isZero();
			// Every limit of both: a new client has what the tighter leaves.
			assertThat(old.tryAcquire(before, "other-client", 1).remaining()).isEqualTo(2);
		}
	}

	@Test
	void aConfigurationNoInstanceDecidesWithForTenSecondsNoLongerApplies() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "retired-" + UUID.randomUUID();
		RateLimitPolicy before = policy(Algorithm.FIXED, 3, Duration.ofHours(1), null);
		RateLimitPolicy after = policy(Algorithm.FIXED, 10, Duration.ofHours(2), null);
		try (RedisRateLimitStore old = store(connectionFactory, prefix, clock);
				RedisRateLimitStore updated = store(connectionFactory, prefix, clock)) {
			for (int i = 0; i < 3; i++) {
				assertThat(old.tryAcquire(before, "client", 1).allowed()).isTrue();
			}
			// While the old configuration is in use, its exhausted state rejects for the new one too.
			assertThat(updated.tryAcquire(after, "client", 1).allowed()).isFalse();
			clock.advance(Duration.ofMillis(PolicyVersions.LIVE_MILLIS));
			for (int i = 0; i < 10; i++) {
				assertThat(updated.tryAcquire(after, "client", 1).allowed()).as("request %d", i).isTrue();
			}
			assertThat(updated.tryAcquire(after, "client", 1).allowed()).isFalse();
		}
	}

	@Test
	void aResetWhileTwoConfigurationsAreInUseUnblocksTheClientUnderBoth() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "reset-" + UUID.randomUUID();
		RateLimitPolicy before = policy(Algorithm.FIXED, 3, Duration.ofHours(1), null);
		RateLimitPolicy after = policy(Algorithm.SLIDING_COUNTER, 10, Duration.ofHours(1), null);
		try (RedisRateLimitStore old = store(connectionFactory, prefix, clock);
				RedisRateLimitStore updated = store(connectionFactory, prefix, clock)) {
			for (int i = 0; i < 3; i++) {
				old.tryAcquire(before, "client", 1);
			}
			assertThat(updated.tryAcquire(after, "client", 1).allowed()).isFalse();
			updated.reset(after, "client");
			Decision decision = updated.tryAcquire(after, "client", 1);
			assertThat(decision.allowed()).isTrue();
			// Given back, the unit is free again under both.
			updated.refund(new Acquisition(after, "client", 1), clock.currentTimeMillis());
			clock.advance(Duration.ofSeconds(6));
			assertThat(old.tryAcquire(before, "client", 1).remaining()).isEqualTo(2);
		}
	}

	@Test
	void aRefundGivesNothingToASetLearnedOfAfterTheUnitsWereTaken() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "refund-" + UUID.randomUUID();
		RateLimitPolicy before = policy(Algorithm.FIXED, 10, Duration.ofHours(1), null);
		RateLimitPolicy after = policy(Algorithm.FIXED, 5, Duration.ofHours(2), null);
		try (RedisRateLimitStore old = store(connectionFactory, prefix, clock);
				RedisRateLimitStore updated = store(connectionFactory, prefix, clock)) {
			long takenAt = clock.currentTimeMillis();
			old.tryAcquire(before, "client", 1); // the old state only: no other set in use yet
			updated.tryAcquire(after, "client", 1); // both: old 2, new 1
			clock.advance(Duration.ofSeconds(6));
			old.tryAcquire(before, "client", 1); // learns of the new set first: old 3, new 2
			old.refund(new Acquisition(before, "client", 1), takenAt); // old 2; the new set never took it
			Decision decision = updated.tryAcquire(after, "client", 1); // old 3, new 3
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(2);
		}
	}

	@Test
	void theVariantsOfOnePolicyCountApart() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "plans-" + UUID.randomUUID();
		RateLimitPolicy free = policy(Algorithm.FIXED, 3, Duration.ofHours(1), null).toBuilder().variant("free")
			.build();
		RateLimitPolicy pro = free.toBuilder().variant("pro").limit(10).build();
		try (RedisRateLimitStore store = store(connectionFactory, prefix, clock);
				RedisRateLimitStore other = store(connectionFactory, prefix, clock)) {
			for (int i = 0; i < 3; i++) {
				assertThat(store.tryAcquire(free, "free-client", 1).allowed()).isTrue();
			}
			assertThat(store.tryAcquire(free, "free-client", 1).allowed()).isFalse();
			for (int i = 0; i < 10; i++) {
				assertThat(other.tryAcquire(pro, "pro-client", 1).allowed()).as("request %d", i).isTrue();
				assertThat(store.tryAcquire(pro, "pro-client-2", 1).allowed()).as("request %d", i).isTrue();
			}
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

	@Test
	void perTenantPoliciesOfOneNameInTheirOwnVariantsStayIndependentAcrossInstances() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "tenants-" + UUID.randomUUID();
		try (RedisRateLimitStore a = store(prefix, clock); RedisRateLimitStore b = store(prefix, clock)) {
			RateLimitPolicy small = RateLimitPolicy.builder("exports").variant("tenant-small").limit(2)
				.window(Duration.ofMinutes(1)).build();
			RateLimitPolicy big = RateLimitPolicy.builder("exports").variant("tenant-big").limit(1_000)
				.window(Duration.ofMinutes(1)).build();
			a.tryAcquire(small, "tenant-small", 1);
			b.tryAcquire(small, "tenant-small", 1);
			int admitted = 0;
			for (int i = 0; i < 20; i++) {
				if (((i % 2 == 0) ? a : b).tryAcquire(big, "tenant-big", 1).allowed()) {
					admitted++;
				}
			}
			assertThat(admitted).isEqualTo(20);
			assertThat(a.tryAcquire(small, "tenant-small", 1).allowed()).isFalse();
		}
	}

	/**
	 * The security review's scenario without variants: one name, one window, limits 2 and 1,000 under the keys of two
	 * tenants, in one instance and across two. Each key is held to the limit it is decided under, as in memory: a
	 * tighter set of one name is never imposed on another key as if it were a rolling deploy.
	 */
	@Test
	void policiesOfOneNameAndWindowWithOtherLimitsHoldEachKeyToItsOwnLimitInOneInstanceAndAcrossTwo() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "limits-" + UUID.randomUUID();
		try (RedisRateLimitStore a = store(prefix, clock); RedisRateLimitStore b = store(prefix, clock)) {
			RateLimitPolicy small = RateLimitPolicy.builder("exports").limit(2).window(Duration.ofMinutes(1)).build();
			RateLimitPolicy big = RateLimitPolicy.builder("exports").limit(1_000).window(Duration.ofMinutes(1)).build();
			a.tryAcquire(small, "tenant-small", 1);
			b.tryAcquire(small, "tenant-small", 1);
			int admittedInOne = 0;
			int admittedAcrossTwo = 0;
			for (int i = 0; i < 20; i++) {
				admittedInOne += a.tryAcquire(big, "tenant-big", 1).allowed() ? 1 : 0;
				admittedAcrossTwo += ((i % 2 == 0) ? a : b).tryAcquire(big, "tenant-big-2", 1).allowed() ? 1 : 0;
			}
			assertThat(admittedInOne).isEqualTo(20);
			assertThat(admittedAcrossTwo).isEqualTo(20);
			assertThat(a.tryAcquire(small, "tenant-small", 1).allowed()).isFalse();
		}
	}

	@Test
	void aSecondWindowOfOneNameInOneInstanceFailsTellingTheWayOutWhileAChangedLimitCarriesTheCountOver() {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		try (RedisRateLimitStore store = store("names-" + UUID.randomUUID(), clock)) {
			store.tryAcquire(RateLimitPolicy.builder("exports").limit(2).window(Duration.ofMinutes(1)).build(), "a", 1);
			RateLimitPolicy other = RateLimitPolicy.builder("exports").limit(1_000).window(Duration.ofHours(1)).build();
			assertThatIllegalArgumentException().isThrownBy(() -> store.tryAcquire(other, "b", 1))
				.withMessageContaining("'exports' is already in use with FIXED, limit 2 per 1m")
				.withMessageContaining("cannot also count with FIXED, limit 1000 per 1h")
				.withMessageContaining(".variant(tenant)");
			RateLimitPolicy raised = RateLimitPolicy.builder("exports").limit(3).window(Duration.ofMinutes(1)).build();
			assertThat(store.tryAcquire(raised, "a", 1).remaining()).isEqualTo(1);
		}
	}

	@Test
	void aParameterSetRegisteredForTheFarFutureLapsesAndAnotherIsLoggedNamingBothSets() throws Exception {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		String prefix = "stray-" + UUID.randomUUID();
		RateLimitPolicy policy = RateLimitPolicy.builder("resources").limit(5).window(Duration.ofMinutes(1)).build();
		Logger logger = Logger.getLogger(PolicyVersions.class.getName());
		List<String> warnings = new CopyOnWriteArrayList<>();
		Handler handler = new Handler() {

			@Override
			public void publish(LogRecord record) {
				warnings.add(record.getMessage());
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		logger.addHandler(handler);
		try (RedisRateLimitStore store = store(prefix, clock)) {
			// A stray writer's set, stamped a day ahead so that it would never lapse.
			redis.call("HSET", prefix + ":{resources}:versions", "f:1:86400000:1|",
					String.valueOf(clock.currentTimeMillis() + 86_400_000L));
			assertThat(store.tryAcquire(policy, "client", 1).remaining()).as("not held to limit 1").isEqualTo(4);
			assertThat(redis.call("HGET", prefix + ":{resources}:versions", "f:1:86400000:1|")).isNull();
			// Another instance's set, on time: decided together, and said once.
			try (RedisRateLimitStore other = store(prefix, clock)) {
				other.tryAcquire(RateLimitPolicy.builder("resources").limit(3).window(Duration.ofMinutes(2)).build(),
						"client", 1);
				for (int i = 0; i < 3; i++) {
					clock.advanceMillis(PolicyVersions.REFRESH_MILLIS); // each refresh learns the other set again
					store.tryAcquire(policy, "client-" + i, 1);
					Thread.sleep(100); // the refresh's answer arrives after the decision it was sent with
				}
			}
			// Each instance says once which other set takes part in its decisions.
			assertThat(warnings).filteredOn((message) -> message.contains("also being decided with FIXED 3 per 2m"))
				.singleElement(STRING)
				.contains("'resources'")
				.contains("this instance decides it with FIXED 5 per 1m");
			assertThat(warnings).noneMatch((message) -> message.contains("FIXED 1 per 1d"));
		}
		finally {
			logger.removeHandler(handler);
		}
	}

	private static RedisRateLimitStore store(String prefix, MutableTimeSource clock) {
		return store(connectionFactory, prefix, clock);
	}

	private static RedisRateLimitStore store(RedisConnectionFactory connectionFactory, String prefix,
			MutableTimeSource clock) {
		return RedisRateLimitStore.builder(connectionFactory)
			.clock(clock)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window, @Nullable Long burst) {
		return RateLimitPolicy.builder("changed")
			.algorithm(algorithm)
			.limit(limit)
			.window(window)
			.burst(burst)
			.build();
	}

}
