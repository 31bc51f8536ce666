package io.github.ratelimit.autoconfigure;

import java.beans.PropertyDescriptor;
import java.net.URI;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.web.ForwardedHeader;
import io.github.ratelimit.web.IpRange;
import io.github.ratelimit.web.RateLimitHeaderStyle;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.convert.DurationUnit;

/**
 * Configuration properties for rate limiting. Defaults are those of the builders they configure (the Redis ones
 * are compile-time constants, so this class loads without the Redis store on the classpath).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties implements InitializingBean {

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
	private Duration failureLogInterval = Duration.ofMillis(RateLimiter.DEFAULT_FAILURE_LOG_INTERVAL_MILLIS);

	/**
	 * Policies by name. Values set here override those of the @RateLimited annotations that declare the policy.
	 * Names containing dots (such as the default 'SimpleClassName.method') go in brackets:
	 * 'ratelimit.policies.[OrderController.list].limit'.
	 */
	private final Map<String, Policy> policies = new LinkedHashMap<>();

	/**
	 * Limits applied before dispatch by one servlet filter, by name (the name of the filter's policy): coarse limits
	 * that reject abusive traffic before authentication, argument resolution and message conversion.
	 */
	private final Map<String, Filter> filters = new LinkedHashMap<>();

	/**
	 * Order of the filter that applies ratelimit.filters (a servlet filter on Spring MVC, a WebFilter on WebFlux); by
	 * default just before Spring Security's filter chain (-100).
	 */
	private int filterOrder = DEFAULT_FILTER_ORDER;

	/**
	 * Plans per client, by plan name: for each policy a plan changes, its limit, window or burst. A
	 * RateLimitPlanResolver bean gives each request its plan.
	 */
	private final Map<String, Map<String, Plan>> plans = new LinkedHashMap<>();

	/**
	 * Plan of requests that the plan resolver gives no plan or an unknown one. When not set, they are decided under
	 * the policies as declared.
	 */
	private @Nullable String defaultPlan;

	private final Redis redis = new Redis();

	private final DynamoDb dynamodb = new DynamoDb();

	private final Headers headers = new Headers();

	private final Metrics metrics = new Metrics();

	private final Memory memory = new Memory();

	private final CircuitBreaker circuitBreaker = new CircuitBreaker();

	private final DenyCache denyCache = new DenyCache();

	private final ClientIp clientIp = new ClientIp();

	private final Tenants tenants = new Tenants();

	private final HeavyHitters heavyHitters = new HeavyHitters();

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

	/** Every setting of a policy or plan, read generically, as one source of the policy's values. */
	private static PolicyValues values(String source, Object settings) {
		BeanWrapper wrapper = new BeanWrapperImpl(settings);
		Map<String, Object> values = new LinkedHashMap<>();
		for (PropertyDescriptor property : wrapper.getPropertyDescriptors()) {
			if (property.getReadMethod() != null && !property.getName().equals("class")) {
				Object value = wrapper.getPropertyValue(property.getName());
				if (value != null) {
					values.put(property.getName(), value);
				}
			}
		}
		return new PolicyValues(source, values);
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

	public Map<String, Filter> getFilters() {
		return this.filters;
	}

	public int getFilterOrder() {
		return this.filterOrder;
	}

	public void setFilterOrder(int filterOrder) {
		this.filterOrder = filterOrder;
	}

	public Map<String, Map<String, Plan>> getPlans() {
		return this.plans;
	}

	public @Nullable String getDefaultPlan() {
		return this.defaultPlan;
	}

	public void setDefaultPlan(@Nullable String defaultPlan) {
		this.defaultPlan = defaultPlan;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Tenants getTenants() {
		return this.tenants;
	}

	public HeavyHitters getHeavyHitters() {
		return this.heavyHitters;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public DynamoDb getDynamodb() {
		return this.dynamodb;
	}

	public Memory getMemory() {
		return this.memory;
	}

	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public ClientIp getClientIp() {
		return this.clientIp;
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
		MEMORY,

		/**
		 * DynamoDB, through the application's DynamoDbClient or one built from ratelimit.dynamodb.*: limits are
		 * shared by every instance. Needs software.amazon.awssdk:dynamodb.
		 */
		DYNAMODB

	}

	/**
	 * Settings of one policy: over the annotations that declare it ({@code ratelimit.policies.<name>}), or of a
	 * filter ({@code ratelimit.filters.<name>}). Each setting left unset keeps the annotation's value, or the
	 * default.
	 */
	public static class Policy {

		/**
		 * Maximum number of units per window (for the bucket algorithms, the refill or drain rate per window). When
		 * not set, the annotation's limit; a filter requires it.
		 */
		private @Nullable Long limit;

		/**
		 * Window length. If a duration suffix is not specified, seconds will be used. When not set, the annotation's
		 * window; a filter requires it.
		 */
		@DurationUnit(ChronoUnit.SECONDS)
		private @Nullable Duration window;

		/**
		 * Algorithm that enforces the limit. When not set, the annotation's algorithm, or else fixed.
		 */
		private @Nullable Algorithm algorithm;

		/**
		 * Bucket capacity of the token and leaky bucket algorithms. When not set, the annotation's burst, or else the
		 * limit.
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

		/**
		 * SpEL expression of the counter key, over the same variables as the annotation's key (a filter's: #request
		 * and #clientIp). A policy defined here in full with a key is a shared policy, drawn by every annotation and
		 * filter that names it. When not set, the annotation's key, or else the client IP address.
		 */
		private @Nullable String key;

		/**
		 * Units each request takes: a whole number, or a SpEL expression over the key's variables. When not set, the
		 * annotation's cost, or else 1.
		 */
		private @Nullable String cost;

		/**
		 * Which outcomes count: HTTP status codes (401) or classes (4xx, 5xx). The unit is taken before the request
		 * is served and given back when the outcome does not match. When not set, the annotation's count-on applies
		 * (by default every admitted request counts).
		 */
		private @Nullable List<String> countOn;

		/**
		 * SpEL condition under which the policy neither counts nor limits the request. When not set, the
		 * annotation's applies.
		 */
		private @Nullable String skip;

		/**
		 * Whether the policy rejects (enforce) or only reports what it would have rejected (shadow). When not set,
		 * the annotation's mode, or else enforce.
		 */
		private @Nullable PolicyMode mode;

		/**
		 * SpEL expression of what the request really cost, over the key's variables and #result (what the method
		 * returned): the cost is reserved before the method runs and settled to this when it returns, giving back the
		 * difference or taking the extra (the key may go into debt). When not set, the annotation's settle; without
		 * one, the cost is what was reserved.
		 */
		private @Nullable String settle;

		public @Nullable String getSettle() {
			return this.settle;
		}

		public void setSettle(@Nullable String settle) {
			this.settle = settle;
		}

		/**
		 * SpEL expression of the request's tenant, over the key's variables: with a TenantLimitsSource bean, the
		 * tenant's own limits apply, each tenant with limits of its own counted apart. When not set, the
		 * annotation's tenant; without one, the policy's own limits.
		 */
		private @Nullable String tenant;

		public @Nullable String getTenant() {
			return this.tenant;
		}

		public void setTenant(@Nullable String tenant) {
			this.tenant = tenant;
		}

		/**
		 * What the limit is for, in words, shown by the actuator endpoint; it changes nothing in how the policy
		 * counts. When not set, the annotation's description applies.
		 */
		private @Nullable String description;

		/**
		 * Lease the key's units a block at a time in front of a shared store, admitting from the block without a round
		 * trip: 'auto' (blocks sized from each instance's rate, up to a sixteenth of the limit or burst) or a number of
		 * units. The fleet never admits more than the limit, and may admit up to (instances - 1) x block less per
		 * window. Not for sliding-log. When not set, the annotation's lease applies.
		 */
		private @Nullable String lease;

		/**
		 * Return these settings as one source of the policy's values, by the names the annotation and the
		 * properties share: every setting, read generically, so that a new one needs no code here.
		 * @param source the property prefix, such as {@code ratelimit.policies.orders}
		 * @return the values
		 */
		PolicyValues toValues(String source) {
			return values(source, this);
		}

		public @Nullable String getKey() {
			return this.key;
		}

		public void setKey(@Nullable String key) {
			this.key = key;
		}

		public @Nullable String getCost() {
			return this.cost;
		}

		public void setCost(@Nullable String cost) {
			this.cost = cost;
		}

		public @Nullable List<String> getCountOn() {
			return this.countOn;
		}

		public void setCountOn(@Nullable List<String> countOn) {
			this.countOn = countOn;
		}

		public @Nullable String getSkip() {
			return this.skip;
		}

		public void setSkip(@Nullable String skip) {
			this.skip = skip;
		}

		public @Nullable PolicyMode getMode() {
			return this.mode;
		}

		public void setMode(@Nullable PolicyMode mode) {
			this.mode = mode;
		}

		public @Nullable String getDescription() {
			return this.description;
		}

		public void setDescription(@Nullable String description) {
			this.description = description;
		}

		public @Nullable String getLease() {
			return this.lease;
		}

		public void setLease(@Nullable String lease) {
			this.lease = lease;
		}

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
	 * What a plan changes of one policy.
	 */
	public static class Plan {

		/**
		 * Return these settings as the plan's values for one policy.
		 * @param source the property prefix, such as {@code ratelimit.plans.pro.quota}
		 * @return the values
		 */
		PolicyValues toValues(String source) {
			return values(source, this);
		}

		/**
		 * Limit under this plan. When not set, the policy's limit applies.
		 */
		private @Nullable Long limit;

		/**
		 * Window under this plan. If a duration suffix is not specified, seconds will be used. When not set, the
		 * policy's window applies.
		 */
		@DurationUnit(ChronoUnit.SECONDS)
		private @Nullable Duration window;

		/**
		 * Burst under this plan (bucket algorithms). When not set, the policy's burst applies, or the plan's limit if
		 * the policy's burst is its limit.
		 */
		private @Nullable Long burst;

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

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

	}

	/**
	 * A limit of the filter layer: where it applies, and its policy's settings.
	 */
	public static class Filter extends Policy {

		/**
		 * Request paths the filter applies to, in Spring PathPattern syntax (/api/**), within the application (after
		 * the context path). Required.
		 */
		private List<String> paths = new ArrayList<>();

		/**
		 * HTTP methods the filter applies to. Empty: every method.
		 */
		private List<String> methods = new ArrayList<>();

		/**
		 * Order among filters: lower first. Filters that apply to a request are decided together, all or nothing.
		 */
		private int order;

		/**
		 * Shared policies (defined under ratelimit.policies) that requests matching this filter draw from too, decided
		 * with the filter's own limit.
		 */
		private List<String> policies = new ArrayList<>();

		public List<String> getPaths() {
			return this.paths;
		}

		public void setPaths(List<String> paths) {
			this.paths = paths;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

		public List<String> getPolicies() {
			return this.policies;
		}

		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

	}

	/**
	 * Settings of the Redis store.
	 */
	public static class Redis {

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
		 * Whether concurrent decisions of a policy are sent to Redis together, in one script call, while earlier
		 * calls are in flight.
		 */
		private boolean coalesce = true;

		/**
		 * Most decisions sent in one script call when coalescing.
		 */
		private int maxBatchSize = RedisRateLimitStore.DEFAULT_MAX_BATCH_SIZE;

		/**
		 * How many script calls of one policy (per Cluster hash slot) may be in flight before further decisions wait
		 * to be sent together.
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

	/**
	 * Settings of the rate limit meters.
	 */
	public static class Metrics {

		/**
		 * Share of a policy's capacity in use after an admission from which the admission counts as near the limit
		 * (ratelimit.near.limit), as Envoy's near_limit.
		 */
		private double nearLimitRatio = 0.8;

		public double getNearLimitRatio() {
			return this.nearLimitRatio;
		}

		public void setNearLimitRatio(double nearLimitRatio) {
			this.nearLimitRatio = nearLimitRatio;
		}

	}

	/**
	 * Which rate limit headers responses carry.
	 */
	public static class Headers {

		/**
		 * Header styles, one or several: 'draft-6' (RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset in delta
		 * seconds), 'draft-11' (RateLimit-Policy and RateLimit structured fields listing every policy that applied,
		 * with t the effective window; 'draft-10' is the same wire format), 'x-ratelimit' (X-RateLimit-Limit,
		 * X-RateLimit-Remaining, X-RateLimit-Reset), or 'none'. Retry-After is sent on every 429 and 503 whatever the
		 * style.
		 */
		private List<RateLimitHeaderStyle> style = new ArrayList<>(List.of(RateLimitHeaderStyle.DRAFT_6));

		/**
		 * Whether headers show the state of quotas whose key is the same for every client (an application-wide quota,
		 * key: "'application'"). Off by default: any client could otherwise watch the whole application's traffic.
		 * A request such a quota rejects still gets Retry-After.
		 */
		private boolean showSharedQuotas;

		/**
		 * How X-RateLimit-Reset gives the reset: 'delta-seconds' (seconds from now, like the other headers) or
		 * 'epoch-seconds' (a Unix time).
		 */
		private RateLimitHeaderStyle.ResetFormat resetFormat = RateLimitHeaderStyle.ResetFormat.DELTA_SECONDS;

		public List<RateLimitHeaderStyle> getStyle() {
			return this.style;
		}

		public void setStyle(List<RateLimitHeaderStyle> style) {
			this.style = style;
		}

		public RateLimitHeaderStyle.ResetFormat getResetFormat() {
			return this.resetFormat;
		}

		public boolean isShowSharedQuotas() {
			return this.showSharedQuotas;
		}

		public void setShowSharedQuotas(boolean showSharedQuotas) {
			this.showSharedQuotas = showSharedQuotas;
		}

		public void setResetFormat(RateLimitHeaderStyle.ResetFormat resetFormat) {
			this.resetFormat = resetFormat;
		}

	}

	/**
	 * Settings of the DynamoDB store ({@code ratelimit.store=dynamodb}).
	 */
	public static class DynamoDb {

		/**
		 * Region of the DynamoDB client the starter builds when the application has no DynamoDbClient bean. When not
		 * set, the SDK's default region chain (AWS_REGION, profile, instance metadata).
		 */
		private @Nullable String region;

		/**
		 * Endpoint of that client, to reach a local DynamoDB-API server (for instance http://127.0.0.1:8000). When
		 * not set, the region's DynamoDB endpoint.
		 */
		private @Nullable URI endpoint;

		/**
		 * Table of the counters; its partition key is 'pk', of type S.
		 */
		private String table = DynamoDbRateLimitStore.DEFAULT_TABLE;

		/**
		 * Whether to create the table at start-up if it is missing (on-demand capacity, TTL on 'ttl' where the
		 * server implements it). Off by default: tables are usually created by infrastructure code.
		 */
		private boolean createTable;

		/**
		 * Prefix of every partition key the store writes, so that applications can share a table. Must not contain
		 * ':'.
		 */
		private String keyPrefix = DynamoDbRateLimitStore.DEFAULT_KEY_PREFIX;

		/**
		 * How long a decision may take, all its calls included, before the failure mode applies. Calls are never
		 * retried by the SDK (a retried ADD could count twice).
		 */
		private Duration timeout = Duration.ofMillis(DynamoDbRateLimitStore.DEFAULT_TIMEOUT_MILLIS);

		public @Nullable String getRegion() {
			return this.region;
		}

		public void setRegion(@Nullable String region) {
			this.region = region;
		}

		public @Nullable URI getEndpoint() {
			return this.endpoint;
		}

		public void setEndpoint(@Nullable URI endpoint) {
			this.endpoint = endpoint;
		}

		public String getTable() {
			return this.table;
		}

		public void setTable(String table) {
			this.table = table;
		}

		public boolean isCreateTable() {
			return this.createTable;
		}

		public void setCreateTable(boolean createTable) {
			this.createTable = createTable;
		}

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

	}

	/**
	 * Settings of the in-memory store, and of the in-memory fallback of the 'local' failure mode.
	 */
	public static class Memory {

		/**
		 * Maximum number of keys held across all policies. When full, the keys nearest a fresh state are evicted
		 * (never rejected): expired ones first, then those whose counts forgive the fewest units.
		 */
		private long maxKeys = InMemoryRateLimitStore.DEFAULT_MAX_KEYS;

		/**
		 * Maximum number of keys one policy may hold, so that a flood of new keys on one endpoint only evicts keys of
		 * that endpoint.
		 */
		private long maxKeysPerPolicy = InMemoryRateLimitStore.DEFAULT_MAX_KEYS_PER_POLICY;

		public long getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(long maxKeys) {
			this.maxKeys = maxKeys;
		}

		public long getMaxKeysPerPolicy() {
			return this.maxKeysPerPolicy;
		}

		public void setMaxKeysPerPolicy(long maxKeysPerPolicy) {
			this.maxKeysPerPolicy = maxKeysPerPolicy;
		}

		InMemoryRateLimitStore build(io.github.ratelimit.TimeSource clock) {
			return InMemoryRateLimitStore.builder()
				.clock(clock)
				.maxKeys(this.maxKeys)
				.maxKeysPerPolicy(this.maxKeysPerPolicy)
				.build();
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
		private int failureThreshold = RateLimiter.DEFAULT_FAILURE_THRESHOLD;

		/**
		 * How long the circuit stays open before one request probes the store again.
		 */
		private Duration openDuration = Duration.ofMillis(RateLimiter.DEFAULT_OPEN_DURATION_MILLIS);

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
		private int maxKeys = RateLimiter.DEFAULT_DENY_CACHE_MAX_KEYS;

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

	/**
	 * How the client's IP address, the default key, is found.
	 */
	public static class ClientIp {

		/**
		 * Proxies whose forwarded header (see forwarded-header) is believed, as IP addresses or CIDR blocks (IPv4 or
		 * IPv6): the load balancers' own addresses or subnets. When the connection comes from one of them, the chain
		 * is read from right to left, skipping trusted proxies; the first other address is the client. Empty by
		 * default: the client is the connection's peer, and no forwarded header is read. A range wider than a /16 of
		 * IPv4 or a /32 of IPv6 is logged at WARN; every address (/0) fails start-up.
		 */
		private List<String> trustedProxies = new ArrayList<>();

		/**
		 * The one header the trusted proxies write the client's address into, and the only one read: x-forwarded-for
		 * (nginx, HAProxy, Envoy, Traefik, cloud load balancers, Cloudflare), forwarded (RFC 7239) or x-real-ip (one
		 * address, set by a single proxy). Never another in its place: proxies pass on headers they do not write.
		 */
		private ForwardedHeader forwardedHeader = ForwardedHeader.X_FORWARDED_FOR;

		/**
		 * Bits of an IPv4 address that make one client (32: each address is a client).
		 */
		private int ipv4PrefixLength = 32;

		/**
		 * Bits of an IPv6 address that make one client (64: one subscriber's or host's network, so that rotating
		 * addresses within it buys no quota).
		 */
		private int ipv6PrefixLength = 64;

		/**
		 * Clients no policy keyed by the client IP applies to (health checkers, internal callers), as IP addresses
		 * or CIDR blocks. Policies with a key expression still apply to them.
		 */
		private List<String> exempt = new ArrayList<>();

		public List<String> getExempt() {
			return this.exempt;
		}

		public void setExempt(List<String> exempt) {
			this.exempt = exempt;
		}

		public List<String> getTrustedProxies() {
			return this.trustedProxies;
		}

		public void setTrustedProxies(List<String> trustedProxies) {
			this.trustedProxies = trustedProxies;
		}

		public ForwardedHeader getForwardedHeader() {
			return this.forwardedHeader;
		}

		public void setForwardedHeader(ForwardedHeader forwardedHeader) {
			this.forwardedHeader = forwardedHeader;
		}

		public int getIpv4PrefixLength() {
			return this.ipv4PrefixLength;
		}

		public void setIpv4PrefixLength(int ipv4PrefixLength) {
			this.ipv4PrefixLength = ipv4PrefixLength;
		}

		public int getIpv6PrefixLength() {
			return this.ipv6PrefixLength;
		}

		public void setIpv6PrefixLength(int ipv6PrefixLength) {
			this.ipv6PrefixLength = ipv6PrefixLength;
		}

		void validate() {
			for (int i = 0; i < this.trustedProxies.size(); i++) {
				String proxy = this.trustedProxies.get(i);
				IpRange range;
				try {
					range = IpRange.parse(proxy);
				}
				catch (IllegalArgumentException ex) {
					throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.trusted-proxies[" + i + "]",
							proxy, ex.getMessage());
				}
				if (range.prefixLength() == 0) {
					throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.trusted-proxies[" + i + "]",
							proxy, "Trusting every address lets every client choose its own address. List the addresses "
									+ "or subnets of the proxies in front of the application.");
				}
			}
			for (int i = 0; i < this.exempt.size(); i++) {
				String network = this.exempt.get(i);
				try {
					IpRange.parse(network);
				}
				catch (IllegalArgumentException ex) {
					throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.exempt[" + i + "]",
							network, ex.getMessage());
				}
			}
			if (this.ipv4PrefixLength < 1 || this.ipv4PrefixLength > 32) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.ipv4-prefix-length",
						this.ipv4PrefixLength, "Must be from 1 to 32.");
			}
			if (this.ipv6PrefixLength < 1 || this.ipv6PrefixLength > 128) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.client-ip.ipv6-prefix-length",
						this.ipv6PrefixLength, "Must be from 1 to 128.");
			}
		}

	}

	/**
	 * Limits per tenant from the application's TenantLimitsSource bean.
	 */
	public static class Tenants {

		/**
		 * Longest a request waits for a tenant's limits to be looked up; past it, the policy's failure mode applies
		 * (allow: uncounted by that policy; local: the policy's own limits; deny: 503), and the lookup goes on for the
		 * next request.
		 */
		private Duration timeout = Duration.ofMillis(200);

		/**
		 * Lookups that run at once, on threads of their own; more wait in a queue of 1,000, and past it follow the
		 * failure mode.
		 */
		private int threads = 4;

		private final Cache cache = new Cache();

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public int getThreads() {
			return this.threads;
		}

		public void setThreads(int threads) {
			this.threads = threads;
		}

		public Cache getCache() {
			return this.cache;
		}

		/**
		 * Cache of the tenants' limits, in Caffeine when it is on the class path (else a simple bounded map).
		 */
		public static class Cache {

			/**
			 * Most answers kept (one per tenant and policy, an answer of "the policy's own limits" included).
			 */
			private int maximumSize = 10_000;

			/**
			 * How long an answer is kept after it was looked up: the longest a change of a tenant's limits takes to
			 * apply when nothing evicts it (RateLimitTenants.evict applies it at once).
			 */
			private Duration timeToLive = Duration.ofMinutes(1);

			public int getMaximumSize() {
				return this.maximumSize;
			}

			public void setMaximumSize(int maximumSize) {
				this.maximumSize = maximumSize;
			}

			public Duration getTimeToLive() {
				return this.timeToLive;
			}

			public void setTimeToLive(Duration timeToLive) {
				this.timeToLive = timeToLive;
			}

		}

	}

	/**
	 * Who is being limited: the heaviest keys of each policy lately, shown by the ratelimits endpoint.
	 */
	public static class HeavyHitters {

		/**
		 * Whether each policy keeps a small sketch of its heaviest keys (32 counters per outcome, over the last 2.5
		 * to 5 minutes).
		 */
		private boolean enabled = true;

		/**
		 * Whether the endpoint masks keys that are IP addresses: the last byte of an IPv4 address, all but the first
		 * 48 bits of an IPv6 one.
		 */
		private boolean maskClientIp;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public boolean isMaskClientIp() {
			return this.maskClientIp;
		}

		public void setMaskClientIp(boolean maskClientIp) {
			this.maskClientIp = maskClientIp;
		}

	}

}
