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

	private final ConcurrentHashMap<String, RateLimitPolicy> byName = new ConcurrentHashMap<>();

	/**
	 * Check that the policy is the only configuration of its name and variant this store has met.
	 * @param policy the policy
	 * @throws IllegalArgumentException if another configuration of the same name and variant was met before
	 */
	public void check(RateLimitPolicy policy) {
		String id = policy.name() + '\0' + policy.variant();
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

	private static String describe(RateLimitPolicy policy) {
		return policy.algorithm() + ", limit " + policy.limit() + " per " + Durations.format(policy.window())
				+ (policy.algorithm().isBucket() ? ", burst " + policy.burst() : "");
	}

}
