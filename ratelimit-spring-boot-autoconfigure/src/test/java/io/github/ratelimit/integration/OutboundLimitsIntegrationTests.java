package io.github.ratelimit.integration;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.client.OutboundRateLimitException;
import io.github.ratelimit.client.OutboundRateLimits;
import io.github.ratelimit.conformance.ConcurrentTestHarness;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits on outbound calls, against a rate limited service of ours over HTTP: two client instances on one Redis, each
 * limited by the service's own limit, never send it more than that limit between them (it never answers 429), and
 * when the service tightens its limit, the first answer announcing it lowers the limit of both instances.
 */
class OutboundLimitsIntegrationTests {

	private static final AtomicInteger received = new AtomicInteger();

	private static final AtomicInteger tooMany = new AtomicInteger();

	@Test
	void twoInstancesOnOneRedisNeverExceedTheServicesLimitAndFollowItWhenItTightens() throws Exception {
		SpringApplication application = new SpringApplication(ServiceApplication.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		try (RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext service = application.run("--server.port=0",
						"--ratelimit.store=memory", "--ratelimit.headers.style=draft-11")) {
			String base = "http://127.0.0.1:" + service.getEnvironment().getProperty("local.server.port");
			WebApplicationContextRunner client = new WebApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
						RateLimitAutoConfiguration.class))
				.withUserConfiguration(Clients.class)
				.withPropertyValues("spring.data.redis.host=" + redis.host(),
						"spring.data.redis.port=" + redis.port(),
						"ratelimit.redis.key-prefix=outbound-" + System.nanoTime(),
						// The service's limits, as its documentation states them.
						"ratelimit.policies.orders-api.limit=10", "ratelimit.policies.orders-api.window=1h",
						"ratelimit.policies.orders-api.algorithm=sliding-log",
						"ratelimit.policies.quotes-api.limit=10", "ratelimit.policies.quotes-api.window=1h",
						"ratelimit.policies.quotes-api.algorithm=sliding-log");
			client.run((first) -> client.run((second) -> {
				List<ApplicationContext> instances = List.of(first, second);
				// 40 calls at once from both instances: the service's 10, no more.
				Result orders = calls(instances, base + "/orders", "ordersApi", 20);
				assertThat(orders.sent()).isEqualTo(10);
				assertThat(orders.refused()).isEqualTo(30);
				assertThat(received).hasValue(10);
				assertThat(tooMany).as("the service never had to reject").hasValue(0);

				RestClient quotes = first.getBean("quotesApi", RestClient.class);
				quotes.get().uri(base + "/quotes").retrieve().body(String.class);
				service.getBean(RuntimeChanges.class).change("quotes", Map.of("limit", "3"));
				quotes.get().uri(base + "/quotes").retrieve().body(String.class);
				long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
				while ((limit(first, "quotes-api") != 3 || limit(second, "quotes-api") != 3)
						&& System.nanoTime() < deadline) {
					Thread.sleep(20);
				}
				assertThat(limit(first, "quotes-api")).as("the answer announcing 3 an hour").isEqualTo(3);
				assertThat(limit(second, "quotes-api")).as("the other instance, through the store").isEqualTo(3);
				Result tightened = calls(instances, base + "/quotes", "quotesApi", 10);
				assertThat(tightened.sent()).as("3 an hour, 2 of them sent before").isEqualTo(1);
				assertThat(tooMany).as("the service never had to reject").hasValue(0);
			}));
		}
	}

	private static long limit(ApplicationContext instance, String policy) {
		return instance.getBean(PolicyCatalog.class).policy(policy).policy().limit();
	}

	private static Result calls(List<ApplicationContext> instances, String url, String bean, int perInstance) {
		List<RestClient> clients = instances.stream().map((instance) -> instance.getBean(bean, RestClient.class))
			.toList();
		AtomicInteger sent = new AtomicInteger();
		AtomicInteger refused = new AtomicInteger();
		AtomicInteger thread = new AtomicInteger();
		ConcurrentTestHarness.run(2 * instances.size(), () -> {
			RestClient client = clients.get(thread.getAndIncrement() % clients.size());
			for (int i = 0; i < perInstance / 2; i++) {
				try {
					client.get().uri(url).retrieve().body(String.class);
					sent.incrementAndGet();
				}
				catch (OutboundRateLimitException ex) {
					refused.incrementAndGet();
				}
				catch (HttpClientErrorException.TooManyRequests ex) {
					sent.incrementAndGet();
					tooMany.incrementAndGet();
				}
			}
		});
		return new Result(sent.get(), refused.get());
	}

	record Result(int sent, int refused) {
	}

	/** An instance's clients of the service, built as an application builds them: as beans. */
	@Configuration(proxyBeanMethods = false)
	static class Clients {

		@Bean
		RestClient ordersApi(OutboundRateLimits limits) {
			return RestClient.builder()
				.requestFactory(new JdkClientHttpRequestFactory())
				.requestInterceptor(limits.interceptor("orders-api"))
				.build();
		}

		@Bean
		RestClient quotesApi(OutboundRateLimits limits) {
			return RestClient.builder()
				.requestFactory(new JdkClientHttpRequestFactory())
				.requestInterceptor(limits.interceptor("quotes-api"))
				.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(ServiceController.class)
	static class ServiceApplication {

		@Bean
		SecurityFilterChain openChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class ServiceController {

		@GetMapping("/orders")
		@RateLimited(name = "orders", limit = 10, window = "1h")
		String orders() {
			received.incrementAndGet();
			return "orders";
		}

		@GetMapping("/quotes")
		@RateLimited(name = "quotes", limit = 10, window = "1h")
		String quotes() {
			return "quotes";
		}

	}

}
