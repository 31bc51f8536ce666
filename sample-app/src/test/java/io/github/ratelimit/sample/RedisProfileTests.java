package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two instances of the sample with the 'redis' profile share one Redis, so they share the limit, leased or not.
 */
class RedisProfileTests {

	private static RedisServer redis;

	private final HttpClient client = HttpClient.newHttpClient();

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void twoInstancesOnOneRedisShareTheLimit() throws Exception {
		String prefix = "--ratelimit.redis.key-prefix=sample-" + System.nanoTime();
		try (ConfigurableApplicationContext first = start(prefix);
				ConfigurableApplicationContext second = start(prefix)) {
			int firstPort = port(first);
			int secondPort = port(second);
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
		}
	}

	@Test
	void twoInstancesLeasingBlocksNeverAdmitMoreThanTheLimitBetweenThem() throws Exception {
		String prefix = "--ratelimit.redis.key-prefix=sample-" + System.nanoTime();
		// A bucket of 5 refilled at 5 an hour: no unit comes back during the test, so 5 means 5.
		String[] leased = { prefix, "--ratelimit.policies.resources.algorithm=token-bucket",
				"--ratelimit.policies.resources.window=1h", "--ratelimit.policies.resources.lease=2" };
		try (ConfigurableApplicationContext first = SpringApplication.run(SampleApplication.class, args(leased));
				ConfigurableApplicationContext second = SpringApplication.run(SampleApplication.class, args(leased))) {
			int admitted = 0;
			for (int i = 0; i < 20; i++) {
				if (get(port((i % 2 == 0) ? first : second), "/api/v1/resources").statusCode() == 200) {
					admitted++;
				}
			}
			// Never more than the limit; less by at most what the other instance holds unused: (2 - 1) x 2.
			assertThat(admitted).isBetween(5 - 2, 5);
		}
	}

	@Test
	void aLeaseOnASlidingLogFailsStartUpNamingThePolicyAndTheWayOut() {
		assertThatThrownBy(() -> SpringApplication.run(SampleApplication.class,
				args("--ratelimit.policies.resources.algorithm=sliding-log", "--ratelimit.policies.resources.lease=auto")))
			.hasStackTraceContaining("ratelimit.policies.resources")
			.hasStackTraceContaining("'lease' cannot apply to SLIDING_LOG")
			.hasStackTraceContaining("Use SLIDING_COUNTER, FIXED or a bucket");
	}

	private static String[] args(String... more) {
		List<String> args = new ArrayList<>(List.of("--spring.profiles.active=redis", "--server.port=0",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port()));
		args.addAll(List.of(more));
		return args.toArray(String[]::new);
	}

	private ConfigurableApplicationContext start(String prefix) {
		return SpringApplication.run(SampleApplication.class, "--spring.profiles.active=redis", "--server.port=0",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(), prefix,
				// Redis's clock decides here, and a fixed window's edge could fall between two requests: a sliding
				// log has no edge, so 5 per minute means 5.
				"--ratelimit.policies.resources.algorithm=sliding-log");
	}

	private static int port(ConfigurableApplicationContext context) {
		return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
