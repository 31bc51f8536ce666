package io.github.ratelimit;

/**
 * Callback for what a {@link io.github.ratelimit.limiter.RateLimiter} decides, for metrics and audit. Called on the request thread: keep it
 * fast and never throw.
 *
 * @since 0.1.0
 */
public interface RateLimitListener {

	/** A listener that does nothing. */
	RateLimitListener NONE = new RateLimitListener() {
	};

	/**
	 * Called for every decision, including those made locally (see {@link Decision#origin()}).
	 * @param policy the policy
	 * @param decision the decision
	 */
	default void onDecision(RateLimitPolicy policy, Decision decision) {
	}

	/**
	 * Called when a policy in shadow mode would have rejected a request that it let pass (see
	 * {@link PolicyMode#SHADOW}).
	 * @param policy the policy
	 * @param decision what the store decided
	 * @since 0.2.0
	 */
		default void onShadowRejection(RateLimitPolicy policy, Decision decision) {
	}

	/**
	 * Called when the store could not decide, before the failure mode applies.
	 * @param policy the policy
	 * @param failure the failure, or {@code null} when the store was not called because its circuit is open
	 */
	default void onStoreFailure(RateLimitPolicy policy, @org.jspecify.annotations.Nullable RuntimeException failure) {
	}

}
