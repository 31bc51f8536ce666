package io.github.ratelimit.integration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A WebFlux application booted as a user's would be, over real HTTP on Reactor Netty: {@code @RateLimited} methods
 * returning {@code Mono} and {@code Flux} are decided when their result is subscribed to, the filter layer is a
 * {@code WebFilter}, and a rejection is the same 429 problem with the same headers as on Spring MVC.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class WebFluxIntegrationTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void theFilterLayerRejectsBeforeDispatchAndConcurrentRequestsGetExactlyTheLimit() throws Exception {
		try (ConfigurableApplicationContext app = run("--ratelimit.filters.edge.paths=/filtered/**",
				"--ratelimit.filters.edge.limit=20", "--ratelimit.filters.edge.window=1h")) {
			String base = base(app);
			List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
			for (int i = 0; i < 60; i++) {
				responses.add(this.client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/filtered/anything"))
					.build(), HttpResponse.BodyHandlers.ofString()));
			}
			int notFound = 0;
			int rejected = 0;
			for (CompletableFuture<HttpResponse<String>> response : responses) {
				int status = response.join().statusCode();
				notFound += (status == 404) ? 1 : 0;
				rejected += (status == 429) ? 1 : 0;
			}
			assertThat(notFound).as("admitted, then no handler").isEqualTo(20);
			assertThat(rejected).isEqualTo(40);
		}
	}

	@Test
	void aKeyByThePrincipalCountsTheUserSpringSecurityAuthenticated() throws Exception {
		try (ConfigurableApplicationContext app = run("--spring.security.user.name=alice",
				"--spring.security.user.password=secret")) {
			String base = base(app);
			String alice = "Basic " + Base64.getEncoder().encodeToString("alice:secret".getBytes(StandardCharsets.UTF_8));
			for (int i = 0; i < 2; i++) {
				assertThat(get(base + "/me", "198.51.100.5", alice).statusCode()).isEqualTo(200);
			}
			assertThat(get(base + "/me", "198.51.100.5", alice).statusCode()).isEqualTo(429);
			assertThat(get(base + "/me", "198.51.100.6", alice).statusCode()).as("alice from anywhere").isEqualTo(429);
			assertThat(get(base + "/me", "198.51.100.5").statusCode()).as("anonymous: keyed by address").isEqualTo(200);
		}
	}

	@Test
	void aRateLimitedMethodReturningAPlainValueFailsTheStartUpNamingIt() {
		assertThatException()
			.isThrownBy(() -> SpringApplication.run(PlainApplication.class, "--server.port=0",
					"--ratelimit.store=memory", "--spring.main.web-application-type=reactive"))
			.havingRootCause()
			.isInstanceOf(InvalidRateLimitPolicyException.class)
			.withMessageContaining("PlainController#plain returns String")
			.withMessageContaining("return Mono<String> instead");
	}

	/**
	 * The tests that need no arguments of their own, on one application started once (each start costs seconds):
	 * each uses policies, paths and client addresses that no other test uses, so none sees another's counts. A nested
	 * class, run after the tests above: an application that closes disposes of Reactor Netty's global resources, the
	 * event loops of any other application still running in the JVM.
	 */
	@Nested
	class OnOneApplication {

		private static ConfigurableApplicationContext shared;

		@BeforeAll
		static void startSharedApplication() {
			shared = run();
		}

		/** Before NoBlockingOnEventLoops' own afterAll: what blocks while the application closes fails the class. */
		@AfterAll
		static void stopSharedApplication() {
			if (shared != null) {
				shared.close();
			}
		}

		@Test
		void aMonoMethodAdmitsItsLimitThenAnswersTheProblemWithItsHeaders() throws Exception {
			ConfigurableApplicationContext app = shared;
			assertThat(app.getBean(RateLimitWebFilter.class)).isNotNull();
			String base = base(app);
			for (int remaining = 2; remaining >= 0; remaining--) {
				HttpResponse<String> admitted = get(base + "/users/alice/orders", "198.51.100.1");
				assertThat(admitted.statusCode()).isEqualTo(200);
				assertThat(admitted.body()).isEqualTo("orders of alice, 3 a minute");
				assertThat(admitted.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(remaining));
			}
			HttpResponse<String> rejected = get(base + "/users/alice/orders", "198.51.100.1");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
			assertThat(rejected.headers().firstValue("RateLimit-Remaining")).hasValue("0");
			assertThat(rejected.body()).contains("\"status\":429").contains("\"violated-policies\":[\"orders\"]");
			assertThat(get(base + "/users/bob/orders", "198.51.100.1").statusCode()).as("another user's key")
				.isEqualTo(200);
		}

		@Test
		void aDailyQuotaInAZoneCountsDownToTheZonesMidnightNotUtcs() throws Exception {
			String base = base(shared);
			// 00:00:30 UTC is 01:00:30 in Berlin: the day ends at 23:00 UTC, 82,770 s later.
			for (int remaining = 1; remaining >= 0; remaining--) {
				HttpResponse<String> admitted = get(base + "/daily", "198.51.100.80");
				assertThat(admitted.statusCode()).isEqualTo(200);
				assertThat(admitted.headers().firstValue("RateLimit-Reset")).hasValue("82770");
			}
			HttpResponse<String> rejected = get(base + "/daily", "198.51.100.80");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Retry-After")).hasValue("82770");
		}

		@Test
		void aComposedAnnotationLimitsWithTheValuesItPassesThrough() throws Exception {
			String base = base(shared);
			for (int i = 0; i < 2; i++) {
				HttpResponse<String> admitted = get(base + "/users/alice/invoices", "198.51.100.70");
				assertThat(admitted.statusCode()).isEqualTo(200);
				assertThat(admitted.headers().firstValue("RateLimit-Limit")).hasValue("2");
			}
			HttpResponse<String> rejected = get(base + "/users/alice/invoices", "198.51.100.71");
			assertThat(rejected.statusCode()).as("alice, from anywhere").isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"invoices\"]");
			assertThat(get(base + "/users/bob/invoices", "198.51.100.70").statusCode()).as("another user's key")
				.isEqualTo(200);
		}

		@Test
		void aFluxMethodIsDecidedOncePerRequestAndRejectedBeforeItRuns() throws Exception {
			ConfigurableApplicationContext app = shared;
			Counted counted = app.getBean(Counted.class);
			String base = base(app);
			assertThat(get(base + "/events", "198.51.100.2").body()).isEqualTo("onetwothree");
			assertThat(get(base + "/events", "198.51.100.2").statusCode()).isEqualTo(429);
			assertThat(counted.calls).as("the rejected request never ran the method").isEqualTo(1);
			assertThat(get(base + "/events", "198.51.100.3").statusCode()).as("another client's address")
				.isEqualTo(200);
		}

		@Test
		void aKeyExpressionSeesTheExchange() throws Exception {
			ConfigurableApplicationContext app = shared;
			String base = base(app);
			for (int i = 0; i < 2; i++) {
				assertThat(get(base + "/reports?tenant=acme", "198.51.100." + (30 + i)).statusCode()).isEqualTo(200);
			}
			assertThat(get(base + "/reports?tenant=acme", "198.51.100.40").statusCode()).as("acme, from anywhere")
				.isEqualTo(429);
			assertThat(get(base + "/reports?tenant=globex", "198.51.100.40").statusCode()).isEqualTo(200);
		}

		@Test
		void everySubscriptionOfARetriedResultIsDecidedAgain() throws Exception {
			ConfigurableApplicationContext app = shared;
			String base = base(app);
			HttpResponse<String> retried = get(base + "/flaky", "198.51.100.50");
			assertThat(retried.statusCode()).isEqualTo(200);
			assertThat(app.getBean(FlakyService.class).calls()).as("two failures, then the answer").isEqualTo(3);
			assertThat(get(base + "/flaky", "198.51.100.50").statusCode())
				.as("three subscriptions took the policy's three units").isEqualTo(429);
		}

		@Test
		void aStreamedFluxThatSucceedsIsGivenBackWhenItCountsOnlyFailures() throws Exception {
			ConfigurableApplicationContext app = shared;
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> response = get(base(app) + "/stream", "198.51.100.7");
				assertThat(response.statusCode()).as("request %d", i + 1).isEqualTo(200);
				assertThat(response.body()).isEqualTo("abc");
			}
		}

		@Test
		void theStatusArgumentSeesTheLimitsOfItsOwnRequest() throws Exception {
			ConfigurableApplicationContext app = shared;
			assertThat(get(base(app) + "/status", "198.51.100.4").body()).isEqualTo("status: 4 left");
		}

		@Test
		void aCostKnownOnceTheMonoCompletesSettlesItsReservation() throws Exception {
			ConfigurableApplicationContext app = shared;
			int admitted = 0;
			for (int i = 0; i < 8; i++) {
				admitted += (get(base(app) + "/generate", "198.51.100.60").statusCode() == 200) ? 1 : 0;
			}
			// Each reserves 5 of 10 and costs 1, settled off the event loop once the response is complete: up to 6
			// pass (a refund still on its way when the next request arrives lets fewer through), never only 2.
			assertThat(admitted).isBetween(3, 6);
		}

	}

	private static ConfigurableApplicationContext run(String... arguments) {
		SpringApplication application = new SpringApplication(ReactiveApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		List<String> all = new ArrayList<>(List.of("--server.port=0", "--ratelimit.store=memory",
				"--ratelimit.client-ip.trusted-proxies=127.0.0.1/32"));
		all.addAll(List.of(arguments));
		return application.run(all.toArray(new String[0]));
	}

	private static String base(ConfigurableApplicationContext app) {
		return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
	}

	private HttpResponse<String> get(String uri, String client, String... authorization) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(uri)).header("X-Forwarded-For", client);
		for (String credentials : authorization) {
			request.header("Authorization", credentials);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ ReactiveController.class, Counted.class, FlakyService.class })
	static class ReactiveApplication {

		/**
		 * Mid-minute and still: a request and the next never fall into two windows of a one-minute fixed window, as
		 * two requests around a minute's turn on the system clock would.
		 */
		@Bean
		TimeSource rateLimitTimeSource() {
			return MutableTimeSource.at("2030-01-01T00:00:30Z");
		}

		/** Spring Security is on this module's test class path: everything is open, behind its web filter chain. */
		@Bean
		SecurityWebFilterChain openChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

	}

	@RestController
	static class ReactiveController {

		private final Counted counted;

		private final FlakyService flaky;

		ReactiveController(Counted counted, FlakyService flaky) {
			this.counted = counted;
			this.flaky = flaky;
		}

		@GetMapping("/daily")
		@RateLimited(name = "daily", limit = 2, window = "1d", zone = "Europe/Berlin")
		public Mono<String> daily() {
			return Mono.just("daily");
		}

		@GetMapping("/reports")
		@RateLimited(name = "reports", limit = 2, window = "1h",
				key = "#exchange.request.queryParams.getFirst('tenant')")
		public Mono<String> reports() {
			return Mono.just("reports");
		}

		@GetMapping("/flaky")
		public Mono<String> flaky() {
			return this.flaky.call().retry(5);
		}

		@GetMapping("/users/{userId}/invoices")
		@ApiLimit(name = "invoices", perMinute = 2)
		public Mono<String> invoices(@PathVariable String userId) {
			return Mono.just("invoices of " + userId);
		}

		@GetMapping("/users/{userId}/orders")
		@RateLimited(name = "orders", limit = 3, window = "1m", key = "#userId")
		public Mono<String> orders(@PathVariable String userId) {
			return Mono.just("orders of " + userId + ", 3 a minute");
		}

		@GetMapping("/generate")
		@RateLimited(name = "generate", algorithm = Algorithm.TOKEN_BUCKET, limit = 10, window = "1h", cost = "5",
				settle = "#result.length()")
		public Mono<String> generate() {
			return Mono.just("x");
		}

		@GetMapping("/events")
		@RateLimited(name = "events", limit = 1, window = "1m")
		public Flux<String> events() {
			this.counted.calls++;
			return Flux.just("one", "two", "three");
		}

		@GetMapping("/stream")
		@RateLimited(name = "stream", limit = 2, window = "1m", countOn = "5xx")
		public Flux<String> stream() {
			return Flux.just("a", "b", "c");
		}

		@GetMapping("/me")
		@RateLimited(name = "me", limit = 2, window = "1m", key = "#principal")
		public Mono<String> me() {
			return Mono.just("me");
		}

		@GetMapping("/status")
		@RateLimited(name = "status", limit = 5, window = "1m")
		public Mono<String> status(RateLimitStatus status) {
			return Mono.fromSupplier(() -> "status: " + status.mostRestrictive().orElseThrow().decision().remaining()
					+ " left");
		}

	}

	static class Counted {

		volatile int calls;

	}

	/** Fails its first two calls: a caller that retries subscribes to its result again. */
	static class FlakyService {

		private final AtomicInteger calls = new AtomicInteger();

		@RateLimited(name = "flaky", limit = 3, window = "1m")
		public Mono<String> call() {
			return Mono.defer(() -> (this.calls.incrementAndGet() <= 2) ? Mono.error(new IllegalStateException("flaky"))
					: Mono.just("ok"));
		}

		/** The calls so far (a method: the bean is a proxy, whose own fields are not the instance's). */
		public int calls() {
			return this.calls.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(PlainController.class)
	static class PlainApplication {

	}

	@RestController
	static class PlainController {

		@GetMapping("/plain")
		@RateLimited(name = "plain", limit = 3, window = "1m")
		public String plain() {
			return "plain";
		}

	}

}
