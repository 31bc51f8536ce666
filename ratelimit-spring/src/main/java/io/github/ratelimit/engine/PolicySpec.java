package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

/**
 * One policy as it is enforced, the one shape whatever declared it (an annotation, {@code ratelimit.policies.*}, a
 * filter, plans): built once at start-up by {@link PolicyParser} from its sources, each value recording where it came
 * from. It holds the counting parameters ({@link #policy()}) and each plan's variant of them, and what a request needs
 * to be decided: where its key and cost come from, which outcomes count, when it is skipped. Requests never build
 * one.
 *
 * @since 0.2.0
 */
public final class PolicySpec {

	private static final Log logger = LogFactory.getLog(PolicySpec.class);

	/**
	 * Keys that no client can write: the client IP (a parsed address: it never starts with {@value #RESERVED}), the
	 * client IP a failed key expression falls back to, and the key used outside of an HTTP request. A key
	 * expression's value that starts with {@value #RESERVED} gets one more, so it can equal none of them.
	 */
	static final char RESERVED = '#';

	/** The key used outside of an HTTP request, when the key is the client's IP address. */
	static final String NO_REQUEST_KEY = RESERVED + "none";

	/** What the client IP is prefixed with when a key expression falls back to it. */
	static final String FALLBACK_PREFIX = RESERVED + "ip:";

	/** The counting parameters as declared at start-up: what a change at run time is measured against. */
	private final RateLimitPolicy declared;

	/** Each plan's variant as declared at start-up. */
	private final Map<String, RateLimitPolicy> declaredPlans;

	private final String declaration;

	/** How the policy counts now: as declared, or as changed at run time. */
	private volatile Counting counting;

	/** The change at run time the policy counts under now: none while it counts as declared. */
	private volatile List<PolicyValues> changed = List.of();

	/** Builds the policy again with values of a change at run time over its own, or {@code null} if disabled. */
	private final Function<List<PolicyValues>, @Nullable PolicySpec> rebuild;

	/** The attributes the engine passes on to the code that uses them, by name. */
	private final Map<String, Object> values;

	private final String keyExpression;

	private final KeySource key;

	private final CostSource cost;

	private final @Nullable CountOn countOn;

	private final @Nullable Expression skip;

	/** Where the request's tenant comes from, or {@code null} if the policy has no limits per tenant. */
	private final @Nullable KeySource tenant;

	/** What the request really cost, over its result, or {@code null} if the reservation is the cost. */
	private final @Nullable Expression settle;

	/** The penalty group its keys are checked against, or {@code null} for none. */
	private final @Nullable Penalty penalty;

	/** How long a request over the limit may wait for its turn, or {@code null} if none may. */
	private final @Nullable Waiting waiting;

	/** The most a request is settled to. */
	static final long MAX_SETTLED_COST = Integer.MAX_VALUE;

	/** Logs a settle expression's failure once per policy. */
	private final AtomicBoolean settleFailureLogged = new AtomicBoolean();

	/** Whether the key is a literal, the same for every client: an application-wide quota. */
	private final boolean sharedByEveryClient;

	/** Logs a key expression's failure once per policy: it usually means the expression is wrong. */
	private final AtomicBoolean keyFailureLogged = new AtomicBoolean();

	/** Whether a key, cost, skip or tenant expression calls the application's code ({@link ApplicationCode}). */
	private final boolean callsApplicationCode;

	/** Logs a skip condition's failure once per policy. */
	private final AtomicBoolean skipFailureLogged = new AtomicBoolean();

	/** Logs a tenant expression's failure once per policy. */
	private final AtomicBoolean tenantFailureLogged = new AtomicBoolean();

	PolicySpec(RateLimitPolicy policy, String declaration, Map<String, String> sources, String keyExpression,
			KeySource key, CostSource cost, @Nullable CountOn countOn, @Nullable Expression skip,
			@Nullable KeySource tenant, @Nullable Expression settle, @Nullable Penalty penalty,
			@Nullable Waiting waiting, Map<String, RateLimitPolicy> plans, Map<String, Map<String, String>> planSources,
			Map<String, Object> values,
			Function<List<PolicyValues>, @Nullable PolicySpec> rebuild) {
		this.declared = policy;
		this.rebuild = rebuild;
		this.declaredPlans = plans;
		this.declaration = declaration;
		// Sources kept in the attributes' order.
		this.counting = new Counting(policy, Collections.unmodifiableMap(new LinkedHashMap<>(sources)), plans,
				planSources, true);
		this.keyExpression = keyExpression;
		this.key = key;
		this.cost = cost;
		this.countOn = countOn;
		this.skip = skip;
		this.tenant = tenant;
		this.settle = settle;
		this.penalty = penalty;
		this.waiting = waiting;
		this.values = Map.copyOf(values);
		this.sharedByEveryClient = key instanceof KeySource.Literal;
		this.callsApplicationCode = ApplicationCode.isCalledBy(expressionOf(key))
				|| ApplicationCode.isCalledBy((cost instanceof CostSource.Spel spel) ? spel.expression() : null)
				|| ApplicationCode.isCalledBy(skip) || ApplicationCode.isCalledBy(expressionOf(tenant));
	}

