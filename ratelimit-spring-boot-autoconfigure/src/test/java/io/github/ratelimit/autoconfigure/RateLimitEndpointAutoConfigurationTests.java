package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.actuate.OpenWritesWarning;
import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.actuate.RateLimitsEndpoint.PolicyDescriptor;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitEndpointAutoConfigurationTests {

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication()
		.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class));

	@Test
	void theEndpointIsDefinedWhenExposed() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class));
	}

	@Test
	void grantedWritesWithoutSpringSecurityAreWarnedOfAtStartUp() {
		ClassLoader withoutSecurity = new FilteredClassLoader("org.springframework.security");
		assertThat(OpenWritesWarning.warnIfOpen((id, fallback) -> Access.UNRESTRICTED, withoutSecurity)).isTrue();
		assertThat(OpenWritesWarning.warnIfOpen((id, fallback) -> Access.READ_ONLY, withoutSecurity)).isFalse();
		assertThat(OpenWritesWarning.warnIfOpen((id, fallback) -> Access.UNRESTRICTED, getClass().getClassLoader()))
			.as("Spring Security is there").isFalse();
	}

	@Test
	void theEndpointIsNotDefinedUnlessExposed() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void theEndpointIsNotDefinedWithoutActuator() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void theApplicationsOwnEndpointWins() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withBean("ownEndpoint", RateLimitsEndpoint.class,
					() -> new RateLimitsEndpoint(io.github.ratelimit.engine.PolicyCatalog.builder().build(),
							io.github.ratelimit.limiter.RateLimiter.of(
									io.github.ratelimit.memory.InMemoryRateLimitStore.builder().build())))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class).hasBean("ownEndpoint"));
	}

	@Test
	void theEndpointShowsWhatEachLimitIsForFromTheAnnotationOrItsPropertyWithItsSource() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.policies.exports.description=Exports are costly: one a minute per user")
			.withUserConfiguration(DescribedLimits.class)
			.run((context) -> {
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				PolicyDescriptor orders = endpoint.policy("orders");
				assertThat(orders).isNotNull();
				assertThat(orders.description()).isEqualTo("Orders a user may list");
				assertThat(orders.sources()).containsEntry("description", "annotation");
				PolicyDescriptor exports = endpoint.policy("exports");
				assertThat(exports).isNotNull();
				assertThat(exports.description()).isEqualTo("Exports are costly: one a minute per user");
				assertThat(exports.sources()).containsEntry("description", "ratelimit.policies.exports.description");
				assertThat(exports.limit()).isEqualTo(1);
				PolicyDescriptor plain = endpoint.policy("plain");
				assertThat(plain).isNotNull();
				assertThat(plain.description()).isNull();
				assertThat(plain.sources()).containsEntry("description", "default").doesNotContainKey("zone");
			});
	}

	@Test
	void theEndpointShowsACalendarWindowAsConfiguredAndWhereItsZoneCameFrom() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.policies.exports.window=1M", "ratelimit.policies.exports.zone=Europe/Berlin",
					"ratelimit.policies.orders.window=1w")
			.withUserConfiguration(DescribedLimits.class)
			.run((context) -> {
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				PolicyDescriptor exports = endpoint.policy("exports");
				assertThat(exports).isNotNull();
				assertThat(exports.window()).isEqualTo("1M in Europe/Berlin");
				assertThat(exports.sources()).containsEntry("window", "ratelimit.policies.exports.window")
					.containsEntry("zone", "ratelimit.policies.exports.zone");
				PolicyDescriptor orders = endpoint.policy("orders");
				assertThat(orders).isNotNull();
				assertThat(orders.window()).isEqualTo("1w in UTC");
				assertThat(orders.sources()).containsEntry("zone", "default");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class DescribedLimits {

		@Bean
		DescribedService describedService() {
			return new DescribedService();
		}

	}

	static class DescribedService {

		@RateLimited(name = "orders", limit = 10, window = "1m", description = "Orders a user may list")
		public String orders() {
			return "orders";
		}

		@RateLimited(name = "exports", limit = 1, window = "1m", description = "Exports")
		public String exports() {
			return "exports";
		}

		@RateLimited(name = "plain", limit = 5, window = "1m")
		public String plain() {
			return "plain";
		}

	}

}
