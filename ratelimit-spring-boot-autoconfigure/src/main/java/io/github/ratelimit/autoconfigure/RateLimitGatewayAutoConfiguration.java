package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.gateway.ClientIpKeyResolver;
import io.github.ratelimit.gateway.GatewayRateLimiter;
import io.github.ratelimit.gateway.NormalizedPathFilter;
import io.github.ratelimit.gateway.PathCaseFilter;
import io.github.ratelimit.gateway.RateLimitProblemFilter;
import io.github.ratelimit.gateway.RouteLimitsLogger;
import io.github.ratelimit.web.ClientIpResolver;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Fallback;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;

/**
 * The engine in Spring Cloud Gateway (server-webflux): the limiter of the {@code RequestRateLimiter} filter, a key
 * resolver of the client's address, the problem of a rejected route, the refusal of a path spelled to miss a limit,
 * each route's limit logged. Before the gateway's configuration, whose filter factory needs a limiter and resolver.
 * <p>
 * The limiter is the filter's default ({@code @Primary}): a route that wants the gateway's own
 * {@code RedisRateLimiter} names it with {@code rate-limiter: "#{@redisRateLimiter}"}. The key resolver is the
 * default only while the application defines none of its own ({@code @Fallback}); a route names it with
 * {@code key-resolver: "#{@clientIpKeyResolver}"}.
 *
 * @since 0.2.0
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ GatewayRateLimiter.class, RateLimiter.class, GatewayProperties.class })
@ConditionalOnBooleanProperty(name = "spring.cloud.gateway.server.webflux.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimitEngine.class)
@Import({ RouteLimitsLogger.class, RateLimitGatewayAutoConfiguration.AmbiguousPaths.class })
public final class RateLimitGatewayAutoConfiguration {

	/** Paths spelled to miss a limited route or filter, refused before routing; they do not back off. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "ratelimit.gateway.refuse-ambiguous-paths", matchIfMissing = true)
	@Import({ NormalizedPathFilter.class, PathCaseFilter.class })
	static class AmbiguousPaths {

	}

	@Bean(GatewayRateLimiter.BEAN_NAME)
	@Primary
	@ConditionalOnMissingBean(GatewayRateLimiter.class)
	GatewayRateLimiter gatewayRateLimiter(RateLimitEngine engine, ObjectProvider<GatewayProperties> gatewayProperties) {
		GatewayProperties properties = gatewayProperties.getIfAvailable(GatewayProperties::new);
		return new GatewayRateLimiter(engine, properties.getRoutes(), properties.getDefaultFilters());
	}

	@Bean(ClientIpKeyResolver.BEAN_NAME)
	@Fallback
	@ConditionalOnMissingBean(ClientIpKeyResolver.class)
	ClientIpKeyResolver clientIpKeyResolver(ClientIpResolver clientIpResolver) {
		return new ClientIpKeyResolver(clientIpResolver);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitProblemFilter rateLimitProblemFilter() {
		return new RateLimitProblemFilter();
	}

}
