package io.github.ratelimit.sample.webflux;

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
 * Two instances of the WebFlux sample on one Redis (its {@code redis} profile), sent 60 concurrent requests of one
 * client, alternately: together they admit exactly the limit, every decision made without blocking.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class TwoInstancesOnRedisTests {

	/**
	 * A connection per request: Reactor Netty 1.3.6 can leave a keep-alive connection unread when a request answered
	 * at once follows one answered later, as with a remote store (reactor/reactor-netty#4361, docs/web-stacks.md).
	 */
	private HttpClient client() {
		return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
	}

	@Test
	void twoInstancesAdmitExactlyTheLimitUnderConcurrency() throws Exception {
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext first = start(redis);
				ConfigurableApplicationContext second = start(redis)) {
			List<String> bases = List.of(base(first), base(second));
			for (String base : bases) {
				// Connections and scripts ready: what is measured is exactness, not a cold start on a busy machine.
				client().send(HttpRequest.newBuilder(URI.create(base + "/api/v1/users/warm-up/orders")).build(),
						HttpResponse.BodyHandlers.discarding());
			}
			List<CompletableFuture<HttpResponse<Void>>> responses = new ArrayList<>();
			String user = "user-" + System.nanoTime();
			for (int i = 0; i < 60; i++) {
				HttpRequest request = HttpRequest
					.newBuilder(URI.create(bases.get(i % 2) + "/api/v1/users/" + user + "/orders"))
					.header("X-Forwarded-For", "198.51.100." + i)
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
			assertThat(admitted).as("orders: 10 per user, across both instances").isEqualTo(10);
			assertThat(rejected).isEqualTo(50);
		}
	}

	private static ConfigurableApplicationContext start(RedisServer redis) {
		return SpringApplication.run(SampleWebFluxApplication.class, "--server.port=0",
				"--spring.profiles.active=redis", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1",
				"--ratelimit.redis.key-prefix=two-instances-" + redis.port(),
				// An hour-long window: no window can end during the burst, so exactly 10 pass.
				"--ratelimit.policies.orders.window=1h",
				// Generous, so that a slow moment of a shared machine does not send decisions to the failure mode.
				"--ratelimit.redis.timeout=5s");
	}

	private static String base(ConfigurableApplicationContext app) {
		return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
	}

}
