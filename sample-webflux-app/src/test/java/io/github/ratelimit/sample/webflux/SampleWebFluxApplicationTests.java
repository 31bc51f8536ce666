package io.github.ratelimit.sample.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.testing.RateLimitTestClock;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux sample's HTTP contract, the one {@code sample-app} has, over real HTTP on Reactor Netty, at the
 * values its {@code application.yml} configures, on a clock that does not move (so no window ends mid-test).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		// Port 1: nothing listens there, so the sample behaves as on a machine without Redis, whatever runs here.
		properties = { "ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "spring.data.redis.port=1" })
class SampleWebFluxApplicationTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	int port;

	@Test
	void resourcesAdmitFiveAMinutePerClientAddressThenAnswerTheProblem() throws Exception {
		for (int remaining = 4; remaining >= 0; remaining--) {
			HttpResponse<String> admitted = get("/api/v1/resources", "198.51.100.10");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).contains("\"status\":\"success\"");
			assertThat(admitted.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(remaining));
		}
		HttpResponse<String> rejected = get("/api/v1/resources", "198.51.100.10");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.body()).contains("\"violated-policies\":[\"resources\"]");
		assertThat(get("/api/v1/resources", "198.51.100.11").statusCode()).isEqualTo(200);
	}

	@Test
	void ordersAdmitTenAMinutePerUserWhateverTheAddress() throws Exception {
		for (int i = 0; i < 10; i++) {
			assertThat(get("/api/v1/users/u-42/orders", "198.51.100." + (20 + i)).statusCode()).isEqualTo(200);
		}
		assertThat(get("/api/v1/users/u-42/orders", "198.51.100.40").statusCode()).isEqualTo(429);
		assertThat(get("/api/v1/users/u-43/orders", "198.51.100.40").statusCode()).isEqualTo(200);
	}

	@Test
	void everyAlgorithmHasItsEndpoint() throws Exception {
		for (String algorithm : new String[] { "fixed-window", "sliding-log", "sliding-counter", "token-bucket",
				"leaky-bucket" }) {
			HttpResponse<String> response = get("/api/v1/algorithms/" + algorithm, "198.51.100.50");
			assertThat(response.statusCode()).as(algorithm).isEqualTo(200);
			assertThat(response.body()).contains("\"algorithm\":\"" + algorithm + "\"");
		}
	}

	@Test
	void loginCountsOnlyFailedAttemptsFromTheStatusTheClientGets() throws Exception {
		for (int i = 0; i < 8; i++) {
			assertThat(login("198.51.100.60", "demo").statusCode()).as("successful logins are given back")
				.isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(login("198.51.100.60", "wrong").statusCode()).isEqualTo(401);
		}
		assertThat(login("198.51.100.60", "demo").statusCode()).as("five failures spent the limit").isEqualTo(429);
	}

	@Test
	void healthIsUpInMemoryWithoutRedisAndCarriesNoRateLimitHeaders() throws Exception {
		HttpResponse<String> health = get("/actuator/health", "198.51.100.90");
		assertThat(health.statusCode()).isEqualTo(200);
		assertThat(health.headers().firstValue("RateLimit-Limit")).isEmpty();
	}

	@Test
	void theQuotaFollowsThePlanOfAnIssuedKeyAndAnInventedKeyIsNone() throws Exception {
		assertThat(get("/api/v1/quota", "198.51.100.70", "demo-pro-key").body()).contains("\"plan-limit\":10")
			.contains("\"remaining\":9");
		assertThat(get("/api/v1/quota", "198.51.100.70", "invented").body()).contains("\"plan-limit\":3")
			.contains("\"remaining\":2");
	}

	@Test
	void theEdgeFilterCountsPathsNoHandlerMatches() throws Exception {
		HttpResponse<String> response = get("/api/v1/nothing-here", "198.51.100.80");
		assertThat(response.statusCode()).isEqualTo(404);
		assertThat(response.headers().firstValue("RateLimit-Remaining")).as("the edge filter's").isPresent();
	}

	private HttpResponse<String> get(String path, String address, String... apiKey) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("X-Forwarded-For", address)
			.timeout(Duration.ofSeconds(10));
		for (String key : apiKey) {
			request.header("X-API-Key", key);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> login(String address, String password) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/v1/login"))
			.header("X-Forwarded-For", address)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"demo\",\"password\":\"" + password + "\"}"))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration
	static class Clock {

		@Bean
		RateLimitTestClock rateLimitTimeSource() {
			return RateLimitTestClock.at("2030-01-01T00:00:10Z");
		}

	}

}
