package io.github.ratelimit.integration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Concurrency limits over real HTTP, on each store: 40 concurrent slow requests against a limit of 5, spread over two
 * instances sharing the store, never run more than 5 at once, however they interleave (the handler counts how many
 * run, across the instances); every slot is given back once its request ends; slots an instance took and never gave
 * back (it died mid-request) are free once their hold passed; a WebFlux request the client cancels gives its slot
 * back at once, not a hold later.
 */
class ConcurrencyLimitIntegrationTests {

	private static final int LIMIT = 5;

	private static final AtomicInteger inFlight = new AtomicInteger();

	private static final AtomicInteger most = new AtomicInteger();

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@BeforeEach
	void resetCounts() {
		inFlight.set(0);
		most.set(0);
	}

	@Test
	void inMemoryFortyConcurrentRequestsNeverRunMoreThanTheLimit() throws Exception {
		try (ConfigurableApplicationContext app = mvc("--ratelimit.store=memory")) {
			burst(List.of(app));
			rejectedByARateLimit(app);
			timedOut(app);
		}
	}

	@Test
	void onRedisTwoInstancesRunNoMoreThanTheLimitBetweenThemAndADeadInstancesSlotsComeBackAfterTheHold()
			throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			String[] store = { "--ratelimit.store=redis", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(),
					"--ratelimit.redis.key-prefix=concurrency-" + System.nanoTime() };
			try (ConfigurableApplicationContext first = mvc(store); ConfigurableApplicationContext second = mvc(store)) {
				burst(List.of(first, second));
				rejectedByARateLimit(second);
				deadInstance(first, second);
			}
		}
	}

	@Test
	void onDynamoDbTwoInstancesRunNoMoreThanTheLimitBetweenThemAndADeadInstancesSlotsComeBackAfterTheHold()
			throws Exception {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		System.setProperty("aws.accessKeyId", "local");
		System.setProperty("aws.secretAccessKey", "local");
		try (Dynalite dynalite = Dynalite.start()) {
			String[] store = { "--ratelimit.store=dynamodb", "--ratelimit.dynamodb.endpoint=" + dynalite.endpoint(),
					"--ratelimit.dynamodb.region=us-east-1", "--ratelimit.dynamodb.create-table=true",
					"--ratelimit.dynamodb.table=concurrency-" + System.nanoTime(), "--ratelimit.dynamodb.timeout=10s" };
			try (ConfigurableApplicationContext first = mvc(store); ConfigurableApplicationContext second = mvc(store)) {
				burst(List.of(first, second));
				rejectedByARateLimit(second);
				deadInstance(first, second);
			}
		}
		finally {
			System.clearProperty("aws.accessKeyId");
			System.clearProperty("aws.secretAccessKey");
		}
	}

	@Test
	void aWebFluxRequestTheClientCancelsGivesItsSlotBackAtOnce() throws Exception {
		SpringApplication application = new SpringApplication(ReactiveApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		try (ConfigurableApplicationContext app = application.run("--server.port=0", "--ratelimit.store=memory")) {
			HttpRequest request = HttpRequest.newBuilder(uri(app, "/stalled")).timeout(Duration.ofMillis(500)).build();
			for (int i = 0; i < 3; i++) {
				try {
					this.client.send(request, HttpResponse.BodyHandlers.ofString());
					throw new AssertionError("the handler answers in a minute");
				}
				catch (HttpTimeoutException ex) {
					// The client gave up and closed the connection: the exchange is cancelled.
				}
				// The hold is a minute: a slot back within seconds was given back by the cancel.
				await().atMost(Duration.ofSeconds(5)).until(() -> remaining(app, "stalled") == 1);
			}
		}
	}

	/** 40 requests at once, spread over the instances: at most 5 run at once, and every slot comes back. */
	private void burst(List<ConfigurableApplicationContext> instances) throws Exception {
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			HttpRequest request = HttpRequest.newBuilder(uri(instances.get(i % instances.size()), "/slow"))
				.timeout(Duration.ofSeconds(30))
				.build();
			responses.add(this.client.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
		}
		int admitted = 0;
		for (CompletableFuture<HttpResponse<String>> pending : responses) {
			HttpResponse<String> response = pending.join();
			if (response.statusCode() == 200) {
				admitted++;
				continue;
			}
			assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
			assertThat(response.headers().firstValue("Retry-After")).as("no promise it cannot keep").isEmpty();
			assertThat(response.headers().firstValue("RateLimit-Policy").orElseThrow())
				.isEqualTo("\"slow\";q=5;qu=\"concurrent-requests\"");
			assertThat(response.headers().firstValue("RateLimit").orElseThrow()).isEqualTo("\"slow\";r=0");
			assertThat(response.headers().firstValue("RateLimit-Limit")).hasValue("5");
			assertThat(Long.parseLong(response.headers().firstValue("RateLimit-Reset").orElseThrow()))
				.as("every slot back within the hold").isBetween(1L, 3L);
			assertThat(response.body()).contains("\"policy\":\"slow\"").doesNotContain("retryAfter");
		}
		assertThat(most.get()).as("requests running at once, across the instances").isBetween(1, LIMIT);
		assertThat(admitted).isBetween(LIMIT, 40);
		for (ConfigurableApplicationContext instance : instances) {
			await().atMost(Duration.ofSeconds(10)).until(() -> remaining(instance, "slow") == LIMIT);
		}
	}

	/** A request that the method's rate limit rejects holds no slot of its concurrency limit: all or nothing. */
	private void rejectedByARateLimit(ConfigurableApplicationContext app) throws Exception {
		HttpRequest both = HttpRequest.newBuilder(uri(app, "/both")).build();
		assertThat(this.client.send(both, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
		for (int i = 0; i < 4; i++) {
			HttpResponse<String> rejected = this.client.send(both, HttpResponse.BodyHandlers.ofString());
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.body()).contains("\"policy\":\"once\"");
		}
		assertThat(remaining(app, "both")).isEqualTo(3);
	}

	/** An asynchronous request that times out gives its slot back when the container completes it. */
	private void timedOut(ConfigurableApplicationContext app) throws Exception {
		HttpRequest deferred = HttpRequest.newBuilder(uri(app, "/deferred")).build();
		for (int i = 0; i < 2; i++) {
			assertThat(this.client.send(deferred, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(503);
			await().atMost(Duration.ofSeconds(5)).until(() -> remaining(app, "deferred") == 1);
		}
	}

	/**
	 * Slots taken by an instance that died before giving them back (taken in the store as it would, never given
	 * back): the other instance rejects until their hold of 3 seconds passed, then admits.
	 */
	private void deadInstance(ConfigurableApplicationContext dead, ConfigurableApplicationContext alive)
			throws Exception {
		RateLimitPolicy policy = policy(dead, "slow");
		RateLimitStore store = dead.getBean(RateLimitStore.class);
		for (int i = 0; i < LIMIT; i++) {
			assertThat(store.tryAcquireAll(List.of(new Acquisition(policy, "127.0.0.1", 1))).allowed()).isTrue();
		}
		long taken = System.nanoTime();
		HttpRequest slow = HttpRequest.newBuilder(uri(alive, "/slow")).build();
		assertThat(this.client.send(slow, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(429);
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> this.client.send(slow, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
		assertThat(Duration.ofNanos(System.nanoTime() - taken)).as("not before the hold")
			.isGreaterThanOrEqualTo(Duration.ofMillis(2_900));
	}

	private static ConfigurableApplicationContext mvc(String... store) {
		String[] arguments = new String[store.length + 2];
		arguments[0] = "--server.port=0";
		arguments[1] = "--ratelimit.headers.style=draft-11,draft-6";
		System.arraycopy(store, 0, arguments, 2, store.length);
		SpringApplication application = new SpringApplication(ServletApplication.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		return application.run(arguments);
	}

	private static long remaining(ConfigurableApplicationContext app, String name) {
		return app.getBean(RateLimiter.class).peek(policy(app, name), "127.0.0.1").remaining();
	}

	private static RateLimitPolicy policy(ConfigurableApplicationContext app, String name) {
		return Objects.requireNonNull(app.getBean(RateLimitEngine.class).catalog().policy(name)).policy();
	}

	private static URI uri(ConfigurableApplicationContext app, String path) {
		return URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + path);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ SlowController.class, BothController.class })
	static class ServletApplication {

		/** Spring Security is on this module's test class path: everything is open. */
		@Bean
		SecurityFilterChain openChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class SlowController {

		/** Counts how many requests run at once, across every instance in this JVM. */
		@GetMapping("/slow")
		@RateLimited(name = "slow", algorithm = Algorithm.CONCURRENCY, limit = LIMIT, hold = "3s")
		String slow() throws InterruptedException {
			most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
			try {
				Thread.sleep(300);
				return "done";
			}
			finally {
				inFlight.decrementAndGet();
			}
		}

	}

	@RestController
	static class BothController {

		@GetMapping("/both")
		@RateLimited(name = "once", limit = 1, window = "1h")
		@RateLimited(name = "both", algorithm = Algorithm.CONCURRENCY, limit = 3)
		String both() {
			return "both";
		}

		/** Never completed: Spring MVC times it out after 200 ms, answering 503. */
		@GetMapping("/deferred")
		@RateLimited(name = "deferred", algorithm = Algorithm.CONCURRENCY, limit = 1)
		DeferredResult<String> deferred() {
			return new DeferredResult<>(200L);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(StalledController.class)
	static class ReactiveApplication {

		@Bean
		SecurityWebFilterChain openChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class StalledController {

		@GetMapping("/stalled")
		@RateLimited(name = "stalled", algorithm = Algorithm.CONCURRENCY, limit = 1)
		Mono<String> stalled() {
			return Mono.delay(Duration.ofMinutes(1)).thenReturn("late");
		}

	}

}
