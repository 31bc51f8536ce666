package io.github.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.FailureMode;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.RateLimitHeaderStyle;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Configuration properties for rate limiting. Defaults are those of the builders they configure (the Redis ones
 * are compile-time constants, so this class loads without the Redis store on the classpath).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties implements InitializingBean {

	/**
	 * Whether to enable rate limiting. When false, nothing is limited and no store is contacted, while every bean an
	 * application may inject (the limiter, the tenants, a RateLimitStatus argument, a gateway's limiter) admits all.
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
	private Duration failureLogInterval = Duration.ofMillis(RateLimiter.DEFAULT_FAILURE_LOG_INTERVAL_MILLIS);

	/**
	 * Policies by name. Values set here override those of the @RateLimited annotations that declare the policy.
	 * Names containing dots (such as the default 'SimpleClassName.method') go in brackets:
	 * 'ratelimit.policies.[OrderController.list].limit'.
	 */
	private final Map<String, PolicyProperties> policies = new LinkedHashMap<>();

	/**
	 * Limits applied before dispatch by one servlet filter, by name (the name of the filter's policy): coarse limits
	 * that reject abusive traffic before authentication, argument resolution and message conversion.
	 */
	private final Map<String, FilterProperties> filters = new LinkedHashMap<>();

	/**
	 * Order of the filter that applies ratelimit.filters (a servlet filter on Spring MVC, a WebFilter on WebFlux); by
	 * default just before Spring Security's filter chain (-100).
	 */
	private int filterOrder = DEFAULT_FILTER_ORDER;

	/**
	 * Plans per client, by plan name: for each policy a plan changes, its limit, window or burst. A
	 * RateLimitPlanResolver bean gives each request its plan.
	 */
	private final Map<String, Map<String, PlanProperties>> plans = new LinkedHashMap<>();

	/**
	 * Plan of requests that the plan resolver gives no plan or an unknown one. When not set, they are decided under
	 * the policies as declared.
	 */
	private @Nullable String defaultPlan;

	@NestedConfigurationProperty
	private final RedisStoreProperties redis = new RedisStoreProperties();

	@NestedConfigurationProperty
	private final DynamoDbStoreProperties dynamodb = new DynamoDbStoreProperties();

	@NestedConfigurationProperty
	private final HeadersProperties headers = new HeadersProperties();

	@NestedConfigurationProperty
	private final MetricsProperties metrics = new MetricsProperties();

	@NestedConfigurationProperty
	private final MemoryStoreProperties memory = new MemoryStoreProperties();

	@NestedConfigurationProperty
	private final CircuitBreakerProperties circuitBreaker = new CircuitBreakerProperties();

	@NestedConfigurationProperty
	private final DenyCacheProperties denyCache = new DenyCacheProperties();

	@NestedConfigurationProperty
	private final ClientIpProperties clientIp = new ClientIpProperties();

	@NestedConfigurationProperty
	private final TenantsProperties tenants = new TenantsProperties();

	@NestedConfigurationProperty
	private final HeavyHittersProperties heavyHitters = new HeavyHittersProperties();

	/**
	 * Check every setting once bound, so that a bad value fails start-up naming the property, whichever beans use it.
	 */
	@Override
	public void afterPropertiesSet() {
		atLeast("ratelimit.memory.max-keys", this.memory.getMaxKeys(), 1);
		atLeast("ratelimit.memory.max-keys-per-policy", this.memory.getMaxKeysPerPolicy(), 1);
		if (this.redis.getKeyPrefix() == null || this.redis.getKeyPrefix().isBlank()) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.redis.key-prefix", this.redis.getKeyPrefix(),
					"Must not be empty.");
		}
		if (this.redis.getKeyPrefix().indexOf('{') >= 0 || this.redis.getKeyPrefix().indexOf('}') >= 0) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.redis.key-prefix", this.redis.getKeyPrefix(),
					"Must not contain '{' or '}', which would change the Redis Cluster hash slot of every key.");
		}
		atLeastOneMilli("ratelimit.redis.timeout", this.redis.getTimeout());
		atLeastOneMilli("ratelimit.tenants.timeout", this.tenants.getTimeout());
		atLeastOneMilli("ratelimit.tenants.cache.time-to-live", this.tenants.getCache().getTimeToLive());
		atLeast("ratelimit.tenants.cache.maximum-size", this.tenants.getCache().getMaximumSize(), 1);
		atLeast("ratelimit.tenants.threads", this.tenants.getThreads(), 1);
		atLeast("ratelimit.redis.max-batch-size", this.redis.getMaxBatchSize(), 1);
		atLeast("ratelimit.redis.max-in-flight", this.redis.getMaxInFlight(), 1);
		if (this.dynamodb.getTable() == null || this.dynamodb.getTable().isBlank()) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.dynamodb.table", this.dynamodb.getTable(),
					"Must not be empty.");
		}
		if (this.dynamodb.getKeyPrefix() == null || this.dynamodb.getKeyPrefix().isBlank()
				|| this.dynamodb.getKeyPrefix().indexOf(':') >= 0) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.dynamodb.key-prefix",
					this.dynamodb.getKeyPrefix(), "Must not be empty nor contain ':'.");
		}
		atLeastOneMilli("ratelimit.dynamodb.timeout", this.dynamodb.getTimeout());
		URI endpoint = this.dynamodb.getEndpoint();
		if (endpoint != null && (endpoint.getScheme() == null || endpoint.getHost() == null
				|| !(endpoint.getScheme().equals("http") || endpoint.getScheme().equals("https")))) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.dynamodb.endpoint", endpoint,
					"Must be an http or https URL with a host, for instance http://127.0.0.1:8000.");
		}
		if (!(this.metrics.getNearLimitRatio() > 0 && this.metrics.getNearLimitRatio() <= 1)) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.metrics.near-limit-ratio",
					this.metrics.getNearLimitRatio(), "Must be greater than 0 and at most 1.");
		}
		List<RateLimitHeaderStyle> styles = this.headers.getStyle();
		if (styles == null || styles.isEmpty()) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.headers.style", styles,
					"Must name at least one style: draft-6, draft-11 (or draft-10, the same), x-ratelimit, or none.");
		}
		if (styles.contains(RateLimitHeaderStyle.NONE) && styles.size() > 1) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.headers.style", styles,
					"'none' cannot be combined with other styles.");
		}
		atLeast("ratelimit.circuit-breaker.failure-threshold", this.circuitBreaker.getFailureThreshold(), 1);
		atLeastOneMilli("ratelimit.circuit-breaker.open-duration", this.circuitBreaker.getOpenDuration());
		atLeast("ratelimit.deny-cache.max-keys", this.denyCache.getMaxKeys(), 1);
		this.clientIp.validate();
		if (this.failureLogInterval == null || this.failureLogInterval.isNegative()) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.failure-log-interval",
					this.failureLogInterval, "Must not be negative.");
		}
	}

	private static void atLeast(String name, long value, long minimum) {
		if (value < minimum) {
			throw new InvalidConfigurationPropertyValueException(name, value, "Must be at least " + minimum + ".");
		}
	}

	private static void atLeastOneMilli(String name, @Nullable Duration value) {
		if (value == null || value.toMillis() < 1) {
			throw new InvalidConfigurationPropertyValueException(name, value, "Must be at least 1ms.");
		}
	}

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

	/** The order of the filter layer by default: just before Spring Security's filter chain (-100). */
	public static final int DEFAULT_FILTER_ORDER = -110;

	public Map<String, FilterProperties> getFilters() {
		return this.filters;
	}

	public int getFilterOrder() {
		return this.filterOrder;
	}

	public void setFilterOrder(int filterOrder) {
		this.filterOrder = filterOrder;
	}

	public Map<String, Map<String, PlanProperties>> getPlans() {
		return this.plans;
	}

	public @Nullable String getDefaultPlan() {
		return this.defaultPlan;
	}

	public void setDefaultPlan(@Nullable String defaultPlan) {
		this.defaultPlan = defaultPlan;
	}

	public Map<String, PolicyProperties> getPolicies() {
		return this.policies;
	}

	public RedisStoreProperties getRedis() {
		return this.redis;
	}

	public TenantsProperties getTenants() {
		return this.tenants;
	}

	public HeavyHittersProperties getHeavyHitters() {
		return this.heavyHitters;
	}

	public MetricsProperties getMetrics() {
		return this.metrics;
	}

	public HeadersProperties getHeaders() {
		return this.headers;
	}

	public DynamoDbStoreProperties getDynamodb() {
		return this.dynamodb;
	}

	public MemoryStoreProperties getMemory() {
		return this.memory;
	}

	public CircuitBreakerProperties getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public ClientIpProperties getClientIp() {
		return this.clientIp;
	}

	public DenyCacheProperties getDenyCache() {
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
		MEMORY,

		/**
		 * DynamoDB, through the application's DynamoDbClient or one built from ratelimit.dynamodb.*: limits are
		 * shared by every instance. Needs software.amazon.awssdk:dynamodb.
		 */
		DYNAMODB

	}

}
