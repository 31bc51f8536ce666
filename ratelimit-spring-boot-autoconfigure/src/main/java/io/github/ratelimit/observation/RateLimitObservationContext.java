package io.github.ratelimit.observation;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What the observation of one decision knows: the policy, the store, and, once made, the decision. Never the key,
 * which is unbounded and can be personal data.
 *
 * @since 0.1.0
 */
public class RateLimitObservationContext extends Observation.Context {

	private final RateLimitPolicy policy;

	private final String store;

	private @Nullable Decision decision;

	private boolean shadow;

	/** When the observation started, on the meter registry's monotonic clock: {@link RateLimitMeterObservationHandler}'s. */
	long startedAt;

	/**
	 * Create a context.
	 * @param policy the policy deciding
	 * @param store the store's short name ({@code memory}, {@code redis}, {@code dynamodb}, ...)
	 */
	public RateLimitObservationContext(RateLimitPolicy policy, String store) {
		this.policy = policy;
		this.store = store;
	}

	public RateLimitPolicy getPolicy() {
		return this.policy;
	}

	public String getStore() {
		return this.store;
	}

	/**
	 * Return the decision, once made.
	 * @return the decision, or {@code null} before it is made (or if deciding failed)
	 */
	public @Nullable Decision getDecision() {
		return this.decision;
	}

	/**
	 * Return whether the policy is in shadow mode.
	 * @return whether its rejections are reported only
	 * @since 0.2.0
	 */
	public boolean isShadow() {
		return this.shadow;
	}

	/**
	 * Set whether the policy is in shadow mode: its rejections are reported, not enforced.
	 * @param shadow whether the policy is in shadow mode
	 * @since 0.2.0
	 */
	public void setShadow(boolean shadow) {
		this.shadow = shadow;
	}

	/**
	 * Set the decision.
	 * @param decision the decision
	 */
	public void setDecision(Decision decision) {
		this.decision = decision;
	}

}
