package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rolling deploy that changes a policy, as the packaged sample runs it: two instances of the application on one
 * Redis, the old one with {@code orders} at 10 a minute, the new one at 5 an hour, and a client whose requests
 * alternate between them over a few seconds. Together they admit no more than the larger configuration would alone
 * (10), each reports a remaining count within its own limit, and the new instance's limit holds for requests sent to
 * either.
 */
class RollingDeployOnRedisTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void instancesWithDifferentWindowsForOnePolicyNeverAdmitMoreThanTheLargerAllows() throws Exception {
		String prefix = "--ratelimit.redis.key-prefix=deploy-" + System.nanoTime();
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext old = start(redis, prefix);
				ConfigurableApplicationContext updated = start(redis, prefix, "--ratelimit.policies.orders.limit=5",
						"--ratelimit.policies.orders.window=1h")) {
			awayFromAMinutesEdge();
			int admitted = 0;
			int admittedLate = 0;
			for (int i = 0; i < 40; i++) {
				boolean toOld = i % 2 == 0;
				HttpResponse<String> response = orders(toOld ? old : updated);
				long remaining = Long.parseLong(response.headers().firstValue("RateLimit-Remaining").orElseThrow());
				assertThat(remaining).as("request %d", i).isBetween(0L, toOld ? 10L : 5L);
				if (response.statusCode() == 200) {
					admitted++;
					admittedLate += (i >= 20) ? 1 : 0;
				}
				else {
					assertThat(response.statusCode()).isEqualTo(429);
				}
				Thread.sleep(75); // 3 s in all: each instance says which parameters it uses at least once a second
			}
			assertThat(admitted).isBetween(5, 10);
			// By then each instance knows the other's configuration: the new one's 5 an hour are used up for both.
			assertThat(admittedLate).isZero();
		}
	}

	/** The old instance's window is a fixed minute: keep its edge out of the way. */
	private static void awayFromAMinutesEdge() throws InterruptedException {
		while (System.currentTimeMillis() % 60_000 > 50_000) {
			Thread.sleep(200);
		}
	}

	private HttpResponse<String> orders(ConfigurableApplicationContext app) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/users/deploy-user/orders"))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static ConfigurableApplicationContext start(RedisServer redis, String... more) {
		String[] arguments = new String[more.length + 5];
		arguments[0] = "--spring.profiles.active=redis";
		arguments[1] = "--server.port=0";
		arguments[2] = "--spring.data.redis.host=" + redis.host();
		arguments[3] = "--spring.data.redis.port=" + redis.port();
		arguments[4] = "--ratelimit.filters.edge.enabled=false";
		System.arraycopy(more, 0, arguments, 5, more.length);
		return SpringApplication.run(SampleApplication.class, arguments);
	}

}
