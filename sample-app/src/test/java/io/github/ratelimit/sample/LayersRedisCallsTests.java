package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.LongSupplier;

import io.github.ratelimit.test.RedisCluster;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the layers of {@code GET /api/v1/search} cost Redis, counted by {@code INFO commandstats}: the filter layer
 * ({@code edge} and the shared {@code account}) is one script call and the method layer ({@code search-per-ip} and
 * {@code search-per-key}) another on a standalone Redis, however many limits each holds; on a Cluster, one call per
 * hash slot involved. Prints the figures recorded in docs/benchmarks.md.
 */
class LayersRedisCallsTests {

	private static final int REQUESTS = 50;

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void aSearchCostsOneScriptCallPerLayerOnAStandaloneRedis() throws Exception {
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext app = start("--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port())) {
			double perRequest = scriptCallsPerSearch(app, () -> redis.commandCalls("evalsha") + redis.commandCalls("eval"));
			System.out.printf("Redis script calls per /api/v1/search (standalone): %.2f%n", perRequest);
			assertThat(perRequest).isEqualTo(2.0);
		}
	}

	@Test
	void aSearchCostsOneScriptCallPerSlotOnACluster() throws Exception {
		try (RedisCluster cluster = RedisCluster.start(3);
				ConfigurableApplicationContext app = start("--spring.data.redis.cluster.nodes=" + cluster.nodeAddresses())) {
			double perRequest = scriptCallsPerSearch(app,
					() -> cluster.commandCalls("evalsha") + cluster.commandCalls("eval"));
			System.out.printf("Redis script calls per /api/v1/search (3-master Cluster): %.2f%n", perRequest);
			// Four limits, each its own hash slot: four calls, two per layer, sent together.
			assertThat(perRequest).isBetween(3.9, 4.0);
		}
	}

	private double scriptCallsPerSearch(ConfigurableApplicationContext app, LongSupplier scriptCalls)
			throws Exception {
		for (int i = 0; i < 5; i++) {
			assertThat(search(app, "203.0.113." + (200 + i), "warm-" + i)).isEqualTo(200);
		}
		long before = scriptCalls.getAsLong();
		for (int i = 0; i < REQUESTS; i++) {
			// A new client and key each time: every request is admitted, none is answered from the deny cache.
			assertThat(search(app, "198.18." + (i / 200) + "." + (i % 200), "key-" + i)).isEqualTo(200);
		}
		return (double) (scriptCalls.getAsLong() - before) / REQUESTS;
	}

	private ConfigurableApplicationContext start(String... redis) {
		String[] arguments = new String[redis.length + 4];
		arguments[0] = "--spring.profiles.active=redis";
		arguments[1] = "--server.port=0";
		arguments[2] = "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1";
		arguments[3] = "--ratelimit.redis.key-prefix=calls-" + System.nanoTime();
		System.arraycopy(redis, 0, arguments, 4, redis.length);
		return SpringApplication.run(SampleApplication.class, arguments);
	}

	private int search(ConfigurableApplicationContext app, String address, String apiKey) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/search?q=x"))
			.header("X-Forwarded-For", address)
			.header("X-API-Key", apiKey)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

}
