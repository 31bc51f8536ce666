package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationUnit;

/**
 * Configuration properties for rate limiting.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

	/**
	 * Whether to enable rate limiting.
	 */
	private boolean enabled = true;

	/**
	 * Store that keeps the counters. By default, Redis when a RedisConnectionFactory bean is available, otherwise
	 * memory.
	 */
	private StoreType store = StoreType.AUTO;

	/**
	 * What happens to a request when the store cannot decide in time: 'allow' lets it pass uncounted, 'deny' rejects
	 * it with 503, 'local' limits it with an in-memory store of this instance. Policies can override it.
	 */
	private FailureMode failureMode = FailureMode.ALLOW;

	/**
	 * Least time between two WARN messages about store failures.
	 */
	private Duration failureLogInterval = Duration.ofMinutes(1);

	/**
	 * Policies by name. Values set here override those of the @RateLimited annotations that declare the policy.
	 * Names containing dots (such as the default 'SimpleClassName.method') go in brackets:
	 * 'ratelimit.policies.[OrderController.list].limit'.
	 */
	private final Map<String, Policy> policies = new LinkedHashMap<>();

	private final Redis redis = new Redis();

	private final Memory memory = new Memory();

	private final CircuitBreaker circuitBreaker = new CircuitBreaker();

	private final DenyCache denyCache = new DenyCache();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public StoreType getStore() {
		return this.store;
	}

	public void setStore(StoreType store) {
		this.store = store;
	}

	public FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	public Duration getFailureLogInterval() {
		return this.failureLogInterval;
	}

	public void setFailureLogInterval(Duration failureLogInterval) {
		this.failureLogInterval = failureLogInterval;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Memory getMemory() {
		return this.memory;
	}

	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public DenyCache getDenyCache() {
		return this.denyCache;
	}

	/**
	 * Where counters are kept.
	 */
	public enum StoreType {

		/**
		 * Redis when a RedisConnectionFactory bean is available, otherwise memory.
		 */
		AUTO,

		/**
		 * Redis, through the application's RedisConnectionFactory: limits are shared by every instance.
		 */
		REDIS,

		/**
		 * Memory of this instance: limits are per instance.
		 */
		MEMORY

	}

	/**
	 * Settings of one policy.
	 */
	public static class Policy {

		/**
		 * Maximum number of units per window (for the bucket algorithms, the refill or drain rate per window). When
		 * not set, the annotation's limit applies.
		 */
		private @Nullable Long limit;

		/**
		 * Window length. If a duration suffix is not specified, seconds will be used. When not set, the annotation's
		 * window applies.
		 */
		@DurationUnit(ChronoUnit.SECONDS)
		private @Nullable Duration window;

		/**
		 * Algorithm that enforces the limit. When not set, the annotation's algorithm applies.
		 */
		private @Nullable Algorithm algorithm;

		/**
		 * Bucket capacity of the token and leaky bucket algorithms. When not set, the annotation's burst applies, or
		 * else the limit.
		 */
		private @Nullable Long burst;

		/**
		 * Whether the policy applies. A disabled policy neither counts nor limits.
		 */
		private boolean enabled = true;

		/**
		 * What happens to a request of this policy when the store cannot decide. When not set, the global failure
		 * mode applies.
		 */
		private @Nullable FailureMode failureMode;

		public @Nullable Long getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Long limit) {
			this.limit = limit;
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(@Nullable Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable FailureMode getFailureMode() {
			return this.failureMode;
		}

		public void setFailureMode(@Nullable FailureMode failureMode) {
			this.failureMode = failureMode;
		}

	}

	/**
	 * Settings of the Redis store.
	 */
	public static class Redis {

		/**
		 * Prefix of every Redis key the store writes.
		 */
		private String keyPrefix = "ratelimit";

		/**
		 * How long a decision may wait for Redis before the failure mode applies (coalesced decisions: up to a
		 * twentieth longer, at most 50ms).
		 */
		private Duration timeout = Duration.ofMillis(200);

		/**
		 * Whether concurrent decisions of a policy are sent to Redis together, in one script call, while earlier
		 * calls are in flight.
		 */
		private boolean coalesce = true;

		/**
		 * Most decisions sent in one script call when coalescing.
		 */
		private int maxBatchSize = 64;

		/**
		 * How many script calls of one policy (per Cluster hash slot) may be in flight before further decisions wait
		 * to be sent together.
		 */
		private int maxInFlight = 4;

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

	/**
	 * Settings of the in-memory store, and of the in-memory fallback of the 'local' failure mode.
	 */
	public static class Memory {

		/**
		 * Maximum number of keys held across all policies. When every key is live, requests for new keys are rejected
		 * until keys expire.
		 */
		private long maxKeys = 100_000;

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

	/**
	 * Settings of the circuit breaker in front of a remote store.
	 */
	public static class CircuitBreaker {

		/**
		 * Number of consecutive store failures that open the circuit; while open, the store is not called and the
		 * failure mode applies.
		 */
		private int failureThreshold = 3;

		/**
		 * How long the circuit stays open before one request probes the store again.
		 */
		private Duration openDuration = Duration.ofSeconds(2);

		public int getFailureThreshold() {
			return this.failureThreshold;
		}

		public void setFailureThreshold(int failureThreshold) {
			this.failureThreshold = failureThreshold;
		}

		public Duration getOpenDuration() {
			return this.openDuration;
		}

		public void setOpenDuration(Duration openDuration) {
			this.openDuration = openDuration;
		}

	}

	/**
	 * Settings of the local deny cache in front of a remote store.
	 */
	public static class DenyCache {

		/**
		 * Whether to reject locally, without a round trip, a key the store has rejected until the time it gave.
		 */
		private boolean enabled = true;

		/**
		 * Maximum number of keys remembered.
		 */
		private int maxKeys = 100_000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(int maxKeys) {
			this.maxKeys = maxKeys;
		}

	}

}
