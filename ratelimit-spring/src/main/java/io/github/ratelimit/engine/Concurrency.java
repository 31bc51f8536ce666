package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Algorithm;
import org.apache.commons.logging.LogFactory;

/**
 * What a {@link Algorithm#CONCURRENCY} policy is written with: its {@code hold}, the time a slot stays taken when its
 * holder never gives it back (an instance that died mid-request), which the policy counts as its window; and the
 * attributes that cannot apply to a slot, refused at start-up.
 */
final class Concurrency {

	/** The hold when none is set: longer than most requests, short enough that a dead instance's slots come back. */
	static final Duration DEFAULT_HOLD = Duration.ofMinutes(1);

	/** The longest hold: a slot held longer by a dead holder would lock its key out for as long. */
	static final Duration MAX_HOLD = Duration.ofDays(1);

	private static final ThrottledWarning outlived = new ThrottledWarning(LogFactory.getLog(RateLimitEngine.class));

	private Concurrency() {
	}

	/**
	 * Warn (at most once a minute) of a request that ends after its slot's hold: the slot was free for another
	 * request meanwhile, so more than the limit may have run at once; the hold must be longer than the longest
	 * request.
	 * @param admittedAt when the request was admitted, from {@link System#nanoTime()}
	 */
	static void checkOutlived(PolicySpec spec, long admittedAt) {
		long heldMillis = (System.nanoTime() - admittedAt) / 1_000_000;
		if (heldMillis > spec.policy().windowMillis()) {
			outlived.warn("A request of concurrency limit '" + spec.policy().name() + "' ran " + heldMillis
					+ " ms, longer than its hold of " + spec.policy().windowMillis() + " ms: its slot was free for "
					+ "another request before it ended. Set a longer 'hold' (ratelimit.policies."
					+ spec.policy().name() + ".hold)");
		}
	}

	/** Whether a policy is a concurrency limit, whose slot its request gives back when it ends, however it ends. */
	static boolean limits(PolicySpec spec) {
		return spec.policy().algorithm() == Algorithm.CONCURRENCY;
	}

	/**
	 * Return the window a {@code CONCURRENCY} policy is built with: its hold, a minute when none is set.
	 * @return the hold
	 * @throws InvalidRateLimitPolicyException if it sets a window, is no duration, or is changed to at run time
	 */
	static Duration hold(PolicySources values, String name, String where, String property) {
		String text = values.getOrDefault("hold", String.class, "").trim();
		if (values.raw("window") != null) {
			throw PolicyParser.invalid(name, where, "'window' does not apply to CONCURRENCY, which counts requests in "
					+ "flight, not per window; set how long a slot stays taken when its holder never gives it back with "
					+ "'hold' (" + property + ".hold)" + values.fromProperty("'window'"));
		}
		PolicyValues algorithm = values.sourceSetting("algorithm");
		if (algorithm != null && PolicyValues.RUNTIME.equals(algorithm.source())) {
			throw PolicyParser.invalid(name, where, "'algorithm' cannot be changed to CONCURRENCY at run time: the "
					+ "requests in flight took no slot; declare the policy so");
		}
		if (text.isEmpty()) {
			return DEFAULT_HOLD;
		}
		Duration hold = text.chars().allMatch(Character::isDigit) ? null : PolicyParser.parseDuration(text);
		if (hold == null || hold.toMillis() < 1 || hold.compareTo(MAX_HOLD) > 0) {
			throw PolicyParser.invalid(name, where, "'hold' must be a duration with a unit of at least 1ms and at "
					+ "most a day (30s, 5m), but was '" + text + "'" + values.fromProperty("'hold'"));
		}
		return hold;
	}

	/**
	 * Refuse what cannot apply to a slot: a slot is one request, held while it runs, so it has no cost, nothing to
	 * settle or count by outcome, no burst, and no turn to wait for or key to lock out; nor a tenant's own limits,
	 * which may count by a window.
	 * @throws InvalidRateLimitPolicyException naming the first attribute that is set
	 */
	static void check(PolicySources values, String name, String where) {
		String cost = values.getOrDefault("cost", String.class, "1").trim();
		if (!cost.equals("1")) {
			throw PolicyParser.invalid(name, where, "'cost' does not apply to CONCURRENCY: a request in flight holds "
					+ "one slot, but was '" + cost + "'" + values.fromProperty("'cost'"));
		}
		for (String attribute : List.of("burst", "count-on", "settle", "penalty", "max-wait", "zone", "tenant")) {
			if (values.raw(attribute) != null) {
				throw PolicyParser.invalid(name, where, "'" + attribute + "' does not apply to CONCURRENCY, whose "
						+ "slots are held while their requests run and given back when they end, whatever the outcome"
						+ values.fromProperty("'" + attribute + "'"));
			}
		}
	}

	/** Refuse a hold on another algorithm, where it would be silently ignored. */
	static void checkNoHold(PolicySources values, String name, String where, Algorithm algorithm) {
		if (values.raw("hold") != null) {
			throw PolicyParser.invalid(name, where, "'hold' applies to CONCURRENCY only, not to " + algorithm
					+ values.fromProperty("'hold'"));
		}
	}

}
