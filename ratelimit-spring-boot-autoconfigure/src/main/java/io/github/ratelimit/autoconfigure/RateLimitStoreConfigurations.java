package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * {@link RateLimitStore} configurations imported by {@link RateLimitAutoConfiguration}: DynamoDB when asked for,
 * Redis, and memory as the fallback.
 */
final class RateLimitStoreConfigurations {

	private static final Log logger = LogFactory.getLog(RateLimitStoreConfigurations.class);

	private static final String REDIS_STORE = "io.github.ratelimit.redis.RedisRateLimitStore";

	private static final String DYNAMODB_STORE = "io.github.ratelimit.dynamodb.DynamoDbRateLimitStore";

	private static final String DYNAMODB_CLIENT = "software.amazon.awssdk.services.dynamodb.DynamoDbClient";

	private RateLimitStoreConfigurations() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ DynamoDbClient.class, DynamoDbRateLimitStore.class })
	@ConditionalOnProperty(name = "ratelimit.store", havingValue = "dynamodb")
	static class DynamoDb {

		/**
		 * The clients, built from {@code ratelimit.dynamodb.*} unless the application has its own: the blocking one, and
		 * in a reactive application the asynchronous one its decisions are made on, so that no event loop waits for
		 * DynamoDB. Both or neither: an asynchronous client built here beside an application's own blocking client
		 * could reach another region, endpoint or account.
		 */
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnMissingBean(DynamoDbClient.class)
		static class Clients {

			@Bean
			DynamoDbClient rateLimitDynamoDbClient(RateLimitProperties properties) {
				return build(DynamoDbClient.builder(), properties, "the DynamoDB client cannot be built (%s); set "
						+ "ratelimit.dynamodb.region (or AWS_REGION), or define a DynamoDbClient bean");
			}

			@Bean
			@ConditionalOnMissingBean(DynamoDbAsyncClient.class)
			@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
			DynamoDbAsyncClient rateLimitDynamoDbAsyncClient(RateLimitProperties properties) {
				return build(DynamoDbAsyncClient.builder(), properties, "the asynchronous DynamoDB client cannot be "
						+ "built (%s); set ratelimit.dynamodb.region (or AWS_REGION), add an asynchronous HTTP client "
						+ "(software.amazon.awssdk:netty-nio-client), or define a DynamoDbAsyncClient bean");
			}

			/** Build either client with the region and the endpoint of {@code ratelimit.dynamodb}. */
			private static <B extends AwsClientBuilder<B, C>, C> C build(B builder, RateLimitProperties properties,
					String failure) {
				DynamoDbStoreProperties dynamodb = properties.getDynamodb();
				if (dynamodb.getRegion() != null) {
					builder.region(Region.of(dynamodb.getRegion()));
				}
				if (dynamodb.getEndpoint() != null) {
					builder.endpointOverride(dynamodb.getEndpoint());
				}
				try {
					return builder.build();
				}
				catch (SdkClientException ex) {
					throw new DynamoDbStoreUnavailableException(String.format(failure, ex.getMessage()), ex);
				}
			}

		}

		@Bean(initMethod = "start")
		@ConditionalOnMissingBean(RateLimitStore.class)
		DynamoDbRateLimitStore dynamoDbRateLimitStore(DynamoDbClient dynamoDbClient,
				ObjectProvider<DynamoDbAsyncClient> dynamoDbAsyncClient, RateLimitProperties properties,
				TimeSource rateLimitTimeSource, Environment environment) {
			DynamoDbStoreProperties dynamodb = properties.getDynamodb();
			DynamoDbAsyncClient asyncClient = dynamoDbAsyncClient.getIfUnique();
			if (asyncClient == null && isReactive(environment)) {
				logger.warn("The DynamoDB rate limit store decides on the calling thread, an event loop of this "
						+ "reactive application: the application defines its own DynamoDbClient, but no "
						+ "DynamoDbAsyncClient to decide on without waiting. Define one for the same region and table.");
			}
			return DynamoDbRateLimitStore.builder(dynamoDbClient)
				.asyncClient(asyncClient)
				.table(dynamodb.getTable())
				.keyPrefix(dynamodb.getKeyPrefix())
				.timeout(dynamodb.getTimeout())
				.createTable(dynamodb.isCreateTable())
				.clock(rateLimitTimeSource)
				.build();
		}

	}

	private static final String REACTIVE_ENVIRONMENT = "org.springframework.boot.web.context.reactive."
			+ "ConfigurableReactiveWebEnvironment";

	/** Whether the application is a reactive web application (its environment is the reactive one). */
	static boolean isReactive(Environment environment) {
		ClassLoader classLoader = environment.getClass().getClassLoader();
		return ClassUtils.isPresent(REACTIVE_ENVIRONMENT, classLoader)
				&& ClassUtils.resolveClassName(REACTIVE_ENVIRONMENT, classLoader).isInstance(environment);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ RedisConnectionFactory.class, RedisRateLimitStore.class })
	@Conditional(RedisStoreCondition.class)
	static class Redis {

		@Bean(initMethod = "start", destroyMethod = "close")
		@ConditionalOnMissingBean(RateLimitStore.class)
		RedisRateLimitStore redisRateLimitStore(RedisConnectionFactory redisConnectionFactory,
				RateLimitProperties properties) {
			RedisStoreProperties redis = properties.getRedis();
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
			ClassLoader classLoader = resourceLoader.getClassLoader();
			if (properties.getStore() == RateLimitProperties.StoreType.DYNAMODB) {
				throw new DynamoDbStoreUnavailableException(!ClassUtils.isPresent(DYNAMODB_STORE, classLoader)
						? "io.github.ratelimit:ratelimit-dynamodb is not on the classpath"
						: !ClassUtils.isPresent(DYNAMODB_CLIENT, classLoader)
								? "software.amazon.awssdk:dynamodb is not on the classpath"
								: "another RateLimitStore configuration took precedence", null);
			}
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
			if (!store.equalsIgnoreCase("auto") && !store.equalsIgnoreCase("redis")) {
				return ConditionOutcome.noMatch("ratelimit.store is '" + store + "'");
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

	/**
	 * Thrown when {@code ratelimit.store=dynamodb} but there is no DynamoDB to use.
	 */
	static class DynamoDbStoreUnavailableException extends RuntimeException {

		DynamoDbStoreUnavailableException(String reason, @Nullable Throwable cause) {
			super("ratelimit.store is 'dynamodb' but " + reason, cause);
		}

	}

}
