package io.github.ratelimit.gateway;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The gateway's limiter on the engine, as the gateway's {@code RequestRateLimiter} filter calls it: the routes'
 * arguments and their overrides, start-up checking, the key the gateway resolved, and what reaches the response.
 */
class GatewayRateLimiterTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:30Z");

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(this.clock).build();

	private final RateLimiter limiter = RateLimiter
		.builder(this.store)
		.clock(this.clock)
		.build();

	@Test
	void aRouteCountsItsPolicyByTheKeyTheGatewayResolvedAndRejectsWithRetryAfter() {
		GatewayRateLimiter gateway = gateway(Map.of(), route("resources", "ratelimit.policy", "resources",
				"ratelimit.limit", "2", "ratelimit.window", "1m"));
		assertThat(allowed(gateway, "resources", "198.51.100.1")).isTrue();
		assertThat(allowed(gateway, "resources", "198.51.100.1")).isTrue();
		Response rejected = gateway.isAllowed("resources", "198.51.100.1").block();
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.getHeaders()).containsEntry("RateLimit-Limit", "2")
			.containsEntry("RateLimit-Remaining", "0")
			.containsEntry("Retry-After", "30");
		assertThat(allowed(gateway, "resources", "198.51.100.2")).as("another key").isTrue();
	}

	@Test
	void aRoutesDailyQuotaInAZoneEndsAtTheZonesMidnight() {
		GatewayRateLimiter gateway = gateway(Map.of(), route("daily", "ratelimit.policy", "daily", "ratelimit.limit",
				"1", "ratelimit.window", "1d", "ratelimit.zone", "Asia/Tokyo"));
		// 00:00:30 UTC is 09:00:30 in Tokyo: the day ends at 15:00 UTC.
		assertThat(allowed(gateway, "daily", "k")).isTrue();
		Response rejected = gateway.isAllowed("daily", "k").block();
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.getHeaders()).containsEntry("Retry-After", Long.toString(15 * 3600 - 30));
	}

	@Test
	void aKeyThatBreaksARoutesPolicyWithAPenaltyIsLockedOutOfEveryRouteOfTheGroupForThePenalty() {
		GatewayRateLimiter gateway = gateway(Map.of("login", values("login", "penalty", "1h", "penalty-group", "auth")),
				route("login", "ratelimit.policy", "login", "ratelimit.limit", "2", "ratelimit.window", "1m"),
				route("reset", "ratelimit.policy", "reset", "ratelimit.limit", "100", "ratelimit.window", "1m",
						"ratelimit.penalty-group", "auth"));
		assertThat(allowed(gateway, "login", "k")).isTrue();
		assertThat(allowed(gateway, "login", "k")).isTrue();
		assertThat(gateway.isAllowed("login", "k").block().getHeaders()).containsEntry("Retry-After", "3600");
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(gateway.isAllowed("login", "k").block().getHeaders()).as("the window has passed, not the penalty")
			.containsEntry("Retry-After", "3480");
		assertThat(gateway.isAllowed("reset", "k").block().getHeaders()).as("another route of the group")
			.containsEntry("Retry-After", "3480");
		assertThat(allowed(gateway, "reset", "other")).as("another key").isTrue();
		RateLimitProblemFilter problems = new RateLimitProblemFilter();
		MockServerWebExchange rejected = exchange("198.51.100.7");
		problems.filter(rejected, (exchange) -> requestRateLimiter(gateway, exchange, "reset", "k")).block();
		assertThat(rejected.getResponse().getBodyAsString().block())
			.contains("\"type\":\"https://iana.org/assignments/http-problem-types#abnormal-usage-detected\"");
		this.clock.advance(Duration.ofMinutes(58));
		assertThat(allowed(gateway, "login", "k")).as("an hour after the break").isTrue();
	}

	@Test
	void aRouteWithAMaxWaitLetsARequestOverItsBucketWaitForItsTurnAndRejectsOneBeyondIt() {
		GatewayRateLimiter gateway = gateway(Map.of(), route("paced", "ratelimit.policy", "paced", "ratelimit.algorithm",
				"token-bucket", "ratelimit.limit", "10", "ratelimit.window", "1s", "ratelimit.burst", "1",
				"ratelimit.max-wait", "150ms"));
		assertThat(allowed(gateway, "paced", "k")).isTrue();
		long start = System.nanoTime();
		Response waited = gateway.isAllowed("paced", "k").block();
		assertThat(waited.isAllowed()).as("its turn, a tenth of a second away").isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
		assertThat(waited.getHeaders()).containsEntry("RateLimit-Remaining", "0").containsEntry("RateLimit-Limit", "1");
		Response beyond = gateway.isAllowed("paced", "k").block();
		assertThat(beyond.isAllowed()).as("its turn 0.2 s away, beyond the longest wait").isFalse();
		assertThat(beyond.getHeaders()).containsEntry("Retry-After", "1");
	}

	@Test
	void aConcurrencyRoutesSlotIsHeldWhileItsExchangeRunsAndGivenBackWhenItEndsOrIsCancelled() {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		RateLimitEngine engine = RateLimitEngine.builder(catalog, this.limiter, new StandardRateLimitHeadersWriter(),
				(request) -> String.valueOf(request.getRemoteAddr())).build();
		GatewayRateLimiter gateway = new GatewayRateLimiter(engine, List.of(route("slots", "ratelimit.policy", "slots",
				"ratelimit.algorithm", "CONCURRENCY", "ratelimit.limit", "1", "ratelimit.hold", "1m")), List.of());
		catalog.afterSingletonsInstantiated();
		RateLimitWebFilter web = new RateLimitWebFilter(engine, 0);
		RateLimitProblemFilter problems = new RateLimitProblemFilter();
		Sinks.Empty<Void> backend = Sinks.empty();
		// The backend has not answered: the exchange runs, holding the route's one slot.
		Disposable running = web.filter(exchange("198.51.100.7"), (exchange) -> problems.filter(exchange,
				(decorated) -> requestRateLimiter(gateway, decorated, "slots", "198.51.100.7").then(backend.asMono())))
			.subscribe();
		MockServerWebExchange rejected = exchange("198.51.100.7");
		web.filter(rejected, (exchange) -> problems.filter(exchange,
				(decorated) -> requestRateLimiter(gateway, decorated, "slots", "198.51.100.7")))
			.block();
		assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(rejected.getResponse().getHeaders().containsHeader("Retry-After")).isFalse();
		assertThat(rejected.getResponse().getBodyAsString().block()).contains("Concurrency limit of policy 'slots'");
		RateLimitPolicy slots = gateway.getConfig().get("slots").spec().policy();
		running.dispose(); // the client went away
		assertThat(this.store.peek(slots, "198.51.100.7").remaining()).as("cancelled: given back").isOne();
		MockServerWebExchange next = exchange("198.51.100.7");
		web.filter(next, (exchange) -> problems.filter(exchange,
				(decorated) -> requestRateLimiter(gateway, decorated, "slots", "198.51.100.7")))
			.block();
		assertThat(next.getResponse().getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(this.store.peek(slots, "198.51.100.7").remaining()).as("ended: given back").isOne();
	}

	@Test
	void ratelimitPoliciesOverrideARoutesArguments() {
		GatewayRateLimiter gateway = gateway(Map.of("resources", values("resources", "limit", 1)),
				route("resources", "ratelimit.policy", "resources", "ratelimit.limit", "5", "ratelimit.window", "1m"));
		assertThat(allowed(gateway, "resources", "k")).isTrue();
		assertThat(allowed(gateway, "resources", "k")).isFalse();
	}

	@Test
	void anInvalidRouteFailsAtConstructionNamingTheRouteAndTheAttribute() {
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> gateway(Map.of(), route("resources", "ratelimit.limit", "five", "ratelimit.window", "1m")))
			.withMessageContaining("route 'resources'")
			.withMessageContaining("'limit' cannot be 'five'");
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> gateway(Map.of(), route("resources", "ratelimit.window", "1m")))
			.withMessageContaining("'limit' is not set");
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> gateway(Map.of(),
					route("resources", "ratelimit.limit", "5", "ratelimit.window", "1m", "ratelimit.key", "#userId")))
			.withMessageContaining("key-resolver");
	}

	@Test
	void twoRoutesNamingOnePolicyMustDeclareTheSameLimits() {
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> gateway(Map.of(),
					route("a", "ratelimit.policy", "shared", "ratelimit.limit", "5", "ratelimit.window", "1m"),
					route("b", "ratelimit.policy", "shared", "ratelimit.limit", "6", "ratelimit.window", "1m")))
			.withMessageContaining("route 'b'")
			.withMessageContaining("route 'a'");
		GatewayRateLimiter shared = gateway(Map.of(),
				route("a", "ratelimit.policy", "shared", "ratelimit.limit", "1", "ratelimit.window", "1m"),
				route("b", "ratelimit.policy", "shared", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		assertThat(allowed(shared, "a", "k")).isTrue();
		assertThat(allowed(shared, "b", "k")).as("one policy, one counter").isFalse();
	}

	@Test
	void aRouteNamingAnotherLimiterIsLeftToIt() {
		GatewayRateLimiter gateway = gateway(Map.of(),
				route("theirs", "rate-limiter", "#{@redisRateLimiter}", "redis-rate-limiter.replenishRate", "10"));
		assertThat(gateway.getConfig()).doesNotContainKey("theirs");
	}

	@Test
	void aRouteAddedAfterStartUpIsDeclaredWhenTheGatewayBuildsIt() {
		GatewayRateLimiter gateway = gateway(Map.of());
		gateway.onApplicationEvent(new FilterArgsEvent(this, "late",
				Map.of("ratelimit.limit", "1", "ratelimit.window", "1m", "key-resolver", "#{@clientIpKeyResolver}")));
		assertThat(allowed(gateway, "late", "k")).isTrue();
		assertThat(allowed(gateway, "late", "k")).isFalse();
		assertThat(gateway.getConfig().get("late").policy()).as("counted under the route's id").isEqualTo("late");
	}

	@Test
	void aRouteWithoutArgumentsOfItsOwnTakesItsLimitsFromThePropertiesOfItsId() {
		GatewayRateLimiter gateway = gateway(Map.of("plain", values("plain", "limit", 1, "window", "1m")),
				route("plain", "key-resolver", "#{@clientIpKeyResolver}"));
		assertThat(allowed(gateway, "plain", "k")).isTrue();
		assertThat(allowed(gateway, "plain", "k")).isFalse();
	}

	@Test
	void aRouteUsingTheLimiterWithNoLimitAnywhereFailsClosedWith503AndAProblem() {
		GatewayRateLimiter gateway = gateway(Map.of());
		for (int i = 0; i < 3; i++) {
			MockServerWebExchange exchange = exchange("198.51.100.6");
			new RateLimitProblemFilter()
				.filter(exchange, (decorated) -> requestRateLimiter(gateway, decorated, "unconfigured", "k"))
				.block();
			assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
			assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
			assertThat(exchange.getResponse().getBodyAsString().block()).contains("\"status\":503")
				.contains("not configured");
		}
		assertThat(allowed(gateway, "unconfigured", "k")).as("without the exchange: the route's status").isFalse();
	}

	@Test
	void aStoreThatFailsUnderDenyIsAnswered503WithItsProblemNotAsAClientOverItsLimit() {
		RateLimitStore failing = new RateLimitStore() {

			@Override
			public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
				throw new RateLimitStoreException("the store is down");
			}

			@Override
			public void reset(RateLimitPolicy policy, String key) {
			}

		};
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		RateLimitEngine engine = RateLimitEngine
			.builder(catalog, RateLimiter.builder(failing).clock(this.clock).build(),
					new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
		GatewayRateLimiter gateway = new GatewayRateLimiter(engine,
				List.of(route("r", "ratelimit.limit", "5", "ratelimit.window", "1m", "ratelimit.failure-mode", "deny")),
				List.of());
		catalog.afterSingletonsInstantiated();
		MockServerWebExchange exchange = exchange("198.51.100.5");
		new RateLimitProblemFilter().filter(exchange, (decorated) -> requestRateLimiter(gateway, decorated)).block();
		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isNotNull();
		assertThat(exchange.getResponse().getBodyAsString().block()).contains("\"status\":503")
			.contains("\"policy\":\"r\"");
	}

	@Test
	void aDecisionTheStoreAnswersOnItsOwnThreadRoutesOnTheRequestsThreadNotTheStores() {
		ExecutorService storeThread = Executors.newSingleThreadExecutor((task) -> new Thread(task, "store-io"));
		try {
			InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().build();
			RateLimitStore answeringLater = new RateLimitStore() {

				@Override
				public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
					return memory.tryAcquire(policy, key, cost);
				}

				@Override
				public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
					// Later than the caller looks: a decision done by then would rightly go on where it is.
					return CompletableFuture.supplyAsync(() -> {
						try {
							Thread.sleep(100);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
						return memory.tryAcquireAll(acquisitions);
					}, storeThread);
				}

				@Override
				public void reset(RateLimitPolicy policy, String key) {
					memory.reset(policy, key);
				}

			};
			PolicyCatalog catalog = PolicyCatalog.builder().build();
			RateLimitEngine engine = RateLimitEngine
				.builder(catalog, RateLimiter.builder(answeringLater).clock(this.clock).build(),
						new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
				.build();
			GatewayRateLimiter gateway = new GatewayRateLimiter(engine,
					List.of(route("r", "ratelimit.limit", "5", "ratelimit.window", "1m")), List.of());
			catalog.afterSingletonsInstantiated();
			AtomicReference<String> routedOn = new AtomicReference<>();
			new RateLimitProblemFilter()
				.filter(exchange("198.51.100.4"), (decorated) -> gateway.isAllowed("r", "198.51.100.4")
					.doOnNext((response) -> routedOn.set(Thread.currentThread().getName()))
					.then())
				.block();
			// A mock exchange has no connection: its request goes on on Reactor's parallel scheduler.
			assertThat(routedOn.get()).startsWith("parallel-");
		}
		finally {
			storeThread.shutdownNow();
		}
	}

	@Test
	void twoFiltersOfThisLimiterOnOneRouteFailAtConstruction() {
		RouteDefinition route = route("r", "ratelimit.policy", "bulk", "ratelimit.limit", "1000", "ratelimit.window",
				"1m");
		FilterDefinition global = route("g", "ratelimit.policy", "global", "ratelimit.limit", "100",
				"ratelimit.window", "1m").getFilters().get(0);
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		RateLimitEngine engine = RateLimitEngine.builder(catalog, this.limiter, new StandardRateLimitHeadersWriter(),
				(request) -> String.valueOf(request.getRemoteAddr())).build();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> new GatewayRateLimiter(engine, List.of(route), List.of(global)))
			.withMessageContaining("route 'r' has 2 RequestRateLimiter filters");
	}

	@Test
	void aConfiguredRouteWithoutAnIdMustNameItsPolicy() {
		RouteDefinition anonymous = route("x", "ratelimit.limit", "5", "ratelimit.window", "1m");
		anonymous.setId(null);
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class).isThrownBy(() -> gateway(Map.of(), anonymous))
			.withMessageContaining("route #0 has no id");
		RouteDefinition named = route("x", "ratelimit.policy", "p", "ratelimit.limit", "5", "ratelimit.window", "1m");
		named.setId(null);
		gateway(Map.of(), named);
	}

	@Test
	void aPolicyDisabledInThePropertiesLetsEveryRequestPass() {
		GatewayRateLimiter gateway = gateway(Map.of("resources", values("resources", "enabled", false)),
				route("resources", "ratelimit.policy", "resources", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		for (int i = 0; i < 3; i++) {
			assertThat(allowed(gateway, "resources", "k")).isTrue();
		}
	}

	@Test
	void theJavaDslsLimiterDecidesItsPolicyOnEveryRoute() {
		GatewayRateLimiter resources = gateway(Map.of()).forPolicy("resources", Map.of("limit", 1, "window", "1m"));
		assertThat(allowed(resources, "any-route", "k")).isTrue();
		assertThat(allowed(resources, "another-route", "k")).isFalse();
		assertThatExceptionOfType(InvalidRateLimitPolicyException.class)
			.isThrownBy(() -> gateway(Map.of()).forPolicy("bad", Map.of("limit", 1, "window", "soon")))
			.withMessageContaining("'bad'");
	}

	@Test
	void aKeyImitatingOneNoClientCanWriteIsAKeyOfItsOwn() {
		GatewayRateLimiter gateway = gateway(Map.of(),
				route("r", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		assertThat(allowed(gateway, "r", "#none")).isTrue();
		RateLimitPolicy policy = gateway.getConfig().get("r").spec().policy();
		assertThat(this.store.peek(policy, "#none").remaining()).as("the key used outside of a request").isEqualTo(1);
		assertThat(this.store.peek(policy, "##none").remaining()).isZero();
	}

	@Test
	void withTheExchangeTheHeadersAreSetOnceAndARejectionGetsTheProblemBody() {
		GatewayRateLimiter gateway = gateway(Map.of(),
				route("r", "ratelimit.policy", "resources", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		RateLimitProblemFilter problems = new RateLimitProblemFilter();
		MockServerWebExchange admitted = exchange("198.51.100.7");
		problems.filter(admitted, (exchange) -> requestRateLimiter(gateway, exchange)).block();
		assertThat(admitted.getResponse().getHeaders().get("RateLimit-Remaining")).containsExactly("0");
		assertThat(admitted.getResponse().getStatusCode()).isEqualTo(HttpStatus.OK);

		MockServerWebExchange rejected = exchange("198.51.100.7");
		problems.filter(rejected, (exchange) -> requestRateLimiter(gateway, exchange)).block();
		assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(rejected.getResponse().getHeaders().get("Retry-After")).containsExactly("30");
		assertThat(rejected.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(rejected.getResponse().getBodyAsString().block()).contains("\"status\":429")
			.contains("\"instance\":\"/api/v1/resources\"")
			.contains("\"violated-policies\":[\"resources\"]");
	}

	@Test
	void aRejectedRoutesProblemNamesThePathTheClientSentNotOneARouteFilterRewrote() {
		GatewayRateLimiter gateway = gateway(Map.of(), route("r", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		RateLimitProblemFilter problems = new RateLimitProblemFilter();
		problems.filter(exchange("198.51.100.7"), (exchange) -> requestRateLimiter(gateway, exchange)).block();

		MockServerWebExchange rejected = exchange("198.51.100.7");
		problems.filter(rejected, (exchange) -> requestRateLimiter(gateway,
				exchange.mutate().request((request) -> request.path("/resources")).build()))
			.block();

		assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(rejected.getResponse().getBodyAsString().block()).contains("\"instance\":\"/api/v1/resources\"");
	}

	@Test
	void aRouteStatusOtherThanTheProblemsCompletesWithoutABody() {
		GatewayRateLimiter gateway = gateway(Map.of(), route("r", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		RateLimitProblemFilter problems = new RateLimitProblemFilter();
		for (int i = 0; i < 2; i++) {
			MockServerWebExchange exchange = exchange("198.51.100.8");
			problems.filter(exchange, (decorated) -> gateway.isAllowed("r", "k").flatMap((response) -> {
				decorated.getResponse().setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
				return decorated.getResponse().setComplete();
			})).block();
			if (i == 1) {
				assertThat(exchange.getResponse().getBodyAsString().block()).isEmpty();
			}
		}
	}

	@Test
	void anExemptAddressPassesARouteKeyedByTheClientAddressOnly() {
		GatewayRateLimiter gateway = gateway(Map.of(), (builder) -> builder
			.exempt(ClientExemptions.of(List.of("198.51.100.9/32"))),
				route("r", "ratelimit.limit", "1", "ratelimit.window", "1m"));
		ClientIpKeyResolver keys = new ClientIpKeyResolver((request) -> request.getRemoteAddr());
		for (int i = 0; i < 3; i++) {
			MockServerWebExchange exchange = exchange("198.51.100.9");
			String key = keys.resolve(exchange).block();
			new RateLimitProblemFilter().filter(exchange, (decorated) -> requestRateLimiter(gateway, decorated, key))
				.block();
			assertThat(exchange.getResponse().getStatusCode()).as("exempt, request %d", i).isEqualTo(HttpStatus.OK);
		}
		for (int i = 0; i < 2; i++) {
			MockServerWebExchange exchange = exchange("198.51.100.9");
			new RateLimitProblemFilter().filter(exchange, (decorated) -> requestRateLimiter(gateway, decorated, "u-1"))
				.block();
			assertThat(exchange.getResponse().getStatusCode()).as("keyed by a user, request %d", i)
				.isEqualTo((i == 0) ? HttpStatus.OK : HttpStatus.TOO_MANY_REQUESTS);
		}
	}

	/** What the gateway's RequestRateLimiter filter does with the answer. */
	private static Mono<Void> requestRateLimiter(GatewayRateLimiter gateway, ServerWebExchange exchange) {
		return requestRateLimiter(gateway, exchange, "198.51.100.7");
	}

	private static Mono<Void> requestRateLimiter(GatewayRateLimiter gateway, ServerWebExchange exchange, String key) {
		return requestRateLimiter(gateway, exchange, "r", key);
	}

	private static Mono<Void> requestRateLimiter(GatewayRateLimiter gateway, ServerWebExchange exchange, String route,
			String key) {
		return gateway.isAllowed(route, key).flatMap((response) -> {
			response.getHeaders().forEach((name, value) -> exchange.getResponse().getHeaders().add(name, value));
			if (response.isAllowed()) {
				exchange.getResponse().setStatusCode(HttpStatus.OK);
				return exchange.getResponse().setComplete();
			}
			exchange.getResponse().setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
			return exchange.getResponse().setComplete();
		});
	}

	private static MockServerWebExchange exchange(String address) {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/api/v1/resources")
			.remoteAddress(new InetSocketAddress(address, 40000)));
		RateLimitWebFilter.exchangeOf(exchange); // what the web filter does first
		return exchange;
	}

	private static boolean allowed(GatewayRateLimiter gateway, String route, String key) {
		return gateway.isAllowed(route, key).block().isAllowed();
	}

	private GatewayRateLimiter gateway(Map<String, PolicyValues> policies, RouteDefinition... routes) {
		return gateway(policies, (builder) -> {
		}, routes);
	}

	private GatewayRateLimiter gateway(Map<String, PolicyValues> policies, Consumer<RateLimitEngine.Builder> engine,
			RouteDefinition... routes) {
		PolicyCatalog catalog = PolicyCatalog.builder().policies(policies).build();
		RateLimitEngine.Builder builder = RateLimitEngine.builder(catalog, this.limiter,
				new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()));
		engine.accept(builder);
		GatewayRateLimiter gateway = new GatewayRateLimiter(builder.build(), List.of(routes), List.of());
		catalog.afterSingletonsInstantiated();
		return gateway;
	}

	private static RouteDefinition route(String id, String... args) {
		RouteDefinition route = new RouteDefinition();
		route.setId(id);
		FilterDefinition filter = new FilterDefinition();
		filter.setName("RequestRateLimiter");
		Map<String, String> arguments = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i += 2) {
			arguments.put(args[i], args[i + 1]);
		}
		filter.setArgs(arguments);
		List<FilterDefinition> filters = new ArrayList<>();
		filters.add(filter);
		route.setFilters(filters);
		return route;
	}

	private static PolicyValues values(String policy, Object... values) {
		Map<String, Object> map = new LinkedHashMap<>();
		for (int i = 0; i < values.length; i += 2) {
			map.put((String) values[i], values[i + 1]);
		}
		return new PolicyValues("ratelimit.policies." + policy, map);
	}


}