	private static @Nullable Expression expressionOf(@Nullable KeySource source) {
		return (source instanceof KeySource.Spel spel) ? spel.expression() : null;
	}

	/**
	 * Return the counting parameters of the policy as declared (no plan).
	 * @return the policy
	 */
	public RateLimitPolicy policy() {
		return this.counting.policy;
	}

	/**
	 * Return the counting parameters as declared at start-up, before any change at run time.
	 * @return the declared policy
	 */
	public RateLimitPolicy declaredPolicy() {
		return this.declared;
	}

	/**
	 * Return whether the policy applies: a policy disabled at run time neither counts nor limits.
	 * @return whether it is enabled
	 */
	public boolean isEnabled() {
		return this.counting.enabled;
	}

	/**
	 * Return where the policy is declared: the method ({@code OrderController#orders(String)}) or the property
	 * ({@code ratelimit.filters.edge}).
	 * @return the declaration
	 */
	public String declaration() {
		return this.declaration;
	}

	/**
	 * Return, by attribute, where its value came from: {@code annotation}, the property that set it, or
	 * {@code ratelimit.failure-mode} for the global failure mode.
	 * @return the sources, in the order of the attributes
	 */
	public Map<String, String> sources() {
		return this.counting.sources;
	}

	/**
	 * Return, by plan that changes the policy, the policy under that plan (a variant of its own).
	 * @return the plans' variants, in configuration order
	 */
	public Map<String, RateLimitPolicy> plans() {
		return this.counting.plans;
	}

	/**
	 * Return, by plan, by attribute, where the variant's value came from: the plan's property, or {@code policy} for
	 * a value kept from the policy.
	 * @return the sources of the plans' values
	 */
	public Map<String, Map<String, String>> planSources() {
		return this.counting.planSources;
	}

	/**
	 * Return the value of an attribute the engine does not decide with but passes on (see {@link PolicyParser}).
	 * @param attribute the attribute, as the properties name it
	 * @param type its type
	 * @param <T> its type
	 * @return the value, or {@code null} if no source sets it
	 */
	public <T> @Nullable T value(String attribute, Class<T> type) {
		Object value = this.values.get(attribute);
		return type.isInstance(value) ? type.cast(value) : null;
	}

	/** Whether every client draws on one key: an application-wide quota, whose state headers do not show. */
	boolean isSharedByEveryClient() {
		return this.sharedByEveryClient;
	}

	/** The penalty group its keys are checked against, and locked out of when they break it, or {@code null}. */
	@Nullable Penalty penalty() {
		return this.penalty;
	}

	/** How long a request over the limit may wait for its turn, or {@code null} if none may. */
	@Nullable Waiting waiting() {
		return this.waiting;
	}

	/** The outcomes that count, or {@code null} if every admitted request does. */
	@Nullable CountOn countOn() {
		return this.countOn;
	}

	boolean hasSkip() {
		return this.skip != null;
	}

	boolean hasSettle() {
		return this.settle != null;
	}

	/**
	 * Return what the request cost under this policy, from the settle expression over what the method returned
	 * ({@code #result}) and what the handler reported ({@code #reported}), or {@code -1} if it yields {@code null}, no
	 * whole number of at least 0, or fails (logged at WARN once per policy): the reservation then stands.
	 * @param completed whether the result completed: when it failed or was cancelled, {@code #result} is
	 * {@code null}, so an expression that needs it fails as expected, and is not logged
	 */
	long settledCost(RequestScope scope, @Nullable Object result, @Nullable Long reported, boolean completed) {
		Expression settle = this.settle;
		if (settle == null) {
			return -1;
		}
		Object value;
		try {
			EvaluationContext context = scope.evaluationContext();
			context.setVariable("result", result);
			context.setVariable("reported", reported);
			value = settle.getValue(context);
		}
		catch (RuntimeException ex) {
			if (completed) {
				warnSettle("failed: " + ex.getMessage(), ex);
			}
			return -1;
		}
		if (value == null) {
			return -1; // nothing to settle to (a handler that reported nothing): the reservation stands
		}
		if (value instanceof Number number && number.doubleValue() >= 0 && number.doubleValue() == Math.floor(
				number.doubleValue())) {
			// Bounded, so that no store's arithmetic overflows: more than this is a debt nobody repays anyway. Compared
			// as a double first: longValue() of a BigInteger beyond 2^63 wraps (2^64 + 5 would settle to 5).
			return (number.doubleValue() >= MAX_SETTLED_COST) ? MAX_SETTLED_COST : number.longValue();
		}
		warnSettle("yielded " + value + ", not a whole number of at least 0", null);
		return -1;
	}

