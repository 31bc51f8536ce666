package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

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

}
