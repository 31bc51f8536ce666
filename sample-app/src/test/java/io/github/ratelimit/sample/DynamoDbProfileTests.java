package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;

import io.github.ratelimit.test.Dynalite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The sample with the 'dynamodb' profile against dynalite, over HTTP: two instances share the limit through one
 * table, and every policy of the sample runs on DynamoDB.
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
	void everyPolicyOfTheSampleIsEnforcedOnDynamoDb() throws Exception {
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
