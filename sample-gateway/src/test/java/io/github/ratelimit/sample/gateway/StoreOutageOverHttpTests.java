package io.github.ratelimit.sample.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway sample on its {@code redis} profile with no Redis to reach: under {@code failure-mode: deny} a route
 * answers 503 with the problem, as on Spring MVC and WebFlux, not a 429 that clients and alerts would take for a client
 * over its limit; and nothing reaches the API.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class StoreOutageOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void aStoreOutageUnderDenyIsAnswered503WithTheProblemNot429() throws Exception {
		try (Upstream upstream = Upstream.start();
				ConfigurableApplicationContext app = SpringApplication.run(SampleGatewayApplication.class,
						"--server.port=0", "--spring.profiles.active=redis",
						// Port 1: nothing listens there, so every call to Redis fails at once.
						"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=1",
						"--upstream.uri=" + upstream.uri(), "--ratelimit.failure-mode=deny")) {
			String port = app.getEnvironment().getProperty("local.server.port");
			for (String path : new String[] { "/api/v1/resources", "/api/v1/users/u-1/orders" }) {
				HttpResponse<String> response = this.client.send(
						HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
							.timeout(Duration.ofSeconds(10))
							.build(),
						HttpResponse.BodyHandlers.ofString());
				assertThat(response.statusCode()).as(path).isEqualTo(503);
				assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
				assertThat(response.headers().firstValue("Retry-After")).isPresent();
				assertThat(response.body()).contains("\"status\":503")
					.contains("http-problem-types#temporary-reduced-capacity").contains("temporarily unavailable");
			}
			assertThat(upstream.requests()).isZero();
		}
	}

}
