package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.web.MockRateLimitRequest;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every test of {@link RateLimitEngineTests} through the engine's non-blocking methods, then an outcome that waits
 * for a store answering later, as Redis answers on its I/O thread.
 */
class RateLimitEngineNonBlockingTests extends RateLimitEngineTests {

	@Override
	@Nullable RateLimitOutcome decideMethod(RateLimitEngine engine, Method method, Class<?> targetClass,
			Object[] arguments, @Nullable RateLimitRequest request) {
		RateLimitOutcome outcome = engine.decideMethodAsync(method, targetClass, arguments, request)
			.toCompletableFuture()
			.join();
		return (outcome == RateLimitOutcome.NONE && engine.catalog().lookup(method, targetClass) == null) ? null
				: outcome;
	}

	@Override
	RateLimitOutcome decideFilters(RateLimitEngine engine, RateLimitRequest request, List<PathContainer> paths) {
		return engine.decideFiltersAsync(request, paths).toCompletableFuture().join();
	}

	@Override
	void settleRequest(RateLimitEngine engine, RateLimitRequest request, int status) {
		engine.settlement().settleRequestAsync(request, status).toCompletableFuture().join();
	}

	@Test
	void aLayerWhoseApplicationCodeTheRequestsExecutorRefusesFailsClosedWith503AndOneThatReadsOnlyTheRequestNeedsNoExecutor() throws Exception {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Later.class);
		RateLimitEngine engine = RateLimitEngine
			.builder(catalog, RateLimiter.of(InMemoryRateLimitStore.create(100)), new StandardRateLimitHeadersWriter(),
					(request) -> String.valueOf(request.getRemoteAddr()))
			.build();
		RateLimitRequest request = new MockRateLimitRequest().setApplicationCodeExecutor((task) -> {
			throw new RejectedExecutionException("saturated");
		});
		RateLimitOutcome outcome = engine
			.decideMethodAsync(Later.class.getMethod("applicationCodeKey"), Later.class, new Object[0], request)
			.toCompletableFuture()
			.join();
		assertThat(outcome.isRejected()).as("admitted unplanned, a client saturating the executor passes").isTrue();
		assertThat(outcome.rejection().getStatusCode().value()).isEqualTo(503);
		RateLimitOutcome requestOnly = engine
			.decideMethodAsync(Later.class.getMethod("twoLimits"), Later.class, new Object[0], request)
			.toCompletableFuture()
			.join();
		assertThat(requestOnly.isRejected()).as("keys that read only the request: planned on the caller's thread")
			.isFalse();
	}

	@Test
	void theOutcomeCompletesWhenTheStoreAnswersWithTheHeadersOfEveryLimit() throws Exception {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");
		LaterStore store = new LaterStore(InMemoryRateLimitStore.builder().clock(clock).build());
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Later.class);
		RateLimitEngine engine = RateLimitEngine
			.builder(catalog, RateLimiter.builder(store).clock(clock).build(), new StandardRateLimitHeadersWriter(),
					(request) -> String.valueOf(request.getRemoteAddr()))
			.build();
		Method method = Later.class.getMethod("twoLimits");
		List<CompletableFuture<RateLimitOutcome>> outcomes = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			outcomes.add(engine
				.decideMethodAsync(method, Later.class, new Object[0],
						new MockRateLimitRequest().setRemoteAddr("198.51.100.1"))
				.toCompletableFuture());
		}
		assertThat(outcomes).noneMatch(CompletableFuture::isDone);
		store.answer();
		assertThat(outcomes.get(0).join().isRejected()).isFalse();
		assertThat(outcomes.get(0).join().headers().getFirst("RateLimit-Remaining")).isEqualTo("1");
		assertThat(outcomes.get(1).join().isRejected()).isFalse();
		RateLimitOutcome rejected = outcomes.get(2).join();
		assertThat(rejected.isRejected()).isTrue();
		assertThat(rejected.limits()).extracting((limit) -> limit.policy().name()).first().isEqualTo("later-narrow");
		assertThat(rejected.headers().getFirst("Retry-After")).isNotNull();
	}

	@Test
	void eachDecisionIsObservedUntilTheStoreAnswersAndStopsOnTheThreadTheAnswerArrivesOn() throws Exception {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");
		LaterStore store = new LaterStore(InMemoryRateLimitStore.builder().clock(clock).build());
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Later.class);
		TestObservationRegistry registry = TestObservationRegistry.create();
		Set<String> stoppedOn = ConcurrentHashMap.newKeySet();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				stoppedOn.add(Thread.currentThread().getName());
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		RateLimitEngine engine = RateLimitEngine
			.builder(catalog, RateLimiter.builder(store).clock(clock).build(), new StandardRateLimitHeadersWriter(),
					(request) -> String.valueOf(request.getRemoteAddr()))
			.observationRegistry(registry, null)
			.build();
		CompletableFuture<RateLimitOutcome> outcome = engine
			.decideMethodAsync(Later.class.getMethod("twoLimits"), Later.class, new Object[0],
					new MockRateLimitRequest().setRemoteAddr("198.51.100.1"))
			.toCompletableFuture();
		TestObservationRegistryAssert.assertThat(registry)
			.hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 2)
			.hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasBeenStarted()
			.isNotStopped();
		store.answer();
		assertThat(outcome.join().isRejected()).isFalse();
		assertThat(stoppedOn).as("the threads the observations stopped on").containsExactly("store-client");
		TestObservationRegistryAssert.assertThat(registry)
			.forAllObservationsWithNameEqualTo("ratelimit.decision",
					(observation) -> observation.hasLowCardinalityKeyValue("outcome", "allowed"))
			.hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasBeenStopped();
	}

	public static class Later {

		@RateLimited(name = "later-narrow", limit = 2, window = "1m")
		@RateLimited(name = "later-wide", limit = 10, window = "1m")
		public String twoLimits() {
			return "later";
		}

		@RateLimited(name = "application-code-key", limit = 10, window = "1m", key = "T(java.lang.String).valueOf(1)")
		public String applicationCodeKey() {
			return "planned off the event loop";
		}

	}

	/** A store whose non-blocking answers wait until the test releases them, decided then by memory. */
	static final class LaterStore implements RateLimitStore {

		private final InMemoryRateLimitStore delegate;

		private final List<Runnable> waiting = new ArrayList<>();

		LaterStore(InMemoryRateLimitStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
			CompletableFuture<Reservation> answer = new CompletableFuture<>();
			this.waiting.add(() -> answer.complete(this.delegate.tryAcquireAll(acquisitions)));
			return answer;
		}

		void answer() throws InterruptedException {
			List<Runnable> answers = new ArrayList<>(this.waiting);
			this.waiting.clear();
			Thread thread = new Thread(() -> answers.forEach(Runnable::run), "store-client");
			thread.start();
			thread.join();
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			throw new AssertionError("the non-blocking path never asks the blocking one");
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.delegate.reset(policy, key);
		}

	}

}
