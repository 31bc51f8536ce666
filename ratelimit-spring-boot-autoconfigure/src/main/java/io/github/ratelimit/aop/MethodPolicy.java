package io.github.ratelimit.aop;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * One policy of one rate limited method, resolved at start-up: the policy, where its key and cost come from, and
 * the method it was declared on (for messages).
 */
final class MethodPolicy {

	private static final Log logger = LogFactory.getLog(MethodPolicy.class);

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

	private final RateLimitPolicy policy;

	private final String declaration;

	private final String keyExpression;

	private final KeySource key;

	private final CostSource cost;

	private final AtomicBoolean fallbackLogged = new AtomicBoolean();

	private final @Nullable CountOn countOn;

	private final @Nullable Expression skip;

	/** The policy as each plan that changes it has it. */
	private final Map<String, RateLimitPolicy> planned;

	/** Whether the key is a literal, the same for every client: an application-wide quota. */
	private final boolean sharedByEveryClient;

	MethodPolicy(RateLimitPolicy policy, String declaration, String keyExpression, KeySource key, CostSource cost) {
		this(policy, declaration, keyExpression, key, cost, null, null, Map.of());
	}

	MethodPolicy(RateLimitPolicy policy, String declaration, String keyExpression, KeySource key, CostSource cost,
			@Nullable CountOn countOn, @Nullable Expression skip, Map<String, RateLimitPolicy> planned) {
		this.planned = Map.copyOf(planned);
		this.policy = policy;
		this.declaration = declaration;
		this.keyExpression = keyExpression;
		this.key = key;
		this.cost = cost;
		this.countOn = countOn;
		this.skip = skip;
		this.sharedByEveryClient = key instanceof KeySource.Spel spel
				&& spel.expression() instanceof SpelExpression expression && expression.getAST() instanceof Literal;
	}

	/** Whether every client draws on one key: an application-wide quota, whose state headers do not show. */
	boolean isSharedByEveryClient() {
		return this.sharedByEveryClient;
	}

	/** The outcomes that count, or {@code null} if every admitted request does. */
	@Nullable CountOn countOn() {
		return this.countOn;
	}

	boolean hasSkip() {
		return this.skip != null;
	}

	/** Whether the policy only reports what it would have rejected. */
	boolean shadow() {
		return this.policy.mode() == PolicyMode.SHADOW;
	}

	/**
	 * Return whether this invocation is skipped by the policy's condition. A condition that fails or yields no
	 * boolean does not skip: a broken condition must not switch a limit off.
	 */
	boolean skips(InvocationScope scope) {
		if (this.skip == null) {
			return false;
		}
		try {
			return Boolean.TRUE.equals(this.skip.getValue(scope.evaluationContext(), Boolean.class));
		}
		catch (RuntimeException ex) {
			if (this.fallbackLogged.compareAndSet(false, true)) {
				logger.warn("Skip condition of rate limit policy '" + this.policy.name() + "' on " + this.declaration
						+ " failed: " + ex.getMessage() + "; the policy applies (logged once per policy)", ex);
			}
			return false;
		}
	}

	RateLimitPolicy policy() {
		return this.policy;
	}

	/** The policy under the given plan: the plan's variant if it changes this policy, else the policy itself. */
	RateLimitPolicy policy(@Nullable String plan) {
		if (plan == null || this.planned.isEmpty()) {
			return this.policy;
		}
		return this.planned.getOrDefault(plan, this.policy);
	}

	boolean isPlanned() {
		return !this.planned.isEmpty();
	}

	/** Whether the key is the client's IP address: such policies do not apply to exempt clients. */
	boolean isKeyedByClientIp() {
		return this.key instanceof KeySource.ClientIp;
	}

	String declaration() {
		return this.declaration;
	}

	long cost(InvocationScope scope) {
		return this.cost.cost(scope, this.policy.name());
	}

	/**
	 * Return the key of this invocation. A key expression that yields {@code null}, an empty string or a value with no
	 * value-based text (see {@link KeyText}), or that fails, falls back to the client's IP address in a namespace of
	 * its own; that is logged at WARN once per policy, since it usually means the expression is wrong, and it must not
	 * turn into an error response.
	 */
	String key(InvocationScope scope) {
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
		return (key.charAt(0) == RESERVED) ? RESERVED + key : key;
	}

	private void warnFallback(String what, @Nullable Exception failure) {
		if (this.fallbackLogged.compareAndSet(false, true)) {
			logger.warn("Key expression '" + this.keyExpression + "' of rate limit policy '" + this.policy.name()
					+ "' on " + this.declaration + " " + what
					+ "; falling back to the client IP address (logged once per policy)", failure);
		}
	}

	/**
	 * Resolves the client's IP address of an invocation.
	 */
	@FunctionalInterface
	interface ClientIpSupplier {

		String get(InvocationScope scope);

	}

}
