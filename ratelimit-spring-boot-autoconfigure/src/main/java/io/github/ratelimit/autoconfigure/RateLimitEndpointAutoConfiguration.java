package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.actuate.KeyDisplay;
import io.github.ratelimit.actuate.OpenWritesWarning;
import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.HandlerMethods;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/**
 * The {@code ratelimits} actuator endpoint, when Actuator is on the classpath and the endpoint is available (Boot's
 * {@code management.endpoint.ratelimits.*} and {@code management.endpoints.web.exposure.*}).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
@ConditionalOnBean({ PolicyCatalog.class, RateLimiter.class })
public final class RateLimitEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitsEndpoint rateLimitsEndpoint(PolicyCatalog catalog, RateLimiter rateLimiter,
			ObjectProvider<RuntimeChanges> runtimeChanges, ObjectProvider<RateLimitEngine> engine,
			RateLimitProperties properties, Environment environment, ObjectProvider<HandlerMethods> handlers,
			ResourceLoader resourceLoader) {
		RateLimitEngine decides = engine.getIfAvailable();
		PropertiesEndpointAccessResolver access = new PropertiesEndpointAccessResolver(environment);
		OpenWritesWarning.warnIfOpen(access, resourceLoader.getClassLoader());
		return new RateLimitsEndpoint(catalog, rateLimiter,
				runtimeChanges.getIfAvailable(() -> new RuntimeChanges(catalog, null)),
				(decides != null) ? decides.heavyHitters() : null,
				KeyDisplay.of(environment, access, properties.getHeavyHitters().isMaskClientIp()),
				handlers.getIfAvailable(), (decides != null) ? decides.lockouts() : null);
	}

}
