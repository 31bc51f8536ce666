package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.ConcurrentTestHarness;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The batching layer under every script call: decisions of several limits, decisions that do not wait, refunds and
 * charges of concurrent requests go to Redis together, as the single-limit decisions do, and stay exact. Redis is
 * paused while the requests arrive, so that they find the first calls in flight and wait for them, whatever the
 * machine's speed.
 */
class BatchingLayerIntegrationTests {

	private static final int REQUESTS = 64;

	private static RedisServer redis;

	private static LettuceConnectionFactory connectionFactory;

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	private final String prefix = "batching-" + UUID.randomUUID();

	private RedisRateLimitStore store;

	private final RateLimitPolicy perMinute = RateLimitPolicy.builder("per-minute").limit(40)
		.window(Duration.ofMinutes(1)).build();

	private final RateLimitPolicy bucket = RateLimitPolicy.builder("bucket").algorithm(Algorithm.TOKEN_BUCKET)
		.limit(100).window(Duration.ofHours(1)).build();

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

	@BeforeEach
	void createStore() {
		this.store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix(this.prefix)
			.clock(this.clock)
			.timeout(Duration.ofSeconds(10))
			.build();
		this.store.start();
	}

	@AfterEach
	void closeStore() {
		this.store.close();
	}

	@Test
	void requestsOfTwoLimitsThatDoNotWaitShareScriptCallsAndAdmitExactlyTheTighterLimit() {
		List<CompletableFuture<Reservation>> answers = new ArrayList<>();
		redis.pause(Duration.ofMillis(300));
		for (int i = 0; i < REQUESTS; i++) {
			answers.add(this.store.tryAcquireAllAsync(both("hot")).toCompletableFuture());
		}
		long admitted = answers.stream().map(CompletableFuture::join)
			.filter((reservation) -> reservation.decisions().stream().allMatch((d) -> d.allowed()))
			.count();
		assertThat(admitted).isEqualTo(40);
		assertThat(this.store.scriptCalls()).as("64 requests, at most 8 calls in flight then batches")
			.isLessThanOrEqualTo(12);
		// The rejected requests gave back what the bucket took for them, inside their own group.
		assertThat(this.store.tryAcquire(this.bucket, "hot", 60).allowed()).isTrue();
		assertThat(this.store.tryAcquire(this.bucket, "hot", 1).allowed()).isFalse();
	}

	@Test
	void blockingRequestsOfTwoLimitsShareScriptCallsAndAdmitExactlyTheTighterLimit() {
		AtomicInteger admitted = new AtomicInteger();
		redis.pause(Duration.ofMillis(300));
		ConcurrentTestHarness.run(16, () -> {
			for (int i = 0; i < 4; i++) {
				Reservation reservation = this.store.tryAcquireAll(both("hot"));
				if (reservation.decisions().stream().allMatch((d) -> d.allowed())) {
					admitted.incrementAndGet();
				}
			}
		});
		assertThat(admitted).hasValue(40);
		assertThat(this.store.decisions()).as("two entries a request, the rejected ones' give-backs inside them")
			.isEqualTo(2L * REQUESTS);
		assertThat(this.store.scriptCalls()).as("64 requests from 16 threads").isLessThan(REQUESTS);
	}

	@Test
	void refundsAndChargesOfConcurrentRequestsShareScriptCallsAndLandExactly() {
		List<Acquisition> taken = new ArrayList<>();
		long[] countedAt = new long[REQUESTS];
		for (int i = 0; i < REQUESTS; i++) {
			Acquisition acquisition = new Acquisition(this.bucket, "key-" + (i % 8), 1);
			Reservation reservation = this.store.tryAcquireAll(List.of(acquisition));
			assertThat(reservation.decisions().get(0).allowed()).isTrue();
			taken.add(acquisition);
			countedAt[i] = reservation.countedAt(0);
		}
		long callsBefore = this.store.scriptCalls();
		redis.pause(Duration.ofMillis(300));
		List<CompletableFuture<Void>> given = new ArrayList<>();
		for (int i = 0; i < REQUESTS; i++) {
			given.add(this.store.refundAllAsync(List.of(taken.get(i)), new long[] { countedAt[i] })
				.toCompletableFuture());
		}
		given.forEach(CompletableFuture::join);
		assertThat(this.store.scriptCalls() - callsBefore).isLessThanOrEqualTo(12);
		for (int k = 0; k < 8; k++) {
			assertThat(this.store.peek(this.bucket, "key-" + k).remaining()).as("key-%d given back whole", k)
				.isEqualTo(100);
		}
		Reservation first = this.store.tryAcquireAll(List.of(new Acquisition(this.bucket, "charged", 1)));
		callsBefore = this.store.scriptCalls();
		redis.pause(Duration.ofMillis(300));
		ConcurrentTestHarness.run(16,
				() -> this.store.charge(new Acquisition(this.bucket, "charged", 5), first.countedAt(0)));
		assertThat(this.store.scriptCalls() - callsBefore).as("16 charges").isLessThan(16);
		assertThat(this.store.peek(this.bucket, "charged").remaining()).isEqualTo(100 - 1 - 16 * 5);
	}

	@Test
	void aGroupThatFailsInsideABatchedCallFailsAloneAndTheOthersAreDecided() {
		RedisKeys keys = new RedisKeys("isolated-" + UUID.randomUUID());
		byte[] broken = keys.keys(this.perMinute, "broken")[0];
		byte[] sound = keys.keys(this.perMinute, "sound")[0];
		redis.call("SET", new String(broken, StandardCharsets.UTF_8), "not a hash");
		try (LettuceScriptExecutor executor = new LettuceScriptExecutor(connectionFactory)) {
			List<Object> answers = executor.execute(RateLimitScript.ALL_OR_NOTHING, new byte[][] { broken, sound },
					new byte[][] { bytes(this.clock.currentTimeMillis()), bytes(3_600_000), bytes("take"), bytes(1),
							bytes("f"), bytes(40), bytes(60_000), bytes(40), bytes(1), bytes(1), bytes(1), bytes(0),
							bytes("take"), bytes(1), bytes("f"), bytes(40), bytes(60_000), bytes(40), bytes(1),
							bytes(1), bytes(1), bytes(0) })
				.join();
			assertThat(new String((byte[]) answers.get(0), StandardCharsets.UTF_8)).contains("WRONGTYPE");
			assertThat(answers.subList(1, 3)).as("the second group: decided, admitted").containsExactly(0L, 1L);
			assertThat(answers).hasSize(1 + 1 + 6);
		}
	}

	@Test
	void aGroupThatFailsReachesItsCallerAsAStoreFailureNamingTheCause() {
		byte[] broken = new RedisKeys(this.prefix).keys(this.perMinute, "broken")[0];
		redis.call("SET", new String(broken, StandardCharsets.UTF_8), "not a hash");
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> this.store.tryAcquireAll(List.of(new Acquisition(this.perMinute, "broken", 1),
					new Acquisition(this.bucket, "broken", 1))))
			.withMessageContaining("WRONGTYPE");
		assertThat(this.store.tryAcquireAll(both("sound")).decisions()).allMatch((d) -> d.allowed());
	}

	private List<Acquisition> both(String key) {
		return List.of(new Acquisition(this.perMinute, key, 1), new Acquisition(this.bucket, key, 1));
	}

	private static byte[] bytes(long value) {
		return PolicyScript.bytes(value);
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
