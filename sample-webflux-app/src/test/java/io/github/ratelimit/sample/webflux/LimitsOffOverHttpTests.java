package io.github.ratelimit.sample.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux sample started with its limits switched off, as an operator does in an emergency
 * ({@code --ratelimit.enabled=false}), on its Redis profile with no Redis: it starts with no store to ask, and its
 * limited endpoints answer beyond their limits with no rate limit header.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class LimitsOffOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void limitedEndpointsAnswerBeyondTheirLimitsWithNoRateLimitHeader() throws Exception {
		try (ConfigurableApplicationContext app = SpringApplication.run(SampleWebFluxApplication.class,
				"--server.port=0", "--ratelimit.enabled=false", "--spring.profiles.active=redis",
				"--spring.data.redis.port=1", "--management.health.redis.enabled=false")) {
			assertThat(app.getBeanProvider(RateLimitStore.class).getIfAvailable()).isNull();
			for (int i = 0; i < 7; i++) {
				HttpResponse<String> resources = get(app, "/api/v1/resources");
				assertThat(resources.statusCode()).as("resources, 5 a minute with limits on: request %d", i + 1)
					.isEqualTo(200);
				assertNoRateLimitHeader(resources.headers());
				HttpResponse<String> quota = get(app, "/api/v1/quota");
				assertThat(quota.statusCode()).as("the quota, 3 a minute on the free plan: request %d", i + 1)
					.isEqualTo(200);
				assertThat(quota.body()).as("its RateLimitStatus argument has no limits").contains("\"plan-limit\":0");
				assertNoRateLimitHeader(quota.headers());
			}
		}
	}

	private static void assertNoRateLimitHeader(HttpHeaders headers) {
		assertThat(headers.map().keySet())
			.noneMatch((name) -> name.toLowerCase().startsWith("ratelimit") || name.equalsIgnoreCase("retry-after"));
	}

	private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
		URI uri = URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + path);
		return this.client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
