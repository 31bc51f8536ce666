package io.github.ratelimit.autoconfigure;

import java.util.List;

import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.gateway.ClientIpKeyResolver;
import io.github.ratelimit.gateway.GatewayRateLimiter;
import io.github.ratelimit.gateway.RateLimitProblemFilter;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conditions of the gateway configuration: in a reactive Spring Cloud Gateway, this library's limiter and key
 * resolver are the {@code RequestRateLimiter} filter's defaults; elsewhere nothing of it is registered; each bean backs
 * off for the application's own; a route's invalid limits fail start-up.
 */
class RateLimitGatewayAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=memory");

	/** With the gateway's own configuration, whose filter factory takes the defaults. */
	private final ReactiveWebApplicationContextRunner runner = this.reactive
		.withConfiguration(AutoConfigurations.of(GatewayAutoConfiguration.class, SslAutoConfiguration.class,
				WebFluxAutoConfiguration.class))
		.withBean(ServerProperties.class);

	@Test
	void inAGatewayTheLimiterAndTheClientIpKeyResolverAreTheRequestRateLimitersDefaults() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(GatewayRateLimiter.class)
				.hasSingleBean(ClientIpKeyResolver.class)
				.hasSingleBean(RateLimitProblemFilter.class);
			RequestRateLimiterGatewayFilterFactory factory = context
				.getBean(RequestRateLimiterGatewayFilterFactory.class);
			assertThat(factory.getDefaultRateLimiter()).isSameAs(context.getBean(GatewayRateLimiter.BEAN_NAME));
			assertThat(factory.getDefaultKeyResolver()).isSameAs(context.getBean(ClientIpKeyResolver.BEAN_NAME));
		});
	}

	@Test
	void theApplicationsOwnKeyResolverIsTheDefaultAndOursStaysThereByName() {
		this.runner.withUserConfiguration(OwnKeyResolver.class).run((context) -> {
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultKeyResolver())
				.isSameAs(context.getBean("userKeyResolver"));
			assertThat(context).hasBean(ClientIpKeyResolver.BEAN_NAME);
		});
	}

	@Test
	void backsOffForTheApplicationsOwnLimiter() {
		this.runner.withUserConfiguration(OwnLimiter.class)
			.run((context) -> assertThat(context).hasSingleBean(GatewayRateLimiter.class).hasBean("ownLimiter"));
	}

	@Test
	void aRouteWithInvalidLimitsFailsStartUpNamingTheRoute() {
		String route = "spring.cloud.gateway.server.webflux.routes[0].";
		this.runner
			.withPropertyValues(route + "id=orders", route + "uri=http://127.0.0.1:1",
					route + "predicates[0]=Path=/orders", route + "filters[0].name=RequestRateLimiter",
					route + "filters[0].args[ratelimit.limit]=10", route + "filters[0].args[ratelimit.window]=soon")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidRateLimitPolicyException.class)
				.hasMessageContaining("route 'orders'")
				.hasMessageContaining("soon"));
	}

	@Test
	void aGatewaySwitchedOffGetsNothingOfIt() {
		this.runner.withPropertyValues("spring.cloud.gateway.server.webflux.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRateLimiter.class)
				.doesNotHaveBean(ClientIpKeyResolver.class));
	}

	@Test
	void withoutSpringCloudGatewayNothingOfItIsRegistered() {
		this.reactive.withClassLoader(new FilteredClassLoader(RateLimiter.class))
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRateLimiter.class)
				.doesNotHaveBean(RateLimitProblemFilter.class));
	}

	@Test
	void aServletApplicationGetsNothingOfIt() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRateLimiter.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnKeyResolver {

		@Bean
		KeyResolver userKeyResolver() {
			return (exchange) -> Mono.just("user");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnLimiter {

		@Bean
		GatewayRateLimiter ownLimiter(RateLimitEngine engine) {
			return new GatewayRateLimiter(engine, List.of(), List.of());
		}

	}

}
