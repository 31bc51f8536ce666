package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.MockRateLimitRequest;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Waiting instead of rejecting ({@code max-wait}, {@code max-queued}): a bucket's request over the limit waits for
 * the turn it reserved in the store, a window's for the window's room; beyond the longest wait or the queue, it is
 * rejected as without them. The store's clock is held still, so that every wait is exact; the waits themselves are
 * real, and short.
 */
class WaitInsteadOfRejectTests {

	private static final String CLIENT = "198.51.100.7";

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	private final List<Long> waits = Collections.synchronizedList(new ArrayList<>());

	private final ExecutorService clients = Executors.newFixedThreadPool(20);

	private final RateLimitEngine engine = engine(InMemoryRateLimitStore.builder().clock(this.clock).build());

	@AfterEach
	void stopClients() {
		this.clients.shutdownNow();
	}

	@Test
	void twentyRequestsOfABucketOfTenASecondAllPassTheLastTenEachATenthOfASecondAfterTheOneBefore() throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<RateLimitOutcome>> outcomes = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			outcomes.add(this.clients.submit(() -> {
				start.await();
				return decide("paced", CLIENT);
			}));
		}
		start.countDown();
		for (Future<RateLimitOutcome> outcome : outcomes) {
			assertThat(outcome.get(10, TimeUnit.SECONDS).isRejected()).isFalse();
		}
		assertThat(this.waits).as("the turns the store reserved, one token apart")
			.containsExactlyInAnyOrder(100L, 200L, 300L, 400L, 500L, 600L, 700L, 800L, 900L, 1000L);
		RateLimitOutcome beyond = decide("paced", CLIENT);
		assertThat(beyond.isRejected()).as("a turn 1.1 s away, beyond the longest wait").isTrue();
		assertThat(beyond.headers().getFirst("Retry-After")).isEqualTo("2");
		assertThat(beyond.headers().getFirst("RateLimit-Remaining")).isEqualTo("0");
		assertThat(decide("paced", "198.51.100.8").limits().get(0).decision().remaining())
			.as("another key: the real bucket's units, not the reserve's").isEqualTo(9);
	}

	@Test
	void waitingRequestsPassInTheOrderTheyCameAndOneBeyondTheQueueIsRejectedAtOnce() throws Exception {
		Method queued = Api.class.getMethod("queued");
		for (int i = 0; i < 10; i++) {
			assertThat(decideAsync(queued, CLIENT).join().isRejected()).isFalse();
		}
		List<Integer> order = Collections.synchronizedList(new ArrayList<>());
		CompletableFuture<RateLimitOutcome> first = decideAsync(queued, CLIENT).whenComplete((o, f) -> order.add(1));
		CompletableFuture<RateLimitOutcome> second = decideAsync(queued, CLIENT).whenComplete((o, f) -> order.add(2));
		CompletableFuture<RateLimitOutcome> third = decideAsync(queued, CLIENT);
		assertThat(third).as("two wait already: rejected at once").isCompleted();
		assertThat(third.join().isRejected()).isTrue();
		assertThat(third.join().headers().getFirst("Retry-After")).as("the real bucket's wait, a tenth of a second")
			.isEqualTo("1");
		assertThat(first.get(5, TimeUnit.SECONDS).isRejected()).isFalse();
		assertThat(second.get(5, TimeUnit.SECONDS).isRejected()).isFalse();
		assertThat(order).containsExactly(1, 2);
		assertThat(decideAsync(queued, CLIENT).get(5, TimeUnit.SECONDS).isRejected())
			.as("the queue has room again").isFalse();
	}

	@Test
	void aWindowsRequestWaitsForTheNextWindowAndIsDecidedOnceMore() throws Exception {
		RateLimitEngine onTheSystemClock = engine(InMemoryRateLimitStore.builder().build());
		while (System.currentTimeMillis() % 1_000 > 500) {
			Thread.sleep(20); // the first half of a window of a second
		}
		assertThat(decide(onTheSystemClock, "windowed", CLIENT).isRejected()).isFalse();
		RateLimitOutcome waited = decide(onTheSystemClock, "windowed", CLIENT);
		assertThat(waited.isRejected()).as("admitted in the next window").isFalse();
		assertThat(this.waits).hasSize(1).allSatisfy((wait) -> assertThat(wait).isBetween(1L, 1_000L));
	}

	@Test
	void aWaitShorterThanATokenOrWithAPenaltyFailsTheStartUp() {
		PolicyCatalog tooShort = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> tooShort.register(TooShort.class))
			.withMessageContaining("'max-wait' of 5s is shorter than the time this bucket takes to refill one token "
					+ "(6000 ms)");
		PolicyCatalog penalised = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> penalised.register(Penalised.class))
			.withMessageContaining("'penalty' cannot apply with 'max-wait'");
	}

	@Test
	void aWaitLongerThanAMinuteOrAQueueWithoutAWaitFailsTheStartUp() {
		PolicyCatalog tooLong = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> tooLong.register(TooLong.class))
			.withMessageContaining("'max-wait' must be a duration of at least 1ms and at most a minute, but was '2m'");
		PolicyCatalog queueOnly = PolicyCatalog.builder().build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> queueOnly.register(QueueOnly.class))
			.withMessageContaining("'max-queued' applies with 'max-wait' only");
	}

	RateLimitOutcome decide(String method, String client) throws Exception {
		return decide(this.engine, method, client);
	}

	RateLimitOutcome decide(RateLimitEngine engine, String method, String client) throws Exception {
		RateLimitOutcome outcome = engine.decideMethod(Api.class.getMethod(method), Api.class, new Object[0],
				new MockRateLimitRequest().setRemoteAddr(client));
		assertThat(outcome).isNotNull();
		return outcome;
	}

	private CompletableFuture<RateLimitOutcome> decideAsync(Method method, String client) {
		return this.engine
			.decideMethodAsync(method, Api.class, new Object[0], new MockRateLimitRequest().setRemoteAddr(client))
			.toCompletableFuture();
	}

	private RateLimitEngine engine(InMemoryRateLimitStore store) {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Api.class);
		RateLimiter limiter = RateLimiter.builder(store).listener(new RateLimitListener() {

			@Override
			public void onWait(RateLimitPolicy policy, long waitedMillis) {
				WaitInsteadOfRejectTests.this.waits.add(waitedMillis);
			}

		}).build();
		return RateLimitEngine
			.builder(catalog, limiter, new StandardRateLimitHeadersWriter(),
					(request) -> String.valueOf(request.getRemoteAddr()))
			.build();
	}

	public static class Api {

		@RateLimited(name = "paced", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1s", maxWait = "1s")
		public String paced() {
			return "paced";
		}

		@RateLimited(name = "queued", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1s", maxWait = "1s",
				maxQueued = 2)
		public String queued() {
			return "queued";
		}

		@RateLimited(name = "windowed", limit = 1, window = "1s", maxWait = "1s")
		public String windowed() {
			return "windowed";
		}

	}

	public static class TooLong {

		@RateLimited(name = "tooLong", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1s", maxWait = "2m")
		public String tooLong() {
			return "tooLong";
		}

	}

	public static class TooShort {

		@RateLimited(name = "tooShort", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1m", maxWait = "5s")
		public String tooShort() {
			return "tooShort";
		}

	}

	public static class Penalised {

		@RateLimited(name = "penalised", limit = 10, window = "1m", maxWait = "5s", penalty = "1h")
		public String penalised() {
			return "penalised";
		}

	}

	public static class QueueOnly {

		@RateLimited(name = "queueOnly", limit = 10, window = "1s", maxQueued = 5)
		public String queueOnly() {
			return "queueOnly";
		}

	}

}
