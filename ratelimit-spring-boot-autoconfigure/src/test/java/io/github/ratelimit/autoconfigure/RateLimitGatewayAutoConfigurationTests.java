package io.github.ratelimit.autoconfigure;

import java.net.InetSocketAddress;
import java.util.List;

import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.gateway.ClientIpKeyResolver;
import io.github.ratelimit.gateway.GatewayRateLimiter;
import io.github.ratelimit.gateway.NormalizedPathFilter;
import io.github.ratelimit.gateway.PathCaseFilter;
import io.github.ratelimit.gateway.RateLimitProblemFilter;
import io.github.ratelimit.gateway.RouteLimitsLogger;
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
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conditions of the gateway configuration: in a reactive Spring Cloud Gateway, this library's limiter and key
 * resolver are the {@code RequestRateLimiter} filter's defaults; elsewhere nothing of it is registered; each bean backs
 * off for the application's own; a route's invalid limits fail start-up. With limits off
 * ({@code ratelimit.enabled=false}), the routes that name the limiter and the key resolver start and are admitted.
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

	/** A gateway whose limits are off. */
	private final ReactiveWebApplicationContextRunner off = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitDisabledAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class,
				GatewayAutoConfiguration.class, SslAutoConfiguration.class, WebFluxAutoConfiguration.class))
		.withBean(ServerProperties.class)
		.withPropertyValues("ratelimit.enabled=false");

	@Test
	void inAGatewayTheLimiterAndTheClientIpKeyResolverAreTheRequestRateLimitersDefaults() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(GatewayRateLimiter.class)
				.hasSingleBean(ClientIpKeyResolver.class)
				.hasSingleBean(RateLimitProblemFilter.class)
				.hasSingleBean(NormalizedPathFilter.class)
				.hasSingleBean(PathCaseFilter.class)
				.hasSingleBean(RouteLimitsLogger.class);
			RequestRateLimiterGatewayFilterFactory factory = context
				.getBean(RequestRateLimiterGatewayFilterFactory.class);
			assertThat(factory.getDefaultRateLimiter()).isSameAs(context.getBean(GatewayRateLimiter.BEAN_NAME));
			assertThat(factory.getDefaultKeyResolver()).isSameAs(context.getBean(ClientIpKeyResolver.BEAN_NAME));
		});
	}

	@Test
	void anApiWithEncodedSlashesInItsPathsCanTurnTheRefusalOfAmbiguousPathsOff() {
		this.runner.withPropertyValues("ratelimit.gateway.refuse-ambiguous-paths=false")
			.run((context) -> assertThat(context).hasSingleBean(GatewayRateLimiter.class)
				.doesNotHaveBean(NormalizedPathFilter.class)
				.doesNotHaveBean(PathCaseFilter.class));
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
				.doesNotHaveBean(RateLimitProblemFilter.class)
				.doesNotHaveBean(NormalizedPathFilter.class)
				.doesNotHaveBean(PathCaseFilter.class));
	}

	@Test
	void aServletApplicationGetsNothingOfIt() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRateLimiter.class));
	}

	@Test
	void withLimitsOffRoutesNamingTheLimiterAndTheKeyResolverStartAndEveryRequestIsAdmitted() {
		String route = "spring.cloud.gateway.server.webflux.routes[0].";
		this.off
			.withPropertyValues(route + "id=resources", route + "uri=http://127.0.0.1:1",
					route + "predicates[0]=Path=/resources", route + "filters[0].name=RequestRateLimiter",
					route + "filters[0].args[rate-limiter]=#{@gatewayRateLimiter}",
					route + "filters[0].args[key-resolver]=#{@clientIpKeyResolver}",
					route + "filters[0].args[ratelimit.limit]=1", route + "filters[0].args[ratelimit.window]=soon")
			.run((context) -> {
				assertThat(context.getBean(RouteLocator.class).getRoutes().collectList().block()).hasSize(1);
				GatewayRateLimiter limiter = context.getBean(GatewayRateLimiter.BEAN_NAME, GatewayRateLimiter.class);
				assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
					.isSameAs(limiter);
				for (int i = 0; i < 3; i++) {
					RateLimiter.Response response = limiter.isAllowed("resources", "198.51.100.1").block();
					assertThat(response.isAllowed()).isTrue();
					assertThat(response.getHeaders()).isEmpty();
				}
				MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/resources")
					.remoteAddress(new InetSocketAddress("198.51.100.1", 40000)));
				assertThat(context.getBean(ClientIpKeyResolver.BEAN_NAME, ClientIpKeyResolver.class)
					.resolve(exchange)
					.block()).as("still the client's address, for a route that gives it to another limiter")
					.isEqualTo("198.51.100.1");
				assertThat(context).doesNotHaveBean(RateLimitEngine.class).doesNotHaveBean(RateLimitProblemFilter.class);
			});
	}

	@Test
	void withLimitsOffTheJavaDslsLimiterOfAPolicyAdmitsEveryRequest() {
		this.off.run((context) -> {
			GatewayRateLimiter orders = context.getBean(GatewayRateLimiter.class)
				.forPolicy("orders", java.util.Map.of("limit", 1, "window", "1m"));
			for (int i = 0; i < 3; i++) {
				assertThat(orders.isAllowed("orders", "u-1").block().isAllowed()).isTrue();
			}
		});
	}

	@Test
	void withLimitsOffTheApplicationsOwnLimiterAndKeyResolverWin() {
		this.off.withUserConfiguration(OwnKeyResolver.class)
			.withBean("ownLimiter", GatewayRateLimiter.class, GatewayRateLimiter::unlimited)
			.run((context) -> {
				assertThat(context).hasSingleBean(GatewayRateLimiter.class).hasBean("ownLimiter");
				assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultKeyResolver())
					.isSameAs(context.getBean("userKeyResolver"));
				assertThat(context).hasBean(ClientIpKeyResolver.BEAN_NAME);
			});
	}

	@Test
	void withLimitsOffAGatewaySwitchedOffGetsNothingOfIt() {
		this.off.withPropertyValues("spring.cloud.gateway.server.webflux.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(GatewayRateLimiter.class)
				.doesNotHaveBean(ClientIpKeyResolver.class));
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
