package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a request's policies that count by outcome give back once the outcome is known goes to the store in one call
 * per layer, however many policies the layer holds (docs/architecture.md, step 6).
 */
class GiveBacksPerLayerTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().clock(this.clock).build();

	/** The acquisitions of each give-back call the store received, in order. */
	private final List<Integer> giveBacks = new ArrayList<>();

	private final RateLimitStore store = new CountingStore();

	@Test
	void eachLayerGivesBackWhatItsPoliciesDoNotCountInOneStoreCall() throws Exception {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.filters(List.of(new FilterDefinition("edge", 0, List.of("/api/**"), List.of(),
					values("ratelimit.filters.edge", "limit", 10, "window", "1m", "count-on", List.of("4xx")),
					List.of()),
					new FilterDefinition("burst", 1, List.of("/api/**"), List.of(),
							values("ratelimit.filters.burst", "limit", 10, "window", "1m", "count-on",
									List.of("5xx")),
							List.of())))
			.build();
		catalog.register(Api.class);
		RateLimitEngine engine = RateLimitEngine
			.builder(catalog, RateLimiter.builder(this.store).clock(this.clock).build(),
					new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
		MockRateLimitRequest request = new MockRateLimitRequest().setRemoteAddr("198.51.100.1");
		engine.settlement().settledByStack(request);
		assertThat(engine.decideFilters(request, List.of(PathContainer.parsePath("/api/login"))).isRejected())
			.isFalse();
		Method login = Api.class.getMethod("login");
		RateLimitOutcome method = engine.decideMethod(login, Api.class, new Object[0], request);
		assertThat(method).isNotNull();
		assertThat(method.isRejected()).isFalse();
		// What the method interceptor does once the method returned: left to the stack, which knows the status.
		engine.settlement().settle(method, request, login, "welcome", null);
		engine.settlement().settleRequest(request, 200);
		assertThat(this.giveBacks).as("one call per layer: the filters' two policies, the method's three")
			.containsExactlyInAnyOrder(2, 3);
		assertThat(this.memory.peek(catalog.policy("failures").policy(), "198.51.100.1").remaining()).isEqualTo(5);
	}

	private static PolicyValues values(String source, Object... namesAndValues) {
		Map<String, Object> values = new LinkedHashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			values.put((String) namesAndValues[i], namesAndValues[i + 1]);
		}
		return new PolicyValues(source, values);
	}

	public static class Api {

		@RateLimited(name = "failures", limit = 5, window = "1m", countOn = "4xx")
		@RateLimited(name = "errors", limit = 5, window = "1m", countOn = "5xx")
		@RateLimited(name = "unauthorized", limit = 5, window = "1m", countOn = "401")
		public String login() {
			return "welcome";
		}

	}

	/** The in-memory store, counting the give-back calls it receives. */
	private final class CountingStore implements RateLimitStore {

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			return GiveBacksPerLayerTests.this.memory.tryAcquire(policy, key, cost);
		}

		@Override
		public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
			return GiveBacksPerLayerTests.this.memory.tryAcquireAll(acquisitions);
		}

		@Override
		public void refund(Acquisition acquisition, long countedAtMillis) {
			GiveBacksPerLayerTests.this.giveBacks.add(1);
			GiveBacksPerLayerTests.this.memory.refund(acquisition, countedAtMillis);
		}

		@Override
		public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
			GiveBacksPerLayerTests.this.giveBacks.add(acquisitions.size());
			GiveBacksPerLayerTests.this.memory.refundAll(acquisitions, countedAtMillis);
		}

		@Override
		public long currentTimeMillis() {
			return GiveBacksPerLayerTests.this.memory.currentTimeMillis();
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			GiveBacksPerLayerTests.this.memory.reset(policy, key);
		}

		@Override
		public boolean isLocal() {
			return true;
		}

	}

}
