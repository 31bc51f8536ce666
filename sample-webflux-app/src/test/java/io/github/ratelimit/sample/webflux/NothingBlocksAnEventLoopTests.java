package io.github.ratelimit.sample.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.test.NoBlockingOnEventLoops;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * BlockHound watches every event-loop thread while the WebFlux sample serves its endpoints, in memory and on Redis,
 * admitted and rejected, with the filter layer and count by outcome: no call that blocks (a wait, a sleep, a socket
 * or file read) runs on them.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class NothingBlocksAnEventLoopTests {

	/**
	 * A connection per request: Reactor Netty 1.3.6 can leave a keep-alive connection unread when a request answered
	 * at once follows one answered later, as with a remote store (reactor/reactor-netty#4361, docs/web-stacks.md).
	 */
	private HttpClient client() {
		return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
	}

	@Test
	void inMemory() throws Exception {
		try (ConfigurableApplicationContext app = SpringApplication.run(SampleWebFluxApplication.class,
				"--server.port=0", "--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1")) {
			serve(app);
		}
	}

	@Test
	void onRedis() throws Exception {
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext app = SpringApplication.run(SampleWebFluxApplication.class,
						"--server.port=0", "--spring.profiles.active=redis",
						"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
						"--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1",
						"--ratelimit.redis.key-prefix=blockhound-" + System.nanoTime())) {
			serve(app);
		}
	}

	/** Every kind of request the sample serves, past its limits. */
	private void serve(ConfigurableApplicationContext app) throws Exception {
		String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
		for (int i = 0; i < 8; i++) {
			get(base + "/api/v1/resources");
			get(base + "/api/v1/users/u-1/orders");
			get(base + "/api/v1/search?q=x");
			get(base + "/api/v1/quota");
			get(base + "/api/v1/algorithms/sliding-log");
			get(base + "/api/v1/no-handler");
			client().send(HttpRequest.newBuilder(URI.create(base + "/api/v1/login"))
				.header("X-Forwarded-For", "198.51.100.1")
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"demo\",\"password\":\"wrong\"}"))
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.discarding());
		}
	}

	private void get(String uri) throws Exception {
		int status = client().send(HttpRequest.newBuilder(URI.create(uri)).header("X-Forwarded-For", "198.51.100.1")
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
		assertThat(status).as(uri).isIn(200, 401, 404, 429);
	}

}
