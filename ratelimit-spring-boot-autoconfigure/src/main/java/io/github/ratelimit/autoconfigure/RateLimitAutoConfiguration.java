package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
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
 * {@link RateLimitStore} (Redis when a {@code RedisConnectionFactory} is available, else in memory), the
 * {@link RateLimiter} in front of it, and, in a servlet web application, the interception of annotated methods, the
 * response headers and the 429 advice.
 *
 * @since 0.1.0
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RateLimitStoreConfigurations.DynamoDb.class, RateLimitStoreConfigurations.Redis.class,
		RateLimitStoreConfigurations.InMemory.class,
		RateLimitWebMvcConfiguration.class })
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
		RateLimitProperties.CircuitBreaker circuitBreaker = properties.getCircuitBreaker();
		RateLimiter.Builder builder = RateLimiter.builder(store)
			.clock(rateLimitTimeSource)
			.failureThreshold(circuitBreaker.getFailureThreshold())
			.openDuration(circuitBreaker.getOpenDuration())
			.failureLogInterval(properties.getFailureLogInterval())
			.denyCacheMaxKeys(properties.getDenyCache().getMaxKeys())
			.listener(listener(listeners.orderedStream().toList()));
		if (!properties.getDenyCache().isEnabled()) {
			builder.denyCache(false);
		}
		// An in-memory store is its own fallback; a remote one falls back to memory bounded like the memory store.
		builder.fallbackStore((store instanceof InMemoryRateLimitStore) ? store
				: properties.getMemory().build(rateLimitTimeSource));
		return builder.build();
	}

	private static RateLimitListener listener(java.util.List<RateLimitListener> listeners) {
		// None or one is passed as it is: with no listener, the limiter's boolean path allocates nothing.
		return switch (listeners.size()) {
			case 0 -> RateLimitListener.NONE;
			case 1 -> listeners.get(0);
			default -> new CompositeListener(listeners);
		};
	}

	private record CompositeListener(java.util.List<RateLimitListener> listeners) implements RateLimitListener {

		@Override
		public void onDecision(RateLimitPolicy policy, io.github.ratelimit.Decision decision) {
			for (RateLimitListener listener : this.listeners) {
				listener.onDecision(policy, decision);
			}
		}

		@Override
		public void onShadowRejection(RateLimitPolicy policy, io.github.ratelimit.Decision decision) {
			for (RateLimitListener listener : this.listeners) {
				listener.onShadowRejection(policy, decision);
			}
		}

		@Override
		public void onStoreFailure(RateLimitPolicy policy, @org.jspecify.annotations.Nullable RuntimeException failure) {
			for (RateLimitListener listener : this.listeners) {
				listener.onStoreFailure(policy, failure);
			}
		}

	}

}
