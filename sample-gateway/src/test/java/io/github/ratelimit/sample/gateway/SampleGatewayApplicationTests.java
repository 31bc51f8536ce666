package io.github.ratelimit.sample.gateway;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.testing.RateLimitTestClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway sample's HTTP contract over real HTTP, in front of an API that answers everything: its routes' limits
 * at the values its {@code application.yml} configures, on a clock that does not move (so no window ends mid-test),
 * behind a proxy on this machine that it trusts for {@code X-Forwarded-For}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		// Port 1: nothing listens there, so the sample behaves as on a machine without Redis, whatever runs here.
		properties = { "ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "spring.data.redis.port=1" })
class SampleGatewayApplicationTests {

	private static final Upstream upstream = startUpstream();

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void upstream(DynamicPropertyRegistry registry) {
		registry.add("upstream.uri", upstream::uri);
	}

	@AfterAll
	static void stopUpstream() {
		upstream.close();
	}

	@Test
	void resourcesAdmitFiveAMinutePerClientAddressThenAnswerTheProblem() throws Exception {
		int before = upstream.requests();
		for (int remaining = 4; remaining >= 0; remaining--) {
			HttpResponse<String> admitted = get("/api/v1/resources", "198.51.100.10");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).contains("\"status\":\"success\"");
			assertThat(admitted.headers().allValues("RateLimit-Remaining")).as("set once")
				.containsExactly(Integer.toString(remaining));
		}
		HttpResponse<String> rejected = get("/api/v1/resources", "198.51.100.10");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("50");
		assertThat(rejected.body()).contains("\"status\":429").contains("\"violated-policies\":[\"resources\"]");
		assertThat(upstream.requests() - before).as("the rejected request never reached the API").isEqualTo(5);
		assertThat(get("/api/v1/resources", "198.51.100.11").statusCode()).as("another address").isEqualTo(200);
	}

	@Test
	void ordersAdmitTenAMinutePerUserWhateverTheAddress() throws Exception {
		for (int i = 0; i < 10; i++) {
			assertThat(get("/api/v1/users/u-42/orders", "198.51.100." + (20 + i)).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = get("/api/v1/users/u-42/orders", "198.51.100.40");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"orders\"]");
		assertThat(get("/api/v1/users/u-43/orders", "198.51.100.40").statusCode()).isEqualTo(200);
	}

	@Test
	void theRestOfTheApiPassesUnlimited() throws Exception {
		for (int i = 0; i < 20; i++) {
			HttpResponse<String> response = get("/api/v1/anything", "198.51.100.50");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit-Limit")).isEmpty();
		}
	}

	@Test
	void healthIsUpInMemoryWithoutRedis() throws Exception {
		HttpResponse<String> health = get("/actuator/health", "198.51.100.60");
		assertThat(health.statusCode()).isEqualTo(200);
		assertThat(health.headers().firstValue("RateLimit-Limit")).isEmpty();
	}

	private HttpResponse<String> get(String path, String address) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("X-Forwarded-For", address)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static Upstream startUpstream() {
		try {
			return Upstream.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@TestConfiguration
	static class Clock {

		@Bean
		RateLimitTestClock rateLimitTimeSource() {
			return RateLimitTestClock.at("2030-01-01T00:00:10Z");
		}

	}

}
