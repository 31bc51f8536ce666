package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import io.github.ratelimit.redis.RedisRateLimitStore;

/**
 * Settings of the Redis store ({@code ratelimit.redis}).
 */
public class RedisStoreProperties {

	/**
	 * Prefix of every Redis key the store writes.
	 */
	private String keyPrefix = RedisRateLimitStore.DEFAULT_KEY_PREFIX;

	/**
	 * How long a decision may wait for Redis before the failure mode applies (coalesced decisions: up to a
	 * twentieth longer, at most 50ms).
	 */
	private Duration timeout = Duration.ofMillis(RedisRateLimitStore.DEFAULT_TIMEOUT_MILLIS);

	/**
	 * Whether concurrent calls to Redis (decisions of every kind, refunds and charges) are sent together, in one
	 * script call, while earlier calls are in flight.
	 */
	private boolean coalesce = true;

	/**
	 * Most decisions sent in one script call when coalescing.
	 */
	private int maxBatchSize = RedisRateLimitStore.DEFAULT_MAX_BATCH_SIZE;

	/**
	 * How many script calls of one lane (a policy's decisions, or the calls of several limits, refunds and charges;
	 * per Cluster hash slot) may be in flight before further calls wait to be sent together.
	 */
	private int maxInFlight = RedisRateLimitStore.DEFAULT_MAX_IN_FLIGHT;

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public boolean isCoalesce() {
		return this.coalesce;
	}

	public void setCoalesce(boolean coalesce) {
		this.coalesce = coalesce;
	}

	public int getMaxBatchSize() {
		return this.maxBatchSize;
	}

	public void setMaxBatchSize(int maxBatchSize) {
		this.maxBatchSize = maxBatchSize;
	}

	public int getMaxInFlight() {
		return this.maxInFlight;
	}

	public void setMaxInFlight(int maxInFlight) {
		this.maxInFlight = maxInFlight;
	}

}
