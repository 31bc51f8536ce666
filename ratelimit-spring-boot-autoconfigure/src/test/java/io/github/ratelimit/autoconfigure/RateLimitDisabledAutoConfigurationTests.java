package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Proxy;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import io.github.ratelimit.client.OutboundRateLimits;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitTenants;
import io.github.ratelimit.engine.TenantLimits;
import io.github.ratelimit.engine.TenantLimitsSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.metrics.RateLimitMetrics;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.put;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code ratelimit.enabled=false}, the kill switch: every bean an application may inject is there and limits nothing,
 * on Spring MVC and WebFlux, and no store is created or contacted (Spring Cloud Gateway's are in
 * {@link RateLimitGatewayAutoConfigurationTests}, which run with the gateway on the class path).
 */
class RateLimitDisabledAutoConfigurationTests {

	private static final RateLimitPolicy ONE_A_MINUTE = RateLimitPolicy.builder("p")
		.limit(1)
		.window(Duration.ofMinutes(1))
		.build();

	private final AutoConfigurations rateLimit = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitDisabledAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class,
			RateLimitEndpointAutoConfiguration.class);

	private final WebApplicationContextRunner servlet = WebTestSupport.webApplication()
		.withConfiguration(this.rateLimit)
		.withPropertyValues("ratelimit.enabled=false");

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(this.rateLimit)
		.withPropertyValues("ratelimit.enabled=false");

	@Test
	void theLimiterAdmitsEveryRequestAndTheRedisItWouldUseIsNeverAsked() {
		List<String> asked = new CopyOnWriteArrayList<>();
		this.servlet.withPropertyValues("ratelimit.store=redis")
			.withBean(RedisConnectionFactory.class, () -> redisThatRecords(asked))
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitStore.class);
				RateLimiter limiter = context.getBean(RateLimiter.class);
				for (int i = 0; i < 3; i++) {
					assertThat(limiter.tryAcquire(ONE_A_MINUTE, "k").allowed()).isTrue();
				}
				limiter.reset(ONE_A_MINUTE, "k");
				limiter.clear();
				assertThat(asked).isEmpty();
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aWarningAtStartUpSaysThatNothingIsLimited(CapturedOutput output) {
		this.servlet.run((context) -> assertThat(output)
			.contains("Rate limiting is switched off (ratelimit.enabled=false): no request is limited"));
	}

	@Test
	void theLimiterIsThereOutsideOfAWebApplicationToo() {
		new ApplicationContextRunner().withConfiguration(this.rateLimit)
			.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context.getBean(RateLimiter.class).tryAcquire(ONE_A_MINUTE, "k", 2).allowed())
				.isTrue());
	}

	@Test
	void theTenantsAreThereAndNoTenantIsLookedUp() {
		AtomicInteger lookups = new AtomicInteger();
		TenantLimitsSource source = (policy, tenant) -> {
			lookups.incrementAndGet();
			return TenantLimits.ofLimit(1);
		};
		this.servlet.withUserConfiguration(TenantAdmin.class)
			.withBean(TenantLimitsSource.class, () -> source)
			.run((context) -> {
				RateLimitTenants tenants = context.getBean(RateLimitTenants.class);
				tenants.evict("acme");
				tenants.evictAll();
				WebTestSupport.mockMvc(context).perform(put("/tenants/acme")).andExpect(status().isOk());
				for (int i = 0; i < 3; i++) {
					WebTestSupport.mockMvc(context).perform(get("/tenants/acme/reports")).andExpect(status().isOk());
				}
				assertThat(lookups).hasValue(0);
			});
	}

	/** A worker or a gRPC service, not a web application, injects what it injects with limits on. */
	@Test
	void outsideOfAWebApplicationTheTenantsAndTheOutboundLimitsAreThereAndLimitNothing() {
		new ApplicationContextRunner().withConfiguration(this.rateLimit)
			.withPropertyValues("ratelimit.enabled=false")
			.withBean(TenantLimitsSource.class, () -> (policy, tenant) -> TenantLimits.ofLimit(1))
			.withPropertyValues("ratelimit.policies.partner.limit=1", "ratelimit.policies.partner.window=1h")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitTenants.class).hasSingleBean(OutboundRateLimits.class);
				ClientHttpRequestInterceptor limited = context.getBean(OutboundRateLimits.class).interceptor("partner");
				MockClientHttpRequest request = new MockClientHttpRequest(HttpMethod.GET,
						URI.create("https://partner.example/orders"));
				for (int i = 0; i < 3; i++) {
					assertThat(limited.intercept(request, new byte[0],
							(sent, body) -> new MockClientHttpResponse(new byte[0], HttpStatus.OK))
						.getStatusCode()).isEqualTo(HttpStatus.OK);
				}
			});
	}

	@Test
	void withoutATenantsSourceThereAreNoTenantsAsWithLimitsOn() {
		this.servlet.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitTenants.class));
	}

	@Test
	void onSpringMvcARateLimitedMethodRunsUnproxiedAndItsStatusArgumentHasNoLimits() {
		this.servlet.withUserConfiguration(Limited.class).run((context) -> {
			assertThat(AopUtils.isAopProxy(context.getBean(Limited.class))).isFalse();
			for (int i = 0; i < 3; i++) {
				WebTestSupport.mockMvc(context)
					.perform(get("/limited"))
					.andExpect(status().isOk())
					.andExpect(content().string("limits: 0"))
					.andExpect(header().doesNotExist("RateLimit-Limit"))
					.andExpect(header().doesNotExist("RateLimit-Policy"))
					.andExpect(header().doesNotExist("RateLimit"));
			}
		});
	}

	@Test
	void onWebFluxARateLimitedMethodRunsUnproxiedAndItsStatusArgumentHasNoLimits() {
		this.reactive.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class))
			.withUserConfiguration(ReactiveLimited.class)
			.run((context) -> {
				assertThat(context).doesNotHaveBean(RateLimitWebFilter.class);
				assertThat(AopUtils.isAopProxy(context.getBean(ReactiveLimited.class))).isFalse();
				WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
				for (int i = 0; i < 3; i++) {
					client.get()
						.uri("/limited")
						.exchange()
						.expectStatus()
						.isOk()
						.expectHeader()
						.doesNotExist("RateLimit-Limit")
						.expectBody(String.class)
						.isEqualTo("limits: 0");
				}
			});
	}

	@Test
	void nothingDecidesCountsOrReportsLimits() {
		this.servlet.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitEngine.class)
				.doesNotHaveBean(PolicyCatalog.class)
				.doesNotHaveBean(RateLimitedAnnotationBeanPostProcessor.class)
				.doesNotHaveBean(FilterRegistrationBean.class)
				.doesNotHaveBean(RateLimitMetrics.class)
				.doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void theApplicationsOwnBeansWin() {
		RateLimiter own = RateLimiter.unlimited();
		this.servlet.withBean("ownLimiter", RateLimiter.class, () -> own)
			.run((context) -> assertThat(context.getBean(RateLimiter.class)).isSameAs(own));
	}

	@Test
	void withLimitsOnNothingOfItIsThere() {
		WebTestSupport.webApplication()
			.withConfiguration(this.rateLimit)
			.run((context) -> assertThat(context.getBean(RateLimiter.class).tryAcquireAll(
					List.of(new io.github.ratelimit.store.Acquisition(ONE_A_MINUTE, "k", 2)))
				.allowed()).as("a cost beyond the capacity, rejected by a limiter that limits")
				.isFalse());
	}

	/** A Redis that records what it is asked, and answers nothing. */
	private static RedisConnectionFactory redisThatRecords(List<String> asked) {
		return (RedisConnectionFactory) Proxy.newProxyInstance(RedisConnectionFactory.class.getClassLoader(),
				new Class<?>[] { RedisConnectionFactory.class }, (proxy, method, arguments) -> {
					if (method.getDeclaringClass() == Object.class) {
						return switch (method.getName()) {
							case "equals" -> proxy == arguments[0];
							case "hashCode" -> System.identityHashCode(proxy);
							default -> "RedisThatRecords";
						};
					}
					asked.add(method.getName());
					throw new IllegalStateException("Redis asked " + method.getName() + " with limits off");
				});
	}

	@RestController
	static class Limited {

		@RateLimited(name = "limited", limit = 1, window = "1m")
		@GetMapping("/limited")
		String limited(RateLimitStatus status) {
			return "limits: " + status.limits().size();
		}

	}

	@RestController
	static class ReactiveLimited {

		@RateLimited(name = "limited", limit = 1, window = "1m")
		@GetMapping("/limited")
		Mono<String> limited(RateLimitStatus status) {
			return Mono.fromSupplier(() -> "limits: " + status.limits().size());
		}

	}

	/** What an application with tenants does: limits per tenant, and an endpoint that evicts a changed one. */
	@Configuration(proxyBeanMethods = false)
	static class TenantAdmin {

		@Bean
		TenantController tenantController(RateLimitTenants tenants) {
			return new TenantController(tenants);
		}

	}

	@RestController
	static class TenantController {

		private final RateLimitTenants tenants;

		TenantController(RateLimitTenants tenants) {
			this.tenants = tenants;
		}

		@RateLimited(name = "reports", limit = 1, window = "1m", key = "#tenant", tenant = "#tenant")
		@GetMapping("/tenants/{tenant}/reports")
		String reports(@org.springframework.web.bind.annotation.PathVariable String tenant) {
			return tenant;
		}

		@org.springframework.web.bind.annotation.PutMapping("/tenants/{tenant}")
		String evict(@org.springframework.web.bind.annotation.PathVariable String tenant) {
			this.tenants.evict(tenant);
			return tenant;
		}

	}

}
