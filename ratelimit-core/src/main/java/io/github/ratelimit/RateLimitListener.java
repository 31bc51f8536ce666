package io.github.ratelimit;

import java.util.List;

import org.jspecify.annotations.Nullable;

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
	 * Return one listener that calls each of these in turn.
	 * @param listeners the listeners
	 * @return {@link #NONE} for none, the listener itself for one, else one that calls them all
	 * @since 0.2.0
	 */
	static RateLimitListener of(List<RateLimitListener> listeners) {
		return switch (listeners.size()) {
			case 0 -> NONE;
			case 1 -> listeners.get(0);
			default -> new Composite(List.copyOf(listeners));
		};
	}

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
	default void onStoreFailure(RateLimitPolicy policy, @Nullable RuntimeException failure) {
	}

	/**
	 * Called when the units an admission cost beyond its reservation (a cost known only after the response, see
	 * {@link io.github.ratelimit.store.RateLimitStore#charge}) could not be taken, even on a second try: the key keeps
	 * only what it reserved.
	 * @param policy the policy
	 * @param units the units that were not taken
	 * @param failure why
	 * @since 0.4.0
	 */
	default void onChargeLost(RateLimitPolicy policy, long units, Throwable failure) {
	}

	/**
	 * Called when a request over its limit waited for its turn ({@code max-wait}): a bucket's then passes, a window's
	 * is then decided once more.
	 * @param policy the policy it waited for
	 * @param waitedMillis how long it waited
	 * @since 0.5.0
	 */
	default void onWait(RateLimitPolicy policy, long waitedMillis) {
	}

	/** Listeners called in turn. */
	record Composite(List<RateLimitListener> listeners) implements RateLimitListener {

		@Override
		public void onDecision(RateLimitPolicy policy, Decision decision) {
			for (RateLimitListener listener : this.listeners) {
				listener.onDecision(policy, decision);
			}
		}

		@Override
		public void onShadowRejection(RateLimitPolicy policy, Decision decision) {
			for (RateLimitListener listener : this.listeners) {
				listener.onShadowRejection(policy, decision);
			}
		}

		@Override
		public void onStoreFailure(RateLimitPolicy policy, @Nullable RuntimeException failure) {
			for (RateLimitListener listener : this.listeners) {
				listener.onStoreFailure(policy, failure);
			}
		}

		@Override
		public void onChargeLost(RateLimitPolicy policy, long units, Throwable failure) {
			for (RateLimitListener listener : this.listeners) {
				listener.onChargeLost(policy, units, failure);
			}
		}

		@Override
		public void onWait(RateLimitPolicy policy, long waitedMillis) {
			for (RateLimitListener listener : this.listeners) {
				listener.onWait(policy, waitedMillis);
			}
		}

	}

}
