package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.test.RedisCluster;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * On a real 3-master Redis Cluster: every decision's keys share one slot whatever the user key holds (no
 * CROSSSLOT), and different clients spread over the masters.
 */
class RedisClusterIntegrationTests {

	private static RedisCluster cluster;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start(3);
		connectionFactory = RedisConnections.cluster(cluster);
	}

	@AfterAll
	static void stopCluster() {
		connectionFactory.destroy();
		cluster.close();
	}

	@Test
	void anInstanceThatLearnsOfAnotherConfigurationEnforcesItsLimitToo() {
		PolicyChangeIntegrationTests.learningOfAnotherConfiguration(connectionFactory);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keysWithBracesOrSeparatorsStayInOneSlot(Algorithm algorithm) {
		String prefix = "cluster-" + UUID.randomUUID();
		RateLimitPolicy policy = RateLimitPolicy.builder("evil{policy}").algorithm(algorithm).limit(2)
			.window(Duration.ofHours(1)).build();
		RedisKeys keys = new RedisKeys(prefix);
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix)
			.timeout(Duration.ofSeconds(10)).build()) {
			for (String key : new String[] { "}{", "{a}", "a}b{c", "{}", "a:b{", "%7D", "\n{x}\n" }) {
				assertThat(store.tryAcquire(policy, key, 1).allowed()).as(key).isTrue();
				assertThat(store.tryAcquire(policy, key, 1).allowed()).as(key).isTrue();
				assertThat(store.tryAcquire(policy, key, 1).allowed()).as(key).isFalse();
				byte[][] decisionKeys = keys.keys(policy, key);
				assertThat(slot(decisionKeys[0])).isEqualTo(RedisKeys.slot(decisionKeys[0]));
				long slot = slot(decisionKeys[0]);
				for (byte[] decisionKey : decisionKeys) {
					assertThat(slot(decisionKey)).isEqualTo(slot);
				}
			}
		}
	}

	static Stream<Arguments> algorithmsBlockingOrNot() {
		return Stream.of(Algorithm.values()).flatMap((algorithm) -> Stream.of(arguments(algorithm, false),
				arguments(algorithm, true)));
	}

	@ParameterizedTest(name = "{0}, non-blocking: {1}")
	@MethodSource("algorithmsBlockingOrNot")
	void limitsOnDifferentMastersPassOrFailTogetherUnderConcurrency(Algorithm algorithm, boolean nonBlocking)
			throws Exception {
		String prefix = "together-" + UUID.randomUUID();
		RateLimitPolicy wide = RateLimitPolicy.builder("wide").algorithm(algorithm).limit(20)
			.window(Duration.ofHours(1)).build();
		RateLimitPolicy narrow = RateLimitPolicy.builder("narrow").limit(10).window(Duration.ofHours(1)).build();
		RedisKeys keys = new RedisKeys(prefix);
		String narrowKey = "client";
		String wideKey = "client";
		for (int i = 0; RedisKeys.slot(keys.keys(wide, wideKey)[0]) / 5462 == RedisKeys.slot(keys.keys(narrow,
				narrowKey)[0]) / 5462; i++) {
			wideKey = "client-" + i; // the two counters on different masters
		}
		List<Acquisition> both = List.of(new Acquisition(wide, wideKey, 1), new Acquisition(narrow, narrowKey, 1));
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix)
			.timeout(Duration.ofSeconds(10)).build()) {
			AtomicInteger admitted = new AtomicInteger();
			if (nonBlocking) {
				// All 200 at once, from one thread that never waits for an answer until every one is sent.
				List<CompletableFuture<Reservation>> decisions = new ArrayList<>();
				for (int r = 0; r < 200; r++) {
					decisions.add(store.tryAcquireAllAsync(both).toCompletableFuture());
				}
				for (CompletableFuture<Reservation> decision : decisions) {
					if (decision.get(60, TimeUnit.SECONDS).allowed()) {
						admitted.incrementAndGet();
					}
				}
			}
			else {
				ExecutorService threads = Executors.newFixedThreadPool(8);
				try {
					List<Future<?>> done = new ArrayList<>();
					for (int t = 0; t < 8; t++) {
						done.add(threads.submit(() -> {
							for (int r = 0; r < 25; r++) {
								if (store.tryAcquireAll(both).allowed()) {
									admitted.incrementAndGet();
								}
							}
						}));
					}
					for (Future<?> future : done) {
						future.get(60, TimeUnit.SECONDS);
					}
				}
				finally {
					threads.shutdownNow();
				}
			}
			// Never more than the narrow limit. Concurrent requests may have been rejected by units that others,
			// rejected on the other master, held for an instant (docs/layers.md): once given back, the rest is there.
			assertThat(admitted.get()).isBetween(1, 10);
			while (store.tryAcquireAll(both).allowed()) {
				admitted.incrementAndGet();
			}
			assertThat(admitted).hasValue(10);
			// The 190 rejected requests took nothing from the wide limit: it has exactly 10 left.
			int wideLeft = 0;
			while (store.tryAcquire(wide, wideKey, 1).allowed() && wideLeft < 100) {
				wideLeft++;
			}
			assertThat(wideLeft).isEqualTo(10);
		}
	}

	@Test
	void clearDeletesTheCountersOfEveryMasterUnderThePrefixOnly() {
		String prefix = "clear-" + UUID.randomUUID();
		RateLimitPolicy policy = RateLimitPolicy.builder("cleared").limit(1).window(Duration.ofHours(1)).build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix)
			.timeout(Duration.ofSeconds(10)).build();
				RedisRateLimitStore other = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix + "-other")
					.timeout(Duration.ofSeconds(10)).build()) {
			for (int i = 0; i < 100; i++) {
				store.tryAcquire(policy, "client-" + i, 1);
			}
			other.tryAcquire(policy, "client-0", 1);
			assertThat(cluster.keysPerNode()).allSatisfy((keys) -> assertThat(keys).isPositive());
			store.clear();
			// What is left of both stores: the other's counter and its policy's parameter sets. Only keys of this
			// test are counted: other tests' keys expire meanwhile.
			assertThat(keysContaining(prefix)).isEqualTo(2);
			for (int i = 0; i < 100; i++) {
				assertThat(store.tryAcquire(policy, "client-" + i, 1).allowed()).isTrue();
			}
			assertThat(other.tryAcquire(policy, "client-0", 1).allowed()).as("another prefix keeps its counts").isFalse();
		}
	}

	private static long keysContaining(String text) {
		return cluster.nodes().stream().mapToLong((node) -> ((List<?>) node.call("KEYS", "*" + text + "*")).size()).sum();
	}

	@Test
	void differentClientsSpreadOverTheMasters() {
		String prefix = "spread-" + UUID.randomUUID();
		RateLimitPolicy policy = RateLimitPolicy.builder("spread").limit(5).window(Duration.ofHours(1)).build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix)
			.timeout(Duration.ofSeconds(10)).build()) {
			for (int i = 0; i < 300; i++) {
				store.tryAcquire(policy, "client-" + i, 1);
			}
		}
		assertThat(cluster.keysPerNode()).allSatisfy((keys) -> assertThat(keys).isGreaterThan(50L));
	}

	@ParameterizedTest(name = "non-blocking: {0}")
	@ValueSource(booleans = { false, true })
	void whileTheMasterOfASharedQuotaIsPausedTheLimitsDecidedWithItStillHoldOnTheOtherMasters(boolean nonBlocking)
			throws Exception {
		String prefix = "parts-" + UUID.randomUUID();
		RateLimitPolicy perAddress = RateLimitPolicy.builder("edge").limit(5).window(Duration.ofHours(1)).build();
		RateLimitPolicy account = RateLimitPolicy.builder("account")
			.limit(10_000)
			.window(Duration.ofHours(1))
			.failureMode(FailureMode.ALLOW)
			.build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix)
			.timeout(Duration.ofMillis(300)).build()) {
			RateLimiter limiter = RateLimiter.builder(store)
				.failureThreshold(1)
				.openDuration(Duration.ofMinutes(1))
				.build();
			// The first decision learns the Cluster's topology.
			assertThat(limiter.tryAcquireAll(List.of(new Acquisition(account, "application", 1))).allowed()).isTrue();
			String accountNode = store.partitionOf(account, "application");
			assertThat(accountNode).isNotEmpty();
			String address = null;
			for (int i = 0; i < 256 && address == null; i++) {
				if (!store.partitionOf(perAddress, "203.0.113." + i).equals(accountNode)) {
					address = "203.0.113." + i;
				}
			}
			assertThat(address).isNotNull();
			RedisServer paused = cluster.nodes()
				.stream()
				.filter((node) -> node.call("CLUSTER", "MYID").equals(accountNode))
				.findFirst()
				.orElseThrow();
			paused.pause(Duration.ofSeconds(3));
			long pausedAt = System.nanoTime();
			int admitted = 0;
			for (int i = 0; i < 20; i++) {
				List<Acquisition> both = List.of(new Acquisition(perAddress, address, 1),
						new Acquisition(account, "application", 1));
				Admission admission = nonBlocking
						? limiter.tryAcquireAllAsync(both).toCompletableFuture().get(10, TimeUnit.SECONDS)
						: limiter.tryAcquireAll(both);
				if (admission.allowed()) {
					admitted++;
					assertThat(admission.decision(0).origin()).isEqualTo(Decision.Origin.STORE);
					assertThat(admission.decision(1).origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
				}
			}
			assertThat(admitted).as("the per-address limit on a healthy master").isEqualTo(5);
			long left = Duration.ofSeconds(3).toNanos() - (System.nanoTime() - pausedAt);
			if (left > 0) {
				TimeUnit.NANOSECONDS.sleep(left + TimeUnit.MILLISECONDS.toNanos(200));
			}
		}
	}

	@Test
	void aPausedMasterOpensTheCircuitOnlyForItsOwnKeys() throws InterruptedException {
		String prefix = "breakers-" + UUID.randomUUID();
		RateLimitPolicy policy = RateLimitPolicy.builder("breakers")
			.limit(1_000)
			.window(Duration.ofHours(1))
			.failureMode(FailureMode.ALLOW)
			.build();
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix(prefix)
			.timeout(Duration.ofMillis(300)).build()) {
			RateLimiter limiter = RateLimiter.builder(store)
				.denyCache(false)
				.failureThreshold(2)
				.openDuration(Duration.ofMinutes(1))
				.build();
			assertThat(limiter.tryAcquire(policy, "warm-up").origin()).isEqualTo(Decision.Origin.STORE);
			RedisServer paused = cluster.nodes().get(0);
			String pausedId = (String) paused.call("CLUSTER", "MYID");
			List<String> onPaused = new ArrayList<>();
			List<String> elsewhere = new ArrayList<>();
			for (int i = 0; i < 60; i++) {
				String key = "client-" + i;
				(store.partitionOf(policy, key).equals(pausedId) ? onPaused : elsewhere).add(key);
				assertThat(limiter.tryAcquire(policy, key).remaining()).isEqualTo(999);
			}
			assertThat(onPaused).isNotEmpty();
			assertThat(elsewhere).isNotEmpty();
			// Shorter than cluster-node-timeout, so that the other masters do not declare the cluster down.
			paused.pause(Duration.ofSeconds(3));
			long pausedAt = System.nanoTime();
			for (String key : onPaused.subList(0, Math.min(3, onPaused.size()))) {
				assertThat(limiter.tryAcquire(policy, key).origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
			}
			assertThat(limiter.isCircuitOpen(policy, onPaused.get(0))).isTrue();
			for (String key : elsewhere) {
				Decision decision = limiter.tryAcquire(policy, key);
				assertThat(decision.origin()).as(key).isEqualTo(Decision.Origin.STORE);
				assertThat(decision.remaining()).as(key).isEqualTo(998);
			}
			assertThat(limiter.isCircuitOpen(policy, elsewhere.get(0))).isFalse();
			long left = Duration.ofSeconds(3).toNanos() - (System.nanoTime() - pausedAt);
			if (left > 0) {
				TimeUnit.NANOSECONDS.sleep(left + TimeUnit.MILLISECONDS.toNanos(200));
			}
		}
	}

	private static long slot(byte[] key) {
		return (Long) cluster.nodes().get(0).call("CLUSTER", "KEYSLOT", new String(key, StandardCharsets.UTF_8));
	}

}
