package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.TimeSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged sample over real HTTP, on its default in-memory store, with the limiter's clock held still ten
 * seconds into a minute: a fixed window aligned to the epoch must not end between two requests of a test.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "spring.data.redis.port=" + SampleApplicationTests.NO_REDIS)
class SampleApplicationTests {

	/** A port nothing listens on: the sample must behave as on a machine without Redis, whatever runs here. */
	static final int NO_REDIS = 1;

	private final HttpClient client = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@TestConfiguration(proxyBeanMethods = false)
	static class StillClock {

		@Bean
		TimeSource rateLimitTimeSource() {
			long tenSecondsIntoAMinute = Instant.parse("2030-01-01T00:00:10Z").toEpochMilli();
			return () -> tenSecondsIntoAMinute;
		}

	}

	@Test
	void decisionsAppearAsMetersOverActuatorWithNoRegistryOfTheApplicationsOwn() throws Exception {
		assertThat(get("/api/v1/users/metered-user/orders").statusCode()).isEqualTo(200);
		HttpResponse<String> meters = get("/actuator/metrics");
		assertThat(meters.body()).contains("\"ratelimit.decisions\"");
		HttpResponse<String> decisions = get("/actuator/metrics/ratelimit.decisions?tag=policy:orders");
		assertThat(decisions.statusCode()).isEqualTo(200);
		assertThat(decisions.body()).contains("\"outcome\"").contains("\"allowed\"");
		// Counted in an adder the registry reads when asked: the count of admissions, not 0 or NaN.
		HttpResponse<String> allowed = get("/actuator/metrics/ratelimit.decisions?tag=policy:orders&tag=outcome:allowed");
		Matcher count = Pattern.compile("\"statistic\":\"COUNT\",\"value\":([0-9.]+)").matcher(allowed.body());
		assertThat(count.find()).as(allowed.body()).isTrue();
		assertThat(Double.parseDouble(count.group(1))).isGreaterThanOrEqualTo(1.0);
		// The ratelimit.decision observation, timed once per decision by the starter's meter handler (Boot's default
		// one times the other observations) and without a long-task timer.
		HttpResponse<String> timer = get("/actuator/metrics/ratelimit.decision?tag=policy:orders&tag=store:memory");
		assertThat(timer.statusCode()).isEqualTo(200);
		assertThat(timer.body()).contains("\"COUNT\"").contains("\"outcome\"").contains("\"error\"");
		assertThat(get("/actuator/metrics/ratelimit.decision.active").statusCode()).isEqualTo(404);
		assertThat(get("/actuator/metrics/http.server.requests").statusCode()).isEqualTo(200);
		assertThat(get("/actuator/metrics/ratelimit.memory.keys").statusCode()).isEqualTo(200);
		assertThat(get("/actuator/metrics/ratelimit.circuit.open").statusCode()).isEqualTo(200);
	}

	@Test
	void resourcesAllowsFiveRequestsAMinuteThenAnswers429() throws Exception {
		for (int remaining = 4; remaining >= 0; remaining--) {
			HttpResponse<String> response = get("/api/v1/resources");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).contains("\"status\":\"success\"");
			assertThat(response.headers().firstValue("RateLimit-Limit")).hasValue("5");
			assertThat(response.headers().firstValue("RateLimit-Remaining")).hasValue(String.valueOf(remaining));
			assertThat(response.headers().firstValue("RateLimit-Reset")).hasValue("50");
		}
		HttpResponse<String> rejected = get("/api/v1/resources");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(rejected.headers().firstValue("RateLimit-Remaining")).hasValue("0");
		long retryAfter = rejected.headers().firstValueAsLong("Retry-After").getAsLong();
		assertThat(retryAfter).isEqualTo(50);
		assertThat(rejected.body()).contains("\"status\":429")
			.contains("\"title\":\"Too Many Requests\"")
			.contains("\"policy\":\"resources\"")
			.contains("\"retryAfter\":" + retryAfter);
	}

	@Test
	void ordersAreLimitedPerUser() throws Exception {
		for (int i = 0; i < 10; i++) {
			assertThat(get("/api/v1/users/alice/orders").statusCode()).isEqualTo(200);
		}
		assertThat(get("/api/v1/users/alice/orders").statusCode()).isEqualTo(429);
		HttpResponse<String> bob = get("/api/v1/users/bob/orders");
		assertThat(bob.statusCode()).isEqualTo(200);
		assertThat(bob.headers().firstValue("RateLimit-Remaining")).hasValue("9");
	}

	@Test
	void eachAlgorithmHasItsOwnEndpoint() throws Exception {
		assertThat(admittedInABurst("/api/v1/algorithms/fixed-window")).isEqualTo(10);
		assertThat(admittedInABurst("/api/v1/algorithms/sliding-log")).isEqualTo(10);
		assertThat(admittedInABurst("/api/v1/algorithms/sliding-counter")).isBetween(1, 10);
		assertThat(admittedInABurst("/api/v1/algorithms/token-bucket")).isEqualTo(5);
		assertThat(admittedInABurst("/api/v1/algorithms/leaky-bucket")).isEqualTo(5);
	}

	@Test
	void anEndpointWithNoLimitOfItsOwnShowsOnlyTheEdgeFilter() throws Exception {
		HttpResponse<String> response = get("/api/v1/unlimited");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("RateLimit-Limit")).as("the edge filter's burst").hasValue("200");
	}

	@Test
	void aPathOutsideTheFilteredOnesHasNoRateLimitHeaders() throws Exception {
		HttpResponse<String> response = get("/actuator/health");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("RateLimit-Limit")).isEmpty();
	}

	private int admittedInABurst(String path) throws Exception {
		int admitted = 0;
		for (int i = 0; i < 20; i++) {
			if (get(path).statusCode() == 200) {
				admitted++;
			}
		}
		return admitted;
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
