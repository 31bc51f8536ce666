package io.github.ratelimit.sample.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The gateway sample started as a user starts it, with their properties: {@code ratelimit.policies.<name>.*} over a
 * route's arguments, a route's invalid arguments at start-up, and a client that forges {@code X-Forwarded-For} to a
 * gateway that trusts no proxy.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class GatewayConfigurationOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private Upstream upstream;

	private ConfigurableApplicationContext app;

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
		if (this.upstream != null) {
			this.upstream.close();
		}
	}

	@Test
	void ratelimitPoliciesOverrideTheRoutesLimits() throws Exception {
		start("--ratelimit.policies.resources.limit=2", "--ratelimit.policies.orders.algorithm=token-bucket",
				"--ratelimit.policies.orders.window=1h");
		assertThat(statuses("/api/v1/resources", 3)).containsExactly(200, 200, 429);
		HttpResponse<String> orders = get("/api/v1/users/u-1/orders", "198.51.100.1");
		assertThat(orders.headers().firstValue("RateLimit-Limit")).hasValue("10");
		assertThat(orders.headers().firstValue("RateLimit-Reset")).as("a token bucket refilled over an hour")
			.hasValueSatisfying((reset) -> assertThat(Long.parseLong(reset)).isGreaterThan(60));
	}

	@Test
	void aForgedForwardedHeaderBuysNoFreshQuotaFromAGatewayThatTrustsNoProxy() throws Exception {
		start();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			statuses.add(get("/api/v1/resources", "203.0.113." + i).statusCode());
		}
		assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429);
	}

	@Test
	void aRouteWithAnInvalidLimitFailsStartUpNamingTheRouteAndTheValue() {
		String route = "--spring.cloud.gateway.server.webflux.routes[0].";
		// A list given in the arguments replaces the whole list of the YAML: one route, complete.
		assertThatException()
			.isThrownBy(() -> start(route + "id=resources", route + "uri=http://127.0.0.1:1",
					route + "predicates[0]=Path=/api/v1/resources", route + "filters[0].name=RequestRateLimiter",
					route + "filters[0].args[ratelimit.limit]=five", route + "filters[0].args[ratelimit.window]=1m"))
			.withStackTraceContaining("route 'resources'")
			.withStackTraceContaining("'limit' cannot be 'five'");
	}

	private List<Integer> statuses(String path, int requests) throws Exception {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			statuses.add(get(path, "198.51.100.1").statusCode());
		}
		return statuses;
	}

	private void start(String... arguments) throws Exception {
		this.upstream = Upstream.start();
		List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.data.redis.port=1",
				"--upstream.uri=" + this.upstream.uri(),
				// An hour-long window: no window ends between two requests of a test.
				"--ratelimit.policies.resources.window=1h"));
		all.addAll(List.of(arguments));
		this.app = SpringApplication.run(SampleGatewayApplication.class, all.toArray(new String[0]));
	}

	private HttpResponse<String> get(String path, String forwardedFor) throws Exception {
		String port = this.app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-Forwarded-For", forwardedFor)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
