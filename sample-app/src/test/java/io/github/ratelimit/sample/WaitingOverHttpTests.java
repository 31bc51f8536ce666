package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's {@code /api/v1/paced} over HTTP, 10 a second per client with a wait of up to a second: a burst of a
 * client's requests waits for its turns rather than failing, and the handler never runs more often than the bucket
 * allows, in memory and with two instances sharing one Redis.
 */
class WaitingOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void inMemoryABurstWaitsForItsTurnsAndWhatIsBeyondASecondIsRejected() throws Exception {
		try (ConfigurableApplicationContext app = start()) {
			List<Long> ranAt = new ArrayList<>();
			int rejected = 0;
			for (HttpResponse<String> response : send(List.of(app), "198.51.100.60", 25)) {
				if (response.statusCode() == 429) {
					rejected++;
				}
				else {
					assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
					ranAt.add(JsonPath.parse(response.body()).<Number>read("$.ranAt").longValue());
				}
			}
			// 10 at once, 10 within a second; at most one more the refill brought while the burst was sent.
			assertThat(ranAt).hasSizeBetween(20, 21);
			assertThat(rejected).as("turns more than a second away").isEqualTo(25 - ranAt.size());
			ranAt.sort(null);
			assertWithinTheBucket(ranAt);
		}
	}

	@Test
	void twoInstancesOnOneRedisPaceAClientsBurstTogether() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			String[] store = { "--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.key-prefix=paced-" + System.nanoTime(),
					"--ratelimit.redis.timeout=2s" };
			try (ConfigurableApplicationContext first = start(store);
					ConfigurableApplicationContext second = start(store)) {
				assertWithinTheBucket(burst(List.of(first, second), "198.51.100.61", 20));
			}
		}
	}

	/** Send the requests together, alternating between the instances: every one passes, its handler's time. */
	private List<Long> burst(List<ConfigurableApplicationContext> apps, String client, int requests) {
		List<Long> ranAt = new ArrayList<>();
		for (HttpResponse<String> answered : send(apps, client, requests)) {
			assertThat(answered.statusCode()).as(answered.body()).isEqualTo(200);
			ranAt.add(JsonPath.parse(answered.body()).<Number>read("$.ranAt").longValue());
		}
		ranAt.sort(null);
		return ranAt;
	}

	private List<HttpResponse<String>> send(List<ConfigurableApplicationContext> apps, String client, int requests) {
		List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			sent.add(this.client.sendAsync(request(apps.get(i % apps.size()), client),
					HttpResponse.BodyHandlers.ofString()));
		}
		return sent.stream().map(CompletableFuture::join).toList();
	}

	/**
	 * A bucket of 10 refilled at 10 a second: in any span of {@code d} ms at most {@code 10 + d / 100} handlers ran,
	 * give or take one for a millisecond's rounding.
	 */
	private static void assertWithinTheBucket(List<Long> ranAt) {
		for (int i = 0; i < ranAt.size(); i++) {
			for (int j = i; j < ranAt.size(); j++) {
				long span = ranAt.get(j) - ranAt.get(i);
				assertThat(j - i + 1L).as("handlers run within %d ms", span).isLessThanOrEqualTo(10 + span / 100 + 1);
			}
		}
		assertThat(ranAt.get(ranAt.size() - 1) - ranAt.get(0)).as("the last waited for its turn")
			.isGreaterThanOrEqualTo(800);
	}

	private static HttpRequest request(ConfigurableApplicationContext app, String client) {
		return HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port")
					+ "/api/v1/paced"))
			.header("X-Forwarded-For", client)
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	private static ConfigurableApplicationContext start(String... store) {
		String[] arguments = new String[store.length + 2];
		arguments[0] = "--server.port=0";
		arguments[1] = "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1";
		System.arraycopy(store, 0, arguments, 2, store.length);
		return SpringApplication.run(SampleApplication.class, arguments);
	}

}
