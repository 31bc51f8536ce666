package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.client.OutboundRateLimits;
import io.github.ratelimit.engine.RateLimitTenants;
import io.github.ratelimit.engine.TenantLimitsSource;
import io.github.ratelimit.gateway.ClientIpKeyResolver;
import io.github.ratelimit.gateway.GatewayRateLimiter;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.ClientIpResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cache.support.NoOpCache;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Fallback;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;

/**
 * {@link EnableAutoConfiguration Auto-configuration} with limits switched off ({@code ratelimit.enabled=false}, the
 * lever an operator pulls in an emergency): each bean an application may inject is there, as with limits on, and limits
 * nothing. The {@link RateLimiter} admits every request, {@link RateLimitTenants} looks no tenant up, a
 * {@code RateLimitStatus} argument has no limits, {@link OutboundRateLimits} lets every call go, and a gateway's
 * {@code gatewayRateLimiter} admits every route. No
 * store is there to contact, no {@code @RateLimited} bean is proxied, no filter registered and nothing counted.
 *
 * @since 0.3.0
 */
@AutoConfiguration(beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", havingValue = false)
@Import({ RateLimitStatusConfigurations.WebMvc.class, RateLimitStatusConfigurations.WebFlux.class })
public final class RateLimitDisabledAutoConfiguration {

	private static final Log logger = LogFactory.getLog(RateLimitDisabledAutoConfiguration.class);

	/** Said once at start-up: an application that limits in code (a login throttle) runs unlimited too. */
	RateLimitDisabledAutoConfiguration() {
		logger.warn("Rate limiting is switched off (ratelimit.enabled=false): no request is limited and no store is "
				+ "asked; an injected RateLimiter admits everything");
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter() {
		return RateLimiter.unlimited();
	}

	/** As with limits on, with a source of tenants' limits. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RateLimitTenants.class)
	static class Tenants {

		@Bean
		@ConditionalOnBean(TenantLimitsSource.class)
		@ConditionalOnMissingBean
		RateLimitTenants rateLimitTenants(TenantLimitsSource source) {
			// No engine asks for a tenant's limits, and no answer is kept for evict to drop.
			return new RateLimitTenants(source, new NoOpCache("ratelimit-tenants"), Duration.ZERO, Duration.ZERO, 1);
		}

	}

	/** As with limits on, with the client module: clients built with its limits call as without them. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(OutboundRateLimits.class)
	static class Outbound {

		@Bean
		@ConditionalOnMissingBean
		OutboundRateLimits outboundRateLimits() {
			return OutboundRateLimits.unlimited();
		}

	}

	/** As with limits on, in a reactive Spring Cloud Gateway: the beans its routes name. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(name = { "io.github.ratelimit.gateway.GatewayRateLimiter",
			"org.springframework.cloud.gateway.filter.ratelimit.RateLimiter",
			"org.springframework.cloud.gateway.config.GatewayProperties" })
	@ConditionalOnBooleanProperty(name = "spring.cloud.gateway.server.webflux.enabled", matchIfMissing = true)
	@EnableConfigurationProperties(RateLimitProperties.class)
	static class Gateway {

		@Bean(GatewayRateLimiter.BEAN_NAME)
		@Primary
		@ConditionalOnMissingBean(GatewayRateLimiter.class)
		GatewayRateLimiter gatewayRateLimiter() {
			return GatewayRateLimiter.unlimited();
		}

		/**
		 * Keys by the client's address still: a route may give the key to another limiter (the gateway's
		 * {@code RedisRateLimiter}), which must not count every client as one.
		 */
		@Bean(ClientIpKeyResolver.BEAN_NAME)
		@Fallback
		@ConditionalOnMissingBean(ClientIpKeyResolver.class)
		ClientIpKeyResolver clientIpKeyResolver(ObjectProvider<ClientIpResolver> clientIpResolver,
				RateLimitProperties properties) {
			return new ClientIpKeyResolver(
					clientIpResolver.getIfAvailable(() -> RateLimitEngineConfiguration.clientIpResolverOf(properties)));
		}

	}

}
