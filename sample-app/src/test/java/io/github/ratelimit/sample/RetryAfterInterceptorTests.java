package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.client.RetryAfterInterceptor;
import io.github.ratelimit.limiter.RateLimiter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client interceptor against the sample's real HTTP server: it waits what {@code Retry-After} says plus a bounded
 * jitter, gives up after its attempts, and passes once the server lets it. The sleeper records the waits instead of
 * sleeping.
 */
class RetryAfterInterceptorTests {

	/** The sample's 'orders' policy as the test configures it. */
	private static final RateLimitPolicy ORDERS = RateLimitPolicy.builder("orders")
		.limit(1)
		.window(Duration.ofHours(1))
		.build();

	private static ConfigurableApplicationContext app;

	private static String base;

	@BeforeAll
	static void startSample() {
		// A limit of 1 per hour: Retry-After is long, so only the sleeper can make time pass.
		app = SpringApplication.run(SampleApplication.class, "--server.port=0",
				"--ratelimit.policies.orders.limit=1", "--ratelimit.policies.orders.window=1h");
		base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
	}

	@AfterAll
	static void stopSample() {
		app.close();
	}

	@Test
	void a429IsRetriedAfterRetryAfterPlusABoundedJitterUntilTheAttemptsRunOut() {
		List<Duration> waits = new CopyOnWriteArrayList<>();
		RestClient client = client(RetryAfterInterceptor.builder()
			.maxAttempts(3)
			.maxTotalWait(Duration.ofHours(3))
			.maxJitter(Duration.ofSeconds(2))
			.sleeper(waits::add)
			.build());
		assertThat(status(client, "/api/v1/users/exhausted/orders")).isEqualTo(200);
		long retryAfter = Long.parseLong(RestClient.builder()
			.baseUrl(base)
			.requestFactory(new JdkClientHttpRequestFactory())
			.build()
			.get()
			.uri("/api/v1/users/exhausted/orders")
			.exchange((request, response) -> response.getHeaders().getFirst("Retry-After")));
		assertThat(status(client, "/api/v1/users/exhausted/orders")).isEqualTo(429);
		assertThat(waits).hasSize(2);
		for (Duration wait : waits) {
			// What the server said (the rest of the hour's window; a second may pass), plus at most 2 s of jitter.
			assertThat(wait).isBetween(Duration.ofSeconds(retryAfter - 1), Duration.ofSeconds(retryAfter + 2));
		}
	}

	@Test
	void aWaitBeyondTheTotalBoundIsNotMadeAndTheRejectionIsReturned() {
		List<Duration> waits = new CopyOnWriteArrayList<>();
		RestClient client = client(RetryAfterInterceptor.builder()
			.maxAttempts(5)
			.maxTotalWait(Duration.ofSeconds(30))
			.sleeper(waits::add)
			.build());
		assertThat(status(client, "/api/v1/users/impatient/orders")).isEqualTo(200);
		assertThat(status(client, "/api/v1/users/impatient/orders")).isEqualTo(429);
		assertThat(waits).isEmpty();
	}

	@Test
	void onceTheServerLetsItTheRetriedRequestPasses() {
		RateLimiter limiter = app.getBean(RateLimiter.class);
		List<Duration> waits = new CopyOnWriteArrayList<>();
		RestClient client = client(RetryAfterInterceptor.builder()
			.maxTotalWait(Duration.ofHours(2))
			.sleeper((wait) -> {
				waits.add(wait);
				// Time passing, as far as the server can tell: the client's counter is reset.
				limiter.reset(ORDERS, "patient");
			})
			.build());
		assertThat(status(client, "/api/v1/users/patient/orders")).isEqualTo(200);
		assertThat(status(client, "/api/v1/users/patient/orders")).isEqualTo(200);
		assertThat(waits).hasSize(1);
	}

	private static RestClient client(RetryAfterInterceptor interceptor) {
		// The JDK's client: Apache HttpClient 5 (here through the AWS SDK) retries 429 and 503 by itself, sleeping
		// Retry-After, unless built with disableAutomaticRetries().
		return RestClient.builder()
			.baseUrl(base)
			.requestFactory(new JdkClientHttpRequestFactory())
			.requestInterceptor(interceptor)
			.build();
	}

	private static int status(RestClient client, String path) {
		return client.get().uri(path).exchange((request, response) -> response.getStatusCode().value());
	}

}
