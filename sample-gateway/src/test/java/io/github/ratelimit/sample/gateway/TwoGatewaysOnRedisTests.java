package io.github.ratelimit.sample.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.test.NoBlockingOnEventLoops;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the gateway sample on one Redis (its {@code redis} profile), sent 60 concurrent requests for one
 * user, alternately: together they admit exactly the route's limit, and only those reach the API.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class TwoGatewaysOnRedisTests {

	/** A connection per request (see docs/web-stacks.md on Reactor Netty 1.3.6's keep-alive). */
	private HttpClient client() {
		return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
	}

	@Test
	void twoGatewaysAdmitExactlyTheRoutesLimitUnderConcurrency() throws Exception {
		try (Upstream upstream = Upstream.start();
				RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext first = start(redis, upstream);
				ConfigurableApplicationContext second = start(redis, upstream)) {
			List<String> bases = List.of(base(first), base(second));
			for (String base : bases) {
				// Connections and scripts ready: what is measured is exactness, not a cold start on a busy machine.
				client().send(HttpRequest.newBuilder(URI.create(base + "/api/v1/users/warm-up/orders")).build(),
						HttpResponse.BodyHandlers.discarding());
			}
			int before = upstream.requests();
			List<CompletableFuture<HttpResponse<Void>>> responses = new ArrayList<>();
			String user = "user-" + System.nanoTime();
			for (int i = 0; i < 60; i++) {
				HttpRequest request = HttpRequest
					.newBuilder(URI.create(bases.get(i % 2) + "/api/v1/users/" + user + "/orders"))
					.timeout(Duration.ofSeconds(20))
					.build();
				responses.add(client().sendAsync(request, HttpResponse.BodyHandlers.discarding()));
			}
			int admitted = 0;
			int rejected = 0;
			for (CompletableFuture<HttpResponse<Void>> response : responses) {
				int status = response.join().statusCode();
				admitted += (status == 200) ? 1 : 0;
				rejected += (status == 429) ? 1 : 0;
			}
			assertThat(admitted).as("orders: 10 per user, across both gateways").isEqualTo(10);
			assertThat(rejected).isEqualTo(50);
			assertThat(upstream.requests() - before).as("what reached the API").isEqualTo(10);
		}
	}

	private static ConfigurableApplicationContext start(RedisServer redis, Upstream upstream) {
		return SpringApplication.run(SampleGatewayApplication.class, "--server.port=0",
				"--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--upstream.uri=" + upstream.uri(),
				"--ratelimit.redis.key-prefix=two-gateways-" + redis.port(),
				// A token bucket refilled over an hour: no window can end during the burst, so exactly 10 pass.
				"--ratelimit.policies.orders.algorithm=token-bucket", "--ratelimit.policies.orders.window=1h",
				// Generous, so that a slow moment of a shared machine does not send decisions to the failure mode.
				"--ratelimit.redis.timeout=5s");
	}

	private static String base(ConfigurableApplicationContext app) {
		return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
	}

}
