package io.github.ratelimit.store;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Where counters live. A store makes each decision atomically: concurrent calls for the same key, from any number
 * of threads or instances sharing the store, never lose or double a count.
 *
 * @since 0.1.0
 */
public interface RateLimitStore {

	/**
	 * Take {@code cost} units for {@code key} under {@code policy} if they are available, atomically. A rejected
	 * request takes nothing; a request whose cost exceeds {@link RateLimitPolicy#capacity()} is rejected with
	 * {@link Decision#NEVER} as its retry delay.
	 * @param policy the policy to enforce
	 * @param key the counter key within the policy, at most a few hundred characters
	 * @param cost the units this request takes, at least 1
	 * @return the decision
	 * @throws RateLimitStoreException if the store cannot decide (unreachable, too slow)
	 */
	Decision tryAcquire(RateLimitPolicy policy, String key, long cost);

	/**
	 * Take {@code cost} units from the same counters as {@link #tryAcquire}, as atomically, answering only whether
	 * they were taken. A store may implement it without allocating a {@link Decision}; by default it is
	 * {@code tryAcquire(...).allowed()}.
	 * @param policy the policy to enforce
	 * @param key the counter key within the policy
	 * @param cost the units this request takes, at least 1
	 * @return whether the units were taken
	 * @throws IllegalArgumentException if {@code cost} is less than 1
	 * @throws RateLimitStoreException if the store cannot decide
	 */
	default boolean tryAcquirePermit(RateLimitPolicy policy, String key, long cost) {
		return tryAcquire(policy, key, cost).allowed();
	}

	/**
	 * Return whether this store keeps its counters in this process. The {@code RateLimiter} only caches rejections
	 * locally in front of stores that do not.
	 * @return whether the store is local to this process
	 */
	default boolean isLocal() {
		return false;
	}

}
