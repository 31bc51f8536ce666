package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitPropertiesDefaultsTests {

	private final RateLimitProperties properties = new RateLimitProperties();

	@Test
	void limiterDefaultsAreThoseOfTheLimitersBuilder() {
		assertThat(this.properties.getCircuitBreaker().getFailureThreshold())
			.isEqualTo(RateLimiter.DEFAULT_FAILURE_THRESHOLD);
		assertThat(this.properties.getCircuitBreaker().getOpenDuration())
			.isEqualTo(Duration.ofMillis(RateLimiter.DEFAULT_OPEN_DURATION_MILLIS));
		assertThat(this.properties.getFailureLogInterval())
			.isEqualTo(Duration.ofMillis(RateLimiter.DEFAULT_FAILURE_LOG_INTERVAL_MILLIS));
		assertThat(this.properties.getDenyCache().getMaxKeys()).isEqualTo(RateLimiter.DEFAULT_DENY_CACHE_MAX_KEYS);
	}

	@Test
	void storeDefaultsAreThoseOfTheStoresBuilders() {
		assertThat(this.properties.getMemory().getMaxKeys()).isEqualTo(InMemoryRateLimitStore.DEFAULT_MAX_KEYS);
		assertThat(this.properties.getMemory().getMaxKeysPerPolicy())
			.isEqualTo(InMemoryRateLimitStore.DEFAULT_MAX_KEYS_PER_POLICY);
		assertThat(this.properties.getRedis().getKeyPrefix()).isEqualTo(RedisRateLimitStore.DEFAULT_KEY_PREFIX);
		assertThat(this.properties.getRedis().getTimeout())
			.isEqualTo(Duration.ofMillis(RedisRateLimitStore.DEFAULT_TIMEOUT_MILLIS));
		assertThat(this.properties.getRedis().getMaxBatchSize()).isEqualTo(RedisRateLimitStore.DEFAULT_MAX_BATCH_SIZE);
		assertThat(this.properties.getRedis().getMaxInFlight()).isEqualTo(RedisRateLimitStore.DEFAULT_MAX_IN_FLIGHT);
		assertThat(this.properties.getDynamodb().getTable()).isEqualTo(DynamoDbRateLimitStore.DEFAULT_TABLE);
		assertThat(this.properties.getDynamodb().getKeyPrefix()).isEqualTo(DynamoDbRateLimitStore.DEFAULT_KEY_PREFIX);
		assertThat(this.properties.getDynamodb().getTimeout())
			.isEqualTo(Duration.ofMillis(DynamoDbRateLimitStore.DEFAULT_TIMEOUT_MILLIS));
		assertThat(this.properties.getDynamodb().isCreateTable()).isFalse();
	}

	@Test
	void everySettingIsValidatedWhenBound() {
		this.properties.afterPropertiesSet();
		this.properties.getRedis().setMaxInFlight(0);
		org.assertj.core.api.Assertions.assertThatException()
			.isThrownBy(this.properties::afterPropertiesSet)
			.withMessageContaining("ratelimit.redis.max-in-flight");
	}

}
