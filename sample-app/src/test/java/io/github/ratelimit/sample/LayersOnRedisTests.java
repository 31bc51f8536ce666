package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.LongSupplier;

import io.github.ratelimit.test.RedisCluster;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's layers on Redis, standalone and a 3-master Cluster: only failed logins count, a search rejected by
 * one limit takes nothing from the others; and what the layers of {@code GET /api/v1/search} cost Redis, counted by {@code INFO commandstats}: the filter layer
 * ({@code edge} and the shared {@code account}) is one script call and the method layer ({@code search-per-ip} and
 * {@code search-per-key}) another on a standalone Redis, however many limits each holds; on a Cluster, one call per
 * hash slot involved. Prints the figures recorded in docs/benchmarks.md. (Not counted: the call each instance makes
 * about once a second per policy to say which parameters it decides with, the only script that runs {@code HSET}.)
 */
class LayersOnRedisTests {

	private static final int REQUESTS = 50;

	/**
	 * One Redis and one Cluster for the class (a Cluster takes seconds to form): each application writes under a key
	 * prefix of its own, and is closed before the next test counts the calls.
	 */
	private static RedisServer redis;

	private static RedisCluster cluster;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
		cluster = RedisCluster.start(3);
	}

	@AfterAll
	static void stopRedis() {
		if (redis != null) {
			redis.close();
		}
		if (cluster != null) {
			cluster.close();
		}
	}

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void aSearchCostsOneScriptCallPerLayerOnAStandaloneRedis() throws Exception {
		try (ConfigurableApplicationContext app = start("--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port())) {
			double perRequest = scriptCallsPerSearch(app,
					() -> redis.commandCalls("evalsha") + redis.commandCalls("eval") - redis.commandCalls("hset"));
			System.out.printf("Redis script calls per /api/v1/search (standalone): %.2f%n", perRequest);
			assertThat(perRequest).isEqualTo(2.0);
		}
	}

	@Test
	void aSearchCostsOneScriptCallPerSlotOnACluster() throws Exception {
		try (ConfigurableApplicationContext app = start("--spring.data.redis.cluster.nodes=" + cluster.nodeAddresses())) {
			double perRequest = scriptCallsPerSearch(app, () -> cluster.commandCalls("evalsha")
					+ cluster.commandCalls("eval") - cluster.commandCalls("hset"));
			System.out.printf("Redis script calls per /api/v1/search (3-master Cluster): %.2f%n", perRequest);
			// Four limits, each its own hash slot: four calls, two per layer, sent together.
			assertThat(perRequest).isBetween(3.9, 4.0);
		}
	}

	@Test
	void onAStandaloneRedisAClientHammeringPastAMethodLimitCostsOneCallAtTheEdgeAndNoneOnceTheEdgeRejects()
			throws Exception {
		try (ConfigurableApplicationContext app = start(hammering("--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port()))) {
			assertHammeringCosts(app,
					() -> redis.commandCalls("evalsha") + redis.commandCalls("eval") - redis.commandCalls("hset"), 1);
		}
	}

	@Test
	void onAClusterAClientHammeringPastAMethodLimitCostsTheEdgesCallsAndNoneOnceTheEdgeRejects() throws Exception {
		try (ConfigurableApplicationContext app = start(
						hammering("--spring.data.redis.cluster.nodes=" + cluster.nodeAddresses()))) {
			// The edge layer is edge and the shared account quota, in two hash slots: two calls, sent together.
			assertHammeringCosts(app, () -> cluster.commandCalls("evalsha") + cluster.commandCalls("eval")
					- cluster.commandCalls("hset"), 2);
		}
	}

	/**
	 * The sample's search, with its limit per address over an hour rather than 2 s (so that it cannot recover during
	 * the test), and an edge that admits the client 600 times in all.
	 */
	private static String[] hammering(String... redis) {
		String[] arguments = new String[redis.length + 4];
		System.arraycopy(redis, 0, arguments, 0, redis.length);
		arguments[redis.length] = "--ratelimit.policies.search-per-ip.window=1h";
		arguments[redis.length + 1] = "--ratelimit.filters.edge.limit=1";
		arguments[redis.length + 2] = "--ratelimit.filters.edge.window=1h";
		arguments[redis.length + 3] = "--ratelimit.filters.edge.burst=600";
		return arguments;
	}

	/**
	 * 1,000 searches of one client: past its 3 searches, the method layer rejects it from its deny cache (no call),
	 * while the edge still counts each request (its calls); once the edge has rejected it too, nothing at all.
	 */
	private void assertHammeringCosts(ConfigurableApplicationContext app, LongSupplier scriptCalls,
			int edgeCallsPerRequest) throws Exception {
		for (int i = 0; i < 4; i++) {
			search(app, "198.51.100.77", "key-h"); // 3 admitted, and the rejection the deny cache learns
		}
		long before = scriptCalls.getAsLong();
		for (int i = 0; i < 596; i++) {
			assertThat(search(app, "198.51.100.77", "key-h")).as("search-per-ip").isEqualTo(429);
		}
		long pastTheMethodLimit = scriptCalls.getAsLong() - before;
		System.out.printf("Redis script calls per search rejected by the method limit: %.2f%n",
				pastTheMethodLimit / 596.0);
		assertThat(pastTheMethodLimit).isEqualTo(596L * edgeCallsPerRequest);
		search(app, "198.51.100.77", "key-h"); // the edge's first rejection, which its deny cache learns
		long edgeRejecting = scriptCalls.getAsLong();
		for (int i = 0; i < 399; i++) {
			assertThat(search(app, "198.51.100.77", "key-h")).as("edge").isEqualTo(429);
		}
		assertThat(scriptCalls.getAsLong() - edgeRejecting).as("calls once both layers reject").isZero();
	}

	@Test
	void onAStandaloneRedisOnlyFailedLoginsCountAndARejectedSearchTakesNothing() throws Exception {
		try (ConfigurableApplicationContext app = start(lasting("--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port()))) {
			assertLayersHold(app);
		}
	}

	@Test
	void onAClusterOnlyFailedLoginsCountAndARejectedSearchTakesNothing() throws Exception {
		try (ConfigurableApplicationContext app = start(
						lasting("--spring.data.redis.cluster.nodes=" + cluster.nodeAddresses()))) {
			assertLayersHold(app);
		}
	}

	/**
	 * The sample's login and search limits, none of which can recover during a test: the login limit a sliding log
	 * (its fixed windows of 15 minutes end every quarter of an hour, a window's end could fall between two logins),
	 * and the search limit per address over an hour rather than 2 s.
	 */
	private static String[] lasting(String... redis) {
		String[] arguments = new String[redis.length + 2];
		System.arraycopy(redis, 0, arguments, 0, redis.length);
		arguments[redis.length] = "--ratelimit.policies.login.algorithm=sliding-log";
		arguments[redis.length + 1] = "--ratelimit.policies.search-per-ip.window=1h";
		return arguments;
	}

	/** The sample's login and search contracts, on the store the application was started with. */
	private void assertLayersHold(ConfigurableApplicationContext app) throws Exception {
		for (int i = 0; i < 3; i++) {
			assertThat(login(app, "198.51.100.10", "wrong")).isEqualTo(401);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(login(app, "198.51.100.10", "demo")).as("a successful login is given back").isEqualTo(200);
		}
		assertThat(login(app, "198.51.100.10", "wrong")).isEqualTo(401);
		assertThat(login(app, "198.51.100.10", "wrong")).isEqualTo(401);
		assertThat(login(app, "198.51.100.10", "wrong")).isEqualTo(429);
		for (int i = 0; i < 3; i++) {
			assertThat(search(app, "198.51.100.1", "key-a")).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(search(app, "198.51.100.1", "key-a")).as("search-per-ip").isEqualTo(429);
		}
		// search-per-key allows 10 a minute: 3 spent, none by the 5 rejections.
		for (int address = 2; address <= 8; address++) {
			assertThat(search(app, "198.51.100." + address, "key-a")).isEqualTo(200);
		}
		assertThat(search(app, "198.51.100.9", "key-a")).as("search-per-key").isEqualTo(429);
	}

	private int login(ConfigurableApplicationContext app, String address, String password) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/login"))
			.header("X-Forwarded-For", address)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"demo\",\"password\":\"" + password + "\"}"))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
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
		String[] arguments = new String[redis.length + 6];
		arguments[0] = "--spring.profiles.active=redis";
		arguments[1] = "--server.port=0";
		arguments[2] = "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1";
		arguments[3] = "--ratelimit.redis.key-prefix=calls-" + System.nanoTime();
		arguments[4] = "--sample.api-keys.key-a=free"; // keyed by the API key, which this API issued
		arguments[5] = "--sample.api-keys.key-h=free";
		System.arraycopy(redis, 0, arguments, 6, redis.length);
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
