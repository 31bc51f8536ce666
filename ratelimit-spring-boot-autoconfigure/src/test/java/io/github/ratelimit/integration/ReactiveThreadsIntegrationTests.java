package io.github.ratelimit.integration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.engine.TenantLimits;
import io.github.ratelimit.engine.TenantLimitsSource;
import io.github.ratelimit.test.NoBlockingOnEventLoops;
import io.github.ratelimit.test.RedisServer;
import io.github.ratelimit.test.TcpProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which thread each step of a WebFlux request decided on Redis runs on: the handler on the request's own event loop
 * after Redis answered and after Redis timed out (never on Lettuce's I/O thread or the JVM's timer), the application's
 * code a policy calls (a bean in a key expression, a tenant source) off the event loop, a cost settled after the
 * response on Reactor's bounded elastic scheduler, and nothing blocking on an
 * event loop (BlockHound) while requests are admitted, rejected, given back, settled, looked up per tenant and decided
 * under a policy changed at run time.
 */
@ExtendWith(NoBlockingOnEventLoops.class)
class ReactiveThreadsIntegrationTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void theHandlerRunsOnTheRequestsEventLoopAndTheApplicationsCodeOffIt() throws Exception {
		try (RedisServer redis = RedisServer.start(); ConfigurableApplicationContext app = run(redis.port(), "2s")) {
			Threads threads = app.getBean(Threads.class);
			for (int i = 0; i < 3; i++) {
				HttpResponse<String> response = get(app, "/threads/" + i);
				assertThat(response.statusCode()).isEqualTo(200);
				assertThat(response.body()).as("the handler's thread, after Redis answered").startsWith("reactor-http");
			}
			assertThat(threads.keyBean).as("the key expression's bean, which sleeps").isNotEmpty()
				.allMatch((thread) -> thread.startsWith("boundedElastic"));
			assertThat(get(app, "/tenants/acme").statusCode()).isEqualTo(200);
			assertThat(threads.tenantSource).as("the tenant source, which sleeps").isNotEmpty()
				.noneMatch((thread) -> thread.startsWith("reactor-http"));
		}
	}

	@Test
	void aKeyBeanRunsOffTheEventLoopAlsoWhenItsTenantsLookupAnswersLaterOrTimesOut() throws Exception {
		try (RedisServer redis = RedisServer.start(); ConfigurableApplicationContext app = run(redis.port(), "2s")) {
			Threads threads = app.getBean(Threads.class);
			// 'slow' is looked up for longer than ratelimit.tenants.timeout; 'acme' answers within it, but later.
			assertThat(get(app, "/tenant-keys/slow").statusCode()).isEqualTo(200);
			assertThat(get(app, "/tenant-keys/acme").statusCode()).isEqualTo(200);
			assertThat(threads.keyBean).as("the key expression's bean, after the lookups").isNotEmpty()
				.allMatch((thread) -> thread.startsWith("boundedElastic"));
		}
	}

	@Test
	void afterRedisTimedOutTheRequestGoesOnOnItsEventLoop() throws Exception {
		try (RedisServer redis = RedisServer.start(); TcpProxy proxy = TcpProxy.to(redis.host(), redis.port());
				ConfigurableApplicationContext app = run(proxy.port(), "100ms")) {
			assertThat(get(app, "/threads/warm").statusCode()).isEqualTo(200);
			proxy.hold(true);
			HttpResponse<String> response = get(app, "/threads/held");
			assertThat(response.statusCode()).as("failure mode allow").isEqualTo(200);
			assertThat(response.body()).as("the handler's thread, after the timeout").startsWith("reactor-http");
			proxy.hold(false);
		}
	}

	@Test
	void nothingBlocksAnEventLoopWhileRequestsAreRejectedGivenBackSettledAndChanged() throws Exception {
		try (RedisServer redis = RedisServer.start(); ConfigurableApplicationContext app = run(redis.port(), "2s")) {
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				// 'pair-inner' rejects the third: what 'pair-outer' took is given back.
				statuses.add(get(app, "/pair").statusCode());
				statuses.add(get(app, "/metered").statusCode());
				statuses.add(get(app, "/tenants/globex").statusCode());
			}
			assertThat(statuses).contains(200, 429);
			app.getBean(RuntimeChanges.class).change("pair-inner", Map.of("limit", "10"));
			assertThat(get(app, "/pair").statusCode()).as("under the changed limit").isEqualTo(200);
			Set<String> settledOn = app.getBean(Threads.class).settle;
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (settledOn.size() < 1 && System.nanoTime() < deadline) {
				Thread.sleep(10); // settled after the response, off the request's path
			}
			assertThat(settledOn).as("the settle expression's threads").isNotEmpty()
				.allMatch((thread) -> thread.startsWith("boundedElastic"));
		}
	}

	private static ConfigurableApplicationContext run(int redisPort, String timeout) {
		SpringApplication application = new SpringApplication(ThreadsApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		return application.run("--server.port=0", "--ratelimit.store=redis", "--spring.data.redis.host=127.0.0.1",
				"--spring.data.redis.port=" + redisPort, "--ratelimit.redis.key-prefix=threads-" + System.nanoTime(),
				"--ratelimit.redis.timeout=" + timeout, "--ratelimit.tenants.timeout=200ms");
	}

	private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
		URI uri = URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + path);
		return this.client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class ThreadsApplication {

		/** Spring Security is on this module's test class path: everything is open, behind its web filter chain. */
		@Bean
		SecurityWebFilterChain openChain(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

		@Bean
		Threads threads() {
			return new Threads();
		}

		@Bean
		ThreadsController threadsController() {
			return new ThreadsController();
		}

		@Bean
		TenantLimitsSource tenantLimitsSource(Threads threads) {
			return (policy, tenant) -> {
				threads.tenantSource.add(Thread.currentThread().getName());
				threads.sleep(tenant.equals("slow") ? 500 : 5);
				return tenant.equals("acme") ? TenantLimits.ofLimit(5) : null;
			};
		}

	}

	/** What ran where; a bean that blocks, as one querying a database does. */
	static class Threads {

		final Set<String> keyBean = ConcurrentHashMap.newKeySet();

		final Set<String> tenantSource = ConcurrentHashMap.newKeySet();

		final Set<String> settle = ConcurrentHashMap.newKeySet();

		public int settled(String result) {
			this.settle.add(Thread.currentThread().getName());
			return result.length();
		}

		public String keyOf(String id) {
			this.keyBean.add(Thread.currentThread().getName());
			sleep(5);
			return "key-" + id;
		}

		void sleep(long millis) {
			try {
				Thread.sleep(millis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	@RestController
	static class ThreadsController {

		@RateLimited(name = "threads", limit = 100, window = "1h", key = "@threads.keyOf(#id)")
		@GetMapping("/threads/{id}")
		Mono<String> threads(@PathVariable String id) {
			return Mono.fromSupplier(() -> Thread.currentThread().getName());
		}

		@RateLimited(name = "tenants", limit = 2, window = "1h", key = "#tenant", tenant = "#tenant")
		@GetMapping("/tenants/{tenant}")
		Mono<String> tenants(@PathVariable String tenant) {
			return Mono.just(tenant);
		}

		@RateLimited(name = "tenant-keys", limit = 100, window = "1h", key = "@threads.keyOf(#tenant)",
				tenant = "#tenant")
		@GetMapping("/tenant-keys/{tenant}")
		Mono<String> tenantKeys(@PathVariable String tenant) {
			return Mono.just(tenant);
		}

		@RateLimited(name = "pair-outer", limit = 100, window = "1h", key = "'pair'")
		@RateLimited(name = "pair-inner", limit = 2, window = "1h", key = "'pair'")
		@GetMapping("/pair")
		Mono<String> pair() {
			return Mono.just("pair");
		}

		@RateLimited(name = "metered", algorithm = Algorithm.TOKEN_BUCKET, limit = 100, window = "1h", cost = "5",
				key = "'metered'", settle = "@threads.settled(#result)")
		@GetMapping("/metered")
		Mono<String> metered() {
			return Mono.just("twelve chars");
		}

	}

}
