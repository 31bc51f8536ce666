package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.testing.RateLimitTestClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The sample with the 'dynamodb' profile against dynalite, over HTTP: two instances share the limit through one
 * table; every method policy, the plans, the login counted by outcome, the {@code edge} filter and the
 * {@code account} quota (at the profile's 1,000 a second, bursts of 500) hold on DynamoDB.
 */
class DynamoDbProfileTests {

	private static Dynalite dynalite;

	private final HttpClient client = HttpClient.newHttpClient();

	@BeforeAll
	static void startDynalite() {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		dynalite = Dynalite.start();
		// The SDK's default chain, as on a developer's machine with a local server.
		System.setProperty("aws.accessKeyId", "local");
		System.setProperty("aws.secretAccessKey", "local");
	}

	@AfterAll
	static void stopDynalite() {
		System.clearProperty("aws.accessKeyId");
		System.clearProperty("aws.secretAccessKey");
		if (dynalite != null) {
			dynalite.close();
		}
	}

	@Test
	void twoInstancesOnOneTableShareTheLimit() throws Exception {
		String table = "--ratelimit.dynamodb.table=sample-" + System.nanoTime();
		try (ConfigurableApplicationContext first = start(table);
				ConfigurableApplicationContext second = start(table)) {
			int firstPort = port(first);
			int secondPort = port(second);
			// 'resources' is a fixed window of a minute on the application's clock: keep its edge out of the way.
			while (System.currentTimeMillis() % 60_000 > 55_000) {
				Thread.sleep(200);
			}
			int admitted = 0;
			for (int i = 0; i < 10; i++) {
				if (get((i % 2 == 0) ? firstPort : secondPort, "/api/v1/resources").statusCode() == 200) {
					admitted++;
				}
			}
			assertThat(admitted).isEqualTo(5);
			HttpResponse<String> rejected = get(secondPort, "/api/v1/resources");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
			assertThat(rejected.headers().firstValue("RateLimit-Remaining")).hasValue("0");
		}
	}

	@Test
	void theOrdersAndAlgorithmPoliciesAreEnforcedOnDynamoDb() throws Exception {
		try (ConfigurableApplicationContext app = start("--ratelimit.dynamodb.table=sample-" + System.nanoTime())) {
			int port = port(app);
			for (String path : List.of("/api/v1/users/u1/orders", "/api/v1/algorithms/fixed-window",
					"/api/v1/algorithms/sliding-log", "/api/v1/algorithms/sliding-counter",
					"/api/v1/algorithms/token-bucket", "/api/v1/algorithms/leaky-bucket")) {
				HttpResponse<String> response = get(port, path);
				assertThat(response.statusCode()).as(path).isEqualTo(200);
				assertThat(response.headers().firstValue("RateLimit-Limit")).as(path).isPresent();
				int status = 200;
				for (int i = 0; i < 20 && status == 200; i++) {
					status = get(port, path).statusCode();
				}
				assertThat(status).as(path + " is limited").isEqualTo(429);
			}
		}
	}

	@Test
	void theLayersPlansAndTheLoginCountedByOutcomeHoldOnDynamoDb() throws Exception {
		try (ConfigurableApplicationContext app = startOnTestClock()) {
			int port = port(app);
			// search: 3 per 2 s per address, and 10 a minute per API key, all or nothing.
			for (int i = 0; i < 3; i++) {
				assertThat(get(port, "/api/v1/search", "198.51.100.1", "demo-free-key").statusCode()).isEqualTo(200);
			}
			HttpResponse<String> perIp = get(port, "/api/v1/search", "198.51.100.1", "demo-free-key");
			assertThat(perIp.statusCode()).isEqualTo(429);
			assertThat(perIp.body()).contains("\"violated-policies\":[\"search-per-ip\"]");
			for (int i = 0; i < 7; i++) {
				assertThat(get(port, "/api/v1/search", "198.51.100." + (10 + i), "demo-free-key").statusCode())
					.as("the rejection took nothing from the key").isEqualTo(200);
			}
			HttpResponse<String> perKey = get(port, "/api/v1/search", "198.51.100.20", "demo-free-key");
			assertThat(perKey.statusCode()).isEqualTo(429);
			assertThat(perKey.body()).contains("\"violated-policies\":[\"search-per-key\"]");
			// quota: 3 a minute on the free plan, 10 on pro, each counted apart.
			assertThat(admitted(port, "/api/v1/quota", "198.51.100.30", "demo-free-key", 5)).isEqualTo(3);
			assertThat(admitted(port, "/api/v1/quota", "198.51.100.30", "demo-pro-key", 12)).isEqualTo(10);
			// login: 5 failures per 15 minutes, successes given back.
			for (int i = 0; i < 4; i++) {
				assertThat(login(port, "198.51.100.40", "wrong")).isEqualTo(401);
			}
			for (int i = 0; i < 5; i++) {
				assertThat(login(port, "198.51.100.40", "demo")).as("given back").isEqualTo(200);
			}
			assertThat(login(port, "198.51.100.40", "wrong")).isEqualTo(401);
			assertThat(login(port, "198.51.100.40", "wrong")).isEqualTo(429);
			// edge: 200 at once per address, before any handler.
			assertThat(admitted(port, "/api/v1/unlimited", "198.51.100.50", null, 210)).isEqualTo(200);
		}
	}

	@Test
	void theAccountQuotaLetsTheApplicationBurst500ThenRefills1000ASecond() throws Exception {
		try (ConfigurableApplicationContext app = startOnTestClock()) {
			int port = port(app);
			RateLimitTestClock clock = app.getBean(RateLimitTestClock.class);
			int admitted = 0;
			for (int address = 0; address < 3; address++) {
				admitted += admitted(port, "/api/v1/unlimited", "203.0.113." + address, null, 200);
			}
			assertThat(admitted).as("3 addresses within their edge burst, stopped by the account").isEqualTo(500);
			clock.advance(Duration.ofMillis(2));
			assertThat(admitted(port, "/api/v1/unlimited", "203.0.113.10", null, 5)).as("one a millisecond")
				.isEqualTo(2);
		}
	}

	private ConfigurableApplicationContext startOnTestClock() {
		return new SpringApplicationBuilder(SampleApplication.class, TestClock.class).run(
				"--spring.profiles.active=dynamodb", "--server.port=0",
				"--ratelimit.dynamodb.endpoint=" + dynalite.endpoint(),
				"--ratelimit.dynamodb.table=sample-" + System.nanoTime(), "--ratelimit.dynamodb.timeout=5s",
				"--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1");
	}

	private int admitted(int port, String path, String address, String apiKey, int requests) throws Exception {
		int admitted = 0;
		for (int i = 0; i < requests; i++) {
			if (get(port, path, address, apiKey).statusCode() == 200) {
				admitted++;
			}
		}
		return admitted;
	}

	private HttpResponse<String> get(int port, String path, String address, String apiKey) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-Forwarded-For", address);
		if (apiKey != null) {
			request.header("X-API-Key", apiKey);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private int login(int port, String address, String password) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/login"))
			.header("X-Forwarded-For", address)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"demo\",\"password\":\"" + password + "\"}"))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
	}

	/** The clock of the limits, moved by hand, so that refills happen when the test says. */
	@Configuration(proxyBeanMethods = false)
	static class TestClock {

		@Bean
		RateLimitTestClock rateLimitTimeSource() {
			return RateLimitTestClock.at("2030-01-01T00:00:00Z");
		}

	}

	private ConfigurableApplicationContext start(String table) {
		return SpringApplication.run(SampleApplication.class, "--spring.profiles.active=dynamodb", "--server.port=0",
				"--ratelimit.dynamodb.endpoint=" + dynalite.endpoint(), table, "--ratelimit.dynamodb.timeout=5s");
	}

	private static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
