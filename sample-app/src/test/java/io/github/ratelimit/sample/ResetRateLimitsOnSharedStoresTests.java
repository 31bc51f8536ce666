package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.testing.ResetRateLimits;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What {@link ResetRateLimits} does before each test, on the stores that instances share: a client turned away gets
 * the whole limit again, and in Redis nothing but the starter's keys is touched.
 */
class ResetRateLimitsOnSharedStoresTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@Test
	void onRedisTheResetGivesTheLimitBackAndLeavesTheDatabasesOtherKeys() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			redis.call("SET", "orders:pending", "42");
			try (ConfigurableApplicationContext app = SpringApplication.run(SampleApplication.class,
					"--spring.profiles.active=redis", "--server.port=0", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(),
					"--ratelimit.redis.key-prefix=reset-" + System.nanoTime(), "--ratelimit.redis.timeout=2s")) {
				assertTurnedAwayThenWelcomeAfterTheReset(app);
			}
			assertThat(redis.call("GET", "orders:pending")).hasToString("42");
		}
	}

	@Test
	void onDynamoDbTheResetGivesTheLimitBack() throws Exception {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		System.setProperty("aws.accessKeyId", "local");
		System.setProperty("aws.secretAccessKey", "local");
		try (Dynalite dynalite = Dynalite.start();
				ConfigurableApplicationContext app = SpringApplication.run(SampleApplication.class,
						"--spring.profiles.active=dynamodb", "--server.port=0",
						"--ratelimit.dynamodb.endpoint=" + dynalite.endpoint(),
						"--ratelimit.dynamodb.table=reset-" + System.nanoTime(), "--ratelimit.dynamodb.timeout=5s")) {
			assertTurnedAwayThenWelcomeAfterTheReset(app);
		}
		finally {
			System.clearProperty("aws.accessKeyId");
			System.clearProperty("aws.secretAccessKey");
		}
	}

	/** 'resources' admits 5 a minute per client: the sixth is turned away until the counters are forgotten. */
	private void assertTurnedAwayThenWelcomeAfterTheReset(ConfigurableApplicationContext app) throws Exception {
		// A fixed window of a minute on the application's clock: keep its edge out of the way.
		while (System.currentTimeMillis() % 60_000 > 50_000) {
			Thread.sleep(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(get(app, "/api/v1/resources").statusCode()).isEqualTo(200);
		}
		assertThat(get(app, "/api/v1/resources").statusCode()).isEqualTo(429);
		ResetRateLimits.reset(app);
		HttpResponse<String> again = get(app, "/api/v1/resources");
		assertThat(again.statusCode()).isEqualTo(200);
		assertThat(again.headers().firstValue("RateLimit-Remaining")).hasValue("4");
	}

	private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
