package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for {@link RateLimited @RateLimited} methods: a
 * {@link RateLimitStore} (Redis, DynamoDB or memory), the {@link RateLimiter} in front of it, the policy engine
 * ({@code ratelimit-spring}) and, in a web application, its Spring MVC or WebFlux adapters: the interception of
 * annotated methods, the filter layer, the response headers and the 429 advice. With
 * {@code ratelimit.enabled=false}, {@link RateLimitDisabledAutoConfiguration} instead.
 *
 * @since 0.1.0
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RateLimitStoreConfigurations.DynamoDb.class, RateLimitStoreConfigurations.Redis.class,
		RateLimitStoreConfigurations.InMemory.class, RateLimitEngineConfiguration.class,
		RateLimitWebMvcConfiguration.class, RateLimitWebFluxConfiguration.class,
		RateLimitStatusConfigurations.WebMvc.class, RateLimitStatusConfigurations.WebFlux.class })
public final class RateLimitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TimeSource rateLimitTimeSource() {
		return TimeSource.system();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(RateLimitStore store, RateLimitProperties properties, TimeSource rateLimitTimeSource,
			ObjectProvider<RateLimitListener> listeners) {
		CircuitBreakerProperties circuitBreaker = properties.getCircuitBreaker();
		RateLimiter.Builder builder = RateLimiter.builder(store)
			.clock(rateLimitTimeSource)
			.failureThreshold(circuitBreaker.getFailureThreshold())
			.openDuration(circuitBreaker.getOpenDuration())
			.failureLogInterval(properties.getFailureLogInterval())
			.denyCacheMaxKeys(properties.getDenyCache().getMaxKeys())
			.listener(RateLimitListener.of(listeners.orderedStream().toList()));
		if (!properties.getDenyCache().isEnabled()) {
			builder.denyCache(false);
		}
		// An in-memory store is its own fallback; a remote one falls back to memory bounded like the memory store.
		builder.fallbackStore((store instanceof InMemoryRateLimitStore) ? store
				: properties.getMemory().build(rateLimitTimeSource));
		return builder.build();
	}

}
