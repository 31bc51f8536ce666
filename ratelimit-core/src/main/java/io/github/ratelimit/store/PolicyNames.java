package io.github.ratelimit.store;

import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Holds a store to one configuration per policy name and variant at a time: what a store checks when it first meets
 * a policy. A configuration that keeps its state in the same place as the one met before (only its limit or burst
 * differ: {@link #sameState}) is a change of that policy, which carries its counts over, and replaces it. Another one
 * (another window or algorithm) would count apart in one store and together in another (Redis decides the parameter
 * sets of one name in use across instances together, as a rolling deploy), so it fails instead, with the way out: a
 * variant per tenant, or names of their own.
 *
 * @since 0.2.0
 */
public final class PolicyNames {

	/** A bound for stores that cannot say when a policy is gone: past it, what was met is forgotten. */
	private static final int MAX_NAMES = 100_000;

	private final ConcurrentHashMap<String, RateLimitPolicy> byName = new ConcurrentHashMap<>();

	/**
	 * Check that the policy is the only configuration of its name and variant this store has met (since it forgot
	 * it, or forgot everything past {@value #MAX_NAMES} names and variants), or a change of it that keeps its state
	 * ({@link #sameState}), which then replaces it.
	 * @param policy the policy
	 * @throws IllegalArgumentException if another configuration of the same name and variant, with another window or
	 * algorithm, was met before
	 */
	public void check(RateLimitPolicy policy) {
		if (this.byName.size() >= MAX_NAMES) {
			this.byName.clear();
		}
		String id = id(policy);
		RateLimitPolicy known = this.byName.putIfAbsent(id, policy);
		if (known != null && !known.equals(policy) && sameState(known, policy)) {
			this.byName.replace(id, known, policy);
			return;
		}
		if (known != null && !known.equals(policy)) {
			String name = "'" + policy.name() + "'" + (policy.variant().isEmpty() ? "" : " (variant '"
					+ policy.variant() + "')");
			throw new IllegalArgumentException("Rate limit policy " + name + " is already in use with "
					+ describe(known) + " and cannot also count with " + describe(policy) + ": a policy name and "
					+ "variant has one window and algorithm (its limit and burst may change). For limits per tenant, "
					+ "give each its variant (RateLimitPolicy.builder(\"" + policy.name() + "\").variant(tenant)) or a "
					+ "name of its own.");
		}
	}

	/**
	 * Return whether two configurations of a policy keep their state in the same place, so that one is a change of
	 * the other that carries its counts over: same name, variant, window (a calendar window's period, whatever its zone) and algorithm (a token and a leaky bucket
	 * are one meter), whatever their limit and burst. A fixed or sliding window's count, and a sliding log's entries,
	 * mean the same under any limit; a bucket's level is kept in whole tokens, clamped to the new burst.
	 * @param one a configuration
	 * @param other another
	 * @return whether they share their state
	 */
	public static boolean sameState(RateLimitPolicy one, RateLimitPolicy other) {
		return one.name().equals(other.name()) && one.variant().equals(other.variant())
				&& one.windowMillis() == other.windowMillis() && periodOf(one) == periodOf(other)
				&& (one.algorithm() == other.algorithm()
						|| (one.algorithm().isBucket() && other.algorithm().isBucket()));
	}

	/** The period of a calendar window: another time zone counts the same periods, so its counts carry over. */
	private static CalendarWindow.@Nullable Period periodOf(RateLimitPolicy policy) {
		CalendarWindow calendar = policy.calendar();
		return (calendar != null) ? calendar.period() : null;
	}

	/**
	 * Forget a policy the store holds nothing of any more, so that its name may come back with another
	 * configuration.
	 * @param policy the policy
	 */
	public void forget(RateLimitPolicy policy) {
		this.byName.remove(id(policy), policy);
	}

	private static String id(RateLimitPolicy policy) {
		return policy.name() + '\0' + policy.variant();
	}

	private static String describe(RateLimitPolicy policy) {
		return policy.algorithm() + ", limit " + policy.limit() + " per " + policy.describeWindow() + (policy.algorithm().isBucket() ? ", burst " + policy.burst() : "");
	}

}
