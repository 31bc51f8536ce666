package io.github.ratelimit.observation;

import java.util.Iterator;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
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

	private boolean notDecided;

	/** When the observation started, on the meter registry's monotonic clock: {@link RateLimitMeterObservationHandler}'s. */
	long startedAt;

	/**
	 * The low-cardinality key values this context holds, as the one instance that was added, while that is known;
	 * {@code null} once others were added or some removed. Saves building them sorted out of a map for every
	 * decision: the convention gives the same keys at start and at stop. Guarded by this context, so that a key value
	 * added by another thread between holding and adding is never lost.
	 */
	private @Nullable KeyValues lowCardinalityKeyValues = KeyValues.empty();

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
	 * Return whether the store was not asked: a cached rejection of another policy of the same request rejected it
	 * first.
	 * @return whether no decision was made, and none failed
	 * @since 0.2.0
	 */
	public boolean isNotDecided() {
		return this.notDecided;
	}

	/**
	 * Say that the store was not asked: a cached rejection of another policy of the same request rejected it first.
	 * @since 0.2.0
	 */
	public void setNotDecided() {
		this.notDecided = true;
	}

	@Override
	public synchronized Observation.Context addLowCardinalityKeyValue(KeyValue keyValue) {
		this.lowCardinalityKeyValues = null;
		return super.addLowCardinalityKeyValue(keyValue);
	}

	@Override
	public synchronized Observation.Context addLowCardinalityKeyValues(KeyValues keyValues) {
		KeyValues held = this.lowCardinalityKeyValues;
		if (!keyValues.iterator().hasNext()) {
			return this; // as a filter adding no common key values does on every observation
		}
		super.addLowCardinalityKeyValues(keyValues); // one by one, each forgetting what was held
		if (held != null && replacesAll(held, keyValues)) {
			this.lowCardinalityKeyValues = keyValues;
		}
		return this;
	}

	@Override
	public synchronized Observation.Context removeLowCardinalityKeyValue(String keyName) {
		this.lowCardinalityKeyValues = null;
		return super.removeLowCardinalityKeyValue(keyName);
	}

	@Override
	public synchronized Observation.Context removeLowCardinalityKeyValues(String... keyNames) {
		this.lowCardinalityKeyValues = null;
		return super.removeLowCardinalityKeyValues(keyNames);
	}

	@Override
	public synchronized KeyValues getLowCardinalityKeyValues() {
		KeyValues held = this.lowCardinalityKeyValues;
		return (held != null) ? held : super.getLowCardinalityKeyValues();
	}

	/** Whether adding {@code added} to exactly {@code held} leaves exactly {@code added}: none held, or the same keys. */
	private static boolean replacesAll(KeyValues held, KeyValues added) {
		Iterator<KeyValue> heldKeys = held.iterator();
		if (!heldKeys.hasNext()) {
			return true;
		}
		Iterator<KeyValue> addedKeys = added.iterator();
		while (heldKeys.hasNext() && addedKeys.hasNext()) {
			if (!heldKeys.next().getKey().equals(addedKeys.next().getKey())) {
				return false;
			}
		}
		return !heldKeys.hasNext() && !addedKeys.hasNext();
	}

	/**
	 * Set the decision.
	 * @param decision the decision
	 */
	public void setDecision(Decision decision) {
		this.decision = decision;
	}

}
