package io.github.ratelimit.memory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * The mutable state of one key under one policy. Every method is called with the monitor of this object held; a
 * state that was evicted is {@link #retired} and must not be used again, so a thread that finds it retired looks
 * the key up afresh.
 */
abstract class KeyState {

	/** Whether this state was removed from its table. Guarded by {@code this}. */
	boolean retired;

	/**
	 * Take {@code cost} units if available at {@code now}.
	 * @param policy the policy
	 * @param now the current time in milliseconds
	 * @param cost the cost, at least 1
	 * @return the decision
	 */
	abstract Decision acquire(RateLimitPolicy policy, long now, long cost);

	/**
	 * Return the time from which this state is equivalent to a fresh one and can be dropped.
	 * @param policy the policy
	 * @return the expiry in milliseconds since the epoch
	 */
	abstract long expiresAt(RateLimitPolicy policy);

	static KeyState create(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED -> new FixedWindow();
			case SLIDING_LOG -> new SlidingLog();
			case SLIDING_COUNTER -> new SlidingCounter();
			case TOKEN_BUCKET -> new TokenBucket();
			case LEAKY_BUCKET -> new LeakyBucket();
		};
	}

}