	private void warnSettle(String what, @Nullable Exception failure) {
		if (this.settleFailureLogged.compareAndSet(false, true)) {
			logger.warn("Settle expression of rate limit policy '" + policy().name() + "' on " + this.declaration + " "
					+ what + "; the reservation stands (logged once per policy)", failure);
		}
	}

	/**
	 * Return whether the policy's limits may come from the request's tenant.
	 * @return whether it has a tenant expression
	 */
	public boolean hasTenant() {
		return this.tenant != null;
	}

	/**
	 * Return the tenant of this request, or {@code null} for the policy's own limits: no tenant expression, or one
	 * that yields {@code null}, an empty string, a value whose text is not its value, or fails (logged at WARN once
	 * per policy: a broken expression must not fail requests).
	 */
	@Nullable String tenant(RequestScope scope) {
		KeySource tenant = this.tenant;
		if (tenant == null) {
			return null;
		}
		try {
			Object value = (tenant instanceof KeySource.ClientIp) ? scope.clientIp() : tenant.key(scope);
			String text = (value instanceof ClientAddress address) ? address.key()
					: (value != null) ? KeyText.of(value) : null;
			return (text == null || text.isEmpty()) ? null : text;
		}
		catch (RuntimeException ex) {
			if (this.tenantFailureLogged.compareAndSet(false, true)) {
				logger.warn("Tenant expression of rate limit policy '" + policy().name() + "' on "
						+ this.declaration + " failed: " + ex.getMessage()
						+ "; the policy's own limits apply (logged once per policy)", ex);
			}
			return null;
		}
	}

	/** Whether the policy only reports what it would have rejected. */
	boolean isShadow() {
		return policy().mode() == PolicyMode.SHADOW;
	}

	/** Whether the key is the client's IP address: such policies do not apply to exempt clients. */
	boolean isKeyedByClientIp() {
		return this.key instanceof KeySource.ClientIp;
	}

	/**
	 * Whether deciding this policy runs the application's code: a key, cost, skip or tenant expression that calls a
	 * bean, a static method or a constructor.
	 */
	boolean callsApplicationCode() {
		return this.callsApplicationCode;
	}

	boolean isPlanned() {
		return !this.counting.plans.isEmpty();
	}

	/** The policy under the given plan: the plan's variant if it changes this policy, else the policy itself. */
	RateLimitPolicy policy(@Nullable String plan) {
		Counting counting = this.counting;
		if (plan == null || counting.plans.isEmpty()) {
			return counting.policy;
		}
		return counting.plans.getOrDefault(plan, counting.policy);
	}

	/**
	 * Return whether this request is skipped by the policy's condition. A condition that fails or yields no boolean
	 * does not skip: a broken condition must not switch a limit off.
	 */
	boolean skips(RequestScope scope) {
		if (this.skip == null) {
			return false;
		}
		try {
			return Boolean.TRUE.equals(this.skip.getValue(scope.evaluationContext(), Boolean.class));
		}
		catch (RuntimeException ex) {
			if (this.skipFailureLogged.compareAndSet(false, true)) {
				logger.warn("Skip condition of rate limit policy '" + policy().name() + "' on " + this.declaration
						+ " failed: " + ex.getMessage() + "; the policy applies (logged once per policy)", ex);
			}
			return false;
		}
	}

	/**
	 * Return the cost of this request.
	 * @throws io.github.ratelimit.web.InvalidRateLimitCostException if the cost expression yields no whole number
	 * of at least 1
	 * @throws CostSource.ExpressionFailure if the cost expression throws
	 */
	long cost(RequestScope scope) {
		return this.cost.cost(scope, policy().name());
	}

