package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Redis that does not answer ({@code CLIENT PAUSE}) costs each caller its timeout and no more, whether the caller
 * waits on its own timer (not coalesced) or for the store's watchdog (coalesced); the lanes recover when Redis does,
 * and closing the store releases whoever still waits. Lower bounds are exact (nobody fails early); upper bounds are
 * generous, since this machine is shared.
 */
class RedisRateLimitStoreTimeoutTests {

	private static final Duration TIMEOUT = Duration.ofMillis(300);

	private static final Duration SLACK = Duration.ofMillis(1500);

	private final RateLimitPolicy policy = RateLimitPolicy.builder("timeouts")
		.algorithm(Algorithm.FIXED)
		.limit(1000)
		.window(Duration.ofHours(1))
		.build();

	private final ExecutorService callers = Executors.newFixedThreadPool(16);

	private RedisServer redis;

	private LettuceConnectionFactory connectionFactory;

	private long resumesAt;

	@BeforeEach
	void startRedis() {
		this.redis = RedisServer.spawn();
		this.connectionFactory = RedisConnections.standalone(this.redis);
	}

	@AfterEach
	void stop() throws InterruptedException {
		this.callers.shutdownNow();
		this.callers.awaitTermination(10, TimeUnit.SECONDS);
		this.connectionFactory.destroy();
		this.redis.close();
	}

	@ParameterizedTest(name = "coalesce={0}")
	@ValueSource(booleans = { true, false })
	void everyCallerOfAPausedRedisFailsAfterTheTimeoutAndTheStoreRecovers(boolean coalesce) throws Exception {
		try (RedisRateLimitStore store = store(coalesce, TIMEOUT)) {
			assertThat(store.tryAcquire(this.policy, "warm-up", 1).allowed()).isTrue();
			pause(Duration.ofMillis(1500));
			List<CompletableFuture<Outcome>> outcomes = new ArrayList<>();
			for (int i = 0; i < 16; i++) {
				String key = "key-" + (i % 4);
				outcomes.add(CompletableFuture.supplyAsync(() -> decide(store, key), this.callers));
			}
			for (CompletableFuture<Outcome> outcome : outcomes) {
				Outcome answer = outcome.get(10, TimeUnit.SECONDS);
				assertThat(answer.failure()).isNotNull()
					.hasMessage("Redis did not answer within 300ms for policy 'timeouts'");
				assertThat(answer.took()).isGreaterThanOrEqualTo(TIMEOUT).isLessThan(TIMEOUT.plus(SLACK));
			}
			awaitResume();
			// Calls in flight during the pause may still have been counted; a lane they filled is not stuck.
			for (int i = 0; i < 10; i++) {
				assertThat(store.tryAcquire(this.policy, "after-" + i, 1).allowed()).isTrue();
			}
		}
	}

