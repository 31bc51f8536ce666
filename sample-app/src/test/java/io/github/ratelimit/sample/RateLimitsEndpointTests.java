package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} actuator endpoint over HTTP: hidden unless exposed, reads that take nothing, and a reset
 * that needs access granted.
 */
class RateLimitsEndpointTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@Test
	void theEndpointIsNotExposedUnlessTheApplicationExposesIt() throws Exception {
		try (ConfigurableApplicationContext app = start()) {
			assertThat(send(app, "GET", "/actuator/ratelimits").statusCode()).isEqualTo(404);
		}
	}

	@Test
	void readsListThePoliciesWithTheSourceOfEachValueAndAKeysStateWithoutTakingAUnit() throws Exception {
		// Reading a key by its value needs raw keys shown, and those access beyond reads.
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.heavy-hitters.show-keys=true", "--management.endpoint.ratelimits.access=unrestricted",
				"--ratelimit.heavy-hitters.mask-client-ip=false")) {
			HttpResponse<String> all = send(app, "GET", "/actuator/ratelimits");
			assertThat(all.statusCode()).isEqualTo(200);
			assertThat(all.body()).contains("\"store\":\"InMemoryRateLimitStore")
				.contains("\"name\":\"orders\"")
				.contains("\"limit\":\"ratelimit.policies.orders.limit\"")
				.contains("\"algorithm\":\"annotation\"")
				.contains("ResourceController#orders(String)")
				.contains("\"name\":\"edge\"")
				.contains("\"declaredBy\":[\"ratelimit.filters.edge\"]")
				.contains("\"burst\":\"ratelimit.filters.edge.burst\"")
				.contains("\"name\":\"account\"")
				.contains("\"limit\":\"ratelimit.policies.account.limit\"")
				.contains("\"mode\":\"ENFORCE\"")
				.contains("\"plans\":{\"free\":{\"limit\":3,\"window\":\"1m\"")
				.contains("\"sources\":{\"limit\":\"ratelimit.plans.free.quota.limit\",\"window\":\"policy\"}")
				.contains("\"pro\":{\"limit\":10,\"window\":\"1m\"")
				.contains("\"sources\":{\"limit\":\"ratelimit.plans.pro.quota.limit\",\"window\":\"policy\"}");
			awayFromAMinutesEdge();
			for (int i = 0; i < 3; i++) {
				send(app, "GET", "/api/v1/users/endpoint-user/orders");
			}
			for (int i = 0; i < 2; i++) {
				HttpResponse<String> key = send(app, "GET", "/actuator/ratelimits/orders/endpoint-user");
				assertThat(key.statusCode()).isEqualTo(200);
				assertThat(key.body()).contains("\"remaining\":7").contains("\"limit\":10");
			}
			assertThat(send(app, "GET", "/actuator/ratelimits/no-such-policy/endpoint-user").statusCode())
				.isEqualTo(404);
			// The default key is the client's address; an IPv6 network's slash is part of the key.
			send(app, "GET", "/api/v1/resources");
			assertThat(send(app, "GET", "/actuator/ratelimits/resources/127.0.0.1").body()).contains("\"remaining\":4");
			assertThat(send(app, "GET", "/actuator/ratelimits/resources/2001:db8:0:0:0:0:0:0/64").body())
				.contains("\"key\":\"2001:db8:0:0:0:0:0:0/64\"").contains("\"remaining\":5");
		}
	}

	@Test
	void aPolicysReadShowsWhoIsBeingLimitedWithAddressesMaskedUnlessRawKeysAreGranted() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.filters.edge.enabled=false")) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 8; i++) {
				send(app, "GET", "/api/v1/resources");
			}
			HttpResponse<String> resources = send(app, "GET", "/actuator/ratelimits/resources");
			assertThat(resources.body()).contains("\"heaviest\":{\"rejected\":[{\"key\":\"127.0.0.x\",\"count\":3,")
				.doesNotContain("127.0.0.1");
			assertThat(send(app, "GET", "/actuator/ratelimits/resources/127.0.0.x").body())
				.as("read as shown").contains("\"key\":\"127.0.0.x\"").contains("\"remaining\":0");
		}
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.filters.edge.enabled=false", "--ratelimit.heavy-hitters.show-keys=true",
				"--management.endpoint.ratelimits.access=unrestricted", "--ratelimit.heavy-hitters.mask-client-ip=false")) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 7; i++) {
				send(app, "GET", "/api/v1/resources");
			}
			assertThat(send(app, "GET", "/actuator/ratelimits/resources").body())
				.contains("{\"key\":\"127.0.0.1\",\"count\":2,");
			assertThat(send(app, "GET", "/actuator/ratelimits").body()).as("not in the list of every policy")
				.doesNotContain("127.0.0.1");
		}
	}

	@Test
	void anApiKeyIsShownAndReadOnlyAsAKeyedFingerprintByDefault() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.filters.edge.enabled=false")) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 12; i++) {
				send(app, "GET", "/api/v1/quota", "pro-read"); // 10 on its plan, then rejected, always recorded
			}
			String policy = send(app, "GET", "/actuator/ratelimits/quota").body();
			assertThat(policy).doesNotContain("pro-read").containsPattern("\"key\":\"hmac:[0-9a-f]{12}\"");
			String fingerprint = policy.replaceAll("(?s).*\"key\":\"(hmac:[0-9a-f]{12})\".*", "$1");
			HttpResponse<String> read = send(app, "GET", "/actuator/ratelimits/quota/" + fingerprint);
			assertThat(read.statusCode()).isEqualTo(200);
			assertThat(read.body()).contains("\"key\":\"" + fingerprint + "\"")
				.contains("\"pro\":{\"limit\":10,\"remaining\":0")
				.doesNotContain("pro-read");
			assertThat(send(app, "GET", "/actuator/ratelimits/quota/pro-read").statusCode())
				.as("no oracle of live keys").isEqualTo(400);
		}
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.filters.edge.enabled=false", "--ratelimit.heavy-hitters.show-keys=true")) {
			awayFromAMinutesEdge();
			send(app, "GET", "/api/v1/quota", "pro-read");
			assertThat(send(app, "GET", "/actuator/ratelimits/quota/pro-read").statusCode())
				.as("show-keys alone, with read-only access, shows no raw key").isEqualTo(400);
		}
	}

	@Test
	void readingKeysTheStoreDoesNotHoldInsertsNothingSoAFullStoreEvictsNoOne() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.heavy-hitters.show-keys=true", "--management.endpoint.ratelimits.access=unrestricted",
				"--ratelimit.memory.max-keys-per-policy=3", "--ratelimit.filters.edge.enabled=false")) {
			awayFromAMinutesEdge();
			for (int user = 0; user < 3; user++) {
				send(app, "GET", "/api/v1/users/held-" + user + "/orders");
			}
			for (int i = 0; i < 20; i++) {
				assertThat(send(app, "GET", "/actuator/ratelimits/orders/unknown-" + i).body())
					.contains("\"remaining\":10");
			}
			InMemoryRateLimitStore store = (InMemoryRateLimitStore) app.getBean(RateLimitStore.class);
			assertThat(store.evictions()).isZero();
			assertThat(store.size()).isEqualTo(3);
			assertThat(send(app, "GET", "/api/v1/users/held-0/orders").headers().firstValue("RateLimit-Remaining"))
				.hasValue("8");
		}
	}

	@Test
	void theResetIsRefusedUnlessAccessIsGrantedAndThenUnblocksTheClient() throws Exception {
		try (ConfigurableApplicationContext readOnly = start("--management.endpoints.web.exposure.include=ratelimits")) {
			awayFromAMinutesEdge();
			send(readOnly, "GET", "/api/v1/users/blocked/orders");
			assertThat(send(readOnly, "DELETE", "/actuator/ratelimits/orders/blocked").statusCode()).isBetween(400, 499);
			assertThat(send(readOnly, "GET", "/actuator/ratelimits/orders").body()).as("not blocked, so not reset")
				.doesNotContain("\"reset\"");
		}
		try (ConfigurableApplicationContext granted = start("--management.endpoints.web.exposure.include=ratelimits",
				"--management.endpoint.ratelimits.access=unrestricted")) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 10; i++) {
				send(granted, "GET", "/api/v1/users/blocked/orders");
			}
			assertThat(send(granted, "GET", "/api/v1/users/blocked/orders").statusCode()).isEqualTo(429);
			assertThat(send(granted, "DELETE", "/actuator/ratelimits/orders/blocked").statusCode()).isEqualTo(200);
			assertThat(send(granted, "GET", "/api/v1/users/blocked/orders").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void onRedisTheResetAlsoForgetsTheRejectionsThisInstanceRemembers() throws Exception {
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext app = start("--spring.profiles.active=redis",
						"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
						"--ratelimit.redis.key-prefix=endpoint-" + System.nanoTime(), "--ratelimit.redis.timeout=2s",
						"--ratelimit.filters.edge.enabled=false", "--management.endpoints.web.exposure.include=ratelimits",
						"--management.endpoint.ratelimits.access=unrestricted")) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 10; i++) {
				assertThat(send(app, "GET", "/api/v1/users/cached/orders").statusCode()).isEqualTo(200);
			}
			assertThat(send(app, "GET", "/api/v1/users/cached/orders").statusCode()).isEqualTo(429);
			// Not counted: the call an instance makes about once a second to register its parameters (HSET).
			long scriptCalls = redis.commandCalls("evalsha") - redis.commandCalls("hset");
			assertThat(send(app, "GET", "/api/v1/users/cached/orders").statusCode()).isEqualTo(429);
			assertThat(redis.commandCalls("evalsha") - redis.commandCalls("hset"))
				.as("turned away by the deny cache, without asking Redis")
				.isEqualTo(scriptCalls);
			assertThat(send(app, "DELETE", "/actuator/ratelimits/orders/cached").statusCode()).isEqualTo(200);
			HttpResponse<String> unblocked = send(app, "GET", "/api/v1/users/cached/orders");
			assertThat(unblocked.statusCode()).isEqualTo(200);
			assertThat(unblocked.headers().firstValue("RateLimit-Remaining")).hasValue("9");
		}
	}

	@Test
	void onRedisAResetThroughOneInstanceUnblocksTheClientOnEveryInstance() throws Exception {
		String prefix = "endpoint-" + System.nanoTime();
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext first = startOn(redis, prefix);
				ConfigurableApplicationContext second = startOn(redis, prefix)) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 10; i++) {
				assertThat(send((i % 2 == 0) ? first : second, "GET", "/api/v1/users/everywhere/orders").statusCode())
					.isEqualTo(200);
			}
			// Both instances turn the client away, the second from the denial it cached.
			assertThat(send(first, "GET", "/api/v1/users/everywhere/orders").statusCode()).isEqualTo(429);
			assertThat(send(second, "GET", "/api/v1/users/everywhere/orders").statusCode()).isEqualTo(429);
			long calls = redis.commandCalls("evalsha") - redis.commandCalls("hset");
			assertThat(send(second, "GET", "/api/v1/users/everywhere/orders").statusCode()).isEqualTo(429);
			assertThat(redis.commandCalls("evalsha") - redis.commandCalls("hset")).as("from its deny cache")
				.isEqualTo(calls);
			awaitSubscribers(redis, prefix + ":resets", 2);
			assertThat(send(first, "DELETE", "/actuator/ratelimits/orders/everywhere").statusCode()).isEqualTo(200);
			int status = 429;
			long deadline = System.nanoTime() + 5_000_000_000L;
			while (status == 429 && System.nanoTime() < deadline) {
				Thread.sleep(50); // told over Redis pub/sub, in a moment
				status = send(second, "GET", "/api/v1/users/everywhere/orders").statusCode();
			}
			assertThat(status).as("unblocked on the instance that did not serve the reset").isEqualTo(200);
		}
	}

	/** Wait until both instances have subscribed to the resets' channel (in the background, at start-up). */
	private static void awaitSubscribers(RedisServer redis, String channel, long count) throws InterruptedException {
		long deadline = System.nanoTime() + 10_000_000_000L;
		while (((Number) ((java.util.List<?>) redis.call("PUBSUB", "NUMSUB", channel)).get(1)).longValue() < count
				&& System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
	}

	private static ConfigurableApplicationContext startOn(RedisServer redis, String prefix) {
		return start("--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.key-prefix=" + prefix,
				"--ratelimit.filters.edge.enabled=false", "--management.endpoints.web.exposure.include=ratelimits",
				"--management.endpoint.ratelimits.access=unrestricted");
	}

	@Test
	void theResetUnblocksAClientOfAnyPlan() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--management.endpoint.ratelimits.access=unrestricted", "--ratelimit.filters.edge.enabled=false")) {
			for (int i = 0; i < 10; i++) {
				assertThat(send(app, "GET", "/api/v1/quota", "pro-reset").statusCode()).isEqualTo(200);
			}
			assertThat(send(app, "GET", "/api/v1/quota", "pro-reset").statusCode()).isEqualTo(429);
			assertThat(send(app, "DELETE", "/actuator/ratelimits/quota/pro-reset").statusCode()).isEqualTo(200);
			HttpResponse<String> unblocked = send(app, "GET", "/api/v1/quota", "pro-reset");
			assertThat(unblocked.statusCode()).isEqualTo(200);
			assertThat(unblocked.body()).contains("\"remaining\":9");
		}
	}

	@Test
	void aKeysStateIsReadUnderEveryPlanThatCountsItsClientsApart() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoints.web.exposure.include=ratelimits",
				"--ratelimit.filters.edge.enabled=false", "--ratelimit.heavy-hitters.show-keys=true",
				"--management.endpoint.ratelimits.access=unrestricted")) {
			for (int i = 0; i < 4; i++) {
				assertThat(send(app, "GET", "/api/v1/quota", "pro-read").statusCode()).isEqualTo(200);
			}
			for (int i = 0; i < 2; i++) {
				assertThat(send(app, "GET", "/api/v1/quota", "free-read").statusCode()).isEqualTo(200);
			}
			assertThat(send(app, "GET", "/actuator/ratelimits/quota/pro-read").body())
				.contains("\"plans\":{\"free\":{\"limit\":3,\"remaining\":3,")
				.contains("\"pro\":{\"limit\":10,\"remaining\":6,");
			assertThat(send(app, "GET", "/actuator/ratelimits/quota/free-read").body())
				.contains("\"plans\":{\"free\":{\"limit\":3,\"remaining\":1,")
				.contains("\"pro\":{\"limit\":10,\"remaining\":10,");
			// Reading took nothing: the pro client still has its six.
			assertThat(send(app, "GET", "/api/v1/quota", "pro-read").body()).contains("\"remaining\":5");
		}
	}

	/** 'orders' is a fixed window of a minute on the application's clock: keep its edge out of the way. */
	private static void awayFromAMinutesEdge() throws InterruptedException {
		while (System.currentTimeMillis() % 60_000 > 55_000) {
			Thread.sleep(200);
		}
	}

	private static ConfigurableApplicationContext start(String... arguments) {
		String[] all = new String[arguments.length + 4];
		all[0] = "--server.port=0";
		all[1] = "--sample.api-keys.pro-reset=pro"; // the API keys these tests send
		all[2] = "--sample.api-keys.pro-read=pro";
		all[3] = "--sample.api-keys.free-read=free";
		System.arraycopy(arguments, 0, all, 4, arguments.length);
		return SpringApplication.run(SampleApplication.class, all);
	}

	private HttpResponse<String> send(ConfigurableApplicationContext app, String method, String path)
			throws Exception {
		return send(app, method, path, null);
	}

	private HttpResponse<String> send(ConfigurableApplicationContext app, String method, String path,
			String apiKey) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.method(method, HttpRequest.BodyPublishers.noBody());
		if (apiKey != null) {
			request.header("X-API-Key", apiKey);
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
