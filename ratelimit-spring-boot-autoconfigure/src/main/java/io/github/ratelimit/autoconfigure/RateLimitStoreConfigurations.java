package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * {@link RateLimitStore} configurations imported by {@link RateLimitAutoConfiguration}, Redis first and memory as the
 * fallback.
 */
final class RateLimitStoreConfigurations {

	private static final String REDIS_STORE = "io.github.ratelimit.redis.RedisRateLimitStore";

	private RateLimitStoreConfigurations() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ RedisConnectionFactory.class, RedisRateLimitStore.class })
	@Conditional(RedisStoreCondition.class)
	static class Redis {

		@Bean(initMethod = "start", destroyMethod = "close")
		@ConditionalOnMissingBean(RateLimitStore.class)
		RedisRateLimitStore redisRateLimitStore(RedisConnectionFactory redisConnectionFactory,
				RateLimitProperties properties) {
			RateLimitProperties.Redis redis = properties.getRedis();
			return RedisRateLimitStore.builder(redisConnectionFactory)
				.keyPrefix(redis.getKeyPrefix())
				.timeout(redis.getTimeout())
				.coalesce(redis.isCoalesce())
				.maxBatchSize(redis.getMaxBatchSize())
				.maxInFlight(redis.getMaxInFlight())
				.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingBean(RateLimitStore.class)
	static class InMemory {

		@Bean
		InMemoryRateLimitStore inMemoryRateLimitStore(RateLimitProperties properties, TimeSource rateLimitTimeSource,
				ResourceLoader resourceLoader) {
			if (properties.getStore() == RateLimitProperties.StoreType.REDIS) {
				throw new RedisStoreUnavailableException(ClassUtils.isPresent(REDIS_STORE, resourceLoader.getClassLoader())
						? "no RedisConnectionFactory bean is available"
						: "io.github.ratelimit:ratelimit-redis is not on the classpath");
			}
			return properties.getMemory().build(rateLimitTimeSource);
		}

	}

	/**
	 * Matches when the store is {@code redis}, or {@code auto} and a {@link RedisConnectionFactory} bean exists.
	 */
	static class RedisStoreCondition extends SpringBootCondition implements ConfigurationCondition {

		private static final String REDIS_CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

		@Override
		public ConfigurationPhase getConfigurationPhase() {
			return ConfigurationPhase.REGISTER_BEAN; // bean definitions of other configurations are known by then
		}

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			String store = context.getEnvironment().getProperty("ratelimit.store", "auto").trim();
			if (store.equalsIgnoreCase("memory")) {
				return ConditionOutcome.noMatch("ratelimit.store is 'memory'");
			}
			ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
			boolean factory = beanFactory != null && ClassUtils.isPresent(REDIS_CONNECTION_FACTORY, context.getClassLoader())
					&& beanFactory.getBeanNamesForType(
							ClassUtils.resolveClassName(REDIS_CONNECTION_FACTORY, context.getClassLoader()), true,
							false).length > 0;
			if (!factory) {
				return ConditionOutcome.noMatch("no RedisConnectionFactory bean");
			}
			return ConditionOutcome.match("ratelimit.store is '" + store + "' and a RedisConnectionFactory exists");
		}

	}

	/**
	 * Thrown when {@code ratelimit.store=redis} but there is no Redis to use.
	 */
	static class RedisStoreUnavailableException extends RuntimeException {

		RedisStoreUnavailableException(String reason) {
			super("ratelimit.store is 'redis' but " + reason);
		}

	}

}
