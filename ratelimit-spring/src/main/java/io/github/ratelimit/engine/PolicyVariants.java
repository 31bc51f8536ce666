package io.github.ratelimit.engine;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.PolicyNames;

/**
 * Names the variants of policies built at run time (a change through the endpoint, a tenant's limits) so that the
 * stores take them: a store keeps one window and algorithm per policy name and variant, and carries the counts over
 * a change of limit or burst ({@link PolicyNames#sameState}). A policy whose window or algorithm differs from the one
 * it replaces counts in a variant named after them, the same on every instance, and so from fresh state.
 */
final class PolicyVariants {

	private PolicyVariants() {
	}

	/**
	 * Return the policy, in a variant of its own if it does not keep the state of the one it is a change of.
	 * @param changed the policy as changed
	 * @param original the policy it is a change of, as declared
	 * @return the policy to count with
	 */
	static RateLimitPolicy keepingState(RateLimitPolicy changed, RateLimitPolicy original) {
		RateLimitPolicy asOriginal = changed.variant().equals(original.variant()) ? changed
				: changed.toBuilder().variant(original.variant()).build();
		if (PolicyNames.sameState(asOriginal, original)) {
			return changed;
		}
		return changed.toBuilder()
			.variant(changed.variant() + "~" + changed.windowMillis() + "/"
					+ (changed.algorithm().isBucket() ? "bucket" : changed.algorithm().name()))
			.build();
	}

}
