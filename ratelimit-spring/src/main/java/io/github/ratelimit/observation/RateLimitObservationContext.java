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
	 * The low-cardinality key values, kept here rather than in the context's map for as long as they are only ever
	 * given whole with the same keys (as the convention gives them at start and at stop); {@code null} once they moved
	 * to the map. A decision takes microseconds: putting each key value into a concurrent map, twice, and the map's
	 * table and entries, were a good part of what observing it cost. A key value added or removed one by one, or a set
	 * with other keys, moves them to the map, which keeps them from then on. Guarded by this context, so that a key value
	 * another thread adds while they move is never lost.
	 */
	private @Nullable KeyValues lowCardinalityKeyValues = KeyValues.empty();

	/** The default convention's key values of the policy, found once per observation rather than at start and stop. */
	DefaultRateLimitObservationConvention.@Nullable PolicyKeyValues conventionKeyValues;

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
		moveToMap();
		return super.addLowCardinalityKeyValue(keyValue);
	}

	@Override
	public synchronized Observation.Context addLowCardinalityKeyValues(KeyValues keyValues) {
		KeyValues kept = this.lowCardinalityKeyValues;
		if (kept != null) {
			if (!keyValues.iterator().hasNext()) {
				return this; // as a filter adding no common key values does on every observation
			}
			if (!kept.iterator().hasNext() || sameKeys(kept, keyValues)) {
				this.lowCardinalityKeyValues = keyValues;
				return this;
			}
		}
		return super.addLowCardinalityKeyValues(keyValues); // one by one, through addLowCardinalityKeyValue
	}

	@Override
	public synchronized Observation.Context removeLowCardinalityKeyValue(String keyName) {
		moveToMap();
		return super.removeLowCardinalityKeyValue(keyName);
	}

	@Override
	public synchronized Observation.Context removeLowCardinalityKeyValues(String... keyNames) {
		moveToMap();
		return super.removeLowCardinalityKeyValues(keyNames);
	}

	@Override
	public synchronized KeyValues getLowCardinalityKeyValues() {
		KeyValues kept = this.lowCardinalityKeyValues;
		return (kept != null) ? kept : super.getLowCardinalityKeyValues();
	}

	@Override
	public synchronized @Nullable KeyValue getLowCardinalityKeyValue(String key) {
		KeyValues kept = this.lowCardinalityKeyValues;
		if (kept == null) {
			return super.getLowCardinalityKeyValue(key);
		}
		for (KeyValue keyValue : kept) {
			if (keyValue.getKey().equals(key)) {
				return keyValue;
			}
		}
		return null;
	}

	/** Put the key values kept here into the context's map, which holds them from now on. */
	private void moveToMap() {
		KeyValues kept = this.lowCardinalityKeyValues;
		if (kept != null) {
			this.lowCardinalityKeyValues = null;
			for (KeyValue keyValue : kept) {
				super.addLowCardinalityKeyValue(keyValue);
			}
		}
	}

	/** Whether both have the same keys: key values are sorted by key, so in the same order. */
	private static boolean sameKeys(KeyValues first, KeyValues second) {
		Iterator<KeyValue> firstKeys = first.iterator();
		Iterator<KeyValue> secondKeys = second.iterator();
		while (firstKeys.hasNext() && secondKeys.hasNext()) {
			if (!firstKeys.next().getKey().equals(secondKeys.next().getKey())) {
				return false;
			}
		}
		return !firstKeys.hasNext() && !secondKeys.hasNext();
	}

	/**
	 * Set the decision.
	 * @param decision the decision
	 */
	public void setDecision(Decision decision) {
		this.decision = decision;
	}

}