	/**
	 * Return the key of this request. A key expression that yields {@code null}, an empty string or a value with no
	 * value-based text (see {@link KeyText}), or that fails, falls back to the client's IP address in a namespace of
	 * its own; that is logged at WARN once per policy, since it usually means the expression is wrong, and it must not
	 * turn into an error response.
	 */
	String key(RequestScope scope) {
		if (this.key instanceof KeySource.ClientIp) {
			return scope.clientIp();
		}
		Object value;
		String key;
		try {
			value = this.key.key(scope);
			if (value instanceof ClientAddress address) {
				return address.key(); // #clientIp: already in a namespace of its own
			}
			key = (value != null) ? KeyText.of(value) : null;
		}
		catch (RuntimeException ex) {
			warnFallback("failed: " + ex.getMessage(), ex);
			return FALLBACK_PREFIX + scope.clientIp();
		}
		if (key == null || key.isEmpty()) {
			warnFallback((value == null) ? "yielded null"
					: (key == null) ? "yielded a " + value.getClass().getName() + ", whose text is not its value (a key"
							+ " must be " + KeyText.ALLOWED + ")"
							: "yielded an empty string",
					null);
			return FALLBACK_PREFIX + scope.clientIp();
		}
		return escaped(key);
	}

	/** A client's key, kept apart from the keys no client can write. */
	static String escaped(String key) {
		return (!key.isEmpty() && key.charAt(0) == RESERVED) ? RESERVED + key : key;
	}

	private void warnFallback(String what, @Nullable Exception failure) {
		if (this.keyFailureLogged.compareAndSet(false, true)) {
			logger.warn("Key expression '" + this.keyExpression + "' of rate limit policy '" + policy().name()
					+ "' on " + this.declaration + " " + what
					+ "; falling back to the client IP address (logged once per policy)", failure);
		}
	}

	@Override
	public String toString() {
		return "PolicySpec[" + policy() + " declared by " + this.declaration + "]";
	}

	/**
	 * Count from now on as the policy would with the values of a change at run time over its own (or as declared, for
	 * {@link PolicyValues#NONE}). A changed window or algorithm counts in a variant of its own, since a store keeps
	 * one window and algorithm per name and variant; a changed limit or burst keeps the counts.
	 * @param change the values to change, the first source that sets an attribute winning
	 * @throws InvalidRateLimitPolicyException if the values are invalid, naming the attribute and the value
	 */
	void change(List<PolicyValues> change) {
		PolicySpec changed = this.rebuild.apply(change);
		apply(changed, change);
		this.changed = List.copyOf(change);
	}

	/**
	 * Return the policy as a tenant has it: the tenant's limits read and checked by the parser as any change is, over
	 * the policy's own sources and its change at run time, in a variant of the tenant's own, so that it counts apart
	 * from every other tenant's and from the policy's (and after its window and algorithm too when they differ from
	 * the policy's as declared, since a store keeps one window and algorithm per name and variant).
	 * @param tenant the tenant
	 * @param limits the tenant's limits
	 * @return the tenant's policy
	 * @throws InvalidRateLimitPolicyException if the limits are invalid, naming the attribute and the value
	 */
	RateLimitPolicy forTenant(String tenant, PolicyValues limits) {
		List<PolicyValues> change = this.changed;
		List<PolicyValues> sources = new ArrayList<>(1 + change.size());
		sources.add(limits);
		sources.addAll(change);
		PolicySpec parsed = this.rebuild.apply(sources);
		String variant = "tenant=" + tenant;
		RateLimitPolicy policy = ((parsed != null) ? parsed.policy() : policy()).toBuilder().variant(variant).build();
		return PolicyVariants.keepingState(policy, this.declared.toBuilder().variant(variant).build());
	}

	/**
	 * Check a change at run time without applying it.
	 * @throws InvalidRateLimitPolicyException if a value is invalid
	 */
	void checkChange(List<PolicyValues> change) {
		this.rebuild.apply(change);
	}

	private void apply(@Nullable PolicySpec changed, List<PolicyValues> change) {
		if (changed == null) {
			Counting now = this.counting;
			Map<String, String> sources = new LinkedHashMap<>(now.sources);
			change.stream().filter((values) -> values.get("enabled") != null).findFirst()
				.ifPresent((values) -> sources.put("enabled", values.sourceOf("enabled")));
			this.counting = new Counting(now.policy, Collections.unmodifiableMap(sources), now.plans, now.planSources,
					false);
			return;
		}
		Map<String, RateLimitPolicy> plans = new LinkedHashMap<>();
		changed.plans().forEach((plan, variant) -> plans.put(plan,
				PolicyVariants.keepingState(variant, this.declaredPlans.getOrDefault(plan, this.declared))));
		this.counting = new Counting(PolicyVariants.keepingState(changed.policy(), this.declared),
				changed.sources(), Collections.unmodifiableMap(plans), changed.planSources(), true);
	}

	/** How a policy counts: its parameters, each plan's variant, and where each value came from. */
	private record Counting(RateLimitPolicy policy, Map<String, String> sources, Map<String, RateLimitPolicy> plans,
			Map<String, Map<String, String>> planSources, boolean enabled) {
	}

}
