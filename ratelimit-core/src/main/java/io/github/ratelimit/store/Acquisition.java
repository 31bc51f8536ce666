package io.github.ratelimit.store;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.internal.Checks;

/**
 * One policy's part of a request: the units it takes from one key.
 *
 * @param policy the policy
 * @param key the counter key within the policy
 * @param cost the units the request takes, at least 1
 * @since 0.2.0
 */
public record Acquisition(RateLimitPolicy policy, String key, long cost) {

	/**
	 * Validate the values.
	 * @throws IllegalArgumentException if {@code cost} is less than 1
	 */
	public Acquisition {
		Checks.notNull(policy, "policy");
		Checks.notNull(key, "key");
		Checks.atLeast(cost, 1, "cost");
	}

}
