package io.github.ratelimit.webflux;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.RecordingStore;
import io.github.ratelimit.engine.FilterDefinition;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux filter layer: a request that no filter applies to passes on at once, on the caller's thread, with no
 * decision; one a filter applies to is decided.
 */
class RateLimitWebFilterTests {

	private final AtomicInteger decisions = new AtomicInteger();

	@Test
	void aRequestNoFilterAppliesToPassesOnAtOnceWithoutADecisionWhileFiltersExist() {
		RateLimitWebFilter filter = new RateLimitWebFilter(engine(new FilterDefinition("edge", 0, List.of("/api/**"),
				List.of("POST"), new PolicyValues("ratelimit.filters.edge", Map.of("limit", 5L, "window", "1h")),
				List.of())), 0);
		for (MockServerHttpRequest request : List.of(MockServerHttpRequest.get("/orders").build(),
				MockServerHttpRequest.get("/api/orders").build())) {
			MockServerWebExchange exchange = MockServerWebExchange.from(request);
			AtomicReference<Thread> chainedOn = new AtomicReference<>();
			filter.filter(exchange, (chained) -> Mono.fromRunnable(() -> chainedOn.set(Thread.currentThread())))
				.block(Duration.ofSeconds(5));
			assertThat(chainedOn.get()).as("the chain of %s %s", request.getMethod(), request.getPath())
				.isSameAs(Thread.currentThread());
		}
		assertThat(this.decisions).as("the store's decisions").hasValue(0);
		MockServerWebExchange filtered = MockServerWebExchange.from(MockServerHttpRequest.post("/api/orders")
			.remoteAddress(new InetSocketAddress("192.0.2.1", 40_000))
			.build());
		filter.filter(filtered, (chained) -> Mono.empty()).block(Duration.ofSeconds(5));
		assertThat(this.decisions).as("the store's decisions once a filter applies").hasValue(1);
	}

	@Test
	void aRequestCancelledWhileTheStoreDecidesGivesBackTheSlotItTookOnceTheAnswerComes() {
		CompletableFuture<Void> answer = new CompletableFuture<>();
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.create(100);
		RateLimitStore slow = new RateLimitStore() {

			@Override
			public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
				return memory.tryAcquire(policy, key, cost);
			}

			@Override
			public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
				return answer.thenApply((ignored) -> memory.tryAcquireAll(acquisitions));
			}

			@Override
			public void refund(Acquisition acquisition, long countedAtMillis) {
				memory.refund(acquisition, countedAtMillis);
			}

			@Override
			public void reset(RateLimitPolicy policy, String key) {
				memory.reset(policy, key);
			}

			@Override
			public boolean isLocal() {
				return true;
			}

		};
		PolicyCatalog catalog = PolicyCatalog.builder()
			.filters(List.of(new FilterDefinition("slots", 0, List.of("/api/**"), List.of(),
					new PolicyValues("ratelimit.filters.slots", Map.of("limit", 1L, "algorithm", "CONCURRENCY")),
					List.of())))
			.build();
		RateLimitEngine engine = RateLimitEngine.builder(catalog, RateLimiter.of(slow),
				new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr())).build();
		catalog.afterSingletonsInstantiated();
		RateLimitWebFilter filter = new RateLimitWebFilter(engine, 0);
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/orders")
			.remoteAddress(new InetSocketAddress("192.0.2.1", 40_000))
			.build());
		Disposable request = filter.filter(exchange, (chained) -> Mono.never()).subscribe();
		request.dispose(); // the client went away while the store decided
		answer.complete(null); // the store admits it: it takes the slot
		RateLimitPolicy slots = java.util.Objects.requireNonNull(catalog.policy("slots")).policy();
		assertThat(memory.peek(slots, "192.0.2.1").remaining()).as("given back once known").isOne();
	}

	private RateLimitEngine engine(FilterDefinition... filters) {
		PolicyCatalog catalog = PolicyCatalog.builder().filters(List.of(filters)).build();
		return RateLimitEngine.builder(catalog, RateLimiter.of(new RecordingStore(InMemoryRateLimitStore.create(100), this.decisions::incrementAndGet)),
				new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
	}

}
