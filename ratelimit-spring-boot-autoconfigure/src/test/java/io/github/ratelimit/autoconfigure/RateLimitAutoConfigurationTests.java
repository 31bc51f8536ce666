package io.github.ratelimit.autoconfigure;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.RateLimitInterceptor;
import io.github.ratelimit.client.OutboundRateLimits;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.metrics.RateLimitMetrics;
import io.github.ratelimit.webmvc.RateLimitExceptionHandler;
import io.github.ratelimit.webmvc.RateLimitFilter;
import io.github.ratelimit.webmvc.ServletRateLimitRequest;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.Ordered;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.ControllerAdviceBean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class));

	@Test
	void theRedisAutoConfigurationItIsOrderedAfterExists() {
		assertThat(ClassUtils.isPresent("org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
				getClass().getClassLoader()))
			.isTrue();
	}

	@Test
	void aLazyBeansPoliciesAreCheckedAtStartUpAndItsLimitsApplyOnceItIsCreated() {
		this.runner.withPropertyValues("ratelimit.store=memory").withUserConfiguration(LazyLimited.class)
			.run((context) -> {
				assertThat(context.getBean(PolicyCatalog.class).policy("lazy-reports"))
					.as("before the bean is created").isNotNull();
				LazyReports reports = context.getBean(LazyReports.class);
				assertThat(reports.report()).isEqualTo("report");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(reports::report);
			});
	}

	@Test
	void theFilterIsRegisteredWithoutFiltersToSettleWhatCountsByOutcomeFromTheStatusTheClientGets() {
		this.runner.withPropertyValues("ratelimit.store=memory").run((context) -> {
			FilterRegistrationBean<?> registration = context.getBean("rateLimitFilterRegistration",
					FilterRegistrationBean.class);
			assertThat(registration.isEnabled()).isTrue();
			assertThat(((RateLimitFilter) registration.getFilter()).hasFilters()).isFalse();
		});
	}

	@Test
	void theFilterLayerRunsJustBeforeSpringSecurityOnceAFilterIsConfigured() {
		this.runner
			.withPropertyValues("ratelimit.store=memory", "ratelimit.filters.edge.paths=/api/**",
					"ratelimit.filters.edge.limit=100", "ratelimit.filters.edge.window=1s")
			.run((context) -> {
				FilterRegistrationBean<?> registration = context.getBean("rateLimitFilterRegistration",
						FilterRegistrationBean.class);
				assertThat(registration.isEnabled()).isTrue();
				assertThat(registration.getOrder()).isEqualTo(-110);
				assertThat(((RateLimitFilter) registration.getFilter()).filterNames()).containsExactly("edge");
			});
	}

	@Test
	void theFilterLayersOrderIsConfigurable() {
		this.runner
			.withPropertyValues("ratelimit.store=memory", "ratelimit.filter-order=5",
					"ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.limit=100",
					"ratelimit.filters.edge.window=1s")
			.run((context) -> assertThat(context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
				.getOrder()).isEqualTo(5));
	}

	@Test
	void filtersAreDecidedInTheirOrderThenByName() {
		this.runner
			.withPropertyValues("ratelimit.store=memory", "ratelimit.filters.late.paths=/**",
					"ratelimit.filters.late.limit=100", "ratelimit.filters.late.window=1s",
					"ratelimit.filters.late.order=2", "ratelimit.filters.early.paths=/**",
					"ratelimit.filters.early.limit=100", "ratelimit.filters.early.window=1s",
					"ratelimit.filters.early.order=1", "ratelimit.filters.also-early.paths=/**",
					"ratelimit.filters.also-early.limit=100", "ratelimit.filters.also-early.window=1s",
					"ratelimit.filters.also-early.order=1")
			.run((context) -> assertThat(((RateLimitFilter) context
				.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
				.getFilter()).filterNames()).containsExactly("also-early", "early", "late"));
	}

	@Test
	void aDisabledFilterIsLeftOut() {
		this.runner
			.withPropertyValues("ratelimit.store=memory", "ratelimit.filters.edge.paths=/api/**",
					"ratelimit.filters.edge.limit=100", "ratelimit.filters.edge.window=1s",
					"ratelimit.filters.edge.enabled=false", "ratelimit.filters.other.paths=/**",
					"ratelimit.filters.other.limit=100", "ratelimit.filters.other.window=1s")
			.run((context) -> assertThat(((RateLimitFilter) context
				.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
				.getFilter()).filterNames()).containsExactly("other"));
	}

	@Test
	void aFilterRegistrationOfTheUsersOwnWins() {
		this.runner.withPropertyValues("ratelimit.store=memory")
			.withBean("rateLimitFilterRegistration", FilterRegistrationBean.class, FilterRegistrationBean::new)
			.run((context) -> assertThat(context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
				.getFilter()).isNull());
	}

	@Test
	void usesTheInMemoryStoreWhenRedisIsNotOnTheClasspath() {
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
				.hasSingleBean(RateLimiter.class)
				.doesNotHaveBean(RedisRateLimitStore.class));
	}

	@Test
	void usesTheInMemoryStoreWhenTheRedisStoreModuleIsNotOnTheClasspath() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(RedisRateLimitStore.class))
			.withPropertyValues("spring.data.redis.port=1")
			.run((context) -> assertThat(context).hasSingleBean(RedisConnectionFactory.class)
				.hasSingleBean(InMemoryRateLimitStore.class)
				.doesNotHaveBean(RedisRateLimitStore.class));
	}

	@Test
	void storeRedisWithoutTheRedisStoreModuleFailsToStartNamingTheModule() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(RedisRateLimitStore.class))
			.withPropertyValues("ratelimit.store=redis", "spring.data.redis.port=1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessage("ratelimit.store is 'redis' but io.github.ratelimit:ratelimit-redis is not on the classpath"));
	}

	@Test
	void usesTheInMemoryStoreWhenThereIsNoRedisConnectionFactory() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class));
	}

	@Test
	void usesTheRedisStoreWhenARedisConnectionFactoryExists() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=1")
			.run((context) -> assertThat(context).hasSingleBean(RedisRateLimitStore.class)
				.doesNotHaveBean(InMemoryRateLimitStore.class));
	}

	@Test
	void storeMemoryIgnoresAnAvailableRedis() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
				.doesNotHaveBean(RedisRateLimitStore.class));
	}

	@Test
	void storeRedisWithoutARedisConnectionFactoryFailsToStartWithAnExplanation() {
		this.runner.withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessage("ratelimit.store is 'redis' but no RedisConnectionFactory bean is available"));
	}

	@Test
	void redisStoreSettingsAreBound() {
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("ratelimit.redis.key-prefix=", "spring.data.redis.port=1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.redis.key-prefix"));
	}

	@Test
	void aTrustedProxyThatIsNotAnAddressOrBlockFailsStartUpNamingItsPlace() {
		this.runner.withPropertyValues("ratelimit.client-ip.trusted-proxies=10.0.0.0/8,proxy.internal")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.client-ip.trusted-proxies[1]")
				.hasMessageContaining("'proxy.internal' is not an IP address or a CIDR block"));
	}

	@Test
	void theDefaultClientIpResolverTrustsTheConfiguredProxies() {
		this.runner.withPropertyValues("ratelimit.client-ip.trusted-proxies=10.0.0.0/8").run((context) -> {
			org.springframework.mock.web.MockHttpServletRequest request = new org.springframework.mock.web.MockHttpServletRequest();
			request.setRemoteAddr("10.1.1.1");
			request.addHeader("X-Forwarded-For", "203.0.113.4");
			assertThat(context.getBean(ClientIpResolver.class).resolve(ServletRateLimitRequest.of(request, null)))
				.isEqualTo("203.0.113.4");
		});
	}

	@Test
	void memoryMaxKeysMustBePositive() {
		this.runner.withPropertyValues("ratelimit.memory.max-keys=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.memory.max-keys")
				.hasMessageContaining("Must be at least 1"));
	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnBeans() {
		this.runner.withUserConfiguration(CustomBeans.class).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isSameAs(context.getBean("customStore"));
			assertThat(context.getBean(RateLimitHeadersWriter.class)).isSameAs(context.getBean("customHeaders"));
			assertThat(context.getBean(ClientIpResolver.class)).isSameAs(context.getBean("customClientIp"));
			assertThat(context.getBean(TimeSource.class)).isSameAs(context.getBean("customClock"));
		});
	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnRateLimiter() {
		RateLimiter limiter = RateLimiter.of(InMemoryRateLimitStore.create(10));
		this.runner.withBean(RateLimiter.class, () -> limiter)
			.run((context) -> assertThat(context.getBean(RateLimiter.class)).isSameAs(limiter));
	}

	/** What stays, limiting nothing (the limiter here), is RateLimitDisabledAutoConfigurationTests's. */
	@Test
	void limitsNothingWhenDisabled() {
		this.runner.withConfiguration(AutoConfigurations.of(RateLimitDisabledAutoConfiguration.class))
			.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitStore.class)
				.doesNotHaveBean(RateLimitInterceptor.class)
				.doesNotHaveBean(PolicyCatalog.class)
				.hasSingleBean(RateLimiter.class));
	}

	/** The engine serves gRPC services and outbound calls too; only a web stack's interceptor needs a web one. */
	@Test
	void outsideOfAWebApplicationTheEngineDecidesAndNoWebInterceptorIsThere() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.run((context) -> assertThat(context).hasSingleBean(RateLimiter.class)
				.hasSingleBean(RateLimitEngine.class)
				.hasSingleBean(OutboundRateLimits.class)
				.doesNotHaveBean(RateLimitInterceptor.class));
	}

	@Test
	void countsDecisionsInTheMeterRegistrySpringBootDefines() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitMetricsAutoConfiguration.class,
					RateLimitAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
					org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitMetrics.class);
				RateLimitPolicy policy = RateLimitPolicy.builder("booted").limit(1).window(java.time.Duration.ofMinutes(1)).build();
				context.getBean(RateLimiter.class).tryAcquire(policy, "k");
				assertThat(context.getBean(MeterRegistry.class)
					.get("ratelimit.decisions")
					.tag("policy", "booted")
					.tag("outcome", "allowed")
					.functionCounter()
					.count()).isEqualTo(1);
			});
	}

	@Test
	void noMetricsWithoutAMeterRegistry() {
		this.runner.run((context) -> assertThat(context)
			.doesNotHaveBean(RateLimitMetrics.class));
	}

	@Test
	void countsDecisionsWithMicrometerWhenAMeterRegistryExists() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			RateLimitPolicy policy = RateLimitPolicy.builder("metered").limit(1).window(java.time.Duration.ofMinutes(1)).build();
			RateLimiter limiter = context.getBean(RateLimiter.class);
			limiter.tryAcquire(policy, "k");
			limiter.tryAcquire(policy, "k");
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("ratelimit.decisions").tag("policy", "metered").tag("outcome", "allowed").functionCounter().count())
				.isEqualTo(1);
			assertThat(registry.get("ratelimit.decisions").tag("policy", "metered").tag("outcome", "rejected").functionCounter().count())
				.isEqualTo(1);
		});
	}

	@Test
	void decisionsOfAPolicyFirstDecidedOnManyThreadsAtOnceAreAllCounted() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			RateLimitPolicy policy = RateLimitPolicy.builder("raced").limit(1_000_000).window(java.time.Duration.ofMinutes(1)).build();
			RateLimiter limiter = context.getBean(RateLimiter.class);
			int threads = 8;
			int perThread = 500;
			java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
			List<Thread> deciders = new java.util.ArrayList<>();
			for (int i = 0; i < threads; i++) {
				Thread decider = new Thread(() -> {
					try {
						start.await(10, java.util.concurrent.TimeUnit.SECONDS);
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
					for (int j = 0; j < perThread; j++) {
						limiter.tryAcquire(policy, "k");
					}
				});
				decider.start();
				deciders.add(decider);
			}
			for (Thread decider : deciders) {
				decider.join(30_000);
			}
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("ratelimit.decisions").tag("policy", "raced").tag("outcome", "allowed")
				.functionCounter().count()).isEqualTo(threads * perThread);
			assertThat(registry.find("ratelimit.decisions").meters()).hasSize(1);
		});
	}

	@Test
	void aSingleListenerIsToldOfEveryDecision() {
		List<Decision> decisions = new java.util.ArrayList<>();
		RateLimitListener listener = new RateLimitListener() {
			@Override
			public void onDecision(RateLimitPolicy policy, Decision decision) {
				decisions.add(decision);
			}
		};
		this.runner.withBean(RateLimitListener.class, () -> listener).run((context) -> {
			RateLimitPolicy policy = RateLimitPolicy.builder("told").limit(2).window(java.time.Duration.ofMinutes(1)).build();
			assertThat(context.getBean(RateLimiter.class).tryAcquire(policy, "k").allowed()).isTrue();
			assertThat(decisions).singleElement().satisfies((decision) -> assertThat(decision.remaining()).isEqualTo(1));
		});
	}

	@Test
	void theExceptionHandlerComesAfterTheApplicationsOwnAdvice() {
		this.runner.withUserConfiguration(ApplicationAdvice.class).run((context) -> {
			List<ControllerAdviceBean> advice = ControllerAdviceBean.findAnnotatedBeans(context);
			assertThat(advice).extracting(ControllerAdviceBean::getBeanType)
				.containsExactly(ApplicationAdvice.class, RateLimitExceptionHandler.class);
			assertThat(context.getBean(RateLimitExceptionHandler.class).getClass()
				.getAnnotation(org.springframework.core.annotation.Order.class)
				.value()).isEqualTo(Ordered.LOWEST_PRECEDENCE);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class CustomBeans {

		@Bean
		RateLimitStore customStore() {
			return new RateLimitStore() {

				@Override
				public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
					return Decision.allowed(policy.limit(), policy.limit() - cost, 0);
				}

				@Override
				public void reset(RateLimitPolicy policy, String key) {
				}

			};
		}

		@Bean
		RateLimitHeadersWriter customHeaders() {
			return (headers, policy, decision) -> headers.set("X-Custom", "1");
		}

		@Bean
		ClientIpResolver customClientIp() {
			return (request) -> "client";
		}

		@Bean
		TimeSource customClock() {
			return () -> 0;
		}

	}

	@RestControllerAdvice
	static class ApplicationAdvice {

		@ExceptionHandler
		ResponseEntity<String> handle(RateLimitExceededException ex) {
			return ResponseEntity.status(429).body("slow down");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LazyLimited {

		@Bean
		@Lazy
		LazyReports lazyReports() {
			return new LazyReports();
		}

	}

	static class LazyReports {

		@RateLimited(name = "lazy-reports", limit = 1, window = "1h")
		public String report() {
			return "report";
		}

	}

}
