package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.client.OutboundRateLimits;
import io.github.ratelimit.engine.RateLimitEngine;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limits on the calls an application makes: there with the client module, on the engine and its run-time changes,
 * and backing off for the application's own.
 */
class OutboundRateLimitsAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=memory");

	@Test
	void theOutboundLimitsAreThereWithTheClientModuleAndAClientBuiltWithThemDeclaresItsPolicy() {
		this.runner.withUserConfiguration(PartnerClient.class)
			.withPropertyValues("ratelimit.policies.partner.limit=5", "ratelimit.policies.partner.window=1m")
			.run((context) -> {
				assertThat(context).hasSingleBean(OutboundRateLimits.class);
				assertThat(context.getBean(RateLimitEngine.class).catalog().policy("partner")).isNotNull();
			});
	}

	@Test
	void aClientWhosePolicyIsNotConfiguredFailsTheStartUpNamingTheProperty() {
		this.runner.withUserConfiguration(PartnerClient.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.policies.partner.limit"));
	}

	@Test
	void withoutTheClientModuleThereAreNone() {
		this.runner.withClassLoader(new FilteredClassLoader(OutboundRateLimits.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboundRateLimits.class));
	}

	@Test
	void theApplicationsOwnAreKept() {
		this.runner.withUserConfiguration(OwnLimits.class).run((context) -> assertThat(context)
			.getBean(OutboundRateLimits.class)
			.isSameAs(context.getBean(OwnLimits.class).limits));
	}

	@Configuration(proxyBeanMethods = false)
	static class PartnerClient {

		@Bean
		RestClient partnerClient(OutboundRateLimits limits) {
			return RestClient.builder().requestInterceptor(limits.interceptor("partner")).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnLimits {

		OutboundRateLimits limits;

		@Bean
		OutboundRateLimits ownOutboundRateLimits(RateLimitEngine engine) {
			this.limits = new OutboundRateLimits(engine, null);
			return this.limits;
		}

	}

}
