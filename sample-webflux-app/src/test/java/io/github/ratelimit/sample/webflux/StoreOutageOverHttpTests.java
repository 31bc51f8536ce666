package io.github.ratelimit.sample.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux sample on its {@code redis} profile with no Redis to reach: under {@code failure-mode: deny} the filter
 * layer and the method layer each answer 503 with the problem, not 429 and not 500.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class StoreOutageOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void aStoreOutageUnderDenyIsAnswered503WithTheProblemByEitherLayer(boolean filterLayer) throws Exception {
		try (ConfigurableApplicationContext app = SpringApplication.run(SampleWebFluxApplication.class,
				"--server.port=0", "--spring.profiles.active=redis",
				// Port 1: nothing listens there, so every call to Redis fails at once.
				"--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=1",
				"--ratelimit.failure-mode=deny", "--ratelimit.filters.edge.enabled=" + filterLayer)) {
			String port = app.getEnvironment().getProperty("local.server.port");
			HttpResponse<String> response = this.client.send(
					HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/resources"))
						.timeout(Duration.ofSeconds(10))
						.build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(response.headers().firstValue("Retry-After")).isPresent();
			assertThat(response.body()).contains("\"status\":503")
					.contains("http-problem-types#temporary-reduced-capacity")
				.contains("\"policy\":\"" + (filterLayer ? "edge" : "resources") + "\"");
		}
	}

}
