package io.github.ratelimit.sample.gateway;

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
 * The gateway sample started with its limits switched off, as an operator does in an emergency
 * ({@code --ratelimit.enabled=false}), on its Redis profile with no Redis: its routes, which name
 * {@code #{@clientIpKeyResolver}} and a key resolver of the application's, start with no store to ask and route
 * every request to the API beyond their limits, with no rate limit header.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class LimitsOffOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void everyRouteRoutesBeyondItsLimitWithNoRateLimitHeader() throws Exception {
		try (Upstream upstream = Upstream.start();
				ConfigurableApplicationContext app = SpringApplication.run(SampleGatewayApplication.class,
						"--server.port=0", "--ratelimit.enabled=false", "--spring.profiles.active=redis",
						"--spring.data.redis.port=1", "--management.health.redis.enabled=false",
						"--upstream.uri=" + upstream.uri())) {
			assertThat(app.getBeanProvider(RateLimitStore.class).getIfAvailable()).isNull();
			for (int i = 0; i < 7; i++) {
				HttpResponse<String> resources = get(app, "/api/v1/resources");
				assertThat(resources.statusCode()).as("resources, 5 a minute per address with limits on: request %d",
						i + 1)
					.isEqualTo(200);
				assertNoRateLimitHeader(resources.headers());
			}
			for (int i = 0; i < 12; i++) {
				HttpResponse<String> orders = get(app, "/api/v1/users/u-1/orders");
				assertThat(orders.statusCode()).as("orders, 10 a minute per user with limits on: request %d", i + 1)
					.isEqualTo(200);
				assertNoRateLimitHeader(orders.headers());
			}
			assertThat(upstream.requests()).as("every request reached the API").isEqualTo(19);
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
