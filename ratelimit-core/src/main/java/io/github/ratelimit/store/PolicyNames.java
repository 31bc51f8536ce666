package io.github.ratelimit.store;

import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.internal.Durations;

/**
 * Holds a store to one configuration per policy name and variant: what a store checks when it first meets a policy.
 * A second configuration under the same name would count apart in one store and together in another (Redis decides
 * the parameter sets of one name in use across instances together, as a rolling deploy), so it fails instead, with
 * the way out: a variant per tenant, or names of their own.
 *
 * @since 0.2.0
 */
public final class PolicyNames {

	/** A bound for stores that cannot say when a policy is gone: past it, what was met is forgotten. */
	private static final int MAX_NAMES = 100_000;

	private final ConcurrentHashMap<String, RateLimitPolicy> byName = new ConcurrentHashMap<>();

	/**
	 * Check that the policy is the only configuration of its name and variant this store has met (since it forgot
	 * it, or forgot everything past {@value #MAX_NAMES} names and variants).
	 * @param policy the policy
	 * @throws IllegalArgumentException if another configuration of the same name and variant was met before
	 */
	public void check(RateLimitPolicy policy) {
		if (this.byName.size() >= MAX_NAMES) {
			this.byName.clear();
		}
		String id = id(policy);
		RateLimitPolicy known = this.byName.putIfAbsent(id, policy);
		if (known != null && !known.equals(policy)) {
			String name = "'" + policy.name() + "'" + (policy.variant().isEmpty() ? "" : " (variant '"
					+ policy.variant() + "')");
			throw new IllegalArgumentException("Rate limit policy " + name + " is already in use with "
					+ describe(known) + " and cannot also count with " + describe(policy) + ": a policy name and "
					+ "variant has one configuration. For limits per tenant, give each its variant "
					+ "(RateLimitPolicy.builder(\"" + policy.name() + "\").variant(tenant)) or a name of its own.");
		}
	}

	/**
	 * Forget a policy the store holds nothing of any more, so that its name may come back with another
	 * configuration.
	 * @param policy the policy
	 */
	public void forget(RateLimitPolicy policy) {
		this.byName.remove(id(policy), policy);
	}

	private static String id(RateLimitPolicy policy) {
		return policy.name() + '\0' + policy.variant();
	}

	private static String describe(RateLimitPolicy policy) {
		return policy.algorithm() + ", limit " + policy.limit() + " per " + Durations.format(policy.window())
				+ (policy.algorithm().isBucket() ? ", burst " + policy.burst() : "");
	}

}
