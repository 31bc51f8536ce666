package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Changing a policy at run time through the {@code ratelimits} endpoint's write operation, over HTTP: refused unless
 * access is granted, each value checked as at start-up, a changed limit applied to the next request with the count
 * carried over, shown with its source {@code runtime}, and dropped again.
 */
class RuntimeChangesOverHttpTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@Test
	void aChangedLimitAppliesToTheNextRequestWithTheCountCarriedOverUntilTheChangeIsDropped() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoint.ratelimits.access=unrestricted")) {
			awayFromAMinutesEdge();
			for (int i = 0; i < 6; i++) {
				assertThat(send(app, "GET", "/api/v1/users/changed/orders", null).statusCode()).isEqualTo(200);
			}
			HttpResponse<String> changed = send(app, "POST", "/actuator/ratelimits/orders", "{\"limit\": 8}");
			assertThat(changed.statusCode()).isEqualTo(200);
			assertThat(changed.body()).contains("\"limit\":8").contains("\"limit\":\"runtime\"");
			for (int remaining = 1; remaining >= 0; remaining--) {
				HttpResponse<String> response = send(app, "GET", "/api/v1/users/changed/orders", null);
				assertThat(response.statusCode()).as("6 used of 8").isEqualTo(200);
				assertThat(response.headers().firstValue("RateLimit-Limit")).hasValue("8");
				assertThat(response.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(remaining));
			}
			assertThat(send(app, "GET", "/api/v1/users/changed/orders", null).statusCode()).isEqualTo(429);
			assertThat(send(app, "GET", "/actuator/ratelimits/orders", null).body()).contains("\"limit\":\"runtime\"");
			HttpResponse<String> dropped = send(app, "DELETE", "/actuator/ratelimits/orders", null);
			assertThat(dropped.statusCode()).isEqualTo(200);
			assertThat(dropped.body()).contains("\"limit\":10").contains("\"limit\":\"ratelimit.policies.orders.limit\"");
			HttpResponse<String> again = send(app, "GET", "/api/v1/users/changed/orders", null);
			assertThat(again.statusCode()).as("8 used of 10").isEqualTo(200);
			assertThat(again.headers().firstValue("RateLimit-Remaining")).hasValue("1");
		}
	}

	@Test
	void aPolicyDisabledAtRunTimeNeitherCountsNorLimitsUntilEnabledAgain() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoint.ratelimits.access=unrestricted")) {
			awayFromAMinutesEdge();
			assertThat(send(app, "POST", "/actuator/ratelimits/orders", "{\"enabled\": false}").body())
				.contains("\"enabled\":false");
			for (int i = 0; i < 15; i++) {
				HttpResponse<String> response = send(app, "GET", "/api/v1/users/unlimited/orders", null);
				assertThat(response.statusCode()).isEqualTo(200);
				assertThat(response.headers().firstValue("RateLimit-Limit")).isEmpty();
			}
			assertThat(send(app, "POST", "/actuator/ratelimits/orders", "{\"enabled\": true}").statusCode())
				.isEqualTo(200);
			assertThat(send(app, "GET", "/api/v1/users/unlimited/orders", null).headers()
				.firstValue("RateLimit-Remaining")).as("nothing was counted while disabled").hasValue("9");
		}
	}

	@Test
	void anInvalidOrOutOfBoundsChangeIsABadRequestNamingTheValueAndChangesNothing() throws Exception {
		try (ConfigurableApplicationContext app = start("--management.endpoint.ratelimits.access=unrestricted",
				"--spring.web.error.include-message=always")) {
			HttpResponse<String> zero = send(app, "POST", "/actuator/ratelimits/orders", "{\"limit\": 0}");
			assertThat(zero.statusCode()).isEqualTo(400);
			assertThat(zero.body()).contains("'limit' 0 is out of bounds");
			HttpResponse<String> window = send(app, "POST", "/actuator/ratelimits/orders", "{\"window\": \"soon\"}");
			assertThat(window.statusCode()).isEqualTo(400);
			HttpResponse<String> centuries = send(app, "POST", "/actuator/ratelimits/orders",
					"{\"window\": \"PT9999999H\"}");
			assertThat(centuries.statusCode()).isEqualTo(400);
			assertThat(centuries.body()).contains("'window' PT9999999H is out of bounds");
			assertThat(send(app, "POST", "/actuator/ratelimits/orders", "{}").statusCode()).isEqualTo(400);
			HttpResponse<String> unknown = send(app, "POST", "/actuator/ratelimits/no-such-policy", "{\"limit\": 5}");
			assertThat(unknown.statusCode()).isEqualTo(400);
			assertThat(send(app, "GET", "/actuator/ratelimits/orders", null).body()).contains("\"limit\":10");
		}
	}

	@Test
	void aChangeIsRefusedUnlessWriteAccessIsGranted() throws Exception {
		try (ConfigurableApplicationContext app = start()) {
			assertThat(send(app, "POST", "/actuator/ratelimits/orders", "{\"limit\": 1000}").statusCode())
				.isBetween(400, 499);
			assertThat(send(app, "GET", "/actuator/ratelimits/orders", null).body()).contains("\"limit\":10");
		}
	}

	/** 'orders' is a fixed window of a minute on the application's clock: keep its edge out of the way. */
	private static void awayFromAMinutesEdge() throws InterruptedException {
		while (System.currentTimeMillis() % 60_000 > 50_000) {
			Thread.sleep(200);
		}
	}

	private static ConfigurableApplicationContext start(String... arguments) {
		String[] all = new String[arguments.length + 4];
		all[0] = "--server.port=0";
		all[1] = "--management.endpoints.web.exposure.include=ratelimits";
		all[2] = "--ratelimit.filters.edge.enabled=false";
		all[3] = "--spring.data.redis.port=" + SampleApplicationTests.NO_REDIS;
		System.arraycopy(arguments, 0, all, 4, arguments.length);
		return SpringApplication.run(SampleApplication.class, all);
	}

	private HttpResponse<String> send(ConfigurableApplicationContext app, String method, String path, String body)
			throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofString(body)
					: HttpRequest.BodyPublishers.noBody());
		if (body != null) {
			request.header("Content-Type", "application/json");
		}
		return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

}