	@Test
	void aNonBlockingDecisionOfAPausedRedisFailsAfterTheTimeoutWhileNoCallerWaits() throws Exception {
		Duration timeout = Duration.ofSeconds(1);
		try (RedisRateLimitStore store = store(true, timeout)) {
			assertThat(decideWithoutWaiting(store, "warm-up").get(10, TimeUnit.SECONDS).allowed()).isTrue();
			pause(Duration.ofMillis(2500));
			long start = System.nanoTime();
			List<CompletableFuture<Reservation>> decisions = new ArrayList<>();
			for (int i = 0; i < 16; i++) {
				decisions.add(decideWithoutWaiting(store, "key-" + (i % 4)));
			}
			assertThat(decisions).as("handed back before Redis answers").noneMatch(CompletableFuture::isDone);
			for (CompletableFuture<Reservation> decision : decisions) {
				assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> decision.get(10, TimeUnit.SECONDS))
					.havingCause()
					.isInstanceOf(RateLimitStoreException.class)
					.withMessage("Redis did not answer within 1000ms for policy 'timeouts'");
			}
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(timeout)
				.isLessThan(timeout.plus(SLACK));
			awaitResume();
			assertThat(decideWithoutWaiting(store, "after").get(10, TimeUnit.SECONDS).allowed()).isTrue();
		}
	}

	private CompletableFuture<Reservation> decideWithoutWaiting(RedisRateLimitStore store, String key) {
		return store.tryAcquireAllAsync(List.of(new Acquisition(this.policy, key, 1))).toCompletableFuture();
	}

	@Test
	void closingTheStoreReleasesCallersThatStillWait() throws Exception {
		RedisRateLimitStore store = store(true, Duration.ofSeconds(30));
		assertThat(store.tryAcquire(this.policy, "warm-up", 1).allowed()).isTrue();
		pause(Duration.ofSeconds(3));
		List<CompletableFuture<Outcome>> outcomes = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			outcomes.add(CompletableFuture.supplyAsync(() -> decide(store, "key"), this.callers));
		}
		Thread.sleep(200); // let the callers reach the store
		store.close();
		for (CompletableFuture<Outcome> outcome : outcomes) {
			Outcome answer = outcome.get(10, TimeUnit.SECONDS);
			assertThat(answer.failure()).isNotNull().hasMessageEndingWith("Redis rate limit store is closed");
			assertThat(answer.took()).isLessThan(Duration.ofSeconds(2));
		}
		awaitResume();
	}

	@Test
	void aCallerThatGaveUpBeforeItsRequestWasSentIsNeverCounted() throws Exception {
		Duration timeout = Duration.ofSeconds(1);
		try (RedisRateLimitStore store = RedisRateLimitStore.builder(this.connectionFactory)
			.keyPrefix("timeouts-" + UUID.randomUUID())
			.timeout(timeout)
			.maxInFlight(1)
			.build()) {
			assertThat(store.tryAcquire(this.policy, "warm-up", 1).allowed()).isTrue();
			pause(Duration.ofMillis(2500));
			// One call goes out alone and hangs; the others queue behind it, unsent, and time out.
			long sent = store.scriptCalls();
			List<CompletableFuture<Outcome>> outcomes = new ArrayList<>();
			outcomes.add(CompletableFuture.supplyAsync(() -> decide(store, "counted"), this.callers));
			while (store.scriptCalls() == sent) {
				Thread.onSpinWait();
			}
			for (int i = 0; i < 5; i++) {
				outcomes.add(CompletableFuture.supplyAsync(() -> decide(store, "counted"), this.callers));
			}
			for (CompletableFuture<Outcome> outcome : outcomes) {
				assertThat(outcome.get(10, TimeUnit.SECONDS).failure()).isNotNull()
					.hasMessage("Redis did not answer within 1000ms for policy 'timeouts'");
			}
			assertThat(store.scriptCalls() - sent).as("calls sent").isEqualTo(1);
			awaitResume(); // and the hanging call is answered
			long remaining = store.tryAcquire(this.policy, "counted", 1).remaining();
			assertThat(1000 - remaining).as("requests counted: the hanging one and this one").isEqualTo(2);
		}
	}

	@Test
	void aClosedStoreFailsAtOnce() {
		RedisRateLimitStore store = store(true, Duration.ofSeconds(30));
		assertThat(store.tryAcquire(this.policy, "warm-up", 1).allowed()).isTrue();
		store.close();
		long start = System.nanoTime();
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> store.tryAcquire(this.policy, "warm-up", 1))
			.withMessageEndingWith("Redis rate limit store is closed");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
	}

	@Test
	void buildingAStoreStartsNoThread() {
		String prefix = "timeouts-" + UUID.randomUUID();
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.connectionFactory).keyPrefix(prefix).build();
		try {
			assertThat(timeoutThread(prefix)).isEmpty();
		}
		finally {
			store.close();
		}
	}

	@ParameterizedTest(name = "started by a decision: {0}")
	@ValueSource(booleans = { true, false })
	void closingTheStoreStopsItsTimeoutThread(boolean byDecision) throws Exception {
		String prefix = "timeouts-" + UUID.randomUUID();
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.connectionFactory)
			.keyPrefix(prefix)
			.timeout(Duration.ofSeconds(30))
			.build();
		if (byDecision) {
			store.tryAcquire(this.policy, "key", 1);
		}
		else {
			store.start();
		}
		Thread thread = timeoutThread(prefix).orElseThrow();
		assertThat(thread.isDaemon()).isTrue();
		store.close();
		thread.join(5000);
		assertThat(thread.isAlive()).isFalse();
	}

	private static Optional<Thread> timeoutThread(String prefix) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((candidate) -> candidate.getName().equals("ratelimit-redis-timeouts-" + prefix))
			.findFirst();
	}

	/**
	 * Pause Redis; a paused Redis postpones {@code CLIENT UNPAUSE} too, so tests wait for the pause to end.
	 */
	private void pause(Duration duration) {
		this.resumesAt = System.nanoTime() + duration.toNanos();
		this.redis.pause(duration);
	}

	private void awaitResume() throws InterruptedException {
		long left = this.resumesAt - System.nanoTime();
		if (left > 0) {
			TimeUnit.NANOSECONDS.sleep(left);
		}
		Thread.sleep(100);
	}

	private RedisRateLimitStore store(boolean coalesce, Duration timeout) {
		return RedisRateLimitStore.builder(this.connectionFactory)
			.keyPrefix("timeouts-" + UUID.randomUUID())
			.timeout(timeout)
			.coalesce(coalesce)
			.build();
	}

	private Outcome decide(RedisRateLimitStore store, String key) {
		long start = System.nanoTime();
		try {
			store.tryAcquire(this.policy, key, 1);
			return new Outcome(null, Duration.ofNanos(System.nanoTime() - start));
		}
		catch (RateLimitStoreException ex) {
			return new Outcome(ex, Duration.ofNanos(System.nanoTime() - start));
		}
	}

	private record Outcome(RateLimitStoreException failure, Duration took) {
	}

}
