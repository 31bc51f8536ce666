package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.test.Dynalite;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The sample's login lock-out across two instances sharing a store, over HTTP: five failed logins of a client,
 * wherever they land, lock it out of {@code /api/v1/login} on both instances for an hour, the right password
 * included; the other instance answers it from its deny cache, and lists it on the endpoint; an operator's reset
 * through either instance's endpoint unlocks it on both.
 */
class LoginLockOutOnSharedStoresTests {

	private static final String CLIENT = "198.51.100.10";

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void onRedisFiveFailedLoginsLockTheClientOutOfBothInstancesUntilAnOperatorUnlocksIt() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			String prefix = "--ratelimit.redis.key-prefix=lockout-" + System.nanoTime();
			String[] store = { "--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), prefix, "--ratelimit.redis.timeout=2s" };
			try (ConfigurableApplicationContext first = start(store);
					ConfigurableApplicationContext second = start(store)) {
				lockOut(first, second);
				long before = scripts(redis);
				for (int i = 0; i < 20; i++) {
					assertThat(login(second, "demo").statusCode()).isEqualTo(429);
				}
				assertThat(scripts(redis) - before).as("the edge filter's call only: the lock-out is cached")
					.isEqualTo(20);
				unlock(second, first);
			}
		}
	}

	@Test
	void onDynamoDbFiveFailedLoginsLockTheClientOutOfBothInstancesUntilAnOperatorUnlocksIt() throws Exception {
		assumeTrue(Dynalite.isAvailable(), "node is not installed");
		System.setProperty("aws.accessKeyId", "local");
		System.setProperty("aws.secretAccessKey", "local");
		try (Dynalite dynalite = Dynalite.start()) {
			String[] store = { "--spring.profiles.active=dynamodb", "--ratelimit.dynamodb.endpoint=" + dynalite.endpoint(),
					"--ratelimit.dynamodb.table=lockout-" + System.nanoTime(), "--ratelimit.dynamodb.timeout=5s" };
			try (ConfigurableApplicationContext first = start(store);
					ConfigurableApplicationContext second = start(store)) {
				lockOut(first, second);
				unlock(first, second);
			}
		}
		finally {
			System.clearProperty("aws.accessKeyId");
			System.clearProperty("aws.secretAccessKey");
		}
	}

	/** Five failures, alternating between the instances, then the right password on each: an hour to wait. */
	private void lockOut(ConfigurableApplicationContext first, ConfigurableApplicationContext second)
			throws Exception {
		// The login's fixed windows of 15 minutes: keep their end out of the way.
		while (System.currentTimeMillis() % 900_000 > 890_000) {
			Thread.sleep(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(login((i % 2 == 0) ? first : second, "wrong").statusCode()).as("failure %d", i + 1)
				.isEqualTo(401);
		}
		for (ConfigurableApplicationContext app : List.of(second, first)) {
			HttpResponse<String> lockedOut = login(app, "demo");
			assertThat(lockedOut.statusCode()).isEqualTo(429);
			assertThat(Long.parseLong(lockedOut.headers().firstValue("Retry-After").orElseThrow()))
				.isBetween(3_580L, 3_600L);
			assertThat(JsonPath.parse(lockedOut.body()).<String>read("$.type")).endsWith("#abnormal-usage-detected");
		}
		assertThat(login(first, "demo", "198.51.100.11").statusCode()).as("another client").isEqualTo(200);
		DocumentContext endpoint = JsonPath.parse(get(second, "/actuator/ratelimits").body());
		assertThat(endpoint.<List<String>>read("$.lockedOut[*].group")).containsExactly("login");
		assertThat(endpoint.<List<String>>read("$.lockedOut[*].policy")).containsExactly("login");
		assertThat(endpoint.<List<String>>read("$.lockedOut[*].key")).as("masked, as keys are")
			.containsExactly("198.51.100.x");
		assertThat(endpoint.<List<Integer>>read("$.lockedOut[*].retryAfterSeconds").get(0)).isBetween(3_580, 3_600);
	}

	/** The reset through one instance's endpoint unlocks the client on both (the other's deny cache is told). */
	private void unlock(ConfigurableApplicationContext through, ConfigurableApplicationContext other)
			throws Exception {
		HttpResponse<String> reset = this.client.send(HttpRequest.newBuilder(uri(through, "/actuator/ratelimits/login/"
				+ CLIENT)).DELETE().build(), HttpResponse.BodyHandlers.ofString());
		assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
		assertThat(login(through, "demo").statusCode()).isEqualTo(200);
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		int status;
		do {
			status = login(other, "demo").statusCode();
		}
		while (status != 200 && System.nanoTime() < deadline && sleep());
		assertThat(status).as("unlocked on the other instance too").isEqualTo(200);
		assertThat(JsonPath.parse(get(through, "/actuator/ratelimits").body()).<List<Object>>read("$.lockedOut"))
			.isEmpty();
	}

	private static boolean sleep() throws InterruptedException {
		Thread.sleep(100);
		return true;
	}

	private static long scripts(RedisServer redis) {
		return redis.commandCalls("evalsha") + redis.commandCalls("eval") - redis.commandCalls("hset");
	}

	private ConfigurableApplicationContext start(String... store) {
		String[] arguments = new String[store.length + 4];
		arguments[0] = "--server.port=0";
		arguments[1] = "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1";
		arguments[2] = "--management.endpoints.web.exposure.include=ratelimits";
		arguments[3] = "--management.endpoint.ratelimits.access=unrestricted";
		System.arraycopy(store, 0, arguments, 4, store.length);
		return SpringApplication.run(SampleApplication.class, arguments);
	}

	private HttpResponse<String> login(ConfigurableApplicationContext app, String password) throws Exception {
		return login(app, password, CLIENT);
	}

	private HttpResponse<String> login(ConfigurableApplicationContext app, String password, String address)
			throws Exception {
		return this.client.send(HttpRequest.newBuilder(uri(app, "/api/v1/login"))
			.header("X-Forwarded-For", address)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"demo\",\"password\":\"" + password + "\"}"))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(uri(app, path)).timeout(Duration.ofSeconds(10)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private static URI uri(ConfigurableApplicationContext app, String path) {
		return URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + path);
	}

}
