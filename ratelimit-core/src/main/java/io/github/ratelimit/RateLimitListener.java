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
	 * Called when the store failed to decide; {@link #onDecision} follows with what the failure mode decided.
	 * @param policy the policy
	 * @param failure what went wrong, or {@code null} if the store was not called because its circuit is open
	 */
	default void onStoreFailure(RateLimitPolicy policy, @org.jspecify.annotations.Nullable RuntimeException failure) {
	}

}
